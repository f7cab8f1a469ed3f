"""Mechanism runs for the CLI and the pipeline: spec -> build -> integrate -> (summary, Dataset).

Summary (JSON-ready; SI units): ``case``, ``kind``, ``integrator``, ``t_end``, ``dt`` (s; null for
the adaptive integrator), ``steps``, ``wall_s``, ``max_constraint_violation`` (the largest
``|Phi|`` over all samples and equations: m for position equations, rad for angles),
``max_velocity_violation`` (``|Phi_q v + Phi_t|``), ``energy_drift_rel`` (``max|E - E0| / max T``
with ``E`` = kinetic + potential + work released by damage; null when a driver feeds work in,
or when the energy put in, ``T(0) + U(0) + max |V|``, is below the beams' strain-energy
round-off, :func:`ancf_beam.results.energy_drift_rel`: nothing but round-off moves the system);
pendulum: ``tip_x``, ``tip_y`` (m, at ``t_end``);
slider-crank: ``slider_x`` (m), ``slider_v`` (m/s), ``slider_a`` (m/s^2) at ``t_end``,
``slider_a_max``, ``slider_a_min``, ``drive_torque_max`` (N m, largest magnitude of the torque
the drive applies to the crank), ``reaction_max`` (N, largest joint force of any joint), and
with an ANCF rod ``midspan_deflection_max`` (m, largest magnitude) and, if it damages,
``damage_max`` (largest damage at ``t_end``; the Dataset adds ``damage_final``, element x gauss);
two-body: ``restitution`` (separation speed at ``t_end`` / approach speed ``v_rel``; null while
the bodies are still in contact at ``t_end`` (a force, or an overlap not yet opening) or before
their first contact),
``contact_duration`` (s, time with positive contact force: located by the adaptive
integrator's events, else from the samples by linear interpolation of the force's zero
crossings), ``max_penetration`` (m), ``max_contact_force`` (N) (the adaptive integrator:
searched on its dense output between the steps, as the contact record of a clearance joint;
the others: largest samples refined by a parabola through their neighbours), ``critical_dt``
(s, explicit
bound ``2 / omega`` of the governing mode ``critical_dt_mode``: ``contact`` or ``beam``).

Clearance joint (``clearance:``; from the contact record of every accepted step, not only the
samples): ``first_contact_time`` (s, the first onset, null without contact),
``first_impact_force`` (N, peak normal force of the first episode), ``max_contact_force`` (N),
``contact_fraction`` (share of the run with penetration > 0), ``max_eccentricity_ratio``
(``|e| / c``, > 1 in contact), ``max_penetration`` (m), ``impacts`` (free -> contact
transitions), ``continuous_contacts`` (episodes classified continuous), ``contact_steps``
(steps of ``dt_contact``), ``critical_dt``, ``critical_dt_mode`` (as for two-body; the
clearance contact's frequency from the two bodies' reduced mass, the crank pin speed taken as
the impact speed). An episode (onset to separation) is *continuous contact* when it lasts longer
than ``clearance.continuous_factor`` (5) times the duration of a free undamped Hertz impact of
``m_eff = m_rod m_pin / (m_rod + m_pin)`` at the episode's approach speed
(:func:`ancf_beam.mbs.stepping.classify_episodes`), otherwise an *impact*; ``contact_state`` per
sample is 0 (free flight: no penetration), 1 or 2 (the class of the episode it lies in).
Dataset additions: ``contact_force_normal``, ``contact_force_tangential``, ``penetration``,
``eccentricity_x``, ``eccentricity_y`` (journal centre minus bearing centre), ``contact_state``.

Nonsmooth contacts (``model: nonsmooth``, integrator ``moreau-jean``): a clearance joint's
fields are those of :func:`ancf_beam.mbs.outputs.nonsmooth_contact` (``impulses``,
``max_impulse``, ``first_impact_impulse``, the compliant fields that apply) and
``critical_dt``, ``critical_dt_mode``; a two-body impact's ``restitution``, ``impulses``,
``max_impulse``, ``max_penetration``, ``impacts``, ``critical_dt``, ``critical_dt_mode``; the
Dataset has ``impulse_normal``, ``impulse_tangential`` (N s, time x contact) instead of the
contact forces.

Dataset (dimension ``time``): as they apply, ``slider_x``, ``slider_v``, ``slider_a``,
``crank_angle``, ``drive_torque``, ``reaction_force`` (time x joint), ``tip_x``, ``tip_y``,
``midspan_deflection`` (ANCF rod: signed distance of the mid-span point from the chord of its end
points, positive to the left of the direction node 0 -> last node), and for every circle contact
(dimension ``contact``) ``contact_force_normal``, ``contact_force_tangential`` (N, friction on
the second body along ``t``), ``penetration`` (m), ``eccentricity_x``, ``eccentricity_y`` (m,
centre of the second circle minus the first), ``contact_state`` (1 while the normal force is
positive, else 0), ``constraint_violation``,
``velocity_violation``, ``kinetic_energy``, ``potential_energy``, ``energy_total`` (kinetic +
potential + the work dissipated by damage and the contacts, booked every step), ``drive_work``
(J, the work the drives fed in since t = 0, ``lam . Phi_t`` booked every step: ``energy_total -
drive_work`` is conserved); attributes:
provenance (every resolved parameter, case, version, commit, config hash) and solver settings.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.config import check_contact_integrator
from ancf_beam.errors import ConfigError
from ancf_beam.io import provenance_attrs
from ancf_beam.kernel_cache import install_compile_clock
from ancf_beam.mbs.bodies import BeamBody
from ancf_beam.mbs.integrators import IntegratorSettings, explicit_dt_bounds, integrate
from ancf_beam.mbs.mechanisms import Mechanism, build_mechanism
from ancf_beam.mbs.outputs import (
    NONSMOOTH_VARS,
    contact_duration,
    contact_state,
    general_outputs,
    geometry,
    is_nonsmooth,
    nonsmooth_contact,
    peak,
)
from ancf_beam.mbs.stepping import classify_episodes
from ancf_beam.results import MechanismResult
from ancf_beam.specs import MechanismSpec, contact_models

install_compile_clock()  # numba is loaded by now; no kernel has run yet

__all__ = [
    "ADAPTIVE_REFINE",
    "clearance_outputs",
    "contact_duration",
    "mechanism_critical_dt",
    "midspan_deflection",
    "peak",
    "has_contacts",
    "refined_levels",
    "refined_run",
    "refined_runs",
    "refinement",
    "run_mechanism",
    "settings_from_spec",
    "contact_models",
]


def settings_from_spec(
    spec: MechanismSpec, t_end: float | None = None, integrator: str | None = None
) -> IntegratorSettings:
    """Integrator settings of a mechanism case (``t_end``, ``integrator``: overrides)."""
    return IntegratorSettings(
        integrator=integrator or spec.integrator,
        t_end=spec.t_end if t_end is None else float(t_end),
        sample_dt=spec.sample_dt,
        alpha=spec.baumgarte.alpha,
        beta=spec.baumgarte.beta,
        **dataclasses.asdict(spec.solver),
    )


def midspan_deflection(mech: Mechanism, q: np.ndarray) -> np.ndarray:
    """Signed distance (m) of the beam's mid-span point (reference arc coordinate L/2) from the
    chord of its end nodes, positive to the left of node 0 -> last node; ``q`` (..., n)."""
    beam = mech.beam
    a = beam.node(0).position(q)
    b = beam.node(-1).position(q)
    mid = beam.point(0.5 * beam.model.length).position(q)
    chord = b - a
    u = chord / np.linalg.norm(chord, axis=-1, keepdims=True)
    rel = mid - a
    return u[..., 0] * rel[..., 1] - u[..., 1] * rel[..., 0]


def _contact_data(mech: Mechanism, res: MechanismResult, data: dict) -> list[str]:
    """Per circle contact: the Dataset's contact variables (see the module docstring)."""
    system = mech.system
    hist = system.contact_history(res.q, res.v, res.force_state)
    if not hist:
        return []
    names = list(hist)

    def stack(key):
        return np.array([hist[nm][key] for nm in names]).T.reshape(len(res.t), len(names))

    dims = ("time", "contact")
    data.update(
        contact_force_normal=(dims, stack("F_n"), {"units": "N"}),
        contact_force_tangential=(
            dims,
            stack("F_t"),
            {"units": "N", "long_name": "friction force on the second body along t"},
        ),
        penetration=(dims, stack("delta"), {"units": "m", "long_name": "penetration (> 0)"}),
        eccentricity_x=(dims, stack("e_x"), {"units": "m"}),
        eccentricity_y=(dims, stack("e_y"), {"units": "m"}),
        contact_state=(
            dims,
            stack("state").astype(np.int8),
            {"long_name": "1 while the normal force is positive, else 0"},
        ),
    )
    return names


