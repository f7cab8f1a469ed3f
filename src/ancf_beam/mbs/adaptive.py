"""The adaptive integrator of a multibody system: the index-1 right-hand side under a scipy
error-controlled integrator, contacts as located events (module docstring of
:mod:`ancf_beam.mbs.integrators`; :class:`ancf_beam.mbs.stepping.AdaptiveRecorder` keeps the
contact record). :func:`integrate_adaptive` runs it; :func:`contact_fn`,
:func:`locate_force_end` and :func:`locate_onset` are its event functions."""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ancf_beam.errors import ConstraintSingularityError, InstabilityError
from ancf_beam.mbs import core
from ancf_beam.mbs.settings import CONTACT_STEP_FRACTION
from ancf_beam.mbs.timeloop import (
    SampleBuffers,
    drive_power,
    n_sample_times,
    record_sample,
    sample_times,
)
from ancf_beam.resources import MAX_ADAPTIVE_STEPS, check_mechanism
from ancf_beam.results import MechanismResult

__all__ = ["contact_fn", "integrate_adaptive", "locate_force_end", "locate_onset"]

_EPS = float(np.finfo(float).eps)

#: restarts at a located onset that do not advance time before the run is declared stuck (each
#: contact element can start an impact at most once at a given time)
_STALL_RESTARTS = 4


@njit(cache=True, nogil=True, error_model="numpy")
def _ivp_rhs(t, y, S, W, alpha, beta, a, lam, out):
    """First-order right-hand side ``[v; a(q, v, t)]`` of the index-1 form; returns the pivot
    ratio of the constraint Schur complement (0: singular)."""
    n = a.shape[0]
    q = y[:n]
    v = y[n:]
    res = core.accel_index1(q, v, t, S, W, alpha, beta, a, lam)
    for i in range(n):
        out[i] = v[i]
        out[n + i] = a[i]
    return res[4]


def integrate_adaptive(system, st, q, v, a, lam) -> MechanismResult:
    """The adaptive integrator (module docstring); contacts run in event mode (``C_EVENTS``)
    for the duration of the run."""
    contacts = system.contact_indices
    saved = system.fef[contacts, core.C_EVENTS].copy()
    system.fef[contacts, core.C_EVENTS] = 1.0
    try:
        return _adaptive_run(system, st, q, v, a, lam)
    finally:
        system.fef[contacts, core.C_EVENTS] = saved


