"""Independent references for slider-cranks with clearances: two revolute clearance joints, and
a slider with clearance in its guide (issue 28; docs/design.md section 7).

Both are minimal-coordinate rigid-body models written from the documented formulas, with plain
numpy and scipy ``solve_ivp`` (DOP853), without the multibody code or its contact kernels. SI
units throughout: m, kg, s, rad, N, J.

**Normal contact laws** (:class:`NormalLaw`), penetration ``d`` (m, > 0 in contact), its rate
``d'`` (m/s, > 0 closing), approach speed ``v0`` at the onset of the episode::

    hertz                F = K d^n
    hunt-crossley        F = K d^n (1 + chi d'/v0),  chi = 3 (1 - ce) / 2
    lankarani-nikravesh  F = K d^n (1 + chi d'/v0),  chi = 3 (1 - ce^2) / 4
    flores               F = K d^n (1 + chi d'/v0),  chi = 8 (1 - ce) / (5 ce)

(Hertz, J. reine angew. Math. 92 (1882) 156; Hunt & Crossley, J. Appl. Mech. 42 (1975) 440;
Lankarani & Nikravesh, J. Mech. Des. 112 (1990) 369; Flores, Machado, Silva & Martins,
Multibody Syst. Dyn. 25 (2011) 357)

with ``F`` clipped at zero (never tensile) and ``v0`` floored at ``v0_min`` (m/s). The elastic
part stores ``V = K d^(n+1) / (n+1)``; the rest of the work ``F d'`` is dissipated.

**Conformal Hertz stiffness** of a journal (radius ``R_j``) inside its bearing (``R_b``)
(:func:`conformal_hertz_stiffness`): ``K = 4/3 E* sqrt(R)`` (N/m^1.5) with ``1/E* = (1 -
nu_b^2)/E_b + (1 - nu_j^2)/E_j`` and the conformal radius ``R = R_b R_j / (R_b - R_j)``.

**Friction** ``coulomb-transition`` (:func:`coulomb_transition`): ``F_t = -mu Cd(|v_t|)
sign(v_t) F_n`` with ``Cd = 0`` below ``v_static``, 1 above ``v_dynamic``, linear between.

**Contact episodes.** A contact exerts no force until its onset ``d = 0`` (rising) is located
(a terminal event on the dense output); the integration restarts there with ``v0 = d'``. The
episode lasts while ``d > 0`` (the force may be clipped to zero towards its end) and ends at
``d = 0`` (falling), where the integration restarts again. An *impact* is one episode (onset
to separation; the multibody code ends an episode where the force returns to zero: the same
count unless the penetration grows again while the force is clipped). Largest penetration
(``d' = 0``) and largest force (``dF/dt = 0``, with ``d''`` from the equations of motion) are
non-terminal events on the dense output; the maxima also take every accepted step's end
point. A contact entered and left inside one step (a free-flight step can be long) would be
missed: the local maxima of ``d`` of the contacts not in contact are events too, and a
positive one has the segment redone with half the step bound (at most :data:`MAX_RETRIES`
times).

**Energy.** Each model integrates, beside its coordinates, the work ``W`` of the drive (J) and
the work ``D`` dissipated by contact damping and friction (J). Kinetic + gravity + elastic
contact energy ``E`` then satisfies ``E(t) + D(t) - W(t) = E(0)`` for every law. The returned
``energy_error_bound`` (J) is ``sum over accepted steps of sqrt(N) sum_i |dB/dy_i| (atol +
rtol |y_i|)`` with ``B = E + D - W``: ``B`` is an invariant of the exact flow, so its drift is
the sum of the local errors' projections on ``grad B``, and each accepted step's error
estimate is at most 1 in the RMS norm scaled by ``atol + rtol |y|`` (so no component exceeds
``sqrt(N)`` times its scale). The bound holds as far as DOP853's embedded estimate bounds the
true local error: it is built from embedded 5th- and 3rd-order formulas (Hairer, Norsett &
Wanner, Solving Ordinary Differential Equations I, 2nd ed., section II.5), so it over-states
the error of the 8th-order solution the method propagates once the steps are in the
asymptotic range.

Models: :func:`slider_crank_two_clearances`, :func:`slider_crank_guide_clearance` and its
limit :func:`slider_crank_ideal_guide`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

__all__ = [
    "CORNERS",
    "GuideClearanceCase",
    "LAWS",
    "NormalLaw",
    "TwoClearanceCase",
    "conformal_hertz_stiffness",
    "coulomb_transition",
    "slider_crank_guide_clearance",
    "slider_crank_ideal_guide",
    "slider_crank_two_clearances",
]

LAWS = ("hertz", "hunt-crossley", "lankarani-nikravesh", "flores")
#: m, penetration cap inside the laws (far beyond any accepted state: a run whose largest
#: penetration reaches it is an error)
D_CAP = 1.0


def conformal_hertz_stiffness(
    E_bearing: float, nu_bearing: float, E_journal: float, nu_journal: float, R_bearing, R_journal
) -> float:
    """``K = 4/3 E* sqrt(R)`` (N/m^1.5) of a journal inside its bearing, ``R = R_b R_j / (R_b -
    R_j)`` (m), ``1/E* = (1 - nu_b^2)/E_b + (1 - nu_j^2)/E_j`` (Pa)."""
    if not R_bearing > R_journal > 0.0:
        raise ValueError(f"need R_bearing > R_journal > 0, got {R_bearing!r}, {R_journal!r}")
    e_star = 1.0 / ((1.0 - nu_bearing**2) / E_bearing + (1.0 - nu_journal**2) / E_journal)
    return 4.0 / 3.0 * e_star * math.sqrt(R_bearing * R_journal / (R_bearing - R_journal))


def coulomb_transition(v_t: float, mu: float, v_static: float, v_dynamic: float) -> float:
    """Signed friction coefficient ``mu Cd(|v_t|) sign(v_t)`` (the tangential force is ``-that
    * F_n``): ``Cd`` 0 below ``v_static``, 1 above ``v_dynamic`` (m/s), linear between."""
    s = abs(v_t)
    if mu == 0.0 or s <= v_static:
        return 0.0
    cd = 1.0 if s >= v_dynamic else (s - v_static) / (v_dynamic - v_static)
    return mu * cd * (1.0 if v_t > 0.0 else -1.0)


@dataclass(frozen=True)
class NormalLaw:
    """A normal contact law (module docstring): ``law`` in :data:`LAWS`, stiffness ``K``
    (N/m^n), ``exponent`` n, ``restitution`` ce in (0, 1] (hysteresis laws), ``v0_min`` (m/s)."""

    law: str
    K: float
    exponent: float = 1.5
    restitution: float = 1.0
    v0_min: float = 1.0e-4
    chi: float = field(init=False)

    def __post_init__(self):
        if self.law not in LAWS:
            raise ValueError(f"law = {self.law!r} is invalid: expected one of {', '.join(LAWS)}")
        if not (self.K > 0.0 and self.exponent >= 1.0 and self.v0_min > 0.0):
            raise ValueError(f"need K > 0, exponent >= 1, v0_min > 0, got {self}")
        if not 0.0 < self.restitution <= 1.0:
            raise ValueError(f"restitution = {self.restitution!r} is invalid: expected (0, 1]")

        ce = self.restitution
        chi = {
            "hertz": 0.0,
            "hunt-crossley": 1.5 * (1.0 - ce),
            "lankarani-nikravesh": 0.75 * (1.0 - ce * ce),
            "flores": 8.0 * (1.0 - ce) / (5.0 * ce),
        }[self.law]
        object.__setattr__(self, "chi", chi)  # hysteresis factor (1)

    def force(self, d: float, d_dot: float, v0: float) -> float:
        """Normal force (N, >= 0) at penetration ``d`` (m), rate ``d_dot`` and onset speed
        ``v0`` (m/s). ``d`` is capped at :data:`D_CAP` (a trial stage of a step the integrator
        rejects can reach any value; the power would overflow)."""
        if d <= 0.0:
            return 0.0
        d = min(d, D_CAP)
        f = self.K * d**self.exponent * (1.0 + self.chi * d_dot / max(v0, self.v0_min))
        return f if f > 0.0 else 0.0

    def force_rate(self, d: float, d_dot: float, d_ddot: float, v0: float) -> float:
        """``dF/dt`` (N/s) of the unclipped law (its zeros are the force peaks)."""
        if d <= 0.0:
            return 0.0
        d = min(d, D_CAP)
        n, q = self.exponent, self.chi / max(v0, self.v0_min)
        return self.K * (n * d ** (n - 1.0) * d_dot * (1.0 + q * d_dot) + d**n * q * d_ddot)

    def elastic_force(self, d: float) -> float:
        """``K d^n`` (N) for ``d > 0``, else 0."""
        return self.K * min(d, D_CAP) ** self.exponent if d > 0.0 else 0.0

    def energy(self, d):
        """Stored elastic energy ``K d^(n+1) / (n+1)`` (J); ``d`` scalar or array."""
        dp = np.maximum(np.asarray(d, dtype=float), 0.0)
        return self.K * dp ** (self.exponent + 1.0) / (self.exponent + 1.0)


# --------------------------------------------------------------------------- integration


@dataclass
class _Model:
    """What the episode-driven integration needs from a mechanism. ``y`` ends with the drive
    work ``W`` and the dissipated work ``D`` (indices -2, -1)."""

    names: tuple[str, ...]
    laws: tuple[NormalLaw, ...]
    rhs: Callable  # (t, y, active, v0) -> y'
    gaps: Callable  # (t, y) -> (d, d') arrays over contacts
    gap_acc: Callable  # (t, y, y') -> d'' array
    contact: Callable  # (t, y, active, v0) -> (F_n, F_t, geometry (nc, 2)) arrays
    energy: Callable  # (t array, Y (n, m)) -> E array (kinetic + gravity + elastic)


@dataclass
class _Options:
    rtol: float
    atol: float
    max_step: float
    max_segments: int


def _events(model: _Model, t0: float, active: np.ndarray, v0: np.ndarray) -> list:
    """Events of one segment from ``t0``: per contact the terminal gap event (onset while
    inactive, separation while active; at ``t0`` itself its value is put on the side of the
    current state, so that a restart exactly at ``d = 0`` neither fires again nor hides the
    next crossing), then per active contact the penetration and force peaks, then per inactive
    contact the local maxima of ``d`` (a positive one is a contact missed inside a step)."""
    events = []
    for k in range(len(model.names)):
        side = 1.0 if active[k] else -1.0

        def gap(t, y, k=k, side=side):
            d = model.gaps(t, y)[0][k]
            return side * abs(d) if t == t0 else d

        gap.terminal = True
        gap.direction = -side
        events.append(gap)
    for k in np.flatnonzero(active):

        def pen_peak(t, y, k=k):
            return model.gaps(t, y)[1][k]

        def force_peak(t, y, k=k):
            d, dd = model.gaps(t, y)
            ddd = model.gap_acc(t, y, model.rhs(t, y, active, v0))
            return model.laws[k].force_rate(d[k], dd[k], ddd[k], v0[k])

        pen_peak.direction = force_peak.direction = -1.0
        events += [pen_peak, force_peak]
    for k in np.flatnonzero(~active):

        def free_peak(t, y, k=k):
            return model.gaps(t, y)[1][k]

        free_peak.direction = -1.0
        events.append(free_peak)
    return events


def _missed(model: _Model, sol, active: np.ndarray) -> float:
    """Earliest time of a local maximum of ``d > 0`` of an inactive contact inside the
    segment (a contact entered and left within one step), else ``inf``."""
    nc, n_act = len(model.names), int(active.sum())
    first = nc + 2 * n_act
    t_miss = math.inf
    events = zip(sol.t_events[first:], sol.y_events[first:], strict=True)
    for k, (ts, ys) in zip(np.flatnonzero(~active), events, strict=True):
        for t, y in zip(ts, ys, strict=True):
            if t < sol.t[-1] and model.gaps(t, y)[0][k] > 0.0:
                t_miss = min(t_miss, t)
    return t_miss


class _Run:
    """The records of one integration: samples, episodes, maxima, accepted steps."""

    def __init__(self, model: _Model, t_eval: np.ndarray, n_y: int):
        nc = len(model.names)
        self.model, self.t_eval = model, t_eval
        self.Y = np.full((len(t_eval), n_y), np.nan)
        self.active = np.zeros((len(t_eval), nc), dtype=bool)
        self.v0 = np.zeros((len(t_eval), nc))
        self.next = 0
        self.onsets: list[list[float]] = [[] for _ in range(nc)]
        self.f_peak: list[list[float]] = [[] for _ in range(nc)]  # per episode
        self.d_peak: list[list[float]] = [[] for _ in range(nc)]
        self.steps_t: list[np.ndarray] = []
        self.steps_y: list[np.ndarray] = []
        self.retries = 0

    def record(self, sol, active: np.ndarray, v0: np.ndarray) -> None:
        """Samples inside the segment, accepted steps, and the maxima of the active contacts."""
        t1 = sol.t[-1]
        stop = int(np.searchsorted(self.t_eval, t1, side="right"))
        if stop > self.next:
            idx = slice(self.next, stop)
            self.Y[idx] = sol.sol(self.t_eval[idx]).T
            self.active[idx], self.v0[idx] = active, v0
            self.next = stop
        self.steps_t.append(sol.t[1:])
        self.steps_y.append(sol.y[:, 1:])
        nc, n_act = len(self.model.names), int(active.sum())
        ev_t, ev_y = sol.t_events[nc : nc + 2 * n_act], sol.y_events[nc : nc + 2 * n_act]
        peaks = [
            (t, y) for ts, ys in zip(ev_t, ev_y, strict=True) for t, y in zip(ts, ys, strict=True)
        ]
        for t, y in [*zip(sol.t, sol.y.T, strict=True), *peaks]:
            self._maxima(t, y, active, v0)

    def _maxima(self, t: float, y: np.ndarray, active: np.ndarray, v0: np.ndarray) -> None:
        if not active.any():
            return
        fn = self.model.contact(t, y, active, v0)[0]
        d = self.model.gaps(t, y)[0]
        for k in np.flatnonzero(active):
            self.f_peak[k][-1] = max(self.f_peak[k][-1], fn[k])
            self.d_peak[k][-1] = max(self.d_peak[k][-1], d[k])


#: halvings of max_step allowed to find a contact missed inside one step
MAX_RETRIES = 60


def _segment(model: _Model, t0, t_end, y, active, v0, opts: _Options, run: _Run, h0=None):
    """One segment from ``t0`` to the next onset or separation (or ``t_end``); redone with
    half the step bound while a contact is entered and left inside one step (at most
    :data:`MAX_RETRIES` times, then a RuntimeError naming the time)."""
    max_step = opts.max_step
    for _ in range(MAX_RETRIES):
        with np.errstate(over="ignore", invalid="ignore"):  # trial stages of rejected steps
            sol = _solve(model, t0, t_end, y, active, v0, opts, max_step, h0)
        if sol.status == -1:
            raise RuntimeError(f"solve_ivp failed at t = {sol.t[-1]:.9g} s: {sol.message}")
        t_miss = _missed(model, sol, active)
        if t_miss == math.inf:
            return sol
        max_step = 0.5 * min(max_step, t_miss - t0)
        run.retries += 1
    raise RuntimeError(f"a contact near t = {t_miss:.9g} s is still missed at max_step {max_step}")


def _solve(model: _Model, t0, t_end, y, active, v0, opts: _Options, max_step, h0):
    """DOP853 from ``t0`` with the segment's events and dense output."""
    act, v0s = tuple(bool(a) for a in active), tuple(float(v) for v in v0)
    return solve_ivp(
        lambda t, yy: model.rhs(t, yy, act, v0s),
        (t0, t_end),
        y,
        method="DOP853",
        rtol=opts.rtol,
        atol=opts.atol,
        max_step=max_step,
        first_step=None if h0 is None else min(h0, max_step, t_end - t0),
        dense_output=True,
        events=_events(model, t0, active, v0),
    )


