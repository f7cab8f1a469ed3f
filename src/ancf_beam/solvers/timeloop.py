"""What the explicit and implicit time loops share: the step plan, the preallocated output
buffers (a numba argument), the damage arguments and the chunked driver with progress reports.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from ancf_beam.beam.damage import DamageState, update_damage
from ancf_beam.beam.model import BeamModel
from ancf_beam.kernel_cache import run_clock
from ancf_beam.results import DynamicsResult

__all__ = [
    "DamageArgs",
    "Outputs",
    "RunSpec",
    "StepPlan",
    "damage_args",
    "final_outputs",
    "outputs",
    "result_from_outputs",
    "run_chunks",
    "step_plan",
    "update_damage_with",
]


class RunSpec(NamedTuple):
    """What :func:`ancf_beam.solvers.simulate` hands to a time loop besides the model and the
    settings: the chosen step, the critical step it was checked against (None: unknown), the
    initial state and the progress reports."""

    dt: float  # s
    dt_critical: float | None  # s
    q0: np.ndarray | None  # full coordinates (None: the reference)
    v0: np.ndarray | None  # free or full velocities (None: rest)
    progress: bool
    progress_interval_s: float


class StepPlan(NamedTuple):
    """Steps of a run of ``t_end`` with step ``dt``, and the sampling strides.

    Every run ends exactly at ``t_end``: ``n_steps = max(1, ceil(t_end / dt))`` steps, all of
    length ``dt`` but the last, of length ``last_dt = t_end - (n_steps - 1) dt`` (``dt`` itself
    when ``t_end / dt`` is an integer to within 1e-9; a ``dt`` longer than ``t_end`` gives one
    step of ``t_end``). The records hold the regular samples at multiples of ``sample_every``
    steps and always the final state, at ``t_end``."""

    n_steps: int
    sample_every: int  # steps between tip / energy samples
    snap_every: int  # steps between full-coordinate snapshots
    n_samples: int  # buffer rows: the regular samples and the final state
    n_snaps: int
    last_dt: float  # s, length of the last step


def step_plan(t_end: float, dt: float, sample_dt: float, snapshot_dt: float) -> StepPlan:
    n_steps = max(1, int(math.ceil(t_end / dt - 1e-9)))
    last_dt = t_end - (n_steps - 1) * dt
    if last_dt >= dt * (1.0 - 1e-9):
        last_dt = dt  # t_end / dt is an integer up to round-off: all steps equal
    sample_every = max(1, int(round(sample_dt / dt)))
    snap_every = max(1, int(round(snapshot_dt / dt)))
    return StepPlan(
        n_steps,
        sample_every,
        snap_every,
        n_steps // sample_every + 2,
        n_steps // snap_every + 2,
        last_dt,
    )


def final_outputs(out: Outputs, step: int, sampled: bool, snapped: bool) -> Outputs:
    """``out`` with strides that make the loop's recorder store the state after ``step``
    steps (the final state) unless it was ``sampled`` / ``snapped`` there already."""
    return out._replace(
        sample_every=step + 1 if sampled else 1, snap_every=step + 1 if snapped else 1
    )


class Outputs(NamedTuple):
    """Preallocated outputs of a time loop (a numba argument); the loops advance the counters."""

    sample_every: int
    snap_every: int
    tip: np.ndarray  # (n_samples, 2): tip x, y (m)
    energy: np.ndarray  # (n_samples, 4): kinetic, strain, gravity, damping work (J)
    snap: np.ndarray  # (n_snaps, n_dof): full coordinates
    dsnap: np.ndarray  # (n_snaps, n_el, n_gauss) damage with damage on, else (0, 1, 1)
    i_sample: np.ndarray  # (1,) samples written
    i_snap: np.ndarray  # (1,) snapshots written


def outputs(plan: StepPlan, model: BeamModel, damage_on: bool) -> Outputs:
    dshape = (plan.n_snaps, *model.damage.shape) if damage_on else (0, 1, 1)
    return Outputs(
        plan.sample_every,
        plan.snap_every,
        np.zeros((plan.n_samples, 2)),
        np.zeros((plan.n_samples, 4)),
        np.zeros((plan.n_snaps, model.n_dof)),
        np.zeros(dshape),
        np.zeros(1, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
    )


def result_from_outputs(out: Outputs, dt: float, t_end: float, **fields) -> DynamicsResult:
    """Trim the buffers into a :class:`~ancf_beam.results.DynamicsResult` whose last sample
    and last snapshot (the final state) are stamped ``t_end``."""
    i_snap = int(out.i_snap[0])
    damage_on = out.dsnap.shape[0] == out.snap.shape[0]  # else the (0, 1, 1) placeholder
    return DynamicsResult.from_buffers(
        out.tip,
        out.energy,
        out.snap,
        out.dsnap if damage_on else None,
        int(out.i_sample[0]),
        i_snap,
        out.sample_every,
        out.snap_every,
        dt,
        t_end=t_end,
        **fields,
    )


class DamageArgs(NamedTuple):
    """The arguments of :func:`ancf_beam.beam.damage.update_damage` after ``q``."""

    n_el: int
    spb: np.ndarray
    sppb: np.ndarray
    eps0: np.ndarray
    kap0: np.ndarray
    linear: bool
    half_h: np.ndarray
    threshold: float
    softening: float
    d_max: float
    hist: np.ndarray
    dmg: np.ndarray  # the model's damage field, updated in place
    ea_w0: np.ndarray
    ei_w0: np.ndarray
    ea_w: np.ndarray
    ei_w: np.ndarray


@njit(cache=True, nogil=True, error_model="numpy")
def update_damage_with(q, d):
    """:func:`~ancf_beam.beam.damage.update_damage` at ``q`` with the :class:`DamageArgs` ``d``;
    returns the released strain energy (J)."""
    return update_damage(
        q,
        d.n_el,
        d.spb,
        d.sppb,
        d.eps0,
        d.kap0,
        d.linear,
        d.half_h,
        d.threshold,
        d.softening,
        d.d_max,
        d.hist,
        d.dmg,
        d.ea_w0,
        d.ei_w0,
        d.ea_w,
        d.ei_w,
    )


def damage_args(model: BeamModel) -> tuple[DamageArgs, DamageState | None]:
    """Damage arguments of a run of ``model`` and its :class:`DamageState` (None when damage is
    off: the arguments are then placeholders of the same types, never used)."""
    m = model
    if not model.case.damage.enabled:
        z = np.zeros((1, 1))
        return DamageArgs(
            m.n_el, m.spb, m.sppb, m.eps0, m.kap0, m.linear, z, 0.0, 1.0, 0.0, z, z, z, z, z, z
        ), None
    state = DamageState(model)
    s = state.spec
    args = DamageArgs(
        m.n_el,
        m.spb,
        m.sppb,
        m.eps0,
        m.kap0,
        m.linear,
        state.half_h,
        float(s.threshold),
        float(s.softening),
        float(s.d_max),
        state.hist,
        m.damage,
        m.ea_w0,
        m.ei_w0,
        m.ea_w,
        m.ei_w,
    )
    return args, state


def run_chunks(
    advance: Callable[[int, int], int],
    total: int,
    *,
    first: int,
    least: int,
    progress: bool,
    interval_s: float,
    report: Callable[[int, float], None],
) -> tuple[float, float]:
    """Drive ``step = advance(step, todo)`` from 0 to ``total`` in chunks: a short ``first`` one
    calibrates the speed, then chunks of about ``min(interval_s, 2)`` seconds (at least
    ``least`` steps); ``report(step, steps_per_s)`` every ``interval_s`` when ``progress``.
    Returns the wall and process CPU times (s)."""
    r_start = run_clock()  # the run time returned: without compiling (kernel_cache)
    t_start = time.perf_counter()
    c_start = time.process_time()
    t_last = t_start
    step = 0
    chunk = min(total, first)
    while step < total:
        step = advance(step, min(chunk, total - step))
        now = time.perf_counter()
        rate = step / max(now - t_start, 1e-9)
        chunk = max(least, int(rate * min(interval_s, 2.0)))
        if progress and now - t_last >= interval_s and step < total:
            report(step, rate)
            t_last = now
    return run_clock() - r_start, time.process_time() - c_start
