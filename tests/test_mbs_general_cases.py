"""The general mechanisms of the default config against independent references
(:mod:`ancf_beam.references`): the four-bar's closed forms, the spin-up beam's stiffened modal
model, the double pendulum of beams (energy, mesh and step convergence), the slider-crank with
two clearance joints (an independent minimal-coordinate integration). Bounds: the run's error
estimated from the same run refined (Richardson) times a factor 2, plus the reference's own
error and round-off, as the pipeline's checks."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.errors import ConstraintSingularityError
from ancf_beam.mbs import adaptive
from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.mbs.mechanisms import build_mechanism
from ancf_beam.references.clearance_mechanisms import slider_crank_two_clearances
from ancf_beam.references.fourbar import FourBar
from ancf_beam.references.spinup import tip_deflection
from ancf_beam.studies.general import GUIDE_CORNERS, guide_clearance_reference, hub_frame_tip

ROOT = Path(__file__).resolve().parents[1]
CFG = load_config(ROOT / "config" / "config.yaml")
EPS = float(np.finfo(float).eps)
FACTOR = 2.0  # the pipeline's estimate_factor


def _xy(ds, marker):
    return np.stack([ds["marker_x"].sel(marker=marker), ds["marker_y"].sel(marker=marker)], -1)


def _runs(name, overrides, refine, summaries=False):
    spec = resolve_mechanism(CFG, name).with_overrides(overrides)
    s, ds = run_mechanism(spec)
    s_f, fine = run_mechanism(spec.with_overrides(refine))
    return (spec, ds, fine, s, s_f) if summaries else (spec, ds, fine)


def test_four_bar_against_closed_form_and_newton_euler():
    """A third of a crank turn at dt and dt/2: positions of the markers at the closed form's
    (the crank angle is prescribed; the joints hold to round-off), drive torque and pin forces
    at Newton-Euler's within 2 x the Richardson estimate (second order: |x - x_fine| 4/3)."""
    over = {"t_end": 0.02, "sample_dt": 1e-4}
    spec, ds, fine = _runs("four_bar", over, {"solver.dt": 5e-6})
    fb = FourBar()  # the issue's four-bar, the same numbers as the config's block
    th = ds["body_theta"].sel(body="crank").values
    np.testing.assert_allclose(th, 100.0 * ds["time"].values, rtol=0, atol=64 * EPS * 2.0)
    pts = fb.points(th)
    for name in ("crank.tip", "coupler.mid", "rocker.tip"):
        # Newton stops at 64 eps of the largest coordinate (0.25 m); the closed form rounds
        assert np.max(np.abs(_xy(ds, name) - pts[name])) < 64 * EPS * 0.25 * 10
    dyn = fb.inverse_dynamics(th, 100.0, 0.0)
    tau, tau_f = (d["drive_torque"].sel(driver="drive").values for d in (ds, fine))
    est = np.max(np.abs(tau - tau_f)) * 4 / 3
    err = np.max(np.abs(tau - dyn["torque"]))
    assert 0 < err <= FACTOR * est + 1e-9 * np.max(np.abs(dyn["torque"])), (err, est)
    for pin in "ABCD":
        f, f_f = (d["reaction_force"].sel(joint=pin).values for d in (ds, fine))
        est = np.max(np.abs(f - f_f)) * 4 / 3
        assert np.max(np.abs(f - dyn[f"|F_{pin}|"])) <= FACTOR * est + 1e-9 * np.max(f), pin


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    l1=st.floats(0.02, 0.06),
    l2=st.floats(0.15, 0.3),
    l3=st.floats(0.1, 0.25),
    d=st.floats(0.18, 0.3),
    th0=st.floats(0.0, 2 * math.pi),
)
def test_any_grashof_four_bar_assembles_onto_its_closed_form(l1, l2, l3, d, th0):
    """Four-bars of the config's kind with other lengths and crank angles (Grashof
    crank-rockers only: the crank the shortest link and s + l < p + q): from rough guesses
    (the bodies along the x axis, the rocker up) the assembly lands on the closed-form branch
    with C above the line B-D, to round-off of the Gauss-Newton tolerance."""
    links = sorted([l1, l2, l3, d])
    assume(l1 == links[0] and links[0] + links[3] < links[1] + links[2] - 1e-3)
    fb = FourBar(l1=l1, l2=l2, l3=l3, d=d)
    b = fb.points(np.array(th0))
    block = copy.deepcopy(dict(CFG["mechanisms"]["four_bar"]))
    bodies = block["bodies"]
    bodies["crank"].update(
        position=[0.5 * l1 * math.cos(th0), 0.5 * l1 * math.sin(th0)],
        angle=th0,
        markers={"pivot": [-0.5 * l1, 0.0], "tip": [0.5 * l1, 0.0]},
    )
    th2, th3 = fb.angles(np.array(th0))
    c = b["rocker.tip"]
    guess = 0.05  # rad: the guesses are off by this, the positions by a few mm
    bodies["coupler"].update(
        position=list(b["coupler.mid"] + 0.003),
        angle=float(th2) + guess,
        markers={"a": [-0.5 * l2, 0.0], "mid": [0.0, 0.0], "b": [0.5 * l2, 0.0]},
    )
    bodies["rocker"].update(
        position=list(0.5 * (c + [d, 0.0]) - 0.003),
        angle=float(th3) - guess,
        markers={"pivot": [-0.5 * l3, 0.0], "tip": [0.5 * l3, 0.0]},
    )
    block["joints"]["D"]["at"] = [d, 0.0]
    block["joints"]["drive"]["theta0"] = th0
    mech = build_mechanism(resolve_mechanism({"mechanisms": {"fb": block}}, "fb"))
    for name in ("crank.tip", "coupler.mid", "rocker.tip"):
        x = mech.markers[name].position(mech.q0)
        # the assembly's tolerance 1e-12 m and its first-order effect on the points
        assert np.max(np.abs(x - b[name])) < 1e-10, (name, x, b[name])


