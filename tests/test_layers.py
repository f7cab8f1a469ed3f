"""The package's layering: no import circle among its modules, no private name across modules.

The check is static (``ast``; nothing is imported or executed), so it sees every import the
code can run, including imports inside functions that a test run never reaches.

The rules, as the checker applies them:

* A node is a module of ``src/ancf_beam`` (a package is the node of its ``__init__.py``).
* An edge ``A -> B`` is any ``import`` / ``from ... import`` in ``A`` that runs ``B``: at module
  level or inside a function, absolute or relative. ``from P import x`` goes to the submodule
  ``P.x`` when that is a module, else to ``P`` itself; when ``P``'s ``__init__`` is a lazy front
  door (a ``_EXPORTS`` table of name -> module, read on first attribute access, PEP 562) the
  edge goes also to the module that defines ``x``, because that is what the access imports.
  An attribute chain through an imported module that names a submodule (``core.x`` where
  ``core`` is a package) is an edge to that submodule as well.
* Not edges: the implicit import of a module's parent packages (``import P.m`` runs
  ``P/__init__`` first; counting it would make every package that re-exports a submodule's
  names a circle with that submodule), the lazy table itself (it imports nothing until a user
  touches a name; the user gets the edge), and imports under ``if TYPE_CHECKING:`` (never run).
  So a package importing its own submodules to re-export them is no circle; it becomes one
  only when a submodule imports the package's re-exported name back (``from P import name``
  inside ``P.m`` is an edge ``P.m -> P``, and ``P -> P.m`` closes it).
* A private name is one with a leading underscore that is not a dunder (``_x``, not
  ``__version__``). It crosses modules when ``A`` does ``from B import _x`` or reads ``B._x``
  through a name bound to module ``B`` (``import ancf_beam.mbs.core as core; core._x``), for
  any other module ``B`` of the package, typing-only imports included. Importing a submodule
  is importing a module, not a name, and is not checked here.

And a size rule: no function or method of the package is longer than ``MAX_FUNCTION_LINES``
lines, counted as ``ast`` spans it (``end_lineno - lineno + 1``: the ``def`` line to the last
line of the body, docstring included, decorators not); a nested function counts on its own
and inside its parent.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "ancf_beam"
#: the longest function the package may have (lines, decorators excluded)
MAX_FUNCTION_LINES = 80


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


@dataclass
class Layers:
    """The import graph of a package and the private names that cross its modules."""

    src: Path
    modules: dict[str, Path]
    packages: set[str]
    edges: dict[str, dict[str, str]] = field(default_factory=dict)  # A -> {B: "file:line"}
    crossings: list[str] = field(default_factory=list)  # "file:line A uses B._x"

    def cycles(self) -> list[list[str]]:
        """One concrete circle per strongly connected component of more than one module."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        components: list[list[str]] = []

        def connect(v: str) -> None:  # Tarjan; depth is bounded by the module count
            index[v] = low[v] = len(index)
            stack.append(v)
            on_stack.add(v)
            for w in sorted(self.edges.get(v, {})):
                if w not in index:
                    connect(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1 or v in self.edges.get(v, {}):
                    components.append(sorted(component))

        for v in sorted(self.modules):
            if v not in index:
                connect(v)
        return [self._circle(c) for c in sorted(components)]

    def _circle(self, component: list[str]) -> list[str]:
        """A shortest path from the component's first module back to itself (breadth first)."""
        members = set(component)
        start = component[0]
        parent: dict[str, str] = {}
        frontier = [start]
        while frontier:  # each module enters the frontier at most once
            nxt = []
            for v in frontier:
                for w in sorted(self.edges.get(v, {})):
                    if w not in members:
                        continue
                    if w == start:
                        path = [v]
                        while path[-1] != start:
                            path.append(parent[path[-1]])
                        return [start, *reversed(path[:-1]), start]
                    if w not in parent:
                        parent[w] = v
                        nxt.append(w)
            frontier = nxt
        raise AssertionError(f"no circle in component {component}")  # pragma: no cover

    def describe(self, circle: list[str]) -> str:
        steps = [circle[0]]
        for a, b in zip(circle, circle[1:], strict=False):
            steps.append(f" -> {b} ({self.edges[a][b]})")
        return "".join(steps)


def analyse(src: Path, package: str) -> Layers:
    """Build the import graph of ``src/<package>`` from the source text alone."""
    root = src / package
    modules: dict[str, Path] = {}
    packages: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            packages.add(".".join(parts))
        modules[".".join(parts)] = path
    layers = Layers(src, modules, packages)
    trees = {m: ast.parse(p.read_text(encoding="utf-8"), str(p)) for m, p in modules.items()}
    lazy = {m: _lazy_exports(trees[m]) for m in packages}
    for module, tree in trees.items():
        _Visitor(layers, module, lazy).visit(tree)
    return layers


def _lazy_exports(tree: ast.Module) -> dict[str, str]:
    """A package ``__init__``'s top-level ``_EXPORTS = {"name": "module", ...}`` table."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets):
            value = node.value
            if isinstance(value, ast.Dict):
                return {
                    k.value: v.value
                    for k, v in zip(value.keys, value.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                }
    return {}


class _Visitor(ast.NodeVisitor):
    def __init__(self, layers: Layers, module: str, lazy: dict[str, dict[str, str]]):
        self.layers = layers
        self.module = module
        self.lazy = lazy
        self.path = layers.modules[module].relative_to(layers.src).as_posix()
        self.typing_only = 0
        self.bound: dict[str, str] = {}  # local name -> module it names (any scope)
        layers.edges.setdefault(module, {})

    # --- helpers -------------------------------------------------------------------------
    def _site(self, node: ast.AST) -> str:
        return f"{self.path}:{node.lineno}"

    def _edge(self, target: str, node: ast.AST) -> None:
        if target in self.layers.modules and target != self.module and not self.typing_only:
            self.layers.edges[self.module].setdefault(target, self._site(node))

    def _cross(self, target: str, name: str, node: ast.AST) -> None:
        if target != self.module and _is_private(name):
            self.layers.crossings.append(f"{self._site(node)} {self.module} uses {target}.{name}")

    def _base(self, node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        parts = self.module.split(".")
        if self.module not in self.layers.packages:
            parts.pop()  # a plain module's package
        if node.level > 1:
            parts = parts[: len(parts) - (node.level - 1)]
        return ".".join(parts + ([node.module] if node.module else []))

    # --- visitors ------------------------------------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self.typing_only += 1
            for child in node.body:
                self.visit(child)
            self.typing_only -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] != PACKAGE and alias.name not in self.layers.modules:
                continue
            self._edge(alias.name, node)
            if alias.asname:
                self.bound[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.bound[top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._base(node)
        if base not in self.layers.modules:
            return  # outside the package
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            if sub in self.layers.modules:  # a submodule: a module, not a name
                self._edge(sub, node)
                self.bound[alias.asname or alias.name] = sub
                continue
            self._edge(base, node)
            defined_in = self.lazy.get(base, {}).get(alias.name)
            if defined_in:
                self._edge(defined_in, node)
            self._cross(base, alias.name, node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain: list[str] = []
        value: ast.expr = node
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in self.bound:
            current = self.bound[value.id]
            for name in reversed(chain):
                deeper = f"{current}.{name}"
                if deeper in self.layers.modules:
                    self._edge(deeper, node)
                    current = deeper
                    continue
                self._cross(current, name, node)
                break
            return  # the whole chain is handled; do not visit its inner attributes again
        self.generic_visit(node)


# --- the package ---------------------------------------------------------------------------


def _package() -> Layers:
    layers = analyse(SRC, PACKAGE)
    # the check cannot pass on an empty or unread graph
    assert len(layers.modules) > 50, sorted(layers.modules)
    assert sum(map(len, layers.edges.values())) > 150
    assert "ancf_beam.mbs.integrators" in layers.edges["ancf_beam.mbs.analysis"]
    return layers


def test_no_import_circles():
    layers = _package()
    circles = layers.cycles()
    if circles:
        pytest.fail("import circles:\n" + "\n".join(map(layers.describe, circles)), pytrace=False)


def test_no_private_name_crosses_modules():
    layers = _package()
    if layers.crossings:
        pytest.fail(
            "private names used from another module:\n" + "\n".join(layers.crossings), pytrace=False
        )


def long_functions(root: Path, limit: int) -> list[str]:
    """``"path:line name: N lines"`` of every function or method below ``root`` longer than
    ``limit`` lines (``end_lineno - lineno + 1``; decorators excluded), longest first."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    found.append((n, f"{path.relative_to(root)}:{node.lineno} {node.name}"))
    return [f"{where}: {n} lines" for n, where in sorted(found, key=lambda x: (-x[0], x[1]))]


def test_no_function_longer_than_the_limit():
    assert len(list((SRC / PACKAGE).rglob("*.py"))) > 50  # the package is there to be read
    offenders = long_functions(SRC / PACKAGE, MAX_FUNCTION_LINES)
    if offenders:
        pytest.fail(
            f"functions longer than {MAX_FUNCTION_LINES} lines (split them into named helpers):\n"
            + "\n".join(offenders),
            pytrace=False,
        )


# --- negative controls: the checker finds what it is meant to find ----------------------


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_checker_finds_a_circle_through_a_function_local_relative_import(tmp_path):
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "",
            "pkg/a.py": "from pkg.sub import b\n",
            "pkg/sub/b.py": "import pkg.sub.c as c\n",
            "pkg/sub/c.py": """
                def f():
                    from .. import a  # resolves to the module pkg.a
                    return a
            """,
            "pkg/d.py": "from pkg import a\n",  # hangs off the circle, is not in it
        },
    )
    layers = analyse(tmp_path, "pkg")
    circles = layers.cycles()
    assert circles == [["pkg.a", "pkg.sub.b", "pkg.sub.c", "pkg.a"]], circles
    assert "pkg/sub/c.py:3" in layers.describe(circles[0])
    assert layers.crossings == []


