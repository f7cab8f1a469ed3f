"""Bad input everywhere: each row one clear message naming the key, option or file, exit 2
(bad input) or 1 (solver or write failure), and no file written (issues 12 and 17)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from ancf_beam.cli import EXIT_FAILURE, EXIT_USAGE, main
from ancf_beam.config import ConfigError, case_from_file, load_config
from ancf_beam.io import InputFileError, read_netcdf, remove_stale_temporaries, write_netcdf

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "config.yaml"


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------------
# the bad-input matrix: every case section, out of range / wrong type / NaN / inf
# --------------------------------------------------------------------------------------------
#: (--set KEY=VALUE, text the message must contain besides the key)
CASE_ROWS = [
    ("beam.length=1e-300", "[0.001, 1000]"),  # was accepted: NaN fields, exit 0
    ("beam.length=abc", "'abc'"),
    ("beam.length=.nan", "nan"),
    ("beam.length=1e9", "1000000000.0"),
    ("beam.width=0", "[1e-06, 10]"),
    ("beam.height=.inf", "inf"),
    ("material.E0=-1", "-1"),
    ("material.E0=[1]", "[1]"),
    ("material.E0=1e30", "[1000, 1e+15]"),
    ("material.rho=.nan", "nan"),
    ("material.rho=1e-300", "[1, 100000]"),
    ("defect.lam=1.5", "[0, 1)"),
    ("defect.lam=true", "True"),
    ("defect.n=.inf", "inf"),
    ("defect.n=0", "> 0"),
    ("defect.mapping=staircase", "gauss"),
    ("defect.table=[[0,1],[0.5,1]]", "x/L"),
    ("defect.rho.lam=-0.1", "-0.1"),
    ("defect.height.n=.nan", "nan"),
    ("mesh.n_elements=0", "[1, 10000]"),
    ("mesh.n_elements=2.5", "2.5"),
    ("mesh.n_elements=1000000", "[1, 10000]"),
    ("mesh.n_gauss_axial=1", "[2, 10]"),  # was accepted: singular stiffness, exit 1
    ("mesh.n_gauss_bending=1", "[2, 10]"),  # was accepted: singular stiffness
    ("mesh.n_gauss_axial=11", "[2, 10]"),
    ("mesh.strain=quadratic", "nonlinear"),
    ("load.g=-9.81", "-9.81"),
    ("load.g=.inf", "inf"),
    ("static.rtol=0.5", "(0, 0.01]"),
    ("static.load_steps=0", ">= 1"),
    ("modal.n_modes=0", ">= 1"),
    ("modal.n_modes=1000", "[1, 80]"),  # was accepted: 80 modes returned
    ("modal.about=deformed", "reference"),
    ("stepped.segments=0", "[1, 100000]"),
    ("dynamics.t_end=.inf", "inf"),
    ("dynamics.t_end=-1", "-1"),
    ("dynamics.dt=.nan", "nan"),
    ("dynamics.dt_safety=1.5", "(0, 1]"),
    ("dynamics.damping_alpha=-1", ">= 0"),
    ("dynamics.sample_dt=abc", "'abc'"),
    ("dynamics.integrator=rk4", "central-difference"),
    ("dynamics.rho_inf=2", "[0, 1]"),
    ("imperfection.kappa0=1e6", "|kappa0| <= 2 1/m"),  # was accepted
    ("imperfection.kappa0=.nan", "nan"),
    ("imperfection.tip_offset=2", "|tip_offset| < 0.708073 m"),  # was exit 1
    ("imperfection.tip_offset=.inf", "inf"),
    ("imperfection.profile=cubic", "uniform"),
    ("damage.enabled=maybe", "true or false"),
    ("damage.d_max=1", "[0, 1)"),
    ("damage.threshold=.nan", "nan"),
    ("beam.lenght=1", "allowed here"),
]


@pytest.mark.parametrize(("setting", "text"), CASE_ROWS, ids=[r[0] for r in CASE_ROWS])
def test_bad_case_value_exit_2_names_key_no_file(capsys, tmp_path, setting, text):
    out = tmp_path / "r.nc"
    key = setting.split("=", 1)[0]
    code, stdout, err = run(
        capsys, ["static", "--config", str(CONFIG), "--set", setting, "--out", str(out)]
    )
    assert code == EXIT_USAGE, err
    assert key in err and text in err, err
    assert stdout == ""
    assert not list(tmp_path.iterdir())


#: (mechanism, --set KEY=VALUE, text of the message)
MECHANISM_ROWS = [
    ("slider_crank_rigid", "t_end=.nan", "mechanisms.slider_crank_rigid.t_end"),
    ("slider_crank_rigid", "drive.omega=.inf", "mechanisms.slider_crank_rigid.drive.omega"),
    ("slider_crank_rigid", "crank.length=-1", "mechanisms.slider_crank_rigid.crank.length"),
    ("slider_crank_rigid", "solver.dt=abc", "mechanisms.slider_crank_rigid.solver.dt"),
    ("slider_crank_rigid", "baumgarte.alpha=.nan", "baumgarte.alpha"),
    ("slider_crank_flexible", "rod.beam.length=1e9", "beam.length"),
    ("slider_crank_flexible", "rod.mesh.n_gauss_axial=1", "mesh.n_gauss_axial"),
    ("pendulum_berzeri", "imperfection.kappa0=1e6", "imperfection.kappa0"),
    # the discs would overlap by 0.033 m, beyond half their radii sum (0.01 m)
    ("impact_seed003", "v_rel=100", "mechanisms.impact_seed003.v_rel"),
]


@pytest.mark.parametrize(
    ("name", "setting", "text"), MECHANISM_ROWS, ids=[f"{r[0]}:{r[1]}" for r in MECHANISM_ROWS]
)
def test_bad_mechanism_value_exit_2(capsys, tmp_path, name, setting, text):
    out = tmp_path / "m.nc"
    argv = ["mechanism", "--config", str(CONFIG), "--case", name, "--set", setting]
    code, _, err = run(capsys, [*argv, "--out", str(out)])
    assert code == EXIT_USAGE, err
    assert text in err, err
    assert not list(tmp_path.iterdir())


#: command-line options: (argv after the command, option named in the message)
OPTION_ROWS = [
    (["simulate", "--t-end", "inf"], "--t-end"),
    (["simulate", "--dt-critical", "inf"], "--dt-critical"),  # was exit 1 (unstable run)
    (["simulate", "--dt-critical", "-1"], "--dt-critical"),  # was accepted, exit 0
    (["simulate", "--dt-critical", "nan"], "--dt-critical"),
    (["simulate", "--damping", "nan,0"], "--damping"),
    (["simulate", "--damping", "1"], "--damping"),
    (["identify", "--omega", "100", "600", "--sigma-rel", "inf"], "--sigma-rel"),  # was accepted
    (["identify", "--omega", "nan", "600"], "--omega"),
    (["identify", "--omega", "100", "600", "--modes", "1000"], "--modes"),
    (["modal", "--modes", "1000"], "--modes"),  # was accepted: 80 modes
    (["modal", "--modes", "0"], "--modes"),
    (["stepped", "--segments", "0"], "--segments"),
    (["mechanism", "--case", "slider_crank_rigid", "--t-end", "inf"], "--t-end"),
    (["mechanism", "--case", "slider_crank_rigid", "--t-end", "nan"], "--t-end"),
]


@pytest.mark.parametrize(("argv", "option"), OPTION_ROWS, ids=[" ".join(r[0]) for r in OPTION_ROWS])
def test_bad_option_exit_2_names_option(capsys, tmp_path, argv, option):
    out = tmp_path / "r.nc"
    extra = ["--set", "mesh.n_elements=4"] if argv[0] != "mechanism" else []
    code, _, err = run(capsys, [*argv, "--config", str(CONFIG), *extra, "--out", str(out)])
    assert code == EXIT_USAGE, err
    assert option in err, err
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------------------------
# config files: malformed YAML, duplicate keys, integer case names
# --------------------------------------------------------------------------------------------
FILE_ROWS = {
    "malformed": ("beam: {length: 1\nmesh: [\n", "not valid YAML"),
    "tab_indent": ("beam:\n\tlength: 1\n", "not valid YAML"),
    "duplicate_case": (
        "cases:\n  a: {defect: {lam: 0.1}}\n  b: {}\n  a: {defect: {lam: 0.2}}\n",
        "duplicate key 'a' at line 4 (first given at line 2)",
    ),
    "duplicate_key_in_section": (
        "beam:\n  length: 1.0\n  width: 0.02\n  length: 2.0\n",
        "duplicate key 'length' at line 4",
    ),
    "duplicate_section": ("mesh: {n_elements: 4}\nmesh: {n_elements: 8}\n", "duplicate key 'mesh'"),
    "integer_case_name": ("cases:\n  1: {defect: {lam: 0.1}}\n", "cases.1"),
    "top_level_list": ("- 1\n- 2\n", "mapping at the top level"),
}


@pytest.mark.parametrize("row", sorted(FILE_ROWS))
def test_bad_config_file_exit_2_names_file_and_line(capsys, tmp_path, row):
    text, expected = FILE_ROWS[row]
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(text)
    code, _, err = run(capsys, ["static", "--config", str(cfg), "--out", str(tmp_path / "r.nc")])
    assert code == EXIT_USAGE, err
    assert expected in err, err
    assert row == "integer_case_name" or str(cfg) in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


def test_missing_config_file_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, ["static", "--config", str(tmp_path / "nope.yaml")])
    assert code == EXIT_USAGE and "nope.yaml" in err and "does not exist" in err


def test_integer_case_name_in_a_config_dict_is_named():
    """The pipeline hands the library a dict (Snakemake's YAML reader): the same check."""
    from ancf_beam.config import resolve_case

    with pytest.raises(ConfigError, match=r"'cases\.1'.*strings"):
        resolve_case({"cases": {1: {}, "a": {}}}, "a")


def test_shipped_configs_have_no_duplicate_keys():
    for path in (CONFIG, ROOT / "config" / "quick.yaml"):
        assert load_config(path)


# --------------------------------------------------------------------------------------------
# --out: checked before the run; a failed write leaves nothing and exits 1
# --------------------------------------------------------------------------------------------
def test_out_into_missing_directory_exit_2_before_the_run(capsys, tmp_path, monkeypatch):
    import ancf_beam.analyses as analyses

    def boom(*a, **k):  # the computation must not start
        raise AssertionError("ran the analysis")

    monkeypatch.setattr(analyses, "run_static", boom)
    target = tmp_path / "missing" / "r.nc"
    code, _, err = run(capsys, ["static", "--out", str(target)])
    assert code == EXIT_USAGE, err
    assert "--out" in err and "does not exist" in err and str(target.parent) in err
    assert not target.parent.exists()


def test_out_into_unwritable_directory_exit_2_before_the_run(capsys, tmp_path, monkeypatch):
    import ancf_beam.analyses as analyses

    monkeypatch.setattr(analyses, "run_static", lambda *a, **k: pytest.fail("ran"))
    if os.geteuid() == 0:  # root writes anywhere a mode allows: /proc refuses new files
        parent = Path("/proc")
    else:
        parent = tmp_path / "ro"
        parent.mkdir()
        parent.chmod(0o555)
    code, _, err = run(capsys, ["static", "--out", str(parent / "r.nc")])
    assert code == EXIT_USAGE, err
    assert "--out" in err and "not writable" in err and str(parent) in err


def test_out_not_netcdf_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, ["static", "--out", str(tmp_path / "r.txt")])
    assert code == EXIT_USAGE and "--out" in err


