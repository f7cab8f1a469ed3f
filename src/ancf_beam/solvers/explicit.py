"""Explicit central-difference dynamics with energy bookkeeping and a stability guard.

Scheme (``Delta_n = q_n - q_{n-1}``, constant mass ``M``, Rayleigh damping ``C = a M + b K0``)::

    M (q+ - 2q + q-) / dt^2 + C (q+ - q-) / (2 dt) = Q_g + Q_e(q)
    =>  (M + dt/2 C) (Delta+ - Delta-) = dt^2 F(q) - dt C Delta-

which is the textbook central-difference method with the damping term taken at the central
velocity (exact for the linear damping force). ``M + dt/2 C`` is constant: it is factorised once
(banded Cholesky) and the whole time loop runs in numba without allocation. Second-order start:
``q_{-1} = q0 - dt v0 + dt^2/2 a0``.

Energies at the sampled steps: kinetic ``T = 1/2 v^T M v`` with the central velocity
``v = (Delta+ + Delta-) / (2 dt)``, the nonlinear strain energy ``U`` (the same functional whose
gradient is the elastic force), the gravity potential ``V = -Q_g . (q - q_ref)`` and the work
``W_d`` dissipated by damping (accumulated with the half-step velocities). ``T + U + V + W_d`` is
conserved up to the discretisation error.

End of the run (:class:`~ancf_beam.solvers.timeloop.StepPlan`): when ``t_end / dt`` is not an
integer the last step is shortened to ``h < dt`` so that the record ends at ``t_end``
(:func:`last_step`): from the scheme's central velocity ``v_n`` and acceleration ``a_n`` at
``t_n``, ``q(t_n + h) = q_n + h v_n + h^2/2 a_n`` and ``v = v_n + h/2 (a_n + a(t_n + h))``
(velocity Verlet, second order like the scheme; the damping force of ``a(t_n + h)`` at the
predicted velocity). Every earlier step, and so every earlier sample, is the same as without
the shortened step; the stable ``dt`` is never exceeded.
"""

from __future__ import annotations

import logging
import math
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.borrow import borrow
from ancf_beam.linalg import (
    aligned_copies,
    aligned_zeros,
    row_factor,
    solve_xy_rows,
    sym_band_matvec,
    xy_cholesky,
)
from ancf_beam.results import DynamicsResult, InstabilityError
from ancf_beam.solvers.settings import EXPLICIT_INTEGRATOR, DynamicsSettings
from ancf_beam.solvers.timeloop import (
    Outputs,
    RunSpec,
    damage_args,
    final_outputs,
    outputs,
    result_from_outputs,
    run_chunks,
    step_plan,
    update_damage_with,
)

__all__ = [
    "STATUS_ENERGY",
    "STATUS_NONFINITE",
    "STATUS_OK",
    "CentralDifference",
    "last_step",
    "ExplicitState",
    "ExplicitWork",
    "run_chunk",
    "instability_error",
    "run_explicit",
    "setup_run",
    "simulate_explicit",
]

log = logging.getLogger(__name__)

STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_ENERGY = 2


class CentralDifference(NamedTuple):
    """Constant data of one central-difference run (a numba argument)."""

    kargs: tuple  # BeamModel.kernel_args()
    sa: kernels.SoaArgs  # structure-of-arrays force data (kernels.soa_args)
    g_free: np.ndarray  # gravity force on the free DOFs (N)
    q_ref: np.ndarray  # full reference coordinates (zero of the gravity potential)
    rfx: np.ndarray  # row factors (linalg.row_factor) of M + dt/2 C, x-components
    rfy: np.ndarray  # ... y-components
    mlb: np.ndarray  # mass, lower band storage, free DOFs
    clb: np.ndarray  # damping C, lower band storage ((1, n_free) placeholder when undamped)
    damped: bool
    dt: float  # s
    growth_limit: float  # energy growth guard, x peak kinetic energy
    damage_on: bool


