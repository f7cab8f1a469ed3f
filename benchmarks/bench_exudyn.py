"""Side-by-side benchmark against Exudyn (run on demand, not in CI; needs the 'bench' extra).

Builds the seed cantilever (L = 1 m, b = h = 0.02 m, rho = 7850 kg/m^3, E0 = 2.07e11 Pa, clamped at
x = 0, released from rest under gravity -y) in this project and in Exudyn (ObjectANCFCable2D, the
same element: eps = |r'| - 1, K = (r' x r'') / |r'|^2, 5 axial / 3 bending Gauss points on both
sides) and times, in one process, best of ``--repeat``:

* explicit: our central differences vs Exudyn's VelocityVerlet, same dt (0.8 dt_cr), element-steps
  per second for 10, 20, 40, 80 elements; tip deflection compared at the end (t = 0.05 s);
* implicit: generalized-alpha (rho_inf = 0.9), dt = 1e-4 s, 0.5 s, 20 and 40 elements;
* static: large deflection at E0 = 2.07e7 Pa, 20 and 40 elements;
* modal: the lowest 3 eigenfrequencies about the straight reference, 20 and 40 elements;
* pendulum, slider-crank: the flexible mechanisms of ``bench_mbs_exudyn.py`` (generalized-alpha,
  index 3, same step in both codes).

Each section first checks that both codes agree on the physics (tip deflection, frequencies), then
prints our figure, Exudyn's and the speed-up (ours / Exudyn: > 1 means we are faster), both in
wall time and in process CPU time (steadier on a shared machine), and ends with a summary of the
targets of issue 16 (explicit >= 12x at 20 and 40 elements, generalized-alpha per step >= 3x,
static and modal >= 1.5x, pendulum and slider-crank >= 2x).

    python benchmarks/bench_exudyn.py [--sections explicit,implicit,static,modal,pendulum,
        slider-crank] [--repeat 3]
        [--exudyn-module fast|regular] [--blas-threads N] [--t-end 0.05] [--max-el-steps 8e6]
"""

from __future__ import annotations

import argparse
import math
import sys

SECTIONS = ("explicit", "implicit", "static", "modal", "pendulum", "slider-crank")
LINEAR_SOLVERS_EXPLICIT = ("EXUdense", "EigenSparse", "EigenSparseSymmetric")
LINEAR_SOLVERS_IMPLICIT = ("EXUdense", "EigenSparse")
AGREE_EXPLICIT = 1e-6  # relative tip deflection, explicit at t_end
AGREE_IMPLICIT = 1e-6  # relative tip deflection, generalized-alpha at 0.5 s
AGREE_STATIC = 1e-6  # relative tip position, static large deflection
AGREE_MODAL = 1e-6  # relative, each of the 3 lowest frequencies
NEWTON_ATOL_EXUDYN = 1e-5  # its default 1e-10 is never met on this stiff beam (issue 8)
EXPLICIT_TARGETS = {20: (12.0, 12.0), 40: (12.0, 12.0)}  # n_el -> (target, goal); issue 16
RHO_INF = 0.9  # generalized-alpha spectral radius at infinity (Exudyn's default) for both codes
SHORT_MIN_TIME = 0.3  # s of CPU: static and modal calls (~1 ms) are repeated this long, both codes


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated subset")
    ap.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    ap.add_argument(
        "--exudyn-module",
        choices=("fast", "regular"),
        default="fast",
        help="Exudyn's compiled module: 'fast' = exudynCPPfast (no range checks; its fastest)",
    )
    ap.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="set OPENBLAS/OMP_NUM_THREADS (default: leave the environment alone)",
    )
    ap.add_argument("--meshes", default="10,20,40,80", help="explicit meshes")
    ap.add_argument("--t-end", type=float, default=0.05, help="explicit end time (s)")
    ap.add_argument(
        "--max-el-steps",
        type=float,
        default=8e6,
        help="cap on element-steps of one explicit run (shortens t_end for fine meshes)",
    )
    ap.add_argument("--no-constraint-demo", action="store_true", help="skip the clamp demo")
    ap.add_argument(
        "--prototypes",
        action="store_true",
        help="also time the prototype explicit kernels of proto_kernels.py (not the library; "
        "not in the targets) against the same Exudyn runs",
    )
    return ap.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None and ARGS.blas_threads is not None:
    import os

    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_v] = str(ARGS.blas_threads)

