"""Mechanism studies of the pipeline (docs/design.md section 7): the checks of every mechanism case
against independent references, the clearance sweep, the contact-law comparison and the
flagship study (a graded, possibly damaging ANCF connecting rod in a crank-slider with a
clearance joint).

References (none of them uses the multibody code):

* slider-crank with ideal joints: closed-form kinematics and Newton-Euler inverse dynamics
  (:mod:`ancf_beam.references.mechanism`); an ANCF rod through its *rigid limit* (the same case
  with ``E0 = 1e15`` Pa against the rigid closed forms, a uniform rod of mass ``rho A L`` and
  inertia ``m L^2 / 12``); the work of the drive against the change of the total energy
  (kinetic + potential + dissipated by damage and the contacts), both booked every step;
* clearance joint: with a rigid rod the slider can leave its ideal position by at most the bound
  ``|x - x_ideal| <= e_max l / sqrt(l^2 - r^2) + e_max^2 / sqrt(l^2 - r^2)`` (journal offset
  ``e_max = c + delta_max`` in its bearing, first and second order in ``e``), for every
  clearance of the sweep;
* two-body impact: :mod:`ancf_beam.references.impact` (closed-form Kelvin-Voigt, independent
  high-accuracy integration of every law);
* pendulum (no drive): the energy balance.

Bounds (``pipeline.<study>.tolerances``: ``estimate_factor`` only): a comparison with a reference
or a balance that is zero for the exact solution may differ by ``estimate_factor`` times the
run's error estimated from the same run refined (:func:`ancf_beam.mbs.analysis.refined_runs`,
Richardson with the refinement's ``kappa``; an adaptive run adds its rtol times the quantity's
scale, the error one step admits) plus the reference's own error plus the run's
round-off (8 eps per step; the penetration's cancellation ``4 eps n L / delta``); the geometric
bounds carry the kinematic allowance of the run's constraint violation. The energy balance uses
the drive's work and the dissipated work booked every step by the integrators.

All times in s, lengths in m, forces in N, accelerations in m/s^2.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.io import provenance_attrs
from ancf_beam.mbs.analysis import refined_runs, run_mechanism
from ancf_beam.references.impact import integrate_impact, kelvin_voigt
from ancf_beam.references.mechanism import (
    slider_crank_inverse_dynamics,
    slider_crank_kinematics,
)
from ancf_beam.specs import MechanismSpec
from ancf_beam.studies.checks import check, checks_dataset, report_tolerances
from ancf_beam.studies.error_estimates import (
    EPS,
    HistoryBound,
    energy_balance_row,
    energy_residual,
    est_check,
    estimate,
    resolved,
    roundoff,
    tol_floor,
)
from ancf_beam.studies.general import general_rows, reference_histories
from ancf_beam.studies.nonsmooth import compliant_limit, nonsmooth_rows
from ancf_beam.studies.revolutions import (
    distribution,
    median_shift,
    per_revolution_max,
    poincare_section,
)

__all__ = [
    "RIGID_LIMIT_E0",
    "length_scale",
    "clearance_sweep_checks",
    "contact_laws_checks",
    "flagship_checks",
    "flagship_statistics",
    "REVOLUTION_QUANTITIES",
    "ideal_slider_crank",
    "mechanism_checks",
    "run_clearance_sweep",
    "run_contact_laws",
    "run_flagship",
    "run_mechanism_validation",
    "long_run_settings",
    "revolution_period",
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
    dyn = slider_crank_inverse_dynamics(
        t,
        spec.crank.length,
        L,
        spec.omega,
        m_crank=spec.crank.mass,
        m_rod=m,
        j_rod=J,
        m_slider=spec.slider.mass,
        g=spec.g,
    )
    return {**k, **dyn}


def _drive_work_error(ds: xr.Dataset, omega: float | None = None) -> float:
    """``max |(E - E0) - W| / max T`` over the samples (:func:`energy_residual`)."""
    return float(np.max(np.abs(energy_residual(ds))) / ds["kinetic_energy"].max())


def _rod_compliance(spec: MechanismSpec, force: float) -> float:
    """Relative change of the slider's motion when an ANCF rod of the rigid-limit run stretches
    under the joint force ``force`` (N): axial strain ``F / (E0 A)`` times ``l / r`` (the
    slider moves by up to ``l`` strain for a crank of radius ``r``)."""
    b = spec.beam
    area = b.beam.width * b.beam.height
    return force / (RIGID_LIMIT_E0 * area) * b.beam.length / spec.crank.length


def _slider_crank_rows(spec, ds, fine, kappa, tol, rigid_limit, rigid_fine):
    S = tol["estimate_factor"]
    ref = ideal_slider_crank(spec, ds["time"].values)
    bound = HistoryBound(kappa, tol_floor(spec, ds), roundoff(ds), S, spec.name)
    est_note = (
        f"bound {S:g} x (estimate from the refined run, kappa {kappa:g}, + rtol of an "
        "adaptive run) + round-off 8 eps per step"
    )
    rows = []
    if spec.clearance is None and spec.beam is None:
        rows.extend(_ideal_joint_rows(ds, fine, ref, bound, est_note))
    if rigid_limit is not None:
        rows.extend(_rigid_limit_rows(spec, rigid_limit, rigid_fine, S))
    rows.append(energy_balance_row(ds, fine, bound, est_note))
    if spec.clearance is not None and spec.beam is None:  # the bound holds for a rigid rod
        rows.append(_clearance_bound_row(spec, ds, ref["x"]))
    return rows


def _ideal_joint_rows(ds, fine, ref, bound: HistoryBound, est_note: str) -> list[dict]:
    """A rigid slider-crank with ideal joints: the slider's motion against the closed-form
    kinematics, the drive torque and the joint forces against the inverse dynamics."""
    rows = []
    for v, unit in (("x", "m"), ("v", "m/s"), ("a", "m/s^2")):
        key = f"slider_{v}"
        rows.append(
            bound.check(
                f"slider {v} vs closed-form kinematics (max error / max |ref|)",
                ds[key].values,
                [f[key].values for f in fine],
                ref[v],
                f"{unit}; {est_note}",
            )
        )
    rows.append(
        bound.check(
            "drive torque vs Newton-Euler inverse dynamics",
            ds["drive_torque"].values,
            [f["drive_torque"].values for f in fine],
            ref["torque"],
            f"N m; {est_note}",
        )
    )
    for j in ds["joint"].values:
        j = str(j)
        rows.append(
            bound.check(
                f"{j} force vs inverse dynamics",
                ds["reaction_force"].sel(joint=j).values,
                [f["reaction_force"].sel(joint=j).values for f in fine],
                ref[j],
                f"N; {est_note}",
            )
        )
    return rows


def _rigid_limit_rows(spec, rl, rlf, S) -> list[dict]:
    """The rigid-limit run ``rl`` of an ANCF rod (refined runs ``rlf``) against the rigid
    closed forms after the start-up share, allowing the rod's stretch."""
    tr = rl["time"].values
    keep = tr >= STARTUP_SHARE * tr[-1]
    rr = ideal_slider_crank(spec, tr)
    force = max(float(np.max(np.abs(rr[j]))) for j in ("pivot", "crank_pin", "wrist_pin"))
    comp = _rod_compliance(spec, force)
    k_rl = float(rlf[0].attrs["kappa"])
    bound = HistoryBound(k_rl, tol_floor(spec, rl), comp + roundoff(rl), S, spec.name)
    note = (
        f"E0 = {RIGID_LIMIT_E0:g} Pa; t >= {STARTUP_SHARE:g} t_end (the rod starts "
        f"undeformed); bound {S:g} x estimate (refined run, kappa {k_rl:g}) + the rod's "
        f"stretch {comp:.2g} + round-off"
    )
    rows = []
    for v, key in (
        ("x", "slider_x"),
        ("v", "slider_v"),
        ("a", "slider_a"),
        ("torque", "drive_torque"),
    ):
        label = (
            "rigid limit: drive torque vs inverse dynamics"
            if v == "torque"
            else f"rigid limit: slider {v} vs closed form"
        )
        refined = [f[key].values[keep] for f in rlf]
        rows.append(bound.check(label, rl[key].values[keep], refined, rr[v][keep], note))
    return rows


