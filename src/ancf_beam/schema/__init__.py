"""The configuration schema (``config.schema.yaml`` beside this module, package data) as the
library uses it: defaults read from it, values validated with :mod:`jsonschema`, the allowed
values of a key written out in words for error messages and the CLI, and frozen dataclasses
whose fields are a definition's keys. Nothing here knows what a key means: the configuration
is parsed by :mod:`ancf_beam.config`.

The schema is the one home of every key, type, range, default and description. Besides the
standard keywords the library reads the annotation ``unit`` (SI unit of a number).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import typing
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

from ancf_beam.errors import ConfigError
from ancf_beam.yamlio import parse_yaml_text

__all__ = [
    "DEFS",
    "SCHEMA",
    "SCHEMA_PATH",
    "check",
    "defaults",
    "describe",
    "enum",
    "invalid",
    "node",
    "rule",
    "unknown_key_message",
]

SCHEMA_PATH = files("ancf_beam") / "schema" / "config.schema.yaml"
SCHEMA: dict[str, Any] = parse_yaml_text(SCHEMA_PATH.read_text(), "the configuration schema")
DEFS: dict[str, Any] = SCHEMA["$defs"]


def _finite_number(_checker, value: Any) -> bool:
    """JSON's numbers: no booleans, no NaN or infinity (YAML's .nan and .inf)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("number", _finite_number),
)


def node(name: str) -> dict[str, Any]:
    """The definition ``name`` of the schema (``"beam"``, ``"mech_solver"``, ...)."""
    return DEFS[name]


def target(ref: str) -> dict[str, Any]:
    """The node a local ``$ref`` (``#/$defs/clearance/properties/E``) points to."""
    n: Any = SCHEMA
    for part in ref.removeprefix("#/").split("/"):
        n = n[part]
    return n


def resolve(n: Mapping[str, Any]) -> dict[str, Any]:
    """``n`` with its ``$ref`` merged in (recursively); the node's own keys win."""
    n = dict(n)
    while "$ref" in n:
        n = {**target(n.pop("$ref")), **n}
    return n


def _branches(n: dict[str, Any], value: Any) -> list[dict[str, Any]]:
    """The node and the ``if``/``then``/``else`` branches of it (and of its ``allOf``) that apply
    to ``value``; the conditions used here test ``const`` values of properties."""
    out = [n]
    for part in [n, *n.get("allOf", [])]:
        if "if" not in part:
            continue
        cond = part["if"]
        hit = isinstance(value, Mapping) and all(
            value.get(k, resolve(n.get("properties", {}).get(k, {})).get("default")) == c["const"]
            for k, c in cond.get("properties", {}).items()
        )
        branch = part.get("then" if hit else "else")
        if branch is not None:
            out += _branches(resolve(branch), value)
    return out


def properties(n: Mapping[str, Any], value: Any = None) -> dict[str, Any]:
    """The property nodes of an object node, those of the branches that apply included."""
    props: dict[str, Any] = {}
    for part in _branches(resolve(n), value):
        props.update(part.get("properties", {}))
    return props


def defaults(n: Mapping[str, Any], value: Any = None) -> Any:
    """The defaults of a node: its ``default``, or for an object the dict of its properties'
    defaults (properties without one are left out). None when it has none."""
    n = resolve(n)
    if "default" in n:
        return copy.deepcopy(n["default"])
    if n.get("type") != "object":
        return None
    out = {}
    for key, sub in properties(n, value).items():
        d = defaults(sub)
        if d is not None or "default" in resolve(sub):
            out[key] = d
    return out


def enum(name: str, key: str | None = None) -> tuple[str, ...]:
    """The allowed values of an ``enum`` node (a definition, or its dotted property ``key``)."""
    n = resolve(DEFS[name])
    for k in key.split(".") if key else ():
        n = resolve(n["properties"][k])
    return tuple(n["enum"])


def _num(x: float) -> str:
    return f"{x:g}"


def _range(n: dict[str, Any], what: str) -> str:
    lo_open, hi_open = "exclusiveMinimum" in n, "exclusiveMaximum" in n
    lo = n["exclusiveMinimum"] if lo_open else n.get("minimum")
    hi = n["exclusiveMaximum"] if hi_open else n.get("maximum")
    if lo is not None and hi is not None:
        return f"{what} in {'(' if lo_open else '['}{_num(lo)}, {_num(hi)}{')' if hi_open else ']'}"
    if lo is not None:
        return f"{what} {'>' if lo_open else '>='} {_num(lo)}"
    if hi is not None:
        return f"{what} {'<' if hi_open else '<='} {_num(hi)}"
    return what


