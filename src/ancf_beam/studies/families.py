"""Pipeline studies of the defect families: response analysis per case, damage-aware checks and
the identification of synthetic defects from noisy frequencies.

Like :mod:`ancf_beam.studies.core`, these sit between the library and the Snakemake workflow (which
writes the returned :class:`xarray.Dataset` to NetCDF). SI units throughout.

* :func:`families` -- which defect families a case uses (``E``, ``table``, ``density``,
  ``width``, ``height``, ``imperfection``, ``damage``).
* :func:`straight_elastic` -- whether the straight linear-elastic references apply (no initial
  curvature, no damage), as in :func:`ancf_beam.studies.core.run_validation`.
* :func:`frozen_damage_model` -- a model of the case with a given damage field frozen (damage
  evolution off): the stiffness the beam has *after* a loading history.
* :func:`run_response` -- per case: :func:`ancf_beam.response.summarize_run` of the explicit run
  (spectrum peak, beat detection, envelope decay), the curvature distribution and its
  concentration metrics at the static equilibrium and at the snapshot of largest dynamic tip
  displacement, the tip spectrum, and for damage the damage fields and the frequencies of the
  damaged beam.
* :func:`damage_dynamics_checks`, :func:`run_family_validation` -- the validation study with the
  dynamic checks that apply to a damaged beam (see there).
* :func:`convergence_expected` -- whether a mesh-convergence order is expected for a case.
* :func:`run_identification_study` -- truth vs estimate of ``(lam, n)`` for a grid of synthetic
  defects from noisy natural frequencies (:func:`ancf_beam.identify.identify_from_frequencies`),
  with coverage of the reported uncertainties and negative controls.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.config import PIPELINE_DEFAULTS, CaseSpec
from ancf_beam.io import provenance_attrs

#: Tolerances of the damage-aware dynamic checks (see :func:`damage_dynamics_checks`), from
#: ``ancf_beam.config.PIPELINE_DEFAULTS['validation']``: the energy drift with a staggered damage
#: update, its observed order under dt -> dt/2, and the mean dynamic tip vs the static tip with
#: the final damage frozen.
DAMAGE_TOLERANCES: dict[str, float] = {
    k: PIPELINE_DEFAULTS["validation"]["tolerances"][k]
    for k in ("energy_drift_damage", "damage_energy_order_rel", "mean_tip_rel")
}


# --------------------------------------------------------------------------------------------
# case classification
# --------------------------------------------------------------------------------------------
def families(case: CaseSpec) -> list[str]:
    """Active defect families of ``case``: ``E`` (power law on the modulus), ``table``
    (measured profile on any property), ``density``, ``width``, ``height`` (power laws),
    ``imperfection`` (initially curved reference), ``damage``. Empty for the uniform beam."""
    flat = case.flat()
    out = []
    if float(flat.get("defect.lam", 0.0)) > 0:
        out.append("E")
    if any(flat.get(k) not in (None, "none") for k in flat if k.endswith("table")):
        out.append("table")
    for key, name in (("rho", "density"), ("width", "width"), ("height", "height")):
        if float(flat.get(f"defect.{key}.lam", 0.0)) > 0:
            out.append(name)
    imp = getattr(case, "imperfection", None)
    if imp is not None and imp.active:
        out.append("imperfection")
    if case.damage.enabled:
        out.append("damage")
    return out


def family_label(case: CaseSpec) -> str:
    """Short description of the families of ``case`` (``'uniform'`` when none)."""
    f = families(case)
    return "+".join(f) if f else "uniform"


def straight_elastic(case: CaseSpec) -> bool:
    """True when the straight linear-elastic references apply (no initial curvature, no
    damage); the same rule as :func:`ancf_beam.studies.core.run_validation`."""
    fam = families(case)
    return "imperfection" not in fam and "damage" not in fam


def convergence_expected(case: CaseSpec) -> tuple[bool, str]:
    """Whether a mesh-convergence order is expected for ``case``, and why not.

    Local strain-softening damage (``d`` grows with the strain at each integration point, and
    the stiffness falls) localises into the integration points of the most strained element:
    the damaged zone shrinks with the element and the static tip and frequencies depend on the
    mesh instead of converging (no regularisation). Every other family converges.
    """
    if case.damage.enabled:
        return False, (
            "local strain-softening damage localises in the most strained element: results "
            "depend on the mesh (no convergence expected without regularisation)"
        )
    return True, ""


def frozen_damage_model(case: CaseSpec, damage: np.ndarray):
    """:class:`~ancf_beam.beam.model.BeamModel` of ``case`` with damage evolution off and the damage
    field ``damage`` (``(n_el, n_gauss)``, as stored by the static and simulate studies) frozen:
    ``EA_eff = EA (1 - d)``, ``EI_eff = EI (1 - d)`` at every integration point."""
    from ancf_beam.beam.model import BeamModel

    model = BeamModel(case.with_overrides({"damage.enabled": False}))
    model.set_damage(np.asarray(damage, dtype=float))
    return model


def gauss_positions(model) -> np.ndarray:
    """Reference positions (m) of the bending integration points, shape ``(n_el, n_gauss)``."""
    from ancf_beam.beam.model import gauss01

    xi = gauss01(model.case.mesh.n_gauss_bending).xi
    return model.x_nodes[:-1, None] + xi[None, :] * model.le


def _damage_at(model, damage: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Damage interpolated linearly between the integration points at positions ``X`` (m)."""
    xg = gauss_positions(model).ravel()
    return np.interp(X, xg, np.asarray(damage, float).ravel())