import bench_mbs_exudyn  # noqa: E402
import numpy as np  # noqa: E402  (after the BLAS thread setting)
from benchcommon import (  # noqa: E402
    E_LARGE_DEFLECTION,
    EXUDYN_GAUSS,
    best_of,
    blas_threads_note,
    exudyn_beam,
    exudyn_module_name,
    exudyn_settings,
    exudyn_tip,
    import_exudyn,
    machine_note,
    our_model,
    rel,
    verdict,
    warm_up_numba,
)

SUMMARY: list[tuple[str, float, float, float, bool]] = []  # (what, speed-up, target, goal, agree)


def _speedup_line(ours_cpu: float, exu_cpu: float, ours_wall: float, exu_wall: float) -> str:
    return f"{exu_cpu / ours_cpu:>6.2f}x cpu {exu_wall / ours_wall:>6.2f}x wall"


# ------------------------------------------------------------------------------------------
# explicit
# ------------------------------------------------------------------------------------------
def _explicit_target(ne: int) -> tuple[float, float]:
    """(target, goal) speed-up of the explicit row at ``ne`` elements (0: no target)."""
    return EXPLICIT_TARGETS.get(ne, (0.0, 0.0))


def section_explicit(
    meshes, t_end, max_el_steps, repeat, constraint_demo=True, prototypes=False
) -> None:
    from ancf_beam.solvers.explicit import simulate_explicit
    from ancf_beam.solvers.modal import omega_max

    exu = import_exudyn()
    print(
        "\n== Explicit: our central differences vs Exudyn VelocityVerlet, same dt = 0.8 dt_cr, "
        f"Gauss {EXUDYN_GAUSS[0]}/{EXUDYN_GAUSS[1]} =="
    )
    print(
        "   Exudyn clamp: point mass 1e12 on node 0 (its explicit solvers mishandle "
        "CoordinateConstraint); no sensors, no solution file. Ours: default output (tip and "
        "energies every 1e-4 s)."
    )
    print(
        f"{'n_el':>4} {'dt [s]':>10} {'steps':>7} {'t_end':>7} {'tip_y ours [m]':>17} "
        f"{'tip_y Exudyn [m]':>17} {'rel diff':>9} {'dt-err':>8} {'agree':>5} | "
        f"{'ours Mel-st/s':>13} {'Exudyn Mel-st/s':>15} {'(solver)':>22} | speed-up"
    )
    for ne in meshes:
        m = our_model(ne)
        dt = 0.8 * 2.0 / omega_max(m)[0]
        n_steps = int(round(t_end / dt))
        n_steps = max(1, min(n_steps, int(max_el_steps / ne)))
        te = n_steps * dt

        def ours(m=m, dt=dt, te=te):
            return simulate_explicit(m, te, dt, progress=False, snapshot_dt=te)

        to = best_of(ours, repeat)
        r = to.result
        tip_ours = float(r.q_snap[-1][-3])
        assert abs(r.t_snap[-1] - te) < 1e-9 * te
        # time-discretisation scale: the same run at dt/2 (ours), for context of the agreement
        r2 = simulate_explicit(m, te, dt / 2, progress=False, snapshot_dt=te)
        dt_err = rel(tip_ours, float(r2.q_snap[-1][-3]))

        beam = exudyn_beam(ne, "mass")
        best = None
        for solver in LINEAR_SOLVERS_EXPLICIT:
            s = exudyn_settings(solver)
            s.timeIntegration.numberOfSteps = n_steps
            s.timeIntegration.endTime = te

            def run(beam=beam, s=s):
                ok = beam.mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.VelocityVerlet)
                if not ok:
                    raise RuntimeError("Exudyn VelocityVerlet failed")
                return exudyn_tip(beam)

            te_ = best_of(run, repeat)
            if best is None or te_.cpu < best[1].cpu:
                best = (solver, te_)
        solver, tx = best
        tip_exu = tx.result[1]
        d = rel(tip_ours, tip_exu)
        ok = d <= AGREE_EXPLICIT
        el_steps = ne * n_steps
        print(
            f"{ne:>4d} {dt:>10.4e} {n_steps:>7d} {te:>7.4f} {tip_ours:>17.10e} {tip_exu:>17.10e} "
            f"{d:>9.2e} {dt_err:>8.1e} {verdict(ok):>5} | "
            f"{el_steps / to.cpu / 1e6:>6.2f} ({el_steps / to.wall / 1e6:>4.1f}w) "
            f"{el_steps / tx.cpu / 1e6:>7.2f} ({el_steps / tx.wall / 1e6:>4.1f}w) "
            f"{solver:>22} | {_speedup_line(to.cpu, tx.cpu, to.wall, tx.wall)}"
        )
        if ne in (20, 40):
            SUMMARY.append((f"explicit, {ne} elements", tx.cpu / to.cpu, *_explicit_target(ne), ok))
        if prototypes:
            from proto_kernels import fused_runner

            run = fused_runner(m, dt)
            run(2)
            tp = best_of(lambda run=run, n=n_steps: run(n), repeat)
            tip_p = float(tp.result[-3])
            print(
                f"{'':>4} proto_kernels.run_fused (NOT the library; no output): tip_y "
                f"{tip_p:.10e} (rel diff to Exudyn {rel(tip_p, tip_exu):.1e}), "
                f"{el_steps / tp.cpu / 1e6:.2f} Mel-st/s cpu, speed-up "
                f"{_speedup_line(tp.cpu, tx.cpu, tp.wall, tx.wall)}"
            )
    print(
        "   Mel-st/s = million element-steps per second from process CPU time (w: from wall "
        "time); dt-err = |tip(dt) - tip(dt/2)| / |tip| of our code (time-discretisation scale)."
    )
    if constraint_demo:
        ne = 20
        m = our_model(ne)
        dt = 0.8 * 2.0 / omega_max(m)[0]
        n_steps = int(round(t_end / dt))
        te = n_steps * dt
        r = simulate_explicit(m, te, dt, progress=False, snapshot_dt=te)
        tip_ours = float(r.q_snap[-1][-3])
        beam = exudyn_beam(ne, "constraint")
        s = exudyn_settings("EigenSparse")
        s.timeIntegration.numberOfSteps = n_steps
        s.timeIntegration.endTime = te
        beam.mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.VelocityVerlet)
        tip_c = exudyn_tip(beam)[1]
        print(
            f"   Exudyn VelocityVerlet with a CoordinateConstraint clamp, {ne} elements, "
            f"t = {te:.4f} s: tip_y = {tip_c:.6e} m vs {tip_ours:.6e} m (ours; point-mass clamp "
            f"agrees): rel diff {rel(tip_c, tip_ours):.2e} - the constraint clamp is wrong there."
        )


