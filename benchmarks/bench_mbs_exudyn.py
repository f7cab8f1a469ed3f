"""Multibody comparison against Exudyn (on demand, not in CI; needs the 'bench' extra).

Two flexible mechanisms, each with the same element (ANCF cable: cubic Hermite,
``eps = |r'| - 1``, ``K = (r' x r'') / |r'|^2``, 5 axial / 3 bending Gauss points, consistent
mass and gravity), the same mesh, the same integrator (generalized-alpha, ``rho_inf``, index 3
with the multipliers as unknowns) and the same fixed step in both codes:

* ``pendulum``: Berzeri-Shabana, L = 1.2 m, b = 0.2 m, h = 0.009 m, rho = 5540 kg/m^3,
  E = 0.7 MPa, pinned at node 0 (position fixed, slope free), released from rest along +x under
  gravity 9.81 m/s^2 (-y); 16 elements, 1 s, dt = 1e-3 s. Ours: ``ancf_beam.mbs`` (revolute
  joint to ground); Exudyn: ObjectANCFCable2D with CoordinateConstraints on node 0's position.
* ``slider-crank``: rigid crank 0.153 m / 0.038 kg / 7.4e-5 kg m^2 driven at 150 rad/s, ANCF
  aluminium rod 0.306 m (A = 4.49e-5 m^2 square, E = 70 GPa, rho = 2770 kg/m^3), slider
  0.076 kg; 8 elements, 0.1 s, dt = 1e-5 s; gravity 9.81 m/s^2. Ours: the ``slider-crank``
  mechanism of ``ancf_beam.mbs.mechanisms`` (position-level driver ``theta = omega t``); Exudyn:
  ObjectRigidBody2D crank and slider, ObjectJointRevolute2D pins, CoordinateConstraints for
  the guide, and the drive as a velocity-level CoordinateConstraint ``theta' = omega`` (the
  same motion from the consistent start; a position-level drive would need a Python user
  function, which would slow Exudyn down).

Each section prints the physics agreement first (pendulum: tip position at ``t_end``,
distance / L; slider-crank: slider position and rod mid-span deflection at ``t_end``), then the
time per step (process CPU and wall, best of ``--repeat``) and the speed-up.

    python benchmarks/bench_mbs_exudyn.py [--sections pendulum,slider-crank] [--repeat 3]
        [--exudyn-module fast|regular]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from benchcommon import (
    best_of,
    exudyn_beam,
    exudyn_settings,
    exudyn_tip,
    import_exudyn,
    machine_note,
    verdict,
)

PENDULUM = {
    "length": 1.2,  # m
    "width": 0.2,  # m
    "height": 0.009,  # m
    "rho": 5540.0,  # kg/m^3
    "E0": 0.7e6,  # Pa
    "g": 9.81,  # m/s^2
}
SIDE = math.sqrt(4.49e-5)  # m
SLIDER_CRANK = {
    "crank": {"length": 0.153, "mass": 0.038, "inertia": 7.4e-5},
    "rod": {"length": 0.306, "side": SIDE, "E0": 7.0e10, "rho": 2770.0},
    "slider": {"mass": 0.076, "inertia": 1e-6},
    "omega": 150.0,  # rad/s
    "g": 9.81,
}
GAUSS = (5, 3)  # Exudyn's rule for ObjectANCFCable2D (axial, bending)
AGREE = 1e-3  # pendulum: tip distance / L; slider-crank: relative to the crank length
AGREE_MID = 1e-4  # slider-crank: rod mid-node offset from the chord, relative
NEWTON_ATOL_EXUDYN = 1e-8
SECTIONS = ("pendulum", "slider-crank")
TARGET = 2.0  # issue 16: each mechanism at least 2x faster than Exudyn


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rho-inf", type=float, default=0.8)
    ap.add_argument("--exudyn-module", choices=("fast", "regular"), default="fast")
    return ap.parse_args()


def _our_run(block: dict):
    from ancf_beam.config import resolve_mechanism
    from ancf_beam.mbs.analysis import settings_from_spec
    from ancf_beam.mbs.integrators import integrate
    from ancf_beam.mbs.mechanisms import build_mechanism

    spec = resolve_mechanism({"mechanisms": {"m": block}}, "m")
    mech = build_mechanism(spec)
    settings = settings_from_spec(spec)
    return mech, lambda: integrate(mech.system, settings)


def _mesh(n_el: int) -> dict:
    return {"n_elements": n_el, "n_gauss_axial": GAUSS[0], "n_gauss_bending": GAUSS[1]}


def _exudyn_ga(exu, s, n_steps: int, t_end: float, rho_inf: float) -> None:
    ti = s.timeIntegration
    ti.numberOfSteps = n_steps
    ti.endTime = t_end
    ti.adaptiveStep = False
    ti.generalizedAlpha.spectralRadius = rho_inf
    ti.newton.absoluteTolerance = NEWTON_ATOL_EXUDYN


def _fastest_exudyn(exu, mbs, n_steps, t_end, rho_inf, repeat, result):
    """Exudyn's generalized-alpha with each sparse/dense solver; the fastest (Timing, name)."""
    best = None
    for solver in ("EigenSparse", "EXUdense"):
        s = exudyn_settings(solver)
        _exudyn_ga(exu, s, n_steps, t_end, rho_inf)

        def run(s=s):  # every solve starts from the initial state
            if not mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha):
                raise RuntimeError("Exudyn generalized-alpha failed")
            return result()

        t = best_of(run, repeat)
        if best is None or t.cpu < best[0].cpu:
            best = (t, solver)
    return best


