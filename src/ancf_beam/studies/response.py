"""Response study of one case: spectra, envelopes, beats and curvature concentration of the
static and dynamic results.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.io import provenance_attrs
from ancf_beam.kernel_cache import run_clock
from ancf_beam.specs import CaseSpec
from ancf_beam.studies.defects import (
    curved_linear_static_tip,
    damage_at,
    family_label,
    frozen_damage_model,
    gauss_positions,
    straight_elastic,
)

__all__ = ["run_response"]

_RESPONSE_UNITS = {
    "tip_y_mean": "m",
    "tip_y_min": "m",
    "tip_y_max": "m",
    "tip_amplitude": "m",
    "peak_hz": "Hz",
    "peak_omega": "rad/s",
    "spectral_resolution_hz": "Hz",
    "has_beat": "1",
    "beat_hz": "Hz",
    "beat_omega": "rad/s",
    "modulation_depth": "1",
    "beat_cycles": "1",
    "envelope_decay_rate": "1/s",
    "snapshot_time": "s",
}


_METRIC_UNITS = {
    "x_peak": "m",
    "kappa_peak": "1/m",
    "abs_kappa_peak": "1/m",
    "mean_abs_kappa": "1/m",
    "peak_to_mean": "1",
    "bending_energy": "J",
    "energy_fraction_inner": "1",
    "energy_fraction_outer": "1",
    "kappa_centroid": "m",
    "participation_length": "m",
    "participation_ratio": "1",
    "gini": "1",
}


def _profile_vars(prefix: str, prof, metrics: Mapping[str, float], dim: str) -> dict:
    out = {
        f"{prefix}X": (dim, prof.X, {"units": "m", "long_name": "reference position"}),
        f"{prefix}x": (dim, prof.x, {"units": "m"}),
        f"{prefix}y": (dim, prof.y, {"units": "m"}),
        f"{prefix}kappa": (dim, prof.kappa, {"units": "1/m", "long_name": "curvature"}),
        f"{prefix}kappa_ref": (
            dim,
            prof.kappa_ref,
            {"units": "1/m", "long_name": "reference curvature"},
        ),
        f"{prefix}dkappa": (
            dim,
            prof.dkappa,
            {"units": "1/m", "long_name": "curvature change kappa - kappa_ref"},
        ),
        f"{prefix}EI": (
            dim,
            prof.EI,
            {"units": "N m^2", "long_name": "effective EI (damage included)"},
        ),
        f"{prefix}moment": (dim, prof.moment, {"units": "N m", "long_name": "EI dkappa"}),
        f"{prefix}energy_density": (
            dim,
            prof.energy_density,
            {"units": "J/m", "long_name": "EI dkappa^2 / 2"},
        ),
    }
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
        ei = prof.EI * (1.0 - damage_at(model, damage, prof.X))
        prof = CurvatureProfile(
            X=prof.X, x=prof.x, y=prof.y, kappa=prof.kappa, kappa_ref=prof.kappa_ref, EI=ei
        )
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
    from ancf_beam.response import summarize_run

    t0 = run_clock()
    model = BeamModel(case.with_overrides({"mesh.n_elements": int(simulate_ds.sizes["node"]) - 1}))
    smodel = BeamModel(case)
    summ = summarize_run(simulate_ds, case=model.case)
    data = _summary_vars(summ)
    psd, coords = _spectrum_vars(simulate_ds, spectrum_fmax_hz)
    data["spectrum_psd"] = psd
    d_static = None
    if "damage" in static_ds:
        d_static = np.asarray(static_ds["damage"].values[-1], float)
    data.update(_static_vars(case, smodel, static_ds["q"].values, d_static, per_element))
    data.update(_dynamic_vars(model, simulate_ds, per_element))
    if case.damage.enabled:
        dvars, dcoords = _damage_vars(case, model, smodel, d_static, simulate_ds, n_modes)
        data.update(dvars)
        coords.update(dcoords)
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
            wall_s=run_clock() - t0,
        )
    )
    return ds


def _summary_vars(summ: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers of :func:`~ancf_beam.response.summarize_run` as scalar variables (None ->
    NaN; its text fields become attributes of the study)."""
    data: dict[str, Any] = {}
    for k, v in summ.items():
        if isinstance(v, str):
            continue
        val = math.nan if v is None else float(v)
        unit = _RESPONSE_UNITS.get(
            k, _METRIC_UNITS.get(k[5:], "1") if k.startswith("curv_") else "1"
        )
        data[k] = ((), val, {"units": unit, "long_name": f"summarize_run: {k}"})
    return data


def _spectrum_vars(simulate_ds: xr.Dataset, fmax_hz: float):
    """Welch PSD of the tip history up to ``fmax_hz`` and its frequency coordinates."""
    from ancf_beam.response import tip_spectrum

    spec = tip_spectrum(simulate_ds["time"].values, simulate_ds["tip_y"].values)
    keep = spec.f_hz <= fmax_hz
    psd = ("frequency", spec.psd[keep], {"units": "m^2/Hz", "long_name": "tip PSD (Welch, Hann)"})
    coords: dict[str, Any] = {
        "frequency": ("frequency", spec.f_hz[keep], {"units": "Hz"}),
        "omega_spectrum": ("frequency", spec.omega[keep], {"units": "rad/s"}),
    }
    return psd, coords


