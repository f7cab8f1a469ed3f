"""Independent references for the central impact of two bodies through a contact force law
(seed 003; docs/design.md section 7), written without the multibody code.

The relative approach ``delta`` (penetration, m) of two bodies of effective mass
``m = m1 m2 / (m1 + m2)`` (kg) meeting at speed ``v0`` (m/s) obeys the one-degree-of-freedom
equation ``m delta'' = -F(delta, delta')``, ``delta(0) = 0``, ``delta'(0) = v0``. The contact
ends when the force returns to zero; the bodies then separate at ``-delta'``, and the
coefficient of restitution is ``-delta'(t_end) / v0``.

* :func:`kelvin_voigt` -- closed form of the linear law ``F = k delta + c delta'`` (a damped
  oscillator of any damping ratio ``zeta``), both for the unclipped law (contact until
  ``delta`` returns to 0, half a damped period; the force turns tensile before that; never for
  ``zeta >= 1``) and for the never-tensile law (contact until ``k delta + c delta' = 0``, which
  comes earlier: the rest is free flight).
* :func:`hertz` -- the undamped Hertz impact ``F = K delta^n``: largest penetration
  ``((n+1) m v0^2 / (2 K))^(1/(n+1))`` (energy balance; ``(5 m v0^2 / (4 K))^(2/5)`` for
  ``n = 3/2``) and duration ``2 delta_max / v0 * I_n`` with ``I_n = int_0^1 (1 -
  x^(n+1))^(-1/2) dx`` evaluated by quadrature (:func:`hertz_duration_integral`; for
  ``n = 3/2``, ``2 I = 2.9432``: the classic ``t = 2.94 delta_max / v0``, which is
  ``t = 3.218 (m^2 / (K^2 v0))^(1/5)``, :func:`hertz_duration_constant`).
* :func:`integrate_impact` -- the 1-DOF equation for any of the laws (kelvin-voigt, hertz,
  hunt-crossley, lankarani-nikravesh, flores; force clipped at zero) by scipy ``solve_ivp``
  (DOP853, rtol 1e-12) with events at the largest penetration, the largest force and the end of
  the contact; on request with a bound of its own error (the difference from a run at 10 times
  the tolerance).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import quad, solve_ivp

__all__ = [
    "hertz",
    "hertz_duration_constant",
    "hertz_duration_integral",
    "integrate_impact",
    "kelvin_voigt",
]


def kelvin_voigt(m: float, k: float, c: float, v0: float) -> dict[str, dict[str, float]]:
    """Closed-form impact through ``F = k delta + c delta'``, any damping ratio ``zeta = c /
    (2 sqrt(k m)) >= 0``.

    Returns ``{"unclipped": {...}, "clipped": {...}}`` with ``restitution``, ``duration`` (s),
    ``max_penetration`` (m), ``max_force`` (N), and the common ``omega_n`` (rad/s), ``zeta``.

    With ``sigma = zeta omega_n``, the approach is ``delta(t) = v0 exp(-sigma t) sin(omega_d t)
    / omega_d`` (``omega_d = omega_n sqrt(1 - zeta^2)``; for ``zeta > 1`` sinh with ``s =
    omega_n sqrt(zeta^2 - 1)``, for ``zeta = 1`` ``v0 t exp(-sigma t)``). Its slope vanishes at
    ``omega_n t = g`` with ``g = acos(zeta) / sqrt(1 - zeta^2)`` (``acosh(zeta) / sqrt(zeta^2 -
    1)``; 1 when critically damped), where the largest penetration is ``v0 / omega_n exp(-zeta
    g)``. The force ``-m delta''`` returns to zero at the inflection, twice that time, where
    ``delta' = -v0 exp(-sigma t)``: the clipped (never tensile) contact lasts ``2 g / omega_n``
    with restitution ``exp(-2 zeta g)``. These few operations stay accurate as ``zeta -> 1``
    (``1 - zeta`` is exact there) and for large ``zeta``: a few ulps times the exponent.

    The force starts at ``c v0`` with slope ``v0 (k - c^2 / m)``: for ``zeta >= 1/2`` it only
    falls, so ``c v0`` is its largest value; below, its largest value is at ``F' = 0`` of
    ``F(t) = exp(-sigma t) (a sin(omega_d t) + b cos(omega_d t))``, ``a = (k - c sigma) v0 /
    omega_d``, ``b = c v0``. The unclipped contact ends when ``delta`` returns to 0, after
    half a damped period, with restitution ``exp(-sigma pi / omega_d)``; for ``zeta >= 1``
    never (``delta`` only tends to 0): ``duration`` inf, ``restitution`` 0."""
    wn = math.sqrt(k / m)
    zeta = c / (2.0 * math.sqrt(k * m))
    b = c * v0
    if zeta < 1.0:
        root = math.sqrt((1.0 - zeta) * (1.0 + zeta))
        g = math.acos(zeta) / root
        sig, wd = zeta * wn, wn * root
        t_un = math.pi / wd  # delta returns to 0
        unclipped = {"duration": t_un, "restitution": math.exp(-sig * t_un)}
    else:
        root = math.sqrt((zeta - 1.0) * (zeta + 1.0))
        g = math.acosh(zeta) / root if root > 0.0 else 1.0
        unclipped = {"duration": math.inf, "restitution": 0.0}
    f_max = b
    if zeta < 0.5:  # the force first rises: its largest value where F' = 0
        a = (k - c * sig) * v0 / wd
        t_force = math.atan2(wd * a - sig * b, sig * a + wd * b) / wd
        f_max = max(
            b, math.exp(-sig * t_force) * (a * math.sin(wd * t_force) + b * math.cos(wd * t_force))
        )
    common = {
        "omega_n": wn,
        "zeta": zeta,
        "max_penetration": v0 / wn * math.exp(-zeta * g),
        "max_force": f_max,
    }
    return {
        "unclipped": {**common, **unclipped},
        "clipped": {**common, "duration": 2.0 * g / wn, "restitution": math.exp(-2.0 * zeta * g)},
    }


def hertz_duration_integral(n: float = 1.5) -> float:
    """``I_n = int_0^1 (1 - x^(n+1))^(-1/2) dx`` by adaptive quadrature with the algebraic
    end-point weight ``(1 - x)^(-1/2)`` (the remaining factor is smooth)."""
    p = n + 1.0

    def smooth(x):
        if x >= 1.0:
            return 1.0 / math.sqrt(p)  # limit of ((1 - x) / (1 - x^p))^(1/2)
        return math.sqrt((1.0 - x) / (1.0 - x**p))

    val, _ = quad(smooth, 0.0, 1.0, weight="alg", wvar=(0.0, -0.5), epsabs=1e-15, epsrel=1e-14)
    return float(val)


def hertz_duration_constant(n: float = 1.5) -> float:
    """``C`` of the undamped Hertz impact duration ``t = C (m^2 / (K^2 v0))^(1/5)`` (``n = 3/2``;
    for other exponents ``t = C (m / K)^(1/(n+1)) v0^((1-n)/(n+1))``): ``2 ((n+1)/2)^(1/(n+1))
    I_n``."""
    return 2.0 * ((n + 1.0) / 2.0) ** (1.0 / (n + 1.0)) * hertz_duration_integral(n)


def hertz(m: float, K: float, v0: float, n: float = 1.5) -> dict[str, float]:
    """Undamped Hertz impact ``F = K delta^n``: ``max_penetration`` (m), ``duration`` (s),
    ``max_force`` (N, at the largest penetration), ``restitution`` (1)."""
    dmax = ((n + 1.0) * m * v0 * v0 / (2.0 * K)) ** (1.0 / (n + 1.0))
    return {
        "max_penetration": dmax,
        "duration": 2.0 * dmax / v0 * hertz_duration_integral(n),
        "max_force": K * dmax**n,
        "restitution": 1.0,
    }


def _chi(law: str, ce: float | None) -> float:
    """Hysteresis factor of ``F = K delta^n (1 + chi delta' / v0)`` (Hunt & Crossley 1975;
    Lankarani & Nikravesh 1990; Flores et al. 2011)."""
    if law == "hunt-crossley":
        return 3.0 * (1.0 - ce) / 2.0
    if law == "lankarani-nikravesh":
        return 3.0 * (1.0 - ce * ce) / 4.0
    if law == "flores":
        return 8.0 * (1.0 - ce) / (5.0 * ce)
    return 0.0


#: the reference's own error is estimated against a run at this many times its rtol
ERROR_RTOL_FACTOR = 10.0


def integrate_impact(
    law: str,
    m: float,
    v0: float,
    *,
    k: float | None = None,
    c: float = 0.0,
    K: float | None = None,
    n: float = 1.5,
    restitution: float | None = None,
    rtol: float = 1e-12,
    push: float = 0.0,
    error: bool = False,
) -> dict[str, float]:
    """High-accuracy integration of ``m delta'' = -max(F, 0)`` (:func:`_integrate_impact`);
    with ``error`` also ``error``: per result key a bound of its own error, ``|x(rtol) -
    x(ERROR_RTOL_FACTOR rtol)|`` (DOP853's error shrinks about ``ERROR_RTOL_FACTOR^(7/8)`` =
    7.5 times from that run to this one, so the difference exceeds this run's error) plus
    ``rtol |x|`` (the error one step admits: the difference can vanish by coincidence) plus
    ``4 eps |x|`` for the round-off of the result."""
    kw = dict(k=k, c=c, K=K, n=n, restitution=restitution, push=push)
    out = _integrate_impact(law, m, v0, rtol=rtol, **kw)
    if error:
        coarse = _integrate_impact(law, m, v0, rtol=ERROR_RTOL_FACTOR * rtol, **kw)
        eps = float(np.finfo(float).eps)
        out["error"] = {
            key: abs(out[key] - coarse[key]) + (rtol + 4.0 * eps) * abs(out[key]) for key in out
        }
    return out


def _integrate_impact(
    law: str,
    m: float,
    v0: float,
    *,
    k: float | None = None,
    c: float = 0.0,
    K: float | None = None,
    n: float = 1.5,
    restitution: float | None = None,
    rtol: float = 1e-12,
    push: float = 0.0,
) -> dict[str, float]:
    """High-accuracy integration of ``m delta'' = -max(F, 0)`` from ``delta = 0``, ``delta' =
    v0`` until the force returns to zero (then the bodies fly apart). ``law``: kelvin-voigt
    (``k``, ``c``), hertz (``K``, ``n``), hunt-crossley / lankarani-nikravesh / flores (``K``,
    ``n``, ``restitution`` = the law's parameter ``ce``); ``push`` (N): a constant force
    pressing the bodies together during the contact (gravity on a body bouncing on the ground:
    ``m g``; the approach speed before the next impact then equals the separation speed when
    the contact ends at ``delta = 0``). Returns ``restitution`` (recovered),
    ``duration`` (s, time with positive force), ``max_penetration`` (m), ``max_force`` (N)."""
    unclipped, rate = _law_force(law, v0, k=k, c=c, K=K, n=n, restitution=restitution)

    def rhs(t, y):
        f = unclipped(y[0], y[1])
        return [y[1], (push - max(f, 0.0)) / m]

    def ev_end(t, y):  # the force returns to zero: delta = 0, or the bracket / k d + c d' = 0
        if law == "kelvin-voigt":
            return unclipped(y[0], y[1])
        return min(y[0], 1.0 + _chi(law, restitution) * y[1] / v0)

    ev_end.terminal = True
    ev_end.direction = -1

    def ev_pen(t, y):
        return y[1]

    ev_pen.direction = -1

    def ev_force(t, y):
        return rate(y[0], y[1], rhs(t, y)[1])

    ev_force.direction = -1
    # time scale: the linear(ised) contact period
    scale = math.sqrt(m / k) if law == "kelvin-voigt" else hertz(m, K, v0, n)["duration"]
    # start just after the onset for the hertz-type laws (delta^n has no slope at 0 for n > 1
    # and the end event would fire at t = 0): the series delta = v0 t is exact to O(t^(n+2))
    t0 = 0.0 if law == "kelvin-voigt" else 1e-9 * scale
    y0 = [v0 * t0, v0]
    sol = solve_ivp(
        rhs,
        (t0, 100.0 * scale),
        y0,
        method="DOP853",
        rtol=rtol,
        atol=[1e-3 * rtol * v0 * scale, 1e-3 * rtol * v0],
        events=(ev_end, ev_pen, ev_force),
        dense_output=False,
    )
    if sol.status != 1:
        raise RuntimeError(f"integrate_impact: no end of contact found ({sol.message})")
    t_end = float(sol.t_events[0][0])
    y_end = sol.y_events[0][0]
    pens = [y[0] for y in sol.y_events[1]]
    forces = [unclipped(*y) for y in sol.y_events[2]]
    f0 = unclipped(0.0, v0) if law == "kelvin-voigt" else 0.0
    return {
        "restitution": -float(y_end[1]) / v0,
        "duration": t_end,
        "max_penetration": float(max(pens)) if pens else float("nan"),
        "max_force": float(max(forces + [f0])),
    }


def _law_force(law: str, v0: float, *, k, c, K, n, restitution):
    """The contact force of ``law`` before clipping at zero, ``F(delta, delta')`` (N), and its
    time derivative ``dF/dt (delta, delta', delta'')`` (N/s), for an impact at ``v0`` (m/s)."""
    if law == "kelvin-voigt":

        def unclipped(d, dd):
            return k * d + c * dd

        def rate(d, dd, acc):  # dF/dt
            return k * dd + c * acc

    else:
        chi = _chi(law, restitution)

        def unclipped(d, dd):
            return K * max(d, 0.0) ** n * (1.0 + chi * dd / v0)

        def rate(d, dd, acc):
            dp = max(d, 0.0)
            return n * K * dp ** (n - 1.0) * dd * (1.0 + chi * dd / v0) + K * dp**n * chi * acc / v0

    return unclipped, rate
