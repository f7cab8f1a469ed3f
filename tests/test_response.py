"""Response analysis against synthetic signals and shapes with known answers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ancf_beam import response as R
from ancf_beam.solvers.static import solve_static
from ancf_beam.studies.bounds import EPS, refinement_estimate
from conftest import FS, make_model

TWO_PI = 2 * np.pi
N_EPS = 5.0  # the FFT's normwise round-off: at most about 5 log2(N) eps of ||y||_2


# ------------------------------------------------------------------------------------------
# error bounds of the spectral peak (Hann window, log-parabola interpolation)
# ------------------------------------------------------------------------------------------
def _hann_transform(x):
    """Amplitude of the Hann window's transform at ``x`` bins, relative to its peak (the
    continuous form ``sinc(x) / (1 - x^2)``, exact for long records)."""
    x = np.asarray(x, float)
    near = np.abs(np.abs(x) - 1.0) < 1e-9
    return np.where(near, 0.5, np.sinc(x) / np.where(near, 1.0, 1.0 - x**2))


def _interpolation_bias(spacing):
    """Largest vertex error (bins) of the parabola through the log of the Hann peak's power at
    three frequencies ``spacing`` bins apart, over every position of the peak between them."""
    worst = 0.0
    for u in np.linspace(-spacing / 2, spacing / 2, 201):
        a, b, c = np.log(_hann_transform([u - spacing, u, u + spacing]) ** 2)
        worst = max(worst, abs(u + 0.5 * (a - c) / (a - 2 * b + c) * spacing))
    return worst


#: curvature of the Hann peak's power at its top: |W(x)|^2 = 1 - A x^2 + ...
HANN_CURVATURE = 2.0 * (np.pi**2 / 6.0 - 1.0)


def _leak_shift(rho, k):
    """Largest shift (bins) of the peak by another component of relative amplitude ``rho``
    ``k`` bins away (``|k| > 2``): its sidelobe there is at most ``rho / (pi |k| (k^2 - 1))``
    with slope at most ``(pi + 3 / |k|)`` times that; the peak of ``|W + e|^2`` moves by at
    most ``|e'| / A`` (first order in ``e``)."""
    k = abs(float(k))
    return rho / (np.pi * k * (k * k - 1.0)) * (np.pi + 3.0 / k) / HANN_CURVATURE


def _peak_bound_hz(s, y, f0, amplitude, others=()):
    """Bound (Hz) of the spectral peak's error for a tone ``amplitude cos(2 pi f0 t + ...)`` in
    ``y``: FS x (the interpolation bias at the padded spacing + the leak of the tone's negative-
    frequency image, of the windowed mean left by the detrending and of ``others`` ((relative
    amplitude, frequency) pairs)), in bins of ``s.resolution_hz``."""
    res = s.resolution_hz
    spacing = (s.f_hz[1] - s.f_hz[0]) / res
    yd = y - y.mean()
    w = np.hanning(y.size)
    rho_dc = abs(float(w @ yd) / float(w.sum())) / (amplitude / 2.0)
    bins = _interpolation_bias(spacing) + _leak_shift(1.0, 2.0 * f0 / res)
    bins += _leak_shift(rho_dc, f0 / res)
    for rho, f in others:
        bins += _leak_shift(rho, (f - f0) / res)
    return FS * bins * res


# ------------------------------------------------------------------------------------------
# spectrum
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("f0", [16.59, 50.1, 123.456])
def test_pure_sine_peak_frequency(f0):
    """A tip-like signal (static offset + sine) over 0.5 s: the log-parabola interpolation of
    the peak is far finer than the 2 Hz bins. Bound (:func:`_peak_bound_hz`): FS x (the
    interpolation bias on the Hann peak at 1/8-bin spacing, 5.5e-6 bins, + the leaks of the
    negative-frequency image and of the windowed mean): 2.8e-4, 1.2e-5, 5.9e-6 bins; measured
    7.6e-5, 8.8e-6, 2.2e-6 bins (err/bound 0.14, 0.37, 0.19)."""
    t = np.arange(0.0, 0.5, 1e-4)
    y = -1.4e-3 + 1.4e-3 * np.sin(TWO_PI * f0 * t + 0.3)
    s = R.tip_spectrum(t, y)
    # fs / nperseg = 1e4 / 5000 and the products by 2 pi: a rounding or two each
    assert s.resolution_hz == pytest.approx(2.0, rel=4 * EPS)  # 8 cycles of 16.59 Hz
    assert abs(s.peak_hz - f0) <= _peak_bound_hz(s, y, f0, 1.4e-3)
    assert s.peak_omega == pytest.approx(TWO_PI * s.peak_hz, rel=4 * EPS)
    np.testing.assert_allclose(s.omega, TWO_PI * s.f_hz, rtol=4 * EPS)
    json.dumps(s.to_dict())