def curved_linear_static_tip(case: CaseSpec, n: int = 4001) -> tuple[float, float]:
    """Linear (small-displacement, inextensible) tip displacement ``(dx, dy)`` (m) of the
    case's stress-free reference shape under its self-weight, by quadrature.

    The reference centre line ``(X(s), Y(s))`` (arc length ``s``; straight or initially curved,
    :mod:`ancf_beam.beam.imperfection`) carries ``q(s) = rho A g`` (N/m) downward. The bending
    moment is ``M(s) = int_s^L q(t) (X(t) - X(s)) dt``; the rotation it produces, ``dtheta =
    M / EI ds`` (clockwise for a downward load), turns the part beyond ``s`` about ``s``, so the
    tip moves by ``dx = int M/EI (Y(L) - Y(s)) ds`` and ``dy = -int M/EI (X(L) - X(s)) ds``.
    For a straight beam this is ``-q L^4 / 8 EI``; axial strain and the geometric nonlinearity
    are neglected. An independent reference for the ANCF statics of an initially curved beam.
    """
    from scipy.integrate import cumulative_trapezoid

    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.beam.imperfection import resolved_kappa0, tangent_angle

    p = SectionProfile(case)
    L = case.beam.length
    s_ = np.linspace(0.0, L, n)
    imp = getattr(case, "imperfection", None)
    if imp is not None and imp.active:
        th = tangent_angle(resolved_kappa0(imp, L), imp.profile, s_, L)
    else:
        th = np.zeros_like(s_)
    X = cumulative_trapezoid(np.cos(th), s_, initial=0.0)
    Y = cumulative_trapezoid(np.sin(th), s_, initial=0.0)
    q = np.asarray(p.q(s_), float) * np.ones_like(s_)
    # M(s) = int_s^L q (X(t) - X(s)) dt = Q1(s) - X(s) Q0(s), tail integrals
    q0 = cumulative_trapezoid(q[::-1], -s_[::-1], initial=0.0)[::-1]
    q1 = cumulative_trapezoid((q * X)[::-1], -s_[::-1], initial=0.0)[::-1]
    m = q1 - X * q0
    curv = m / np.asarray(p.EI(s_), float)
    dx = float(np.trapezoid(curv * (Y[-1] - Y), s_))
    dy = float(-np.trapezoid(curv * (X[-1] - X), s_))
    return dx, dy


