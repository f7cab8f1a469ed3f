"""Cost-scaling study: wall time to simulate a fixed interval against the mesh, explicit vs
implicit, and their crossover.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ancf_beam.beam.model import BeamModel
from ancf_beam.io import provenance_attrs
from ancf_beam.kernel_cache import run_clock
from ancf_beam.results import DynamicsResult
from ancf_beam.solvers import DynamicsSettings, modal_analysis, omega_max, simulate
from ancf_beam.solvers.settings import EXPLICIT_INTEGRATOR
from ancf_beam.specs import CaseSpec
from ancf_beam.studies.convergence import fit_slope
from ancf_beam.studies.integrators import TWO_PI, pad_rows, tip_error

__all__ = [
    "Calibration",
    "ExplicitCost",
    "ImplicitCost",
    "MeshCost",
    "crossover",
    "run_scaling_study",
]

IMPLICIT = "generalized-alpha"  # the implicit integrator of the study


def crossover(
    n: Sequence[float],
    cost_a: Sequence[float],
    cost_b: Sequence[float],
    fit_min: float | None = None,
) -> tuple[float, str]:
    """Mesh ``n*`` where two cost curves cross (log-log interpolation), and how it was found.

    Returns ``(n_star, kind)``: ``kind`` is ``'interpolated'`` when ``cost_a - cost_b`` changes
    sign between two measured meshes, ``'extrapolated'`` when it does not and ``n*`` comes from
    the two least-squares power laws ``c ~ n^p`` (fitted on ``n >= fit_min``), or ``'none'``
    when the fitted laws are parallel.
    """
    n = np.asarray(n, float)
    a = np.log(np.asarray(cost_a, float))
    b = np.log(np.asarray(cost_b, float))
    d = a - b
    for i in range(n.size - 1):
        if d[i] == 0:
            return float(n[i]), "interpolated"
        if d[i] * d[i + 1] < 0:
            x0, x1 = math.log(n[i]), math.log(n[i + 1])
            x = x0 + (x1 - x0) * d[i] / (d[i] - d[i + 1])
            return float(math.exp(x)), "interpolated"
    sel = n >= (fit_min if fit_min is not None else n.min())
    pa = np.polyfit(np.log(n[sel]), a[sel], 1)
    pb = np.polyfit(np.log(n[sel]), b[sel], 1)
    if abs(pa[0] - pb[0]) < 1e-9:
        return math.nan, "none"
    return float(math.exp((pb[1] - pa[1]) / (pa[0] - pb[0]))), "extrapolated"


@dataclass
class ExplicitCost:
    """Explicit cost of one mesh: a timed window of K steps projected to ``t_end``, and the full
    run when the mesh is small enough (CPU times, s)."""

    steps_total: int
    window_steps: int
    per_step_s: float
    projected_s: float
    measured_s: float  # NaN: not run to the end
    t: np.ndarray | None  # the full run's tip history (None: not run)
    y: np.ndarray | None

    @property
    def cost_s(self) -> float:
        return self.measured_s if math.isfinite(self.measured_s) else self.projected_s

    @property
    def source(self) -> str:
        if math.isfinite(self.measured_s):
            return "measured full run"
        return f"projected from a measured window of {self.window_steps} steps"


@dataclass
class MeshCost:
    model: BeamModel
    dt_cr: float  # s, 2 / omega_max
    omega_1: float  # rad/s
    explicit: ExplicitCost


@dataclass
class Calibration:
    """Generalized-alpha step ``T1 / chosen`` meeting the tip-error target on one mesh."""

    candidates: list[float]
    chosen: float
    tip_error: list[float]  # per candidate, NaN when not needed
    cpu_s: list[float]
    histories: list[tuple[np.ndarray, np.ndarray]]  # (t, tip_y) of the candidates tried


@dataclass
class ImplicitCost:
    dt: float
    steps: int
    cpu_s: float
    newton_mean: float
    err_explicit: float  # tip error vs the full explicit run (NaN: none)
    err_fine: float  # tip error estimated against dt / fine_factor


def _explicit_run(
    model: BeamModel, t_end: float, dt: float, dt_cr: float, progress: bool
) -> DynamicsResult:
    # undamped, like the cost runs of the first version of the study
    settings = DynamicsSettings.from_case(
        model.case, integrator=EXPLICIT_INTEGRATOR, t_end=t_end, dt=dt, damping=(0.0, 0.0)
    )
    return simulate(model, settings, dt_critical=dt_cr, progress=progress)


def _implicit_run(
    model: BeamModel, t_end: float, dt: float, dt_cr: float, progress: bool
) -> DynamicsResult:
    """Generalized-alpha (the case's ``dynamics.rho_inf``) on a fresh copy of the model."""
    settings = DynamicsSettings.from_case(model.case, integrator=IMPLICIT, t_end=t_end, dt=dt)
    return simulate(BeamModel(model.case), settings, dt_critical=dt_cr, progress=progress)


def _explicit_cost(
    model, dt, dt_cr, t_end, window_wall_s, min_window_steps, run_full, progress
) -> ExplicitCost:
    n_total = int(math.ceil(t_end / dt - 1e-9))
    # calibration window -> K steps for about window_wall_s of run time. Costs are process CPU
    # times: with several jobs sharing the cores, wall times of the window and of the full run
    # would be measured under different loads.
    k0 = min(min_window_steps, n_total)
    cal = _explicit_run(model, k0 * dt, dt, dt_cr, False)
    per = cal.cpu_s / max(cal.steps, 1)
    k = int(min(max(min_window_steps, window_wall_s / max(per, 1e-12)), n_total))
    win = _explicit_run(model, k * dt, dt, dt_cr, False)
    per_step = win.cpu_s / max(win.steps, 1)
    cost = ExplicitCost(n_total, win.steps, per_step, per_step * n_total, math.nan, None, None)
    if run_full:
        full = _explicit_run(model, t_end, dt, dt_cr, progress)
        cost.measured_s, cost.t, cost.y = full.cpu_s, full.t, full.tip_y
    return cost


def _check_meshes(case, meshes, full_max_elements, calibration_mesh, fit_min_elements):
    """Sorted meshes, the fully run ones, the calibration mesh and the smallest mesh of the
    exponent fits (defaults in :func:`run_scaling_study`)."""
    meshes = sorted({int(m) for m in meshes})
    if len(meshes) < 2:
        raise ValueError("the scaling study needs at least two meshes")
    full_meshes = [m for m in meshes if m <= full_max_elements]
    if not full_meshes:
        raise ValueError(
            f"no mesh <= full_max_elements = {full_max_elements}: the accuracy calibration "
            "needs one explicit run to the end"
        )
    if calibration_mesh is None:
        ne_case = case.mesh.n_elements
        calibration_mesh = ne_case if ne_case in full_meshes else full_meshes[-1]
    if calibration_mesh not in full_meshes:
        raise ValueError(f"calibration_mesh {calibration_mesh} must be one of {full_meshes}")
    if fit_min_elements is None:
        fit_min_elements = meshes[-3] if len(meshes) >= 3 else meshes[0]
    return meshes, full_meshes, calibration_mesh, fit_min_elements


def _warm_up(case: CaseSpec, ne: int) -> None:
    """Load the compiled kernels (numba cache) outside every timing."""
    warm = BeamModel(case.with_overrides({"mesh.n_elements": ne}))
    w_max = omega_max(warm)[0]
    explicit = DynamicsSettings.from_case(
        warm.case, integrator=EXPLICIT_INTEGRATOR, dt=0.5 / w_max, t_end=50 / w_max
    )
    simulate(warm, explicit, dt_critical=2.0 / w_max, progress=False)
    implicit = DynamicsSettings.from_case(warm.case, integrator=IMPLICIT, dt=1e-3, t_end=5e-3)
    simulate(BeamModel(warm.case), implicit, progress=False)


def _mesh_costs(
    case, meshes, full_meshes, t_end, explicit_safety, window_wall_s, min_window_steps, progress
) -> dict[int, MeshCost]:
    per_mesh = {}
    for ne in meshes:
        model = BeamModel(case.with_overrides({"mesh.n_elements": ne}))
        w_max = omega_max(model)[0]
        w1 = float(modal_analysis(model, n_modes=1, about="reference").omega[0])
        dt_cr = 2.0 / w_max
        ex = _explicit_cost(
            model,
            explicit_safety * dt_cr,
            dt_cr,
            t_end,
            window_wall_s,
            min_window_steps,
            ne in full_meshes,
            progress,
        )
        per_mesh[ne] = MeshCost(model, dt_cr, w1, ex)
    return per_mesh


def _calibrate(cal: MeshCost, candidates, t_end, tip_error_target) -> Calibration:
    """Try ``dt = T1 / N`` from the coarsest candidate until the tip error against the full
    explicit run of ``cal`` meets the target (none: the finest, and the checks say so)."""
    cand = sorted({float(c) for c in candidates})
    t_ref, y_ref = cal.explicit.t, cal.explicit.y
    err, cpu, hist = [], [], []
    chosen = math.nan
    for n_pp in cand:
        res = _implicit_run(cal.model, t_end, TWO_PI / cal.omega_1 / n_pp, cal.dt_cr, False)
        e = tip_error(res.t, res.tip_y, t_ref, y_ref)
        err.append(e)
        cpu.append(float(res.cpu_s))
        hist.append((res.t, res.tip_y))
        if e <= tip_error_target:
            chosen = n_pp
            break
    if not math.isfinite(chosen):
        chosen = cand[-1]
    pad = [math.nan] * (len(cand) - len(err))  # the candidates that were not needed
    return Calibration(cand, chosen, err + pad, cpu + pad, hist)


def _implicit_costs(per_mesh, meshes, chosen, t_end, fine_factor, progress):
    rows = []
    for ne in meshes:
        pm = per_mesh[ne]
        dt = TWO_PI / pm.omega_1 / chosen
        res = _implicit_run(pm.model, t_end, dt, pm.dt_cr, progress)
        fine = _implicit_run(pm.model, t_end, dt / fine_factor, pm.dt_cr, progress)
        e_fine = tip_error(res.t, res.tip_y, fine.t, fine.tip_y)
        e_fine /= 1.0 - fine_factor**-2.0
        ex = pm.explicit
        e_expl = tip_error(res.t, res.tip_y, ex.t, ex.y) if ex.t is not None else math.nan
        its = res.newton_iterations
        newton = float(its.mean()) if its.size else 0.0
        rows.append(ImplicitCost(dt, int(res.steps), float(res.cpu_s), newton, e_expl, e_fine))
    return rows


def _scaling_dataset(
    meshes,
    per_mesh,
    implicit,
    cal: Calibration,
    reference: ExplicitCost,
    explicit_safety,
    fine_factor,
) -> xr.Dataset:
    return xr.Dataset(
        {
            **_explicit_variables([per_mesh[m] for m in meshes], explicit_safety),
            **_implicit_variables(implicit, fine_factor),
            **_calibration_variables(cal, reference),
        },
        coords={
            "mesh": ("mesh", np.array(meshes), {"units": "1", "long_name": "number of elements"}),
            "candidate": (
                "candidate",
                np.array(cal.candidates),
                {"units": "1", "long_name": "N in dt = T1 / N"},
            ),
        },
    )


def _explicit_variables(pm, explicit_safety) -> dict[str, tuple]:
    """Per mesh (``pm``: the meshes' results), the critical step, the first frequency and the
    explicit run's step, steps and costs."""
    ex = [p.explicit for p in pm]
    return {
        "dt_critical": (
            "mesh",
            np.array([p.dt_cr for p in pm]),
            {"units": "s", "long_name": "2 / omega_max"},
        ),
        "omega_1": ("mesh", np.array([p.omega_1 for p in pm]), {"units": "rad/s"}),
        "explicit_dt": (
            "mesh",
            explicit_safety * np.array([p.dt_cr for p in pm]),
            {"units": "s"},
        ),
        "explicit_steps": (
            "mesh",
            np.array([e.steps_total for e in ex], float),
            {"units": "1", "long_name": "steps to simulate t_end"},
        ),
        "explicit_window_steps": (
            "mesh",
            np.array([e.window_steps for e in ex], float),
            {"units": "1", "long_name": "K: steps of the timed window"},
        ),
        "explicit_per_step_s": (
            "mesh",
            np.array([e.per_step_s for e in ex], float),
            {"units": "s", "long_name": "wall time per step (window)"},
        ),
        "explicit_projected_s": (
            "mesh",
            np.array([e.projected_s for e in ex], float),
            {
                "units": "s",
                "long_name": "wall time to t_end projected from a measured "
                "window of K steps (per-step time x steps)",
            },
        ),
        "explicit_measured_s": (
            "mesh",
            np.array([e.measured_s for e in ex], float),
            {"units": "s", "long_name": "wall time of the full run (NaN: not run to the end)"},
        ),
        "explicit_cost_s": (
            "mesh",
            np.array([e.cost_s for e in ex]),
            {
                "units": "s",
                "long_name": "explicit wall time to t_end: "
                "measured full run, else projected from a measured window of "
                "K steps (see explicit_cost_source)",
            },
        ),
        "explicit_cost_source": ("mesh", np.array([e.source for e in ex], dtype=object)),
    }


def _implicit_variables(implicit, fine_factor) -> dict[str, tuple]:
    """Per mesh, the implicit run's step, steps, cost, Newton iterations and tip errors."""
    return {
        "implicit_dt": (
            "mesh",
            np.array([r.dt for r in implicit]),
            {"units": "s", "long_name": "T1 / N (generalized-alpha)"},
        ),
        "implicit_steps": (
            "mesh",
            np.array([r.steps for r in implicit], float),
            {"units": "1"},
        ),
        "implicit_cost_s": (
            "mesh",
            np.array([r.cpu_s for r in implicit]),
            {
                "units": "s",
                "long_name": "generalized-alpha wall time to t_end (measured full run)",
            },
        ),
        "implicit_newton_mean": (
            "mesh",
            np.array([r.newton_mean for r in implicit]),
            {"units": "1", "long_name": "Newton iterations per step"},
        ),
        "implicit_tip_error_explicit": (
            "mesh",
            np.array([r.err_explicit for r in implicit]),
            {"units": "1", "long_name": "tip error vs the full explicit run (NaN: none)"},
        ),
        "implicit_tip_error_fine": (
            "mesh",
            np.array([r.err_fine for r in implicit]),
            {
                "units": "1",
                "long_name": f"tip error estimated against generalized-alpha "
                f"at dt/{fine_factor} (second-order Richardson)",
            },
        ),
    }


def _calibration_variables(cal: Calibration, reference: ExplicitCost) -> dict[str, tuple]:
    """The calibration's tip errors, costs and histories per candidate ``N``, and the
    explicit reference run's history."""
    n_pad = len(cal.candidates) - len(cal.histories)
    return {
        "calibration_tip_error": (
            "candidate",
            np.array(cal.tip_error),
            {
                "units": "1",
                "long_name": "tip error vs explicit on the calibration mesh (NaN: not needed)",
            },
        ),
        "calibration_wall_s": ("candidate", np.array(cal.cpu_s), {"units": "s"}),
        "calibration_time": (
            ("candidate", "sample"),
            pad_rows([h[0] for h in cal.histories] + [np.zeros(0)] * n_pad),
            {"units": "s"},
        ),
        "calibration_tip_y": (
            ("candidate", "sample"),
            pad_rows([h[1] for h in cal.histories] + [np.zeros(0)] * n_pad),
            {"units": "m"},
        ),
        "reference_time": ("ref_sample", reference.t, {"units": "s"}),
        "reference_tip_y": (
            "ref_sample",
            reference.y,
            {"units": "m", "long_name": "explicit run, calibration mesh"},
        ),
    }


def _cost_laws(meshes, per_mesh, implicit, fit_min_elements: int) -> dict[str, float | str]:
    """Exponents of ``cost ~ n^p`` over the meshes with at least ``fit_min_elements`` elements
    and the crossover of the explicit and implicit costs."""
    n = np.array(meshes, float)
    ex_cost = np.array([per_mesh[m].explicit.cost_s for m in meshes])
    im_cost = np.array([r.cpu_s for r in implicit])
    sel = n >= fit_min_elements
    n_star, kind = crossover(n, ex_cost, im_cost, fit_min=fit_min_elements)
    return {
        "explicit_exponent": fit_slope(n[sel], ex_cost[sel]),
        "implicit_exponent": fit_slope(n[sel], im_cost[sel]),
        "crossover_elements": n_star,
        "crossover_kind": kind,
    }


def run_scaling_study(
    case: CaseSpec,
    meshes: Sequence[int],
    t_end: float = 2.0,
    explicit_safety: float | None = None,
    full_max_elements: int = 40,
    window_wall_s: float = 1.5,
    min_window_steps: int = 2000,
    per_period_candidates: Sequence[float] = (50, 100, 200, 300, 400, 500, 600, 800),
    tip_error_target: float = 0.01,
    calibration_mesh: int | None = None,
    fine_factor: int = 4,
    fit_min_elements: int | None = None,
    progress: bool = False,
) -> xr.Dataset:
    """Wall time to simulate ``t_end`` (s) against the number of elements (module docstring).

    For every mesh in ``meshes``: ``dt_critical = 2 / omega_max``; the explicit run at
    ``explicit_safety * dt_critical`` (default: the case's ``dynamics.dt_safety``) is run to
    ``t_end`` when the mesh has at most ``full_max_elements`` elements, and its cost is in any
    case also measured over a window of ``K`` steps (``K`` chosen for about ``window_wall_s`` of
    wall time, at least ``min_window_steps``) and projected to ``t_end`` (``per-step time x
    total steps``); above ``full_max_elements`` only the projection exists and is labelled so in
    ``explicit_cost_source``.

    Generalized-alpha (``dynamics.rho_inf`` of the case) at a fixed accuracy: on
    ``calibration_mesh`` (default: the case's mesh if it is run in full, else the largest fully
    run mesh) the candidates ``dt = T1 / N`` are tried from the coarsest; the first whose tip
    error (:func:`tip_error`, against the full explicit run) is at most ``tip_error_target`` is
    used on every mesh (``T1`` of that mesh). Its tip error is verified on every mesh: against
    the full explicit run where there is one, and everywhere against a generalized-alpha run
    with ``dt / fine_factor`` (second order: ``e(dt) = |y_dt - y_fine| / (1 - fine_factor^-2)``).

    Exponents ``p`` of ``cost ~ n^p`` are least-squares fits over the meshes with at least
    ``fit_min_elements`` elements (default: the largest three); :func:`crossover` gives the mesh
    where the explicit and implicit costs cross. A short warm-up run first loads the compiled
    kernels, so no JIT time is measured.
    """
    meshes, full_meshes, calibration_mesh, fit_min_elements = _check_meshes(
        case, meshes, full_max_elements, calibration_mesh, fit_min_elements
    )
    safety = case.dynamics.dt_safety if explicit_safety is None else float(explicit_safety)
    t_start = run_clock()
    _warm_up(case, meshes[0])
    per_mesh = _mesh_costs(
        case, meshes, full_meshes, t_end, safety, window_wall_s, min_window_steps, progress
    )
    cal = _calibrate(per_mesh[calibration_mesh], per_period_candidates, t_end, tip_error_target)
    implicit = _implicit_costs(per_mesh, meshes, cal.chosen, t_end, fine_factor, progress)
    wall = run_clock() - t_start
    ds = _scaling_dataset(
        meshes, per_mesh, implicit, cal, per_mesh[calibration_mesh].explicit, safety, fine_factor
    )
    err = np.array(cal.tip_error)
    settings = {
        "t_end": t_end,
        "explicit_safety": safety,
        "full_max_elements": full_max_elements,
        "window_wall_s": window_wall_s,
        "min_window_steps": min_window_steps,
        "tip_error_target": tip_error_target,
        "calibration_mesh": calibration_mesh,
        "per_period": cal.chosen,
        "per_period_met_target": int(any(np.isfinite(err) & (err <= tip_error_target))),
        "fine_factor": fine_factor,
        "rho_inf": case.dynamics.rho_inf,
        "fit_min_elements": fit_min_elements,
    }
    ds.attrs.update(
        provenance_attrs(
            case,
            study="scaling",
            **settings,
            **_cost_laws(meshes, per_mesh, implicit, fit_min_elements),
            cost_note="explicit cost above full_max_elements is projected from a measured "
            "window of K steps (explicit_window_steps); wall times on a shared machine",
            wall_s=wall,
        )
    )
    return ds
