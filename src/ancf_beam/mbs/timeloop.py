"""What the time loops of the multibody integrators share.

The status codes of the numba loops, the sample times of the runs that control their own steps,
the preallocated sample buffers (:class:`SampleBuffers`) and the numba recorder of one sample
(:func:`record_sample`: coordinates, multipliers, constraint violations, energies), the
staggered damage update of the beams (:func:`release_damage`), the power the drives feed in
(:func:`drive_power`) and the progress log. Used by :mod:`ancf_beam.mbs.explicit`,
:mod:`ancf_beam.mbs.index3`, :mod:`ancf_beam.mbs.adaptive` and :mod:`ancf_beam.mbs.stepping`.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
from numba import njit

from ancf_beam.beam.damage import update_damage
from ancf_beam.errors import ContactOverlapError
from ancf_beam.kernel_cache import run_clock
from ancf_beam.linalg import sym_band_matvec
from ancf_beam.mbs import core
from ancf_beam.mbs.forces import STATE_SIZE
from ancf_beam.mbs.laws import admissible_overlap
from ancf_beam.results import MechanismResult

log = logging.getLogger("ancf_beam.mbs.integrators")  # one logger for every integrator

__all__ = [
    "NEWTON_FAIL",
    "NONFINITE",
    "OK",
    "OVERLAP",
    "SINGULAR",
    "SampleBuffers",
    "drive_power",
    "n_sample_times",
    "raise_overlap",
    "record_sample",
    "release_damage",
    "first_sample",
    "report_progress",
    "report_time",
    "sample_times",
    "step_end",
]

#: status codes of the numba loops (OVERLAP: :func:`ancf_beam.mbs.core.contact_breach`)
OK, NONFINITE, SINGULAR, NEWTON_FAIL, OVERLAP = 0, 1, 2, 3, 4


def raise_overlap(system, q: np.ndarray, t: float, integrator: str) -> None:
    """Raise :class:`ContactOverlapError` for the contact that :func:`core.contact_breach`
    finds at ``q`` (time ``t``, s), naming it, its overlap and the depth its geometry
    describes."""
    e = int(core.contact_breach(q, system.data))
    if e < 0:  # (not reached: the loops return OVERLAP only after contact_breach found one)
        raise ContactOverlapError(f"{integrator}, system '{system.name}': overlap at t = {t:.9g} s")
    fef = system.fef[e]
    delta = float(core.circle_delta(system.fei[e], fef, q, q)[0])
    r_p, r_q = float(fef[core.C_RP]), float(fef[core.C_RQ])
    limit = admissible_overlap(r_p, r_q)
    raise ContactOverlapError(
        f"{integrator}, system '{system.name}': contact '{system.forces[e].name}' overlaps by "
        f"{delta:.6g} m at t = {t:.9g} s, deeper than the {limit:.6g} m its geometry describes "
        f"(half the radii sum {r_p:g} + {r_q:g} m: deeper, the centres meet and the bodies pass "
        "through each other); stiffen the contact, lower the approach speed or enlarge the radii"
    )


@njit(cache=True, nogil=True, error_model="numpy")
def release_damage(q, S):
    """Staggered damage update of every damaging beam; returns the released energy (J)."""
    released = 0.0
    beams = S[3]
    damages = S[11]
    for k in range(S[10]):  # the real beams, by index: see core.system_forces
        if damages[k][0]:
            o = beams[k][0]
            released += update_damage(q[o : o + beams[k][1]], *damages[k][1])
    return released


@njit(cache=True, nogil=True, error_model="numpy")
def record_sample(
    i,
    q,
    v,
    a,
    lam,
    S,
    W,
    energy,
    pot,
    diss,
    work,
    q_ref,
    bufs,
):
    """Store sample ``i`` into the buffers ``bufs`` (``SampleBuffers.args()``: ``(out_q,
    out_v, out_a, out_l, out_e, mv, out_s)``; constraint rows of ``W`` evaluated at ``q``; the
    force elements' carried state ``W[20]`` flattened into ``out_s``; ``diss`` the dissipated
    work, ``work`` the work the driving constraints fed in, both since ``t = 0``). Called once
    per sample: the tuple's reference counts do not weigh here, as they would per step."""
    out_q, out_v, out_a, out_l, out_e, mv, out_s = bufs
    phi = W[1]
    dphi = W[2]
    for k in range(q.shape[0]):
        out_q[i, k] = q[k]
        out_v[i, k] = v[k]
        out_a[i, k] = a[k]
    for k in range(lam.shape[0]):
        out_l[i, k] = lam[k]
    fs = W[20]
    for e in range(fs.shape[0]):
        for k in range(fs.shape[1]):
            out_s[i, e * fs.shape[1] + k] = fs[e, k]
    sym_band_matvec(S[0], v, mv)
    kin = 0.0
    grav = 0.0
    for k in range(q.shape[0]):
        kin += v[k] * mv[k]
        grav -= S[2][k] * (q[k] - q_ref[k])
    core.jac_mul(W[3], W[4], W[5], v, dphi)
    pmax = 0.0
    vmax = 0.0
    for r in range(phi.shape[0]):
        pmax = max(pmax, abs(phi[r]))
        vmax = max(vmax, abs(dphi[r] + W[7][r]))
    out_e[i, 0] = 0.5 * kin
    out_e[i, 1] = energy + pot
    out_e[i, 2] = grav
    out_e[i, 3] = diss
    out_e[i, 4] = pmax
    out_e[i, 5] = vmax
    out_e[i, 6] = work


