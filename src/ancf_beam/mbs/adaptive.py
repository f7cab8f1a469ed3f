"""The adaptive integrator of a multibody system: the index-1 right-hand side under a scipy
error-controlled integrator, contacts as located events (module docstring of
:mod:`ancf_beam.mbs.integrators`; :class:`ancf_beam.mbs.stepping.AdaptiveRecorder` keeps the
contact record). :func:`integrate_adaptive` runs it; :func:`contact_fn`,
:func:`locate_force_end` and :func:`locate_onset` are its event functions."""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit, types
from numba.experimental import structref

from ancf_beam.errors import ConstraintSingularityError, InstabilityError
from ancf_beam.kernel_cache import run_clock
from ancf_beam.mbs import core
from ancf_beam.mbs.settings import CONTACT_STEP_FRACTION
from ancf_beam.mbs.stepping import (
    AdaptiveRecorder,
    contact_gap_rates,
    dissipation_kinks,
    gauss_nodes,
    step_dissipation,
)
from ancf_beam.mbs.timeloop import (
    SampleBuffers,
    drive_power,
    n_sample_times,
    raise_overlap,
    record_sample,
    report_time,
    sample_times,
)
from ancf_beam.resources import MAX_ADAPTIVE_STEPS, check_mechanism
from ancf_beam.results import MechanismResult

__all__ = ["contact_fn", "integrate_adaptive", "locate_force_end", "locate_onset"]

_EPS = float(np.finfo(float).eps)

#: restarts at a located onset that do not advance time before the run is declared stuck (each
#: contact element can start an impact at most once at a given time)
_STALL_RESTARTS = 4


@structref.register
class _KernelDataType(types.StructRef):
    pass


class _KernelData(structref.StructRefProxy):
    """The system's constant data ``S`` and work tuple ``W`` in one numba object, for the
    kernels called from Python at every stage, step or sample: a call unboxes one pointer
    instead of every array of the two tuples (about 0.1 us each; 56 and 22 arrays for a rigid
    slider-crank: 12 us per right-hand side before, 8-10 us now)."""


structref.define_proxy(_KernelData, _KernelDataType, ["S", "W"])


@njit(cache=True)
def _kernel_data(S, W):
    return _KernelData(S, W)


@njit(cache=True, nogil=True, error_model="numpy")
def _accel_boxed(q, v, t, box, alpha, beta, a, lam):
    return core.accel_index1(q, v, t, box.S, box.W, alpha, beta, a, lam)


@njit(cache=True, nogil=True, error_model="numpy")
def _sample_boxed(i, q, v, t, box, alpha, beta, a, lam, diss, work, q_ref, bufs):
    """Sample ``i`` re-evaluated at ``(q, v)`` (accelerations, multipliers, energies) into the
    buffers."""
    res = core.accel_index1(q, v, t, box.S, box.W, alpha, beta, a, lam)
    record_sample(i, q, v, a, lam, box.S, box.W, res[0], res[1], diss, work, q_ref, bufs)


@njit(cache=True, nogil=True, error_model="numpy")
def _ivp_rhs(t, y, box, alpha, beta, a, lam, out):
    """First-order right-hand side ``[v; a(q, v, t)]`` of the index-1 form (``box``: the
    system's :class:`_KernelData`); returns the pivot ratio of the constraint Schur complement
    (0: singular)."""
    n = a.shape[0]
    q = y[:n]
    v = y[n:]
    res = core.accel_index1(q, v, t, box.S, box.W, alpha, beta, a, lam)
    for i in range(n):
        out[i] = v[i]
        out[n + i] = a[i]
    return res[4]


def integrate_adaptive(
    system, st, q, v, a, lam, progress: bool = False, progress_interval_s: float = 5.0
) -> MechanismResult:
    """The adaptive integrator (module docstring); contacts run in event mode (``C_EVENTS``)
    for the duration of the run. ``progress``: the simulated time, steps and an ETA logged
    every ``progress_interval_s``."""
    contacts = system.contact_indices
    saved = system.fef[contacts, core.C_EVENTS].copy()
    system.fef[contacts, core.C_EVENTS] = 1.0
    try:
        run = _AdaptiveRun(system, st, q, v)
        run.march(progress_interval_s if progress else math.inf)
        return run.result()
    finally:
        system.fef[contacts, core.C_EVENTS] = saved


