"""The built-in mechanism kinds as presets: each expands into a general description
(:class:`~ancf_beam.specs.GeneralSpec`) that :mod:`ancf_beam.mbs.general` builds.

* ``pendulum``: the beam case ``beam``, node 0 (``beam.start``) pinned to the ground at the
  origin (joint ``pivot``), released from rest in its reference configuration.
* ``slider-crank``: bodies ``crank`` (markers ``pivot``, ``tip``), ``rod`` (rigid: markers ``a``,
  ``b``; an ANCF beam case: ``start``, ``end``, placed with its chord along +x), ``slider`` on the
  x axis; joints ``pivot``, ``drive`` (constant speed), ``crank_pin``, ``wrist_pin``,
  ``slider_guide``. A ``clearance`` turns its joint into a journal-in-bearing contact of that
  name, the journal on ``clearance.journal`` (default: the crank at the crank pin, the slider at
  the wrist pin; the bearing is then in the rod), the reduced mass of the two bodies and the
  crank pin speed ``|omega| r`` setting its frequency estimate.
* ``two-body``: point masses ``body1`` (at the origin, moving at ``v_rel``) and ``body2``, one
  circle-circle contact ``contact``.
"""

from __future__ import annotations

import math
from typing import Any

from ancf_beam.beam.model import BeamModel
from ancf_beam.mbs.laws import ContactSpec
from ancf_beam.specs import GeneralSpec

__all__ = ["expand"]


def _rigid(mass: float, inertia: float, x: float, markers: dict, omega: float = 0.0) -> dict:
    return {
        "type": "rigid",
        "mass": mass,
        "inertia": inertia,
        "position": [x, 0.0],
        "angle": 0.0,
        "velocity": [0.0, 0.0],
        "angular_velocity": omega,
        "markers": markers,
    }


def _beam(origin: tuple[float, float], angle: float) -> dict:
    return {"type": "beam", "origin": list(origin), "angle": angle, "attach": None}


def _pendulum(spec) -> GeneralSpec:
    return GeneralSpec(
        bodies={"beam": _beam((0.0, 0.0), 0.0)},
        joints={"pivot": {"type": "ground-pin", "point": "beam.start", "at": [0.0, 0.0]}},
        forces={},
        contacts={},
        beams={"beam": spec.beam},
        g=spec.g,
    )


def _rod(spec, r: float) -> tuple[dict, dict, float, tuple[str, str]]:
    """The connecting rod: (body, beams, chord length, end markers)."""
    if spec.beam is None:
        chord = spec.rod.length
        markers = {"a": [-0.5 * chord, 0.0], "b": [0.5 * chord, 0.0]}
        body = _rigid(spec.rod.mass, spec.rod.inertia, r + 0.5 * chord, markers)
        return body, {}, chord, ("rod.a", "rod.b")
    ref = BeamModel(spec.beam).reference()
    dx, dy = ref[-4] - ref[0], ref[-3] - ref[1]
    body = _beam((r, 0.0), -math.atan2(dy, dx))
    return body, {"rod": spec.beam}, math.hypot(dx, dy), ("rod.start", "rod.end")


def _body_mass(spec, name: str) -> float:
    if name == "rod" and spec.beam is not None:
        return float(BeamModel(spec.beam).total_mass)
    return float({"crank": spec.crank, "rod": spec.rod, "slider": spec.slider}[name].mass)


def _slider_crank(spec) -> GeneralSpec:
    r = spec.crank.length
    crank = _rigid(
        spec.crank.mass,
        spec.crank.inertia,
        0.5 * r,
        {"pivot": [-0.5 * r, 0.0], "tip": [0.5 * r, 0.0]},
        spec.omega,
    )
    rod, beams, chord, (end_a, end_b) = _rod(spec, r)
    slider = _rigid(spec.slider.mass, spec.slider.inertia, r + chord, {})
    joints: dict[str, dict[str, Any]] = {
        "pivot": {"type": "ground-pin", "point": "crank.pivot", "at": [0.0, 0.0]},
        "drive": {
            "type": "driver",
            "body": "crank",
            "profile": "constant",
            "omega": spec.omega,
            "theta0": 0.0,
        },
        "crank_pin": {"type": "revolute", "points": ["crank.tip", end_a], "clearance": None},
        "wrist_pin": {"type": "revolute", "points": [end_b, "slider.cm"], "clearance": None},
        "slider_guide": {
            "type": "prismatic",
            "point": "slider.cm",
            "through": [0.0, 0.0],
            "direction": [1.0, 0.0],
            "lock_rotation": True,
            "guide": None,
        },
    }
    laws, m_eff, v_impact = {}, {}, {}
    cl = spec.clearance
    if cl is not None:
        other = "crank" if cl.joint == "crank_pin" else "slider"
        journal = cl.journal or other
        joints[cl.joint]["clearance"] = {
            "journal": journal,
            "bearing_radius": cl.bearing_radius,
            "journal_radius": cl.journal_radius,
        }
        laws[cl.joint] = ContactSpec(
            cl.contact, cl.friction, cl.continuous_factor, "clearance.contact"
        )
        bearing = "rod" if journal == other else other
        mb, mj = _body_mass(spec, bearing), _body_mass(spec, journal)
        m_eff[cl.joint] = mb * mj / (mb + mj)
        v_impact[cl.joint] = abs(spec.omega) * r
    return GeneralSpec(
        bodies={"crank": crank, "rod": rod, "slider": slider},
        joints=joints,
        forces={},
        contacts={},
        beams=beams,
        laws=laws,
        g=spec.g,
        m_eff=m_eff,
        v_impact=v_impact,
    )


def _two_body(spec) -> GeneralSpec:
    r1, r2 = spec.radii
    m1, m2 = spec.masses
    point = {"type": "point-mass", "velocity": [0.0, 0.0]}
    return GeneralSpec(
        bodies={
            "body1": {**point, "mass": m1, "position": [0.0, 0.0], "velocity": [spec.v_rel, 0.0]},
            "body2": {**point, "mass": m2, "position": [r1 + r2 + spec.gap, 0.0]},
        },
        joints={},
        forces={},
        contacts={
            "contact": {
                "type": "circle-circle",
                "points": ["body1.cm", "body2.cm"],
                "radii": [r1, r2],
            }
        },
        laws={"contact": ContactSpec(spec.contact, None, 5.0)},
        g=spec.g,
        m_eff={"contact": spec.m_eff},
        v_impact={"contact": spec.v_rel},
    )


def expand(spec) -> GeneralSpec:
    """The general description of a mechanism (``spec.general`` for ``kind: general``)."""
    if spec.kind == "general":
        return spec.general
    return {"pendulum": _pendulum, "slider-crank": _slider_crank, "two-body": _two_body}[spec.kind](
        spec
    )
