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
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import scipy.linalg as sla
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.beam.damage import DamageState, update_damage
from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.linalg import row_factor, solve_xy_rows, sym_band_matvec, xy_cholesky
from ancf_beam.results import DynamicsResult, InstabilityError

log = logging.getLogger(__name__)

STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_ENERGY = 2


@njit(cache=True, nogil=True, error_model="numpy")
def _run_chunk(
    q,
    dlt,
    n_steps,
    step0,
    dt,
    n_el,
    spa,
    spb,
    sppb,
    ea_w,
    ei_w,
    eps0,
    kap0,
    linear,
    g_free,
    q_ref,
    rfx,
    rfy,
    zx,
    zy,
    mlb,
    clb,
    damped,
    sample_every,
    snap_every,
    tip_out,
    en_out,
    snap_out,
    i_sample,
    i_snap,
    wd,
    e0,
    tmax,
    growth_limit,
    f,
    r,
    v,
    mv,
    damage_on,
    half_h,
    dmg_par,
    hist,
    dmg,
    ea_w0,
    ei_w0,
    dsnap_out,
):
    """Advance ``n_steps`` steps in place. Returns (status, steps_done, i_sample, i_snap, wd,
    e0, tmax). ``q`` is the full vector; ``dlt`` (free DOFs) holds ``q_n - q_{n-1}``."""
    nf = dlt.shape[0]
    dt2 = dt * dt
    o_tip = q.shape[0] - 4
    for s in range(n_steps):
        step = step0 + s
        # state at t_n: q (full), dlt = q_n - q_{n-1}; energy = U(q_n), f = Q_e(q_n)
        energy = kernels.elastic_force(q, n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear, f)
        for i in range(nf):
            r[i] = dt2 * (f[CLAMP + i] + g_free[i])
        if damped:
            sym_band_matvec(clb, dlt, v)
            acc = 0.0
            for i in range(nf):
                acc += dlt[i] * v[i]
                r[i] -= dt * v[i]
            if step > 0:
                wd += acc / dt  # work dissipated over [t_{n-1}, t_n]: v^T C v dt, v = dlt/dt
        solve_xy_rows(rfx, rfy, r, zx, zy)  # r = Delta+ - Delta-
        if step % sample_every == 0:
            for i in range(nf):
                v[i] = (2.0 * dlt[i] + r[i]) / (2.0 * dt)  # central velocity at t_n
            sym_band_matvec(mlb, v, mv)
            kin = 0.0
            pot = 0.0
            for i in range(nf):
                kin += v[i] * mv[i]
                pot -= g_free[i] * (q[CLAMP + i] - q_ref[CLAMP + i])
            kin *= 0.5
            tot = kin + energy + pot + wd
            if step == 0:
                e0 = tot
            if kin > tmax:
                tmax = kin
            en_out[i_sample, 0] = kin
            en_out[i_sample, 1] = energy
            en_out[i_sample, 2] = pot
            en_out[i_sample, 3] = wd
            tip_out[i_sample, 0] = q[o_tip]
            tip_out[i_sample, 1] = q[o_tip + 1]
            i_sample += 1
            if not math.isfinite(tot):
                return STATUS_NONFINITE, s, i_sample, i_snap, wd, e0, tmax
            if tot - e0 > growth_limit * tmax and tot - e0 > 1e-12 * (abs(e0) + 1.0):
                return STATUS_ENERGY, s, i_sample, i_snap, wd, e0, tmax
        if step % snap_every == 0:
            for i in range(q.shape[0]):
                snap_out[i_snap, i] = q[i]
            if damage_on:
                for el in range(n_el):
                    for g in range(dmg.shape[1]):
                        dsnap_out[i_snap, el, g] = dmg[el, g]
            i_snap += 1
        for i in range(nf):
            dlt[i] += r[i]
            q[CLAMP + i] += dlt[i]
        if damage_on:
            # energy released by damage growth counts as dissipated work
            wd += update_damage(
                q, n_el, spb, sppb, eps0, kap0, linear, half_h, dmg_par[0], dmg_par[1],
                dmg_par[2], hist, dmg, ea_w0, ei_w0, ea_w, ei_w,
            )  # fmt: skip
        if not math.isfinite(q[o_tip + 1]):
            return STATUS_NONFINITE, s + 1, i_sample, i_snap, wd, e0, tmax
    return STATUS_OK, n_steps, i_sample, i_snap, wd, e0, tmax


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
    """Central-difference run from ``q0`` (default: straight reference) released with ``v0``
    (default: rest) under gravity, up to ``t_end`` (s) with step ``dt`` (s).

    Raises :class:`InstabilityError` when the state becomes non-finite or the total energy grows
    by more than ``energy_growth_limit`` times the peak kinetic energy.
    """
    dyn = model.case.dynamics
    sample_dt = dyn.sample_dt if sample_dt is None else sample_dt
    snapshot_dt = dyn.snapshot_dt if snapshot_dt is None else snapshot_dt
    growth = dyn.energy_growth_limit if energy_growth_limit is None else energy_growth_limit
    if not (dt > 0 and math.isfinite(dt)):
        raise ValueError(f"time step must be a positive number, got {dt!r}")
    if not t_end > 0:
        raise ValueError(f"t_end must be > 0, got {t_end!r}")
    alpha, beta = damping
    n_steps = int(math.ceil(t_end / dt - 1e-9))
    sample_every = max(1, int(round(sample_dt / dt)))
    snap_every = max(1, int(round(snapshot_dt / dt)))
    n_samples = n_steps // sample_every + 1
    n_snaps = n_steps // snap_every + 1

    q_ref = model.reference()
    q = q_ref.copy() if q0 is None else np.array(q0, dtype=float)
    nf = model.n_free
    v0f = np.zeros(nf) if v0 is None else np.asarray(v0, dtype=float)[-nf:]
    mlb = model.mass_free_lower_band
    damped = alpha != 0.0 or beta != 0.0
    clb = model.rayleigh_lower_band(alpha, beta) if damped else np.zeros((1, nf))
    # M + dt/2 C has no x-y coupling (C = a M + b K0 with K0 at the straight reference)
    cbx, cby, _, _ = xy_cholesky(mlb + 0.5 * dt * clb) if damped else model.mass_cholesky_xy
    ceff = (row_factor(cbx), row_factor(cby), np.empty(nf // 2), np.empty(nf // 2))
    # second-order start: Delta_0 = q0 - q_{-1} = dt v0 - dt^2/2 a0, a0 = M^-1 (F - C v0)
    f = model.elastic_force(q)[CLAMP:] + model.gravity_free
    if damped:
        cv = np.empty(nf)
        sym_band_matvec(clb, v0f, cv)
        f = f - cv
    a0 = sla.cho_solve_banded((model.mass_cholesky, True), f)
    dlt = np.ascontiguousarray(dt * v0f - 0.5 * dt * dt * a0)

    tip_out = np.zeros((n_samples, 2))
    en_out = np.zeros((n_samples, 4))
    snap_out = np.zeros((n_snaps, model.n_dof))
    damage_on = model.case.damage.enabled
    if damage_on:
        dstate = DamageState(model)
        dmg_args = (
            dstate.half_h,
            np.array([dstate.spec.threshold, dstate.spec.softening, dstate.spec.d_max]),
            dstate.hist, model.damage, model.ea_w0, model.ei_w0,
            np.zeros((n_snaps,) + model.damage.shape),
        )  # fmt: skip
    else:
        z2 = np.zeros((1, 1))
        dmg_args = (z2, np.zeros(3), z2, z2, z2, z2, np.zeros((1, 1, 1)))
    scratch_f = np.empty(model.n_dof)
    r = np.empty(nf)
    v = np.empty(nf)
    mv = np.empty(nf)
    args = model.kernel_args()

    i_sample = i_snap = 0
    wd = e0 = tmax = 0.0
    step = 0
    t_start = time.perf_counter()
    c_start = time.process_time()
    t_last = t_start
    # chunks between progress reports; the first chunk is short to calibrate the speed
    chunk = min(n_steps + 1, 2000)
    total = n_steps + 1  # steps 0..n_steps inclusive: the last one only records the final state
    while step < total:
        todo = min(chunk, total - step)
        status, done, i_sample, i_snap, wd, e0, tmax = _run_chunk(
            q, dlt, todo, step, dt, *args, model.gravity_free, q_ref, *ceff, mlb, clb, damped,
            sample_every, snap_every, tip_out, en_out, snap_out, i_sample, i_snap, wd, e0, tmax,
            growth, scratch_f, r, v, mv, damage_on, *dmg_args,
        )  # fmt: skip
        step += done
        if status != STATUS_OK:
            what = "non-finite coordinates" if status == STATUS_NONFINITE else "energy growth"
            crit = f"{dt_critical:.4e} s" if dt_critical else "unknown"
            raise InstabilityError(
                f"explicit run unstable ({what}) at step {step} (t = {step * dt:.6g} s) with "
                f"dt = {dt:.4e} s; estimated critical dt = {crit}"
                + (f" (dt/dt_cr = {dt / dt_critical:.3f})" if dt_critical else "")
                + "; reduce dt or dynamics.dt_safety"
            )
        now = time.perf_counter()
        rate = step / max(now - t_start, 1e-9)
        chunk = max(1000, int(rate * min(progress_interval_s, 2.0)))
        if progress and now - t_last >= progress_interval_s and step < total:
            eta = (total - step) / rate
            log.info("t = %.4g / %.4g s, %.3g steps/s, ETA %.0f s", step * dt, t_end, rate, eta)
            t_last = now
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - c_start
    return DynamicsResult.from_buffers(
        tip_out,
        en_out,
        snap_out,
        dmg_args[-1] if damage_on else None,
        i_sample,
        i_snap,
        sample_every,
        snap_every,
        dt,
        steps=n_steps,
        wall_s=wall,
        cpu_s=cpu,
    )
