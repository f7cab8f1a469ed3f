"""Cost of the checks of a static answer (issue 26 B): ``solve_static`` with its stability check
and ``check_strain`` (what ``ancf-beam static`` and the pipeline's static job run) against
``solve_static`` with the stability check switched off, in the same process, interleaved.

Prints per mesh: Newton iterations, best process-CPU time of both (ms), the ratio, and the two
checks alone (one tangent assembly and factorisation; the strain field at nine points per
element). Run: ``python benchmarks/bench_static_checks.py [--repeat 5] [--min-time 0.5]``.
"""

from __future__ import annotations

import argparse

from benchcommon import best_of, machine_note

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.solvers import static

CASES = [("seed", {}, n) for n in (20, 200, 2000, 10000)] + [
    ("E0 = 2.07e7 (tip -90 deg)", {"material.E0": 2.07e7}, 40)
]


def _row(name: str, over: dict, n_el: int, repeat: int, min_time: float) -> str:
    case = resolve_case({}, None, {**over, "mesh.n_elements": n_el})
    static.solve_static(BeamModel(case))  # compile / load the kernels
    real = static.check_stability

    def after(model):
        res = static.solve_static(model)
        static.check_strain(model, res.q)
        return res

    def before(model):
        static.check_stability = lambda m, q: None
        try:
            return static.solve_static(model)
        finally:
            static.check_stability = real

    kw = {"repeat": repeat, "setup": lambda: BeamModel(case), "min_time": min_time}
    t_before = t_after = None
    for _ in range(2):  # interleaved: the machine's load moves both alike
        tb, ta = best_of(before, **kw), best_of(after, **kw)
        t_before = tb if t_before is None or tb.cpu < t_before.cpu else t_before
        t_after = ta if t_after is None or ta.cpu < t_after.cpu else t_after
    model = BeamModel(case)
    q = t_after.result.q
    t_stab = best_of(lambda: real(model, q), repeat=repeat, min_time=min_time)
    t_strain = best_of(lambda: static.check_strain(model, q), repeat=repeat, min_time=min_time)
    return (
        f"{name:28s} {n_el:6d} {t_after.result.newton_iterations:3d} "
        f"{t_before.cpu * 1e3:10.3f} {t_after.cpu * 1e3:10.3f} "
        f"{t_after.cpu / t_before.cpu:6.2f} {t_stab.cpu * 1e3:13.3f} "
        f"{t_strain.cpu * 1e3:10.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.5, help="s of CPU per figure at least")
    args = ap.parse_args()
    print(machine_note())
    head = f"{'case':28s} {'el':>6s} {'it':>3s} {'before ms':>10s} {'after ms':>10s} {'ratio':>6s}"
    print(head + f" {'stability ms':>13s} {'strain ms':>10s}")
    for name, over, n_el in CASES:
        print(_row(name, over, n_el, args.repeat, args.min_time), flush=True)


if __name__ == "__main__":
    main()