def test_full_disk_write_exit_1_names_file_leaves_nothing(capsys, tmp_path, monkeypatch):
    def full(self, path, *a, **k):
        Path(path).write_bytes(b"CDF partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", full)
    target = tmp_path / "r.nc"
    code, stdout, err = run(capsys, ["static", "--set", "mesh.n_elements=4", "--out", str(target)])
    assert code == EXIT_FAILURE, err
    assert "No space left on device" in err and str(target) in err and "Traceback" not in err
    assert "tip_y" in stdout  # the result is still shown (issue 26 H)
    assert not list(tmp_path.iterdir())


def test_verbose_keeps_exit_code_1_on_solver_failure(capsys):
    """-v adds the traceback to the log; it does not turn a solver failure into an exception."""
    argv = ["simulate", "-v", "--set", "mesh.n_elements=4", "--dt", "1e-3", "--force"]
    code, _, err = run(capsys, [*argv, "--t-end", "0.05"])
    assert code == EXIT_FAILURE, err
    assert "unstable" in err


# --------------------------------------------------------------------------------------------
# atomic writes: stale temporaries of killed writes are removed by the next write
# --------------------------------------------------------------------------------------------
def _dataset() -> xr.Dataset:
    return xr.Dataset({"a": ("x", np.arange(3.0))})


