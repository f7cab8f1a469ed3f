"""Checks of general mechanisms (``kind: general``) against the independent reference their
``reference:`` key names, the reference's parameters read from the named bodies and joints:

* ``four-bar`` (bodies ``crank``, ``coupler``, ``rocker`` with markers ``pivot``/``tip``,
  ``a``/``mid``/``b``, ``pivot``/``tip``; ground pins ``A``, ``D``; driver ``drive``): the closed
  -form positions of ``crank.tip``, ``coupler.mid``, ``rocker.tip`` and the Newton-Euler drive
  torque and pin forces (:mod:`ancf_beam.references.fourbar`) along the run's crank angle;
* ``spin-up`` (bodies ``hub``, ``beam``; driver ``drive``): the tip's deflection in the hub frame
  against the assumed-modes model with centrifugal stiffening
  (:mod:`ancf_beam.references.spinup`), and the classical linear model's divergence;
* ``mesh-convergence`` (every beam): the run with every beam's mesh halved and doubled, the
  last beam's ``end`` converging;
* ``two-clearances``, ``guide-clearance``: the independent minimal-coordinate integration of
  :mod:`ancf_beam.references.clearance_mechanisms`.

Every case also gets the energy balance (the drives' work booked) and the constraint
violation of :func:`ancf_beam.studies.mechanisms.mechanism_checks`. Bounds: ``estimate_factor``
times the run's error estimated from its refined runs plus the reference's own error (and, for
the spin-up, the order of the terms the first-order model neglects) plus round-off.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.references.clearance_mechanisms import (
    slider_crank_guide_clearance,
    slider_crank_two_clearances,
)
from ancf_beam.references.fourbar import FourBar
from ancf_beam.references.spinup import SpinUpBeam, tip_deflection
from ancf_beam.specs import MechanismSpec
from ancf_beam.studies.checks import check, run_summary  # run_summary: re-exported
from ancf_beam.studies.error_estimates import HistoryBound, est_check, estimate, roundoff, tol_floor

__all__ = [
    "four_bar_reference",
    "general_rows",
    "hub_frame_tip",
    "reference_histories",
    "run_summary",
    "spin_up_reference",
]


def _marker(ds: xr.Dataset, name: str) -> np.ndarray:
    return np.stack(
        [ds["marker_x"].sel(marker=name).values, ds["marker_y"].sel(marker=name).values], -1
    )


def _length(spec: MechanismSpec, body: str, a: str, b: str) -> float:
    mk = spec.general.bodies[body]["markers"]
    return float(np.hypot(*(np.subtract(mk[b], mk[a]))))


def four_bar_reference(spec: MechanismSpec) -> FourBar:
    """The :class:`FourBar` of a ``reference: four-bar`` case (lengths from the markers)."""
    gen = spec.general
    b = gen.bodies
    d = np.subtract(gen.joints["D"]["at"], gen.joints["A"]["at"])
    return FourBar(
        l1=_length(spec, "crank", "pivot", "tip"),
        l2=_length(spec, "coupler", "a", "b"),
        l3=_length(spec, "rocker", "pivot", "tip"),
        d=float(np.hypot(*d)),
        m1=b["crank"]["mass"],
        m2=b["coupler"]["mass"],
        m3=b["rocker"]["mass"],
        j1=b["crank"]["inertia"],
        j2=b["coupler"]["inertia"],
        j3=b["rocker"]["inertia"],
        g=gen.g,
        branch=1 if b["rocker"]["position"][1] >= 0 else -1,
    )


def _four_bar_rows(spec, ds, fine, bound: HistoryBound, note: str) -> list[dict[str, Any]]:
    """Marker positions, drive torque and pin forces along the run's crank angle."""
    fb = four_bar_reference(spec)
    omega = spec.general.joints["drive"]["omega"]
    th = ds["body_theta"].sel(body="crank").values
    pts, dyn = fb.points(th), fb.inverse_dynamics(th, omega, 0.0)
    rows = []
    for name in ("crank.tip", "coupler.mid", "rocker.tip"):
        rows.append(
            bound.check(
                f"{name} position vs closed form (/ max |x|, |y|)",
                _marker(ds, name).ravel(),
                [_marker(f, name).ravel() for f in fine],
                pts[name].ravel(),
                f"at the run's crank angle; {note}",
            )
        )
    rows.append(
        bound.check(
            "drive torque vs Newton-Euler (/ max |tau|)",
            ds["drive_torque"].sel(driver="drive").values,
            [f["drive_torque"].sel(driver="drive").values for f in fine],
            dyn["torque"],
            note,
        )
    )
    for pin in "ABCD":
        rows.append(
            bound.check(
                f"pin force |F_{pin}| vs Newton-Euler (/ max)",
                ds["reaction_force"].sel(joint=pin).values,
                [f["reaction_force"].sel(joint=pin).values for f in fine],
                dyn[f"|F_{pin}|"],
                note,
            )
        )
    return rows


