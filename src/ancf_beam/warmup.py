"""Compile (or load) every numba kernel the pipeline uses, once, before the jobs fan out.

numba compiles a kernel on its first call for the argument types of that call and stores it in
the on-disk cache (:mod:`ancf_beam.kernel_cache`); a later process with the same types loads it.
Jobs started together on an empty cache would all compile the same kernels at once (minutes
each on a shared machine). :func:`warm_kernels` runs the real drivers on small models instead
(every case's statics and modes; its dynamics for a few steps on meshes on both sides of the
kernels' thresholds; every mechanism of the config for a few samples), so the kernels are
compiled with the argument types the pipeline's runs pass (checked by counting the cache
files a pipeline run adds after it: none, docs/pipeline.md); the
pipeline's ``compile_kernels`` rule runs it first and every job that runs kernels waits for its
record. By hand::

    python -m ancf_beam.warmup [--config config/config.yaml] [--out record.json]

The record: the cache digest and directory, numba's target CPU, and per group of kernels the
compile/load time (``compile_s``), the group's whole time and how many cache files it added,
and the runs that failed (``failed_runs``: a case that cannot be solved fails in its own job).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ancf_beam import errors, kernel_cache
from ancf_beam.beam import kernels

__all__ = ["GROUPS", "main", "warm_kernels", "write_record"]

#: meshes of the short dynamic runs, one per form of the element loops (beam.kernels.SoaArgs:
#: element-major below SOA_MIN_ELEMENTS, structure-of-arrays above, rows of fixed length up to
#: SOA_ROW padded elements); the argument types are those of the Gauss rule alone, so for one
#: rule the three compile once; statics and modes run on the case's own mesh (a coarse mesh
#: can fail the strain check)
DYNAMIC_MESHES = (
    kernels.SOA_MIN_ELEMENTS // 2,
    2 * kernels.SOA_MIN_ELEMENTS,
    kernels.SOA_ROW + kernels.SOA_VECTOR,
)
#: explicit and implicit steps of the tiny beam runs
BEAM_STEPS = 5
#: sample intervals of the tiny mechanism runs
MECH_SAMPLES = 3
#: a run of a case that cannot be solved (a static solve that does not converge, an unstable
#: step) is the case's failure, not the warm-up's: the warm-up records it and goes on, and the
#: case's own job fails naming its rule. Bad input (ConfigError) and bugs still stop it.
SOLVER_FAILURES = (
    errors.ConvergenceError,
    errors.InstabilityError,
    errors.NonFiniteResultError,
    errors.ConstraintSingularityError,
    errors.RedundantConstraintError,
)


def _target_cpu() -> dict[str, str]:
    """numba's target CPU name and features (the cache is per CPU: another processor compiles
    anew unless ``NUMBA_CPU_NAME`` fixes the target, e.g. ``generic``)."""
    import llvmlite.binding as ll
    from numba.core import config

    name = config.CPU_NAME or ll.get_host_cpu_name()
    return {"cpu_name": name, "numba_cpu_name": config.CPU_NAME or "host"}


def _steps(case, integrator: str, newton: str | None = None):
    """A few steps of ``integrator`` (explicit at half the critical step, implicit at 20x), the
    last one shortened to end at ``t_end`` (a kernel of its own)."""
    from ancf_beam.analyses import run_simulate
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.settings import critical_step

    dtc = critical_step(BeamModel(case))
    dt = (0.5 if newton is None else 20.0) * dtc
    return run_simulate(  # t_end not a multiple of dt: the shortened last step runs too
        case,
        dt=dt,
        dt_critical=dtc,
        t_end=(BEAM_STEPS + 0.5) * dt,
        progress=False,
        integrator=integrator,
        newton=newton,
    )


def _size_class(n: int) -> int:
    """The representative mesh (a DYNAMIC_MESHES entry) of the kernels' argument types for a
    mesh of ``n`` elements: element-major below SOA_MIN_ELEMENTS, rows of fixed length up to
    SOA_ROW (padded to SOA_VECTOR) elements, run-time rows above."""
    if n < kernels.SOA_MIN_ELEMENTS:
        return DYNAMIC_MESHES[0]
    padded = -(-n // kernels.SOA_VECTOR) * kernels.SOA_VECTOR
    return DYNAMIC_MESHES[1] if padded <= kernels.SOA_ROW else DYNAMIC_MESHES[2]


def _used_meshes(config: Mapping[str, Any], cases: list[Any]) -> list[int]:
    """Size classes (representative meshes) of the meshes the config's cases and studies run:
    the cases' own meshes and every ``pipeline.<study>`` key naming meshes."""
    sizes = {int(c.mesh.n_elements) for c in cases}
    for block in (config.get("pipeline") or {}).values():
        if not isinstance(block, Mapping):
            continue
        for key, value in block.items():
            if key == "meshes" or key.endswith("_meshes"):
                sizes.update(int(v) for v in value or ())
            elif key == "n_elements" or key.endswith("_mesh"):
                if isinstance(value, int) and not isinstance(value, bool):
                    sizes.add(value)
    return sorted({_size_class(n) for n in sizes if n > 0})


