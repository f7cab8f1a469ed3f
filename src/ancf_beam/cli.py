"""Command-line tool ``ancf-beam``.

Subcommands share ``--config FILE`` (default: the repository's ``config/config.yaml``),
``--case NAME``, ``--set KEY=VALUE`` (repeatable, dotted keys), ``--json`` (one JSON object on
stdout and nothing else) and ``--out FILE.nc`` (the xarray Dataset with provenance). Bad input
prints a message on stderr and exits with status 2; a solver failure exits with status 1, and so
does a write that fails (the message names the file; the result is still printed); Ctrl-C exits
with 130. No output file is written when a command fails.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ancf_beam import __version__
from ancf_beam.config import (
    DEFAULTS,
    IMPLICIT_INTEGRATORS,
    INTEGRATORS,
    MECHANISM_INTEGRATORS,
    ConfigError,
    case_from_file,
)
from ancf_beam.solvers.schemes import NEWTON_DEFAULTS, NEWTON_VARIANTS
from ancf_beam.specs import CaseSpec

__all__ = [
    "COMMANDS",
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "SIMULATE_FLAGS",
    "UsageError",
    "build_parser",
    "cmd_critical_dt",
    "cmd_identify",
    "cmd_modal",
    "cmd_simulate",
    "cmd_static",
    "cmd_stepped",
    "main",
]

log = logging.getLogger("ancf_beam")

EXIT_USAGE = 2
EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process ended by Ctrl-C


class UsageError(ValueError):
    """Bad command-line input that is not a config problem."""


#: a negative number or a list of numbers (``-1``, ``-1e-3``, ``-.5``, ``-1,0``): an option's
#: value, never an option (no option of ancf-beam starts with a digit or a dot)
NUMBER_LIKE = re.compile(r"^-\.?[0-9]")


class ArgumentParser(argparse.ArgumentParser):
    """argparse reads ``--damping -1,0`` or ``--t-end -1e-3`` as two options (it only takes
    ``-1`` and ``-1.5`` for numbers): here every argument that starts like a negative number is
    a value, and then meets the option's own check."""

    def _parse_optional(self, arg_string):
        if NUMBER_LIKE.match(arg_string):
            return None
        return super()._parse_optional(arg_string)


def _common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("case selection and output")
    g.add_argument("--config", metavar="FILE", help="config YAML (default: config/config.yaml)")
    g.add_argument("--case", metavar="NAME", help="named case of the config (default: defaults)")
    g.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a config key, e.g. --set defect.lam=0.3 (repeatable)",
    )
    g.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    g.add_argument("--out", metavar="FILE.nc", help="write the result Dataset to NetCDF")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress or info on stderr")
    g.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")


def _case(args: argparse.Namespace) -> CaseSpec:
    return case_from_file(args.config, args.case, args.set)


def _positive_finite(option: str, value: float | None, unit: str = "") -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise UsageError(f"{option} must be a finite number > 0{unit}, got {value}")


def _modes_at_most(option: str, value: int | None, case: CaseSpec) -> None:
    """``value`` modes of the reduced system: between 1 and its 4 x n_elements DOFs."""
    if value is None:
        return
    n_dof = 4 * case.mesh.n_elements
    if not 1 <= value <= n_dof:
        raise UsageError(
            f"{option} must be in [1, {n_dof}] (4 x mesh.n_elements = {case.mesh.n_elements}), "
            f"got {value}"
        )


#: Characters the temporary name ``.<name>.<pid>.<8 hex>.tmp`` adds to an ``--out`` file name
#: (ancf_beam.io.write_netcdf; pids have at most 7 digits on Linux)
TEMPORARY_NAME_EXTRA = len(".." + "9" * 7 + "." + "f" * 8 + ".tmp")