class _AdaptiveRun:
    """One adaptive run: the scipy integrator (re-created at every contact event, so that each
    piece it integrates is smooth), the samples filled from its dense output, the work of the
    drives and of the contacts booked per step, and the contact bookkeeping."""

    def __init__(self, system, st, q, v):
        import scipy.integrate as si

        self.system, self.st = system, st
        self.n = n = system.n
        self.W = system.work()
        self.aw = np.zeros(n)
        self.lw = np.zeros(system.m)
        self.data = system.data
        self.box = _kernel_data(self.data, self.W)
        check_mechanism(system, st, n_sample_times(st.t_end, st.sample_dt), None)
        self.ts = sample_times(st.t_end, st.sample_dt)
        n_samples = len(self.ts)
        self.buf = SampleBuffers(n_samples, n, system.m, system.fst.size)
        self.q_ref = system.q0.copy()
        self.method = getattr(si, st.method)
        # the state the integrator (re)starts from (the start, a located contact event: states
        # the run has reached) and the last singular constraint Jacobian met at a trial state
        # of the current step
        self.start = (0.0, np.concatenate([q, v]))
        self.singular = None
        self.solver = self.method(
            self.fun, 0.0, np.concatenate([q, v]), st.t_end, rtol=st.rtol, atol=st.atol
        )
        self.ys = np.zeros((n_samples, 2 * n))
        self.ys[0] = np.concatenate([q, v])
        self.states = np.zeros((n_samples, *system.fst.shape))
        self.states[0] = system.fst
        self.contacts = system.contact_indices
        # the work the contacts and dampers dissipate is booked on the dense output
        self.dissipates = bool(system.contact_indices or system.damper_indices)
        self.gaps = np.zeros(len(system.forces))
        self.rates = np.zeros(len(system.forces))
        core.contact_gaps(q, self.data, self.gaps)
        self.fn_prev = np.zeros(len(system.forces))
        for e in self.contacts:
            self.fn_prev[e] = contact_fn(system, np.concatenate([q, v]), n, e)
        self.intervals = []  # (element, onset time, time the normal force returns to zero)
        self.recorder = None
        if self.contacts:
            self.recorder = AdaptiveRecorder(system)
            self.recorder.open_initial(q, v)
            contact_gap_rates(q, v, self.data, self.gaps, self.rates)
        self.k = 1  # samples filled
        self.steps = 0
        self.events = 0
        self.stalls = 0
        self.nfev = 0  # of the integrators before the last restart
        self.diss = 0.0  # work dissipated by the contacts up to the start of the current step
        self.work = 0.0  # work fed in by the drives, likewise
        self.diss_s = np.zeros(n_samples)
        self.work_s = np.zeros(n_samples)
        self.drives = any(j.works for j in system.joints)
        self.h_contact = _contact_step(system)
        # a run that starts in contact (an onset recorded at t = 0) takes at most the step that
        # follows a located onset (_restart) first: scipy chooses its first step from the
        # forces at the start, zero at delta = 0, and the stages of a step far longer than the
        # contact can all lie where the bodies are apart (passed through each other), so that
        # the error estimate sees free flight and accepts it (two-body Hertz impact, m1 = 1 g:
        # a first step of 1.28 ms on a 20 us contact, 1.3 mm of penetration, restitution 685).
        # scipy's own first step is kept when it is not longer.
        self.first_cap = None
        if math.isfinite(self.h_contact) and any(
            system.fst[e, core.S_FLAG] != 0.0 for e in self.contacts
        ):
            self.first_cap = min(self.h_contact, st.t_end)

    def fun(self, t, y):
        """The index-1 right-hand side for scipy. A singular constraint Jacobian at the state
        the integrator starts from raises. At a trial state of a step (a stage of a step that
        may be far too long: scipy's first step is not bounded by the beams' frequencies, and a
        stage of the spin-up's first step, 0.07 s, moved the beam by 1e21 m) the derivative is
        not finite instead, so that the integrator rejects the step and retries a shorter one;
        a step that cannot be shortened further reports the singularity (:meth:`_step`)."""
        system, st = self.system, self.st
        if system.has_function_drivers:
            system.update_drivers(t, self.W)
        out = np.empty(2 * self.n)
        if _ivp_rhs(t, y, self.box, st.alpha, st.beta, self.aw, self.lw, out) == 0.0:
            msg = f"adaptive: the constraint Jacobian is singular at t = {t:.6g} s"
            t0, y0 = self.start
            if t == t0 and np.array_equal(y, y0):
                raise ConstraintSingularityError(msg)
            self.singular = msg
            out.fill(np.nan)
        return out

    def step_work(self, dense, a, b, kinks=()):
        """Work (J) of the drives over ``[a, b]`` inside a step: Gauss-Legendre on the dense
        output (the power ``lam . Phi_t`` from the index-1 solve at each node)."""
        if not (self.drives and b > a):
            return 0.0
        system, st, n, W = self.system, self.st, self.n, self.W
        tq, wq = gauss_nodes(a, b, kinks)
        yq = np.asarray(dense(tq)).T
        total = 0.0
        for tj, wj, yj in zip(tq, wq, yq, strict=True):
            if system.has_function_drivers:
                system.update_drivers(tj, W)
            _accel_boxed(
                np.ascontiguousarray(yj[:n]),
                np.ascontiguousarray(yj[n:]),
                tj,
                self.box,
                st.alpha,
                st.beta,
                self.aw,
                self.lw,
            )
            total += wj * drive_power(self.lw, W[7])
        return total

    def fill(self, dense, t_stop, t_from=0.0, kinks=()):
        """Fill the samples up to ``t_stop`` from ``dense`` (a step that began at ``t_from``),
        with the work booked before the step plus that of the step up to each sample."""
        system, ts, t_end = self.system, self.ts, self.st.t_end
        while self.k < len(ts) and ts[self.k] <= t_stop + 1e-12 * t_end:
            k = self.k
            self.ys[k] = dense(min(ts[k], t_stop))
            self.states[k] = system.fst
            t_k = min(ts[k], t_stop)
            if self.dissipates:
                self.diss_s[k] = self.diss + step_dissipation(
                    system, dense, t_from, t_k, system.fst, kinks
                )
            self.work_s[k] = self.work + self.step_work(dense, t_from, t_k, kinks)
            self.k += 1

    def march(self, interval: float = math.inf) -> None:
        """Step to ``t_end``; a step in which a contact starts or its force ends is cut at the
        located event and the integrator restarted there. Progress is logged every
        ``interval`` seconds."""
        self.t_start = run_clock()
        self.c_start = time.process_time()
        report = [time.perf_counter(), interval]
        while self.solver.status == "running":
            report_time(
                "adaptive", self.solver.t, self.st.t_end, self.steps, 1, self.t_start, report
            )
            t_old = self.solver.t
            self._step(t_old)
            y1 = self.solver.y
            onset, profile, dense, gaps_prev = self._scan_contacts(t_old, y1)
            cut = self._event(onset, dense, t_old, y1)
            if cut is not None:
                self._restart(cut, onset, dense, profile, t_old, gaps_prev)
            else:
                self._accept(t_old, y1, dense, profile, gaps_prev)

    def _step(self, t_old) -> None:
        """One step of the scipy integrator (the first one of a run that starts in contact at
        most ``first_cap``: see ``__init__``); a failed step or a run of more than
        ``MAX_ADAPTIVE_STEPS`` steps raises :class:`InstabilityError`, a step that failed after
        meeting a singular constraint Jacobian :class:`ConstraintSingularityError`."""
        st = self.st
        self._advance()
        if self.first_cap is not None:
            cap, self.first_cap = self.first_cap, None
            if self.solver.t - t_old > cap:  # retried from the start with the capped step
                self.nfev += self.solver.nfev
                t0, y0 = self.start
                self.solver = self.method(
                    self.fun, t0, y0, st.t_end, rtol=st.rtol, atol=st.atol, first_step=cap
                )
                self._advance()
        solver = self.solver
        self.steps += 1
        if self.steps > MAX_ADAPTIVE_STEPS:  # its step count is only known as it runs
            raise InstabilityError(
                f"adaptive ({st.method}): more than {MAX_ADAPTIVE_STEPS:.0e} steps by t = "
                f"{solver.t:.6g} s of t_end = {st.t_end:g} s (steps of {solver.t - t_old:.3g} s"
                "): the run would not end in the time a mechanism run may take (docs/design.md, "
                "'Memory and time'); shorten t_end or loosen solver.rtol"
            )

    def _advance(self) -> None:
        """``solver.step()``; a failed step raises (:meth:`_step`)."""
        solver, st = self.solver, self.st
        self.singular = None
        with np.errstate(invalid="ignore", over="ignore"):  # rejected trial stages (fun)
            msg = solver.step()
        if solver.status == "failed":
            if self.singular is not None:  # no shorter step avoided the singular Jacobian
                raise ConstraintSingularityError(f"{self.singular} ({st.method}: {msg})")
            raise InstabilityError(
                f"adaptive ({st.method}), system '{self.system.name}': {msg} at "
                f"t = {solver.t:.6g} s"
            )

    def _scan_contacts(self, t_old, y1):
        """After a step to ``y1``: the new gaps and their rates, the contact profile of the
        step where needed and the earliest contact onset inside it. Returns ``(onset, profile,
        dense, gaps_prev)`` (all None without contact elements)."""
        if not self.contacts:
            return None, None, None, None
        system, solver, n = self.system, self.solver, self.n
        fst = system.fst
        dense = solver.dense_output()
        gaps_prev = self.gaps.copy()
        rates_prev = self.rates.copy()
        gaps, rates = self.gaps, self.rates
        contact_gap_rates(
            np.ascontiguousarray(y1[:n]), np.ascontiguousarray(y1[n:]), self.data, gaps, rates
        )
        h = solver.t - t_old
        free = [e for e in self.contacts if fst[e, core.S_FLAG] == 0.0]
        # sample the step where a contact is active, or where a free one could close
        # within it at its end speeds (a gap that dips below zero between the step ends)
        near = any(fst[e, core.S_FLAG] != 0.0 for e in self.contacts) or any(
            min(gaps_prev[e], gaps[e]) <= h * max(abs(rates_prev[e]), abs(rates[e])) for e in free
        )
        profile = self.recorder.profile(dense, t_old, solver.t, fst) if near else None
        onset = None
        if free:
            onset = locate_onset(system, dense, t_old, solver.t, free, gaps_prev, gaps, profile, n)
        return onset, profile, dense, gaps_prev

    def _event(self, onset, dense, t_old, y1):
        """The event that ends the step early, ``(time, element, kind)`` with kind "onset" or
        "end" (the end of positive contact force, located on the dense output), or None."""
        if onset is not None:
            return (onset[0], onset[2], "onset")
        if not self.contacts:
            return None
        system, n, contacts = self.system, self.n, self.contacts
        fn1 = np.array([contact_fn(system, y1, n, e) for e in contacts])
        ended = [
            (locate_force_end(system, dense, t_old, self.solver.t, e, n), e)
            for e, f1 in zip(contacts, fn1, strict=True)
            if self.fn_prev[e] > 0.0 and f1 <= 0.0
        ]
        if ended:
            t_fe, e = min(ended)
            return (t_fe, e, "end")
        self.fn_prev[contacts] = fn1
        return None

    def _restart(self, cut, onset, dense, profile, t_old, gaps_prev) -> None:
        """End the step at the event ``cut``: fill the samples and book the work up to it,
        update the contact state there and restart the integrator (each piece is smooth)."""
        system, st, n, data = self.system, self.st, self.n, self.data
        tc, e, kind = cut
        self.stalls = self.stalls + 1 if tc <= t_old else 0
        if self.stalls > _STALL_RESTARTS * len(self.contacts):
            raise InstabilityError(
                f"adaptive ({st.method}), system '{system.name}': {self.stalls} contact events "
                f"at t = {tc:.9g} s without progress (contact element "
                f"'{system.forces[e].name}')"
            )
        yc = onset[1] if kind == "onset" else dense(tc)
        kinks = dissipation_kinks(system, dense, profile, tc, system.fst)
        self.fill(dense, tc, t_old, kinks)
        self.diss += step_dissipation(system, dense, t_old, tc, system.fst, kinks)
        self.work += self.step_work(dense, t_old, tc, kinks)
        qc = np.ascontiguousarray(yc[:n])
        vc = np.ascontiguousarray(yc[n:])
        before = system.fst.copy()
        if profile is not None:
            profile = self.recorder.profile(dense, t_old, tc, before)
        if kind == "onset":
            ddot = system.contact_forces[e].evaluate(qc, vc)["delta_dot"]
            core.contact_onset(e, float(ddot), tc, system.fef, system.fst)
            self.events += 1
        else:
            self.intervals.append((e, float(system.fst[e, core.S_T0]), float(tc)))
        core.update_force_state(qc, vc, tc, data, system.fst)
        self._check_overlap(qc, tc)
        contact_gap_rates(qc, vc, data, self.gaps, self.rates)
        self.recorder.step(t_old, tc, gaps_prev, self.gaps, before, yc, dense, profile)
        for e2 in self.contacts:
            self.fn_prev[e2] = contact_fn(system, yc, n, e2)
        if st.t_end - tc > 4.0 * _EPS * st.t_end:  # else the old solver ended at t_end
            self.nfev += self.solver.nfev
            first = None
            if kind == "onset" and math.isfinite(self.h_contact):
                first = min(self.h_contact, st.t_end - tc)
            self.start = (tc, yc)
            self.solver = self.method(
                self.fun, tc, yc, st.t_end, rtol=st.rtol, atol=st.atol, first_step=first
            )

    def _accept(self, t_old, y1, dense, profile, gaps_prev) -> None:
        """Take the whole step to ``y1``: fill the samples inside it, book the drives' and the
        contacts' work and update the contact state."""
        system, solver, n = self.system, self.solver, self.n
        contacts = self.contacts
        kinks = dissipation_kinks(system, dense, profile, solver.t, system.fst) if contacts else []
        if self.k < len(self.ts) and self.ts[self.k] <= solver.t + 1e-12 * self.st.t_end:
            self.fill(solver.dense_output(), solver.t, t_old, kinks)
        if self.drives:
            self.work += self.step_work(
                solver.dense_output() if dense is None else dense, t_old, solver.t, kinks
            )
        if self.dissipates:
            d = solver.dense_output() if dense is None else dense
            self.diss += step_dissipation(system, d, t_old, solver.t, system.fst, kinks)
        if contacts:
            before = system.fst.copy()
            q1 = np.ascontiguousarray(y1[:n])
            v1 = np.ascontiguousarray(y1[n:])
            core.update_force_state(q1, v1, solver.t, self.data, system.fst)
            self._check_overlap(q1, solver.t)
            self.recorder.step(t_old, solver.t, gaps_prev, self.gaps, before, y1, dense, profile)

    def _check_overlap(self, q, t) -> None:
        """Stop the run (:class:`~ancf_beam.errors.ContactOverlapError`) when the state ``q``
        at ``t`` reached by an accepted step or event leaves two discs overlapping deeper than
        their contact geometry describes (:func:`ancf_beam.mbs.core.contact_breach`)."""
        if core.contact_breach(q, self.data) >= 0:
            raise_overlap(self.system, q, t, f"adaptive ({self.st.method})")

    def result(self) -> MechanismResult:
        """The samples re-evaluated (accelerations, multipliers, energies) into the result."""
        system, st, n, W = self.system, self.st, self.n, self.W
        bufs = self.buf.args()
        for i in range(self.k):
            qi = np.ascontiguousarray(self.ys[i, :n])
            vi = np.ascontiguousarray(self.ys[i, n:])
            if system.has_function_drivers:
                system.update_drivers(self.ts[i], W)
            W[20][:] = self.states[i]  # the approach speeds valid at this sample
            _sample_boxed(
                i,
                qi,
                vi,
                self.ts[i],
                self.box,
                st.alpha,
                st.beta,
                self.aw,
                self.lw,
                self.diss_s[i],
                self.work_s[i],
                self.q_ref,
                bufs,
            )
            self.buf.s[i] = self.states[i].ravel()
        wall = run_clock() - self.t_start
        cpu = time.process_time() - self.c_start
        stats = {
            "method": st.method,
            "rtol": st.rtol,
            "atol": st.atol,
            "nfev": int(self.nfev + self.solver.nfev),
            "contact_events": self.events,
            "contact_intervals": self.intervals,
        }
        contact = None if self.recorder is None else self.recorder.record()
        return self.buf.result(
            self.ts,
            self.k,
            integrator="adaptive",
            dt=math.nan,
            steps=self.steps,
            wall_s=wall,
            cpu_s=cpu,
            stats=stats,
            contact=contact,
        )


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
    return core.contact_forces(system.fei[e], system.fef[e], system.fst[e], y[:n], y[n:], pp, pq)[7]


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
            if gaps1[e] < gaps0[e] or (
                profile is not None and np.any(-profile[1][:, e, 0] < gaps0[e])
            ):
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
