"""Initial geometric imperfection: a stress-free, initially curved reference shape.

The reference centre line is parameterised by arc length ``x`` in [0, L] (so ``|r0'| = 1``) with
tangent angle ``theta0(x) = int_0^x kappa0 p(s) ds`` and curvature profile ``p = 1`` (uniform:
a circular arc) or ``p = 1 - x/L`` (linear: the shape of a tip-loaded cantilever). The clamp
stays at the origin with a horizontal tangent. Strains are measured from this reference: the
element uses ``eps - eps0`` and ``kappa - kappa0`` (see :mod:`ancf_beam.beam.kernels`).
"""

from __future__ import annotations

import numpy as np

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ancf_beam.specs import ImperfectionSpec

__all__ = [
    "MAX_KAPPA0_L",
    "centre_line",
    "kappa0_for_tip_offset",
    "reference_coordinates",
    "resolved_kappa0",
    "tangent_angle",
    "tip_reach",
]

#: Bound of ``|kappa0| * L`` per profile: reference tip angles up to 2 rad (uniform) and 1.5 rad
#: (linear), the range over which the reference tip height grows with kappa0, so a
#: ``tip_offset`` maps onto exactly one kappa0 inside the same bound.
MAX_KAPPA0_L = {"uniform": 2.0, "linear": 3.0}


def tangent_angle(kappa0: float, profile: str, x: np.ndarray, length: float) -> np.ndarray:
    """``theta0(x)`` (rad) of the reference for clamp curvature ``kappa0`` (1/m)."""
    x = np.asarray(x, dtype=float)
    if profile == "uniform":
        return kappa0 * x
    if profile == "linear":
        return kappa0 * (x - 0.5 * x**2 / length)
    raise ValueError(f"unknown imperfection profile {profile!r} (uniform, linear)")


def centre_line(kappa0: float, profile: str, x_nodes: np.ndarray, n_gauss: int = 12):
    """Positions ``(x, y)`` of the reference at ``x_nodes`` by composite Gauss quadrature."""
    xg, wg = np.polynomial.legendre.leggauss(n_gauss)
    length = float(x_nodes[-1])
    pos = np.zeros((x_nodes.size, 2))
    for k in range(1, x_nodes.size):
        a, b = x_nodes[k - 1], x_nodes[k]
        s = 0.5 * (a + b) + 0.5 * (b - a) * xg
        th = tangent_angle(kappa0, profile, s, length)
        w = 0.5 * (b - a) * wg
        pos[k] = pos[k - 1] + [w @ np.cos(th), w @ np.sin(th)]
    return pos


def tip_reach(profile: str, length: float) -> float:
    """Reference tip height (m) at the bound ``|kappa0| L =`` :data:`MAX_KAPPA0_L`: a
    ``tip_offset`` below it in size maps onto a kappa0 inside the bound (midpoint rule)."""
    n = 4000
    s = (np.arange(n) + 0.5) / n * length
    th = tangent_angle(MAX_KAPPA0_L[profile] / length, profile, s, length)
    return float(np.sum(np.sin(th)) * length / n)


def kappa0_for_tip_offset(offset: float, profile: str, length: float) -> float:
    """Clamp curvature (1/m) whose reference tip lies ``offset`` (m) from the x axis."""
    from scipy import optimize  # here: the configuration imports this module (scipy: ~1 s)

    if offset == 0.0:
        return 0.0

    def tip_y(k):
        return centre_line(k, profile, np.linspace(0.0, length, 65))[-1, 1] - offset

    kmax = MAX_KAPPA0_L[profile] / length  # the bound on |kappa0| L the config checks
    lo, hi = (0.0, kmax) if offset > 0 else (-kmax, 0.0)
    if np.sign(tip_y(lo)) == np.sign(tip_y(hi)):
        raise ValueError(f"imperfection.tip_offset = {offset} m is too large for L = {length} m")
    # smooth in k; rtol 1e-14 (45 ulps) stays above the quadrature's round-off
    return float(optimize.brentq(tip_y, lo, hi, xtol=1e-14, rtol=1e-14))


def resolved_kappa0(imp: ImperfectionSpec, length: float) -> float:
    if imp.tip_offset is not None and imp.tip_offset != 0.0:
        return kappa0_for_tip_offset(float(imp.tip_offset), imp.profile, length)
    return float(imp.kappa0)


def reference_coordinates(imp: ImperfectionSpec, x_nodes: np.ndarray) -> np.ndarray:
    """Full ANCF coordinate vector ``[r_x, r_y, r_x', r_y']`` per node of the reference."""
    length = float(x_nodes[-1])
    k0 = resolved_kappa0(imp, length)
    pos = centre_line(k0, imp.profile, x_nodes)
    th = tangent_angle(k0, imp.profile, x_nodes, length)
    q = np.empty((x_nodes.size, 4))
    q[:, 0:2] = pos
    q[:, 2] = np.cos(th)
    q[:, 3] = np.sin(th)
    return q.ravel()
