"""Run the test suite and the quick pipeline under different numeric conditions and print what
differs (issue 25 item 4; by hand, never in CI).

    python benchmarks/machine_conditions.py                     # every condition, tests + pipeline
    python benchmarks/machine_conditions.py --only tests -k mbs # a subset of the tests
    python benchmarks/machine_conditions.py --conditions host,generic --keep /tmp/mc

Another processor changes round-off in two places: OpenBLAS picks its kernels by processor
(``OPENBLAS_CORETYPE`` forces one of those this processor can run) and numba compiles for the
host (``NUMBA_CPU_NAME=generic`` compiles for a baseline x86-64 instead: no FMA, no AVX). An
adaptive integrator then takes other steps and a tolerance set from one machine's error fails.

Conditions (those the processor cannot run are skipped and said so):

* ``host``: nothing set (what CI runs);
* ``generic``: ``NUMBA_CPU_NAME=generic`` (numba's baseline target);
* ``haswell``, ``sandybridge``, ``skylakex``, ``zen``: ``OPENBLAS_CORETYPE`` set to that kernel
  family (needs AVX2+FMA, AVX, AVX-512, AVX2 respectively);
* ``generic+haswell``: both.

Each condition runs in its own copy of the checkout (tracked files, as they are in the working
tree) with ``PYTHONPATH`` pointing at the copy's ``src`` (so the copy's code is imported and its
numba cache is its own): ``python -m pytest -p no:cacheprovider --junitxml`` and
``snakemake --cores N --configfile config/quick.yaml``. Then it prints, per test, the outcomes
that are not ``passed`` under every condition, and per check row of ``reports/checks/*.csv``
the status where it is not PASS under every condition, the worst ``err/tol`` of each condition,
and the largest relative spread of a computed value across conditions (round-off made visible:
informational). Exit status 1 when any test or check is not PASS under some condition.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent

#: condition -> (environment, CPU flags it needs)
CONDITIONS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "host": ({}, ()),
    "generic": ({"NUMBA_CPU_NAME": "generic"}, ()),
    "haswell": ({"OPENBLAS_CORETYPE": "Haswell"}, ("avx2", "fma")),
    "sandybridge": ({"OPENBLAS_CORETYPE": "Sandybridge"}, ("avx",)),
    "skylakex": ({"OPENBLAS_CORETYPE": "SkylakeX"}, ("avx512f", "avx512dq", "avx512bw")),
    "zen": ({"OPENBLAS_CORETYPE": "Zen"}, ("avx2", "fma")),
    "generic+haswell": (
        {"NUMBA_CPU_NAME": "generic", "OPENBLAS_CORETYPE": "Haswell"},
        ("avx2", "fma"),
    ),
}
DEFAULT = ("host", "generic", "haswell", "sandybridge", "skylakex", "generic+haswell")


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def copy_checkout(dest: Path) -> None:
    """Tracked files of the working tree (uncommitted edits included) into ``dest``."""
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True)
        .stdout.decode()
        .split("\0")
    )
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def environment(extra: dict[str, str], copy: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CPU_NAME", "OPENBLAS_CORETYPE")}
    env.update(extra)
    env["PYTHONPATH"] = str(copy / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_CACHE_DIR"] = str(copy / ".numba_cache")
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[int, float]:
    t0 = time.perf_counter()
    with log.open("w") as fh:
        rc = subprocess.run(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
    return rc, time.perf_counter() - t0


def test_outcomes(junit: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if not junit.exists():
        return out
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        status = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                status = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
        out[name] = status
    return out


def check_rows(checks_dir: Path) -> pd.DataFrame:
    frames = []
    for f in sorted(checks_dir.glob("*.csv")):
        df = pd.read_csv(f)
        df.insert(0, "table", f.stem)
        df["row"] = range(len(df))
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--conditions", default=",".join(DEFAULT), help=f"comma list of {', '.join(CONDITIONS)}"
    )
    ap.add_argument("--only", choices=("tests", "pipeline"), help="run only one of the two")
    ap.add_argument("-k", dest="keyword", help="pytest -k expression (a subset of the tests)")
    ap.add_argument("--cores", type=int, default=2, help="snakemake --cores")
    ap.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    args = ap.parse_args(argv)

    flags = cpu_flags()
    names = []
    for c in args.conditions.split(","):
        if c not in CONDITIONS:
            ap.error(f"unknown condition {c!r}; choose from {', '.join(CONDITIONS)}")
        missing = [f for f in CONDITIONS[c][1] if f not in flags]
        if missing:
            print(f"skip {c}: this processor lacks {', '.join(missing)}")
        else:
            names.append(c)
    work = args.keep or Path(tempfile.mkdtemp(prefix="machine-conditions-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work directory: {work}")
    tests: dict[str, dict[str, str]] = {}
    checks: dict[str, pd.DataFrame] = {}
    for c in names:
        copy = work / c.replace("+", "_")
        if copy.exists():
            shutil.rmtree(copy)
        copy.mkdir()
        copy_checkout(copy)
        env = environment(CONDITIONS[c][0], copy)
        set_vars = " ".join(f"{k}={v}" for k, v in CONDITIONS[c][0].items()) or "(nothing set)"
        if args.only != "pipeline":
            cmd = [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={copy / 'junit.xml'}",
            ] + (["-k", args.keyword] if args.keyword else [])
            rc, wall = run(cmd, copy, env, copy / "pytest.log")
            tests[c] = test_outcomes(copy / "junit.xml")
            n_pass = sum(s == "passed" for s in tests[c].values())
            print(
                f"{c:16s} tests: exit {rc}, {n_pass} passed of {len(tests[c])}, "
                f"{wall / 60:.1f} min  [{set_vars}]",
                flush=True,
            )
        if args.only != "tests":
            cmd = [
                sys.executable,
                "-m",
                "snakemake",
                "--cores",
                str(args.cores),
                "--configfile",
                "config/quick.yaml",
            ]
            rc, wall = run(cmd, copy, env, copy / "snakemake.log")
            checks[c] = check_rows(copy / "reports" / "checks")
            n = len(checks[c])
            n_pass = int((checks[c]["status"] == "PASS").sum()) if n else 0
            print(
                f"{c:16s} pipeline: exit {rc}, {n_pass} PASS of {n} check rows, "
                f"{wall / 60:.1f} min  [{set_vars}]",
                flush=True,
            )
    return report(names, tests, checks)


def report(names, tests, checks) -> int:
    bad = 0
    if tests:
        ids = sorted(set().union(*(t.keys() for t in tests.values())))
        rows = [(i, [tests[c].get(i, "absent") for c in names]) for i in ids]
        odd = [
            (i, s)
            for i, s in rows
            if any(x not in ("passed", "skipped") for x in s) or len(set(s)) > 1
        ]
        print(f"\ntests: {len(ids)}; not passed alike under every condition: {len(odd)}")
        if odd:
            print("  " + " | ".join(names))
        for i, s in odd:
            print(f"  {' | '.join(s)}  {i}")
        bad += sum(any(x in ("failed", "error", "absent") for x in s) for _, s in odd)
    if checks:
        keys = ["table", "row", "case", "check"]
        frames = [
            df[keys + ["status", "computed", "err/tol"]].rename(
                columns={"status": f"status:{c}", "computed": f"c:{c}", "err/tol": f"e:{c}"}
            )
            for c, df in checks.items()
            if len(df)
        ]
        if frames:
            merged = frames[0]
            for f in frames[1:]:
                merged = merged.merge(f, on=keys, how="outer")
            st = merged[[f"status:{c}" for c in checks]]
            not_pass = merged[(st != "PASS").any(axis=1)]
            print(f"\ncheck rows: {len(merged)}; not PASS under some condition: {len(not_pass)}")
            for _, r in not_pass.iterrows():
                s = " | ".join(str(r[f"status:{c}"]) for c in checks)
                print(f"  {s}  {r['table']}: {r['case']}: {r['check']}")
            bad += int((st.isin(["FAIL"]) | st.isna()).any(axis=1).sum())
            for c in checks:
                e = pd.to_numeric(merged[f"e:{c}"], errors="coerce")
                print(f"  worst err/tol under {c}: {e.max():.3g}")
            comp = merged[[f"c:{c}" for c in checks]].apply(pd.to_numeric, errors="coerce")
            scale = comp.abs().max(axis=1)
            spread = (comp.max(axis=1) - comp.min(axis=1)) / scale.where(scale > 0)
            if spread.notna().any():
                i = spread.idxmax()
                print(
                    f"  largest relative spread of a computed value across conditions: "
                    f"{spread[i]:.3g} ({merged.loc[i, 'table']}: {merged.loc[i, 'check']})"
                )
                print(
                    f"  rows whose computed value differs at all: "
                    f"{int((spread > 0).sum())} of {len(merged)}"
                )
    verdict = "all PASS under every condition" if bad == 0 else f"{bad} problems"
    print(f"\n{verdict}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
