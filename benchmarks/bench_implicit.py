"""Implicit vs explicit benchmark (run on demand, not in CI).

Seed case released from rest under gravity, ``--t-end`` (default 2 s) of simulated time, at
10, 20, 40, 80, 160 elements (10 to bracket the crossover):

* explicit central differences at ``dt = 0.8 dt_cr`` (wall time of the full run; for meshes whose
  run would exceed ``--explicit-max-steps`` only a window is run and its wall time is scaled to
  the full duration, marked ``*``);
* generalized-alpha (``--rho-inf``, default 0.8) at a *fixed accuracy*: the largest
  ``dt = T1 / N`` on a sqrt(2)-spaced grid of ``N`` whose tip error
  ``max_t |y_tip - y_ref| / max_t |y_ref|`` stays below ``--target`` (default 1 %), with full and
  modified Newton. The reference ``y_ref`` is the explicit run of the same mesh when it ran in
  full, else the finest fully-run explicit mesh (the low modes that carry the tip motion are
  converged in space: the table prints the measured in-window difference ``ref diff``).

Prints one table and the crossover mesh (log-log interpolation of the explicit / implicit wall
time ratio) beyond which the implicit solver is cheaper.

    python benchmarks/bench_implicit.py [--t-end 2.0] [--meshes 10 20 40 80 160]
        [--explicit-max-steps 4e6] [--target 0.01] [--rho-inf 0.8] [--n-start 400]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.implicit import simulate_implicit
from ancf_beam.solvers.modal import modal_analysis, omega_max


def model(ne: int) -> BeamModel:
    return BeamModel(resolve_case({}, None, {"mesh.n_elements": ne}))


def tip_error(res, ref_t: np.ndarray, ref_y: np.ndarray) -> float:
    """Max tip-y deviation from the reference over the run, relative to the peak deflection."""
    mask = res.t <= ref_t[-1] + 1e-12
    y = np.interp(res.t[mask], ref_t, ref_y)
    return float(np.max(np.abs(res.tip_y[mask] - y)) / np.max(np.abs(ref_y)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--meshes", type=int, nargs="+", default=[10, 20, 40, 80, 160])
    ap.add_argument("--explicit-max-steps", type=float, default=4e6)
    ap.add_argument("--target", type=float, default=0.01, help="relative tip error bound")
    ap.add_argument("--rho-inf", type=float, default=0.8)
    ap.add_argument("--n-start", type=float, default=400.0, help="first N of dt = T1 / N")
    args = ap.parse_args()
    t_end = args.t_end

    warm = model(4)  # compile / load the numba caches outside the timings
    simulate_explicit(warm, 1e-3, 1e-6, progress=False)
    simulate_implicit(warm, 1e-2, 1e-3, "generalized-alpha", progress=False)
    simulate_implicit(warm, 1e-2, 1e-3, "generalized-alpha", newton="modified", progress=False)

    print(
        f"Seed case, {t_end:g} s from rest under gravity; explicit at 0.8 dt_cr; "
        f"generalized-alpha (rho_inf = {args.rho_inf:g}) at tip error < {100 * args.target:g} %"
    )
    hdr = (
        f"{'n_el':>5} {'dt_cr [s]':>10} {'expl steps':>11} {'expl wall':>10} "
        f"{'dt_impl [s]':>11} {'T1/dt':>6} {'dt/dt_cr':>9} {'steps':>7} {'it/step':>8} "
        f"{'tip err':>8} {'full [s]':>9} {'mod. [s]':>9} {'mod. us/st':>10} {'mod. err':>9} "
        f"{'expl/impl':>10} "
        f"{'ref diff':>9}"
    )
    print(hdr)
    ref_t = ref_y = None
    ref_mesh = None
    rows = []
    k_prev = 1
    for ne in args.meshes:
        m = model(ne)
        dtc = 2.0 / omega_max(m)[0]
        t1 = 2.0 * math.pi / modal_analysis(m, n_modes=1).omega[0]
        dt_e = 0.8 * dtc
        full_steps = math.ceil(t_end / dt_e)
        windowed = full_steps > args.explicit_max_steps
        t_run = t_end if not windowed else args.explicit_max_steps * dt_e
        ex = simulate_explicit(m, t_run, dt_e, dtc, progress=False)
        wall_e = ex.wall_s * (t_end / t_run)
        ref_diff = float("nan")
        if not windowed:
            ref_t, ref_y, ref_mesh = ex.t, ex.tip_y, ne
        elif ref_t is None:
            raise SystemExit("the first mesh must run in full: raise --explicit-max-steps")
        else:
            ref_diff = tip_error(ex, ref_t, ref_y)  # spatial difference to the reference mesh

        def run(n_per: float, newton: str = "full", m=m, t1=t1):
            return simulate_implicit(
                m,
                t_end,
                t1 / n_per,
                "generalized-alpha",
                rho_inf=args.rho_inf,
                newton=newton,
                progress=False,
            )

        # largest dt on the grid N = n_start 2^(k/2) meeting the target, starting one grid point
        # coarser than the previous mesh's choice (the requirement is nearly mesh independent)
        k = k_prev - 1
        tried: dict[int, tuple] = {}
        while k not in tried and k >= -4:
            res = run(args.n_start * 2.0 ** (k / 2))
            err = tip_error(res, ref_t, ref_y)
            tried[k] = (res, err)
            k = k - 1 if err < args.target else k + 1
        passing = [j for j, (_, e) in tried.items() if e < args.target]
        if not passing:
            raise SystemExit(f"{ne} elements: no dt on the grid reached the target")
        k_prev = min(passing)
        n_grid = args.n_start * 2.0 ** (k_prev / 2)
        res, err = tried[k_prev]
        mod = run(n_grid, "modified")
        err_mod = tip_error(mod, ref_t, ref_y)
        best = min(res.wall_s, mod.wall_s)
        rows.append((ne, wall_e, best))
        print(
            f"{ne:>5d} {dtc:>10.3e} {full_steps:>11d} {wall_e:>9.1f}{'*' if windowed else ' '} "
            f"{res.dt:>11.3e} {n_grid:>6.0f} {res.dt / dtc:>9.0f} {res.steps:>7d} "
            f"{res.newton_iterations.mean():>8.2f} {100 * err:>7.2f}% {res.wall_s:>9.2f} "
            f"{mod.wall_s:>9.2f} {1e6 * mod.wall_s / mod.steps:>10.1f} {100 * err_mod:>8.2f}% "
            f"{wall_e / best:>10.2f} "
            + (f"{100 * ref_diff:>8.3f}%" if windowed else f"{'(ref)':>9}"),
            flush=True,
        )
    print(
        f"\n* explicit wall time scaled from a {args.explicit_max_steps:.3g}-step window; tip "
        f"error measured against the {ref_mesh}-element explicit run ('ref diff': windowed "
        "explicit run vs that reference over the window)"
    )
    print(
        "expl/impl: explicit wall / best implicit wall (full or modified Newton); mod. us/st: "
        "modified Newton (the default) wall time per step, microseconds"
    )
    ratios = [(ne, we / wi) for ne, we, wi in rows]
    cross = None
    for (n0, r0), (n1, r1) in zip(ratios, ratios[1:], strict=False):
        if r0 < 1.0 <= r1:
            f = math.log(1.0 / r0) / math.log(r1 / r0)
            cross = math.exp(math.log(n0) + f * math.log(n1 / n0))
            break
    if ratios and ratios[0][1] >= 1.0:
        print(f"implicit already cheaper at the coarsest mesh ({ratios[0][0]} elements)")
    elif cross is not None:
        print(f"crossover: implicit becomes cheaper at about {cross:.0f} elements")
    else:
        print("no crossover in the tested meshes (explicit cheaper throughout)")
    print(f"finished at {time.strftime('%H:%M:%S')}")


if __name__ == "__main__":
    main()