def test_checker_finds_private_names_imported_or_read(tmp_path):
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "_hidden = 1\n__dunder__ = 2\ndef _f(): pass\n",
            "pkg/b.py": """
                from pkg.a import __dunder__
                import pkg.a as mod

                def g():
                    from .a import _hidden
                    return _hidden + mod._f() + mod.__dunder__
            """,
            "pkg/c.py": "import pkg.a\nx = pkg.a._hidden\n",
        },
    )
    layers = analyse(tmp_path, "pkg")
    assert sorted(layers.crossings) == [
        "pkg/b.py:6 pkg.b uses pkg.a._hidden",
        "pkg/b.py:7 pkg.b uses pkg.a._f",
        "pkg/c.py:2 pkg.c uses pkg.a._hidden",
    ]
    assert layers.cycles() == []


def test_checker_package_reexports_are_no_circle_until_imported_back(tmp_path):
    files = {
        "pkg/__init__.py": "from pkg.a import f\nfrom pkg.b import g\n",
        "pkg/a.py": "from pkg.b import g\ndef f(): return g()\n",
        "pkg/b.py": "def g(): return 1\n",
        "pkg/lazy/__init__.py": """
            from typing import TYPE_CHECKING
            _EXPORTS = {"h": "pkg.lazy.h_mod"}
            if TYPE_CHECKING:
                from pkg.lazy.h_mod import h
        """,
        "pkg/lazy/h_mod.py": "from pkg import b\ndef h(): return b.g()\n",
        "pkg/lazy/user.py": "from pkg.lazy import h\n",
    }
    _write(tmp_path, files)
    layers = analyse(tmp_path, "pkg")
    assert layers.cycles() == []
    assert "pkg.lazy.h_mod" in layers.edges["pkg.lazy.user"]  # through the lazy table
    assert "pkg.lazy.h_mod" not in layers.edges["pkg.lazy"]  # typing-only import

    # a submodule importing the package's re-exported name back closes a circle
    _write(tmp_path, {"pkg/b.py": "def g():\n    from pkg import f\n    return f\n"})
    circles = analyse(tmp_path, "pkg").cycles()
    assert circles == [["pkg", "pkg.b", "pkg"]], circles
    # ... and so does a lazily exported name whose module imports its user
    _write(
        tmp_path,
        {
            "pkg/b.py": "def g(): return 1\n",
            "pkg/lazy/h_mod.py": "from pkg.lazy import user\n",
        },
    )
    circles = analyse(tmp_path, "pkg").cycles()
    assert circles == [["pkg.lazy.h_mod", "pkg.lazy.user", "pkg.lazy.h_mod"]], circles


def test_long_functions_counts_def_to_last_line_without_decorators(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(8))  # 8 body lines: 9 with the def
    _write(
        tmp_path,
        {
            "pkg/a.py": "@decorator\n@other(1)\ndef nine():\n" + body,
            "pkg/b.py": "class C:\n    def method(self):\n"
            + textwrap.indent(body, "    ")
            + "\n\ndef eight():\n"
            + body.replace("    x7 = 7\n", ""),
            "pkg/c.py": "async def outer():\n    def inner():\n" + textwrap.indent(body, "    "),
        },
    )
    assert long_functions(tmp_path, 8) == [
        "pkg/c.py:1 outer: 10 lines",
        "pkg/a.py:3 nine: 9 lines",
        "pkg/b.py:2 method: 9 lines",
        "pkg/c.py:2 inner: 9 lines",
    ]
    assert long_functions(tmp_path, 10) == []