def check_out(out: str | None) -> None:
    """``--out``: a ``.nc`` name in an existing, writable directory with free space, short
    enough for the file system with its temporary name (checked before the run)."""
    if out is None:
        return
    if not str(out).endswith(".nc"):
        raise UsageError(f"--out must name a .nc file, got {out!r}")
    path = Path(out)
    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent_mode = parent.stat().st_mode
    except FileNotFoundError:
        raise UsageError(f"--out {out}: directory '{parent}' does not exist") from None
    except OSError as exc:
        raise UsageError(f"--out {out}: directory '{parent}': {exc.strerror}") from None
    if not stat.S_ISDIR(parent_mode):
        raise UsageError(f"--out {out}: '{parent}' is a file, not a directory")
    try:
        name_max = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    length = len(os.fsencode(path.name))
    if length + TEMPORARY_NAME_EXTRA > name_max:
        raise UsageError(
            f"--out: the file name is {length} bytes long; at most "
            f"{name_max - TEMPORARY_NAME_EXTRA} here (the file system takes {name_max}, and the "
            f"temporary name written first adds {TEMPORARY_NAME_EXTRA})"
        )
    if path.is_dir():
        raise UsageError(f"--out {out}: is a directory")
    try:  # a real probe: permissions, read-only mounts and ACLs all show here
        fd, probe = tempfile.mkstemp(prefix=".probe.", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"--out {out}: directory '{parent}' is not writable ({exc})") from exc
    from ancf_beam.io import free_bytes

    if free_bytes(parent) == 0:
        raise UsageError(f"--out {out}: the file system of '{parent}' is full (0 bytes free)")


def _with_options(case: CaseSpec, options: dict[str, tuple[str, Any]]) -> CaseSpec:
    """``case`` with the options that stand for config keys applied (``{option: (key,
    value)}``, None: not given): each value meets its key's rule (ancf_beam.config.RULES), and
    the message of a bad one names the option."""
    for option, (key, value) in options.items():
        if value is None:
            continue
        try:
            case = case.with_overrides({key: value})
        except ConfigError as exc:
            raise UsageError(f"{option} {value}: {exc}") from None
    return case


# ------------------------------------------------------------------------------------------
# subcommands
# ------------------------------------------------------------------------------------------
def cmd_static(args):
    from ancf_beam.analyses import run_static

    return run_static(_case(args), dataset=args.out is not None)


def cmd_modal(args):
    from ancf_beam.analyses import run_modal

    case = _with_options(_case(args), {"--modes": ("modal.n_modes", args.modes)})
    return run_modal(case, about=args.about)


def cmd_stepped(args):
    from ancf_beam.analyses import run_stepped

    case = _with_options(
        _case(args),
        {
            "--segments": ("stepped.segments", args.segments),
            "--modes": ("modal.n_modes", args.modes),
        },
    )
    return run_stepped(case)


def _float_pair(text: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"--damping expects A,B (two numbers), got {text!r}") from None
    return a, b


#: DynamicsSettings option -> the simulate flag that sets it
SIMULATE_FLAGS = {
    "integrator": "--integrator",
    "t_end": "--t-end",
    "dt": "--dt",
    "dt_safety": "--dt-safety",
    "damping": "--damping",
    "force": "--force",
    "beta": "--beta",
    "gamma": "--gamma",
    "rho_inf": "--rho-inf",
    "max_iter": "--max-iter",
    "tol": "--tol",
    "max_halvings": "--max-halvings",
    "newton": "--newton",
}
#: flags named in messages besides those of SIMULATE_FLAGS
MESSAGE_FLAGS = {**SIMULATE_FLAGS, "dt_critical": "--dt-critical"}


