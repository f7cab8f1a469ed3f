"""The quick config through the SLURM executor on a real (single-node) SLURM cluster.

Needs a running cluster (``sudo bash .ci/slurm-up`` brings up a throwaway one; `.ci/run` does so
when it runs as root with apt available) and ``snakemake-executor-plugin-slurm``. Without them
the tests are skipped with the reason; they never pass silently.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from test_pipeline import QUICK, copy_workflow, output_tail, snakemake

pytestmark = pytest.mark.slurm

PROFILE = ["--workflow-profile", "workflow/profiles/slurm"]


def _cluster_problem() -> str | None:
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install '.[slurm]')"
    for tool in ("sbatch", "squeue", "sinfo"):
        if shutil.which(tool) is None:
            return f"no SLURM client ({tool} not on PATH); start one with: sudo bash .ci/slurm-up"
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=30
        ).stdout.split()
    except subprocess.TimeoutExpired:
        return "sinfo timed out: the SLURM controller is not answering"
    if not any(s.rstrip("*~#") in ("idle", "mix", "alloc", "comp") for s in out):
        return f"no usable SLURM node (sinfo states: {out or 'none'}); run .ci/slurm-up"
    return None


# session scope, like quick_run: pytest sets up wider-scoped fixtures first, and the cluster
# check must come before the local pipeline run (a skip without a cluster costs nothing)
@pytest.fixture(scope="session")
def cluster():
    problem = _cluster_problem()
    if problem:
        pytest.skip(problem)


@pytest.fixture(scope="module")
def slurm_and_local_runs(cluster, quick_run, tmp_path_factory):
    local = quick_run  # the local run (conftest.py), the one test_pipeline checks
    remote = copy_workflow(tmp_path_factory.mktemp("slurm"))
    res = snakemake(remote, *PROFILE, "--configfile", "config/quick.yaml", timeout=1500)
    assert res.returncode == 0, output_tail(res)
    return local, remote, res


# measured run times (and what depends on them) differ between machines and runs
TIMING = re.compile(r"wall|cost|per_step|projected|measured_s|window")


def _numbers(ds: xr.Dataset) -> dict[str, np.ndarray]:
    return {
        k: v.values
        for k, v in ds.data_vars.items()
        if np.issubdtype(v.dtype, np.number) and not TIMING.search(k)
    }


def test_slurm_run_matches_local_run(slurm_and_local_runs):
    local, remote, res = slurm_and_local_runs
    assert "slurm" in (res.stdout + res.stderr).lower()  # really went through the executor
    files = sorted(p.relative_to(local) for p in (local / "results").rglob("*.nc"))
    cfg = yaml.safe_load(QUICK.read_text())
    assert len(files) >= 3 * len(cfg["cases"])
    for name in cfg["mechanisms"]:  # the mechanism jobs ran on the cluster too
        assert Path("results/mechanisms", f"{name}.nc") in files, name
    for rel in files:
        with xr.open_dataset(local / rel) as a, xr.open_dataset(remote / rel) as b:
            na, nb = _numbers(a), _numbers(b)
            assert na.keys() == nb.keys(), rel
            for k in na:  # timings differ, physics must not
                np.testing.assert_allclose(nb[k], na[k], rtol=1e-12, atol=0, err_msg=f"{rel}:{k}")
    assert (remote / "reports" / "index.html").is_file()


def test_failing_cluster_job_fails_the_workflow_naming_the_rule(cluster, tmp_path):
    work = copy_workflow(tmp_path)
    cfg = yaml.safe_load(QUICK.read_text())
    # a static solve that cannot converge: one Newton iteration, no cutbacks, a very soft beam
    cfg["cases"]["bad"] = {
        "material": {"E0": 2.07e6},
        "static": {"max_iterations": 1, "max_cutbacks": 0},
    }
    (work / "config" / "bad.yaml").write_text(yaml.safe_dump(cfg))
    # the target goes first: --configfile takes every following word as a config file
    res = snakemake(
        work, "results/bad/static.nc", *PROFILE, "--configfile", "config/bad.yaml", timeout=600
    )
    out = res.stdout + res.stderr
    assert res.returncode != 0, output_tail(res)
    assert "static" in out and "Error in rule static" in out, output_tail(res)
    assert not (work / "results" / "bad" / "static.nc").exists()


def test_slurm_profile_uses_squeue_and_declares_resources():
    prof = yaml.safe_load((Path(__file__).parents[1] / PROFILE[1] / "config.yaml").read_text())
    assert prof["executor"] == "slurm"
    assert prof["slurm-status-command"] == "squeue"
    assert "slurm_partition" in prof["default-resources"]