def hub_frame_tip(ds: xr.Dataset, hub: str = "hub", tip: str = "beam.end") -> np.ndarray:
    """Transverse position (m) of ``tip`` in the frame turning with ``hub`` (the deflection of
    a beam clamped along the hub's x axis at its centre)."""
    th = ds["body_theta"].sel(body=hub).values
    p = _marker(ds, tip)
    return -np.sin(th) * p[:, 0] + np.cos(th) * p[:, 1]


def spin_up_reference(spec: MechanismSpec, t: np.ndarray, n_modes: int = 6, stiffening=True):
    """The assumed-modes tip deflection of a ``reference: spin-up`` case at times ``t``."""
    case = spec.general.beams["beam"]
    bm = SpinUpBeam(
        length=case.beam.length,
        area=case.beam.width * case.beam.height,
        inertia=case.beam.width * case.beam.height**3 / 12.0,
        density=case.material.rho,
        modulus=case.material.E0,
    )
    drv = spec.general.joints["drive"]
    return tip_deflection(t, drv["omega"], drv["T"], n_modes, stiffening, bm)


def _spin_up_rows(spec, ds, fine, bound: HistoryBound, note: str) -> list[dict[str, Any]]:
    t = ds["time"].values
    v = hub_frame_tip(ds)
    ref, ref_more = spin_up_reference(spec, t), spin_up_reference(spec, t, 8)
    n_el = spec.general.beams["beam"].mesh.n_elements
    _, mesh2 = run_mechanism(spec.with_overrides({"bodies.beam.mesh.n_elements": 2 * n_el}))
    sc = float(np.max(np.abs(ref)))
    est_t = estimate(v, [hub_frame_tip(f) for f in fine], bound.kappa)
    est_mesh = float(np.max(np.abs(v - hub_frame_tip(mesh2)))) * 16.0 / 15.0
    ref_err = float(np.max(np.abs(ref_more - ref)))
    model = (sc / case_length(spec)) ** 2 * sc  # terms of relative order (v/L)^2 neglected
    err = float(np.max(np.abs(v - ref)))
    rows = [
        est_check(
            "tip deflection in the hub frame vs stiffened modal model (m)",
            0.0,
            err,
            est_t + est_mesh,
            ref_err + model + bound.floor * sc,
            bound.factor,
            spec.name,
            f"bound {bound.factor:g} x (refined-step estimate {est_t:.2g} + doubled-mesh "
            f"estimate {est_mesh:.2g}, Richardson h^4) + 6 vs 8 modes {ref_err:.2g} + the "
            f"first-order model's neglected terms (v/L)^2 |v| = {model:.2g} m; {note}",
        )
    ]
    lin = spin_up_reference(spec, t, 6, stiffening=False)
    rows.append(
        check(
            "linear model without stiffening diverges: max |v_lin| / max |v|",
            10.0,
            float(np.max(np.abs(lin))) / float(np.max(np.abs(v))),
            0.0,
            mode="min",
            note="the classical linear model (no geometric stiffening) exceeds the ANCF "
            "deflection tenfold once Omega passes the first bending frequency",
            case=spec.name,
        )
    )
    return rows


def case_length(spec: MechanismSpec) -> float:
    return float(spec.general.beams["beam"].beam.length)


def _mesh_rows(spec, ds, bound: HistoryBound) -> list[dict[str, Any]]:
    """Every beam's mesh halved and doubled: the last beam's end converges (the differences
    of successive meshes shrink) and the shipped mesh's error estimate is reported."""
    beams = list(spec.general.beams)
    tip = f"{beams[-1]}.end"

    def run(factor: float) -> np.ndarray:
        over = {
            f"bodies.{b}.mesh.n_elements": max(
                1, round(spec.general.beams[b].mesh.n_elements * factor)
            )
            for b in beams
        }
        return _marker(run_mechanism(spec.with_overrides(over))[1], tip)

    coarse, base, finer = run(0.5), _marker(ds, tip), run(2.0)
    d1 = float(np.max(np.linalg.norm(base - coarse, axis=-1)))
    d2 = float(np.max(np.linalg.norm(finer - base, axis=-1)))
    order = float(np.log2(d1 / d2)) if d2 > 0 else float("inf")
    return [
        check(
            f"mesh convergence of {tip}: |x(2n) - x(n)| / |x(n) - x(n/2)|",
            0.0,
            d2 / d1,
            1.0,
            mode="abs",
            note=f"successive differences {d1:.3g} m, {d2:.3g} m (observed order {order:.2f}); "
            "the shipped mesh's error is about the second difference",
            case=spec.name,
        )
    ]


