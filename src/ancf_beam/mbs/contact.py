"""Contact force laws and friction (seeds 003, 004; docs/design.md section 7).

Contact is a force element, not a constraint. Its geometry (penetration ``delta`` > 0 when the
surfaces overlap, normal approach speed ``delta_dot`` > 0 while they close, tangential sliding
speed ``v_t``) is computed by the element that owns it (two-body impact, revolute clearance
joint); this module turns that geometry into forces.

Normal laws (``contact.law``; ``n`` is the exponent, 1.5 unless configured):

* ``kelvin-voigt``: ``F = k delta + c delta_dot`` (seed 003), ``c`` given or from the damping
  ratio ``zeta``: ``c = 2 zeta sqrt(k m_eff)``. Near separation the damping term makes the
  unclipped force tensile while the bodies still overlap: the force is clipped at zero, so the
  contact ends (force zero) before the overlap closes.
* ``hertz``: ``F = K delta^n``, no dissipation; zero at ``delta = 0``.
* ``hunt-crossley``: ``F = K delta^n (1 + 3 (1 - ce) / 2 * delta_dot / v0)``.
* ``lankarani-nikravesh``: ``F = K delta^n (1 + 3 (1 - ce^2) / 4 * delta_dot / v0)`` (accurate for
  restitution ``ce`` near 1).
* ``flores``: Flores et al. (2011), ``F = K delta^n (1 + 8 (1 - ce) / (5 ce) * delta_dot / v0)``
  (over the whole range of ``ce``).

The hysteresis laws vanish with ``delta`` at both ends of an impact; during restitution the
bracket turns negative when ``-delta_dot / v0 > 1 / chi`` (low ``ce``): the force is clipped at
zero there too. Every law returns ``F >= 0`` (never tensile). ``v0`` is the approach speed at
the onset of the current impact (state the integrator carries); it is floored at ``v0_min`` so
that an impact that starts at rest (continuous contact) has finite damping.

Friction (``friction.law``; force ``F_t = -mu_eff(v_t) F_n`` opposing the sliding speed):

* ``none``;
* ``coulomb-transition``: seed 004's ``Cd(v_t)``: 0 below ``v_static``, 1 above ``v_dynamic``,
  linear between (defaults 0.001 and 0.01 m/s); ``mu_eff = mu Cd(|v_t|) sign(v_t)``;
* ``coulomb-tanh``: ``mu_eff = mu tanh(v_t / v_ref)``;
* ``stribeck``: ``mu_eff = (mu + (mu_static - mu) exp(-(v_t / v_stribeck)^2)) tanh(v_t / v_ref)``.

Hertz stiffness of the internal, conformal journal-bearing contact: ``K = 4/3 E* sqrt(R)`` with
``1/E* = (1 - nu_1^2)/E_1 + (1 - nu_2^2)/E_2`` and ``R = R_b R_j / (R_b - R_j)``
(:func:`hertz_conformal_stiffness`). Seed 004 writes ``1/R = 1/R_1 + 1/R_2``: that is the
convex-convex (external) formula and does not apply to a journal inside its bearing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from ancf_beam.errors import ConfigError

__all__ = [
    "FRICTION_LAWS",
    "NORMAL_LAWS",
    "ContactLaw",
    "FrictionLaw",
    "friction_coefficient",
    "hertz_conformal_stiffness",
    "hysteresis_factor",
    "normal_force",
]

NORMAL_LAWS = ("kelvin-voigt", "hertz", "hunt-crossley", "lankarani-nikravesh", "flores")
FRICTION_LAWS = ("none", "coulomb-transition", "coulomb-tanh", "stribeck")
KELVIN_VOIGT, HERTZ, HUNT_CROSSLEY, LANKARANI_NIKRAVESH, FLORES = range(5)
F_NONE, F_TRANSITION, F_TANH, F_STRIBECK = range(4)

#: normal-law parameter vector: stiffness (k or K), damping c (kelvin-voigt), exponent n,
#: hysteresis factor chi (multiplies delta_dot / v0), v0_min (m/s)
P_STIFF, P_DAMP, P_EXP, P_CHI, P_V0MIN = range(5)
#: friction parameter vector: mu, v_static, v_dynamic, v_ref, mu_static, v_stribeck
Q_MU, Q_VS, Q_VD, Q_VREF, Q_MUS, Q_VSTR = range(6)


@njit(cache=True, nogil=True, error_model="numpy")
def normal_force(law, par, delta, delta_dot, v0):
    """Normal contact force (N, >= 0) of law code ``law`` with parameters ``par``, at
    penetration ``delta`` (m), its rate ``delta_dot`` (m/s, > 0 closing) and approach speed
    ``v0`` (m/s) at the onset of the impact. Zero when ``delta < 0``; at ``delta = 0`` the
    limit from inside (Kelvin-Voigt: ``c delta_dot`` when closing, the force with which an
    impact starts)."""
    if delta < 0.0:
        return 0.0
    if law == KELVIN_VOIGT:
        f = par[P_STIFF] * delta + par[P_DAMP] * delta_dot
    else:
        f = par[P_STIFF] * delta ** par[P_EXP]
        if law != HERTZ:
            f *= 1.0 + par[P_CHI] * delta_dot / max(v0, par[P_V0MIN])
    return f if f > 0.0 else 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def friction_coefficient(law, par, v_t):
    """Signed effective friction coefficient: the tangential force is ``-mu_eff * F_n``."""
    if law == F_NONE:
        return 0.0
    s = abs(v_t)
    if law == F_TRANSITION:
        if s <= par[Q_VS]:
            return 0.0
        cd = 1.0 if s >= par[Q_VD] else (s - par[Q_VS]) / (par[Q_VD] - par[Q_VS])
        return par[Q_MU] * cd * (1.0 if v_t > 0.0 else -1.0)
    sgn = math.tanh(v_t / par[Q_VREF])
    if law == F_TANH:
        return par[Q_MU] * sgn
    x = s / par[Q_VSTR]
    return (par[Q_MU] + (par[Q_MUS] - par[Q_MU]) * math.exp(-x * x)) * sgn


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
    E_bearing: float, nu_bearing: float, E_journal: float, nu_journal: float,
    R_bearing: float, R_journal: float,
) -> float:  # fmt: skip
    """Hertz ``K`` (N/m^1.5) of a journal (radius ``R_journal``) inside a bearing
    (``R_bearing`` > ``R_journal``): ``4/3 E* sqrt(R_b R_j / (R_b - R_j))``."""
    if not R_bearing > R_journal > 0.0:
        raise ValueError(f"need R_bearing > R_journal > 0, got {R_bearing!r}, {R_journal!r}")
    e_star = 1.0 / ((1.0 - nu_bearing**2) / E_bearing + (1.0 - nu_journal**2) / E_journal)
    radius = R_bearing * R_journal / (R_bearing - R_journal)
    return 4.0 / 3.0 * e_star * math.sqrt(radius)


def _num(block: Mapping[str, Any], key: str, where: str, desc: str, ok, default=None) -> Any:
    v = block.get(key, default)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not ok(v):
        raise ConfigError(f"config key '{where}.{key}' = {v!r} is invalid: expected {desc}")
    return float(v)


def _unknown(block: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    if not isinstance(block, Mapping):
        raise ConfigError(f"config key '{where}' = {block!r} is invalid: expected a mapping")
    for key in block:
        if key not in allowed:
            raise ConfigError(
                f"config key '{where}.{key}' is unknown: allowed keys are {', '.join(allowed)}"
            )


@dataclass(frozen=True)
class ContactLaw:
    """A validated normal contact law (see the module docstring for the formulas)."""

    law: str
    stiffness: float  # k (N/m) for kelvin-voigt, K (N/m^n) otherwise
    exponent: float
    damping: float  # c (N s/m), kelvin-voigt only
    restitution: float | None
    v0_min: float

    KEYS = ("law", "k", "c", "zeta", "K", "exponent", "restitution", "v0_min")

    @classmethod
    def from_config(
        cls, block: Mapping[str, Any], where: str, m_eff: float | None = None,
        K_default: float | None = None,
    ) -> ContactLaw:  # fmt: skip
        """Validate a ``contact:`` block (``where`` is its dotted config path, used in errors).
        ``m_eff`` (kg) converts ``zeta`` to ``c``; ``K_default`` is used by the hertz-type laws
        when ``K`` is not given (e.g. the conformal stiffness of a clearance joint)."""
        _unknown(block, cls.KEYS, where)
        law = block.get("law")
        if law not in NORMAL_LAWS:
            raise ConfigError(f"config key '{where}.law' = {law!r} is invalid: expected one of "
                              f"{', '.join(NORMAL_LAWS)}")  # fmt: skip
        pos = "a finite number > 0"
        v0_min = _num(block, "v0_min", where, pos, lambda v: v > 0, 1.0e-4)
        if law == "kelvin-voigt":
            return cls._kelvin_voigt(block, where, m_eff, v0_min)
        for key in ("k", "c", "zeta"):
            if key in block:
                raise ConfigError(f"config key '{where}.{key}' does not apply to law {law!r} "
                                  "(use K, exponent, restitution)")  # fmt: skip
        K = _num(block, "K", where, pos, lambda v: v > 0, K_default)
        if K is None:
            raise ConfigError(f"config key '{where}.K' is missing: law {law!r} needs a stiffness")
        n = _num(block, "exponent", where, "a number in [1, 3]", lambda v: 1 <= v <= 3, 1.5)
        ce = None
        if law != "hertz":
            ce = _num(block, "restitution", where, "a number in (0, 1]", lambda v: 0 < v <= 1)
            if ce is None:
                raise ConfigError(f"config key '{where}.restitution' is missing: law {law!r} "
                                  "needs a coefficient of restitution in (0, 1]")  # fmt: skip
        elif "restitution" in block:
            raise ConfigError(f"config key '{where}.restitution' does not apply to law 'hertz' "
                              "(elastic, no dissipation)")  # fmt: skip
        return cls(law, K, n, 0.0, ce, v0_min)

    @classmethod
    def _kelvin_voigt(cls, block, where, m_eff, v0_min) -> ContactLaw:
        for key in ("K", "exponent", "restitution"):
            if key in block:
                raise ConfigError(f"config key '{where}.{key}' does not apply to law "
                                  "'kelvin-voigt' (use k and c or zeta)")  # fmt: skip
        k = _num(block, "k", where, "a finite number > 0", lambda v: v > 0)
        if k is None:
            raise ConfigError(f"config key '{where}.k' is missing: kelvin-voigt needs k (N/m)")
        c = _num(block, "c", where, "a finite number >= 0", lambda v: v >= 0)
        zeta = _num(block, "zeta", where, "a finite number >= 0", lambda v: v >= 0)
        if c is not None and zeta is not None:
            raise ConfigError(f"config keys '{where}.c' and '{where}.zeta' are both given: "
                              "give one")  # fmt: skip
        if zeta is not None:
            if m_eff is None:
                raise ConfigError(f"config key '{where}.zeta' needs an effective mass here; "
                                  "give c (N s/m) instead")  # fmt: skip
            c = 2.0 * zeta * math.sqrt(k * m_eff)
        return cls("kelvin-voigt", k, 1.0, 0.0 if c is None else c, None, v0_min)

    @property
    def code(self) -> int:
        return NORMAL_LAWS.index(self.law)

    @property
    def chi(self) -> float:
        return 0.0 if self.restitution is None else hysteresis_factor(self.law, self.restitution)

    def params(self) -> np.ndarray:
        """Parameter vector read by :func:`normal_force`."""
        return np.array([self.stiffness, self.damping, self.exponent, self.chi, self.v0_min])

    def force(self, delta: float, delta_dot: float, v0: float) -> float:
        """Normal force (N) at one state (convenience for tests and analysis)."""
        return float(normal_force(self.code, self.params(), delta, delta_dot, v0))


@dataclass(frozen=True)
class FrictionLaw:
    """A validated friction law (see the module docstring)."""

    law: str = "none"
    mu: float = 0.0
    v_static: float = 1.0e-3
    v_dynamic: float = 1.0e-2
    v_ref: float = 1.0e-3
    mu_static: float = 0.0
    v_stribeck: float = 1.0e-2

    KEYS = ("law", "mu", "v_static", "v_dynamic", "v_ref", "mu_static", "v_stribeck")

    @classmethod
    def from_config(cls, block: Mapping[str, Any] | None, where: str) -> FrictionLaw:
        """Validate a ``friction:`` block (``None`` or ``law: none``: no friction)."""
        if block is None:
            return cls()
        _unknown(block, cls.KEYS, where)
        law = block.get("law", "none")
        if law not in FRICTION_LAWS:
            raise ConfigError(f"config key '{where}.law' = {law!r} is invalid: expected one of "
                              f"{', '.join(FRICTION_LAWS)}")  # fmt: skip
        if law == "none":
            return cls()
        pos = "a finite number > 0"
        mu = _num(block, "mu", where, "a number in [0, 2]", lambda v: 0 <= v <= 2, None)
        if mu is None:
            raise ConfigError(f"config key '{where}.mu' is missing: law {law!r} needs mu")
        d = cls()
        vs = _num(block, "v_static", where, pos, lambda v: v > 0, d.v_static)
        vd = _num(block, "v_dynamic", where, pos, lambda v: v > 0, d.v_dynamic)
        if law == "coulomb-transition" and not vd > vs:
            raise ConfigError(f"config key '{where}.v_dynamic' = {vd!r} is invalid: expected a "
                              f"speed above v_static = {vs!r}")  # fmt: skip
        v_ref = _num(block, "v_ref", where, pos, lambda v: v > 0, d.v_ref)
        mus = _num(block, "mu_static", where, "a number in [0, 2]", lambda v: 0 <= v <= 2, mu)
        vstr = _num(block, "v_stribeck", where, pos, lambda v: v > 0, d.v_stribeck)
        return cls(law, mu, vs, vd, v_ref, mus, vstr)

    @property
    def code(self) -> int:
        return FRICTION_LAWS.index(self.law)

    def params(self) -> np.ndarray:
        """Parameter vector read by :func:`friction_coefficient`."""
        return np.array([self.mu, self.v_static, self.v_dynamic, self.v_ref, self.mu_static,
                         self.v_stribeck])  # fmt: skip

    def coefficient(self, v_t: float) -> float:
        return float(friction_coefficient(self.code, self.params(), v_t))
