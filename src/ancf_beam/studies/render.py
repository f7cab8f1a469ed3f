"""Run a report template with parameters and render it to HTML, in one process.

    python -m ancf_beam.studies.render TEMPLATE.ipynb OUT.ipynb OUT.html 'PARAMETERS (YAML)'

does what ``python -m papermill TEMPLATE OUT.ipynb -k python3 -y PARAMETERS`` followed by
``python -m nbconvert --to html --no-input --stdout OUT.ipynb > OUT.html`` do (the same
notebook, the same HTML), with one interpreter instead of two: each started and imported the
Jupyter packages, about 0.5 s of CPU per report. The executed notebook is written as papermill
writes it, also when a cell fails (papermill's error then ends the run, exit 1); the HTML only
after a clean run. The pipeline's report rules run it (workflow/rules/report.smk).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["main", "render_report"]


def render_report(
    template: str | Path, out_nb: str | Path, out_html: str | Path, parameters: Mapping[str, Any]
) -> Path:
    """Execute ``template`` with ``parameters`` (papermill, kernel ``python3``) into ``out_nb``
    and write its HTML without input cells and prompts (nbconvert's ``--no-input``) to
    ``out_html``; returns the HTML path."""
    from nbconvert import HTMLExporter
    from papermill import execute_notebook

    execute_notebook(
        str(template),
        str(out_nb),
        parameters=dict(parameters),
        kernel_name="python3",
        progress_bar=False,
    )
    exporter = HTMLExporter(
        exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True
    )
    body, _ = exporter.from_filename(str(out_nb))
    out = Path(out_html)
    out.write_text(body, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    import yaml
    from papermill.cli import NoDatesSafeLoader  # papermill's reading of -y parameters

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    template, out_nb, out_html, params = args
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # papermill's CLI log
    render_report(template, out_nb, out_html, yaml.load(params, Loader=NoDatesSafeLoader) or {})
    return 0


if __name__ == "__main__":
    sys.exit(main())