# ------------------------------------------------------------------------------------------
# implicit
# ------------------------------------------------------------------------------------------
def section_implicit(meshes, repeat, t_end=0.5, dt=1e-4) -> None:
    from ancf_beam.solvers.implicit import simulate_implicit
    from ancf_beam.solvers.schemes import NEWTON_DEFAULTS

    exu = import_exudyn()
    n_steps = int(round(t_end / dt))
    print(
        f"\n== Implicit generalized-alpha, rho_inf = {RHO_INF}, dt = {dt:g} s, {t_end:g} s "
        f"({n_steps} steps), Gauss {EXUDYN_GAUSS[0]}/{EXUDYN_GAUSS[1]} =="
    )
    print(
        f"   Exudyn: CoordinateConstraint clamp, Newton absoluteTolerance {NEWTON_ATOL_EXUDYN:g} "
        "(default 1e-10 never converges here), relativeTolerance 1e-8, fixed step. Ours: tol "
        "1e-8 relative (library default); the time loop runs in numba "
        "(simulate_implicit)."
    )
    print(
        f"{'n_el':>4} {'code':>7} {'variant':>26} {'tip_y(0.5 s) [m]':>18} {'Newton/step':>11} "
        f"{'us/step cpu':>11} {'us/step wall':>12} {'Mel-st/s':>9}"
    )
    # the library default first (modified Newton, 'auto' predictor), then the alternatives
    default = (NEWTON_DEFAULTS["newton"], NEWTON_DEFAULTS["predictor"])
    ours_variants = (default, ("modified", "extrapolate"))
    ours_variants += (("full", "auto"),)
    for ne in meshes:
        m = our_model(ne)
        ours = {}
        for newton, pred in ours_variants:

            def run(m=m, newton=newton, pred=pred):
                return simulate_implicit(
                    m,
                    t_end,
                    dt,
                    "generalized-alpha",
                    rho_inf=RHO_INF,
                    progress=False,
                    newton=newton,
                    predictor=pred,
                )

            t = best_of(run, repeat)
            r = t.result
            ours[(newton, pred)] = (t, float(r.tip_y[-1]), float(np.mean(r.newton_iterations)))
        beam = exudyn_beam(ne, "constraint")
        exud = {}
        for solver in LINEAR_SOLVERS_IMPLICIT:
            for modified in (True, False):
                s = exudyn_settings(solver)
                ti = s.timeIntegration
                ti.numberOfSteps = n_steps
                ti.endTime = t_end
                ti.adaptiveStep = False
                ti.generalizedAlpha.spectralRadius = RHO_INF
                ti.newton.absoluteTolerance = NEWTON_ATOL_EXUDYN
                ti.newton.useModifiedNewton = modified

                def run(beam=beam, s=s):
                    ok = beam.mbs.SolveDynamic(
                        s, solverType=exu.DynamicSolverType.GeneralizedAlpha, storeSolver=True
                    )
                    if not ok:
                        raise RuntimeError("Exudyn generalized-alpha failed")
                    it = beam.mbs.sys["dynamicSolver"].it
                    return exudyn_tip(beam)[1], it.newtonStepsCount / n_steps

                t = best_of(run, repeat)
                name = f"{'modified' if modified else 'full'} Newton, {solver}"
                exud[name] = (t, t.result[0], t.result[1])
        for label, table in (("ours", ours), ("Exudyn", exud)):
            for key, (t, tip, nit) in table.items():
                name = key if isinstance(key, str) else f"{key[0]} Newton, {key[1]}"
                print(
                    f"{ne:>4d} {label:>7} {name:>26} {tip:>18.10e} {nit:>11.2f} "
                    f"{t.cpu / n_steps * 1e6:>11.1f} {t.wall / n_steps * 1e6:>12.1f} "
                    f"{ne * n_steps / t.cpu / 1e6:>9.3f}"
                )
        bo = min(ours.values(), key=lambda v: v[0].cpu)
        bx = min(exud.values(), key=lambda v: v[0].cpu)
        default_o = ours[ours_variants[0]]
        d = max(rel(v[1], bx[1]) for v in ours.values())
        ok = d <= AGREE_IMPLICIT
        print(
            f"   {ne} elements: tips agree to {d:.2e} relative ({verdict(ok)}); speed-up best vs "
            f"best {_speedup_line(bo[0].cpu, bx[0].cpu, bo[0].wall, bx[0].wall)}; library "
            f"default ({default[0]} Newton, {default[1]} predictor) vs Exudyn best "
            f"{_speedup_line(default_o[0].cpu, bx[0].cpu, default_o[0].wall, bx[0].wall)}"
        )
        SUMMARY.append((f"implicit GA, {ne} elements", bx[0].cpu / bo[0].cpu, 3.0, 3.0, ok))


