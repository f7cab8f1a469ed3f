"""Bodies of a planar multibody system and the points on them.

Coordinates (SI, angles counter-clockwise from +x):

* :class:`RigidBody`: ``(x, y, theta)`` of the centre of mass (m, m, rad); constant mass matrix
  ``diag(m, m, J)`` with the centroidal inertia ``J`` (kg m^2).
* :class:`PointMass`: ``(x, y)`` (m); mass ``diag(m, m)``.
* :class:`BeamBody`: the node coordinates ``[r_x, r_y, r_x', r_y']`` of a
  :class:`~ancf_beam.beam.model.BeamModel` (node-major, *all* nodes free: a clamp is a weld to
  ground, a pin a revolute joint), its constant consistent mass and its graded, possibly damaged
  Gauss-point properties unchanged. The beam's stress-free reference configuration (straight
  along +x, or the imperfect shape) is placed in the plane by a rigid motion (``origin``,
  ``angle``).

All bodies' coordinates stack into one vector ``q`` in the order the bodies are added to the
:class:`~ancf_beam.mbs.system.System`; ``body.offset`` is the index of a body's first coordinate.

A :class:`Point` is a point whose position is a function of ``q``: a marker fixed in a rigid body
(nonlinear in ``theta``), a point of a beam (an affine function of the nodal coordinates: a
node, or any reference arc coordinate through the shape functions), the slope vector ``r'`` of a
beam node (used by welds), a point mass or a fixed point of the ground. Joints and force elements
are written in terms of points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ancf_beam.beam import kernels
from ancf_beam.beam.model import BeamModel

__all__ = [
    "PT_GROUND",
    "PT_LINEAR",
    "PT_RIGID",
    "BeamBody",
    "Body",
    "Point",
    "PointMass",
    "RigidBody",
    "ground",
]

# point kinds (shared with the numba kernels of ancf_beam.mbs.core)
PT_GROUND = 0  # fixed: weights (x, y)
PT_LINEAR = 1  # r_c = sum_a w_a q[off + 2 a + c]  (beam points and slopes, point masses)
PT_RIGID = 2  # r = (x, y) + A(theta) s, weights (s_x, s_y), off = offset of x


@dataclass(frozen=True)
class Point:
    """A point whose position depends on the coordinates of (at most) one body.

    ``kind`` is one of ``PT_GROUND``, ``PT_LINEAR``, ``PT_RIGID``; ``rel`` is the coordinate
    index relative to the body's offset; ``weights`` the 1 to 4 shape-function weights of a
    linear point, ``(s_x, s_y)`` (m, body frame, from the centre of mass) of a rigid marker or the
    fixed ``(x, y)`` (m) of a ground point. ``node`` is the beam node of a node point (welds use
    it to find the slope), ``slope`` marks the slope vector of a beam node (dimensionless).
    """

    body: Body | None
    kind: int
    rel: int
    weights: tuple[float, ...]
    node: int | None = None
    slope: bool = False
    label: str = ""

    @property
    def offset(self) -> int:
        """Global index of the first coordinate this point reads (0 for ground)."""
        return 0 if self.body is None else self.body.offset + self.rel

    def encode(self) -> tuple[int, int, int, tuple[float, float, float, float]]:
        """``(kind, global offset, number of weights, 4 weights)`` for the numba tables."""
        w = tuple(float(x) for x in self.weights) + (0.0,) * (4 - len(self.weights))
        n = len(self.weights) if self.kind == PT_LINEAR else 2
        return self.kind, self.offset, n, w

    def dofs(self) -> list[int]:
        """Global coordinates this point depends on."""
        if self.kind == PT_GROUND:
            return []
        o = self.offset
        if self.kind == PT_RIGID:
            return [o, o + 1, o + 2]
        return [o + 2 * a + c for a in range(len(self.weights)) for c in (0, 1)]

    def position(self, q: np.ndarray) -> np.ndarray:
        """Position (m) or slope vector (-) at coordinates ``q`` (shape ``(..., n)``: one state
        or a history); returns ``(..., 2)``."""
        q = np.asarray(q, dtype=float)
        if self.kind == PT_GROUND:
            return np.broadcast_to(np.array(self.weights[:2], dtype=float), (*q.shape[:-1], 2))
        o = self.offset
        if self.kind == PT_RIGID:
            c, s = np.cos(q[..., o + 2]), np.sin(q[..., o + 2])
            sx, sy = self.weights
            return np.stack([q[..., o] + c * sx - s * sy, q[..., o + 1] + s * sx + c * sy], -1)
        out = np.zeros((*q.shape[:-1], 2))
        for a, w in enumerate(self.weights):
            out += w * q[..., o + 2 * a : o + 2 * a + 2]
        return out

    def velocity(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Velocity (m/s) at coordinates ``q`` and velocities ``v`` (shapes as for
        :meth:`position`)."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if self.kind == PT_GROUND:
            return np.zeros((*q.shape[:-1], 2))
        o = self.offset
        if self.kind == PT_RIGID:
            c, s = np.cos(q[..., o + 2]), np.sin(q[..., o + 2])
            sx, sy = self.weights
            w = v[..., o + 2]
            vx = v[..., o] - w * (s * sx + c * sy)
            vy = v[..., o + 1] + w * (c * sx - s * sy)
            return np.stack([vx, vy], -1)
        return self.position(v)  # linear: the same map


def ground(x: float = 0.0, y: float = 0.0) -> Point:
    """A fixed point of the ground at ``(x, y)`` (m)."""
    return Point(None, PT_GROUND, 0, (float(x), float(y)), label=f"ground({x:g}, {y:g})")


@dataclass(eq=False)
class Body:
    """Base of all bodies: a name, a number of coordinates and (once added to a system) an
    offset into the system's coordinate vector."""

    name: str
    offset: int = field(default=-1, init=False)

    n_dof: int = field(default=0, init=False)

    def initial_coordinates(self) -> np.ndarray:
        raise NotImplementedError

    def initial_velocities(self) -> np.ndarray:
        raise NotImplementedError

    def mass_lower_band(self) -> np.ndarray:
        """Mass matrix of the body in symmetric lower band storage ``(8, n_dof)``."""
        raise NotImplementedError

    def gravity(self, g: float) -> np.ndarray:
        """Generalized gravity force (gravity ``g`` m/s^2 along -y)."""
        raise NotImplementedError

    def rigid_velocity_modes(self, q: np.ndarray) -> np.ndarray:
        """``(n_dof, k)`` velocity fields of the body's rigid motions at its coordinates
        ``q`` (identity for rigid bodies and point masses; translation and rotation for a beam)."""
        return np.eye(self.n_dof)