def _static_vars(case, smodel, q, d_static, per_element) -> dict[str, Any]:
    """Curvature distribution and concentration metrics at the static equilibrium ``q``
    (``static_*``), the stress-free reference shape and the linear curved-beam tip."""
    from ancf_beam.response import concentration_metrics

    sprof = _profile(smodel, q, d_static, per_element)
    smet = concentration_metrics(sprof.X, sprof.dkappa, sprof.EI)
    data = _profile_vars("static_", sprof, smet, "s_static")
    ref = smodel.sample(smodel.reference(), per_element=per_element)
    data["static_ref_x"] = (
        "s_static",
        ref["x"],
        {"units": "m", "long_name": "stress-free reference shape x"},
    )
    data["static_ref_y"] = (
        "s_static",
        ref["y"],
        {"units": "m", "long_name": "stress-free reference shape y"},
    )
    if d_static is None:  # undamaged: the same on a mesh four times finer (error estimates)
        data.update(_fine_static_vars(case, smodel, per_element))
    ldx, ldy = curved_linear_static_tip(case)
    for key, val, axis in (("linear_tip_dx", ldx, "x"), ("linear_tip_dy", ldy, "y")):
        data[key] = (
            (),
            val,
            {
                "units": "m",
                "long_name": f"tip displacement {axis}, linear "
                "inextensible quadrature (curved_linear_static_tip)",
            },
        )
    return data


def _fine_static_vars(case, smodel, per_element) -> dict[str, Any]:
    """The static curvature change on the mesh four times finer, at this mesh's sample points
    (``static_dkappa_fine``), and its concentration metrics (``static_*_fine``): the
    discretisation error estimates of the per-case report's curvature checks."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.response import concentration_metrics
    from ancf_beam.solvers.static import solve_static

    fine = BeamModel(case.with_overrides({"mesh.n_elements": 4 * smodel.n_el}))
    fprof = _profile(fine, solve_static(fine).q, None, per_element)
    fmet = concentration_metrics(fprof.X, fprof.dkappa, fprof.EI)
    data = {
        "static_dkappa_fine": (
            "s_static",
            fprof.dkappa[::4],
            {"units": "rad/m", "long_name": "curvature change on the mesh four times finer"},
        )
    }
    for k in ("peak_to_mean", "gini", "energy_fraction_inner"):
        data[f"static_{k}_fine"] = (
            (),
            float(fmet[k]),
            {"units": "1", "long_name": f"concentration metric {k}, mesh four times finer"},
        )
    return data


def _dynamic_vars(model, simulate_ds, per_element) -> dict[str, Any]:
    """Curvature distribution and metrics (``dyn_*``) at the snapshot of the run with the
    largest tip displacement from the first one."""
    from ancf_beam.response import concentration_metrics

    qs = np.asarray(simulate_ds["q_snapshot"].values, float)
    tipy = qs[:, -3]
    j = int(np.argmax(np.abs(tipy - tipy[0])))
    d_dyn = None
    if "damage" in simulate_ds:
        d_dyn = np.asarray(simulate_ds["damage"].values[j], float)
    dprof = _profile(model, qs[j], d_dyn, per_element)
    dmet = concentration_metrics(dprof.X, dprof.dkappa, dprof.EI)
    data = _profile_vars("dyn_", dprof, dmet, "s_dyn")
    data["dyn_snapshot_time"] = ((), float(simulate_ds["t_snapshot"].values[j]), {"units": "s"})
    return data


def _damage_vars(case, model, smodel, d_static, simulate_ds, n_modes):
    """Damage fields after the static loading and at the end of the run, and the first
    ``n_modes`` frequencies with each of them frozen; variables and their coordinates."""
    from ancf_beam.solvers.modal import modal_analysis

    d_final = np.asarray(simulate_ds["damage"].values[-1], float)
    om_s = modal_analysis(frozen_damage_model(case, d_static), n_modes=n_modes).omega
    om_d = modal_analysis(frozen_damage_model(model.case, d_final), n_modes=n_modes).omega
    data = {
        "damage_static": (
            ("gp",),
            d_static.ravel(),
            {"units": "1", "long_name": "damage after the static loading"},
        ),
        "damage_final": (
            ("gp_dyn",),
            d_final.ravel(),
            {"units": "1", "long_name": "damage at the end of the run"},
        ),
        "omega_damaged_static": (
            "mode",
            om_s,
            {"units": "rad/s", "long_name": "frequencies with the static damage frozen"},
        ),
        "omega_damaged_final": (
            "mode",
            om_d,
            {"units": "rad/s", "long_name": "frequencies with the run's final damage frozen"},
        ),
    }
    coords = {
        "x_gp": ("gp", gauss_positions(smodel).ravel(), {"units": "m"}),
        "x_gp_dyn": ("gp_dyn", gauss_positions(model).ravel(), {"units": "m"}),
        "mode": ("mode", np.arange(1, n_modes + 1)),
    }
    return data, coords