def _integrate(model: _Model, y0, t_eval: np.ndarray, t_end: float, opts: _Options) -> _Run:
    """Integrate from 0 to ``t_end`` episode by episode (module docstring), sampling at
    ``t_eval``. At most ``opts.max_segments`` restarts (then a RuntimeError naming the
    time)."""
    nc = len(model.names)
    run = _Run(model, t_eval, len(y0))
    active, v0 = np.zeros(nc, dtype=bool), np.zeros(nc)
    t0, y = 0.0, np.asarray(y0, dtype=float)
    h0 = None  # first step of a restart: the last accepted one (the solver's own guess
    # comes from the free-flight derivative at the onset and overshoots an impact)
    for _ in range(opts.max_segments):
        sol = _segment(model, t0, t_end, y, active, v0, opts, run, h0)
        run.record(sol, active, v0)
        if sol.status == 0 or sol.t[-1] >= t_end:
            return run
        h0 = float(sol.t[-2] - sol.t[-3]) if len(sol.t) > 2 else h0
        t0, y = float(sol.t[-1]), sol.y[:, -1].copy()
        _, dd = model.gaps(t0, y)
        active, v0 = active.copy(), v0.copy()
        for k in range(nc):
            if len(sol.t_events[k]) and sol.t_events[k][-1] == t0:
                active[k] = not active[k]
                if active[k]:
                    v0[k] = dd[k]
                    run.onsets[k].append(t0)
                    run.f_peak[k].append(0.0)
                    run.d_peak[k].append(0.0)
    raise RuntimeError(
        f"more than max_segments = {opts.max_segments} contact onsets and separations before "
        f"t = {t0:.9g} s"
    )