def test_next_write_removes_stale_temporaries_of_the_same_target(tmp_path):
    target = tmp_path / "r.nc"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    stale = [tmp_path / f".r.nc.{dead}.abc123.tmp", tmp_path / ".r.nc.k2j3h4.tmp"]
    live = tmp_path / f".r.nc.{os.getpid()}.zzz.tmp"  # a write in progress: left alone
    other = tmp_path / f".other.nc.{dead}.abc.tmp"  # another target's: left alone
    for p in (*stale, live, other):
        p.write_bytes(b"CDF")
    write_netcdf(_dataset(), target)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([live.name, other.name, "r.nc"])
    assert remove_stale_temporaries(tmp_path / "other.nc") == [other]


def test_interrupted_write_leaves_only_a_temporary_that_the_next_run_removes(tmp_path):
    target = tmp_path / "r.nc"
    script = textwrap.dedent(f"""
        import os, numpy as np, xarray as xr
        from ancf_beam.io import write_netcdf
        def killed(self, path, *a, **k):
            open(path, "wb").write(b"CDF half")
            os._exit(9)  # killed mid-write: no cleanup runs
        xr.Dataset.to_netcdf = killed
        write_netcdf(xr.Dataset({{"a": ("x", np.arange(3.0))}}), {str(target)!r})
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True)
    assert res.returncode == 9
    assert not target.exists()
    assert len(list(tmp_path.glob(".r.nc.*.tmp"))) == 1
    write_netcdf(_dataset(), target)
    assert [p.name for p in tmp_path.iterdir()] == ["r.nc"]


# --------------------------------------------------------------------------------------------
# workflow scripts: a truncated input NetCDF is named, and the rule log holds the error
# --------------------------------------------------------------------------------------------
def test_read_netcdf_names_a_truncated_file(tmp_path):
    good = write_netcdf(_dataset(), tmp_path / "good.nc")
    bad = tmp_path / "bad.nc"
    bad.write_bytes(good.read_bytes()[:100])
    with pytest.raises(InputFileError, match=r"cannot read NetCDF file '.*bad\.nc'.*truncated"):
        read_netcdf(bad)
    with pytest.raises(InputFileError, match="missing.nc"):
        read_netcdf(tmp_path / "missing.nc")
    assert float(read_netcdf(good)["a"][2]) == 2.0


SCRIPTS = sorted(p.name for p in (ROOT / "workflow" / "scripts").glob("*.py"))


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s != "index.py"])
def test_workflow_scripts_log_their_errors_and_read_netcdf_by_name(script):
    """Every adapter logs through ancf_beam.io.log_to_file (uncaught errors land in the rule's
    log) and reads NetCDF inputs through read_netcdf (a truncated file is named)."""
    text = (ROOT / "workflow" / "scripts" / script).read_text()
    assert "log_to_file(snakemake.log[0])" in text
    assert "logging.basicConfig" not in text
    assert "xr.open_dataset" not in text and "xr.load_dataset" not in text


def test_failing_workflow_script_writes_its_error_to_the_rule_log(tmp_path):
    """The validation adapter with a truncated static.nc: non-zero exit, the log names the file,
    no output file."""
    static = tmp_path / "static.nc"
    static.write_bytes(b"CDF\x01 truncated")
    log = tmp_path / "validation.log"
    out = tmp_path / "validation.nc"
    runner = textwrap.dedent(f"""
        import runpy, types
        inp = types.SimpleNamespace(static={str(static)!r}, modal="m.nc", simulate="s.nc")
        snakemake = types.SimpleNamespace(
            input=inp, output=[{str(out)!r}], log=[{str(log)!r}], config={{"cases": {{"c": {{}}}}}},
            wildcards=types.SimpleNamespace(case="c"),
            params=types.SimpleNamespace(settings={{}}, package="test"),
        )
        runpy.run_path({str(ROOT / "workflow" / "scripts" / "validation.py")!r},
                       init_globals={{"snakemake": snakemake}}, run_name="__main__")
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    res = subprocess.run([sys.executable, "-c", runner], env=env, capture_output=True, text=True)
    assert res.returncode == 1
    text = log.read_text()
    assert "InputFileError" in text and str(static) in text and "truncated" in text, text
    assert "Traceback" in res.stderr  # still on stderr for Snakemake's own output
    assert not out.exists()


# --------------------------------------------------------------------------------------------
# plausibility bounds and Gauss counts at the library level
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["mesh.n_gauss_axial", "mesh.n_gauss_bending"])
def test_one_gauss_point_is_refused(key):
    """One point per element makes the stiffness singular (the static run failed with
    'singular matrix', exit 1): the config refuses it."""
    with pytest.raises(ConfigError, match=rf"'{key}' = 1 .*\[2, 10\]"):
        case_from_file(None, None, [f"{key}=1"])
    assert case_from_file(None, None, [f"{key}=2"]).mesh.n_elements == 20


def test_tip_offset_bound_is_the_reach_of_the_kappa0_bound():
    """Just inside the documented bound the imperfection resolves; just outside, a ConfigError
    (never the imperfection's own ValueError)."""
    from ancf_beam.beam.imperfection import resolved_kappa0

    for profile, reach in (("uniform", 0.7080734), ("linear", 0.7651843)):
        ok = case_from_file(
            None,
            None,
            [f"imperfection.profile={profile}", f"imperfection.tip_offset={-0.999 * reach}"],
        )
        assert abs(resolved_kappa0(ok.imperfection, 1.0)) < 3.0
        with pytest.raises(ConfigError, match="imperfection.tip_offset"):
            case_from_file(
                None,
                None,
                [f"imperfection.profile={profile}", f"imperfection.tip_offset={1.001 * reach}"],
            )


def test_shipped_cases_sit_inside_the_bounds():
    cfg = load_config(CONFIG)
    for name in cfg["cases"]:
        case_from_file(CONFIG, name)
