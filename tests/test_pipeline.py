"""The Snakemake pipeline: schema, quick end-to-end run, incremental behaviour, lint, format.

The end-to-end tests (marked ``pipeline``) copy ``Snakefile``, ``workflow/`` and ``config/``
into a temporary directory and run ``python -m snakemake`` there with ``config/quick.yaml``.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml

from ancf_beam.config import (
    DEFAULTS,
    PIPELINE_DEFAULTS,
    RULES,
    ConfigError,
    flatten,
    load_config,
    mechanism_names,
    pipeline_settings,
    resolve_case,
    resolve_mechanism,
)
from ancf_beam.kernel_cache import cache_files, source_digest
from ancf_beam.warmup import GROUPS

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "src" / "ancf_beam" / "schema" / "config.schema.yaml"
QUICK = ROOT / "config" / "quick.yaml"
PER_CASE_RULES = {
    "critical_dt",
    "static",
    "modal",
    "simulate",
    "mesh_convergence",
    "validation",
    "response",
    "report_case",
}
AGGREGATE_RULES = {
    "collect",
    "report_comparison",
    "report_convergence",
    "report_critical_dt",
    "report_validation",
    "report_integrators",
    "report_defects",
    "report_identification",
    "report_scaling",
    "report_seed_audit",
    "report_index",
    "ro_crate",
    "all",
}
NEW_REPORTS = ("integrators", "defects", "identification", "scaling")
MECH_REPORTS = ("mechanisms", "contact", "flagship", "nonsmooth")
#: variables (with units) of every mechanism NetCDF, by kind; clearance adds MECH_CLEARANCE
MECH_VARS = {
    "common": {
        "time": "s",
        "constraint_violation": "m (rad for angle equations)",
        "kinetic_energy": "J",
        "energy_total": "J",
    },
    "slider-crank": {
        "slider_x": "m",
        "slider_v": "m/s",
        "slider_a": "m/s^2",
        "drive_torque": "N m",
        "reaction_force": "N",
        "crank_angle": "rad",
    },
    "two-body": {"x1": "m", "v2": "m/s", "contact_force_normal": "N", "penetration": "m"},
}
MECH_NONSMOOTH = {
    "impulse_normal": "N s",
    "impulse_tangential": "N s",
    "penetration": "m",
    "eccentricity_x": "m",
    "eccentricity_y": "m",
}
MECH_CLEARANCE = {
    "contact_force_normal": "N",
    "contact_force_tangential": "N",
    "penetration": "m",
    "eccentricity_x": "m",
    "eccentricity_y": "m",
}
MECH_PROVENANCE = (
    "case",
    "package_version",
    "git_commit",
    "config_hash",
    "created_utc",
    "study",
    "package_fingerprint",
    "param.kind",
    "summary.wall_s",
)
PROVENANCE = (
    "case",
    "package_version",
    "git_commit",
    "config_hash",
    "created_utc",
    "wall_s",
    "study",
    "package_fingerprint",
    "param.defect.lam",
    "param.mesh.n_elements",
    "compile_s",
)
#: rules whose jobs run numba kernels: each waits for the compile_kernels record
KERNEL_RULES = {
    "critical_dt",
    "static",
    "modal",
    "simulate",
    "mesh_convergence",
    "validation",
    "response",
    "integrators",
    "identification",
    "scaling",
    "mechanism",
    "mechanism_validation",
    "mechanism_study",
    "mechanism_animation",
    "report_seed_audit",
}


def copy_workflow(dst: Path) -> Path:
    shutil.copy(ROOT / "Snakefile", dst / "Snakefile")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    shutil.copytree(ROOT / "workflow", dst / "workflow", ignore=ignore)
    shutil.copytree(ROOT / "config", dst / "config", ignore=ignore)
    return dst


def snakemake(cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def output_tail(res: subprocess.CompletedProcess, n: int = 6000) -> str:
    return f"--- stdout ---\n{res.stdout[-n:]}\n--- stderr ---\n{res.stderr[-n:]}"


def schema_validator():
    schema = yaml.safe_load(SCHEMA.read_text())
    return jsonschema.Draft202012Validator(schema)


# ------------------------------------------------------------------------------------------
# schema (fast)
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", [ROOT / "config" / "config.yaml", QUICK])
def test_shipped_configs_pass_schema_and_library(path):
    cfg = load_config(path)
    errors = [e.message for e in schema_validator().iter_errors(cfg)]
    assert not errors
    for name in cfg["cases"]:
        resolve_case(cfg, name)


def _library_accepts(key: str, value) -> bool:
    try:
        resolve_case({}, None, {key: value})
    except ConfigError:
        return False
    return True


def _nested(key: str, value) -> dict:
    out: dict = {}
    node = out
    parts = key.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value
    return out


PROBES = [
    -1,
    -0.5,
    0,
    1e-3,
    0.5,
    0.999,
    1,
    1.5,
    2,
    10,
    11,
    2.5,
    20.0,
    None,
    True,
    False,
    "bogus",
    "gauss",
    "element",
    "linear",
    "static",
    "uniform",
    [[0.0, 1.0], [1.0, 0.5]],
    [1, 2],
]


#: Keys whose bound depends on other keys (|kappa0| L, the tip height a curvature reaches):
#: the library checks them on the resolved case; the schema can only check the type.
CROSS_KEY_BOUNDS = ("imperfection.kappa0", "imperfection.tip_offset")


@pytest.mark.parametrize("key", sorted(RULES))
def test_schema_ranges_match_library_rules(key):
    """For every key of ancf_beam.config.RULES the schema accepts exactly what the library does
    (on a probe set of values), both as a default and inside a case; for the keys of
    CROSS_KEY_BOUNDS the schema accepts at least what the library does."""
    v = schema_validator()
    pipeline = yaml.safe_load(QUICK.read_text())["pipeline"]
    for value in PROBES:
        lib = _library_accepts(key, value)
        as_default = {"pipeline": pipeline, **_nested(key, value)}
        in_case = {"pipeline": pipeline, "cases": {"probe": _nested(key, value)}}
        if key in CROSS_KEY_BOUNDS and not lib:
            continue
        assert v.is_valid(as_default) == lib, (key, value, "default", lib)
        assert v.is_valid(in_case) == lib, (key, value, "case", lib)


def test_schema_rejects_unknown_keys_and_bad_pipeline():
    v = schema_validator()
    cfg = yaml.safe_load(QUICK.read_text())
    for mutate in (
        lambda c: c["cases"].update({"x": {"defect": {"lamda": 0.3}}}),
        lambda c: c.update({"dynamic": {}}),
        lambda c: c["pipeline"]["critical_dt"].update({"meshes": [0, 4]}),
        lambda c: c["pipeline"]["convergence"].update({"meshes": [2, 4]}),
        lambda c: c["pipeline"]["simulate"].update({"t_end": -1.0}),
        lambda c: c["pipeline"].update({"extra": 1}),
        lambda c: c["cases"].update({"bad/name": {}}),
        lambda c: c.pop("pipeline"),
    ):
        bad = copy.deepcopy(cfg)
        mutate(bad)
        assert not v.is_valid(bad)


def _schema_leaf_keys(node: dict, defs: dict, prefix: str = "") -> set[str]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    if node.get("type") != "object" or "properties" not in node:
        return {prefix[:-1]}
    keys: set[str] = set()
    for k, sub in node["properties"].items():
        keys |= _schema_leaf_keys(sub, defs, f"{prefix}{k}.")
    return keys


def test_schema_covers_every_library_key():
    schema = yaml.safe_load(SCHEMA.read_text())
    not_case_sections = ("cases", "pipeline", "mechanisms")
    top = {k: v for k, v in schema["properties"].items() if k not in not_case_sections}
    keys = _schema_leaf_keys({"type": "object", "properties": top}, schema["$defs"])
    assert keys == set(RULES)
    assert set(flatten(resolve_case({}, None).resolved)) == set(RULES)
    case_keys = _schema_leaf_keys(schema["$defs"]["case"] | {"type": "object"}, schema["$defs"])
    assert case_keys == set(RULES)


def _leaves(node: dict, defs: dict, prefix: str = ""):
    """``(dotted key, node)`` of every leaf property under ``node`` (through ``$ref``)."""
    for k, sub in node.get("properties", {}).items():
        target = sub
        while "$ref" in target:
            target = {
                **defs[target["$ref"].rsplit("/", 1)[-1]],
                **{kk: vv for kk, vv in target.items() if kk != "$ref"},
            }
        if target.get("type") == "object" and "properties" in target:
            yield from _leaves(target, defs, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", target


def test_schema_defaults_are_valid_and_every_key_is_described():
    """The schema is the one home of defaults: each one must pass the schema itself (plain
    jsonschema, not the library), and every key of a case, a mechanism kind and the pipeline
    carries a description or a unit for the reference page."""
    schema = yaml.safe_load(SCHEMA.read_text())
    v = schema_validator()
    assert v.is_valid({**DEFAULTS, "pipeline": PIPELINE_DEFAULTS})
    assert v.is_valid({**DEFAULTS, "pipeline": {}, "cases": {"c": DEFAULTS}})
    bad = copy.deepcopy(DEFAULTS)
    bad["defect"]["lam"] = 1.0  # negative control: a default outside its range is caught
    assert not v.is_valid({**bad, "pipeline": {}})
    defs = schema["$defs"]
    names = (
        "pendulum",
        "slider_crank",
        "two_body",
        "rod_rigid",
        "clearance",
        "contact_law",
        "contact_compliant",
        "contact_nonsmooth",
        "friction_law",
    )
    roots = [*(defs[k] for k in names), {"properties": schema["properties"]}]
    undescribed = [
        key
        for root in roots
        for key, node in _leaves(root, defs)
        if not (node.get("description") or node.get("unit") or "const" in node)
    ]
    assert not undescribed, undescribed


#: the keywords a schema node may hold: JSON schema's (those used) and the ``unit`` annotation
SCHEMA_WORDS = set(
    "$schema $defs $ref description type additionalProperties required properties propertyNames "
    "minProperties pattern oneOf anyOf allOf if then else not const enum default minimum maximum "
    "exclusiveMinimum exclusiveMaximum items prefixItems minItems maxItems uniqueItems unit".split()
)


def _strange_words(node, path=()):
    """Keys of schema nodes that are no schema keyword (a typo, or an unquoted comma in a
    flow-style description, which YAML reads as a further key)."""
    if isinstance(node, list):
        return [w for i, sub in enumerate(node) for w in _strange_words(sub, (*path, i))]
    if not isinstance(node, dict):
        return []
    named = path and path[-1] in ("properties", "$defs")
    where = "/".join(map(str, path))
    out = [] if named else [f"{where}: {k!r}" for k in node if k not in SCHEMA_WORDS]
    for key, sub in node.items():
        if key != "default":
            out += _strange_words(sub, (*path, key))
    return out


def test_schema_nodes_hold_only_schema_keywords():
    assert not _strange_words(yaml.safe_load(SCHEMA.read_text()))
    # negative control: the unquoted comma this test was written for
    bad = yaml.safe_load("properties: {mapping: {enum: [a], description: x (y, z)}}")
    assert _strange_words(bad) == ["properties/mapping: 'z)'"]


def test_pipeline_settings_merge_over_defaults_and_name_unknown_keys():
    s = pipeline_settings({"pipeline": {"integrators": {"per_period": [50, 10]}}})
    assert s["integrators"]["per_period"] == [50.0, 10.0]
    assert s["integrators"]["t_end"] == PIPELINE_DEFAULTS["integrators"]["t_end"]
    assert s["scaling"] == PIPELINE_DEFAULTS["scaling"]
    with pytest.raises(ConfigError, match="pipeline.integrators.t_ned"):
        pipeline_settings({"pipeline": {"integrators": {"t_ned": 1.0}}})


def test_bad_value_fails_before_any_job(tmp_path):
    copy_workflow(tmp_path)
    cfg = yaml.safe_load(QUICK.read_text())
    cfg["cases"]["broken"] = {"defect": {"lam": 1.5}}
    (tmp_path / "config" / "bad.yaml").write_text(yaml.safe_dump(cfg))
    res = snakemake(tmp_path, "--cores", "1", "--configfile", "config/bad.yaml", timeout=120)
    text = res.stdout + res.stderr
    assert res.returncode != 0
    assert "ValidationError" in text
    assert "1.5" in text
    assert re.search(r"\['cases'\]\['broken'\]\['defect'\]\['lam'\]", text), text[-3000:]
    assert not list(tmp_path.rglob("*.nc"))
    assert not (tmp_path / "results").exists()
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda text: text.replace(
                "\ncases:\n", "\ncases:\n  seed: {}\n  seed:\n    defect: {lam: 0.3}\n", 1
            ),
            r"duplicate key 'seed' at line \d+ \(first given at line \d+\)",
        ),
        (lambda text: text.replace("\ncases:\n", "\ncases:\n  7: {}\n", 1), r"'cases\.7'"),
    ],
    ids=["duplicate_case", "integer_case_name"],
)
def test_config_file_errors_fail_before_any_job(tmp_path, mutate, expected):
    """Snakemake's YAML reader keeps the last of two equal keys; the Snakefile reads the file
    again with the library's strict reader, so the workflow stops naming the key and line."""
    copy_workflow(tmp_path)
    (tmp_path / "config" / "bad.yaml").write_text(mutate(QUICK.read_text()))
    res = snakemake(tmp_path, "-n", "--configfile", "config/bad.yaml", timeout=120)
    text = res.stdout + res.stderr
    assert res.returncode != 0
    assert re.search(expected, text), text[-3000:]
    assert "bad.yaml" in text or "cases.7" in text
    assert not (tmp_path / "results").exists()


