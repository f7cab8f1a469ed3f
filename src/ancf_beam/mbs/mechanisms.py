"""Mechanisms built from a :class:`~ancf_beam.config.MechanismSpec` (the ``mechanisms:`` config).

* ``pendulum``: a beam case pinned at node 0 to the ground at the origin (position fixed, slope
  free), released from rest in its reference configuration (straight along +x unless the case
  has an imperfection) under gravity ``g`` along -y.
* ``slider-crank``: bodies in the order crank, rod, slider (so that joints and future contact
  elements between neighbours stay within the band). Rigid crank of length ``r`` pivoted at the
  origin (centre of mass at mid-length, angle 0 along +x at t = 0) and driven at the constant
  speed ``omega`` (``theta = omega t``); connecting rod either rigid (length ``l``, centre of mass
  at mid-length) or an ANCF beam case whose node 0 is pinned to the crank pin and whose last node
  is pinned to the slider (placed so that its chord lies along +x); slider (rigid, pin at its
  centre of mass) on the x axis through the pivot, rotation locked. Initial velocities are made
  consistent with the drive, the rod moving rigidly (no initial deformation rates).

* ``two-body``: seed 003's impact: two point masses ``m1`` (at the origin, moving at ``v_rel``
  along +x) and ``m2`` (at rest) on the x axis, discs of radii ``radius1``, ``radius2`` whose
  surfaces are ``gap`` apart at t = 0 (0: touching, the impact starts at t = 0+), one
  :class:`~ancf_beam.mbs.forces.CircleContact` (``contact``) with the configured law, no gravity
  unless ``g`` is set.

Joint names (used for reactions): ``pivot``, ``drive``, ``crank_pin``, ``wrist_pin``,
``slider_guide`` (slider-crank); ``pivot`` (pendulum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
    bodies: tuple[PointMass, PointMass] | None = None  # two-body
    contact: CircleContact | None = None  # two-body


def build_pendulum(spec: MechanismSpec) -> Mechanism:
    system = System(g=spec.g, name=spec.name)
    beam = system.add(BeamBody("beam", model=BeamModel(spec.beam)))
    system.add(Revolute("pivot", p=beam.node(0), q=ground(0.0, 0.0)))
    return Mechanism(spec, system.finalize(), beam=beam)


def build_slider_crank(spec: MechanismSpec) -> Mechanism:
    r = spec.crank.length
    system = System(g=spec.g, name=spec.name)
    crank = RigidBody("crank", mass=spec.crank.mass, inertia=spec.crank.inertia,
                      position=(0.5 * r, 0.0), angular_velocity=spec.omega)  # fmt: skip
    beam = rod = None
    if spec.beam is not None:
        model = BeamModel(spec.beam)
        ref = model.reference()
        dx, dy = ref[-4] - ref[0], ref[-3] - ref[1]
        chord = math.hypot(dx, dy)
        beam = BeamBody("rod", model=model, origin=(r, 0.0), angle=-math.atan2(dy, dx))
        end_a, end_b = beam.node(0), beam.node(-1)
        system.add(crank, beam)
    else:
        chord = spec.rod.length
        rod = RigidBody("rod", mass=spec.rod.mass, inertia=spec.rod.inertia,
                        position=(r + 0.5 * chord, 0.0))  # fmt: skip
        end_a, end_b = rod.marker(-0.5 * chord, 0.0), rod.marker(0.5 * chord, 0.0)
        system.add(crank, rod)
    slider = RigidBody("slider", mass=spec.slider.mass, inertia=spec.slider.inertia,
                       position=(r + chord, 0.0))  # fmt: skip
    system.add(slider)
    drive = Driver("drive", body=crank, omega=spec.omega)
    system.add(
        Revolute("pivot", p=crank.marker(-0.5 * r, 0.0), q=ground(0.0, 0.0)),
        drive,
        Revolute("crank_pin", p=crank.marker(0.5 * r, 0.0), q=end_a),
        Revolute("wrist_pin", p=end_b, q=slider.marker()),
        Prismatic(
            "slider_guide", p=slider.marker(), through=ground(0.0, 0.0), direction=(1.0, 0.0)
        ),  # fmt: skip
    )
    return Mechanism(spec, system.finalize(), beam=beam, crank=crank, rod=rod, slider=slider,
                     drive=drive)  # fmt: skip


def build_two_body(spec: MechanismSpec) -> Mechanism:
    m1, m2 = spec.masses
    r1, r2 = spec.radii
    system = System(g=spec.g, name=spec.name)
    b1 = PointMass("body1", mass=m1, position=(0.0, 0.0), velocity=(spec.v_rel, 0.0))
    b2 = PointMass("body2", mass=m2, position=(r1 + r2 + spec.gap, 0.0))
    contact = CircleContact("contact", p=b1.point(), q=b2.point(), inside=False, r_p=r1, r_q=r2,
                            law=spec.contact, m_eff=spec.m_eff, v_impact=spec.v_rel)  # fmt: skip
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