def _two_body_nonsmooth(mech: Mechanism, res: MechanismResult, data: dict) -> dict[str, Any]:
    """Two-body impact with a nonsmooth contact: Newton's law at the impact, the impulses."""
    spec = mech.spec
    b1, b2 = mech.bodies
    cs, hist = nonsmooth_contact(mech.system, res, mech.contact)
    _nonsmooth_data([mech.contact.name], [hist], data)
    v_sep = float(res.v[-1, b2.offset] - res.v[-1, b1.offset])
    in_contact_at_end = bool(hist["P_n"][-1] > 0.0)
    bounds = explicit_dt_bounds(mech.system)
    mode = min(bounds, key=bounds.get) if bounds else None
    return {
        "restitution": None if in_contact_at_end or cs["impulses"] == 0 else v_sep / spec.v_rel,
        "impulses": cs["impulses"],
        "max_impulse": cs["max_impulse"],
        "max_penetration": cs["max_penetration"],
        "impacts": cs["impacts"],
        "critical_dt": bounds.get(mode) if mode else None,
        "critical_dt_mode": mode,
    }


def _nonsmooth_data(names: list[str], hists: list[dict], data: dict) -> None:
    """The Dataset variables (time, contact) of the nonsmooth contacts of a built-in kind:
    impulses, penetration, eccentricity, contact_state (module docstring)."""
    dims = ("time", "contact")

    def stack(key):
        return np.stack([np.asarray(h[key]) for h in hists], axis=1)

    for key, src, attrs in NONSMOOTH_VARS:
        data[key] = (dims, stack(src), attrs)
    data.update(
        penetration=(dims, stack("delta"), {"units": "m", "long_name": "penetration (> 0)"}),
        eccentricity_x=(dims, stack("e_x"), {"units": "m"}),
        eccentricity_y=(dims, stack("e_y"), {"units": "m"}),
        contact_state=(
            dims,
            stack("state").astype(np.int8),
            {"long_name": "1 when the step ending at the sample took a positive normal impulse"},
        ),
    )


