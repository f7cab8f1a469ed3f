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

:func:`slider_crank_inverse_dynamics` adds the rigid bodies' Newton-Euler equations along that
motion (crank and rod with their centres of mass at mid-length, a frictionless slider guide,
gravity ``g`` along -y): the drive torque and the force of every joint, solved body by body in
closed form (slider, then rod, then crank) without the multibody code.
"""

from __future__ import annotations

import numpy as np

__all__ = ["slider_crank_inverse_dynamics", "slider_crank_kinematics"]


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


def slider_crank_inverse_dynamics(
    t,
    crank: float,
    rod: float,
    omega: float,
    *,
    m_crank: float,
    m_rod: float,
    j_rod: float,
    m_slider: float,
    g: float = 0.0,
    theta0: float = 0.0,
) -> dict[str, np.ndarray]:
    """Drive torque and joint forces of the rigid slider-crank driven at constant ``omega``.

    Crank (mass ``m_crank``, kg) and rod (``m_rod``, centroidal inertia ``j_rod``, kg m^2) have
    their centres of mass at mid-length; the slider (``m_slider``) is pinned to the rod at its
    centre of mass and slides without friction on the x axis; gravity ``g`` (m/s^2) along -y.
    With ``F_B`` the force of the slider on the rod and ``F_A`` that of the crank on the rod:
    slider ``m_s x'' = -F_Bx``, guide ``N = F_By + m_s g``; rod ``m_r a_G = F_A + F_B - m_r g
    e_y`` and ``J_r phi'' = (l/2) u x (F_B - F_A)`` (``u`` along A -> B) give ``F_By`` and
    ``F_A``; crank (``theta'' = 0``): pivot ``F_O = m_c a_Gc + F_A + m_c g e_y`` and torque
    ``tau = A x F_A + m_c g r cos(theta) / 2``.

    Returns ``torque`` (N m, on the crank, counter-clockwise positive) and the force magnitudes
    (N) ``pivot``, ``crank_pin``, ``wrist_pin``, ``slider_guide``, each of shape ``t``."""
    r, l, w = float(crank), float(rod), float(omega)
    k = slider_crank_kinematics(t, r, l, w, theta0)
    th, phi, pd, pdd = k["theta"], k["phi"], k["phi_dot"], k["phi_ddot"]
    c, s = np.cos(th), np.sin(th)
    ux, uy = np.cos(phi), np.sin(phi)
    aax, aay = -r * w * w * c, -r * w * w * s  # crank pin
    agx = aax + 0.5 * l * (-pdd * uy - pd * pd * ux)  # rod centre of mass
    agy = aay + 0.5 * l * (pdd * ux - pd * pd * uy)
    fbx = -m_slider * k["a"]
    fby = (
        2.0 * j_rod * pdd / l + 2.0 * uy * fbx + ux * (m_rod * agy + m_rod * g) - uy * m_rod * agx
    ) / (2.0 * ux)
    fax = m_rod * agx - fbx
    fay = m_rod * agy + m_rod * g - fby
    fox = m_crank * 0.5 * aax + fax
    foy = m_crank * 0.5 * aay + fay + m_crank * g
    torque = r * c * fay - r * s * fax + m_crank * g * 0.5 * r * c
    return {
        "torque": torque,
        "pivot": np.hypot(fox, foy),
        "crank_pin": np.hypot(fax, fay),
        "wrist_pin": np.hypot(fbx, fby),
        "slider_guide": np.abs(fby + m_slider * g),
    }
