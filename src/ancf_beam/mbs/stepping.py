"""Contact-aware time stepping (seed 004's dual step; docs/design.md section 7; issue 14 item 5).

Used by :func:`ancf_beam.mbs.integrators.integrate` for systems with contact force elements
(:class:`~ancf_beam.mbs.forces.CircleContact`, :class:`~ancf_beam.mbs.forces.LineContact`:
the kinds :func:`ancf_beam.mbs.core.is_contact`) and the index-3 integrators.

**Index-3 (generalized-alpha / Newmark) with step control.** Every step starts by measuring the
contact gaps ``g = -delta`` (:func:`ancf_beam.mbs.core.contact_gaps`). The step is ``dt_contact``
when some gap is below ``contact_margin`` (in contact or about to be) or when the gap predicted
after a free step, at ``q + dt v + dt^2/2 a``, is; otherwise it is ``dt`` (free flight). With
``dwell_dt`` set, a step near contact whose contacts are all closed in episodes that began
``dwell_after`` or more before (sustained contacts, :func:`_sustained`) is ``dwell_dt``. A step
that starts apart (``g > 0``) and ends penetrating by more than ``onset_tol`` is rejected and
its size found by a safeguarded secant (Illinois) on the end-of-step gap, so the impact begins
with a penetration in ``(0, onset_tol]``: the approach speed ``v0`` recorded at the onset
(:func:`ancf_beam.mbs.core.update_force_state`) is then the closing speed at ``delta = 0``. Steps
land on the sample times. Without step control the same loop takes steps of ``dt`` (a fixed-step
reference) and locates nothing. A step whose Newton iteration fails is retried at half size
(``max_halvings``). A trial step of the search can fail where a longer one converged: at the
onset of a law whose force jumps there (Kelvin-Voigt: ``c v0``) the trial that ends at the
onset has no solution, its Newton iterates cycle across the jump. The onset then lies at or
before that trial, and the search bisects between it and the shortest converged step past the
onset (the run's ``onset_trials_failed`` counts such trials).

**Error rule** (``step_rule`` ``error`` or ``gap-error``, with step control): instead of
``dt_contact`` the step comes from the local error estimate of generalized-alpha,
``C h^2 |at1 - at0|`` of the pseudo-accelerations (:func:`error_constant`, :func:`local_error`),
over all coordinates (``error``) or in the contact gaps (``gap-error``, :func:`gap_error`): a
step above ``step_tol`` is redone smaller, at most ``_MAX_REJECT`` times and never below
``dt_min`` (a step at ``dt_min`` is taken whatever its estimate, counted as ``forced``); the
next step is ``h (0.8 / r)^(1/3)`` (``r`` the estimate over the tolerance) clipped to
``[0.2, 2]`` times the planned step and to ``[dt_min, dt]``. Onsets are located as above and
each is followed by a step of ``dt_contact``; the steps divide the way to the next sample
equally (the same size while the proposal stands, so modified Newton keeps its matrix). The
run's ``stats`` count the rejected and forced steps and the accepted steps by size, in free
flight and with a contact closed.

**Adaptive.** :func:`ancf_beam.mbs.integrators.integrate` locates every onset itself (it stops
at ``delta = 0`` on the dense output, records ``v0`` and restarts there) and books its steps into
the same record with :class:`AdaptiveRecorder`.

**Termination.** The loop of :func:`sc_chunk` ends at ``t_stop`` or returns: every step
advances ``t`` (a step that would not is reported, ``STALL``), the steps of one chunk are
capped (:func:`_max_steps`, far above what a run needs), the onset search takes at most
``_MAX_LOCATE`` trial steps and stops when its bracket is at round-off of ``t``; a step is
halved at most ``max_halvings`` times. The driver raises :class:`~ancf_beam.results.
InstabilityError` naming the system and the time on ``STALL``.

**Contact record** (both paths; per contact element): the largest normal force over every
accepted step (not only the samples; the adaptive integrator also on its dense output inside
each step with a contact: ``DENSE_POINTS + 1`` times and a bounded search around the largest)
and its time, the time with ``delta > 0`` (gaps
interpolated linearly across a step that changes sign) and the contact episodes: onset time
(interpolated zero of the gap), end time, approach speed ``v0``, peak normal force and largest
penetration (:class:`ContactRecord`), the largest penetration searched like the force.
Both paths book the work the contacts dissipate (:func:`ancf_beam.mbs.core.dissipation_power`)
with the damage work: the index-3 steps by the trapezoidal rule, the adaptive steps by
Gauss-Legendre on the dense output (:func:`step_dissipation`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ancf_beam.borrow import borrow
from ancf_beam.kernel_cache import run_clock
from ancf_beam.linalg import NO_FACTOR
from ancf_beam.mbs import core
from ancf_beam.mbs.index3 import (
    F_ENERGY,
    F_FAIL_R,
    F_POT,
    F_POWER,
    F_WORK,
    I_FACT,
    I_FAIL_IT,
    I_KIND,
    Index3Run,
    ga_step,
)
from ancf_beam.mbs.settings import STEP_RULES, default_dt
from ancf_beam.mbs.timeloop import (
    SampleBuffers,
    first_sample,
    n_sample_times,
    raise_overlap,
    record_sample,
    release_damage,
    report_time,
    sample_times,
)
from ancf_beam.results import (
    InstabilityError,
    MechanismResult,
    NewtonConvergenceError,
)

__all__ = ["ContactRecord", "EP_FIELDS", "sc_chunk"]

#: the status of a chunk of steps (:func:`sc_chunk`): ``OK`` at ``t_stop``; ``FAIL`` when a step
#: from ``t`` failed after ``max_halvings`` halvings (state at ``t``, ``h`` the last size tried);
#: ``ONSET_FAIL`` when the onset search's shortest converged step past the onset failed on its
#: retake (state at ``t``, ``h`` its size);
#: ``EP_FULL`` when the episode table needs room (state consistent at ``t``); ``STALL`` after
#: ``max_steps`` accepted steps, or when a step no longer advances ``t`` (state at ``t``);
#: ``OVERLAP`` after a step to ``t`` that left two discs overlapping deeper than their contact
#: geometry describes (:func:`ancf_beam.mbs.core.contact_breach`)
OK, FAIL, EP_FULL, STALL, OVERLAP, ONSET_FAIL = 0, 1, 2, 3, 4, 5
#: columns of the episode table
EP_FIELDS = ("element", "t_on", "t_off", "v0", "fn_peak", "delta_max")
_EP_E, _EP_ON, _EP_OFF, _EP_V0, _EP_FN, _EP_DMAX = range(6)
#: columns of the per-element record: max F_n, its time, time in contact, open episode (-1)
_D_FMAX, _D_TFMAX, _D_TC, _D_OPEN = range(4)
#: counters: accepted steps, small (contact) steps, onset-location trial steps, halvings,
#: Newton iterations, episodes, onset searches ended at round-off or at the trial cap, steps
#: rejected by the error rule, steps accepted at the minimum step with the error above tolerance,
#: trial steps of the onset search that failed, steps of ``dwell_dt`` in sustained contacts
_C_STEPS, _C_SMALL, _C_LOCATE, _C_HALVE, _C_ITERS, _C_EP, _C_ROUNDOFF = range(7)
_C_REJECT, _C_FORCED, _C_TRIAL_FAIL, _C_DWELL = 7, 8, 9, 10
_N_COUNTERS = 11
#: error rule: controller safety factor, smallest and largest change of the step per step, a
#: proposal below ``_KEEP`` times the step keeps the step (the iteration matrix is reused), and
#: rejections of one step before it is taken at the minimum step
_SAFETY, _F_MIN, _F_MAX, _KEEP = 0.8, 0.2, 2.0, 1.25
_MAX_REJECT = 12
#: step-size histogram: bins of log2(h / dt_contact) from _H_LO (first bin: everything below)
_H_BINS, _H_LO = 24, -8
_EPS = float(np.finfo(float).eps)
_MAX_LOCATE = 40
#: adaptive integrator: a step with a contact in it is sampled on its dense output at this many
#: intervals (for a gap that dips below zero inside the step, and for the peaks)
DENSE_POINTS = 16


@dataclass
class ContactRecord:
    """Per contact element ``e`` (rows in the order of the system's force elements that are
    contacts, ``elements`` their indices): ``max_force`` (N) and ``t_max_force`` (s),
    ``contact_time`` (s with ``delta > 0``); ``episodes`` (k x 6, :data:`EP_FIELDS`: element
    index, onset and end time (s; end nan while open at the end of the run), approach speed
    ``v0`` (m/s), peak normal force (N), largest penetration (m)); step counts."""

    elements: list[int]
    max_force: np.ndarray
    t_max_force: np.ndarray
    contact_time: np.ndarray
    episodes: np.ndarray
    steps_small: int = 0
    locate_trials: int = 0
    extra: dict = field(default_factory=dict)


def contact_elements(system) -> list[int]:
    return [i for i, k in enumerate(system.fei[:, 0]) if core.is_contact(k)]


def new_record_arrays(n_fe: int, capacity: int = 4096):
    diag = np.zeros((max(n_fe, 1), 4))
    diag[:, _D_OPEN] = -1.0
    ep = np.full((capacity, 6), np.nan)
    cnt = np.zeros(_N_COUNTERS, dtype=np.int64)
    return diag, ep, cnt


def open_initial_episodes(system, q, v, diag, ep, cnt) -> None:
    """Open an episode for every contact already in contact at the start of the run (its
    onset recorded by :meth:`~ancf_beam.mbs.system.System.reset_force_state`), so that its
    peaks are booked like those of later impacts."""
    pp = np.zeros(8)
    pq = np.zeros(8)
    fs = system.fst
    for e in contact_elements(system):
        if fs[e, core.S_FLAG] == 0.0:
            continue
        res = core.contact_forces(system.fei[e], system.fef[e], fs[e], q, v, pp, pq)
        k = int(cnt[_C_EP])
        cnt[_C_EP] = k + 1
        ep[k] = (e, fs[e, core.S_T0], np.nan, fs[e, core.S_V0], res[7], max(res[0], 0.0))
        diag[e, _D_OPEN] = k
        diag[e, _D_FMAX] = max(diag[e, _D_FMAX], res[7])


def record_from_arrays(system, diag, ep, cnt) -> ContactRecord:
    els = contact_elements(system)
    k = int(cnt[_C_EP])
    return ContactRecord(
        elements=els,
        max_force=diag[els, _D_FMAX].copy(),
        t_max_force=diag[els, _D_TFMAX].copy(),
        contact_time=diag[els, _D_TC].copy(),
        episodes=ep[:k].copy(),
        steps_small=int(cnt[_C_SMALL]),
        locate_trials=int(cnt[_C_LOCATE]),
    )


@njit(cache=True, nogil=True, error_model="numpy")
def _min_contact_gap(gap):
    g = np.inf
    for e in range(gap.shape[0]):
        g = min(g, gap[e])
    return g


@njit(cache=True, nogil=True, error_model="numpy")
def _onset_gap(gap0, gap1):
    """Smallest end gap over the contacts that start apart (``gap0 > 0``); +inf if none."""
    g = np.inf
    for e in range(gap0.shape[0]):
        if gap0[e] > 0.0 and gap1[e] < g:
            g = gap1[e]
    return g


@njit(cache=True, nogil=True, error_model="numpy")
def update_record(t0, h, gap0, gap1, fs_before, q, v, S, fs, diag, ep, cnt, pp, pq):
    """Book one accepted step ``[t0, t0 + h]`` (gaps at both ends, the carried contact state
    before and after) into the contact record; returns False when the episode table is full."""
    fei = S[7]
    fef = S[8]
    t1 = t0 + h
    for e in range(fei.shape[0]):
        if not core.is_contact(fei[e, 0]):
            continue
        g0 = gap0[e]
        g1 = gap1[e]
        if g0 < 0.0 and g1 < 0.0:
            diag[e, _D_TC] += h
        elif g0 >= 0.0 and g1 < 0.0:
            diag[e, _D_TC] += h * (-g1) / (g0 - g1)
        elif g0 < 0.0 and g1 >= 0.0:
            diag[e, _D_TC] += h * (-g0) / (g1 - g0)
        res = core.contact_forces(fei[e], fef[e], fs[e], q, v, pp, pq)
        fn = res[7]
        if fn > diag[e, _D_FMAX]:
            diag[e, _D_FMAX] = fn
            diag[e, _D_TFMAX] = t1
        was = fs_before[e, core.S_FLAG] != 0.0
        now = fs[e, core.S_FLAG] != 0.0
        if now and not was:
            k = cnt[_C_EP]
            if k >= ep.shape[0]:
                return False
            cnt[_C_EP] = k + 1
            ep[k, _EP_E] = e
            ep[k, _EP_ON] = t0 + h * g0 / (g0 - g1) if g0 > 0.0 and g1 < g0 else t1
            ep[k, _EP_OFF] = np.nan
            ep[k, _EP_V0] = fs[e, core.S_V0]
            ep[k, _EP_FN] = fn
            ep[k, _EP_DMAX] = max(-g1, 0.0)
            diag[e, _D_OPEN] = k
        elif now:
            k = int(diag[e, _D_OPEN])
            if k >= 0:
                ep[k, _EP_FN] = max(ep[k, _EP_FN], fn)
                ep[k, _EP_DMAX] = max(ep[k, _EP_DMAX], -g1)
        elif was:  # the flag clears once apart (gap > 0) and opening
            k = int(diag[e, _D_OPEN])
            if k >= 0:
                # the zero of the gap inside the step, or its start when the gap was already
                # open there (a step that ended on the separation, delta = 0, keeps the flag)
                ep[k, _EP_OFF] = t0 + h * (-g0) / (g1 - g0) if g0 < 0.0 <= g1 else t0
            diag[e, _D_OPEN] = -1.0
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def contact_profile(ys, n, S, fs, out, pp, pq):
    """Penetration and normal force of every contact element at the states ``ys`` (k, 2n)
    (rows ``[q; v]``, e.g. the dense output inside one step) with the carried state ``fs``:
    ``out[j, e] = (delta, F_n)`` (other elements: ``(-inf, 0)``)."""
    fei = S[7]
    fef = S[8]
    for j in range(ys.shape[0]):
        q = ys[j, :n]
        v = ys[j, n:]
        for e in range(fei.shape[0]):
            if not core.is_contact(fei[e, 0]):
                out[j, e, 0] = -np.inf
                out[j, e, 1] = 0.0
                continue
            res = core.contact_forces(fei[e], fef[e], fs[e], q, v, pp, pq)
            out[j, e, 0] = res[0]
            out[j, e, 1] = res[7]


@njit(cache=True, nogil=True, error_model="numpy")
def dissipation_profile(ys, n, S, fs, out, pp, pq):
    """``out[j]``: the power the force elements dissipate (:func:`ancf_beam.mbs.core.
    dissipation_power`) at the state ``ys[j] = [q; v]`` with the carried state ``fs``."""
    for j in range(ys.shape[0]):
        out[j] = core.dissipation_power(ys[j, :n], ys[j, n:], S, fs, pp, pq)


#: Gauss-Legendre rule (nodes on [-1, 1], weights) for the work the contacts dissipate within
#: one step of the adaptive integrator: exact for polynomials of degree 15, as accurate as the
#: dense output where the power is smooth (the steps are split where a force ends)
GAUSS_POINTS = 8
_GL_X, _GL_W = np.polynomial.legendre.leggauss(GAUSS_POINTS)


def dissipation_kinks(system, dense, profile, t_stop, fs) -> list[float]:
    """Times in ``(ts[0], t_stop)`` (``profile = (ts, prof)`` of the step, see
    :meth:`AdaptiveRecorder.profile`) at which a contact in contact (``fs``) crosses
    ``delta = 0``: the dissipated power has a kink there (the overlap the law's force has
    left ends), located on the dense output (:func:`ancf_beam.mbs.events.bracket_root`)."""
    from ancf_beam.mbs.events import bracket_root

    if profile is None:
        return []
    ts, prof = profile
    gaps = np.zeros(len(system.forces))
    n = system.n
    out = []
    for e in system.contact_indices:
        if fs[e, core.S_FLAG] == 0.0:
            continue
        g = -prof[:, e, 0]
        for j in np.flatnonzero((g[:-1] > 0.0) != (g[1:] > 0.0)):
            if ts[j] >= t_stop:
                break

            def gap(t, e=e):
                core.contact_gaps(np.ascontiguousarray(dense(t)[:n]), system.data, gaps)
                return gaps[e]

            lo, hi = float(ts[j]), min(float(ts[j + 1]), t_stop)
            g_hi = g[j + 1] if hi == ts[j + 1] else gap(hi)
            if (g[j] > 0.0) != (g_hi > 0.0):
                out.append(bracket_root(gap, lo, hi, g[j], g_hi)[1])
    return out


def gauss_nodes(a: float, b: float, splits=()) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of :data:`GAUSS_POINTS`-point Gauss-Legendre on each piece of
    ``[a, b]`` between the ``splits`` (times where the integrand has a kink)."""
    pts = [a, *sorted(x for x in splits if a < x < b), b]
    lo = np.array(pts[:-1])[:, None]
    hi = np.array(pts[1:])[:, None]
    tq = 0.5 * (lo + hi) + 0.5 * (hi - lo) * _GL_X
    wq = 0.5 * (hi - lo) * _GL_W
    return tq.ravel(), wq.ravel()


