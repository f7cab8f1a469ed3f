"""Mechanisms built from a :class:`~ancf_beam.specs.MechanismSpec` (the ``mechanisms:`` config).

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
a :class:`~ancf_beam.mbs.forces.CircleContact` of the same name (``inside``): the journal
(``journal_radius``) on ``clearance.journal`` -- by default the crank pin or the slider's pin,
the bearing (``bearing_radius``) then on the connecting rod's end (a rigid marker or the ANCF end
node); ``journal: rod`` puts the journal on the rod and the bearing in the crank or slider. The
journal starts centred in its bearing with the velocities of the ideal mechanism.

Every kind is a preset: :func:`ancf_beam.mbs.presets.expand` writes it as a general description
(named bodies, joints, contacts) that :func:`ancf_beam.mbs.general.build_general` builds, as it
builds ``kind: general``; the handles above are looked up by name. A contact
between bodies that are not neighbours in the coordinate vector takes the low-rank path of
:mod:`ancf_beam.mbs.system`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ancf_beam.mbs.bodies import BeamBody, PointMass, RigidBody
from ancf_beam.mbs.forces import CircleContact
from ancf_beam.mbs.general import build_general
from ancf_beam.mbs.joints import Driver
from ancf_beam.mbs.presets import expand
from ancf_beam.mbs.system import System
from ancf_beam.specs import MechanismSpec

__all__ = [
    "Mechanism",
    "build_general_mechanism",
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
    q0: np.ndarray | None = None  # initial positions to integrate from (None: the system's)
    # general mechanisms: the parts by name ("body.marker" for markers)
    markers: dict = field(default_factory=dict)
    named_bodies: dict = field(default_factory=dict)
    drivers: dict = field(default_factory=dict)
    contacts: dict = field(default_factory=dict)
    continuous_factor: dict = field(default_factory=dict)

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


def _built(spec: MechanismSpec) -> Mechanism:
    """The preset's (or the general description's) system, built and assembled, with every
    part by name (:mod:`ancf_beam.mbs.presets`, :mod:`ancf_beam.mbs.general`)."""
    gen = expand(spec)
    system, parts, q, v = build_general(spec, gen)
    return Mechanism(
        spec,
        system,
        v0=v,
        q0=q,
        markers=parts.markers,
        named_bodies=parts.bodies,
        drivers=parts.drivers,
        contacts=parts.contacts,
        continuous_factor=parts.continuous_factor,
    )


def build_pendulum(spec: MechanismSpec) -> Mechanism:
    mech = _built(spec)
    mech.beam = mech.named_bodies["beam"]
    return mech


def build_slider_crank(spec: MechanismSpec) -> Mechanism:
    mech = _built(spec)
    rod = mech.named_bodies["rod"]
    mech.crank, mech.slider = mech.named_bodies["crank"], mech.named_bodies["slider"]
    mech.beam, mech.rod = (rod, None) if isinstance(rod, BeamBody) else (None, rod)
    mech.drive = mech.drivers["drive"]
    mech.contact = next(iter(mech.contacts.values()), None)
    return mech


def build_two_body(spec: MechanismSpec) -> Mechanism:
    mech = _built(spec)
    mech.bodies = (mech.named_bodies["body1"], mech.named_bodies["body2"])
    mech.contact = mech.contacts["contact"]
    return mech


def build_general_mechanism(spec: MechanismSpec) -> Mechanism:
    """A general mechanism (:mod:`ancf_beam.mbs.general`), assembled."""
    return _built(spec)


def build_mechanism(spec: MechanismSpec) -> Mechanism:
    """The mechanism of ``spec.kind``."""
    builders = {
        "pendulum": build_pendulum,
        "slider-crank": build_slider_crank,
        "two-body": build_two_body,
        "general": build_general_mechanism,
    }
    return builders[spec.kind](spec)