def _two_body_summary(mech: Mechanism, res: MechanismResult, data: dict) -> dict[str, Any]:
    spec = mech.spec
    b1, b2 = mech.bodies
    fe = mech.contact
    if is_nonsmooth(fe):
        return _two_body_nonsmooth(mech, res, data)
    r = mech.system.contact_history(res.q, res.v, res.force_state)[fe.name]
    t = res.t
    v_sep = float(res.v[-1, b2.offset] - res.v[-1, b1.offset])
    # Over: a force at t_end, or an overlap still closing. An overlap that opens under zero
    # force stays free of force (no gravity; every law's force is clipped where k delta + c
    # delta' <= 0, or K delta^n (1 + chi delta') <= 0, both only falling while delta' < 0):
    # a heavily damped impact ends with the bodies separating but still overlapped.
    in_contact_at_end = bool(r["F_n"][-1] > 0.0 or (r["delta"][-1] > 0.0 and v_sep <= 0.0))
    intervals = (res.stats or {}).get("contact_intervals")
    if intervals:
        duration = float(sum(t1 - t0 for _, t0, t1 in intervals))
    else:
        duration = contact_duration(t, r["F_n"])
    bounds = explicit_dt_bounds(mech.system)
    mode = min(bounds, key=bounds.get) if bounds else None
    rec = res.contact
    if res.integrator == "adaptive" and rec is not None:  # peaks searched on the dense output
        e = mech.system.forces.index(fe)
        row = rec.elements.index(e)
        eps = rec.episodes[rec.episodes[:, 0] == e] if len(rec.episodes) else rec.episodes
        pen = float(np.nanmax(eps[:, 5])) if len(eps) else 0.0
        max_pen = max(pen, float(np.max(r["delta"])))
        max_force = max(float(rec.max_force[row]), float(np.max(r["F_n"])))
    else:
        max_pen = peak(t, r["delta"])
        max_force = peak(t, r["F_n"], clipped=True)
    impacts = int(res.force_state[-1, mech.system.forces.index(fe), 2])
    return {  # restitution: only once an impact has ended (before it, or during it: null)
        "restitution": None if in_contact_at_end or impacts == 0 else v_sep / spec.v_rel,
        "contact_duration": duration,
        "max_penetration": max_pen,
        "max_contact_force": max_force,
        "impacts": impacts,
        "critical_dt": bounds.get(mode) if mode else None,
        "critical_dt_mode": mode,
    }


