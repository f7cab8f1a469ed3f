"""Issue 26: the hostile-input matrix, rows E, H-T, V-X (input, YAML, CLI, files, pipeline).

One test per row, named after it (``test_row_E_...``). Each builds the hostile input the issue
describes and checks the documented behaviour: bad input is a message naming the file and line
(or the option, or the key), the value and the allowed range, exit status 2, nothing written; a
failed write names the file, exits 1 and still shows the result. The pipeline rows run
``snakemake -n`` in a copy of the workflow (a few seconds each: the checks stop it early).
"""

from __future__ import annotations

import base64
import errno
import json
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import xarray as xr
import yaml

from ancf_beam import config as cfgmod
from ancf_beam.cli import EXIT_FAILURE, EXIT_USAGE, main
from ancf_beam.config import ConfigError, load_config, mechanism_from_file, read_yaml, resolve_case

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "config.yaml"
QUICK = ROOT / "config" / "quick.yaml"
SMALL = ["--set", "mesh.n_elements=4"]


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    """``ancf-beam`` in this process: exit status, stdout, stderr. An exception (or Ctrl-C)
    escaping ``main`` is a failure of the row, not of the test session."""
    try:
        code = main(argv)
    except KeyboardInterrupt:
        pytest.fail("ancf-beam let KeyboardInterrupt through (a traceback on Ctrl-C)")
    out, err = capsys.readouterr()
    return code, out, err


def copy_workflow(dst: Path) -> Path:
    """The pipeline (Snakefile, workflow/, config/ and the default profile) in ``dst``."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "Snakefile", dst / "Snakefile")
    for d in ("workflow", "config", "profiles"):
        if (ROOT / d).is_dir():
            shutil.copytree(ROOT / d, dst / d, ignore=ignore)
    return dst


def snakemake(cwd: Path, *args: str, timeout: float = 600) -> tuple[int, str]:
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return res.returncode, res.stdout + res.stderr


def bomb(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" YAML: ``width ** levels`` values from a few hundred bytes, put into a
    value of the config (``beam.length``)."""
    lines = ["l0: &l0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + f"\nbeam: {{length: *l{levels - 1}}}\n"


# --------------------------------------------------------------------------------------------
# E: alias bombs, recursive aliases, deep nesting
# --------------------------------------------------------------------------------------------
def test_row_E_alias_bomb_refused_before_it_is_built(tmp_path, capsys):
    """9^9 expansion: the loader refuses it from the composed node graph (was: accepted, then
    42 s / 3.2 GB in the CLI and a MemoryError traceback in snakemake -n)."""
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb())
    with pytest.raises(ConfigError, match=r"bomb\.yaml.*line 7 .*MAX_CONFIG_NODES"):
        read_yaml(path)  # l6 (line 7, 9^7 values) is the first block above the bound
    code, _, err = run(capsys, ["static", "--config", str(path), *SMALL])
    assert code == EXIT_USAGE and str(path) in err and "4,000,000" in err, err
    # below the bound the same structure loads (the bound is on the expansion, not on aliases)
    small = cfgmod.parse_yaml_text(bomb(levels=3, width=3))
    assert small["beam"]["length"] == [[["lol"] * 3] * 3] * 3
    recursive = tmp_path / "recursive.yaml"
    recursive.write_text("a: &a [1, *a]\n")
    with pytest.raises(ConfigError, match=r"recursive\.yaml.*line 1.*recursive alias"):
        read_yaml(recursive)
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 100 + "]" * 100 + "\n")
    with pytest.raises(ConfigError, match=r"deep\.yaml.*nests deeper than 64"):
        read_yaml(deep)
    # the pipeline refuses it too, naming the file (Snakemake's own reader shares the aliases)
    work = copy_workflow(tmp_path / "wf")
    (work / "config" / "config.yaml").write_text(QUICK.read_text() + bomb().split("beam:")[0])
    code, out = snakemake(work, "-n")
    assert code != 0 and "config/config.yaml" in out and "4,000,000" in out, out[-3000:]
    assert "Traceback" not in out and "MemoryError" not in out, out[-3000:]


