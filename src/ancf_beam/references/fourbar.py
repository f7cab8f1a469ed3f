"""Closed-form kinematics and Newton-Euler inverse dynamics of the rigid planar four-bar (an
independent reference: plain numpy, nothing from the multibody code).

Ground pivots ``A = (0, 0)`` and ``D = (d, 0)``; crank AB (length ``l1``), coupler BC (``l2``),
rocker DC (``l3``), all in m; angles in rad from +x, counter-clockwise: ``theta1`` of A -> B,
``theta2`` of B -> C, ``theta3`` of D -> C. With ``e(t) = (cos t, sin t)`` and
``n(t) = (-sin t, cos t)``::

    B = l1 e1,   C = B + l2 e2 = D + l3 e3                       (loop closure)

Position (circle intersection): with ``r = D - B``, ``delta = |r|``,
``a = (l2^2 - l3^2 + delta^2) / (2 delta)`` and ``h = sqrt(l2^2 - a^2)``,
``C = B + (a r + s h r_perp) / delta`` (``r_perp = (-r_y, r_x)``); the assembly branch
``s = +1`` puts C to the left of B -> D, above the x axis for the default mechanism. It exists
while ``|l2 - l3| <= delta <= l2 + l3``; a Grashof crank-rocker (crank shortest,
``s + l < p + q``) assembles at every crank angle.

Velocity and acceleration: the loop's first and second time derivatives,
``l2 w2 n2 - l3 w3 n3 = -l1 w1 n1`` and
``l2 a2 n2 - l3 a3 n3 = -l1 a1 n1 + l1 w1^2 e1 + l2 w2^2 e2 - l3 w3^2 e3``, are 2x2 linear
systems with the determinant ``l2 l3 sin(theta2 - theta3)`` (zero only at a toggle), solved
by Cramer's rule, e.g. ``w2 = -l1 w1 sin(theta3 - theta1) / (l2 sin(theta3 - theta2))``,
``w3 = l1 w1 sin(theta2 - theta1) / (l3 sin(theta2 - theta3))``.

Dynamics (:meth:`FourBar.inverse_dynamics`): the Newton-Euler equations of the three rigid
bodies (centres of mass at mid-length, centroidal inertias ``j1``, ``j2``, ``j3`` in kg m^2,
masses in kg, gravity ``g`` in m/s^2 along -y), nine linear equations for the four pin forces
and the drive torque; see the method for the sign conventions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FourBar"]


def _e(t):
    return np.stack([np.cos(t), np.sin(t)], axis=-1)


def _n(t):
    return np.stack([-np.sin(t), np.cos(t)], axis=-1)


def _cross(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _solve2(u, v, b):
    """Solution ``(x, y)`` of ``x u + y v = b`` (vectors on the last axis) by Cramer's rule."""
    det = _cross(u, v)
    return _cross(b, v) / det, _cross(u, b) / det