def test_spin_up_against_the_stiffened_modal_model():
    """The whole manoeuvre (20 s): the tip's deflection in the hub frame against the
    assumed-modes model with centrifugal stiffening, within 2 x (refined step + doubled mesh
    estimates) + the modal model's own error (6 vs 8 modes) + the terms it neglects, of
    relative order (v/L)^2 (v up to 0.57 m on L = 8 m). The model without stiffening
    diverges (it is not the physics)."""
    spec, ds, fine = _runs("spin_up", {}, {"solver.dt": 1e-3})
    _, mesh2 = run_mechanism(spec.with_overrides({"bodies.beam.mesh.n_elements": 32}))
    t = ds["time"].values
    v, v_f, v_m = hub_frame_tip(ds), hub_frame_tip(fine), hub_frame_tip(mesh2)
    ref, ref8 = tip_deflection(t), tip_deflection(t, n_modes=8)
    vmax = np.max(np.abs(ref))
    est = np.max(np.abs(v - v_f)) * 4 / 3 + np.max(np.abs(v - v_m)) * 16 / 15
    bound = FACTOR * est + np.max(np.abs(ref8 - ref)) + (vmax / 8.0) ** 2 * vmax
    err = np.max(np.abs(v - ref))
    assert err <= bound, (err, bound)
    assert 0.55 < -v.min() < 0.60  # the lag of the spin-up (0.572 m in the modal model)
    lin = tip_deflection(t, stiffening=False)
    assert np.max(np.abs(lin)) > 100 * np.max(np.abs(v))


def _spin_up_adaptive(elements: int, **solver):
    """The spin-up's first 0.1 s with the adaptive integrator (DOP853, the schema's rtol 1e-8)
    and ``elements`` beam elements."""
    over = {"bodies.beam.mesh.n_elements": elements, "sample_dt": 0.005}
    over.update({f"solver.{k}": v for k, v in solver.items()})
    spec = resolve_mechanism(CFG, "spin_up").with_overrides(over)
    return run_mechanism(spec, t_end=0.1, integrator="adaptive")[1]


