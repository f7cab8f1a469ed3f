"""Mechanisms built from a :class:`~ancf_beam.config.MechanismSpec` (the ``mechanisms:`` config).

* ``pendulum``: a beam case pinned at node 0 to the ground at the origin (position fixed, slope
  free), released from rest in its reference configuration (straight along +x unless the case
  has an imperfection) under gravity ``g`` along -y.
* ``slider-crank``: bodies in the order crank, rod, slider (contact elements between
  neighbours stay within the band, the cheapest path of the iteration matrix). Rigid crank of
  length ``r`` pivoted at the origin (centre of mass at mid-length, angle 0 along +x at t = 0)
  and driven at the constant speed ``omega`` (``theta = omega t``); connecting rod either rigid
  (length ``l``, centre of mass at mid-length) or an ANCF beam case whose node 0 is pinned to
  the crank pin and whose last node is pinned to the slider (placed so that its chord lies along
  +x); slider (rigid, pin at its centre of mass) on the x axis through the pivot, rotation
  locked. Initial velocities are made consistent with the drive, the rod moving rigidly (no
  initial deformation rates).

* ``two-body``: seed 003's impact: two point masses ``m1`` (at the origin, moving at ``v_rel``
  along +x) and ``m2`` (at rest) on the x axis, discs of radii ``radius1``, ``radius2`` whose
  surfaces are ``gap`` apart at t = 0 (0: touching, the impact starts at t = 0+), one
  :class:`~ancf_beam.mbs.forces.CircleContact` (``contact``) with the configured law, no gravity
  unless ``g`` is set.

Joint names (used for reactions): ``pivot``, ``drive``, ``crank_pin``, ``wrist_pin``,
``slider_guide`` (slider-crank); ``pivot`` (pendulum).

Clearance joint (``spec.clearance``): the revolute ``crank_pin`` or ``wrist_pin`` is replaced by
a :class:`~ancf_beam.mbs.forces.CircleContact` of the same name (``inside``: the bearing, radius
``bearing_radius``, on the connecting rod's end -- a rigid marker or the ANCF end node -- and the
journal, ``journal_radius``, on the crank pin or the slider's pin). The journal starts centred in
its bearing with the velocities of the ideal mechanism. The bodies stay in the order crank, rod,
slider, so the contact couples neighbours in the coordinate vector (within the band; any other
pair would take the low-rank path of :mod:`ancf_beam.mbs.system`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import MechanismSpec
from ancf_beam.mbs.bodies import BeamBody, PointMass, RigidBody, ground
from ancf_beam.mbs.forces import CircleContact
from ancf_beam.mbs.joints import Driver, Prismatic, Revolute
from ancf_beam.mbs.system import System

__all__ = [
    "Mechanism",
    "build_mechanism",
    "build_pendulum",
    "build_slider_crank",
    "build_two_body",
]


@dataclass
class Mechanism:
    """A built mechanism: the finalized system and handles on its parts."""

    spec: MechanismSpec
    system: System
    beam: BeamBody | None = None  # the pendulum, or the ANCF connecting rod
    crank: RigidBody | None = None
    rod: RigidBody | None = None  # rigid connecting rod
    slider: RigidBody | None = None
    drive: Driver | None = None
    contact: CircleContact | None = None  # two-body; the slider-crank's clearance joint
    bodies: tuple[PointMass, PointMass] | None = None  # two-body
    v0: np.ndarray | None = None  # initial velocities to integrate from (None: the system's)

    @property
    def contact_m_eff(self) -> float | None:
        """``m_P m_Q / (m_P + m_Q)`` (kg) of the two bodies a contact connects (for a clearance
        joint the rod and the crank or slider; a beam counts with its whole mass)."""
        if self.contact is None:
            return None
        m = [_body_mass(pt.body) for pt in (self.contact.p, self.contact.q)]
        return m[0] * m[1] / (m[0] + m[1])


def _body_mass(body) -> float:
    if isinstance(body, BeamBody):
        return float(body.model.total_mass)
    return float(body.mass)


def build_pendulum(spec: MechanismSpec) -> Mechanism:
    system = System(g=spec.g, name=spec.name)
    beam = system.add(BeamBody("beam", model=BeamModel(spec.beam)))
    system.add(Revolute("pivot", p=beam.node(0), q=ground(0.0, 0.0)))
    return Mechanism(spec, system.finalize(), beam=beam)


def _slider_crank_system(spec: MechanismSpec, crank, rod_body, slider, end_a, end_b, clearance):
    """The slider-crank's system on the given bodies; the joint named ``clearance.joint`` (if
    any) becomes a :class:`~ancf_beam.mbs.forces.CircleContact` (journal inside bearing), with
    the bearing on the connecting rod's end and the journal on the crank pin or the slider."""
    r = spec.crank.length
    system = System(g=spec.g, name=spec.name)
    system.add(crank, rod_body, slider)
    drive = Driver("drive", body=crank, omega=spec.omega)
    # revolute (p, q) as in the ideal mechanism, and which of them is the bearing (rod end)
    pins = {
        "crank_pin": (crank.marker(0.5 * r, 0.0), end_a, 1),
        "wrist_pin": (end_b, slider.marker(), 0),
    }
    system.add(Revolute("pivot", p=crank.marker(-0.5 * r, 0.0), q=ground(0.0, 0.0)), drive)
    contact = None
    for name, (p, q, b) in pins.items():
        bearing, journal = (p, q) if b == 0 else (q, p)
        if clearance is not None and clearance.joint == name:
            # for the explicit bound: the two bodies' reduced mass and the crank pin's speed
            # (above the journal's relative speeds, so the bound errs on the safe side)
            m = [_body_mass(x.body) for x in (bearing, journal)]
            contact = CircleContact(
                name,
                p=bearing,
                q=journal,
                inside=True,
                r_p=clearance.bearing_radius,
                r_q=clearance.journal_radius,
                law=clearance.contact,
                friction=clearance.friction,
                m_eff=m[0] * m[1] / (m[0] + m[1]),
                v_impact=abs(spec.omega) * r,
            )
            system.add(contact)
        else:
            system.add(Revolute(name, p=p, q=q))
    system.add(
        Prismatic(
            "slider_guide", p=slider.marker(), through=ground(0.0, 0.0), direction=(1.0, 0.0)
        ),
    )
    return system, drive, contact


