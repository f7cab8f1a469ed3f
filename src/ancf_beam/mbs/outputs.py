"""Outputs of a general mechanism: the JSON summary, the ``--out`` histories and the geometry
that :mod:`ancf_beam.animation` draws.

A built mechanism ``mech`` provides ``system`` (the finalized :class:`~ancf_beam.mbs.system.
System`), ``markers`` (``"body.marker"`` -> :class:`~ancf_beam.mbs.bodies.Point`: every named
marker of the rigid bodies and each beam's ``start``, ``mid``, ``end``), ``named_bodies`` (name ->
body), ``drivers`` (name -> :class:`~ancf_beam.mbs.joints.Driver`), ``contacts`` (name -> contact
force element) and ``continuous_factor`` (name -> factor of the episode classification).

Summary (:func:`general_outputs`; SI units, values at ``t_end`` unless said otherwise):

* ``points``: ``{"body.marker": [x, y]}`` (m);
* ``bodies``: ``{name: {x, y, theta}}``: rigid body: centre of mass (m) and angle (rad); point
  mass: its position, ``theta`` null; ANCF beam: node 0 and the angle of the chord from node 0
  to the last node (rad, unwrapped over the samples so that it is continuous like a rigid
  body's angle: a beam that turns by less than pi between two samples);
* ``drive_torque``: ``{driver: torque}`` (N m, counter-clockwise positive on the driven body)
  and ``drive_torque_max``: ``{driver: largest magnitude over the samples}``;
* ``reaction_max``: ``{joint: largest magnitude of the joint force}`` (N) for every
  force-bearing joint (revolute, prismatic, weld: the force on the joint's first body;
  :meth:`~ancf_beam.mbs.joints.Joint.reaction_force`);
* ``contacts``: ``{name: {...}}`` per contact element, from the contact record of every accepted
  step (:class:`~ancf_beam.mbs.stepping.ContactRecord`) where the integrator keeps one, else
  from the samples (central differences: onsets and ends at the zeros of the linear interpolant
  of the penetration, peaks refined by a parabola, :func:`~ancf_beam.mbs.analysis.peak`):
  ``first_contact_time`` (s, null without contact), ``first_impact_force`` (N, peak normal force
  of the first episode, null without contact), ``max_contact_force`` (N), ``max_penetration``
  (m), ``max_eccentricity_ratio`` (``|e| / c`` of a journal in a bearing of radial clearance
  ``c``, > 1 in contact; null for other contacts), ``impacts`` (contact episodes: free ->
  contact transitions, one already in contact at t = 0 included), ``contact_fraction`` (share
  of the run with penetration > 0) and ``continuous_contacts`` (episodes classified as
  continuous contact: longer than ``continuous_factor`` times a free undamped impact of the
  two bodies' reduced mass at the episode's approach speed,
  :func:`~ancf_beam.mbs.stepping.classify_episodes`). A nonsmooth contact (a unilateral
  constraint of the moreau-jean time stepping, :func:`nonsmooth_contact`) has no force fields
  but ``first_contact_time``, ``max_penetration``, ``max_eccentricity_ratio``, ``impacts``,
  ``contact_fraction`` and ``impulses``, ``max_impulse`` (N s), ``first_impact_impulse`` (N
  s), ``solver_max_iter_hit``.

Dataset variables (:func:`general_outputs`; dimension ``time`` first):

* ``marker_x``, ``marker_y`` (time, marker; m);
* ``body_x``, ``body_y``, ``body_theta`` (time, body; m, m, rad; theta NaN for point masses);
* ``node_x``, ``node_y``, ``node_slope_x``, ``node_slope_y`` (time, node; m, m, -, -): the nodes
  of all beams stacked in the order of ``named_bodies``, coordinates ``node_body`` (the beam's
  name) and ``node_index`` (the node's number in its beam);
* ``drive_torque`` (time, driver; N m);
* ``reaction_force`` (time, joint; N, magnitude) and its components ``reaction_force_x``,
  ``reaction_force_y`` (the force the joint applies to its first body);
* per contact (time, contact): ``contact_force_normal``, ``contact_force_tangential`` (N),
  ``penetration`` (m, > 0 in contact), ``eccentricity_x``, ``eccentricity_y`` (m; for circles
  the second centre minus the first), ``contact_state`` (0 free: no penetration, 1 impact, 2
  continuous contact: the class of the episode the sample lies in); with a nonsmooth contact
  ``impulse_normal``, ``impulse_tangential`` (N s, the impulse of the step ending at the sample;
  NaN for a compliant contact, whose force variables are NaN for the nonsmooth ones) and its
  ``contact_state`` 1 when that step took a positive normal impulse.

A group without members (no beam, no driver, ...) has neither variables nor coordinate.

Geometry (:func:`geometry`, JSON-serialisable; what the animation needs besides the data):
``bodies`` (per name its ``type`` and ``markers``: ``rigid`` with an ``outline`` in body
coordinates (the convex hull of the centre of mass and every point a marker, joint or contact
attaches to it, ``closed``, or a polyline along them when they lie on a line), ``point-mass``,
or ``beam`` with its ``nodes`` ``[first, stop)`` along the ``node`` dimension and
``element_length``), ``ground_pins`` and ``ground_welds`` ([x, y], m),
``guides`` (prismatic joints: a ``point`` spec and a ``direction``), ``joints`` (type and point
specs) and ``contacts`` (per name its ``type``: ``journal-bearing`` with ``bearing`` and
``journal`` point specs, ``bearing_radius``, ``journal_radius``, ``clearance``; ``discs`` with
``p``, ``q``, ``r_p``, ``r_q``; ``line`` with the ``points`` in contact and the ``line``:
``point`` spec, ``direction`` and ``segment``) and ``springs`` (per spring-damper its two
``points`` specs). A *point spec* locates a point from the data:
``{"body": name or null, "kind": "ground" | "rigid" | "linear", "rel", "weights"}`` as
:class:`~ancf_beam.mbs.bodies.Point` (rigid: body-frame offset from the centre of mass; linear:
weights of the body's coordinates from ``rel`` on: a point mass's ``(x, y)``, a beam's node-major
``[r_x, r_y, r'_x, r'_y]``; ground: the fixed position).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ancf_beam.mbs import core
from ancf_beam.mbs.bodies import PT_GROUND, PT_RIGID, BeamBody, Point, PointMass, RigidBody
from ancf_beam.mbs.forces import SpringDamper
from ancf_beam.mbs.joints import Driver, Prismatic, Revolute, Weld
from ancf_beam.mbs.stepping import classify_episodes

__all__ = [
    "CONTINUOUS_FACTOR",
    "NONSMOOTH_VARS",
    "is_nonsmooth",
    "nonsmooth_contact",
    "body_histories",
    "contact_duration",
    "contact_outputs",
    "contact_state",
    "general_outputs",
    "geometry",
    "peak",
    "point_spec",
]

#: factor of the continuous-contact classification when the mechanism gives none (the
#: configuration's default ``continuous_factor``)
CONTINUOUS_FACTOR = 5.0
_BODY_DOC = "centre of mass (rigid body), position (point mass) or node 0 (beam),"


def general_outputs(mech: Any, res: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(summary, data, coords)`` of a general mechanism run ``res``
    (:class:`~ancf_beam.results.MechanismResult`): see the module docstring. ``data`` holds
    xarray variable tuples ``(dims, values, attrs)``, ``coords`` the coordinates (``time`` and
    those of the groups present)."""
    summary: dict[str, Any] = {}
    data: dict[str, Any] = {}
    coords: dict[str, Any] = {"time": ("time", np.asarray(res.t, float), {"units": "s"})}
    _marker_outputs(mech, res, summary, data, coords)
    _body_outputs(mech, res, summary, data, coords)
    _node_outputs(mech, res, data, coords)
    _driver_outputs(mech, res, summary, data, coords)
    _reaction_outputs(mech, res, summary, data, coords)
    contacts = dict(getattr(mech, "contacts", None) or {})
    if contacts:
        cs, cdata = contact_outputs(mech, res)
        summary["contacts"] = cs
        data.update(cdata)
        coords["contact"] = ("contact", list(contacts))
    else:
        summary["contacts"] = {}
    return summary, data, coords