def _clearance_bound_row(spec, ds, x_ideal) -> dict[str, Any]:
    """A rigid rod with a clearance joint: the slider's deviation from the ideal joint's
    position within the geometric bound of the largest journal offset."""
    c = spec.clearance.radial_clearance
    L = _rigid_rod(spec)[0]
    dmin = math.sqrt(L * L - spec.crank.length**2)
    ecc = np.hypot(ds["eccentricity_x"].values, ds["eccentricity_y"].values).max()
    bound = ecc * L / dmin + ecc * ecc / dmin
    dev = float(np.max(np.abs(ds["slider_x"].values - x_ideal)))
    phi = float(ds["constraint_violation"].max())
    return check(
        "clearance: max |x - x_ideal| within the geometric bound",
        bound,
        dev,
        _geometric_allowance(phi, L, dmin, bound),
        mode="max",
        note=f"m; e_max = {ecc:.4g} m (c = {c:.4g} m); the constraints' violation "
        f"{phi:.2g} m moves the slider by at most (1 + l / d_min) |Phi|",
        case=spec.name,
    )


def _geometric_allowance(phi: float, L: float, dmin: float, bound: float) -> float:
    """Share of the geometric bound a run may exceed it by: the bound holds exactly on the
    constraint manifold; a violation ``|Phi|`` of the joints moves the slider by at most
    ``(1 + l / d_min) |Phi|``; plus the bound's round-off (``8 eps``)."""
    return (1.0 + L / dmin) * phi / bound + 8.0 * EPS


def _two_body_reference(spec: MechanismSpec) -> dict[str, Any]:
    """The independent reference of a two-body impact with a bound of its own error
    (``error``: closed form, a few eps; integration, its difference from a run 10 times
    looser)."""
    law = spec.contact
    m, v0 = spec.m_eff, spec.v_rel
    if law.law == "kelvin-voigt":
        r = kelvin_voigt(m, law.stiffness, law.damping, v0)["clipped"]
        # closed form of acos (acosh), sqrt and exp, a few ulps each; exp(x) carries x's
        # rounding times |x| <= 1 + |ln restitution| (the largest exponent)
        amp = 1.0 + abs(math.log(r["restitution"]))
        r["error"] = {k: 16.0 * EPS * amp * abs(x) for k, x in r.items()}
        r["source"] = "closed-form Kelvin-Voigt (force never tensile)"
        return r
    r = integrate_impact(
        law.law, m, v0, K=law.stiffness, n=law.exponent, restitution=law.restitution, error=True
    )
    r["source"] = "independent 1-DOF integration (DOP853, rtol 1e-12)"
    return r


def _two_body_floors(
    spec: MechanismSpec, ds: xr.Dataset, s: Mapping[str, float]
) -> dict[str, float]:
    """Relative floor of each two-body result: round-off, 8 eps per step, and for the
    penetration and the force (an elastic part ``K delta^n``) the cancellation in ``delta =
    r1 + r2 - |x2 - x1|``: ``4 eps n L / delta_max`` with ``L`` the largest position (m).
    The duration of a fixed-step run is measured from the sampled force: where the force
    jumps at the onset (a damping term ``c v0``) or ends clipped at zero, interpolation cannot
    place the end inside the sample interval, so each end is known to one interval ``dt_s``
    (``2 dt_s`` per impact). Refining the step cannot see this error (each run rounds the
    ends up to its own grid, e.g. 1.0687 ms to 1.07 ms at 10, 5 and 2.5 us alike). Likewise
    the largest force, when it is the first sample in contact: the Kelvin-Voigt force starts at
    ``c v0``, its largest value for ``zeta >= 1/2``, and the sample lies up to one interval
    ``h`` after the onset, over which the force falls by at most ``h max|F'|``, ``|F'| = |k
    delta' + c delta''| <= k v0 + c F_max / m`` (``|delta'| <= v0``: the contact dissipates)."""
    base = roundoff(ds)
    t = ds["time"].values
    L = sum(spec.radii) + spec.gap + spec.v_rel * float(t[-1])
    cond = 4.0 * EPS * L / max(s["max_penetration"], 1e-300)
    law = spec.contact
    sampled = sampled_force = 0.0
    if ds.attrs.get("summary.integrator") != "adaptive" and len(t) > 1:
        impacts = max(int(ds.attrs.get("summary.impacts", 1)), 1)
        sampled = 2.0 * impacts * float(np.max(np.diff(t))) / max(s["duration"], 1e-300)
        f = ds["contact_force_normal"].values.reshape(len(t), -1)[:, 0]
        i = int(np.argmax(f))
        if law.law == "kelvin-voigt" and i > 0 and f[i - 1] <= 0.0 < f[i]:
            f_max = max(s["max_force"], law.damping * spec.v_rel)
            slope = law.stiffness * spec.v_rel + law.damping * f_max / spec.m_eff
            sampled_force = slope * float(t[i] - t[i - 1]) / f_max
    return {
        "restitution": base,
        "duration": base + sampled,
        "max_penetration": base + cond,
        "max_force": base + law.exponent * cond + sampled_force,
    }


def _two_body_rows(spec, ds, fine, kappa, tol):
    s = _two_body_scalars(spec, ds)
    sf = [_two_body_scalars(spec, f) for f in fine]
    ref = _two_body_reference(spec)
    S = tol["estimate_factor"]
    floors = _two_body_floors(spec, ds, s)
    rows = []
    for name, key, unit in (
        ("restitution", "restitution", "1"),
        ("contact duration", "duration", "s"),
        ("max penetration", "max_penetration", "m"),
        ("max contact force", "max_force", "N"),
    ):
        r = abs(ref[key])
        est = (
            estimate(s[key], [x[key] for x in sf], kappa, tol_floor(spec, ds) * abs(s[key]))
            + ref["error"][key]
        )
        rows.append(
            check(
                f"impact {name} vs reference",
                ref[key],
                s[key],
                S * est / r + floors[key],
                note=f"{unit}; {ref['source']}; bound {S:g} x (estimate from the refined run, "
                f"kappa {kappa:g}, + the reference's error) + round-off (8 eps per step; "
                "penetration and force: 4 eps n L / delta_max; a fixed-step duration: two "
                "sample intervals per impact; a peak force at the onset: the force's fall "
                "over one sample interval)",
                case=spec.name,
            )
        )
    return rows


