"""Configuration reference page, generated from the JSON schema of the configuration at every
docs build (mkdocs-gen-files): every key with its type, allowed range, default and description.

The schema's location is named once, in ``SCHEMA`` below.
"""

from __future__ import annotations

import re
from pathlib import Path

import mkdocs_gen_files
import yaml

ROOT = Path(__file__).resolve().parents[2]
#: the schema (package data of ancf_beam; the library and the Snakefile validate with it)
SCHEMA = ROOT / "src" / "ancf_beam" / "schema" / "config.schema.yaml"
PAGE = "reference/config.md"
#: hand-written part of the page (reading, mechanism kinds), placed after the key tables
NOTES = Path(__file__).resolve().parents[1] / "reference" / "_config_notes.md"

#: what each top-level section is for (the schema describes keys, not the grouping)
SECTION_TEXT = {
    "beam": "Geometry of the cantilever (SI units).",
    "material": "Material at the clamp; the gradient law scales it along the beam.",
    "defect": "The gradient defect `E(x) = E0 (1 - lam (x/L)^n)` or a measured table, the "
    "mapping onto the mesh and optional density, width and height gradients.",
    "mesh": "Discretisation: elements, Gauss points per term, strain measure.",
    "load": "Gravity along -y.",
    "static": "Newton-Raphson equilibrium with adaptive load stepping.",
    "modal": "Natural frequencies about the reference or the static state.",
    "stepped": "The stepped-beam transfer-matrix reference.",
    "dynamics": "Dynamic runs: integrator, step policy, damping, outputs.",
    "imperfection": "Stress-free initial curvature of the reference shape.",
    "damage": "Strain-driven irreversible damage at the integration points.",
}


def resolve(node: dict, defs: dict) -> dict:
    """``node`` with its ``$ref`` (and ``allOf``) merged in; the node's own keys win."""
    if "$ref" in node:  # a local pointer: #/$defs/NAME[/properties/KEY...]
        target: dict = {"$defs": defs}
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        target = resolve(target, defs)
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    for part in node.get("allOf", []):
        node = {**resolve(part, defs), **{k: v for k, v in node.items() if k != "allOf"}}
    return node


def fmt(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | dict):
        return yaml.safe_dump(value, default_flow_style=True, width=1000).strip()
    return str(value)


