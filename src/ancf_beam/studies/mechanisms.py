"""Mechanism studies of the pipeline (docs/design.md section 7): the checks of every mechanism case
against independent references, the clearance sweep, the contact-law comparison and the
flagship study (a graded, possibly damaging ANCF connecting rod in a crank-slider with a
clearance joint).

References (none of them uses the multibody code):

* slider-crank with ideal joints: closed-form kinematics and Newton-Euler inverse dynamics
  (:mod:`ancf_beam.references.mechanism`); an ANCF rod through its *rigid limit* (the same case
  with ``E0 = 1e15`` Pa against the rigid closed forms, a uniform rod of mass ``rho A L`` and
  inertia ``m L^2 / 12``); the work of the drive ``int tau omega dt`` against the change of the
  total energy (kinetic + potential + dissipated, the contact's included);
* clearance joint: with a rigid rod the slider can leave its ideal position by at most the bound
  ``|x - x_ideal| <= e_max l / sqrt(l^2 - r^2) + e_max^2 / sqrt(l^2 - r^2)`` (journal offset
  ``e_max = c + delta_max`` in its bearing, first and second order in ``e``); the sweep:
  the deviation from the ideal joint shrinks with the clearance ``c``;
* two-body impact: :mod:`ancf_beam.references.impact` (closed-form Kelvin-Voigt, independent
  high-accuracy integration of every law);
* pendulum (no drive): the energy balance.

All times in s, lengths in m, forces in N, accelerations in m/s^2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.config import MechanismSpec
from ancf_beam.io import provenance_attrs
from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.references.impact import integrate_impact, kelvin_voigt
from ancf_beam.references.mechanism import (
    slider_crank_inverse_dynamics,
    slider_crank_kinematics,
)
from ancf_beam.studies.checks import check, checks_dataset, report_tolerances

__all__ = [
    "RIGID_LIMIT_E0",
    "clearance_sweep_checks",
    "contact_laws_checks",
    "flagship_checks",
    "ideal_slider_crank",
    "mechanism_checks",
    "run_clearance_sweep",
    "run_contact_laws",
    "run_flagship",
    "run_mechanism_validation",
]

#: Young's modulus (Pa) of the rigid-limit run of an ANCF connecting rod (the config's bound)
RIGID_LIMIT_E0 = 1.0e15
#: share of the run skipped before comparing an ANCF rod with the rigid closed forms: the rod
#: starts undeformed at the rigid-body velocities, its strain builds up over the first steps
STARTUP_SHARE = 0.1


def _rigid_rod(spec: MechanismSpec) -> tuple[float, float, float, bool]:
    """``(length, mass, centroidal inertia, uniform)`` of the connecting rod; an ANCF rod as a
    rigid bar of its length (``uniform``: density and section without gradients, so that the
    bar's centre of mass is at mid-length and ``J = m L^2 / 12``)."""
    if spec.beam is None:
        return spec.rod.length, spec.rod.mass, spec.rod.inertia, True
    b = spec.beam
    d = b.defect
    graded = any(g.lam != 0.0 or g.table is not None for g in (d.rho, d.width, d.height))
    uniform = not graded and not b.imperfection.active
    L = b.beam.length
    m = b.material.rho * b.beam.width * b.beam.height * L
    return L, m, m * L * L / 12.0, uniform


def ideal_slider_crank(spec: MechanismSpec, t) -> dict[str, np.ndarray]:
    """The ideal rigid slider-crank of ``spec`` at times ``t``: slider ``x``, ``v``, ``a``
    (closed form), ``torque`` and joint forces (inverse dynamics; the rod as a rigid bar)."""
    L, m, J, _ = _rigid_rod(spec)
    k = slider_crank_kinematics(t, spec.crank.length, L, spec.omega)
    dyn = slider_crank_inverse_dynamics(t, spec.crank.length, L, spec.omega,
                                        m_crank=spec.crank.mass, m_rod=m, j_rod=J,
                                        m_slider=spec.slider.mass, g=spec.g)  # fmt: skip
    return {**k, **dyn}


def _max_rel(computed, reference) -> float:
    """``max |computed - reference| / max |reference|``."""
    return float(np.max(np.abs(computed - reference)) / np.max(np.abs(reference)))


def _drive_work_error(ds: xr.Dataset, omega: float) -> float:
    """``max |(E - E0) - int tau omega dt| / max T`` over the samples (trapezoidal work)."""
    from scipy.integrate import cumulative_trapezoid

    t = ds["time"].values
    work = cumulative_trapezoid(ds["drive_torque"].values * omega, t, initial=0.0)
    e = ds["energy_total"].values - ds["energy_total"].values[0]
    return float(np.max(np.abs(e - work)) / ds["kinetic_energy"].max())


def _slider_crank_rows(spec, ds, tol, rigid_limit):
    case = spec.name
    t = ds["time"].values
    ref = ideal_slider_crank(spec, t)
    rows = []
    cl = spec.clearance
    if cl is None and spec.beam is None:
        for v, unit in (("x", "m"), ("v", "m/s"), ("a", "m/s^2")):
            rows.append(
                check(
                    f"slider {v} vs closed-form kinematics (max error / max |ref|)",
                    0.0,
                    _max_rel(ds[f"slider_{v}"].values, ref[v]),
                    tol["kinematics_rel"],
                    mode="abs",
                    note=unit,
                    case=case,
                )
            )
        rows.append(
            check(
                "drive torque vs Newton-Euler inverse dynamics",
                0.0,
                _max_rel(ds["drive_torque"].values, ref["torque"]),
                tol["inverse_dynamics_rel"],
                mode="abs",
                note="N m",
                case=case,
            )
        )
        for j in ds["joint"].values:
            j = str(j)
            rows.append(
                check(
                    f"{j} force vs inverse dynamics",
                    0.0,
                    _max_rel(ds["reaction_force"].sel(joint=j).values, ref[j]),
                    tol["inverse_dynamics_rel"],
                    mode="abs",
                    note="N",
                    case=case,
                )
            )
    if rigid_limit is not None:
        tr = rigid_limit["time"].values
        keep = tr >= STARTUP_SHARE * tr[-1]
        rr = ideal_slider_crank(spec, tr)
        note = (f"E0 = {RIGID_LIMIT_E0:g} Pa; t >= {STARTUP_SHARE:g} t_end (the rod starts "
                "undeformed)")  # fmt: skip
        for v in ("x", "v", "a"):
            rows.append(
                check(
                    f"rigid limit: slider {v} vs closed form",
                    0.0,
                    _max_rel(rigid_limit[f"slider_{v}"].values[keep], rr[v][keep]),
                    tol["rigid_limit_rel"],
                    mode="abs",
                    note=note,
                    case=case,
                )
            )
        rows.append(
            check(
                "rigid limit: drive torque vs inverse dynamics",
                0.0,
                _max_rel(rigid_limit["drive_torque"].values[keep], rr["torque"][keep]),
                tol["rigid_limit_torque_rel"],
                mode="abs",
                note=note,
                case=case,
            )
        )
    key = ("drive_work_contact_rel" if cl is not None else "drive_work_flexible_rel"
           if spec.beam is not None else "drive_work_rel")  # fmt: skip
    rows.append(
        check(
            "energy change vs drive work int(tau omega dt) (/ max T)",
            0.0,
            _drive_work_error(ds, spec.omega),
            tol[key],
            mode="abs",
            note="trapezoidal work on the samples",
            case=case,
        )
    )
    if cl is not None and spec.beam is None:  # the bound holds for a rigid rod
        c = cl.radial_clearance
        L = _rigid_rod(spec)[0]
        dmin = math.sqrt(L * L - spec.crank.length**2)
        ecc = np.hypot(ds["eccentricity_x"].values, ds["eccentricity_y"].values).max()
        bound = ecc * L / dmin + ecc * ecc / dmin
        dev = float(np.max(np.abs(ds["slider_x"].values - ref["x"])))
        rows.append(
            check(
                "clearance: max |x - x_ideal| within the geometric bound",
                bound,
                dev,
                tol["clearance_bound_rel"],
                mode="max",
                note=f"m; e_max = {ecc:.4g} m (c = {c:.4g} m)",
                case=case,
            )
        )
    return rows


def _two_body_reference(spec: MechanismSpec) -> dict[str, float]:
    law = spec.contact
    m, v0 = spec.m_eff, spec.v_rel
    if law.law == "kelvin-voigt":
        r = kelvin_voigt(m, law.stiffness, law.damping, v0)["clipped"]
        r["source"] = "closed-form Kelvin-Voigt (force never tensile)"
        return r
    r = integrate_impact(law.law, m, v0, K=law.stiffness, n=law.exponent,
                         restitution=law.restitution)  # fmt: skip
    r["source"] = "independent 1-DOF integration (DOP853, rtol 1e-12)"
    return r


def _two_body_rows(spec, ds, tol):
    s = _two_body_scalars(spec, ds)
    ref = _two_body_reference(spec)
    rows = []
    for name, key, unit in (("restitution", "restitution", "1"),
                            ("contact duration", "duration", "s"),
                            ("max penetration", "max_penetration", "m"),
                            ("max contact force", "max_force", "N")):  # fmt: skip
        rows.append(
            check(
                f"impact {name} vs reference",
                ref[key],
                s[key],
                tol["impact_rel"],
                note=f"{unit}; {ref['source']}",
                case=spec.name,
            )
        )
    return rows


def _two_body_scalars(spec: MechanismSpec, ds: xr.Dataset) -> dict[str, float]:
    """The impact's outcome from a two-body Dataset (its attributes hold the run's summary)."""
    a = ds.attrs
    return {k: float(a[f"summary.{k2}"]) for k, k2 in (
        ("restitution", "restitution"), ("duration", "contact_duration"),
        ("max_penetration", "max_penetration"), ("max_force", "max_contact_force"))}  # fmt: skip


def mechanism_checks(
    spec: MechanismSpec,
    ds: xr.Dataset,
    tolerances: Mapping[str, float] | None = None,
    rigid_limit: xr.Dataset | None = None,
) -> list[dict[str, Any]]:
    """Checks of one mechanism case (``ds``: its run, :func:`~ancf_beam.mbs.analysis.
    run_mechanism`, with the summary stored as ``summary.*`` attributes; ``rigid_limit``: the
    ANCF rod's run at ``E0 = RIGID_LIMIT_E0``); thresholds ``pipeline.mechanisms.tolerances``."""
    tol = report_tolerances("mechanisms", tolerances)
    rows = [check("position constraint violation max |Phi|", 0.0,
                  float(ds["constraint_violation"].max()), tol["constraint_abs"], mode="abs",
                  note="m (rad for angle equations)", case=spec.name)]  # fmt: skip
    if spec.kind == "slider-crank":
        rows += _slider_crank_rows(spec, ds, tol, rigid_limit)
    elif spec.kind == "two-body":
        rows += _two_body_rows(spec, ds, tol)
    else:
        e = ds["energy_total"].values
        drift = float(np.max(np.abs(e - e[0])) / ds["kinetic_energy"].max())
        rows.append(check("energy balance max|E - E0| / max T (no drive)", 0.0, drift,
                          tol["energy_drift_abs"], mode="abs",
                          note=f"{spec.integrator}, numerical dissipation included",
                          case=spec.name))  # fmt: skip
    return rows


def needs_rigid_limit(spec: MechanismSpec) -> bool:
    """An ANCF connecting rod with ideal joints and uniform mass: its rigid limit is checked."""
    return (spec.kind == "slider-crank" and spec.beam is not None and spec.clearance is None
            and _rigid_rod(spec)[3])  # fmt: skip


def run_mechanism_validation(
    spec: MechanismSpec, ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> xr.Dataset:
    """The check table of one mechanism case (``checks_dataset`` layout) with, for a
    slider-crank, the ideal references on the run's time axis (``x_ideal``, ``v_ideal``,
    ``a_ideal``, ``torque_ideal``, ``reaction_ideal`` (time x joint)) for the report; an ANCF rod
    with ideal joints is run again at ``E0 = RIGID_LIMIT_E0`` (its rigid limit)."""
    rigid = None
    if needs_rigid_limit(spec):
        stiff = spec.with_overrides(
            {"rod.material.E0": RIGID_LIMIT_E0, "rod.damage.enabled": False}
        )
        _, rigid = run_mechanism(stiff)
    out = checks_dataset(mechanism_checks(spec, ds, tolerances, rigid))
    if spec.kind == "slider-crank":
        t = ds["time"].values
        ref = ideal_slider_crank(spec, t)
        joints = [str(j) for j in ds["joint"].values]
        out = out.assign_coords(time=("time", t, {"units": "s"}), joint=("joint", joints))
        out["x_ideal"] = ("time", ref["x"], {"units": "m"})
        out["v_ideal"] = ("time", ref["v"], {"units": "m/s"})
        out["a_ideal"] = ("time", ref["a"], {"units": "m/s^2"})
        out["torque_ideal"] = ("time", ref["torque"], {"units": "N m"})
        out["reaction_ideal"] = (
            ("time", "joint"),
            np.stack([ref[j] for j in joints], axis=-1),
            {"units": "N", "long_name": "joint force, rigid inverse dynamics"},
        )
    out.attrs.update(provenance_attrs(spec, study="mechanism_validation", kind=spec.kind))
    out.attrs["rigid_limit"] = int(rigid is not None)
    return out


def summary_attrs(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A run summary as NetCDF attributes ``summary.KEY`` (None as ``'null'``)."""
    out = {}
    for k, v in summary.items():
        if isinstance(v, bool):
            v = int(v)
        out[f"summary.{k}"] = "null" if v is None else v
    return out


# --------------------------------------------------------------------------------------------
# clearance sweep
# --------------------------------------------------------------------------------------------
def run_clearance_sweep(spec: MechanismSpec, clearances: Sequence[float]) -> xr.Dataset:
    """The clearance case ``spec`` with radial clearance ``c`` in ``clearances`` (m; the journal
    radius changes, the bearing stays): per ``c`` the slider's deviation from the ideal joint
    (``dx_max`` m, ``dv_rms_rel``, ``da_rms_rel``: RMS of the deviation / RMS of the ideal),
    the peak slider acceleration over the ideal one, peak contact force, impacts, contact
    share, largest eccentricity ratio, and the histories ``slider_a`` and the journal orbit."""
    if spec.clearance is None:
        raise ValueError(f"mechanism '{spec.name}' has no clearance joint to sweep")
    rb = spec.clearance.bearing_radius
    runs = []
    for c in clearances:
        s, d = run_mechanism(spec.with_overrides({"clearance.journal_radius": rb - float(c)}))
        runs.append((float(c), s, d))
    t = runs[0][2]["time"].values
    ref = ideal_slider_crank(spec, t)
    scal: dict[str, list] = {k: [] for k in ("dx_max", "dv_rms_rel", "da_rms_rel", "a_peak_ratio",
                                             "max_contact_force", "impacts", "contact_fraction",
                                             "max_eccentricity_ratio", "wall_s")}  # fmt: skip
    hist = {k: [] for k in ("slider_a", "slider_x", "ecc_x", "ecc_y", "contact_force", "state")}

    def rms(y):
        return float(np.sqrt(np.mean(np.square(y))))

    for _c, s, d in runs:
        scal["dx_max"].append(float(np.max(np.abs(d["slider_x"].values - ref["x"]))))
        scal["dv_rms_rel"].append(rms(d["slider_v"].values - ref["v"]) / rms(ref["v"]))
        scal["da_rms_rel"].append(rms(d["slider_a"].values - ref["a"]) / rms(ref["a"]))
        scal["a_peak_ratio"].append(float(np.max(np.abs(d["slider_a"].values))
                                          / np.max(np.abs(ref["a"]))))  # fmt: skip
        for k in ("max_contact_force", "impacts", "contact_fraction", "max_eccentricity_ratio",
                  "wall_s"):  # fmt: skip
            scal[k].append(float(s[k]))
        hist["slider_a"].append(d["slider_a"].values)
        hist["slider_x"].append(d["slider_x"].values)
        hist["ecc_x"].append(d["eccentricity_x"].values[:, 0])
        hist["ecc_y"].append(d["eccentricity_y"].values[:, 0])
        hist["contact_force"].append(d["contact_force_normal"].values[:, 0])
        hist["state"].append(d["contact_state"].values[:, 0])
    units = {"dx_max": "m", "dv_rms_rel": "1", "da_rms_rel": "1", "a_peak_ratio": "1",
             "max_contact_force": "N", "impacts": "1", "contact_fraction": "1",
             "max_eccentricity_ratio": "1", "wall_s": "s"}  # fmt: skip
    data = {k: ("clearance", np.array(v), {"units": units[k]}) for k, v in scal.items()}
    hu = {"slider_a": "m/s^2", "slider_x": "m", "ecc_x": "m", "ecc_y": "m",
          "contact_force": "N", "state": "0 free, 1 impact, 2 continuous"}  # fmt: skip
    for k, v in hist.items():
        data[k] = (("clearance", "time"), np.array(v), {"units": hu[k]})
    data["a_ideal"] = ("time", ref["a"], {"units": "m/s^2"})
    data["x_ideal"] = ("time", ref["x"], {"units": "m"})
    ds = xr.Dataset(data, coords={"clearance": ("clearance", np.array(clearances, float),
                                                {"units": "m", "long_name": "radial clearance c"}),
                                  "time": ("time", t, {"units": "s"})})  # fmt: skip
    ds.attrs.update(provenance_attrs(spec, study="clearance_sweep"))
    ds.attrs["rod_length"] = _rigid_rod(spec)[0]
    return ds


def clearance_sweep_checks(
    ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the clearance sweep (``pipeline.clearance_sweep.tolerances``): every run's
    largest slider deviation within the geometric bound of its journal offset, and the RMS
    velocity and acceleration deviations from the ideal joint shrinking with ``c`` (each
    smaller ``c`` at most ``1 + monotone_rel`` times the next larger one)."""
    tol = report_tolerances("clearance_sweep", tolerances)
    case = str(ds.attrs["case"])
    L = float(ds.attrs["rod_length"])
    r = float(ds.attrs["param.crank.length"])
    dmin = math.sqrt(L * L - r * r)
    c = ds["clearance"].values
    order = np.argsort(c)
    rows = []
    for i in order:
        ecc = float(c[i] * ds["max_eccentricity_ratio"].values[i])
        rows.append(check(f"c = {c[i] * 1e3:g} mm: max |x - x_ideal| within the bound",
                          ecc * L / dmin + ecc * ecc / dmin, float(ds["dx_max"].values[i]),
                          tol["bound_rel"], mode="max", note="m", case=case))  # fmt: skip
    for key, label in (("dv_rms_rel", "RMS velocity deviation"),
                       ("da_rms_rel", "RMS acceleration deviation")):  # fmt: skip
        y = ds[key].values[order]
        for a, b in zip(range(len(order) - 1), range(1, len(order)), strict=True):
            rows.append(check(f"{label} shrinks with c: c = {c[order][a] * 1e3:g} mm vs "
                              f"{c[order][b] * 1e3:g} mm", float(y[b]), float(y[a]),
                              tol["monotone_rel"], mode="max", note="relative to ideal RMS",
                              case=case))  # fmt: skip
    return rows


# --------------------------------------------------------------------------------------------
# contact laws: restitution recovered by each normal law against the independent integration
# --------------------------------------------------------------------------------------------
def run_contact_laws(
    spec: MechanismSpec,
    laws: Sequence[str],
    restitution: Sequence[float],
    K: float,
    exponent: float = 1.5,
) -> xr.Dataset:
    """The two-body case ``spec`` (masses, approach speed) with each hertz-type law in ``laws``
    (stiffness ``K`` N/m^n, ``exponent``) and each ``ce`` in ``restitution`` (``hertz``: once,
    elastic): the restitution, duration, largest penetration and force of the multibody run
    and of :func:`~ancf_beam.references.impact.integrate_impact`, and the force-penetration
    histories (dimension ``run`` x ``time``)."""
    if spec.kind != "two-body":
        raise ValueError(f"mechanism '{spec.name}' is not a two-body case")
    m, v0 = spec.m_eff, spec.v_rel
    combos = []
    for law in laws:
        for ce in [None] if law == "hertz" else restitution:
            combos.append((law, ce))
    cols: dict[str, list] = {k: [] for k in (
        "law", "ce", "restitution", "restitution_ref", "duration", "duration_ref",
        "max_penetration", "max_penetration_ref", "max_force", "max_force_ref")}  # fmt: skip
    pen, force = [], []
    t = None
    for law, ce in combos:
        block = {"law": law, "K": float(K), "exponent": float(exponent)}
        over = {"contact.law": law, "contact.K": float(K), "contact.exponent": float(exponent),
                "contact.k": None, "contact.c": None, "contact.zeta": None,
                "contact.restitution": None if ce is None else float(ce)}  # fmt: skip
        s, d = run_mechanism(spec.with_overrides(over))
        ref = integrate_impact(law, m, v0, K=block["K"], n=block["exponent"], restitution=ce)
        cols["law"].append(law)
        cols["ce"].append(np.nan if ce is None else float(ce))
        cols["restitution"].append(np.nan if s["restitution"] is None else s["restitution"])
        cols["duration"].append(s["contact_duration"])
        cols["max_penetration"].append(s["max_penetration"])
        cols["max_force"].append(s["max_contact_force"])
        for k in ("restitution", "duration", "max_penetration"):
            cols[f"{k}_ref"].append(ref[k])
        cols["max_force_ref"].append(ref["max_force"])
        if t is None:
            t = d["time"].values
        pen.append(d["penetration"].values[:, 0])
        force.append(d["contact_force_normal"].values[:, 0])
    units = {"ce": "1", "restitution": "1", "duration": "s", "max_penetration": "m",
             "max_force": "N"}  # fmt: skip
    data = {}
    for k, v in cols.items():
        base = k.removesuffix("_ref")
        attrs = {"units": units.get(base, "")} if k != "law" else {}
        if k.endswith("_ref"):
            attrs["long_name"] = "independent 1-DOF integration (references.impact)"
        data[k] = ("run", np.array(v, dtype=object if k == "law" else float), attrs)
    data["penetration"] = (("run", "time"), np.array(pen), {"units": "m"})
    data["contact_force"] = (("run", "time"), np.array(force), {"units": "N"})
    ds = xr.Dataset(data, coords={"run": np.arange(len(combos)),
                                  "time": ("time", t, {"units": "s"})})  # fmt: skip
    ds.attrs.update(provenance_attrs(spec, study="contact_laws", m_eff=m, v0=v0, K=float(K),
                                     exponent=float(exponent)))  # fmt: skip
    return ds


def contact_laws_checks(
    ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the contact-law study (``pipeline.contact_laws.tolerances``): per law and
    ``ce`` the multibody run's restitution, duration and peak force against the independent
    integration (``reference_rel``; the sampled peak force ``force_rel``). How far each law's
    restitution lies from its nominal ``ce`` is a property of the law, shown in the report, not
    checked."""
    tol = report_tolerances("contact_laws", tolerances)
    rows = []
    for i in range(ds.sizes["run"]):
        law = str(ds["law"].values[i])
        ce = float(ds["ce"].values[i])
        tag = law if math.isnan(ce) else f"{law}, ce = {ce:g}"
        for k, unit, key in (("restitution", "1", "reference_rel"),
                             ("duration", "s", "reference_rel"),
                             ("max_force", "N", "force_rel")):  # fmt: skip
            rows.append(check(f"{tag}: {k.replace('_', ' ')} vs independent integration",
                              float(ds[f"{k}_ref"].values[i]), float(ds[k].values[i]),
                              tol[key], note=unit,
                              case=str(ds.attrs["case"])))  # fmt: skip
    return rows


# --------------------------------------------------------------------------------------------
# flagship: graded (and damaging) ANCF rod in a crank-slider with a clearance joint
# --------------------------------------------------------------------------------------------
def run_flagship(
    spec: MechanismSpec, lams: Sequence[float], damage: Mapping[str, Any] | None = None
) -> xr.Dataset:
    """The flagship case ``spec`` (slider-crank, ANCF rod, clearance joint) with the rod's
    modulus ``E(x) = E0 (1 - lam (x/L)^n)`` for each ``lam`` in ``lams`` (``x`` from the crank
    pin to the slider) and, with ``damage`` (``{enabled, lam, threshold, softening, d_max}``),
    one more variant whose rod also damages. Per variant (dimension ``variant``): peak contact
    force, first impact force, impacts, contact share, largest eccentricity ratio, slider
    acceleration extremes and their ratio to the ideal joint's, largest mid-span deflection,
    largest damage; histories of the slider acceleration, the journal orbit, the contact force
    and state; the ideal rigid mechanism's slider acceleration."""
    if spec.beam is None or spec.clearance is None:
        raise ValueError(f"mechanism '{spec.name}' needs an ANCF rod and a clearance joint")
    variants = [(f"lam = {lam:g}", {"rod.defect.lam": float(lam)}, float(lam), False)
                for lam in lams]  # fmt: skip
    if damage and damage.get("enabled", True):
        lam = float(damage["lam"])
        over = {"rod.defect.lam": lam, "rod.damage.enabled": True}
        for k in ("threshold", "softening", "d_max"):
            if damage.get(k) is not None:
                over[f"rod.damage.{k}"] = float(damage[k])
        if spec.beam.mesh.n_gauss_axial != spec.beam.mesh.n_gauss_bending:
            over["rod.mesh.n_gauss_axial"] = spec.beam.mesh.n_gauss_bending
        variants.append((f"lam = {lam:g}, damaging", over, lam, True))
    keys = ("max_contact_force", "first_impact_force", "impacts", "contact_fraction",
            "max_eccentricity_ratio", "slider_a_max", "slider_a_min", "midspan_deflection_max",
            "drive_torque_max", "wall_s")  # fmt: skip
    scal: dict[str, list] = {k: [] for k in (*keys, "damage_max", "a_peak_ratio",
                                             "energy_drive_error")}  # fmt: skip
    hist: dict[str, list] = {k: [] for k in ("slider_a", "ecc_x", "ecc_y", "contact_force",
                                             "state", "midspan")}  # fmt: skip
    t = ref = None
    dmg_fields = []
    for _label, over, _lam, _dmg in variants:
        s, d = run_mechanism(spec.with_overrides(over))
        if t is None:
            t = d["time"].values
            ref = ideal_slider_crank(spec, t)
        for k in keys:
            v = s.get(k)
            scal[k].append(np.nan if v is None else float(v))
        scal["damage_max"].append(float(s.get("damage_max", 0.0)))
        scal["a_peak_ratio"].append(float(np.max(np.abs(d["slider_a"].values))
                                          / np.max(np.abs(ref["a"]))))  # fmt: skip
        scal["energy_drive_error"].append(_drive_work_error(d, spec.omega))
        hist["slider_a"].append(d["slider_a"].values)
        hist["ecc_x"].append(d["eccentricity_x"].values[:, 0])
        hist["ecc_y"].append(d["eccentricity_y"].values[:, 0])
        hist["contact_force"].append(d["contact_force_normal"].values[:, 0])
        hist["state"].append(d["contact_state"].values[:, 0])
        hist["midspan"].append(d["midspan_deflection"].values)
        dmg_fields.append(d["damage_final"].values if "damage_final" in d else None)
    units = {"max_contact_force": "N", "first_impact_force": "N", "impacts": "1",
             "contact_fraction": "1", "max_eccentricity_ratio": "1", "slider_a_max": "m/s^2",
             "slider_a_min": "m/s^2", "midspan_deflection_max": "m", "drive_torque_max": "N m",
             "wall_s": "s", "damage_max": "1", "a_peak_ratio": "1",
             "energy_drive_error": "1"}  # fmt: skip
    data = {k: ("variant", np.array(v, float), {"units": units[k]}) for k, v in scal.items()}
    hu = {"slider_a": "m/s^2", "ecc_x": "m", "ecc_y": "m", "contact_force": "N",
          "state": "0 free, 1 impact, 2 continuous", "midspan": "m"}  # fmt: skip
    for k, v in hist.items():
        data[k] = (("variant", "time"), np.array(v), {"units": hu[k]})
    data["lam"] = ("variant", np.array([v[2] for v in variants]), {"units": "1"})
    data["damaging"] = ("variant", np.array([int(v[3]) for v in variants]), {"units": "1"})
    data["a_ideal"] = ("time", ref["a"], {"units": "m/s^2"})
    fields = [f for f in dmg_fields if f is not None]
    if fields:
        data["damage_final"] = (
            ("element", "gauss"),
            fields[-1],
            {"units": "1", "long_name": "damaging variant, at t_end"},
        )
    ds = xr.Dataset(data, coords={"variant": [v[0] for v in variants],
                                  "time": ("time", t, {"units": "s"})})  # fmt: skip
    ds.attrs.update(provenance_attrs(spec, study="flagship"))
    ds.attrs["radial_clearance"] = spec.clearance.radial_clearance
    ds.attrs["contact_K"] = spec.clearance.contact.stiffness
    ds.attrs["contact_exponent"] = spec.clearance.contact.exponent
    ds.attrs["defect_n"] = spec.beam.defect.E.n
    return ds


def flagship_checks(
    ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the flagship study (``pipeline.flagship.tolerances``): the energy balance with
    the drive's work of every variant (contact and damage dissipation booked), and the journal
    never further from its bearing centre than ``c`` plus the largest penetration the contact
    law allows at the peak force (``(F / K)^(1/n)``)."""
    tol = report_tolerances("flagship", tolerances)
    case = str(ds.attrs["case"])
    rows = []
    c = float(ds.attrs["radial_clearance"])
    K = float(ds.attrs["contact_K"])
    n = float(ds.attrs["contact_exponent"])
    for i, v in enumerate(ds["variant"].values):
        rows.append(check(f"{v}: energy change vs drive work (/ max T)", 0.0,
                          float(ds["energy_drive_error"].values[i]), tol["drive_work_rel"],
                          mode="abs", note="contact and damage dissipation booked",
                          case=case))  # fmt: skip
        ecc = float(np.hypot(ds["ecc_x"].values[i], ds["ecc_y"].values[i]).max())
        dmax = (float(ds["max_contact_force"].values[i]) / K) ** (1.0 / n)
        rows.append(check(f"{v}: journal offset <= c + (F_max / K)^(1/n)", c + dmax, ecc,
                          tol["orbit_rel"], mode="max", note="m (sampled orbit)",
                          case=case))  # fmt: skip
    return rows
