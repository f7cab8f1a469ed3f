"""Dynamics settings: the one place that decides how a dynamic run is set up.

:class:`DynamicsSettings` holds everything a run needs besides the model: the integrator, the
end time, the time step (or how to choose it), damping, output rates, the stability guard of the
explicit solver, the scheme parameters and the Newton controls of the implicit ones. It is
validated once, when it is built; :meth:`DynamicsSettings.from_case` fills it from a case's
``dynamics`` section and per-run overrides. The CLI, :func:`ancf_beam.analyses.run_simulate`, the
studies and the front door :func:`ancf_beam.solvers.simulate` all go through it.

Policy (unchanged from the first versions of the solvers):

* **Which options apply.** ``energy_growth_limit`` to ``central-difference`` only; ``beta``,
  ``gamma`` to ``newmark``; ``rho_inf`` to ``generalized-alpha``; ``max_iter``, ``tol``,
  ``increment_tol``, ``max_halvings``, ``newton``, ``predictor`` to the implicit integrators.
  Giving one to an integrator that does not use it is an error naming the option. ``force`` only
  matters to the explicit solver (the implicit ones accept any ``dt``).
* **Ranges.** See :data:`RANGES`; ``dt_safety`` is in (0, 1] for the explicit solver and > 0 for
  the implicit ones.
* **The time step** (:meth:`DynamicsSettings.time_step`), one rule for every integrator: the
  run's settings before the config, ``dt`` before ``dt_safety``: ``dt`` given, else
  ``dt_safety * dt_critical`` when ``dt_safety`` is given, else ``dynamics.dt``, else the
  integrator's default: ``dynamics.dt_safety * dt_critical`` (explicit) or ``T1 / 100``
  (implicit; ``T1 = 2 pi / omega_1`` about the reference;
  :data:`~ancf_beam.solvers.schemes.IMPLICIT_STEPS_PER_PERIOD`). An explicit ``dt`` above
  ``dt_critical`` is refused unless ``force``. ``dt`` and ``dt_safety`` given together are an
  error. ``dt_critical = 2 / omega_max`` is computed when needed and
  not given.

Defaults come from :mod:`ancf_beam.config`: the case's ``dynamics`` section
(:data:`~ancf_beam.config.DEFAULTS`) and, for the per-run solver controls that are not case keys,
from :mod:`ancf_beam.solvers.schemes` (:data:`~ancf_beam.solvers.schemes.NEWTON_DEFAULTS`,
:data:`~ancf_beam.solvers.schemes.IMPLICIT_STEPS_PER_PERIOD`).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ancf_beam.config import (
    DEFAULTS,
    EXPLICIT_INTEGRATOR,
    IMPLICIT_INTEGRATORS,
    INTEGRATORS,
    RULES,
)
from ancf_beam.errors import SettingsError
from ancf_beam.solvers.modal import modal_analysis, omega_max
from ancf_beam.solvers.schemes import (
    IMPLICIT_STEPS_PER_PERIOD,
    NEWTON_DEFAULTS,
    NEWTON_PREDICTORS,
    NEWTON_VARIANTS,
    Scheme,
)
from ancf_beam.specs import CaseSpec

__all__ = [
    "APPLIES_TO",
    "EXPLICIT_INTEGRATOR",
    "IMPLICIT_INTEGRATORS",
    "INTEGRATORS",
    "RANGES",
    "DynamicsSettings",
    "SettingsError",
    "check_integrator",
    "critical_step",
    "default_implicit_dt",
    "make_scheme",
]

log = logging.getLogger(__name__)

#: option -> the integrators that use it (every other integrator refuses it)
APPLIES_TO: dict[str, tuple[str, ...]] = {
    "energy_growth_limit": (EXPLICIT_INTEGRATOR,),
    "beta": ("newmark",),
    "gamma": ("newmark",),
    "rho_inf": ("generalized-alpha",),
    **{k: IMPLICIT_INTEGRATORS for k in NEWTON_DEFAULTS},
}


def _number(v: Any) -> bool:
    real = isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
    return real and math.isfinite(v)


def _integer(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


#: options that stand for a key of the case's ``dynamics`` section: each is checked by that
#: key's rule (:data:`ancf_beam.config.RULES`), so a run option and the config key it overrides
#: accept the same values (``--gamma 0.2`` and ``dynamics.newmark_gamma: 0.2`` alike)
CASE_KEYS: dict[str, str] = {
    "t_end": "dynamics.t_end",
    "dt": "dynamics.dt",
    "sample_dt": "dynamics.sample_dt",
    "snapshot_dt": "dynamics.snapshot_dt",
    "energy_growth_limit": "dynamics.energy_growth_limit",
    "beta": "dynamics.newmark_beta",
    "gamma": "dynamics.newmark_gamma",
    "rho_inf": "dynamics.rho_inf",
}


def _case_rule(key: str) -> tuple[str, Any]:
    desc, ok = RULES[key]
    return desc.removeprefix("null or "), lambda v: ok(v.item() if isinstance(v, np.generic) else v)


#: option -> (allowed values, predicate); ``dt_safety`` and ``damping`` are checked apart
RANGES: dict[str, tuple[str, Any]] = {
    **{option: _case_rule(key) for option, key in CASE_KEYS.items()},
    "max_iter": ("an integer >= 1", lambda v: _integer(v) and v >= 1),
    "max_halvings": ("an integer >= 0", lambda v: _integer(v) and v >= 0),
    "tol": ("in (0, 1)", lambda v: _number(v) and 0 < v < 1),
    "increment_tol": ("in (0, 1)", lambda v: _number(v) and 0 < v < 1),
    "newton": (f"one of {', '.join(NEWTON_VARIANTS)}", lambda v: v in NEWTON_VARIANTS),
    "predictor": (f"one of {', '.join(NEWTON_PREDICTORS)}", lambda v: v in NEWTON_PREDICTORS),
}
_DAMPING_RULES = (_case_rule("dynamics.damping_alpha"), _case_rule("dynamics.damping_beta"))

#: Most steps one run may take. A central-difference step costs about 0.5 us of CPU at 2
#: elements and 1 us at 20 (measured, 0.5 s runs), so this is 8 to 17 minutes there and days on
#: fine meshes; beyond it a run is a mistyped ``dt`` or ``t_end`` (and past 2^63 steps not even
#: a count the compiled loops can hold).
MAX_STEPS = 10**9


def _literal(value: Any) -> str:
    return repr(value).replace("{", "{{").replace("}", "}}")


def _check_option(option: str, value: Any) -> None:
    allowed, ok = RANGES[option]
    if not ok(value):
        raise SettingsError((option,), f"{{0}} must be {allowed}, got {_literal(value)}")


def _who(integrators: tuple[str, ...]) -> str:
    if integrators == IMPLICIT_INTEGRATORS:
        return f"the implicit integrators ({', '.join(integrators)})"
    return " / ".join(integrators)


def _check_applies(integrator: str, given: dict[str, Any]) -> None:
    """Refuse the options (not None) that ``integrator`` does not use."""
    for option, value in given.items():
        users = APPLIES_TO.get(option)
        if value is not None and users is not None and integrator not in users:
            raise SettingsError((option,), f"{{0}} applies to {_who(users)}, not to {integrator}")


def check_integrator(integrator: Any, choices: tuple[str, ...] = INTEGRATORS) -> None:
    """Refuse an integrator that is not one of ``choices``."""
    if integrator not in choices:
        kind = "implicit {0}" if choices == IMPLICIT_INTEGRATORS else "{0}"
        raise SettingsError(
            ("integrator",),
            f"unknown {kind} {_literal(integrator)}; choose one of {', '.join(choices)}",
        )


def _warn_unstable_newmark(beta: float, gamma: float) -> None:
    if gamma < 0.5 or beta < 0.25 * (gamma + 0.5) ** 2 * (1.0 - 1e-12):
        log.warning(
            "Newmark beta = %g, gamma = %g is not unconditionally stable "
            "(needs gamma >= 1/2 and beta >= (gamma + 1/2)^2 / 4)",
            beta,
            gamma,
        )


def make_scheme(
    integrator: str,
    beta: float | None = None,
    gamma: float | None = None,
    rho_inf: float | None = None,
) -> Scheme:
    """Validated :class:`~ancf_beam.solvers.schemes.Scheme` of an implicit integrator; missing
    parameters take the config defaults (``dynamics.newmark_beta``, ``newmark_gamma``,
    ``rho_inf``). A parameter the integrator does not use raises :class:`SettingsError`."""
    check_integrator(integrator, IMPLICIT_INTEGRATORS)
    _check_applies(integrator, {"beta": beta, "gamma": gamma, "rho_inf": rho_inf})
    dyn = DEFAULTS["dynamics"]
    if integrator == "newmark":
        beta = dyn["newmark_beta"] if beta is None else beta
        gamma = dyn["newmark_gamma"] if gamma is None else gamma
        _check_option("beta", beta)
        _check_option("gamma", gamma)
        _warn_unstable_newmark(float(beta), float(gamma))
    elif integrator == "generalized-alpha":
        rho_inf = dyn["rho_inf"] if rho_inf is None else rho_inf
        _check_option("rho_inf", rho_inf)
    return Scheme.of(integrator, beta, gamma, rho_inf)


def critical_step(model) -> float:
    """Stability limit ``2 / omega_max`` (s) of central differences (undamped, reference)."""
    return 2.0 / omega_max(model)[0]


def default_implicit_dt(model, per_period: float = IMPLICIT_STEPS_PER_PERIOD) -> float:
    """Default implicit step ``T1 / per_period`` with ``T1 = 2 pi / omega_1`` (reference state)."""
    w1 = float(modal_analysis(model, n_modes=1, about="reference").omega[0])
    if not w1 > 0:
        raise ValueError("the first natural frequency is zero: cannot derive a default dt")
    return 2.0 * math.pi / w1 / per_period


@dataclass(frozen=True)
class DynamicsSettings:
    """Validated settings of one dynamic run (module docstring). Options an integrator does not
    use are None; build it with :meth:`from_case`."""

    integrator: str
    t_end: float  # s
    dt: float | None  # s; None: chosen by time_step
    dt_safety: float | None  # dt = dt_safety * dt_critical (explicit: always set)
    damping: tuple[float, float]  # Rayleigh C = alpha M + beta K0: (alpha 1/s, beta s)
    sample_dt: float  # s, tip and energy sampling
    snapshot_dt: float  # s, full-coordinate snapshots
    force: bool  # explicit: allow dt > dt_critical
    energy_growth_limit: float | None  # explicit stability guard, x peak kinetic energy
    beta: float | None  # newmark
    gamma: float | None  # newmark
    rho_inf: float | None  # generalized-alpha
    max_iter: int | None  # implicit: Newton iterations per step
    tol: float | None  # implicit: relative Newton residual
    increment_tol: float | None  # implicit: relative Newton increment
    max_halvings: int | None  # implicit: step halvings on non-convergence
    newton: str | None  # implicit: 'modified' or 'full'
    predictor: str | None  # implicit: 'auto', 'constant' or 'extrapolate'

    def __post_init__(self) -> None:
        check_integrator(self.integrator)
        options = {k: getattr(self, k) for k in APPLIES_TO}
        _check_applies(self.integrator, options)
        for option, users in APPLIES_TO.items():
            if self.integrator in users and options[option] is None:
                raise SettingsError((option,), f"{{0}} must be given for {self.integrator}")
        for option in ("t_end", "sample_dt", "snapshot_dt", *options):
            if getattr(self, option) is not None:
                _check_option(option, getattr(self, option))
        if self.dt is not None:
            _check_option("dt", self.dt)
        self._check_dt_safety()
        (alpha, alpha_ok), (beta, beta_ok) = _DAMPING_RULES
        if not (len(self.damping) == 2 and alpha_ok(self.damping[0]) and beta_ok(self.damping[1])):
            raise SettingsError(
                ("damping",),
                f"{{0}} must be two numbers alpha, beta: alpha {alpha}, beta {beta}; got "
                f"{_literal(self.damping)}",
            )
        if self.integrator == "newmark":
            _warn_unstable_newmark(float(self.beta), float(self.gamma))

    def _check_dt_safety(self) -> None:
        s = self.dt_safety
        if self.is_explicit:
            if not (_number(s) and 0 < s <= 1):
                raise SettingsError(("dt_safety",), f"{{0}} must be in (0, 1], got {s!r}")
        elif s is not None and not (_number(s) and s > 0):
            raise SettingsError(("dt_safety",), f"{{0}} must be > 0, got {s!r}")

    @classmethod
    def from_case(
        cls,
        case: CaseSpec,
        *,
        integrator: str | None = None,
        t_end: float | None = None,
        dt: float | None = None,
        dt_safety: float | None = None,
        damping: tuple[float, float] | None = None,
        sample_dt: float | None = None,
        snapshot_dt: float | None = None,
        energy_growth_limit: float | None = None,
        force: bool = False,
        **scheme_and_newton: Any,
    ) -> DynamicsSettings:
        """Settings of ``case.dynamics`` with the given overrides (None: not given).

        ``scheme_and_newton``: ``beta``, ``gamma``, ``rho_inf`` (defaults:
        ``dynamics.newmark_beta``, ``newmark_gamma``, ``rho_inf``) and the Newton controls
        ``max_iter``, ``tol``, ``increment_tol``, ``max_halvings``, ``newton``, ``predictor``
        (defaults :data:`~ancf_beam.solvers.schemes.NEWTON_DEFAULTS`), each only for an
        integrator that uses it."""
        dyn = case.dynamics
        integ = dyn.integrator if integrator is None else integrator
        check_integrator(integ)
        unknown = sorted(set(scheme_and_newton) - set(APPLIES_TO))
        if unknown:
            raise TypeError(f"unknown dynamics settings: {', '.join(unknown)}")
        _check_applies(integ, {"energy_growth_limit": energy_growth_limit, **scheme_and_newton})
        if dt is not None and dt_safety is not None:
            raise SettingsError(("dt", "dt_safety"), "give either {0} or {1}, not both")
        if integ == EXPLICIT_INTEGRATOR:
            if dt is None and dt_safety is None:
                dt = dyn.dt
            dt_safety = dyn.dt_safety if dt_safety is None else dt_safety
            if energy_growth_limit is None:
                energy_growth_limit = dyn.energy_growth_limit
        elif dt is None and dt_safety is None:
            dt = dyn.dt
        case_values = {
            "beta": dyn.newmark_beta,
            "gamma": dyn.newmark_gamma,
            "rho_inf": dyn.rho_inf,
            **NEWTON_DEFAULTS,
        }
        opts = {
            k: (case_values[k] if scheme_and_newton.get(k) is None else scheme_and_newton[k])
            if integ in users
            else None
            for k, users in APPLIES_TO.items()
            if k != "energy_growth_limit"
        }
        return cls(
            integrator=integ,
            t_end=dyn.t_end if t_end is None else t_end,
            dt=dt,
            dt_safety=dt_safety,
            damping=(dyn.damping_alpha, dyn.damping_beta) if damping is None else tuple(damping),
            sample_dt=dyn.sample_dt if sample_dt is None else sample_dt,
            snapshot_dt=dyn.snapshot_dt if snapshot_dt is None else snapshot_dt,
            force=bool(force),
            energy_growth_limit=energy_growth_limit,
            **opts,
        )

    # -- derived ---------------------------------------------------------------------------
    @property
    def is_explicit(self) -> bool:
        return self.integrator == EXPLICIT_INTEGRATOR

    @property
    def scheme(self) -> Scheme | None:
        """The implicit scheme (None for the explicit solver)."""
        if self.is_explicit:
            return None
        return Scheme.of(self.integrator, self.beta, self.gamma, self.rho_inf)

    def scheme_parameters(self) -> dict[str, float]:
        """Parameters of the implicit scheme (``beta``, ``gamma``, ``alpha_m``, ``alpha_f``,
        ``rho_inf`` as they apply; empty for the explicit solver and BDF1)."""
        s = self.scheme
        return {} if s is None else {k: v for k, v in s.describe().items() if k != "integrator"}

    def time_step(self, model, dt_critical: float | None = None) -> tuple[float, float | None]:
        """``(dt, dt_critical)`` of a run of ``model`` (module docstring). ``dt_critical`` is
        computed when the policy needs it and it is not given; it is returned as used (None
        when neither given nor needed). The run is then checked to fit (:meth:`check_run`)."""
        self._check_damping(model)
        if self.is_explicit:
            if dt_critical is None and (self.dt is None or not self.force):
                dt_critical = critical_step(model)
            if self.dt is None:
                return self._safety_step(model, dt_critical), dt_critical
            if not self.force and self.dt > dt_critical:
                raise SettingsError(
                    ("dt", "force"),
                    f"{{0}} = {self.dt:.4e} s exceeds the critical step {dt_critical:.4e} s "
                    f"(dt/dt_cr = {self.dt / dt_critical:.3g}); the explicit run would be "
                    "unstable. Use a smaller dt, or force it ({1}) to observe the instability",
                )
            self.check_run(model, self.dt, ("dt",), "{1}")
            return self.dt, dt_critical
        if self.dt is not None:
            self.check_run(model, self.dt, ("dt",), "{1}")
            return self.dt, dt_critical
        if self.dt_safety is not None:
            if dt_critical is None:
                dt_critical = critical_step(model)
            return self._safety_step(model, dt_critical), dt_critical
        dt = default_implicit_dt(model)
        self.check_run(model, dt, (), f"T1 / {IMPLICIT_STEPS_PER_PERIOD:g}")
        return dt, dt_critical

    def _safety_step(self, model, dt_critical: float) -> float:
        dt = self.dt_safety * dt_critical
        step = f"{{1}} x {{2}} = {self.dt_safety:g} x {dt_critical:.4g} s"
        self.check_run(model, dt, ("dt_safety", "dt_critical"), step)
        return dt

    def _check_damping(self, model) -> None:
        """Refuse damping whose matrix ``C = alpha M + beta K0`` overflows for this model."""
        if not any(self.damping):
            return
        with np.errstate(over="ignore", invalid="ignore"):
            c = model.rayleigh_lower_band(*map(float, self.damping))
        if not np.all(np.isfinite(c)):
            raise SettingsError(
                ("damping",),
                f"{{0}} = {_literal(tuple(self.damping))} overflows the damping matrix "
                "C = alpha M + beta K0 of this beam (entries beyond the largest float); "
                "damping of this size has no meaning",
            )

    def check_run(self, model, dt: float, options: tuple[str, ...], step: str) -> None:
        """Refuse a run of more than :data:`MAX_STEPS` steps of ``dt``, naming ``t_end`` and the
        ``options`` that chose ``dt`` (``step``: how, a template on the option names). The
        memory of its records is checked by :func:`ancf_beam.resources.check_dynamics` (one
        memory model for every run)."""
        steps = self.t_end / dt
        if not steps <= MAX_STEPS:
            raise SettingsError(
                ("t_end", *options),
                f"{{0}} = {self.t_end:.6g} s in steps of dt = {step} = {dt:.4g} s is "
                f"{steps:.3g} steps; a run takes at most {MAX_STEPS:.0e} steps "
                "(ancf_beam.solvers.settings.MAX_STEPS)",
            )
