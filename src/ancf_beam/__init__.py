"""ancf_beam: geometrically nonlinear 2D ANCF cantilever with material gradient defects.

The front door: ``import ancf_beam as ab`` gives the names a user needs, listed in
:data:`__all__` and documented where they are defined::

    import ancf_beam as ab

    case = ab.resolve_case(overrides={"mesh.n_elements": 20})   # the seed beam
    beam = ab.BeamModel(case)
    static = ab.solve_static(beam)                               # StaticResult
    modes = ab.modal_analysis(beam, n_modes=3)                   # ModalResult
    run = ab.simulate(beam, ab.DynamicsSettings.from_case(case, t_end=0.1))

    config = ab.load_config("config/config.yaml")
    mech = ab.build_mechanism(ab.resolve_mechanism(config, "pendulum_berzeri"))
    result = ab.integrate(mech.system, ab.IntegratorSettings(t_end=0.5))

The names are imported on first use (PEP 562), so ``import ancf_beam`` stays cheap (numpy,
scipy and numba load only when a name that needs them is touched): the ``ancf-beam`` command
starts without compiling anything it does not run.
"""

import importlib

from ancf_beam.kernel_cache import use_source_keyed_cache

use_source_keyed_cache()  # before numba loads: compiled kernels keyed by this source

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (about 10 ms)

__version__ = "0.1.0"

#: public name -> module that defines it (imported on first access)
_EXPORTS: dict[str, str] = {
    # configuration
    "load_config": "ancf_beam.config",
    "resolve_case": "ancf_beam.config",
    "resolve_mechanism": "ancf_beam.config",
    "CaseSpec": "ancf_beam.specs",
    "MechanismSpec": "ancf_beam.specs",
    # the beam and its solvers
    "BeamModel": "ancf_beam.beam.model",
    "solve_static": "ancf_beam.solvers.static",
    "modal_analysis": "ancf_beam.solvers.modal",
    "critical_dt": "ancf_beam.solvers.critical",
    "DynamicsSettings": "ancf_beam.solvers.settings",
    "simulate": "ancf_beam.solvers.dynamics",
    "simulate_implicit": "ancf_beam.solvers.implicit",
    "identify_from_frequencies": "ancf_beam.identify",
    # multibody
    "build_mechanism": "ancf_beam.mbs.mechanisms",
    "run_mechanism": "ancf_beam.mbs.analysis",
    "System": "ancf_beam.mbs.system",
    "IntegratorSettings": "ancf_beam.mbs.settings",
    "integrate": "ancf_beam.mbs.integrators",
    # results and errors
    "StaticResult": "ancf_beam.results",
    "ModalResult": "ancf_beam.results",
    "CriticalDt": "ancf_beam.results",
    "DynamicsResult": "ancf_beam.results",
    "MechanismResult": "ancf_beam.results",
    "IdentificationResult": "ancf_beam.identify",
    "ConfigError": "ancf_beam.errors",
    "ConvergenceError": "ancf_beam.errors",
    "InstabilityError": "ancf_beam.errors",
}

__all__ = [
    "BeamModel",
    "CaseSpec",
    "ConfigError",
    "ConvergenceError",
    "CriticalDt",
    "DynamicsResult",
    "DynamicsSettings",
    "IdentificationResult",
    "InstabilityError",
    "IntegratorSettings",
    "MechanismResult",
    "MechanismSpec",
    "ModalResult",
    "StaticResult",
    "System",
    "build_mechanism",
    "critical_dt",
    "identify_from_frequencies",
    "integrate",
    "load_config",
    "modal_analysis",
    "resolve_case",
    "resolve_mechanism",
    "run_mechanism",
    "simulate",
    "simulate_implicit",
    "solve_static",
]

if TYPE_CHECKING:  # the same names for type checkers and documentation tools
    from typing import Any

    from ancf_beam.beam.model import BeamModel
    from ancf_beam.config import load_config, resolve_case, resolve_mechanism
    from ancf_beam.errors import ConfigError, ConvergenceError, InstabilityError
    from ancf_beam.identify import IdentificationResult, identify_from_frequencies
    from ancf_beam.mbs.analysis import run_mechanism
    from ancf_beam.mbs.integrators import integrate
    from ancf_beam.mbs.mechanisms import build_mechanism
    from ancf_beam.mbs.settings import IntegratorSettings
    from ancf_beam.mbs.system import System
    from ancf_beam.results import (
        CriticalDt,
        DynamicsResult,
        MechanismResult,
        ModalResult,
        StaticResult,
    )
    from ancf_beam.solvers.critical import critical_dt
    from ancf_beam.solvers.dynamics import simulate
    from ancf_beam.solvers.implicit import simulate_implicit
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.settings import DynamicsSettings
    from ancf_beam.solvers.static import solve_static
    from ancf_beam.specs import CaseSpec, MechanismSpec


def __getattr__(name: str) -> "Any":
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ancf_beam' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