# --------------------------------------------------------------------------------------------
# response study
# --------------------------------------------------------------------------------------------
_RESPONSE_UNITS = {
    "tip_y_mean": "m", "tip_y_min": "m", "tip_y_max": "m", "tip_amplitude": "m",
    "peak_hz": "Hz", "peak_omega": "rad/s", "spectral_resolution_hz": "Hz",
    "has_beat": "1", "beat_hz": "Hz", "beat_omega": "rad/s", "modulation_depth": "1",
    "beat_cycles": "1", "envelope_decay_rate": "1/s", "snapshot_time": "s",
}  # fmt: skip
_METRIC_UNITS = {
    "x_peak": "m", "kappa_peak": "1/m", "abs_kappa_peak": "1/m", "mean_abs_kappa": "1/m",
    "peak_to_mean": "1", "bending_energy": "J", "energy_fraction_inner": "1",
    "energy_fraction_outer": "1", "kappa_centroid": "m", "participation_length": "m",
    "participation_ratio": "1", "gini": "1",
}  # fmt: skip


def _profile_vars(prefix: str, prof, metrics: Mapping[str, float], dim: str) -> dict:
    out = {
        f"{prefix}X": (dim, prof.X, {"units": "m", "long_name": "reference position"}),
        f"{prefix}x": (dim, prof.x, {"units": "m"}),
        f"{prefix}y": (dim, prof.y, {"units": "m"}),
        f"{prefix}kappa": (dim, prof.kappa, {"units": "1/m", "long_name": "curvature"}),
        f"{prefix}kappa_ref": (dim, prof.kappa_ref,
                               {"units": "1/m", "long_name": "reference curvature"}),
        f"{prefix}dkappa": (dim, prof.dkappa,
                            {"units": "1/m", "long_name": "curvature change kappa - kappa_ref"}),
        f"{prefix}EI": (dim, prof.EI, {"units": "N m^2", "long_name": "effective EI (damage "
                                                                      "included)"}),
        f"{prefix}moment": (dim, prof.moment, {"units": "N m", "long_name": "EI dkappa"}),
        f"{prefix}energy_density": (dim, prof.energy_density,
                                    {"units": "J/m", "long_name": "EI dkappa^2 / 2"}),
    }  # fmt: skip
    for k, v in metrics.items():
        out[f"{prefix}{k}"] = (
            (),
            float(v) if v is not None else math.nan,
            {
                "units": _METRIC_UNITS.get(k, "1"),
                "long_name": f"concentration metric {k} (curvature change)",
            },
        )
    return out


def _profile(model, q, damage=None, per_element: int = 8):
    from ancf_beam.response import CurvatureProfile, curvature_distribution

    prof = curvature_distribution(model, q, per_element=per_element)
    if damage is not None:
        ei = prof.EI * (1.0 - _damage_at(model, damage, prof.X))
        prof = CurvatureProfile(X=prof.X, x=prof.x, y=prof.y, kappa=prof.kappa,
                                kappa_ref=prof.kappa_ref, EI=ei)  # fmt: skip
    return prof