def step_dissipation(system, dense, a, b, fs, splits=()) -> float:
    """Work (J) the contacts and dampers dissipate over ``[a, b]`` inside one step (``dense``
    its dense output, ``fs`` the carried state during the step), by :func:`gauss_nodes`."""
    closed = np.any(fs[system.contact_indices, core.S_FLAG] != 0.0)
    if not b > a or not (closed or system.damper_indices):
        return 0.0
    tq, wq = gauss_nodes(a, b, splits)
    ys = np.ascontiguousarray(np.asarray(dense(tq)).T)
    power = np.zeros(len(tq))
    dissipation_profile(ys, system.n, system.data, fs, power, np.zeros(8), np.zeros(8))
    return float(wq @ power)


@njit(cache=True, nogil=True, error_model="numpy")
def contact_gap_rates(q, v, S, gaps, rates):
    """Signed gaps ``-delta`` (m) and their rates ``-delta_dot`` (m/s) of every contact element
    (other elements: ``+inf`` and 0)."""
    fei = S[7]
    fef = S[8]
    for e in range(fei.shape[0]):
        if not core.is_contact(fei[e, 0]):
            gaps[e] = np.inf
            rates[e] = 0.0
        else:
            d, dd = core.contact_delta(fei[e], fef[e], q, v)
            gaps[e] = -d
            rates[e] = -dd