@dataclass(eq=False)
class RigidBody(Body):
    """Planar rigid body: mass ``m`` (kg), centroidal inertia ``J`` (kg m^2), initial centre of
    mass ``position`` (m), ``angle`` (rad), ``velocity`` (m/s) and ``angular_velocity`` (rad/s)."""

    mass: float = 1.0
    inertia: float = 1.0
    position: tuple[float, float] = (0.0, 0.0)
    angle: float = 0.0
    velocity: tuple[float, float] = (0.0, 0.0)
    angular_velocity: float = 0.0

    def __post_init__(self):
        if not (self.mass > 0 and self.inertia > 0):
            raise ValueError(f"rigid body '{self.name}': mass and inertia must be > 0")
        self.n_dof = 3

    def marker(self, sx: float = 0.0, sy: float = 0.0, label: str = "") -> Point:
        """Point fixed in the body at ``(sx, sy)`` (m) from the centre of mass, body frame."""
        return Point(self, PT_RIGID, 0, (float(sx), float(sy)), label=label or self.name)

    @property
    def angle_index(self) -> int:
        """Global index of ``theta``."""
        return self.offset + 2

    def initial_coordinates(self) -> np.ndarray:
        return np.array([*self.position, self.angle], dtype=float)

    def initial_velocities(self) -> np.ndarray:
        return np.array([*self.velocity, self.angular_velocity], dtype=float)

    def mass_lower_band(self) -> np.ndarray:
        lb = np.zeros((8, 3))
        lb[0] = (self.mass, self.mass, self.inertia)
        return lb

    def gravity(self, g: float) -> np.ndarray:
        return np.array([0.0, -self.mass * g, 0.0])


@dataclass(eq=False)
class PointMass(Body):
    """Particle of mass ``m`` (kg) at ``position`` (m) with ``velocity`` (m/s)."""

    mass: float = 1.0
    position: tuple[float, float] = (0.0, 0.0)
    velocity: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self):
        if not self.mass > 0:
            raise ValueError(f"point mass '{self.name}': mass must be > 0")
        self.n_dof = 2

    def point(self) -> Point:
        return Point(self, PT_LINEAR, 0, (1.0,), label=self.name)

    def initial_coordinates(self) -> np.ndarray:
        return np.array(self.position, dtype=float)

    def initial_velocities(self) -> np.ndarray:
        return np.array(self.velocity, dtype=float)

    def mass_lower_band(self) -> np.ndarray:
        lb = np.zeros((8, 2))
        lb[0] = self.mass
        return lb

    def gravity(self, g: float) -> np.ndarray:
        return np.array([0.0, -self.mass * g])