def run_response(
    case: CaseSpec,
    static_ds: xr.Dataset,
    simulate_ds: xr.Dataset,
    n_modes: int = 3,
    per_element: int = 8,
    spectrum_fmax_hz: float = 500.0,
) -> xr.Dataset:
    """Response analysis of one case from its ``static`` and ``simulate`` results.

    * ``summarize_run`` of the explicit run (:func:`ancf_beam.response.summarize_run`): tip
      statistics, dominant tip frequency, beat detection, envelope decay rate; its curvature
      metrics as ``curv_*``; the text fields as attributes ``beat_reason``,
      ``curvature_source``;
    * the tip spectrum (Welch PSD over the whole record, :func:`~ancf_beam.response.tip_spectrum`)
      up to ``spectrum_fmax_hz``;
    * the curvature distribution (element curvature, :func:`~ancf_beam.response.
      curvature_distribution`) and :func:`~ancf_beam.response.concentration_metrics` of the
      curvature change at the static equilibrium (``static_*``) and at the snapshot of largest
      tip displacement of the run (``dyn_*``), with the effective ``EI (1 - d)`` when damage is
      on (the static damage after the last load step; the run's damage at that snapshot);
    * the linear inextensible tip displacement of the stress-free reference shape by quadrature
      (:func:`curved_linear_static_tip`; undamaged), ``linear_tip_dx``/``linear_tip_dy``;
    * with damage: the damage fields along the beam (static, and the run's final one), and the
      first ``n_modes`` frequencies of the beam with each of them frozen
      (:func:`frozen_damage_model`; the ``modal`` study gives the undamaged beam's).
    """
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.response import summarize_run, tip_spectrum
    from ancf_beam.solvers.modal import modal_analysis

    t0 = time.perf_counter()
    model = BeamModel(case.with_overrides({"mesh.n_elements": int(simulate_ds.sizes["node"]) - 1}))
    smodel = BeamModel(case)
    summ = summarize_run(simulate_ds, case=model.case)
    data: dict[str, Any] = {}
    for k, v in summ.items():
        if isinstance(v, str):
            continue
        val = math.nan if v is None else float(v)
        unit = _RESPONSE_UNITS.get(k, _METRIC_UNITS.get(k[5:], "1") if k.startswith("curv_")
                                   else "1")  # fmt: skip
        data[k] = ((), val, {"units": unit, "long_name": f"summarize_run: {k}"})
    t = simulate_ds["time"].values
    y = simulate_ds["tip_y"].values
    spec = tip_spectrum(t, y)
    keep = spec.f_hz <= spectrum_fmax_hz
    data["spectrum_psd"] = (
        "frequency",
        spec.psd[keep],
        {"units": "m^2/Hz", "long_name": "tip PSD (Welch, Hann)"},
    )

    d_static = None
    if "damage" in static_ds:
        d_static = np.asarray(static_ds["damage"].values[-1], float)
    sprof = _profile(smodel, static_ds["q"].values, d_static, per_element)
    from ancf_beam.response import concentration_metrics

    smet = concentration_metrics(sprof.X, sprof.dkappa, sprof.EI)
    data.update(_profile_vars("static_", sprof, smet, "s_static"))
    ref = smodel.sample(smodel.reference(), per_element=per_element)
    data["static_ref_x"] = ("s_static", ref["x"], {"units": "m", "long_name": "stress-free "
                                                   "reference shape x"})  # fmt: skip
    data["static_ref_y"] = ("s_static", ref["y"], {"units": "m", "long_name": "stress-free "
                                                   "reference shape y"})  # fmt: skip
    ldx, ldy = curved_linear_static_tip(case)
    data["linear_tip_dx"] = (
        (),
        ldx,
        {
            "units": "m",
            "long_name": "tip displacement x, linear "
            "inextensible quadrature (curved_linear_static_tip)",
        },
    )
    data["linear_tip_dy"] = (
        (),
        ldy,
        {
            "units": "m",
            "long_name": "tip displacement y, linear "
            "inextensible quadrature (curved_linear_static_tip)",
        },
    )

    qs = np.asarray(simulate_ds["q_snapshot"].values, float)
    tipy = qs[:, -3]
    j = int(np.argmax(np.abs(tipy - tipy[0])))
    d_dyn = None
    if "damage" in simulate_ds:
        d_dyn = np.asarray(simulate_ds["damage"].values[j], float)
    dprof = _profile(model, qs[j], d_dyn, per_element)
    dmet = concentration_metrics(dprof.X, dprof.dkappa, dprof.EI)
    data.update(_profile_vars("dyn_", dprof, dmet, "s_dyn"))
    data["dyn_snapshot_time"] = ((), float(simulate_ds["t_snapshot"].values[j]), {"units": "s"})

    coords: dict[str, Any] = {
        "frequency": ("frequency", spec.f_hz[keep], {"units": "Hz"}),
        "omega_spectrum": ("frequency", spec.omega[keep], {"units": "rad/s"}),
    }
    if case.damage.enabled:
        d_final = np.asarray(simulate_ds["damage"].values[-1], float)
        data["damage_static"] = (
            ("gp",),
            d_static.ravel(),
            {"units": "1", "long_name": "damage after the static loading"},
        )
        data["damage_final"] = (
            ("gp_dyn",),
            d_final.ravel(),
            {"units": "1", "long_name": "damage at the end of the run"},
        )
        coords["x_gp"] = ("gp", gauss_positions(smodel).ravel(), {"units": "m"})
        coords["x_gp_dyn"] = ("gp_dyn", gauss_positions(model).ravel(), {"units": "m"})
        om_s = modal_analysis(frozen_damage_model(case, d_static), n_modes=n_modes).omega
        om_d = modal_analysis(frozen_damage_model(model.case, d_final), n_modes=n_modes).omega
        data["omega_damaged_static"] = (
            "mode",
            om_s,
            {"units": "rad/s", "long_name": "frequencies with the static damage frozen"},
        )
        data["omega_damaged_final"] = (
            "mode",
            om_d,
            {"units": "rad/s", "long_name": "frequencies with the run's final damage frozen"},
        )
        coords["mode"] = ("mode", np.arange(1, n_modes + 1))
    ds = xr.Dataset(data, coords=coords)
    ds.attrs.update(
        provenance_attrs(
            case,
            study="response",
            families=family_label(case),
            straight_elastic=straight_elastic(case),
            beat_reason=str(summ.get("beat_reason", "")),
            curvature_source=str(summ.get("curvature_source", "")),
            sim_n_elements=model.n_el,
            per_element=per_element,
            wall_s=time.perf_counter() - t0,
        )
    )
    return ds