@dataclass(frozen=True)
class FourBar:
    """Rigid four-bar A-B-C-D with ground pivots ``A = (0, 0)``, ``D = (d, 0)`` (SI units).

    Lengths ``l1`` (crank AB), ``l2`` (coupler BC), ``l3`` (rocker DC), ``d`` (ground AD), m;
    masses ``m1..m3`` (kg) and centroidal inertias ``j1..j3`` (kg m^2) of crank, coupler and
    rocker, centres of mass at mid-length; gravity ``g`` (m/s^2) along -y; ``branch`` +1 puts
    C to the left of B -> D (above the x axis for the defaults), -1 to the right."""

    l1: float = 0.05
    l2: float = 0.2
    l3: float = 0.15
    d: float = 0.25
    m1: float = 0.2
    m2: float = 0.5
    m3: float = 0.3
    j1: float = 5e-5
    j2: float = 2e-3
    j3: float = 6e-4
    g: float = 9.81
    branch: int = 1

    def __post_init__(self):
        for key in ("l1", "l2", "l3", "d", "m1", "m2", "m3", "j1", "j2", "j3"):
            value = getattr(self, key)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"FourBar.{key} = {value!r}: must be finite and > 0")
        if self.branch not in (1, -1):
            raise ValueError(f"FourBar.branch = {self.branch!r}: must be +1 or -1")

    def angles(self, theta1):
        """Coupler angle ``theta2`` (B -> C) and rocker angle ``theta3`` (D -> C), rad, at
        crank angles ``theta1`` (rad, any shape), from the circle intersection (module doc).
        Raises ValueError at a crank angle where the mechanism cannot be assembled."""
        th1 = np.asarray(theta1, dtype=float)
        b = self.l1 * _e(th1)
        r = np.array([self.d, 0.0]) - b
        delta = np.hypot(r[..., 0], r[..., 1])
        a = (self.l2**2 - self.l3**2 + delta**2) / (2.0 * delta)
        h2 = self.l2**2 - a**2
        if np.any(~(h2 >= 0.0)):
            bad = th1[np.unravel_index(np.argmin(np.where(h2 >= 0, np.inf, h2)), th1.shape)]
            raise ValueError(f"four-bar cannot be assembled at theta1 = {float(bad)!r} rad")
        perp = np.stack([-r[..., 1], r[..., 0]], axis=-1)
        bc = (a[..., None] * r + self.branch * np.sqrt(h2)[..., None] * perp) / delta[..., None]
        dc = b + bc - np.array([self.d, 0.0])
        return np.arctan2(bc[..., 1], bc[..., 0]), np.arctan2(dc[..., 1], dc[..., 0])

    def rates(self, theta1, w1):
        """Angular velocities ``(w2, w3)`` (rad/s) of coupler and rocker at crank angle
        ``theta1`` (rad) and crank rate ``w1`` (rad/s), broadcast together."""
        th1, w1 = np.broadcast_arrays(np.asarray(theta1, float), np.asarray(w1, float))
        th2, th3 = self.angles(th1)
        rhs = -self.l1 * w1[..., None] * _n(th1)
        return _solve2(self.l2 * _n(th2), -self.l3 * _n(th3), rhs)

    def accelerations(self, theta1, w1, a1):
        """Angular accelerations ``(a2, a3)`` (rad/s^2) of coupler and rocker at crank angle
        ``theta1``, rate ``w1`` and acceleration ``a1`` (rad/s^2), broadcast together."""
        th1, w1, a1 = np.broadcast_arrays(*(np.asarray(x, float) for x in (theta1, w1, a1)))
        th2, th3 = self.angles(th1)
        w2, w3 = self.rates(th1, w1)
        rhs = (
            -self.l1 * a1[..., None] * _n(th1)
            + self.l1 * (w1**2)[..., None] * _e(th1)
            + self.l2 * (w2**2)[..., None] * _e(th2)
            - self.l3 * (w3**2)[..., None] * _e(th3)
        )
        return _solve2(self.l2 * _n(th2), -self.l3 * _n(th3), rhs)

    def points(self, theta1) -> dict[str, np.ndarray]:
        """Positions (m, shape ``theta1.shape + (2,)``) of ``crank.tip`` (B), ``coupler.mid``
        (the coupler's centre) and ``rocker.tip`` (C, computed as ``D + l3 e3``)."""
        th1 = np.asarray(theta1, dtype=float)
        th2, th3 = self.angles(th1)
        b = self.l1 * _e(th1)
        return {
            "crank.tip": b,
            "coupler.mid": b + 0.5 * self.l2 * _e(th2),
            "rocker.tip": np.array([self.d, 0.0]) + self.l3 * _e(th3),
        }

    def inverse_dynamics(self, theta1, w1, a1) -> dict[str, np.ndarray]:
        """Drive torque and pin forces along the motion ``(theta1, w1, a1)`` (rad, rad/s,
        rad/s^2, broadcast together), from the bodies' Newton-Euler equations::

            crank:    m1 aG1 = F_A - F_B - m1 g e_y,  j1 a1 = (A-G1) x F_A - (B-G1) x F_B + tau
            coupler:  m2 aG2 = F_B - F_C - m2 g e_y,  j2 a2 = (B-G2) x F_B - (C-G2) x F_C
            rocker:   m3 aG3 = F_C + F_D - m3 g e_y,  j3 a3 = (C-G3) x F_C + (D-G3) x F_D

        with ``G1 = l1 e1 / 2``, ``G2 = B + l2 e2 / 2``, ``G3 = D + l3 e3 / 2`` and their
        accelerations ``aG1 = (l1/2)(a1 n1 - w1^2 e1)``, ``aG2 = 2 aG1 + (l2/2)(a2 n2 - w2^2
        e2)``, ``aG3 = (l3/2)(a3 n3 - w3^2 e3)``. ``F_A`` (N) is the force of the ground on the
        crank at A, ``F_B`` of the crank on the coupler at B, ``F_C`` of the coupler on the
        rocker at C, ``F_D`` of the ground on the rocker at D (each body at a pin receives the
        opposite of the force it exerts); ``tau`` (N m) is the torque of the drive (ground) on
        the crank, counter-clockwise positive.

        Returns ``torque`` and, for P in A, B, C, D, ``F_P`` (shape ``(..., 2)``) and ``|F_P|``."""
        th1, w1, a1 = np.broadcast_arrays(*(np.asarray(x, float) for x in (theta1, w1, a1)))
        mat, rhs = self._newton_euler(th1, w1, a1)
        x = np.linalg.solve(mat, rhs[..., None])[..., 0]
        out = {"torque": x[..., 8]}
        for k, pin in enumerate("ABCD"):
            out[f"F_{pin}"] = x[..., 2 * k : 2 * k + 2]
            out[f"|F_{pin}|"] = np.hypot(x[..., 2 * k], x[..., 2 * k + 1])
        return out

    def _newton_euler(self, th1, w1, a1):
        """Matrix ``(..., 9, 9)`` and right-hand side ``(..., 9)`` of the nine equations of
        :meth:`inverse_dynamics`, unknowns ``(F_A, F_B, F_C, F_D, tau)``."""
        th2, th3 = self.angles(th1)
        w2, w3 = self.rates(th1, w1)
        a2, a3 = self.accelerations(th1, w1, a1)
        e1, e2, e3 = _e(th1), _e(th2), _e(th3)
        ag1 = 0.5 * self.l1 * (a1[..., None] * _n(th1) - (w1**2)[..., None] * e1)
        ag2 = 2.0 * ag1 + 0.5 * self.l2 * (a2[..., None] * _n(th2) - (w2**2)[..., None] * e2)
        ag3 = 0.5 * self.l3 * (a3[..., None] * _n(th3) - (w3**2)[..., None] * e3)
        mat = np.zeros(th1.shape + (9, 9))
        rhs = np.zeros(th1.shape + (9,))
        eye = np.eye(2)
        # (body, mass, inertia, angular acceleration, centre acceleration, half-bar vector,
        #  (pin column, sign of the force on the body, lever sign: -1 at the bar's start))
        bodies = (
            (self.m1, self.j1, a1, ag1, 0.5 * self.l1 * e1, ((0, 1, -1), (2, -1, 1))),
            (self.m2, self.j2, a2, ag2, 0.5 * self.l2 * e2, ((2, 1, -1), (4, -1, 1))),
            (self.m3, self.j3, a3, ag3, 0.5 * self.l3 * e3, ((4, 1, 1), (6, 1, -1))),
        )
        for k, (m, j, alpha, ag, half, pins) in enumerate(bodies):
            row = 3 * k
            rhs[..., row : row + 2] = m * ag + m * self.g * np.array([0.0, 1.0])
            rhs[..., row + 2] = j * alpha
            for col, sign, lever in pins:
                mat[..., row : row + 2, col : col + 2] = sign * eye
                arm = lever * half  # pin minus centre of mass
                mat[..., row + 2, col] = -sign * arm[..., 1]  # (arm x F)_z = ax Fy - ay Fx
                mat[..., row + 2, col + 1] = sign * arm[..., 0]
        mat[..., 2, 8] = 1.0  # the drive torque acts on the crank
        return mat, rhs
