"""Cost per simulated crank revolution of the clearance-joint slider-crank (issue 16 item 4):
generalized-alpha with step control (dt in free flight, dt_contact near and in contact, onsets
located) against fixed steps of dt_contact, for the rigid rod and the steel ANCF rod.

The mechanism is config.yaml's ``slider_crank_clearance`` (5000 rpm, c = 0.5 mm at the wrist pin,
Lankarani-Nikravesh ce = 0.9, mu = 0.01). Per run: steps, steps of dt_contact, onset trials,
CPU and wall time per revolution (best of ``--repeat``), and the peak contact force and first
contact time of both runs with their relative difference (the accuracy the step control keeps).

    python benchmarks/bench_clearance.py [--revolutions 1] [--repeat 3] [--dt 1e-5]
                                         [--dt-contact 1e-6]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

from benchcommon import best_of, machine_note, rel

from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.mbs.analysis import clearance_outputs, settings_from_spec
from ancf_beam.mbs.integrators import integrate
from ancf_beam.mbs.mechanisms import build_mechanism

ROOT = Path(__file__).resolve().parents[1]
# steel ANCF rod of the rigid rod's length and mass (0.21 kg), 4 elements
STEEL_ROD = {
    "model": "ancf",
    "beam": {"length": 0.12, "width": 0.014931, "height": 0.014931},
    "material": {"E0": 2.07e11, "rho": 7850.0},
    "mesh": {"n_elements": 4},
}


def run(spec, **settings):
    mech = build_mechanism(spec)
    st = dataclasses.replace(settings_from_spec(spec), **settings)
    res = integrate(mech.system, st, v0=mech.v0)
    return res, clearance_outputs(mech, res)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--revolutions", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dt", type=float, default=1e-5, help="free-flight step (s)")
    ap.add_argument("--dt-contact", type=float, default=1e-6, help="contact step (s)")
    ap.add_argument("--dt-ancf", type=float, default=2e-6,
                    help="free-flight step with the ANCF rod (s; it must follow the rod's "
                         "vibration: 1e-5 s misses the first impact force by 2.5 %%)")  # fmt: skip
    args = ap.parse_args()
    cfg = load_config(ROOT / "config" / "config.yaml")
    print(machine_note())
    print(f"{'rod':6} {'run':13} {'steps':>7} {'small':>7} {'trials':>6} {'cpu/rev s':>10} "
          f"{'wall/rev s':>10} {'F_max N':>10} {'t_first s':>12}")  # fmt: skip
    for rod in ("rigid", "ancf"):
        block = dict(cfg["mechanisms"]["slider_crank_clearance"])
        if rod == "ancf":
            block["rod"] = STEEL_ROD
        spec = resolve_mechanism({"mechanisms": {"c": block}}, "c")
        period = 2 * math.pi / abs(spec.omega)
        t_end = args.revolutions * period
        dt_free = args.dt if rod == "rigid" else args.dt_ancf
        runs = {
            "step control": {"dt": dt_free, "dt_contact": args.dt_contact,
                             "step_control": True},
            "fixed small": {"dt": args.dt_contact, "step_control": False},
        }  # fmt: skip
        out = {}
        run(spec, t_end=min(t_end, 1e-4), **runs["step control"])  # compile / load the cache
        for name, kw in runs.items():
            tm = best_of(lambda kw=kw, sp=spec, te=t_end: run(sp, t_end=te, **kw),
                         repeat=args.repeat)  # fmt: skip
            res, s = tm.result
            out[name] = s
            print(f"{rod:6} {name:13} {res.steps:7d} {res.stats['steps_small']:7d} "
                  f"{res.stats['locate_trials']:6d} {tm.cpu / args.revolutions:10.4f} "
                  f"{tm.wall / args.revolutions:10.4f} {s['max_contact_force']:10.5g} "
                  f"{s['first_contact_time']:12.6e}")  # fmt: skip
        a, b = out["step control"], out["fixed small"]
        df = rel(a["max_contact_force"], b["max_contact_force"])
        dt1 = rel(a["first_contact_time"], b["first_contact_time"])
        print(f"{rod:6} step control vs fixed: peak force rel {df:.2e}, first contact rel "
              f"{dt1:.2e}, impacts {a['impacts']} vs {b['impacts']}")  # fmt: skip


if __name__ == "__main__":
    main()