def _two_body_scalars(spec: MechanismSpec, ds: xr.Dataset) -> dict[str, float]:
    """The impact's outcome from a two-body Dataset (its attributes hold the run's summary)."""
    a = ds.attrs

    def num(x):
        return math.nan if x is None or x == "null" else float(x)

    return {
        k: num(a[f"summary.{k2}"])
        for k, k2 in (
            ("restitution", "restitution"),
            ("duration", "contact_duration"),
            ("max_penetration", "max_penetration"),
            ("max_force", "max_contact_force"),
        )
    }


def mechanism_checks(
    spec: MechanismSpec,
    ds: xr.Dataset,
    tolerances: Mapping[str, float] | None = None,
    rigid_limit: xr.Dataset | None = None,
    fine: xr.Dataset | list[xr.Dataset] | None = None,
    rigid_fine: xr.Dataset | list[xr.Dataset] | None = None,
    limit: xr.Dataset | None = None,
) -> list[dict[str, Any]]:
    """Checks of one mechanism case (``ds``: its run, :func:`~ancf_beam.mbs.analysis.
    run_mechanism`, with the summary stored as ``summary.*`` attributes; ``fine``: the same run
    refined, one Dataset or a list finest last (:func:`~ancf_beam.mbs.analysis.refined_runs`,
    run here when not given); ``rigid_limit``, ``rigid_fine``: the ANCF rod's run at ``E0 =
    RIGID_LIMIT_E0`` and its refined runs; ``limit``: a nonsmooth case's compliant limit,
    :func:`ancf_beam.studies.nonsmooth.compliant_limit`). Every comparison with a reference,
    and every balance that is zero for the exact solution, is bounded by ``estimate_factor``
    (``pipeline.mechanisms.tolerances``) times the run's error estimated from the refined runs
    (plus the reference's own error) plus the round-off of the run (8 eps per step)."""
    tol = report_tolerances("mechanisms", tolerances)
    if fine is None:
        fine = refined_runs(spec, ds)
    fine = fine if isinstance(fine, list) else [fine]
    if rigid_fine is not None and not isinstance(rigid_fine, list):
        rigid_fine = [rigid_fine]
    kappa = float(fine[0].attrs["kappa"])
    S = tol["estimate_factor"]
    phi = float(ds["constraint_violation"].max())
    phi_f = [float(f["constraint_violation"].max()) for f in fine]
    scale = length_scale(spec)
    rows = [
        est_check(
            "position constraint violation max |Phi|",
            0.0,
            phi,
            estimate(phi, phi_f, kappa, tol_floor(spec, ds) * scale),
            64.0 * EPS * scale,
            S,
            spec.name,
            f"m (rad for angle equations); bound {S:g} x estimate from the refined run (kappa "
            f"{kappa:g}) + the index-3 Newton floor 64 eps max|q0| = {64.0 * EPS * scale:.2g}",
        )
    ]

    if limit is not None:
        rows += nonsmooth_rows(spec, ds, fine, limit, S)
    if spec.kind == "slider-crank":
        rows += _slider_crank_rows(spec, ds, fine, kappa, tol, rigid_limit, rigid_fine)
    elif spec.kind == "two-body":
        rows += _two_body_rows(spec, ds, fine, kappa, tol)
    elif spec.kind == "general":
        bound = HistoryBound(kappa, tol_floor(spec, ds), roundoff(ds), S, spec.name)
        note = (
            f"bound {S:g} x (estimate from the refined run, kappa {kappa:g}, + rtol of an "
            "adaptive run) + round-off 8 eps per step"
        )
        rows.append(energy_balance_row(ds, fine, bound, note))
        rows += general_rows(spec, ds, fine, kappa, S)
    else:
        rows.append(_energy_row(spec, ds, fine, kappa, S))
    return rows


def _energy_row(
    spec: MechanismSpec, ds: xr.Dataset, fine: list[xr.Dataset], kappa: float, S: float
) -> dict[str, Any]:
    """The energy balance of an undriven mechanism, relative to its largest kinetic energy:
    zero for the exact solution, bounded by ``S`` times the estimate from the refined runs
    plus round-off."""
    res = energy_residual(ds)
    tmax = float(ds["kinetic_energy"].max())
    e_scale = float(np.max(np.abs(ds["energy_total"].values))) / tmax
    row = est_check(
        "energy balance max|E - E0| / max T (no drive)",
        0.0,
        float(np.max(np.abs(res))) / tmax,
        estimate(
            res,
            [energy_residual(f) for f in fine],
            kappa,
            tol_floor(spec, ds) * e_scale * tmax,
        )
        / tmax,
        roundoff(ds) * max(e_scale, 1.0),
        S,
        spec.name,
        f"{spec.integrator}, numerical dissipation included; bound {S:g} x estimate from "
        f"the refined run (kappa {kappa:g}) + round-off",
    )
    return resolved(row)


def length_scale(spec: MechanismSpec) -> float:
    """``max(1e-3, max |q0|)`` of a case: the scale of the index-3 integrators' position floor
    (Newton stops at ``64 eps`` of it at the latest, :mod:`ancf_beam.mbs.integrators`)."""
    from ancf_beam.mbs.mechanisms import build_mechanism

    return max(1e-3, float(np.max(np.abs(build_mechanism(spec).system.q0))))


def needs_rigid_limit(spec: MechanismSpec) -> bool:
    """An ANCF connecting rod with ideal joints and uniform mass: its rigid limit is checked."""
    return (
        spec.kind == "slider-crank"
        and spec.beam is not None
        and spec.clearance is None
        and _rigid_rod(spec)[3]
    )


def run_mechanism_validation(
    spec: MechanismSpec,
    ds: xr.Dataset,
    tolerances: Mapping[str, float] | None = None,
    compliant: MechanismSpec | None = None,
    K_factors: Sequence[float] = (),
) -> xr.Dataset:
    """The check table of one mechanism case (``checks_dataset`` layout) with, for a
    slider-crank, the ideal references on the run's time axis (``x_ideal``, ``v_ideal``,
    ``a_ideal``, ``torque_ideal``, ``reaction_ideal`` (time x joint)) for the report. The case
    is run again refined (:func:`~ancf_beam.mbs.analysis.refined_run`) for the error
    estimates; an ANCF rod with ideal joints is run at ``E0 = RIGID_LIMIT_E0`` (its rigid
    limit), that run refined as well. A case with nonsmooth contacts given its ``compliant``
    counterpart is compared with the counterpart at ``K_0 f`` for each ``f`` of ``K_factors``
    (:mod:`ancf_beam.studies.nonsmooth`): its rows and, prefixed ``limit_``, the sequence."""
    rigid = rigid_fine = None
    if needs_rigid_limit(spec):
        stiff = spec.with_overrides(
            {"rod.material.E0": RIGID_LIMIT_E0, "rod.damage.enabled": False}
        )
        _, rigid = run_mechanism(stiff)
        rigid_fine = refined_runs(stiff, rigid)
    fine = refined_runs(spec, ds)
    limit = None
    if compliant is not None:
        limit = compliant_limit(spec, ds, compliant, list(K_factors))
    rows = mechanism_checks(spec, ds, tolerances, rigid, fine, rigid_fine, limit)
    out = checks_dataset(rows)
    if limit is not None:  # the compliant sequence, for the report (prefixed limit_)
        ren = {k: f"limit_{k}" for k in [*limit.data_vars, *limit.coords]}
        out = out.merge(limit.rename(ren))
        out.attrs.update({f"limit_{k}": v for k, v in limit.attrs.items()})
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
    if spec.kind == "general":
        refs = reference_histories(spec, ds)
        if refs:
            out = out.assign_coords(time=("time", ds["time"].values, {"units": "s"}))
            if "pin_force_ref" in refs:
                out = out.assign_coords(pin=("pin", list("ABCD")))
            for k, v in refs.items():
                out[k] = v
    out.attrs.update(provenance_attrs(spec, study="mechanism_validation", kind=spec.kind))
    out.attrs["rigid_limit"] = int(rigid is not None)
    out.attrs["kappa"] = float(fine[0].attrs["kappa"])
    out.attrs["refined_runs"] = len(fine)
    return out