class ExplicitState(NamedTuple):
    """State carried from chunk to chunk; the scalars live in arrays of one entry."""

    q: np.ndarray  # full coordinates q_n
    dlt: np.ndarray  # free DOFs: q_n - q_{n-1}
    dissipated: np.ndarray  # (1,) work dissipated by damping and damage so far (J)
    energy0: np.ndarray  # (1,) total energy at t = 0 (J)
    kinetic_max: np.ndarray  # (1,) peak kinetic energy so far (J)


class ExplicitWork(NamedTuple):
    """Scratch vectors of the time loop."""

    f: np.ndarray  # elastic force, full DOFs
    r: np.ndarray  # right-hand side, then Delta+ - Delta- (free DOFs)
    v: np.ndarray  # damping force, then the central velocity (free DOFs)
    mv: np.ndarray  # M v
    zx: np.ndarray  # mass-solve scratch, x- and y-components
    zy: np.ndarray


@njit(cache=True, nogil=True, error_model="numpy")
def _sample(cd, q, dlt, wk, energy, wd, out, i_sample):
    """Record the tip and the energies of the state at t_n (``wk.r`` holds Delta+ - Delta-).
    Returns (kinetic, total) energy."""
    v, mv, r = wk.v, wk.mv, wk.r
    g_free, q_ref, en_out, tip_out = cd.g_free, cd.q_ref, out.energy, out.tip
    nf = dlt.shape[0]
    dt = cd.dt
    for i in range(nf):
        v[i] = (2.0 * dlt[i] + r[i]) / (2.0 * dt)  # central velocity at t_n
    sym_band_matvec(cd.mlb, v, mv)
    kin = 0.0
    pot = 0.0
    for i in range(nf):
        kin += v[i] * mv[i]
        pot -= g_free[i] * (q[CLAMP + i] - q_ref[CLAMP + i])
    kin *= 0.5
    tot = kin + energy + pot + wd
    en_out[i_sample, 0] = kin
    en_out[i_sample, 1] = energy
    en_out[i_sample, 2] = pot
    en_out[i_sample, 3] = wd
    o_tip = q.shape[0] - 4
    tip_out[i_sample, 0] = q[o_tip]
    tip_out[i_sample, 1] = q[o_tip + 1]
    return kin, tot


@njit(cache=True, nogil=True, error_model="numpy")
def _snapshot(q, damage_on, dmg, out, i_snap):
    snap, dsnap = out.snap, out.dsnap
    for i in range(q.shape[0]):
        snap[i_snap, i] = q[i]
    if damage_on:
        for el in range(dmg.shape[0]):
            for g in range(dmg.shape[1]):
                dsnap[i_snap, el, g] = dmg[el, g]