# ------------------------------------------------------------------------------------------
# static
# ------------------------------------------------------------------------------------------
def section_static(meshes, repeat) -> None:
    # numba loaded, as in any process that has run a kernel: solve_static then takes its
    # compiled path (a process without numba solves small meshes in plain numpy: the
    # start-up of the CLI, not this section's warm solve; ancf_beam.solvers.static)
    import ancf_beam.beam.kernels  # noqa: F401
    from ancf_beam.solvers.static import solve_static

    print(f"\n== Static large deflection, E0 = {E_LARGE_DEFLECTION:g} Pa, full load in one step ==")
    print(
        "   Solve only, on a freshly built model for every repetition (ours: solve_static with "
        "the library defaults on a new BeamModel; Exudyn: SolveStatic on the assembled system, "
        f"CoordinateConstraint clamp, absoluteTolerance {NEWTON_ATOL_EXUDYN:g}, best linear "
        "solver). Model build times are shown separately."
    )
    print(
        f"{'n_el':>4} {'tip ours (x, y) [m]':>30} {'tip Exudyn (x, y) [m]':>30} {'rel diff':>9} "
        f"{'agree':>5} | {'ours ms':>8} {'it':>3} {'Exudyn ms':>9} {'it':>3} {'(solver)':>12} | "
        f"speed-up               | {'build ours ms':>13} {'Exudyn ms':>9}"
    )
    for ne in meshes:
        tb = best_of(lambda ne=ne: our_model(ne, E0=E_LARGE_DEFLECTION), repeat)
        to = best_of(
            solve_static,
            repeat,
            setup=lambda ne=ne: our_model(ne, E0=E_LARGE_DEFLECTION),
            min_time=SHORT_MIN_TIME,
        )
        r = to.result
        tbx = best_of(lambda ne=ne: exudyn_beam(ne, "constraint", E0=E_LARGE_DEFLECTION), repeat)
        beam = tbx.result
        best = None
        for solver in LINEAR_SOLVERS_IMPLICIT:
            s = exudyn_settings(solver)
            s.staticSolver.newton.absoluteTolerance = NEWTON_ATOL_EXUDYN
            s.staticSolver.numberOfLoadSteps = 1

            def run(beam=beam, s=s):
                ok = beam.mbs.SolveStatic(s, storeSolver=True)
                if not ok:
                    raise RuntimeError("Exudyn static solver failed")
                return exudyn_tip(beam), beam.mbs.sys["staticSolver"].it.newtonStepsCount

            t = best_of(run, repeat, min_time=SHORT_MIN_TIME)
            if best is None or t.cpu < best[1].cpu:
                best = (solver, t)
        solver, tx = best
        (xx, yx), itx = tx.result
        d = max(rel(r.tip_x, xx), rel(r.tip_y, yx))
        ok = d <= AGREE_STATIC
        print(
            f"{ne:>4d} ({r.tip_x:>13.10f}, {r.tip_y:>13.10f}) ({xx:>13.10f}, {yx:>13.10f}) "
            f"{d:>9.2e} {verdict(ok):>5} | {to.cpu * 1e3:>8.2f} {r.newton_iterations:>3d} "
            f"{tx.cpu * 1e3:>9.2f} {itx:>3d} {solver:>12} | "
            f"{_speedup_line(to.cpu, tx.cpu, to.wall, tx.wall)} | {tb.cpu * 1e3:>13.2f} "
            f"{tbx.cpu * 1e3:>9.2f}"
        )
        SUMMARY.append((f"static, {ne} elements", tx.cpu / to.cpu, 1.5, 1.5, ok))
    print("   ms = best process CPU time; it = Newton iterations.")