def _marker_outputs(mech, res, summary, data, coords) -> None:
    markers = dict(mech.markers)
    summary["points"] = {}
    if not markers:
        return
    pos = np.stack([pt.position(res.q) for pt in markers.values()], axis=1)  # (k, m, 2)
    summary["points"] = {
        name: [float(pos[-1, i, 0]), float(pos[-1, i, 1])] for i, name in enumerate(markers)
    }
    dims = ("time", "marker")
    data["marker_x"] = (dims, pos[..., 0], {"units": "m", "long_name": "marker x position"})
    data["marker_y"] = (dims, pos[..., 1], {"units": "m", "long_name": "marker y position"})
    coords["marker"] = ("marker", list(markers))


def body_histories(body: Any, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x``, ``y``, ``theta`` of a body over the samples ``q`` (k, n) (module docstring:
    rigid body, point mass with ``theta`` NaN, beam: node 0 and the unwrapped chord angle)."""
    q = np.atleast_2d(q)
    o = body.offset
    x, y = q[:, o].copy(), q[:, o + 1].copy()
    if isinstance(body, RigidBody):
        return x, y, q[:, o + 2].copy()
    if isinstance(body, BeamBody):
        last = o + 4 * (body.n_nodes - 1)
        chord = np.arctan2(q[:, last + 1] - y, q[:, last] - x)
        return x, y, np.unwrap(chord)
    return x, y, np.full(len(q), np.nan)


def _body_outputs(mech, res, summary, data, coords) -> None:
    bodies = dict(mech.named_bodies)
    summary["bodies"] = {}
    if not bodies:
        return
    hist = np.stack([np.stack(body_histories(b, res.q), -1) for b in bodies.values()], 1)
    for i, (name, body) in enumerate(bodies.items()):
        x, y, th = (float(v) for v in hist[-1, i])
        point_mass = isinstance(body, PointMass)
        summary["bodies"][name] = {"x": x, "y": y, "theta": None if point_mass else th}
    dims = ("time", "body")
    data["body_x"] = (dims, hist[..., 0], {"units": "m", "long_name": _BODY_DOC + " x"})
    data["body_y"] = (dims, hist[..., 1], {"units": "m", "long_name": _BODY_DOC + " y"})
    data["body_theta"] = (
        dims,
        hist[..., 2],
        {
            "units": "rad",
            "long_name": "rigid body angle; beam chord angle node 0 -> last node (unwrapped); "
            "NaN for point masses",
        },
    )
    coords["body"] = ("body", list(bodies))


def _beams(mech) -> list[tuple[str, BeamBody]]:
    return [(n, b) for n, b in dict(mech.named_bodies).items() if isinstance(b, BeamBody)]


def _node_outputs(mech, res, data, coords) -> None:
    beams = _beams(mech)
    if not beams:
        return
    cols, owner, index = [], [], []
    for name, beam in beams:
        o = beam.offset
        cols.append(res.q[:, o : o + beam.n_dof].reshape(len(res.t), beam.n_nodes, 4))
        owner += [name] * beam.n_nodes
        index += list(range(beam.n_nodes))
    nodes = np.concatenate(cols, axis=1)  # (k, N, 4): r_x, r_y, r'_x, r'_y
    dims = ("time", "node")
    for j, (key, unit) in enumerate(
        (("node_x", "m"), ("node_y", "m"), ("node_slope_x", "1"), ("node_slope_y", "1"))
    ):
        data[key] = (dims, nodes[..., j], {"units": unit, "long_name": f"beam node {key[5:]}"})
    coords["node"] = ("node", np.arange(len(owner)))
    coords["node_body"] = ("node", owner)
    coords["node_index"] = ("node", np.array(index))


def _driver_outputs(mech, res, summary, data, coords) -> None:
    drivers = dict(getattr(mech, "drivers", None) or {})
    summary["drive_torque"] = {}
    summary["drive_torque_max"] = {}
    if not drivers:
        return
    torque = np.stack([-res.lam[:, d.first_row] for d in drivers.values()], axis=1)
    for i, name in enumerate(drivers):
        summary["drive_torque"][name] = float(torque[-1, i])
        summary["drive_torque_max"][name] = float(np.max(np.abs(torque[:, i])))
    data["drive_torque"] = (
        ("time", "driver"),
        torque,
        {"units": "N m", "long_name": "torque of the driver on its body (ccw +)"},
    )
    coords["driver"] = ("driver", list(drivers))


def _reaction_outputs(mech, res, summary, data, coords) -> None:
    names, forces = [], []
    for j in mech.system.joints:
        f = j.reaction_force(res.lam[:, j.first_row : j.first_row + len(j.rows)], res.q)
        if f is not None:
            names.append(j.name)
            forces.append(np.broadcast_to(f, (len(res.t), 2)))
    summary["reaction_max"] = {}
    if not names:
        return
    f = np.stack(forces, axis=1)  # (k, joints, 2)
    mag = np.hypot(f[..., 0], f[..., 1])
    summary["reaction_max"] = {n: float(np.max(mag[:, i])) for i, n in enumerate(names)}
    dims = ("time", "joint")
    doc = "force of the joint on its first body"
    data["reaction_force"] = (dims, mag, {"units": "N", "long_name": "joint force magnitude"})
    data["reaction_force_x"] = (dims, f[..., 0], {"units": "N", "long_name": doc + ", x"})
    data["reaction_force_y"] = (dims, f[..., 1], {"units": "N", "long_name": doc + ", y"})
    coords["joint"] = ("joint", names)


# ------------------------------------------------------------------------------------------
# contacts
# ------------------------------------------------------------------------------------------
def _episodes_from_samples(e, t, delta, fn, fst) -> np.ndarray:
    """The episode table (:data:`~ancf_beam.mbs.stepping.EP_FIELDS`) of contact element ``e``
    from its samples: runs of samples with ``delta > 0``, onset and end at the zeros of the
    linear interpolant of ``delta`` (an episode in contact at ``t[0]`` starts there, one in
    contact at the end has no end: NaN), the approach speed the integrator carried
    (``fst``), else the closing rate over the onset interval."""
    inside = np.concatenate([[False], delta > 0.0, [False]])
    starts = np.flatnonzero(~inside[:-1] & inside[1:])
    ends = np.flatnonzero(inside[:-1] & ~inside[1:]) - 1  # last sample in contact
    out = np.full((len(starts), 6), np.nan)
    n = len(t)
    for k, (i, j) in enumerate(zip(starts, ends, strict=True)):
        t_on = t[0] if i == 0 else _zero(t[i - 1], t[i], delta[i - 1], delta[i])
        t_off = np.nan if j == n - 1 else _zero(t[j], t[j + 1], delta[j], delta[j + 1])
        if fst is not None:
            v0 = fst[i, e, core.S_V0]
        elif i > 0:
            v0 = (delta[i] - delta[i - 1]) / (t[i] - t[i - 1])
        else:
            v0 = 0.0
        out[k] = (e, t_on, t_off, v0, np.max(fn[i : j + 1]), np.max(delta[i : j + 1]))
    return out


def peak(t: np.ndarray, y: np.ndarray, *, clipped: bool = False) -> float:
    """Largest value of the sampled ``y(t)``, refined by the parabola through the largest sample
    and its neighbours (at their times: the last interval of a run is shorter when ``t_end``
    is not a multiple of ``sample_dt``). The same as :func:`ancf_beam.mbs.analysis.peak`
    (here for the modules that :mod:`ancf_beam.mbs.analysis` imports).

    ``clipped``: ``y`` is a force clipped at zero (a contact force). A neighbour of zero then
    lies across the clip's kink or the onset's jump (a Kelvin-Voigt force starts at ``c v0``,
    its largest value for ``zeta >= 1/2``), where no parabola holds: the largest sample is
    returned as it is (a parabola through 0, 2e4 and 1.97e4 N put the peak at 2.24e4 N)."""
    i = int(np.argmax(y))
    if clipped and not (0 < i < len(y) - 1 and y[i - 1] > 0.0 and y[i + 1] > 0.0):
        return float(y[i])
    if 0 < i < len(y) - 1:
        h1, h2 = float(t[i] - t[i - 1]), float(t[i + 1] - t[i])
        a, b, c = y[i - 1], y[i], y[i + 1]
        s1, s2 = (b - a) / h1, (c - b) / h2  # divided differences
        curv = (s2 - s1) / (h1 + h2)  # y = b + slope (x - t_i) + curv (x - t_i)^2
        if curv < 0.0:
            slope = s1 + curv * h1  # derivative at t_i
            return float(b - 0.25 * slope * slope / curv)
    return float(y[i])


def contact_duration(t: np.ndarray, fn: np.ndarray) -> float:
    """Total time (s) with positive ``fn`` from samples, the ends of each interval by linear
    interpolation to zero (a first sample already positive counts from ``t[0]``). The same as
    :func:`ancf_beam.mbs.analysis.contact_duration`."""
    pos = fn > 0.0
    total = 0.0
    for i in range(len(t) - 1):
        if pos[i] and pos[i + 1]:
            total += t[i + 1] - t[i]
        elif pos[i] != pos[i + 1]:
            a, b = (fn[i], fn[i + 1])
            x = a / (a - b) if a != b else 0.5  # zero of the linear interpolant
            total += (t[i + 1] - t[i]) * (x if pos[i] else 1.0 - x)
    return float(total)


def _zero(t0, t1, d0, d1) -> float:
    """Zero of the line through ``(t0, d0)``, ``(t1, d1)`` (``d0``, ``d1`` of opposite signs
    or one of them zero)."""
    return float(t0 + (t1 - t0) * d0 / (d0 - d1)) if d0 != d1 else float(t0)


def _body_mass(body) -> float:
    """Mass (kg) of a body; a beam's whole mass; inf for the ground (None)."""
    if body is None:
        return math.inf
    if isinstance(body, BeamBody):
        return float(body.model.total_mass)
    return float(body.mass)


def _contact_bodies(fe) -> list:
    """The bodies a contact element connects (its two circle centres, or its points and line)."""
    pts = [getattr(fe, k, None) for k in ("p", "q")]
    if pts[0] is None:
        pts = list(getattr(fe, "points", None) or []) + [_line_point(fe)]
    return list({id(p.body): p.body for p in pts if isinstance(p, Point)}.values())


def _m_eff(fe) -> float:
    """The contact's reduced mass (kg): its ``m_eff`` when given, else ``m_1 m_2 / (m_1 +
    m_2)`` of the two bodies it connects (the ground: infinite)."""
    given = getattr(fe, "m_eff", None)
    if given:
        return float(given)
    masses = [_body_mass(b) for b in _contact_bodies(fe)] + [math.inf]
    m1, m2 = masses[0], masses[1]
    return m2 if math.isinf(m1) else (m1 if math.isinf(m2) else m1 * m2 / (m1 + m2))


def _episodes(system, res, e, hist) -> tuple[np.ndarray, float, float, float]:
    """Episode table, largest normal force (N), largest penetration (m) and time in contact
    (s) of contact element ``e``: from the record of every step, else from the samples."""
    t = np.asarray(res.t, float)
    delta = np.asarray(hist["delta"], float)
    fn = np.asarray(hist["F_n"], float)
    rec = res.contact
    if rec is not None and e in rec.elements:
        row = rec.elements.index(e)
        eps = rec.episodes[rec.episodes[:, 0] == e] if len(rec.episodes) else rec.episodes
        eps = eps.reshape(-1, 6)
        d_rec = float(np.nanmax(eps[:, 5])) if len(eps) else 0.0
        f_max = max(float(rec.max_force[row]), float(np.max(fn)))
        return eps, f_max, max(d_rec, float(np.max(delta)), 0.0), float(rec.contact_time[row])
    eps = _episodes_from_samples(e, t, delta, fn, res.force_state)
    f_max = peak(t, fn, clipped=True) if np.max(fn) > 0.0 else 0.0
    d_max = max(peak(t, delta), 0.0) if np.max(delta) > 0.0 else 0.0
    return eps, f_max, d_max, contact_duration(t, delta)


def contact_state(t, delta, eps, kinds) -> np.ndarray:
    """Per sample 0 (no penetration) or the class ``kinds[i]`` of the episode ``eps[i]``
    (rows ``(element, t_on, t_off, ...)``, ``t_off`` NaN while open) whose closed interval
    holds the sample, where the penetration ``delta`` is positive; a later episode wins where
    two share a sample. The sample times ``t`` rise, so each episode is the index range
    between two bisections (its cost is the episode's samples, not the run's)."""
    t = np.asarray(t, float)
    state = np.zeros(len(t), dtype=np.int8)
    if len(eps) == 0:
        return state
    if len(t) > 1 and not np.all(t[1:] >= t[:-1]):
        raise ValueError("contact_state: the sample times must not decrease")
    lo = np.searchsorted(t, eps[:, 1], side="left")  # first sample at or after the onset
    hi = np.searchsorted(t, np.where(np.isnan(eps[:, 2]), np.inf, eps[:, 2]), side="right")
    for i0, i1, kind in zip(lo, hi, kinds, strict=True):
        if i1 > i0:
            seg = state[i0:i1]
            seg[delta[i0:i1] > 0.0] = kind
    return state


def _one_contact(mech, res, name, fe, hist) -> tuple[dict[str, Any], np.ndarray]:
    """Summary of one contact and its per-sample ``contact_state``."""
    system = mech.system
    t = np.asarray(res.t, float)
    t_end = float(t[-1])
    e = system.forces.index(fe)
    eps, f_max, d_max, t_contact = _episodes(system, res, e, hist)
    law = fe.law
    factor = dict(getattr(mech, "continuous_factor", None) or {}).get(name, CONTINUOUS_FACTOR)
    kinds = np.zeros(0, dtype=np.int8)
    if len(eps):
        m = _m_eff(fe)
        kinds = classify_episodes(eps, t_end, m, law.stiffness, law.exponent, factor, law.v0_min)
    delta = np.asarray(hist["delta"], float)
    ratio = None
    if getattr(fe, "inside", False):
        c = fe.r_p - fe.r_q
        ecc = float(np.max(np.hypot(hist["e_x"], hist["e_y"])))
        ratio = max(ecc, c + d_max) / c
    summary = {
        "first_contact_time": float(eps[0, 1]) if len(eps) else None,
        "first_impact_force": float(eps[0, 4]) if len(eps) else None,
        "max_contact_force": f_max,
        "max_penetration": d_max,
        "max_eccentricity_ratio": ratio,
        "impacts": int(len(eps)),
        "contact_fraction": t_contact / t_end if t_end > 0.0 else 0.0,
        "continuous_contacts": int(np.sum(kinds == 2)),
    }
    return summary, contact_state(t, delta, eps, kinds)


_CONTACT_VARS = (
    ("contact_force_normal", "F_n", {"units": "N", "long_name": "normal contact force"}),
    (
        "contact_force_tangential",
        "F_t",
        {"units": "N", "long_name": "friction force on the second body along t"},
    ),
    ("penetration", "delta", {"units": "m", "long_name": "penetration (> 0 in contact)"}),
    ("eccentricity_x", "e_x", {"units": "m", "long_name": "second centre minus first, x"}),
    ("eccentricity_y", "e_y", {"units": "m", "long_name": "second centre minus first, y"}),
)


def is_nonsmooth(fe: Any) -> bool:
    """True for a nonsmooth contact (a unilateral constraint of the moreau-jean time stepping,
    not a force element)."""
    return bool(getattr(fe, "nonsmooth", False))


def nonsmooth_contact(system: Any, res: Any, fe: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Summary and per-sample history of the nonsmooth contact ``fe`` of a moreau-jean run:
    from the stepper's ``res.contact_summary`` (counted over every step), its impulses
    ``res.impulse_n``, ``res.impulse_t`` (N s, the step ending at each sample) and the contact's
    geometry at the samples (:meth:`~ancf_beam.mbs.forces.Contact.evaluate`: penetration and
    eccentricity). Summary (module docstring): ``first_contact_time``, ``max_penetration``
    (the larger of the stepper's and the samples'), ``max_eccentricity_ratio`` (a journal in a
    bearing, else None), ``impacts`` and ``impulses`` (both the stepper's count of impacts),
    ``max_impulse``, ``first_impact_impulse`` (N s: the normal impulses summed over the first run
    of samples with a positive one, every step's when ``sample_dt`` equals ``dt``; None without
    contact), ``contact_fraction`` (share of the steps with a positive normal impulse),
    ``solver_max_iter_hit`` (steps whose contact solver stopped at ``max_iter``)."""
    k = system.unilateral.index(fe)
    cs = res.contact_summary[fe.name]
    geo = fe.evaluate(res.q, res.v)
    delta = np.atleast_1d(np.asarray(geo["delta"], float))
    e_x = np.atleast_1d(np.asarray(geo["e_x"], float))
    e_y = np.atleast_1d(np.asarray(geo["e_y"], float))
    p_n = np.asarray(res.impulse_n, float)[:, k]
    p_t = np.asarray(res.impulse_t, float)[:, k]
    d_max = max(float(cs["max_penetration"]), float(np.max(delta)), 0.0)
    ratio = None
    if getattr(fe, "inside", False):
        c = fe.r_p - fe.r_q
        ratio = max(float(np.max(np.hypot(e_x, e_y))), c + d_max) / c
    first = cs["first_contact_time"]
    hits = np.flatnonzero(p_n > 0.0)
    first_p = None
    if len(hits):  # the first run of samples with a positive normal impulse
        ends = np.flatnonzero(p_n[hits[0] :] <= 0.0)
        first_p = float(np.sum(p_n[hits[0] : hits[0] + (ends[0] if len(ends) else len(p_n))]))
    summary = {
        "first_contact_time": None if first is None else float(first),
        "max_penetration": d_max,
        "max_eccentricity_ratio": ratio,
        "impacts": int(cs["impulses"]),
        "contact_fraction": float(cs["contact_fraction"]),
        "impulses": int(cs["impulses"]),
        "max_impulse": float(cs["max_impulse"]),
        "first_impact_impulse": first_p,
        "solver_max_iter_hit": int(cs["solver_max_iter_hit"]),
    }
    hist = {
        "P_n": p_n,
        "P_t": p_t,
        "delta": delta,
        "e_x": e_x,
        "e_y": e_y,
        "state": (p_n > 0.0).astype(np.int8),
    }
    return summary, hist


#: the Dataset variables of the nonsmooth contacts: (name, history key, attributes)
NONSMOOTH_VARS = (
    (
        "impulse_normal",
        "P_n",
        {"units": "N s", "long_name": "normal impulse of the step ending at the sample"},
    ),
    (
        "impulse_tangential",
        "P_t",
        {"units": "N s", "long_name": "friction impulse of that step on the second body along t"},
    ),
)
_NONSMOOTH_STATE = "1 when the step ending at the sample took a positive normal impulse, else 0"


def contact_outputs(mech: Any, res: Any) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Per contact of ``mech.contacts``: its summary (module docstring) and the Dataset
    variables (time, contact) in the order of ``mech.contacts``. The force variables are
    written when a contact is compliant, the impulse variables when one is nonsmooth (NaN for
    the contacts of the other model)."""
    contacts = dict(mech.contacts)
    hist_all = mech.system.contact_history(res.q, res.v, res.force_state)
    summary, states, hists = {}, [], []
    for name, fe in contacts.items():
        if is_nonsmooth(fe):
            summary[name], hist = nonsmooth_contact(mech.system, res, fe)
            states.append(hist["state"])
        else:
            hist = hist_all[fe.name]
            summary[name], state = _one_contact(mech, res, name, fe, hist)
            states.append(state)
        hists.append(hist)
    dims = ("time", "contact")
    nan = np.full(len(res.t), np.nan)
    data: dict[str, Any] = {}
    models = [is_nonsmooth(fe) for fe in contacts.values()]
    wanted = [(v, False) for v in _CONTACT_VARS if not all(models) or v[1] not in _FORCE_KEYS]
    wanted += [(v, True) for v in NONSMOOTH_VARS if any(models)]
    for (key, src, attrs), nonsmooth in wanted:
        cols = [
            np.asarray(h[src], float) if ns == nonsmooth or src not in _FORCE_KEYS else nan
            for h, ns in zip(hists, models, strict=True)
        ]
        data[key] = (dims, np.stack(cols, axis=1), attrs)
    state_doc = "0 free (no penetration), 1 impact, 2 continuous contact"
    if all(models):
        state_doc = _NONSMOOTH_STATE
    elif any(models):
        state_doc += f" (a nonsmooth contact: {_NONSMOOTH_STATE})"
    data["contact_state"] = (dims, np.stack(states, axis=1), {"long_name": state_doc})
    return summary, data


#: the history keys that belong to one contact model (the others, geometry, to both)
_FORCE_KEYS = ("F_n", "F_t", "P_n", "P_t")


# ------------------------------------------------------------------------------------------
# geometry
# ------------------------------------------------------------------------------------------
def point_spec(pt: Point | None, names: dict[int, str]) -> dict[str, Any] | None:
    """JSON description of a point (module docstring); None when it is not a position or
    its body is not one of the named bodies (``names``: ``id(body)`` -> name)."""
    if pt is None or pt.slope:
        return None
    if pt.kind == PT_GROUND:
        return {"body": None, "kind": "ground", "rel": 0, "weights": [*map(float, pt.weights)]}
    name = names.get(id(pt.body))
    if name is None:
        return None
    kind = "rigid" if pt.kind == PT_RIGID else "linear"
    return {"body": name, "kind": kind, "rel": int(pt.rel), "weights": [*map(float, pt.weights)]}


def _attached_points(mech) -> list[Point]:
    """Every point a joint or contact of the system is attached to, and the named markers."""
    pts: list[Point] = list(dict(mech.markers).values())
    for j in mech.system.joints:
        pts += [getattr(j, k, None) for k in ("p", "q", "a", "b", "through")]
    for fe in dict(getattr(mech, "contacts", None) or {}).values():
        pts += [getattr(fe, "p", None), getattr(fe, "q", None), _line_point(fe)]
        pts += list(getattr(fe, "points", None) or [])
    return [p for p in pts if isinstance(p, Point)]


def _outline(local: list[tuple[float, float]]) -> tuple[list[list[float]], bool]:
    """Outline of a rigid body through its centre of mass and attachment points (body frame):
    their convex hull (closed) or, when they lie on a line, a polyline along it."""
    pts = np.unique(np.array([(0.0, 0.0), *local], dtype=float), axis=0)
    if len(pts) >= 3:
        centred = pts - pts.mean(axis=0)
        sv = np.linalg.svd(centred, compute_uv=False)
        if sv[1] > 1e-6 * sv[0]:
            from scipy.spatial import ConvexHull

            hull = ConvexHull(pts)
            return pts[hull.vertices].tolist(), True
    if len(pts) >= 2:
        u = np.linalg.svd(pts - pts.mean(axis=0))[2][0]  # direction of the line
        pts = pts[np.argsort(pts @ u)]
    return pts.tolist(), False


def _body_geometry(mech, names, node_start) -> dict[str, Any]:
    attached: dict[int, list] = {}
    for p in _attached_points(mech):
        if p.kind == PT_RIGID:
            attached.setdefault(id(p.body), []).append(tuple(p.weights))
    out: dict[str, Any] = {}
    for name, body in dict(mech.named_bodies).items():
        markers = [m for m, p in dict(mech.markers).items() if p.body is body]
        if isinstance(body, RigidBody):
            outline, closed = _outline(attached.get(id(body), []))
            out[name] = {"type": "rigid", "markers": markers, "outline": outline, "closed": closed}
        elif isinstance(body, BeamBody):
            first = node_start[name]
            out[name] = {
                "type": "beam",
                "markers": markers,
                "nodes": [first, first + body.n_nodes],
                "element_length": float(body.model.le),
            }
        else:
            out[name] = {"type": "point-mass", "markers": markers}
    return out


def _joint_geometry(mech, names) -> tuple[dict, list, list, list]:
    """Joints (type, points), ground pins and welds, guides of prismatic joints."""
    joints, pins, welds, guides = {}, [], [], []
    for j in mech.system.joints:
        if isinstance(j, Driver):
            joints[j.name] = {"type": "driver", "body": names.get(id(j.body))}
            continue
        a, b = (j.p, j.q) if isinstance(j, Revolute) else (None, None)
        if isinstance(j, Weld):
            a, b = j.a, j.b
        if isinstance(j, Prismatic):
            a, b = j.p, j.through
            guides.append({"point": point_spec(b, names), "direction": [*map(float, j.direction)]})
        joints[j.name] = {
            "type": type(j).__name__.lower(),
            "points": [point_spec(a, names), point_spec(b, names)],
        }
        for pt in (a, b):
            if isinstance(pt, Point) and pt.kind == PT_GROUND and not isinstance(j, Prismatic):
                (welds if isinstance(j, Weld) else pins).append([*map(float, pt.weights)])
    return joints, pins, welds, guides


def _line_point(fe) -> Point | None:
    """The point a line contact's line passes through (duck-typed: ``line_point`` or
    ``through``)."""
    for key in ("line_point", "through"):
        p = getattr(fe, key, None)
        if isinstance(p, Point):
            return p
    return None


def _contact_geometry(fe, names) -> dict[str, Any]:
    """Type and parameters of a contact element for drawing."""
    if hasattr(fe, "r_p") and hasattr(fe, "inside"):
        p, q = point_spec(fe.p, names), point_spec(fe.q, names)
        if fe.inside:
            return {
                "type": "journal-bearing",
                "bearing": p,
                "journal": q,
                "bearing_radius": float(fe.r_p),
                "journal_radius": float(fe.r_q),
                "clearance": float(fe.r_p - fe.r_q),
            }
        return {"type": "discs", "p": p, "q": q, "r_p": float(fe.r_p), "r_q": float(fe.r_q)}
    seg = getattr(fe, "segment", None)
    return {
        "type": "line",
        "points": [point_spec(p, names) for p in (getattr(fe, "points", None) or [])],
        "line": {
            "point": point_spec(_line_point(fe), names),
            "direction": [*map(float, getattr(fe, "direction", (1.0, 0.0)))],
            "segment": None if seg is None else [*map(float, seg)],
        },
    }


def geometry(mech: Any) -> dict[str, Any]:
    """What :func:`ancf_beam.animation.animate_mechanism` draws besides the data (module
    docstring); JSON-serialisable."""
    bodies = dict(mech.named_bodies)
    names = {id(b): n for n, b in bodies.items()}
    node_start, k = {}, 0
    for name, beam in _beams(mech):
        node_start[name] = k
        k += beam.n_nodes
    joints, pins, welds, guides = _joint_geometry(mech, names)
    contacts = dict(getattr(mech, "contacts", None) or {})
    return {
        "bodies": _body_geometry(mech, names, node_start),
        "joints": joints,
        "ground_pins": pins,
        "ground_welds": welds,
        "guides": guides,
        "contacts": {n: _contact_geometry(fe, names) for n, fe in contacts.items()},
        "springs": {
            fe.name: {"points": [point_spec(fe.p, names), point_spec(fe.q, names)]}
            for fe in mech.system.forces
            if isinstance(fe, SpringDamper)
        },
    }
