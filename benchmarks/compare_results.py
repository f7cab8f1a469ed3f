"""Compare two pipeline result trees variable by variable (behaviour-preservation check).

    python benchmarks/compare_results.py BEFORE/results AFTER/results [--rtol 1e-12]

Every NetCDF file present in BEFORE must exist in AFTER; every numeric data variable and
coordinate of it must agree to ``rtol`` (NaNs in the same places). Timing quantities (names
containing ``wall``, ``cpu``, ``seconds_per`` or ``cost``, and the scaling study, which is made
of timings) and provenance strings (git commit, package version) are
skipped, as are attributes (they hold times, commits and fingerprints). Prints
one line per file and a verdict; exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import xarray as xr

TIMING = ("wall", "cpu", "seconds_per", "cost", "time_per", "rate", "speed")
PROVENANCE = ("git_commit", "package_version", "package_fingerprint", "created_utc")


def is_timing(name: str) -> bool:
    low = name.lower()
    return any(t in low for t in TIMING) or name in PROVENANCE


def compare_file(a: Path, b: Path, rtol: float) -> list[str]:
    problems = []
    with xr.open_dataset(a) as da, xr.open_dataset(b) as db:
        names = list(da.data_vars) + list(da.coords)
        for name in names:
            if is_timing(name):
                continue
            va = da[name].values
            if name not in db.variables:
                problems.append(f"{name}: missing in the new result")
                continue
            vb = db[name].values
            if va.dtype.kind not in "fiub" or vb.dtype.kind not in "fiub":
                if va.shape != vb.shape or not np.array_equal(va.astype(str), vb.astype(str)):
                    problems.append(f"{name}: non-numeric values differ")
                continue
            if va.shape != vb.shape:
                problems.append(f"{name}: shape {va.shape} -> {vb.shape}")
                continue
            fa = va.astype(float)
            fb = vb.astype(float)
            if not np.array_equal(np.isnan(fa), np.isnan(fb)):
                problems.append(f"{name}: NaN pattern differs")
                continue
            ok = ~np.isnan(fa)
            if not np.allclose(fa[ok], fb[ok], rtol=rtol, atol=0.0):
                diff = np.abs(fa[ok] - fb[ok]) / np.maximum(np.abs(fa[ok]), 1e-300)
                problems.append(f"{name}: max rel diff {diff.max():.3e}")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rtol", type=float, default=1e-12)
    args = ap.parse_args(argv)
    files = sorted(p.relative_to(args.before) for p in args.before.rglob("*.nc"))
    if not files:
        print(f"no NetCDF files under {args.before}", file=sys.stderr)
        return 1
    bad = 0
    compared = 0
    for rel in files:
        if rel.name == "scaling.nc":
            print(f"skip  {rel} (timings)")
            continue
        new = args.after / rel
        if not new.is_file():
            print(f"MISS  {rel}")
            bad += 1
            continue
        probs = compare_file(args.before / rel, new, args.rtol)
        compared += 1
        if probs:
            bad += 1
            print(f"DIFF  {rel}: " + "; ".join(probs))
        else:
            print(f"same  {rel}")
    print(f"{compared} files compared at rtol {args.rtol:g}: {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
