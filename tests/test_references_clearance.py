"""Independent references for slider-cranks with clearances (ancf_beam.references.
clearance_mechanisms; issue 28): the contact formulas against the project's kernels, energy
balances, the limits of small clearance (closed-form slider-crank; the ideal-guide model) and
convergence in the solver tolerance.

Bounds used here:

* energy: the models' ``energy_error_bound`` (module docstring: ``E + D - W`` is an invariant
  of the exact flow, so its drift is the sum of the accepted steps' local errors projected on
  its gradient, each component at most ``sqrt(N) (atol + rtol |y_i|)`` by DOP853's step
  acceptance);
* tolerance: a quantity ``X`` computed at ``rtol`` has error at most ``|X(rtol) - X(10 rtol)|
  + rtol |X| + 4 eps |X|`` (DOP853's error shrinks about ``10^(7/8) = 7.5`` times from the
  coarser run, so their difference exceeds this run's error; ``rtol |X|`` covers a difference
  that vanishes by coincidence; round-off), as ``ancf_beam.references.impact``; two runs at
  ``rtol`` and ``rtol / 2`` then differ by at most twice that;
* slider-crank with two clearances: an exact geometric bound (test docstring);
* ideal guide: an error estimate from refinement in the clearance, with the safety factor 2
  of the project's other refinement checks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ancf_beam.config.contact import contact_law, friction_law
from ancf_beam.mbs.contact import law_coefficient, law_force
from ancf_beam.mbs.laws import hertz_conformal_stiffness
from ancf_beam.references import clearance_mechanisms as cm
from ancf_beam.references.clearance_mechanisms import (
    LAWS,
    NormalLaw,
    conformal_hertz_stiffness,
    coulomb_transition,
    slider_crank_guide_clearance,
    slider_crank_ideal_guide,
    slider_crank_two_clearances,
)
from ancf_beam.references.mechanism import slider_crank_kinematics

EPS = float(np.finfo(float).eps)
#: safety factor on an error estimate from refinement (as tests/test_mbs_clearance.py)
SAFETY = 2.0
R, L, OMEGA = 0.05, 0.12, 523.5987755982989


def test_formulas_agree_with_the_project_kernels():
    """Two implementations of the documented formulas (docs/design.md section 7): the normal
    laws, coulomb-transition friction and the conformal Hertz stiffness agree to round-off
    (a few eps of the largest term)."""
    K = conformal_hertz_stiffness(2.07e11, 0.3, 2.07e11, 0.3, 0.010, 0.0095)
    theirs_k = hertz_conformal_stiffness(2.07e11, 0.3, 2.07e11, 0.3, 0.010, 0.0095)
    assert K == pytest.approx(theirs_k, rel=4 * EPS)
    for law in LAWS:
        ce = 1.0 if law == "hertz" else 0.4
        mine = NormalLaw(law, K, 1.5, ce, 1e-4)
        block = {"law": law, "K": K} | ({} if law == "hertz" else {"restitution": ce})
        theirs = contact_law(block, "contact")
        for d in (-1e-6, 0.0, 3e-7, 2e-5):
            for d_dot in (-0.7, -0.1, 0.0, 0.2, 1.5):
                for v0 in (5e-5, 0.3, 2.0):
                    f = mine.force(d, d_dot, v0)
                    ref = law_force(theirs, d, d_dot, v0)
                    scale = K * max(d, 0.0) ** 1.5 * (1.0 + mine.chi * abs(d_dot) / 5e-5)
                    assert abs(f - ref) <= 8 * EPS * scale, (law, d, d_dot, v0)
    fr = friction_law(
        {"law": "coulomb-transition", "mu": 0.01, "v_static": 1e-3, "v_dynamic": 1e-2}, "f"
    )
    for v in (-0.5, -5e-3, -1e-3, 0.0, 4e-4, 2e-3, 9.99e-3, 3.0):
        assert coulomb_transition(v, 0.01, 1e-3, 1e-2) == pytest.approx(
            law_coefficient(fr, v), abs=4 * EPS * 0.01
        )


def test_a_contact_entered_and_left_inside_one_step_is_found():
    """A mass thrown up at 1 m/s towards a ceiling 1 um below its apex: the free flight is a
    parabola, which DOP853 integrates exactly and in steps long enough to pass the apex, the
    dip of the gap and back in one step. The segment is redone with a shorter step bound until
    the onset is seen: one impact, at the analytic time ``(v - sqrt(v^2 - 2 g h)) / g`` to
    brentq's tolerance (4 eps (1 + t)) plus the root's round-off (a few eps of the height
    over the onset speed ``sqrt(2 g 1e-6)``)."""
    law, g, v = NormalLaw("hertz", 1e8), 9.81, 1.0
    h = v * v / (2 * g) - 1e-6

    def gaps(t, y):
        return np.array([y[0] - h]), np.array([y[1]])

    def force(y, active, v0):
        return law.force(y[0] - h, y[1], v0[0]) if active[0] else 0.0

    def rhs(t, y, active, v0):
        f = force(y, active, v0)
        return np.array([y[1], -g - f, 0.0, (f - law.elastic_force(y[0] - h)) * y[1]])

    def contact(t, y, active, v0):
        return np.array([force(y, active, v0)]), np.zeros(1), np.array([[y[0], 0.0]])

    def energy(t, Y):
        return 0.5 * Y[1] ** 2 + g * Y[0] + law.energy(Y[0] - h)

    model = cm._Model(("ceiling",), (law,), rhs, gaps, lambda t, y, yd: yd[1:2], contact, energy)
    opts = cm._Options(1e-10, 1e-13, math.inf, 100)
    run = cm._integrate(model, np.array([0.0, v, 0.0, 0.0]), np.linspace(0, 0.2, 11), 0.2, opts)
    t_on = (v - math.sqrt(v * v - 2 * g * h)) / g
    assert run.retries >= 1 and len(run.onsets[0]) == 1
    assert abs(run.onsets[0][0] - t_on) <= 4 * EPS * (1 + t_on) + 8 * EPS * h / math.sqrt(2e-6 * g)
    assert 0.0 < run.d_peak[0][0] < 1e-6
    assert run.Y[-1, 1] < 0.0  # sent back down


# --------------------------------------------------------------- A: two clearance joints


@pytest.mark.parametrize("restitution", [1.0, 0.9])
def test_two_clearances_energy_balance(restitution):
    """Kinetic + gravity + elastic contact energy + dissipated work - drive work stays at its
    initial value to the integrator bound; with ``ce = 1`` (the law is Hertz's) nothing is
    dissipated. Measured: |error| / bound 6.5e-4 (ce = 1) and 5e-5 (ce = 0.9): the bound adds
    the embedded estimate's worst case over every step."""
    r = slider_crank_two_clearances(t_end=0.004, sample_dt=2e-6, restitution=restitution)
    assert all(c["impacts"] >= 2 for c in r["contacts"].values())
    assert r["energy_error_bound"] < 1e-3 * r["energy"][0]  # a bound that means something
    assert np.max(np.abs(r["energy_balance_error"])) <= r["energy_error_bound"]
    if restitution == 1.0:
        assert np.max(np.abs(r["dissipated"])) <= r["energy_error_bound"]
    else:
        assert r["dissipated"][-1] > 100 * r["energy_error_bound"]


def _geometric_bound(r, pins):
    """``|x_s - x_ideal|`` at equal crank angle: with ``|A - P| <= c1 + d1``, ``|B - S| <= c2
    + d2`` (``d`` the largest penetrations) and ``|B - A| = l``, the distance ``L = |S - P|``
    is within ``eps = c1 + c2 + d1 + d2`` of ``l``; the slider on the x axis is at ``P_x +
    sqrt(L^2 - P_y^2)``, so ``|x_s - x_ideal| = |L^2 - l^2| / (sqrt(L^2 - P_y^2) + sqrt(l^2 -
    P_y^2)) <= eps (2 l + eps) / (sqrt((l - eps)^2 - r^2) + sqrt(l^2 - r^2))``."""
    c = sum(b - j for b, j in pins)
    eps = c + sum(v["max_penetration"] for v in r["contacts"].values())
    return eps * (2 * L + eps) / (math.sqrt((L - eps) ** 2 - R**2) + math.sqrt(L * L - R * R))


def test_two_clearances_within_the_ideal_slider_crank():
    """The slider stays within the exact geometric bound of the closed-form slider-crank, and
    the bound closes with the clearances (0.25 + 0.5 mm -> 5 + 10 um). Measured: the slider
    uses 0.86 and 0.81 of the bound (the journals cross their clearances)."""
    cases = {
        "shipped": ((0.010, 0.00975), (0.010, 0.0095)),
        "small": ((0.010, 0.010 - 5e-6), (0.010, 0.010 - 1e-5)),
    }
    bounds = {}
    for name, pins in cases.items():
        r = slider_crank_two_clearances(t_end=0.008, crank_pin=pins[0], wrist_pin=pins[1])
        x = slider_crank_kinematics(r["t"], R, L, OMEGA)["x"]
        bounds[name] = _geometric_bound(r, pins)
        dev = np.max(np.abs(r["slider_x"] - x))
        assert dev <= bounds[name]
        assert dev >= 0.3 * bounds[name]  # the bound is tight: the journals do move
    assert bounds["small"] < bounds["shipped"] / 20.0


def test_two_clearances_drive_torque_does_the_drive_work():
    """``int tau omega dt = W + m_crank g r/2 sin(omega t)`` over the first impacts (the drive
    torque against the work the model integrates as a state), with the trapezoid's error
    estimated from halving its step (Richardson: ``|I_h - I_2h| / 3``), times the safety
    factor, plus the energy bound."""
    t = np.linspace(0.0, 4e-4, 20001)
    r = slider_crank_two_clearances(t)
    power = r["drive_torque"] * OMEGA
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(t))])
    coarse = np.concatenate([[0.0], np.cumsum((power[2::2] + power[:-2:2]) * np.diff(t[::2]))])
    expected = r["drive_work"] + 0.5 * 0.30 * 9.81 * R * np.sin(OMEGA * t)
    err = np.abs(work[::2] - coarse / 2.0)
    assert r["drive_work"][-1] > 1.0  # the impacts did work
    assert np.all(np.abs(work[::2] - expected[::2]) <= SAFETY * err / 3.0 + r["energy_error_bound"])