# --------------------------------------------------------------------------------------------
# H: a full disk during --out
# --------------------------------------------------------------------------------------------
def test_row_H_failed_write_names_the_file_exit_1_result_still_printed(
    tmp_path, capsys, monkeypatch
):
    """A write that fails inside netCDF/HDF5 (a file-size limit of 4 KiB while the file is
    written: netCDF4 raises ``RuntimeError: NetCDF: HDF error``, the same error as a full disk)
    exits 1 naming the file, leaves no file, and the JSON result is still printed (was: chained
    tracebacks, file not named, result lost)."""
    original = xr.Dataset.to_netcdf

    def limited(self, path, *a, **k):
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))  # Python ignores SIGXFSZ
        try:
            return original(self, path, *a, **k)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

    monkeypatch.setattr(xr.Dataset, "to_netcdf", limited)
    target = tmp_path / "r.nc"
    code, out, err = run(capsys, ["static", *SMALL, "--json", "--out", str(target)])
    assert code == EXIT_FAILURE, err
    assert f"cannot write NetCDF file '{target}'" in err and "HDF error" in err, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    summary = json.loads(out)  # one JSON object, without "out" (nothing was written)
    assert summary["tip_y"] < 0 and "out" not in summary
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------------------------
# I: tiny time steps
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("option", ["--dt", "--dt-safety", "--dt-critical"])
def test_row_I_tiny_steps_refused_with_the_option_named(tmp_path, capsys, option):
    """``--dt 1e-300`` (and ``--dt-safety``, ``--dt-critical``): 1e297 steps. Was a numba typing
    dump ("Int value is too large"), exit 1; now exit 2 naming the options and MAX_STEPS."""
    target = tmp_path / "r.nc"
    argv = ["simulate", *SMALL, "--t-end", "1e-3", option, "1e-300", "--out", str(target)]
    code, _, err = run(capsys, argv)
    assert code == EXIT_USAGE, err
    assert "--t-end" in err and option in err and "at most 1e+09 steps" in err, err
    assert len(err) < 400 and "numba" not in err.lower(), err
    assert not target.exists()


# --------------------------------------------------------------------------------------------
# J: stepped --modes 1000
# --------------------------------------------------------------------------------------------
def test_row_J_stepped_modes_meet_the_modal_rule_and_no_overflow(capsys):
    """``stepped --modes 1000`` was ``math range error`` (1/cosh overflowing past the 226th
    cantilever root), exit 1. The option stands for ``modal.n_modes`` and meets its rule; the
    roots no longer overflow."""
    from ancf_beam.references.transfer import cantilever_beta_l

    code, _, err = run(capsys, ["stepped", "--config", str(CONFIG), "--modes", "1000"])
    assert code == EXIT_USAGE, err
    assert "--modes 1000" in err and "modal.n_modes" in err and "[1, 80]" in err, err
    b = cantilever_beta_l(300)  # the k-th root tends to (2k - 1) pi / 2
    assert abs(b[-1] - 599 * 3.141592653589793 / 2) < 1e-9


# --------------------------------------------------------------------------------------------
# K: a 300-character --out name
# --------------------------------------------------------------------------------------------
def test_row_K_long_out_name_refused_before_the_run(tmp_path, capsys, monkeypatch):
    import ancf_beam.analyses as analyses

    monkeypatch.setattr(analyses, "run_static", lambda *a, **k: pytest.fail("ran the analysis"))
    target = tmp_path / ("a" * 300 + ".nc")
    code, _, err = run(capsys, ["static", "--out", str(target)])
    assert code == EXIT_USAGE, err
    assert "--out" in err and "303 bytes" in err and "at most 233" in err, err
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------------------------
# L: a non-UTF-8 config file
# --------------------------------------------------------------------------------------------
def test_row_L_non_utf8_config_named_with_line_cli_and_pipeline(tmp_path, capsys):
    text = CONFIG.read_bytes().replace(b"cases:", b"# r\xe9sum\xe9 (Latin-1)\ncases:", 1)
    line = text[: text.index(b"\xe9")].count(b"\n") + 1
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(text)
    code, _, err = run(capsys, ["static", "--config", str(bad), *SMALL])
    assert code == EXIT_USAGE, err
    assert str(bad) in err and f"line {line}" in err and "UTF-8" in err, err
    work = copy_workflow(tmp_path / "wf")
    (work / "config" / "config.yaml").write_bytes(text)
    code, out = snakemake(work, "-n")
    assert code != 0 and "config/config.yaml" in out and f"line {line}" in out, out[-3000:]
    assert "Traceback" not in out and "UnicodeDecodeError" not in out, out[-3000:]