@njit(cache=True, nogil=True, error_model="numpy")
def run_chunk(n_steps, step0, cd, st, out, wk, dargs):
    """Advance ``n_steps`` steps from step ``step0`` in place (``cd``: CentralDifference,
    ``st``: ExplicitState, ``out``: Outputs, ``wk``: ExplicitWork, ``dargs``: DamageArgs).
    Returns (status, steps done)."""
    cd, st, out, wk, dargs = borrow((cd, st, out, wk, dargs))
    q, dlt, f, r, v = st.q, st.dlt, wk.f, wk.r, wk.v
    g_free, clb, rfx, rfy, zx, zy = cd.g_free, cd.clb, cd.rfx, cd.rfy, wk.zx, wk.zy
    n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear = cd.kargs  # unpacked once per chunk
    soa, le, ea_t, ei_t, eps0_t, kap0_t, xs, gs, gb = cd.sa
    nf = dlt.shape[0]
    dt = cd.dt
    dt2 = dt * dt
    o_tip = q.shape[0] - 4
    wd, e0, tmax = st.dissipated[0], st.energy0[0], st.kinetic_max[0]
    i_sample, i_snap = out.i_sample[0], out.i_snap[0]
    status, done = STATUS_OK, n_steps
    for s in range(n_steps):
        step = step0 + s
        # state at t_n: q (full), dlt = q_n - q_{n-1}; energy = U(q_n), f = Q_e(q_n)
        if soa and xs.shape[0] == 1:  # the three layouts of kernels.soa_force_arrays
            energy = kernels.soa_force_fixed(
                q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, xs, gs, f
            )
        elif soa and len(gb) > 0:
            energy = kernels.soa_force_same(
                q, n_el, le, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, xs, gs, gb, f
            )
        elif soa:
            energy = kernels.soa_force_split(
                q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, xs, gs, f
            )
        else:
            energy = kernels.elastic_force(
                q, n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear, f
            )
        for i in range(nf):
            r[i] = dt2 * (f[CLAMP + i] + g_free[i])
        if cd.damped:
            sym_band_matvec(clb, dlt, v)
            acc = 0.0
            for i in range(nf):
                acc += dlt[i] * v[i]
                r[i] -= dt * v[i]
            if step > 0:
                wd += acc / dt  # work dissipated over [t_{n-1}, t_n]: v^T C v dt, v = dlt/dt
        solve_xy_rows(rfx, rfy, r, zx, zy)  # r = Delta+ - Delta-
        if step % out.sample_every == 0:
            kin, tot = _sample(cd, q, dlt, wk, energy, wd, out, i_sample)
            if step == 0:
                e0 = tot
            if kin > tmax:
                tmax = kin
            i_sample += 1
            if not math.isfinite(tot):
                status, done = STATUS_NONFINITE, s
                break
            if tot - e0 > cd.growth_limit * tmax and tot - e0 > 1e-12 * (abs(e0) + 1.0):
                status, done = STATUS_ENERGY, s
                break
        if step % out.snap_every == 0:
            _snapshot(q, cd.damage_on, dargs.dmg, out, i_snap)
            i_snap += 1
        for i in range(nf):
            dlt[i] += r[i]
            q[CLAMP + i] += dlt[i]
        if cd.damage_on:
            wd += update_damage_with(q, dargs)  # released strain energy counts as dissipated work
        if not math.isfinite(q[o_tip + 1]):
            status, done = STATUS_NONFINITE, s + 1
            break
    st.dissipated[0], st.energy0[0], st.kinetic_max[0] = wd, e0, tmax
    out.i_sample[0], out.i_snap[0] = i_sample, i_snap
    return status, done


@njit(cache=True, nogil=True, error_model="numpy")
def last_step(h, step, cd, st, out, wk, dargs, mfx, mfy, a):
    """The last step, ``h < dt``, from the state at ``t_n`` (``step``) to ``t_end``: records
    ``t_n`` when due (as :func:`run_chunk`), steps by velocity Verlet from the scheme's
    ``v_n = (Delta+ + Delta-) / (2 dt)`` and ``a_n = (Delta+ - Delta-) / dt^2`` and records the
    final state. ``mfx``, ``mfy``: row factors of the mass (x, y); ``a``: work vector. Returns
    the status."""
    q, dlt, f, r, v, mv = st.q, st.dlt, wk.f, wk.r, wk.v, wk.mv
    g_free, clb = cd.g_free, cd.clb
    nf = dlt.shape[0]
    dt = cd.dt
    dt2 = dt * dt
    wd, e0, tmax = st.dissipated[0], st.energy0[0], st.kinetic_max[0]
    i_sample, i_snap = out.i_sample[0], out.i_snap[0]
    status = STATUS_OK
    energy = kernels.force(q, cd.kargs, cd.sa, f)
    for i in range(nf):
        r[i] = dt2 * (f[CLAMP + i] + g_free[i])
    if cd.damped:
        sym_band_matvec(clb, dlt, v)
        acc = 0.0
        for i in range(nf):
            acc += dlt[i] * v[i]
            r[i] -= dt * v[i]
        if step > 0:
            wd += acc / dt
    solve_xy_rows(cd.rfx, cd.rfy, r, wk.zx, wk.zy)  # r = Delta+ - Delta-
    if step % out.sample_every == 0:
        kin, tot = _sample(cd, q, dlt, wk, energy, wd, out, i_sample)
        if step == 0:
            e0 = tot
        if kin > tmax:
            tmax = kin
        i_sample += 1
        if not math.isfinite(tot):
            status = STATUS_NONFINITE
    if step % out.snap_every == 0:
        _snapshot(q, cd.damage_on, dargs.dmg, out, i_snap)
        i_snap += 1
    for i in range(nf):
        vn = (2.0 * dlt[i] + r[i]) / (2.0 * dt)
        a[i] = r[i] / dt2
        v[i] = vn
        dlt[i] = h * vn + 0.5 * h * h * a[i]
        q[CLAMP + i] += dlt[i]
    for i in range(nf):
        r[i] = v[i] + h * a[i]  # predicted velocity at t_end
    if cd.damped:
        sym_band_matvec(clb, dlt, mv)
        acc = 0.0
        for i in range(nf):
            acc += dlt[i] * mv[i]
        wd += acc / h  # v^T C v h with the mean velocity v = dlt / h
        sym_band_matvec(clb, r, mv)
    if cd.damage_on:
        wd += update_damage_with(q, dargs)
    energy = kernels.force(q, cd.kargs, cd.sa, f)
    for i in range(nf):
        r[i] = f[CLAMP + i] + g_free[i] - (mv[i] if cd.damped else 0.0)
    solve_xy_rows(mfx, mfy, r, wk.zx, wk.zy)  # r = a(t_end)
    for i in range(nf):
        dlt[i] = dt * (v[i] + 0.5 * h * (a[i] + r[i]))  # _sample's velocity (2 dlt + r)/(2 dt)
        r[i] = 0.0
    kin, tot = _sample(cd, q, dlt, wk, energy, wd, out, i_sample)
    i_sample += 1
    if kin > tmax:
        tmax = kin
    _snapshot(q, cd.damage_on, dargs.dmg, out, i_snap)
    i_snap += 1
    if not math.isfinite(tot):
        status = STATUS_NONFINITE
    st.dissipated[0], st.energy0[0], st.kinetic_max[0] = wd, e0, tmax
    out.i_sample[0], out.i_snap[0] = i_sample, i_snap
    return status