# ------------------------------------------------------------ B: slider with guide clearance


@pytest.mark.parametrize(
    "law, t_end",
    [({"restitution": 1.0, "mu": 0.0}, 0.02), ({}, 0.005)],
    ids=["elastic-frictionless", "flores-friction"],
)
def test_guide_clearance_energy_balance(law, t_end):
    """As for the two clearances: energy + dissipated work constant to the integrator bound
    (elastic and frictionless: nothing dissipated). Measured: |error| / bound 8e-3 (elastic)
    and 6e-5 (Flores ce 0.4, mu 0.01)."""
    r = slider_crank_guide_clearance(t_end=t_end, sample_dt=1e-5, **law)
    assert sum(c["impacts"] for c in r["contacts"].values()) >= 4
    assert r["energy_error_bound"] < 1e-4 * r["energy"][0]
    assert np.max(np.abs(r["energy_balance_error"])) <= r["energy_error_bound"]
    if law:
        assert np.max(np.abs(r["dissipated"])) <= r["energy_error_bound"]
    else:
        assert r["dissipated"][-1] > 100 * r["energy_error_bound"]
    assert np.all(r["drive_work"] == 0.0)


def test_ideal_guide_model():
    """The one-coordinate ideal-guide model: energy conserved to its integrator bound, and its
    rod angle and slider position those of the closed-form slider-crank at its crank angles
    (ancf_beam.references.mechanism, with omega = 1 and t = theta) to round-off."""
    t = np.linspace(0.0, 0.1, 2001)
    r = slider_crank_ideal_guide(t)
    assert np.ptp(r["energy"]) <= r["energy_error_bound"]
    assert r["crank_angle"][-1] > 2 * math.pi  # more than a revolution
    k = slider_crank_kinematics(r["crank_angle"], 0.153, 0.306, 1.0)
    assert np.allclose(r["slider_x"], k["x"], rtol=0.0, atol=16 * EPS * 0.5)
    assert np.allclose(r["rod_angle"], k["phi"], rtol=0.0, atol=16 * EPS)