# ------------------------------------------------------------------------------------------
# end to end with the quick config
# ------------------------------------------------------------------------------------------
# quick_run (conftest.py): the quick pipeline, run once per session (also test_slurm's local run)


def _quick_cases():
    return list(yaml.safe_load(QUICK.read_text())["cases"])


def _attrs_ok(ds: xr.Dataset, case: str, study: str):
    missing = [k for k in PROVENANCE if k not in ds.attrs]
    assert not missing, (study, missing)
    assert ds.attrs["case"] == case
    assert ds.attrs["study"] == study


@pytest.mark.pipeline
def test_quick_pipeline_results(quick_run):
    res = quick_run / "results"
    cfg = yaml.safe_load(QUICK.read_text())
    expected_units = {
        "static": {"tip_y": "m", "tip_x": "m", "y": "m", "curvature": "rad/m"},
        "modal": {"omega": "rad/s", "frequency_hz": "Hz"},
        "simulate": {
            "tip_y": "m",
            "kinetic": "J",
            "strain": "J",
            "total_energy": "J",
            "time": "s",
        },
        "convergence": {"rel_error": "1", "observed_order": "1", "element_length": "m"},
        "validation": {"rel_error": "1", "exact_x": "m"},
    }
    for case in _quick_cases():
        for study, units in expected_units.items():
            with xr.open_dataset(res / case / f"{study}.nc") as ds:
                name = "mesh_convergence" if study == "convergence" else study
                _attrs_ok(ds, case, name)
                for var, unit in units.items():
                    assert ds[var].attrs.get("units") == unit, (case, study, var)
        with xr.open_dataset(res / case / "validation.nc") as va:
            table = dict(zip(va["name"].values, va["status"].values, strict=True))
            assert va.attrs["n_fail"] == 0, {k: s for k, s in table.items() if s != "PASS"}
            # fewer checks when the straight linear-elastic references do not apply
            straight = int(va.attrs["straight_elastic_references"])
            assert va.attrs["n_checks"] >= (10 if straight else 8)
            damaged = bool(cfg["cases"][case] and "damage" in cfg["cases"][case])
            assert va.attrs["dynamics_checks"] == ("damage" if damaged else "elastic")
        meshes = set(cfg["pipeline"]["critical_dt"]["meshes"]) | {cfg["mesh"]["n_elements"]}
        for ne in meshes:
            with xr.open_dataset(res / case / "critical_dt" / f"ne{ne}.nc") as cr:
                _attrs_ok(cr, case, "critical_dt")
                assert cr["dt_critical"].attrs["units"] == "s"
                assert cr["omega_max"].attrs["units"] == "rad/s"
                assert cr.attrs["param.mesh.n_elements"] == ne
                assert cr.attrs["governing_mode"] in ("axial", "bending")
        # the explicit run took its step from the critical_dt result at its mesh; an implicit
        # run (ga_damped) takes T1 / 100 (solvers.schemes.IMPLICIT_STEPS_PER_PERIOD)
        case_mesh = (cfg["cases"][case] or {}).get("mesh") or {}
        ne = case_mesh.get("n_elements", cfg["mesh"]["n_elements"])
        integrator = ((cfg["cases"][case] or {}).get("dynamics") or {}).get("integrator")
        with (
            xr.open_dataset(res / case / "critical_dt" / f"ne{ne}.nc") as cr,
            xr.open_dataset(res / case / "simulate.nc") as si,
            xr.open_dataset(res / case / "modal.nc") as mo,
        ):
            assert si.attrs["dt_critical"] == float(cr["dt_critical"])
            if integrator in (None, "central-difference"):
                expected_dt, rel = cfg["dynamics"]["dt_safety"] * float(cr["dt_critical"]), 1e-12
            else:  # omega_1 of the same mesh by the modal study, not the solver's own solve
                expected_dt, rel = 2 * np.pi / float(mo["omega"][0]) / 100.0, 1e-9
            assert si.attrs["dt"] == pytest.approx(expected_dt, rel=rel)
            assert si.attrs["dt_critical_source"].endswith(f"critical_dt/ne{ne}.nc")
            drift_tol = 2e-2 if "damage" in (cfg["cases"][case] or {}) else 1e-3
            assert si.attrs["energy_drift_rel"] < drift_tol
        with xr.open_dataset(res / case / "response.nc") as rs:
            _attrs_ok(rs, case, "response")
            for var, unit in {
                "peak_omega": "rad/s",
                "has_beat": "1",
                "spectrum_psd": "m^2/Hz",
                "static_dkappa": "1/m",
                "static_gini": "1",
                "dyn_X": "m",
                "envelope_decay_rate": "1/s",
            }.items():
                assert rs[var].attrs.get("units") == unit, (case, var)
            assert "beat_reason" in rs.attrs
            if "damage" in (cfg["cases"][case] or {}):
                assert rs["omega_damaged_final"].attrs["units"] == "rad/s"
                assert float(rs["damage_final"].max()) > 0
    with xr.open_dataset(res / "summary.nc") as sm:
        assert list(sm["case"].values) == _quick_cases()
        assert sm["dt"].attrs["units"] == "s"
        assert sm["omega_1"].attrs["units"] == "rad/s"
        assert sm.attrs["validation_pass"] == sm.attrs["validation_checks"]
    _new_study_results(res, cfg)
    table = pd.read_csv(res / "summary.csv")
    assert list(table["case"]) == _quick_cases()
    for col in (
        "param.defect.lam",
        "param.defect.n",
        "param.mesh.n_elements",
        "dt",
        "dt_critical",
        "sim.n_elements",
        "static_tip_y",
        "dynamic_tip_y_min",
        "dynamic_tip_y_mean_2nd_half",
        "omega_1",
        "omega_2",
        "omega_3",
        "energy_drift_rel",
        "wall_s.total",
        "validation_pass",
    ):
        assert col in table.columns, col
        assert table[col].notna().all(), col
    # the data dictionary names every column with its unit; energy peaks and displacements
    units = pd.read_csv(res / "summary_units.csv", keep_default_na=False).set_index("column")
    assert list(units.index) == list(table.columns)
    for col, unit in (
        ("kinetic_energy_max", "J"),
        ("strain_energy_max", "J"),
        ("static_tip_dy", "m"),
        ("omega_1", "rad/s"),
        ("dt", "s"),
    ):
        assert units.loc[col, "unit"] == unit, col
    assert (table["kinetic_energy_max"] > 0).all()
    assert (table["static_tip_dy"] < 0).all()
    # gravity moves every tip down from its stress-free reference (the curved one starts above)
    for case, tip in zip(table["case"], table["static_tip_y"], strict=True):
        with xr.open_dataset(res / case / "response.nc") as rs:
            assert tip < float(rs["static_ref_y"][-1]), case


