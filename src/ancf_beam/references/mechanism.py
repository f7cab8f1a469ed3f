"""Closed-form kinematics of the centred slider-crank (an independent reference).

Crank of length ``r`` (m) pivoted at the origin, turning at the constant rate ``omega`` (rad/s)
from ``theta = theta0`` (rad, from +x, counter-clockwise); connecting rod of length ``l > r`` (m)
from the crank pin ``A = r (cos theta, sin theta)`` to the slider pin ``B = (x, 0)`` on the x
axis (the slider moves along the line through the pivot, on the side of +x)::

    x       = r cos(theta) + D,              D = sqrt(l^2 - r^2 sin^2(theta))
    x'      = -r omega sin(theta) - r^2 omega sin(theta) cos(theta) / D
    x''     = -r omega^2 cos(theta) - r^2 omega^2 cos(2 theta) / D
              - r^4 omega^2 sin^2(theta) cos^2(theta) / D^3

The rod angle ``phi`` (from +x, of the vector A -> B) has ``sin(phi) = -(r/l) sin(theta)``,
``cos(phi) = D / l``, ``phi' = -r omega cos(theta) / D`` and
``phi'' = ((r/l) omega^2 sin(theta) + phi'^2 sin(phi)) / cos(phi)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["slider_crank_kinematics"]


def slider_crank_kinematics(
    t, crank: float, rod: float, omega: float, theta0: float = 0.0
) -> dict[str, np.ndarray]:
    """Slider position ``x`` (m), velocity ``v`` (m/s), acceleration ``a`` (m/s^2), crank angle
    ``theta`` (rad) and rod angle ``phi`` with its rates ``phi_dot``, ``phi_ddot`` at times ``t``
    (s), for crank length ``crank``, rod length ``rod`` (m) and crank speed ``omega`` (rad/s)."""
    r, l, w = float(crank), float(rod), float(omega)
    if not (r > 0 and l > r):
        raise ValueError(f"need 0 < crank < rod, got crank = {r}, rod = {l}")
    t = np.asarray(t, dtype=float)
    th = theta0 + w * t
    s, c = np.sin(th), np.cos(th)
    d = np.sqrt(l * l - r * r * s * s)
    x = r * c + d
    dd = -r * r * w * s * c / d  # D'
    v = -r * w * s + dd
    a = -r * w * w * c - r * r * w * w * (c * c - s * s) / d + r * r * w * s * c * dd / (d * d)
    sphi = -(r / l) * s
    cphi = d / l
    phi = np.arctan2(sphi, cphi)
    phid = -r * w * c / d
    phidd = ((r / l) * w * w * s + phid * phid * sphi) / cphi
    return {"theta": th, "x": x, "v": v, "a": a, "phi": phi, "phi_dot": phid, "phi_ddot": phidd}