def test_guide_clearance_approaches_the_ideal_guide():
    """As the clearance shrinks (0.1 mm -> 10 um; frictionless, the shipped Flores law), the
    crank angle and the slider position approach the ideal-guide model at first order in the
    slider's lateral freedom ``c + 2 d_max``: the finer deviation is at most SAFETY times the
    coarser one scaled by that ratio (an estimate from refinement). The slider's centre stays
    within its geometric freedom ``c/2 + d_max + (a/2) |sin theta3| + (b/2)(1 - cos theta3)``.
    Measured: the deviations (crank angle, slider position) shrink 10.8 and 11.9 times for an
    8.0 times smaller freedom."""
    t = np.linspace(0.0, 0.02, 2001)
    ideal = slider_crank_ideal_guide(t)
    dev, free = {}, {}
    for c in (1e-4, 1e-5):
        r = slider_crank_guide_clearance(t, t_end=0.02, clearance=c, mu=0.0)
        d_max = max(v["max_penetration"] for v in r["contacts"].values())
        th3 = np.abs(r["slider_angle"])
        room = c / 2 + d_max + 0.025 * np.sin(th3) + 0.0125 * (1 - np.cos(th3))
        assert np.all(np.abs(r["slider_y"]) <= room + 4 * EPS)
        assert sum(v["impacts"] for v in r["contacts"].values()) >= 2
        free[c] = c + 2 * d_max
        dev[c] = (
            np.max(np.abs(r["crank_angle"] - ideal["crank_angle"])),
            np.max(np.abs(r["slider_x"] - ideal["slider_x"])),
        )
    for i in range(2):
        assert dev[1e-5][i] <= SAFETY * dev[1e-4][i] * free[1e-5] / free[1e-4]
        assert dev[1e-5][i] < dev[1e-4][i] / 3.0


