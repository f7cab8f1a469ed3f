"""Command-line reference page, generated from the argparse parser of ``ancf_beam.cli`` at every
docs build (mkdocs-gen-files), so ``ancf-beam --help`` and this page cannot differ."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import mkdocs_gen_files

from ancf_beam.cli import build_parser

PAGE = "reference/cli.md"
#: hand-written part of the page (JSON fields, exit status), placed after the generated one
NOTES = Path(__file__).resolve().parents[1] / "reference" / "_cli_notes.md"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps them only here
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _argument(action: argparse.Action) -> str:
    if action.choices:
        return " \\| ".join(f"`{c}`" for c in action.choices)
    if action.nargs == 0:
        return ""
    metavar = action.metavar or action.dest.upper()
    if action.nargs in ("+", "*"):
        metavar = f"{metavar} ..."
    return f"`{metavar}`"


def _table(parser: argparse.ArgumentParser) -> str:
    out = ["| option | argument | default | meaning |", "|---|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        flags = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.dest}`"
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) else f"`{default}`"
        text = (action.help or "").replace("%(default)s", str(default)).replace("|", "\\|")
        if action.required:
            text = f"required; {text}"
        if isinstance(action, argparse._AppendAction) and "repeatable" not in text:
            text += " (repeatable)"
        out.append(f"| {flags} | {_argument(action)} | {shown} | {text} |")
    return "\n".join(out) + "\n"


def render() -> str:
    os.environ["COLUMNS"] = "88"  # argparse wraps the usage lines to the page's code width
    parser = build_parser()
    text = [
        "# Command-line reference\n",
        "The `ancf-beam` command (installed with the package). This page is generated from "
        "the command's own argument parser when the site is built: it says what `ancf-beam "
        "COMMAND --help` says.\n",
        f"```text\n{parser.format_help()}```\n",
    ]
    for name, sub in _subparsers(parser).items():
        text.append(f"## `ancf-beam {name}`\n")
        text.append((sub.description or "") + "\n")
        text.append(f"```text\n{sub.format_usage()}```\n")
        text.append(_table(sub))
    text.append(NOTES.read_text())
    return "\n".join(text)


with mkdocs_gen_files.open(PAGE, "w") as page:
    page.write(render())
