"""Cost-scaling study: wall time to simulate a fixed interval against the mesh, explicit vs
implicit, and their crossover.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.config import CaseSpec
from ancf_beam.io import provenance_attrs
from ancf_beam.studies.convergence import fit_slope
from ancf_beam.studies.integrators import TWO_PI, pad_rows, tip_error


def crossover(n: Sequence[float], cost_a: Sequence[float], cost_b: Sequence[float],
              fit_min: float | None = None) -> tuple[float, str]:  # fmt: skip
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


def _explicit_cost(model, dt, dt_cr, t_end, window_wall_s, min_window_steps, run_full,
                   progress):  # fmt: skip
    from ancf_beam.solvers.explicit import simulate_explicit

    n_total = int(math.ceil(t_end / dt - 1e-9))
    # calibration window -> K steps for about window_wall_s of run time. Costs are process CPU
    # times: with several jobs sharing the cores, wall times of the window and of the full run
    # would be measured under different loads.
    k0 = min(min_window_steps, n_total)
    cal = simulate_explicit(model, t_end=k0 * dt, dt=dt, dt_critical=dt_cr, progress=False)
    per = cal.cpu_s / max(cal.steps, 1)
    k = int(min(max(min_window_steps, window_wall_s / max(per, 1e-12)), n_total))
    win = simulate_explicit(model, t_end=k * dt, dt=dt, dt_critical=dt_cr, progress=False)
    per_step = win.cpu_s / max(win.steps, 1)
    out = {
        "steps_total": n_total,
        "window_steps": win.steps,
        "per_step_s": per_step,
        "projected_s": per_step * n_total,
        "measured_s": math.nan,
        "t": None,
        "y": None,
    }
    if run_full:
        full = simulate_explicit(model, t_end=t_end, dt=dt, dt_critical=dt_cr, progress=progress)
        out.update(measured_s=full.cpu_s, t=full.t, y=full.tip_y)
    return out


def run_scaling_study(
    case: CaseSpec,
    meshes: Sequence[int],
    t_end: float = 2.0,
    explicit_safety: float = 0.8,
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
    ``explicit_safety * dt_critical`` is run to ``t_end`` when the mesh has at most
    ``full_max_elements`` elements, and its cost is in any case also measured over a window of
    ``K`` steps (``K`` chosen for about ``window_wall_s`` of wall time, at least
    ``min_window_steps``) and projected to ``t_end`` (``per-step time x total steps``); above
    ``full_max_elements`` only the projection exists and is labelled so in
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
    from ancf_beam.analyses import run_simulate
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis, omega_max

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
    rho_inf = case.dynamics.rho_inf
    t_start = time.perf_counter()

    # warm-up: load the compiled kernels (numba cache) outside every timing
    warm = BeamModel(case.with_overrides({"mesh.n_elements": meshes[0]}))
    w_max = omega_max(warm)[0]
    run_simulate(warm.case, dt=0.5 / w_max, dt_critical=2.0 / w_max, t_end=50 / w_max,
                 progress=False)  # fmt: skip
    run_simulate(warm.case, integrator="generalized-alpha", dt=1e-3, t_end=5e-3, progress=False)

    per_mesh: dict[int, dict[str, Any]] = {}
    for ne in meshes:
        model = BeamModel(case.with_overrides({"mesh.n_elements": ne}))
        w_max = omega_max(model)[0]
        w1 = float(modal_analysis(model, n_modes=1, about="reference").omega[0])
        dt_cr = 2.0 / w_max
        ex = _explicit_cost(model, explicit_safety * dt_cr, dt_cr, t_end, window_wall_s,
                            min_window_steps, ne in full_meshes, progress)  # fmt: skip
        per_mesh[ne] = {"model": model, "dt_cr": dt_cr, "omega_1": w1, "explicit": ex}

    # accuracy calibration of generalized-alpha on the calibration mesh
    cal = per_mesh[calibration_mesh]
    t_ref, y_ref = cal["explicit"]["t"], cal["explicit"]["y"]
    cand = sorted({float(c) for c in per_period_candidates})
    cal_err, cal_wall, cal_hist = [], [], []
    chosen = math.nan
    for n_pp in cand:
        dt = TWO_PI / cal["omega_1"] / n_pp
        s, d = run_simulate(cal["model"].case, integrator="generalized-alpha", dt=dt, t_end=t_end,
                            rho_inf=rho_inf, dt_critical=cal["dt_cr"], progress=False)  # fmt: skip
        err = tip_error(d["time"].values, d["tip_y"].values, t_ref, y_ref)
        cal_err.append(err)
        cal_wall.append(float(s["cpu_s"]))
        cal_hist.append((d["time"].values, d["tip_y"].values))
        if err <= tip_error_target:
            chosen = n_pp
            break
    if not math.isfinite(chosen):
        chosen = cand[-1]  # none met the target: keep the finest, the checks will say so
    # pad the candidates that were not needed
    n_tried = len(cal_err)
    cal_err += [math.nan] * (len(cand) - n_tried)
    cal_wall += [math.nan] * (len(cand) - n_tried)

    im_rows = []
    for ne in meshes:
        pm = per_mesh[ne]
        dt = TWO_PI / pm["omega_1"] / chosen
        kw = {"integrator": "generalized-alpha", "t_end": t_end, "rho_inf": rho_inf,
              "dt_critical": pm["dt_cr"], "progress": progress}  # fmt: skip
        s, d = run_simulate(pm["model"].case, dt=dt, **kw)
        sf, df = run_simulate(pm["model"].case, dt=dt / fine_factor, **kw)
        t, y = d["time"].values, d["tip_y"].values
        e_fine = tip_error(t, y, df["time"].values, df["tip_y"].values)
        e_fine /= 1.0 - fine_factor**-2.0
        ex = pm["explicit"]
        e_expl = tip_error(t, y, ex["t"], ex["y"]) if ex["t"] is not None else math.nan
        im_rows.append({
            "dt": dt, "steps": int(s["steps"]), "wall": float(s["cpu_s"]),  # CPU time
            "newton": float(s["newton_iterations_mean"]), "err_expl": e_expl,
            "err_fine": e_fine,
        })  # fmt: skip

    n = np.array(meshes, float)
    ex_cost = np.array([per_mesh[m]["explicit"]["measured_s"]
                        if math.isfinite(per_mesh[m]["explicit"]["measured_s"])
                        else per_mesh[m]["explicit"]["projected_s"] for m in meshes])  # fmt: skip
    im_cost = np.array([r["wall"] for r in im_rows])
    sel = n >= fit_min_elements
    p_ex = fit_slope(n[sel], ex_cost[sel])
    p_im = fit_slope(n[sel], im_cost[sel])
    n_star, kind = crossover(n, ex_cost, im_cost, fit_min=fit_min_elements)
    sources = []
    for m in meshes:
        e = per_mesh[m]["explicit"]
        if math.isfinite(e["measured_s"]):
            sources.append("measured full run")
        else:
            sources.append(f"projected from a measured window of {e['window_steps']} steps")
    wall = time.perf_counter() - t_start

    def col(key):
        return np.array([per_mesh[m]["explicit"][key] for m in meshes], dtype=float)

    ds = xr.Dataset(
        {
            "dt_critical": ("mesh", np.array([per_mesh[m]["dt_cr"] for m in meshes]),
                            {"units": "s", "long_name": "2 / omega_max"}),
            "omega_1": ("mesh", np.array([per_mesh[m]["omega_1"] for m in meshes]),
                        {"units": "rad/s"}),
            "explicit_dt": ("mesh", explicit_safety * np.array([per_mesh[m]["dt_cr"]
                                                                 for m in meshes]),
                            {"units": "s"}),
            "explicit_steps": ("mesh", col("steps_total"),
                               {"units": "1", "long_name": "steps to simulate t_end"}),
            "explicit_window_steps": ("mesh", col("window_steps"),
                                      {"units": "1", "long_name": "K: steps of the timed window"}),
            "explicit_per_step_s": ("mesh", col("per_step_s"),
                                    {"units": "s", "long_name": "wall time per step (window)"}),
            "explicit_projected_s": (
                "mesh", col("projected_s"),
                {"units": "s", "long_name": "wall time to t_end projected from a measured "
                                            "window of K steps (per-step time x steps)"}),
            "explicit_measured_s": ("mesh", col("measured_s"),
                                    {"units": "s", "long_name": "wall time of the full run "
                                                                "(NaN: not run to the end)"}),
            "explicit_cost_s": ("mesh", ex_cost,
                                {"units": "s", "long_name": "explicit wall time to t_end: "
                                 "measured full run, else projected from a measured window of "
                                 "K steps (see explicit_cost_source)"}),
            "explicit_cost_source": ("mesh", np.array(sources, dtype=object)),
            "implicit_dt": ("mesh", np.array([r["dt"] for r in im_rows]),
                            {"units": "s", "long_name": "T1 / N (generalized-alpha)"}),
            "implicit_steps": ("mesh", np.array([r["steps"] for r in im_rows], float),
                               {"units": "1"}),
            "implicit_cost_s": ("mesh", im_cost,
                                {"units": "s", "long_name": "generalized-alpha wall time to "
                                                            "t_end (measured full run)"}),
            "implicit_newton_mean": ("mesh", np.array([r["newton"] for r in im_rows]),
                                     {"units": "1", "long_name": "Newton iterations per step"}),
            "implicit_tip_error_explicit": (
                "mesh", np.array([r["err_expl"] for r in im_rows]),
                {"units": "1", "long_name": "tip error vs the full explicit run (NaN: none)"}),
            "implicit_tip_error_fine": (
                "mesh", np.array([r["err_fine"] for r in im_rows]),
                {"units": "1", "long_name": f"tip error estimated against generalized-alpha "
                                            f"at dt/{fine_factor} (second-order Richardson)"}),
            "calibration_tip_error": ("candidate", np.array(cal_err),
                                      {"units": "1", "long_name": "tip error vs explicit on the "
                                       "calibration mesh (NaN: not needed)"}),
            "calibration_wall_s": ("candidate", np.array(cal_wall), {"units": "s"}),
            "calibration_time": (("candidate", "sample"), pad_rows([h[0] for h in cal_hist]
                                                               + [np.zeros(0)] * (len(cand)
                                                                                  - n_tried)),
                                 {"units": "s"}),
            "calibration_tip_y": (("candidate", "sample"), pad_rows([h[1] for h in cal_hist]
                                                                + [np.zeros(0)] * (len(cand)
                                                                                   - n_tried)),
                                  {"units": "m"}),
            "reference_time": ("ref_sample", t_ref, {"units": "s"}),
            "reference_tip_y": ("ref_sample", y_ref,
                                {"units": "m", "long_name": "explicit run, calibration mesh"}),
        },
        coords={
            "mesh": ("mesh", np.array(meshes), {"units": "1", "long_name": "number of elements"}),
            "candidate": ("candidate", np.array(cand),
                          {"units": "1", "long_name": "N in dt = T1 / N"}),
        },
    )  # fmt: skip
    ds.attrs.update(
        provenance_attrs(
            case,
            study="scaling",
            t_end=t_end,
            explicit_safety=explicit_safety,
            full_max_elements=full_max_elements,
            window_wall_s=window_wall_s,
            min_window_steps=min_window_steps,
            tip_error_target=tip_error_target,
            calibration_mesh=calibration_mesh,
            per_period=chosen,
            per_period_met_target=int(
                any(np.isfinite(cal_err) & (np.array(cal_err) <= tip_error_target))
            ),
            fine_factor=fine_factor,
            rho_inf=rho_inf,
            fit_min_elements=fit_min_elements,
            explicit_exponent=p_ex,
            implicit_exponent=p_im,
            crossover_elements=n_star,
            crossover_kind=kind,
            cost_note="explicit cost above full_max_elements is projected from a measured "
            "window of K steps (explicit_window_steps); wall times on a shared machine",
            wall_s=wall,
        )
    )
    return ds
