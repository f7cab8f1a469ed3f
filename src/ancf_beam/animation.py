"""Pictures of a mechanism's motion from its Dataset: an animated GIF and overlaid snapshots.

The Dataset holds the histories of :func:`ancf_beam.mbs.outputs.general_outputs` (``marker_x``,
``marker_y``, ``body_x``, ``body_y``, ``body_theta``, ``node_x``, ``node_y``, ``node_slope_x``,
``node_slope_y``, ``eccentricity_x``, ``eccentricity_y``, ``penetration``; those a mechanism
lacks may be absent) and in ``ds.attrs["geometry"]`` the JSON of
:func:`ancf_beam.mbs.outputs.geometry`. Drawn are: rigid bodies as thick lines or polygons
through their centre of mass and attachment points, beams as the cubic Hermite curves of their
elements through the node positions and slopes (the ANCF interpolation itself), point masses
as dots, ground pins as triangles, ground welds as squares, guide lines, contact circles at
true scale, spring-dampers as zigzags, and the markers' paths faintly. For every
journal-in-bearing contact an inset magnifies the clearance: lengths in units of the radial
clearance ``c``, the journal centre at ``e / c`` with its path so far, the circle ``|e| = c``
(dashed) on which the journal touches the bearing, and the journal (radius ``R``) inside its
bearing (radius ``R + 1``) drawn with the radii shrunk to ``R = 3`` so that the gap shows (red
while it penetrates).

The drawing's box holds the whole motion, widened so that its height is between
:data:`MIN_RATIO` and :data:`MAX_RATIO` of its width (a mechanism that moves along one line
would otherwise get an axis too short for its tick labels).

Frames are evenly spaced in time (the states linearly interpolated between samples), the axes
fixed from the whole motion, the time in the title. The GIF is written with Pillow, no ffmpeg
needed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["animate_mechanism", "hermite_curve", "motion_figure", "zigzag"]

#: journal radius of the inset, in units of the radial clearance (bearing: one more)
INSET_JOURNAL = 3.0
#: points per beam element of the drawn Hermite curve
CURVE_POINTS = 12
#: the drawing's height over its width, at least and at most (the figure's shape follows)
MIN_RATIO, MAX_RATIO = 0.35, 1.2
#: zigzags of a drawn spring, and its half-width as a share of the drawing's larger side
SPRING_COILS, SPRING_WIDTH = 6, 0.012
_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:cyan")


class _Motion:
    """The drawable histories of a Dataset and its geometry."""

    def __init__(self, ds):
        geo = ds.attrs.get("geometry", "{}")
        self.geo: dict[str, Any] = json.loads(geo) if isinstance(geo, str) else dict(geo)
        self.t = np.asarray(ds["time"].values, float)
        self.case = str(ds.attrs.get("case", ""))
        self.body_index = {str(b): i for i, b in enumerate(_coord(ds, "body"))}
        self.contact_index = {str(c): i for i, c in enumerate(_coord(ds, "contact"))}
        self.arrays = {
            "marker": _stack(ds, ("marker_x", "marker_y")),
            "body": _stack(ds, ("body_x", "body_y", "body_theta")),
            "node": _stack(ds, ("node_x", "node_y", "node_slope_x", "node_slope_y")),
            "ecc": _stack(ds, ("eccentricity_x", "eccentricity_y")),
            "pen": _stack(ds, ("penetration",)),
        }

    def at(self, t: float) -> dict[str, np.ndarray | None]:
        """The state at time ``t``, linearly interpolated between the samples."""
        n = len(self.t)
        i = int(np.clip(np.searchsorted(self.t, t), 1, max(n - 1, 1)))
        if n == 1:
            return {k: None if a is None else a[0] for k, a in self.arrays.items()}
        h = self.t[i] - self.t[i - 1]
        w = 0.0 if h <= 0.0 else float(np.clip((t - self.t[i - 1]) / h, 0.0, 1.0))
        return {
            k: None if a is None else (1.0 - w) * a[i - 1] + w * a[i]
            for k, a in self.arrays.items()
        }

    def point(self, spec: dict | None, state: dict) -> np.ndarray | None:
        """Position (m) of a point spec (:func:`ancf_beam.mbs.outputs.point_spec`)."""
        if spec is None:
            return None
        w = np.asarray(spec["weights"], float)
        if spec["kind"] == "ground":
            return w[:2]
        b = self.body_index.get(spec["body"])
        if b is None or state["body"] is None:
            return None
        if spec["kind"] == "rigid":
            x, y, th = state["body"][b]
            c, s = math.cos(th), math.sin(th)
            return np.array([x + c * w[0] - s * w[1], y + s * w[0] + c * w[1]])
        g = self.geo["bodies"][spec["body"]]
        if g["type"] == "beam":
            coords = state["node"][g["nodes"][0] : g["nodes"][1]].ravel()
        else:
            coords = state["body"][b][:2]
        rel = spec["rel"]
        return sum(wa * coords[rel + 2 * a : rel + 2 * a + 2] for a, wa in enumerate(w))

    def outline(self, name: str, state: dict) -> np.ndarray:
        """World coordinates of a rigid body's outline."""
        x, y, th = state["body"][self.body_index[name]]
        local = np.asarray(self.geo["bodies"][name]["outline"], float).reshape(-1, 2)
        c, s = math.cos(th), math.sin(th)
        return np.column_stack(
            [x + c * local[:, 0] - s * local[:, 1], y + s * local[:, 0] + c * local[:, 1]]
        )

    def journal_contacts(self) -> list[str]:
        return [
            n
            for n, g in self.geo.get("contacts", {}).items()
            if g["type"] == "journal-bearing" and n in self.contact_index
        ]


