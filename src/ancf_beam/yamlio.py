"""The strict reader of configuration files: YAML -> Python data, with bounded size and depth.

PyYAML's C parser (libyaml) when available, only the safe tags, numbers such as ``1e-9`` read
as floats, a key given twice in one mapping refused with its line, merge keys allowed, and the
file size, the alias expansion and the nesting depth bounded before any object is built. Every
failure is a :class:`~ancf_beam.errors.ConfigError` naming the file and the line.
"""

from __future__ import annotations

import gc
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from ancf_beam.errors import ConfigError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "MAX_CONFIG_NODES",
    "StrictLoader",
    "parse_yaml_text",
    "read_yaml",
]

#: Bounds of a configuration file (:func:`read_yaml`). The file size bounds the parse, whose
#: node graph costs about 0.5 kB per value while it is built (the 70,000-case configuration of
#: benchmarks/bench_config_load.py: 9.3 MB, 1.26 million values, 0.59 GB allocated at the peak
#: of its parse, 0.1 GB once built; a file of nothing but one-character values: about 4 GB at the
#: bound). The expanded size (values of the document once every alias is expanded: what
#: validation, hashing and Snakemake's schema check walk) and the nesting depth are counted on
#: the composed node graph, with memoisation, before any Python object is built, so an alias
#: bomb ("billion laughs") is refused in milliseconds instead of exhausting the memory later.
#: The node bound is three times the 70,000-case file.
MAX_CONFIG_BYTES = 16 * 2**20
MAX_CONFIG_NODES = 4_000_000
#: Deepest nesting accepted (the deepest key of a valid configuration,
#: mechanisms.NAME.rod.defect.rho.table[i][j], sits at depth 8; the object construction recurses
#: about three Python frames per level).
MAX_CONFIG_DEPTH = 64

#: libyaml (the C parser) when PyYAML was built with it, else the pure-Python one: same results.
_YAML_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
#: Numbers the YAML 1.1 resolver of PyYAML leaves as strings: an exponent without a dot or
#: without a sign (``1e-9``, ``2.07e11``, ``1E5``). YAML 1.2 reads them as floats, and so does
#: this loader (integers and dotted floats keep PyYAML's resolvers, which are tried first).
_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")


class StrictLoader(_YAML_BASE):
    """Safe YAML loader of configuration files: PyYAML's C parser (libyaml) when available,
    only the safe tags, numbers such as ``1e-9`` read as floats, a key given twice in one
    mapping refused with its line (plain YAML keeps the last one silently, so a repeated case
    block would replace the first without a word), and merge keys (``<<: *base``) allowed with
    explicit keys overriding the merged ones. Use it through :func:`read_yaml` or
    :func:`parse_yaml_text`, which also bound the size of the document."""

    def __init__(self, stream, name: str = "YAML text"):
        super().__init__(stream)
        self.source_name = name
        self._resolved: dict[tuple[str, bool, bool], str] = {}

    def resolve(self, kind, value, implicit):
        """PyYAML's tag resolution, memoised for plain scalars (a large configuration repeats
        the same keys and values; the regex scan per scalar dominated its load time)."""
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)
        key = (value, *implicit)
        tag = self._resolved.get(key)
        if tag is None:
            tag = self._resolved[key] = super().resolve(kind, value, implicit)
        return tag


StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+0123456789.")
)