def _energy_bound(model: _Model, run: _Run, opts: _Options) -> float:
    """``sum_steps sqrt(N) sum_i |dB/dy_i| (atol + rtol |y_i|)`` (module docstring), with
    ``grad B`` by central differences (relative step 1e-6: its own error is far below the
    bound's)."""
    t = np.concatenate(run.steps_t)
    Y = np.concatenate(run.steps_y, axis=1)
    n = Y.shape[0]

    def balance(tt, yy):
        return model.energy(tt, yy) + yy[-1] - yy[-2]

    grad = np.empty_like(Y)
    for i in range(n):
        h = 1e-6 * np.maximum(np.abs(Y[i]), 1e-6)
        yp, ym = Y.copy(), Y.copy()
        yp[i] += h
        ym[i] -= h
        grad[i] = (balance(t, yp) - balance(t, ym)) / (2.0 * h)
    scale = opts.atol + opts.rtol * np.abs(Y)
    return float(math.sqrt(n) * np.sum(np.abs(grad) * scale))


def _contact_outputs(run: _Run) -> dict[str, dict]:
    """Per contact: histories at the samples and the episode summary."""
    out = {}
    fn, ft, geo, d = [], [], [], []
    for i, t in enumerate(run.t_eval):
        f_n, f_t, g = run.model.contact(t, run.Y[i], run.active[i], run.v0[i])
        fn.append(f_n)
        ft.append(f_t)
        geo.append(g)
        d.append(run.model.gaps(t, run.Y[i])[0])
    fn, ft, geo, d = map(np.asarray, (fn, ft, geo, d))
    for k, name in enumerate(run.model.names):
        on, fp, dp = run.onsets[k], run.f_peak[k], run.d_peak[k]
        out[name] = {
            "normal_force": fn[:, k],
            "tangential_force": ft[:, k],
            "penetration": d[:, k],
            "geometry": geo[:, k],
            "first_contact_time": on[0] if on else None,
            "onset_times": np.asarray(on),
            "first_impact_force": fp[0] if fp else None,
            "peak_forces": np.asarray(fp),
            "max_contact_force": max(fp, default=0.0),
            "max_penetration": max(dp, default=0.0),
            "impacts": len(on),
        }
    return out