def _new_study_results(res: Path, cfg: dict) -> None:
    """integrators, identification and scaling NetCDF files: variables, units, provenance."""
    seed = next(c for c, v in cfg["cases"].items() if not v)
    for case in cfg["pipeline"]["integrators"]["cases"]:
        with xr.open_dataset(res / case / "integrators.nc") as ig:
            _attrs_ok(ig, case, "integrators")
            for var, unit in {
                "tip_y": "m",
                "time": "s",
                "period_error": "1",
                "decay_per_period_rel": "1",
                "theory_period_error": "1",
                "newton_mean": "1",
                "wall_s": "s",
                "dt": "s",
                "final_tip": "m",
                "settle_time": "s",
            }.items():
                assert ig[var].attrs.get("units") == unit, var
            assert set(ig["integrator"].values) == {
                "central-difference",
                "bdf1",
                "newmark",
                "generalized-alpha",
            }
            assert ig.attrs["dt_critical_source"].endswith(
                f"critical_dt/ne{cfg['mesh']['n_elements']}.nc"
            )
            with xr.open_dataset(
                res / case / "critical_dt" / f"ne{cfg['mesh']['n_elements']}.nc"
            ) as cr:
                assert ig.attrs["dt_critical"] == float(cr["dt_critical"])
            with xr.open_dataset(res / case / "modal.nc") as mo:
                assert ig.attrs["omega_1"] == float(mo["omega"][0])
    with xr.open_dataset(res / "identification.nc") as idn:
        _attrs_ok(idn, seed, "identification")
        for var in ("lam_est", "lam_std", "n_est", "n_std", "identifiable", "lam_z"):
            assert idn[var].attrs.get("units") == "1", var
        assert idn["omega_measured"].attrs["units"] == "rad/s"
        ic = cfg["pipeline"]["identification"]
        assert idn.sizes["truth"] == len(ic["lam"]) * len(ic["n"])
        assert idn.sizes["draw"] == ic["draws"]
        assert np.all(idn["control_identifiable"].values == 0)
        assert 0 <= idn.attrs["coverage_2sigma_lam"] <= 1
    with xr.open_dataset(res / "scaling.nc") as sc:
        _attrs_ok(sc, seed, "scaling")
        for var in ("explicit_cost_s", "explicit_projected_s", "implicit_cost_s", "dt_critical"):
            assert sc[var].attrs.get("units") == "s", var
        sg = cfg["pipeline"]["scaling"]
        assert list(sc["mesh"].values) == sorted(sg["meshes"])
        for ne, src in zip(sc["mesh"].values, sc["explicit_cost_source"].values, strict=True):
            if ne > sg["full_max_elements"]:
                assert str(src).startswith("projected from a measured window of"), src
            else:
                assert src == "measured full run"
        for key in ("explicit_exponent", "implicit_exponent", "crossover_elements"):
            assert key in sc.attrs