def _reactions(mech: Mechanism, res: MechanismResult) -> tuple[list[str], np.ndarray]:
    """Joint forces (N, magnitude) of every force-bearing joint over the samples."""
    names, cols = [], []
    for j in mech.system.joints:
        force = j.reaction_force(res.lam[:, j.first_row : j.first_row + len(j.rows)], res.q)
        if force is not None:
            names.append(j.name)
            cols.append(np.linalg.norm(force, axis=-1))
    return names, np.array(cols).T.reshape(len(res.t), len(names))


def _damage_data(mech: Mechanism, summary: dict, data: dict) -> None:
    """A damaging ANCF rod: its damage at ``t_end`` per integration point (``damage_final``,
    element x gauss) and the largest value (``damage_max``)."""
    model = mech.beam.model
    if not model.case.damage.enabled:
        return
    d = np.array(model.damage, dtype=float)
    summary["damage_max"] = float(d.max())
    data["damage_final"] = (
        ("element", "gauss"),
        d,
        {"units": "1", "long_name": "damage of the rod at t_end per integration point"},
    )


def clearance_outputs(mech: Mechanism, res: MechanismResult) -> tuple[dict, dict]:
    """Summary fields of a clearance joint (module docstring) and its per-sample history
    (:meth:`~ancf_beam.mbs.system.System.contact_history`, with ``contact_state`` 0 free flight,
    1 impact, 2 continuous contact)."""
    cl = mech.spec.clearance
    c = cl.radial_clearance
    system = mech.system
    if is_nonsmooth(mech.contact):
        summary, hist = nonsmooth_contact(system, res, mech.contact)
        hist["contact_state"] = hist["state"]
        bounds = explicit_dt_bounds(system)
        mode = min(bounds, key=bounds.get) if bounds else None
        summary["critical_dt"] = bounds.get(mode) if mode else None
        summary["critical_dt_mode"] = mode
        return summary, hist
    e = system.forces.index(mech.contact)
    rec = res.contact
    row = rec.elements.index(e)
    eps = rec.episodes[rec.episodes[:, 0] == e] if len(rec.episodes) else rec.episodes
    t = res.t
    t_end = float(t[-1])
    law = cl.contact
    states = classify_episodes(
        eps,
        t_end,
        mech.contact_m_eff,
        law.stiffness,
        law.exponent,
        cl.continuous_factor,
        law.v0_min,
    )
    hist = dict(system.contact_history(res.q, res.v, res.force_state)[mech.contact.name])
    delta = np.asarray(hist["delta"], float)
    ecc = np.hypot(hist["e_x"], hist["e_y"])
    # per sample: 0 free flight, else the class of the episode the sample lies in
    hist["contact_state"] = contact_state(t, delta, eps, states)
    delta_max = float(np.nanmax(eps[:, 5])) if len(eps) else 0.0
    summary = {
        "first_contact_time": float(eps[0, 1]) if len(eps) else None,
        "first_impact_force": float(eps[0, 4]) if len(eps) else None,
        "max_contact_force": float(rec.max_force[row]),
        "contact_fraction": float(rec.contact_time[row] / t_end) if t_end > 0 else 0.0,
        "max_eccentricity_ratio": float(max(np.max(ecc), c + delta_max) / c),
        "max_penetration": delta_max,
        "impacts": int(len(eps)),
        "continuous_contacts": int(np.sum(states == 2)),
        "contact_steps": int(rec.steps_small),
    }
    bounds = explicit_dt_bounds(system)
    mode = min(bounds, key=bounds.get) if bounds else None
    summary["critical_dt"] = bounds.get(mode) if mode else None
    summary["critical_dt_mode"] = mode
    return summary, hist


