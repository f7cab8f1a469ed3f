"""Settings of the multibody time integrators and their default steps.

:class:`IntegratorSettings` (integrator, step, tolerances; the solver fields and their defaults
are those of :class:`ancf_beam.specs.MechanismSolverSpec`), the explicit stability bounds
:func:`explicit_dt_bounds` and the default step :func:`default_dt`. The integrators themselves:
:mod:`ancf_beam.mbs.integrators` (the front door, :func:`~ancf_beam.mbs.integrators.integrate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ancf_beam.config import IVP_METHODS, MECHANISM_INTEGRATORS
from ancf_beam.mbs.system import System
from ancf_beam.solvers.schemes import newmark_dissipation_advice
from ancf_beam.specs import MechanismSolverSpec

__all__ = [
    "CONTACT_STEP_FRACTION",
    "INTEGRATORS",
    "IVP_METHODS",
    "NEWTON_VARIANTS",
    "IntegratorSettings",
    "default_dt",
    "explicit_dt_bound",
    "explicit_dt_bounds",
]

#: generalized-alpha (default), newmark, central-difference, adaptive, moreau-jean (nonsmooth
#: contacts: :mod:`ancf_beam.mbs.moreau`)
INTEGRATORS = tuple(dict.fromkeys((*MECHANISM_INTEGRATORS, "moreau-jean")))
NEWTON_VARIANTS = ("modified", "full")
#: step rules of step_control: dt_contact near and in contact, or steps from a local error
#: estimate of all coordinates or of the contact gaps (ancf_beam.mbs.stepping)
STEP_RULES = ("fixed", "error", "gap-error")
_SOLVER = MechanismSolverSpec()  # the defaults (ancf_beam.config holds them)


@dataclass(frozen=True)
class IntegratorSettings:
    """Time integration settings (SI units).


    ``dt`` (s): fixed step (``None``: :func:`default_dt`); ``sample_dt`` (s): output interval;
    ``alpha``, ``beta`` (1/s): Baumgarte stabilisation of the index-1 integrators; ``rho_inf``:
    generalized-alpha spectral radius at infinity; ``newmark_beta``, ``newmark_gamma``;
    ``max_iter``, ``tol`` (relative residual), ``max_halvings``, ``newton`` (``modified`` or
    ``full``) for the index-3 Newton; ``projection``: project positions (central difference) and
    velocities (central difference, index-3) onto the constraint manifold after every step;
    ``method``, ``rtol``, ``atol``: the adaptive integrator; ``step_control`` (index-3 with
    contact elements): steps of ``dt`` (None: ``sample_dt``) in free flight and ``dt_contact``
    (s; None: the fixed-step default with contacts, :func:`default_dt`) while a contact gap is
    below ``contact_margin`` (m) or would close within the next step, contact onsets located to
    a penetration of at most ``onset_tol`` (m) (:mod:`ancf_beam.mbs.stepping`; the other
    integrators ignore it: the adaptive one controls its own step and restarts at every
    onset); ``step_rule`` ``"error"`` replaces the fixed ``dt_contact`` by steps of at most
    ``dt`` whose local error estimate is below ``step_tol`` (m; each impact located and begun
    with ``dt_contact``; steps never below ``dt_min``, None: ``dt_contact / 16``). With the
    fixed rule, ``dwell_dt`` (s; None: off) is the step inside a sustained contact, one whose
    episode began ``dwell_after`` (s) or more before (a resting journal, not an impact).
    ``moreau-jean`` (:mod:`ancf_beam.mbs.moreau`): fixed step ``dt`` (required),
    ``theta`` (0.5 <= theta <= 1) of the theta-method on the velocities, ``tol`` the relative
    convergence tolerance of the contact solver (the largest change of an impulse in a sweep
    over the largest impulse) and ``max_iter`` its sweep cap; ``contact_projection``: project
    the positions out of penetration after each step (velocities unchanged).
    The solver fields and their defaults are those of
    :class:`ancf_beam.specs.MechanismSolverSpec`."""

    integrator: str = INTEGRATORS[0]
    t_end: float = 1.0
    sample_dt: float = 1e-3
    alpha: float = 0.0
    beta: float = 0.0
    dt: float | None = _SOLVER.dt
    rho_inf: float = _SOLVER.rho_inf
    newmark_beta: float = _SOLVER.newmark_beta
    newmark_gamma: float = _SOLVER.newmark_gamma
    theta: float = _SOLVER.theta
    max_iter: int = _SOLVER.max_iter
    tol: float = _SOLVER.tol
    max_halvings: int = _SOLVER.max_halvings
    newton: str = _SOLVER.newton
    projection: bool = _SOLVER.projection
    method: str = _SOLVER.method
    rtol: float = _SOLVER.rtol
    atol: float = _SOLVER.atol
    step_control: bool = _SOLVER.step_control
    dt_contact: float | None = _SOLVER.dt_contact
    contact_margin: float = _SOLVER.contact_margin
    onset_tol: float = _SOLVER.onset_tol
    contact_projection: bool = True  # moreau-jean: positions projected out of penetration
    step_rule: str = _SOLVER.step_rule
    step_tol: float = _SOLVER.step_tol
    dt_min: float | None = _SOLVER.dt_min
    dwell_dt: float | None = _SOLVER.dwell_dt
    dwell_after: float | None = _SOLVER.dwell_after

    def validate(self) -> None:
        if self.integrator not in INTEGRATORS:
            raise ValueError(
                f"unknown integrator {self.integrator!r}; choose one of " + ", ".join(INTEGRATORS)
            )
        for key in ("t_end", "sample_dt", "tol", "rtol", "atol"):
            x = getattr(self, key)
            if not (math.isfinite(x) and x > 0):
                raise ValueError(f"{key} must be > 0, got {x!r}")
        if self.dt is not None and not (math.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"dt must be > 0, got {self.dt!r}")
        if self.alpha < 0 or self.beta < 0:
            raise ValueError("Baumgarte alpha and beta must be >= 0")
        if not 0 <= self.rho_inf <= 1:
            raise ValueError(f"rho_inf must be in [0, 1], got {self.rho_inf!r}")
        if self.method not in IVP_METHODS:
            raise ValueError(f"method must be one of {', '.join(IVP_METHODS)}")
        if self.newton not in NEWTON_VARIANTS:
            raise ValueError(f"newton must be one of {', '.join(NEWTON_VARIANTS)}")
        if self.dt_contact is not None and not (
            math.isfinite(self.dt_contact) and self.dt_contact > 0
        ):
            raise ValueError(f"dt_contact must be > 0, got {self.dt_contact!r}")
        if self.step_rule not in STEP_RULES:
            raise ValueError(f"step_rule must be one of {', '.join(STEP_RULES)}")
        for key in ("step_tol", "dt_min", "dwell_dt", "dwell_after"):
            x = getattr(self, key)
            if x is not None and not (math.isfinite(x) and x > 0):
                raise ValueError(f"{key} must be > 0, got {x!r}")
        if self.dwell_dt is not None and self.dwell_after is None:
            raise ValueError("dwell_after (s) is required with dwell_dt")
        if self.dwell_dt is not None and (self.step_rule != "fixed" or not self.step_control):
            raise ValueError(
                "dwell_dt needs step_rule 'fixed' with step_control (the error rules choose "
                "their steps; without step control every step is dt)"
            )
        if not (math.isfinite(self.onset_tol) and self.onset_tol > 0):
            raise ValueError(f"onset_tol must be > 0, got {self.onset_tol!r}")
        if not (math.isfinite(self.contact_margin) and self.contact_margin >= 0):
            raise ValueError(f"contact_margin must be >= 0, got {self.contact_margin!r}")
        if not (isinstance(self.theta, (int, float)) and 0.5 <= self.theta <= 1.0):
            raise ValueError(f"theta must be in [0.5, 1], got {self.theta!r}")
        if not (self.max_iter >= 1 and int(self.max_iter) == self.max_iter):
            raise ValueError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        if self.integrator == "moreau-jean" and self.dt is None:
            raise ValueError("dt is required by the moreau-jean integrator (a fixed step)")
        if self.projection and self.integrator == "adaptive":
            raise ValueError("projection is not available with the adaptive integrator")

    def newton_advice(self, controls: str) -> str:
        """What to change after an index-3 step whose Newton iteration failed at every halving:
        ``controls`` (the step controls to try), and for Newmark with ``newmark_gamma = 0.5``
        its missing numerical dissipation (:func:`ancf_beam.solvers.schemes.
        newmark_dissipation_advice`; config.yaml's spin-up arm under ``newmark``: the
        velocity-level constraint violation 2e-5 at 10 s, 1.6 at 13.5 s, Newton failing at
        13.5-13.7 s by processor and round-off; with ``newmark_gamma = 0.6`` and ``newmark_beta
        = 0.3025`` it ends at 20 s with 2.2e-5, as under generalized-alpha)."""
        if self.integrator == "newmark" and self.newmark_gamma == 0.5:
            advice = newmark_dissipation_advice(
                "constrained or geometrically nonlinear model", "newmark_gamma", "newmark_beta"
            )
            return f"{controls}; but {advice}"
        return controls

    def scheme(self) -> tuple[float, float, float, float]:
        """``(beta, gamma, alpha_m, alpha_f)`` of the index-3 integrators."""
        if self.integrator == "newmark":
            return self.newmark_beta, self.newmark_gamma, 0.0, 0.0
        r = self.rho_inf
        am = (2.0 * r - 1.0) / (r + 1.0)
        af = r / (r + 1.0)
        return 0.25 * (1.0 - am + af) ** 2, 0.5 - am + af, am, af


#: fixed step in contact: this fraction of the contact bound 2/omega (0.1/omega: about 31 steps
#: per contact of a linear law, whose duration is pi/omega); also the first step of the adaptive
#: integrator after an onset
CONTACT_STEP_FRACTION = 0.05


def explicit_dt_bounds(system: System) -> dict[str, float]:
    """Explicit stability bounds ``2 / omega`` (s) by governing mode: ``"beam"`` (the largest
    unconstrained element frequency of the beams at their reference: a conservative bound, joints
    and rigid bodies only lower the system's frequencies) and ``"contact"`` (the stiffest
    contact, ``omega = sqrt(k_lin / m_eff)`` with the stiffness of
    :meth:`~ancf_beam.mbs.forces.Contact.linear_stiffness` (circle and line contacts): for the
    nonlinear laws the tangent at the estimated largest penetration; contact damping lowers the
    undamped bound ``2 / omega`` by the factor ``sqrt(1 + zeta^2) - zeta``). Modes that do not
    apply are left out."""
    out = {}
    if system.beams:
        from ancf_beam.solvers.critical import element_omega_max

        out["beam"] = 2.0 / max(element_omega_max(b.model) for b in system.beams)
    omegas = [w for fe in system.contact_forces.values() if (w := fe.omega()) is not None]
    if omegas:
        out["contact"] = 2.0 / max(omegas)
    return out


def explicit_dt_bound(system: System) -> float | None:
    """The smallest of :func:`explicit_dt_bounds` (s); None without beams or contacts."""
    b = explicit_dt_bounds(system)
    return min(b.values()) if b else None


def default_dt(system: System, settings: IntegratorSettings, safety: float = 0.8) -> float:
    """Default step: ``sample_dt`` for the implicit integrators and for systems without beams;
    for central differences with beams ``safety`` times the beam bound of
    :func:`explicit_dt_bounds`, at most ``sample_dt``. With contacts every fixed-step integrator
    takes at most ``CONTACT_STEP_FRACTION`` times the contact bound (the step is not controlled:
    it must resolve the impacts)."""
    bounds = explicit_dt_bounds(system)
    dt = settings.sample_dt
    if settings.integrator == "central-difference" and "beam" in bounds:
        dt = min(dt, safety * bounds["beam"])
    if "contact" in bounds:
        dt = min(dt, CONTACT_STEP_FRACTION * bounds["contact"])
    return dt
