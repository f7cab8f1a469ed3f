"""The front door of the dynamic solvers: :func:`simulate`.

One call for every integrator: the :class:`~ancf_beam.solvers.settings.DynamicsSettings` say which
integrator runs and with which options (validated when they were built), choose the time step
(:meth:`~ancf_beam.solvers.settings.DynamicsSettings.time_step`) and this function dispatches to
the central-difference loop (:mod:`~ancf_beam.solvers.explicit`) or the implicit one
(:mod:`~ancf_beam.solvers.implicit`).
"""

from __future__ import annotations

import numpy as np

from ancf_beam.beam.model import BeamModel
from ancf_beam.resources import check_dynamics
from ancf_beam.results import DynamicsResult
from ancf_beam.solvers.explicit import run_explicit
from ancf_beam.solvers.implicit import run_implicit
from ancf_beam.solvers.settings import DynamicsSettings
from ancf_beam.solvers.timeloop import RunSpec, step_plan

__all__ = ["simulate"]


def simulate(
    model: BeamModel,
    settings: DynamicsSettings,
    *,
    dt_critical: float | None = None,
    q0: np.ndarray | None = None,
    v0: np.ndarray | None = None,
    progress: bool = True,
    progress_interval_s: float = 5.0,
) -> DynamicsResult:
    """Dynamic run of ``model`` from ``q0`` (full coordinates; default: the stress-free
    reference) released with ``v0`` (free or full velocities; default: rest) under gravity, as
    ``settings`` say (integrator, ``t_end``, step, damping, outputs, scheme and Newton options).

    ``dt_critical`` (s): the explicit stability limit when it is known (e.g. from the
    critical-step study); computed (``2 / omega_max``) only when the step policy needs it.
    ``progress``: log the simulated time, speed and ETA every ``progress_interval_s`` seconds.

    Raises :class:`~ancf_beam.solvers.settings.SettingsError` (a ``ValueError``) for an explicit
    ``dt`` above ``dt_critical`` without ``settings.force``,
    :class:`~ancf_beam.results.InstabilityError` when an explicit run blows up and
    :class:`~ancf_beam.results.NewtonConvergenceError` when an implicit step cannot be converged;
    :class:`~ancf_beam.config.ConfigError` before the run when its work or its records exceed
    the bounds of :mod:`ancf_beam.resources`.
    """
    dt, dt_critical = settings.time_step(model, dt_critical)
    plan = step_plan(settings.t_end, dt, settings.sample_dt, settings.snapshot_dt)
    check_dynamics(model, settings, plan, dt, implicit=not settings.is_explicit)
    run = RunSpec(dt, dt_critical, q0, v0, progress, progress_interval_s)
    loop = run_explicit if settings.is_explicit else run_implicit
    return loop(model, settings, run)
