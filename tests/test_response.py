"""Response analysis against synthetic signals and shapes with known answers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ancf_beam import response as R
from ancf_beam.solvers.static import solve_static
from conftest import make_model

TWO_PI = 2 * np.pi


# ------------------------------------------------------------------------------------------
# spectrum
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("f0", [16.59, 50.1, 123.456])
def test_pure_sine_peak_frequency(f0):
    """A tip-like signal (static offset + sine) over 0.5 s: the log-parabola interpolation of
    the peak is far finer than the 2 Hz bins: measured 9.2e-6; tolerance 1e-4."""
    t = np.arange(0.0, 0.5, 1e-4)
    y = -1.4e-3 + 1.4e-3 * np.sin(TWO_PI * f0 * t + 0.3)
    s = R.tip_spectrum(t, y)
    assert s.resolution_hz == pytest.approx(2.0, rel=1e-12)  # 8 cycles of 16.59 Hz: coarse bins
    assert abs(s.peak_hz / f0 - 1) < 1e-4
    assert s.peak_omega == pytest.approx(TWO_PI * s.peak_hz)
    np.testing.assert_allclose(s.omega, TWO_PI * s.f_hz)
    json.dumps(s.to_dict())


def test_welch_averaging_on_noisy_long_record():
    rng = np.random.default_rng(3)
    t = np.arange(0.0, 20.0, 1e-3)
    y = np.cos(TWO_PI * 7.3 * t) + 0.5 * rng.standard_normal(t.size)
    s = R.tip_spectrum(t, y, nperseg=4096)
    assert s.nperseg == 4096
    assert s.peak_hz == pytest.approx(7.3, rel=2.5e-4)  # seeded noise: measured 2.5e-5


def test_spectrum_rejects_bad_input():
    t = np.arange(100) * 1e-3
    with pytest.raises(ValueError, match="same length"):
        R.tip_spectrum(t, np.zeros(99))
    t2 = t.copy()
    t2[50] += 3e-4
    with pytest.raises(ValueError, match="uniformly sampled"):
        R.tip_spectrum(t2, np.sin(t2))
    y = np.sin(t)
    y[3] = np.nan
    with pytest.raises(ValueError, match="finite"):
        R.tip_spectrum(t, y)


def test_zero_signal_has_no_peak():
    t = np.arange(200) * 1e-3
    s = R.tip_spectrum(t, np.full(t.size, -2e-3))
    assert np.isnan(s.peak_hz)
    b = R.detect_beat(t, np.full(t.size, -2e-3))
    assert b.has_beat is False


# ------------------------------------------------------------------------------------------
# envelope and beats
# ------------------------------------------------------------------------------------------
def test_envelope_of_am_signal():
    t = np.arange(0.0, 4.0, 1e-3)
    amp = 1.0 + 0.4 * np.cos(TWO_PI * 0.75 * t)
    y = 3.0 + amp * np.cos(TWO_PI * 20.0 * t)
    env = R.envelope(t, y)
    mid = (t > 0.5) & (t < 3.5)  # away from the Hilbert edge effects
    # whole periods of an exact AM signal: the Hilbert envelope is exact to round-off (measured
    # 4.7e-14, 6.1e-13 relative, 0); tolerances 1e-11, 1e-10, 1e-12
    np.testing.assert_allclose(env.amplitude[mid], amp[mid], atol=1e-11)
    np.testing.assert_allclose(env.inst_omega[mid], TWO_PI * 20.0, rtol=1e-10)
    assert np.mean(env.trend) == pytest.approx(3.0, abs=1e-12)


@pytest.mark.parametrize("a", [0.3, 0.5, 1.0])
def test_two_tone_beat(a):
    """cos(w1 t) + a cos(w2 t): envelope^2 = 1 + a^2 + 2a cos((w1 - w2) t), so the beat
    frequency is |w1 - w2| / 2pi and the depth (beat amplitude of A^2 over its mean) is
    exactly 2a / (1 + a^2); the implied amplitude ratio is a."""
    t = np.arange(0.0, 10.0, 1e-3)
    w1, w2 = TWO_PI * 16.0, TWO_PI * 17.2
    y = -0.2 + np.cos(w1 * t) + a * np.cos(w2 * t + 0.7)
    b = R.detect_beat(t, y)
    assert b.has_beat is True, b.reason
    # exact two-tone signal: the sinusoid fit is exact to round-off (measured 4.8e-15 and
    # 1.8e-15; tolerance 1e-11); the carrier from the spectrum: measured 2.2e-6 (tol. 2.2e-5)
    assert b.beat_hz == pytest.approx(abs(w1 - w2) / TWO_PI, rel=1e-11)
    assert b.beat_omega == pytest.approx(abs(w1 - w2), rel=1e-11)
    assert b.modulation_depth == pytest.approx(2 * a / (1 + a * a), rel=1e-11)
    assert b.amplitude_ratio == pytest.approx(a, rel=1e-11)
    assert b.carrier_hz == pytest.approx(16.0, rel=2.2e-5)
    json.dumps(b.to_dict())


def test_two_tone_beat_with_few_beat_periods_and_damping():
    """Two beat periods only, both tones decaying: the exponential trend is not a beat, the
    modulation on top of it is."""
    t = np.arange(0.0, 2.0, 1e-3)
    y = np.exp(-0.3 * t) * (np.cos(TWO_PI * 16.0 * t) + 0.5 * np.cos(TWO_PI * 17.2 * t))
    b = R.detect_beat(t, y)
    assert b.has_beat is True, b.reason
    assert b.beat_hz == pytest.approx(1.2, rel=3.5e-4)  # measured 3.5e-5
    assert b.modulation_depth == pytest.approx(0.8, rel=1.2e-3)  # measured 1.2e-4


@pytest.mark.parametrize(
    "signal",
    ["single", "damped", "noisy", "separated"],
)
def test_no_beat(signal):
    """Flat or merely decaying envelopes and well-separated modes are not beats."""
    t = np.arange(0.0, 10.0, 1e-3)
    w = TWO_PI * 16.59
    if signal == "single":
        y = -1e-3 + 1e-3 * np.sin(w * t)
    elif signal == "damped":
        y = np.exp(-0.5 * t) * np.cos(w * t)
    elif signal == "noisy":
        y = np.cos(w * t) + 0.05 * np.random.default_rng(0).standard_normal(t.size)
    else:  # modes 1 and 2 of a cantilever: frequency ratio 6.27, not a beat
        y = np.cos(w * t) + 0.3 * np.cos(6.27 * w * t)
    b = R.detect_beat(t, y)
    assert b.has_beat is False
    assert b.reason


# ------------------------------------------------------------------------------------------
# curvature
# ------------------------------------------------------------------------------------------
def _arc(model, radius, sign):
    """Full coordinates of the beam bent into a circular arc of radius R (|r'| = 1)."""
    X = model.x_nodes
    th = sign * X / radius
    q = np.zeros(model.n_dof)
    q[0::4] = radius * np.sin(X / radius)
    q[1::4] = sign * radius * (1.0 - np.cos(X / radius))
    q[2::4] = np.cos(th)
    q[3::4] = np.sin(th)
    return q


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_circular_arc_curvature(sign):
    radius = 2.0
    model = make_model(**{"mesh.n_elements": 20})
    q = _arc(model, radius, sign)
    p = R.curvature_distribution(model, q)
    # the cubic interpolation of the arc: measured 5.2e-5 (curvature, moment), 1.6e-6 (energy)
    np.testing.assert_allclose(p.kappa, sign / radius, rtol=5e-4)
    np.testing.assert_allclose(p.kappa_ref, 0.0, atol=1e-12)
    ei = model.profile.EI(0.0)
    assert p.bending_energy == pytest.approx(0.5 * ei / radius**2 * model.length, rel=1.6e-5)
    np.testing.assert_allclose(p.moment, ei * sign / radius, rtol=5e-4)
    # the same from nodal positions only (an end moment: not-a-knot at the tip)
    c = R.curvature_from_nodes(model.x_nodes, q[0::4], q[1::4], free_tip=False)
    np.testing.assert_allclose(c.kappa, sign / radius, rtol=2e-3)  # measured 4.4e-4
    m = R.concentration_metrics(p.X, p.kappa, p.EI)
    assert m["gini"] == pytest.approx(0.0, abs=1.3e-4)  # measured 1.3e-5
    assert m["peak_to_mean"] == pytest.approx(1.0, abs=5e-4)  # measured 5.1e-5


def test_curvature_from_nodes_matches_element_curvature_under_gravity():
    """Nodal positions of a static gravity solution (soft graded beam, large deflection):
    the spline estimate with clamp and free-tip end conditions matches the element's own
    curvature, and both give the same concentration metrics."""
    model = make_model(**{"mesh.n_elements": 20, "material.E0": 2.07e8, "defect.lam": 0.5})
    q = solve_static(model).q
    p = R.curvature_distribution(model, q)
    c = R.curvature_from_nodes(model.x_nodes, q[0::4], q[1::4], EI=model.profile.EI)
    k_el = np.interp(c.X, p.X, p.kappa)
    assert np.max(np.abs(c.kappa - k_el)) < 3e-3 * np.max(np.abs(p.kappa))
    assert c.bending_energy == pytest.approx(p.bending_energy, rel=1e-3)
    # the bending energy of the samples equals the model's own (integrated at Gauss points)
    m1 = R.concentration_metrics(p.X, p.dkappa, p.EI)
    m2 = R.concentration_metrics(c.X, c.dkappa, c.EI)
    for key in ("peak_to_mean", "energy_fraction_outer", "gini", "participation_ratio"):
        assert m2[key] == pytest.approx(m1[key], rel=5e-3), key
    assert m1["x_peak"] == 0.0 and m1["kappa_peak"] < 0  # bending down, peak at the clamp


# ------------------------------------------------------------------------------------------
# concentration metrics
# ------------------------------------------------------------------------------------------
def test_concentration_uniform_profile():
    X = np.linspace(0.0, 1.0, 401)
    m = R.concentration_metrics(X, np.full(X.size, -0.3), EI=2.0)
    assert m["peak_to_mean"] == pytest.approx(1.0)
    assert m["gini"] == pytest.approx(0.0, abs=1e-12)
    assert m["energy_fraction_inner"] == pytest.approx(0.5)
    assert m["energy_fraction_outer"] == pytest.approx(0.5)
    assert m["kappa_centroid"] == pytest.approx(0.5)
    assert m["participation_ratio"] == pytest.approx(1.0)
    assert m["bending_energy"] == pytest.approx(0.5 * 2.0 * 0.09)


def test_concentration_self_weight_profile():
    """kappa ~ (L - x)^2 (uniform cantilever under self-weight): peak at the clamp, peak/mean
    3, outer-half energy (1/2)^5 = 1/32, Gini p/(p+2) = 1/2, participation (1/3)^2 / (1/5)."""
    X = np.linspace(0.0, 1.0, 2001)
    m = R.concentration_metrics(X, -((1.0 - X) ** 2))
    assert m["x_peak"] == 0.0
    assert m["kappa_peak"] == pytest.approx(-1.0)
    # trapezoidal integrals on 2001 points: measured 1.2e-7, 1.2e-6, 5.1e-14 (abs), 1.7e-7,
    # 3.7e-7; tolerances 10x (1e-12 for the Gini, exact for this profile)
    assert m["peak_to_mean"] == pytest.approx(3.0, rel=1.2e-6)
    assert m["energy_fraction_outer"] == pytest.approx(1 / 32, rel=1.2e-5)
    assert m["gini"] == pytest.approx(0.5, abs=1e-12)
    assert m["participation_ratio"] == pytest.approx(5 / 9, rel=1.7e-6)
    assert m["kappa_centroid"] == pytest.approx(0.25, rel=3.7e-6)


def test_concentration_localised_kink():
    X = np.linspace(0.0, 2.0, 2001)
    k = 1e-4 + np.exp(-(((X - 1.5) / 0.02) ** 2))
    m = R.concentration_metrics(X, k)
    assert m["x_peak"] == pytest.approx(1.5)
    assert m["peak_to_mean"] > 20
    assert m["gini"] > 0.9
    assert m["energy_fraction_outer"] > 0.99
    assert m["participation_length"] < 0.1
    zero = R.concentration_metrics(X, np.zeros_like(X))
    assert np.isnan(zero["gini"]) and np.isnan(zero["energy_fraction_outer"])


# ------------------------------------------------------------------------------------------
# one simulated run
# ------------------------------------------------------------------------------------------
def test_summarize_run_on_explicit_simulation():
    """A coarse gravity release: dominant frequency = first bending frequency, no beat, the
    deformation concentrated at the clamp; everything JSON-ready."""
    from ancf_beam.analyses import run_simulate
    from ancf_beam.solvers.explicit import simulate_explicit
    from ancf_beam.solvers.modal import modal_analysis

    case = make_model(**{"mesh.n_elements": 6}).case
    _, ds = run_simulate(case, t_end=0.4, progress=False)
    s = R.summarize_run(ds)
    json.dumps(s)
    w1 = modal_analysis(make_model(**{"mesh.n_elements": 6}), n_modes=1).omega[0]
    assert s["peak_omega"] == pytest.approx(w1, rel=1.8e-4)  # measured 1.8e-5
    assert s["has_beat"] is False
    assert s["tip_y_min"] < s["tip_y_mean"] < 0
    assert s["curvature_source"] == "element (q_snapshot)"  # full snapshots are stored
    assert s["curv_x_peak"] == pytest.approx(0.0, abs=1e-12)  # at the clamp
    assert s["curv_energy_fraction_inner"] > 0.8
    # the case is rebuilt from the provenance attributes, so the energy is in joules: close
    # to the strain energy of the model at that snapshot (which adds the tiny axial part)
    model = make_model(**{"mesh.n_elements": 6})
    i = int(np.argmin(np.abs(ds["time"].values - s["snapshot_time"])))
    # measured 2.5e-4 (the axial part); tolerance 2.5e-3
    assert s["curv_bending_energy"] == pytest.approx(float(ds["strain"].values[i]), rel=2.5e-3)
    # with full coordinates stored, the element's own curvature is used; same metrics
    res = simulate_explicit(model, 0.4, ds.attrs["dt"], progress=False)
    ds["q_snapshot"] = (("snapshot", "dof"), res.q_snap)
    s2 = R.summarize_run(ds)
    assert s2["curvature_source"] == "element (q_snapshot)"
    for key in ("curv_bending_energy", "curv_peak_to_mean", "curv_gini"):
        assert s2[key] == pytest.approx(s[key], rel=1e-12), key  # measured 0