@njit(cache=True, nogil=True, error_model="numpy")
def raise_peaks(e, t, fn, delta, diag, ep):
    """Raise contact element ``e``'s largest normal force (and its time) and the open episode's
    peak force and largest penetration with the values ``fn``, ``delta`` found at ``t``."""
    if fn > diag[e, _D_FMAX]:
        diag[e, _D_FMAX] = fn
        diag[e, _D_TFMAX] = t
    k = int(diag[e, _D_OPEN])
    if k >= 0:
        if fn > ep[k, _EP_FN]:
            ep[k, _EP_FN] = fn
        if delta > ep[k, _EP_DMAX]:
            ep[k, _EP_DMAX] = delta


@njit(cache=True, nogil=True, error_model="numpy")
def _save(q, v, a, at, lam, fs, sq, sv, sa, sat, slam, sfs):
    sq[:] = q
    sv[:] = v
    sa[:] = a
    sat[:] = at
    slam[:] = lam
    sfs[:, :] = fs


@njit(cache=True, nogil=True, error_model="numpy")
def _restore(q, v, a, at, lam, fs, sq, sv, sa, sat, slam, sfs):
    _save(sq, sv, sa, sat, slam, sfs, q, v, a, at, lam, fs)  # the copy the other way


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _rewind(q, v, a, at, lam, fs, fst, save, w_save, p_save):
    """Back to the start of the step: the state saved in ``save`` and the drives' work and
    power (``w_save``, ``p_save``)."""
    sq, sv, sa, sat, slam, sfs = save
    _restore(q, v, a, at, lam, fs, sq, sv, sa, sat, slam, sfs)
    fst[F_WORK] = w_save
    fst[F_POWER] = p_save


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _free_predict(ctrl, erule, q, v, a, gap0, qp):
    """Whether the step control needs the gaps after a free step (no gap at ``t``, ``gap0``,
    below the margin); then ``qp``: the coordinates predicted after it."""
    h_free, control, margin = ctrl[0], ctrl[2], ctrl[3]
    if erule or not control or _min_contact_gap(gap0) < margin:
        return False
    for i in range(q.shape[0]):
        qp[i] = q[i] + h_free * v[i] + (0.5 * h_free * h_free) * a[i]
    return True


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _sustained(t, gap0, margin, t_dwell, diag, ep):
    """Whether every contact with a gap below the margin at ``t`` is closed (``gap < 0``) in an
    episode that began ``t_dwell`` or more before ``t``, and there is one (the dwell steps)."""
    found = False
    for e in range(gap0.shape[0]):
        if gap0[e] < margin:
            k = int(diag[e, _D_OPEN])
            if gap0[e] >= 0.0 or k < 0 or t - ep[k, _EP_ON] < t_dwell:
                return False
            found = True
    return found


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _plan_step(t, t_stop, ctrl, erule, gap0, gap1, ctl, diag, ep):
    """The step from ``t`` (module docstring; ``gap0``: the gaps at ``t``, ``gap1``: after a
    free step, when :func:`_free_predict` asked for them): with the error rule the proposal
    ``ctl[0]``, with step control ``dt_contact`` when a gap is below the margin now or after a
    free step (``dwell_dt`` instead when every such contact is sustained, :func:`_sustained`),
    else ``h_free``; then fitted to ``t_stop``. Returns ``(h, h_plan, land, dwell)``: the step, the
    size before the fit, whether it ends on ``t_stop``, whether it is a dwell step."""
    h_free, h_small, control, margin = ctrl[0], ctrl[1], ctrl[2], ctrl[3]
    h_dwell, t_dwell = ctrl[10], ctrl[11]
    h = h_free
    small = False
    dwell = False
    if erule:
        h = min(ctl[0], h_free)
    elif control:
        if _min_contact_gap(gap0) < margin:
            small = True
        elif _min_contact_gap(gap1) < margin:
            small = True
        if small:
            h = h_small
            if h_dwell > h_small and _sustained(t, gap0, margin, t_dwell, diag, ep):
                h = h_dwell
                dwell = True
    h_plan = h
    rest = t_stop - t
    land = False
    if erule:
        # equal steps to t_stop, none above the proposal; the same size as the last step
        # while the proposal stands (the iteration matrix is reused); the last one ends on
        # t_stop exactly
        kk = max(math.ceil(rest / h * (1.0 - 1e-9)), 1)
        h = rest / kk
        if abs(h - ctl[1]) <= 1e-9 * ctl[1]:
            h = ctl[1]
        land = kk == 1
    elif rest <= h * (1.0 + 1e-9):  # land on t_stop, never above the chosen size
        h = rest
    elif rest < 2.0 * h:  # two equal steps rather than a sliver
        h = 0.5 * rest
    return h, h_plan, land, dwell


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _locate_onset(t, h, g_end, onset_tol, run, save, gaps, cnt, w_save, p_save):
    """The step ``h`` from ``t`` overshot an onset (smallest end gap ``g_end`` < -onset_tol):
    safeguarded secant (Illinois) on the step size for the gap reaching zero (:func:`sc_chunk`).
    After a trial step whose Newton iteration fails, the search bisects between it and the
    shortest converged step past the onset (module docstring). Returns ``(ok, h)``: the step
    taken (state at ``t + h``, end gaps in ``gaps[1]``), or when that shortest step fails on
    its retake the state restored at ``t`` and ``h`` its size."""
    q, v, a, at, lam, par, ist, fst, S, W, G, L = run
    gap0, gap1 = gaps[0], gaps[1]
    lo = 0.0
    flo = _min_contact_gap(gap0)
    hi = h
    fhi = g_end
    side = 0
    failed = 0  # trial steps that failed
    at_h = True  # the state is at t + h (h: the last size that converged)
    for _k in range(_MAX_LOCATE):
        if hi - lo <= 4.0 * _EPS * (t + hi):  # bracket at round-off of the time axis
            break
        w = hi - lo
        if failed:
            s = lo + 0.5 * w
        else:
            s = lo + w * flo / (flo - fhi)
            s = min(max(s, lo + 1e-3 * w), hi - 1e-3 * w)
        _rewind(q, v, a, at, lam, W[20], fst, save, w_save, p_save)
        ok, it = ga_step(s, t + s, q, v, a, at, lam, par, ist, fst, S, W, G, L)
        cnt[_C_ITERS] += it
        cnt[_C_LOCATE] += 1
        if not ok:  # at or before the onset (module docstring): search (s, hi)
            failed += 1
            at_h = False
            lo = s
            continue
        core.contact_gaps(q, S, gap1)
        g = _onset_gap(gap0, gap1)
        h = s
        at_h = True
        if -onset_tol <= g <= 0.0:
            cnt[_C_TRIAL_FAIL] += failed
            return True, h
        if g > 0.0:
            lo = s
            flo = g
            if side == 1:
                fhi *= 0.5
            side = 1
        else:
            hi = s
            fhi = g
            if side == -1:
                flo *= 0.5
            side = -1
    # not found: take the smallest penetrating size found (the state at hi), which converged
    cnt[_C_TRIAL_FAIL] += failed
    cnt[_C_ROUNDOFF] += 1
    if h != hi or not at_h:
        _rewind(q, v, a, at, lam, W[20], fst, save, w_save, p_save)
        ok, it = ga_step(hi, t + hi, q, v, a, at, lam, par, ist, fst, S, W, G, L)
        cnt[_C_ITERS] += it
        if not ok:
            _rewind(q, v, a, at, lam, W[20], fst, save, w_save, p_save)
            return False, hi
        core.contact_gaps(q, S, gap1)
        h = hi
    return True, h


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _error_control(h, h_plan, located, rejected, ctrl, at, sat, g_err, cnt, ctl):
    """Error rule after the step ``h`` (module docstring): the next proposal into ``ctl[0]``
    (``dt_contact`` after a located onset), the step into ``ctl[1]``. Returns True when the
    step is rejected (the caller restores the state at its start), ``ctl[0]`` the smaller step
    to retry.

    ``rule`` 1: the step proposed in ``ctl[0]`` (carried from chunk to chunk), at most
    ``h_free``; a step whose local error estimate (:func:`local_error`, constant ``c_err``;
    rule 2: ``g_err``, computed by the caller with :func:`gap_error`) exceeds ``step_tol`` is
    rejected and retried smaller, at most ``_MAX_REJECT`` times and never below ``h_min`` (then
    it is taken, counted in ``cnt[_C_FORCED]``)."""
    h_free, h_small, rule = ctrl[0], ctrl[1], ctrl[6]
    step_tol, h_min, c_err = ctrl[7], ctrl[8], ctrl[9]
    if located:  # an impact begins: its first steps are dt_contact, then the estimate
        ctl[0] = h_small
    else:
        err = g_err if rule == 2 else local_error(h, at, sat, c_err)
        ratio = err / step_tol
        raw = _F_MAX if ratio <= 0.0 else _SAFETY * ratio ** (-1.0 / 3.0)
        if ratio > 1.0:
            if h > h_min * (1.0 + 1e-9) and rejected < _MAX_REJECT:
                cnt[_C_REJECT] += 1
                ctl[0] = max(h_min, h * max(_F_MIN, min(raw, 0.9)))
                return True
            cnt[_C_FORCED] += 1
        # the proposal is independent of h (ratio ~ h^3); limited around the planned
        # step (a landing step is shorter than planned)
        hn = min(max(h * raw, _F_MIN * h_plan), _F_MAX * h_plan)
        if h_plan <= hn < _KEEP * h_plan:
            hn = h_plan
        ctl[0] = min(max(hn, h_min), h_free)
    ctl[1] = h
    return False


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _book_step(h, p0, p1, released, diss, ist, fst):
    """Book the accepted step of size ``h``: the damage it released (``released``) and the work
    the contacts dissipated (trapezoidal rule from ``p0`` to ``p1``, second order as the
    integrator). Returns ``diss`` with both added."""
    if released != 0.0:
        diss += released
        fst[F_ENERGY] -= released
        ist[I_KIND] = NO_FACTOR  # the stiffness changed
    diss += 0.5 * h * (p0 + p1)
    return diss


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _count_step(h, h_free, h_small, erule, gap0, gap1, cnt, hist):
    """Count an accepted step (a contact step when ``h`` is ``h_small`` or below; with the error
    rule its size in ``hist``, row 1 when a gap is closed at either end)."""
    cnt[_C_STEPS] += 1
    if h <= h_small * (1.0 + 1e-9) and h_small < h_free:
        cnt[_C_SMALL] += 1
    if erule:
        row = 1 if min(_min_contact_gap(gap0), _min_contact_gap(gap1)) < 0.0 else 0
        b = int(math.floor(math.log2(h / h_small))) - _H_LO
        hist[row, min(max(b, 0), _H_BINS - 1)] += 1


