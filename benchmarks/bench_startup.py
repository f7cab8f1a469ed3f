"""Start-up cost of a pipeline job: numba compilation cold vs cached (run on demand, not in CI).

Each job runs in a fresh Python process, the way a Snakemake rule runs it:

* ``cold``: ``NUMBA_CACHE_DIR`` points to a new empty directory, so every kernel the job touches
  is compiled;
* ``warm``: the same directory again, now filled by the cold run (what every job after the first
  sees);
* ``default``: no ``NUMBA_CACHE_DIR``: the package's cache, keyed by its source
  (:mod:`ancf_beam.kernel_cache`), as a normal run uses it.

For every process it prints the whole wall time and, measured inside the child, the import time,
the first call (numba loading or compiling its kernels) and a second identical call (pure
compute), so that compile/load time = first - second.

    python benchmarks/bench_startup.py [--repeat 3] [--jobs static,modal,simulate]

``--cli`` times the whole command ``ancf-beam static --json`` instead (a warm cache: each
install's kernels compiled by a first call), median of ``--repeat`` processes, for this Python
and every ``--python`` given (e.g. another checkout's venv), run in turns so that a noisy
machine slows all of them alike; it also prints the ``wall_s`` (run) and ``compile_s``
(loading the kernels) the command reports, when it reports them::

    python benchmarks/bench_startup.py --cli --repeat 7 --python /path/to/other/.venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, time
t0 = time.perf_counter()
from ancf_beam.config import resolve_case
from ancf_beam import analyses
t1 = time.perf_counter()
case = resolve_case({}, None, {})
def job():
    if JOB == "static":
        return analyses.run_static(case)
    if JOB == "modal":
        return analyses.run_modal(case)
    if JOB == "simulate":
        return analyses.run_simulate(case, t_end=0.01, progress=False)
    raise SystemExit("unknown job " + JOB)
job()
t2 = time.perf_counter()
job()
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "second": t3 - t2}))
"""

JOBS = ("static", "modal", "simulate")


def run_child(job: str, cache_dir: str | None) -> dict:
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    code = f"JOB = {job!r}\n" + CHILD
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"child for {job!r} failed:\n{out.stderr[-2000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["wall"] = wall
    return res


def python_baseline() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t


def cli_process(python: str, cache_dir: str) -> tuple[float, dict]:
    """Wall time of one ``ancf-beam static --json`` process and its JSON."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    cmd = [python, "-m", "ancf_beam.cli", "static", "--json"]
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"{python}: {out.stderr[-2000:]}")
    return wall, json.loads(out.stdout)


def cli_main(pythons: list[str], repeat: int) -> None:
    print(f"Warm 'ancf-beam static --json' (seed case), median of {repeat} processes, in turns")
    with tempfile.TemporaryDirectory(prefix="numba-cli-") as root:
        caches = {py: os.path.join(root, str(k)) for k, py in enumerate(pythons)}
        for py in pythons:
            cli_process(py, caches[py])  # compile into this install's own cache
        rows: dict[str, list[tuple[float, dict]]] = {py: [] for py in pythons}
        for _ in range(repeat):
            for py in pythons:
                rows[py].append(cli_process(py, caches[py]))
    print(f"{'process s':>10} {'min s':>7} {'max s':>7} {'wall_s':>8} {'compile_s':>10}  python")
    for py, rs in rows.items():
        walls = sorted(w for w, _ in rs)
        med = statistics.median(walls)
        run = statistics.median(r.get("wall_s", float("nan")) for _, r in rs)
        comp = statistics.median(r.get("compile_s", float("nan")) for _, r in rs)
        print(f"{med:>10.2f} {walls[0]:>7.2f} {walls[-1]:>7.2f} {run:>8.3f} {comp:>10.3f}  {py}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="best of N for every row")
    ap.add_argument("--jobs", default=",".join(JOBS))
    ap.add_argument("--cli", action="store_true", help="time the whole 'static' command")
    ap.add_argument("--python", action="append", default=[], help="another install (--cli)")
    args = ap.parse_args()
    if args.cli:
        cli_main([sys.executable, *args.python], args.repeat)
        return
    jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    print(
        "Start-up of a pipeline job in a fresh process (seed case, 20 elements), best of "
        f"{args.repeat}"
    )
    base = min(python_baseline() for _ in range(args.repeat))
    print(f"   bare 'python -c pass': {base * 1e3:.0f} ms")
    print(
        f"{'job':>9} {'cache':>8} {'process s':>10} {'import s':>9} {'1st call s':>11} "
        f"{'2nd call s':>11} {'compile/load s':>15}"
    )
    for job in jobs:
        rows = {}
        cold = []
        with tempfile.TemporaryDirectory(prefix="numba-warm-") as warm_dir:
            for k in range(args.repeat):
                with tempfile.TemporaryDirectory(prefix="numba-cold-") as d:
                    cold.append(run_child(job, d))
                if k == 0:
                    run_child(job, warm_dir)  # fill the warm cache (same code, same machine)
            rows["cold"] = cold
            rows["warm"] = [run_child(job, warm_dir) for _ in range(args.repeat)]
        run_child(job, None)  # make sure the default cache is filled
        rows["default"] = [run_child(job, None) for _ in range(args.repeat)]
        for name, rs in rows.items():
            best = min(rs, key=lambda r: r["wall"])
            print(
                f"{job:>9} {name:>8} {best['wall']:>10.2f} {best['import']:>9.2f} "
                f"{best['first']:>11.3f} {best['second']:>11.4f} "
                f"{best['first'] - best['second']:>15.3f}"
            )
    print(
        "   process = wall time of the whole child process; import = ancf_beam.config + "
        "analyses; 1st/2nd call = the same job twice in the child; compile/load = 1st - 2nd."
    )


if __name__ == "__main__":
    main()