# --------------------------------------------------------------------------------------------
# damage-aware validation
# --------------------------------------------------------------------------------------------
def damage_dynamics_checks(
    case: CaseSpec,
    simulate_ds: xr.Dataset,
    tolerances: Mapping[str, float] | None = None,
    order_t_end: float | None = None,
) -> list[dict[str, Any]]:
    """Checks of the explicit run of a case with damage (rows of :func:`~.core.check`).

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
    from ancf_beam.analyses import run_simulate
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static
    from ancf_beam.studies.core import check, whole_period_mean

    tol = dict(DAMAGE_TOLERANCES)
    tol.update({k: v for k, v in (tolerances or {}).items() if k in DAMAGE_TOLERANCES})
    dt_safety_rel = float((tolerances or {}).get("dt_safety_rel", 1e-9))
    name = case.name
    a = simulate_ds.attrs
    rows = []
    drift = float(a["energy_drift_rel"])
    rows.append(
        check(
            "explicit run with damage: energy drift max|E - E0| / max T",
            0.0,
            drift,
            tol["energy_drift_damage"],
            mode="abs",
            note="released energy counted as dissipated; staggered update: O(dt)",
            case=name,
        )
    )
    ne = int(simulate_ds.sizes["node"]) - 1
    sim_case = case.with_overrides({"mesh.n_elements": ne})
    dt = float(a["dt"])
    dt_cr = float(a["dt_critical"])
    t_short = float(order_t_end) if order_t_end is not None else min(0.25, float(a["t_end"]))
    drifts = []
    for h in (dt, 0.5 * dt):
        s, _ = run_simulate(sim_case, dt=h, dt_critical=dt_cr, t_end=t_short, progress=False)
        drifts.append(float(s["energy_drift_rel"]))
    order = math.log(drifts[0] / drifts[1]) / math.log(2.0) if drifts[1] > 0 else math.nan
    rows.append(check(
        f"damage energy drift: observed order under dt -> dt/2 (first {t_short:g} s)", 1.0,
        order, tol["damage_energy_order_rel"],
        note=f"drift {drifts[0]:.3g} at dt, {drifts[1]:.3g} at dt/2", case=name))  # fmt: skip
    d_final = np.asarray(simulate_ds["damage"].values[-1], float)
    frozen = frozen_damage_model(sim_case, d_final)
    tip_frozen = solve_static(frozen).tip_y
    w1 = float(modal_analysis(frozen, n_modes=1, about="reference").omega[0])
    t = simulate_ds["time"].values
    y = simulate_ds["tip_y"].values
    mean, nper = whole_period_mean(t, y, 2 * math.pi / w1)
    rows.append(
        check(
            "explicit run with damage: mean tip over whole periods (2nd half) vs static tip with "
            "the final damage frozen",
            tip_frozen,
            mean,
            tol["mean_tip_rel"],
            note=f"m; {nper} periods of the damaged omega_1 = {w1:.4g} rad/s",
            case=name,
        )
    )
    dmg = np.asarray(simulate_ds["damage"].values, float)
    decrease = float(np.max(dmg[:-1] - dmg[1:])) if dmg.shape[0] > 1 else 0.0
    rows.append(check(
        "damage irreversible: largest decrease between snapshots", 0.0, max(decrease, 0.0), 0.0,
        mode="abs", note=f"max damage {dmg.max():.3g}", case=name))  # fmt: skip
    if case.dynamics.dt is None:
        rows.append(check(
            "explicit run: dt / dt_critical = dynamics.dt_safety", case.dynamics.dt_safety,
            dt / dt_cr, dt_safety_rel, note="dt_critical read from the critical_dt result",
            case=name))  # fmt: skip
    return rows


def extend_checks(ds: xr.Dataset, rows: Sequence[Mapping[str, Any]], **attrs) -> xr.Dataset:
    """A check Dataset (:func:`ancf_beam.studies.core.checks_dataset` layout, e.g. from
    :func:`~ancf_beam.studies.core.run_validation`) with ``rows`` appended; the other variables and
    the attributes are kept, ``n_checks``/``n_pass``/``n_fail`` recounted."""
    from ancf_beam.studies.core import checks_dataset

    old = [
        {"case": c, "check": n, "reference": r, "computed": v, "rel_error": e, "tolerance": t,
         "mode": m, "status": s, "note": no}
        for c, n, r, v, e, t, m, s, no in zip(
            ds["case"].values, ds["name"].values, ds["reference"].values, ds["computed"].values,
            ds["rel_error"].values, ds["tolerance"].values, ds["check_mode"].values,
            ds["status"].values, ds["note"].values, strict=True)
    ]  # fmt: skip
    new = checks_dataset([*old, *rows])
    keep = ds.drop_vars([v for v in new.data_vars if v in ds] + ["check"], errors="ignore")
    out = xr.merge([new, keep], combine_attrs="override")
    out.attrs = dict(ds.attrs)
    out.attrs.update(new.attrs)
    out.attrs.update(attrs)
    return out


def run_family_validation(
    case: CaseSpec,
    static_ds: xr.Dataset,
    modal_ds: xr.Dataset,
    simulate_ds: xr.Dataset | None = None,
    tolerances: Mapping[str, float] | None = None,
    segments: int | None = None,
) -> xr.Dataset:
    """:func:`ancf_beam.studies.core.run_validation`, with the dynamic checks of a damaged case
    replaced by :func:`damage_dynamics_checks` (attribute ``dynamics_checks``: ``'elastic'`` or
    ``'damage'``). Cases without damage get exactly ``run_validation``'s table."""
    from ancf_beam.studies.core import run_validation

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


