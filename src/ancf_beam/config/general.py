"""General mechanisms (``kind: general``): named bodies, joints, forces and contacts.

Each item gets the schema's defaults of its ``type``; the block is validated by the schema.
Here are the checks that span items: points ``"body.marker"`` name a body and its marker, a
clearance's journal is a body of its joint, drivers and torques act on rigid bodies, beams are
beam cases, at most one gravity. Assembly is checked when built (:mod:`ancf_beam.mbs.general`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ancf_beam import schema
from ancf_beam.config.cases import BEAM_CASE_SECTIONS, beam_case, deep_merge, set_dotted
from ancf_beam.config.contact import contact_spec
from ancf_beam.errors import ConfigError
from ancf_beam.mbs.laws import ContactSpec
from ancf_beam.specs import GeneralSpec

__all__ = ["general_block", "general_spec"]

#: the blocks of named items and the schema definition of one item
GROUPS = {
    "bodies": "gen_body",
    "joints": "gen_joint",
    "forces": "gen_force",
    "contacts": "gen_contact",
}
#: built-in markers of each body type
BUILTIN_MARKERS = {"rigid": ("cm",), "point-mass": ("cm",), "beam": ("start", "mid", "end")}


def _item(group: str, value: Any) -> Any:
    """One item with the defaults of its ``type`` merged in (beam sections key by key, other
    blocks replaced whole); left as given when it is not a mapping with a known type."""
    if not isinstance(value, Mapping):
        return value
    n = schema.node(GROUPS[group])
    if value.get("type") not in schema.resolve(n)["properties"]["type"]["enum"]:
        return dict(value)
    out = schema.defaults(n, value)
    for key, sub in value.items():
        if (
            key in BEAM_CASE_SECTIONS
            and isinstance(sub, Mapping)
            and isinstance(out.get(key), dict)
        ):
            out[key] = {**out[key], **copy.deepcopy(dict(sub))}
        elif key in ("clearance", "guide") and isinstance(sub, Mapping):
            where = "joint_clearance" if key == "clearance" else "guide_gap"
            out[key] = {**schema.defaults(schema.node(where)), **copy.deepcopy(dict(sub))}
        else:
            out[key] = copy.deepcopy(sub)
    return out


def general_block(name: str, block: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict:
    """Defaults <- the block (each item over the defaults of its type) <- dotted overrides
    relative to the block (``bodies.beam1.mesh.n_elements``); validated by the schema."""
    where = f"mechanisms.{name}"
    merged = {"kind": "general", **schema.defaults(schema.node("general"))}
    deep_merge(merged, {k: v for k, v in block.items() if k not in GROUPS}, where)
    for group in GROUPS:
        items = block.get(group, {}) if block.get(group) is not None else {}
        if not isinstance(items, Mapping):
            raise ConfigError(f"config key '{where}.{group}' must be a mapping of named items")
        merged[group] = {k: _item(group, v) for k, v in items.items()}
    for key, value in overrides.items():
        try:
            set_dotted(merged, key, value)
        except ConfigError as exc:
            raise ConfigError(f"mechanism '{name}': {exc}") from exc
    return schema.check(merged, schema.node("general"), where)


def markers_of(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The marker names of a (validated) body: the built-in ones and its own."""
    return BUILTIN_MARKERS[body["type"]] + tuple(body.get("markers", {}))


class _Refs:
    """Checks the references between items (points, bodies, journals)."""

    def __init__(self, where: str, bodies: Mapping[str, Mapping[str, Any]]):
        self.where, self.bodies = where, bodies

    def point(self, key: str, value: Any, ground: bool = True) -> None:
        if isinstance(value, list):
            if not ground:
                raise schema.invalid(f"{self.where}.{key}", value, 'a point "body.marker"')
            return
        body, marker = value.split(".")
        if body not in self.bodies:
            raise schema.invalid(
                f"{self.where}.{key}",
                value,
                f'a point "body.marker" of the bodies ({", ".join(self.bodies)})',
            )
        allowed = markers_of(self.bodies[body])
        if marker not in allowed:
            raise schema.invalid(
                f"{self.where}.{key}", value, f"a marker of '{body}' ({', '.join(allowed)})"
            )

    def body(self, key: str, value: str, types: tuple[str, ...] = ("rigid",)) -> None:
        ok = [b for b, v in self.bodies.items() if v["type"] in types]
        if value not in ok:
            raise schema.invalid(
                f"{self.where}.{key}",
                value,
                f"one of the {'/'.join(types)} bodies ({', '.join(ok) or 'none'})",
            )