def run_mechanism(
    spec: MechanismSpec,
    t_end: float | None = None,
    integrator: str | None = None,
    progress: bool = False,
) -> tuple[dict[str, Any], xr.Dataset]:
    """Build and integrate the mechanism of ``spec``; see the module docstring."""
    if integrator == "moreau-jean" and spec.solver.dt is None:
        raise ConfigError(
            f"the integrator of this run of mechanism '{spec.name}' = 'moreau-jean' needs config "
            f"key 'mechanisms.{spec.name}.solver.dt' = None to be a number > 0 (s): the "
            "moreau-jean time stepping takes a fixed step"
        )
    if integrator is not None:
        check_contact_integrator(
            spec.name,
            integrator,
            contact_models(spec),
            override=True,
            episodes=spec.kind != "two-body",
        )
    mech = build_mechanism(spec)
    settings = settings_from_spec(spec, t_end, integrator)
    res = integrate(mech.system, settings, q0=mech.q0, v0=mech.v0, progress=progress)
    data = _history_data(res)
    summary = _base_summary(spec, mech, settings, res)
    gsum, gdata, coords = general_outputs(mech, res)
    if spec.kind == "general":
        summary.update(gsum)
        data.update(gdata)
        damaged = {
            n: float(np.max(b.model.damage))
            for n, b in mech.named_bodies.items()
            if isinstance(b, BeamBody) and b.model.case.damage.enabled
        }
        if damaged:
            summary["damage_max"] = damaged  # per damaging beam, at t_end
    else:  # a preset keeps its fields; it gains the points, bodies and their histories
        summary.update(points=gsum["points"], bodies=gsum["bodies"])
        data.update({k: v for k, v in gdata.items() if k.split("_")[0] in MOTION})
        coords = {k: v for k, v in coords.items() if k.split("_")[0] in ("time", *MOTION)}
        _preset_outputs(mech, res, summary, data, coords)
    ds = xr.Dataset(data, coords=coords)
    ds.attrs["geometry"] = json.dumps(geometry(mech))
    system = mech.system
    extra = {f"solver.{k}": v for k, v in (res.stats or {}).items()}
    ds.attrs.update(
        provenance_attrs(
            spec,
            study="mechanism",
            kind=spec.kind,
            integrator=settings.integrator,
            dt=res.dt,
            steps=res.steps,
            wall_s=res.wall_s,
            n_dof=system.n,
            n_equations=system.m,
            equations=", ".join(system.row_labels),
            **extra,
        )
    )
    return summary, ds


#: the variables of the motion (markers, bodies, beam nodes) every mechanism's Dataset carries
MOTION = ("marker", "body", "node")


def _preset_outputs(mech: Mechanism, res: MechanismResult, summary: dict, data: dict, coords):
    """The fields and histories of the built-in kinds (module docstring)."""
    spec = mech.spec
    if spec.kind == "two-body":
        _two_body_outputs(mech, res, summary, data)
    elif spec.kind == "pendulum":
        _pendulum_outputs(mech, res, summary, data)
    else:
        coords["joint"] = ("joint", _slider_crank_outputs(mech, res, summary, data))
    contact_names = _contact_data(mech, res, data)
    if spec.clearance is not None and is_nonsmooth(mech.contact):
        cs, hist = clearance_outputs(mech, res)
        summary.update(cs)
        _nonsmooth_data([mech.contact.name], [hist], data)
        contact_names = [mech.contact.name]
    elif spec.clearance is not None:
        cs, hist = clearance_outputs(mech, res)
        summary.update(cs)
        data["contact_state"] = (
            ("time", "contact"),
            hist["contact_state"][:, None],
            {"long_name": "0 free flight, 1 impact, 2 continuous contact"},
        )
    if spec.kind == "two-body" and is_nonsmooth(mech.contact):
        contact_names = [mech.contact.name]
    if contact_names:
        coords["contact"] = ("contact", contact_names)