def two_clearances_reference(spec: MechanismSpec, t: np.ndarray, rtol: float = 1e-10) -> dict:
    """The independent integration of a ``reference: two-clearances`` case (bodies ``crank``
    (markers ``pivot``, ``tip``), ``rod`` (``a``, ``b``), ``slider``; driver ``drive``;
    clearance joints ``crank_pin`` and ``wrist_pin``) at times ``t``."""
    gen = spec.general
    b, j = gen.bodies, gen.joints
    cp, wp = j["crank_pin"]["clearance"], j["wrist_pin"]["clearance"]
    law = gen.laws["crank_pin"].law
    return slider_crank_two_clearances(
        t,
        rtol=rtol,
        atol=rtol * 1e-3,
        crank=_length(spec, "crank", "pivot", "tip"),
        m_crank=b["crank"]["mass"],
        omega=j["drive"]["omega"],
        rod=_length(spec, "rod", "a", "b"),
        m_rod=b["rod"]["mass"],
        j_rod=b["rod"]["inertia"],
        m_slider=b["slider"]["mass"],
        g=gen.g,
        crank_pin=(cp["bearing_radius"], cp["journal_radius"]),
        wrist_pin=(wp["bearing_radius"], wp["journal_radius"]),
        E=cp["E"],
        nu=cp["nu"],
        law=law.law,
        restitution=law.restitution,
        exponent=law.exponent,
        v0_min=law.v0_min,
    )


def _two_clearances_rows(spec, ds, fine, bound: HistoryBound) -> list[dict[str, Any]]:
    """The first impact of each clearance joint (onset time, peak force): robust metrics of a
    chaotic motion, against the independent integration (its error: rtol 1e-10 vs 5e-11)."""
    t = ds["time"].values
    ref, ref_fine = (two_clearances_reference(spec, t, r) for r in (1e-10, 5e-11))
    fines = [run_summary(f, "contacts") for f in fine]
    names = {"crank_pin": "crank_pin", "wrist_pin": "wrist_pin"}
    ours = run_summary(ds, "contacts")
    return _first_impact_rows(spec, ours, fines, ref, ref_fine, names, bound, "minimal coordinates")


#: the independent model's corner names for the guide's contacts (front: the slider's +x)
GUIDE_CORNERS = {
    "upper_front": "upper_right",
    "upper_rear": "upper_left",
    "lower_front": "lower_right",
    "lower_rear": "lower_left",
}


def guide_clearance_reference(spec: MechanismSpec, t_end: float, rtol: float = 1e-10) -> dict:
    """The independent integration of a ``reference: guide-clearance`` case (bodies ``crank``
    (markers ``pivot``, ``tip``), ``rod`` (``a``, ``b``), ``slider``; the prismatic
    ``slider_guide`` with its ``guide``) up to ``t_end``."""
    gen = spec.general
    b, g = gen.bodies, gen.joints["slider_guide"]["guide"]
    law, fr = gen.laws["slider_guide"].law, gen.laws["slider_guide"].friction
    return slider_crank_guide_clearance(
        t_end=t_end,
        rtol=rtol,
        atol=rtol * 1e-2,
        l1=_length(spec, "crank", "pivot", "tip"),
        m1=b["crank"]["mass"],
        j1=b["crank"]["inertia"],
        l2=_length(spec, "rod", "a", "b"),
        m2=b["rod"]["mass"],
        j2=b["rod"]["inertia"],
        m3=b["slider"]["mass"],
        j3=b["slider"]["inertia"],
        a=g["a"],
        b=g["b"],
        clearance=g["clearance"],
        g=gen.g,
        omega1=b["crank"]["angular_velocity"],
        omega2=b["rod"]["angular_velocity"],
        law=law.law,
        restitution=law.restitution,
        exponent=law.exponent,
        K=law.stiffness,
        v0_min=law.v0_min,
        mu=0.0 if fr is None else fr.mu,
        v_static=1e-3 if fr is None else fr.v_static,
        v_dynamic=1e-2 if fr is None else fr.v_dynamic,
    )


