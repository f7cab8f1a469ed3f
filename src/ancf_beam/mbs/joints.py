"""Joints: holonomic constraints ``Phi(q, t) = 0`` written as scalar equation rows.

Every joint expands into rows of four kinds, evaluated with analytic Jacobians and the
acceleration right-hand side ``gamma = -(Phi_q qdot)_q qdot - 2 Phi_qt qdot - Phi_tt`` by the numba
kernels of :mod:`ancf_beam.mbs.core`:

* ``E_POS`` (component ``c`` = x or y): ``Phi = P_c - Q_c`` (two points coincide);
* ``E_LINE``: ``Phi = n . (P - Q)`` with the unit normal ``n = A(theta_L) n_local`` of a line
  through ``Q`` fixed in the ground or in rigid body ``L`` (a point on a line; with ``P`` a beam
  slope and ``Q`` the ground origin it aligns a beam's tangent with a rigid body's axis);
* ``E_ANGLE``: ``Phi = theta_i - theta_j - theta_0`` (relative rotation of rigid bodies fixed);
* ``E_DRIVER``: ``Phi = theta_i - f(t)``, ``f = theta_0 + omega t`` or a user function
  ``f(t) -> (f, f', f'')`` (rad, rad/s, rad/s^2) evaluated by the integrators.

Sign of the reactions: with ``M qddot + Phi_q^T lambda = Q`` the constraint force on the
coordinates is ``-Phi_q^T lambda``. For a revolute joint ``Phi = r_P - r_Q`` the joint pushes on
the body of ``P`` with the force ``-lambda`` (N) and on the body of ``Q`` with ``+lambda``; a driver
applies the torque ``-lambda`` (N m, counter-clockwise positive) to its body; a prismatic joint
pushes on ``P``'s body with ``-lambda_n n``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ancf_beam.mbs.bodies import PT_GROUND, PT_RIGID, BeamBody, Point, RigidBody

__all__ = [
    "E_ANGLE",
    "E_DRIVER",
    "E_LINE",
    "E_POS",
    "Driver",
    "Joint",
    "Prismatic",
    "Revolute",
    "Row",
    "Weld",
]

E_POS, E_LINE, E_ANGLE, E_DRIVER = 0, 1, 2, 3


@dataclass(frozen=True)
class Row:
    """One scalar constraint equation (see the module docstring)."""

    etype: int
    label: str
    p: Point | None = None
    q: Point | None = None
    comp: int = 0
    line_body: RigidBody | None = None  # E_LINE: body carrying the line (None: ground)
    normal: tuple[float, float] = (0.0, 1.0)  # E_LINE: unit normal in the line body's frame
    angle_i: RigidBody | None = None  # E_ANGLE / E_DRIVER
    angle_j: RigidBody | None = None  # E_ANGLE (None: ground)
    theta0: float = 0.0  # rad
    omega: float = 0.0  # E_DRIVER, rad/s
    driver: int = -1  # E_DRIVER with a user function: index into the driver table
    kind: str = "position"  # position (m) | angle (rad) | slope (-)

    def dofs(self) -> list[int]:
        out: list[int] = []
        for pt in (self.p, self.q):
            if pt is not None:
                out += pt.dofs()
        for b in (self.line_body, self.angle_i, self.angle_j):
            if b is not None:
                out.append(b.angle_index)
        return sorted(set(out))


@dataclass(eq=False)
class Joint:
    """Base class: a named group of constraint rows."""

    name: str
    rows: list[Row] = field(default_factory=list, init=False)
    first_row: int = field(default=-1, init=False)  # set by System.finalize

    def build_rows(self) -> list[Row]:
        raise NotImplementedError

    def reaction_force(self, lam: np.ndarray, q: np.ndarray) -> np.ndarray | None:
        """Force (N, ``(..., 2)``) the joint applies to its first body, or None (a driver).
        ``lam`` (``(..., k)``) are this joint's multipliers, ``q`` (``(..., n)``) the
        coordinates (one state or a history)."""
        return None

    @property
    def works(self) -> bool:
        """True when the joint can feed energy into the system (rheonomic: drivers)."""
        return False


def _point_kind(p: Point) -> str:
    return "slope" if p.slope else "position"


@dataclass(eq=False)
class Revolute(Joint):
    """Points ``p`` and ``q`` coincide (a ground point for ``q``: a pin to ground). Either
    point may be a rigid marker, a beam point (an ANCF node counts as a marker) or a point
    mass."""

    p: Point | None = None
    q: Point | None = None

    def build_rows(self) -> list[Row]:
        if self.p is None or self.q is None:
            raise ValueError(f"revolute '{self.name}' needs two points")
        if self.p.slope or self.q.slope:
            raise ValueError(f"revolute '{self.name}': use positions, not slope vectors")
        return [Row(E_POS, f"{self.name}.{c}", self.p, self.q, comp=i) for i, c in enumerate("xy")]

    def reaction_force(self, lam, q):
        return -np.asarray(lam, dtype=float)[..., :2]


@dataclass(eq=False)
class Prismatic(Joint):
    """Point ``p`` slides on the line through ``through`` with direction ``direction`` (unit
    vector in the frame of the line's body; ``through`` on a rigid body or the ground). With
    ``lock_rotation`` (default) and ``p`` on a rigid body, the relative angle of ``p``'s body
    and the line's body is also held at its initial value."""

    p: Point | None = None
    through: Point | None = None
    direction: tuple[float, float] = (1.0, 0.0)
    lock_rotation: bool = True
    initial_angle: float | None = None  # relative angle to hold (rad); default: from q0

    def build_rows(self) -> list[Row]:
        if self.p is None or self.through is None:
            raise ValueError(f"prismatic '{self.name}' needs a point and a line point")
        if self.through.kind not in (PT_GROUND, PT_RIGID):
            raise ValueError(
                f"prismatic '{self.name}': the line must be fixed in the ground or a rigid body"
            )
        dx, dy = self.direction
        nrm = math.hypot(dx, dy)
        if not nrm > 0:
            raise ValueError(f"prismatic '{self.name}': direction must be non-zero")
        normal = (-dy / nrm, dx / nrm)
        lb = self.through.body if self.through.kind == PT_RIGID else None
        rows = [
            Row(E_LINE, f"{self.name}.normal", self.p, self.through, line_body=lb, normal=normal)
        ]
        body = self.p.body
        if self.lock_rotation and isinstance(body, RigidBody):
            th0 = self.initial_angle
            if th0 is None:
                th0 = body.angle - (lb.angle if lb is not None else 0.0)
            rows.append(
                Row(
                    E_ANGLE,
                    f"{self.name}.angle",
                    angle_i=body,
                    angle_j=lb,
                    theta0=float(th0),
                    kind="angle",
                )
            )
        return rows

    def reaction_force(self, lam, q):
        nx, ny = self.rows[0].normal
        lb = self.rows[0].line_body
        if lb is not None:
            th = np.asarray(q)[..., lb.angle_index]
            c, s = np.cos(th), np.sin(th)
            nx, ny = c * nx - s * ny, s * nx + c * ny
        return -np.asarray(lam)[..., 0:1] * np.stack(np.broadcast_arrays(nx, ny), -1)


@dataclass(eq=False)
class Weld(Joint):
    """Rigid connection of ``a`` and ``b`` (points; ``b`` may be a ground point):

    * beam node - ground: the node's position and slope vector ``r'`` are held at their initial
      values (4 rows; the cantilever clamp);
    * beam node - beam node: positions and slope vectors coincide (4 rows: the two beams behave
      as one with a shared node);
    * rigid - rigid or ground: the points coincide and the relative angle is held (3 rows);
    * beam node - rigid marker: the points coincide and the beam tangent keeps its initial
      direction in the rigid body's frame (3 rows).
    """

    a: Point | None = None
    b: Point | None = None
    q0: np.ndarray | None = None  # initial system coordinates (set by System.finalize)

    def build_rows(self) -> list[Row]:
        a, b = self.a, self.b
        if a is None or b is None:
            raise ValueError(f"weld '{self.name}' needs two points")
        if a.kind == PT_GROUND:
            a, b = b, a
        ba, bb = a.body, b.body
        rows = [Row(E_POS, f"{self.name}.{c}", a, b, comp=i) for i, c in enumerate("xy")]
        if isinstance(ba, BeamBody) and a.node is not None:
            if b.kind == PT_GROUND or (isinstance(bb, BeamBody) and b.node is not None):
                sa = ba.slope(a.node)
                if b.kind == PT_GROUND:
                    r0 = ba.initial_coordinates()[4 * a.node + 2 : 4 * a.node + 4]
                    sb = Point(None, PT_GROUND, 0, (float(r0[0]), float(r0[1])))
                else:
                    sb = bb.slope(b.node)
                rows += [
                    Row(E_POS, f"{self.name}.slope_{c}", sa, sb, comp=i, kind="slope")
                    for i, c in enumerate("xy")
                ]
                return rows
            if isinstance(bb, RigidBody):
                return rows + [self._tangent_row(ba, a.node, bb)]
        if isinstance(bb, BeamBody) and b.node is not None and isinstance(ba, RigidBody):
            return rows + [self._tangent_row(bb, b.node, ba)]
        if isinstance(ba, RigidBody) and (bb is None or isinstance(bb, RigidBody)):
            th0 = ba.angle - (bb.angle if bb is not None else 0.0)
            rows.append(
                Row(E_ANGLE, f"{self.name}.angle", angle_i=ba, angle_j=bb, theta0=th0, kind="angle")
            )
            return rows
        raise ValueError(
            f"weld '{self.name}': unsupported pair {a.label} / {b.label} (weld beam nodes, "
            "rigid markers or ground points)"
        )

    def _tangent_row(self, beam: BeamBody, node: int, body: RigidBody) -> Row:
        r = beam.initial_coordinates()[4 * node + 2 : 4 * node + 4]
        phi = math.atan2(r[1], r[0]) - body.angle  # tangent angle in the body frame
        normal = (-math.sin(phi), math.cos(phi))
        return Row(
            E_LINE,
            f"{self.name}.tangent",
            beam.slope(node),
            Point(None, PT_GROUND, 0, (0.0, 0.0)),
            line_body=body,
            normal=normal,
            kind="slope",
        )

    def reaction_force(self, lam, q):
        return -np.asarray(lam, dtype=float)[..., :2]


@dataclass(eq=False)
class Driver(Joint):
    """Prescribed rotation of a rigid body: ``theta = theta0 + omega t`` (rad, rad/s), or
    ``theta = function(t)[0]`` with ``function(t) -> (theta, theta_dot, theta_ddot)``."""

    body: RigidBody | None = None
    omega: float = 0.0
    theta0: float | None = None  # default: the body's initial angle
    function: Callable[[float], tuple[float, float, float]] | None = None

    def build_rows(self) -> list[Row]:
        if not isinstance(self.body, RigidBody):
            raise ValueError(f"driver '{self.name}' needs a rigid body")
        th0 = self.body.angle if self.theta0 is None else float(self.theta0)
        return [
            Row(
                E_DRIVER,
                f"{self.name}.angle",
                angle_i=self.body,
                theta0=th0,
                omega=float(self.omega),
                kind="angle",
            )
        ]

    def torque(self, lam: np.ndarray) -> float:
        """Torque (N m, counter-clockwise positive) the driver applies to its body."""
        return -float(lam[0])

    @property
    def works(self) -> bool:
        return True


def encode_rows(rows: list[Row]) -> tuple[np.ndarray, np.ndarray]:
    """Integer and float tables of the rows for :func:`ancf_beam.mbs.core.eval_constraints`.

    ``ei[r] = [etype, comp, P kind, P offset, P n, Q kind, Q offset, Q n, line body angle index
    (-1: ground), angle_i index, angle_j index (-1: ground), driver index (-1: constant speed)]``;
    ``ef[r] = [P w0..w3, Q w0..w3, n_x, n_y, theta0, omega]``.
    """
    m = len(rows)
    ei = np.full((max(m, 1), 12), -1, dtype=np.int64)
    ef = np.zeros((max(m, 1), 12))
    for r, row in enumerate(rows):
        ei[r, 0] = row.etype
        ei[r, 1] = row.comp
        for pt, c0, f0 in ((row.p, 2, 0), (row.q, 5, 4)):
            if pt is None:
                ei[r, c0 : c0 + 3] = (PT_GROUND, 0, 2)
                continue
            kind, off, n, w = pt.encode()
            ei[r, c0 : c0 + 3] = (kind, off, n)
            ef[r, f0 : f0 + 4] = w
        ei[r, 8] = row.line_body.angle_index if row.line_body is not None else -1
        ei[r, 9] = row.angle_i.angle_index if row.angle_i is not None else -1
        ei[r, 10] = row.angle_j.angle_index if row.angle_j is not None else -1
        ei[r, 11] = row.driver
        ef[r, 8:10] = row.normal
        ef[r, 10] = row.theta0
        ef[r, 11] = row.omega
    return np.ascontiguousarray(ei[:m]), np.ascontiguousarray(ef[:m])


def linear_rows(rows: list[Row]) -> bool:
    """True when every row is linear in ``q`` with a constant Jacobian (no rigid-body angle
    inside a point or a line normal)."""
    for row in rows:
        if row.etype in (E_ANGLE, E_DRIVER):
            continue
        for pt in (row.p, row.q):
            if pt is not None and pt.kind == PT_RIGID:
                return False
        if row.etype == E_LINE and row.line_body is not None:
            return False
    return True
