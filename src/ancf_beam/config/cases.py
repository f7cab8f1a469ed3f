"""Beam cases: YAML -> validated, frozen case specifications; the workflow's ``pipeline`` section.

A configuration holds the case sections (``beam``, ``material``, ... ``damage``: the schema's
``case``), ``cases`` (named overrides of them), ``mechanisms``
(:mod:`~ancf_beam.config.mechanisms`) and ``pipeline`` (read only by the workflow). Keys,
ranges and defaults are the schema's; here are the checks that span keys. SI units throughout.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ancf_beam import schema
from ancf_beam.beam.imperfection import MAX_KAPPA0_L, tip_reach
from ancf_beam.errors import ConfigError
from ancf_beam.specs import SECTION_SPECS, CaseSpec, DefectSpec, GradientSpec
from ancf_beam.yamlio import parse_yaml_text, read_yaml

__all__ = [
    "BEAM_CASE_SECTIONS",
    "DEFAULTS",
    "EXPLICIT_INTEGRATOR",
    "IMPLICIT_INTEGRATORS",
    "INTEGRATORS",
    "MAX_ELEMENTS",
    "MAX_SEGMENTS",
    "N_GAUSS_RANGE",
    "PIPELINE_DEFAULTS",
    "RULES",
    "SECTIONS",
    "build_case",
    "case_from_file",
    "load_config",
    "parse_set",
    "pipeline_settings",
    "resolve_case",
    "validate_config",
]

#: The case sections and their defaults (from the schema).
SECTIONS = tuple(schema.node("case")["properties"])
DEFAULTS: dict[str, dict[str, Any]] = {s: schema.defaults(schema.node(s)) for s in SECTIONS}
#: the sections of an ANCF beam inside a mechanism (a beam case of its own)
BEAM_CASE_SECTIONS = ("beam", "material", "defect", "imperfection", "damage", "mesh")
#: Defaults of the workflow's ``pipeline`` section (the library's analyses never read it).
PIPELINE_DEFAULTS: dict[str, dict[str, Any]] = schema.defaults(schema.node("pipeline"))
INTEGRATORS = schema.enum("dynamics", "integrator")
EXPLICIT_INTEGRATOR = INTEGRATORS[0]
IMPLICIT_INTEGRATORS = INTEGRATORS[1:]
#: Every case key's (allowed values in words, predicate), for values given as CLI options.
RULES: dict[str, tuple[str, Any]] = {k: schema.rule(k) for k in schema.case_keys()}
MAX_ELEMENTS = schema.node("mesh_count")["maximum"]
MAX_SEGMENTS = schema.node("stepped")["properties"]["segments"]["maximum"]
_GAUSS = schema.node("mesh")["properties"]["n_gauss_axial"]
N_GAUSS_RANGE = (_GAUSS["minimum"], _GAUSS["maximum"])


def deep_merge(base: dict, over: Mapping, where: str) -> dict:
    """Merge ``over`` into ``base`` in place; a key ``base`` lacks is an unknown key."""
    for k, v in over.items():
        path = f"{where}.{k}" if where else str(k)
        if k not in base:
            raise ConfigError(schema.unknown_key_message(path, base))
        if isinstance(base[k], dict):
            if not isinstance(v, Mapping):
                raise ConfigError(f"config key '{path}' must be a mapping, got {v!r}")
            deep_merge(base[k], v, path)
        else:
            base[k] = v
    return base


def set_dotted(d: dict, key: str, value: Any, create: bool = False) -> None:
    """Set the dotted ``key`` of the nested dict ``d``; every part must exist already, unless
    ``create``: then missing or null blocks are made, a null value removes the key and a value
    may replace a block (the block is validated whole afterwards)."""
    parts = key.split(".")
    node = d
    for i, p in enumerate(parts):
        path = ".".join(parts[: i + 1])
        if not isinstance(node, dict):
            raise ConfigError(
                f"unknown config key '{path}': '{'.'.join(parts[:i])}' is a value "
                f"({node!r}), not a block of keys"
            )
        if i < len(parts) - 1 and create and not isinstance(node.get(p), Mapping):
            node[p] = {} if node.get(p) is None else node[p]
        elif create and isinstance(node.get(p), Mapping):
            node[p] = dict(node[p])
        if p not in node and not create:
            raise ConfigError(schema.unknown_key_message(path, node))
        if i < len(parts) - 1:
            node = node[p]
        elif create and value is None:
            node.pop(p, None)
        elif isinstance(node.get(p), dict) and not create:
            raise ConfigError(f"config key '{path}' is a section; set one of its keys")
        else:
            node[p] = value


def _check_table(key: str, table: Any) -> None:
    """A measured table's rows (checked by the schema) rise strictly from x/L = 0 to 1."""
    if table is None:
        return
    xs = [float(row[0]) for row in table]
    if not (
        xs[0] == 0.0 and xs[-1] == 1.0 and all(b > a for a, b in zip(xs, xs[1:], strict=False))
    ):
        raise schema.invalid(key, table, schema.describe(schema.node("table")))


