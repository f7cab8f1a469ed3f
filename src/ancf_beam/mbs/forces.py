"""Force elements: generalized forces computed from the bodies' states, with their Newton tangent.

A force element is a row of two tables that the numba kernels read
(:func:`ancf_beam.mbs.core.force_elements` for the forces and the potential energy,
:func:`ancf_beam.mbs.core.force_elements_tangent` for ``-dQ/dq - c_v dQ/dv``):

``fei[e] = [kind, P kind, P offset, P n, Q kind, Q offset, Q n, angle index]`` and
``fef[e] = [P w0..w3, Q w0..w3, p0, p1, p2, p3, ...]`` (parameters of the kind),

plus a row of per-element state ``fst[e]`` (``STATE_SIZE`` floats) that integrators carry from
one accepted step to the next (e.g. the approach speed at the onset of an impact). To add a kind:
give it a code, a branch in both kernels, and a class here whose :meth:`encode` fills the rows.
A kind whose tangent is a pair block ``J_d^T B J_d`` (``J_d`` the Jacobian of the separation of
its two points, ``B`` 2 x 2; the kernel calls :func:`ancf_beam.mbs.core._pair_tangent`) sets
``pair_tangent = True`` and may couple any bodies: outside the band (half-bandwidth 7) the block
goes to the low-rank part of the iteration matrix (:mod:`ancf_beam.mbs.system`). Any other kind
must couple coordinates at most the half-bandwidth apart (checked by the system).

Signs: forces are generalized forces on the coordinates (N on positions, N m on angles);
potential energies in J.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ancf_beam.mbs import core
from ancf_beam.mbs.bodies import Point, RigidBody
from ancf_beam.mbs.contact import ContactLaw, FrictionLaw
from ancf_beam.mbs.core import FE_CONTACT, FE_FORCE, FE_SPRING, FE_TORQUE

__all__ = [
    "CONTACT_STATES",
    "STATE_SIZE",
    "CircleContact",
    "ForceElement",
    "PointForce",
    "SpringDamper",
    "Torque",
]

STATE_SIZE = 4  # floats of carried state per force element
N_INT = 8
N_FLT = core.C_NFLT  # 25: the circle contact's parameters are the longest row


@dataclass(eq=False)
class ForceElement:
    """Base class of force elements."""

    name: str

    def encode(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def dofs(self) -> list[int]:
        raise NotImplementedError

    #: the tangent is the pair block ``J_d^T B J_d`` of :func:`ancf_beam.mbs.core._pair_tangent`
    #: (plus diagonal terms): the element may couple bodies anywhere in the coordinate vector
    pair_tangent = False

    @property
    def conservative(self) -> bool:
        """True when :func:`~ancf_beam.mbs.core.force_elements` returns its full potential, so
        that the system's energy is conserved with it."""
        return True

    @property
    def energy_booked(self) -> bool:
        """Its work is in its potential or in the dissipation the integrators book."""
        return self.conservative

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

    pair_tangent = True
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


#: names of the carried contact flag (``fst[e, 1]``) as :meth:`CircleContact.evaluate` reports it
CONTACT_STATES = ("separated", "in contact")