def describe(n: Mapping[str, Any]) -> str:
    """The values a node allows, in words (``a number in [0, 1) (m)``)."""
    n = resolve(n)
    unit = f" ({n['unit']})" if "unit" in n else ""
    alts = n.get("oneOf", n.get("anyOf"))
    if alts is not None:
        if any(resolve(a).get("type") == "array" for a in alts) and "description" in n:
            return " ".join(n["description"].split())
        return " or ".join(describe(a) for a in alts) + unit
    if "not" in n:  # a key that does not apply here: its description says why
        return " ".join(n["description"].split())
    if "const" in n:
        return repr(n["const"])
    if "enum" in n:
        return "one of " + ", ".join(map(str, n["enum"]))
    kind = n.get("type")
    if kind == "null":
        return "null"
    if kind == "boolean":
        return "true or false"
    if kind == "integer":
        return _range(n, "an integer") + unit
    if kind == "number":
        return _range(n, "a number") + unit
    if kind == "object" or "properties" in n:
        keys = ", ".join(properties(n))
        return f"a mapping {{{keys}}}" if keys else "a mapping"
    if kind == "array":
        return "a list"
    return str(kind or "a value")


def invalid(key: str, value: Any, expected: str) -> ConfigError:
    """The error of the value ``value`` of the dotted key ``key``, which allows ``expected``."""
    return ConfigError(f"config key '{key}' = {value!r} is invalid: expected {expected}")


def unknown_key_message(path: str, allowed) -> str:
    """The message of an unknown key ``path`` whose block allows the keys ``allowed``."""
    allowed = sorted(map(str, allowed))
    if not allowed:
        return f"unknown config key '{path}' (this block takes no keys)"
    return f"unknown config key '{path}' (allowed here: {', '.join(allowed)})"


def coerce(value: Any, n: Mapping[str, Any]) -> Any:
    """``value`` with numbers written as strings (``'2.07e11'``) read as numbers and integral
    floats given for integers made integers, where the schema node expects them."""
    n = resolve(n)
    if isinstance(value, dict):
        props = properties(n, value)
        for key, sub in value.items():
            target = props.get(key, n.get("additionalProperties"))
            if isinstance(target, Mapping):
                value[key] = coerce(sub, target)
        return value
    alts = [resolve(a) for a in n.get("oneOf", n.get("anyOf", []))] or [n]
    if isinstance(value, list):
        items = next((a["items"] for a in alts if "items" in a), None)
        return [coerce(v, items) for v in value] if isinstance(items, Mapping) else value
    kinds = set()
    for a in alts:
        kinds |= set(a["type"]) if isinstance(a.get("type"), list) else {a.get("type")}
    if isinstance(value, str) and kinds & {"number", "integer"}:
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, float) and "integer" in kinds and value.is_integer():
        return int(value)
    return value


def _walk(root: dict[str, Any], schema_path):
    """``(previous step, step, node)`` along an error's schema path from ``root``, through
    ``$ref``s."""
    n: Any = root
    prev = None
    for step in schema_path:
        if isinstance(n, dict) and "$ref" in n and step not in n:
            n = resolve(n)
        n = target(n["$ref"]) if step == "$ref" else n[step]
        yield prev, step, n
        prev = step


def _key_node(root: dict[str, Any], schema_path) -> dict[str, Any]:
    """The schema node of the key an error is about: the last node on the error's schema path
    reached as a property (or an item)."""
    key_node = root
    for prev, step, n in _walk(root, schema_path):
        into = prev in ("properties", "additionalProperties", "items")
        if isinstance(n, dict) and (into or step == "additionalProperties"):
            key_node = n
    return key_node


def _missing_node(root: dict[str, Any], schema_path, key: str) -> dict[str, Any]:
    """The schema node of the required property ``key``: the property of the last node on the
    error's schema path that has it (a ``required`` in a branch names a key of its object)."""
    nodes = [root, *(n for _, _, n in _walk(root, schema_path))]
    props = [resolve(n).get("properties", {}) for n in nodes if isinstance(n, dict)]
    return resolve(next((p[key] for p in reversed(props) if key in p), {}))