def _used_integrators(config: Mapping[str, Any], cases: list[Any]) -> list[str]:
    """Implicit integrators the pipeline runs: the cases' own, every one if the integrators
    study runs, the scaling study's."""
    from ancf_beam.config import IMPLICIT_INTEGRATORS
    from ancf_beam.studies.scaling import IMPLICIT as SCALING_IMPLICIT

    pipe = config.get("pipeline") or {}
    used = {c.dynamics.integrator for c in cases}
    if (pipe.get("integrators") or {}).get("enabled"):
        used.update(IMPLICIT_INTEGRATORS)
    if (pipe.get("scaling") or {}).get("enabled"):
        used.add(SCALING_IMPLICIT)
    return [i for i in IMPLICIT_INTEGRATORS if i in used]


def _beam_runs(
    config: Mapping[str, Any], part: str, everything: bool = False
) -> list[tuple[str, Callable[[], Any]]]:
    """``part`` 'static': every case's statics, modes and critical-step estimate; 'dynamics':
    the explicit and implicit steps (and the measured critical step) on the size classes the
    config uses (``everything``: all classes, every implicit integrator and Newton variant)."""
    from ancf_beam.analyses import run_critical_dt, run_modal, run_static
    from ancf_beam.config import (
        EXPLICIT_INTEGRATOR,
        IMPLICIT_INTEGRATORS,
        resolve_case,
    )
    from ancf_beam.solvers.schemes import NEWTON_DEFAULTS, NEWTON_VARIANTS

    names = [None, *(config.get("cases") or {})]  # the defaults and every case
    full = [resolve_case(config, name) for name in names]
    runs: list[tuple[str, Callable[[], Any]]] = []
    if part == "static":
        for c in full:  # cases differ in kernels: damage, imperfection, tabulated defects...
            runs.append(("beam.static", lambda c=c: run_static(c)))
            runs.append(("beam.modal", lambda c=c: run_modal(c)))
            runs.append(("beam.critical_dt", lambda c=c: run_critical_dt(c)))
        return runs
    meshes = list(DYNAMIC_MESHES) if everything else _used_meshes(config, full)
    integrators = IMPLICIT_INTEGRATORS if everything else _used_integrators(config, full)
    # Newton's variant is a run option (CLI), not a config key: the pipeline runs the default
    newtons = NEWTON_VARIANTS if everything else (NEWTON_DEFAULTS["newton"],)
    for name in names:
        for ne in meshes:
            case = resolve_case(config, name, {"mesh.n_elements": ne})
            if ne == meshes[0]:  # the bisection's many short runs: on the least mesh
                runs.append(("beam.critical_dt", lambda c=case: run_critical_dt(c, measure=True)))
            runs.append(("beam.explicit", lambda c=case: _steps(c, EXPLICIT_INTEGRATOR)))
            for integ in integrators:
                for newton in newtons:
                    runs.append(
                        ("beam.implicit", lambda c=case, i=integ, n=newton: _steps(c, i, n))
                    )
    return runs


def _mechanism_runs(config: Mapping[str, Any]) -> list[tuple[str, Callable[[], Any]]]:
    from ancf_beam.config import mechanism_names, resolve_mechanism
    from ancf_beam.mbs.analysis import run_mechanism

    runs = []
    for name in mechanism_names(config):
        spec = resolve_mechanism(config, name)
        # not a multiple of the sample interval (nor of a fixed step): the shortened last step
        t_end = min(spec.t_end, (MECH_SAMPLES + 0.37) * spec.sample_dt)
        spec = spec.with_overrides({"t_end": t_end})
        runs.append((f"mbs.{spec.kind}.{spec.integrator}", lambda s=spec: run_mechanism(s)))
    return runs


#: groups of kernels compiled by separate processes (the pipeline's compile_kernels jobs).
#: 'beam_static' goes first: the other two call its kernels (the elastic force and tangent,
#: the damage update); 'beam_dynamics' and 'mbs' then compile kernels of their own each and
#: may run at the same time (numba keeps an index file per kernel).
GROUPS = ("beam_static", "beam_dynamics", "mbs")


