"""The ancf-beam command line: JSON fields, NetCDF output with provenance, bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from ancf_beam.cli import main
from conftest import BETA_L, EI, RHOA, L, Q


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_static_json(capsys):
    code, out, _ = run_cli(capsys, "static", "--json", "--set", "mesh.n_elements=20")
    assert code == 0
    d = json.loads(out)
    # nonlinear tip vs the linear closed form: the geometric nonlinearity, measured 1.6e-6,
    # limits the comparison (tolerance 1.6e-5); the tip moves in by 1.1e-6 m (tol. 1e-5 m)
    assert d["tip_y"] == pytest.approx(-Q * L**4 / (8 * EI), rel=1.6e-5)
    assert d["tip_x"] == pytest.approx(L, abs=1e-5)
    assert d["tip_angle_deg"] < 0
    assert isinstance(d["newton_iterations"], int)


def test_modal_json(capsys):
    code, out, _ = run_cli(capsys, "modal", "--json", "--set", "mesh.n_elements=40")
    d = json.loads(out)
    exact = BETA_L**2 * np.sqrt(EI / RHOA) / L**2
    # 40 elements vs the closed form (6-digit roots): measured 1.1e-6; tolerance 1e-5
    np.testing.assert_allclose(d["omega"], exact, rtol=1e-5)
    np.testing.assert_allclose(d["frequency_hz"], exact / (2 * np.pi), rtol=1e-5)


def test_static_and_modal_json_on_a_fine_mesh(capsys):
    """2000 elements: static returned the unloaded start (tip_y 0, 0 iterations) and modal
    omega_1 = 98.49 rad/s. Tip vs the linear closed form: limited by the geometric
    nonlinearity, measured 1.6e-6 (tolerance 1.6e-5); omega_1..3 vs the closed form: measured
    1.6e-11 (tolerance 2e-10)."""
    over = ("--set", "mesh.n_elements=2000")
    code, out, _ = run_cli(capsys, "static", "--json", *over)
    d = json.loads(out)
    assert code == 0 and d["newton_iterations"] >= 1
    assert d["tip_y"] == pytest.approx(-Q * L**4 / (8 * EI), rel=1.6e-5)
    code, out, _ = run_cli(capsys, "modal", "--json", "--modes", "3", *over)
    beta_l = np.array([1.875104068711961, 4.694091132974175, 7.854757438237613])  # to 1e-15
    exact = beta_l**2 * np.sqrt(EI / RHOA) / L**2
    np.testing.assert_allclose(json.loads(out)["omega"], exact, rtol=2e-10)


def test_stepped_json_and_segments(capsys):
    code, out, _ = run_cli(capsys, "stepped", "--json", "--segments", "10")
    d = json.loads(out)
    assert code == 0
    # the stepped uniform beam is exact: measured 1.3e-15; tolerance 1e-12
    assert d["tip_deflection"] == pytest.approx(-Q * L**4 / (8 * EI), rel=1e-12)
    assert d["tip_slope"] == pytest.approx(-Q * L**3 / (6 * EI), rel=1e-12)
    # against the 6-digit root 1.875104: its rounding (7.3e-8) limits the comparison
    assert d["omega"][0] == pytest.approx(BETA_L[0] ** 2 * np.sqrt(EI / RHOA), rel=1e-6)
    assert d["segments"] == 10


def test_out_writes_netcdf_with_provenance(capsys, tmp_path):
    out = tmp_path / "static.nc"
    code, _, _ = run_cli(capsys, "static", "--case", "lam0.3_n1", "--out", str(out), "--json")
    assert code == 0
    ds = xr.open_dataset(out)
    assert ds.attrs["case"] == "lam0.3_n1"
    assert ds.attrs["param.defect.lam"] == 0.3
    assert ds.attrs["package_version"]
    assert len(ds.attrs["config_hash"]) == 16
    assert "git_commit" in ds.attrs
    assert ds["tip_y"].attrs["units"] == "m"
    ds.close()


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--set", "defect.lam=1.5"], "defect.lam"),
        (["--set", "defect.n=0"], "defect.n"),
        (["--set", "beam.length=-1"], "beam.length"),
        (["--set", "material.E0=0"], "material.E0"),
        (["--set", "mesh.n_elements=0"], "mesh.n_elements"),
        (["--set", "mesh.n_elemnts=4"], "mesh.n_elemnts"),
        (["--set", "defect.mapping=spline"], "defect.mapping"),
        (["--case", "no_such_case"], "no_such_case"),
    ],
)
def test_bad_input_errors_and_writes_nothing(capsys, tmp_path, args, needle):
    out = tmp_path / "x.nc"
    code, stdout, err = run_cli(capsys, "static", "--json", "--out", str(out), *args)
    assert code != 0
    assert needle in err
    assert stdout == ""
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_console_script_help_and_exit_code():
    r = subprocess.run(
        [sys.executable, "-m", "ancf_beam.cli", "--help"], capture_output=True, text=True
    )
    assert r.returncode == 0
    for cmd in ["static", "modal", "stepped"]:
        assert cmd in r.stdout
    r = subprocess.run(
        [sys.executable, "-m", "ancf_beam.cli", "static", "--set", "defect.lam=1.5"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert "defect.lam" in r.stderr and r.stdout == ""


def test_identify_cli_recovers_defect_and_rejects_bad_input(capsys):
    # data: an 80-element model; estimator: the default 20 elements (no inverse crime).
    # Measured |error| 1.1e-4 (lam), 3.0e-4 (n); tolerance 1e-3 and 3e-3
    code, out, _ = run_cli(
        capsys,
        "modal",
        "--json",
        "--set",
        "defect.lam=0.45",
        "--set",
        "defect.n=1.5",
        "--set",
        "mesh.n_elements=80",
    )
    omega = json.loads(out)["omega"]
    code, out, _ = run_cli(capsys, "identify", "--json", "--omega", *map(str, omega))
    d = json.loads(out)
    assert code == 0 and d["identifiable"] is True
    assert abs(d["lam"] - 0.45) < 1e-3 and abs(d["n"] - 1.5) < 3e-3
    for k in ["lam_std", "n_std", "residual"]:
        assert d[k] is not None and d[k] >= 0
    code, out, _ = run_cli(capsys, "identify", "--json", "--omega", str(omega[0]))
    assert code == 0 and json.loads(out)["identifiable"] is False
    code, out, err = run_cli(capsys, "identify", "--json", "--omega", "600", "100")
    assert code == 2 and out == "" and "ascending" in err
