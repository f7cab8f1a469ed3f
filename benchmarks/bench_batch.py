"""Batch mode for parameter sweeps: many beams stepped together, and a process pool.

Section ``soa`` (default): the structure-of-arrays explicit batch
(:func:`ancf_beam.solvers.batch.explicit_batch`, one numba loop over the time steps with the
models in the innermost loops) against the same central-difference runs one at a time
(:func:`ancf_beam.solvers.explicit.simulate_explicit`, the single-model loop, default output),
for batches of 8, 16 and 32 models of a (lam, n) grid at 10, 20 and 40 elements, all at the
smallest of the models' stable steps (0.8 dt_cr). Prints process CPU per element-step (ns,
median of ``--repeat`` interleaved repeats) of the whole calls (setup and the end of the runs
included) and of the time loops alone (``DynamicsResult.cpu_s``), the ratios, and the
largest tip difference between the two (round-off: summation order only). ``--profile``: the
force and the mass solve alone, single-model kernels against the batch kernels.

Section ``pool``: a sweep over the defect parameters (lam, n) of the seed cantilever, as an
identification grid would run it: for every point the first natural frequencies, the static
tip, or a short explicit run, each first one at a time in this process and then with
:func:`ancf_beam.solvers.batch.run_batch` (workers forked from this process, BLAS on one
thread each). Prints both wall times, the speed-up (the machine's cores bound it) and the
largest difference between the two results (they must be identical).

    python benchmarks/bench_batch.py [--section soa|pool|all] [--repeat 3]
        [--soa-elements 10,20,40] [--soa-batches 8,16,32] [--soa-steps 4000]
        [--grid 6] [--elements 10] [--workers N]
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
        )
        for lam, n in itertools.product(lams, ns)
    ]


def _diff(a, b) -> float:
    if isinstance(a, list):
        return max(float(np.max(np.abs(x[1] - y[1]))) for x, y in zip(a, b, strict=True))
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def _soa_cases(count: int, n_el: int) -> list:
    """``count`` cases of a (lam, n) grid (lam in [0, 0.6], n in [0.5, 3])."""
    side = int(np.ceil(np.sqrt(count)))
    pts = list(itertools.product(np.linspace(0.0, 0.6, side), np.linspace(0.5, 3.0, side)))
    return [
        resolve_case(
            {}, None, {"mesh.n_elements": n_el, "defect.lam": float(lam), "defect.n": float(n)}
        )
        for lam, n in pts[:count]
    ]


def soa_section(elements, batches, steps: int, repeat: int) -> None:
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.explicit import simulate_explicit
    from ancf_beam.solvers.modal import omega_max

    print(f"Many beams stepped together (structure of arrays); {machine_note()}")
    print(f"   {steps} steps per model, process CPU per element-step, median of {repeat}")
    print(f"{'':>10} {'whole call [ns]':^28} {'time loop [ns]':^28}")
    print(
        f"{'n_el':>5} {'B':>4} {'one/time':>9} {'batch':>9} {'ratio':>8} {'one/time':>9} "
        f"{'batch':>9} {'ratio':>8} {'max tip diff [m]':>17}"
    )
    warm = [BeamModel(c) for c in _soa_cases(2, 4)]
    batch.explicit_batch(warm, 1e-5, 1e-7)  # load the kernels before timing
    simulate_explicit(warm[0], 1e-5, 1e-7, progress=False)
    for n_el in elements:
        for nb in batches:
            models = [BeamModel(c) for c in _soa_cases(nb, n_el)]
            dt = 0.8 * min(2.0 / omega_max(m)[0] for m in models)
            t_end = steps * dt
            work = nb * steps * n_el
            times = {"one": [], "bat": [], "one_loop": [], "bat_loop": []}
            for _ in range(repeat):  # interleaved: the same load on both
                c0 = time.process_time()
                single = [simulate_explicit(m, t_end, dt, progress=False) for m in models]
                times["one"].append(time.process_time() - c0)
                times["one_loop"].append(sum(r.cpu_s for r in single))
                c0 = time.process_time()
                together = batch.explicit_batch(models, t_end, dt)
                times["bat"].append(time.process_time() - c0)
                times["bat_loop"].append(sum(r.cpu_s for r in together))
            one_best, bat_best, one_loop, bat_loop = (
                float(np.median(times[k])) for k in ("one", "bat", "one_loop", "bat_loop")
            )
            diff = max(
                float(np.max(np.abs(a.tip_y - b.tip_y)))
                for a, b in zip(single, together, strict=True)
            )
            one, bat = 1e9 * one_best / work, 1e9 * bat_best / work
            o_l, b_l = 1e9 * one_loop / work, 1e9 * bat_loop / work
            print(
                f"{n_el:>5} {nb:>4} {one:>9.1f} {bat:>9.1f} {one / bat:>7.2f}x {o_l:>9.1f} "
                f"{b_l:>9.1f} {o_l / b_l:>7.2f}x {diff:>17.1e}"
            )
    print("   ratio = one at a time / batch; the tip difference is round-off (summation order).")


def profile_section(n_el: int, nb: int, calls: int = 3000) -> None:
    """Where a step's time goes: the elastic force and the mass solve alone, ns per
    element-step (per model), single-model kernels against the batch kernels."""
    from numba import njit

    from ancf_beam.beam import kernels
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.linalg import row_factor, solve_xy_rows
    from ancf_beam.solvers import explicit_batch as eb

    @njit
    def single_force(n, q, kargs, sa, f):
        for _ in range(n):
            kernels.force(q, kargs, sa, f)

    @njit
    def single_solve(n, rx, ry, x, zx, zy):
        for _ in range(n):
            solve_xy_rows(rx, ry, x, zx, zy)

    @njit
    def batch_force(n, q, bd, f, acc):
        for _ in range(n):
            eb.batch_force(q, bd, f, acc)

    @njit
    def batch_solve(n, rf, m, x, z, w, nl, shared):
        for _ in range(n):
            if shared:
                eb._solve_shared(rf, m, x, z, w, nl)
            else:
                eb._solve(rf, m, x, z, w, nl)

    def best(fn, *a) -> float:
        fn(1, *a)
        t = np.inf
        for _ in range(5):
            c0 = time.process_time()
            fn(calls, *a)
            t = min(t, time.process_time() - c0)
        return t / calls

    model = BeamModel(_soa_cases(1, n_el)[0])
    q = model.reference()
    q[1::4] += 1e-3 * model.x_nodes**2  # a bent state
    kargs = model.kernel_args()
    sa = kernels.soa_args(kargs, model.le, False)
    f = np.zeros(model.n_dof)
    cbx, cby, _, _ = model.mass_cholesky_xy
    nf = model.n_free
    x1 = np.ones(nf)
    s_force = best(single_force, q, kargs, sa, f) / n_el
    s_solve = (
        best(
            single_solve, row_factor(cbx), row_factor(cby), x1, np.zeros(nf // 2), np.zeros(nf // 2)
        )
        / n_el
    )
    lanes = min(nb, eb.LANES)
    cap = {}
    orig = eb.batch_chunk

    def capture(*a):
        cap["a"] = a
        return orig(*a)

    eb.batch_chunk = capture
    try:
        models = [BeamModel(c) for c in _soa_cases(lanes, n_el)]
        eb.run_explicit_batch(models, 1e-6, 1e-7)
    finally:
        eb.batch_chunk = orig
    _, _, bd, st, _, wk, _ = cap["a"]
    b_force = best(batch_force, st.q, bd, wk.f, wk.acc) / (n_el * lanes)
    b_solve = best(batch_solve, bd.rf, nf // 2, wk.r, wk.z, wk.w, np.uint64(bd.nl), bd.shared_rf)
    b_solve /= n_el * lanes
    print(f"Profile at {n_el} elements, {lanes} lanes (ns per element-step and model):")
    kind = "one shared factor" if bd.shared_rf else "a factor per model"
    print(
        f"   force: single {1e9 * s_force:.1f}, batch {1e9 * b_force:.1f}; mass solve: "
        f"single {1e9 * s_solve:.1f}, batch {1e9 * b_solve:.1f} ({kind})"
    )


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--section", choices=("soa", "pool", "all"), default="soa")
    ap.add_argument("--soa-elements", type=_ints, default=[10, 20, 40])
    ap.add_argument("--soa-batches", type=_ints, default=[8, 16, 32])
    ap.add_argument("--soa-steps", type=int, default=10000, help="steps per model")
    ap.add_argument("--profile", action="store_true", help="force and solve alone, 20 el")
    ap.add_argument("--grid", type=int, default=6, help="points per parameter (grid x grid)")
    ap.add_argument("--elements", type=int, default=10)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--t-end", type=float, default=0.1, help="s, explicit runs")
    args = ap.parse_args()
    if args.section in ("soa", "all"):
        soa_section(args.soa_elements, args.soa_batches, args.soa_steps, args.repeat)
        if args.profile:
            profile_section(20, 8)
    if args.section in ("pool", "all"):
        pool_section(args)


def pool_section(args) -> None:
    cases = _cases(args.grid, args.elements)
    workers = args.workers or batch.default_workers()
    print(
        f"Batch sweep: {len(cases)} cases ({args.grid} x {args.grid} in (lam, n)), "
        f"{args.elements} elements; {machine_note()}"
    )
    print(f"   {workers} workers; wall time, best of {args.repeat}")
    jobs = {
        "modal (3 frequencies)": lambda w: batch.modal_sweep(cases, 3, workers=w),
        "static tip": lambda w: batch.static_sweep(cases, workers=w),
        f"explicit {args.t_end:g} s": lambda w: batch.explicit_sweep(cases, args.t_end, workers=w),
    }
    batch.modal_sweep(cases[:1], 3, workers=1)  # load the numba kernels before timing
    batch.static_sweep(cases[:1], workers=1)
    batch.explicit_sweep(cases[:1], 1e-4, workers=1)
    print(
        f"{'task':<22} {'one at a time [s]':>18} {'batch [s]':>10} {'speed-up':>9} {'max diff':>9}"
    )
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
        print(
            f"{name:<22} {best[1]:>18.3f} {best[workers]:>10.3f} "
            f"{best[1] / best[workers]:>8.2f}x {_diff(res[1], res[workers]):>9.1e}"
        )
    print(
        "   speed-up = one at a time / batch (wall); max diff: largest absolute difference "
        "between the two result sets (0: identical)."
    )


if __name__ == "__main__":
    main()