def setup_run(model, settings, dt, q0, v0) -> tuple[CentralDifference, ExplicitState]:
    """Constant data and the initial state (second-order start) of a run."""
    q_ref = model.reference()
    q = q_ref.copy() if q0 is None else np.array(q0, dtype=float)
    nf = model.n_free
    v0f = np.zeros(nf) if v0 is None else np.asarray(v0, dtype=float)[-nf:]
    mlb = model.mass_free_lower_band
    alpha, beta = settings.damping
    damped = alpha != 0.0 or beta != 0.0
    clb = model.rayleigh_lower_band(alpha, beta) if damped else np.zeros((1, nf))
    # M + dt/2 C has no x-y coupling (C = a M + b K0 with K0 at the straight reference)
    cbx, cby, _, _ = xy_cholesky(mlb + 0.5 * dt * clb) if damped else model.mass_cholesky_xy
    # second-order start: Delta_0 = q0 - q_{-1} = dt v0 - dt^2/2 a0, a0 = M^-1 (F - C v0)
    f = model.elastic_force(q)[CLAMP:] + model.gravity_free
    if damped:
        cv = np.empty(nf)
        sym_band_matvec(clb, v0f, cv)
        f = f - cv
    a0 = sla.cho_solve_banded((model.mass_cholesky, True), f)
    dlt = dt * v0f - 0.5 * dt * dt * a0  # copied onto a cache line below
    kargs = model.kernel_args()
    sa = kernels.soa_args(kargs, model.le, model.case.damage.enabled)
    # the arrays of the time loop on cache lines (linalg.aligned_zeros): the step time of a
    # 20-element run varied by 25 % with numpy's placement of them
    q, dlt, g_free, rfx, rfy = aligned_copies(
        q, dlt, model.gravity_free, row_factor(cbx), row_factor(cby)
    )
    cd = CentralDifference(
        kargs,
        sa,
        g_free,
        q_ref,
        rfx,
        rfy,
        mlb,
        clb,
        damped,
        dt,
        float(settings.energy_growth_limit),
        model.case.damage.enabled,
    )
    return cd, ExplicitState(q, dlt, np.zeros(1), np.zeros(1), np.zeros(1))