def validate(resolved: dict[str, Any]) -> dict[str, Any]:
    """Validate a fully merged case in place (numbers coerced); raise :class:`ConfigError`."""
    for section in SECTIONS:
        resolved[section] = schema.check(resolved[section], schema.node(section), section)
    defect = resolved["defect"]
    for key, block in (
        ("defect", defect),
        *((f"defect.{k}", defect[k]) for k in ("rho", "width", "height")),
    ):
        _check_table(f"{key}.table", block["table"])
    return resolved


def validate_config(config: Mapping[str, Any]) -> None:
    """Check a whole configuration against the schema (the workflow does before any job)."""
    check_names(config)
    schema.check(config, schema.SCHEMA)


def default_config_path() -> Path | None:
    """The repository's ``config/config.yaml`` when the package runs from a checkout, else None
    (the schema's defaults then apply)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "config" / "config.yaml"
        if candidate.is_file() and (parent / "src" / "ancf_beam").is_dir():
            return candidate
    return None


def check_names(config: Mapping[str, Any]) -> None:
    """The keys of ``cases`` and ``mechanisms`` are names (strings): a number given as a case
    name would pass the schema and fail later with a bare ``KeyError``."""
    for section in ("cases", "mechanisms"):
        block = config.get(section)
        if block is None:
            continue
        if not isinstance(block, Mapping):
            raise ConfigError(f"config key '{section}' must be a mapping of named blocks")
        for name in block:
            if not isinstance(name, str) or not name:
                raise ConfigError(
                    f"config key '{section}.{name}': the name {name!r} is a "
                    f"{type(name).__name__}; names must be non-empty strings (quote it: "
                    f"'\"{name}\"')"
                )


def _check_top_level(config: Mapping[str, Any]) -> None:
    for k in config:
        if k not in schema.SCHEMA["properties"]:
            raise ConfigError(schema.unknown_key_message(str(k), schema.SCHEMA["properties"]))


def load_config(path: str | Path | None = None) -> dict[str, Any]:
    """Read a configuration YAML file: duplicate keys, malformed YAML, unknown top-level keys
    and non-string case names are errors (values are validated by :func:`resolve_case`)."""
    p = Path(path) if path is not None else default_config_path()
    if p is None:
        return {}
    data = read_yaml(p) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file '{p}' must hold a mapping at the top level")
    _check_top_level(data)
    check_names(data)
    return data


def parse_set(items: Iterable[str]) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` strings (VALUE is YAML, read like the config files: numbers,
    strings, null, lists)."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        key, raw = item.split("=", 1)
        key = key.strip()
        out[key] = parse_yaml_text(raw, f"--set {key}")  # the config files' reading of values
    return out


def resolve_case(
    config: Mapping[str, Any] | None = None,
    case: str | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> CaseSpec:
    """Merge the schema's defaults <- config sections <- case block <- dotted overrides, validate.

    ``case=None`` selects the config's defaults (named ``"default"``).
    """
    config = dict(config or {})
    check_names(config)
    _check_top_level(config)
    merged = copy.deepcopy(DEFAULTS)
    deep_merge(merged, {k: v for k, v in config.items() if k in SECTIONS}, "")
    name = "default"
    if case is not None:
        cases = config.get("cases") or {}
        if case not in cases:
            avail = ", ".join(cases) or "(none defined)"
            raise ConfigError(f"unknown case '{case}' (available cases: {avail})")
        block = cases[case] or {}
        if not isinstance(block, Mapping):
            raise ConfigError(f"case '{case}' must be a mapping of overrides")
        deep_merge(merged, block, f"cases.{case}")
        name = case
    for key, value in (overrides or {}).items():
        set_dotted(merged, key, value)
    return build_case(merged, name)


def _check_case(resolved: Mapping[str, Any]) -> None:
    """The checks of a case that span keys."""
    imp = resolved["imperfection"]
    if imp["tip_offset"] not in (None, 0, 0.0) and imp["kappa0"] != 0:
        raise ConfigError(
            "config keys 'imperfection.kappa0' and 'imperfection.tip_offset' are exclusive: "
            "set one of them (the other to 0 / null)"
        )
    _check_reference_shape(resolved)
    mesh = resolved["mesh"]
    if resolved["modal"]["n_modes"] > 4 * mesh["n_elements"]:
        expected = (
            f"an integer in [1, {4 * mesh['n_elements']}] (4 x mesh.n_elements, the free DOFs)"
        )
        raise schema.invalid("modal.n_modes", resolved["modal"]["n_modes"], expected)
    if resolved["damage"]["enabled"] and mesh["n_gauss_axial"] != mesh["n_gauss_bending"]:
        raise ConfigError(
            "config key 'damage.enabled' = true needs mesh.n_gauss_axial == mesh.n_gauss_bending "
            f"(got {mesh['n_gauss_axial']} and {mesh['n_gauss_bending']}): damage lives at "
            "shared integration points"
        )


def build_case(merged: dict[str, Any], name: str) -> CaseSpec:
    resolved = validate(copy.deepcopy(merged))
    _check_case(resolved)
    d = resolved["defect"]
    defect = DefectSpec(
        E=GradientSpec.from_dict(d),
        rho=GradientSpec.from_dict(d["rho"]),
        width=GradientSpec.from_dict(d["width"]),
        height=GradientSpec.from_dict(d["height"]),
        mapping=d["mapping"],
    )
    return CaseSpec(
        name=name,
        defect=defect,
        **{key: schema.spec(cls, resolved[key]) for key, cls in SECTION_SPECS.items()},
        resolved=resolved,
        rebuild=_with_overrides,
    )


def _with_overrides(case: CaseSpec, overrides: Mapping[str, Any]) -> CaseSpec:
    """``case`` with dotted-key overrides applied and validated."""
    merged = copy.deepcopy(dict(case.resolved))
    for key, value in overrides.items():
        set_dotted(merged, key, value)
    return build_case(merged, case.name)


def beam_case(sections: Mapping[str, Any], name: str, where: str, g: float | None = None):
    """The beam case ``name`` of an ANCF beam in a mechanism (``where``: its dotted key, which
    prefixes its errors): its :data:`BEAM_CASE_SECTIONS` over the schema's defaults, gravity
    ``g`` (the mechanism's) when given."""
    full = copy.deepcopy(DEFAULTS)
    try:
        deep_merge(full, {k: sections[k] for k in BEAM_CASE_SECTIONS}, "")
        if g is not None:
            full["load"]["g"] = g
        return build_case(full, name)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _check_reference_shape(resolved: Mapping[str, Any]) -> None:
    """Plausibility of the initially curved reference: ``|kappa0| L <=`` :data:`MAX_KAPPA0_L`,
    and a ``tip_offset`` that a kappa0 inside that bound reaches."""
    imp, length = resolved["imperfection"], float(resolved["beam"]["length"])
    bound = MAX_KAPPA0_L[imp["profile"]]
    kmax = bound / length
    where = f"beam.length = {length:g} m, imperfection.profile = {imp['profile']}"
    if abs(imp["kappa0"]) > kmax:
        expected = f"|kappa0| <= {kmax:.6g} 1/m (|kappa0| L <= {bound:g} for {where})"
        raise schema.invalid("imperfection.kappa0", imp["kappa0"], expected)
    offset = imp["tip_offset"]
    if offset not in (None, 0, 0.0):
        reach = tip_reach(imp["profile"], length)
        if not abs(offset) < reach:
            tip = f"the tip height at |kappa0| L = {bound:g} for {where}"
            expected = f"|tip_offset| < {reach:.6g} m ({tip})"
            raise schema.invalid("imperfection.tip_offset", offset, expected)


def case_from_file(
    path: str | Path | None = None, case: str | None = None, sets: Iterable[str] = ()
) -> CaseSpec:
    """Convenience for the CLI: file + case name + ``KEY=VALUE`` strings -> CaseSpec."""
    return resolve_case(load_config(path), case, parse_set(sets))


def pipeline_settings(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The workflow's ``pipeline`` section merged over :data:`PIPELINE_DEFAULTS`, validated by
    the schema. Numbers whose default is a float (or a list of floats) come back as floats."""
    merged = copy.deepcopy(PIPELINE_DEFAULTS)
    given = (config or {}).get("pipeline") or {}
    if not isinstance(given, Mapping):
        raise ConfigError(f"config key 'pipeline' must be a mapping, got {given!r}")
    deep_merge(merged, given, "pipeline")
    schema.check(merged, schema.node("pipeline"), "pipeline")
    _float_like_defaults(merged, PIPELINE_DEFAULTS)
    return merged


def _float_like_defaults(merged: dict, defaults: Mapping) -> None:
    for k, d in defaults.items():
        v = merged[k]
        if isinstance(d, Mapping):
            _float_like_defaults(v, d)
        elif isinstance(d, float) and isinstance(v, int | float) and not isinstance(v, bool):
            merged[k] = float(v)
        elif isinstance(d, list) and d and isinstance(d[0], float) and isinstance(v, list):
            merged[k] = [float(x) for x in v]