# --------------------------------------------------------------------------------------------
# identification study
# --------------------------------------------------------------------------------------------
def coverage_tolerance(n: int, nominal: float, alpha: float = 1e-3) -> float:
    """Relative shortfall of an observed coverage below ``nominal`` that ``n`` Bernoulli trials
    still explain at level ``alpha``: ``(nominal - k/n) / nominal`` with ``k`` the largest count
    whose lower binomial tail ``P(X <= k)`` is below ``alpha`` (plus one). A coverage check
    ``observed >= nominal (1 - tol)`` then fails with probability below ``alpha`` when the
    uncertainties are right."""
    from scipy.stats import binom

    if n <= 0:
        return 1.0
    k = int(binom.ppf(alpha, n, nominal))  # smallest k with P(X <= k) >= alpha
    return max(0.0, (nominal - k / n) / nominal)


def run_identification_study(
    case: CaseSpec,
    lam_values: Sequence[float],
    n_values: Sequence[float],
    draws: int = 3,
    sigma_rel: float = 0.005,
    n_modes: int = 3,
    seed: int = 12345,
    truth_mesh: int | None = None,
    controls: bool = True,
) -> xr.Dataset:
    """Identification of synthetic defects ``E(x) = E0 (1 - lam (x/L)^n)`` from noisy frequencies.

    The forward model is ``case`` (beam, section, density, mesh, mapping; its own
    ``defect.lam``/``defect.n`` are only a starting point). For every ``(lam, n)`` of the grid
    ``lam_values x n_values`` the "measured" frequencies are the first ``n_modes`` bending
    frequencies of the same beam on a finer mesh ``truth_mesh`` (default twice the case's, so
    the data do not come from the forward model itself), multiplied by ``1 + sigma_rel z`` with
    ``z`` standard normal, ``draws`` seeded draws each (``numpy.random.default_rng(seed)``; the
    draws are reproducible). Each draw is identified by
    :func:`ancf_beam.identify.identify_from_frequencies` with ``sigma_rel`` given; the noise-free
    frequencies are identified as well (estimator bias). Negative controls (when ``controls``):
    ``lam = 0`` (the uniform beam: ``n`` is not determined) and a single frequency (one datum for
    two parameters), each with ``draws`` draws.

    Returns a Dataset over ``(truth, draw)`` with the truth, the estimates, standard
    uncertainties, identifiable flags and standardized errors ``(estimate - truth) / std``, the
    noise-free estimates over ``truth``, and the controls over ``(control, draw)``; attributes
    hold the coverage of the 1- and 2-sigma intervals over the identifiable estimates.
    """
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.identify import FrequencyModel, identify_from_frequencies
    from ancf_beam.solvers.modal import modal_analysis

    t0 = time.perf_counter()
    truth_mesh = 2 * case.mesh.n_elements if truth_mesh is None else int(truth_mesh)
    rng = np.random.default_rng(seed)
    grid = [(float(la), float(nn)) for la in lam_values for nn in n_values]
    fm = FrequencyModel(case, n_modes)

    def truth_omega(lam, n, k):
        c = case.with_overrides({"defect.lam": lam, "defect.n": n, "mesh.n_elements": truth_mesh,
                                 "modal.n_modes": k})  # fmt: skip
        return modal_analysis(BeamModel(c), n_modes=k, about="reference").omega[:k]

    def ident(om, k=n_modes):
        r = identify_from_frequencies(case, om, sigma_rel=sigma_rel, model=fm if k == n_modes
                                      else FrequencyModel(case, k, eigen=fm.eigen))  # fmt: skip
        return [
            r.lam,
            r.lam_std,
            r.n,
            r.n_std,
            float(r.identifiable),
            r.residual,
            r.cond,
        ], r.message

    keys = ["lam_est", "lam_std", "n_est", "n_std", "identifiable", "residual", "cond"]
    est = np.full((len(grid), draws, len(keys)), np.nan)
    msgs = np.empty((len(grid), draws), dtype=object)
    clean = np.full((len(grid), len(keys)), np.nan)
    om_true = np.zeros((len(grid), n_modes))
    om_meas = np.zeros((len(grid), draws, n_modes))
    for i, (la, nn) in enumerate(grid):
        om = truth_omega(la, nn, n_modes)
        om_true[i] = om
        clean[i], _ = ident(om)
        for j in range(draws):
            noisy = om * (1.0 + sigma_rel * rng.standard_normal(n_modes))
            om_meas[i, j] = noisy
            est[i, j], msgs[i, j] = ident(noisy)

    data: dict[str, Any] = {}
    units = {"lam_est": "1", "lam_std": "1", "n_est": "1", "n_std": "1", "identifiable": "1",
             "residual": "1", "cond": "1"}  # fmt: skip
    for k, key in enumerate(keys):
        data[key] = (("truth", "draw"), est[:, :, k], {"units": units[key]})
        data[f"clean_{key}"] = (
            "truth",
            clean[:, k],
            {"units": units[key], "long_name": f"{key}, noise-free data"},
        )
    data["message"] = (("truth", "draw"), msgs)
    lam_t = np.array([g[0] for g in grid])
    n_t = np.array([g[1] for g in grid])
    data["lam_z"] = (
        ("truth", "draw"),
        (est[:, :, 0] - lam_t[:, None]) / est[:, :, 1],
        {"units": "1", "long_name": "(lam_est - lam) / lam_std"},
    )
    data["n_z"] = (
        ("truth", "draw"),
        (est[:, :, 2] - n_t[:, None]) / est[:, :, 3],
        {"units": "1", "long_name": "(n_est - n) / n_std"},
    )
    data["omega_true"] = (("truth", "mode"), om_true, {"units": "rad/s"})
    data["omega_measured"] = (("truth", "draw", "mode"), om_meas, {"units": "rad/s"})

    coords: dict[str, Any] = {
        "truth": ("truth", np.arange(len(grid))),
        "lam_true": ("truth", lam_t, {"units": "1"}),
        "n_true": ("truth", n_t, {"units": "1"}),
        "draw": ("draw", np.arange(draws)),
        "mode": ("mode", np.arange(1, n_modes + 1)),
    }
    if controls:
        ctrl_names = ["lam = 0 (uniform beam)", "single frequency"]
        la_c, n_c = float(np.median(lam_values)), float(np.median(n_values))
        cest = np.full((2, draws, len(keys)), np.nan)
        cmsg = np.empty((2, draws), dtype=object)
        om0 = truth_omega(0.0, n_c, n_modes)
        om1 = truth_omega(la_c, n_c, n_modes)
        for j in range(draws):
            noisy = om0 * (1.0 + sigma_rel * rng.standard_normal(n_modes))
            cest[0, j], cmsg[0, j] = ident(noisy)
            noisy1 = om1[:1] * (1.0 + sigma_rel * rng.standard_normal(1))
            cest[1, j], cmsg[1, j] = ident(noisy1, k=1)
        for k, key in enumerate(keys):
            data[f"control_{key}"] = (("control", "draw"), cest[:, :, k], {"units": units[key]})
        data["control_message"] = (("control", "draw"), cmsg)
        coords["control"] = ("control", np.array(ctrl_names, dtype=object))
        coords["control_lam_true"] = ("control", np.array([0.0, la_c]), {"units": "1"})
        coords["control_n_true"] = ("control", np.array([n_c, n_c]), {"units": "1"})
        coords["control_n_modes"] = ("control", np.array([n_modes, 1]), {"units": "1"})

    ok = est[:, :, 4] > 0.5
    zl = np.abs(data["lam_z"][1][ok])
    zn = np.abs(data["n_z"][1][ok])
    n_ok = int(ok.sum())
    cov1 = float(np.mean((zl <= 1) & (zn <= 1))) if n_ok else math.nan
    cov2_l = float(np.mean(zl <= 2)) if n_ok else math.nan
    cov2_n = float(np.mean(zn <= 2)) if n_ok else math.nan
    cov1_l = float(np.mean(zl <= 1)) if n_ok else math.nan
    cov1_n = float(np.mean(zn <= 1)) if n_ok else math.nan
    ds = xr.Dataset(data, coords=coords)
    ds.attrs.update(
        provenance_attrs(
            case,
            study="identification",
            method="frequencies",
            sigma_rel=sigma_rel,
            n_modes=n_modes,
            draws=draws,
            seed=seed,
            truth_mesh=truth_mesh,
            forward_mesh=case.mesh.n_elements,
            lam_values=",".join(f"{v:g}" for v in lam_values),
            n_values=",".join(f"{v:g}" for v in n_values),
            n_estimates=int(est.shape[0] * est.shape[1]),
            n_identifiable=n_ok,
            coverage_1sigma_lam=cov1_l,
            coverage_1sigma_n=cov1_n,
            coverage_1sigma_both=cov1,
            coverage_2sigma_lam=cov2_l,
            coverage_2sigma_n=cov2_n,
            wall_s=time.perf_counter() - t0,
        )
    )
    return ds
