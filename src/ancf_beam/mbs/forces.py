"""Force elements: generalized forces computed from the bodies' states, with their Newton tangent.

A force element is a row of two tables that the numba kernels read
(:func:`ancf_beam.mbs.core.force_elements` for the forces and the potential energy,
:func:`ancf_beam.mbs.core.force_elements_tangent` for ``-dQ/dq - c_v dQ/dv``):

``fei[e] = [kind, P kind, P offset, P n, Q kind, Q offset, Q n, angle index]`` and
``fef[e] = [P w0..w3, Q w0..w3, p0, p1, p2, p3, ...]`` (parameters of the kind),

plus a row of per-element state ``fst[e]`` (``STATE_SIZE`` floats) that integrators carry from
one accepted step to the next (e.g. the approach speed at the onset of an impact). To add a kind:
give it a code, a branch in both kernels, and a class here whose :meth:`encode` fills the rows.
Its tangent must stay within the system's band (half-bandwidth 7): the points it couples must
belong to bodies adjacent in the coordinate vector (checked by the system).

Signs: forces are generalized forces on the coordinates (N on positions, N m on angles);
potential energies in J.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ancf_beam.mbs.bodies import Point, RigidBody
from ancf_beam.mbs.core import FE_FORCE, FE_SPRING, FE_TORQUE

__all__ = ["STATE_SIZE", "ForceElement", "PointForce", "SpringDamper", "Torque"]

STATE_SIZE = 4  # floats of carried state per force element
N_INT = 8
N_FLT = 16


@dataclass(eq=False)
class ForceElement:
    """Base class of force elements."""

    name: str

    def encode(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def dofs(self) -> list[int]:
        raise NotImplementedError

    @property
    def conservative(self) -> bool:
        """True when :func:`~ancf_beam.mbs.core.force_elements` returns its full potential, so
        that the system's energy is conserved with it."""
        return True

    @staticmethod
    def _rows(kind: int, p: Point | None = None, q: Point | None = None):
        fi = np.full(N_INT, -1, dtype=np.int64)
        ff = np.zeros(N_FLT)
        fi[0] = kind
        for pt, c0, f0 in ((p, 1, 0), (q, 4, 4)):
            if pt is None:
                fi[c0 : c0 + 3] = (0, 0, 2)
                continue
            k, off, n, w = pt.encode()
            fi[c0 : c0 + 3] = (k, off, n)
            ff[f0 : f0 + 4] = w
        return fi, ff


@dataclass(eq=False)
class PointForce(ForceElement):
    """Constant force ``(F_x, F_y)`` (N, global frame) at a point (a marker on a rigid body, a
    beam point or node, a point mass)."""

    point: Point | None = None
    force: tuple[float, float] = (0.0, 0.0)

    def encode(self):
        fi, ff = self._rows(FE_FORCE, self.point)
        ff[8:10] = self.force
        return fi, ff

    def dofs(self):
        return self.point.dofs()


@dataclass(eq=False)
class Torque(ForceElement):
    """Constant torque (N m, counter-clockwise positive) on a rigid body."""

    body: RigidBody | None = None
    torque: float = 0.0

    def encode(self):
        fi, ff = self._rows(FE_TORQUE)
        fi[7] = self.body.angle_index
        ff[8] = self.torque
        return fi, ff

    def dofs(self):
        return [self.body.angle_index]


@dataclass(eq=False)
class SpringDamper(ForceElement):
    """Linear spring-damper between points ``p`` and ``q``: tension ``k (l - l0) + c dl/dt``
    (``k`` N/m, ``c`` N s/m, free length ``l0`` m; None: the initial distance). Its Newton
    tangent is the symmetric part (the damping term's non-symmetric share is left out)."""

    p: Point | None = None
    q: Point | None = None
    k: float = 0.0
    c: float = 0.0
    l0: float | None = None

    def encode(self):
        fi, ff = self._rows(FE_SPRING, self.p, self.q)
        ff[8:11] = (self.k, self.c, self.l0)
        return fi, ff

    def resolve(self, q0: np.ndarray) -> None:
        """Fill ``l0`` from the initial coordinates when it was not given."""
        if self.l0 is None:
            d = self.p.position(q0) - self.q.position(q0)
            self.l0 = float(math.hypot(*d))

    def dofs(self):
        return sorted(set(self.p.dofs() + self.q.dofs()))

    @property
    def conservative(self) -> bool:
        return self.c == 0.0