def _first_impact_rows(spec, ours, fines, ref, ref_fine, names, bound, what):
    """Onset time and peak force of each contact's first impact against the reference."""
    rows = []
    for name, ref_name in names.items():
        for key, unit in (("first_contact_time", "s"), ("first_impact_force", "N")):
            x, r = ours[name][key], ref["contacts"][ref_name][key]
            est = estimate(x, [f[name][key] for f in fines], bound.kappa)
            ref_err = abs(ref_fine["contacts"][ref_name][key] - r)
            rows.append(
                est_check(
                    f"{name} {key.replace('_', ' ')} vs independent integration ({unit})",
                    r,
                    x,
                    est,
                    ref_err + bound.floor * abs(r),
                    bound.factor,
                    spec.name,
                    f"{what}, DOP853 (rtol 1e-10; vs 5e-11: {ref_err:.2g}); bound "
                    f"{bound.factor:g} x estimate from the refined runs (kappa {bound.kappa:g}) "
                    f"{est:.2g} + the reference's error + round-off",
                )
            )
    return rows


def _guide_rows(spec, ds, fine, bound: HistoryBound) -> list[dict[str, Any]]:
    """Every corner's first impact (robust metrics) against the independent integration, run
    past the last corner's first onset."""
    ours = run_summary(ds, "contacts")
    names = {f"slider_guide.{k}": v for k, v in GUIDE_CORNERS.items()}
    onsets = [ours[n]["first_contact_time"] for n in names if ours[n]["first_contact_time"]]
    t_end = min(float(ds["time"].values[-1]), 1.5 * max(onsets, default=0.0) + 1e-3)
    ref, ref_fine = (guide_clearance_reference(spec, t_end, r) for r in (1e-10, 5e-11))
    fines = [run_summary(f, "contacts") for f in fine]
    return _first_impact_rows(spec, ours, fines, ref, ref_fine, names, bound, "minimal coordinates")


def general_rows(spec: MechanismSpec, ds: xr.Dataset, fine: list, kappa: float, S: float):
    """The reference's check rows of a general case (none when ``reference`` is null)."""
    ref = spec.resolved.get("reference")
    bound = HistoryBound(kappa, tol_floor(spec, ds), roundoff(ds), S, spec.name)
    note = (
        f"bound {S:g} x (estimate from the refined run, kappa {kappa:g}) + round-off 8 eps per step"
    )
    if ref == "four-bar":
        return _four_bar_rows(spec, ds, fine, bound, note)
    if ref == "spin-up":
        return _spin_up_rows(spec, ds, fine, bound, note)
    if ref == "mesh-convergence":
        return _mesh_rows(spec, ds, bound)
    if ref == "two-clearances":
        return _two_clearances_rows(spec, ds, fine, bound)
    if ref == "guide-clearance":
        return _guide_rows(spec, ds, fine, bound)
    return []


def reference_histories(spec: MechanismSpec, ds: xr.Dataset) -> dict[str, tuple]:
    """The reference's histories on the run's time axis, for the report (xarray variable
    tuples): four-bar ``torque_ref`` and ``pin_force_ref`` (time x joint); spin-up
    ``tip_deflection`` (the run's, in the hub frame), ``tip_deflection_ref`` (stiffened
    modal model) and ``tip_deflection_linear`` (without stiffening)."""
    ref = spec.resolved.get("reference")
    t = ds["time"].values
    if ref == "four-bar":
        th = ds["body_theta"].sel(body="crank").values
        dyn = four_bar_reference(spec).inverse_dynamics(
            th, spec.general.joints["drive"]["omega"], 0
        )
        pins = np.stack([dyn[f"|F_{p}|"] for p in "ABCD"], -1)
        return {
            "torque_ref": ("time", dyn["torque"], {"units": "N m", "long_name": "Newton-Euler"}),
            "pin_force_ref": (("time", "pin"), pins, {"units": "N", "long_name": "Newton-Euler"}),
        }
    if ref == "spin-up":
        return {
            "tip_deflection": ("time", hub_frame_tip(ds), {"units": "m"}),
            "tip_deflection_ref": ("time", spin_up_reference(spec, t), {"units": "m"}),
            "tip_deflection_linear": (
                "time",
                spin_up_reference(spec, t, 6, stiffening=False),
                {"units": "m", "long_name": "linear model without geometric stiffening"},
            ),
        }
    return {}
