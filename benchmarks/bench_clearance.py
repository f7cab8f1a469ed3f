"""Cost per simulated crank revolution of the clearance-joint slider-crank at equal accuracy
(issue 16 item 4, issue 30 item 2): generalized-alpha with (a) fixed small steps, (b) the step
control's fixed rule (``dt`` in free flight, ``dt_contact`` near and in contact, onsets located)
and (c) its error rule (``step_rule: error``: steps from the local error estimate, onsets
located, ``dt_contact`` after each) and (d) the fixed rule with dwell steps (``dwell_dt``
inside a contact that has lasted ``dwell_after``, ``--dwell``), for the rigid rod and the
steel ANCF rod. After the first impacts the motion is chaotic, so the runs are also compared
by their contact statistics over the whole run (share in contact, episodes, sustained
contacts, peak forces).

The mechanism is config.yaml's ``slider_crank_clearance`` (5000 rpm, c = 0.5 mm at the wrist pin,
Lankarani-Nikravesh ce = 0.9, mu = 0.01) over ``--revolutions``. Printed first, the accuracy of
the robust metrics against a reference run: generalized-alpha at the fixed step ``--dt-ref``
(onsets located with ``dt = dt_contact = dt-ref``), whose own error is estimated by the same run
at twice the step (the difference of the two; second order: the error of the finer one is a
third of it). The metrics: onset time, approach speed and peak force of the first ``--impacts``
impacts (largest relative error), and the largest eccentricity ratio (relative error of
``e_max / c - 1``). Then the cost: steps and CPU per revolution (best of ``--repeat``), the
ratio of the fixed small steps' CPU to each run's, and for the error rule where its steps go
(accepted steps by size, in free flight and with the contact closed at either end).

    python benchmarks/bench_clearance.py [--revolutions 3] [--repeat 3] [--dt 1e-5]
        [--dt-contact 1e-6] [--tol 1e-9 5e-10] [--rules error gap-error] [--dt-ref 5e-8]
        [--fixed-extra 2e-7 ...] [--impacts 3] [--rod rigid ancf] [--dwell 5e-6:2e-4 ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

import numpy as np
from benchcommon import best_of, machine_note

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
METRICS = ("t_on", "v0", "fn_peak", "ecc")


def clearance_spec(rod: str):
    cfg = load_config(ROOT / "config" / "config.yaml")
    block = dict(cfg["mechanisms"]["slider_crank_clearance"])
    if rod == "ancf":
        block["rod"] = STEEL_ROD
    return resolve_mechanism({"mechanisms": {"c": block}}, "c")


def run(spec, **settings):
    mech = build_mechanism(spec)
    st = dataclasses.replace(settings_from_spec(spec), **settings)
    res = integrate(mech.system, st, v0=mech.v0)
    return res, clearance_outputs(mech, res)[0]


def metrics(res, summary, k: int) -> dict[str, np.ndarray]:
    """The robust metrics of a run: the first ``k`` impacts' onset time, approach speed and
    peak force, and ``e_max / c - 1`` (the largest penetration over the clearance)."""
    ep = res.contact.episodes[:k]
    return {
        "t_on": ep[:, 1],
        "v0": ep[:, 3],
        "fn_peak": ep[:, 4],
        "ecc": np.array([summary["max_eccentricity_ratio"] - 1.0]),
    }


def rel_err(m, ref) -> dict[str, float]:
    out = {}
    for key in METRICS:
        a, b = m[key], ref[key]
        n = min(len(a), len(b))
        out[key] = float(np.max(np.abs(a[:n] - b[:n]) / np.abs(b[:n]))) if n else math.nan
    return out


def contact_statistics(res, t_end: float, revolutions: float) -> str:
    """Share of the run with the contact closed, episodes per revolution, the share of the run
    in episodes longer than 2e-4 s (sustained contacts), median and largest peak force of the
    episodes, and the dwell steps taken."""
    ep = res.contact.episodes
    dur = np.nan_to_num(ep[:, 2], nan=t_end) - ep[:, 1]
    return (
        f"{dur.sum() / t_end:11.3f}{len(ep) / revolutions:13.1f}"
        f"{dur[dur > 2e-4].sum() / t_end:10.3f}{np.median(ep[:, 4]):11.0f}{ep[:, 4].max():9.0f}"
        f"{res.stats.get('steps_dwell', 0):12d}"
    )


def hist_line(bins: list[int], lo: int, h_small: float) -> str:
    return " ".join(
        f"{h_small * 2.0 ** (lo + i):.1e}:{c}" if i else f"<{h_small * 2.0 ** (lo + 1):.1e}:{c}"
        for i, c in enumerate(bins)
        if c
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--revolutions", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dt", type=float, default=1e-5, help="free-flight step, largest step (s)")
    ap.add_argument("--dt-contact", type=float, default=1e-6, help="contact step (s)")
    ap.add_argument(
        "--dt-ancf",
        type=float,
        default=2e-6,
        help="free-flight step of the fixed rule with the ANCF rod (s; it must "
        "follow the rod's vibration: 1e-5 s misses the first impact force by "
        "2.5 %%)",
    )
    ap.add_argument(
        "--tol", type=float, nargs="+", default=[1e-9, 5e-10], help="step_tol of the error rule (m)"
    )
    ap.add_argument(
        "--rules", nargs="+", default=["error", "gap-error"], choices=["error", "gap-error"]
    )
    ap.add_argument("--dt-ref", type=float, default=5e-8, help="reference step (s)")
    ap.add_argument(
        "--fixed-extra",
        type=float,
        nargs="*",
        default=[],
        help="more fixed-step runs at these steps (s), for equal accuracy",
    )
    ap.add_argument("--impacts", type=int, default=3, help="first impacts compared")
    ap.add_argument("--rod", nargs="+", default=["rigid", "ancf"], choices=["rigid", "ancf"])
    ap.add_argument(
        "--dwell",
        nargs="*",
        default=["5e-6:2e-4"],
        help="fixed rule with dwell steps DWELL_DT:DWELL_AFTER (s), e.g. 5e-6:2e-4",
    )
    args = ap.parse_args()
    print(machine_note())
    for rod in args.rod:
        spec = clearance_spec(rod)
        period = 2 * math.pi / abs(spec.omega)
        t_end = args.revolutions * period
        dt_free = args.dt if rod == "rigid" else args.dt_ancf
        runs = {
            "fixed small": {"dt": args.dt_contact, "step_control": False},
            "fixed rule": {"dt": dt_free, "dt_contact": args.dt_contact, "step_control": True},
        }
        for h in args.fixed_extra:
            runs[f"fixed {h:.0e}"] = {"dt": h, "step_control": False}
        for item in args.dwell:
            h_dwell, after = (float(x) for x in item.split(":"))
            runs[f"dwell {h_dwell:.0e}"] = {
                **runs["fixed rule"],
                "dwell_dt": h_dwell,
                "dwell_after": after,
            }
        for rule in args.rules:
            for tol in args.tol:
                runs[f"{rule} {tol:.0e}"] = {
                    "dt": args.dt,
                    "dt_contact": args.dt_contact,
                    "step_control": True,
                    "step_rule": rule,
                    "step_tol": tol,
                }
        # reference: onsets located, fixed steps of dt_ref; its error from twice the step
        refs = {}
        for f in (2.0, 1.0):
            h = args.dt_ref * f
            res, s = run(spec, t_end=t_end, dt=h, dt_contact=h, step_control=True, onset_tol=1e-10)
            refs[f] = metrics(res, s, args.impacts)
        ref = refs[1.0]
        ref_err = rel_err(refs[2.0], ref)
        print(
            f"\n{rod} rod, {args.revolutions:g} revolutions ({t_end:.4g} s); reference: "
            f"generalized-alpha, fixed step {args.dt_ref:.0e} s with onsets located"
        )
        print(
            "reference: first impacts (t_on s, v0 m/s, F_peak N): "
            + "; ".join(
                f"{a:.7e} {b:.5f} {c:.2f}"
                for a, b, c in zip(ref["t_on"], ref["v0"], ref["fn_peak"], strict=True)
            )
            + f"; e_max/c - 1 = {ref['ecc'][0]:.6f}"
        )
        hdr = "".join(f"{k:>10}" for k in METRICS)
        print(
            f"accuracy (largest relative error of the first {args.impacts} impacts' metric; "
            f"ecc: of e_max/c - 1)\n{'run':16}{hdr}"
        )
        print(f"{'ref at 2 dt_ref':16}" + "".join(f"{ref_err[k]:10.1e}" for k in METRICS))
        out = {}
        run(spec, t_end=min(t_end, 2e-4), **runs[f"{args.rules[0]} {args.tol[0]:.0e}"])
        run(spec, t_end=min(t_end, 2e-4), **runs["fixed small"])
        for name, kw in runs.items():
            tm = best_of(
                lambda kw=kw, sp=spec, te=t_end: run(sp, t_end=te, **kw), repeat=args.repeat
            )
            res, s = tm.result
            out[name] = (tm, res)
            err = rel_err(metrics(res, s, args.impacts), ref)
            print(f"{name:16}" + "".join(f"{err[k]:10.1e}" for k in METRICS))
        print(
            f"cost per revolution\n{'run':16}{'steps':>9}{'small':>8}{'rejected':>9}"
            f"{'factor.':>9}{'iters':>7}{'cpu s':>9}{'us/step':>9}{'gain':>7}"
        )
        cpu_fixed = out["fixed small"][0].cpu
        for name, (tm, res) in out.items():
            st = res.stats
            r = args.revolutions
            print(
                f"{name:16}{res.steps / r:9.0f}{st['steps_small'] / r:8.0f}"
                f"{st.get('rejected', 0) / r:9.0f}{st['factorizations'] / r:9.0f}"
                f"{st['mean_iterations']:7.2f}{tm.cpu / r:9.4f}"
                f"{1e6 * tm.cpu / max(res.steps, 1):9.2f}{cpu_fixed / tm.cpu:7.2f}"
            )
        print(
            "over the whole run (chaotic after the first impacts: compare the statistics, not "
            f"the histories)\n{'run':16}{'in contact':>11}{'episodes/rev':>13}{'sustained':>10}"
            f"{'F median N':>11}{'F max N':>9}{'dwell steps':>12}"
        )
        for name, (_tm, res) in out.items():
            print(f"{name:16}" + contact_statistics(res, t_end, args.revolutions))
        for name, (_tm, res) in out.items():
            st = res.stats
            if st.get("step_rule", "fixed") != "fixed":
                lo = st["step_hist_lo"]
                print(
                    f"{name} steps by size over the run (s:count), free flight:  "
                    + hist_line(st["step_hist_free"], lo, args.dt_contact)
                )
                print(
                    f"{name} steps by size over the run (s:count), contact closed: "
                    + hist_line(st["step_hist_contact"], lo, args.dt_contact)
                )


if __name__ == "__main__":
    main()