def check(value: Any, n: Mapping[str, Any], where: str = "") -> Any:
    """Validate ``value`` against the schema node ``n`` (numbers coerced first, in place);
    raise :class:`ConfigError` naming the dotted key (``where`` + the path inside ``value``),
    the value and the allowed values. Returns the coerced value."""
    value = coerce(value, n)
    root = {**resolve(n), "$defs": DEFS}
    err = best_match(_Validator(root).iter_errors(value))
    if err is None:
        return value
    path = ".".join([where] * bool(where) + [str(p) for p in err.absolute_path])
    key_node = _key_node(root, err.absolute_schema_path)
    if err.validator == "additionalProperties":
        extra = [k for k in err.instance if k not in properties(err.schema, err.instance)]
        allowed = properties(err.schema, err.instance)
        raise ConfigError(unknown_key_message(f"{path}.{extra[0]}" if path else extra[0], allowed))
    if err.validator == "required":
        missing = [k for k in err.validator_value if k not in err.instance][0]
        sub = _missing_node(root, err.absolute_schema_path, missing)
        key = f"{path}.{missing}" if path else missing
        raise ConfigError(f"config key '{key}' is missing: expected {describe(sub)}")
    raise invalid(path, err.instance, describe(key_node))


@cache
def _case_nodes() -> dict[str, dict[str, Any]]:
    out = {}
    for section in SCHEMA["properties"]:
        if section in ("cases", "mechanisms", "pipeline"):
            continue
        stack = [(section, resolve(SCHEMA["properties"][section]))]
        while stack:
            path, n = stack.pop()
            if n.get("type") == "object" and "properties" in n:
                stack += [(f"{path}.{k}", resolve(v)) for k, v in n["properties"].items()]
            else:
                out[path] = n
    return out


def rule(key: str) -> tuple[str, Any]:
    """``(allowed values in words, predicate)`` of the case key ``key`` (dotted), for values
    given outside a configuration file (CLI options that override a key)."""
    n = _case_nodes()[key]
    validator = _Validator({**n, "$defs": DEFS})
    return describe(n), lambda v: validator.is_valid(coerce(v, n))


def case_keys() -> tuple[str, ...]:
    """Every dotted key of a beam case."""
    return tuple(_case_nodes())


_PY_TYPES = {"number": float, "integer": int, "boolean": bool, "string": str}


def _py_type(n: Mapping[str, Any]) -> Any:
    n = resolve(n)
    if "enum" in n or "const" in n:
        return str
    alts = [resolve(a) for a in n.get("oneOf", n.get("anyOf", []))]
    if alts:
        types = [_py_type(a) for a in alts if a.get("type") != "null"]
        typ = types[0] if types else Any
        return typ | None if len(types) < len(alts) else typ
    return _PY_TYPES.get(n.get("type"), Any)


def spec_class(name: str, definition: str, module: str, doc: str, namespace=None, defaults=False):
    """A frozen dataclass whose fields are the scalar keys of the schema's ``definition`` (in
    order, typed from the schema; with the schema's defaults when ``defaults``): a key added to
    the schema is a field of its spec."""
    fields, lines = [], []
    for key, sub in properties(node(definition)).items():
        n = resolve(sub)
        if n.get("type") == "object" or "const" in n:
            continue
        typ = _py_type(n)
        fields.append(
            (key, typ, dataclasses.field(default=n.get("default"))) if defaults else (key, typ)
        )
        unit = f" ({n['unit']})" if "unit" in n else ""
        lines.append(f"* ``{key}``{unit}: {' '.join(str(n.get('description', '')).split())}")
    cls = dataclasses.make_dataclass(name, fields, frozen=True, namespace=namespace)
    cls.__module__ = module
    cls.__doc__ = f"{doc}\n\nFields (the schema's ``{definition}``):\n\n" + "\n".join(lines)
    return cls


def spec(cls: type, values: Mapping[str, Any]) -> Any:
    """An instance of a :func:`spec_class` from validated ``values``: numbers as floats,
    integers as ints."""
    out = {}
    for f in dataclasses.fields(cls):
        v = values[f.name]
        base = typing.get_args(f.type)[0] if typing.get_args(f.type) else f.type
        out[f.name] = v if v is None or base not in (float, int) else base(v)
    return cls(**out)
