"""Parallel speed-up of the Snakemake pipeline: the quick config with --cores 1 vs --cores 2.

Copies ``Snakefile``, ``workflow/`` and ``config/`` into two fresh temporary directories, warms
the numba cache first (one process runs every kernel the pipeline uses: static, modal, critical
step, explicit and implicit runs, damage; numba caches next to the package sources, which both
copies share), then runs the whole pipeline from scratch in the first copy with ``--cores 1``
and in the second with ``--cores 2``, one after the other, and prints the wall times and the
speed-up (goal: >= 1.8x on a 2-core machine).

    python benchmarks/bench_pipeline_parallel.py [--configfile config/quick.yaml] [--repeat 1]
                                                 [--keep]

Wall times depend on what else runs on the machine; with ``--repeat N`` each variant runs N
times (fresh copies) and the best time counts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WARM = r"""
import time
t0 = time.perf_counter()
from ancf_beam.analyses import run_critical_dt, run_modal, run_simulate, run_static
from ancf_beam.config import resolve_case
for over in ({}, {"damage.enabled": True, "damage.threshold": 3e-5, "damage.softening": 2e-5},
             {"imperfection.kappa0": 0.2}):
    case = resolve_case({}, None, {"mesh.n_elements": 4, **over})
    run_static(case)
    run_modal(case)
    run_critical_dt(case, measure=True)
    run_simulate(case, t_end=0.01, progress=False)
    for integ in ("bdf1", "newmark", "generalized-alpha"):
        run_simulate(case, integrator=integ, dt=1e-3, t_end=5e-3, progress=False)
print(f"numba cache warm ({time.perf_counter() - t0:.1f} s)")
"""


def copy_workflow(dst: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    shutil.copy(ROOT / "Snakefile", dst / "Snakefile")
    shutil.copytree(ROOT / "workflow", dst / "workflow", ignore=ignore)
    shutil.copytree(ROOT / "config", dst / "config", ignore=ignore)
    return dst


def run_pipeline(work: Path, cores: int, configfile: str) -> float:
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), "--configfile", configfile]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        sys.stderr.write(res.stdout[-4000:] + res.stderr[-4000:])
        raise SystemExit(f"snakemake --cores {cores} failed in {work}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configfile", default="config/quick.yaml", help="config (relative path)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per variant (best counts)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies")
    args = ap.parse_args()

    print(
        f"machine: {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f} "
        f"(1 min) before the runs"
    )
    subprocess.run([sys.executable, "-c", WARM], check=True)
    times: dict[int, list[float]] = {1: [], 2: []}
    tmp = Path(tempfile.mkdtemp(prefix="bench_pipeline_"))
    try:
        for r in range(args.repeat):
            for cores in (1, 2):
                work = copy_workflow(Path(tempfile.mkdtemp(prefix=f"c{cores}_r{r}_", dir=tmp)))
                wall = run_pipeline(work, cores, args.configfile)
                times[cores].append(wall)
                print(f"run {r + 1}: --cores {cores}: {wall:7.1f} s  ({work})", flush=True)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    t1, t2 = min(times[1]), min(times[2])
    print(
        f"\n{args.configfile}: --cores 1 {t1:.1f} s, --cores 2 {t2:.1f} s, "
        f"speed-up {t1 / t2:.2f}x (goal >= 1.8x); "
        f"load average {os.getloadavg()[0]:.2f} after the runs"
    )


if __name__ == "__main__":
    main()
