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
(:func:`~ancf_beam.mbs.laws.hertz_conformal_stiffness`). Seed 004 writes
``1/R = 1/R_1 + 1/R_2``: that is the convex-convex (external) formula and does not apply to a
journal inside its bearing.
"""

from __future__ import annotations

import math

from numba import njit

from ancf_beam.mbs.laws import (
    FRICTION_LAWS,
    NORMAL_LAWS,
    ContactLaw,
    FrictionLaw,
    hertz_conformal_stiffness,
    hysteresis_factor,
)

__all__ = [
    "FRICTION_LAWS",
    "NORMAL_LAWS",
    "ContactLaw",
    "FrictionLaw",
    "friction_coefficient",
    "friction_slope",
    "hertz_conformal_stiffness",
    "hysteresis_factor",
    "law_coefficient",
    "law_force",
    "normal_force",
]

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


@njit(cache=True, nogil=True, error_model="numpy")
def friction_slope(law, par, v_t):
    """``d mu_eff / d v_t`` (s/m) of :func:`friction_coefficient` (0 where it is constant; the
    coulomb-transition law's corners count as their outer side)."""
    if law == F_NONE:
        return 0.0
    s = abs(v_t)
    if law == F_TRANSITION:
        if s <= par[Q_VS] or s >= par[Q_VD]:
            return 0.0
        return par[Q_MU] / (par[Q_VD] - par[Q_VS])
    th = math.tanh(v_t / par[Q_VREF])
    dth = (1.0 - th * th) / par[Q_VREF]
    if law == F_TANH:
        return par[Q_MU] * dth
    x = s / par[Q_VSTR]
    ex = math.exp(-x * x)
    mu = par[Q_MU] + (par[Q_MUS] - par[Q_MU]) * ex
    dmu = (par[Q_MUS] - par[Q_MU]) * ex * (-2.0 * x / par[Q_VSTR]) * (1.0 if v_t > 0.0 else -1.0)
    return dmu * th + mu * dth


def law_force(law: ContactLaw, delta: float, delta_dot: float, v0: float) -> float:
    """Normal force (N) of ``law`` at one state (convenience for tests and analysis)."""
    return float(normal_force(law.code, law.params(), delta, delta_dot, v0))


def law_coefficient(friction: FrictionLaw, v_t: float) -> float:
    """Friction coefficient of ``friction`` at the sliding speed ``v_t`` (m/s)."""
    return float(friction_coefficient(friction.code, friction.params(), v_t))