def describe(node: dict, defs: dict) -> tuple[str, str]:
    """(type, allowed values) of a schema node, in words."""
    node = resolve(node, defs)
    if "const" in node:
        return "string", f"`{node['const']}`"
    if "enum" in node:
        return "string", " \\| ".join(f"`{v}`" for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            alts = [resolve(a, defs) for a in node[key]]
            numeric = any(a.get("type") in ("number", "integer") for a in alts)
            # numbers written as YAML strings (2.07e11) are accepted as numbers: not a type of
            # their own for the reader
            alts = [
                a for a in alts if not (numeric and a.get("type") == "string" and "pattern" in a)
            ]
            parts = [describe(a, defs) for a in alts]
            types = " or ".join(dict.fromkeys(t for t, _ in parts))
            ranges = "; ".join(r for _, r in parts if r)
            return types, ranges
    kind = node.get("type", "")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    lo = (">= ", node["minimum"]) if "minimum" in node else ("> ", node.get("exclusiveMinimum"))
    hi = ("<= ", node["maximum"]) if "maximum" in node else ("< ", node.get("exclusiveMaximum"))
    bounds = [f"{op}{fmt(v)}" for op, v in (lo, hi) if v is not None]
    if "prefixItems" in node:  # a fixed-length row, e.g. [x/L, factor]
        return "pair", ""
    if kind == "array":
        item_type, item_range = (
            describe(node.get("items", {}), defs) if "items" in node else ("", "")
        )
        kind = f"list of {item_type}" if item_type else "list"
        extra = [f"at least {node['minItems']} items"] if "minItems" in node else []
        extra += ["no repeats"] if node.get("uniqueItems") else []
        return kind, "; ".join(filter(None, [item_range, *extra]))
    if kind == "object" and "properties" not in node:
        return "mapping", ""
    if kind == "string" and "pattern" in node:
        return "string", "a name: letters, digits, `_ . + -`"
    return kind, ", ".join(bounds)


def rows(props: dict, defs: dict, prefix: str = ""):
    """Table rows ``(key, type, allowed, unit, default, description)``, nested objects
    flattened."""
    for key, raw in props.items():
        node = resolve(raw, defs)
        path = f"{prefix}{key}"
        if node.get("type") == "object" and "properties" in node:
            yield from rows(node["properties"], defs, f"{path}.")
            continue
        kind, allowed = describe(raw, defs)
        default = f"`{fmt(node['default'])}`" if "default" in node else ""
        text = " ".join(str(node.get("description", "")).split())
        yield path, kind, allowed, node.get("unit", ""), default, text


def table(props: dict, defs: dict) -> str:
    """One section's keys, relative to its heading (`solver.dt` under `mechanisms.NAME`)."""
    out = ["| key | type | allowed | unit | default | description |", "|---|---|---|---|---|---|"]
    for key, kind, allowed, unit, default, text in rows(props, defs):
        cells = [f"`{key}`", kind, allowed, unit, default, re.sub(r"\|", r"\\|", text)]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


#: the definitions of a general mechanism's items, by block, with their titles
GENERAL_ITEMS = {
    "bodies": [("body_rigid", "rigid"), ("body_point_mass", "point-mass"), ("body_beam", "beam")],
    "joints": [
        ("joint_ground_pin", "ground-pin"),
        ("joint_revolute", "revolute"),
        ("joint_clearance", "revolute `clearance`"),
        ("joint_prismatic", "prismatic"),
        ("guide_gap", "prismatic `guide`"),
        ("joint_weld", "weld"),
        ("joint_driver", "driver"),
    ],
    "forces": [
        ("force_gravity", "gravity"),
        ("force_spring", "spring-damper"),
        ("force_torque", "torque"),
        ("force_point", "point-load"),
    ],
    "contacts": [
        ("contact_circles", "circle-circle"),
        ("contact_bearing", "circle-in-bearing"),
        ("contact_point_line", "point-line"),
    ],
}


def general_tables(defs: dict, skip: set) -> list[str]:
    """The general kind's own keys and one table per item type of each of its blocks."""
    node = resolve(defs["general"], defs)
    out = [
        "### `kind: general`\n",
        " ".join(str(node["description"]).split()) + ". A point is written `body.marker` (a rigid "
        "body's or point mass's marker, `cm` built in; a beam's `start`, `mid`, `end`) or, where "
        "a ground point is allowed, `[x, y]`. Each item of `bodies`, `joints`, `forces`, "
        "`contacts` is a named block whose `type` selects its keys (tables below); a beam body "
        "takes the beam-case sections.\n",
    ]
    own = {k: v for k, v in node["properties"].items() if k not in skip | set(GENERAL_ITEMS)}
    out.append(table(own, defs))
    for block, items in GENERAL_ITEMS.items():
        for name, title in items:
            item = resolve(defs[name], defs)
            out.append(f"#### `{block}`: {title}\n")
            keys = {k: v for k, v in item["properties"].items() if k not in skip | {"type"}}
            out.append(table(keys, defs))
    return out


def render(schema: dict) -> str:
    defs = schema["$defs"]
    props = schema["properties"]
    rel = SCHEMA.relative_to(ROOT).as_posix()
    text = [
        "# Configuration reference\n",
        f"Generated from `{rel}` when the site is built: the one home of every key, its type, "
        "range, default and description. The library validates with it (and reads its "
        "defaults), the pipeline checks every configuration against it before any job runs, "
        "and the library adds the checks that span keys (the initial "
        "curvature's reach, the order of a measured table, clearance radii, the slider-crank's "
        "geometry), and names the key, the value and the allowed range of any error "
        "(exit status 2). SI units throughout.\n",
        "A configuration file has the default sections below (each case starts from them), "
        "`cases:` (named blocks overriding any of those keys), `mechanisms:` (planar "
        "mechanism cases) and `pipeline:` (workflow settings the library ignores). Keys of "
        "nested sections are written dotted, as `--set` takes them, relative to the heading of "
        "their table (`lam` under `defect` is `--set defect.lam=0.3`; `solver.dt` under "
        "`mechanisms.NAME` is `ancf-beam mechanism --case NAME --set solver.dt=1e-5`).\n",
    ]
    for name, raw in props.items():
        node = resolve(raw, defs)
        if name in ("cases", "mechanisms", "pipeline"):
            continue
        text.append(f"## `{name}`\n")
        text.append(
            SECTION_TEXT.get(name, " ".join(str(node.get("description", "")).split())) + "\n"
        )
        text.append(table(node["properties"], defs))
    text.append("## `cases`\n")
    text.append(
        "Named cases, each a partial override of the sections above (any subset of their "
        "keys). Case names become file names and Snakemake wildcards: letters, digits and "
        "`_ . + -`. Example:\n\n```yaml\ncases:\n  lam0.6_n1:\n    defect: {lam: 0.6, n: 1.0}\n"
        "  fine_mesh:\n    mesh: {n_elements: 80}\n```\n"
    )
    text.append("## `mechanisms.NAME`\n")
    text.append(
        " ".join(str(resolve(props["mechanisms"], defs).get("description", "")).split())
        + ". Every block needs `kind`; its other keys and their defaults depend on the kind "
        "(one table per kind below). A beam inside a mechanism (the pendulum, an ANCF "
        "connecting rod) takes the beam-case sections `beam`, `material`, `defect`, `mesh`, "
        "`imperfection`, `damage` with the keys of the tables above.\n"
    )
    text.append("### All kinds: `solver` and `baumgarte`\n")
    common = {"solver": {"$ref": "#/$defs/mech_solver"}, "baumgarte": {"$ref": "#/$defs/baumgarte"}}
    text.append(table(common, defs))
    beam_sections = {"beam", "material", "defect", "mesh", "imperfection", "damage", "kind"}
    beam_sections |= set(common)
    for kind, name in (
        ("pendulum", "pendulum"),
        ("slider-crank", "slider_crank"),
        ("two-body", "two_body"),
    ):
        node = resolve(defs[name], defs)
        text.append(f"### `kind: {kind}`\n")
        text.append(" ".join(str(node.get("description", "")).split()) + ".\n")
        own = {k: v for k, v in node["properties"].items() if k not in beam_sections}
        text.append(table(own, defs))
    for name, title in (
        ("rod_rigid", "`rod` with `model: rigid` (slider-crank)"),
        ("clearance", "`clearance` (slider-crank)"),
        ("contact_compliant", "`contact` blocks (two-body, clearance, guide, contacts)"),
        ("contact_nonsmooth", "`contact` blocks with `model: nonsmooth`"),
        ("friction_law", "`friction` blocks (clearance)"),
    ):
        node = resolve(defs[name], defs)
        text.append(f"### {title}\n")
        if node.get("description"):
            text.append(" ".join(str(node["description"]).split()) + ".\n")
        text.append(table({k: v for k, v in node["properties"].items() if k != "model"}, defs))
    text.extend(general_tables(defs, beam_sections))
    text.append("## `pipeline`\n")
    text.append(
        "Workflow settings, read by the Snakefile's rules only. Every report's acceptance "
        "thresholds are `pipeline.<report>.tolerances`; what each bounds is written next to "
        "it (see [Validation strategy](../validation.md)).\n"
    )
    for study, raw in resolve(props["pipeline"], defs)["properties"].items():
        node = resolve(raw, defs)
        text.append(f"### `pipeline.{study}`\n")
        if node.get("description"):
            text.append(" ".join(str(node["description"]).split()) + "\n")
        text.append(table(node.get("properties", {study: raw}), defs))
    text.append(NOTES.read_text())
    return "\n".join(text)


with mkdocs_gen_files.open(PAGE, "w") as page:
    page.write(render(yaml.safe_load(SCHEMA.read_text())))