def instability_error(
    status: int, step: int, dt: float, dt_critical: float | None
) -> InstabilityError:
    what = "non-finite coordinates" if status == STATUS_NONFINITE else "energy growth"
    crit = f"{dt_critical:.4e} s" if dt_critical else "unknown"
    return InstabilityError(
        f"explicit run unstable ({what}) at step {step} (t = {step * dt:.6g} s) with "
        f"dt = {dt:.4e} s; estimated critical dt = {crit}"
        + (f" (dt/dt_cr = {dt / dt_critical:.3f})" if dt_critical else "")
        + "; reduce dt or dynamics.dt_safety"
    )


def run_explicit(model: BeamModel, settings: DynamicsSettings, run: RunSpec) -> DynamicsResult:
    """The central-difference loop; see :func:`ancf_beam.solvers.simulate`.

    Raises :class:`InstabilityError` when the state becomes non-finite or the total energy grows
    by more than ``settings.energy_growth_limit`` times the peak kinetic energy.
    """
    dt = run.dt
    plan = step_plan(settings.t_end, dt, settings.sample_dt, settings.snapshot_dt)
    cd, st = setup_run(model, settings, dt, run.q0, run.v0)
    dargs, _ = damage_args(model)
    out: Outputs = outputs(plan, model, cd.damage_on)
    nf = model.n_free
    wk = ExplicitWork(*aligned_zeros([(model.n_dof,), (nf,), (nf,), (nf,), (nf // 2,), (nf // 2,)]))
    n, last = plan.n_steps, plan.last_dt
    regular = n if last == dt else n - 1  # full steps the numba loop takes

    def advance(step: int, todo: int) -> int:
        status, done = run_chunk(todo, step, cd, st, out, wk, dargs)
        if status != STATUS_OK:
            raise instability_error(status, step + done, dt, run.dt_critical)
        return step + done

    def report(step: int, rate: float) -> None:
        eta = (regular - step) / rate
        log.info(
            "t = %.4g / %.4g s, %.3g steps/s, ETA %.0f s", step * dt, settings.t_end, rate, eta
        )

    wall, cpu = run_chunks(
        advance,
        regular,
        first=2000,
        least=1000,
        progress=run.progress,
        interval_s=run.progress_interval_s,
        report=report,
    )
    if last == dt:
        # one more pass of the loop records the state at t_end (its own step is discarded)
        status, _ = run_chunk(1, n, cd, st, final_outputs(out, n, False, False), wk, dargs)
    else:
        mfx, mfy = (row_factor(c) for c in model.mass_cholesky_xy[:2])
        status = last_step(last, n - 1, cd, st, out, wk, dargs, mfx, mfy, np.empty(nf))
    if status != STATUS_OK:
        raise instability_error(status, n, dt, run.dt_critical)
    return result_from_outputs(
        out,
        dt,
        settings.t_end,
        steps=n,
        wall_s=wall,
        cpu_s=cpu,
        energy_roundoff=model.energy_roundoff(),
    )


def simulate_explicit(
    model: BeamModel,
    t_end: float,
    dt: float,
    dt_critical: float | None = None,
    damping: tuple[float, float] = (0.0, 0.0),
    sample_dt: float | None = None,
    snapshot_dt: float | None = None,
    energy_growth_limit: float | None = None,
    q0: np.ndarray | None = None,
    v0: np.ndarray | None = None,
    progress: bool = True,
    progress_interval_s: float = 5.0,
) -> DynamicsResult:
    """Keyword form of :func:`ancf_beam.solvers.simulate` for a central-difference run at a
    given ``dt`` (s) up to ``t_end`` (s), undamped unless ``damping`` is given, from ``q0``
    (default: the reference) and ``v0`` (default: rest). ``dt`` is not checked against
    ``dt_critical``, which only goes into the instability message; sampling and the energy
    guard default to the case's ``dynamics`` section."""
    settings = DynamicsSettings.from_case(
        model.case,
        integrator=EXPLICIT_INTEGRATOR,
        t_end=t_end,
        dt=dt,
        damping=damping,
        sample_dt=sample_dt,
        snapshot_dt=snapshot_dt,
        energy_growth_limit=energy_growth_limit,
        force=True,
    )
    run = RunSpec(dt, dt_critical, q0, v0, progress, progress_interval_s)
    return run_explicit(model, settings, run)