def cmd_simulate(args):
    """``simulate``: every check of the options is :class:`DynamicsSettings`'s; its errors are
    reported with the flag names."""
    from ancf_beam.analyses import run_simulate
    from ancf_beam.solvers.settings import SettingsError

    _positive_finite("--dt-critical", args.dt_critical, " (s)")
    case = _case(args)
    if args.force and (args.integrator or case.dynamics.integrator) in IMPLICIT_INTEGRATORS:
        log.info("--force has no effect for implicit integrators (any dt is accepted)")
    options = {k: getattr(args, k) for k in SIMULATE_FLAGS if k != "damping"}
    damping = _float_pair(args.damping) if args.damping is not None else None
    try:
        return run_simulate(
            case, dt_critical=args.dt_critical, damping=damping, progress=not args.quiet, **options
        )
    except SettingsError as exc:
        raise UsageError(exc.render(lambda option: MESSAGE_FLAGS.get(option, option))) from exc
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def cmd_critical_dt(args):
    from ancf_beam.analyses import run_critical_dt

    if args.mechanism is not None:
        from ancf_beam.config import mechanism_from_file
        from ancf_beam.mbs.analysis import mechanism_critical_dt

        if args.measure or args.case is not None:
            raise UsageError("--mechanism takes neither --measure nor --case")
        return mechanism_critical_dt(mechanism_from_file(args.config, args.mechanism, args.set))
    return run_critical_dt(_case(args), measure=args.measure)


def cmd_identify(args):
    from ancf_beam.identify import run_identify

    _positive_finite("--sigma-rel", args.sigma_rel)
    for w in args.omega:
        _positive_finite("--omega", w, " (rad/s)")
    case = _case(args)
    _modes_at_most("--modes", args.modes, case)
    try:
        return run_identify(case, args.omega, args.sigma_rel, args.fit_E0, args.modes)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def cmd_mechanism(args):
    from ancf_beam.config import mechanism_from_file
    from ancf_beam.mbs.analysis import run_mechanism
    from ancf_beam.results import RedundantConstraintError

    spec = mechanism_from_file(args.config, args.case, args.set)
    if args.t_end is not None:
        try:
            spec = spec.with_overrides({"t_end": args.t_end})
        except ConfigError as exc:
            raise UsageError(f"--t-end {args.t_end}: {exc}") from None
    try:
        return run_mechanism(
            spec, t_end=args.t_end, integrator=args.integrator, progress=not args.quiet
        )
    except RedundantConstraintError as exc:  # a modelling error in the input, not a solver one
        raise UsageError(str(exc)) from exc


COMMANDS: dict[str, tuple[Callable, str]] = {
    "static": (cmd_static, "static equilibrium under gravity (Newton, load stepping)"),
    "modal": (cmd_modal, "natural frequencies and mode shapes"),
    "stepped": (cmd_stepped, "stepped-beam transfer-matrix validation (linear, N segments)"),
    "simulate": (cmd_simulate, "dynamics from rest under gravity (explicit or implicit)"),
    "critical-dt": (cmd_critical_dt, "critical explicit time step: eigenvalue, bounds, measured"),
    "identify": (cmd_identify, "estimate the defect (lam, n) from measured natural frequencies"),
    "mechanism": (cmd_mechanism, "planar mechanism run (pendulum, slider-crank, two-body impact)"),
}


def _add_static_modal_stepped(sub) -> None:
    p = sub.add_parser("static", help=COMMANDS["static"][1], description=COMMANDS["static"][1])
    _common(p)

    p = sub.add_parser("modal", help=COMMANDS["modal"][1], description=COMMANDS["modal"][1])
    p.add_argument("--modes", type=int, help="number of modes (default: modal.n_modes)")
    p.add_argument(
        "--about",
        choices=("reference", "static"),
        help="linearise about the straight reference or the static equilibrium",
    )
    _common(p)

    p = sub.add_parser("stepped", help=COMMANDS["stepped"][1], description=COMMANDS["stepped"][1])
    p.add_argument("--segments", type=int, help="number of uniform segments (default: config)")
    p.add_argument("--modes", type=int, help="number of frequencies (default: modal.n_modes)")
    _common(p)


