"""Parameters of the implicit integrators: BDF1, Newmark and generalized-alpha, and the
defaults of their Newton iteration and step.

A :class:`Scheme` is plain data derived from already validated settings (see
:mod:`~ancf_beam.solvers.settings`, which builds it); the formulas are in the docstring of
:mod:`~ancf_beam.solvers.implicit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "IMPLICIT_STEPS_PER_PERIOD",
    "NEWTON_DEFAULTS",
    "NEWTON_PREDICTORS",
    "NEWTON_VARIANTS",
    "SCHEME_OPTIONS",
    "Scheme",
    "generalized_alpha_parameters",
    "newmark_dissipation_advice",
    "rayleigh_zeta",
    "scheme_options",
]

#: Newton controls of the implicit integrators: per-run solver settings (CLI options, keyword
#: arguments of :meth:`ancf_beam.solvers.settings.DynamicsSettings.from_case`), not case keys.
NEWTON_DEFAULTS: dict[str, Any] = {
    "max_iter": 20,
    "tol": 1e-8,
    "increment_tol": 1e-10,
    "max_halvings": 4,
    "newton": "modified",
    "predictor": "auto",
}
NEWTON_VARIANTS = ("full", "modified")
NEWTON_PREDICTORS = ("auto", "constant", "extrapolate")
IMPLICIT_STEPS_PER_PERIOD = 100.0  # default implicit step: T1 / this
#: the parameters each implicit scheme takes, as a run records them in its attributes
SCHEME_OPTIONS: dict[str, tuple[str, ...]] = {
    "newmark": ("beta", "gamma"),
    "generalized-alpha": ("rho_inf",),
}


def scheme_options(attrs: Any) -> dict[str, float]:
    """The scheme parameters a run recorded (``beta``, ``gamma`` or ``rho_inf``; none for the
    central differences and BDF1), from its attributes ``attrs`` (a mapping)."""
    return {k: float(attrs[k]) for k in SCHEME_OPTIONS.get(attrs.get("integrator"), ())}


def rayleigh_zeta(w: Any, alpha: float, beta: float) -> Any:
    """The damping ratio of a mode of frequency ``w`` (rad/s; a number or an array) under
    Rayleigh damping ``C = alpha M + beta K``: ``alpha / (2 w) + beta w / 2``."""
    return alpha / (2.0 * w) + 0.5 * beta * w


@dataclass(frozen=True)
class Scheme:
    """Parameters of one implicit integrator (``alpha_m = alpha_f = 0``: Newmark)."""

    name: str
    beta: float
    gamma: float
    alpha_m: float
    alpha_f: float
    rho_inf: float | None  # generalized-alpha only

    @classmethod
    def bdf1(cls) -> Scheme:
        return cls("bdf1", beta=1.0, gamma=1.0, alpha_m=0.0, alpha_f=0.0, rho_inf=None)

    @classmethod
    def newmark(cls, beta: float, gamma: float) -> Scheme:
        return cls("newmark", beta=beta, gamma=gamma, alpha_m=0.0, alpha_f=0.0, rho_inf=None)

    @classmethod
    def generalized_alpha(cls, rho_inf: float) -> Scheme:
        am, af, b, g = generalized_alpha_parameters(rho_inf)
        return cls("generalized-alpha", beta=b, gamma=g, alpha_m=am, alpha_f=af, rho_inf=rho_inf)

    @classmethod
    def of(cls, integrator: str, beta=None, gamma=None, rho_inf=None) -> Scheme:
        """The scheme of ``integrator`` with the parameters it uses (the others are ignored)."""
        if integrator == "bdf1":
            return cls.bdf1()
        if integrator == "newmark":
            return cls.newmark(float(beta), float(gamma))
        if integrator == "generalized-alpha":
            return cls.generalized_alpha(float(rho_inf))
        raise ValueError(f"{integrator!r} is not an implicit integrator")

    @property
    def is_bdf1(self) -> bool:
        return self.name == "bdf1"

    def coefficients(self, h: float) -> tuple[float, float]:
        """``(c_a, c_v)``: ``da/de`` and ``dv/de`` of the Newton correction ``e``."""
        if self.is_bdf1:
            return 1.0 / (h * h), 1.0 / h
        c_a = (1.0 - self.alpha_m) / ((1.0 - self.alpha_f) * self.beta * h * h)
        return c_a, self.gamma / (self.beta * h)

    def describe(self) -> dict[str, float | str]:
        """The integrator and its parameters (for summaries and provenance attributes)."""
        if self.is_bdf1:
            return {"integrator": self.name}
        out: dict[str, float | str] = {
            "integrator": self.name,
            "beta": self.beta,
            "gamma": self.gamma,
            "alpha_m": self.alpha_m,
            "alpha_f": self.alpha_f,
        }
        if self.rho_inf is not None:
            out["rho_inf"] = self.rho_inf
        return out


def generalized_alpha_parameters(rho_inf: float) -> tuple[float, float, float, float]:
    """Chung-Hulbert ``(alpha_m, alpha_f, beta, gamma)`` for spectral radius ``rho_inf``."""
    if not (0.0 <= rho_inf <= 1.0):
        raise ValueError(f"rho_inf must be in [0, 1], got {rho_inf!r}")
    am = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)
    af = rho_inf / (rho_inf + 1.0)
    gamma = 0.5 - am + af
    beta = 0.25 * (1.0 - am + af) ** 2
    return am, af, beta, gamma


def newmark_dissipation_advice(model: str, gamma: str, beta: str, keys: str = "") -> str:
    """The advice a failed Newton iteration of Newmark at ``gamma = 1/2`` carries (the beam's
    implicit solver and the multibody integrators; ``gamma``, ``beta``: the names of the
    parameters where it is raised; ``keys``: added inside the parenthesis). That scheme damps
    no mode: in a constrained (index-3) model its multipliers and velocities are not damped
    (Cardona and Geradin 1989), and in a geometrically nonlinear ``model`` its energy is not
    bounded (Kuhl and Crisfield 1999), so a high-frequency mode can grow until Newton fails,
    which a smaller step does not cure. ``beta = (gamma + 1/2)^2 / 4`` keeps the scheme
    unconditionally stable with the most high-frequency dissipation for that gamma (0.3025 at
    gamma = 0.6)."""
    return (
        f"newmark with {gamma} = 0.5 damps no mode, and in a {model} a high-frequency mode "
        "can grow until Newton fails, which a smaller dt does not cure: then use "
        f"generalized-alpha (rho_inf < 1) or {gamma} > 0.5 (e.g. 0.6 with {beta} = "
        f"0.3025{keys})"
    )
