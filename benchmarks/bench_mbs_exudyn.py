"""Multibody comparison against Exudyn: the Berzeri-Shabana flexible pendulum (on demand, not in
CI; needs the 'bench' extra).

Pendulum: L = 1.2 m, b = 0.2 m, h = 0.009 m (A = 0.0018 m^2, I = 1.215e-8 m^4), rho = 5540 kg/m^3,
E = 0.7 MPa, pinned at node 0 (position fixed, slope free), released from rest straight along +x
under gravity 9.81 m/s^2 along -y. Both codes use the same element (ANCF cable: cubic Hermite,
``eps = |r'| - 1``, ``K = (r' x r'') / |r'|^2``, 5 axial / 3 bending Gauss points, consistent
mass and gravity), the same mesh, the same integrator (generalized-alpha, ``rho_inf``) and the
same fixed step. Ours: ``ancf_beam.mbs`` (pin = revolute joint to ground, multipliers as
unknowns, index 3); Exudyn: ObjectANCFCable2D with CoordinateConstraints of node 0's position.

Prints the tip position at ``t_end`` from both codes, their distance (target: within 1e-3 L),
the energy drift of ours, and the time per step (process CPU and wall, best of ``--repeat``).

    python benchmarks/bench_mbs_exudyn.py [--elements 16] [--t-end 1.0] [--dt 1e-3]
        [--rho-inf 0.8] [--repeat 3] [--exudyn-module fast|regular]
"""

from __future__ import annotations

import argparse

import numpy as np
from benchcommon import (
    best_of,
    exudyn_beam,
    exudyn_settings,
    exudyn_tip,
    import_exudyn,
    machine_note,
)

PENDULUM = {
    "length": 1.2,  # m
    "width": 0.2,  # m
    "height": 0.009,  # m
    "rho": 5540.0,  # kg/m^3
    "E0": 0.7e6,  # Pa
    "g": 9.81,  # m/s^2
}
GAUSS = (5, 3)  # Exudyn's rule for ObjectANCFCable2D (axial, bending)
AGREE = 1e-3  # tip distance / L
NEWTON_ATOL_EXUDYN = 1e-8


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=16)
    ap.add_argument("--t-end", type=float, default=1.0, help="s")
    ap.add_argument("--dt", type=float, default=1e-3, help="s (both codes)")
    ap.add_argument("--rho-inf", type=float, default=0.8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--exudyn-module", choices=("fast", "regular"), default="fast")
    return ap.parse_args()


def ours(n_el: int, t_end: float, dt: float, rho_inf: float):
    """Our pendulum run: (tip (x, y) at t_end, energy drift, result)."""
    from ancf_beam.config import resolve_mechanism
    from ancf_beam.mbs.analysis import settings_from_spec
    from ancf_beam.mbs.integrators import integrate
    from ancf_beam.mbs.mechanisms import build_mechanism

    p = PENDULUM
    block = {
        "kind": "pendulum",
        "t_end": t_end,
        "sample_dt": dt,
        "g": p["g"],
        "beam": {"length": p["length"], "width": p["width"], "height": p["height"]},
        "material": {"E0": p["E0"], "rho": p["rho"]},
        "mesh": {"n_elements": n_el, "n_gauss_axial": GAUSS[0], "n_gauss_bending": GAUSS[1]},
        "solver": {"dt": dt, "rho_inf": rho_inf},
    }
    spec = resolve_mechanism({"mechanisms": {"pendulum": block}}, "pendulum")
    mech = build_mechanism(spec)
    settings = settings_from_spec(spec)

    def run():
        return integrate(mech.system, settings)

    return mech, run


def main() -> None:
    args = _parse()
    exu = import_exudyn(args.exudyn_module)
    n_steps = int(round(args.t_end / args.dt))
    print(f"Berzeri-Shabana pendulum, {args.elements} elements, generalized-alpha rho_inf = "
          f"{args.rho_inf}, dt = {args.dt:g} s, {args.t_end:g} s ({n_steps} steps)")  # fmt: skip
    print(machine_note())

    mech, run = ours(args.elements, args.t_end, args.dt, args.rho_inf)
    run()  # compile / load the numba cache
    t_o = best_of(run, args.repeat)
    res = t_o.result
    tip_o = mech.beam.node(-1).position(res.q[-1])

    beam = exudyn_beam(args.elements, "pin", params=PENDULUM)
    mbs = beam.mbs
    s = exudyn_settings("EigenSparse")
    ti = s.timeIntegration
    ti.numberOfSteps = n_steps
    ti.endTime = args.t_end
    ti.adaptiveStep = False
    ti.generalizedAlpha.spectralRadius = args.rho_inf
    ti.newton.absoluteTolerance = NEWTON_ATOL_EXUDYN

    def run_x():  # every solve starts from the initial state
        if not mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha):
            raise RuntimeError("Exudyn generalized-alpha failed")
        return np.array(exudyn_tip(beam))

    t_x = best_of(run_x, args.repeat)
    tip_x = t_x.result
    dist = float(np.linalg.norm(tip_o - tip_x)) / PENDULUM["length"]
    print(
        f"{'code':>8} {'tip_x [m]':>14} {'tip_y [m]':>14} {'us/step cpu':>12} {'us/step wall':>13}"
    )
    for name, tip, t in (("ours", tip_o, t_o), ("Exudyn", tip_x, t_x)):
        print(f"{name:>8} {tip[0]:>14.8f} {tip[1]:>14.8f} {t.cpu / n_steps * 1e6:>12.1f} "
              f"{t.wall / n_steps * 1e6:>13.1f}")  # fmt: skip
    verdict = "PASS" if dist <= AGREE else "FAIL"
    print(f"tip distance / L = {dist:.2e} (target {AGREE:g}: {verdict}); our energy drift "
          f"{res.energy_drift_rel():.2e} of max T; Newton {res.stats['mean_iterations']:.2f} "
          f"it/step; speed-up (Exudyn / ours) {t_x.cpu / t_o.cpu:.2f}x cpu, "
          f"{t_x.wall / t_o.wall:.2f}x wall")  # fmt: skip


if __name__ == "__main__":
    main()