@njit(cache=True, nogil=True, error_model="numpy")
def sc_chunk(t, t_stop, ctrl, run, save, gaps, rec, diss, max_steps, ctl, hist):
    """Index-3 steps from ``t`` to exactly ``t_stop`` (module docstring). ``ctrl``: ``(h_free,
    h_small, control, margin, onset_tol, max_halvings, rule, step_tol, h_min, c_err, h_dwell,
    t_dwell)`` (``h_dwell`` 0: no dwell steps); ``run``:
    :meth:`Index3Run.args`, unpacked once per call; ``save``: the state at the start of a step;
    ``gaps``: ``(gap0, gap1, qp, gerr)`` work arrays; ``rec``: ``(diag, ep, cnt)``, the contact
    record. Returns ``(t, status, h, diss)``, the status one of ``OK, FAIL, EP_FULL, STALL,
    OVERLAP, ONSET_FAIL`` (their comment above). The onset search: :func:`_locate_onset`;
    ``rule`` 1 or 2 (with ``control``): the error rule (:func:`_error_control`), ``hist``
    (2 x ``_H_BINS``) counting the accepted steps by size (rows: free flight, a gap closed at
    either end). Called by :func:`sc_samples` only, whose borrowed arrays it passes on
    (:mod:`ancf_beam.borrow`)."""
    q, v, a, at, lam, par, ist, fst, S, W, G, L = run
    h_free, h_small, control = ctrl[0], ctrl[1], ctrl[2]
    onset_tol, max_halvings, rule = ctrl[4], ctrl[5], ctrl[6]
    fs, pp, pq = W[20], W[13], W[14]
    sq, sv, sa, sat, slam, sfs = save
    gap0, gap1, qp, gerr = gaps
    diag, ep, cnt = rec
    h = h_free
    taken, rejected = 0, 0  # steps taken; rejections of the step from t (error rule)
    erule = control and rule != 0
    while t < t_stop:
        if taken >= max_steps:
            return t, STALL, h, diss
        core.contact_gaps(q, S, gap0)
        if _free_predict(ctrl, erule, q, v, a, gap0, qp):
            core.contact_gaps(qp, S, gap1)
        h, h_plan, land, dwell = _plan_step(t, t_stop, ctrl, erule, gap0, gap1, ctl, diag, ep)
        h_land = h
        _save(q, v, a, at, lam, fs, sq, sv, sa, sat, slam, sfs)
        w_save, p_save = fst[F_WORK], fst[F_POWER]  # the drives' work, power (every ga_step)
        p0 = core.dissipation_power(q, v, S, fs, pp, pq)  # W, at the start of the step
        ok = False
        for _k in range(max_halvings + 1):  # the step, halved after a failed Newton iteration
            ok, it = ga_step(
                h, t_stop if land else t + h, q, v, a, at, lam, par, ist, fst, S, W, G, L
            )
            cnt[_C_ITERS] += it
            if ok:
                break
            cnt[_C_HALVE] += 1
            h *= 0.5
            land = False
        if not ok:
            return t, FAIL, h, diss
        if h < h_plan * 0.5 * (1.0 + 1e-9):  # halved: the controller starts from the step taken
            h_plan = h
        core.contact_gaps(q, S, gap1)
        g_end = _onset_gap(gap0, gap1)
        located = control and g_end < -onset_tol
        if located:
            run = (q, v, a, at, lam, par, ist, fst, S, W, G, L)
            ok, h = _locate_onset(t, h, g_end, onset_tol, run, save, gaps, cnt, w_save, p_save)
            if not ok:
                return t, ONSET_FAIL, h, diss
        if erule:
            if land and h != h_land:
                land = False
            g_err = gap_error(h, q, at, sat, ctrl[9], S, qp, gap1, gerr) if rule == 2 else 0.0
            if _error_control(h, h_plan, located, rejected, ctrl, at, sat, g_err, cnt, ctl):
                _rewind(q, v, a, at, lam, fs, fst, save, w_save, p_save)
                rejected += 1
                continue
            rejected = 0
        if not update_record(t, h, gap0, gap1, sfs, q, v, S, fs, diag, ep, cnt, pp, pq):
            _rewind(q, v, a, at, lam, fs, fst, save, w_save, p_save)  # nothing booked
            return t, EP_FULL, h, diss
        released, p1 = release_damage(q, S), core.dissipation_power(q, v, S, fs, pp, pq)
        diss = _book_step(h, p0, p1, released, diss, ist, fst)
        if t + h <= t:  # the step no longer advances time (state at t + h == t)
            return t, STALL, h, diss
        t = t_stop if land else t + h
        taken += 1
        _count_step(h, h_free, h_small, erule, gap0, gap1, cnt, hist)
        cnt[_C_DWELL] += dwell
        if core.contact_breach(q, S) >= 0:  # discs overlapping deeper than their geometry
            return t, OVERLAP, h, diss
    return t, OK, h, diss