@pytest.mark.pipeline
def test_quick_pipeline_compiles_nothing_after_the_first_job(quick_run):
    """The compile_kernels jobs compiled every kernel the jobs use: the kernel cache holds as
    many compiled signatures (``.nbc`` files) at the end of the run as right after the last of
    them (the greatest count any of their records saw)."""
    records = sorted((quick_run / "results" / "kernels" / source_digest()).glob("*.json"))
    assert sorted(r.stem for r in records) == sorted(GROUPS), records
    recs = [json.loads(r.read_text()) for r in records]
    after = max((rec["cache_files_after"] for rec in recs), key=lambda c: c["nbc"])
    assert after["nbc"] > 0
    assert cache_files(Path(recs[0]["cache_dir"])) == after, recs
    for rec in recs:
        assert rec["compile_s"] >= 0 and rec["groups"], rec


@pytest.mark.pipeline
def test_quick_pipeline_mechanisms(quick_run):
    """Every mechanism case of the quick config: its NetCDF (variables, units, provenance) and
    its table of checks; the three mechanism studies."""
    res = quick_run / "results" / "mechanisms"
    cfg = yaml.safe_load(QUICK.read_text())
    for name, block in cfg["mechanisms"].items():
        with xr.open_dataset(res / f"{name}.nc") as ds:
            for key in MECH_PROVENANCE:
                assert key in ds.attrs, (name, key)
            assert ds.attrs["case"] == name and ds.attrs["study"] == "mechanism"
            want = {**MECH_VARS["common"], **MECH_VARS.get(block["kind"], {})}
            if block.get("clearance") and block["clearance"]["contact"].get("model") == "nonsmooth":
                want.update(MECH_NONSMOOTH)  # impulses instead of forces
            elif block.get("clearance"):
                want.update(MECH_CLEARANCE)
                assert set(np.unique(ds["contact_state"].values)) <= {0, 1, 2}
            for var, unit in want.items():
                assert ds[var].attrs.get("units") == unit, (name, var)
                assert np.isfinite(ds[var].values).all(), (name, var)
        with xr.open_dataset(res / "validation" / f"{name}.nc") as ds:
            assert ds.attrs["n_checks"] >= 2 and ds.attrs["n_fail"] == 0, name
            assert set(ds["status"].values) == {"PASS"}, name
    for study, dim in (
        ("clearance_sweep", "clearance"),
        ("contact_laws", "run"),
        ("flagship", "variant"),
    ):
        with xr.open_dataset(res / "studies" / f"{study}.nc") as ds:
            assert ds.sizes[dim] >= 2 and ds.attrs["study"] == study, study
            assert all("units" in ds[v].attrs for v in ds.data_vars if v != "law"), study
    with xr.open_dataset(res / "studies" / "flagship.nc") as ds:
        assert ds["damage_max"].values[-1] > 0  # the damaging variant damages
        # the quick config runs two revolutions (the ANCF rod costs seconds a revolution)
        assert ds.sizes["revolution"] == cfg["pipeline"]["flagship"]["revolutions"]
        assert np.isfinite(ds["rev_peak_force"].values).all()
    with xr.open_dataset(res / "studies" / "clearance_sweep.nc") as ds:
        # as the default config: 21 revolutions, the first left out -> 20 points per phase
        assert ds.sizes["revolution"] >= 20 and ds.sizes["phase"] >= 1
        assert ds["poincare_ecc_x"].shape[1:] == (ds.sizes["phase"], ds.sizes["revolution"])
        assert (ds["rev_peak_force"].values > 0).all()


