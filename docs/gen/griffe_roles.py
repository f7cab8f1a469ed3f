"""Griffe extension for the API reference: the docstrings' Sphinx roles
(``:func:`~ancf_beam.solvers.simulate```) read as Markdown code spans (``simulate``; the full
path without ``~``), since the site renders docstrings as Markdown."""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`(~?)([^`]+)`")


def _code(match: re.Match) -> str:
    short, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if short else target.lstrip('.')}`"


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)