def _add_simulate(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help=COMMANDS["simulate"][1],
        description="dynamics from rest under gravity: explicit central differences (default) "
        "or an implicit integrator (bdf1, newmark, generalized-alpha; Newton with the analytic "
        "tangent, any dt)",
    )
    p.add_argument(
        "--integrator",
        choices=INTEGRATORS,
        help="time integrator (default: dynamics.integrator, i.e. "
        f"{DEFAULTS['dynamics']['integrator']})",
    )
    p.add_argument("--t-end", type=float, metavar="T", help="end time, s (default: dynamics.t_end)")
    p.add_argument(
        "--dt",
        type=float,
        metavar="DT",
        help="time step, s (default: safety * dt_cr explicit, T1/100 implicit)",
    )
    p.add_argument(
        "--dt-safety",
        type=float,
        metavar="S",
        help="dt = S * dt_critical (default: config; implicit integrators accept S > 1)",
    )
    p.add_argument(
        "--dt-critical",
        type=float,
        metavar="DT_CR",
        help="use this critical step (s) instead of computing it (e.g. from critical-dt output)",
    )
    p.add_argument("--damping", metavar="A,B", help="Rayleigh damping C = A M + B K0 (1/s, s)")
    p.add_argument(
        "--force", action="store_true", help="allow a --dt above the critical step (explicit)"
    )
    _add_implicit_options(p)
    _common(p)


def _add_implicit_options(p: argparse.ArgumentParser) -> None:
    dyn, nd = DEFAULTS["dynamics"], NEWTON_DEFAULTS
    g = p.add_argument_group("implicit integrators (" + ", ".join(IMPLICIT_INTEGRATORS) + ")")
    g.add_argument(
        "--beta",
        type=float,
        metavar="B",
        help=f"Newmark beta (default: dynamics.newmark_beta, {dyn['newmark_beta']})",
    )
    g.add_argument(
        "--gamma",
        type=float,
        metavar="G",
        help=f"Newmark gamma (default: dynamics.newmark_gamma, {dyn['newmark_gamma']})",
    )
    g.add_argument(
        "--rho-inf",
        type=float,
        metavar="R",
        help="generalized-alpha spectral radius at infinity, 0..1 (default: dynamics.rho_inf, "
        f"{dyn['rho_inf']})",
    )
    g.add_argument(
        "--max-iter", type=int, metavar="N", help=f"Newton iterations per step ({nd['max_iter']})"
    )
    g.add_argument(
        "--tol", type=float, metavar="TOL", help=f"relative Newton residual ({nd['tol']:g})"
    )
    g.add_argument(
        "--max-halvings",
        type=int,
        metavar="N",
        help=f"step halvings on non-convergence ({nd['max_halvings']})",
    )
    g.add_argument(
        "--newton",
        choices=NEWTON_VARIANTS,
        help=f"Newton variant (default: {nd['newton']}): modified reuses the factorisation "
        "while the residual contracts, full assembles a new tangent every iteration",
    )


def _add_critical_dt_identify(sub) -> None:
    text = COMMANDS["critical-dt"][1]
    p = sub.add_parser("critical-dt", help=text, description=text)
    p.add_argument(
        "--measure", action="store_true", help="also measure the limit by bisection on dt"
    )
    p.add_argument(
        "--mechanism",
        metavar="NAME",
        help="bound of a mechanism of mechanisms: instead (beam elements and contacts, the "
        "governing mode named; --set keys relative to its block)",
    )
    _common(p)

    text = COMMANDS["identify"][1]
    p = sub.add_parser(
        "identify",
        help=text,
        description=text + " (the beam's other properties come from the config; the case's "
        "defect.lam / defect.n only seed the search)",
    )
    p.add_argument(
        "--omega",
        type=float,
        nargs="+",
        required=True,
        metavar="W",
        help="measured natural frequencies, rad/s, ascending (first modes)",
    )
    p.add_argument(
        "--sigma-rel",
        type=float,
        metavar="S",
        help="relative standard uncertainty of each frequency (default: from the residual)",
    )
    p.add_argument("--fit-E0", action="store_true", help="also estimate E0")
    p.add_argument("--modes", type=int, metavar="K", help="number of modes to use (default: all)")
    _common(p)