@njit(cache=True, nogil=True, error_model="numpy")
def drive_power(lam, phit):
    """Power (W) the constraints feed in: ``lam . Phi_t`` (the constraint forces ``-J^T lam``
    do the work ``-lam . J v = lam . Phi_t`` on a motion that satisfies ``J v + Phi_t = 0``:
    only rheonomic rows, i.e. drives, contribute)."""
    p = 0.0
    for r in range(lam.shape[0]):
        p += lam[r] * phit[r]
    return p


class SampleBuffers:
    """Preallocated sample buffers."""

    def __init__(self, n_samples: int, n: int, m: int, n_state: int = 0):
        self.q = np.zeros((n_samples, n))
        self.v = np.zeros((n_samples, n))
        self.a = np.zeros((n_samples, n))
        self.lam = np.zeros((n_samples, m))
        self.e = np.zeros((n_samples, 7))
        self.mv = np.zeros(n)
        self.s = np.zeros((n_samples, n_state))

    def args(self):
        return self.q, self.v, self.a, self.lam, self.e, self.mv, self.s

    def result(self, t, k, **kw) -> MechanismResult:
        """The first ``k`` samples (the buffers end with the run: a full buffer is handed on,
        not copied; a run that ended early is trimmed to a copy)."""
        return MechanismResult(
            t=t[:k],
            q=_first(self.q, k),
            v=_first(self.v, k),
            a=_first(self.a, k),
            lam=_first(self.lam, k),
            phi_max=self.e[:k, 4].copy(),
            dphi_max=self.e[:k, 5].copy(),
            kinetic=self.e[:k, 0].copy(),
            strain=self.e[:k, 1].copy(),
            gravity=self.e[:k, 2].copy(),
            dissipated=self.e[:k, 3].copy(),
            drive_work=self.e[:k, 6].copy(),
            force_state=_first(self.s, k).reshape(k, -1, STATE_SIZE),
            **kw,
        )


def _first(a: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` rows of the sample buffer ``a``: itself when it holds ``k``, else a
    copy (so that an early end does not keep the whole buffer alive)."""
    return a if k == len(a) else a[:k].copy()


def n_sample_times(t_end: float, sample_dt: float) -> int:
    """Number of :func:`sample_times`."""
    return max(1, int(math.ceil(t_end / sample_dt - 1e-9))) + 1


def sample_times(t_end: float, sample_dt: float) -> np.ndarray:
    """Output times (s) of a run that controls its own steps (adaptive, index-3 with contacts):
    ``0``, every ``sample_dt`` and always ``t_end`` (the last interval shorter when ``t_end`` is
    not a multiple of ``sample_dt``; within 1e-9 of a sample interval it is one)."""
    ts = np.arange(n_sample_times(t_end, sample_dt)) * sample_dt
    ts[-1] = t_end
    return ts


def step_end(step: int, dt: float, plan, t_end: float) -> float:
    """End time (s) of step ``step`` (from 0) of a run planned by ``plan``: the last one ends
    at ``t_end``."""
    return t_end if step == plan.n_steps - 1 else (step + 1) * dt


def first_sample(system, q, v, a, lam, buf) -> tuple:
    """The state at t = 0 recorded as sample 0 (constraints and the contacts' carried state
    evaluated there; the latter again after ``System.reset_force_state`` at the same state
    changes nothing) for every index-3 and explicit run; returns the work tuple, the reference
    positions, the strain energy and the force-element potential."""
    W = system.work()
    q_ref = system.q0.copy()
    _, u, p = system.forces_at(q, v, 0.0)
    system.update_drivers(0.0, W)
    core.eval_constraints(
        q, v, 0.0, system.ei, system.ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], W[13], W[14]
    )
    core.update_force_state(q, v, 0.0, system.data, W[20])
    record_sample(0, q, v, a, lam, system.data, W, u, p, 0.0, 0.0, q_ref, buf.args())
    return W, q_ref, u, p


def report_time(name, t, t_end, steps, units, t0, state):
    """Log ``name``'s simulated time ``t`` of ``t_end``, its ``steps`` so far and an ETA (from
    the simulated time per second of run since ``t0``, a ``run_clock`` time) once
    ``state[1]`` seconds have passed since ``state[0]`` (then reset); returns how many of
    ``units`` (samples, say) the run covers in that interval (at most a second), for the next
    call's share."""
    now = time.perf_counter()
    elapsed = max(run_clock() - t0, 1e-9)
    if now - state[0] >= state[1] and 0.0 < t < t_end:
        log.info(
            "%s: t = %.4g / %.4g s, %d steps, %.3g steps/s, ETA %.0f s",
            name,
            t,
            t_end,
            steps,
            steps / elapsed,
            elapsed * (t_end - t) / t,
        )
        state[0] = now
    return max(1, int(units / elapsed * min(state[1], 1.0)))


def report_progress(name, step, n_steps, dt, t0, state):
    now = time.perf_counter()
    rate = step / max(now - t0, 1e-9)
    if now - state[0] >= state[1] and step < n_steps:
        log.info(
            "%s: t = %.4g / %.4g s, %.3g steps/s, ETA %.0f s",
            name,
            step * dt,
            n_steps * dt,
            rate,
            (n_steps - step) / rate,
        )
        state[0] = now
    return max(1, int(rate * 1.0))
