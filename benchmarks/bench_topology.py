"""Cost of a force element outside the band (run on demand, not in CI).

A force element between bodies that are not neighbours in the coordinate vector adds its
tangent to the implicit integrators' iteration matrix as a low-rank part (``K = K_band + U B
U^T``, :func:`ancf_beam.mbs.core.lowrank_prepare`). This script times generalized-alpha per step
on the same physics in two orders of the bodies: the coupling outside the band (low-rank path)
and, reordered, inside it (band path alone), and prints both, their ratio and the largest
difference of the positions (round-off / Newton tolerance).

* ``chain``: rigid link pinned to the ground, an ANCF beam of ``n_el`` elements pinned to it,
  a rigid body pinned to the beam's end, a spring between the two rigid bodies (the chain of
  ``tests/test_mbs_topology.py``, the beam 0.4 m at any mesh); 0.2 s, dt = 1e-4 s.
* ``striker``: a beam pendulum with a ball that strikes a pinned anvil twice (Hertz contact
  between anvil and ball; step control, dt = 1e-4 s, dt_contact = 1e-5 s, 0.4 s): the contact's
  block is active only during the impacts.

Process CPU time per step (the integration loop, ``MechanismResult.cpu_s``), best and median of
``--repeat`` runs, the two orders interleaved.

    python benchmarks/bench_topology.py [--repeat 5] [--meshes 2,8,32]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

import numpy as np
from benchcommon import machine_note

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_mbs_topology import (  # noqa: E402  (the systems of the tests, one definition)
    IN_CHAIN,
    IN_STRIKER,
    OUT_CHAIN,
    OUT_STRIKER,
    _map,
    chain,
    striker,
)

from ancf_beam.mbs.integrators import IntegratorSettings, integrate  # noqa: E402


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of each order (default 5)")
    ap.add_argument("--meshes", default="2,8,32", help="beam elements of the chain")
    return ap.parse_args()


def _time(build, order, st, repeat):
    """Per-step CPU times (us) of ``repeat`` runs and the last run's positions and system."""
    cpu = []
    res = system = None
    for _ in range(repeat):
        system = build(order)
        res = integrate(system, st)
        cpu.append(1e6 * res.cpu_s / res.steps)
    return cpu, res, system


def _row(name, build, out_o, in_o, st, repeat):
    integrate(build(out_o), dataclasses.replace(st, t_end=st.dt * 3))  # compile / load
    integrate(build(in_o), dataclasses.replace(st, t_end=st.dt * 3))
    t_out, t_in = [], []
    for _ in range(repeat):  # interleaved: the machine's load hits both alike
        c, r_out, s_out = _time(build, out_o, st, 1)
        t_out += c
        c, r_in, s_in = _time(build, in_o, st, 1)
        t_in += c
    diff = float(np.abs(r_out.q - r_in.q[:, _map(s_out, s_in)]).max())
    same_it = np.array_equal(r_out.newton_iterations, r_in.newton_iterations)
    bo, bi = min(t_out), min(t_in)
    mo, mi = statistics.median(t_out), statistics.median(t_in)
    print(
        f"{name:<28} {s_out.n:>4} {r_out.steps:>6} {bo:>9.1f} {bi:>9.1f} {bo / bi:>6.2f} "
        f"{mo:>9.1f} {mi:>9.1f} {mo / mi:>6.2f} {diff:>9.1e} {str(same_it):>6}"
    )


def main() -> None:
    args = _parse()
    print("Force elements outside the band: generalized-alpha per step, low-rank vs band path")
    print(f"   machine: {machine_note()}; {args.repeat} runs of each order, interleaved")
    print(
        f"{'case':<28} {'n':>4} {'steps':>6} {'best out':>9} {'best in':>9} {'ratio':>6} "
        f"{'med out':>9} {'med in':>9} {'ratio':>6} {'max|dq|':>9} {'same it':>6}"
    )
    print(f"{'':<28} {'':>4} {'':>6} {'us/step':>9} {'us/step':>9} {'':>6} {'us/step':>9}")
    base = IntegratorSettings("generalized-alpha", t_end=0.2, sample_dt=1e-3, dt=1e-4)
    for n_el in (int(x) for x in args.meshes.split(",")):
        for newton in ("modified", "full"):
            st = dataclasses.replace(base, newton=newton)

            def build(order, n_el=n_el):
                return chain(order, n_el=n_el)

            _row(f"chain {n_el} el, {newton}", build, OUT_CHAIN, IN_CHAIN, st, args.repeat)
    st = dataclasses.replace(base, t_end=0.4, dt_contact=1e-5, step_control=True)
    for newton in ("modified", "full"):
        sti = dataclasses.replace(st, newton=newton)
        _row(f"striker, {newton}", striker, OUT_STRIKER, IN_STRIKER, sti, args.repeat)


if __name__ == "__main__":
    main()