def _add_mechanism(sub) -> None:
    text = COMMANDS["mechanism"][1]
    p = sub.add_parser(
        "mechanism",
        help=text,
        description="integrate a mechanism of the config's mechanisms: section (a pendulum "
        "beam pinned at node 0, a slider-crank with a rigid or ANCF connecting rod, or a two-body "
        "impact through a contact law)",
    )
    p.add_argument(
        "--case", metavar="NAME", required=True, help="mechanism name (a key of mechanisms:)"
    )
    p.add_argument("--config", metavar="FILE", help="config YAML (default: config/config.yaml)")
    p.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a key of the mechanism, e.g. --set rod.mesh.n_elements=16 (repeatable)",
    )
    p.add_argument("--t-end", type=float, metavar="T", help="end time, s (default: t_end)")
    p.add_argument(
        "--integrator",
        choices=MECHANISM_INTEGRATORS,
        help="time integrator (default: the mechanism's integrator)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--out", metavar="FILE.nc", help="write the time histories to NetCDF")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or info on stderr")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="ancf-beam",
        description="Gradient-defect ANCF cantilever under gravity: statics, modes, dynamics.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_static_modal_stepped(sub)
    _add_simulate(sub)
    _add_critical_dt_identify(sub)
    _add_mechanism(sub)
    return parser


def _print_human(summary: dict[str, Any]) -> None:
    for k, v in summary.items():
        if isinstance(v, float):
            print(f"{k:>22s}: {v:.8g}")
        elif isinstance(v, list):
            vals = ", ".join(f"{x:.8g}" if isinstance(x, float) else str(x) for x in v)
            print(f"{k:>22s}: [{vals}]")
        else:
            print(f"{k:>22s}: {v}")


#: results whose NaN means "not available" (JSON null), not a failure
NOT_AVAILABLE = {
    "critical-dt": ("dt_measured", "omega_max_variation"),  # without --measure
    "identify": ("lam_std", "n_std", "E0_std", "cond", "covariance"),  # not identifiable
    # adaptive steps; a drive feeds work in; a point mass has no angle (its NaN; the bodies'
    # positions and the markers are checked)
    "mechanism": ("dt", "energy_drift_rel", "body_theta"),
}


def _with_compile_s(summary: dict[str, Any], compile_s: float) -> dict[str, Any]:
    """``summary`` with ``compile_s`` next to ``wall_s`` (at the end without one)."""
    out: dict[str, Any] = {}
    for k, v in summary.items():
        out[k] = v
        if k == "wall_s":
            out["compile_s"] = compile_s
    out.setdefault("compile_s", compile_s)
    return out


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT, no file
        words = argv if argv is not None else sys.argv[1:]
        command = next((f"ancf-beam {a}" for a in words if a in COMMANDS), "ancf-beam")
        print(f"{command}: interrupted; nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.DEBUG if args.verbose else (logging.WARNING if args.quiet else logging.INFO)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    func = COMMANDS[args.command][0]
    try:
        check_out(args.out)
        summary, ds = func(args)
        from ancf_beam.io import check_finite
        from ancf_beam.kernel_cache import compile_seconds

        # compile/load time of numba kernels in this process, kept out of wall_s (the run)
        summary = _with_compile_s(summary, compile_seconds())

        check_finite(summary, ds, NOT_AVAILABLE.get(args.command, ()))
    except (ConfigError, UsageError) as exc:
        print(f"ancf-beam {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # solver failures: clear message, non-zero exit, nothing written
        log.debug("traceback of the failure", exc_info=True)  # -v shows it; exit code the same
        text = str(exc) or exc.__class__.__name__  # MemoryError() has no text
        print(f"ancf-beam {args.command}: failed: {text}", file=sys.stderr)
        return EXIT_FAILURE
    status = 0
    if args.out:
        from ancf_beam.io import write_netcdf

        try:
            write_netcdf(ds, args.out)
            summary["out"] = str(args.out)
        except OSError as exc:  # e.g. a full disk: no partial file; the result is still shown
            log.debug("traceback of the failed write", exc_info=True)
            print(f"ancf-beam {args.command}: failed: {exc}", file=sys.stderr)  # names the file
            status = EXIT_FAILURE
    if args.json:
        from ancf_beam.io import json_ready

        sys.stdout.write(json.dumps(json_ready(summary)) + "\n")
    else:
        _print_human(summary)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
