"""More draws of the beam property test (tests/test_properties_beam.py) than CI runs: the
same strategy with a chosen seed and number of draws; prints every failing case and the worst
err/tol per kind of check. Run by hand:

    python benchmarks/property_sweep.py --draws 300 --seed 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_properties_beam as prop  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    failures = []

    @seed(args.seed)
    @settings(
        max_examples=args.draws,
        deadline=None,
        database=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @given(prop.beam_cases())
    def sweep(over):
        try:
            df = prop.validate_drawn_case(over)
        except Exception as exc:  # noqa: BLE001 - a sweep reports every kind of failure
            failures.append((over, f"{type(exc).__name__}: {exc}"))
            return
        bad = df[df["status"] != "PASS"]
        if len(bad):
            failures.append((over, bad[["check", "rel. error", "tolerance"]].to_string()))

    t0 = time.process_time()
    sweep()
    cpu = time.process_time() - t0
    print(f"{prop.DRAWN[0]} draws (seed {args.seed}), {cpu:.0f} s CPU; {len(failures)} failing")
    for over, what in failures:
        print(f"FAIL {over}\n{what}\n")
    print("worst err/tol per check (number of rows):")
    for name in sorted(prop.WORST, key=lambda k: -prop.WORST[k]):
        print(f"  {prop.WORST[name]:8.3f}  ({prop.COUNTS[name]:4d})  {name}")
        print(f"            {prop.WORST_CASE.get(name)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
