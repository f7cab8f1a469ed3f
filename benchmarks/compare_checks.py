"""Compare two trees of report check tables row by row (behaviour-preservation check).

    python benchmarks/compare_checks.py BEFORE/reports/checks AFTER/reports/checks [--rtol 1e-12]

Every ``*.csv`` in BEFORE must exist in AFTER with the same rows in the same order: equal case,
check name, mode, status and note, and reference, computed value, error and tolerance equal to
``rtol`` (NaNs in the same places). Rows built from measured run times (the cost exponents and
the window projection of the scaling study) differ from run to run: for them only the name,
mode and tolerance are compared, and a window-projection row may be present on one side only
(it exists for the fully run meshes whose run took at least 0.5 s). Prints one line per file
and a verdict; exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

NUMERIC = ("reference", "computed", "rel. error", "tolerance")
TEXT = ("case", "check", "mode", "status", "note")
#: Check names (substrings) of rows computed from measured run times.
TIMING_ROWS = ("cost exponent", "window projection")
#: Timing rows that exist only when a measured run took long enough.
OPTIONAL_ROWS = ("window projection",)


def is_timing(name: str) -> bool:
    return any(s in name for s in TIMING_ROWS)


def same_number(a: float, b: float, rtol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= rtol * max(abs(a), abs(b))


def _text(v) -> str:
    return "" if isinstance(v, float) and math.isnan(v) else str(v)


def compare_rows(a: pd.Series, b: pd.Series, rtol: float) -> list[str]:
    timing = is_timing(str(a["check"]))
    cols_text = ("case", "check", "mode") if timing else TEXT
    cols_num = ("tolerance",) if timing else NUMERIC
    out = [f"{c}: {a[c]!r} != {b[c]!r}" for c in cols_text if _text(a[c]) != _text(b[c])]
    out += [
        f"{c}: {a[c]!r} != {b[c]!r}"
        for c in cols_num
        if not same_number(float(a[c]), float(b[c]), rtol)
    ]
    return out


def compare_file(a: Path, b: Path, rtol: float) -> tuple[list[str], int, int]:
    da = pd.read_csv(a)
    db = pd.read_csv(b)
    if list(da.columns) != list(db.columns):
        return [f"columns differ: {list(da.columns)} != {list(db.columns)}"], 0, 0

    def keep(df):
        opt = df["check"].astype(str).map(lambda s: any(o in s for o in OPTIONAL_ROWS)).astype(bool)
        return df[~opt].reset_index(drop=True), int(opt.sum())

    da, opt_a = keep(da)
    db, opt_b = keep(db)
    if len(da) != len(db):
        return [f"{len(da)} rows before, {len(db)} after"], 0, 0
    problems = []
    n_timing = 0
    for i in range(len(da)):
        n_timing += is_timing(str(da.loc[i, "check"]))
        for p in compare_rows(da.loc[i], db.loc[i], rtol):
            problems.append(f"row {i} ({da.loc[i, 'case']}: {da.loc[i, 'check']}): {p}")
    return problems, len(da), n_timing + max(opt_a, opt_b)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rtol", type=float, default=1e-12)
    args = ap.parse_args(argv)
    files = sorted(args.before.glob("*.csv"))
    if not files:
        print(f"no check tables in {args.before}")
        return 1
    n_bad = 0
    for fa in files:
        fb = args.after / fa.name
        if not fb.exists():
            print(f"MISSING {fa.name}")
            n_bad += 1
            continue
        problems, n_rows, n_timing = compare_file(fa, fb, args.rtol)
        extra = f", {n_timing} timing rows: name only" if n_timing else ""
        if problems:
            n_bad += 1
            print(f"DIFFER  {fa.name}: {len(problems)} problems ({n_rows} rows{extra})")
            for p in problems[:20]:
                print(f"        {p}")
        else:
            print(f"same    {fa.name} ({n_rows} rows{extra})")
    extra_files = sorted({f.name for f in args.after.glob("*.csv")} - {f.name for f in files})
    for name in extra_files:
        print(f"NEW     {name}")
    print(f"{len(files)} tables, {n_bad} differ (rtol {args.rtol:g})")
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