@dataclass(eq=False)
class CircleContact(ForceElement):
    """Contact between a circle of radius ``r_p`` centred at point ``p`` and one of radius
    ``r_q`` centred at ``q`` (docs/design.md section 7), with eccentricity ``e = x_q - x_p``:

    * ``inside=True``: journal Q inside bearing P (``r_p > r_q``), penetration ``delta = |e| -
      (r_p - r_q)`` (radial clearance ``r_p - r_q``);
    * ``inside=False``: two discs, ``delta = r_p + r_q - |e|``.

    Contact when ``delta > 0``; the normal force ``F_n`` (:func:`ancf_beam.mbs.contact.
    normal_force` with the approach speed ``v0`` recorded at the onset) acts along the line of
    centres, pushing the bodies apart; friction ``F_t = -mu_eff(v_t) F_n`` acts at the contact
    point along ``t = (-n_y, n_x)`` with ``v_t`` the sliding speed of Q's surface relative to
    P's, including the rotation of rigid markers times their radii
    (:func:`ancf_beam.mbs.core.contact_kinematics`). The friction moment about the centres
    acts on rigid markers' angles; on a beam point or point mass the friction force acts at the
    point (the point carries no rotation).

    Newton tangent: the normal force's stiffness and damping (friction left out). Potential
    energy: the elastic part ``K delta^(n+1)/(n+1)`` (``k delta^2/2``): the element is
    conservative when the law has no damping (hertz, kelvin-voigt with ``c = 0``, a hysteresis
    law with ``ce = 1``) and there is no friction; otherwise the integrators book the work the
    damping and friction dissipate (:func:`ancf_beam.mbs.core.contact_dissipation`) with the
    damage work, so the energy balance closes either way."""

    pair_tangent = True
    p: Point | None = None
    q: Point | None = None
    inside: bool = False
    r_p: float = 0.0
    r_q: float = 0.0
    law: ContactLaw | None = None
    friction: FrictionLaw | None = None
    m_eff: float | None = None  # kg, for the contact frequency (None: from the bodies' masses)
    v_impact: float | None = None  # m/s, expected approach speed (nonlinear laws' stiffness)

    def __post_init__(self):
        if self.law is None:
            raise ValueError(f"contact '{self.name}': a normal law is required")
        if self.friction is None:
            self.friction = FrictionLaw()
        if not (self.r_p >= 0.0 and self.r_q >= 0.0):
            raise ValueError(f"contact '{self.name}': radii must be >= 0")
        if self.inside and not self.r_p > self.r_q:
            raise ValueError(
                f"contact '{self.name}': the bearing radius r_p must exceed the journal radius r_q"
            )

    def encode(self):
        fi, ff = self._rows(FE_CONTACT, self.p, self.q)
        ff[core.C_RP] = self.r_p
        ff[core.C_RQ] = self.r_q
        ff[core.C_INSIDE] = float(self.inside)
        ff[core.C_LAW] = self.law.code
        ff[core.C_FRIC] = self.friction.code
        ff[core.C_NPAR : core.C_FPAR] = self.law.params()
        ff[core.C_FPAR : core.C_FEND] = self.friction.params()
        return fi, ff

    def dofs(self):
        return sorted(set(self.p.dofs() + self.q.dofs()))

    @property
    def clearance(self) -> float:
        """Radial clearance ``r_p - r_q`` (m; inside contacts)."""
        return self.r_p - self.r_q

    @property
    def conservative(self) -> bool:
        return self.law.damping == 0.0 and self.law.chi == 0.0 and self.friction.law == "none"

    @property
    def energy_booked(self) -> bool:
        """Always: the integrators book the work the law's damping and friction dissipate
        (:func:`ancf_beam.mbs.core.contact_dissipation`)."""
        return True

    def estimated_mass(self) -> float | None:
        """``m_eff`` when given, else ``m_P m_Q / (m_P + m_Q)`` from the masses of the bodies
        the two points belong to (a beam: its total mass; the ground: infinite)."""
        if self.m_eff is not None:
            return self.m_eff
        masses = []
        for pt in (self.p, self.q):
            body = pt.body
            if body is None:
                continue
            m = getattr(body, "mass", None)
            if m is None and hasattr(body, "model"):
                m = body.model.total_mass()
            if m is None:
                return None
            masses.append(float(m))
        if not masses:
            return None
        return masses[0] if len(masses) == 1 else masses[0] * masses[1] / sum(masses)

    def linear_stiffness(self, v_impact: float | None = None, m_eff: float | None = None):
        """Stiffness (N/m) that sets the contact frequency: ``k`` of kelvin-voigt; for the
        ``K delta^n`` laws the tangent ``n K delta_max^(n-1)`` at the undamped estimate of the
        largest penetration ``delta_max = ((n+1) m_eff v^2 / (2 K))^(1/(n+1))`` (energy balance;
        the damped laws penetrate less, so this is the stiffest state they reach). None when a
        nonlinear law lacks ``m_eff`` or ``v_impact``."""
        law = self.law
        if law.law == "kelvin-voigt":
            return law.stiffness
        v = self.v_impact if v_impact is None else v_impact
        m = self.estimated_mass() if m_eff is None else m_eff
        if v is None or m is None:
            return None
        n, k = law.exponent, law.stiffness
        dmax = ((n + 1.0) * m * v * v / (2.0 * k)) ** (1.0 / (n + 1.0))
        return n * k * dmax ** (n - 1.0)

    def omega(self, v_impact: float | None = None, m_eff: float | None = None):
        """Contact frequency ``sqrt(k_lin / m_eff)`` (rad/s; :meth:`linear_stiffness`), None
        when it cannot be estimated."""
        m = self.estimated_mass() if m_eff is None else m_eff
        k = self.linear_stiffness(v_impact, m)
        if k is None or m is None:
            return None
        return math.sqrt(k / m)

    def evaluate(self, q, v, fst_row=None) -> dict[str, np.ndarray]:
        """Per sample of ``q``, ``v`` (shape ``(n,)`` or ``(k, n)``): ``delta`` (m),
        ``delta_dot`` (m/s), ``e_x``, ``e_y`` (m, eccentricity), ``v_t`` (m/s), ``F_n``,
        ``F_t`` (N, friction on Q along t) and ``state`` (1 where ``F_n > 0``). ``fst_row``:
        the carried state (approach speed) to use, one row or one per sample; by default each
        sample is evaluated as if its own closing speed were the approach speed (exact for laws
        that do not use ``v0``)."""
        fi, ff = self.encode()
        q2 = np.ascontiguousarray(np.atleast_2d(np.asarray(q, dtype=float)))
        v2 = np.ascontiguousarray(np.atleast_2d(np.asarray(v, dtype=float)))
        st = np.zeros(STATE_SIZE) if fst_row is None else np.asarray(fst_row, dtype=float)
        st = np.ascontiguousarray(np.broadcast_to(st, (len(q2), STATE_SIZE)))
        res = np.zeros((len(q2), 8))
        core.contact_samples(fi, ff, q2, v2, st, res)
        keys = ("delta", "delta_dot", "e_x", "e_y", "v_t", "F_n", "F_t", "state")
        out = {k: res[:, j] for j, k in enumerate(keys)}
        if np.ndim(q) == 1:
            return {k: x[0] for k, x in out.items()}
        return out