@pytest.mark.pipeline
def test_quick_pipeline_reports(quick_run):
    rep = quick_run / "reports"
    pages = [
        rep / "index.html",
        rep / "comparison.html",
        rep / "convergence.html",
        rep / "critical_dt.html",
        rep / "validation.html",
    ]
    pages += [rep / f"{name}.html" for name in NEW_REPORTS + MECH_REPORTS]
    pages += [rep / "cases" / f"{c}.html" for c in _quick_cases()]
    pages.append(rep / "seed_audit.html")
    for page in pages:
        assert page.stat().st_size > 1000, page
    rows = []
    # display only (no checks of their own): the comparison report and large-deflection cases
    may_be_empty = {"comparison.csv", "case_large_E2.07e8.csv"}
    for csv in sorted((rep / "checks").glob("*.csv")):
        df = pd.read_csv(csv)
        assert len(df) > 0 or csv.name in may_be_empty, csv
        assert set(df.columns) >= {
            "reference",
            "computed",
            "rel. error",
            "tolerance",
            "err/tol",
            "status",
        }
        # INFO rows (measured times against a cost model: the scaling report only) are shown,
        # not counted
        info = df["status"] == "INFO"
        assert not info.any() or csv.name == "scaling.csv", csv
        failed = df.loc[
            ~info & (df["status"] != "PASS"), ["case", "check", "rel. error", "tolerance"]
        ]
        assert failed.empty, f"{csv.name}:\n{failed.to_string()}"
        assert (df.loc[~info, "err/tol"] <= 1).all(), csv
        counted = df.loc[~info]
        rows += list(
            zip(
                counted["case"],
                counted["check"],
                counted["reference"],
                counted["computed"],
                strict=True,
            )
        )
    assert len(rows) == len(set(rows))  # every check once, in one report
    n_csv = len(_quick_cases()) + 4 + len(NEW_REPORTS) + len(MECH_REPORTS)
    assert len(list((rep / "checks").glob("*.csv"))) == n_csv
    for name, least in (
        ("integrators", 5),
        ("defects", 1),
        ("identification", 5),
        ("scaling", 3),
        ("mechanisms", 20),
        ("contact", 9),
        ("flagship", 4),
        ("nonsmooth", 3),
    ):
        assert len(pd.read_csv(rep / "checks" / f"{name}.csv")) >= least, name
    index = (rep / "index.html").read_text()
    m = re.search(r"Overall: (\d+) of (\d+) distinct checks PASS", index)
    assert m and m.group(1) == m.group(2) == str(len(rows)), m
    assert "(0 repeated rows found" in index
    audit = pd.read_csv(rep / "seed_audit.csv")
    assert set(audit["verdict"]) <= {"holds", "wrong", "conservative", "not checkable"}
    assert {"holds", "wrong"} <= set(audit["verdict"])
    for page in pages[1:]:
        assert str(page.relative_to(rep)) in index
    validation = (rep / "validation.html").read_text()
    assert "PASS" in validation and "status" in validation
    # every page opens with its headline box; no truncated frame, no warning in the output
    for page in pages:
        text = re.sub(
            r"data:image/png;base64,[A-Za-z0-9+/=]+|<(style|script).*?</(style|script)>",
            "",
            page.read_text(),
            flags=re.S,
        )
        assert "Question." in text, page
        assert not re.search(r"\d+ rows × \d+ columns", text), page
        assert not re.search(r"(?i)warning", text), page
    defects = pd.read_csv(rep / "checks" / "defects.csv")
    beat = defects[defects["case"] == "synthetic"]
    assert len(beat) == 4 and (beat["status"] == "PASS").all()
    for case in _quick_cases():
        assert (rep / "figures" / case / "tip_history.png").stat().st_size > 5000
        assert (rep / "figures" / case / "response.png").stat().st_size > 5000
    for name, fig in (
        ("integrators", "tip_histories"),
        ("defects", "curvature"),
        ("defects", "beat_control"),
        ("comparison", "tip_all"),
        ("comparison", "profiles"),
        ("identification", "truth_vs_estimate"),
        ("scaling", "cost"),
    ):
        assert (rep / "figures" / name / f"{fig}.png").stat().st_size > 5000


