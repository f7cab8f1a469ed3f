"""Python API page, generated at every docs build (mkdocs-gen-files): the hand-written
``docs/reference/_api.md`` with its ``{{ front_door }}`` replaced by a table of every name of
``ancf_beam.__all__``, its one-line summary and a link to its documentation on the page."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import mkdocs_gen_files

import ancf_beam

TEMPLATE = Path(__file__).resolve().parents[1] / "reference" / "_api.md"
PAGE = "reference/api.md"
#: Sphinx roles of the docstrings, shown as code (as docs/gen/griffe_roles.py does)
ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`~?([^`]+)`")


def front_door() -> str:
    rows = ["| name | what it is | defined in |", "|---|---|---|"]
    for name in ancf_beam.__all__:
        module = ancf_beam._EXPORTS[name]
        obj = getattr(importlib.import_module(module), name)
        summary = (inspect.getdoc(obj) or "").split("\n\n")[0]
        summary = ROLE.sub(lambda m: f"`{m[1].rsplit('.', 1)[-1]}`", " ".join(summary.split()))
        summary = summary.replace("|", "\\|")
        kind = "class" if inspect.isclass(obj) else "function"
        rows.append(f"| [`ab.{name}`][{module}.{name}] | {kind}: {summary} | `{module}` |")
    return "\n".join(rows)


with mkdocs_gen_files.open(PAGE, "w") as page:
    page.write(TEMPLATE.read_text().replace("{{ front_door }}", front_door()))
