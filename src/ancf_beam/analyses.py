"""Study-level entry points: case -> computation -> (summary dict, xarray Dataset).

These are what the CLI and the workflow scripts call; each returns a JSON-ready summary and a
Dataset with provenance attributes (see :mod:`ancf_beam.io`). A result that holds NaN or an
infinity raises :class:`~ancf_beam.results.NonFiniteResultError` naming the quantity
(:func:`ancf_beam.io.check_finite`) instead of being returned for writing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ancf_beam.beam.defects import SectionProfile
from ancf_beam.beam.model import BeamModel
from ancf_beam.config import MAX_SEGMENTS
from ancf_beam.errors import ConfigError
from ancf_beam.io import check_finite, provenance_attrs
from ancf_beam.kernel_cache import install_compile_clock, run_clock
from ancf_beam.specs import CaseSpec

if TYPE_CHECKING:  # imported where used: start-up time of the commands
    import xarray as xr

    from ancf_beam.solvers.settings import DynamicsSettings
from ancf_beam.resources import check_stepped
from ancf_beam.results import DynamicsResult
from ancf_beam.solvers.static import check_strain, solve_static

__all__ = [
    "run_critical_dt",
    "run_modal",
    "run_simulate",
    "run_simulate_batch",
    "run_static",
    "run_stepped",
    "simulate_batch_key",
]

# Every run that loads numba installs the compile clock (kernel_cache) before its first
# kernel; a small static solve (plain numpy, solvers.static) never loads numba.


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


def run_static(case: CaseSpec, dataset: bool = True) -> tuple[dict[str, Any], xr.Dataset | None]:
    """Static equilibrium under gravity: a stable equilibrium (:func:`solve_static` checks)
    whose axial strain is within the model's validity (:func:`check_strain`), else an error
    saying why. ``dataset=False`` skips the Dataset (None; a command that prints only the
    summary then starts without importing xarray)."""
    model = BeamModel(case)
    t0 = run_clock()  # the compiled path installs the compile clock before its first kernel
    res = solve_static(model)
    check_strain(model, res.q)
    wall = run_clock() - t0
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
    if not dataset:
        check_finite(summary)
        return summary, None
    import xarray as xr

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
    check_finite(summary, ds)
    return summary, ds


def run_modal(case: CaseSpec, n_modes: int | None = None, about: str | None = None):
    """Natural frequencies and mode shapes."""
    install_compile_clock()
    import xarray as xr

    from ancf_beam.solvers.modal import modal_analysis

    model = BeamModel(case)
    t0 = run_clock()
    res = modal_analysis(model, n_modes=n_modes, about=about)
    wall = run_clock() - t0
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
    check_finite(summary, ds)
    return summary, ds


def run_stepped(case: CaseSpec, segments: int | None = None, n_modes: int | None = None):
    """Stepped-beam transfer matrix (N uniform segments) and exact linear graded quadrature."""
    install_compile_clock()
    import xarray as xr

    from ancf_beam.references import transfer

    segments = case.stepped.segments if segments is None else segments
    n_modes = case.modal.n_modes if n_modes is None else n_modes
    if not 1 <= segments <= MAX_SEGMENTS:  # --segments as the key (it had no upper bound)
        raise ConfigError(
            f"stepped.segments (--segments) = {segments} is invalid: expected an "
            f"integer in [1, {MAX_SEGMENTS}]"
        )
    check_stepped(segments, n_modes)  # time and memory before anything is allocated
    p = SectionProfile(case)
    L = case.beam.length
    t0 = run_clock()
    st = transfer.stepped_static(L, p.EI, p.q, segments)
    om = np.asarray(transfer.stepped_frequencies(L, p.EI, p.rhoA, segments, n_modes))
    ex = transfer.exact_graded_static(L, p.EI, p.q)
    wall = run_clock() - t0
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
    check_finite(summary, ds)
    return summary, ds


def run_critical_dt(case: CaseSpec, measure: bool = False):
    """Critical explicit time step: eigenvalue, element bound, fitted formula, measured limit."""
    install_compile_clock()
    import xarray as xr

    from ancf_beam.solvers.critical import critical_dt

    model = BeamModel(case)
    t0 = run_clock()
    c = critical_dt(model, measure=measure)
    wall = run_clock() - t0
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
        "omega_max_variation": c.omega_max_variation,
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
            "omega_max_variation": (
                (),
                c.omega_max_variation if c.omega_max_variation is not None else nan,
                {
                    "units": "1",
                    "long_name": "max |omega_max(q(t)) / omega_max - 1| along the "
                    "run at dt_measured (NaN: not measured)",
                },
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
        )
    )
    check_finite(summary, ds, optional=("dt_measured", "omega_max_variation"))
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
    """Dynamic run from rest under gravity: :func:`ancf_beam.solvers.simulate` with
    :meth:`DynamicsSettings.from_case` of ``case`` and these overrides (None: the case's
    ``dynamics`` section; the policy, e.g. how ``dt`` is chosen and which options apply to which
    integrator, is documented in :mod:`ancf_beam.solvers.settings`). ``dt_critical`` (s) is
    computed (``2 / omega_max``) when not given.

    The summary and Dataset carry the tip extremes, mean and energy drift, ``dt``,
    ``dt_critical`` and the wall time; for the implicit integrators also the scheme parameters
    and the Newton iteration statistics (total, mean, max per step).
    """
    install_compile_clock()
    from ancf_beam.solvers.settings import DynamicsSettings, critical_step

    settings = DynamicsSettings.from_case(
        case,
        integrator=integrator,
        t_end=t_end,
        dt=dt,
        dt_safety=dt_safety,
        damping=damping,
        force=force,
        beta=beta,
        gamma=gamma,
        rho_inf=rho_inf,
        max_iter=max_iter,
        tol=tol,
        max_halvings=max_halvings,
        newton=newton,
    )
    from ancf_beam.solvers.dynamics import simulate

    model = BeamModel(case)
    if dt_critical is None:
        dt_critical = critical_step(model)
    res = simulate(model, settings, dt_critical=dt_critical, progress=progress)
    summary, solver_attrs = _simulate_summary(case, settings, res, dt_critical)
    ds = _simulate_dataset(model, settings, res, dt_critical, summary, solver_attrs)
    check_finite(summary, ds)
    return summary, ds


def simulate_batch_key(case: CaseSpec) -> tuple | None:
    """What cases must share to be run together by :func:`run_simulate_batch` (the mesh size,
    the beam length and the Gauss rules); None for a case the batch cannot take (an implicit
    integrator, damage or the linear strain measures)."""
    from ancf_beam.solvers.settings import DynamicsSettings

    settings = DynamicsSettings.from_case(case)
    m = case.mesh
    if not settings.is_explicit or case.damage.enabled or m.strain == "linear":
        return None
    return (m.n_elements, case.beam.length, m.n_gauss_axial, m.n_gauss_bending)


def run_simulate_batch(cases, dt_critical, t_end=None) -> list[tuple[dict, xr.Dataset]]:
    """:func:`run_simulate` of several cases of one :func:`simulate_batch_key` (the case's
    ``dynamics`` section, ``dt_critical`` and ``t_end`` per case, None: the case's own) stepped
    together (:func:`ancf_beam.solvers.explicit_batch.run_explicit_batch`): each (summary,
    Dataset) equals the case's run alone up to the summation order's round-off
    (``tests/test_batch_soa.py`` states the bound); ``wall_s``/``cpu_s``: the batch's time
    loop divided by the number of cases."""
    install_compile_clock()
    from ancf_beam.resources import check_dynamics
    from ancf_beam.solvers.explicit_batch import run_explicit_batch
    from ancf_beam.solvers.settings import DynamicsSettings
    from ancf_beam.solvers.timeloop import step_plan

    cases = list(cases)
    keys = {simulate_batch_key(c) for c in cases}
    if None in keys or len(keys) > 1:
        raise ValueError(f"cases {[c.name for c in cases]} cannot be run together: {keys}")
    t_end = [None] * len(cases) if t_end is None else list(t_end)
    settings = [DynamicsSettings.from_case(c, t_end=t) for c, t in zip(cases, t_end, strict=True)]
    models = [BeamModel(c) for c in cases]
    steps = [s.time_step(m, d) for s, m, d in zip(settings, models, dt_critical, strict=True)]
    for s, m, (dt, _) in zip(settings, models, steps, strict=True):
        plan = step_plan(s.t_end, dt, s.sample_dt, s.snapshot_dt)
        check_dynamics(m, s, plan, dt, implicit=False)
    results = run_explicit_batch(
        models,
        [s.t_end for s in settings],
        [dt for dt, _ in steps],
        damping=[s.damping for s in settings],
        sample_dt=[s.sample_dt for s in settings],
        snapshot_dt=[s.snapshot_dt for s in settings],
        energy_growth_limit=[s.energy_growth_limit for s in settings],
        dt_critical=[d for _, d in steps],
    )
    out = []
    for c, s, m, (_, d), res in zip(cases, settings, models, steps, results, strict=True):
        summary, solver_attrs = _simulate_summary(c, s, res, d)
        ds = _simulate_dataset(m, s, res, d, summary, solver_attrs)
        check_finite(summary, ds)
        out.append((summary, ds))
    return out


def _available(x: float) -> float | None:
    """A value that may be not available (NaN) as JSON-ready ``None``."""
    return None if math.isnan(x) else x


def _simulate_summary(
    case: CaseSpec, settings: DynamicsSettings, res: DynamicsResult, dt_critical: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """JSON summary of a run, and the solver attributes of the implicit integrators."""
    half = res.t >= 0.5 * res.t[-1]
    i_min = int(np.argmin(res.tip_y))
    summary = {
        "case": case.name,
        "integrator": res.integrator,
        "tip_y_min": float(res.tip_y[i_min]),
        "t_at_tip_y_min": float(res.t[i_min]),
        "tip_y_final": float(res.tip_y[-1]),
        "tip_y_mean": float(np.mean(res.tip_y[half])),
        "energy_drift_rel": _available(res.energy_drift_rel),
        "steps": res.steps,
        "dt": res.dt,
        "dt_critical": dt_critical,
        "t_end": settings.t_end,
        "wall_s": res.wall_s,
        "cpu_s": res.cpu_s,
    }
    if settings.is_explicit:
        return summary, {}
    its = res.newton_iterations
    stats = res.newton_stats
    newton_stats = {
        "newton_iterations_total": int(its.sum()),
        "newton_iterations_mean": float(its.mean()) if its.size else 0.0,
        "newton_iterations_max": int(its.max()) if its.size else 0,
        "factorizations": stats.factorizations,
        "step_halvings": stats.halvings,
    }
    params = settings.scheme_parameters()
    summary.update(params)
    summary.update(newton_stats)
    solver_attrs = {
        **params,
        **newton_stats,
        "newton": settings.newton,
        "newton_predictor": settings.predictor,
        "newton_max_iter": settings.max_iter,
        "newton_tol": settings.tol,
        "newton_residual_floor": float(stats.residual_floor),
    }
    return summary, solver_attrs


def _simulate_dataset(model, settings, res, dt_critical, summary, solver_attrs) -> xr.Dataset:
    """The run as a Dataset: tip history, energies, snapshots, Newton iterations, damage."""
    import xarray as xr

    ds = xr.Dataset(
        {
            "tip_x": ("time", res.tip_x, {"units": "m"}),
            "tip_y": ("time", res.tip_y, {"units": "m", "long_name": "tip y (down < 0)"}),
            "kinetic": ("time", res.kinetic, {"units": "J"}),
            "strain": ("time", res.strain, {"units": "J", "long_name": "nonlinear strain energy"}),
            "gravity": ("time", res.gravity, {"units": "J", "long_name": "gravity potential"}),
            "damping_work": ("time", res.damping_work, {"units": "J"}),
            "total_energy": ("time", res.total, {"units": "J", "long_name": "T + U + V + W_d"}),
            "node_x": (("snapshot", "node"), res.q_snap[:, 0::4], {"units": "m"}),
            "node_y": (("snapshot", "node"), res.q_snap[:, 1::4], {"units": "m"}),
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
    if res.newton_iterations is not None:
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
            model.case,
            study="simulate",
            integrator=res.integrator,
            dt=res.dt,
            dt_critical=dt_critical,
            dt_safety=res.dt / dt_critical,
            t_end=settings.t_end,
            steps=res.steps,
            damping_alpha=settings.damping[0],
            damping_beta=settings.damping[1],
            energy_drift_rel=res.energy_drift_rel,
            tip_y_min=summary["tip_y_min"],
            t_at_tip_y_min=summary["t_at_tip_y_min"],
            tip_y_mean=summary["tip_y_mean"],
            wall_s=res.wall_s,
            **solver_attrs,
        )
    )
    return ds