def _coord(ds, name: str) -> list:
    return list(ds[name].values) if name in ds.coords else []


def _stack(ds, keys: tuple[str, ...]) -> np.ndarray | None:
    """``(time, item, len(keys))`` of the variables ``keys``, None when one is missing."""
    if not all(k in ds for k in keys):
        return None
    return np.stack([np.asarray(ds[k].values, float) for k in keys], axis=-1)


def hermite_curve(nodes: np.ndarray, le: float, points: int = CURVE_POINTS) -> np.ndarray:
    """Points of a beam's centre line from its nodes ``(n, 4)`` (``r_x, r_y, r'_x, r'_y``):
    on each element of reference length ``le`` the cubic Hermite interpolation
    ``r = H1 r_a + le H2 r'_a + H3 r_b + le H4 r'_b`` of the ANCF element."""
    xi = np.linspace(0.0, 1.0, points)[:-1]
    h = np.column_stack(
        [
            1.0 - 3.0 * xi**2 + 2.0 * xi**3,
            le * (xi - 2.0 * xi**2 + xi**3),
            3.0 * xi**2 - 2.0 * xi**3,
            le * (xi**3 - xi**2),
        ]
    )
    a, b = nodes[:-1], nodes[1:]
    seg = (
        h[None, :, 0:1] * a[:, None, 0:2]
        + h[None, :, 1:2] * a[:, None, 2:4]
        + h[None, :, 2:3] * b[:, None, 0:2]
        + h[None, :, 3:4] * b[:, None, 2:4]
    )
    return np.concatenate([seg.reshape(-1, 2), nodes[-1:, 0:2]])


