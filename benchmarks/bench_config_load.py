"""Loading a large configuration: the strict loader, one CLI run and the pipeline's dry run.

Writes a configuration of ``--cases`` cases (default 70,000: 8.9 MB, about 127 bytes per case
line) to a temporary directory: config/quick.yaml with its cases followed by generated ones, and
times

* the YAML loaders on that file: PyYAML's pure-Python ``SafeLoader`` (what the strict loader
  was built on before), plain ``CSafeLoader`` (libyaml, no checks: the floor), and
  ``ancf_beam.config.read_yaml`` (libyaml plus the strict checks: duplicate keys, alias
  expansion, depth, numbers such as ``1e-9``), best of ``--repeat``, CPU and wall;
* one CLI run on it (``ancf-beam static --case <the last case> --set mesh.n_elements=4``),
  wall time and peak memory of the process;
* ``snakemake -n --configfile <file>`` in a copy of the workflow: refused at the pipeline's
  case bound (``MAX_CASES`` of workflow/rules/common.smk) with the time to the refusal, of which
  Snakemake's own reading of the file (pure-Python PyYAML, before the Snakefile runs) is timed
  apart; and the dry run of a configuration with exactly ``MAX_CASES`` cases (``--bound-run``),
  the time the DAG of the largest accepted matrix takes.

    python benchmarks/bench_config_load.py [--cases 70000] [--repeat 3] [--skip-pipeline]
                                           [--bound-run]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

from ancf_beam.config import StrictLoader, read_yaml

ROOT = Path(__file__).resolve().parents[1]


def write_config(path: Path, n_cases: int) -> None:
    """config/quick.yaml with ``n_cases`` generated cases appended to its own."""
    base = (ROOT / "config" / "quick.yaml").read_text()
    head, tail = base.split("\nmechanisms:", 1)
    lines = []
    for i in range(n_cases):
        lam, n = (i % 90) / 100, 1.0 + (i % 7) * 0.5
        block = (
            f"{{defect: {{lam: {lam:.2f}, n: {n:.1f}, mapping: gauss}}, "
            f"mesh: {{n_elements: {4 + i % 5}}}, load: {{g: 9.81}}}}"
        )
        lines.append(f"  generated_{i:06d}_lam{lam:.2f}_n{n:.1f}: {block}  # case {i}\n")
    path.write_text(head.rstrip("\n") + "\n" + "".join(lines) + "\nmechanisms:" + tail)


def best_of(repeat: int, fn) -> tuple[float, float]:
    """Best CPU and best wall time of ``repeat`` calls."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, float, str]:
    """Wall time (s), CPU time (user + system, s), peak RSS (MB) and output of ``cmd`` (CPU
    and memory from GNU time when present, else NaN)."""
    gnu_time = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
    full = [gnu_time, "-f", "RUSAGE %U %S %M", *cmd] if gnu_time else cmd
    t0 = time.perf_counter()
    res = subprocess.run(full, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    out = res.stdout + res.stderr
    m = re.search(r"RUSAGE ([\d.]+) ([\d.]+) (\d+)", out)
    if not m:
        return wall, float("nan"), float("nan"), out
    return wall, float(m.group(1)) + float(m.group(2)), int(m.group(3)) / 1e3, out


def expanded_values(path: Path) -> int:
    """Values (nodes) of the document, each alias expanded."""
    loader = StrictLoader(path.read_text())
    count, stack = 0, [loader.get_single_node()]
    while stack:
        node = stack.pop()
        count += 1
        if not isinstance(node, yaml.ScalarNode):
            stack.extend(
                n for pair in node.value for n in (pair if isinstance(pair, tuple) else (pair,))
            )
    return count


def copy_workflow(dst: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    shutil.copy(ROOT / "Snakefile", dst / "Snakefile")
    for d in ("workflow", "config", "profiles"):
        if (ROOT / d).is_dir():
            shutil.copytree(ROOT / d, dst / d, ignore=ignore)
    return dst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=70_000, help="generated cases")
    ap.add_argument("--repeat", type=int, default=3, help="loader timings: best of N")
    ap.add_argument("--skip-pipeline", action="store_true", help="no snakemake runs")
    ap.add_argument(
        "--bound-run",
        action="store_true",
        help="also the dry run of a config with exactly MAX_CASES cases",
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_config_load_"))
    try:
        cfg = tmp / "cases.yaml"
        write_config(cfg, args.cases)
        text = cfg.read_text()
        print(
            f"machine: {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
            f"PyYAML {yaml.__version__}, libyaml: {yaml.__with_libyaml__}"
        )
        print(f"{cfg.name}: {args.cases} generated cases, {len(text) / 1e6:.2f} MB\n")
        print(f"{'loader':<44s} {'CPU s':>8s} {'wall s':>8s}")
        loaders = {
            "PyYAML SafeLoader (pure Python)": lambda: yaml.load(text, Loader=yaml.SafeLoader),
            "PyYAML CSafeLoader (libyaml, no checks)": lambda: yaml.load(
                text, Loader=yaml.CSafeLoader
            ),
            "ancf_beam.config.read_yaml (libyaml, strict)": lambda: read_yaml(cfg),
        }
        for name, fn in loaders.items():
            cpu, wall = best_of(args.repeat, fn)
            print(f"{name:<44s} {cpu:8.2f} {wall:8.2f}", flush=True)
        tracemalloc.start()
        read_yaml(cfg)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(
            f"read_yaml: {expanded_values(cfg):,} values, peak {peak / 1e6:.0f} MB allocated "
            "while parsing"
        )

        last = f"generated_{args.cases - 1:06d}"
        case = next(k for k in read_yaml(cfg)["cases"] if k.startswith(last))
        cli = [
            sys.executable,
            "-m",
            "ancf_beam.cli",
            "static",
            "--config",
            str(cfg),
            "--case",
            case,
            "--set",
            "mesh.n_elements=4",
            "--json",
            "-q",
        ]
        wall, cpu, peak, out = timed(cli, tmp)
        ok = '"tip_y"' in out
        print(
            f"\none CLI run (static, case {case}): {wall:.1f} s wall, {cpu:.1f} s CPU, peak "
            f"{peak:.0f} MB, {'ok' if ok else 'FAILED: ' + out[-500:]}"
        )
        if args.skip_pipeline:
            return
        work = copy_workflow(Path(tempfile.mkdtemp(prefix="wf_", dir=tmp)))
        reader = (
            "import time, sys; t = time.perf_counter(); "
            "from snakemake.common.configfile import load_configfile; "
            "load_configfile(sys.argv[1]); print(time.perf_counter() - t)"
        )
        res = subprocess.run(
            [sys.executable, "-c", reader, str(cfg)], capture_output=True, text=True, check=True
        )
        print(
            f"Snakemake's own reading of the file (before the Snakefile runs): "
            f"{float(res.stdout):.1f} s"
        )
        cmd = [sys.executable, "-m", "snakemake", "-n", "--configfile", str(cfg)]
        wall, cpu, peak, out = timed(cmd, work)
        refused = "takes at most" in out
        print(
            f"snakemake -n: {wall:.1f} s wall, {cpu:.1f} s CPU, peak {peak:.0f} MB, "
            f"{'refused at the case bound' if refused else 'NOT refused: ' + out[-800:]}"
        )
        if args.bound_run:
            common = (ROOT / "workflow" / "rules" / "common.smk").read_text()
            bound = int(re.search(r"MAX_CASES = (\d+)", common).group(1))
            cfg_b = tmp / "bound.yaml"
            write_config(cfg_b, bound - 6)  # quick.yaml has 6 cases of its own
            cmd = [sys.executable, "-m", "snakemake", "-n", "--configfile", str(cfg_b)]
            wall, cpu, peak, out = timed(cmd, work)
            jobs = re.search(r"^total\s+(\d+)", out, re.M)
            print(
                f"snakemake -n at the bound ({bound} cases): {wall:.1f} s wall, {cpu:.1f} s "
                f"CPU, peak {peak:.0f} MB, {jobs.group(1) if jobs else '?'} jobs"
                f"{'' if jobs else ': ' + out[-800:]}"
            )
        print(f"\nload average {os.getloadavg()[0]:.2f} after the runs")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