# --------------------------------------------------------------------------------------------
# M: messages name the option; no 300-digit ratio
# --------------------------------------------------------------------------------------------
def test_row_M_huge_values_messages_name_the_option(capsys):
    rows = [
        (["--t-end", "1e300"], "--t-end"),  # was: "Maximum allowed dimension exceeded"
        (["--damping", "0,1e300", "--t-end", "1e-3"], "--damping"),  # was: "array must not..."
        (["--dt", "1e300", "--t-end", "1e-3"], "--dt"),  # was: a 300-digit dt/dt_cr
    ]
    for extra, option in rows:
        code, _, err = run(capsys, ["simulate", *SMALL, *extra])
        assert code == EXIT_USAGE, err
        assert option in err and not re.search(r"\d{20}", err), err


# --------------------------------------------------------------------------------------------
# N: --gamma and dynamics.newmark_gamma: one rule
# --------------------------------------------------------------------------------------------
def test_row_N_option_and_config_key_share_one_rule(tmp_path, capsys):
    target = tmp_path / "g.nc"
    base = ["simulate", *SMALL, "--integrator", "newmark", "--t-end", "1e-3"]
    code, _, err = run(capsys, [*base, "--gamma", "0.2", "--out", str(target)])
    assert code == EXIT_USAGE and "--gamma" in err and "[0.5, 1]" in err, err
    assert not target.exists()  # was: accepted with a warning, the file written
    code, _, err_key = run(capsys, [*base, "--set", "dynamics.newmark_gamma=0.2"])
    assert code == EXIT_USAGE and "dynamics.newmark_gamma" in err_key and "[0.5, 1]" in err_key
    code, _, err = run(capsys, [*base, "--beta", "0.6"])
    assert code == EXIT_USAGE and "--beta" in err and "(0, 0.5]" in err, err


# --------------------------------------------------------------------------------------------
# O: --set clearance.continuous_factor
# --------------------------------------------------------------------------------------------
def test_row_O_every_documented_clearance_key_can_be_set():
    sets = ["clearance.continuous_factor=3", "clearance.contact.restitution=0.5"]
    spec = mechanism_from_file(CONFIG, "slider_crank_clearance", sets)
    assert spec.clearance.continuous_factor == 3.0
    assert spec.clearance.contact.restitution == 0.5
    with pytest.raises(ConfigError, match=r"clearance\.continuous_fact'.*continuous_factor"):
        mechanism_from_file(CONFIG, "slider_crank_clearance", ["clearance.continuous_fact=3"])
    with pytest.raises(ConfigError, match=r"continuous_factor' = 0\.5.*>= 1"):
        mechanism_from_file(CONFIG, "slider_crank_clearance", ["clearance.continuous_factor=0.5"])
    # the config file itself is untouched by the overrides
    again = mechanism_from_file(CONFIG, "slider_crank_clearance")
    assert again.clearance.continuous_factor == 5.0