@dataclass(eq=False)
class BeamBody(Body):
    """An ANCF beam (any :class:`BeamModel`: graded, imperfect, damaged) with all nodes free.

    Its reference configuration is moved rigidly: node positions ``origin + R(angle) r_ref``
    and slopes ``R(angle) r'_ref``. ``velocities`` (full vector, default rest) are the initial
    coordinate rates.
    """

    model: BeamModel | None = None
    origin: tuple[float, float] = (0.0, 0.0)
    angle: float = 0.0
    velocities: np.ndarray | None = None

    def __post_init__(self):
        if self.model is None:
            raise ValueError(f"beam body '{self.name}' needs a BeamModel")
        self.n_dof = self.model.n_dof

    @property
    def n_nodes(self) -> int:
        return self.model.n_nodes

    def _check_node(self, k: int) -> int:
        n = self.model.n_nodes
        k = int(k) if k >= 0 else n + int(k)
        if not 0 <= k < n:
            raise ValueError(f"beam '{self.name}' has nodes 0..{n - 1}, got {k}")
        return k

    def node(self, k: int) -> Point:
        """Position of node ``k`` (negative counts from the end: -1 is the last node)."""
        k = self._check_node(k)
        return Point(self, PT_LINEAR, 4 * k, (1.0,), node=k, label=f"{self.name}.node{k}")

    def slope(self, k: int) -> Point:
        """Slope vector ``r'`` of node ``k`` (dimensionless)."""
        k = self._check_node(k)
        return Point(
            self, PT_LINEAR, 4 * k + 2, (1.0,), node=k, slope=True, label=f"{self.name}.slope{k}"
        )

    def point(self, X: float) -> Point:
        """Point at reference arc coordinate ``X`` (m, 0 at node 0) through the element's cubic
        shape functions (a node when ``X`` falls on one)."""
        m = self.model
        if not -1e-12 <= X <= m.length * (1 + 1e-12):
            raise ValueError(f"beam '{self.name}': X = {X} outside [0, {m.length}] m")
        pos = X / m.le
        k = round(pos)
        if abs(pos - k) < 1e-12:
            return self.node(k)
        el = min(int(pos), m.n_el - 1)
        xi = pos - el
        s, _, _ = kernels.shape_tables(np.array([xi]), m.le)
        return Point(
            self, PT_LINEAR, 4 * el, tuple(float(x) for x in s[0]), label=f"{self.name}@{X:g}"
        )

    def initial_coordinates(self) -> np.ndarray:
        q = self.model.reference().reshape(-1, 2)  # rows: r_k, r'_k
        c, s = math.cos(self.angle), math.sin(self.angle)
        rot = np.array([[c, -s], [s, c]])
        out = q @ rot.T
        out[0::2] += np.asarray(self.origin, dtype=float)
        return out.ravel()

    def initial_velocities(self) -> np.ndarray:
        if self.velocities is None:
            return np.zeros(self.n_dof)
        v = np.asarray(self.velocities, dtype=float)
        if v.shape != (self.n_dof,):
            raise ValueError(f"beam '{self.name}': velocities need {self.n_dof} entries")
        return v.copy()

    def mass_lower_band(self) -> np.ndarray:
        # M = m (x) I2 (no x-y coupling) is invariant under the placement rotation
        return np.array(self.model.mass_lower_band)

    def gravity(self, g: float) -> np.ndarray:
        """Consistent gravity ``int rho A S^T g dx = M g_hat``: the position entries of ``g_hat``
        are ``(0, -g)``, the slope entries 0 (the cubic Hermite functions of the positions sum
        to one), so no dependence on the beam case's own ``load.g``."""
        gh = np.zeros(self.n_dof)
        gh[1::4] = -g
        lb = self.model.mass_lower_band
        out = lb[0] * gh
        for d in range(1, lb.shape[0]):
            out[d:] += lb[d, : self.n_dof - d] * gh[: self.n_dof - d]
            out[: self.n_dof - d] += lb[d, : self.n_dof - d] * gh[d:]
        return out

    def rigid_velocity_modes(self, q: np.ndarray) -> np.ndarray:
        """Translation x, y and rotation (rate 1 rad/s) about node 0 at coordinates ``q``:
        node velocities ``k x (r - r_0)``, slope rates ``k x r'``."""
        n = self.n_dof
        t = np.zeros((n, 3))
        t[0::4, 0] = 1.0
        t[1::4, 1] = 1.0
        r = q.reshape(-1, 2).copy()
        r[0::2] -= q[0:2]  # positions relative to node 0; slopes unchanged
        t[0::2, 2] = -r[:, 1]
        t[1::2, 2] = r[:, 0]
        return t