def _runs(config, group: str, everything: bool) -> list[tuple[str, Callable[[], Any]]]:
    if group == "beam_static":
        return _beam_runs(config, "static")
    if group == "beam_dynamics":
        return _beam_runs(config, "dynamics", everything)
    if group == "mbs":
        return _mechanism_runs(config)
    raise ValueError(f"unknown kernel group {group!r}; choose from {', '.join(GROUPS)}")


def warm_kernels(
    config: Mapping[str, Any] | str | Path | None = None,
    log: Callable[[str], None] = print,
    groups: Sequence[str] = GROUPS,
    everything: bool = False,
) -> dict[str, Any]:
    """Run the drivers on tiny models of ``config`` (a mapping, or a config file: default
    ``config/config.yaml``) as the module docstring says, for the kernel ``groups`` (GROUPS,
    in this order); ``everything``: every mesh size class, implicit integrator and Newton
    variant, whatever the config runs. Returns the record (a dict)."""
    from ancf_beam.config import load_config

    kernel_cache.install_compile_clock()
    if not isinstance(config, Mapping):
        config = load_config(config)
    runs = [r for g in GROUPS if g in groups for r in _runs(config, g, everything)]
    unknown = sorted(set(groups) - set(GROUPS))
    if unknown:
        raise ValueError(f"unknown kernel groups {unknown}; choose from {', '.join(GROUPS)}")
    directory = kernel_cache.cache_dir()
    before = kernel_cache.cache_files(directory)
    t_start = time.perf_counter()
    stats: dict[str, dict[str, float]] = {}
    failures: list[dict[str, str]] = []
    for label, run in runs:
        c0, t0 = kernel_cache.compile_seconds(), time.perf_counter()
        f0 = kernel_cache.cache_files(directory)["nbc"]
        g = stats.setdefault(label, {"compile_s": 0.0, "total_s": 0.0, "new_cache_files": 0})
        try:
            run()
        except SOLVER_FAILURES as exc:
            # the kernels it reached are compiled; its own pipeline job fails and names it
            failures.append({"run": label, "error": f"{type(exc).__name__}: {exc}"})
            log(f"{label}: the run failed ({type(exc).__name__}); its kernels so far are kept")
        g["compile_s"] += kernel_cache.compile_seconds() - c0
        g["total_s"] += time.perf_counter() - t0
        g["new_cache_files"] += kernel_cache.cache_files(directory)["nbc"] - f0
    after = kernel_cache.cache_files(directory)
    record = {
        "digest": kernel_cache.source_digest(),
        "kernel_groups": [g for g in GROUPS if g in groups],
        "everything": bool(everything),
        "cache_dir": str(directory),
        **_target_cpu(),
        "machine": platform.machine(),
        "compile_s": kernel_cache.compile_seconds(),
        "total_s": time.perf_counter() - t_start,
        "cache_files_before": before,
        "cache_files_after": after,
        "groups": {k: {kk: round(v, 3) for kk, v in g.items()} for k, g in stats.items()},
        "failed_runs": failures,
    }
    for k, g in record["groups"].items():
        log(f"{k:<40s} compile/load {g['compile_s']:7.2f} s, {g['new_cache_files']} new")
    return record


def write_record(record: Mapping[str, Any], path: str | Path) -> None:
    """Write ``record`` as JSON through a temporary file: never a half-written record."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m ancf_beam.warmup",
        description="Compile (or load) every numba kernel the pipeline uses, once.",
    )
    ap.add_argument("--config", default=None, help="config file (default config/config.yaml)")
    ap.add_argument("--out", default=None, help="write the record (JSON) to this file")
    ap.add_argument(
        "--group",
        action="append",
        choices=GROUPS,
        default=None,
        help="compile this group of kernels only (repeatable; default: all, in order)",
    )
    ap.add_argument(
        "--all",
        action="store_true",
        dest="everything",
        help="every mesh size class, implicit integrator and Newton variant, whatever the "
        "config runs (default: the ones the config's cases and studies use)",
    )
    args = ap.parse_args(argv)
    from ancf_beam.errors import ConfigError

    try:
        record = warm_kernels(
            args.config,
            log=lambda m: print(m, file=sys.stderr),
            groups=args.group or GROUPS,
            everything=args.everything,
        )
    except ConfigError as exc:
        print(f"python -m ancf_beam.warmup: error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        write_record(record, args.out)
    else:
        sys.stdout.write(json.dumps(record, indent=1) + "\n")
    print(
        f"kernels of {record['digest']} for {record['cpu_name']}: compile/load "
        f"{record['compile_s']:.1f} s of {record['total_s']:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