@njit(cache=True, nogil=True, error_model="numpy")
def local_error(h, at, at0, c_err):
    """Local error estimate of the positions over a generalized-alpha step of size ``h``:
    ``|c_err| h^2 max_i |at_i - at0_i|`` (``at0``, ``at``: the pseudo-accelerations at its
    start and end; :func:`error_constant`)."""
    x = 0.0
    for i in range(at.shape[0]):
        x = max(x, abs(at[i] - at0[i]))
    return abs(c_err) * h * h * x


@njit(cache=True, nogil=True, error_model="numpy")
def gap_error(h, q, at, at0, c_err, S, qp, gap, gerr):
    """Local error estimate of the contact gaps over a generalized-alpha step of size ``h``: the
    largest change of a contact's gap (``gap``: at ``q``) when ``q`` moves by the position
    error estimate ``c_err h^2 (at - at0)`` (:func:`local_error`); ``qp``, ``gerr``: scratch."""
    c = c_err * h * h
    for i in range(q.shape[0]):
        qp[i] = q[i] + c * (at[i] - at0[i])
    core.contact_gaps(qp, S, gerr)
    x = 0.0
    for e in range(gap.shape[0]):
        if np.isfinite(gap[e]):
            x = max(x, abs(gerr[e] - gap[e]))
    return x


