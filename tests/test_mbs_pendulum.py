"""Berzeri-Shabana flexible pendulum: L = 1.2 m, A = 0.0018 m^2, I = 1.215e-8 m^4 (b = 0.2 m,
h = 0.009 m), rho = 5540 kg/m^3, E = 0.7 MPa, pinned at node 0, released from rest along +x.
Energy conservation and the convergence of the tip in step and mesh."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from ancf_beam.config import resolve_mechanism
from ancf_beam.mbs.analysis import settings_from_spec
from ancf_beam.mbs.integrators import integrate
from ancf_beam.mbs.mechanisms import build_mechanism

LENGTH = 1.2
PENDULUM = {
    "kind": "pendulum",
    "t_end": 1.0,
    "sample_dt": 1e-3,
    "beam": {"length": LENGTH, "width": 0.2, "height": 0.009},
    "material": {"E0": 0.7e6, "rho": 5540.0},
    "mesh": {"n_elements": 16},
}


def _run(overrides=None, **settings):
    spec = resolve_mechanism({"mechanisms": {"p": PENDULUM}}, "p", overrides or {})
    mech = build_mechanism(spec)
    res = integrate(mech.system, dataclasses.replace(settings_from_spec(spec), **settings))
    return mech, res


EPS = float(np.finfo(float).eps)
SAFETY = 2.0  # on an error estimate from refinement, as the pipeline's estimate_factor


def test_section_and_initial_state():
    spec = resolve_mechanism({"mechanisms": {"p": PENDULUM}}, "p")
    # products of the given numbers: a few operations of round-off
    assert spec.beam.beam.width * spec.beam.beam.height == pytest.approx(0.0018, rel=4 * EPS)
    b, h = spec.beam.beam.width, spec.beam.beam.height
    assert b * h**3 / 12 == pytest.approx(1.215e-8, rel=8 * EPS)
    mech = build_mechanism(spec)
    assert mech.system.m == 2 and mech.system.row_labels == ["pivot.x", "pivot.y"]


def test_energy_is_conserved_by_the_trapezoidal_rule():
    """Newmark average acceleration (beta = 1/4, gamma = 1/2: energy-conserving for linear
    systems) over 1 s: the energy error is below 1e-4 of the peak kinetic energy and falls with
    dt^2 (it is a bounded discretisation error, not a drift)."""
    drift = {}
    for dt in (5e-4, 2.5e-4, 1.25e-4):
        _, res = _run({"integrator": "newmark"}, dt=dt)
        drift[dt] = res.energy_drift_rel()
        # J, the swing is real: the value recorded here to 4 digits (half a unit, 0.005 J) plus
        # the run's energy error (below 1e-4 of it)
        assert res.kinetic.max() == pytest.approx(64.59, abs=0.005 + 1e-4 * 64.59)
    # measured 9.7e-5, 2.43e-5, 6.1e-6 (ratios 4.0); the bound 1e-4 at dt = 2.5e-4
    assert drift[2.5e-4] <= 1e-4
    # second order: the observed order from the three steps within 2 +- 0.1 (the next term is
    # O(dt^4), 4x smaller relative per halving)
    order = math.log2(drift[5e-4] / drift[2.5e-4])
    assert abs(order - 2.0) <= 0.1 and abs(math.log2(drift[2.5e-4] / drift[1.25e-4]) - 2) <= 0.1
    # the symplectic explicit scheme: its energy error is a bounded O(dt^2) oscillation,
    # estimated from the run at dt / 2 (Richardson, kappa 4) times SAFETY; measured 4.55e-6
    _, res = _run({"integrator": "central-difference"}, dt=2e-4)
    _, half = _run({"integrator": "central-difference"}, dt=1e-4)
    d, dh = res.energy_drift_rel(), half.energy_drift_rel()
    assert d <= SAFETY * abs(d - dh) * 4 / 3


def test_tip_converges_with_the_step():
    tips = {}
    for dt in (1e-3, 5e-4, 2.5e-4, 1.25e-4):
        mech, res = _run({"integrator": "newmark"}, dt=dt)
        tips[dt] = mech.beam.node(-1).position(res.q[-1])
    d = [
        np.linalg.norm(tips[a] - tips[b])
        for a, b in ((1e-3, 5e-4), (5e-4, 2.5e-4), (2.5e-4, 1.25e-4))
    ]
    # tip at t = 1 s; measured 2.5e-3, 8.8e-4, 1.0e-4 m: differences shrinking (second order
    # reached at the finest pair, ratio 8.8 > 4)
    assert d[0] > d[1] > 4 * d[2]
    # the 2.5e-4 s run's error from the 1.25e-4 s run (Richardson, second order) x SAFETY:
    # within the 1e-4 L; measured 8.6e-5 L
    assert SAFETY * d[2] * 4 / 3 <= 2.5e-4 * LENGTH and d[2] <= 1e-4 * LENGTH


def test_tip_converges_with_the_mesh():
    hist = {}
    for ne in (8, 16, 32, 64):
        mech, res = _run({"integrator": "newmark", "mesh.n_elements": ne}, dt=1.25e-4)
        hist[ne] = mech.beam.node(-1).position(res.q)
    d = [np.linalg.norm(hist[a] - hist[b], axis=1).max() for a, b in ((8, 16), (16, 32), (32, 64))]
    # largest tip distance over the whole 1 s swing; measured 3.0e-2, 1.5e-2, 3.5e-3 m: this
    # very soft pendulum (E = 0.7 MPa) whips, and coarse meshes miss the higher bending modes:
    # the differences shrink (1.5x, then 4.3x as the finer meshes resolve the whip)
    assert d[0] > 1.5 * d[1] > 1.5 * 3 * d[2]
    assert d[2] <= 3.5e-2 * LENGTH / 10  # the issue's: 32 vs 64 elements; measured 2.9e-3 L


def test_damaging_pendulum_books_the_released_energy():
    """Strain-driven damage in the swinging beam (staggered update after each step): the
    released strain energy is booked as dissipated work, so the balance still closes, to first
    order in dt."""
    over = {
        "integrator": "newmark",
        "damage.enabled": True,
        "damage.threshold": 1e-3,
        "damage.softening": 2e-3,
        "t_end": 0.5,
    }
    drift = {}
    for dt in (2.5e-4, 1.25e-4):
        mech, res = _run(over, dt=dt)
        drift[dt] = res.energy_drift_rel()
        assert mech.beam.model.damage.max() == pytest.approx(0.9)  # saturates at d_max
        assert res.dissipated[-1] > 5e-3  # J; measured 7.1e-3 and 6.9e-3
        assert np.all(np.diff(res.dissipated) >= 0)
    # first order (the staggered update): the run's drift within its Richardson estimate from
    # the run at dt / 2 (kappa 2) x SAFETY, and the observed order at least 0.7 (ratio 1.6);
    # measured 9.1e-6 and 4.1e-6 (ratio 2.2)
    assert drift[2.5e-4] <= SAFETY * 2 * abs(drift[2.5e-4] - drift[1.25e-4])
    assert drift[2.5e-4] / drift[1.25e-4] > 1.6


def test_failed_newton_steps_are_halved_then_reported():
    from ancf_beam.results import NewtonConvergenceError

    # 3 modified-Newton iterations do not suffice at dt = 1e-2 s: steps are retried in halves
    mech, res = _run({"t_end": 0.1, "sample_dt": 1e-2}, dt=1e-2, max_iter=3)
    assert res.stats["halvings"] > 0 and res.steps == 10
    # on the constraint manifold: Newton's floor 64 eps max|q0| (or its tolerance's share)
    assert np.isfinite(res.q).all() and res.phi_max.max() <= 64 * EPS * np.abs(res.q[0]).max()
    with pytest.raises(NewtonConvergenceError, match=r"step 1 from t = 0 s .* after 0 halvings"):
        _run({"t_end": 0.1, "sample_dt": 1e-2}, dt=1e-2, max_iter=3, max_halvings=0)


def test_a_failed_newmark_step_without_dissipation_names_it():
    """Newmark with gamma = 1/2 damps no mode: a mode it lets grow makes Newton fail at every
    step size, so the error names the dissipative choices besides the step controls; with
    gamma > 1/2 or under generalized-alpha it names the step controls alone."""
    from ancf_beam.results import NewtonConvergenceError

    fail = {"dt": 1e-2, "max_iter": 1, "max_halvings": 0}  # one iteration: fails at step 1
    run = {"t_end": 0.1, "sample_dt": 1e-2}
    hint = r"reduce dt .*; but newmark with newmark_gamma = 0.5 damps no mode.*newmark_gamma > 0.5"
    with pytest.raises(NewtonConvergenceError, match=hint):
        _run(run, integrator="newmark", newmark_gamma=0.5, newmark_beta=0.25, **fail)
    dissipative = ({"newmark_gamma": 0.6, "newmark_beta": 0.3025}, {"rho_inf": 0.8})
    for integrator, extra in zip(("newmark", "generalized-alpha"), dissipative, strict=True):
        with pytest.raises(NewtonConvergenceError, match=r"reduce dt") as err:
            _run(run, integrator=integrator, **extra, **fail)
        assert "damps no mode" not in str(err.value)
