"""Nonsmooth (Moreau-Jean) against compliant (generalized-alpha) contact: cost per step and per
simulated revolution on the clearance slider-crank, and the cost to reach equal accuracy of a
first impact (its time and impulse) on a dropped ball whose both models have closed forms.

Part 1, mechanism: config.yaml's ``slider_crank_clearance`` (rigid rod, 5000 rpm, c = 0.5 mm at
the wrist pin, Lankarani-Nikravesh ce = 0.9, mu = 0.01) under generalized-alpha with step
control (its configuration) and with fixed steps of dt_contact, against the same mechanism with
the clearance made nonsmooth (restitution 0.9, mu = 0.01) under Moreau-Jean at fixed steps.
Per run: steps, CPU per step and per revolution (best of ``--repeat``), impacts and the first
contact time.

Part 2, equal accuracy: a unit point mass dropped onto the ground at 2 m/s from 10 mm (closed
forms: touchdown time t_0 and speed v; nonsmooth e = 1: impulse 2 m v at t_0; a linear spring
K (``--stiffness``, each) without damping: impulse 2 m v + m g T_c with its time centre at t_0 +
T_c/2, T_c the contact duration in closed form). Each model is run at decreasing steps until
its impulse is within ``--rel`` of its own closed form and its time centre within ``--rel``
times t_0 (the impulse and centre measured from the end states: ``m (v_T - v_0) + m g T``);
the CPU time of the cheapest run that meets both is compared.

Part 3, mechanism at equal accuracy: the same slider-crank (rigid rod), each model alone: its
first impact's onset time and impulse (nonsmooth: the summed impulses of the first run of
steps with one; compliant: its normal force integrated over the first episode, every step a
sample) at fixed steps halved from a coarse one until both are within ``--mech-rel`` (impulse,
relative) and ``--mech-onset`` (s) of the model's own reference (its step / 8 below the finest
step tried, so the reference's own error, first order for Moreau-Jean, is at most 1/8 of the
accepted run's); then the CPU of one revolution at the accepted step (samples every 1e-5 s).
A model accepted at its ladder's first step might have been accepted at a coarser one: its
cost is then an upper bound. The compliant model is the configured one (Lankarani-Nikravesh,
its K from E and nu) under generalized-alpha at fixed steps; the two references differ (a
finite-K impact against the rigid limit), so each is judged against its own.

    python benchmarks/bench_nonsmooth.py [--revolutions 1] [--repeat 3] [--rel 1e-3]
                                         [--stiffness 1e7,1e9,1e11] [--mech-rel 1e-2]
                                         [--mech-onset 1e-6] [--skip-mechanism]
                                         [--skip-accuracy]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

from benchcommon import best_of, machine_note

from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.config.contact import contact_law
from ancf_beam.mbs.analysis import settings_from_spec
from ancf_beam.mbs.bodies import PointMass, ground
from ancf_beam.mbs.forces import CircleContact, LineContact
from ancf_beam.mbs.integrators import IntegratorSettings, integrate
from ancf_beam.mbs.mechanisms import build_mechanism
from ancf_beam.mbs.system import System

ROOT = Path(__file__).resolve().parents[1]
G = 9.81
Y0, V_IN = 0.01, 2.0


def nonsmooth_copy(system: System, e: float, mu: float) -> System:
    """The bodies and joints of ``system`` with its circle contacts made nonsmooth."""
    s = System(g=system.g, name=f"{system.name}-nonsmooth")
    s.add(*system.bodies)
    s.add(*system.joints)
    for f in system.forces:
        if isinstance(f, CircleContact):
            f = dataclasses.replace(
                f, model="nonsmooth", restitution=e, mu=mu, law=None, friction=None
            )
        s.add(f)
    return s


def part_mechanism(args) -> None:
    cfg = load_config(ROOT / "config" / "config.yaml")
    spec = resolve_mechanism(
        {"mechanisms": {"c": dict(cfg["mechanisms"]["slider_crank_clearance"])}}, "c"
    )
    period = 2 * math.pi / abs(spec.omega)
    t_end = args.revolutions * period
    base = settings_from_spec(spec)

    def compliant(**kw):
        mech = build_mechanism(spec)
        st = dataclasses.replace(base, t_end=t_end, **kw)
        return integrate(mech.system, st, v0=mech.v0)

    def nonsmooth(dt):
        mech = build_mechanism(spec)
        s = nonsmooth_copy(mech.system, 0.9, 0.01)
        st = dataclasses.replace(
            base,
            integrator="moreau-jean",
            dt=dt,
            t_end=t_end,
            tol=1e-10,
            max_iter=500,
            step_control=False,
        )
        return integrate(s, st, v0=mech.v0)

    runs = {
        "GA step control": lambda: compliant(),
        "GA fixed 1e-6": lambda: compliant(dt=1e-6, step_control=False),
        "MJ 1e-5": lambda: nonsmooth(1e-5),
        "MJ 1e-4": lambda: nonsmooth(1e-4),
    }
    print(f"slider_crank_clearance, {args.revolutions:g} revolution(s) ({t_end:.4g} s)")
    print(
        f"{'run':16} {'steps':>7} {'cpu/step us':>12} {'cpu/rev s':>10} {'impacts':>8} "
        f"{'t_first s':>12}"
    )
    out = {}
    for name, fn in runs.items():
        tm = best_of(fn, repeat=args.repeat)
        res = tm.result
        if res.contact_summary:
            summ = next(iter(res.contact_summary.values()))
            impacts, t_first = summ["impulses"], summ["first_contact_time"]
        else:
            fs = res.force_state  # compliant: the contact's carried impact count and onset
            i = next(iter(_contact_index(res)))
            impacts, t_first = int(fs[-1, i, 2]), _first_onset(fs, res.t, i)
        out[name] = tm.cpu
        print(
            f"{name:16} {res.steps:7d} {1e6 * tm.cpu / res.steps:12.2f} "
            f"{tm.cpu / args.revolutions:10.4f} {impacts:8d} {t_first:12.6e}"
        )
    ref = out["GA step control"]
    for name in ("MJ 1e-5", "MJ 1e-4"):
        print(f"cost per revolution, GA step control / {name}: {ref / out[name]:.2f}")


def _contact_index(res):
    yield 0  # the slider-crank with one clearance has one force element: its contact


def _first_onset(fs, t, i):
    hit = fs[:, i, 2] > 0
    return float(fs[hit, i, 3][0]) if hit.any() else math.nan


def _drop(law=None):
    s = System(g=G, name="drop")
    b = PointMass("ball", mass=1.0, position=(0.0, Y0), velocity=(0.0, -V_IN))
    s.add(b)
    if law is None:
        s.add(LineContact("floor", p=b.point(), through=ground(), model="nonsmooth", restitution=1))
    else:
        s.add(LineContact("floor", p=b.point(), through=ground(), law=law))
    return s


def _impulse_and_centre(res):
    t_end = res.t[-1]
    p = (res.v[-1, 1] - res.v[0, 1]) + G * t_end
    tp = t_end * res.v[-1, 1] - (res.q[-1, 1] - res.q[0, 1]) + G * t_end**2 / 2
    return p, tp / p


def part_accuracy(args, k) -> None:
    v = math.sqrt(V_IN**2 + 2.0 * G * Y0)
    t0 = (v - V_IN) / G
    w = math.sqrt(k)
    amp = math.hypot(G / k, v / w)
    t_c = (math.pi + 2.0 * math.asin(G / k / amp)) / w
    targets = {"nonsmooth": (2.0 * v, t0), "compliant": (2.0 * v + G * t_c, t0 + t_c / 2)}
    t_end = 0.02
    law = contact_law({"law": "kelvin-voigt", "k": k, "c": 0.0}, "contact")

    def run(model, dt):
        if model == "nonsmooth":
            st = IntegratorSettings(
                integrator="moreau-jean",
                dt=dt,
                t_end=t_end,
                sample_dt=t_end,
                tol=1e-12,
                max_iter=500,
            )
            return integrate(_drop(), st)
        st = IntegratorSettings(integrator="generalized-alpha", dt=dt, t_end=t_end, sample_dt=t_end)
        return integrate(_drop(law), st)

    print(
        f"\nfirst impact of a dropped ball to {args.rel:g} (impulse, and time centre / t_0); "
        f"compliant K = {k:g} N/m (T_c = {t_c:.3g} s)"
    )
    print(
        f"{'model':10} {'dt s':>9} {'steps':>7} {'cpu s':>8} {'impulse err':>12} "
        f"{'centre err s':>12}"
    )
    best = {}
    for model in ("nonsmooth", "compliant"):
        dt = 1e-3 if model == "nonsmooth" else t_c / 5
        for _ in range(14):  # at most 14 halvings: dt / 16384
            run(model, dt)  # compile / load
            tm = best_of(lambda m=model, d=dt: run(m, d), repeat=args.repeat)
            p, c = _impulse_and_centre(tm.result)
            ep = abs(p - targets[model][0]) / targets[model][0]
            ec = abs(c - targets[model][1])
            print(f"{model:10} {dt:9.3g} {tm.result.steps:7d} {tm.cpu:8.4f} {ep:12.3e} {ec:12.3e}")
            if ep <= args.rel and ec <= args.rel * t0:
                best[model] = tm.cpu
                break
            dt /= 2
    if len(best) == 2:
        ratio = best["compliant"] / best["nonsmooth"]
        print(f"cost to equal accuracy, compliant / nonsmooth: {ratio:.2f}")
    else:
        print("a model did not reach the accuracy within 14 halvings:", best)


def part_mechanism_accuracy(args) -> None:
    from ancf_beam.mbs.analysis import run_mechanism
    from ancf_beam.studies.nonsmooth import first_impulse

    cfg = load_config(ROOT / "config" / "config.yaml")
    specs = {
        "compliant": resolve_mechanism(
            {"mechanisms": {"c": dict(cfg["mechanisms"]["slider_crank_clearance"])}}, "c"
        ),
        "nonsmooth": resolve_mechanism(
            {"mechanisms": {"n": dict(cfg["mechanisms"]["slider_crank_clearance_nonsmooth"])}}, "n"
        ),
    }
    period = 2 * math.pi / abs(specs["nonsmooth"].omega)
    t_first = 6e-4  # past the first impact (0.23 ms) and its compliant episode

    def over(model, h, sample):
        o = {"solver.dt": h, "sample_dt": sample}
        if model == "compliant":
            o.update({"solver.step_control": False, "solver.dt_contact": h})
        return specs[model].with_overrides(o)

    def first(model, h):
        summ, ds = run_mechanism(over(model, h, h), t_end=t_first)
        if model == "nonsmooth":
            return summ["first_contact_time"], summ["first_impact_impulse"]
        return summ["first_contact_time"], first_impulse(ds, "wrist_pin")

    print(
        f"\nslider_crank_clearance first impact to {args.mech_rel:g} (impulse, relative) and "
        f"{args.mech_onset:g} s (onset), each model against its own reference (accepted: the "
        "coarsest step meeting both whose halved step meets them too); CPU per revolution"
    )
    print(
        f"{'model':10} {'dt s':>9} {'onset s':>12} {'impulse N s':>12} {'onset err':>10} "
        f"{'imp err':>9}"
    )
    ladders = {
        "nonsmooth": [1e-5 / 2**i for i in range(9)],
        "compliant": [1.6e-5 / 2**i for i in range(9)],
    }
    result = {}
    for model, ladder in ladders.items():
        ref = first(model, ladder[-1] / 8)
        print(f"{model:10} {ladder[-1] / 8:9.3g} {ref[0]:12.6e} {ref[1]:12.6e} {'(ref)':>10}")
        ok = []
        for h in ladder:  # at most len(ladder) runs
            t_on, p = first(model, h)
            e_on, e_p = abs(t_on - ref[0]), abs(p - ref[1]) / ref[1]
            print(f"{model:10} {h:9.3g} {t_on:12.6e} {p:12.6e} {e_on:10.2e} {e_p:9.2e}")
            ok.append(e_on <= args.mech_onset and e_p <= args.mech_rel)
            if len(ok) >= 2 and ok[-1] and ok[-2]:
                h_acc = 2.0 * h
                sp = over(model, h_acc, 1e-5)
                run_mechanism(sp, t_end=1e-4)  # compile / load
                tm = best_of(lambda s=sp: run_mechanism(s, t_end=period), repeat=args.repeat)
                result[model] = (h_acc, tm.cpu)
                print(
                    f"{'':10} accepted dt {h_acc:.3g} s: {tm.result[0]['steps']} steps per "
                    f"revolution, CPU {tm.cpu:.3f} s"
                )
                break
    if len(result) == 2:
        ratio = result["compliant"][1] / result["nonsmooth"][1]
        print(
            f"cost per revolution at equal first-impact accuracy, compliant / nonsmooth: "
            f"{ratio:.2f}"
        )
    else:
        print("a model did not reach the accuracy on its ladder:", result)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--revolutions", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rel", type=float, default=1e-3)
    ap.add_argument(
        "--stiffness", default="1e7,1e9,1e11", help="compliant stiffnesses K (N/m), comma-separated"
    )
    ap.add_argument("--skip-mechanism", action="store_true")
    ap.add_argument("--skip-accuracy", action="store_true", help="skip part 2 (dropped ball)")
    ap.add_argument("--mech-rel", type=float, default=1e-2)
    ap.add_argument("--mech-onset", type=float, default=1e-6)
    args = ap.parse_args()
    print(machine_note())
    if not args.skip_mechanism:
        part_mechanism(args)
    if not args.skip_accuracy:
        for k in args.stiffness.split(","):
            part_accuracy(args, float(k))
    part_mechanism_accuracy(args)


if __name__ == "__main__":
    main()