def _adaptive_run(system, st, q, v, a, lam) -> MechanismResult:
    import scipy.integrate as si

    n, m = system.n, system.m
    W = system.work()
    aw = np.zeros(n)
    lw = np.zeros(m)
    data = system.data

    def fun(t, y):
        if system.has_function_drivers:
            system.update_drivers(t, W)
        out = np.empty(2 * n)
        if _ivp_rhs(t, y, data, W, st.alpha, st.beta, aw, lw, out) == 0.0:
            raise ConstraintSingularityError(
                f"adaptive: the constraint Jacobian is singular at t = {t:.6g} s"
            )
        return out

    check_mechanism(system, st, n_sample_times(st.t_end, st.sample_dt), None)
    ts = sample_times(st.t_end, st.sample_dt)
    n_samples = len(ts)
    buf = SampleBuffers(n_samples, n, m, system.fst.size)
    q_ref = system.q0.copy()
    method = getattr(si, st.method)
    solver = method(fun, 0.0, np.concatenate([q, v]), st.t_end, rtol=st.rtol, atol=st.atol)
    ys = np.zeros((n_samples, 2 * n))
    ys[0] = np.concatenate([q, v])
    states = np.zeros((n_samples, *system.fst.shape))
    states[0] = system.fst
    contacts = system.contact_indices
    gaps = np.zeros(len(system.forces))
    rates = np.zeros(len(system.forces))
    contact_gap_rates = None
    core.contact_gaps(q, data, gaps)
    fn_prev = np.zeros(len(system.forces))
    for e in contacts:
        fn_prev[e] = contact_fn(system, np.concatenate([q, v]), n, e)
    intervals = []  # (element, onset time, time the normal force returns to zero)
    recorder = None
    if contacts:
        from ancf_beam.mbs.stepping import (
            AdaptiveRecorder,
            contact_gap_rates,
            dissipation_kinks,
            step_dissipation,
        )

        recorder = AdaptiveRecorder(system)
        recorder.open_initial(q, v)
        contact_gap_rates(q, v, data, gaps, rates)
    k = 1
    steps = 0
    events = 0
    stalls = 0
    nfev = 0  # of the integrators before the last restart
    t_start = time.perf_counter()
    c_start = time.process_time()

    diss = 0.0  # work dissipated by the contacts up to the start of the current step
    work = 0.0  # work fed in by the drives, likewise
    diss_s = np.zeros(n_samples)
    work_s = np.zeros(n_samples)
    drives = any(j.works for j in system.joints)

    def step_work(dense, a, b, kinks=()):
        """Work (J) of the drives over ``[a, b]`` inside a step: Gauss-Legendre on the dense
        output (the power ``lam . Phi_t`` from the index-1 solve at each node)."""
        if not (drives and b > a):
            return 0.0
        from ancf_beam.mbs.stepping import gauss_nodes

        tq, wq = gauss_nodes(a, b, kinks)
        yq = np.asarray(dense(tq)).T
        total = 0.0
        for tj, wj, yj in zip(tq, wq, yq, strict=True):
            if system.has_function_drivers:
                system.update_drivers(tj, W)
            core.accel_index1(np.ascontiguousarray(yj[:n]), np.ascontiguousarray(yj[n:]), tj,
                              data, W, st.alpha, st.beta, aw, lw)  # fmt: skip
            total += wj * drive_power(lw, W[7])
        return total

    def fill(dense, t_stop, t_from=0.0, kinks=()):
        nonlocal k
        while k < n_samples and ts[k] <= t_stop + 1e-12 * st.t_end:
            ys[k] = dense(min(ts[k], t_stop))
            states[k] = system.fst
            t_k = min(ts[k], t_stop)
            if contacts:
                diss_s[k] = diss + step_dissipation(system, dense, t_from, t_k, system.fst,
                                                    kinks)  # fmt: skip
            work_s[k] = work + step_work(dense, t_from, t_k, kinks)
            k += 1

    h_contact = _contact_step(system)
    while solver.status == "running":
        t_old = solver.t
        msg = solver.step()
        if solver.status == "failed":
            raise InstabilityError(f"adaptive ({st.method}), system '{system.name}': {msg} at "
                                   f"t = {solver.t:.6g} s")  # fmt: skip
        steps += 1
        if steps > MAX_ADAPTIVE_STEPS:  # its step count is only known as it runs
            raise InstabilityError(
                f"adaptive ({st.method}): more than {MAX_ADAPTIVE_STEPS:.0e} steps by t = "
                f"{solver.t:.6g} s of t_end = {st.t_end:g} s (steps of {solver.t - t_old:.3g} s"
                "): the run would not end in the time a mechanism run may take (docs/design.md, "
                "'Memory and time'); shorten t_end or loosen solver.rtol"
            )
        y1 = solver.y
        onset = None
        profile = None
        dense = None
        if contacts:
            dense = solver.dense_output()
            gaps_prev = gaps.copy()
            rates_prev = rates.copy()
            contact_gap_rates(np.ascontiguousarray(y1[:n]), np.ascontiguousarray(y1[n:]), data,
                              gaps, rates)  # fmt: skip
            h = solver.t - t_old
            free = [e for e in contacts if system.fst[e, core.S_FLAG] == 0.0]
            # sample the step where a contact is active, or where a free one could close
            # within it at its end speeds (a gap that dips below zero between the step ends)
            near = any(system.fst[e, core.S_FLAG] != 0.0 for e in contacts) or any(
                min(gaps_prev[e], gaps[e]) <= h * max(abs(rates_prev[e]), abs(rates[e]))
                for e in free)  # fmt: skip
            if near:
                profile = recorder.profile(dense, t_old, solver.t, system.fst)
            if free:
                onset = locate_onset(
                    system, dense, t_old, solver.t, free, gaps_prev, gaps, profile, n
                )
        cut = None  # (time, element, kind): the step ends early at an event
        if onset is not None:
            cut = (onset[0], onset[2], "onset")
        elif contacts:  # the end of positive contact force, located on the dense output
            fn1 = np.array([contact_fn(system, y1, n, e) for e in contacts])
            ended = [(locate_force_end(system, dense, t_old, solver.t, e, n), e)
                     for e, f1 in zip(contacts, fn1, strict=True)
                     if fn_prev[e] > 0.0 and f1 <= 0.0]  # fmt: skip
            if ended:
                t_fe, e = min(ended)
                cut = (t_fe, e, "end")
            else:
                fn_prev[contacts] = fn1
        if cut is not None:  # restart the integrator at the event: each piece is smooth
            tc, e, kind = cut
            stalls = stalls + 1 if tc <= t_old else 0
            if stalls > _STALL_RESTARTS * len(contacts):
                raise InstabilityError(
                    f"adaptive ({st.method}), system '{system.name}': {stalls} contact events "
                    f"at t = {tc:.9g} s without progress (contact element "
                    f"'{system.forces[e].name}')"
                )
            yc = onset[1] if kind == "onset" else dense(tc)
            kinks = dissipation_kinks(system, dense, profile, tc, system.fst)
            fill(dense, tc, t_old, kinks)
            diss += step_dissipation(system, dense, t_old, tc, system.fst, kinks)
            work += step_work(dense, t_old, tc, kinks)
            qc = np.ascontiguousarray(yc[:n])
            vc = np.ascontiguousarray(yc[n:])
            before = system.fst.copy()
            if profile is not None:
                profile = recorder.profile(dense, t_old, tc, before)
            if kind == "onset":
                ddot = system.contact_forces[e].evaluate(qc, vc)["delta_dot"]
                core.contact_onset(e, float(ddot), tc, system.fef, system.fst)
                events += 1
            else:
                intervals.append((e, float(system.fst[e, core.S_T0]), float(tc)))
            core.update_force_state(qc, vc, tc, data, system.fst)
            gaps_start = gaps_prev
            contact_gap_rates(qc, vc, data, gaps, rates)
            recorder.step(t_old, tc, gaps_start, gaps, before, yc, dense, profile)
            for e2 in contacts:
                fn_prev[e2] = contact_fn(system, yc, n, e2)
            if st.t_end - tc > 4.0 * _EPS * st.t_end:  # else the old solver ended at t_end
                nfev += solver.nfev
                first = None
                if kind == "onset" and math.isfinite(h_contact):
                    first = min(h_contact, st.t_end - tc)
                solver = method(fun, tc, yc, st.t_end, rtol=st.rtol, atol=st.atol,
                                first_step=first)  # fmt: skip
            continue
        kinks = dissipation_kinks(system, dense, profile, solver.t, system.fst) if contacts else []
        if k < n_samples and ts[k] <= solver.t + 1e-12 * st.t_end:
            fill(solver.dense_output(), solver.t, t_old, kinks)
        if drives:
            work += step_work(solver.dense_output() if dense is None else dense, t_old,
                              solver.t, kinks)  # fmt: skip
        if contacts:
            diss += step_dissipation(system, dense, t_old, solver.t, system.fst, kinks)
            before = system.fst.copy()
            core.update_force_state(np.ascontiguousarray(y1[:n]),
                                    np.ascontiguousarray(y1[n:]), solver.t, data,
                                    system.fst)  # fmt: skip
            recorder.step(t_old, solver.t, gaps_prev, gaps, before, y1, dense, profile)
    for i in range(k):
        qi = np.ascontiguousarray(ys[i, :n])
        vi = np.ascontiguousarray(ys[i, n:])
        if system.has_function_drivers:
            system.update_drivers(ts[i], W)
        W[20][:] = states[i]  # the approach speeds valid at this sample
        u, p, *_ = core.accel_index1(qi, vi, ts[i], data, W, st.alpha, st.beta, aw, lw)
        record_sample(i, qi, vi, aw, lw, data, W, u, p, diss_s[i], work_s[i], q_ref, *buf.args())
        buf.s[i] = states[i].ravel()
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - c_start
    return buf.result(ts, k, integrator="adaptive", dt=math.nan, steps=steps, wall_s=wall,
                      cpu_s=cpu, stats={"method": st.method, "rtol": st.rtol, "atol": st.atol,
                                        "nfev": int(nfev + solver.nfev),
                                        "contact_events": events,
                                        "contact_intervals": intervals},
                      contact=None if recorder is None else recorder.record())  # fmt: skip