def _rows(name, n_steps, ours, exud, solver):
    print(f"   {'':>8} {'us/step cpu':>12} {'us/step wall':>13}")
    print(f"   {'ours':>8} {ours.cpu / n_steps * 1e6:>12.1f} {ours.wall / n_steps * 1e6:>13.1f}")
    print(
        f"   {'Exudyn':>8} {exud.cpu / n_steps * 1e6:>12.1f} {exud.wall / n_steps * 1e6:>13.1f}"
        f"  ({solver})"
    )
    print(
        f"   speed-up (Exudyn / ours) {exud.cpu / ours.cpu:.2f}x cpu, "
        f"{exud.wall / ours.wall:.2f}x wall"
    )


# ------------------------------------------------------------------------------------------
def section_pendulum(repeat: int, n_el=16, t_end=1.0, dt=1e-3, rho_inf=0.8, exu=None) -> tuple:
    """Pendulum section; returns the summary row (what, speed-up, target, goal, agree)."""
    exu = exu or import_exudyn()
    n_steps = int(round(t_end / dt))
    print(
        f"\n== Berzeri-Shabana pendulum, {n_el} elements, generalized-alpha rho_inf = "
        f"{rho_inf}, dt = {dt:g} s, {t_end:g} s ({n_steps} steps) =="
    )
    p = PENDULUM
    mech, run = _our_run(
        {
            "kind": "pendulum",
            "t_end": t_end,
            "sample_dt": dt,
            "g": p["g"],
            "beam": {"length": p["length"], "width": p["width"], "height": p["height"]},
            "material": {"E0": p["E0"], "rho": p["rho"]},
            "mesh": _mesh(n_el),
            "solver": {"dt": dt, "rho_inf": rho_inf},
        }
    )
    run()  # compile / load the numba cache
    t_o = best_of(run, repeat)
    res = t_o.result
    tip_o = mech.beam.node(-1).position(res.q[-1])
    beam = exudyn_beam(n_el, "pin", params=PENDULUM)
    t_x, solver = _fastest_exudyn(
        exu, beam.mbs, n_steps, t_end, rho_inf, repeat, lambda: np.array(exudyn_tip(beam))
    )
    tip_x = t_x.result
    dist = float(np.linalg.norm(tip_o - tip_x)) / p["length"]
    ok = dist <= AGREE
    print(
        f"   tip at t_end: ours ({tip_o[0]:.8f}, {tip_o[1]:.8f}) m, Exudyn ({tip_x[0]:.8f}, "
        f"{tip_x[1]:.8f}) m; distance / L = {dist:.2e} (target {AGREE:g}: {verdict(ok)}); "
        f"our energy drift {res.energy_drift_rel():.2e} of max T; Newton "
        f"{res.stats['mean_iterations']:.2f} it/step"
    )
    _rows("pendulum", n_steps, t_o, t_x, solver)
    return (f"pendulum, {n_el} el, GA", t_x.cpu / t_o.cpu, TARGET, TARGET, ok)


