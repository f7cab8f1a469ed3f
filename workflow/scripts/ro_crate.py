"""Snakemake adapter: the run's files -> results/ro-crate-metadata.json (Workflow Run Crate).

Gathers what ran and what came out: the workflow definition (Snakefile and workflow/), the
config files given to Snakemake, the resolved cases (written here as JSON), the outputs of
``rule all`` and the check tables. Files outside the crate root (results/) are copied into
results/run/ keeping their project-relative paths (reports hard-linked when possible); the
library's ``build_run_crate`` writes the metadata (ancf_beam.provenance)."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import datetime as dt
import json
import logging
import os
import shutil
from pathlib import Path

from ancf_beam.io import git_commit, log_to_file
from ancf_beam.provenance import RunFile, build_run_crate, software_versions

log_to_file(snakemake.log[0])
inp = snakemake.input
crate_dir = Path(snakemake.output.crate).parent.resolve()
run_dir = Path(snakemake.output.run).resolve()
project = Path(inp.snakefile).resolve().parent
run_dir.mkdir(parents=True, exist_ok=True)


def place(path, link=False):
    """Crate-relative path of ``path``: itself if inside the crate root, else a copy (or a
    hard link) under run/ at its project-relative path (files from elsewhere: by name)."""
    src = Path(path).resolve()
    if src.is_relative_to(crate_dir) and not src.is_relative_to(run_dir):
        return src.relative_to(crate_dir).as_posix()
    rel = src.relative_to(project) if src.is_relative_to(project) else Path(src.name)
    dst = run_dir / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    linked = False
    if link:
        try:
            os.link(src, dst)
            linked = True
        except OSError:  # another file system, or links not allowed: copy
            pass
    if not linked:
        shutil.copy2(src, dst)
    return dst.relative_to(crate_dir).as_posix()


workflow_file = place(inp.snakefile)
parts = [place(p) for p in inp.sources]

cases_json = run_dir / "resolved_cases.json"
cases_json.write_text(json.dumps(snakemake.params.resolved, indent=1, default=str))
inputs = [RunFile(place(c), f"config file {Path(c).name}", "configfile") for c in inp.configfiles]
inputs.append(
    RunFile(
        cases_json.relative_to(crate_dir).as_posix(),
        "resolved cases and mechanisms (defaults merged with each block, validated)",
        "cases",
    )
)

outputs = []
produced = [Path(p) for p in [*inp.outputs, *inp.checks]]
for p in produced:
    if p.suffix in (".nc", ".csv") and p.resolve().is_relative_to(crate_dir):
        outputs.append(RunFile(place(p), p.as_posix(), "results"))
    else:
        outputs.append(RunFile(place(p, link=True), p.as_posix(), "reports"))
mtimes = [p.stat().st_mtime for p in produced]

README = """# Workflow Run RO-Crate of an ancf_beam pipeline run

`ro-crate-metadata.json` describes this run of the pipeline (RO-Crate 1.1, Workflow Run Crate
profile 0.5): the workflow (`run/Snakefile` and `run/workflow/`), its inputs (`run/config/`,
`run/resolved_cases.json`), its outputs (the NetCDF files here, `summary.csv`, and the reports
under `run/reports/`; start with `run/reports/index.html`), the software versions and the git
commit. Written by the pipeline's `ro_crate` rule; do not edit.
"""

versions = software_versions()
engine = next(s for s in versions if s.name == "snakemake")
path = build_run_crate(
    crate_dir,
    workflow=workflow_file,
    workflow_parts=parts,
    engine=engine,
    inputs=inputs,
    outputs=outputs,
    parameters={
        "configfile": ("config file (--configfile)", "File"),
        "cases": ("resolved cases and mechanisms", "File"),
        "results": ("NetCDF results and summary table", "File"),
        "reports": ("HTML reports and tables of checks", "File"),
    },
    software=[s for s in versions if s is not engine],
    git_commit=git_commit(),
    start=dt.datetime.fromtimestamp(min(mtimes), dt.UTC),
    end=dt.datetime.fromtimestamp(max(mtimes), dt.UTC),
    name="ancf_beam pipeline run",
    workflow_name="ancf_beam pipeline (Snakemake workflow)",
    readme=README,
    description=(
        "Gradient-defect ANCF cantilever pipeline: statics, modal analysis, explicit dynamics, "
        "critical time step, mesh convergence, validation and reports for every configured case."
    ),
)
logging.info("wrote %s: %d inputs, %d outputs", path, len(inputs), len(outputs))
