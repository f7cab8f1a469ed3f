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
    "ADMISSIBLE_OVERLAP_SHARE",
    "FRICTION_LAWS",
    "NORMAL_LAWS",
    "ContactLaw",
    "ContactSpec",
    "FrictionLaw",
    "NonsmoothLaw",
    "admissible_overlap",
    "hertz_conformal_stiffness",
    "hysteresis_factor",
]

#: the law codes of the force kernels (ancf_beam.mbs.contact): position in these tuples
NORMAL_LAWS = ("kelvin-voigt", "hertz", "hunt-crossley", "lankarani-nikravesh", "flores")
FRICTION_LAWS = ("none", "coulomb-transition", "coulomb-tanh", "stribeck")


#: share of ``r_p + r_q`` that the penetration of two discs (a circle contact from outside) may
#: reach: its normal is the line of centres, which turns over when the centres meet (``delta =
#: r_p + r_q``), and the bodies would pass through each other. Stopping at half the sum leaves
#: the centres ``(r_p + r_q) / 2`` apart, so a step passes the centres unseen only if it moves
#: them by more than ``r_p + r_q`` relative to each other.
ADMISSIBLE_OVERLAP_SHARE = 0.5


def admissible_overlap(r_p: float, r_q: float) -> float:
    """Deepest penetration (m) of two discs of radii ``r_p``, ``r_q`` (m) that the circle
    contact's geometry describes (:data:`ADMISSIBLE_OVERLAP_SHARE`)."""
    return ADMISSIBLE_OVERLAP_SHARE * (r_p + r_q)


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

    def max_penetration(self, m_eff: float, v0: float) -> float:
        """Largest penetration (m) of a central impact of effective mass ``m_eff`` (kg) at
        approach speed ``v0`` (m/s) through this law, in closed form (no other force acts). In
        compression ``delta' > 0``, so the force is never clipped and ``m v dv = -F d delta``
        integrates from ``v0`` to 0:

        * hertz ``K delta^n``: ``K delta^(n+1) / (n+1) = m v0^2 / 2``;
        * the hysteresis laws ``K delta^n (1 + chi delta' / v0')`` (``v0' = max(v0, v0_min)``,
          as :func:`ancf_beam.mbs.contact.normal_force`), ``a = chi / v0'``: ``m dv / (1 +
          a v) v = -K delta^n d delta`` gives ``K delta^(n+1) / (n+1) = m v0^2 f(a v0)`` with
          ``f(x) = (x - ln(1 + x)) / x^2`` (``f(0) = 1/2``, the Hertz value; ``f`` decreases);
        * kelvin-voigt ``k delta + c delta'`` (``omega = sqrt(k/m)``, ``zeta = c / (2 m
          omega)``): ``delta_max = v0 / omega exp(-zeta phi)``, ``phi = atan(s / zeta) / s``
          with ``s = sqrt(1 - zeta^2)`` (under-damped; the maximum of the damped oscillation),
          ``1 / zeta`` critically damped, ``atanh(s / zeta) / s`` with ``s = sqrt(zeta^2 - 1)``
          over-damped.

        The Hertz value bounds them all (damping only adds to the force in compression)."""
        m, v = float(m_eff), float(v0)
        if self.law == "kelvin-voigt":
            omega = math.sqrt(self.stiffness / m)
            zeta = self.damping / (2.0 * m * omega)
            if zeta == 0.0:
                return v / omega
            if zeta < 1.0:
                s = math.sqrt(1.0 - zeta * zeta)
                phi = math.atan2(s, zeta) / s
            elif zeta == 1.0:
                phi = 1.0
            else:
                s = math.sqrt(zeta * zeta - 1.0)
                phi = math.atanh(s / zeta) / s
            return v / omega * math.exp(-zeta * phi)
        n = self.exponent
        x = self.chi * v / max(v, self.v0_min)
        if x < 1e-3:  # series of f: the closed form cancels (its error ~ eps / x)
            f = 0.5 - x / 3.0 + x * x / 4.0 - x**3 / 5.0 + x**4 / 6.0  # next term x^5 / 7
        else:
            f = (x - math.log1p(x)) / (x * x)
        return ((n + 1.0) * m * v * v * f / self.stiffness) ** (1.0 / (n + 1.0))


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
