"""The mechanisms: config section and the `ancf-beam mechanism` command: validation errors that
name the key, value and range; JSON fields; NetCDF histories with provenance; exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import xarray as xr

from ancf_beam import schema
from ancf_beam.cli import main
from ancf_beam.config import (
    BEAM_CASE_SECTIONS,
    MECHANISM_KINDS,
    RULES,
    ConfigError,
    flatten,
    load_config,
    mechanism_names,
    resolve_case,
    resolve_mechanism,
    validate_config,
)
from ancf_beam.config.mechanisms import KIND_NODES
from ancf_beam.schema import SCHEMA

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = [ROOT / "config" / "config.yaml", ROOT / "config" / "quick.yaml"]


EPS = float(np.finfo(float).eps)


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_configs_with_mechanisms_validate_and_resolve(path):
    cfg = load_config(path)
    jsonschema.validate(cfg, SCHEMA)  # the package's schema, read by jsonschema directly
    validate_config(cfg)  # the library's reading of it
    assert mechanism_names(cfg)
    for name in mechanism_names(cfg):
        spec = resolve_mechanism(cfg, name)
        assert spec.kind in MECHANISM_KINDS and spec.t_end > 0
    for case in cfg.get("cases") or {}:  # the cantilever cases still resolve beside them
        resolve_case(cfg, case)


def _schema_leaves(node, value, prefix=""):
    """Leaf keys with a default of a schema node, in the branches that apply to ``value``."""
    node = schema.resolve(node)
    if node.get("type") != "object" or "default" in node:
        return {prefix[:-1]} if "default" in node else set()
    keys = set()
    for k, sub in schema.properties(node, value).items():
        keys |= _schema_leaves(sub, (value or {}).get(k), f"{prefix}{k}.")
    return keys


def _in_beam_case(key):
    parts = key.split(".")
    return parts[0] in BEAM_CASE_SECTIONS or parts[0] == "rod" and parts[1] in BEAM_CASE_SECTIONS


@pytest.mark.parametrize(
    "block",
    [
        {"kind": "pendulum"},
        {"kind": "slider-crank"},
        {"kind": "slider-crank", "rod": {"model": "ancf"}},
        {"kind": "two-body"},
    ],
)
def test_a_mechanism_resolves_exactly_the_schema_keys_and_defaults(block):
    """One home: a mechanism given only its kind resolves to the schema's keys and defaults,
    nothing more; its beam (pendulum, ANCF rod) to the keys of a beam case."""
    spec = resolve_mechanism({"mechanisms": {"m": block}}, "m")
    got = {k: v for k, v in flatten(spec.resolved).items() if not _in_beam_case(k)}
    kind_node = schema.node(KIND_NODES[block["kind"]])
    leaves = {k for k in _schema_leaves(kind_node, spec.resolved) if not _in_beam_case(k)}
    assert set(got) - {"kind", "rod.model", "contact.law", "contact.k", "contact.c"} == leaves - {
        "contact",
        "rod.model",
    }
    for key in leaves - {"contact", "rod.model"}:
        node = schema.resolve(kind_node)
        value = spec.resolved
        for part in key.split("."):
            node = schema.resolve(schema.properties(node, value)[part])
            value = value[part]
        assert got[key] == node["default"], key
    if spec.beam is not None:
        case_keys = {k for k in RULES if k.split(".")[0] in BEAM_CASE_SECTIONS}
        beam_keys = {k.removeprefix("rod.") for k in flatten(spec.resolved) if _in_beam_case(k)}
        assert beam_keys == case_keys


def test_config_yaml_holds_the_issue_cases():
    cfg = load_config(CONFIGS[0])
    rigid = resolve_mechanism(cfg, "slider_crank_rigid")
    assert (rigid.crank.length, rigid.crank.mass, rigid.crank.inertia) == (0.05, 0.30, 1e-5)
    assert (rigid.rod.length, rigid.rod.mass, rigid.rod.inertia) == (0.12, 0.21, 2.5e-4)
    # 5000 rpm in rad/s, the config's 16 digits: its last digit's round-off
    assert rigid.slider.mass == 0.14 and rigid.omega == pytest.approx(
        5000 * 3.141592653589793 / 30, rel=4 * EPS
    )
    flex = resolve_mechanism(cfg, "slider_crank_flexible")
    b = flex.beam
    assert flex.rod_model == "ancf" and b.mesh.n_elements == 8
    # the side 6.700746e-3 m is sqrt(4.49e-5) to 7 digits: the area to 1e-7 relative
    assert b.beam.width * b.beam.height == pytest.approx(4.49e-5, rel=2e-7)
    assert (b.material.E0, b.material.rho, flex.omega) == (7.0e10, 2770.0, 150.0)
    pend = resolve_mechanism(cfg, "pendulum_berzeri")
    assert pend.beam.beam.width * pend.beam.beam.height == pytest.approx(0.0018, rel=4 * EPS)
    assert pend.beam.material.E0 == 0.7e6 and pend.beam.load.g == pend.g == 9.81


@pytest.mark.parametrize(
    "name, overrides, message",
    [
        (
            "r",
            {"kind": "four-bar"},
            "'mechanisms.r.kind' = 'four-bar' is invalid: expected one "
            "of pendulum, slider-crank, two-body",
        ),
        ("r", {"t_end": -1}, "'mechanisms.r.t_end' = -1 is invalid: expected a number > 0 (s)"),
        (
            "r",
            {"rod.length": 0.01},
            "'mechanisms.r.rod.length' = 0.01 is invalid: expected a rod "
            "longer than the crank (crank.length = 0.05 m)",
        ),
        (
            "r",
            {"solver.rho_inf": 2},
            "'mechanisms.r.solver.rho_inf' = 2 is invalid: expected a number in [0, 1]",
        ),
        ("r", {"integrator": "rk4"}, "'mechanisms.r.integrator' = 'rk4' is invalid"),
        ("r", {"clearance": 0.1}, "'mechanisms.r.clearance' = 0.1 is invalid: expected null"),
        ("r", {"drive.speed": 1}, "unknown config key 'drive.speed' (allowed here: omega)"),
        (
            "f",
            {"rod.defect.lam": 1.5},
            "mechanisms.f.rod: config key 'defect.lam' = 1.5 is "
            "invalid: expected a number in [0, 1)",
        ),
        (
            "f",
            {"rod.mesh.n_elements": 0},
            "'mesh.n_elements' = 0 is invalid: expected an integer in [1, 10000]",
        ),
        ("p", {"crank.length": 1.0}, "unknown config key 'crank'"),
        ("p", {"load.g": 1.0}, "unknown config key 'load'"),
        ("nope", {}, "unknown mechanism 'nope' (available mechanisms: r, f, p)"),
    ],
)
def test_bad_mechanism_input_names_the_key(name, overrides, message):
    cfg = {
        "mechanisms": {
            "r": {"kind": "slider-crank"},
            "f": {"kind": "slider-crank", "rod": {"model": "ancf", "beam": {"length": 0.3}}},
            "p": {"kind": "pendulum"},
        }
    }
    with pytest.raises(ConfigError) as info:
        resolve_mechanism(cfg, name, overrides)
    assert message in str(info.value)


def test_unknown_top_level_key_lists_mechanisms():
    with pytest.raises(ConfigError, match="allowed here: .*mechanisms"):
        resolve_case({"mechanism": {}})


def test_cli_slider_crank_json_and_netcdf(capsys, tmp_path):
    out = tmp_path / "sc.nc"
    code, text, _ = run_cli(
        capsys,
        "mechanism",
        "--case",
        "slider_crank_rigid",
        "--t-end",
        "0.003",
        "--json",
        "--out",
        str(out),
        "-q",
    )
    assert code == 0
    d = json.loads(text)
    for key in (
        "kind",
        "t_end",
        "steps",
        "wall_s",
        "max_constraint_violation",
        "energy_drift_rel",
        "slider_x",
        "slider_v",
        "slider_a",
        "slider_a_max",
        "slider_a_min",
        "drive_torque_max",
        "reaction_max",
    ):
        assert key in d, key
    # the last sample, 300 x 1e-5 s: a few ulps
    assert d["kind"] == "slider-crank" and d["t_end"] == pytest.approx(0.003, rel=4 * EPS)
    assert d["energy_drift_rel"] is None  # the drive feeds work in
    assert d["slider_a_min"] < 0 < d["slider_a_max"]
    # index-1 with Baumgarte (alpha = beta = 1000 /s): the violation is the positions' local
    # error per step, atol + rtol max|q| (1e-12 + 1e-10 x 0.17 m), over the steps within
    # Baumgarte's relaxation time 1 / alpha (mean step t_end / steps), with |Phi_q| <= 2
    local = 1e-12 + 1e-10 * 0.17
    steps_relax = max(1.0, 1e-3 / (0.003 / d["steps"]))
    assert d["max_constraint_violation"] <= 2 * local * steps_relax
    ds = xr.open_dataset(out)
    for var in (
        "slider_x",
        "slider_v",
        "slider_a",
        "crank_angle",
        "drive_torque",
        "constraint_violation",
        "reaction_force",
    ):
        assert var in ds and "units" in ds[var].attrs, var
    assert list(ds["joint"].values) == ["pivot", "crank_pin", "wrist_pin", "slider_guide"]
    assert ds.attrs["case"] == "slider_crank_rigid" and ds.attrs["study"] == "mechanism"
    assert ds.attrs["param.crank.length"] == 0.05 and len(ds.attrs["config_hash"]) == 16
    assert float(ds["slider_x"][-1]) == d["slider_x"]  # the same number


def test_cli_pendulum_and_flexible_rod_fields(capsys, tmp_path):
    code, text, _ = run_cli(
        capsys, "mechanism", "--case", "pendulum_berzeri", "--t-end", "0.2", "--json", "-q"
    )
    d = json.loads(text)
    assert code == 0 and d["kind"] == "pendulum" and d["steps"] == 200
    # generalized-alpha's energy error: estimated from the run at dt / 2 (Richardson, second
    # order) x 2
    code, text, _ = run_cli(
        capsys,
        "mechanism",
        "--case",
        "pendulum_berzeri",
        "--t-end",
        "0.2",
        "--set",
        "solver.dt=5e-4",
        "--json",
        "-q",
    )
    half = json.loads(text)
    est = abs(d["energy_drift_rel"] - half["energy_drift_rel"]) * 4 / 3
    assert d["tip_y"] < -0.05 and 0.0 <= d["energy_drift_rel"] <= 2 * est
    out = tmp_path / "flex.nc"
    code, text, _ = run_cli(
        capsys,
        "mechanism",
        "--case",
        "slider_crank_flexible",
        "--set",
        "t_end=0.01",
        "--set",
        "rod.mesh.n_elements=4",
        "--json",
        "--out",
        str(out),
        "-q",
    )
    d = json.loads(text)
    assert code == 0 and d["midspan_deflection_max"] > 0
    ds = xr.open_dataset(out)
    assert ds.attrs["param.rod.mesh.n_elements"] == 4
    assert ds["midspan_deflection"].attrs["units"] == "m"


def test_cli_errors_exit_codes_and_no_file(capsys, tmp_path):
    out = tmp_path / "x.nc"
    code, _, err = run_cli(
        capsys,
        "mechanism",
        "--case",
        "slider_crank_rigid",
        "--set",
        "rod.length=0.04",
        "--out",
        str(out),
    )
    assert code == 2 and "rod.length" in err and "0.04" in err and not out.exists()
    code, _, err = run_cli(capsys, "mechanism", "--case", "no_such", "--out", str(out))
    assert code == 2 and "unknown mechanism 'no_such'" in err
    # a solver failure: explicit step far above the critical one
    code, _, err = run_cli(
        capsys,
        "mechanism",
        "--case",
        "pendulum_berzeri",
        "--integrator",
        "central-difference",
        "--set",
        "solver.dt=0.05",
        "--out",
        str(out),
    )
    assert code == 1 and "unstable at step" in err and "element bound" in err
    assert not out.exists()
    with pytest.raises(SystemExit) as info:  # --case is required
        main(["mechanism", "--json"])
    assert info.value.code == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["--integrator", "central-difference"],  # was: the whole run, then exit 1 (no episodes)
        ["--set", "integrator=central-difference"],
    ],
)
def test_clearance_with_central_differences_is_refused_before_the_run(capsys, tmp_path, argv):
    """A clearance joint's outputs are its contact episodes, which central differences do not
    record: the run is refused up front (exit 2, nothing written), naming the integrator."""
    out = tmp_path / "m.nc"
    args = ["mechanism", "--config", str(CONFIGS[1]), "--case", "slider_crank_clearance"]
    code, _, err = run_cli(capsys, *args, *argv, "--out", str(out), "--quiet")
    assert code == 2, err
    assert "'central-difference' is invalid" in err and "generalized-alpha" in err, err
    assert not list(tmp_path.iterdir())