# --------------------------------------------------------------------------------------------
# P: YAML merge keys
# --------------------------------------------------------------------------------------------
def test_row_P_merge_key_with_an_override(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text(
        "cases:\n"
        "  base: &base {defect: {lam: 0.1, n: 2.0}, mesh: {n_elements: 4}}\n"
        "  variant:\n"
        "    <<: *base\n"
        "    defect: {lam: 0.3}\n"
    )
    case = resolve_case(load_config(path), "variant")
    assert case.defect.E.lam == 0.3 and case.defect.E.n == 1.0  # defect replaced, as YAML says
    assert case.mesh.n_elements == 4  # merged from base
    path.write_text(path.read_text() + "    defect: {lam: 0.4}\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'defect' at line 6 \(first .* 5\)"):
        load_config(path)  # explicit keys given twice are still refused


# --------------------------------------------------------------------------------------------
# Q: 1e-9 and friends are numbers
# --------------------------------------------------------------------------------------------
def test_row_Q_exponent_numbers_are_floats_cli_and_pipeline(tmp_path):
    path = tmp_path / "table.yaml"
    path.write_text("defect:\n  table: [[0, 1], [0.5, 1e-9], [1, 1E+0]]\nmaterial: {E0: 2.07e11}\n")
    data = load_config(path)
    assert data["defect"]["table"][1][1] == 1e-9 and data["material"]["E0"] == 2.07e11
    case = resolve_case(data)
    assert case.defect.E.table[1] == (0.5, 1e-9)
    assert cfgmod.parse_set(["defect.lam=1e-1"]) == {"defect.lam": 0.1}
    assert cfgmod.parse_yaml_text("[e5, 1_0, 0x1f, .5, 12]") == ["e5", 10, 31, 0.5, 12]
    # the pipeline works on the strictly read data (Snakemake's reader keeps '1e-9' a string)
    work = copy_workflow(tmp_path / "wf")
    quick = (work / "config" / "quick.yaml").read_text()
    tiny = "  uniform: {}\n  tiny: {defect: {table: [[0, 1], [1, 1e-1]]}}\n"
    (work / "config" / "quick.yaml").write_text(quick.replace("  uniform: {}\n", tiny))
    code, out = snakemake(work, "-n", "--configfile", "config/quick.yaml")
    assert code == 0 and "results/tiny/static.nc" in out, out[-3000:]


# --------------------------------------------------------------------------------------------
# R: malformed / tab / !!python YAML through the pipeline
# --------------------------------------------------------------------------------------------
def test_row_R_bad_yaml_through_the_pipeline_names_file_and_line(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    rows = {
        "beam: {length: 1\nmesh: [\n": ("line 2", "did not find expected"),
        "beam:\n\tlength: 1\n": ("line 2", "a tab"),
        "beam:\n  length: !!python/object/apply:os.system ['true']\n": ("line 2", "python"),
    }
    for text, (line, words) in rows.items():
        (work / "config" / "config.yaml").write_text(text)
        code, out = snakemake(work, "-n")
        assert code != 0 and "config/config.yaml" in out and line in out, out[-3000:]
        assert words in out and "not valid JSON or YAML" not in out, out[-3000:]


# --------------------------------------------------------------------------------------------
# S: after an interrupted run, the plain command resumes
# --------------------------------------------------------------------------------------------
def test_row_S_plain_command_reruns_incomplete_outputs(tmp_path):
    """A job interrupted mid-write leaves its output marked incomplete (Snakemake's marker:
    .snakemake/incomplete/<base64 of the path>). README's plain command must re-run it (was:
    IncompleteFilesException): the default profile, which Snakemake loads from profiles/default
    next to the Snakefile, sets rerun-incomplete. README says what to do after a kill."""
    work = copy_workflow(tmp_path / "wf")
    output = "results/uniform/static.nc"
    (work / output).parent.mkdir(parents=True)
    (work / output).write_bytes(b"CDF half written")
    # Snakemake's marker (snakemake.persistence.file): the urlsafe base64 of the path
    marker = work / ".snakemake" / "incomplete" / base64.urlsafe_b64encode(output.encode()).decode()
    marker.parent.mkdir(parents=True)
    marker.write_text(json.dumps({"external_jobid": None}))
    code, out = snakemake(work, output, "-n", "--configfile", "config/quick.yaml")
    assert code == 0 and "IncompleteFilesException" not in out, out[-3000:]
    assert "rule static:" in out and "forced" in out, out[-3000:]  # re-run, not refused
    readme = (ROOT / "README.md").read_text()
    assert "snakemake --unlock" in readme and "interrupted" in readme


# --------------------------------------------------------------------------------------------
# T: the permissions of the written files follow the umask
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_row_T_nc_files_follow_the_umask(tmp_path, capsys, umask, mode):
    target = tmp_path / "r.nc"
    old = os.umask(umask)
    try:
        code, _, err = run(capsys, ["static", *SMALL, "--out", str(target)])
    finally:
        os.umask(old)
    assert code == 0, err
    assert stat.S_IMODE(target.stat().st_mode) == mode  # was 0600 whatever the umask


# --------------------------------------------------------------------------------------------
# V: a configuration of many cases: the C loader, and the pipeline's bound on cases
# --------------------------------------------------------------------------------------------
def test_row_V_many_cases_c_loader_and_pipeline_bound(tmp_path):
    """The strict loader parses with libyaml (the 70,000-case timings are
    benchmarks/bench_config_load.py's); the pipeline refuses more cases than its DAG bound at
    once, naming the file, instead of building the DAG for minutes or hours."""
    assert yaml.__with_libyaml__, "PyYAML without libyaml: the strict loader would be slow"
    assert issubclass(cfgmod.StrictLoader, yaml.CSafeLoader)
    base = QUICK.read_text()
    head, tail = base.split("\nmechanisms:", 1)
    many = "".join(f"  c{i:05d}: {{defect: {{lam: {i % 90 / 100}}}}}\n" for i in range(1001))
    path = tmp_path / "many.yaml"
    path.write_text(head.rstrip("\n") + "\n" + many + "\nmechanisms:" + tail)
    n_cases = len(load_config(QUICK)["cases"]) + 1001
    assert len(load_config(path)["cases"]) == n_cases
    work = copy_workflow(tmp_path / "wf")
    code, out = snakemake(work, "-n", "--configfile", str(path), timeout=300)
    assert code != 0 and "many.yaml" in out and f"{n_cases} cases" in out, out[-3000:]
    assert "at most 1000" in out, out[-3000:]


# --------------------------------------------------------------------------------------------
# W: what a path is, and a full disk named as such
# --------------------------------------------------------------------------------------------
def test_row_W_paths_named_for_what_they_are(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    for path, words in ((folder, "is a directory"), (fifo, "is a FIFO")):
        code, _, err = run(capsys, ["static", "--config", str(path)])
        assert code == EXIT_USAGE and str(path) in err and words in err, err
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = run(capsys, ["static", "--out", str(afile / "r.nc")])
    assert code == EXIT_USAGE and f"'{afile}' is a file, not a directory" in err, err

    # a full disk: netCDF reports "Permission denied" when it cannot create the file there
    def statvfs(free_blocks):
        return os.statvfs_result((4096, 4096, 100, free_blocks, free_blocks, 0, 0, 0, 0, 255))

    monkeypatch.setattr(os, "statvfs", lambda p: statvfs(0))
    code, _, err = run(capsys, ["static", *SMALL, "--out", str(tmp_path / "r.nc")])
    assert code == EXIT_USAGE and "is full (0 bytes free)" in err, err  # before the run

    def refused(self, path, *a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    free = iter([10])  # the check before the run sees free blocks; the write fills the disk
    monkeypatch.setattr(os, "statvfs", lambda p: statvfs(next(free, 0)))
    monkeypatch.setattr(xr.Dataset, "to_netcdf", refused)
    code, _, err = run(capsys, ["static", *SMALL, "--out", str(tmp_path / "r.nc")])
    assert code == EXIT_FAILURE and "is full (0 bytes free" in err and "Permission" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "fifo.yaml", "folder.yaml"]


# --------------------------------------------------------------------------------------------
# X: small usability defects
# --------------------------------------------------------------------------------------------
def test_row_X_empty_allowed_list_negative_values_and_ctrl_c(capsys, monkeypatch):
    with pytest.raises(ConfigError) as info:
        resolve_case({}, None, {"beam.length.x": 1})
    assert "allowed here: )" not in str(info.value) and "is a value" in str(info.value)
    with pytest.raises(ConfigError) as info:
        cfgmod.pipeline_settings({"pipeline": {"comparison": {"tolerances": {"x": 1}}}})
    assert "allowed here: )" not in str(info.value) and "takes no keys" in str(info.value)
    # a negative value is a value (was: "argument --damping: expected one argument")
    code, _, err = run(capsys, ["simulate", *SMALL, "--damping", "-1,0"])
    assert code == EXIT_USAGE and "--damping" in err and "-1.0" in err, err
    code, _, err = run(capsys, ["simulate", *SMALL, "--t-end", "-1e-3"])
    assert code == EXIT_USAGE and "--t-end must be a number > 0" in err, err
    # Ctrl-C: one line, exit 130 (128 + SIGINT), no traceback

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    import ancf_beam.analyses as analyses

    monkeypatch.setattr(analyses, "run_static", interrupted)
    code, out, err = run(capsys, ["static", *SMALL])
    assert code == 130 and err == "ancf-beam static: interrupted; nothing was written\n", err
