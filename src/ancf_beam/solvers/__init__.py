"""Solvers: static Newton, modal analysis, critical time step, and dynamics through one front
door, :func:`simulate` with a :class:`DynamicsSettings` (explicit central differences, BDF1,
Newmark, generalized-alpha).

The names are imported on first use (PEP 562): importing one solver module (e.g. the static
one) does not load the others and what they need (scipy's sparse eigensolvers, ...)."""

import importlib

TYPE_CHECKING = False

#: public name -> module that defines it
_EXPORTS = {
    "INTEGRATORS": "ancf_beam.solvers.settings",
    "DynamicsSettings": "ancf_beam.solvers.settings",
    "SettingsError": "ancf_beam.solvers.settings",
    "critical_dt": "ancf_beam.solvers.critical",
    "modal_analysis": "ancf_beam.solvers.modal",
    "omega_max": "ancf_beam.solvers.modal",
    "simulate": "ancf_beam.solvers.dynamics",
    "solve_static": "ancf_beam.solvers.static",
}

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

if TYPE_CHECKING:
    from ancf_beam.solvers.critical import critical_dt
    from ancf_beam.solvers.dynamics import simulate
    from ancf_beam.solvers.modal import modal_analysis, omega_max
    from ancf_beam.solvers.settings import INTEGRATORS, DynamicsSettings, SettingsError
    from ancf_beam.solvers.static import solve_static


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ancf_beam.solvers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