@pytest.mark.pipeline
def test_second_run_has_nothing_to_do(quick_run):
    args = ("--cores", "2", "--configfile", "config/quick.yaml")
    # dry run first: if anything is pending (e.g. the package source was edited meanwhile, which
    # changes the fingerprint in the params), fail with the reasons instead of re-running
    dry = snakemake(quick_run, "-n", *args, timeout=120)
    assert dry.returncode == 0, output_tail(dry)
    assert "Nothing to be done" in dry.stdout + dry.stderr, output_tail(dry)
    res = snakemake(quick_run, *args, timeout=120)
    assert res.returncode == 0, output_tail(res)
    assert "Nothing to be done" in res.stdout + res.stderr, output_tail(res)


@pytest.mark.pipeline
def test_snakemake_report(quick_run):
    res = snakemake(
        quick_run, "--configfile", "config/quick.yaml", "--report", "report.html", timeout=300
    )
    assert res.returncode == 0, output_tail(res)
    page = (quick_run / "report.html").read_text(errors="replace")
    assert len(page) > 100_000
    for needle in (
        "Figures",
        "Reports",
        "Checks",
        "index.html",
        "tip_history.png",
        "summary.csv",
        "case_uniform.csv",
        "validation.csv",
    ):
        assert needle in page, needle
    # the landing page (workflow/report/workflow.rst) and captions of each kind of output
    # (docutils renders the RST, so ``x`` becomes markup: look for plain words)
    for needle in (
        "What the pipeline computes.",
        "How to read it.",
        "tip deflection of the undamped explicit run released from the stress-free shape",
        "Start here: the index of every report page",
        "Table of checks written by rule",
        "Parameter record: one row per case",
        "Numbers quoted by the seed documents against the computation",
    ):
        assert needle in page, needle
    # every figure has a caption of its own (workflow/report/captions/figures/REPORT/FIG.rst)
    assert "no caption of its own yet" not in page