def test_welch_averaging_on_noisy_long_record():
    """Seeded noise (SNR 2 per sample): NOT a derived bound. The noise moves the peak by a
    random amount; no deterministic bound holds, and the estimator's variance for averaged
    Hann segments has no closed form here. Tolerance 2.5e-4 (ten times the measured 2.5e-5,
    a twentieth of the 4096-sample bin, 0.24 Hz)."""
    rng = np.random.default_rng(3)
    t = np.arange(0.0, 20.0, 1e-3)
    y = np.cos(TWO_PI * 7.3 * t) + 0.5 * rng.standard_normal(t.size)
    s = R.tip_spectrum(t, y, nperseg=4096)
    assert s.nperseg == 4096
    assert s.peak_hz == pytest.approx(7.3, rel=2.5e-4)  # NOT derived (seeded noise)


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
    """Whole periods of an exact AM signal: the FFT-based analytic signal is exact but for the
    FFTs' round-off, at most 5 log2(N) eps ||y - mean||_2 per sample (the normwise bound; 2.6e-12;
    measured 4.7e-14). The instantaneous frequency is the central difference of the phase,
    exactly linear in t: its error is the phase's round-off (eps x the phase, up to 503 rad, plus
    the analytic signal's error over the amplitude, >= 0.6) over dt (relative 3.3e-11; measured
    6.1e-13); the trend, a mean of N samples, within N eps of its largest (measured 0)."""
    t = np.arange(0.0, 4.0, 1e-3)
    amp = 1.0 + 0.4 * np.cos(TWO_PI * 0.75 * t)
    y = 3.0 + amp * np.cos(TWO_PI * 20.0 * t)
    env = R.envelope(t, y)
    mid = (t > 0.5) & (t < 3.5)  # away from the Hilbert edge effects
    fft_err = N_EPS * np.log2(t.size) * EPS * np.linalg.norm(y - y.mean())
    np.testing.assert_allclose(env.amplitude[mid], amp[mid], rtol=0, atol=fft_err)
    phase_err = EPS * np.abs(env.phase).max() + fft_err / amp.min()
    np.testing.assert_allclose(
        env.inst_omega[mid], TWO_PI * 20.0, rtol=0, atol=2 * phase_err / (2 * 1e-3)
    )
    assert np.mean(env.trend) == pytest.approx(3.0, rel=0, abs=t.size * EPS * np.abs(y).max())


@pytest.mark.parametrize("a", [0.3, 0.5, 1.0])
def test_two_tone_beat(a):
    """cos(w1 t) + a cos(w2 t): envelope^2 = 1 + a^2 + 2a cos((w1 - w2) t), so the beat
    frequency is |w1 - w2| / 2pi and the depth (beat amplitude of A^2 over its mean) is
    exactly 2a / (1 + a^2); the implied amplitude ratio is a. Whole periods of both tones: the
    envelope is exact to the FFTs' round-off and the sinusoid fit to its solver's step
    tolerance (xtol 1e-12, a relative step; Gauss-Newton on exact data converges
    quadratically, so the remaining error is below the last step): FS x 1e-12 + 4 x the
    envelope's relative round-off 5 log2(N) eps (measured 4.8e-15 and 1.8e-15). The carrier
    from the spectrum within its peak bound (:func:`_peak_bound_hz`, the second tone a leak
    12 bins away; measured 2.2e-6 relative)."""
    t = np.arange(0.0, 10.0, 1e-3)
    w1, w2 = TWO_PI * 16.0, TWO_PI * 17.2
    y = -0.2 + np.cos(w1 * t) + a * np.cos(w2 * t + 0.7)
    b = R.detect_beat(t, y)
    assert b.has_beat is True, b.reason
    fit = FS * 1e-12 + 4 * N_EPS * np.log2(t.size) * EPS
    assert b.beat_hz == pytest.approx(abs(w1 - w2) / TWO_PI, rel=fit)
    assert b.beat_omega == pytest.approx(abs(w1 - w2), rel=fit)
    assert b.modulation_depth == pytest.approx(2 * a / (1 + a * a), rel=fit)
    assert b.amplitude_ratio == pytest.approx(a, rel=fit)
    s = R.tip_spectrum(t, y)
    assert abs(b.carrier_hz - 16.0) <= _peak_bound_hz(s, y, 16.0, 1.0, [(a, 17.2)])
    json.dumps(b.to_dict())