def test_spin_up_adaptive_rejects_a_stage_with_a_singular_constraint_jacobian():
    """From rest the drive starts smoothly, so scipy's first step is 0.07-0.08 s, thousands of
    times DOP853's stability limit on the beam (2/omega of its stiffest element: 1.6e-5 s with
    16 elements); a stage of that step moved the beam by 1e21 m to a state whose constraint
    Jacobian is singular, and the run ended with 'the constraint Jacobian is singular at t =
    0.0815 s' (exit 1; 16 elements: 0.0716 s) where every other integrator runs. The stage is
    rejected now and the step retried shorter. The tip's deflection in the hub frame against
    the stiffened modal model: within 2 x (doubled-mesh estimate, Richardson h^4: |v4 - v8|
    16/15, + the step's, |v - v(rtol 1e-10)|) + the model's own error (6 vs 8 modes) + the
    terms of relative order (v/L)^2 it neglects (measured: error 1.4e-10 m, bound 6e-10 m, on
    a deflection of 1.56e-6 m)."""
    ds, ds_r, ds_m = _spin_up_adaptive(4), _spin_up_adaptive(4, rtol=1e-10), _spin_up_adaptive(8)
    assert ds["time"].values[-1] == 0.1
    t = ds["time"].values
    v, v_r, v_m = hub_frame_tip(ds), hub_frame_tip(ds_r), hub_frame_tip(ds_m)
    ref, ref8 = tip_deflection(t), tip_deflection(t, n_modes=8)
    vmax = np.max(np.abs(ref))
    est = np.max(np.abs(v - v_m)) * 16 / 15 + np.max(np.abs(v - v_r))
    bound = FACTOR * est + np.max(np.abs(ref8 - ref)) + (vmax / 8.0) ** 2 * vmax
    err = np.max(np.abs(v - ref))
    assert err <= bound, (err, bound)


def test_adaptive_reports_a_singular_constraint_jacobian_where_it_becomes_singular(monkeypatch):
    """A Jacobian singular from t_s = 0.05 s on (the index-1 solve's pivot ratio forced to 0
    beyond t_s): the trial stages beyond t_s are rejected, the steps shrink to scipy's smallest
    (10 ulp of t) and the run ends with ConstraintSingularityError naming t_s (printed to 6
    digits), not with an instability or a run that never ends."""
    t_s = 0.05
    rhs = adaptive._ivp_rhs

    def singular_after(t, y, *args):
        ratio = rhs(t, y, *args)
        return 0.0 if t > t_s else ratio

    monkeypatch.setattr(adaptive, "_ivp_rhs", singular_after)
    with pytest.raises(ConstraintSingularityError, match="singular at t = ") as info:
        _spin_up_adaptive(4)
    t = float(re.search(r"singular at t = (\S+) s", str(info.value)).group(1))
    assert abs(t - t_s) <= 5e-7 * t_s, str(info.value)  # the 6 digits of the message


