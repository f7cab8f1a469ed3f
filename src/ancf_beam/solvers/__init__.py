"""Solvers: static Newton, modal analysis, critical time step, and dynamics through one front
door, :func:`simulate` with a :class:`DynamicsSettings` (explicit central differences, BDF1,
Newmark, generalized-alpha)."""

from ancf_beam.solvers.critical import critical_dt
from ancf_beam.solvers.dynamics import simulate
from ancf_beam.solvers.modal import modal_analysis, omega_max
from ancf_beam.solvers.settings import INTEGRATORS, DynamicsSettings, SettingsError
from ancf_beam.solvers.static import solve_static

__all__ = [
    "INTEGRATORS",
    "DynamicsSettings",
    "SettingsError",
    "critical_dt",
    "modal_analysis",
    "omega_max",
    "simulate",
    "solve_static",
]