def test_every_report_output_has_a_caption():
    """Each ``report(...)`` in the rule files names a caption, and every caption file named
    literally exists (the per-figure ones are checked by the report build above)."""
    captions = ROOT / "workflow" / "report"
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        blocks = re.findall(r"report\((.*?)\n\s*\)", text, flags=re.S)
        for block in blocks:
            assert "caption=" in block, (smk.name, block[:200])
        for rel in re.findall(r'caption="\.\./report/([^"{]+)"', text):
            assert (captions / rel).is_file(), (smk.name, rel)
    assert (captions / "workflow.rst").is_file()
    assert 'report: "workflow/report/workflow.rst"' in (ROOT / "Snakefile").read_text()


@pytest.mark.pipeline
def test_quick_pipeline_ro_crate(quick_run):
    """results/ro-crate-metadata.json: a Workflow Run Crate that roc-validator accepts, listing
    the config file, the resolved cases, every NetCDF result, every report page and table of
    checks, the software versions and the git commit."""
    rocrate_offline = pytest.importorskip("rocrate_offline")
    pytest.importorskip("rocrate_validator")
    from ancf_beam.io import git_commit

    res = quick_run / "results"
    metadata = json.loads((res / "ro-crate-metadata.json").read_text())
    assert rocrate_offline.unmapped_terms(metadata) == set()
    passed, issues = rocrate_offline.validate_crate(res)
    assert passed, "\n".join(issues)

    g = {e["@id"]: e for e in metadata["@graph"]}

    def ids(v):
        return {x["@id"] for x in (v if isinstance(v, list) else [v])}

    root = g["./"]
    action = g[next(iter(ids(root["mentions"])))]
    assert action["@type"] == "CreateAction"
    assert action["startTime"] <= action["endTime"]
    wf = g[root["mainEntity"]["@id"]]
    assert root["mainEntity"]["@id"] == "run/Snakefile" and (res / "run" / "Snakefile").is_file()
    assert wf["version"] == git_commit()
    assert {
        "run/workflow/rules/provenance.smk",
        "run/workflow/scripts/ro_crate.py",
        "run/workflow/report/workflow.rst",
    } <= ids(wf["hasPart"])

    objects, results = ids(action["object"]), ids(action["result"])
    assert objects == {"run/config/quick.yaml", "run/resolved_cases.json"}
    resolved = json.loads((res / "run" / "resolved_cases.json").read_text())
    quick = load_config(QUICK)
    assert list(resolved["cases"]) == _quick_cases()
    for name, entry in resolved["cases"].items():
        assert entry["config_hash"] == resolve_case(quick, name).config_hash, name
        assert entry["resolved"]["defect"] == resolve_case(quick, name).resolved["defect"], name
    assert list(resolved["mechanisms"]) == mechanism_names(quick)
    for name, entry in resolved["mechanisms"].items():
        assert entry["config_hash"] == resolve_mechanism(quick, name).config_hash, name
    nc = {p.relative_to(res).as_posix() for p in res.rglob("*.nc")}
    assert nc and not any(p.startswith("run/") for p in nc)
    assert nc <= results, sorted(nc - results)
    assert "summary.csv" in results
    rep = quick_run / "reports"
    pages = {p.relative_to(quick_run).as_posix() for p in rep.rglob("*.html")}
    pages |= {p.relative_to(quick_run).as_posix() for p in (rep / "checks").glob("*.csv")}
    assert pages and {f"run/{p}" for p in pages} <= results
    for rel in results | objects:
        assert (res / rel).is_file(), rel

    apps = {
        g[i]["name"]: g[i]["softwareVersion"]
        for i in ids(action["instrument"])
        if i in g and g[i]["@type"] == "SoftwareApplication"
    }
    assert apps["numpy"] == np.__version__
    assert apps["xarray"] == xr.__version__
    for name in ("python", "scipy", "numba", "snakemake", "ancf-beam"):
        assert apps.get(name, "not installed") != "not installed", name


def _dry_run_jobs(text: str) -> list[tuple[str, str]]:
    """(rule, output line) of every job listed by ``snakemake -n``."""
    jobs = []
    rule = None
    for line in text.splitlines():
        m = re.match(r"^(?:local)?(?:checkpoint|rule) (\w+):", line)
        if m:
            rule = m.group(1)
            if rule == "all":
                jobs.append((rule, ""))
                rule = None
            continue
        m = re.match(r"^\s+output: (.*)$", line)
        if m and rule:
            jobs.append((rule, m.group(1)))
            rule = None
    return jobs


def _dry_run_inputs(text: str) -> list[tuple[str, list[str], str]]:
    """(rule, inputs, output line) of every job listed by ``snakemake -n``."""
    jobs = []
    rule, inputs = None, []
    for line in text.splitlines():
        m = re.match(r"^(?:local)?(?:checkpoint|rule) (\w+):", line)
        if m:
            rule, inputs = m.group(1), []
            continue
        m = re.match(r"^\s+input: (.*)$", line)
        if m and rule:
            inputs = [x.strip() for x in m.group(1).split(",")]
            continue
        m = re.match(r"^\s+output: (.*)$", line)
        if m and rule:
            jobs.append((rule, inputs, m.group(1)))
            rule = None
    return jobs