def _finish(model: _Model, run: _Run, y0: np.ndarray, opts: _Options) -> dict:
    """Common outputs: contacts, energy balance, step counts."""
    worst = max((max(p, default=0.0) for p in run.d_peak), default=0.0)
    if not worst < D_CAP:
        raise RuntimeError(f"a penetration of {worst!r} m reached the cap D_CAP = {D_CAP} m")
    t = run.t_eval
    energy = model.energy(t, run.Y.T)
    e0 = float(model.energy(np.zeros(1), np.asarray(y0, dtype=float)[:, None])[0])
    return {
        "t": t,
        "contacts": _contact_outputs(run),
        "energy": energy,
        "drive_work": run.Y[:, -2],
        "dissipated": run.Y[:, -1],
        "energy_balance_error": energy + run.Y[:, -1] - run.Y[:, -2] - e0,
        "energy_error_bound": _energy_bound(model, run, opts),
        "n_steps": int(sum(len(s) for s in run.steps_t)),
        "n_segments": len(run.steps_t),
        "retries": run.retries,
        "_Y": run.Y,
    }


def _times(t_eval, t_end: float | None, dt: float, default_end: float):
    """Sample times and end time: ``t_eval`` (increasing, in [0, t_end]; ``t_end`` defaults
    to its last time) or every ``dt`` from 0 to ``t_end`` (default ``default_end``)."""
    if t_eval is None:
        t_end = default_end if t_end is None else float(t_end)
        if not t_end > 0.0:
            raise ValueError(f"t_end = {t_end!r} is invalid: expected a time > 0 s")
        return np.linspace(0.0, t_end, max(1, math.ceil(t_end / dt - 1e-9)) + 1), t_end
    t = np.asarray(t_eval, dtype=float).ravel()
    t_end = float(t[-1]) if t.size and t_end is None else t_end
    if t.size == 0 or np.any(np.diff(t) <= 0.0) or t[0] < 0.0 or not t_end >= t[-1] > 0.0:
        raise ValueError(
            f"t_eval is invalid: expected increasing times in [0, t_end = {t_end}] s, ending > 0"
        )
    return t, float(t_end)


# --------------------------------------------------------------- A: two clearance joints


def _circle(ex, ey, vx, vy, c):
    """Penetration ``|e| - c``, its rate and the unit normal ``e / |e|`` (any when e = 0)."""
    r = math.hypot(ex, ey)
    nx, ny = (ex / r, ey / r) if r > 0.0 else (1.0, 0.0)
    return r - c, nx * vx + ny * vy, nx, ny, r


@dataclass(frozen=True)
class _TwoClearances:
    """Rigid slider-crank with journals in bearings at the crank pin and the wrist pin.

    ``y = (x, y, theta, x_s, x', y', theta', x_s', W, D)``: rod centre of mass, rod angle (rad,
    of the vector from end A to end B), slider position on the x axis."""

    r: float
    omega: float
    l: float
    m_r: float
    j_r: float
    m_s: float
    g: float
    c: tuple[float, float]
    laws: tuple[NormalLaw, NormalLaw]

    def points(self, t, y):
        """Crank-pin eccentricity ``e1 = P - A`` and its rate, wrist ``e2 = B - S``."""
        x, yy, th, xs, vx, vy, w, vs = y[:8]
        h, cs, sn = 0.5 * self.l, math.cos(th), math.sin(th)
        ph = self.omega * t
        px, py = self.r * math.cos(ph), self.r * math.sin(ph)
        pvx, pvy = -self.omega * py, self.omega * px
        e1 = (px - x + h * cs, py - yy + h * sn, pvx - vx - h * w * sn, pvy - vy + h * w * cs)
        e2 = (x + h * cs - xs, yy + h * sn, vx - h * w * sn - vs, vy + h * w * cs)
        return e1, e2, (pvx, pvy)

    def gaps(self, t, y):
        e1, e2, _ = self.points(t, y)
        g1, g2 = _circle(*e1, self.c[0]), _circle(*e2, self.c[1])
        return np.array([g1[0], g2[0]]), np.array([g1[1], g2[1]])

    def forces(self, t, y, active, v0):
        """Normal forces, normals and rates of both contacts, and the crank pin's velocity."""
        e1, e2, vp = self.points(t, y)
        out = []
        for k, e in enumerate((e1, e2)):
            d, dd, nx, ny, r = _circle(*e, self.c[k])
            f = self.laws[k].force(d, dd, v0[k]) if active[k] else 0.0
            fel = self.laws[k].elastic_force(d) if active[k] else 0.0
            out.append((f, fel, d, dd, nx, ny, r, e))
        return out, vp

    def rhs(self, t, y, active, v0):
        (c1, c2), vp = self.forces(t, y, active, v0)
        f1, f2 = c1[0], c2[0]
        n1x, n1y, n2x, n2y = c1[4], c1[5], c2[4], c2[5]
        th = y[2]
        h, cs, sn = 0.5 * self.l, math.cos(th), math.sin(th)
        torque = h * (f1 * (sn * n1x - cs * n1y) + f2 * (sn * n2x - cs * n2y))
        return np.array(
            [
                *y[4:8],
                (f1 * n1x - f2 * n2x) / self.m_r,
                (f1 * n1y - f2 * n2y) / self.m_r - self.g,
                torque / self.j_r,
                f2 * n2x / self.m_s,
                f1 * (n1x * vp[0] + n1y * vp[1]),
                (f1 - c1[1]) * c1[3] + (f2 - c2[1]) * c2[3],
            ]
        )

    def gap_acc(self, t, y, yd):
        """``d'' = n . e'' + (|e'|^2 - d'^2) / |e|`` for both contacts."""
        e1, e2, _ = self.points(t, y)
        ax, ay, al, a_s = yd[4:8]
        th, w, w2 = y[2], y[6], self.omega**2
        h, cs, sn = 0.5 * self.l, math.cos(th), math.sin(th)
        ph = self.omega * t
        # A = G - h u, B = G + h u: A'' = a - h (al u_perp - w^2 u), B'' = a + h (...)
        rax, ray = h * (-al * sn - w * w * cs), h * (al * cs - w * w * sn)
        acc1 = (-w2 * self.r * math.cos(ph) - ax + rax, -w2 * self.r * math.sin(ph) - ay + ray)
        acc2 = (ax + rax - a_s, ay + ray)
        out = []
        for k, (e, a) in enumerate(((e1, acc1), (e2, acc2))):
            d, dd, nx, ny, r = _circle(*e, self.c[k])
            out.append(nx * a[0] + ny * a[1] + (e[2] ** 2 + e[3] ** 2 - dd * dd) / max(r, 1e-300))
        return np.array(out)

    def contact(self, t, y, active, v0):
        cs, _ = self.forces(t, y, active, v0)
        fn = np.array([c[0] for c in cs])
        geo = np.array([[c[7][0], c[7][1]] for c in cs])
        return fn, np.zeros(2), geo

    def energy(self, t, Y):
        kin = 0.5 * self.m_r * (Y[4] ** 2 + Y[5] ** 2) + 0.5 * self.j_r * Y[6] ** 2
        kin = kin + 0.5 * self.m_s * Y[7] ** 2
        h, cs, sn = 0.5 * self.l, np.cos(Y[2]), np.sin(Y[2])
        ph = self.omega * np.asarray(t)
        e1 = np.hypot(self.r * np.cos(ph) - Y[0] + h * cs, self.r * np.sin(ph) - Y[1] + h * sn)
        e2 = np.hypot(Y[0] + h * cs - Y[3], Y[1] + h * sn)
        elastic = self.laws[0].energy(e1 - self.c[0]) + self.laws[1].energy(e2 - self.c[1])
        return kin + self.m_r * self.g * Y[1] + elastic


