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
(the line contact) must couple coordinates at most the half-bandwidth apart (checked by the
system). A contact kind (a gap, the approach speed carried in ``fst``, a contact record) also
derives from :class:`Contact` and is listed in :func:`ancf_beam.mbs.core.is_contact`, which
every kernel and integrator that treats contacts asks.

Signs: forces are generalized forces on the coordinates (N on positions, N m on angles);
potential energies in J.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ancf_beam.mbs import core
from ancf_beam.mbs.bodies import PT_GROUND, PT_RIGID, Point, RigidBody, ground
from ancf_beam.mbs.contact import ContactLaw, FrictionLaw
from ancf_beam.mbs.core import FE_CONTACT, FE_FORCE, FE_LINE, FE_SPRING, FE_TORQUE

__all__ = [
    "CONTACT_MODELS",
    "CONTACT_STATES",
    "STATE_SIZE",
    "CircleContact",
    "Contact",
    "ForceElement",
    "LineContact",
    "PointForce",
    "SpringDamper",
    "Torque",
]

STATE_SIZE = 4  # floats of carried state per force element
N_INT = 8
N_FLT = core.FE_NFLT  # 27: the line contact's parameters are the longest row


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

    @property
    def energy_booked(self) -> bool:
        """Always: the integrators book the work the damping dissipates, ``c l_dot^2``
        (:func:`ancf_beam.mbs.core.dissipation_power`)."""
        return True


#: contact models: a compliant force element (a normal ``law``) or a unilateral constraint
#: (``nonsmooth``: Newton's impact law and Coulomb friction, :mod:`ancf_beam.mbs.moreau`)
CONTACT_MODELS = ("compliant", "nonsmooth")

#: names of the carried contact flag (``fst[e, 1]``) as :meth:`Contact.evaluate` reports it
CONTACT_STATES = ("separated", "in contact")


def _body_mass(point: Point) -> float | None:
    """Mass (kg) of the body ``point`` belongs to (a beam: its total mass); ``inf`` for the
    ground, None when unknown."""
    body = point.body
    if body is None:
        return math.inf
    m = getattr(body, "mass", None)
    if m is None and hasattr(body, "model"):
        m = body.model.total_mass  # a cached property
    return None if m is None else float(m)


