"""The front door: ``import ancf_beam as ab`` and ``ancf_beam.mbs`` give their documented names,
imported on first use."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import ancf_beam
import ancf_beam.mbs

PACKAGES = [ancf_beam, ancf_beam.mbs]


def _documented(obj) -> bool:
    """A docstring of its own: not missing, not the signature a dataclass writes for itself."""
    doc = inspect.getdoc(obj) or ""
    return bool(doc.strip()) and not doc.startswith(f"{getattr(obj, '__name__', '')}(")


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: p.__name__)
def test_every_public_name_resolves_and_is_documented(pkg):
    assert pkg.__all__ == sorted(pkg.__all__), "keep __all__ sorted"
    assert set(pkg.__all__) == set(pkg._EXPORTS)
    undocumented = []
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        defining = importlib.import_module(pkg._EXPORTS[name])
        assert obj is getattr(defining, name), name
        if not _documented(obj):
            undocumented.append(name)
    assert not undocumented, f"no docstring: {undocumented}"
    assert set(pkg.__all__) <= set(dir(pkg))
    with pytest.raises(AttributeError, match="no_such_name"):
        pkg.no_such_name  # noqa: B018


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: p.__name__)
def test_type_checking_imports_name_the_same_objects(pkg):
    """The ``if TYPE_CHECKING:`` block (read by type checkers and the API docs) imports every
    public name from the module the lazy table names."""
    tree = ast.parse(Path(pkg.__file__).read_text())
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.dump(n.test)
    )
    imported = {
        a.name: n.module for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names
    }
    imported.pop("Any")  # the annotation of __getattr__
    assert imported == pkg._EXPORTS


def test_import_is_cheap():
    """``import ancf_beam`` (what the CLI starts with) loads neither numpy nor numba."""
    code = (
        "import sys, ancf_beam; "
        "print(sorted(m for m in ('numpy', 'numba', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_mbs_submodules_stay_reachable():
    assert ancf_beam.mbs.core.__name__ == "ancf_beam.mbs.core"
    from ancf_beam.mbs import System, integrate

    assert System is ancf_beam.System and integrate is ancf_beam.integrate
