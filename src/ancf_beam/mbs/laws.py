"""Contact and friction laws as values: the parameters of a normal law, a friction law and a
nonsmooth contact, the codes and parameter vectors the force kernels of
:mod:`ancf_beam.mbs.contact` read, the hysteresis factors and the conformal Hertz stiffness.

Plain Python (no numba): the configuration (:mod:`ancf_beam.config.contact`, which parses the
``contact:`` and ``friction:`` blocks into these) imports it without compiling any kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FRICTION_LAWS",
    "NORMAL_LAWS",
    "ContactLaw",
    "ContactSpec",
    "FrictionLaw",
    "NonsmoothLaw",
    "hertz_conformal_stiffness",
    "hysteresis_factor",
]

#: the law codes of the force kernels (ancf_beam.mbs.contact): position in these tuples
NORMAL_LAWS = ("kelvin-voigt", "hertz", "hunt-crossley", "lankarani-nikravesh", "flores")
FRICTION_LAWS = ("none", "coulomb-transition", "coulomb-tanh", "stribeck")


def hysteresis_factor(law: str, restitution: float) -> float:
    """``chi`` of ``F = K delta^n (1 + chi delta_dot / v0)`` for the hysteresis laws."""
    ce = restitution
    if law == "hunt-crossley":
        return 1.5 * (1.0 - ce)
    if law == "lankarani-nikravesh":
        return 0.75 * (1.0 - ce * ce)
    if law == "flores":
        return 8.0 * (1.0 - ce) / (5.0 * ce)
    return 0.0


def hertz_conformal_stiffness(
    E_bearing: float,
    nu_bearing: float,
    E_journal: float,
    nu_journal: float,
    R_bearing: float,
    R_journal: float,
) -> float:
    """Hertz ``K`` (N/m^1.5) of a journal inside its bearing: ``4/3 E* sqrt(R)`` with the
    conformal radius ``R = R_b R_j / (R_b - R_j)``."""
    if not R_bearing > R_journal > 0.0:
        raise ValueError(f"need R_bearing > R_journal > 0, got {R_bearing!r}, {R_journal!r}")
    e_star = 1.0 / ((1.0 - nu_bearing**2) / E_bearing + (1.0 - nu_journal**2) / E_journal)
    radius = R_bearing * R_journal / (R_bearing - R_journal)
    return 4.0 / 3.0 * e_star * math.sqrt(radius)


@dataclass(frozen=True)
class NonsmoothLaw:
    """A nonsmooth contact (``model: nonsmooth``): a unilateral constraint with Newton's impact
    law (``restitution``, 0 <= e <= 1) and Coulomb friction (``mu`` >= 0), integrated by the
    moreau-jean time stepping; no force law, no stiffness."""

    restitution: float
    mu: float
    model: str = "nonsmooth"
    law: str = "nonsmooth"


@dataclass(frozen=True)
class ContactLaw:
    """A normal contact law (formulas: :mod:`ancf_beam.mbs.contact`); parsed from a
    ``contact:`` block by :func:`ancf_beam.config.contact.contact_law`."""

    law: str
    stiffness: float  # k (N/m) for kelvin-voigt, K (N/m^n) otherwise
    exponent: float
    damping: float  # c (N s/m), kelvin-voigt only
    restitution: float | None
    v0_min: float
    model: str = "compliant"

    @property
    def code(self) -> int:
        return NORMAL_LAWS.index(self.law)

    @property
    def chi(self) -> float:
        return 0.0 if self.restitution is None else hysteresis_factor(self.law, self.restitution)

    def params(self) -> np.ndarray:
        """Parameter vector read by :func:`ancf_beam.mbs.contact.normal_force`."""
        return np.array([self.stiffness, self.damping, self.exponent, self.chi, self.v0_min])


@dataclass(frozen=True)
class FrictionLaw:
    """A friction law (formulas: :mod:`ancf_beam.mbs.contact`); parsed from a ``friction:``
    block by :func:`ancf_beam.config.contact.friction_law`."""

    law: str = "none"
    mu: float = 0.0
    v_static: float = 1.0e-3
    v_dynamic: float = 1.0e-2
    v_ref: float = 1.0e-3
    mu_static: float = 0.0
    v_stribeck: float = 1.0e-2

    @property
    def code(self) -> int:
        return FRICTION_LAWS.index(self.law)

    def params(self) -> np.ndarray:
        """Parameter vector read by :func:`ancf_beam.mbs.contact.friction_coefficient`."""
        vals = [self.mu, self.v_static, self.v_dynamic, self.v_ref, self.mu_static]
        return np.array([*vals, self.v_stribeck])


@dataclass(frozen=True)
class ContactSpec:
    """The laws of one contact (a ``contacts:`` item, a revolute's ``clearance`` or a
    prismatic's ``guide``): normal law (a :class:`NonsmoothLaw` for ``model: nonsmooth``),
    friction law (None for a nonsmooth contact: its ``mu`` is the law's), continuous-contact
    factor; ``key``: the dotted key of its ``contact:`` block relative to the mechanism."""

    law: ContactLaw | NonsmoothLaw
    friction: FrictionLaw | None
    continuous_factor: float
    key: str = "contact"

    @property
    def nonsmooth(self) -> bool:
        return self.law.model == "nonsmooth"