@dataclass(eq=False)
class Contact(ForceElement):
    """Base of the contact force elements (:class:`CircleContact`, :class:`LineContact`): a
    normal ``law``, a ``friction`` law, the approach speed of each impact carried in the
    element's state, the contact record of the integrators (:mod:`ancf_beam.mbs.stepping`). A
    subclass defines the fields ``law``, ``friction``, ``m_eff`` (kg, for the contact frequency;
    None: :meth:`estimated_mass`) and ``v_impact`` (m/s, the expected approach speed that sets
    a nonlinear law's stiffness) and the masses its two sides move (:meth:`_side_masses`).

    Potential energy: the elastic part of the law, ``K delta^(n+1)/(n+1)`` (``k delta^2/2``):
    the element is conservative when the law has no damping (hertz, kelvin-voigt with ``c =
    0``, a hysteresis law with ``ce = 1``) and there is no friction; otherwise the integrators
    book the work the damping and friction dissipate (:func:`ancf_beam.mbs.core.
    dissipation_power`) with the damage work, so the energy balance closes either way.

    ``model="nonsmooth"``: the contact is a unilateral constraint instead (gap ``g = -delta >=
    0``, the same geometry), with Newton's impact law (``restitution`` e, 0 <= e <= 1) and
    Coulomb friction (``mu``) at velocity level; no ``law`` is needed (``friction`` is
    ignored). It is no force element: :meth:`ancf_beam.mbs.system.System.finalize` keeps it in
    ``system.unilateral`` and only the Moreau-Jean stepper (:mod:`ancf_beam.mbs.moreau`) takes
    it; the impulses' work is booked as dissipation there."""

    @property
    def conservative(self) -> bool:
        if self.nonsmooth:
            return self.restitution == 1.0 and self.mu == 0.0
        return self.law.damping == 0.0 and self.law.chi == 0.0 and self.friction.law == "none"

    @property
    def energy_booked(self) -> bool:
        """Always: the integrators book the work the law's damping and friction dissipate
        (:func:`ancf_beam.mbs.core.dissipation_power`)."""
        return True

    def _side_masses(self) -> list[float | None]:
        raise NotImplementedError

    def estimated_mass(self) -> float | None:
        """``m_eff`` when given, else the reduced mass ``m_1 m_2 / (m_1 + m_2)`` of the two
        sides' masses (:meth:`_side_masses`; the ground: infinite)."""
        if self.m_eff is not None:
            return self.m_eff
        masses = []
        for m in self._side_masses():
            if m is None:
                return None
            if math.isinf(m):
                continue
            masses.append(m)
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
        ``delta_dot`` (m/s), ``e_x``, ``e_y`` (m; a circle's eccentricity, a line contact's
        offset of the contact point from the line), ``v_t`` (m/s), ``F_n``, ``F_t`` (N, the
        friction force along the tangent) and ``state`` (1 where ``F_n > 0``). ``fst_row``:
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

    def _encode_laws(self, ff: np.ndarray) -> None:
        if self.nonsmooth:  # the geometry alone (the Moreau-Jean stepper reads e and mu)
            return
        ff[core.C_LAW] = self.law.code
        ff[core.C_FRIC] = self.friction.code
        ff[core.C_NPAR : core.C_FPAR] = self.law.params()
        ff[core.C_FPAR : core.C_FEND] = self.friction.params()

    @property
    def nonsmooth(self) -> bool:
        """True for a unilateral constraint (``model="nonsmooth"``): no force element, kept in
        ``System.unilateral`` and integrated by the Moreau-Jean stepper
        (:mod:`ancf_beam.mbs.moreau`: Newton's impact law with ``restitution``, Coulomb friction
        with ``mu``)."""
        return self.model == "nonsmooth"

    def _check_laws(self) -> None:
        if self.model not in CONTACT_MODELS:
            raise ValueError(
                f"contact '{self.name}': model = {self.model!r} must be one of "
                + ", ".join(CONTACT_MODELS)
            )
        e, mu = self.restitution, self.mu
        if not (isinstance(e, (int, float)) and math.isfinite(e) and 0.0 <= e <= 1.0):
            raise ValueError(f"contact '{self.name}': restitution = {e!r} must be in [0, 1]")
        if not (isinstance(mu, (int, float)) and math.isfinite(mu) and mu >= 0.0):
            raise ValueError(f"contact '{self.name}': mu = {mu!r} must be >= 0")
        if self.friction is None:
            self.friction = FrictionLaw()
        if self.nonsmooth:
            return
        if self.law is None:
            raise ValueError(f"contact '{self.name}': a normal law is required")


@dataclass(eq=False)
class CircleContact(Contact):
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

    Newton tangent: the normal force's stiffness and damping and the regularised friction's
    viscous share ``c_v mu'(v_t) F_n t t^T`` on the points' translations (left out: the rigid
    markers' radius terms, and the friction's dependence on ``F_n``, which is not symmetric).
    Potential
    energy and energy balance: :class:`Contact`. ``m_eff`` (None): the reduced mass of the
    bodies' masses (a beam: its total mass)."""

    pair_tangent = True  # its tangent is a pair block: any two bodies (low-rank outside the band)
    p: Point | None = None
    q: Point | None = None
    inside: bool = False
    r_p: float = 0.0
    r_q: float = 0.0
    law: ContactLaw | None = None
    friction: FrictionLaw | None = None
    m_eff: float | None = None  # kg, for the contact frequency (None: from the bodies' masses)
    v_impact: float | None = None  # m/s, expected approach speed (nonlinear laws' stiffness)
    model: str = "compliant"  # "compliant" (a force element) or "nonsmooth" (unilateral)
    restitution: float = 0.0  # Newton's impact law (nonsmooth), 0 <= e <= 1
    mu: float = 0.0  # Coulomb friction coefficient (nonsmooth), >= 0

    def __post_init__(self):
        self._check_laws()
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
        self._encode_laws(ff)
        return fi, ff

    def dofs(self):
        return sorted(set(self.p.dofs() + self.q.dofs()))

    @property
    def clearance(self) -> float:
        """Radial clearance ``r_p - r_q`` (m; inside contacts)."""
        return self.r_p - self.r_q

    def _side_masses(self):
        return [_body_mass(self.p), _body_mass(self.q)]