# ------------------------------------------------------------------------------------------
def exudyn_slider_crank(n_el: int):
    """The flexible slider-crank in Exudyn at t = 0 (crank along +x, rod along +x, consistent
    velocities: the rod turning rigidly about the slider, which is at rest at the dead
    centre). Returns (mbs, result() -> (slider x, rod mid-node y relative to the chord))."""
    exu = import_exudyn()
    from exudyn import itemInterface as ii

    c, rd, sl, om, g = (SLIDER_CRANK[k] for k in ("crank", "rod", "slider", "omega", "g"))
    r, length = c["length"], rd["length"]
    area, inertia = rd["side"] ** 2, rd["side"] ** 4 / 12.0
    le = length / n_el
    om_rod = -om * r / length  # rod angular velocity at t = 0
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    grav = [0.0, -g, 0.0]

    def rigid(pos, vel, mass, j):
        n = mbs.AddNode(ii.NodeRigidBody2D(referenceCoordinates=pos, initialVelocities=vel))
        b = mbs.AddObject(ii.ObjectRigidBody2D(mass=mass, inertia=j, nodeNumber=n))
        mbs.AddLoad(
            ii.LoadMassProportional(
                markerNumber=mbs.AddMarker(ii.MarkerBodyMass(bodyNumber=b)), loadVector=grav
            )
        )
        return n, b

    crank_n, crank = rigid([0.5 * r, 0.0, 0.0], [0.0, 0.5 * om * r, om], c["mass"], c["inertia"])
    slider_n, slider = rigid([r + length, 0.0, 0.0], [0.0, 0.0, 0.0], sl["mass"], sl["inertia"])
    nodes = []
    for k in range(n_el + 1):
        s = k * le
        v0 = [0.0, om * r + om_rod * s, 0.0, om_rod]
        nodes.append(
            mbs.AddNode(
                ii.NodePoint2DSlope1(
                    referenceCoordinates=[r + s, 0.0, 1.0, 0.0], initialVelocities=v0
                )
            )
        )
    for e in range(n_el):
        obj = mbs.AddObject(
            ii.ObjectANCFCable2D(
                length=le,
                massPerLength=rd["rho"] * area,
                bendingStiffness=rd["E0"] * inertia,
                axialStiffness=rd["E0"] * area,
                nodeNumbers=[nodes[e], nodes[e + 1]],
            )
        )
        mk = mbs.AddMarker(ii.MarkerBodyMass(bodyNumber=obj))
        mbs.AddLoad(ii.LoadMassProportional(markerNumber=mk, loadVector=grav))
    ground = mbs.AddObject(ii.ObjectGround())
    gnode = mbs.AddNode(ii.NodePointGround())
    m_g = mbs.AddMarker(ii.MarkerBodyPosition(bodyNumber=ground, localPosition=[0.0, 0.0, 0.0]))
    m_gc = mbs.AddMarker(ii.MarkerNodeCoordinate(nodeNumber=gnode, coordinate=0))

    def pin(m1, m2):
        mbs.AddObject(ii.ObjectJointRevolute2D(markerNumbers=[m1, m2]))

    def body_point(b, x):
        return mbs.AddMarker(ii.MarkerBodyPosition(bodyNumber=b, localPosition=[x, 0.0, 0.0]))

    def coord(n, i):
        return mbs.AddMarker(ii.MarkerNodeCoordinate(nodeNumber=n, coordinate=i))

    pin(m_g, body_point(crank, -0.5 * r))  # pivot
    pin(body_point(crank, 0.5 * r), mbs.AddMarker(ii.MarkerNodePosition(nodeNumber=nodes[0])))
    pin(mbs.AddMarker(ii.MarkerNodePosition(nodeNumber=nodes[-1])), body_point(slider, 0.0))
    for i in (1, 2):  # guide: slider y = 0, rotation locked
        mbs.AddObject(ii.CoordinateConstraint(markerNumbers=[m_gc, coord(slider_n, i)]))
    mbs.AddObject(
        ii.CoordinateConstraint(
            markerNumbers=[m_gc, coord(crank_n, 2)], offset=om, velocityLevel=True
        )
    )
    mbs.Assemble()

    def result():
        def pos(n):
            return np.asarray(mbs.GetNodeOutput(n, exu.OutputVariableType.Position))[:2]

        a, b, mid = pos(nodes[0]), pos(nodes[-1]), pos(nodes[n_el // 2])
        return float(pos(slider_n)[0]), _chord_offset(a, b, mid)

    return mbs, result


def _chord_offset(a, b, mid) -> float:
    u = (b - a) / np.linalg.norm(b - a)
    return float(u[0] * (mid - a)[1] - u[1] * (mid - a)[0])


def section_slider_crank(repeat: int, n_el=8, t_end=0.1, dt=1e-5, rho_inf=0.8, exu=None):
    """Slider-crank section; returns the summary row (what, speed-up, target, goal, agree)."""
    exu = exu or import_exudyn()
    n_steps = int(round(t_end / dt))
    print(
        f"\n== Flexible slider-crank, {n_el} rod elements, generalized-alpha rho_inf = "
        f"{rho_inf}, dt = {dt:g} s, {t_end:g} s ({n_steps} steps) =="
    )
    c, rd, sl = SLIDER_CRANK["crank"], SLIDER_CRANK["rod"], SLIDER_CRANK["slider"]
    mech, run = _our_run(
        {
            "kind": "slider-crank",
            "t_end": t_end,
            "sample_dt": 1e-4,
            "g": SLIDER_CRANK["g"],
            "crank": dict(c),
            "slider": dict(sl),
            "drive": {"omega": SLIDER_CRANK["omega"]},
            "rod": {
                "model": "ancf",
                "mesh": _mesh(n_el),
                "beam": {"length": rd["length"], "width": rd["side"], "height": rd["side"]},
                "material": {"E0": rd["E0"], "rho": rd["rho"]},
            },
            "solver": {"dt": dt, "rho_inf": rho_inf},
        }
    )
    run()
    t_o = best_of(run, repeat)
    q = t_o.result.q[-1]
    beam = mech.beam
    mid_o = _chord_offset(
        beam.node(0).position(q), beam.node(-1).position(q), beam.node(n_el // 2).position(q)
    )
    xs_o = float(q[mech.slider.offset])
    mbs, result = exudyn_slider_crank(n_el)
    t_x, solver = _fastest_exudyn(exu, mbs, n_steps, t_end, rho_inf, repeat, result)
    xs_x, mid_x = t_x.result
    d_slider = abs(xs_o - xs_x) / c["length"]
    d_mid = abs(mid_o - mid_x) / max(abs(mid_x), 1e-300)
    ok = d_slider <= AGREE and d_mid <= AGREE_MID
    print(
        f"   at t_end: slider x ours {xs_o:.9f} m, Exudyn {xs_x:.9f} m (diff / crank "
        f"{d_slider:.2e}); rod mid-node offset from the chord ours {mid_o:.6e} m, Exudyn "
        f"{mid_x:.6e} m (rel. diff {d_mid:.2e}); agreement {verdict(ok)} (targets "
        f"{AGREE:g}, {AGREE_MID:g})"
    )
    _rows("slider-crank", n_steps, t_o, t_x, solver)
    return (f"slider-crank, {n_el} el, GA", t_x.cpu / t_o.cpu, TARGET, TARGET, ok)


def main() -> None:
    args = _parse()
    exu = import_exudyn(args.exudyn_module)
    print(f"Multibody: ancf_beam.mbs vs Exudyn, 1 thread each; {machine_note()}")
    print(f"   best of {args.repeat}; speed-up = Exudyn time / our time (> 1: we are faster)")
    rows = []
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    if "pendulum" in sections:
        rows.append(section_pendulum(args.repeat, rho_inf=args.rho_inf, exu=exu))
    if "slider-crank" in sections:
        rows.append(section_slider_crank(args.repeat, rho_inf=args.rho_inf, exu=exu))
    for what, sp, target, _, ok in rows:
        res = verdict(sp >= target and ok)
        print(f"   {what:<28} {sp:>6.2f}x (target {target:g}x), physics {verdict(ok)}: {res}")


if __name__ == "__main__":
    main()
