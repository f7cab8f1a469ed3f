"""Central differences (velocity Verlet) on the index-1 form of a multibody system with
Baumgarte stabilisation (module docstring of :mod:`ancf_beam.mbs.integrators`): the numba loop
:func:`cd_chunk` and its driver :func:`run_explicit`."""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ancf_beam.borrow import borrow
from ancf_beam.errors import ConstraintSingularityError, InstabilityError
from ancf_beam.mbs import core
from ancf_beam.mbs.settings import explicit_dt_bound
from ancf_beam.mbs.timeloop import (
    NONFINITE,
    OK,
    OVERLAP,
    SINGULAR,
    drive_power,
    log,
    raise_overlap,
    record_sample,
    release_damage,
    report_progress,
    step_end,
)

__all__ = ["cd_chunk", "run_explicit"]


@njit(cache=True, nogil=True, error_model="numpy")
def cd_chunk(
    n_steps,
    step0,
    dt,
    n_total,
    h_last,
    t_end,
    q,
    v,
    a,
    lam,
    S,
    W,
    alpha,
    beta,
    proj,
    ptol,
    lref,
    vs,
    diss,
    work,
    sample_every,
    q_ref,
    bufs,
    i_sample,
):
    """Up to ``n_steps`` velocity-Verlet steps of the ``n_total`` of a run (steps of ``dt``, the
    last one of ``h_last``, ending at ``t_end``; positions and velocities projected if ``proj``;
    the final state is always recorded into the sample buffers ``bufs``); returns (steps done,
    status, i_sample, dissipated work, work fed in by the drives). A state that is not finite,
    or a coordinate that moves more than ``lref`` in one step (an unstable run long before it
    overflows), stops the loop. ``W[7]`` must hold ``Phi_t`` at the start (the last evaluation).
    (The step is written out here: before the loops borrowed their arrays
    (:mod:`ancf_beam.borrow`), a helper taking the tuples ``S`` and ``W`` cost a reference count
    of every array in them per call, 14 % of the step of the pendulum.)"""
    q, v, a, lam, S, W, vs, q_ref, bufs = borrow((q, v, a, lam, S, W, vs, q_ref, bufs))
    n = q.shape[0]
    p1 = core.dissipation_power(q, v, S, W[20], W[13], W[14])
    w1 = drive_power(lam, W[7])
    for s in range(n_steps):
        step = step0 + s
        last = step == n_total - 1
        h = h_last if last else dt
        t1 = t_end if last else (step + 1) * dt
        p0 = p1
        w0 = w1
        for i in range(n):
            v[i] += 0.5 * h * a[i]
            q[i] += h * v[i]
        if proj:
            core.project_position(q, t1, S, W, ptol, 3)
        for i in range(n):
            vs[i] = v[i] + 0.5 * h * a[i]
        energy, pot, _, _, ratio = core.accel_index1(q, vs, t1, S, W, alpha, beta, a, lam)
        if ratio == 0.0:
            return s, SINGULAR, i_sample, diss, work
        finite = np.isfinite(energy)
        vmax = 0.0
        for i in range(n):
            v[i] += 0.5 * h * a[i]
            vmax = max(vmax, abs(v[i]))
            if not np.isfinite(v[i]):
                finite = False
        if not finite or vmax * h > lref:
            return s, NONFINITE, i_sample, diss, work
        if proj:
            core.project_velocity(q, v, t1, S, W)
        if core.update_force_state(q, v, t1, S, W[20]) >= 0:  # core.contact_breach
            return s, OVERLAP, i_sample, diss, work
        released = release_damage(q, S)
        p1 = core.dissipation_power(q, v, S, W[20], W[13], W[14])
        diss += released + 0.5 * h * (p0 + p1)  # damage; contacts (trapezoidal rule)
        w1 = drive_power(lam, W[7])
        work += 0.5 * h * (w0 + w1)
        if (step + 1) % sample_every == 0 or last:
            record_sample(
                i_sample, q, v, a, lam, S, W, energy - released, pot, diss, work, q_ref, bufs
            )
            i_sample += 1
    return n_steps, OK, i_sample, diss, work


def run_explicit(system, st, dt, plan, q, v, a, lam, W, q_ref, buf, one, progress, interval):
    if st.beta * dt > 0.5 or st.alpha * dt > 0.5:
        log.warning(
            "Baumgarte alpha dt = %.3g, beta dt = %.3g: explicit stability needs both well below 1",
            st.alpha * dt,
            st.beta * dt,
        )
    n_steps = plan.n_steps
    vs = np.zeros(system.n)
    lref = max(1e-3, float(np.max(np.abs(q))))
    ptol = 1e-12 * lref
    diss = 0.0
    work = 0.0
    i_sample = 1
    step = 0
    t0 = time.perf_counter()
    state = [t0, interval if progress else math.inf]
    chunk = 1 if one else min(n_steps, 500)
    while step < n_steps:
        todo = min(chunk, n_steps - step)
        if one:
            system.update_drivers(step_end(step, dt, plan, st.t_end), W)
        done, status, i_sample, diss, work = cd_chunk(
            todo,
            step,
            dt,
            n_steps,
            plan.last_dt,
            st.t_end,
            q,
            v,
            a,
            lam,
            system.data,
            W,
            st.alpha,
            st.beta,
            st.projection,
            ptol,
            lref,
            vs,
            diss,
            work,
            plan.sample_every,
            q_ref,
            buf.args(),
            i_sample,
        )
        step += done
        if status != OK:
            t = step_end(step, dt, plan, st.t_end)
            if status == OVERLAP:
                raise_overlap(system, q, t, "central-difference")
            if status == SINGULAR:
                raise ConstraintSingularityError(
                    f"central-difference: the constraint Jacobian is singular at step {step + 1}"
                    f", t = {t:.6g} s"
                )
            bound = explicit_dt_bound(system)
            crit = "" if bound is None else f" (element bound {bound:.4e} s)"
            raise InstabilityError(
                f"central-difference: unstable at step {step + 1}, t = {t:.6g} s: the state "
                f"is not finite or moves more than {lref:.3g} in one step; dt = {dt:.4e} s; "
                f"keep dt below the critical step 2/omega_max{crit} and Baumgarte alpha dt, "
                "beta dt well below 1"
            )
        if not one:
            chunk = min(
                max(100, report_progress("central-difference", step, n_steps, dt, t0, state)),
                100000,
            )
    return i_sample, step