def _two_clearance_start(r: float, l: float, omega: float) -> np.ndarray:
    """Both journals centred, velocities of the ideal slider-crank at crank angle 0: rod
    along +x from the crank pin (r, 0), rod rate ``-r omega / l``, slider at rest."""
    wr = -r * omega / l
    return np.array([r + 0.5 * l, 0.0, 0.0, r + l, 0.0, r * omega + 0.5 * l * wr, wr, 0.0, 0, 0])


@dataclass(frozen=True)
class TwoClearanceCase:
    """Parameters of :func:`slider_crank_two_clearances` (SI units). ``crank_pin`` and
    ``wrist_pin`` are (bearing radius, journal radius) (m); ``K`` (N/m^exponent) ``None``: the
    conformal Hertz stiffness of each joint from ``E`` (Pa) and ``nu`` (both parts). The
    crank's centroidal inertia does not enter (the crank turns at constant speed); its mass
    ``m_crank`` only enters the drive torque."""

    crank: float = 0.05
    m_crank: float = 0.30
    omega: float = 523.5987755982989
    rod: float = 0.12
    m_rod: float = 0.21
    j_rod: float = 2.5e-4
    m_slider: float = 0.14
    g: float = 9.81
    crank_pin: tuple[float, float] = (0.010, 0.00975)
    wrist_pin: tuple[float, float] = (0.010, 0.0095)
    E: float = 2.07e11
    nu: float = 0.3
    law: str = "lankarani-nikravesh"
    restitution: float = 0.9
    exponent: float = 1.5
    K: float | None = None
    v0_min: float = 1.0e-4

    def stiffness(self) -> tuple[float, float]:
        """``K`` (N/m^exponent) of the crank pin and the wrist pin."""
        pins = (self.crank_pin, self.wrist_pin)
        if self.K is not None:
            return (self.K, self.K)
        return tuple(conformal_hertz_stiffness(self.E, self.nu, self.E, self.nu, *p) for p in pins)

    def mechanism(self) -> _TwoClearances:
        """The equations of motion of this case."""
        laws = tuple(
            NormalLaw(self.law, k, self.exponent, self.restitution, self.v0_min)
            for k in self.stiffness()
        )
        c = (self.crank_pin[0] - self.crank_pin[1], self.wrist_pin[0] - self.wrist_pin[1])
        return _TwoClearances(
            self.crank, self.omega, self.rod, self.m_rod, self.j_rod, self.m_slider, self.g, c, laws
        )


def slider_crank_two_clearances(
    t_eval=None,
    *,
    t_end: float | None = None,
    sample_dt: float = 1.0e-5,
    rtol: float = 1.0e-10,
    atol: float = 1.0e-13,
    max_step: float = math.inf,
    max_segments: int = 200_000,
    **case,
) -> dict:
    """Rigid slider-crank with revolute clearance joints at the crank pin and the wrist pin.

    Parameters: the fields of :class:`TwoClearanceCase` as keywords (defaults: the brief's
    case), ``t_eval`` (s, sample times; None: every ``sample_dt`` s up to ``t_end``, default
    0.024 s; with ``t_eval``, ``t_end`` defaults to its last time), DOP853's
    ``rtol``, ``atol``, ``max_step`` (s), ``max_segments`` (onsets + separations allowed).
    Crank ``crank`` (m) pivoted at the origin, driven at ``omega`` (rad/s) from angle 0; rod
    ``rod`` (m), ``m_rod`` (kg), centroidal ``j_rod`` (kg m^2), centre of mass at mid-length,
    ends A and B; slider ``m_slider`` (kg) on the x axis, rotation locked, frictionless guide;
    gravity ``g`` (m/s^2) along -y. Journal of ``crank_pin`` on the crank tip ``P``, bearing on
    the rod's end A; journal of ``wrist_pin`` on the rod's end B, bearing on the slider's
    centre ``S``. Coordinates ``(x, y, theta)`` of the rod, ``x_s`` of the slider::

        m_rod G''      = F1 n1 - F2 n2 - m_rod g e_y
        j_rod theta''  = (A - G) x F1 n1 + (B - G) x (-F2 n2)
        m_slider x_s'' = F2 n2_x

    ``e1 = P - A``, ``e2 = B - S`` (journal centre minus bearing centre: the eccentricity
    vectors), ``n_k = e_k / |e_k|``, ``d_k = |e_k| - c_k``, ``c_k = R_b - R_j``, ``F_k`` the
    normal law (frictionless). Drive work ``W' = F1 n1 . P'``; drive torque ``tau = P x F1 n1 +
    m_crank g r cos(omega t) / 2``. Initial state: journals centred, velocities of the ideal
    slider-crank at ``t = 0``.

    Returns ``t`` (s), ``crank_angle`` (rad), ``rod_x``, ``rod_y`` (m), ``rod_angle`` (rad, of
    A -> B), ``slider_x`` (m), ``rod_vx``, ``rod_vy`` (m/s), ``rod_omega`` (rad/s),
    ``slider_v`` (m/s), ``drive_torque`` (N m); ``contacts``: {``crank_pin``, ``wrist_pin``:
    {``normal_force``, ``tangential_force`` (N, zero), ``penetration`` (m, ``|e| - c``,
    negative in free flight), ``eccentricity`` (m, (n, 2)), ``first_contact_time`` (s or None),
    ``onset_times`` (s), ``first_impact_force``, ``peak_forces`` (N, per episode),
    ``max_contact_force`` (N), ``max_penetration`` (m), ``impacts``}}; ``energy`` (J, rod and
    slider kinetic + gravity + elastic contact), ``drive_work``, ``dissipated`` (J),
    ``energy_balance_error`` (J, ``E + D - W - E(0)``), ``energy_error_bound`` (J),
    ``n_steps``, ``n_segments``, ``retries`` (segments redone for a contact inside one step),
    ``stiffness`` (N/m^n, per contact)."""
    spec = TwoClearanceCase(**case)
    t, t_end = _times(t_eval, t_end, sample_dt, 0.024)
    mech = spec.mechanism()
    names = ("crank_pin", "wrist_pin")
    model = _Model(names, mech.laws, mech.rhs, mech.gaps, mech.gap_acc, mech.contact, mech.energy)
    opts = _Options(rtol, atol, max_step, max_segments)
    y0 = _two_clearance_start(spec.crank, spec.rod, spec.omega)
    out = _finish(model, _integrate(model, y0, t, t_end, opts), y0, opts)
    Y = out.pop("_Y")
    for c in out["contacts"].values():
        c["eccentricity"] = c.pop("geometry")
    keys = ("rod_x", "rod_y", "rod_angle", "slider_x", "rod_vx", "rod_vy", "rod_omega")
    out.update({k: Y[:, i] for i, k in enumerate((*keys, "slider_v"))})
    th = spec.omega * t
    cp = out["contacts"]["crank_pin"]
    ex, ey = cp["eccentricity"].T
    r_e = np.where(np.hypot(ex, ey) > 0.0, np.hypot(ex, ey), 1.0)
    moment = spec.crank * (np.cos(th) * ey - np.sin(th) * ex) / r_e * cp["normal_force"]
    out["drive_torque"] = moment + 0.5 * spec.m_crank * spec.g * spec.crank * np.cos(th)
    out["crank_angle"] = th
    out["stiffness"] = dict(zip(names, spec.stiffness(), strict=True))
    return out


