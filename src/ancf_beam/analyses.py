"""Study-level entry points: case -> computation -> (summary dict, xarray Dataset).

These are what the CLI and the workflow scripts call; each returns a JSON-ready summary and a
Dataset with provenance attributes (see :mod:`ancf_beam.io`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.beam.defects import SectionProfile
from ancf_beam.beam.model import BeamModel
from ancf_beam.config import CaseSpec
from ancf_beam.io import provenance_attrs
from ancf_beam.solvers.modal import modal_analysis
from ancf_beam.solvers.static import solve_static


def _shape_vars(model: BeamModel, q: np.ndarray, prefix: str) -> dict[str, Any]:
    s = model.sample(q)
    return {
        f"{prefix}x": ("s", s["x"], {"units": "m", "long_name": "x position"}),
        f"{prefix}y": ("s", s["y"], {"units": "m", "long_name": "y position"}),
        f"{prefix}curvature": (
            "s",
            s["kappa"],
            {"units": "rad/m", "long_name": "curvature (r' x r'')/|r'|^2"},
        ),
        f"{prefix}axial_strain": ("s", s["eps"], {"units": "1", "long_name": "|r'| - 1"}),
    }, s["X"]


def run_static(case: CaseSpec) -> tuple[dict[str, Any], xr.Dataset]:
    """Static equilibrium under gravity."""
    model = BeamModel(case)
    t0 = time.perf_counter()
    res = solve_static(model)
    wall = time.perf_counter() - t0
    summary = {
        "case": case.name,
        "tip_x": res.tip_x,
        "tip_y": res.tip_y,
        "tip_angle_deg": res.tip_angle_deg,
        "newton_iterations": res.newton_iterations,
        "load_steps": res.load_steps,
        "residual_norm": res.residual_norm,
        "wall_s": wall,
    }
    shape, X = _shape_vars(model, res.q, "")
    ds = xr.Dataset(
        {
            **shape,
            "tip_x": ((), res.tip_x, {"units": "m"}),
            "tip_y": ((), res.tip_y, {"units": "m", "long_name": "tip deflection (down < 0)"}),
            "tip_angle_deg": ((), res.tip_angle_deg, {"units": "degree"}),
            "q": ("dof", res.q, {"units": "m or 1", "long_name": "full nodal coordinates"}),
        },
        coords={"X": ("s", X, {"units": "m", "long_name": "reference position"})},
    )
    if res.damage_history is not None:
        ds["damage"] = (
            ("load_step", "element", "gauss_point"),
            res.damage_history,
            {"units": "1", "long_name": "damage d after each load step (E_eff = E (1 - d))"},
        )
        ds = ds.assign_coords(load_factor=("load_step", res.load_factors, {"units": "1"}))
    ds.attrs.update(
        provenance_attrs(
            case,
            study="static",
            solver="newton-load-stepping",
            newton_iterations=res.newton_iterations,
            load_steps=res.load_steps,
            residual_norm=res.residual_norm,
            residual_tol=res.residual_tol,
            wall_s=wall,
        )
    )
    return summary, ds


def run_modal(case: CaseSpec, n_modes: int | None = None, about: str | None = None):
    """Natural frequencies and mode shapes."""
    model = BeamModel(case)
    t0 = time.perf_counter()
    res = modal_analysis(model, n_modes=n_modes, about=about)
    wall = time.perf_counter() - t0
    summary = {
        "case": case.name,
        "about": res.about,
        "omega": res.omega.tolist(),
        "frequency_hz": res.frequency_hz.tolist(),
        "wall_s": wall,
    }
    nm = res.omega.size
    full = np.zeros((nm, model.n_dof))
    full[:, 4:] = res.shapes
    ds = xr.Dataset(
        {
            "omega": ("mode", res.omega, {"units": "rad/s"}),
            "frequency_hz": ("mode", res.frequency_hz, {"units": "Hz"}),
            "axial_fraction": ("mode", res.axial_fraction, {"units": "1"}),
            "shape_x": (("mode", "node"), full[:, 0::4], {"units": "m/sqrt(kg)"}),
            "shape_y": (("mode", "node"), full[:, 1::4], {"units": "m/sqrt(kg)"}),
        },
        coords={
            "mode": np.arange(1, nm + 1),
            "x_node": ("node", model.x_nodes, {"units": "m"}),
        },
    )
    ds.attrs.update(provenance_attrs(case, study="modal", about=res.about, wall_s=wall))
    return summary, ds


def run_stepped(case: CaseSpec, segments: int | None = None, n_modes: int | None = None):
    """Stepped-beam transfer matrix (N uniform segments) and exact linear graded quadrature."""
    from ancf_beam.references import transfer

    segments = case.stepped.segments if segments is None else segments
    n_modes = case.modal.n_modes if n_modes is None else n_modes
    p = SectionProfile(case)
    L = case.beam.length
    t0 = time.perf_counter()
    st = transfer.stepped_static(L, p.EI, p.q, segments)
    om = np.asarray(transfer.stepped_frequencies(L, p.EI, p.rhoA, segments, n_modes))
    ex = transfer.exact_graded_static(L, p.EI, p.q)
    wall = time.perf_counter() - t0
    summary = {
        "case": case.name,
        "segments": segments,
        "tip_deflection": float(st["tip_deflection"]),
        "tip_slope": float(st["tip_slope"]),
        "omega": om.tolist(),
        "exact_tip_deflection": float(ex["tip_deflection"]),
        "exact_tip_slope": float(ex["tip_slope"]),
        "wall_s": wall,
    }
    ds = xr.Dataset(
        {
            "tip_deflection": ((), summary["tip_deflection"], {"units": "m"}),
            "tip_slope": ((), summary["tip_slope"], {"units": "rad"}),
            "exact_tip_deflection": ((), summary["exact_tip_deflection"], {"units": "m"}),
            "exact_tip_slope": ((), summary["exact_tip_slope"], {"units": "rad"}),
            "omega": ("mode", om, {"units": "rad/s"}),
        },
        coords={"mode": np.arange(1, om.size + 1)},
    )
    ds.attrs.update(provenance_attrs(case, study="stepped", segments=segments, wall_s=wall))
    return summary, ds


def run_critical_dt(case: CaseSpec, measure: bool = False):
    """Critical explicit time step: eigenvalue, element bound, fitted formula, measured limit."""
    from ancf_beam.solvers.critical import critical_dt

    model = BeamModel(case)
    t0 = time.perf_counter()
    c = critical_dt(model, measure=measure)
    wall = time.perf_counter() - t0
    summary = {
        "case": case.name,
        "n_elements": model.n_el,
        "element_length": model.le,
        "omega_max": c.omega_max,
        "dt_critical": c.dt_critical,
        "dt_element_bound": c.dt_element_bound,
        "dt_formula": c.dt_formula,
        "formula_C": c.formula_C,
        "dt_measured": c.dt_measured,
        "governing_mode": c.governing_mode,
        "dt_axial": c.dt_axial,
        "dt_bending": c.dt_bending,
        "wall_s": wall,
    }
    nan = float("nan")
    ds = xr.Dataset(
        {
            "omega_max": ((), c.omega_max, {"units": "rad/s"}),
            "dt_critical": ((), c.dt_critical, {"units": "s", "long_name": "2 / omega_max"}),
            "dt_element_bound": ((), c.dt_element_bound, {"units": "s"}),
            "dt_formula": ((), c.dt_formula, {"units": "s", "long_name": "l_e^2/C sqrt(rhoA/EI)"}),
            "formula_C": ((), c.formula_C, {"units": "1"}),
            "dt_measured": (
                (),
                c.dt_measured if c.dt_measured is not None else nan,
                {"units": "s", "long_name": "bisection stability limit (NaN: not measured)"},
            ),
            "dt_axial": ((), c.dt_axial, {"units": "s"}),
            "dt_bending": ((), c.dt_bending, {"units": "s"}),
            "axial_fraction": ((), c.axial_fraction, {"units": "1"}),
            "element_length": ((), model.le, {"units": "m"}),
        }
    )
    ds.attrs.update(
        provenance_attrs(
            case,
            study="critical_dt",
            governing_mode=c.governing_mode,
            measured=measure,
            wall_s=wall,
        )  # fmt: skip
    )
    return summary, ds


def run_simulate(
    case: CaseSpec,
    dt: float | None = None,
    dt_safety: float | None = None,
    dt_critical: float | None = None,
    t_end: float | None = None,
    damping: tuple[float, float] | None = None,
    force: bool = False,
    progress: bool = True,
    integrator: str | None = None,
    beta: float | None = None,
    gamma: float | None = None,
    rho_inf: float | None = None,
    max_iter: int | None = None,
    tol: float | None = None,
    max_halvings: int | None = None,
    newton: str | None = None,
):
    """Dynamic run from rest under gravity with the chosen ``integrator`` (default:
    ``dynamics.integrator``; the scheme parameters default to ``dynamics.newmark_beta``,
    ``dynamics.newmark_gamma`` and ``dynamics.rho_inf``).

    ``central-difference`` (explicit): ``dt`` defaults to ``dt_safety * dt_critical``
    (``dt_critical`` computed when not given); an explicit ``dt`` above ``dt_critical`` is
    refused unless ``force``.

    ``bdf1``, ``newmark`` (``beta``, ``gamma``), ``generalized-alpha`` (``rho_inf``) (implicit,
    :mod:`ancf_beam.solvers.implicit`; Newton settings ``max_iter``, ``tol``, ``max_halvings``,
    ``newton``): any ``dt`` is accepted; it defaults to ``dt_safety * dt_critical`` when
    ``dt_safety`` is given (any value > 0), else to ``dynamics.dt``, else to ``T1 / 100`` with
    ``T1 = 2 pi / omega_1``. The summary and Dataset carry the same fields as the explicit run plus
    the integrator parameters and Newton iteration statistics (total, mean, max per step).
    """
    from ancf_beam.solvers import implicit
    from ancf_beam.solvers.modal import omega_max

    dyn = case.dynamics
    integrator = dyn.integrator if integrator is None else integrator
    if integrator == "newmark":
        beta = dyn.newmark_beta if beta is None else beta
        gamma = dyn.newmark_gamma if gamma is None else gamma
    elif integrator == "generalized-alpha":
        rho_inf = dyn.rho_inf if rho_inf is None else rho_inf
    if integrator not in implicit.INTEGRATORS:
        raise ValueError(
            f"unknown integrator {integrator!r}; choose one of {', '.join(implicit.INTEGRATORS)}"
        )
    is_implicit = integrator != implicit.EXPLICIT
    newton_opts = {
        "max_iter": max_iter,
        "tol": tol,
        "max_halvings": max_halvings,
        "newton": newton,
    }
    if not is_implicit:
        given = {"beta": beta, "gamma": gamma, "rho_inf": rho_inf, **newton_opts}
        extra = sorted(k for k, v in given.items() if v is not None)
        if extra:
            raise ValueError(
                f"{', '.join(extra)} only apply to the implicit integrators "
                f"({', '.join(implicit.IMPLICIT_INTEGRATORS)}), not to {integrator}"
            )
    model = BeamModel(case)
    if dt_critical is None:
        dt_critical = 2.0 / omega_max(model)[0]
    t_end = dyn.t_end if t_end is None else t_end
    damping = (dyn.damping_alpha, dyn.damping_beta) if damping is None else damping
    stats: dict[str, Any] = {}
    if is_implicit:
        scheme = implicit.make_scheme(integrator, beta=beta, gamma=gamma, rho_inf=rho_inf)
        if dt_safety is not None and not dt_safety > 0:
            raise ValueError(f"dt_safety must be > 0, got {dt_safety}")
        if dt is None and dt_safety is not None:
            dt = dt_safety * dt_critical
        if dt is None:
            dt = dyn.dt
        if dt is None:
            dt = implicit.default_implicit_dt(model)
        kw = {k: v for k, v in newton_opts.items() if v is not None}
        res = implicit.simulate_implicit(
            model, t_end, dt, integrator, beta=beta, gamma=gamma, rho_inf=rho_inf,
            damping=damping, dt_critical=dt_critical, progress=progress, stats=stats, **kw,
        )  # fmt: skip
    else:
        from ancf_beam.solvers.explicit import simulate_explicit

        dt_safety = dyn.dt_safety if dt_safety is None else dt_safety
        if not 0 < dt_safety <= 1:
            raise ValueError(f"dt_safety must be in (0, 1], got {dt_safety}")
        if dt is None:
            dt = dyn.dt
        if dt is None:
            dt = dt_safety * dt_critical
        elif dt > dt_critical and not force:
            raise ValueError(
                f"dt = {dt:.4e} s exceeds the critical step {dt_critical:.4e} s "
                f"(dt/dt_cr = {dt / dt_critical:.3f}); the explicit run would be unstable. "
                "Use a smaller dt, or force it (--force) to observe the instability"
            )
        res = simulate_explicit(
            model, t_end=t_end, dt=dt, dt_critical=dt_critical, damping=damping, progress=progress
        )
    half = res.t >= 0.5 * res.t[-1]
    i_min = int(np.argmin(res.tip_y))
    summary = {
        "case": case.name,
        "integrator": res.integrator,
        "tip_y_min": float(res.tip_y[i_min]),
        "t_at_tip_y_min": float(res.t[i_min]),
        "tip_y_final": float(res.tip_y[-1]),
        "tip_y_mean": float(np.mean(res.tip_y[half])),
        "energy_drift_rel": res.energy_drift_rel,
        "steps": res.steps,
        "dt": dt,
        "dt_critical": dt_critical,
        "t_end": t_end,
        "wall_s": res.wall_s,
        "cpu_s": res.cpu_s,
    }
    extra_attrs: dict[str, Any] = {}
    if is_implicit:
        its = res.newton_iterations
        newton_stats = {
            "newton_iterations_total": int(its.sum()),
            "newton_iterations_mean": float(its.mean()) if its.size else 0.0,
            "newton_iterations_max": int(its.max()) if its.size else 0,
            "factorizations": int(stats["factorizations"]),
            "step_halvings": int(stats["halvings"]),
        }
        params = {k: v for k, v in scheme.describe().items() if k != "integrator"}
        summary.update(params)
        summary.update(newton_stats)
        extra_attrs.update(params)
        extra_attrs.update(newton_stats)
        extra_attrs.update(
            newton=stats["newton"],
            newton_predictor=stats["predictor"],
            newton_max_iter=max_iter if max_iter is not None else implicit.DEFAULT_MAX_ITER,
            newton_tol=tol if tol is not None else implicit.DEFAULT_TOL,
            newton_residual_floor=float(stats["residual_floor"]),
        )
    snap_x = res.q_snap[:, 0::4]
    snap_y = res.q_snap[:, 1::4]
    ds = xr.Dataset(
        {
            "tip_x": ("time", res.tip_x, {"units": "m"}),
            "tip_y": ("time", res.tip_y, {"units": "m", "long_name": "tip y (down < 0)"}),
            "kinetic": ("time", res.kinetic, {"units": "J"}),
            "strain": ("time", res.strain, {"units": "J", "long_name": "nonlinear strain energy"}),
            "gravity": ("time", res.gravity, {"units": "J", "long_name": "gravity potential"}),
            "damping_work": ("time", res.damping_work, {"units": "J"}),
            "total_energy": ("time", res.total, {"units": "J", "long_name": "T + U + V + W_d"}),
            "node_x": (("snapshot", "node"), snap_x, {"units": "m"}),
            "node_y": (("snapshot", "node"), snap_y, {"units": "m"}),
            "q_snapshot": (
                ("snapshot", "dof"),
                res.q_snap,
                {"units": "m or 1", "long_name": "full nodal coordinates [r_x, r_y, r_x', r_y']"},
            ),
        },
        coords={
            "time": ("time", res.t, {"units": "s"}),
            "t_snapshot": ("snapshot", res.t_snap, {"units": "s"}),
            "x_node": ("node", model.x_nodes, {"units": "m"}),
        },
    )
    if is_implicit:
        ds["newton_iterations"] = (
            "step",
            res.newton_iterations,
            {"units": "1", "long_name": "Newton iterations (linear solves) per time step"},
        )
    if res.damage_snap is not None:
        ds["damage"] = (
            ("snapshot", "element", "gauss_point"),
            res.damage_snap,
            {"units": "1", "long_name": "damage d at the snapshots (E_eff = E (1 - d))"},
        )
    ds.attrs.update(
        provenance_attrs(
            case,
            study="simulate",
            integrator=res.integrator,
            dt=dt,
            dt_critical=dt_critical,
            dt_safety=dt / dt_critical,
            t_end=t_end,
            steps=res.steps,
            damping_alpha=damping[0],
            damping_beta=damping[1],
            energy_drift_rel=res.energy_drift_rel,
            tip_y_min=summary["tip_y_min"],
            t_at_tip_y_min=summary["t_at_tip_y_min"],
            tip_y_mean=summary["tip_y_mean"],
            wall_s=res.wall_s,
            **extra_attrs,
        )
    )
    return summary, ds