def _check_joints(refs: _Refs, joints: Mapping[str, Any], laws: dict) -> None:
    for jn, j in joints.items():
        key = f"joints.{jn}"
        for i, p in enumerate(j.get("points", [])):
            refs.point(f"{key}.points.{i}", p, ground=i > 0)
        if "point" in j:
            refs.point(f"{key}.point", j["point"], ground=False)
        if isinstance(j.get("through"), str):
            refs.point(f"{key}.through", j["through"])
            refs.body(f"{key}.through", j["through"].split(".")[0])
        if j["type"] == "driver":
            refs.body(f"{key}.body", j["body"])
            _check_table(f"{refs.where}.{key}", j)
        cl = j.get("clearance")
        if cl is not None:
            two = [p.split(".")[0] if isinstance(p, str) else "ground" for p in j["points"]]
            if cl["journal"] not in two:
                raise schema.invalid(
                    f"{refs.where}.{key}.clearance.journal",
                    cl["journal"],
                    f"one of {', '.join(two)}",
                )
            laws[jn] = contact_spec(
                f"{refs.where}.{key}.clearance",
                cl,
                (cl["bearing_radius"], cl["journal_radius"]),
                f"{key}.clearance",
            )
        if j.get("guide") is not None:
            refs.body(f"{key}.point", j["point"].split(".")[0])
            laws[jn] = contact_spec(f"{refs.where}.{key}.guide", j["guide"], None, f"{key}.guide")


def _check_table(where: str, j: Mapping[str, Any]) -> None:
    if j["profile"] != "table":
        return
    tab = j.get("table")
    if tab is None:
        raise schema.invalid(f"{where}.table", None, "{t: [...], theta: [...]} (profile: table)")
    t = tab["t"]
    if len(t) != len(tab["theta"]) or any(b <= a for a, b in zip(t, t[1:], strict=False)):
        raise schema.invalid(f"{where}.table.t", t, "times rising strictly, as many as theta")


def _check_forces(refs: _Refs, forces: Mapping[str, Any]) -> float:
    g = [f for f in forces.values() if f["type"] == "gravity"]
    if len(g) > 1:
        names = [n for n, f in forces.items() if f["type"] == "gravity"]
        raise schema.invalid(
            f"{refs.where}.forces.{names[1]}", "gravity", "at most one gravity force"
        )
    for fn, f in forces.items():
        for i, p in enumerate(f.get("points", [])):
            refs.point(f"forces.{fn}.points.{i}", p, ground=i > 0)
        if "point" in f:
            refs.point(f"forces.{fn}.point", f["point"], ground=False)
        if f["type"] == "torque":
            refs.body(f"forces.{fn}.body", f["body"])
    return float(g[0]["g"]) if g else 0.0


def _check_contacts(refs: _Refs, contacts: Mapping[str, Any], laws: dict) -> None:
    for cn, c in contacts.items():
        key = f"contacts.{cn}"
        for i, p in enumerate(c.get("points", [])):
            refs.point(f"{key}.points.{i}", p, ground=i > 0 and c["type"] == "circle-circle")
        for k in ("bearing", "journal", "through"):
            if k in c:
                refs.point(f"{key}.{k}", c[k], ground=k != "journal")
        if isinstance(c.get("through"), str):
            refs.body(f"{key}.through", c["through"].split(".")[0])
        radii = (
            (c["bearing_radius"], c["journal_radius"]) if c["type"] == "circle-in-bearing" else None
        )
        laws[cn] = contact_spec(f"{refs.where}.{key}", c, radii, key)


def general_spec(name: str, merged: Mapping[str, Any]) -> GeneralSpec:
    """The checks that span items (module docstring) and the beams' cases."""
    where = f"mechanisms.{name}"
    bodies = merged["bodies"]
    refs = _Refs(where, bodies)
    beams = {}
    for bn, b in bodies.items():
        if b["type"] != "beam":
            continue
        if b["attach"] is not None:
            refs.point(f"bodies.{bn}.attach", b["attach"], ground=False)
            refs.body(f"bodies.{bn}.attach", b["attach"].split(".")[0])
        beams[bn] = beam_case(b, f"{name}.{bn}", f"{where}.bodies.{bn}")
    laws: dict[str, ContactSpec] = {}
    _check_joints(refs, merged["joints"], laws)
    g = _check_forces(refs, merged["forces"])
    _check_contacts(refs, merged["contacts"], laws)
    for bn, case in beams.items():
        merged["bodies"][bn].update({k: case.resolved[k] for k in BEAM_CASE_SECTIONS})
    return GeneralSpec(
        bodies=merged["bodies"],
        joints=merged["joints"],
        forces=merged["forces"],
        contacts=merged["contacts"],
        beams=beams,
        laws=laws,
        g=g,
    )