def test_two_tone_beat_with_few_beat_periods_and_damping():
    """Two beat periods only, both tones decaying: the exponential trend is not a beat, the
    modulation on top of it is. NOT derived bounds: the record holds no whole number of the
    decaying tones' periods, so the Hilbert envelope errs near both ends (trimmed by two carrier
    periods, not removed) by amounts without a closed form; tolerances ten times the measured
    3.5e-5 and 1.2e-4."""
    t = np.arange(0.0, 2.0, 1e-3)
    y = np.exp(-0.3 * t) * (np.cos(TWO_PI * 16.0 * t) + 0.5 * np.cos(TWO_PI * 17.2 * t))
    b = R.detect_beat(t, y)
    assert b.has_beat is True, b.reason
    assert b.beat_hz == pytest.approx(1.2, rel=3.5e-4)  # NOT derived: measured 3.5e-5
    assert b.modulation_depth == pytest.approx(0.8, rel=1.2e-3)  # NOT derived: 1.2e-4


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


def _trapezoid_rel(f, X):
    """Relative error bound of the trapezoidal integral of the samples ``f`` (smooth, its
    second derivative from the samples' second differences): ``(b - a) h^2 / 12 max|f''|`` over
    ``|int f|``."""
    h = X[1] - X[0]
    f2 = np.abs(np.diff(f, 2)).max() / h**2
    return (X[-1] - X[0]) * h**2 / 12 * f2 / abs(np.trapezoid(f, X))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_circular_arc_curvature(sign):
    """The element curvature of an interpolated arc (radius 2, 20 elements): cubic Hermite
    interpolation with exact nodal positions and unit tangents errs in the second derivative
    by at most h^2 k^3 / 12 and in the first by h^3 k^3 / 24, relative curvature error at most
    e = FS x ((hk)^2 / 12 + 3 (hk)^3 / 24) (1.1e-4; measured 5.2e-5): the moment likewise, the
    energy (a mean of kappa^2) within 2e (measured 1.6e-6), the Gini within e / (1 - e) and
    peak/mean within 2e / (1 - e) of a constant (measured 1.3e-5, 5.1e-5). The straight
    reference's curvature is round-off: 4 eps sum|S''_a| |q_a| <= 96 eps L / l_e^2 (8.5e-12).
    From nodal positions only (cubic splines, not-a-knot at the tip): FS x the refinement
    estimate from the arc's nodes on 20, 40, 80 elements (measured 4.4e-4, err/bound 0.37)."""
    radius = 2.0
    model = make_model(**{"mesh.n_elements": 20})
    q = _arc(model, radius, sign)
    p = R.curvature_distribution(model, q)
    hk = model.le / radius
    e = FS * (hk**2 / 12 + 3 * hk**3 / 24)
    np.testing.assert_allclose(p.kappa, sign / radius, rtol=e)
    np.testing.assert_allclose(p.kappa_ref, 0.0, atol=96 * EPS * model.length / model.le**2)
    ei = model.profile.EI(0.0)
    assert p.bending_energy == pytest.approx(0.5 * ei / radius**2 * model.length, rel=2 * e)
    np.testing.assert_allclose(p.moment, ei * sign / radius, rtol=e)
    # the same from nodal positions only (an end moment: not-a-knot at the tip)
    ks = []
    for ne in (20, 40, 80):
        mm = make_model(**{"mesh.n_elements": ne})
        qq = _arc(mm, radius, sign)
        ks.append(R.curvature_from_nodes(mm.x_nodes, qq[0::4], qq[1::4], free_tip=False).kappa)
    bound = FS * refinement_estimate(*ks)
    assert np.all(np.abs(ks[0] - sign / radius) <= bound)
    m = R.concentration_metrics(p.X, p.kappa, p.EI)
    assert m["gini"] == pytest.approx(0.0, abs=e / (1 - e))
    assert m["peak_to_mean"] == pytest.approx(1.0, abs=2 * e / (1 - e))


