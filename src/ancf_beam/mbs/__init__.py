"""Planar multibody dynamics: rigid bodies, ANCF beams, joints with Lagrange multipliers.

See DESIGN.md section 7. Bodies (:mod:`.bodies`), joints (:mod:`.joints`) and force elements
(:mod:`.forces`) are assembled by :class:`.system.System`; :mod:`.integrators` advances it in
time, :mod:`.statics` finds equilibria and linearised modes, :mod:`.mechanisms` builds the
configured mechanisms and :mod:`.analysis` runs them for the CLI.
"""

from ancf_beam.mbs.core import contact_gaps, update_force_state
from ancf_beam.mbs.forces import CircleContact

__all__ = [
    "CircleContact",
    "analysis",
    "bodies",
    "contact",
    "contact_gaps",
    "core",
    "forces",
    "integrators",
    "joints",
    "mechanisms",
    "statics",
    "system",
    "update_force_state",
]