def error_constant(beta: float, gamma: float) -> float:
    """Constant ``C`` of the local position error ``C h^3 q^(3) + O(h^4)`` of a
    generalized-alpha step in the form of Arnold and Bruels: ``q1 = q0 + h v0 + h^2 (1/2 -
    beta) at0 + h^2 beta at1``, ``v1 = v0 + h (1 - gamma) at0 + h gamma at1``, with ``at`` the
    pseudo-acceleration, ``at_n = a(t_n + d h) + O(h^2)``, ``d = alpha_m - alpha_f =
    1/2 - gamma``. From the exact start, ``at0 = a(t0 + d h)`` and ``at1 - at0 = h q^(3) +
    O(h^2)``, so ``q1 - q(t0 + h) = h^2/2 (at0 - a(t0)) + beta h^2 (at1 - at0) - h^3/6 q^(3) =
    h^3 q^(3) (d/2 + beta - 1/6)``: ``C = beta - gamma/2 + 1/12`` (Newmark, ``gamma = 1/2``:
    ``beta - 1/6``, the constant of Zienkiewicz and Xie; generalized-alpha rho_inf = 0.8:
    0.0864), estimated as ``C h^2 (at1 - at0)`` (:func:`local_error`)."""
    return beta - 0.5 * gamma + 1.0 / 12.0


#: guard of one chunk of contact stepping: at most this many times the steps of dt_contact the
#: interval needs, plus _STEP_GUARD_EXTRA (onset searches, halvings, landing steps)
_STEP_GUARD_FACTOR = 100
_STEP_GUARD_EXTRA = 10000


@njit(cache=True, nogil=True, error_model="numpy")
def sc_samples(ts, k, k_stop, t, ctrl, run, save, gaps, rec, diss, h_guard, ctl, hist, q_ref, bufs):
    """:func:`sc_chunk` to every sample time ``ts[k], ts[k + 1], ...`` before ``ts[k_stop]``
    in turn, each sample recorded (:func:`~ancf_beam.mbs.timeloop.record_sample` into the
    buffers ``bufs``), the steps of each chunk capped by :func:`_max_steps` of ``h_guard``.
    Returns ``(k, t, status, h, diss)``: ``k = k_stop`` and ``OK`` when done, else the sample
    not reached and ``sc_chunk``'s status (not ``OK``) with its ``t``, ``h``, ``diss``. The
    state between calls is all in the arrays, so calls ending at any samples step as one."""
    ts, ctrl, run, save, gaps, rec, ctl, hist, q_ref, bufs = borrow(
        (ts, ctrl, run, save, gaps, rec, ctl, hist, q_ref, bufs)
    )
    q, v, a, at, lam, par, ist, fst, S, W, G, L = run
    h = ctrl[0]
    status = OK
    while k < k_stop:
        span = max(ts[k] - t, 0.0)
        guard = _STEP_GUARD_FACTOR * math.ceil(span / h_guard) + _STEP_GUARD_EXTRA
        t, status, h, diss = sc_chunk(t, ts[k], ctrl, run, save, gaps, rec, diss, guard, ctl, hist)
        if status != OK:
            return k, t, status, h, diss
        t = ts[k]  # exact sample time (the loop lands on it)
        record_sample(
            k, q, v, a, lam, S, W, fst[F_ENERGY], fst[F_POT], diss, fst[F_WORK], q_ref, bufs
        )
        k += 1
    return k, t, status, h, diss


def _max_steps(span: float, h_small: float) -> int:
    """Accepted steps allowed for a chunk of length ``span`` (s) with contact steps
    ``h_small``: far above what a run takes (each step is ``h_small`` or longer except the
    located onsets, halvings and the landing step), finite so that the loop ends."""
    return int(_STEP_GUARD_FACTOR * math.ceil(max(span, 0.0) / h_small) + _STEP_GUARD_EXTRA)


def hertz_duration(m_eff: float, stiffness: float, exponent: float, v0: float) -> float:
    """Duration (s) of an undamped impact ``m x'' = -K x^n`` at approach speed ``v0``:
    ``2 x_max / v0 * int_0^1 du / sqrt(1 - u^(n+1))`` with ``x_max = ((n+1) m v0^2 /
    (2K))^(1/(n+1))`` (n = 1.5: ``3.2181 (m/K)^(2/5) v0^(-1/5)``)."""
    from scipy.special import beta as beta_fn

    n = exponent
    x_max = ((n + 1.0) * m_eff * v0 * v0 / (2.0 * stiffness)) ** (1.0 / (n + 1.0))
    p = 1.0 / (n + 1.0)
    integral = p * beta_fn(p, 0.5)  # int_0^1 (1 - u^(n+1))^(-1/2) du
    return 2.0 * x_max / v0 * integral


def classify_episodes(
    episodes: np.ndarray,
    t_end: float,
    m_eff: float,
    stiffness: float,
    exponent: float,
    factor: float,
    v0_min: float,
) -> np.ndarray:
    """1 (impact) or 2 (continuous contact) per episode: continuous when it lasts longer than
    ``factor`` times the undamped impact duration of mass ``m_eff`` at its approach speed
    (:func:`hertz_duration`); an episode still open at ``t_end`` counts up to ``t_end``."""
    out = np.ones(len(episodes), dtype=np.int8)
    for i, ep in enumerate(episodes):
        t_off = t_end if math.isnan(ep[_EP_OFF]) else ep[_EP_OFF]
        ref = hertz_duration(m_eff, stiffness, exponent, max(ep[_EP_V0], v0_min))
        if t_off - ep[_EP_ON] > factor * ref:
            out[i] = 2
    return out