def _history_data(res: MechanismResult) -> dict[str, Any]:
    """The Dataset variables every mechanism run has: constraint residuals and energies."""
    return {
        "constraint_violation": (
            "time",
            res.phi_max,
            {
                "units": "m (rad for angle equations)",
                "long_name": "largest |Phi| over the constraint equations",
            },
        ),
        "velocity_violation": (
            "time",
            res.dphi_max,
            {"units": "m/s (rad/s for angle equations)", "long_name": "largest |Phi_q v + Phi_t|"},
        ),
        "kinetic_energy": ("time", res.kinetic, {"units": "J"}),
        "potential_energy": (
            "time",
            res.strain + res.gravity,
            {"units": "J", "long_name": "strain + gravity + force elements"},
        ),
        "energy_total": (
            "time",
            res.total,
            {"units": "J", "long_name": "kinetic + potential + dissipated"},
        ),
        "drive_work": (
            "time",
            res.drive_work,
            {
                "units": "J",
                "long_name": "work fed in by the drives since t = 0 (booked every "
                "step: energy_total - drive_work is conserved)",
            },
        ),
    }


def _base_summary(
    spec: MechanismSpec, mech: Mechanism, settings: IntegratorSettings, res: MechanismResult
) -> dict[str, Any]:
    """The summary fields every mechanism run has (case, integrator, steps, residuals, drift)."""
    drift = res.energy_drift_rel() if mech.system.energy_balance_closes else math.nan
    drift = None if math.isnan(drift) else drift  # a drive feeds work in / round-off only
    return {
        "case": spec.name,
        "kind": spec.kind,
        "integrator": settings.integrator,
        "t_end": float(res.t[-1]),
        "dt": None if math.isnan(res.dt) else res.dt,
        "steps": res.steps,
        "wall_s": res.wall_s,
        "max_constraint_violation": float(np.max(res.phi_max)) if res.phi_max.size else 0.0,
        "max_velocity_violation": float(np.max(res.dphi_max)) if res.dphi_max.size else 0.0,
        "energy_drift_rel": drift,
    }


def _two_body_outputs(mech: Mechanism, res: MechanismResult, summary: dict, data: dict) -> None:
    """Two-body impact: the impact summary and the bodies' positions and velocities."""
    summary.update(_two_body_summary(mech, res, data))
    o1, o2 = (b.offset for b in mech.bodies)
    data.update(
        x1=("time", res.q[:, o1], {"units": "m"}),
        x2=("time", res.q[:, o2], {"units": "m"}),
        v1=("time", res.v[:, o1], {"units": "m/s"}),
        v2=("time", res.v[:, o2], {"units": "m/s"}),
    )


def _pendulum_outputs(mech: Mechanism, res: MechanismResult, summary: dict, data: dict) -> None:
    """Pendulum: the free end's final position and its history."""
    tip = mech.beam.node(-1).position(res.q)
    summary["tip_x"] = float(tip[-1, 0])
    summary["tip_y"] = float(tip[-1, 1])
    data["tip_x"] = ("time", tip[:, 0], {"units": "m", "long_name": "free-end x position"})
    data["tip_y"] = ("time", tip[:, 1], {"units": "m", "long_name": "free-end y position"})