def _contact_step(system) -> float:
    """First step (s) of the adaptive integrator after a contact onset: ``CONTACT_STEP_FRACTION``
    of the smallest contact bound ``2 / omega`` (a Hertz-type law without an expected approach
    speed is linearised at 1 m/s here); ``inf`` without contacts."""
    h = math.inf
    for fe in system.contact_forces.values():
        w = fe.omega()
        if w is None:
            w = fe.omega(v_impact=1.0)
        if w:
            h = min(h, CONTACT_STEP_FRACTION * 2.0 / w)
    return h


def contact_fn(system, y, n, e):
    """Normal force (N) of contact element ``e`` at state ``y = [q; v]`` with the carried
    state."""
    pp = np.zeros(8)
    pq = np.zeros(8)
    y = np.ascontiguousarray(y)
    return core.contact_forces(system.fei[e], system.fef[e], system.fst[e], y[:n], y[n:], pp,
                               pq)[7]  # fmt: skip


def locate_force_end(system, dense, t0, t1, e, n):
    """Time in ``(t0, t1]`` at which the normal force of contact ``e`` drops to zero: bisection
    on the sign of the force along the dense output (:func:`ancf_beam.mbs.events.
    last_positive`; the force may end with a kink or, for a clipped law, at a corner), to
    :func:`ancf_beam.mbs.events.time_tolerance`. Returns the first time found without force."""
    from ancf_beam.mbs.events import last_positive

    def positive(t):
        return contact_fn(system, dense(t), n, e) > 0.0

    if positive(t1) or not positive(t0):
        return float(t1)
    return float(last_positive(positive, t0, t1)[1])