def build_slider_crank(spec: MechanismSpec) -> Mechanism:
    r = spec.crank.length
    crank = RigidBody(
        "crank",
        mass=spec.crank.mass,
        inertia=spec.crank.inertia,
        position=(0.5 * r, 0.0),
        angular_velocity=spec.omega,
    )
    beam = rod = None
    if spec.beam is not None:
        model = BeamModel(spec.beam)
        ref = model.reference()
        dx, dy = ref[-4] - ref[0], ref[-3] - ref[1]
        chord = math.hypot(dx, dy)
        beam = BeamBody("rod", model=model, origin=(r, 0.0), angle=-math.atan2(dy, dx))
        end_a, end_b = beam.node(0), beam.node(-1)
        rod_body = beam
    else:
        chord = spec.rod.length
        rod = RigidBody(
            "rod", mass=spec.rod.mass, inertia=spec.rod.inertia, position=(r + 0.5 * chord, 0.0)
        )
        end_a, end_b = rod.marker(-0.5 * chord, 0.0), rod.marker(0.5 * chord, 0.0)
        rod_body = rod
    slider = RigidBody(
        "slider", mass=spec.slider.mass, inertia=spec.slider.inertia, position=(r + chord, 0.0)
    )
    parts = (crank, rod_body, slider, end_a, end_b)
    v0 = None
    if spec.clearance is not None:
        # initial velocities of the ideal mechanism (journal centred in its bearing, moving
        # with it): the clearance system alone leaves the rod's and slider's speeds free
        ideal, _, _ = _slider_crank_system(spec, *parts, None)
        v0 = ideal.finalize().consistent_velocities()
    system, drive, contact = _slider_crank_system(spec, *parts, spec.clearance)
    return Mechanism(
        spec,
        system.finalize(),
        beam=beam,
        crank=crank,
        rod=rod,
        slider=slider,
        drive=drive,
        contact=contact,
        v0=v0,
    )


def build_two_body(spec: MechanismSpec) -> Mechanism:
    m1, m2 = spec.masses
    r1, r2 = spec.radii
    system = System(g=spec.g, name=spec.name)
    b1 = PointMass("body1", mass=m1, position=(0.0, 0.0), velocity=(spec.v_rel, 0.0))
    b2 = PointMass("body2", mass=m2, position=(r1 + r2 + spec.gap, 0.0))
    contact = CircleContact(
        "contact",
        p=b1.point(),
        q=b2.point(),
        inside=False,
        r_p=r1,
        r_q=r2,
        law=spec.contact,
        m_eff=spec.m_eff,
        v_impact=spec.v_rel,
    )
    system.add(b1, b2, contact)
    return Mechanism(spec, system.finalize(), bodies=(b1, b2), contact=contact)


def build_mechanism(spec: MechanismSpec) -> Mechanism:
    """The mechanism of ``spec.kind``."""
    builders = {
        "pendulum": build_pendulum,
        "slider-crank": build_slider_crank,
        "two-body": build_two_body,
    }
    return builders[spec.kind](spec)