# ------------------------------------------------------------------------------------------
# modal
# ------------------------------------------------------------------------------------------
def section_modal(meshes, repeat) -> None:
    from ancf_beam.solvers.modal import modal_analysis

    print("\n== Lowest 3 eigenfrequencies about the straight reference ==")
    print(
        "   Analysis only, on a freshly built model for every repetition (both assemble mass "
        "and stiffness inside). Ours: modal_analysis (dense scipy eigh). Exudyn: "
        "ComputeODE2Eigenvalues on the free beam with constrainedCoordinates = node 0; dense "
        "(all eigenvalues) and sparse (3), the faster shown."
    )
    print(
        f"{'n_el':>4} {'omega ours [rad/s]':>38} {'omega Exudyn [rad/s]':>38} {'rel diff':>9} "
        f"{'agree':>5} | {'ours ms':>8} {'Exudyn ms':>9} {'(mode)':>7} | speed-up"
    )
    for ne in meshes:

        def ours(m):
            return modal_analysis(m, n_modes=3, about="reference").omega

        to = best_of(ours, repeat, setup=lambda ne=ne: our_model(ne), min_time=SHORT_MIN_TIME)
        best = None
        for sparse in (False, True):
            s = exudyn_settings("EigenSparse" if sparse else "EXUdense")

            def run(beam, s=s, sparse=sparse):
                ev, _ = beam.mbs.ComputeODE2Eigenvalues(
                    s,
                    useSparseSolver=sparse,
                    numberOfEigenvalues=3 if sparse else 0,
                    constrainedCoordinates=[0, 1, 2, 3],
                )
                return np.sqrt(np.sort(np.abs(np.asarray(ev)))[:3])

            t = best_of(
                run, repeat, setup=lambda ne=ne: exudyn_beam(ne, "none"), min_time=SHORT_MIN_TIME
            )
            if best is None or t.cpu < best[1].cpu:
                best = ("sparse" if sparse else "dense", t)
        mode, tx = best
        wo, wx = np.asarray(to.result), np.asarray(tx.result)
        d = float(np.max(np.abs(wo - wx) / wx))
        ok = d <= AGREE_MODAL
        fmt = " ".join(f"{w:>12.6f}" for w in wo)
        fmx = " ".join(f"{w:>12.6f}" for w in wx)
        print(
            f"{ne:>4d} {fmt} {fmx} {d:>9.2e} {verdict(ok):>5} | {to.cpu * 1e3:>8.2f} "
            f"{tx.cpu * 1e3:>9.2f} {mode:>7} | {_speedup_line(to.cpu, tx.cpu, to.wall, tx.wall)}"
        )
        SUMMARY.append((f"modal (3 modes), {ne} elements", tx.cpu / to.cpu, 1.5, 1.5, ok))
    print(
        "   ms = best process CPU time; the analytic first frequency is 104.24 rad/s. Dense "
        "LAPACK calls on a busy machine depend strongly on the BLAS thread count: compare a "
        "run with --blas-threads 1."
    )