# ------------------------------------------------------------------------------------------
# extent
# ------------------------------------------------------------------------------------------
def _extent(m: _Motion) -> tuple[float, float, float, float]:
    """``(x0, x1, y0, y1)`` (m) holding the whole motion, with a margin."""
    pts = [np.zeros((0, 2))]
    for key in ("marker", "node"):
        if m.arrays[key] is not None:
            pts.append(m.arrays[key][..., :2].reshape(-1, 2))
    if m.arrays["body"] is not None:
        pts.append(m.arrays["body"][..., :2].reshape(-1, 2))
        for name, g in m.geo.get("bodies", {}).items():
            if g["type"] == "rigid" and name in m.body_index:
                pts.append(_outline_history(m, name))
    pts += [np.asarray(p, float).reshape(-1, 2) for p in _ground_points(m)]
    pts += _circle_extent(m) + _spring_extent(m)
    xy = np.concatenate(pts)
    xy = xy[np.all(np.isfinite(xy), axis=1)]
    if not len(xy):
        return -1.0, 1.0, -1.0, 1.0
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    span = float(max(hi - lo))
    pad = 0.08 * span if span > 0.0 else max(1e-3, 0.1 * float(np.max(np.abs(lo))))
    (x0, y0), (x1, y1) = lo - pad, hi + pad
    w, h = x1 - x0, y1 - y0
    if h > MAX_RATIO * w:  # too narrow: widen about the centre
        x0, x1 = 0.5 * (x0 + x1 - h / MAX_RATIO), 0.5 * (x0 + x1 + h / MAX_RATIO)
    elif h < MIN_RATIO * w:  # too flat: heighten
        y0, y1 = 0.5 * (y0 + y1 - MIN_RATIO * w), 0.5 * (y0 + y1 + MIN_RATIO * w)
    return float(x0), float(x1), float(y0), float(y1)


def _outline_history(m: _Motion, name: str) -> np.ndarray:
    pose = m.arrays["body"][:, m.body_index[name]]
    local = np.asarray(m.geo["bodies"][name]["outline"], float).reshape(-1, 2)
    c, s = np.cos(pose[:, 2:3]), np.sin(pose[:, 2:3])
    x = pose[:, 0:1] + c * local[:, 0] - s * local[:, 1]
    y = pose[:, 1:2] + s * local[:, 0] + c * local[:, 1]
    return np.stack([x, y], -1).reshape(-1, 2)


def _ground_points(m: _Motion) -> list:
    return list(m.geo.get("ground_pins", [])) + list(m.geo.get("ground_welds", []))


def _circle_extent(m: _Motion) -> list[np.ndarray]:
    """Corners of the contact circles' boxes at the first and last samples."""
    out = []
    for g in m.geo.get("contacts", {}).values():
        if g["type"] == "line":
            continue
        if g["type"] == "discs":
            pairs = ((g["p"], g["r_p"]), (g["q"], g["r_q"]))
        else:
            pairs = ((g["bearing"], g["bearing_radius"]), (g["journal"], g["journal_radius"]))
        for t in (m.t[0], m.t[-1]):
            state = m.at(t)
            for spec, r in pairs:
                c = m.point(spec, state)
                if c is not None:
                    out.append(np.array([c - r, c + r]))
    return out


def _spring_extent(m: _Motion) -> list[np.ndarray]:
    """The springs' end points (a ground anchor may lie off the bodies' paths) at the first and
    last samples."""
    out = []
    for g in m.geo.get("springs", {}).values():
        for t in (m.t[0], m.t[-1]):
            state = m.at(t)
            out += [p[None, :] for p in (m.point(s, state) for s in g["points"]) if p is not None]
    return out


def zigzag(a: np.ndarray, b: np.ndarray, coils: int, width: float) -> np.ndarray:
    """Points ``(2 coils + 4, 2)`` of a spring drawn from ``a`` to ``b``: straight leads of a
    sixth of the length at both ends, ``coils`` zigzags of half-width ``width`` between."""
    d = np.asarray(b, float) - np.asarray(a, float)
    length = float(np.hypot(*d))
    if length == 0.0:
        return np.array([a, b], float)
    u = d / length
    normal = np.array([-u[1], u[0]])
    s = np.concatenate([[0.0], np.linspace(1 / 6, 5 / 6, 2 * coils + 2), [1.0]])
    side = np.zeros_like(s)
    side[2:-2] = np.where(np.arange(2 * coils) % 2 == 0, 1.0, -1.0)
    return np.asarray(a, float) + s[:, None] * d + (width * side)[:, None] * normal