def _slider_crank_outputs(
    mech: Mechanism, res: MechanismResult, summary: dict, data: dict
) -> list[str]:
    """Slider-crank: slider motion, drive torque, joint reactions (and, with an ANCF rod, its
    damage and mid-span deflection); returns the joint names of ``reaction_force``."""
    o = mech.slider.offset
    x, v, a = res.q[:, o], res.v[:, o], res.a[:, o]
    torque = -res.lam[:, mech.drive.first_row]
    names, reac = _reactions(mech, res)
    summary.update(
        slider_x=float(x[-1]),
        slider_v=float(v[-1]),
        slider_a=float(a[-1]),
        slider_a_max=float(a.max()),
        slider_a_min=float(a.min()),
        drive_torque_max=float(np.max(np.abs(torque))),
        reaction_max=float(reac.max()) if reac.size else 0.0,
    )
    data.update(
        slider_x=("time", x, {"units": "m"}),
        slider_v=("time", v, {"units": "m/s"}),
        slider_a=("time", a, {"units": "m/s^2"}),
        crank_angle=("time", res.q[:, mech.crank.angle_index], {"units": "rad"}),
        drive_torque=(
            "time",
            torque,
            {"units": "N m", "long_name": "drive torque on the crank (ccw +)"},
        ),
        reaction_force=(
            ("time", "joint"),
            reac,
            {"units": "N", "long_name": "joint force magnitude"},
        ),
    )
    if mech.beam is not None:
        _damage_data(mech, summary, data)
        mid = midspan_deflection(mech, res.q)
        summary["midspan_deflection_max"] = float(np.max(np.abs(mid)))
        data["midspan_deflection"] = (
            "time",
            mid,
            {"units": "m", "long_name": "mid-span distance from the chord (left of A->B +)"},
        )
    return names


#: refinement of an adaptive run for an error estimate: rtol and atol divided by this
ADAPTIVE_REFINE = 100.0
#: the smallest rtol scipy's integrators accept (100 eps)
_RTOL_MIN = 100.0 * float(np.finfo(float).eps)


def refinement(spec: MechanismSpec, ds: xr.Dataset, level: int = 1) -> tuple[dict[str, Any], float]:
    """Overrides that refine the run ``ds`` of ``spec`` ``level`` times for an error estimate,
    and ``kappa``, the factor by which each refinement at least shrinks the error (Richardson:
    the run's error is then about ``|x - x_fine| kappa / (kappa - 1)``):

    * adaptive: ``rtol`` and ``atol`` / ``ADAPTIVE_REFINE`` per level (not below 100 eps);
      ``kappa = 10`` (an error-per-step controller of order p has global errors about
      proportional to ``tol^(p / (p + 1))``: 56 for DOP853, 40 for RK45, at least 10 for p >=
      1), less when rtol is already near round-off (``sqrt`` of the ratio actually applied);
    * fixed-step integrators: ``dt``, ``dt_contact`` and ``sample_dt`` halved (the two-body
      results of these integrators come from the samples), ``onset_tol`` and the Newton ``tol``
      / 4 per level; ``kappa = 4`` (second order: generalized-alpha, Newmark with gamma = 1/2,
      central differences), ``kappa = 2`` with contact elements (onsets and force ends fall
      inside steps: first order), Newmark with gamma != 1/2 (first order) or moreau-jean (an
      impact is resolved to the step: first order)."""
    integrator = str(ds.attrs.get("integrator", spec.integrator))
    sol = spec.solver
    over: dict[str, Any] = {"integrator": integrator}
    if integrator == "adaptive":
        rtol = max(sol.rtol / ADAPTIVE_REFINE**level, _RTOL_MIN)
        factor = sol.rtol / rtol
        over.update({"solver.rtol": rtol, "solver.atol": sol.atol / factor})
        per_level = factor ** (1.0 / level)
        return over, min(10.0, math.sqrt(per_level)) if per_level > 1.0 else 1.0
    f = 2.0**level
    dt = float(ds.attrs["dt"])
    over.update(
        {
            "solver.dt": dt / f,
            "solver.onset_tol": sol.onset_tol / f**2,
            "solver.tol": sol.tol / f**2,
            "sample_dt": spec.sample_dt / f,
        }
    )
    dtc = ds.attrs.get("solver.dt_contact")
    if dtc is not None and math.isfinite(float(dtc)):
        over["solver.dt_contact"] = float(dtc) / f
    first = has_contacts(spec) or (integrator == "newmark" and sol.newmark_gamma != 0.5)
    first = first or integrator == "moreau-jean"  # impacts: first order
    return over, 2.0 if first else 4.0