# ------------------------------------------------------------ B: slider with guide clearance

#: slider corners in the slider's frame, in units of (a/2, b/2), and their guide line side
#: (+1 the upper line y = +h, -1 the lower line y = -h)
CORNERS = {
    "upper_right": (1.0, 1.0, 1.0),
    "upper_left": (-1.0, 1.0, 1.0),
    "lower_left": (-1.0, -1.0, -1.0),
    "lower_right": (1.0, -1.0, -1.0),
}


@dataclass(frozen=True)
class _GuideClearance:
    """Slider-crank ``(theta1, theta2, theta3)``: crank and rod angles from +x, slider angle;
    ``y = (theta1, theta2, theta3, theta1', theta2', theta3', W, D)``. Constants of the mass
    matrix ``a11, a12, a22`` (kg m^2), of gravity ``g1, g2`` (N m), corners ``(s_x, s_y, side)``
    (m), guide half-width ``h`` (m)."""

    l1: float
    l2: float
    j3: float
    a11: float
    a12: float
    a22: float
    g1: float
    g2: float
    corners: tuple[tuple[float, float, float], ...]
    h: float
    laws: tuple[NormalLaw, ...]
    friction: tuple[float, float, float]  # mu, v_static, v_dynamic

    def corners_at(self, y):
        """Every corner: position, velocity and the slider-angle column of its Jacobian,
        ``(x, y, x', y', dx/dtheta3, dy/dtheta3)``."""
        t1, t2, t3, w1, w2, w3 = y[:6]
        c1, s1, c2, s2 = math.cos(t1), math.sin(t1), math.cos(t2), math.sin(t2)
        c3, s3 = math.cos(t3), math.sin(t3)
        px, py = self.l1 * c1 + self.l2 * c2, self.l1 * s1 + self.l2 * s2
        vx, vy = -self.l1 * s1 * w1 - self.l2 * s2 * w2, self.l1 * c1 * w1 + self.l2 * c2 * w2
        out = []
        for sx, sy, _ in self.corners:
            # R(theta3) s = (sx c3 - sy s3, sx s3 + sy c3) = (jy3, -jx3)
            jx3, jy3 = -(sx * s3 + sy * c3), sx * c3 - sy * s3
            out.append((px + jy3, py - jx3, vx + jx3 * w3, vy + jy3 * w3, jx3, jy3))
        return out

    def gaps(self, t, y):
        y = y.tolist()
        d, dd = np.empty(len(self.corners)), np.empty(len(self.corners))
        for k, ((_, _, side), c) in enumerate(zip(self.corners, self.corners_at(y), strict=True)):
            d[k], dd[k] = side * c[1] - self.h, side * c[3]
        return d, dd

    def _corner_forces(self, y, active, v0):
        """Per corner ``(F_n, F_t, x, y, generalized force, dissipated power)``: normal force,
        friction along +x on the slider, corner position, ``J_k^T F_k`` and ``(F_n - K d^n)
        d' + mu_eff F_n x'``."""
        s1, c1 = math.sin(float(y[0])), math.cos(float(y[0]))
        s2, c2 = math.sin(float(y[1])), math.cos(float(y[1]))
        out = []
        for k, (x, cy, vx, vy, jx3, jy3) in enumerate(self.corners_at(y)):
            if not active[k]:
                out.append((0.0, 0.0, x, cy, (0.0, 0.0, 0.0), 0.0))
                continue
            side = self.corners[k][2]
            d, dd = side * cy - self.h, side * vy
            f = self.laws[k].force(d, dd, v0[k])
            mu = coulomb_transition(vx, *self.friction)
            fx, fy = -mu * f, -side * f
            q = (self.l1 * (c1 * fy - s1 * fx), self.l2 * (c2 * fy - s2 * fx), jx3 * fx + jy3 * fy)
            p_diss = (f - self.laws[k].elastic_force(d)) * dd + mu * f * vx
            out.append((f, fx, x, cy, q, p_diss))
        return out

    def contact(self, t, y, active, v0):
        """Normal forces, friction forces (N) and corner positions (m), per corner."""
        cs = self._corner_forces(y, active, v0)
        return (
            np.array([c[0] for c in cs]),
            np.array([c[1] for c in cs]),
            np.array([c[2:4] for c in cs]),
        )

    def accelerations(self, y, q):
        """``M(q) theta'' = Q_v + Q_g + Q_c`` solved (the slider angle decouples)."""
        t1, t2, w1, w2 = y[0], y[1], y[3], y[4]
        sd, cd = math.sin(t1 - t2), math.cos(t1 - t2)
        r1 = -self.a12 * sd * w2 * w2 - self.g1 * math.cos(t1) + q[0]
        r2 = self.a12 * sd * w1 * w1 - self.g2 * math.cos(t2) + q[1]
        m12 = self.a12 * cd
        det = self.a11 * self.a22 - m12 * m12
        return (self.a22 * r1 - m12 * r2) / det, (self.a11 * r2 - m12 * r1) / det, q[2] / self.j3

    def rhs(self, t, y, active, v0):
        y = y.tolist()
        cs = self._corner_forces(y, active, v0)
        q = [sum(c[4][i] for c in cs) for i in range(3)]
        return np.array([*y[3:6], *self.accelerations(y, q), 0.0, sum(c[5] for c in cs)])

    def gap_acc(self, t, y, yd):
        """``d'' = side y_C''`` of every corner."""
        t1, t2, t3, w1, w2, w3 = y[:6]
        a1, a2, a3 = yd[3:6]
        base = self.l1 * (a1 * math.cos(t1) - w1 * w1 * math.sin(t1))
        base += self.l2 * (a2 * math.cos(t2) - w2 * w2 * math.sin(t2))
        c3, s3 = math.cos(t3), math.sin(t3)
        return np.array(
            [
                side * (base + a3 * (sx * c3 - sy * s3) - w3 * w3 * (sx * s3 + sy * c3))
                for sx, sy, side in self.corners
            ]
        )

    def energy(self, t, Y):
        t1, t2, t3, w1, w2, w3 = Y[:6]
        kin = 0.5 * (self.a11 * w1**2 + self.a22 * w2**2 + self.j3 * w3**2)
        kin = kin + self.a12 * np.cos(t1 - t2) * w1 * w2
        pot = self.g1 * np.sin(t1) + self.g2 * np.sin(t2)
        yc = self.l1 * np.sin(t1) + self.l2 * np.sin(t2)
        for (sx, sy, side), law in zip(self.corners, self.laws, strict=True):
            cy = yc + sx * np.sin(t3) + sy * np.cos(t3)
            pot = pot + law.energy(side * cy - self.h)
        return kin + pot