@dataclass(eq=False)
class LineContact(Contact):
    """Point ``p`` (any :class:`~ancf_beam.mbs.bodies.Point` but a slope: a rigid marker, a
    beam point or node, a point mass), the centre of a disc of radius ``r`` (0: the bare
    point), against the line through ``through`` (a ground point or a rigid marker: the line
    moves with that body) with direction ``direction`` (normalised here; in the frame of the
    line's body). The normal ``n`` is ``direction`` turned by +90 degrees and points to the
    allowed side: gap ``g = n . (x_p - x_through) - r``, penetration ``delta = -g`` when ``g <
    0``. ``segment = (s_min, s_max)`` (m, along ``direction`` from ``through``) limits the
    contact to that part of the line; outside it there is none (the gap is then the distance
    from the contact point to the segment's nearer end; a point that enters the segment from
    beyond an end on the wrong side of the line starts with its whole penetration: the segment
    has no end faces). Formulas: :func:`ancf_beam.mbs.core.line_kinematics`.

    The normal force ``F_n`` (the laws of :mod:`ancf_beam.mbs.contact`, with the approach speed
    ``v0`` carried from the onset, as :class:`CircleContact`) pushes ``p`` along ``n``;
    friction ``F_t = -mu_eff(v_t) F_n`` acts on ``p`` along ``direction`` at the contact point
    ``x_p - r n``, ``v_t`` the sliding speed of ``p``'s material point there relative to the
    line's (a rigid marker's rotation times ``r`` included); the opposite forces act on the
    line's body at the same point when it is a rigid body (their moment from the lever arm of
    the contact point). ``evaluate``/``System.contact_history``: the keys of a circle contact,
    ``e = (e_x, e_y)`` the contact point minus the nearest point of the line (segment), ``g n``
    within the segment; ``F_t`` the friction on ``p`` along ``direction``.

    Newton tangent: the law's stiffness and damping along the normal, the geometric stiffness
    of the gap (rotating markers and a rotating line) and the friction law's viscous slope
    ``mu'(v_t) F_n`` (the non-symmetric terms left out: :func:`ancf_beam.mbs.core.
    _line_tangent`). Potential energy and energy balance: :class:`Contact`.

    ``m_eff`` (None): the reduced mass of the two sides, ``p``'s side a rigid body's mass at
    the marker, ``1 / (1/m + |a|^2 / J)`` with the marker's offset ``a`` from the centre of
    mass (the smallest over the orientations: the normal's lever arm about the centre of mass
    is at most ``|a|``), a beam's total mass or a point mass; the line's side its body's mass
    (its rotation left out: exact for the ground and a translating guide)."""

    p: Point | None = None
    through: Point | None = None
    direction: tuple[float, float] = (1.0, 0.0)
    r: float = 0.0
    segment: tuple[float, float] | None = None
    law: ContactLaw | None = None
    friction: FrictionLaw | None = None
    m_eff: float | None = None  # kg, for the contact frequency (None: estimated_mass)
    v_impact: float | None = None  # m/s, expected approach speed (nonlinear laws' stiffness)
    model: str = "compliant"  # "compliant" (a force element) or "nonsmooth" (unilateral)
    restitution: float = 0.0  # Newton's impact law (nonsmooth), 0 <= e <= 1
    mu: float = 0.0  # Coulomb friction coefficient (nonsmooth), >= 0

    def __post_init__(self):
        self._check_laws()
        name = self.name
        if self.p is None or self.through is None:
            raise ValueError(f"line contact '{name}': needs a point p and a point 'through'")
        if self.p.slope:
            raise ValueError(f"line contact '{name}': p = {self.p.label!r} is a slope, not a point")
        if self.through.kind not in (PT_GROUND, PT_RIGID):
            raise ValueError(
                f"line contact '{name}': through = {self.through.label!r} must be a ground point "
                "or a rigid body's marker"
            )
        if self.through.body is not None and self.through.body is self.p.body:
            raise ValueError(f"line contact '{name}': p and the line are on the same body")
        dx, dy = (float(x) for x in self.direction)
        norm = math.hypot(dx, dy)
        if not (math.isfinite(norm) and norm > 0.0):
            raise ValueError(
                f"line contact '{name}': direction = {self.direction!r} must be a finite, "
                "nonzero vector"
            )
        self.direction = (dx / norm, dy / norm)
        if not (math.isfinite(self.r) and self.r >= 0.0):
            raise ValueError(f"line contact '{name}': r = {self.r!r} must be >= 0")
        if self.segment is not None:
            lo, hi = (float(x) for x in self.segment)
            if not lo < hi:
                raise ValueError(
                    f"line contact '{name}': segment = {self.segment!r} needs s_min < s_max"
                )
            self.segment = (lo, hi)

    def encode(self):
        fi, ff = self._rows(FE_LINE, self.p, self.through)
        body = self.through.body
        fi[7] = body.angle_index if self.through.kind == PT_RIGID else -1
        ff[core.L_R] = self.r
        ff[core.L_DX], ff[core.L_DY] = self.direction
        lo, hi = self.segment if self.segment is not None else (-math.inf, math.inf)
        ff[core.L_SMIN] = lo
        ff[core.L_SMAX] = hi
        self._encode_laws(ff)
        return fi, ff

    def dofs(self):
        return sorted(set(self.p.dofs() + self.through.dofs()))

    @property
    def normal(self) -> tuple[float, float]:
        """Unit normal (towards the allowed side) in the frame of the line's body."""
        dx, dy = self.direction
        return (-dy, dx)

    def _side_masses(self):
        m_p = _body_mass(self.p)
        body = self.p.body
        if m_p is not None and self.p.kind == PT_RIGID and isinstance(body, RigidBody):
            a2 = sum(float(x) ** 2 for x in self.p.weights)
            m_p = 1.0 / (1.0 / m_p + a2 / body.inertia)
        return [m_p, _body_mass(self.through)]

    @classmethod
    def guide_corners(
        cls,
        name: str,
        slider: RigidBody,
        a: float,
        b: float,
        gap: float,
        guide: Point,
        direction: tuple[float, float] = (1.0, 0.0),
        law: ContactLaw | None = None,
        friction: FrictionLaw | None = None,
        segment: tuple[float, float] | None = None,
        m_eff: float | None = None,
        v_impact: float | None = None,
        model: str = "compliant",
        restitution: float = 0.0,
        mu: float = 0.0,
    ) -> list[LineContact]:
        """The four corner contacts of a rectangular rigid ``slider`` (``a`` long along its
        body x axis, ``b`` high, centred at its centre of mass) in a guide of width ``b +
        gap`` (m): in the guide frame (origin ``guide``, a ground point or a rigid body's
        marker, x along ``direction``, y along the normal ``n``) the upper line ``y = +(b +
        gap)/2`` with its normal pointing down (-n) against the corners ``(+-a/2, +b/2)``, the
        lower line ``y = -(b + gap)/2`` (normal +n) against ``(+-a/2, -b/2)``. ``segment``:
        the guide's extent along ``direction`` (guide frame). Names ``{name}.upper_front``,
        ``.upper_rear``, ``.lower_front``, ``.lower_rear`` (front: the slider's +x).
        ``model``, ``restitution``, ``mu``: as :class:`LineContact` (``"nonsmooth"``: four
        unilateral constraints)."""
        if not (a > 0.0 and b > 0.0 and gap >= 0.0):
            raise ValueError(
                f"guide '{name}': need a > 0, b > 0 and gap >= 0, got a = {a!r}, b = {b!r}, "
                f"gap = {gap!r}"
            )
        dx, dy = (float(x) for x in direction)
        norm = math.hypot(dx, dy)
        if not (math.isfinite(norm) and norm > 0.0):
            raise ValueError(f"guide '{name}': direction = {direction!r} must be nonzero")
        dx, dy = dx / norm, dy / norm
        nx, ny = -dy, dx
        h = 0.5 * (b + gap)

        def shifted(sign: float) -> Point:
            ox, oy = (float(x) for x in guide.weights[:2])
            x, y = ox + sign * h * nx, oy + sign * h * ny
            if guide.kind == PT_GROUND:
                return ground(x, y)
            if guide.kind == PT_RIGID:
                return guide.body.marker(x, y, label=f"{guide.label}{sign * h:+g}n")
            raise ValueError(f"guide '{name}': {guide.label!r} must be a ground point or a marker")

        upper, lower = shifted(1.0), shifted(-1.0)
        seg_up = None if segment is None else (-float(segment[1]), -float(segment[0]))
        common = {
            "law": law,
            "friction": friction,
            "m_eff": m_eff,
            "v_impact": v_impact,
            "model": model,
            "restitution": restitution,
            "mu": mu,
        }
        out = []
        for side, line, sy, d, seg in (
            ("upper", upper, 0.5 * b, (-dx, -dy), seg_up),
            ("lower", lower, -0.5 * b, (dx, dy), segment),
        ):
            for end, sx in (("front", 0.5 * a), ("rear", -0.5 * a)):
                out.append(
                    cls(
                        f"{name}.{side}_{end}",
                        p=slider.marker(sx, sy, label=f"{slider.name}.{side}_{end}"),
                        through=line,
                        direction=d,
                        segment=seg,
                        **common,
                    )
                )
        return out
