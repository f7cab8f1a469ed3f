"""Explicit central-difference benchmark (run on demand, not in CI).

Prints, for 10, 20, 40, 80 elements: cost per element-step (ns), steps per second, the split
between force kernel and mass solve, and the wall time and peak memory of 2 s of simulated time
of the seed case at 40 elements with dt = 0.8 dt_cr.

    python benchmarks/bench_explicit.py [--t-end 2.0] [--skip-long]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.linalg import row_factor, solve_xy_rows
from ancf_beam.solvers.critical import critical_dt
from ancf_beam.solvers.explicit import simulate_explicit


@njit(cache=True)
def _force_loop(q, n, n_el, spa, spb, sppb, ea, ei, e0, k0, lin, f):
    s = 0.0
    for _ in range(n):
        s += kernels.elastic_force(q, n_el, spa, spb, sppb, ea, ei, e0, k0, lin, f)
    return s


@njit(cache=True)
def _solve_loop(rx, ry, x, zx, zy, n):
    for _ in range(n):
        solve_xy_rows(rx, ry, x, zx, zy)


def model(ne: int) -> BeamModel:
    return BeamModel(resolve_case({}, None, {"mesh.n_elements": ne}))


def per_step_costs(m: BeamModel, n: int = 100_000) -> tuple[float, float]:
    q = m.reference()
    q[1::4] += 1e-3
    f = np.empty(m.n_dof)
    args = m.kernel_args()
    _force_loop(q, 10, *args, f)
    x = np.ones(m.n_free)
    cbx, cby, _, _ = m.mass_cholesky_xy
    rows = (row_factor(cbx), row_factor(cby))
    scratch = (np.empty(m.n_free // 2), np.empty(m.n_free // 2))
    _solve_loop(*rows, x, *scratch, 10)
    t = time.perf_counter()
    _force_loop(q, n, *args, f)
    tf = (time.perf_counter() - t) / n
    t = time.perf_counter()
    _solve_loop(*rows, x, *scratch, n)
    ts = (time.perf_counter() - t) / n
    return tf, ts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--skip-long", action="store_true", help="skip the 2 s run at 40 elements")
    args = ap.parse_args()

    warm = model(4)
    simulate_explicit(warm, 1e-3, 1e-6, progress=False)  # compile / load the numba cache

    print("Explicit central differences, seed case, dt = 0.8 dt_cr, 1 thread")
    hdr = (
        f"{'n_el':>5} {'dt_cr [s]':>11} {'mode':>8} {'steps/s':>10} {'ns/el-step':>11} "
        f"{'Mel-steps/s':>12} {'force ns/el':>12} {'solve ns/el':>12}"
    )
    print(hdr)
    for ne in (10, 20, 40, 80):
        m = model(ne)
        c = critical_dt(m, fit_meshes=(20, 40))
        dt = 0.8 * c.dt_critical
        t_end = min(0.2, 200_000 * dt)
        r = simulate_explicit(m, t_end, dt, c.dt_critical, progress=False)
        per_step = r.wall_s / r.steps
        tf, ts = per_step_costs(m)
        print(
            f"{ne:>5d} {c.dt_critical:>11.4e} {c.governing_mode:>8} {1 / per_step:>10.4g} "
            f"{per_step / ne * 1e9:>11.1f} {ne / per_step / 1e6:>12.2f} "
            f"{tf / ne * 1e9:>12.1f} {ts / ne * 1e9:>12.1f}"
        )
    if not args.skip_long:
        m = model(40)
        c = critical_dt(m, fit_meshes=(20, 40))
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        r = simulate_explicit(m, args.t_end, 0.8 * c.dt_critical, c.dt_critical, progress=False)
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"\n{args.t_end:g} s of the seed case at 40 elements: {r.steps} steps, "
            f"wall {r.wall_s:.2f} s (target < 30 s, stretch < 10 s), "
            f"energy drift {r.energy_drift_rel:.2e}, peak RSS {rss1:.0f} MB "
            f"(before the run {rss0:.0f} MB; target < 300 MB)"
        )


if __name__ == "__main__":
    main()