@dataclass(frozen=True)
class GuideClearanceCase:
    """Parameters of :func:`slider_crank_guide_clearance` (SI units): crank ``l1`` (m), ``m1``
    (kg), centroidal ``j1`` (kg m^2); rod ``l2``, ``m2``, ``j2``; slider ``m3``, ``j3``, a
    rectangle ``a`` long and ``b`` high (m) in a guide ``b + clearance`` wide; gravity ``g``
    (m/s^2); initial rates ``omega1``, ``omega2`` (rad/s); the corners' normal law (``law``,
    ``K`` N/m^exponent, ``restitution``, ``v0_min`` m/s: the default K = 1e10 N/m^1.5 stands
    for a steel-like corner) and coulomb-transition friction (``mu``, ``v_static``,
    ``v_dynamic`` m/s; ``mu = 0``: none)."""

    l1: float = 0.153
    m1: float = 0.038
    j1: float = 7.4e-5
    l2: float = 0.306
    m2: float = 0.038
    j2: float = 5.9e-4
    m3: float = 0.076
    j3: float = 2.7e-6
    a: float = 0.05
    b: float = 0.025
    clearance: float = 0.001
    g: float = 9.81
    omega1: float = 150.0
    omega2: float = -75.0
    law: str = "flores"
    restitution: float = 0.4
    exponent: float = 1.5
    K: float = 1.0e10
    v0_min: float = 1.0e-4
    mu: float = 0.01
    v_static: float = 1.0e-3
    v_dynamic: float = 1.0e-2

    def __post_init__(self):
        if self.mu < 0.0 or (self.mu > 0.0 and not self.v_dynamic > self.v_static >= 0.0):
            raise ValueError(
                f"need mu >= 0 and v_dynamic > v_static >= 0, got mu = {self.mu}, "
                f"v_static = {self.v_static}, v_dynamic = {self.v_dynamic}"
            )

    def mechanism(self) -> _GuideClearance:
        """Mass-matrix and gravity constants from the Jacobians of the centres of mass ``G1 =
        l1/2 e(theta1)``, ``G2 = l1 e(theta1) + l2/2 e(theta2)``, ``G3 = l1 e(theta1) + l2
        e(theta2)`` (``e(t) = (cos t, sin t)``): ``M = sum m_i J_i^T J_i + diag(j1, j2, j3)``."""
        l1, l2, m1, m2, m3 = self.l1, self.l2, self.m1, self.m2, self.m3
        law = NormalLaw(self.law, self.K, self.exponent, self.restitution, self.v0_min)
        return _GuideClearance(
            l1=l1,
            l2=l2,
            j3=self.j3,
            a11=m1 * l1 * l1 / 4.0 + (m2 + m3) * l1 * l1 + self.j1,
            a12=l1 * l2 * (0.5 * m2 + m3),
            a22=m2 * l2 * l2 / 4.0 + m3 * l2 * l2 + self.j2,
            g1=self.g * l1 * (0.5 * m1 + m2 + m3),
            g2=self.g * l2 * (0.5 * m2 + m3),
            corners=tuple(
                (0.5 * self.a * u, 0.5 * self.b * v, side) for u, v, side in CORNERS.values()
            ),
            h=0.5 * (self.b + self.clearance),
            laws=(law,) * len(CORNERS),
            friction=(self.mu, self.v_static, self.v_dynamic),
        )


def slider_crank_guide_clearance(
    t_eval=None,
    *,
    t_end: float | None = None,
    sample_dt: float = 1.0e-4,
    rtol: float = 1.0e-10,
    atol: float = 1.0e-12,
    max_step: float = math.inf,
    max_segments: int = 200_000,
    **case,
) -> dict:
    """Slider-crank whose slider has clearance in its guide (no drive).

    Parameters: the fields of :class:`GuideClearanceCase` as keywords, and ``t_eval``,
    ``t_end`` (default 0.2 s), ``sample_dt``, ``rtol``, ``atol``, ``max_step``,
    ``max_segments`` as in :func:`slider_crank_two_clearances`. Crank ``l1`` pinned to the
    ground at the origin, rod ``l2`` pinned to the crank tip, both with their centres of mass
    at mid-length; slider (``m3``, ``j3``) pinned to the rod's end at its centre of mass,
    between the guide lines ``y = +-h``, ``h = (b + clearance)/2``; gravity along -y.
    Coordinates ``q = (theta1, theta2, theta3)`` (crank, rod and slider angles from +x);
    Lagrange's equations::

        M(q) q'' = Q_v(q, q') + Q_g(q) + sum_k J_k(q)^T F_k
        M   = [[a11, a12 cos(theta1 - theta2), 0], [., a22, 0], [0, 0, j3]]
        a11 = m1 l1^2/4 + (m2 + m3) l1^2 + j1,    a12 = l1 l2 (m2/2 + m3)
        a22 = m2 l2^2/4 + m3 l2^2 + j2
        Q_v = a12 sin(theta1 - theta2) (-theta2'^2, theta1'^2, 0)
        Q_g = -g (l1 (m1/2 + m2 + m3) cos(theta1), l2 (m2/2 + m3) cos(theta2), 0)

    Corner ``k`` at ``C_k = G3 + R(theta3) s_k``, ``s_k = (+-a/2, +-b/2)``, ``J_k = dC_k/dq``;
    the upper corners meet ``y = h``, the lower ones ``y = -h``: penetration ``d_k = side
    (C_k)_y - h``, normal force ``F_n`` (the law) on the slider along ``-side e_y``, friction
    ``F_t = -mu Cd(|v|) sign(v) F_n`` along x with ``v = (C_k)_x'``. Initial state: all angles
    0 (dead centre, slider centred), rates ``omega1``, ``omega2`` (the defaults leave the slider
    at rest), ``theta3' = 0``.

    Returns ``t`` (s), ``crank_angle``, ``rod_angle``, ``slider_angle`` (rad), their rates
    ``crank_omega``, ``rod_omega``, ``slider_omega`` (rad/s), ``slider_x``, ``slider_y`` (m,
    centre of the slider: its eccentricity in the guide with ``slider_angle``), ``contacts``:
    {``upper_right``, ``upper_left``, ``lower_left``, ``lower_right`` (right: +x of the
    slider's frame): {``normal_force``, ``tangential_force`` (N, along +x on the slider),
    ``penetration`` (m, negative in free flight), ``corner`` (m, (n, 2) position),
    ``first_contact_time`` (s or None), ``onset_times``, ``first_impact_force``,
    ``peak_forces`` (N, per episode), ``max_contact_force`` (N), ``max_penetration`` (m),
    ``impacts``}}, ``energy``, ``drive_work`` (zero), ``dissipated``, ``energy_balance_error``,
    ``energy_error_bound`` (J), ``n_steps``, ``n_segments``, ``retries``."""
    spec = GuideClearanceCase(**case)
    t, t_end = _times(t_eval, t_end, sample_dt, 0.2)
    mech = spec.mechanism()
    model = _Model(
        tuple(CORNERS), mech.laws, mech.rhs, mech.gaps, mech.gap_acc, mech.contact, mech.energy
    )
    opts = _Options(rtol, atol, max_step, max_segments)
    y0 = np.array([0.0, 0.0, 0.0, spec.omega1, spec.omega2, 0.0, 0.0, 0.0])
    out = _finish(model, _integrate(model, y0, t, t_end, opts), y0, opts)
    Y = out.pop("_Y")
    for c in out["contacts"].values():
        c["corner"] = c.pop("geometry")
    names = ("crank_angle", "rod_angle", "slider_angle", "crank_omega", "rod_omega")
    out.update({k: Y[:, i] for i, k in enumerate((*names, "slider_omega"))})
    out["slider_x"] = spec.l1 * np.cos(Y[:, 0]) + spec.l2 * np.cos(Y[:, 1])
    out["slider_y"] = spec.l1 * np.sin(Y[:, 0]) + spec.l2 * np.sin(Y[:, 1])
    return out