def test_double_pendulum_energy_and_convergence():
    """Released at rest, no drive: energy (kinetic + strain + gravity) conserved within 2 x
    the refined-step estimate of its change (generalized-alpha's numerical dissipation is
    second order in dt); the second beam's end converges with the mesh (4, 8, 16 elements per
    beam: successive differences shrink) and with the step."""
    over = {"t_end": 0.3}
    spec, ds, fine = _runs("double_pendulum_ancf", over, {"solver.dt": 2.5e-4})
    e, e_f = (d["energy_total"].values - d["energy_total"].values[0] for d in (ds, fine))
    tmax = float(ds["kinetic_energy"].max())
    assert np.max(np.abs(e)) <= FACTOR * np.max(np.abs(e - e_f)) * 4 / 3 + 1e-9 * tmax
    ends = []
    for n in (4, 8, 16):
        mesh = {f"bodies.{b}.mesh.n_elements": n for b in ("beam1", "beam2")}
        ends.append(_xy(run_mechanism(spec.with_overrides(mesh))[1], "beam2.end"))
    d1 = np.max(np.linalg.norm(ends[1] - ends[0], axis=-1))
    d2 = np.max(np.linalg.norm(ends[2] - ends[1], axis=-1))
    assert d2 < 0.5 * d1, (d1, d2)  # at least first order; measured about 15x
    step = np.max(np.linalg.norm(_xy(ds, "beam2.end") - _xy(fine, "beam2.end"), axis=-1))
    assert step < 0.05 * 0.5  # the step's effect on the end, small against the beam


def test_two_clearances_first_impacts_against_independent_integration():
    """The first impact of each clearance joint (onset time, peak force): within 2 x the
    refined-run estimate (first order with contact: |x - x_fine| x 2) + the reference's error
    (rtol 1e-10 vs 1e-11)."""
    over = {"t_end": 4e-4}
    refine = {"solver.dt": 5e-6, "solver.dt_contact": 5e-7, "sample_dt": 5e-6}
    spec, ds, fine, s, s_f = _runs("slider_crank_two_clearances", over, refine, True)
    t = ds["time"].values
    ref, ref_f = (slider_crank_two_clearances(t, rtol=r, atol=r * 1e-3) for r in (1e-10, 1e-11))
    ours, ours_f = s["contacts"], s_f["contacts"]
    for pin in ("crank_pin", "wrist_pin"):
        for key in ("first_contact_time", "first_impact_force"):
            x, x_f, r = ours[pin][key], ours_f[pin][key], ref["contacts"][pin][key]
            bound = FACTOR * 2 * abs(x - x_f) + abs(ref_f["contacts"][pin][key] - r)
            assert abs(x - r) <= bound + 1e-12 * abs(r), (pin, key, x, r, bound)


@pytest.mark.parametrize("name", ["four_bar", "spin_up", "double_pendulum_ancf"])
def test_general_case_points_are_the_named_markers(name):
    """JSON ``points`` hold every named marker and the beams' start/mid/end, ``bodies`` every
    body, at t_end, equal to the markers evaluated on the final coordinates."""
    spec = resolve_mechanism(CFG, name).with_overrides({"t_end": 0.002})
    summary, ds = run_mechanism(spec)
    mech = build_mechanism(spec)
    assert set(summary["points"]) == set(mech.markers)
    assert set(summary["bodies"]) == set(spec.general.bodies)
    for m, xy in summary["points"].items():
        np.testing.assert_array_equal(xy, _xy(ds, m)[-1])


def test_guide_clearance_first_impacts_against_independent_integration():
    """Each corner of the slider in its guide: onset and peak force of its first impact within
    2 x the refined-run estimate (first order with contact) + the reference's error (rtol
    1e-10 vs 5e-11). The lower corners first touch at 23.8 ms."""
    refine = {"solver.dt": 5e-6, "solver.dt_contact": 5e-7, "sample_dt": 5e-5}
    spec, ds, fine, s, s_f = _runs("slider_crank_guide_clearance", {"t_end": 0.026}, refine, True)
    ref, ref_f = (guide_clearance_reference(spec, 0.026, r) for r in (1e-10, 5e-11))
    for ours, theirs in GUIDE_CORNERS.items():
        name = f"slider_guide.{ours}"
        for key in ("first_contact_time", "first_impact_force"):
            x, x_f = s["contacts"][name][key], s_f["contacts"][name][key]
            r = ref["contacts"][theirs][key]
            bound = FACTOR * 2 * abs(x - x_f) + abs(ref_f["contacts"][theirs][key] - r)
            assert abs(x - r) <= bound + 1e-12 * abs(r), (name, key, x, r, bound)