def has_contacts(spec: MechanismSpec) -> bool:
    """A two-body impact or a clearance joint."""
    return spec.contact is not None or spec.clearance is not None


def refined_levels(spec: MechanismSpec, ds: xr.Dataset) -> int:
    """How many refined runs an error estimate of ``ds`` takes: two for a fixed-step run with
    contacts (its error is first order and not yet asymptotic: each impact's error depends on
    where its onset falls in a step, and the orbit after many impacts is sensitive), so the
    estimate uses the larger of two successive differences; one otherwise."""
    fixed = str(ds.attrs.get("integrator", spec.integrator)) != "adaptive"
    return 2 if fixed and has_contacts(spec) else 1


def refined_run(spec: MechanismSpec, ds: xr.Dataset, level: int = 1) -> tuple[xr.Dataset, float]:
    """The run ``ds`` of ``spec`` again with the :func:`refinement` overrides of ``level``
    (same ``t_end``); returns its Dataset on the run's sample times (summary, from all its
    samples, in ``summary.*`` attributes, ``kappa`` and ``level`` in attributes) and
    ``kappa``."""
    over, kappa = refinement(spec, ds, level)
    integrator = over.pop("integrator")
    t_end = float(ds["time"].values[-1])
    summary, fine = run_mechanism(spec.with_overrides(over), t_end=t_end, integrator=integrator)
    if "sample_dt" in over:  # back on the run's sample times (every 2^level-th sample)
        fine = fine.isel(time=slice(None, None, 2**level))
    for k, v in summary.items():
        fine.attrs[f"summary.{k}"] = "null" if v is None else (int(v) if isinstance(v, bool) else v)
    fine.attrs["kappa"] = kappa
    fine.attrs["level"] = level
    return fine, kappa


def refined_runs(spec: MechanismSpec, ds: xr.Dataset) -> list[xr.Dataset]:
    """The :func:`refined_levels` refined runs of ``ds`` (finest last)."""
    return [refined_run(spec, ds, k)[0] for k in range(1, refined_levels(spec, ds) + 1)]


def mechanism_critical_dt(spec: MechanismSpec) -> tuple[dict[str, Any], xr.Dataset]:
    """Explicit stability bound of a mechanism (``ancf-beam critical-dt --mechanism NAME``):
    ``dt_critical`` (s), the smallest of the bounds ``2 / omega`` by mode (``bounds``: ``beam``
    element bound, ``contact`` bound of the stiffest contact), ``governing_mode``; per contact
    its linearised ``contact_stiffness`` (N/m), ``contact_omega`` (rad/s) and, for the damped
    linear law, ``contact_zeta``."""
    mech = build_mechanism(spec)
    bounds = explicit_dt_bounds(mech.system)
    mode = min(bounds, key=bounds.get) if bounds else None
    summary: dict[str, Any] = {
        "case": spec.name,
        "kind": spec.kind,
        "dt_critical": bounds.get(mode) if mode else None,
        "governing_mode": mode,
        "bounds": dict(bounds),
    }
    data = {}
    for fe in mech.system.contact_forces.values():
        k = fe.linear_stiffness()
        w = fe.omega()
        summary.setdefault("contact_stiffness", {})[fe.name] = k
        summary.setdefault("contact_omega", {})[fe.name] = w
        if fe.law.law == "kelvin-voigt" and fe.m_eff:
            zeta = fe.law.damping / (2.0 * math.sqrt(fe.law.stiffness * fe.m_eff))
            summary.setdefault("contact_zeta", {})[fe.name] = zeta
    for name, b in bounds.items():
        data[f"dt_bound_{name}"] = ((), b, {"units": "s", "long_name": f"2/omega, {name} mode"})
    ds = xr.Dataset(data)
    ds.attrs.update(
        provenance_attrs(
            spec, study="mechanism-critical-dt", kind=spec.kind, governing_mode=mode or "none"
        )
    )
    return summary, ds