# ------------------------------------------------------------------------------------------
# drivers
# ------------------------------------------------------------------------------------------
def _check_drivers(system) -> None:
    if system.has_function_drivers:
        raise NotImplementedError(
            f"system '{system.name}': contact stepping evaluates drivers inside its numba loop; "
            "user-function drivers are not supported with contact elements"
        )


def _contact_steps(system, st) -> tuple[float, float, int, float]:
    """``(dt, h_small, rule, h_min)`` of a contact run: the step in free flight and near a
    contact, the step rule's index in ``STEP_RULES`` (0 without step control) and the
    smallest step of the error rule."""
    # without step control: dt or the fixed-step default (which resolves contacts); with it,
    # dt (default sample_dt) in free flight and dt_contact (default: the fixed-step default)
    contact_dt = default_dt(system, st)
    if st.step_control:
        dt = st.dt if st.dt is not None else st.sample_dt
        h_small = min(dt, st.dt_contact if st.dt_contact is not None else contact_dt)
    else:
        dt = st.dt if st.dt is not None else contact_dt
        h_small = dt
    # error rule: steps of at most dt from the local error estimate, dt_contact after an onset,
    # never below dt_min (default dt_contact / 16)
    rule = STEP_RULES.index(st.step_rule) if st.step_control else 0
    h_min = st.dt_min if st.dt_min is not None else h_small / 16.0
    h_min = min(h_min, h_small)
    return dt, h_small, rule, h_min


def _raise_failure(system, st, status, t, t_next, h, cnt, run) -> None:
    """The error of a run that ended at ``t`` short of the sample at ``t_next`` with the
    :func:`sc_chunk` status ``STALL``, ``FAIL``, ``ONSET_FAIL`` or ``OVERLAP``."""
    if status == OVERLAP:
        raise_overlap(system, run.q, t, st.integrator)
    if status == STALL:
        raise InstabilityError(
            f"{st.integrator}, system '{system.name}': contact stepping stalled at "
            f"t = {t:.9g} s on the way to the sample at {t_next:.9g} s (step {h:.3e} s, "
            f"{int(cnt[_C_STEPS])} steps so far); reduce dt_contact or onset_tol"
        )
    if status in (FAIL, ONSET_FAIL):
        rn = float(run.fst[F_FAIL_R])
        if status == FAIL:
            where = f"the step from t = {t:.6g} s (dt = {h:.4e} s after {st.max_halvings} halvings)"
            advice = st.newton_advice("reduce dt / dt_contact or raise max_iter / max_halvings")
        else:
            where = (
                f"the contact-onset search from t = {t:.6g} s (dt = {h:.4e} s, the shortest "
                "step past the onset, converged once and failed when retaken)"
            )
            advice = st.newton_advice("raise max_iter or onset_tol, or reduce dt_contact")
        raise NewtonConvergenceError(
            f"{st.integrator}: Newton did not converge in {where}: residual {rn:.3e} N; {advice}",
            t=t,
            step=int(cnt[_C_STEPS]) + 1,
            dt=h,
            iterations=int(run.ist[I_FAIL_IT]),
            residual=rn,
            tolerance=st.tol,
        )


def _contact_stats(st, dt, h_small, h_min, rule, rec, cnt, run, hist) -> dict:
    """The ``stats`` of a contact run (counters of :func:`sc_chunk`)."""
    steps = int(cnt[_C_STEPS])
    stats = {
        "dt": dt,
        "dt_contact": h_small,
        "step_control": bool(st.step_control),
        "steps_small": rec.steps_small,
        "locate_trials": rec.locate_trials,
        "onsets_at_roundoff": int(cnt[_C_ROUNDOFF]),
        "onset_trials_failed": int(cnt[_C_TRIAL_FAIL]),
        "halvings": int(cnt[_C_HALVE]),
        "factorizations": int(run.ist[I_FACT]),
        "mean_iterations": float(cnt[_C_ITERS]) / max(steps, 1),
        "newton": st.newton,
    }
    if st.dwell_dt is not None:  # (validated: with step control and the fixed rule)
        stats.update(
            dwell_dt=st.dwell_dt, dwell_after=st.dwell_after, steps_dwell=int(cnt[_C_DWELL])
        )
    if rule:
        stats.update(
            step_rule=st.step_rule,
            step_tol=st.step_tol,
            dt_min=h_min,
            rejected=int(cnt[_C_REJECT]),
            forced=int(cnt[_C_FORCED]),
            # accepted steps per bin of log2(h / dt_contact) (first bin: everything below,
            # last: everything above), in free flight and with a gap closed at either end
            step_hist_lo=_H_LO,
            step_hist_free=hist[0].tolist(),
            step_hist_contact=hist[1].tolist(),
        )
    return stats


def integrate_contact_index3(
    system, st, q, v, a, lam, progress: bool = False, progress_interval_s: float = 5.0
) -> MechanismResult:
    """Generalized-alpha / Newmark run of a system with contact elements (module docstring);
    ``progress``: the simulated time, steps and an ETA logged every ``progress_interval_s``."""
    from ancf_beam.resources import check_mechanism

    _check_drivers(system)
    dt, h_small, rule, h_min = _contact_steps(system, st)
    beta, gamma = st.scheme()[:2]
    c_err = error_constant(beta, gamma)
    ctrl = (dt, h_small, st.step_control, st.contact_margin, st.onset_tol, st.max_halvings)
    ctrl += (rule, st.step_tol, h_min, c_err)  # sc_chunk's step control
    # dwell steps in sustained contacts (fixed rule; 0: none)
    if st.dwell_dt is None:
        ctrl += (0.0, math.inf)
    else:
        ctrl += (float(st.dwell_dt), float(st.dwell_after))
    # the proposal (first: dt_contact, then the estimate takes over) and the last step taken
    ctl = np.array([h_small, 0.0])
    hist = np.zeros((2, _H_BINS), dtype=np.int64)
    # at least t_end / dt steps (dt_contact ones in contact come on top)
    check_mechanism(
        system, st, n_sample_times(st.t_end, st.sample_dt), max(1, math.ceil(st.t_end / dt - 1e-9))
    )
    ts = sample_times(st.t_end, st.sample_dt)  # t = 0, every sample_dt, t_end
    n_samples = len(ts)
    buf = SampleBuffers(n_samples, system.n, system.m, system.fst.size)
    W, q_ref, u, p = first_sample(system, q, v, a, lam, buf)
    run = Index3Run(system, st, W, q, v, a, lam)
    run.fst[F_ENERGY] = u
    run.fst[F_POT] = p
    n_fe = system.fst.shape[0]
    save = (q.copy(), v.copy(), a.copy(), a.copy(), lam.copy(), W[20].copy())
    gaps = (np.zeros(n_fe), np.zeros(n_fe), np.zeros(system.n), np.zeros(n_fe))
    diag, ep, cnt = new_record_arrays(n_fe)
    open_initial_episodes(system, q, v, diag, ep, cnt)
    t = 0.0
    diss = 0.0
    t_start = run_clock()
    c_start = time.process_time()
    k = 1
    h_guard = h_small if rule == 0 else h_min
    args, bufs = run.args(), buf.args()
    # with progress, calls of the samples of a report interval, at most a second's (sc_samples:
    # they step as one call)
    batch, report = n_samples, [time.perf_counter(), progress_interval_s]
    if progress:
        batch = 1
    while k < n_samples:
        k_stop = min(n_samples, k + batch)
        rec = (diag, ep, cnt)
        k, t, status, h, diss = sc_samples(
            ts, k, k_stop, t, ctrl, args, save, gaps, rec, diss, h_guard, ctl, hist, q_ref, bufs
        )
        if k >= n_samples:
            break
        if status == EP_FULL:
            ep = np.concatenate([ep, np.full_like(ep, np.nan)])
            continue
        if status != OK:
            _raise_failure(system, st, status, t, ts[k], h, cnt, run)
        batch = report_time(st.integrator, t, st.t_end, int(cnt[_C_STEPS]), k, t_start, report)
    wall = run_clock() - t_start
    cpu = time.process_time() - c_start
    rec = record_from_arrays(system, diag, ep, cnt)
    stats = _contact_stats(st, dt, h_small, h_min, rule, rec, cnt, run, hist)
    return buf.result(
        ts,
        n_samples,
        integrator=st.integrator,
        dt=dt,
        steps=int(cnt[_C_STEPS]),
        wall_s=wall,
        cpu_s=cpu,
        stats=stats,
        contact=rec,
    )