def test_kernels_are_compiled_once_before_every_kernel_job(tmp_path):
    """From nothing, the dry run holds one compile_kernels job per group of kernels (records
    keyed by the kernel cache's digest; beam_static before the others, which then run side by
    side) and every job of a rule that runs kernels takes the records of the groups it uses as
    input, so it starts after their compilation; the rules left out only read results."""
    copy_workflow(tmp_path)
    res = snakemake(
        tmp_path, "-n", "--cores", "2", "--configfile", "config/quick.yaml", timeout=120
    )
    assert res.returncode == 0, output_tail(res)
    jobs = _dry_run_inputs(res.stdout + res.stderr)
    record = {g: f"results/kernels/{source_digest()}/{g}.json" for g in GROUPS}
    compiles = sorted((o, i) for r, i, o in jobs if r == "compile_kernels")
    first = [record["beam_static"]]
    assert compiles == sorted((record[g], [] if g == "beam_static" else first) for g in GROUPS), (
        compiles
    )
    rules = {r for r, _, _ in jobs}
    assert KERNEL_RULES <= rules, KERNEL_RULES - rules
    for rule, inputs, out in jobs:
        if rule in KERNEL_RULES:
            want = ["beam_static", "mbs" if rule.startswith("mechanism") else "beam_dynamics"]
            for g in want:
                assert record[g] in inputs, (rule, out, g, inputs)
    readers = {r for r in rules if r.startswith("report_")} | {"collect", "ro_crate", "all"}
    assert rules - KERNEL_RULES - {"compile_kernels"} <= readers - KERNEL_RULES


@pytest.mark.pipeline
def test_added_case_schedules_only_its_jobs(quick_run):
    cfg = yaml.safe_load(QUICK.read_text())
    new = "lam0.4_n3"
    cfg["cases"][new] = {"defect": {"lam": 0.4, "n": 3.0}}
    (quick_run / "config" / "plus.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = snakemake(
        quick_run, "-n", "--cores", "2", "--configfile", "config/plus.yaml", timeout=120
    )
    assert res.returncode == 0, output_tail(res)
    jobs = _dry_run_jobs(res.stdout + res.stderr)
    assert jobs, output_tail(res)
    per_case = [(r, out) for r, out in jobs if r in PER_CASE_RULES]
    other = {r for r, _ in jobs if r not in PER_CASE_RULES}
    assert other <= AGGREGATE_RULES, other
    for rule, out in per_case:
        assert re.search(rf"(/|_){re.escape(new)}(/|\.|$)", out), (rule, out)
    counts = pd.Series([r for r, _ in per_case]).value_counts().to_dict()
    assert counts == {
        "critical_dt": 1,
        "static": 1,
        "modal": 1,
        "simulate": 1,
        "mesh_convergence": 1,
        "validation": 1,
        "response": 1,
        "report_case": 1,
    }
    # one critical_dt job writes every mesh of the study for the new case
    text = res.stdout + res.stderr
    for ne in cfg["pipeline"]["critical_dt"]["meshes"]:
        assert f"results/{new}/critical_dt/ne{ne}.nc" in text


def _four_bar_block() -> dict:
    """The default config's four-bar, a general mechanism, shortened to a tenth of a turn."""
    block = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["mechanisms"]["four_bar"]
    return {**block, "t_end": 0.006}


@pytest.mark.pipeline
@pytest.mark.parametrize("kind", ["slider-crank", "general"])
def test_added_mechanism_schedules_only_its_jobs(quick_run, kind):
    """A mechanism case is one YAML block (a preset kind or ``kind: general``): the dry run
    lists its run, its checks, its animation and page, and the aggregates that show them (the
    mechanisms report, the index) or record them (the run's RO-Crate), nothing else."""
    cfg = yaml.safe_load(QUICK.read_text())
    if kind == "general":
        new, block = "four_bar_added", _four_bar_block()
    else:
        new = "slider_crank_slow"
        block = {**cfg["mechanisms"]["slider_crank_rigid"], "drive": {"omega": 100.0}}
    cfg["mechanisms"][new] = block
    (quick_run / "config" / "mplus.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = snakemake(
        quick_run, "-n", "--cores", "2", "--configfile", "config/mplus.yaml", timeout=120
    )
    assert res.returncode == 0, output_tail(res)
    jobs = _dry_run_jobs(res.stdout + res.stderr)
    assert sorted(r for r, _ in jobs) == sorted(
        [
            "mechanism",
            "mechanism_validation",
            "mechanism_animation",
            "report_mechanism_case",
            "report_mechanisms",
            "report_index",
            "ro_crate",
            "all",
        ]
    ), output_tail(res)
    for rule, out in jobs:
        if rule.startswith("mechanism") or rule == "report_mechanism_case":
            assert new in out, (rule, out)


# ------------------------------------------------------------------------------------------
# lint and format
# ------------------------------------------------------------------------------------------
def test_snakemake_lint_is_clean(tmp_path):
    copy_workflow(tmp_path)
    res = snakemake(tmp_path, "--lint", "--configfile", "config/quick.yaml", timeout=120)
    assert res.returncode == 0, output_tail(res)
    assert "Lints for" not in res.stdout + res.stderr, output_tail(res)


def test_rule_files_are_snakefmt_formatted():
    pytest.importorskip("snakefmt")
    files = [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
    res = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
