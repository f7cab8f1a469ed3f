"""The resolved specifications: frozen dataclasses that the library's analyses take.

:mod:`ancf_beam.config` makes them from YAML (the schema's defaults, the file, case blocks and
overrides, validated); the beam, solvers, multibody layer and studies read them, never the
configuration. The scalar sections are generated from the schema
(:func:`ancf_beam.schema.spec_class`): a key added to the schema is a field of its spec. Each
resolved spec keeps its parameters as ``resolved`` (their hash is the run's provenance) and
the configuration's function that applies dotted overrides to it
(:meth:`ResolvedSpec.with_overrides`). SI units throughout.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ancf_beam import schema
from ancf_beam.mbs.laws import ContactLaw, ContactSpec, FrictionLaw, NonsmoothLaw

__all__ = [
    "CaseSpec",
    "ClearanceSpec",
    "DefectSpec",
    "GeneralSpec",
    "GradientSpec",
    "ImperfectionSpec",
    "MechanismSolverSpec",
    "MechanismSpec",
    "ResolvedSpec",
    "config_hash",
    "flatten",
]


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested dict as a flat ``{dotted.key: value}`` dict."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def config_hash(resolved: Mapping[str, Any]) -> str:
    """SHA-256 (first 16 hex digits) of the canonical JSON of a resolved configuration."""
    text = json.dumps(resolved, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ResolvedSpec:
    """A resolved spec's provenance: its ``resolved`` parameters, their hash, their flat form;
    ``rebuild`` (given by the configuration that resolved it) applies dotted overrides."""

    resolved: Mapping[str, Any]
    rebuild: Callable[[Any, Mapping[str, Any]], Any] | None

    @property
    def config_hash(self) -> str:
        return config_hash(self.resolved)

    def flat(self) -> dict[str, Any]:
        """Resolved parameters as a flat ``{dotted.key: value}`` dict."""
        return flatten(self.resolved)

    def with_overrides(self, overrides: Mapping[str, Any]):
        """A copy with dotted-key overrides (a mechanism's relative to its block) applied and
        validated by the configuration."""
        return self.rebuild(self, overrides)


@dataclass(frozen=True)
class GradientSpec:
    """Parameters of one gradient law: power law ``lam``, ``n`` and the optional measured
    ``table`` ``((x/L, factor), ...)``. The law itself is
    :func:`ancf_beam.beam.defects.gradient_factor`."""

    lam: float
    n: float
    table: tuple[tuple[float, float], ...] | None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GradientSpec:
        table = d.get("table")
        if table is not None:
            table = tuple((float(a), float(b)) for a, b in table)
        return cls(float(d["lam"]), float(d["n"]), table)


def _section(name: str, doc: str, definition: str = "", defaults: bool = False, **ns: Any):
    definition = definition or name.removesuffix("Spec").lower()
    return schema.spec_class(name, definition, __name__, doc, ns, defaults)


BeamSpec = _section("BeamSpec", "Geometry of the beam (m).")
MaterialSpec = _section("MaterialSpec", "Material at the clamp.")
MeshSpec = _section("MeshSpec", "Discretisation.")
LoadSpec = _section("LoadSpec", "Gravity, along -y.")
StaticSpec = _section("StaticSpec", "Static solver controls.")
ModalSpec = _section("ModalSpec", "Modal analysis.")
SteppedSpec = _section("SteppedSpec", "The stepped-beam reference.")
DynamicsSpec = _section("DynamicsSpec", "Dynamic runs.")
DamageSpec = _section("DamageSpec", "Strain-driven irreversible damage (ancf_beam.beam.damage).")
ImperfectionSpec = _section(
    "ImperfectionSpec",
    "Stress-free initially curved reference: curvature ``kappa0 * p(x)`` (1/m), ``p = 1``\n"
    "(uniform) or ``p = 1 - x/L`` (linear); ``tip_offset`` (m), when given, sets ``kappa0``.",
    active=property(
        lambda self: self.kappa0 != 0.0 or bool(self.tip_offset),
        doc="True when the reference is curved.",
    ),
)
#: the scalar sections of a case: section name -> spec class
SECTION_SPECS = {
    cls.__name__.removesuffix("Spec").lower(): cls
    for cls in (BeamSpec, MaterialSpec, MeshSpec, LoadSpec, StaticSpec, ModalSpec, SteppedSpec)
    + (DynamicsSpec, ImperfectionSpec, DamageSpec)
}
RigidLinkSpec = _section(
    "RigidLinkSpec", "A rigid link, its centre of mass at mid-length.", "rod_rigid"
)
BaumgarteSpec = _section("BaumgarteSpec", "Baumgarte stabilisation.", "baumgarte", True)
MechanismSolverSpec = _section(
    "MechanismSolverSpec",
    "Integrator controls of a mechanism; ``MechanismSolverSpec()`` holds the defaults.",
    "mech_solver",
    True,
)


@dataclass(frozen=True)
class DefectSpec:
    E: GradientSpec
    rho: GradientSpec
    width: GradientSpec
    height: GradientSpec
    mapping: str  # gauss | nodal | element


@dataclass(frozen=True)
class CaseSpec(ResolvedSpec):
    """One fully resolved case: everything the library needs, plus its provenance."""

    name: str
    beam: BeamSpec
    material: MaterialSpec
    defect: DefectSpec
    mesh: MeshSpec
    load: LoadSpec
    static: StaticSpec
    modal: ModalSpec
    stepped: SteppedSpec
    dynamics: DynamicsSpec
    imperfection: ImperfectionSpec
    damage: DamageSpec
    resolved: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)
    rebuild: Any = field(repr=False, compare=False, default=None)


@dataclass(frozen=True)
class RigidPartSpec:
    mass: float  # kg
    inertia: float  # kg m^2


@dataclass(frozen=True)
class ClearanceSpec:
    """A revolute clearance joint (the schema's ``clearance``), its laws parsed."""

    joint: str
    bearing_radius: float
    journal_radius: float
    E: float | None
    nu: float | None
    contact: ContactLaw | NonsmoothLaw
    friction: FrictionLaw | None
    continuous_factor: float
    journal: str | None = None  # the body with the journal; None: crank or slider

    @property
    def radial_clearance(self) -> float:
        """``c = R_b - R_j`` (m)."""
        return self.bearing_radius - self.journal_radius


@dataclass(frozen=True)
class GeneralSpec:
    """A resolved general mechanism: the validated items (defaults merged) in the order given,
    the beams' cases, the contact laws (by contact, clearance or guide name) and gravity."""

    bodies: Mapping[str, Mapping[str, Any]]
    joints: Mapping[str, Mapping[str, Any]]
    forces: Mapping[str, Mapping[str, Any]]
    contacts: Mapping[str, Mapping[str, Any]]
    beams: Mapping[str, CaseSpec] = field(default_factory=dict)
    laws: Mapping[str, ContactSpec] = field(default_factory=dict)
    g: float = 0.0
    #: per contact (by name): the reduced mass (kg) and impact speed (m/s) that set its
    #: frequency estimate, where a preset knows them; otherwise estimated from the bodies
    m_eff: Mapping[str, float] = field(default_factory=dict)
    v_impact: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class MechanismSpec(ResolvedSpec):
    """One resolved mechanism case. ``beam`` is the pendulum's beam case or the slider-crank's
    ANCF rod (None for a rigid rod, then ``rod`` holds it)."""

    name: str
    kind: str
    t_end: float
    integrator: str
    sample_dt: float
    g: float
    baumgarte: BaumgarteSpec
    solver: MechanismSolverSpec
    beam: CaseSpec | None = None
    crank: RigidLinkSpec | None = None
    rod: RigidLinkSpec | None = None
    slider: RigidPartSpec | None = None
    omega: float | None = None
    clearance: ClearanceSpec | None = None
    masses: tuple[float, float] | None = None  # two-body: m1, m2 (kg)
    radii: tuple[float, float] | None = None  # two-body: contact radii (m)
    v_rel: float | None = None  # two-body: approach speed (m/s)
    gap: float | None = None  # two-body: initial gap (m)
    contact: ContactLaw | NonsmoothLaw | None = None  # two-body
    general: GeneralSpec | None = None  # general: bodies, joints, forces, contacts
    resolved: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)
    rebuild: Any = field(repr=False, compare=False, default=None)

    @property
    def m_eff(self) -> float | None:
        """Effective mass ``m1 m2 / (m1 + m2)`` (kg) of the two-body impact."""
        if self.masses is None:
            return None
        m1, m2 = self.masses
        return m1 * m2 / (m1 + m2)

    @property
    def rod_model(self) -> str | None:
        if self.kind != "slider-crank":
            return None
        return "ancf" if self.beam is not None else "rigid"


def contact_models(spec: MechanismSpec) -> dict[str, str]:
    """The dotted key of each contact block of ``spec`` (relative to the mechanism) -> its model
    (compliant or nonsmooth). Kept with the specs: the workflow's DAG, which pairs nonsmooth
    cases with their compliant counterparts, then needs no import of the multibody layer."""
    if spec.general is not None:
        return {law.key: law.law.model for law in spec.general.laws.values()}
    if spec.clearance is not None:
        return {"clearance.contact": spec.clearance.contact.model}
    if spec.contact is not None:
        return {"contact": spec.contact.model}
    return {}