def test_curvature_from_nodes_matches_element_curvature_under_gravity():
    """Nodal positions of a static gravity solution (soft graded beam, large deflection):
    the spline estimate with clamp and free-tip end conditions matches the element's own
    curvature, and both give the same concentration metrics. Each approximates the exact
    curvature: the element's within FS x its refinement estimate (solutions on 20, 40, 80
    elements), the spline's within FS x its refinement estimate (splines through the nodes of
    those solutions, spacing halved twice); the difference within their sum, pointwise and
    for every metric (measured err/bound up to 0.34: 1.1e-3 of the peak curvature pointwise)."""
    over = {"material.E0": 2.07e8, "defect.lam": 0.5}
    runs = []
    for ne in (20, 40, 80):
        model = make_model(**over, **{"mesh.n_elements": ne})
        q = solve_static(model).q
        p = R.curvature_distribution(model, q)
        c = R.curvature_from_nodes(model.x_nodes, q[0::4], q[1::4], EI=model.profile.EI)
        runs.append((p, c))
    X = runs[0][1].X  # the spline's output points (the same for every mesh)
    k_el = [np.interp(X, p.X, p.kappa) for p, _ in runs]
    k_sp = [c.kappa for _, c in runs]
    bound = FS * (refinement_estimate(*k_el) + refinement_estimate(*k_sp))
    assert np.all(np.abs(k_sp[0] - k_el[0]) <= bound)
    # the bending energy of the samples against the model's own (integrated at Gauss points),
    # and the concentration metrics
    keys = (
        "bending_energy",
        "peak_to_mean",
        "energy_fraction_outer",
        "gini",
        "participation_ratio",
    )
    m_el = [R.concentration_metrics(p.X, p.dkappa, p.EI) for p, _ in runs]
    m_sp = [R.concentration_metrics(c.X, c.dkappa, c.EI) for _, c in runs]
    for key in keys:
        est = FS * (
            refinement_estimate(*(m[key] for m in m_el))
            + refinement_estimate(*(m[key] for m in m_sp))
        )
        assert abs(m_sp[0][key] - m_el[0][key]) <= est, key
    m1 = m_el[0]
    assert m1["x_peak"] == 0.0 and m1["kappa_peak"] < 0  # bending down, peak at the clamp


# ------------------------------------------------------------------------------------------
# concentration metrics
# ------------------------------------------------------------------------------------------
def test_concentration_uniform_profile():
    """Constant curvature: every metric is exact up to the round-off of sums of N = 401 terms
    (N eps relative)."""
    X = np.linspace(0.0, 1.0, 401)
    m = R.concentration_metrics(X, np.full(X.size, -0.3), EI=2.0)
    tol = X.size * EPS
    assert m["peak_to_mean"] == pytest.approx(1.0, rel=tol)
    assert m["gini"] == pytest.approx(0.0, abs=tol)
    assert m["energy_fraction_inner"] == pytest.approx(0.5, rel=tol)
    assert m["energy_fraction_outer"] == pytest.approx(0.5, rel=tol)
    assert m["kappa_centroid"] == pytest.approx(0.5, rel=tol)
    assert m["participation_ratio"] == pytest.approx(1.0, rel=tol)
    assert m["bending_energy"] == pytest.approx(0.5 * 2.0 * 0.09, rel=tol)


def test_concentration_self_weight_profile():
    """kappa ~ (L - x)^2 (uniform cantilever under self-weight): peak at the clamp, peak/mean
    3, outer-half energy (1/2)^5 = 1/32, Gini p/(p+2) = 1/2, participation (1/3)^2 / (1/5).
    Trapezoidal integrals on 2001 points: each ratio within the sum of its integrals' relative
    error bounds (b - a) h^2 / 12 max|f''| (:func:`_trapezoid_rel`; measured err/bound 0.96
    for peak/mean -- the bound is exact for the quadratic |kappa| -- and 0.1 to 0.4 for the
    others); the Gini, exact for this profile, within the round-off of sums of N terms."""
    X = np.linspace(0.0, 1.0, 2001)
    k = -((1.0 - X) ** 2)
    m = R.concentration_metrics(X, k)
    assert m["x_peak"] == 0.0
    assert m["kappa_peak"] == -1.0  # a sample
    ak, k2 = np.abs(k), k * k
    outer = X >= 0.5
    e_abs, e_sq = _trapezoid_rel(ak, X), _trapezoid_rel(k2, X)
    e_out = _trapezoid_rel(k2[outer], X[outer])
    assert m["peak_to_mean"] == pytest.approx(3.0, rel=e_abs)
    assert m["energy_fraction_outer"] == pytest.approx(1 / 32, rel=e_out + e_sq)
    assert m["gini"] == pytest.approx(0.5, abs=X.size * EPS)
    assert m["participation_ratio"] == pytest.approx(5 / 9, rel=2 * e_abs + e_sq)
    e_x = _trapezoid_rel(X * ak, X)
    assert m["kappa_centroid"] == pytest.approx(0.25, rel=e_x + e_abs)