def _ideal_guide_terms(spec: GuideClearanceCase, th):
    """``mu``, ``mu'``, ``V``, ``V'`` (d/dtheta), rod angle and slider position at crank angle
    ``th`` (rad) of the slider-crank with an ideal guide (:func:`slider_crank_ideal_guide`)."""
    l1, l2, m1, m2, m3 = spec.l1, spec.l2, spec.m1, spec.m2, spec.m3
    rho = l1 / l2
    s, c = np.sin(th), np.cos(th)
    sp = -rho * s
    cp = np.sqrt(1.0 - sp * sp)
    p1 = -rho * c / cp
    p2 = (rho * s + p1 * p1 * sp) / cp
    gx, gy = -l1 * s - 0.5 * l2 * sp * p1, l1 * c + 0.5 * l2 * cp * p1
    gxd = -l1 * c - 0.5 * l2 * (cp * p1 * p1 + sp * p2)
    gyd = -l1 * s + 0.5 * l2 * (-sp * p1 * p1 + cp * p2)
    x1 = -l1 * s - l2 * sp * p1
    x2 = -l1 * c - l2 * (cp * p1 * p1 + sp * p2)
    mu = spec.j1 + m1 * l1 * l1 / 4.0 + m2 * (gx * gx + gy * gy) + spec.j2 * p1 * p1 + m3 * x1 * x1
    dmu = 2.0 * (m2 * (gx * gxd + gy * gyd) + spec.j2 * p1 * p2 + m3 * x1 * x2)
    pot = spec.g * (0.5 * m1 * l1 * s + m2 * (l1 * s + 0.5 * l2 * sp))
    dpot = spec.g * (0.5 * m1 * l1 * c + m2 * (l1 * c + 0.5 * l2 * cp * p1))
    return mu, dmu, pot, dpot, np.arctan2(sp, cp), l1 * c + l2 * cp


def slider_crank_ideal_guide(
    t_eval, *, rtol: float = 1.0e-12, atol: float = 1.0e-12, **case
) -> dict[str, np.ndarray | float]:
    """The limit of :func:`slider_crank_guide_clearance` with an ideal, frictionless guide on
    the x axis (same keywords: the fields of :class:`GuideClearanceCase`; the guide's and the
    contacts' do not enter, nor ``j3``, ``omega2``): one degree of freedom, the crank angle
    ``theta``, written from the closed-form kinematics, not from the three-coordinate model.
    With ``rho = l1/l2`` and ``'`` = d/dtheta::

        sin(phi) = -rho sin(theta),  phi' = -rho cos(theta) / cos(phi)
        phi''    = (rho sin(theta) + phi'^2 sin(phi)) / cos(phi)
        x = l1 cos(theta) + l2 cos(phi) (slider),  G2 = l1 e(theta) + l2/2 e(phi)

    kinetic energy ``T = mu(theta) theta_t^2 / 2``, ``mu = j1 + m1 l1^2/4 + m2 |G2'|^2 + j2
    phi'^2 + m3 x'^2``; potential ``V = g (m1 l1/2 sin(theta) + m2 (l1 sin(theta) + l2/2
    sin(phi)))`` (the slider stays at y = 0); Lagrange: ``mu theta_tt + mu'/2 theta_t^2 + V' =
    0``, from ``theta = 0``, ``theta_t = omega1`` (the rod's rate follows: ``-rho omega1``).

    Returns ``t`` (s), ``crank_angle``, ``rod_angle`` (rad), ``crank_omega`` (rad/s),
    ``slider_x`` (m), ``energy`` (J, ``T + V``), ``energy_error_bound`` (J: the bound of the
    module docstring for ``T + V``), ``n_steps``."""
    spec = GuideClearanceCase(**case)

    def energy(y):
        mu, _, pot, *_ = _ideal_guide_terms(spec, y[0])
        return 0.5 * mu * y[1] ** 2 + pot

    def rhs(t, y):
        mu, dmu, _, dpot, _, _ = _ideal_guide_terms(spec, y[0])
        return [y[1], -(0.5 * dmu * y[1] ** 2 + dpot) / mu]

    t = np.asarray(t_eval, dtype=float)
    y0 = [0.0, spec.omega1]
    sol = solve_ivp(rhs, (0.0, t[-1]), y0, "DOP853", rtol=rtol, atol=atol, dense_output=True)
    if sol.status != 0:
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    Ys = sol.y[:, 1:]
    grad = []
    for i in range(2):
        h = 1e-6 * np.maximum(np.abs(Ys[i]), 1e-6)
        dy = np.zeros_like(Ys)
        dy[i] = h
        grad.append((energy(Ys + dy) - energy(Ys - dy)) / (2.0 * h))
    bound = math.sqrt(2.0) * np.sum(np.abs(grad) * (atol + rtol * np.abs(Ys)))
    th, w = sol.sol(t)
    _, _, _, _, phi, x = _ideal_guide_terms(spec, th)
    return {
        "t": t,
        "crank_angle": th,
        "rod_angle": phi,
        "crank_omega": w,
        "slider_x": x,
        "energy": energy((th, w)),
        "energy_error_bound": float(bound),
        "n_steps": Ys.shape[1],
    }