def locate_onset(system, dense, t0, t1, free, gaps0, gaps1, profile, n):
    """Earliest time in ``(t0, t1]`` at which one of the contact elements ``free`` (no impact
    recorded) reaches ``delta = 0``: a gap that is positive at ``t0`` and not at ``t1``, or at
    one of the ``profile`` times inside the step (a dip between the step ends), is bracketed by
    the last positive and the first non-positive time and its root located on the dense output
    (:func:`ancf_beam.mbs.events.bracket_root`, to :func:`~ancf_beam.mbs.events.
    time_tolerance`; the end of the bracket without gap is taken). A contact that already
    touches at ``t0`` and penetrates further starts at ``t0``. Returns ``(t, y, e)`` or None."""
    from ancf_beam.mbs.events import bracket_root

    gaps = np.zeros(len(system.forces))

    def gap(t, e):
        core.contact_gaps(np.ascontiguousarray(dense(t)[:n]), system.data, gaps)
        return gaps[e]

    best = None
    for e in free:
        if gaps0[e] <= 0.0:  # touching at the start of the step already
            if gaps1[e] < gaps0[e] or (profile is not None
                                       and np.any(-profile[1][:, e, 0] < gaps0[e])):  # fmt: skip
                te = t0
            else:
                continue
        else:
            ta, ga, tb, gb = t0, gaps0[e], t1, gaps1[e]
            if profile is not None:
                tp, prof = profile
                below = np.flatnonzero(-prof[1:, e, 0] <= 0.0)
                if len(below):
                    j = int(below[0]) + 1
                    ta, ga, tb, gb = tp[j - 1], -prof[j - 1, e, 0], tp[j], -prof[j, e, 0]
            if gb > 0.0:
                continue
            te = bracket_root(lambda t, e=e: gap(t, e), ta, tb, ga, gb)[1]
        if best is None or te < best[0]:
            best = (te, e)
    if best is None:
        return None
    te, e = best
    return te, dense(te), e