def test_concentration_localised_kink():
    X = np.linspace(0.0, 2.0, 2001)
    k = 1e-4 + np.exp(-(((X - 1.5) / 0.02) ** 2))
    m = R.concentration_metrics(X, k)
    # qualitative properties, not error tolerances: the bump's exact values are peak/mean
    # 2 / (0.02 sqrt(pi) + 2e-4) = 56, participation length 0.0356^2 / 0.0251 = 0.050 m, Gini
    # and outer energy share within 0.02 of 1; x_peak is a sample (1.5 = X[1500] to rounding)
    assert m["x_peak"] == pytest.approx(1.5, rel=4 * EPS)
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
    deformation concentrated at the clamp; everything JSON-ready. The run's peak within the
    spectral peak's bound (:func:`_peak_bound_hz`, 0.4 s: 2.5 Hz bins; the second mode as a
    leak of relative amplitude up to 1) plus the run's frequency shift from the modal omega_1:
    about the static state instead of the reference, the geometric nonlinearity (its estimate
    from the static tip) and the central differences' (omega dt)^2 / 24 (measured 1.8e-5 of
    omega_1 against 1.7e-4)."""
    from ancf_beam.analyses import run_simulate
    from ancf_beam.solvers.explicit import simulate_explicit
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.studies.bounds import geometric_nonlinearity

    case = make_model(**{"mesh.n_elements": 6}).case
    _, ds = run_simulate(case, t_end=0.4, progress=False)
    s = R.summarize_run(ds)
    json.dumps(s)
    model = make_model(**{"mesh.n_elements": 6})
    modes = modal_analysis(model, n_modes=2)
    w1 = modes.omega[0]
    w1_static = modal_analysis(model, n_modes=1, about="static").omega[0]
    tip = solve_static(model).tip_y
    dt = float(ds.attrs["dt"])
    shift = abs(w1_static - w1) + w1 * (
        geometric_nonlinearity(model, tip) / abs(tip) + (w1 * dt) ** 2 / 24
    )
    t, y = ds["time"].values, ds["tip_y"].values
    spec = R.tip_spectrum(t, y)
    f1 = w1 / TWO_PI
    amp = 0.5 * float(np.ptp(y))
    peak = _peak_bound_hz(spec, y, f1, amp, [(1.0, modes.omega[1] / TWO_PI)])
    assert abs(s["peak_omega"] - w1) <= TWO_PI * peak + shift
    assert s["has_beat"] is False
    assert s["tip_y_min"] < s["tip_y_mean"] < 0
    assert s["curvature_source"] == "element (q_snapshot)"  # full snapshots are stored
    assert s["curv_x_peak"] == 0.0  # at the clamp (a sample position)
    assert s["curv_energy_fraction_inner"] > 0.8
    # the case is rebuilt from the provenance attributes, so the energy is in joules: the
    # model's strain energy at that snapshot adds the axial part 1/2 int EA eps^2
    # (from the element's samples, 64 per element: measured 2.5e-4 of it); the summary's
    # trapezoidal rule over 8 samples per element (the curvature jumps at the nodes: order 1)
    # errs by at most twice its change to 16 samples; the energy series is sampled within
    # half a step of the snapshot: its change over that time (from the neighbouring samples)
    t = ds["time"].values
    i = int(np.argmin(np.abs(t - s["snapshot_time"])))
    j = int(np.argmin(np.abs(ds["t_snapshot"].values - s["snapshot_time"])))
    q_j = ds["q_snapshot"].values[j]
    smp = model.sample(q_j, per_element=64)
    axial = 0.5 * np.trapezoid(model.profile.EA(smp["X"]) * smp["eps"] ** 2, smp["X"])
    e8, e16 = (
        R.concentration_metrics(p.X, p.kappa, p.EI)["bending_energy"]
        for p in (R.curvature_distribution(model, q_j, per_element=k) for k in (8, 16))
    )
    strain = ds["strain"].values
    rate = np.abs(np.diff(strain[max(i - 1, 0) : i + 2])).max() / dt
    sampling = rate * abs(t[i] - s["snapshot_time"])
    bound = FS * (axial + 2 * abs(e8 - e16)) + sampling
    assert abs(s["curv_bending_energy"] - float(strain[i])) <= bound
    # with full coordinates stored, the element's own curvature is used; the same run again
    # (same step, deterministic): the same metrics bit for bit
    res = simulate_explicit(model, 0.4, ds.attrs["dt"], progress=False)
    ds["q_snapshot"] = (("snapshot", "dof"), res.q_snap)
    s2 = R.summarize_run(ds)
    assert s2["curvature_source"] == "element (q_snapshot)"
    for key in ("curv_bending_energy", "curv_peak_to_mean", "curv_gini"):
        assert s2[key] == s[key], key  # measured 0