# ------------------------------------------------------------------------------------------
# artists: each builder draws one item and returns a function that moves it to a state
# ------------------------------------------------------------------------------------------
Updater = Callable[[dict], None]


def _body_artists(ax, m: _Motion, alpha: float, lw: float) -> list[Updater]:
    from matplotlib.patches import Polygon

    ups: list[Updater] = []
    for k, (name, g) in enumerate(m.geo.get("bodies", {}).items()):
        color = _COLORS[k % len(_COLORS)]
        if name not in m.body_index:
            continue
        if g["type"] == "rigid" and g.get("closed"):
            patch = Polygon(np.zeros((3, 2)), closed=True, fc=color, ec="k", alpha=alpha, lw=1)
            ax.add_patch(patch)
            ups.append(lambda s, p=patch, n=name: p.set_xy(m.outline(n, s)))
        elif g["type"] == "rigid":
            style = "-" if len(g["outline"]) > 1 else "s"  # a body without extent: a block
            kw = {"color": color, "lw": lw, "ms": 2.5 * lw, "mec": "k", "alpha": alpha}
            (line,) = ax.plot([], [], style, solid_capstyle="round", **kw)
            ups.append(lambda s, ln=line, n=name: ln.set_data(*m.outline(n, s).T))
        elif g["type"] == "beam":
            (line,) = ax.plot([], [], "-", color=color, lw=0.6 * lw, alpha=alpha)
            lo, hi = g["nodes"]
            le = g["element_length"]
            ups.append(
                lambda s, ln=line, a=lo, b=hi, h=le: ln.set_data(
                    *hermite_curve(s["node"][a:b], h).T
                )
            )
        else:
            (dot,) = ax.plot([], [], "o", color=color, ms=0.8 * lw, mec="k", alpha=alpha)
            i = m.body_index[name]
            ups.append(lambda s, d=dot, j=i: d.set_data([s["body"][j][0]], [s["body"][j][1]]))
    return ups


def _joint_artists(ax, m: _Motion, alpha: float) -> list[Updater]:
    """Revolute joints between bodies: small open circles at their first point."""
    ups: list[Updater] = []
    for g in m.geo.get("joints", {}).values():
        pts = g.get("points") or [None, None]
        if g["type"] != "revolute" or any(p is None or p["kind"] == "ground" for p in pts):
            continue
        (dot,) = ax.plot([], [], "o", color="w", mec="k", ms=4, alpha=alpha, zorder=5)

        def up(s, d=dot, sp=pts[0]):
            xy = m.point(sp, s)
            if xy is not None:
                d.set_data([xy[0]], [xy[1]])

        ups.append(up)
    return ups


def _spring_artists(ax, m: _Motion, alpha: float) -> list[Updater]:
    """Spring-dampers: zigzags between their two points."""
    width = SPRING_WIDTH * max(np.diff(ax.get_xlim())[0], np.diff(ax.get_ylim())[0])
    ups: list[Updater] = []
    for g in m.geo.get("springs", {}).values():
        (line,) = ax.plot([], [], "-", color="0.3", lw=1.0, alpha=alpha, zorder=1.8)

        def up(s, ln=line, a=g["points"][0], b=g["points"][1]):
            pa, pb = m.point(a, s), m.point(b, s)
            if pa is None or pb is None:
                ln.set_data([], [])
            else:
                ln.set_data(*zigzag(pa, pb, SPRING_COILS, width).T)

        ups.append(up)
    return ups