def _construct_unique_mapping(loader: StrictLoader, node: yaml.MappingNode, deep=False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:  # merged keys may be overridden by explicit ones
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor reports it
            continue
        if first is not None:
            raise ConfigError(
                f"{loader.source_name}: duplicate key {key!r} at line {line} "
                f"(first given at line {first}); each key may appear once per block"
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if node.__class__ is yaml.MappingNode:
        return [n for pair in node.value for n in pair]
    return node.value  # a sequence


def _check_expansion(root: yaml.Node, name: str) -> None:
    """Refuse a composed document whose expansion (every alias replaced by its target) has more
    than :data:`MAX_CONFIG_NODES` nodes or nests deeper than :data:`MAX_CONFIG_DEPTH`, or that
    holds a recursive alias. Each node is counted once (memoised by identity): linear in the
    size of the file, whatever the expansion."""
    scalar = yaml.ScalarNode
    if root.__class__ is scalar:
        return
    size: dict[int, int] = {}  # expanded size and height of every collection node counted
    height: dict[int, int] = {}
    open_: set[int] = set()  # collections whose subtree is being counted: a path from the root
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            total, tallest = 1, 0
            for kid in _children(node):
                if kid.__class__ is scalar:
                    total += 1
                    tallest = tallest or 1
                else:
                    total += size[id(kid)]
                    tallest = max(tallest, height[id(kid)])
            size[nid], height[nid] = total, tallest + 1
            open_.discard(nid)
            line = node.start_mark.line + 1
            if total > MAX_CONFIG_NODES:
                raise ConfigError(
                    f"{name}: the block at line {line} expands (with its aliases) to more than "
                    f"{MAX_CONFIG_NODES:,} values (at most {MAX_CONFIG_NODES:,} per file, "
                    "ancf_beam.config.MAX_CONFIG_NODES)"
                )
            if tallest + 1 > MAX_CONFIG_DEPTH:
                raise ConfigError(
                    f"{name}: the block at line {line} nests deeper than {MAX_CONFIG_DEPTH} "
                    "levels (ancf_beam.config.MAX_CONFIG_DEPTH)"
                )
            continue
        if nid in size:
            continue
        if nid in open_:
            raise ConfigError(
                f"{name}: the alias at line {node.start_mark.line + 1} refers to a block that "
                "contains it (a recursive alias)"
            )
        open_.add(nid)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if k.__class__ is not scalar)


def _yaml_error(name: str, exc: yaml.YAMLError, text: str) -> ConfigError:
    """A YAML error as one line naming the file, line and column (the parser's own marks name
    the text it was given, not the file)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    what = "; ".join(p for p in parts if p) or str(exc)
    if mark is not None and text[mark.index : mark.index + 1] == "\t":
        what += " (a tab: YAML indents with spaces)"
    return ConfigError(f"{name} is not valid YAML{where}: {what}")


def parse_yaml_text(text: str, name: str = "YAML text") -> Any:
    """Parse YAML text with :class:`StrictLoader`: a syntax error, an unsafe tag (``!!python``),
    a duplicate key, an alias bomb or a too deep nesting raise :class:`ConfigError` whose
    message starts with ``name`` (e.g. ``config file 'x.yaml'``) and gives the line."""
    loader = StrictLoader(text, name)
    # The parse allocates millions of objects at once and frees none: the cyclic garbage
    # collector, run every 700 allocations over an ever larger heap, took half of the time of a
    # 70,000-case file (19 s of CPU with it, 8.5 s without; benchmarks/bench_config_load.py).
    collecting = gc.isenabled()
    gc.disable()
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, name)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise _yaml_error(name, exc, text) from None
    finally:
        loader.dispose()
        if collecting:
            gc.enable()


def _not_a_regular_file(p: Path) -> str | None:
    """Why ``p`` cannot be a configuration file (None: it is a regular file)."""
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    kinds = {
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISSOCK: "a socket",
        stat.S_ISCHR: "a device",
        stat.S_ISBLK: "a device",
    }
    kind = next((k for test, k in kinds.items() if test(mode)), "a special file")
    return f"is {kind}, not a regular file"


def read_yaml(path: str | Path) -> Any:
    """Parse a configuration file: a regular file of at most :data:`MAX_CONFIG_BYTES` bytes,
    UTF-8 text, read with :class:`StrictLoader` (:func:`parse_yaml_text`). Anything else raises
    :class:`ConfigError` naming the file (and the line)."""
    p = Path(path)
    why = _not_a_regular_file(p)
    if why is not None:
        raise ConfigError(f"config file '{p}' {why}")
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"config file '{p}' cannot be read: {exc.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"config file '{p}' is larger than {MAX_CONFIG_BYTES // 2**20} MiB "
            "(ancf_beam.config.MAX_CONFIG_BYTES)"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"config file '{p}' is not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line}, "
            f"column {column} ({exc.reason}); save it as UTF-8"
        ) from None
    return parse_yaml_text(text, f"config file '{p}'")
