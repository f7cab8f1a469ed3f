"""Mechanism cases (planar multibody, :mod:`ancf_beam.mbs`): the ``mechanisms:`` section.

``kind`` selects the schema definition of a block (``pendulum``, ``slider_crank``, ``two_body``,
``general``: :mod:`~ancf_beam.config.general`). An ANCF beam inside a mechanism is a beam case
over the schema's defaults (not the top-level cantilever), its gravity the mechanism's ``g``.
Here are the checks that span keys: rod longer than crank, the clearance's journal, the
integrator against the contacts.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ancf_beam import schema
from ancf_beam.config.cases import (
    BEAM_CASE_SECTIONS,
    beam_case,
    deep_merge,
    load_config,
    parse_set,
    set_dotted,
)
from ancf_beam.config.contact import contact_law, contact_spec
from ancf_beam.config.general import general_block, general_spec
from ancf_beam.errors import ConfigError
from ancf_beam.mbs.laws import ContactLaw, FrictionLaw, admissible_overlap
from ancf_beam.specs import (
    BaumgarteSpec,
    ClearanceSpec,
    MechanismSolverSpec,
    MechanismSpec,
    RigidLinkSpec,
    RigidPartSpec,
)

__all__ = [
    "BEAM_CASE_SECTIONS",
    "IVP_METHODS",
    "MECHANISM_INTEGRATORS",
    "MECHANISM_KINDS",
    "check_contact_integrator",
    "mechanism_from_file",
    "mechanism_names",
    "resolve_mechanism",
]

MECHANISM_KINDS = schema.enum("mechanism", "kind")
#: the schema definition of each kind
KIND_NODES = {kind: kind.replace("-", "_") for kind in MECHANISM_KINDS}
MECHANISM_INTEGRATORS = schema.enum("mech_integrator")
IVP_METHODS = schema.enum("mech_solver", "method")
ROD_MODELS = schema.enum("slider_crank", "rod.model")
#: the integrators that record contact episodes, which a clearance joint's outputs are made of
CLEARANCE_INTEGRATORS = ("generalized-alpha", "newmark", "adaptive")
#: the one integrator of nonsmooth contacts (``model: nonsmooth``), which takes no compliant one
NONSMOOTH_INTEGRATOR = "moreau-jean"


def mechanism_names(config: Mapping[str, Any]) -> list[str]:
    return list(config.get("mechanisms") or {})


def _clearance_spec(name: str, block: dict[str, Any]) -> ClearanceSpec:
    """A slider-crank's ``clearance:`` block (checked by the schema) -> :class:`ClearanceSpec`;
    the journal is one of the bodies of its joint."""
    b = {**schema.defaults(schema.node("clearance")), **block}
    laws = contact_spec(
        f"mechanisms.{name}.clearance", b, (b["bearing_radius"], b["journal_radius"]), ""
    )
    block["continuous_factor"] = laws.continuous_factor
    allowed = ("crank", "rod") if b["joint"] == "crank_pin" else ("rod", "slider")
    if b["journal"] is not None and b["journal"] not in allowed:
        desc = f"null or one of {', '.join(allowed)} (the bodies of the {b['joint']})"
        raise schema.invalid(f"mechanisms.{name}.clearance.journal", b["journal"], desc)
    return ClearanceSpec(
        b["joint"],
        float(b["bearing_radius"]),
        float(b["journal_radius"]),
        *(None if b[k] is None else float(b[k]) for k in ("E", "nu")),
        laws.law,
        laws.friction if laws.nonsmooth or laws.friction else FrictionLaw(),
        laws.continuous_factor,
        b["journal"],
    )


def _kind_defaults(name: str, kind: Any, block: Mapping[str, Any], overrides: dict) -> dict:
    """The defaults of the mechanism's kind (a slider-crank's rod those of its model)."""
    if kind not in MECHANISM_KINDS:
        desc = schema.describe(schema.properties(schema.node("mechanism"))["kind"])
        raise schema.invalid(f"mechanisms.{name}.kind", kind, desc)
    merged = {"kind": kind, **schema.defaults(schema.node(KIND_NODES[kind]))}
    if kind == "slider-crank":
        rod_block = block.get("rod") or {}
        if not isinstance(rod_block, Mapping):
            raise ConfigError(f"config key 'mechanisms.{name}.rod' must be a mapping")
        model = overrides.get("rod.model", rod_block.get("model", "rigid"))
        if model not in ROD_MODELS:
            raise schema.invalid(
                f"mechanisms.{name}.rod.model", model, f"one of {', '.join(ROD_MODELS)}"
            )
        merged["rod"] = {"model": model, **schema.defaults(schema.node(f"rod_{model}"))}
    return merged


def _merged_block(name: str, config: Mapping[str, Any] | None, overrides: dict) -> dict:
    """Kind defaults <- the block <- dotted overrides (relative to the block). A two-body's
    contact block replaces the default one whole (its keys depend on the law); overrides of a
    two-body's ``contact.KEY`` or a slider-crank's ``clearance.KEY`` may add keys, and null
    removes one (its default applies): these blocks are validated whole afterwards."""
    mechs = (config or {}).get("mechanisms") or {}
    if not isinstance(mechs, Mapping):
        raise ConfigError("config key 'mechanisms' must be a mapping of named mechanisms")
    if name not in mechs:
        avail = ", ".join(mechs) or "(none defined)"
        raise ConfigError(f"unknown mechanism '{name}' (available mechanisms: {avail})")
    block = mechs[name] or {}
    if not isinstance(block, Mapping):
        raise ConfigError(f"mechanism '{name}' must be a mapping")
    kind = overrides.get("kind", block.get("kind"))
    if kind == "general":
        return general_block(name, block, {k: v for k, v in overrides.items() if k != "kind"})
    merged = _kind_defaults(name, kind, block, overrides)
    free = {"two-body": "contact.", "slider-crank": "clearance."}.get(kind)
    if kind == "two-body":
        contact = block.get("contact", merged["contact"])
        merged["contact"] = dict(contact) if isinstance(contact, Mapping) else contact
        block = {k: v for k, v in block.items() if k != "contact"}
    deep_merge(merged, block, f"mechanisms.{name}")
    if isinstance(merged.get("clearance"), Mapping):  # a copy: overrides must not edit the config
        merged["clearance"] = copy.deepcopy(dict(merged["clearance"]))
    for key, value in overrides.items():
        try:
            set_dotted(merged, key, value, create=free is not None and key.startswith(free))
        except ConfigError as exc:
            raise ConfigError(f"mechanism '{name}': {exc}") from exc
    return merged


def _check_block(name: str, merged: dict[str, Any]) -> None:
    """The schema's check of the mechanism-level keys (coerced in place); the beam sections
    are beam cases, checked by build_case with their own messages."""
    beam_owner = merged if merged["kind"] == "pendulum" else merged.get("rod") or {}
    shallow = {k: v for k, v in merged.items()}
    if beam_owner is merged:
        shallow = {k: v for k, v in merged.items() if k not in BEAM_CASE_SECTIONS}
    elif merged["kind"] == "slider-crank":
        shallow["rod"] = {k: v for k, v in beam_owner.items() if k not in BEAM_CASE_SECTIONS}
    checked = schema.check(shallow, schema.node(KIND_NODES[merged["kind"]]), f"mechanisms.{name}")
    for key, value in checked.items():
        if key == "rod":
            merged["rod"].update(value)
        else:
            merged[key] = value


def resolve_mechanism(
    config: Mapping[str, Any] | None,
    name: str,
    overrides: Mapping[str, Any] | None = None,
) -> MechanismSpec:
    """Mechanism ``name`` of ``config['mechanisms']``: kind defaults <- block <- dotted
    overrides (relative to the block, e.g. ``rod.mesh.n_elements``), validated."""
    merged = _merged_block(name, config, dict(overrides or {}))
    kind = merged["kind"]
    if kind != "general":
        _check_block(name, merged)
    common = {
        "rebuild": _with_overrides,
        "name": name,
        "kind": kind,
        "t_end": float(merged["t_end"]),
        "integrator": merged["integrator"],
        "sample_dt": float(merged["sample_dt"]),
        "g": float(merged.get("g", 0.0)),
        "baumgarte": schema.spec(BaumgarteSpec, merged["baumgarte"]),
        "solver": schema.spec(MechanismSolverSpec, merged["solver"]),
    }
    _check_dwell(name, merged["solver"])
    if kind == "pendulum":
        beam = beam_case(merged, name, f"mechanisms.{name}", common["g"])
        resolved = {k: merged[k] for k in merged if k not in BEAM_CASE_SECTIONS}
        resolved.update({k: beam.resolved[k] for k in BEAM_CASE_SECTIONS})
        return MechanismSpec(**common, beam=beam, resolved=resolved)
    if kind == "two-body":
        return _two_body_spec(name, merged, common)
    if merged["integrator"] == NONSMOOTH_INTEGRATOR and merged["solver"]["dt"] is None:
        raise ConfigError(
            f"config key 'mechanisms.{name}.solver.dt' = None is invalid with config key "
            f"'mechanisms.{name}.integrator' = {NONSMOOTH_INTEGRATOR!r}: expected a number "
            "> 0 (s) (the moreau-jean time stepping takes a fixed step)"
        )
    if kind == "general":
        gen = general_spec(name, merged)
        models = {law.key: law.law.model for law in gen.laws.values()}
        check_contact_integrator(name, merged["integrator"], models)
        return MechanismSpec(**{**common, "g": gen.g}, general=gen, resolved=merged)
    return _slider_crank_spec(name, merged, common)


def _with_overrides(mech: MechanismSpec, overrides: Mapping[str, Any]) -> MechanismSpec:
    """``mech`` with dotted-key overrides (relative to its block) applied and validated."""
    return resolve_mechanism({"mechanisms": {mech.name: dict(mech.resolved)}}, mech.name, overrides)


def _check_dwell(name: str, solver: Mapping[str, Any]) -> None:
    """``solver.dwell_dt`` needs ``dwell_after`` and the fixed step rule with step control."""
    if solver.get("dwell_dt") is None:
        return
    key = f"config key 'mechanisms.{name}.solver"
    if solver.get("dwell_after") is None:
        raise ConfigError(
            f"{key}.dwell_after' = None is invalid with {key}.dwell_dt' = {solver['dwell_dt']!r}: "
            "expected a number > 0 (s), the age at which a contact counts as sustained"
        )
    if not solver.get("step_control") or solver.get("step_rule", "fixed") != "fixed":
        raise ConfigError(
            f"{key}.dwell_dt' = {solver['dwell_dt']!r} needs {key}.step_control' = true and "
            f"{key}.step_rule' = 'fixed' (got {solver.get('step_control')!r}, "
            f"{solver.get('step_rule')!r}): the error rules choose their own contact steps"
        )


def _slider_crank_spec(name: str, merged: dict, common: dict) -> MechanismSpec:
    crank = RigidLinkSpec(**{k: float(v) for k, v in merged["crank"].items()})
    rod = merged["rod"]
    beam = rigid = None
    if rod["model"] == "ancf":
        beam = beam_case(rod, f"{name}.rod", f"mechanisms.{name}.rod", common["g"])
        chord, rod_key = beam.beam.length, "rod.beam.length"
        merged["rod"] = {"model": "ancf", **{k: beam.resolved[k] for k in BEAM_CASE_SECTIONS}}
    else:
        rigid = RigidLinkSpec(**{k: float(v) for k, v in rod.items() if k != "model"})
        chord, rod_key = rigid.length, "rod.length"
    if not chord > crank.length:
        desc = f"a rod longer than the crank (crank.length = {crank.length} m)"
        raise schema.invalid(f"mechanisms.{name}.{rod_key}", chord, desc)
    clearance = None
    if merged["clearance"] is not None:
        clearance = _clearance_spec(name, merged["clearance"])
        models = {"clearance.contact": clearance.contact.model}
        check_contact_integrator(name, merged["integrator"], models)
    return MechanismSpec(
        **common,
        beam=beam,
        crank=crank,
        rod=rigid,
        slider=RigidPartSpec(**{k: float(v) for k, v in merged["slider"].items()}),
        omega=float(merged["drive"]["omega"]),
        clearance=clearance,
        resolved=merged,
    )


def check_contact_integrator(
    name: str,
    integrator: str,
    models: Mapping[str, str],
    override: bool = False,
    episodes: bool = True,
) -> None:
    """The integrator of mechanism ``name`` against its contacts (``models``: dotted key of
    each contact block -> compliant or nonsmooth): a nonsmooth contact needs moreau-jean, which
    takes no compliant one; a compliant contact whose outputs are its contact episodes
    (``episodes``; not the two-body impact) needs an integrator that records them.
    ``override``: the integrator was given for one run (CLI ``--integrator``)."""
    where = f"mechanisms.{name}"
    what = f"config key '{where}.integrator'"
    if override:
        what = f"the integrator of this run of mechanism '{name}'"
    for key, model in models.items():
        if model == "nonsmooth" and integrator != NONSMOOTH_INTEGRATOR:
            raise ConfigError(
                f"{what} = {integrator!r} is invalid with config key '{where}.{key}.model' = "
                f"'nonsmooth': expected {NONSMOOTH_INTEGRATOR!r} (a nonsmooth contact is a "
                "unilateral constraint, only the moreau-jean time stepping takes it), or a "
                "compliant contact law"
            )
        if model != "nonsmooth" and integrator == NONSMOOTH_INTEGRATOR:
            others = tuple(i for i in MECHANISM_INTEGRATORS if i != NONSMOOTH_INTEGRATOR)
            compliant = CLEARANCE_INTEGRATORS if episodes else others
            raise ConfigError(
                f"{what} = {integrator!r} is invalid with config key '{where}.{key}.model' = "
                f"{model!r}: expected one of {', '.join(compliant)} for a compliant "
                f"contact, or model: nonsmooth for {NONSMOOTH_INTEGRATOR!r} (it takes no "
                "compliant contact)"
            )
    if episodes and models and integrator not in (NONSMOOTH_INTEGRATOR, *CLEARANCE_INTEGRATORS):
        raise ConfigError(
            f"{what} = {integrator!r} is invalid: expected one of "
            f"{', '.join(CLEARANCE_INTEGRATORS)} (the contacts at {', '.join(models)} are "
            "reported by their contact episodes, which only these integrators record)"
        )


def _two_body_spec(name: str, merged: dict[str, Any], common: dict[str, Any]) -> MechanismSpec:
    b = merged["bodies"]
    masses = (float(b["m1"]), float(b["m2"]))
    m_eff = masses[0] * masses[1] / (masses[0] + masses[1])
    law = contact_law(merged["contact"], f"mechanisms.{name}.contact", m_eff=m_eff)
    check_contact_integrator(name, merged["integrator"], {"contact": law.model}, episodes=False)
    radii = (float(b["radius1"]), float(b["radius2"]))
    if isinstance(law, ContactLaw):
        _check_overlap(name, law, masses, radii, float(merged["v_rel"]))
    return MechanismSpec(
        **common,
        masses=masses,
        radii=radii,
        v_rel=float(merged["v_rel"]),
        gap=float(merged["gap"]),
        contact=law,
        resolved=merged,
    )


#: bisection halvings of the largest admissible approach speed (each halves the bracket)
_SPEED_HALVINGS = 60


def _check_overlap(
    name: str, law: ContactLaw, masses: tuple[float, float], radii: tuple[float, float], v: float
) -> None:
    """Refuse a two-body impact whose largest penetration (closed form,
    :meth:`ContactLaw.max_penetration`: the bodies meet at ``v_rel``, nothing else acts along
    the line of centres) exceeds what the discs' contact geometry describes
    (:func:`~ancf_beam.mbs.laws.admissible_overlap`); the message gives the largest
    admissible ``v_rel`` (the penetration grows with the speed: bisection)."""
    m_eff = masses[0] * masses[1] / (masses[0] + masses[1])
    depth = law.max_penetration(m_eff, v)
    limit = admissible_overlap(*radii)
    if depth <= limit:
        return
    lo, hi = 0.0, v
    for _ in range(_SPEED_HALVINGS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if law.max_penetration(m_eff, mid) <= limit else (lo, mid)
    where = f"mechanisms.{name}"
    if law.law == "kelvin-voigt":
        params = f"k = {law.stiffness:g} N/m, c = {law.damping:g} N s/m"
    else:
        params = f"K = {law.stiffness:g} N/m^n, exponent = {law.exponent:g}"
        if law.restitution is not None:
            params += f", restitution = {law.restitution:g}"
    raise ConfigError(
        f"config key '{where}.v_rel' = {v!r} is invalid with '{where}.bodies.m1' = {masses[0]!r}"
        f", '{where}.bodies.m2' = {masses[1]!r} (effective mass {m_eff:.6g} kg) and "
        f"'{where}.contact' law {law.law!r} ({params}): the impact would overlap the discs by "
        f"{depth:.6g} m (closed-form largest penetration), deeper than the {limit:.6g} m their "
        f"contact geometry describes (half of '{where}.bodies.radius1' + 'radius2' = "
        f"{radii[0]!r} + {radii[1]!r} m; deeper, the centres meet and the bodies pass through "
        f"each other); expected v_rel <= {lo:.6g} m/s, or a stiffer contact, heavier damping, "
        "lighter bodies or larger radii"
    )


def mechanism_from_file(
    path: str | Path | None, name: str, sets: Iterable[str] = ()
) -> MechanismSpec:
    """Convenience for the CLI: file + mechanism name + ``KEY=VALUE`` strings."""
    return resolve_mechanism(load_config(path), name, parse_set(sets))
