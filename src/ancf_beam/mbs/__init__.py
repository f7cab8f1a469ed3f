"""Planar multibody dynamics: rigid bodies, ANCF beams, joints with Lagrange multipliers.

See docs/design.md section 7. Bodies (:mod:`.bodies`), joints (:mod:`.joints`) and force
elements (:mod:`.forces`, contact laws in :mod:`.contact`) are assembled by
:class:`.system.System`; :func:`.integrators.integrate` advances it in time with
:class:`.settings.IntegratorSettings` (the integrators: :mod:`.explicit`, :mod:`.index3`,
:mod:`.adaptive`, with contact step control :mod:`.stepping`; their shared loop pieces
:mod:`.timeloop`), :mod:`.statics` finds equilibria and linearised modes,
:mod:`.mechanisms` builds the configured mechanisms, :mod:`.analysis` runs them for the CLI
and :mod:`.outputs` reports any mechanism's markers, bodies, drives, joints and contacts::

    from ancf_beam.mbs import IntegratorSettings, PointMass, Revolute, System, ground, integrate

The names of :data:`__all__` are imported on first use (PEP 562), like the package's front door.
"""

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (about 10 ms)

#: public name -> module that defines it (imported on first access)
_EXPORTS: dict[str, str] = {
    # assembly and time integration
    "System": "ancf_beam.mbs.system",
    "IntegratorSettings": "ancf_beam.mbs.settings",
    "integrate": "ancf_beam.mbs.integrators",
    "initial_state": "ancf_beam.mbs.integrators",
    "explicit_dt_bounds": "ancf_beam.mbs.settings",
    # bodies and points
    "Body": "ancf_beam.mbs.bodies",
    "RigidBody": "ancf_beam.mbs.bodies",
    "PointMass": "ancf_beam.mbs.bodies",
    "BeamBody": "ancf_beam.mbs.bodies",
    "Point": "ancf_beam.mbs.bodies",
    "ground": "ancf_beam.mbs.bodies",
    # joints (constraints)
    "Joint": "ancf_beam.mbs.joints",
    "Revolute": "ancf_beam.mbs.joints",
    "Prismatic": "ancf_beam.mbs.joints",
    "Weld": "ancf_beam.mbs.joints",
    "Driver": "ancf_beam.mbs.joints",
    # force elements and contact laws
    "ForceElement": "ancf_beam.mbs.forces",
    "PointForce": "ancf_beam.mbs.forces",
    "Torque": "ancf_beam.mbs.forces",
    "SpringDamper": "ancf_beam.mbs.forces",
    "CircleContact": "ancf_beam.mbs.forces",
    "Contact": "ancf_beam.mbs.forces",
    "LineContact": "ancf_beam.mbs.forces",
    "ContactLaw": "ancf_beam.mbs.contact",
    "FrictionLaw": "ancf_beam.mbs.contact",
    # statics, configured mechanisms
    "solve_static": "ancf_beam.mbs.statics",
    "constrained_modes": "ancf_beam.mbs.statics",
    "Mechanism": "ancf_beam.mbs.mechanisms",
    "build_mechanism": "ancf_beam.mbs.mechanisms",
    "run_mechanism": "ancf_beam.mbs.analysis",
    # contact state helpers of the integrators
    "contact_gaps": "ancf_beam.mbs.core",
    "update_force_state": "ancf_beam.mbs.core",
}

#: submodules, imported on first attribute access (``ancf_beam.mbs.core`` ...)
_SUBMODULES = (
    "adaptive",
    "analysis",
    "bodies",
    "contact",
    "core",
    "events",
    "explicit",
    "forces",
    "index3",
    "integrators",
    "joints",
    "mechanisms",
    "outputs",
    "settings",
    "statics",
    "stepping",
    "system",
    "timeloop",
)

__all__ = [
    "BeamBody",
    "Body",
    "CircleContact",
    "Contact",
    "ContactLaw",
    "Driver",
    "ForceElement",
    "FrictionLaw",
    "IntegratorSettings",
    "Joint",
    "LineContact",
    "Mechanism",
    "Point",
    "PointForce",
    "PointMass",
    "Prismatic",
    "Revolute",
    "RigidBody",
    "SpringDamper",
    "System",
    "Torque",
    "Weld",
    "build_mechanism",
    "constrained_modes",
    "contact_gaps",
    "explicit_dt_bounds",
    "ground",
    "initial_state",
    "integrate",
    "run_mechanism",
    "solve_static",
    "update_force_state",
]

if TYPE_CHECKING:  # the same names for type checkers and documentation tools
    from typing import Any

    from ancf_beam.mbs.analysis import run_mechanism
    from ancf_beam.mbs.bodies import BeamBody, Body, Point, PointMass, RigidBody, ground
    from ancf_beam.mbs.contact import ContactLaw, FrictionLaw
    from ancf_beam.mbs.core import contact_gaps, update_force_state
    from ancf_beam.mbs.forces import (
        CircleContact,
        Contact,
        ForceElement,
        LineContact,
        PointForce,
        SpringDamper,
        Torque,
    )
    from ancf_beam.mbs.integrators import initial_state, integrate
    from ancf_beam.mbs.joints import Driver, Joint, Prismatic, Revolute, Weld
    from ancf_beam.mbs.mechanisms import Mechanism, build_mechanism
    from ancf_beam.mbs.settings import IntegratorSettings, explicit_dt_bounds
    from ancf_beam.mbs.statics import constrained_modes, solve_static
    from ancf_beam.mbs.system import System


def __getattr__(name: str) -> "Any":
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBMODULES})