# ------------------------------------------------------------------------------------------
def main() -> None:
    args = ARGS if ARGS is not None else _parse()
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    bad = [s for s in sections if s not in SECTIONS]
    if bad:
        raise SystemExit(f"unknown section(s) {bad}; choose from {', '.join(SECTIONS)}")
    import_exudyn(args.exudyn_module)
    print("Benchmark: ancf_beam vs Exudyn, seed cantilever, 1 thread each")
    print(f"   machine: {machine_note()}; {blas_threads_note()}")
    print(f"   {exudyn_module_name()}; numpy {np.__version__}; python {sys.version.split()[0]}")
    print(f"   best of {args.repeat}; speed-up = Exudyn time / our time (> 1: we are faster)")
    warm_up_numba()
    if "explicit" in sections:
        meshes = [int(x) for x in args.meshes.split(",")]
        section_explicit(
            meshes,
            args.t_end,
            args.max_el_steps,
            args.repeat,
            not args.no_constraint_demo,
            args.prototypes,
        )
    if "implicit" in sections:
        section_implicit((20, 40), args.repeat)
    if "static" in sections:
        section_static((20, 40), args.repeat)
    if "modal" in sections:
        section_modal((20, 40), args.repeat)
    if "pendulum" in sections:
        SUMMARY.append(bench_mbs_exudyn.section_pendulum(args.repeat))
    if "slider-crank" in sections:
        SUMMARY.append(bench_mbs_exudyn.section_slider_crank(args.repeat))
    if SUMMARY:
        print("\n== Targets (issue 16), speed-up from process CPU time ==")
        print(
            f"{'what':<32} {'speed-up':>9} {'target':>7} {'goal':>6} {'physics':>8} {'result':>7}"
        )
        for what, sp, target, goal, agree in SUMMARY:
            res = "PASS" if (sp >= target and agree) else "FAIL"
            extra = " (goal met)" if sp >= goal and goal > target else ""
            print(
                f"{what:<32} {sp:>8.2f}x {target:>6.1f}x {goal:>5.1f}x {verdict(agree):>8} "
                f"{res:>7}{extra}"
            )
        worst = [w for w in SUMMARY if not (w[1] >= w[2] and w[4])]
        if worst and math.isfinite(worst[0][1]):
            print(f"   {len(worst)} target(s) not met; see benchmarks/README.md for the analysis.")


if __name__ == "__main__":
    main()
