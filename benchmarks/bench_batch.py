"""Batch mode for parameter sweeps: a process pool against one model at a time (on demand).

A sweep over the defect parameters (lam, n) of the seed cantilever, as an identification grid
would run it: for every point the first natural frequencies, the static tip, or a short
explicit run, each first one at a time in this process and then with
:func:`ancf_beam.solvers.batch.run_batch` (workers forked from this process, BLAS on one
thread each). Prints both wall times, the speed-up (the machine's cores bound it) and the
largest difference between the two results (they must be identical).

    python benchmarks/bench_batch.py [--grid 6] [--elements 10] [--workers N] [--repeat 2]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from benchcommon import machine_note

from ancf_beam.config import resolve_case
from ancf_beam.solvers import batch


def _cases(grid: int, n_el: int) -> list:
    lams = np.linspace(0.0, 0.6, grid)
    ns = np.linspace(0.5, 3.0, grid)
    return [
        resolve_case(
            {}, None, {"mesh.n_elements": n_el, "defect.lam": float(lam), "defect.n": float(n)}
        )  # fmt: skip
        for lam, n in itertools.product(lams, ns)
    ]


def _diff(a, b) -> float:
    if isinstance(a, list):
        return max(float(np.max(np.abs(x[1] - y[1]))) for x, y in zip(a, b, strict=True))
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=int, default=6, help="points per parameter (grid x grid)")
    ap.add_argument("--elements", type=int, default=10)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--t-end", type=float, default=0.1, help="s, explicit runs")
    args = ap.parse_args()
    cases = _cases(args.grid, args.elements)
    workers = args.workers or batch.default_workers()
    print(f"Batch sweep: {len(cases)} cases ({args.grid} x {args.grid} in (lam, n)), "
          f"{args.elements} elements; {machine_note()}")  # fmt: skip
    print(f"   {workers} workers; wall time, best of {args.repeat}")
    jobs = {
        "modal (3 frequencies)": lambda w: batch.modal_sweep(cases, 3, workers=w),
        "static tip": lambda w: batch.static_sweep(cases, workers=w),
        f"explicit {args.t_end:g} s": lambda w: batch.explicit_sweep(cases, args.t_end, workers=w),
    }
    batch.modal_sweep(cases[:1], 3, workers=1)  # load the numba kernels before timing
    batch.static_sweep(cases[:1], workers=1)
    batch.explicit_sweep(cases[:1], 1e-4, workers=1)
    print(f"{'task':<22} {'one at a time [s]':>18} {'batch [s]':>10} {'speed-up':>9} "
          f"{'max diff':>9}")  # fmt: skip
    for name, job in jobs.items():
        best = {}
        res = {}
        for w in (1, workers):
            t_best = np.inf
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                res[w] = job(w)
                t_best = min(t_best, time.perf_counter() - t0)
            best[w] = t_best
        print(f"{name:<22} {best[1]:>18.3f} {best[workers]:>10.3f} "
              f"{best[1] / best[workers]:>8.2f}x {_diff(res[1], res[workers]):>9.1e}")  # fmt: skip
    print(
        "   speed-up = one at a time / batch (wall); max diff: largest absolute difference "
        "between the two result sets (0: identical)."
    )


if __name__ == "__main__":
    main()