def _contact_artists(ax, m: _Motion, alpha: float) -> list[Updater]:
    from matplotlib.patches import Circle

    ups: list[Updater] = []
    for g in m.geo.get("contacts", {}).values():
        if g["type"] == "line":
            ups += _line_artist(ax, m, g["line"], alpha, "k")
            continue
        if g["type"] == "journal-bearing":
            pairs = (
                (g["bearing"], g["bearing_radius"], "none"),
                (g["journal"], g["journal_radius"], "0.8"),
            )
        else:
            pairs = ((g["p"], g["r_p"], "0.8"), (g["q"], g["r_q"], "0.8"))
        for spec, r, fc in pairs:
            circ = Circle((0.0, 0.0), r, fc=fc, ec="k", lw=0.8, alpha=alpha, zorder=1.5)
            ax.add_patch(circ)

            def up(s, c=circ, sp=spec):
                xy = m.point(sp, s)
                c.set_visible(xy is not None)
                if xy is not None:
                    c.set_center(xy)

            ups.append(up)
    return ups


def _line_artist(ax, m: _Motion, line: dict, alpha: float, color: str) -> list[Updater]:
    """A guide or contact line: its segment, or a long stretch of it either side of its point
    (direction in the frame of the body carrying it)."""
    spec = line.get("point")
    if spec is None:
        return []
    x0, x1, y0, y1 = ax.get_xlim() + ax.get_ylim()
    reach = 4.0 * max(x1 - x0, y1 - y0)
    seg = line.get("segment") or [-reach, reach]
    (art,) = ax.plot([], [], "-", color=color, lw=0.8, alpha=alpha, zorder=1)
    d_local = np.asarray(line["direction"], float)
    d_local = d_local / np.linalg.norm(d_local)

    def up(s):
        p = m.point(spec, s)
        if p is None:
            return
        d = d_local
        if spec["kind"] == "rigid":
            th = s["body"][m.body_index[spec["body"]]][2]
            c, sn = math.cos(th), math.sin(th)
            d = np.array([c * d_local[0] - sn * d_local[1], sn * d_local[0] + c * d_local[1]])
        ends = p + np.outer(seg, d)
        art.set_data(ends[:, 0], ends[:, 1])

    return [up]


def _static(ax, m: _Motion, paths: bool = True) -> list[Updater]:
    """Ground symbols, marker paths (faint) and guide lines; returns the guides' updaters."""
    _ground(ax, m, paths)
    return _guides(ax, m)


def _ground(ax, m: _Motion, paths: bool = True) -> None:
    """Ground pins and welds, and the markers' paths (faint): what does not move."""
    pins = np.asarray(m.geo.get("ground_pins", []), float).reshape(-1, 2)
    welds = np.asarray(m.geo.get("ground_welds", []), float).reshape(-1, 2)
    span = max(np.diff(ax.get_xlim())[0], np.diff(ax.get_ylim())[0])
    ms = 9.0
    if len(pins):
        ax.plot(pins[:, 0], pins[:, 1] - 0.012 * span, "^", color="0.35", ms=ms, zorder=2)
        ax.plot(pins[:, 0], pins[:, 1], "o", color="w", mec="k", ms=4, zorder=5)
    if len(welds):
        ax.plot(welds[:, 0], welds[:, 1], "s", color="0.35", ms=ms, zorder=2)
    if paths and m.arrays["marker"] is not None:
        mk = m.arrays["marker"]
        ax.plot(mk[..., 0], mk[..., 1], "-", color="0.6", lw=0.5, alpha=0.6, zorder=0)


def _guides(ax, m: _Motion) -> list[Updater]:
    """The guide lines (they may move with a body); returns their updaters."""
    ups: list[Updater] = []
    for guide in m.geo.get("guides", []):
        ups += _line_artist(ax, m, guide, 1.0, "0.45")
    return ups


