"""Validation study of one case: ANCF results against independent references (exact graded
quadrature, stepped transfer matrix, closed forms, energy balance), and the damage-aware
dynamic checks of damaged cases.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.config import PIPELINE_DEFAULTS, CaseSpec
from ancf_beam.io import provenance_attrs
from ancf_beam.studies.checks import check, checks_dataset, extend_checks
from ancf_beam.studies.defects import frozen_damage_model, straight_elastic, uniform_counterpart

__all__ = [
    "DAMAGE_TOLERANCES",
    "DEFAULT_TOLERANCES",
    "damage_dynamics_checks",
    "run_family_validation",
    "run_validation",
    "whole_period_mean",
]

#: Default tolerances of the validation checks (relative unless stated; see :func:`run_validation`),
#: from the one home of defaults, ``ancf_beam.config.PIPELINE_DEFAULTS['validation']``.
DEFAULT_TOLERANCES: dict[str, float] = {
    k: v
    for k, v in PIPELINE_DEFAULTS["validation"]["tolerances"].items()
    if k not in ("energy_drift_damage", "damage_energy_order_rel")
}


def whole_period_mean(
    t: np.ndarray, y: np.ndarray, period: float, start_fraction: float = 0.5
) -> tuple[float, int]:
    """Mean of ``y`` over the largest whole number of ``period`` s ending at ``t[-1]`` and lying
    in ``t >= start_fraction * t[-1]``. Returns ``(mean, n_periods)``; with less than one period
    available, the plain mean over that window and ``0``."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    t_end = t[-1]
    window = t_end - start_fraction * t_end
    n = int(window // period) if period > 0 else 0
    start = t_end - n * period if n >= 1 else start_fraction * t_end
    sel = t > start
    if sel.sum() < 1:
        return float(y[-1]), 0
    # trapezoidal mean from the (interpolated) window start (samples may be non-uniform)
    ts = np.concatenate([[start], t[sel]])
    ys = np.concatenate([[np.interp(start, t, y)], y[sel]])
    area = float(np.sum(0.5 * (ys[1:] + ys[:-1]) * np.diff(ts)))
    return area / float(ts[-1] - ts[0]), n


def run_validation(
    case: CaseSpec,
    static_ds: xr.Dataset,
    modal_ds: xr.Dataset,
    simulate_ds: xr.Dataset | None = None,
    tolerances: Mapping[str, float] | None = None,
    segments: int | None = None,
) -> xr.Dataset:
    """Validation checks of one case (a check Dataset with provenance attributes).

    References (all independent of the ANCF code): exact linear graded statics by quadrature
    (:func:`~ancf_beam.references.transfer.exact_graded_static`), the stepped transfer-matrix beam
    with
    ``segments`` (default ``stepped.segments``) uniform pieces for statics and frequencies, the
    uniform-beam closed forms for the same case with its defects removed, and for the explicit
    run (``simulate_ds``) the energy balance and the static equilibrium about which the free
    vibration oscillates. ``static_ds`` and ``modal_ds`` are the outputs of
    :func:`ancf_beam.analyses.run_static` / :func:`~ancf_beam.analyses.run_modal` for ``case``.

    Checks and default tolerances (:data:`DEFAULT_TOLERANCES`):

    * ANCF small-deflection model (``mesh.strain: linear``) tip deflection and tip slope vs the
      exact quadrature, and the nonlinear ANCF tip deflection (``static_ds``; at this load the
      geometric nonlinearity is ~1e-6) vs the same: 0.5 %;
    * stepped beam (N segments) tip deflection vs exact: 0.5 %; its observed order between N and
      2N vs 2: 10 %;
    * ANCF frequencies (``modal_ds``) vs stepped transfer-matrix frequencies: 0.5 %;
    * uniform counterpart: tip deflection ``-q L^4 / 8 EI`` and ``omega_k`` closed forms: 0.5 %;
    * explicit run: energy drift ``max |E - E0| / max T`` below 1e-3; mean tip deflection over
      the whole first-mode periods of the second half vs the static tip (at the run's mesh): 2 %
      (the free vibration about the static equilibrium averages out over whole periods; the
      plain second-half mean is reported in the note); ``dt / dt_critical`` equal to the
      configured safety factor.

    With an initially curved reference (``imperfection``) or damage the ANCF-vs-linear
    straight-beam comparisons do not apply and are left out (attribute
    ``straight_elastic_references = 0``); the other checks remain.
    """
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.references import transfer
    from ancf_beam.solvers.static import solve_static

    tol = dict(DEFAULT_TOLERANCES)
    tol.update(tolerances or {})
    segments = case.stepped.segments if segments is None else int(segments)
    t0 = time.perf_counter()
    name = case.name
    rows: list[dict[str, Any]] = []
    p = SectionProfile(case)
    L = case.beam.length

    # ---- statics: exact graded quadrature, stepped transfer matrix, ANCF linear + nonlinear
    exact = transfer.exact_graded_static(L, p.EI, p.q)
    w_ex, s_ex = exact["tip_deflection"], exact["tip_slope"]
    straight = straight_elastic(case)
    lin_model = BeamModel(case.with_overrides({"mesh.strain": "linear"}))
    lin = solve_static(lin_model)
    if straight:
        rows.extend(_static_reference_checks(name, static_ds, lin, w_ex, s_ex, tol))
    rows.extend(_stepped_checks(case, p, L, segments, w_ex, tol))
    om, om_tm = _ancf_and_stepped_frequencies(case, modal_ds, p, segments)
    if straight:
        for k in range(om.size):
            rows.append(check(
                f"omega_{k + 1}: ANCF vs stepped TM (N={segments})", om_tm[k], om[k],
                tol["frequency_rel"], note="rad/s", case=name))  # fmt: skip
    rows.extend(_uniform_checks(case, om.size, tol))
    if simulate_ds is not None:
        rows.extend(_dynamics_checks(case, static_ds, simulate_ds, tol))
    return _validation_dataset(case, rows, exact, p, om, om_tm, segments, tol, t0)


def _ancf_and_stepped_frequencies(case, modal_ds, p, segments):
    """The modal study's frequencies about the straight reference (recomputed when it was run
    about the static state) and the stepped transfer-matrix frequencies of the same beam."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.references import transfer
    from ancf_beam.solvers.modal import modal_analysis

    om = np.asarray(modal_ds["omega"].values, float)
    about = str(modal_ds.attrs.get("about", "reference"))
    if about != "reference":  # the TM reference is the straight beam
        om = modal_analysis(BeamModel(case), n_modes=om.size, about="reference").omega
    L = case.beam.length
    om_tm = np.asarray(transfer.stepped_frequencies(L, p.EI, p.rhoA, segments, om.size))
    return om, om_tm


def _static_reference_checks(name, static_ds, lin, w_ex, s_ex, tol):
    rows = []
    rows.append(check(
        "static tip deflection: ANCF linear vs exact quadrature", w_ex, lin.tip_y,
        tol["static_rel"], note="m", case=name))  # fmt: skip
    rows.append(check(
        "static tip slope: ANCF linear vs exact quadrature", s_ex,
        math.radians(lin.tip_angle_deg), tol["static_rel"], note="rad", case=name))  # fmt: skip
    rows.append(check(
        "static tip deflection: ANCF nonlinear vs exact linear quadrature", w_ex,
        float(static_ds["tip_y"]), tol["static_rel"],
        note="m; small load, geometric nonlinearity ~ (w/L)^2", case=name))  # fmt: skip
    return rows


def _stepped_checks(case, p, L, segments, w_ex, tol):
    from ancf_beam.references import transfer

    name = case.name
    rows = []
    st_n = transfer.stepped_static(L, p.EI, p.q, segments)
    st_2n = transfer.stepped_static(L, p.EI, p.q, 2 * segments)
    rows.append(check(
        f"static tip deflection: stepped TM (N={segments}) vs exact quadrature", w_ex,
        st_n["tip_deflection"], tol["stepped_rel"], note="m", case=name))  # fmt: skip
    e_n = st_n["tip_deflection"] - w_ex
    e_2n = st_2n["tip_deflection"] - w_ex
    if abs(e_n) <= 1e-9 * abs(w_ex):  # uniform sections: the stepped beam is exact for any N
        rows.append(check(
            f"stepped TM exact for a uniform beam (N={segments})", w_ex,
            st_n["tip_deflection"], 1e-9, note="m", case=name))  # fmt: skip
    else:
        p_obs = math.log(abs(e_n / e_2n)) / math.log(2.0) if e_2n != 0 else float("nan")
        rows.append(check(
            f"stepped TM observed order (N={segments}, {2 * segments})", 2.0, p_obs,
            tol["stepped_order_rel"], note="midpoint-property stepped beam: O(1/N^2)",
            case=name))  # fmt: skip
    return rows


def _uniform_checks(case, n_modes, tol):
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.references import transfer
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    name = case.name
    rows = []
    L = case.beam.length
    uc = uniform_counterpart(case)
    pu = SectionProfile(uc)
    EI0, rhoA0 = float(pu.EI(0.0)), float(pu.rhoA(0.0))
    w_u, _ = transfer.uniform_static_tip(rhoA0 * case.load.g, L, EI0)
    umodel = BeamModel(uc)
    ust = solve_static(umodel)
    rows.append(check(
        "uniform counterpart: tip deflection vs -q L^4 / (8 EI)", w_u, ust.tip_y,
        tol["analytic_rel"], note="m; defects removed", case=name))  # fmt: skip
    nmu = min(3, n_modes)
    om_u = transfer.uniform_frequencies(L, EI0, rhoA0, nmu)
    om_anc = modal_analysis(umodel, n_modes=nmu, about="reference").omega
    for k in range(nmu):
        rows.append(check(
            f"uniform counterpart: omega_{k + 1} vs (beta_k L)^2 sqrt(EI / rhoA) / L^2",
            om_u[k], om_anc[k], tol["analytic_rel"], note="rad/s; defects removed",
            case=name))  # fmt: skip
    return rows


def _dynamics_checks(case, static_ds, simulate_ds, tol):
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    name = case.name
    rows = []
    a = simulate_ds.attrs
    drift = float(a["energy_drift_rel"])
    rows.append(check(
        "explicit run: energy drift max|E - E0| / max T", 0.0, drift,
        tol["energy_drift"], mode="abs", note="undamped central differences",
        case=name))  # fmt: skip
    ne_sim = int(simulate_ds.sizes["node"]) - 1
    if ne_sim == case.mesh.n_elements:
        tip_static = float(static_ds["tip_y"])
        sim_case = case
    else:
        sim_case = case.with_overrides({"mesh.n_elements": ne_sim})
        tip_static = solve_static(BeamModel(sim_case)).tip_y
    w1 = float(modal_analysis(BeamModel(sim_case), n_modes=1, about="static").omega[0])
    t = simulate_ds["time"].values
    y = simulate_ds["tip_y"].values
    mean, nper = whole_period_mean(t, y, 2 * math.pi / w1)
    half_mean = float(np.mean(y[t >= 0.5 * t[-1]]))
    rows.append(check(
        "explicit run: mean tip over whole periods (2nd half) vs static tip", tip_static,
        mean, tol["mean_tip_rel"],
        note=f"m; {nper} periods of omega_1 = {w1:.4g} rad/s; plain 2nd-half mean "
             f"{half_mean:.6g} m", case=name))  # fmt: skip
    if case.dynamics.dt is None:
        rows.append(_dt_safety_check(case, a, tol["dt_safety_rel"]))
    return rows


def _validation_dataset(case, rows, exact, p, om, om_tm, segments, tol, t0):
    ds = checks_dataset(rows)
    wall = time.perf_counter() - t0
    ds = ds.assign(
        exact_x=("x_exact", exact["x"], {"units": "m"}),
        exact_w=("x_exact", exact["w"], {"units": "m", "long_name": "exact linear deflection"}),
        exact_curvature=(
            "x_exact",
            -exact["moment"] / p.EI(exact["x"]),
            {"units": "rad/m", "long_name": "exact linear curvature -M/EI"},
        ),
        stepped_omega=("mode", om_tm, {"units": "rad/s"}),
        ancf_omega=("mode", om, {"units": "rad/s"}),
    )
    ds = ds.assign_coords(mode=np.arange(1, om.size + 1))
    n_pass = sum(r["status"] == "PASS" for r in rows)
    ds.attrs.update(
        provenance_attrs(
            case,
            study="validation",
            segments=segments,
            n_checks=len(rows),
            n_pass=n_pass,
            n_fail=len(rows) - n_pass,
            straight_elastic_references=straight_elastic(case),
            wall_s=wall,
            **{f"tolerance.{k}": v for k, v in tol.items()},
        )
    )
    return ds


#: Tolerances of the damage-aware dynamic checks (see :func:`damage_dynamics_checks`), from
#: ``ancf_beam.config.PIPELINE_DEFAULTS['validation']``: the energy drift with a staggered damage
#: update, its observed order under dt -> dt/2, and the mean dynamic tip vs the static tip with
#: the final damage frozen.
DAMAGE_TOLERANCES: dict[str, float] = {
    k: PIPELINE_DEFAULTS["validation"]["tolerances"][k]
    for k in ("energy_drift_damage", "damage_energy_order_rel", "mean_tip_rel")
}


def damage_dynamics_checks(
    case: CaseSpec,
    simulate_ds: xr.Dataset,
    tolerances: Mapping[str, float] | None = None,
    order_t_end: float | None = None,
) -> list[dict[str, Any]]:
    """Checks of the explicit run of a case with damage (rows of
    :func:`~ancf_beam.studies.checks.check`).

    The straight-beam checks of the explicit run do not carry over: the damage grows during the
    first swing, where the fibre strain overshoots the static one (about twice for a suddenly
    applied load), so the run ends with *more* damage than the static study and vibrates about
    a different equilibrium; and the staggered damage update (damage grown after each step)
    makes the energy balance first order in ``dt``. What applies:

    * energy balance ``max|E - E0| / max T`` (released energy counted as dissipated) below
      ``energy_drift_damage``, and its observed order under ``dt -> dt/2`` (two short runs over
      ``order_t_end``, default the first 0.25 s) equal to 1 within ``damage_energy_order_rel``;
    * the mean tip over whole periods of the second half equal to the static tip of the beam
      with the run's final damage frozen (:func:`frozen_damage_model`) within ``mean_tip_rel``
      (the damage stops growing after the first swings; the period is that of the damaged
      beam);
    * irreversibility: no integration point's damage decreases between snapshots (absolute
      0);
    * ``dt / dt_critical`` equal to ``dynamics.dt_safety`` (as for every case).
    """
    tol = dict(DAMAGE_TOLERANCES)
    tol.update({k: v for k, v in (tolerances or {}).items() if k in DAMAGE_TOLERANCES})
    dt_safety_rel = float((tolerances or {}).get("dt_safety_rel", 1e-9))
    name = case.name
    a = simulate_ds.attrs
    sim_case = case.with_overrides({"mesh.n_elements": int(simulate_ds.sizes["node"]) - 1})
    rows = [
        check(
            "explicit run with damage: energy drift max|E - E0| / max T",
            0.0,
            float(a["energy_drift_rel"]),
            tol["energy_drift_damage"],
            mode="abs",
            note="released energy counted as dissipated; staggered update: O(dt)",
            case=name,
        ),
        _damage_drift_order_check(sim_case, a, tol, order_t_end),
        _frozen_damage_mean_tip_check(sim_case, simulate_ds, tol),
        _damage_irreversible_check(name, simulate_ds),
    ]
    if case.dynamics.dt is None:
        rows.append(_dt_safety_check(case, a, dt_safety_rel))
    return rows


def _damage_drift_order_check(sim_case, attrs, tol, order_t_end):
    """Observed order of the damage energy drift under ``dt -> dt/2`` (two short runs)."""
    from ancf_beam.analyses import run_simulate

    dt = float(attrs["dt"])
    dt_cr = float(attrs["dt_critical"])
    t_short = float(order_t_end) if order_t_end is not None else min(0.25, float(attrs["t_end"]))
    drifts = []
    for h in (dt, 0.5 * dt):
        s, _ = run_simulate(sim_case, dt=h, dt_critical=dt_cr, t_end=t_short, progress=False)
        drifts.append(float(s["energy_drift_rel"]))
    order = math.log(drifts[0] / drifts[1]) / math.log(2.0) if drifts[1] > 0 else math.nan
    return check(
        f"damage energy drift: observed order under dt -> dt/2 (first {t_short:g} s)", 1.0,
        order, tol["damage_energy_order_rel"],
        note=f"drift {drifts[0]:.3g} at dt, {drifts[1]:.3g} at dt/2",
        case=sim_case.name)  # fmt: skip


def _frozen_damage_mean_tip_check(sim_case, simulate_ds, tol):
    """Mean tip over whole periods of the damaged beam vs its static tip, final damage frozen."""
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    d_final = np.asarray(simulate_ds["damage"].values[-1], float)
    frozen = frozen_damage_model(sim_case, d_final)
    tip_frozen = solve_static(frozen).tip_y
    w1 = float(modal_analysis(frozen, n_modes=1, about="reference").omega[0])
    t = simulate_ds["time"].values
    y = simulate_ds["tip_y"].values
    mean, nper = whole_period_mean(t, y, 2 * math.pi / w1)
    return check(
        "explicit run with damage: mean tip over whole periods (2nd half) vs static tip with "
        "the final damage frozen",
        tip_frozen,
        mean,
        tol["mean_tip_rel"],
        note=f"m; {nper} periods of the damaged omega_1 = {w1:.4g} rad/s",
        case=sim_case.name,
    )


def _damage_irreversible_check(name, simulate_ds):
    dmg = np.asarray(simulate_ds["damage"].values, float)
    decrease = float(np.max(dmg[:-1] - dmg[1:])) if dmg.shape[0] > 1 else 0.0
    return check(
        "damage irreversible: largest decrease between snapshots", 0.0, max(decrease, 0.0), 0.0,
        mode="abs", note=f"max damage {dmg.max():.3g}", case=name)  # fmt: skip


def _dt_safety_check(case, attrs, tolerance):
    """``dt / dt_critical`` of the run against ``dynamics.dt_safety``."""
    return check(
        "explicit run: dt / dt_critical = dynamics.dt_safety", case.dynamics.dt_safety,
        float(attrs["dt"]) / float(attrs["dt_critical"]), tolerance,
        note="dt_critical read from the critical_dt result", case=case.name)  # fmt: skip


def run_family_validation(
    case: CaseSpec,
    static_ds: xr.Dataset,
    modal_ds: xr.Dataset,
    simulate_ds: xr.Dataset | None = None,
    tolerances: Mapping[str, float] | None = None,
    segments: int | None = None,
) -> xr.Dataset:
    """:func:`run_validation`, with the dynamic checks of a damaged case
    replaced by :func:`damage_dynamics_checks` (attribute ``dynamics_checks``: ``'elastic'`` or
    ``'damage'``). Cases without damage get exactly ``run_validation``'s table."""

    damage_only = ("energy_drift_damage", "damage_energy_order_rel")
    tol = {k: v for k, v in (tolerances or {}).items() if k not in damage_only}
    if not case.damage.enabled or simulate_ds is None:
        ds = run_validation(case, static_ds, modal_ds, simulate_ds, tol, segments)
        ds.attrs["dynamics_checks"] = "elastic"
        return ds
    t0 = time.perf_counter()
    ds = run_validation(case, static_ds, modal_ds, None, tol, segments)
    rows = damage_dynamics_checks(case, simulate_ds, tolerances)
    wall = float(ds.attrs.get("wall_s", 0.0)) + time.perf_counter() - t0
    used = {**DAMAGE_TOLERANCES, **{k: v for k, v in (tolerances or {}).items()
                                    if k in DAMAGE_TOLERANCES}}  # fmt: skip
    return extend_checks(ds, rows, dynamics_checks="damage", wall_s=wall,
                         **{f"tolerance.{k}": v for k, v in used.items()})  # fmt: skip
