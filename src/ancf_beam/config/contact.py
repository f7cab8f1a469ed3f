"""Contact and friction blocks of a configuration -> validated law parameters.

The keys, ranges and defaults of a ``contact:`` and a ``friction:`` block are the schema's
(``contact_law``, ``friction_law``); here are the rules that span keys: which keys a law takes,
the ones it needs, ``c`` or ``zeta``, ``v_dynamic`` above ``v_static``. The laws themselves (the
forces) are :mod:`ancf_beam.mbs.contact`, which reads the codes and parameter vectors below.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ancf_beam.config import schema
from ancf_beam.errors import ConfigError

__all__ = [
    "FRICTION_LAWS",
    "NORMAL_LAWS",
    "ContactLaw",
    "FrictionLaw",
    "NonsmoothLaw",
    "hertz_conformal_stiffness",
    "hysteresis_factor",
]

#: the law codes of the force kernels (ancf_beam.mbs.contact): position in these tuples
NORMAL_LAWS = ("kelvin-voigt", "hertz", "hunt-crossley", "lankarani-nikravesh", "flores")
FRICTION_LAWS = ("none", "coulomb-transition", "coulomb-tanh", "stribeck")
#: keys each normal law takes besides ``law`` and ``v0_min``
_LAW_KEYS = {"kelvin-voigt": ("k", "c", "zeta"), "hertz": ("K", "exponent")}
_HYSTERESIS_KEYS = ("K", "exponent", "restitution")


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


def _checked(block: Any, name: str, where: str) -> dict[str, Any]:
    """The block validated by the schema's definition ``name``, its defaults filled in."""
    if not isinstance(block, Mapping):
        raise ConfigError(
            f"config key '{where}' = {block!r} is invalid: expected "
            f"{schema.describe(schema.node(name))}"
        )
    given = schema.check(dict(block), schema.node(name), where)
    return {**schema.defaults(schema.node(name), given), **given}


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
    """A validated normal contact law (formulas: :mod:`ancf_beam.mbs.contact`)."""

    law: str
    stiffness: float  # k (N/m) for kelvin-voigt, K (N/m^n) otherwise
    exponent: float
    damping: float  # c (N s/m), kelvin-voigt only
    restitution: float | None
    v0_min: float
    model: str = "compliant"

    @classmethod
    def from_config(
        cls,
        block: Mapping[str, Any],
        where: str,
        m_eff: float | None = None,
        K_default: float | None = None,
    ) -> ContactLaw | NonsmoothLaw:
        """Validate a ``contact:`` block (``where`` is its dotted config path, used in errors).
        ``m_eff`` (kg) converts ``zeta`` to ``c``; ``K_default`` is used by the hertz-type laws
        when ``K`` is not given (e.g. the conformal stiffness of a clearance joint). A block
        with ``model: nonsmooth`` gives a :class:`NonsmoothLaw`."""
        b = _checked(block, "contact_law", where)
        if b.get("model") == "nonsmooth":
            return NonsmoothLaw(float(b["restitution"]), float(b["mu"]))
        law = b["law"]
        allowed = _LAW_KEYS.get(law, _HYSTERESIS_KEYS)
        for key in ("k", "c", "zeta", "K", "exponent", "restitution"):
            if key in block and key not in allowed:
                raise ConfigError(
                    f"config key '{where}.{key}' does not apply to law {law!r} "
                    f"(it takes {', '.join(allowed)})"
                )
        if law == "kelvin-voigt":
            return cls._kelvin_voigt(b, where, m_eff)
        K = b.get("K", K_default)
        if K is None:
            raise ConfigError(f"config key '{where}.K' is missing: law {law!r} needs a stiffness")
        ce = b.get("restitution")
        if law != "hertz" and ce is None:
            raise ConfigError(
                f"config key '{where}.restitution' is missing: law {law!r} needs "
                "a coefficient of restitution in (0, 1]"
            )
        return cls(law, float(K), float(b["exponent"]), 0.0, ce, float(b["v0_min"]))

    @classmethod
    def _kelvin_voigt(cls, b: dict[str, Any], where: str, m_eff: float | None) -> ContactLaw:
        if "k" not in b:
            raise ConfigError(f"config key '{where}.k' is missing: kelvin-voigt needs k (N/m)")
        c, zeta = b.get("c"), b.get("zeta")
        if c is not None and zeta is not None:
            raise ConfigError(
                f"config keys '{where}.c' and '{where}.zeta' are both given: give one"
            )
        if zeta is not None:
            if m_eff is None:
                raise ConfigError(
                    f"config key '{where}.zeta' needs an effective mass here; "
                    "give c (N s/m) instead"
                )
            c = 2.0 * zeta * math.sqrt(b["k"] * m_eff)
        damping = 0.0 if c is None else float(c)
        return cls("kelvin-voigt", float(b["k"]), 1.0, damping, None, float(b["v0_min"]))

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
    """A validated friction law (formulas: :mod:`ancf_beam.mbs.contact`)."""

    law: str = "none"
    mu: float = 0.0
    v_static: float = 1.0e-3
    v_dynamic: float = 1.0e-2
    v_ref: float = 1.0e-3
    mu_static: float = 0.0
    v_stribeck: float = 1.0e-2

    @classmethod
    def from_config(cls, block: Mapping[str, Any] | None, where: str) -> FrictionLaw:
        """Validate a ``friction:`` block (``None`` or ``law: none``: no friction)."""
        if block is None:
            return cls()
        b = _checked(block, "friction_law", where)
        law = b["law"]
        if law == "none":
            return cls()
        if "mu" not in b:
            raise ConfigError(f"config key '{where}.mu' is missing: law {law!r} needs mu")
        if law == "coulomb-transition" and not b["v_dynamic"] > b["v_static"]:
            raise ConfigError(
                f"config key '{where}.v_dynamic' = {b['v_dynamic']!r} is invalid: "
                f"expected a speed above v_static = {b['v_static']!r}"
            )
        values = [float(b[k]) for k in ("mu", "v_static", "v_dynamic", "v_ref")]
        return cls(law, *values, float(b.get("mu_static", b["mu"])), float(b["v_stribeck"]))

    @property
    def code(self) -> int:
        return FRICTION_LAWS.index(self.law)

    def params(self) -> np.ndarray:
        """Parameter vector read by :func:`ancf_beam.mbs.contact.friction_coefficient`."""
        vals = [self.mu, self.v_static, self.v_dynamic, self.v_ref, self.mu_static]
        return np.array([*vals, self.v_stribeck])
