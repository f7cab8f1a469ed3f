"""Workflow Run RO-Crate builder (ancf_beam.provenance), validated with roc-validator offline.

A tiny crate directory (workflow file, config, resolved cases, one NetCDF result, one report)
goes through ``build_run_crate``; roc-validator checks it against the Workflow Run Crate 0.5
profile (and the Process Run Crate, Workflow RO-Crate and RO-Crate 1.1 profiles it inherits) at
the REQUIRED level. A broken copy is a negative control: the validator must reject it.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from ancf_beam.provenance import (
    CRATE_PROFILES,
    RunFile,
    Software,
    build_run_crate,
    media_type,
    software_versions,
)

rocrate_offline = pytest.importorskip("rocrate_offline")
pytest.importorskip("rocrate_validator")

PARAMETERS = {
    "configfile": ("config file", "File"),
    "cases": ("resolved cases", "File"),
    "results": ("NetCDF results", "File"),
    "reports": ("reports", "File"),
}


def _tree(root):
    files = {
        "run/Snakefile": "rule all:\n    input: 'uniform/static.nc'\n",
        "run/workflow/rules/static.smk": "# static rule\n",
        "run/config/quick.yaml": "cases: {uniform: {}}\n",
        "run/resolved_cases.json": json.dumps({"uniform": {"resolved": {}}}),
        "uniform/static.nc": "netcdf placeholder",
        "run/reports/index.html": "<html><body>index</body></html>",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _build(root, **over):
    versions = software_versions()
    engine = next(s for s in versions if s.name == "snakemake")
    kwargs = dict(
        workflow="run/Snakefile",
        workflow_parts=["run/workflow/rules/static.smk"],
        engine=engine,
        inputs=[
            RunFile("run/config/quick.yaml", "config file quick.yaml", "configfile"),
            RunFile("run/resolved_cases.json", "resolved cases", "cases"),
        ],
        outputs=[
            RunFile("uniform/static.nc", "results/uniform/static.nc", "results"),
            RunFile("run/reports/index.html", "reports/index.html", "reports"),
        ],
        parameters=PARAMETERS,
        software=[s for s in versions if s is not engine],
        git_commit="0123456789abcdef",
        start=dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        end=dt.datetime(2026, 1, 2, 3, 14, 5, tzinfo=dt.UTC),
        name="ancf_beam pipeline run",
        description="A test run.",
        readme="# A test crate\n",
    )
    kwargs.update(over)
    return build_run_crate(root, **kwargs)


def _graph(path):
    return {e["@id"]: e for e in json.loads(path.read_text())["@graph"]}


def _ids(value):
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


def test_tiny_crate_passes_roc_validator(tmp_path):
    _tree(tmp_path)
    path = _build(tmp_path)
    assert path == tmp_path / "ro-crate-metadata.json"
    metadata = json.loads(path.read_text())
    assert metadata["@context"] == "https://w3id.org/ro/crate/1.1/context"
    # the offline stand-in context is faithful for every term this crate uses
    assert rocrate_offline.unmapped_terms(metadata) == set()
    passed, issues = rocrate_offline.validate_crate(tmp_path)
    assert passed, "\n".join(issues)


def test_crate_content(tmp_path):
    _tree(tmp_path)
    g = _graph(_build(tmp_path))
    root = g["./"]
    assert set(_ids(root["conformsTo"])) == set(CRATE_PROFILES)
    assert root["mainEntity"] == {"@id": "run/Snakefile"}
    wf = g["run/Snakefile"]
    assert set(wf["@type"]) == {"File", "SoftwareSourceCode", "ComputationalWorkflow"}
    assert wf["version"] == "0123456789abcdef"
    assert _ids(wf["hasPart"]) == ["run/workflow/rules/static.smk"]
    lang = g[wf["programmingLanguage"]["@id"]]
    assert lang["name"] == "Snakemake"
    action = g[root["mentions"]["@id"]]
    assert action["@type"] == "CreateAction"
    assert action["startTime"] == "2026-01-02T03:04:05+00:00"
    assert action["endTime"] == "2026-01-02T03:14:05+00:00"
    instruments = _ids(action["instrument"])
    assert instruments[0] == "run/Snakefile"
    apps = {g[i]["name"]: g[i]["softwareVersion"] for i in instruments[1:]}
    for name in ("python", "numpy", "scipy", "numba", "xarray", "snakemake", "ancf-beam"):
        assert name in apps and apps[name] != "not installed", name
    assert set(_ids(action["object"])) == {"run/config/quick.yaml", "run/resolved_cases.json"}
    assert set(_ids(action["result"])) == {"uniform/static.nc", "run/reports/index.html"}
    assert g["uniform/static.nc"]["encodingFormat"] == "application/x-netcdf"
    # every file is an example of its formal parameter, which the workflow declares
    assert {p["@id"] for p in _as_list(wf["input"])} == {"#param-configfile", "#param-cases"}
    assert g["uniform/static.nc"]["exampleOfWork"] == {"@id": "#param-results"}
    assert g["#param-results"]["workExample"] == {"@id": "uniform/static.nc"}
    assert g["README.md"]["about"] == {"@id": "./"}
    assert (tmp_path / "README.md").read_text() == "# A test crate\n"


def _as_list(v):
    return v if isinstance(v, list) else [v]


def test_negative_control_action_without_the_workflow_is_rejected(tmp_path):
    """The validator is not a rubber stamp: drop the workflow from the CreateAction's
    instruments and the Workflow Run Crate requirement fails."""
    _tree(tmp_path)
    path = _build(tmp_path)
    metadata = json.loads(path.read_text())
    for entity in metadata["@graph"]:
        if entity.get("@type") == "CreateAction":
            entity["instrument"] = [
                i for i in _as_list(entity["instrument"]) if i["@id"] != "run/Snakefile"
            ]
    path.write_text(json.dumps(metadata))
    passed, issues = rocrate_offline.validate_crate(tmp_path)
    assert not passed
    assert any("mainEntity" in i and "instrument" in i for i in issues), issues


def test_files_must_exist_inside_the_crate(tmp_path):
    _tree(tmp_path)
    (tmp_path.parent / "outside.nc").write_text("x")
    outside = RunFile("../outside.nc", "outside", "results")
    with pytest.raises(ValueError, match="outside the crate directory"):
        _build(tmp_path, outputs=[outside])
    with pytest.raises(FileNotFoundError, match="missing.nc"):
        _build(tmp_path, outputs=[RunFile("missing.nc", "missing", "results")])
    with pytest.raises(ValueError, match="unknown parameter 'nope'"):
        _build(tmp_path, outputs=[RunFile("uniform/static.nc", "static", "nope")])


def test_software_and_media_types():
    names = [s.name for s in software_versions()]
    assert names == ["python", "numpy", "scipy", "numba", "xarray", "snakemake", "ancf-beam"]
    missing = software_versions(["surely-not-an-installed-distribution"])[1]
    assert missing.version == "not installed"
    assert Software("numpy", "2.0.1").id == "https://pypi.org/project/numpy/2.0.1/"
    assert media_type("a/b.nc") == "application/x-netcdf"
    assert media_type("Snakefile") == "text/plain"
    assert media_type("report.html") == "text/html"