def summary_attrs(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A run summary as NetCDF attributes ``summary.KEY`` (None as ``'null'``; mappings and
    lists, e.g. a general mechanism's ``points`` or ``contacts``, as JSON text)."""
    out = {}
    for k, v in summary.items():
        if isinstance(v, bool):
            v = int(v)
        if isinstance(v, Mapping | list):
            v = json.dumps(v)
        out[f"summary.{k}"] = "null" if v is None else v
    return out


# --------------------------------------------------------------------------------------------
# long runs: many crank revolutions, statistics per revolution (ancf_beam.studies.revolutions)
# --------------------------------------------------------------------------------------------
#: crank phases (deg) of the Poincare sections unless a study names others
DEFAULT_PHASES_DEG = (0.0, 90.0, 180.0, 270.0)
#: per-revolution peaks of each run (:func:`_revolution_data`), and their units
_REV_VALUES = {"rev_peak_force": "N", "rev_peak_accel": "m/s^2"}
#: Poincare sections of each run: the journal offset at fixed crank phases, and units
_POINCARE = {"poincare_ecc_x": "m", "poincare_ecc_y": "m"}


def revolution_period(spec: MechanismSpec) -> float:
    """Duration (s) of one crank revolution of the driven mechanism ``spec``."""
    if not spec.omega:
        raise ValueError(f"mechanism '{spec.name}' has no constant crank speed")
    return 2.0 * math.pi / abs(float(spec.omega))


def long_run_settings(spec: MechanismSpec, revolutions: int | None) -> tuple[dict[str, Any], int]:
    """``(overrides, stride)`` of a run over ``revolutions`` crank revolutions (None: the case
    as it is, ``({}, 1)``): ``t_end`` that many periods; ``sample_dt`` the contact step
    ``solver.dt_contact`` when the case has a smaller one, so that the peaks per revolution are
    those of the steps (an impact lasts ``pi / omega_contact``, 15 us on the flagship, shorter
    than the case's ``sample_dt``); ``stride`` keeps every stride-th sample for the stored
    histories (back at the case's ``sample_dt``)."""
    if revolutions is None:
        return {}, 1
    if int(revolutions) < 1:
        raise ValueError(f"revolutions must be >= 1, got {revolutions}")
    over: dict[str, Any] = {"t_end": int(revolutions) * revolution_period(spec)}
    dtc = getattr(spec.solver, "dt_contact", None)
    stride = 1
    if dtc is not None and 0.0 < float(dtc) < spec.sample_dt:
        stride = max(1, round(spec.sample_dt / float(dtc)))
        over["sample_dt"] = spec.sample_dt / stride
    return over, stride


def _revolution_data(d, skip, phases) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The revolution numbers and per-revolution values (keys of ``_REV_VALUES`` and
    ``_POINCARE``) of the run ``d`` (its first contact), from every sample."""
    ang = d["crank_angle"].values
    revs, force = per_revolution_max(ang, d["contact_force_normal"].values[:, 0], skip)
    _, accel = per_revolution_max(ang, np.abs(d["slider_a"].values), skip)
    _, sec = poincare_section(
        ang,
        {"x": d["eccentricity_x"].values[:, 0], "y": d["eccentricity_y"].values[:, 0]},
        phases,
        skip,
    )
    out = {
        "rev_peak_force": force,
        "rev_peak_accel": accel,
        "poincare_ecc_x": sec["x"],
        "poincare_ecc_y": sec["y"],
    }
    return revs, out


def _revolution_vars(dim: str, per_rev: Mapping[str, list]) -> dict[str, tuple]:
    """Dataset variables of the per-revolution values over ``dim`` (runs)."""
    out = {}
    for k, v in per_rev.items():
        if k in _REV_VALUES:
            out[k] = ((dim, "revolution"), np.array(v), {"units": _REV_VALUES[k]})
        else:
            out[k] = ((dim, "phase", "revolution"), np.array(v), {"units": _POINCARE[k]})
    return out


def _revolution_coords(revs, phases_deg) -> dict[str, tuple]:
    return {
        "revolution": (
            "revolution",
            np.asarray(revs, int),
            {"units": "1", "long_name": "crank revolution (0: the first)"},
        ),
        "phase": (
            "phase",
            np.asarray(phases_deg, float),
            {"units": "deg", "long_name": "crank angle of the Poincare section"},
        ),
    }


def _long_attrs(spec, long_over, revolutions, skip) -> dict[str, Any]:
    return {
        "revolutions": int(revolutions) if revolutions is not None else -1,
        "skip_revolutions": int(skip),
        "revolution_period": revolution_period(spec),
        "t_end": float(long_over.get("t_end", spec.t_end)),
        "run_sample_dt": float(long_over.get("sample_dt", spec.sample_dt)),
    }


# --------------------------------------------------------------------------------------------
# clearance sweep
# --------------------------------------------------------------------------------------------
#: values of each clearance of the sweep (:func:`_sweep_values`), and their units
_SWEEP_VALUES = {
    "dx_max": "m",
    "dv_rms_rel": "1",
    "da_rms_rel": "1",
    "a_peak_ratio": "1",
    "max_contact_force": "N",
    "impacts": "1",
    "contact_fraction": "1",
    "max_eccentricity_ratio": "1",
    "max_constraint_violation": "m",
    "wall_s": "s",
}
#: the values of the sweep taken from each run's summary
_SWEEP_SUMMARY = (
    "max_contact_force",
    "impacts",
    "contact_fraction",
    "max_eccentricity_ratio",
    "max_constraint_violation",
    "wall_s",
)
#: histories of each clearance of the sweep (:func:`_sweep_histories`), and their units
_SWEEP_HISTORIES = {
    "slider_a": "m/s^2",
    "slider_x": "m",
    "ecc_x": "m",
    "ecc_y": "m",
    "contact_force": "N",
    "state": "0 free, 1 impact, 2 continuous",
}


def run_clearance_sweep(
    spec: MechanismSpec,
    clearances: Sequence[float],
    revolutions: int | None = None,
    skip_revolutions: int = 0,
    phases_deg: Sequence[float] = DEFAULT_PHASES_DEG,
) -> xr.Dataset:
    """The clearance case ``spec`` with radial clearance ``c`` in ``clearances`` (m; the journal
    radius changes, the bearing stays): per ``c`` the slider's deviation from the ideal joint
    (``dx_max`` m, ``dv_rms_rel``, ``da_rms_rel``: RMS of the deviation / RMS of the ideal),
    the peak slider acceleration over the ideal one, peak contact force, impacts, contact
    share, largest eccentricity ratio, and the histories ``slider_a`` and the journal orbit.
    With ``revolutions`` the runs last that many crank revolutions (:func:`long_run_settings`:
    sampled every contact step, histories kept at the case's ``sample_dt``), and per complete
    revolution after the first ``skip_revolutions`` the dataset holds the peak contact force
    and peak slider ``|a|`` (dimension ``revolution``) and the journal offset at the crank
    phases ``phases_deg`` (Poincare section, dimensions ``phase``, ``revolution``)."""
    if spec.clearance is None:
        raise ValueError(f"mechanism '{spec.name}' has no clearance joint to sweep")
    rb = spec.clearance.bearing_radius
    long_over, stride = long_run_settings(spec, revolutions)
    phases = np.radians(np.asarray(phases_deg, float))
    runs = []
    for c in clearances:
        over = {"clearance.journal_radius": rb - float(c), **long_over}
        s, d = run_mechanism(spec.with_overrides(over))
        runs.append((float(c), s, d))
    t = runs[0][2]["time"].values
    ref = ideal_slider_crank(spec, t)
    scal: dict[str, list] = {k: [] for k in _SWEEP_VALUES}
    hist: dict[str, list] = {k: [] for k in _SWEEP_HISTORIES}
    per_rev: dict[str, list] = {k: [] for k in (*_REV_VALUES, *_POINCARE)}
    revs = None
    for _c, s, d in runs:
        for k, v in _sweep_values(s, d, ref).items():
            scal[k].append(v)
        for k, v in _sweep_histories(d).items():
            hist[k].append(v[::stride])
        revs, rv = _revolution_data(d, skip_revolutions, phases)
        for k, v in rv.items():
            per_rev[k].append(v)
    data = {k: ("clearance", np.array(v), {"units": _SWEEP_VALUES[k]}) for k, v in scal.items()}
    for k, v in hist.items():
        data[k] = (("clearance", "time"), np.array(v), {"units": _SWEEP_HISTORIES[k]})
    data.update(_revolution_vars("clearance", per_rev))
    data["a_ideal"] = ("time", ref["a"][::stride], {"units": "m/s^2"})
    data["x_ideal"] = ("time", ref["x"][::stride], {"units": "m"})
    ds = xr.Dataset(
        data,
        coords={
            "clearance": (
                "clearance",
                np.array(clearances, float),
                {"units": "m", "long_name": "radial clearance c"},
            ),
            "time": ("time", t[::stride], {"units": "s"}),
            **_revolution_coords(revs, phases_deg),
        },
    )
    ds.attrs.update(provenance_attrs(spec, study="clearance_sweep"))
    ds.attrs["rod_length"] = _rigid_rod(spec)[0]
    ds.attrs.update(_long_attrs(spec, long_over, revolutions, skip_revolutions))
    return ds


def _rms(y) -> float:
    return float(np.sqrt(np.mean(np.square(y))))


def _sweep_values(s, d, ref) -> dict[str, float]:
    """The values of one clearance's run ``d`` (summary ``s``; keys of ``_SWEEP_VALUES``): the
    slider's deviations from the ideal joint ``ref`` and the summary's entries."""
    out = {
        "dx_max": float(np.max(np.abs(d["slider_x"].values - ref["x"]))),
        "dv_rms_rel": _rms(d["slider_v"].values - ref["v"]) / _rms(ref["v"]),
        "da_rms_rel": _rms(d["slider_a"].values - ref["a"]) / _rms(ref["a"]),
        "a_peak_ratio": float(np.max(np.abs(d["slider_a"].values)) / np.max(np.abs(ref["a"]))),
    }
    out.update({k: float(s[k]) for k in _SWEEP_SUMMARY})
    return out


def _sweep_histories(d) -> dict[str, np.ndarray]:
    """The histories of one clearance's run ``d`` (keys of ``_SWEEP_HISTORIES``)."""
    return {
        "slider_a": d["slider_a"].values,
        "slider_x": d["slider_x"].values,
        "ecc_x": d["eccentricity_x"].values[:, 0],
        "ecc_y": d["eccentricity_y"].values[:, 0],
        "contact_force": d["contact_force_normal"].values[:, 0],
        "state": d["contact_state"].values[:, 0],
    }


def clearance_sweep_checks(
    ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the clearance sweep (``pipeline.clearance_sweep.tolerances``, none so far):
    every run's largest slider deviation within the geometric bound of its journal offset
    (exact on the constraint manifold; the run's constraint violation moves the slider by at
    most ``(1 + l / d_min) |Phi|``). How the deviations shrink with ``c`` is shown, not
    checked: two close clearances, or a chaotic orbit, can swap them, so no ordering holds for
    every list of clearances."""
    report_tolerances("clearance_sweep", tolerances)
    case = str(ds.attrs["case"])
    L = float(ds.attrs["rod_length"])
    r = float(ds.attrs["param.crank.length"])
    dmin = math.sqrt(L * L - r * r)
    c = ds["clearance"].values
    rows = []
    for i in np.argsort(c):
        ecc = float(c[i] * ds["max_eccentricity_ratio"].values[i])
        bound = ecc * L / dmin + ecc * ecc / dmin
        phi = (
            float(ds["max_constraint_violation"].values[i])
            if "max_constraint_violation" in ds
            else 0.0
        )
        rows.append(
            check(
                f"c = {c[i] * 1e3:g} mm: max |x - x_ideal| within the bound",
                bound,
                float(ds["dx_max"].values[i]),
                _geometric_allowance(phi, L, dmin, bound),
                mode="max",
                note=f"m; |Phi| = {phi:.2g} m",
                case=case,
            )
        )
    return rows


# --------------------------------------------------------------------------------------------
# contact laws: restitution recovered by each normal law against the independent integration
# --------------------------------------------------------------------------------------------
#: the quantities of an impact compared by the contact-law study
_IMPACT_KEYS = ("restitution", "duration", "max_penetration", "max_force")
#: units of the contact-law study's per-run variables (by the quantity's name)
_IMPACT_UNITS = {
    "ce": "1",
    "restitution": "1",
    "duration": "s",
    "max_penetration": "m",
    "max_force": "N",
    "steps": "1",
}


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
    histories (dimension ``run`` x ``time``). Each quantity also has ``<key>_err``, the run's
    error estimated from the run refined (:func:`~ancf_beam.mbs.analysis.refined_run`), and
    ``<key>_ref_err``, the reference's own (its difference from a run 10 times looser)."""
    if spec.kind != "two-body":
        raise ValueError(f"mechanism '{spec.name}' is not a two-body case")
    m, v0 = spec.m_eff, spec.v_rel
    combos = []
    for law in laws:
        for ce in [None] if law == "hertz" else restitution:
            combos.append((law, ce))
    cols: dict[str, list] = {"law": [], "ce": [], "steps": []}
    for k in _IMPACT_KEYS:
        cols.update({k: [], f"{k}_ref": [], f"{k}_err": [], f"{k}_ref_err": [], f"{k}_floor": []})
    pen, force = [], []
    t = None
    for law, ce in combos:
        row, d = _contact_law_run(spec, law, ce, float(K), float(exponent))
        for k, v in row.items():
            cols[k].append(v)
        if t is None:
            t = d["time"].values
        pen.append(d["penetration"].values[:, 0])
        force.append(d["contact_force_normal"].values[:, 0])
    data = _contact_law_variables(cols)
    data["penetration"] = (("run", "time"), np.array(pen), {"units": "m"})
    data["contact_force"] = (("run", "time"), np.array(force), {"units": "N"})
    ds = xr.Dataset(
        data, coords={"run": np.arange(len(combos)), "time": ("time", t, {"units": "s"})}
    )
    ds.attrs.update(
        provenance_attrs(
            spec, study="contact_laws", m_eff=m, v0=v0, K=float(K), exponent=float(exponent)
        )
    )
    return ds


def _contact_law_run(spec, law, ce, K, exponent) -> tuple[dict[str, Any], xr.Dataset]:
    """The two-body case ``spec`` with contact law ``law`` (``K``, ``exponent``, restitution
    ``ce``): the row of the contact-law study (the multibody run's quantities with their
    error estimates from the refined run and round-off floors, the reference's with its own
    error) and the run."""
    over = {
        "contact.law": law,
        "contact.K": K,
        "contact.exponent": exponent,
        "contact.k": None,
        "contact.c": None,
        "contact.zeta": None,
        "contact.restitution": None if ce is None else float(ce),
    }
    case = spec.with_overrides(over)
    s, d = run_mechanism(case)
    d.attrs.update(summary_attrs(s))
    fine = refined_runs(case, d)
    kappa = float(fine[0].attrs["kappa"])
    ref = integrate_impact(law, spec.m_eff, spec.v_rel, K=K, n=exponent, restitution=ce, error=True)
    row = {"law": law, "ce": np.nan if ce is None else float(ce), "steps": float(s["steps"])}
    got = _two_body_scalars(case, d)
    got_f = [_two_body_scalars(case, f) for f in fine]
    floors = _two_body_floors(case, d, got)
    for k in _IMPACT_KEYS:
        row[k] = got[k]
        row[f"{k}_floor"] = floors[k]
        row[f"{k}_err"] = estimate(
            got[k], [g[k] for g in got_f], kappa, tol_floor(case, d) * abs(got[k])
        )
        row[f"{k}_ref"] = ref[k]
        row[f"{k}_ref_err"] = ref["error"][k]
    return row, d


def _contact_law_variables(cols: Mapping[str, list]) -> dict[str, tuple]:
    """The per-run columns of the contact-law study as Dataset variables with units and long
    names (by the column's suffix)."""
    data = {}
    for k, v in cols.items():
        base = k.removesuffix("_floor").removesuffix("_err").removesuffix("_ref")
        attrs = {"units": _IMPACT_UNITS.get(base, "")} if k != "law" else {}
        if k.endswith("_ref"):
            attrs["long_name"] = "independent 1-DOF integration (references.impact)"
        elif k.endswith("_ref_err"):
            attrs["long_name"] = "bound of the reference's error (run 10 times looser)"
        elif k.endswith("_err"):
            attrs["long_name"] = "error estimate of the multibody run (refined run)"
        elif k.endswith("_floor"):
            attrs = {"units": "1", "long_name": "relative round-off floor of the run"}
        data[k] = ("run", np.array(v, dtype=object if k == "law" else float), attrs)
    return data


def contact_laws_checks(
    ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the contact-law study (``pipeline.contact_laws.tolerances``): per law and
    ``ce`` the multibody run's restitution, duration, largest penetration and peak force
    against the independent integration, within ``estimate_factor`` times the sum of the run's
    error estimate and the reference's own error, plus the run's round-off (8 eps per step).
    How far each law's restitution lies from its nominal ``ce`` is a property of the law, shown
    in the report, not checked."""
    tol = report_tolerances("contact_laws", tolerances)
    S = tol["estimate_factor"]
    rows = []
    for i in range(ds.sizes["run"]):
        law = str(ds["law"].values[i])
        ce = float(ds["ce"].values[i])
        tag = law if math.isnan(ce) else f"{law}, ce = {ce:g}"
        for k, unit in (
            ("restitution", "1"),
            ("duration", "s"),
            ("max_penetration", "m"),
            ("max_force", "N"),
        ):
            ref = float(ds[f"{k}_ref"].values[i])
            est = float(ds[f"{k}_err"].values[i]) + float(ds[f"{k}_ref_err"].values[i])
            rows.append(
                check(
                    f"{tag}: {k.replace('_', ' ')} vs independent integration",
                    ref,
                    float(ds[k].values[i]),
                    S * est / abs(ref) + float(ds[f"{k}_floor"].values[i]),
                    note=f"{unit}; bound {S:g} x (run's estimate + reference's error) + round-off",
                    case=str(ds.attrs["case"]),
                )
            )
    return rows


# --------------------------------------------------------------------------------------------
# flagship: graded (and damaging) ANCF rod in a crank-slider with a clearance joint
# --------------------------------------------------------------------------------------------
#: values of each flagship variant taken from its run's summary, and their units
_FLAGSHIP_SUMMARY = {
    "max_contact_force": "N",
    "first_impact_force": "N",
    "impacts": "1",
    "contact_fraction": "1",
    "max_eccentricity_ratio": "1",
    "slider_a_max": "m/s^2",
    "slider_a_min": "m/s^2",
    "midspan_deflection_max": "m",
    "drive_torque_max": "N m",
    "wall_s": "s",
}
#: values of each flagship variant derived from its run (:func:`_flagship_values`), and units
_FLAGSHIP_DERIVED = {
    "damage_max": "1",
    "a_peak_ratio": "1",
    "energy_drive_error": "1",
    "energy_drive_error_est": "1",
    "energy_drive_error_run": "1",
    "max_eccentricity": "m",
    "steps": "1",
    "dt_contact": "s",
}
#: histories of each flagship variant (:func:`_flagship_histories`), and their units
_FLAGSHIP_HISTORIES = {
    "slider_a": "m/s^2",
    "ecc_x": "m",
    "ecc_y": "m",
    "contact_force": "N",
    "state": "0 free, 1 impact, 2 continuous",
    "midspan": "m",
}


def run_flagship(
    spec: MechanismSpec,
    lams: Sequence[float],
    damage: Mapping[str, Any] | None = None,
    revolutions: int | None = None,
    skip_revolutions: int = 0,
    phases_deg: Sequence[float] = DEFAULT_PHASES_DEG,
    check_revolutions: float | None = None,
    workers: int = 1,
) -> xr.Dataset:
    """The flagship case ``spec`` (slider-crank, ANCF rod, clearance joint) with the rod's
    modulus ``E(x) = E0 (1 - lam (x/L)^n)`` for each ``lam`` in ``lams`` (``x`` from the crank
    pin to the slider) and, with ``damage`` (``{enabled, lam, threshold, softening, d_max}``),
    one more variant whose rod also damages. Per variant (dimension ``variant``): peak contact
    force, first impact force, impacts, contact share, largest eccentricity ratio, slider
    acceleration extremes and their ratio to the ideal joint's, largest mid-span deflection,
    largest damage; histories of the slider acceleration, the journal orbit, the contact force
    and state; the ideal rigid mechanism's slider acceleration.

    With ``revolutions`` each run lasts that many crank revolutions (:func:`long_run_settings`)
    and the dataset holds, per complete revolution after the first ``skip_revolutions``, the
    peak contact force and peak slider ``|a|`` and the Poincare section of the journal offset at
    ``phases_deg`` (:func:`flagship_statistics` summarises them). The energy balance's error
    estimate refines the runs over their first ``check_revolutions`` revolutions (None: the
    whole run); the error of the whole run is kept as ``energy_drive_error_run``. The variants
    run in ``workers`` processes (each one run of one variant)."""
    if spec.beam is None or spec.clearance is None:
        raise ValueError(f"mechanism '{spec.name}' needs an ANCF rod and a clearance joint")
    variants = _flagship_variants(spec, lams, damage)
    long_over, stride = long_run_settings(spec, revolutions)
    phases = np.radians(np.asarray(phases_deg, float))
    t_check = None if check_revolutions is None else check_revolutions * revolution_period(spec)
    jobs = [
        (spec, over, long_over, stride, skip_revolutions, phases, t_check)
        for _l, over, _lam, _d in variants
    ]
    if workers > 1 and len(jobs) > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        # fork: the workers inherit the loaded kernels and need not import a Snakemake script
        with ProcessPoolExecutor(min(workers, len(jobs)), mp.get_context("fork")) as pool:
            results = list(pool.map(_flagship_variant, *zip(*jobs, strict=True)))
    else:
        results = [_flagship_variant(*job) for job in jobs]
    scal: dict[str, list] = {k: [] for k in (*_FLAGSHIP_SUMMARY, *_FLAGSHIP_DERIVED)}
    hist: dict[str, list] = {k: [] for k in _FLAGSHIP_HISTORIES}
    per_rev: dict[str, list] = {k: [] for k in (*_REV_VALUES, *_POINCARE)}
    for vals, h, (_revs, rv), _dmg, _t, _a in results:
        for k, v in vals.items():
            scal[k].append(v)
        for k, v in h.items():
            hist[k].append(v)
        for k, v in rv.items():
            per_rev[k].append(v)
    t, a_ideal = results[0][4], results[0][5]
    ds = _flagship_dataset(spec, variants, scal, hist, [r[3] for r in results], t, a_ideal)
    ds = ds.assign_coords(_revolution_coords(results[0][2][0], phases_deg))
    for k, v in _revolution_vars("variant", per_rev).items():
        ds[k] = v
    ds.attrs.update(_long_attrs(spec, long_over, revolutions, skip_revolutions))
    ds.attrs["check_t_end"] = float(t[-1] if t_check is None else min(t_check, t[-1]))
    return ds


def _flagship_variant(spec, over, long_over, stride, skip, phases, t_check):
    """One flagship variant (overrides ``over``) run over ``long_over``: its values, histories
    (every ``stride``-th sample), per-revolution data, damage field, times and the ideal
    joint's slider acceleration (both every ``stride``-th sample)."""
    case = spec.with_overrides({**over, **long_over})
    s, d = run_mechanism(case)
    t = d["time"].values
    a_ideal = ideal_slider_crank(spec, t)["a"]
    vals = _flagship_values(case, s, d, a_ideal, t_check)
    hist = {k: v[::stride] for k, v in _flagship_histories(d).items()}
    dmg = d["damage_final"].values if "damage_final" in d else None
    return vals, hist, _revolution_data(d, skip, phases), dmg, t[::stride], a_ideal[::stride]


def _flagship_variants(spec, lams, damage) -> list[tuple[str, dict[str, Any], float, bool]]:
    """``(label, overrides, lam, damaging)`` per variant: one per ``lam`` and, with
    ``damage`` enabled, the damaging one (its axial quadrature that of bending)."""
    variants = [
        (f"lam = {lam:g}", {"rod.defect.lam": float(lam)}, float(lam), False) for lam in lams
    ]
    if damage and damage.get("enabled", True):
        lam = float(damage["lam"])
        over = {"rod.defect.lam": lam, "rod.damage.enabled": True}
        for k in ("threshold", "softening", "d_max"):
            if damage.get(k) is not None:
                over[f"rod.damage.{k}"] = float(damage[k])
        if spec.beam.mesh.n_gauss_axial != spec.beam.mesh.n_gauss_bending:
            over["rod.mesh.n_gauss_axial"] = spec.beam.mesh.n_gauss_bending
        variants.append((f"lam = {lam:g}, damaging", over, lam, True))
    return variants


def _flagship_values(case, s, d, a_ideal, t_check=None) -> dict[str, float]:
    """The values of one variant (summary ``s``, run ``d``): the summary's (NaN when absent),
    the largest damage, the peak slider acceleration over the ideal joint's, the energy
    balance's error up to ``t_check`` (None: the whole run) with its estimate from the run
    refined over that time, the whole run's error, the largest journal offset (every sample),
    the steps and the contact step (0: adaptive)."""
    out = {k: np.nan if s.get(k) is None else float(s.get(k)) for k in _FLAGSHIP_SUMMARY}
    out["damage_max"] = float(s.get("damage_max", 0.0))
    out["a_peak_ratio"] = float(np.max(np.abs(d["slider_a"].values)) / np.max(np.abs(a_ideal)))
    out["energy_drive_error_run"] = _drive_work_error(d)
    dw = d
    if t_check is not None:
        t = d["time"].values
        half = 0.5 * float(t[1] - t[0]) if t.size > 1 else 0.0
        dw = d.isel(time=slice(0, int(np.searchsorted(t, t_check + half, side="right"))))
    out["energy_drive_error"] = _drive_work_error(dw)
    fine = refined_runs(case, dw)
    e_terms = float(
        np.max(np.abs(dw["energy_total"].values)) + np.max(np.abs(dw["drive_work"].values))
    )
    out["energy_drive_error_est"] = estimate(
        energy_residual(dw),
        [energy_residual(f) for f in fine],
        float(fine[0].attrs["kappa"]),
        tol_floor(case, dw) * e_terms,
    ) / float(dw["kinetic_energy"].max())
    out["max_eccentricity"] = float(
        np.hypot(d["eccentricity_x"].values[:, 0], d["eccentricity_y"].values[:, 0]).max()
    )
    out["steps"] = float(s["steps"])
    dtc = d.attrs.get("solver.dt_contact")
    out["dt_contact"] = 0.0 if s["integrator"] == "adaptive" or dtc is None else float(dtc)
    return out


def _flagship_histories(d) -> dict[str, np.ndarray]:
    """The histories of one variant's run ``d`` (keys of ``_FLAGSHIP_HISTORIES``)."""
    return {
        "slider_a": d["slider_a"].values,
        "ecc_x": d["eccentricity_x"].values[:, 0],
        "ecc_y": d["eccentricity_y"].values[:, 0],
        "contact_force": d["contact_force_normal"].values[:, 0],
        "state": d["contact_state"].values[:, 0],
        "midspan": d["midspan_deflection"].values,
    }


def _flagship_dataset(spec, variants, scal, hist, dmg_fields, t, a_ideal) -> xr.Dataset:
    """The flagship study's Dataset over ``variant`` (and ``time``) with its attributes."""
    units = {**_FLAGSHIP_SUMMARY, **_FLAGSHIP_DERIVED}
    data = {k: ("variant", np.array(v, float), {"units": units[k]}) for k, v in scal.items()}
    for k, v in hist.items():
        data[k] = (("variant", "time"), np.array(v), {"units": _FLAGSHIP_HISTORIES[k]})
    data["lam"] = ("variant", np.array([v[2] for v in variants]), {"units": "1"})
    data["damaging"] = ("variant", np.array([int(v[3]) for v in variants]), {"units": "1"})
    data["a_ideal"] = ("time", a_ideal, {"units": "m/s^2"})
    fields = [f for f in dmg_fields if f is not None]
    if fields:
        data["damage_final"] = (
            ("element", "gauss"),
            fields[-1],
            {"units": "1", "long_name": "damaging variant, at t_end"},
        )
    ds = xr.Dataset(
        data, coords={"variant": [v[0] for v in variants], "time": ("time", t, {"units": "s"})}
    )
    ds.attrs.update(provenance_attrs(spec, study="flagship"))
    ds.attrs["radial_clearance"] = spec.clearance.radial_clearance
    ds.attrs["contact_K"] = spec.clearance.contact.stiffness
    ds.attrs["contact_exponent"] = spec.clearance.contact.exponent
    from ancf_beam.mbs.mechanisms import build_mechanism

    mech = build_mechanism(spec)
    ds.attrs["contact_omega"] = float(mech.contact.omega(m_eff=mech.contact_m_eff) or 0.0)
    ds.attrs["defect_n"] = spec.beam.defect.E.n
    return ds


def flagship_checks(
    ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the flagship study (``pipeline.flagship.tolerances``): the energy balance with
    the drive's work of every variant (contact and damage dissipation booked), within
    ``estimate_factor`` times its estimate from the refined run plus round-off; and the journal
    never further from its bearing centre than ``c`` plus the largest penetration the contact
    law allows at the peak force, ``(F / K)^(1/n)`` (at the largest penetration ``delta' = 0``
    and every law gives ``F = K delta^n``); the peak force of steps of ``h`` (``dt_contact``)
    lies below the continuous one by at most ``(omega h)^2 / 8`` (relative, a force ``~ sin(omega
    t)`` sampled every ``h``; ``omega`` the contact frequency), so the bound allows
    ``delta (omega h)^2 / (8 n)`` more."""
    tol = report_tolerances("flagship", tolerances)
    S = tol["estimate_factor"]
    case = str(ds.attrs["case"])
    rows = []
    c = float(ds.attrs["radial_clearance"])
    K = float(ds.attrs["contact_K"])
    n = float(ds.attrs["contact_exponent"])
    omega = float(ds.attrs.get("contact_omega", 0.0))
    for i, v in enumerate(ds["variant"].values):
        steps = float(ds["steps"].values[i]) if "steps" in ds else 1.0
        est = (
            float(ds["energy_drive_error_est"].values[i])
            if "energy_drive_error_est" in ds
            else math.inf
        )
        window = ""
        if "check_t_end" in ds.attrs and "revolution_period" in ds.attrs:
            n_rev = float(ds.attrs["check_t_end"]) / float(ds.attrs["revolution_period"])
            window = f" over the first {n_rev:.3g} revolution(s)"
        rows.append(
            resolved(
                check(
                    f"{v}: energy change vs drive work (/ max T){window}",
                    0.0,
                    float(ds["energy_drive_error"].values[i]),
                    S * est + 8 * EPS * steps,
                    mode="abs",
                    note=f"contact and damage dissipation booked; bound {S:g} "
                    "x estimate from the refined run + round-off",
                    case=case,
                )
            )
        )
        if "max_eccentricity" in ds:  # from every sample of the run
            ecc = float(ds["max_eccentricity"].values[i])
        else:
            ecc = float(np.hypot(ds["ecc_x"].values[i], ds["ecc_y"].values[i]).max())
        dmax = (float(ds["max_contact_force"].values[i]) / K) ** (1.0 / n)
        h = float(ds["dt_contact"].values[i]) if "dt_contact" in ds else 0.0
        allow = dmax * (omega * h) ** 2 / (8.0 * n) / (c + dmax) + 8 * EPS
        rows.append(
            check(
                f"{v}: journal offset <= c + (F_max / K)^(1/n)",
                c + dmax,
                ecc,
                allow,
                mode="max",
                note=f"m (sampled orbit); peak force of steps of "
                f"{h:.2g} s: (omega h)^2 / 8 with omega = {omega:.3g} rad/s",
                case=case,
            )
        )
    return rows


#: per-revolution quantities summarised by :func:`flagship_statistics`, with their labels
REVOLUTION_QUANTITIES = {
    "rev_peak_force": "peak contact force",
    "rev_peak_accel": "peak slider |a|",
}


def flagship_statistics(
    ds: xr.Dataset, confidence: float = 0.9, n_resamples: int = 2000, seed: int = 0
) -> list[dict[str, Any]]:
    """Per variant of a flagship (or any) dataset with per-revolution peaks (dimension
    ``revolution``) and per quantity of :data:`REVOLUTION_QUANTITIES`: the distribution over
    the revolutions (:func:`ancf_beam.studies.revolutions.distribution`) and the shift of its
    median from the first variant's (the reference, ``lam`` = the first of the list, no damage)
    with its bootstrap interval at ``confidence``
    (:func:`ancf_beam.studies.revolutions.median_shift`); rows of ``variant``, ``quantity``,
    ``n``, ``median``, ``q10`` ... ``q90``, ``min``, ``max``, ``shift``, ``low``, ``high``,
    ``rel``, ``rel_low``, ``rel_high``, ``resolved`` (shift keys NaN on the reference)."""
    if "revolution" not in ds.dims or ds.sizes["revolution"] < 2:
        raise ValueError("the dataset has fewer than two revolutions of statistics")
    dim = next(d for d in ds["rev_peak_force"].dims if d != "revolution")
    names = [str(v) for v in ds[dim].values]
    rows = []
    for key, label in REVOLUTION_QUANTITIES.items():
        ref = ds[key].values[0]
        for i, name in enumerate(names):
            x = ds[key].values[i]
            row = {"variant": name, "quantity": label, "units": ds[key].attrs.get("units", "")}
            row.update(distribution(x))
            if i == 0:
                row.update(
                    dict.fromkeys(
                        ("shift", "low", "high", "rel", "rel_low", "rel_high", "resolved"), np.nan
                    )
                )
            else:
                row.update(median_shift(ref, x, confidence, n_resamples, seed))
            rows.append(row)
    return rows
