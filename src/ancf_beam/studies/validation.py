"""Validation study of one case: ANCF results against independent references (exact graded
quadrature, stepped transfer matrix, extensible elastica, closed forms, linear modal
superposition, energy balance), and the damage-aware dynamic checks of damaged cases.

Which references apply depends on the case (see :func:`run_validation`): the straight linear
references only to straight undamaged beams, the elastica to every undamaged beam (straight or
initially curved, any deflection), the small-deflection dynamic references (vibration about the
static state, linear modal superposition) only below
:data:`ancf_beam.studies.defects.LARGE_DEFLECTION`.
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
from ancf_beam.studies.defects import (
    families,
    frozen_damage_model,
    large_deflection,
    reference_curvature,
    straight_elastic,
    uniform_counterpart,
)

__all__ = [
    "DAMAGE_TOLERANCES",
    "DEFAULT_TOLERANCES",
    "assert_dt_safety",
    "damage_dynamics_checks",
    "elastica_reference",
    "run_family_validation",
    "run_validation",
    "whole_period_mean",
]

_DAMAGE_KEYS = ("energy_drift_damage", "damage_energy_order_rel")

#: Default tolerances of the validation checks (relative unless stated; see :func:`run_validation`),
#: from the one home of defaults, ``ancf_beam.config.PIPELINE_DEFAULTS['validation']``.
DEFAULT_TOLERANCES: dict[str, float] = {
    k: v for k, v in PIPELINE_DEFAULTS["validation"]["tolerances"].items() if k not in _DAMAGE_KEYS
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


def assert_dt_safety(case: CaseSpec, attrs: Mapping[str, Any], rel: float = 1e-12) -> None:
    """The explicit run's ``dt`` is ``dynamics.dt_safety x dt_critical`` (the critical_dt ->
    simulate chain imposes it; an assertion, not a validation check). Raises ValueError."""
    if case.dynamics.dt is not None:
        return
    ratio = float(attrs["dt"]) / float(attrs["dt_critical"])
    if not abs(ratio / case.dynamics.dt_safety - 1.0) <= rel:
        raise ValueError(
            f"case '{case.name}': the run's dt / dt_critical = {ratio!r} is not "
            f"dynamics.dt_safety = {case.dynamics.dt_safety!r}: dt was not derived from the "
            "critical step"
        )


def elastica_reference(case: CaseSpec, n_el: int) -> dict:
    """The extensible elastica of ``case`` (graded EI, EA, rhoA; initial curvature of an
    imperfect reference) on ``10 n_el + 1`` points, so that every ANCF node of an ``n_el``
    mesh is an output point, and the same rod without load (its reference tip)."""
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.references.elastica import solve_elastica

    p = SectionProfile(case)
    L = case.beam.length
    k0 = reference_curvature(case)
    kw = {"n_nodes": 10 * n_el + 1, "kappa0": k0}
    el = solve_elastica(L, p.EI, p.EA, p.rhoA, case.load.g, **kw)
    el0 = solve_elastica(L, p.EI, p.EA, p.rhoA, 0.0, **kw) if k0 is not None else None
    el["ref_tip_x"] = el0["tip_x"] if el0 else L
    el["ref_tip_y"] = el0["tip_y"] if el0 else 0.0
    el["ref_tip_angle_deg"] = el0["tip_angle_deg"] if el0 else 0.0
    el["node_x"] = el["x"][::10]
    el["node_y"] = el["y"][::10]
    return el


def run_validation(
    case: CaseSpec,
    static_ds: xr.Dataset,
    modal_ds: xr.Dataset,
    simulate_ds: xr.Dataset | None = None,
    tolerances: Mapping[str, float] | None = None,
    segments: int | None = None,
) -> xr.Dataset:
    """Validation checks of one case (a check Dataset with provenance attributes).

    ``static_ds`` and ``modal_ds`` are the outputs of :func:`ancf_beam.analyses.run_static` /
    :func:`~ancf_beam.analyses.run_modal` for ``case``, ``simulate_ds`` the explicit run.
    References (all independent of the ANCF code) and tolerances (:data:`DEFAULT_TOLERANCES`,
    measured values in ``ancf_beam.config.PIPELINE_DEFAULTS``):

    * straight undamaged beams: the ANCF small-deflection model (``mesh.strain: linear``) tip
      deflection and tip slope vs the exact graded quadrature (``static_rel``); the stepped
      transfer-matrix beam, Richardson-extrapolated from ``segments`` and twice as many
      (``O(1/N^4)``), vs the exact quadrature (``stepped_rel``) and its observed order between
      N and 2N vs 2 (``stepped_order_rel``); the ANCF frequencies vs the extrapolated stepped
      frequencies (``frequency_rel``);
    * every undamaged beam (also an initially curved one, at any deflection): the nonlinear
      ANCF static tip displacement, tip rotation and shape (largest nodal distance) vs the
      extensible elastica with the same strain measures (``elastica_rel``; large deflection:
      ``large_deflection_rel``). With large deflection the small-deflection (linear) model's
      errors against the elastica are *reported* (``numbers``, not checks);
    * with defects: the same beam with its defects removed, linear tip vs ``-q L^4 / 8 EI``
      (``static_rel``) and ``omega_k`` vs the closed forms (``frequency_rel``);
    * explicit run: energy drift ``max |E - E0| / max T`` (absolute ``energy_drift``; large
      deflection ``energy_drift_large``); below large deflection the mean tip over the whole
      first-mode periods of the second half vs the static tip at the run's mesh
      (``mean_tip_rel``) and, for straight beams, the tip history over the first period vs the
      linear modal superposition of the same mesh (all modes; ``first_period_rel``, relative to
      the largest tip displacement). ``dt = dt_safety x dt_critical`` is asserted
      (:func:`assert_dt_safety`), not checked.
    """
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.references import transfer

    tol = dict(DEFAULT_TOLERANCES)
    tol.update(tolerances or {})
    segments = case.stepped.segments if segments is None else int(segments)
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    numbers: list[dict[str, Any]] = []
    shapes: dict[str, Any] = {}
    p = SectionProfile(case)
    L = case.beam.length
    straight = straight_elastic(case)
    large = large_deflection(case)
    exact = transfer.exact_graded_static(L, p.EI, p.q)
    om, om_tm = _ancf_and_stepped_frequencies(case, modal_ds, p, segments)
    if straight:
        rows.extend(_linear_static_checks(case, exact, tol))
        rows.extend(_stepped_checks(case, p, L, segments, exact["tip_deflection"], tol))
        for k in range(om.size):
            rows.append(check(
                f"omega_{k + 1}: ANCF vs stepped TM (Richardson N={segments}, {2 * segments})",
                om_tm[k], om[k], tol["frequency_rel"], note="rad/s", case=case.name))  # fmt: skip
    if not case.damage.enabled:
        rows.extend(_elastica_part(case, static_ds, large, tol, numbers, shapes))
    if families(case):
        rows.extend(_uniform_checks(case, om.size, tol))
    if simulate_ds is not None:
        assert_dt_safety(case, simulate_ds.attrs)
        rows.extend(_dynamics_checks(case, static_ds, simulate_ds, tol, large, straight))
    ds = _validation_dataset(case, rows, numbers, exact, p, om, om_tm, segments, tol, t0, large)
    return ds.assign(shapes)


def _elastica_part(case, static_ds, large, tol, numbers, shapes) -> list[dict[str, Any]]:
    """Checks of the nonlinear static shape vs the extensible elastica; the shapes (and, with
    large deflection, the linear model's reported errors) go into ``shapes`` / ``numbers``."""
    el = elastica_reference(case, int(static_ds.sizes["dof"]) // 4 - 1)
    rows = _elastica_checks(case, static_ds, el, large, tol)
    q = static_ds["q"].values
    shapes.update(
        elastica_X=("s_elastica", el["X"], {"units": "m"}),
        elastica_x=("s_elastica", el["x"], {"units": "m", "long_name": "extensible elastica"}),
        elastica_y=("s_elastica", el["y"], {"units": "m", "long_name": "extensible elastica"}),
        ancf_node_x=("node", q[0::4], {"units": "m", "long_name": "ANCF static, nodes"}),
        ancf_node_y=("node", q[1::4], {"units": "m", "long_name": "ANCF static, nodes"}),
    )
    if large:
        lin_numbers, lin_q = _linear_model_numbers(case, el)
        numbers.extend(lin_numbers)
        shapes.update(
            linear_node_x=("node", lin_q[0::4], {"units": "m", "long_name": "linear model"}),
            linear_node_y=("node", lin_q[1::4], {"units": "m", "long_name": "linear model"}),
        )
    return rows


def _ancf_and_stepped_frequencies(case, modal_ds, p, segments):
    """The modal study's frequencies about the straight reference (recomputed when it was run
    about the static state) and the stepped transfer-matrix frequencies of the same beam,
    Richardson-extrapolated from ``segments`` and ``2 segments`` (the stepped beam converges
    as ``1/N^2``)."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.references import transfer
    from ancf_beam.solvers.modal import modal_analysis

    om = np.asarray(modal_ds["omega"].values, float)
    about = str(modal_ds.attrs.get("about", "reference"))
    if about != "reference":  # the TM reference is the straight beam
        om = modal_analysis(BeamModel(case), n_modes=om.size, about="reference").omega
    L = case.beam.length
    f1 = np.asarray(transfer.stepped_frequencies(L, p.EI, p.rhoA, segments, om.size))
    f2 = np.asarray(transfer.stepped_frequencies(L, p.EI, p.rhoA, 2 * segments, om.size))
    return om, (4.0 * f2 - f1) / 3.0


def _linear_static_checks(case, exact, tol):
    """ANCF small-deflection model vs the exact linear quadrature: tip deflection and slope
    (``tan`` of the tip angle: the linear model's tangent is ``(1, w')``)."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.static import solve_static

    lin = solve_static(BeamModel(case.with_overrides({"mesh.strain": "linear"})))
    return [
        check("static tip deflection: ANCF linear vs exact quadrature", exact["tip_deflection"],
              lin.tip_y, tol["static_rel"], note="m", case=case.name),
        check("static tip slope: ANCF linear vs exact quadrature", exact["tip_slope"],
              math.tan(math.radians(lin.tip_angle_deg)), tol["static_rel"], note="rad",
              case=case.name),
    ]  # fmt: skip


def _elastica_checks(case, static_ds, el, large, tol):
    """Nonlinear ANCF statics vs the extensible elastica: tip displacement (vector error
    relative to the elastica's tip displacement), tip rotation and the largest nodal
    distance (same normalisation)."""
    from ancf_beam.beam.model import BeamModel

    t = tol["large_deflection_rel"] if large else tol["elastica_rel"]
    key = "large_deflection_rel" if large else "elastica_rel"
    q = static_ds["q"].values
    ref = BeamModel(case.with_overrides({"mesh.n_elements": q.size // 4 - 1})).reference()
    u_el = np.array([el["tip_x"] - el["ref_tip_x"], el["tip_y"] - el["ref_tip_y"]])
    u_an = np.array([q[-4] - ref[-4], q[-3] - ref[-3]])
    scale = float(np.linalg.norm(u_el))
    rot_el = el["tip_angle_deg"] - el["ref_tip_angle_deg"]
    rot_an = math.degrees(math.atan2(q[-1], q[-2]) - math.atan2(ref[-1], ref[-2]))
    shape = np.hypot(q[0::4] - el["node_x"], q[1::4] - el["node_y"])
    what = "elastica (large deflection)" if large else "elastica"
    note = f"tolerance {key}; |u_tip| = {scale:.4g} m, tip angle {el['tip_angle_deg']:.4g} deg"
    return [
        check(f"static tip displacement: ANCF vs extensible {what}", 0.0,
              float(np.linalg.norm(u_an - u_el)) / scale, t, mode="abs",
              note="|r_ANCF - r_elastica| / |u_tip|; " + note, case=case.name),
        check(f"static tip rotation: ANCF vs extensible {what}", rot_el, rot_an, t, note="deg",
              case=case.name),
        check(f"static shape: ANCF nodes vs extensible {what}", 0.0,
              float(shape.max()) / scale, t, mode="abs",
              note="max nodal distance / |u_tip|", case=case.name),
    ]  # fmt: skip


def _linear_model_numbers(case, el):
    """What the small-deflection model gets wrong at large deflection (reported numbers), and
    its static coordinates."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.static import solve_static

    L = case.beam.length
    lin = solve_static(BeamModel(case.with_overrides({"mesh.strain": "linear"})))
    u_el = np.array([el["tip_x"] - L, el["tip_y"]])
    u_lin = np.array([lin.tip_x - L, lin.tip_y])
    err = float(np.linalg.norm(u_lin - u_el) / np.linalg.norm(u_el))
    return [
        _number(case, "elastica tip angle", el["tip_angle_deg"], "deg"),
        _number(case, "elastica tip deflection (downward)", -el["tip_y"], "m"),
        _number(case, "linear model tip deflection (downward)", -lin.tip_y, "m"),
        _number(case, "linear model: tip deflection / elastica - 1", lin.tip_y / el["tip_y"] - 1,
                "1", "small-deflection model, mesh.strain: linear"),
        _number(case, "linear model: tip position error / |u_tip|", err, "1",
                "|r_lin - r_elastica| / |r_elastica - r_reference|"),
    ], lin.q  # fmt: skip


def _number(case, name, value, unit, note=""):
    return {"case": case.name, "quantity": name, "value": float(value), "unit": unit,
            "note": note}  # fmt: skip


def _stepped_checks(case, p, L, segments, w_ex, tol):
    """The stepped transfer-matrix beam (midpoint properties) against the exact quadrature:
    its Richardson extrapolation from N and 2N segments, and its observed order (uniform
    sections: exact for any N, no order)."""
    from ancf_beam.references import transfer

    name = case.name
    st_n = transfer.stepped_static(L, p.EI, p.q, segments)["tip_deflection"]
    st_2n = transfer.stepped_static(L, p.EI, p.q, 2 * segments)["tip_deflection"]
    rows = [check(
        f"static tip deflection: stepped TM (Richardson N={segments}, {2 * segments}) vs exact "
        "quadrature", w_ex, (4.0 * st_2n - st_n) / 3.0, tol["stepped_rel"], note="m",
        case=name)]  # fmt: skip
    e_n, e_2n = st_n - w_ex, st_2n - w_ex
    if abs(e_n) > 1e-9 * abs(w_ex) and e_2n != 0:  # graded: the stepped beam is O(1/N^2)
        p_obs = math.log(abs(e_n / e_2n)) / math.log(2.0)
        rows.append(check(
            f"stepped TM observed order (N={segments}, {2 * segments})", 2.0, p_obs,
            tol["stepped_order_rel"], note="midpoint-property stepped beam: O(1/N^2)",
            case=name))  # fmt: skip
    return rows


def _uniform_checks(case, n_modes, tol):
    """The case with its defects removed against the closed forms (the same for every case
    of a beam: the validation report counts them once)."""
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.references import transfer
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    name = case.name
    L = case.beam.length
    uc = uniform_counterpart(case)
    pu = SectionProfile(uc)
    EI0, rhoA0 = float(pu.EI(0.0)), float(pu.rhoA(0.0))
    w_u, _ = transfer.uniform_static_tip(rhoA0 * case.load.g, L, EI0)
    lin = solve_static(BeamModel(uc.with_overrides({"mesh.strain": "linear"})))
    rows = [check(
        "uniform counterpart: linear tip deflection vs -q L^4 / (8 EI)", w_u, lin.tip_y,
        tol["static_rel"], note="m; defects removed", case=name)]  # fmt: skip
    nmu = min(3, n_modes)
    om_u = transfer.uniform_frequencies(L, EI0, rhoA0, nmu)
    om_anc = modal_analysis(BeamModel(uc), n_modes=nmu, about="reference").omega
    for k in range(nmu):
        rows.append(check(
            f"uniform counterpart: omega_{k + 1} vs (beta_k L)^2 sqrt(EI / rhoA) / L^2",
            om_u[k], om_anc[k], tol["frequency_rel"], note="rad/s; defects removed",
            case=name))  # fmt: skip
    return rows


def _dynamics_checks(case, static_ds, simulate_ds, tol, large, straight):
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    name = case.name
    drift = float(simulate_ds.attrs["energy_drift_rel"])
    key = "energy_drift_large" if large else "energy_drift"
    rows = [check(
        "explicit run: energy drift max|E - E0| / max T", 0.0, drift, tol[key], mode="abs",
        note=f"undamped central differences; tolerance {key}", case=name)]  # fmt: skip
    if large:  # no vibration about the static state, no linear superposition
        return rows
    ne_sim = int(simulate_ds.sizes["node"]) - 1
    sim_case = case if ne_sim == case.mesh.n_elements else case.with_overrides(
        {"mesh.n_elements": ne_sim})  # fmt: skip
    if sim_case is case:
        tip_static = float(static_ds["tip_y"])
    else:
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
    if straight:
        rows.append(_first_period_check(sim_case, t, y, tol))
    return rows


def _first_period_check(sim_case, t, y, tol):
    """Tip history over the first period of omega_1 vs the linear modal superposition of the
    same discrete model released from rest (all modes; independent of the time integrator)."""
    from ancf_beam.identify import TipHistoryModel

    tm = TipHistoryModel(sim_case, min_participation=0.0)
    lam, n = sim_case.defect.E.lam, sim_case.defect.E.n
    omega, _ = tm.modal(lam, n)
    sel = t <= 2 * math.pi / omega[0]
    y_lin = tm.tip_y(t[sel], lam, n)
    disp = float(np.max(np.abs(y[sel] - y[0])))
    return check(
        "explicit run: tip history over the first period vs linear modal superposition", 0.0,
        float(np.max(np.abs(y[sel] - y_lin))) / disp, tol["first_period_rel"], mode="abs",
        note=f"max |y - y_lin| / max |y - y0|; {omega.size} modes, {int(sel.sum())} samples",
        case=sim_case.name)  # fmt: skip


def _validation_dataset(case, rows, numbers, exact, p, om, om_tm, segments, tol, t0, large):
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
        stepped_omega=("mode", om_tm, {"units": "rad/s",
                                       "long_name": "stepped TM, Richardson N, 2N"}),
        ancf_omega=("mode", om, {"units": "rad/s"}),
    )  # fmt: skip
    ds = ds.assign_coords(mode=np.arange(1, om.size + 1))
    ds = ds.assign(numbers_dataset(numbers))
    ds.attrs.update(
        provenance_attrs(
            case,
            study="validation",
            segments=segments,
            n_checks=len(rows),
            n_pass=sum(r["status"] == "PASS" for r in rows),
            n_fail=sum(r["status"] != "PASS" for r in rows),
            straight_elastic_references=straight_elastic(case),
            large_deflection=int(large),
            wall_s=wall,
            **{f"tolerance.{k}": v for k, v in tol.items()},
        )
    )
    return ds


def numbers_dataset(numbers) -> xr.Dataset:
    """Reported numbers (not checks) along dimension ``number``: ``number_case``,
    ``number_name``, ``number_value``, ``number_unit``, ``number_note``."""

    def col(k, dtype):
        return np.array([r[k] for r in numbers], dtype=dtype) if numbers else np.array(
            [], dtype=dtype)  # fmt: skip

    return xr.Dataset({
        "number_case": ("number", col("case", object)),
        "number_name": ("number", col("quantity", object)),
        "number_value": ("number", col("value", float)),
        "number_unit": ("number", col("unit", object)),
        "number_note": ("number", col("note", object)),
    })  # fmt: skip


#: Tolerances of the damage-aware dynamic checks (see :func:`damage_dynamics_checks`), from
#: ``ancf_beam.config.PIPELINE_DEFAULTS['validation']``: the energy drift with a staggered damage
#: update, its observed order under dt -> dt/2, and the mean dynamic tip vs the static tip with
#: the final damage frozen.
DAMAGE_TOLERANCES: dict[str, float] = {
    k: PIPELINE_DEFAULTS["validation"]["tolerances"][k] for k in (*_DAMAGE_KEYS, "mean_tip_rel")
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
      0).

    ``dt = dynamics.dt_safety x dt_critical`` is asserted (:func:`assert_dt_safety`).
    """
    tol = dict(DAMAGE_TOLERANCES)
    tol.update({k: v for k, v in (tolerances or {}).items() if k in DAMAGE_TOLERANCES})
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
    assert_dt_safety(case, a)
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

    tol = {k: v for k, v in (tolerances or {}).items() if k not in _DAMAGE_KEYS}
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