# -------------------------------------------------------------------------- tolerances


def _first(r):
    """First contact time and peak force of the first episode of every contact that has one."""
    return {
        (name, key): c[key]
        for name, c in r["contacts"].items()
        if c["impacts"]
        for key in ("first_contact_time", "first_impact_force")
    }


@pytest.mark.parametrize(
    "model, t_end, rtol, atol_factor",
    [
        (slider_crank_two_clearances, 4e-4, 1e-10, 1e-3),
        (slider_crank_guide_clearance, 3e-3, 1e-10, 1e-2),
    ],
    ids=["two-clearances", "guide-clearance"],
)
def test_halving_rtol_moves_the_first_impacts_within_the_tolerance_bound(
    model, t_end, rtol, atol_factor
):
    """First contact times and first-impact peak forces at ``rtol`` and ``rtol/2`` differ by
    less than twice the error bound of the run at ``rtol`` (module docstring). Measured:
    relative changes up to 6e-11 (times) and 2.2e-10 (forces), 9 to 2e4 times inside."""
    runs = {
        f: _first(model(t_end=t_end, rtol=f * rtol, atol=f * rtol * atol_factor))
        for f in (10.0, 1.0, 0.5)
    }
    assert runs[1.0] and runs[1.0].keys() == runs[0.5].keys() == runs[10.0].keys()
    for key, x in runs[1.0].items():
        bound = abs(x - runs[10.0][key]) + (rtol + 4 * EPS) * abs(x)
        assert abs(runs[0.5][key] - x) <= 2.0 * bound, key
