"""Command-line tool ``ancf-beam``.

Subcommands share ``--config FILE`` (default: the repository's ``config/config.yaml``),
``--case NAME``, ``--set KEY=VALUE`` (repeatable, dotted keys), ``--json`` (one JSON object on
stdout and nothing else) and ``--out FILE.nc`` (the xarray Dataset with provenance). Bad input
prints a message on stderr and exits with status 2; a solver failure exits with status 1. No
output file is written when a command fails.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable
from typing import Any

from ancf_beam import __version__
from ancf_beam.config import CaseSpec, ConfigError, case_from_file

log = logging.getLogger("ancf_beam")

EXIT_USAGE = 2
EXIT_FAILURE = 1


class UsageError(ValueError):
    """Bad command-line input that is not a config problem."""


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


# ------------------------------------------------------------------------------------------
# subcommands
# ------------------------------------------------------------------------------------------
def cmd_static(args):
    from ancf_beam.analyses import run_static

    return run_static(_case(args))


def cmd_modal(args):
    from ancf_beam.analyses import run_modal

    if args.modes is not None and args.modes < 1:
        raise UsageError(f"--modes must be >= 1, got {args.modes}")
    return run_modal(_case(args), n_modes=args.modes, about=args.about)


def cmd_stepped(args):
    from ancf_beam.analyses import run_stepped

    if args.segments is not None and args.segments < 1:
        raise UsageError(f"--segments must be >= 1, got {args.segments}")
    if args.modes is not None and args.modes < 1:
        raise UsageError(f"--modes must be >= 1, got {args.modes}")
    return run_stepped(_case(args), segments=args.segments, n_modes=args.modes)


def _float_pair(text: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError as exc:
        raise UsageError(f"--damping expects A,B (two numbers), got {text!r}") from exc
    if a < 0 or b < 0:
        raise UsageError(f"--damping coefficients must be >= 0, got {text!r}")
    return a, b


def cmd_simulate(args):
    from ancf_beam.analyses import run_simulate

    implicit_choices = ("bdf1", "newmark", "generalized-alpha")
    case = _case(args)
    integrator = args.integrator or case.dynamics.integrator
    implicit = integrator in implicit_choices
    if args.dt is not None and args.dt_safety is not None:
        raise UsageError("give either --dt or --dt-safety, not both")
    if args.dt is not None and not args.dt > 0:
        raise UsageError(f"--dt must be > 0, got {args.dt}")
    if args.dt_safety is not None:
        if implicit and not args.dt_safety > 0:
            raise UsageError(f"--dt-safety must be > 0, got {args.dt_safety}")
        if not implicit and not 0 < args.dt_safety <= 1:
            raise UsageError(f"--dt-safety must be in (0, 1], got {args.dt_safety}")
    if args.t_end is not None and not args.t_end > 0:
        raise UsageError(f"--t-end must be > 0, got {args.t_end}")
    only = {
        "--beta": (args.beta, ("newmark",)),
        "--gamma": (args.gamma, ("newmark",)),
        "--rho-inf": (args.rho_inf, ("generalized-alpha",)),
        "--max-iter": (args.max_iter, implicit_choices),
        "--tol": (args.tol, implicit_choices),
        "--max-halvings": (args.max_halvings, implicit_choices),
        "--newton": (args.newton, implicit_choices),
    }
    for flag, (value, allowed) in only.items():
        if value is not None and integrator not in allowed:
            raise UsageError(
                f"{flag} applies to --integrator {' / '.join(allowed)}, not {integrator}"
            )
    if args.rho_inf is not None and not 0 <= args.rho_inf <= 1:
        raise UsageError(f"--rho-inf must be in [0, 1], got {args.rho_inf}")
    if args.beta is not None and not args.beta > 0:
        raise UsageError(f"--beta must be > 0, got {args.beta}")
    if args.gamma is not None and not args.gamma >= 0:
        raise UsageError(f"--gamma must be >= 0, got {args.gamma}")
    if args.max_iter is not None and args.max_iter < 1:
        raise UsageError(f"--max-iter must be >= 1, got {args.max_iter}")
    if args.max_halvings is not None and args.max_halvings < 0:
        raise UsageError(f"--max-halvings must be >= 0, got {args.max_halvings}")
    if args.tol is not None and not 0 < args.tol < 1:
        raise UsageError(f"--tol must be in (0, 1), got {args.tol}")
    if args.force and implicit:
        log.info("--force has no effect for implicit integrators (any dt is accepted)")
    damping = _float_pair(args.damping) if args.damping is not None else None
    try:
        return run_simulate(
            case,
            dt=args.dt,
            dt_safety=args.dt_safety,
            dt_critical=args.dt_critical,
            t_end=args.t_end,
            damping=damping,
            force=args.force,
            progress=not args.quiet,
            integrator=integrator,
            beta=args.beta,
            gamma=args.gamma,
            rho_inf=args.rho_inf,
            max_iter=args.max_iter,
            tol=args.tol,
            max_halvings=args.max_halvings,
            newton=args.newton,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def cmd_critical_dt(args):
    from ancf_beam.analyses import run_critical_dt

    return run_critical_dt(_case(args), measure=args.measure)


def cmd_identify(args):
    from ancf_beam.identify import run_identify

    if args.sigma_rel is not None and not args.sigma_rel > 0:
        raise UsageError(f"--sigma-rel must be > 0, got {args.sigma_rel}")
    if args.modes is not None and args.modes < 1:
        raise UsageError(f"--modes must be >= 1, got {args.modes}")
    case = _case(args)
    try:
        return run_identify(case, args.omega, args.sigma_rel, args.fit_E0, args.modes)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def cmd_mechanism(args):
    from ancf_beam.config import mechanism_from_file
    from ancf_beam.mbs.analysis import run_mechanism
    from ancf_beam.results import RedundantConstraintError

    if args.t_end is not None and not args.t_end > 0:
        raise UsageError(f"--t-end must be > 0, got {args.t_end}")
    spec = mechanism_from_file(args.config, args.case, args.set)
    try:
        return run_mechanism(spec, t_end=args.t_end, integrator=args.integrator,
                             progress=not args.quiet)  # fmt: skip
    except RedundantConstraintError as exc:  # a modelling error in the input, not a solver one
        raise UsageError(str(exc)) from exc


COMMANDS: dict[str, tuple[Callable, str]] = {
    "static": (cmd_static, "static equilibrium under gravity (Newton, load stepping)"),
    "modal": (cmd_modal, "natural frequencies and mode shapes"),
    "stepped": (cmd_stepped, "stepped-beam transfer-matrix validation (linear, N segments)"),
    "simulate": (cmd_simulate, "dynamics from rest under gravity (explicit or implicit)"),
    "critical-dt": (cmd_critical_dt, "critical explicit time step: eigenvalue, bounds, measured"),
    "identify": (cmd_identify, "estimate the defect (lam, n) from measured natural frequencies"),
    "mechanism": (cmd_mechanism, "planar mechanism run (pendulum, slider-crank) from mechanisms:"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ancf-beam",
        description="Gradient-defect ANCF cantilever under gravity: statics, modes, dynamics.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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

    text = COMMANDS["simulate"][1]
    p = sub.add_parser(
        "simulate",
        help=text,
        description="dynamics from rest under gravity: explicit central differences (default) "
        "or an implicit integrator (bdf1, newmark, generalized-alpha; Newton with the analytic "
        "tangent, any dt)",
    )
    p.add_argument(
        "--integrator",
        choices=("central-difference", "bdf1", "newmark", "generalized-alpha"),
        help="time integrator (default: dynamics.integrator, i.e. central-difference)",
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
    g = p.add_argument_group("implicit integrators (bdf1, newmark, generalized-alpha)")
    g.add_argument("--beta", type=float, metavar="B", help="Newmark beta (default 0.25)")
    g.add_argument("--gamma", type=float, metavar="G", help="Newmark gamma (default 0.5)")
    g.add_argument(
        "--rho-inf",
        type=float,
        metavar="R",
        help="generalized-alpha spectral radius at infinity, 0..1 (default 0.8)",
    )
    g.add_argument("--max-iter", type=int, metavar="N", help="Newton iterations per step (20)")
    g.add_argument("--tol", type=float, metavar="TOL", help="relative Newton residual (1e-8)")
    g.add_argument(
        "--max-halvings", type=int, metavar="N", help="step halvings on non-convergence (4)"
    )
    g.add_argument(
        "--newton",
        choices=("full", "modified"),
        help="modified (default): reuse the factorisation while the residual contracts; "
        "full: new tangent every iteration",
    )
    _common(p)

    text = COMMANDS["critical-dt"][1]
    p = sub.add_parser("critical-dt", help=text, description=text)
    p.add_argument(
        "--measure", action="store_true", help="also measure the limit by bisection on dt"
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

    text = COMMANDS["mechanism"][1]
    p = sub.add_parser(
        "mechanism",
        help=text,
        description="integrate a mechanism of the config's mechanisms: section (a pendulum "
        "beam pinned at node 0, or a slider-crank with a rigid or ANCF connecting rod)",
    )
    from ancf_beam.config import MECHANISM_INTEGRATORS

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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.DEBUG if args.verbose else (logging.WARNING if args.quiet else logging.INFO)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    func = COMMANDS[args.command][0]
    try:
        if args.out is not None and not str(args.out).endswith(".nc"):
            raise UsageError(f"--out must name a .nc file, got {args.out!r}")
        summary, ds = func(args)
    except (ConfigError, UsageError) as exc:
        print(f"ancf-beam {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # solver failures: clear message, non-zero exit, nothing written
        if args.verbose:
            raise
        print(f"ancf-beam {args.command}: failed: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    if args.out:
        from ancf_beam.io import write_netcdf

        write_netcdf(ds, args.out)
        summary["out"] = str(args.out)
    if args.json:
        from ancf_beam.io import json_ready

        sys.stdout.write(json.dumps(json_ready(summary)) + "\n")
    else:
        _print_human(summary)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