def _inset(ax, m: _Motion, name: str) -> Updater:
    """The magnified clearance of journal contact ``name`` (module docstring)."""
    from matplotlib.patches import Circle

    g = m.geo["contacts"][name]
    c = g["clearance"]
    j = m.contact_index[name]
    rj = INSET_JOURNAL
    ax.add_patch(Circle((0, 0), rj + 1.0, fc="none", ec="k", lw=1.2))
    ax.add_patch(Circle((0, 0), 1.0, fc="none", ec="0.4", lw=0.8, ls="--"))
    journal = Circle((0, 0), rj, fc="0.85", ec="k", lw=1.0, alpha=0.8)
    ax.add_patch(journal)
    (trail,) = ax.plot([], [], "-", color="tab:blue", lw=0.6)
    (centre,) = ax.plot([], [], "o", color="tab:red", ms=3)
    lim = 1.12 * (rj + 1.0)
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xticks=[], yticks=[])
    ax.set_title(f"{name}: e / c", fontsize=8)
    label = ax.text(0.02, 0.02, "", transform=ax.transAxes, fontsize=7)
    ecc = m.arrays["ecc"]

    def up(s, t):
        k = int(np.searchsorted(m.t, t, side="right"))
        path = ecc[:k, j] / c if ecc is not None else np.zeros((0, 2))
        e = s["ecc"][j] / c if s["ecc"] is not None else np.zeros(2)
        trail.set_data(path[:, 0], path[:, 1])
        centre.set_data([e[0]], [e[1]])
        journal.set_center(e)
        pen = s["pen"] is not None and s["pen"][j][0] > 0.0
        journal.set_facecolor("tab:red" if pen else "0.85")
        label.set_text(f"|e|/c = {float(np.hypot(*e)):.3f}")

    return up


# ------------------------------------------------------------------------------------------
# figures
# ------------------------------------------------------------------------------------------
def _layout(m: _Motion, zoom: bool):
    """Figure, main axes and inset axes (fixed positions: frames do not jitter)."""
    from matplotlib.figure import Figure

    x0, x1, y0, y1 = _extent(m)
    insets = m.journal_contacts() if zoom else []
    ratio = float(np.clip((y1 - y0) / (x1 - x0), 0.35, 1.2))
    w_main = 6.0
    h = max(3.2, 0.8 * w_main * ratio + 0.8)
    w_side = 2.2 if insets else 0.0
    fig = Figure(figsize=(w_main + w_side, h))
    W = w_main + w_side
    ax = fig.add_axes((0.7 / W, 0.5 / h, (w_main - 0.9) / W, 1.0 - 0.9 / h))
    ax.set(xlim=(x0, x1), ylim=(y0, y1), aspect="equal", xlabel="x (m)", ylabel="y (m)")
    ax.tick_params(labelsize=7)
    ax.xaxis.label.set_size(8)
    ax.yaxis.label.set_size(8)
    axes_in = []
    n = len(insets)
    for k in range(n):
        size = min((h - 0.9) / n - 0.3, w_side - 0.3)  # inches, square
        bottom = h - 0.4 - (k + 1) * (h - 0.9) / n
        axes_in.append(fig.add_axes((w_main / W, bottom / h, size / W, size / h)))
    return fig, ax, list(zip(insets, axes_in, strict=True))


def _decimals(t_end: float, frames: int) -> int:
    step = t_end / max(frames - 1, 1)
    return max(0, -math.floor(math.log10(step))) if step > 0.0 else 3