class AdaptiveRecorder:
    """The contact record of an adaptive run (called by the adaptive integrator after every
    accepted step or located onset): the step's end state is booked like an index-3 step, and
    a step with a contact in it is searched on its dense output for the peaks: the normal force
    and the penetration at ``DENSE_POINTS + 1`` equally spaced times, then, where the largest of
    them is not at an end of the step, a bounded maximisation between the neighbours of the
    largest (:func:`ancf_beam.mbs.events.bracket_max`)."""

    def __init__(self, system):
        self.system = system
        self.n = system.n
        n_fe = system.fst.shape[0]
        self.diag, self.ep, self.cnt = new_record_arrays(n_fe)
        self.pp = np.zeros(8)
        self.pq = np.zeros(8)
        self.prof = np.zeros((DENSE_POINTS + 1, n_fe, 2))
        self.searches = 0  # bounded maximisations run
        self._prev = None  # the last step searched: (dense, times, carried state, rising ends)

    def open_initial(self, q, v):
        """Episodes of the contacts in contact at the start (:func:`open_initial_episodes`)."""
        open_initial_episodes(self.system, q, v, self.diag, self.ep, self.cnt)

    def profile(self, dense, t0, t1, fs):
        """``(ts, prof)``: the times ``t0 .. t1`` (``DENSE_POINTS + 1``) and the penetration and
        normal force of every contact there (:func:`contact_profile`; ``fs`` the carried state
        of the step)."""
        ts = np.linspace(t0, t1, DENSE_POINTS + 1)
        ts[-1] = t1
        ys = np.ascontiguousarray(np.asarray(dense(ts)).T)
        contact_profile(ys, self.n, self.system.data, fs, self.prof, self.pp, self.pq)
        return ts, self.prof

    def step(self, t0, t1, gap0, gap1, before, y1, dense=None, profile=None):
        """Book the accepted step ``[t0, t1]`` (``before``: the carried state during it; with
        ``dense`` and its ``profile`` the peaks inside it first)."""
        n = self.n
        data = self.system.data
        fs = self.system.fst
        if dense is not None and profile is not None:
            self._peaks(dense, before, *profile)
        else:
            self._prev = None
        q1 = np.ascontiguousarray(y1[:n])
        v1 = np.ascontiguousarray(y1[n:])
        args = (t0, t1 - t0, gap0, gap1, before, q1, v1, data, fs)
        if not update_record(*args, self.diag, self.ep, self.cnt, self.pp, self.pq):
            self.ep = np.concatenate([self.ep, np.full_like(self.ep, np.nan)])
            update_record(*args, self.diag, self.ep, self.cnt, self.pp, self.pq)

    def _peaks(self, dense, fs, ts, prof):
        """Raise the record's peaks with the step's samples and, where the largest sample of a
        contact's force or penetration is inside the step, the bounded search between its
        neighbours; a largest sample at the start of the step that the previous step rose to
        is bracketed across the two steps (its last sample, this step's second)."""
        from ancf_beam.mbs.events import maximise

        system = self.system
        n = self.n
        prev = self._prev
        if prev is not None and prev[1][-1] != ts[0]:
            prev = None
        at_end = set()

        def value(dense_, fs_, e, col, t):
            y = np.ascontiguousarray(dense_(t))
            return core.contact_forces(
                system.fei[e], system.fef[e], fs_[e], y[:n], y[n:], self.pp, self.pq
            )[col]

        for e in system.contact_indices:
            if not (np.any(prof[:, e, 1] > 0.0) or np.any(prof[:, e, 0] > 0.0)):
                continue
            for col, idx in ((7, 1), (0, 0)):
                samples = prof[:, e, idx]
                j = int(np.argmax(samples))
                t, x = float(ts[j]), float(samples[j])
                if 0 < j < len(ts) - 1:
                    self.searches += 1
                    t, x = maximise(
                        lambda t, e=e, col=col: value(dense, fs, e, col, t),
                        float(ts[j - 1]),
                        float(ts[j + 1]),
                        t,
                        x,
                    )
                elif j == len(ts) - 1:
                    at_end.add((e, col))
                elif prev is not None and (e, col) in prev[3]:
                    self.searches += 1
                    p_dense, p_ts, p_fs, _ = prev
                    t0 = float(ts[0])

                    def across(t, e=e, col=col, t0=t0, p_dense=p_dense, p_fs=p_fs):
                        if t < t0:
                            return value(p_dense, p_fs, e, col, t)
                        return value(dense, fs, e, col, t)

                    t, x = maximise(across, float(p_ts[-2]), float(ts[1]), t, x)
                if col == 7:
                    raise_peaks(e, t, x, -np.inf, self.diag, self.ep)
                else:
                    raise_peaks(e, t, 0.0, x, self.diag, self.ep)
        self._prev = (dense, ts.copy(), fs.copy(), at_end)

    def record(self) -> ContactRecord:
        rec = record_from_arrays(self.system, self.diag, self.ep, self.cnt)
        rec.extra["peak_searches"] = self.searches
        return rec