def animate_mechanism(
    ds, path, frames: int = 60, fps: float = 15, dpi: float = 72, zoom_contacts: bool = True
) -> Path:
    """Write an animated GIF of the motion in ``ds`` to ``path`` (module docstring): ``frames``
    frames evenly spaced from the first to the last sample, shown at ``fps`` frames per
    second, ``dpi`` dots per inch; ``zoom_contacts``: an inset per journal-in-bearing contact.
    Returns the path.

    The axes, their labels and the paths are drawn once; each frame redraws only what moves
    (blitting: 5 of an animation's 5.4 s of CPU went to redrawing the tick labels and paths).
    A still part that lies above a moving one (a ground pin's circle over the crank) is
    redrawn with the moving parts, so the frames stack the parts as a full drawing would."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    if frames < 1:
        raise ValueError(f"frames = {frames!r}: need at least 1")
    m = _Motion(ds)
    fig, ax, insets = _layout(m, zoom_contacts)
    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    _ground(ax, m)
    still = {id(a) for a in _parts(fig)}
    ups = _guides(ax, m) + _body_artists(ax, m, 1.0, 5.0) + _joint_artists(ax, m, 1.0)
    ups += _contact_artists(ax, m, 1.0) + _spring_artists(ax, m, 1.0)
    inset_ups = [_inset(a, m, name) for name, a in insets]
    title = ax.set_title("", fontsize=9)
    moving = _moving(fig, still, title)
    for a in moving:
        a.set_animated(True)  # left out of the background
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    digits = _decimals(float(m.t[-1] - m.t[0]), frames)
    size = canvas.get_width_height()
    images = []
    for t in np.linspace(m.t[0], m.t[-1], frames):
        _show_time(m, float(t), ups, inset_ups, title, digits)
        canvas.restore_region(background)
        for a in moving:
            a.axes.draw_artist(a)
        im = Image.frombuffer("RGBA", size, bytes(canvas.buffer_rgba()), "raw", "RGBA", 0, 1)
        opaque = im.getextrema()[3][0] == 255  # RGB quantises better to the GIF's palette
        images.append(im.convert("RGB") if opaque else im)
    path = Path(path)
    images[0].save(  # as matplotlib's PillowWriter writes a GIF (and its frames above)
        path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0
    )
    return path


def _show_time(m: _Motion, t: float, ups, inset_ups, title, digits: int) -> None:
    """Move every part to the state at time ``t`` and put the time in the title."""
    state = m.at(t)
    for up in ups:
        up(state)
    for up in inset_ups:
        up(state, t)
    title.set_text(f"{m.case}  t = {t:.{digits}f} s".strip())


def _parts(fig) -> list:
    """The drawn parts of every axes of ``fig`` (lines, patches, texts, ...)."""
    return [a for ax in fig.axes for a in ax.get_children()]


def _moving(fig, still: set[int], title) -> list:
    """The parts to redraw every frame, in the order a full drawing stacks them: the ones
    added after ``still`` was taken, the title, and the still lines and patches that a full
    drawing puts above the lowest moving part (by zorder, then the order added)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    new = [a for a in _parts(fig) if id(a) not in still and a is not title]
    if not new:
        return [title]
    low = min(a.get_zorder() for a in new)
    drawn = (Line2D, Patch)
    above = [
        a
        for a in _parts(fig)
        if id(a) in still
        and isinstance(a, drawn)
        and a.get_zorder() > low
        and a is not a.axes.patch
    ]
    chosen = {id(a) for a in new + above}
    order = []
    for ax in fig.axes:
        kids = [a for a in ax.get_children() if id(a) in chosen]
        order += sorted(kids, key=lambda a: a.get_zorder())  # stable: the order added
    return order + [title]


def motion_figure(ds, ax, snapshots: int = 5, paths: bool = True):
    """Draw ``snapshots`` states of the motion in ``ds``, evenly spaced in time, overlaid on
    ``ax`` (later ones darker), with the ground symbols and the markers' paths; returns
    ``ax``."""
    m = _Motion(ds)
    x0, x1, y0, y1 = _extent(m)
    ax.set(xlim=(x0, x1), ylim=(y0, y1), aspect="equal", xlabel="x (m)", ylabel="y (m)")
    times = np.linspace(m.t[0], m.t[-1], max(snapshots, 1))
    guides = _static(ax, m, paths)
    for k, t in enumerate(times):
        alpha = 0.25 + 0.75 * (k + 1) / len(times)
        state = m.at(float(t))
        ups = _body_artists(ax, m, alpha, 4.0) + _joint_artists(ax, m, alpha)
        ups += _contact_artists(ax, m, alpha) + _spring_artists(ax, m, alpha)
        for up in guides + ups:
            up(state)
    ax.set_title(
        f"{m.case} at t = " + ", ".join(f"{t:.3g}" for t in times) + " s (later: darker)",
        fontsize=9,
    )
    return ax
