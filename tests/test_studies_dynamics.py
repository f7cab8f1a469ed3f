"""Unit tests of the integrator and scaling studies: linear theory of the integrators, first-mode
fit,
tip error, crossover, the integrator study, the recommendation and the scaling study."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ancf_beam.studies.bounds import EPS, refinement_estimate
from ancf_beam.studies.integrators import (
    amplification_matrix,
    fit_first_mode,
    linear_step_properties,
    recommend_integrators,
    run_integrator_study,
    settle_time,
    tip_error,
)
from ancf_beam.studies.scaling import crossover, run_scaling_study
from conftest import FS, case_with


def eig_roundoff(integ, w, **kw):
    """Bauer-Fike bound of the amplification matrix's eigenvalues' round-off: a backward-stable
    eigensolver (16 eps ||A||) times the eigenvector matrix's condition number (large for small
    w: the two eigenvalues e^(+-i phi) merge)."""
    a = amplification_matrix(integ, w, **kw)
    _, v = np.linalg.eig(a)
    return 16 * EPS * np.linalg.norm(a, 2) * np.linalg.cond(v)


OMEGAS = [0.01, 0.1, 0.5, 1.0]


# ------------------------------------------------------------------------------------------
# linear theory against closed forms
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("w", OMEGAS)
def test_central_difference_closed_form(w):
    """Spectral radius, period error and decay per period within the eigenvalues' round-off
    (:func:`eig_roundoff`): |rho| directly, the phase phi = arg(lambda) by delta / |lambda|, the
    period error (1 + e) delta / phi, the decay per period (2 pi / phi) delta."""
    p = linear_step_properties("central-difference", w)
    d = eig_roundoff("central-difference", w)
    phi = 2 * math.asin(w / 2)
    exact = w / phi - 1
    assert p["spectral_radius"] == pytest.approx(1.0, abs=d)
    assert p["period_error"] == pytest.approx(exact, rel=0, abs=(1 + exact) * d / phi + 4 * EPS)
    assert abs(p["decay_per_period"]) <= 2 * math.pi / phi * d


@pytest.mark.parametrize("w", OMEGAS)
def test_newmark_average_acceleration_closed_form(w):
    p = linear_step_properties("newmark", w, beta=0.25, gamma=0.5)
    d = eig_roundoff("newmark", w, beta=0.25, gamma=0.5)  # as for central differences
    phi = 2 * math.atan(w / 2)
    exact = w / phi - 1
    assert p["spectral_radius"] == pytest.approx(1.0, abs=d)
    assert p["period_error"] == pytest.approx(exact, rel=0, abs=(1 + exact) * d / phi + 4 * EPS)


@pytest.mark.parametrize("w", OMEGAS)
def test_bdf1_closed_form(w):
    p = linear_step_properties("bdf1", w)
    d = eig_roundoff("bdf1", w)  # as for central differences (measured 8.1e-16 to 2.2e-12)
    rho, phi = 1 / math.sqrt(1 + w * w), math.atan(w)
    exact = w / phi - 1
    assert p["spectral_radius"] == pytest.approx(rho, abs=d)
    assert p["period_error"] == pytest.approx(exact, rel=0, abs=(1 + exact) * d / phi + 4 * EPS)
    k = 2 * math.pi / phi  # decay = 1 - rho^k: d(decay) = k rho^(k - 1) d(rho) + phi's share
    bound = k * rho ** (k - 1) * d * (1 + abs(math.log(rho)) * k / phi) + 4 * EPS
    assert p["decay_per_period"] == pytest.approx(1 - rho**k, rel=0, abs=bound)


@pytest.mark.parametrize("rho_inf", [0.0, 0.5, 0.8, 1.0])
def test_generalized_alpha_spectral_radius_at_infinity(rho_inf):
    """At Omega = 1e6 the radius is still 1e-4 from its limit (it approaches it like
    Omega^(-2/3)): within FS x the refinement estimate from Omega = 1e6, 1e7, 1e8 (the gap
    falls at least by half per decade; 3.1e-4)."""
    rad = [
        np.max(
            np.abs(np.linalg.eigvals(amplification_matrix("generalized-alpha", o, rho_inf=rho_inf)))
        )
        for o in (1e6, 1e7, 1e8)
    ]
    assert rad[0] == pytest.approx(rho_inf, abs=FS * refinement_estimate(*rad) + 16 * EPS)


def test_generalized_alpha_second_order_and_rho_one_is_newmark():
    # order 2 within its pre-asymptotic deviation, FS x twice the change of the local order
    # from the previous halving (measured 1.9e-4)
    e = [
        linear_step_properties("generalized-alpha", w, rho_inf=0.8)["period_error"]
        for w in (0.1, 0.05, 0.025)
    ]
    local = [math.log(e[0] / e[1], 2), math.log(e[1] / e[2], 2)]
    assert abs(local[1] - 2.0) <= FS * 2 * abs(local[1] - local[0])
    # rho_inf = 1 is Newmark's average acceleration: the same eigenvalues to round-off
    ga = linear_step_properties("generalized-alpha", 0.3, rho_inf=1.0)
    nm = linear_step_properties("newmark", 0.3)
    d = eig_roundoff("generalized-alpha", 0.3, rho_inf=1.0) + eig_roundoff("newmark", 0.3)
    phi = 2 * math.atan(0.15)
    assert ga["period_error"] == pytest.approx(nm["period_error"], rel=0, abs=2 * d / phi)
    assert ga["spectral_radius"] == pytest.approx(1.0, abs=d)


@pytest.mark.parametrize("integ", ["central-difference", "bdf1", "newmark", "generalized-alpha"])
def test_damped_theory_tends_to_exact_decay(integ):
    zeta = 0.05
    # NOT a derived bound (rel 1e-3): at Omega = 1e-5 the decay per period is the power
    # rho^(2 pi / phi) of eigenvalues 1e-5 apart; their Bauer-Fike round-off bound amplified by
    # 2 pi / phi (6e5) exceeds the quantity, while the measured deviations are 1e-10 to 1e-6
    # (8.5e-5 for BDF1, its first-order error). Ten times the BDF1 error.
    p = linear_step_properties(integ, 1e-5, zeta)  # BDF1 is first order: small Omega
    assert p["decay_per_period"] == pytest.approx(p["exact_decay_per_period"], rel=1e-3)
    assert p["exact_decay_per_period"] == pytest.approx(
        1 - math.exp(-zeta * 2 * math.pi / math.sqrt(1 - zeta**2)), rel=8 * EPS
    )


# ------------------------------------------------------------------------------------------
# measurements on synthetic histories
# ------------------------------------------------------------------------------------------
def test_fit_first_mode_recovers_frequency_and_decay_with_a_second_mode():
    t = np.arange(0, 2.0, 1e-4)
    w, sig = 104.0, 0.8
    y = -1e-3 + 1e-3 * np.exp(-sig * t) * np.cos(w * t) + 3e-5 * np.cos(6.27 * w * t)
    f = fit_first_mode(t, y, 100.0)
    # NOT derived bounds: the second mode perturbs the fit by its projection on the fit's
    # Jacobian; the Cauchy-Schwarz bound std_p sqrt(m) (std_omega = 1.9e-3 rad/s, m = 2e4)
    # is 1e-3 of omega, four orders above the measured 7.7e-8 (the windowed tones 5.3 omega
    # apart barely overlap). Measured 7.7e-8, 8.7e-5 (abs), 1.4e-6, 1.1e-4; ten times those
    assert f["omega"] == pytest.approx(w, rel=8e-7)
    assert f["decay_rate"] == pytest.approx(sig, abs=9e-4)
    assert f["offset"] == pytest.approx(-1e-3, rel=1.4e-5)
    assert f["decay_per_period"] == pytest.approx(1 - math.exp(-sig * 2 * math.pi / w), rel=1.1e-3)
    assert f["omega_std"] < 1e-2 and f["decay_rate_std"] < 1e-2


def test_fit_first_mode_windows_a_fast_decay():
    t = np.arange(0, 2.0, 3e-3)
    w, sig = 100.0, 20.0  # decays below 1e-3 within 0.35 s
    y = 2e-3 * np.exp(-sig * t) * np.cos(w * t + 0.3)
    f = fit_first_mode(t, y, 104.0)
    # NOT derived: the fit's window and sampling (3e-3 s, 3.5 cycles per window), ten times
    # the measured 3.2e-6 and 1.2e-5
    assert f["omega"] == pytest.approx(w, rel=3.2e-5)
    assert f["decay_rate"] == pytest.approx(sig, rel=1.2e-4)
    assert f["window_s"] < 0.5


def test_fit_first_mode_rejects_short_records():
    with pytest.raises(ValueError):
        fit_first_mode(np.arange(10) * 1e-3, np.ones(10), 100.0)


def test_tip_error_and_settle_time():
    t = np.linspace(0, 1, 1001)
    ref = -1e-3 * (1 - np.cos(10 * t))
    assert tip_error(t, ref, t, ref) == 0.0
    scale = np.max(np.abs(ref - ref[0]))
    # a constant offset: exact but for the roundings of ref + 2e-5 (eps x 2e-3 each) over 2e-5
    assert tip_error(t, ref + 2e-5, t, ref) == pytest.approx(
        2e-5 / scale, rel=2 * EPS * 2e-3 / 2e-5 + 4 * EPS
    )
    y = -1.0 + np.exp(-5 * t)
    ts = settle_time(t, y, -1.0, 0.01)
    # the first sample after the crossing: within one sample spacing (1e-3 s) of ln(100) / 5
    assert ts == pytest.approx(math.log(100) / 5, abs=t[1] - t[0])
    assert math.isnan(settle_time(t, np.zeros_like(t), -1.0))


def test_crossover_interpolated_and_extrapolated():
    n = np.array([2.0, 5, 10, 20, 40])
    n_star, kind = crossover(n, n**3, 100 * n)
    # power laws: log-log interpolation is exact, a few roundings of the logs (16 eps)
    assert kind == "interpolated" and n_star == pytest.approx(10.0, rel=16 * EPS)
    n2 = np.array([20.0, 40, 80])
    n_star, kind = crossover(n2, n2**3, 100 * n2)
    assert kind == "extrapolated" and n_star == pytest.approx(10.0, rel=16 * EPS)


# ------------------------------------------------------------------------------------------
# studies on a small mesh and a short record
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_study():
    from ancf_beam.analyses import run_critical_dt, run_modal, run_static

    case = case_with(**{"mesh.n_elements": 4})
    dt_cr = float(run_critical_dt(case)[1]["dt_critical"])
    w1 = float(run_modal(case)[1]["omega"][0])
    tip = float(run_static(case)[1]["tip_y"])
    ds = run_integrator_study(case, dt_cr, w1, tip, t_end=0.3, damping_ratio=0.25)
    return ds


def test_integrator_study_dataset(small_study):
    ds = small_study
    assert ds.attrs["study"] == "integrators"
    # the reference (explicit at a quarter of the step), the explicit run, 3 implicit x 2
    # steps, one damped run per integrator
    assert ds.sizes["run"] == 2 + 3 * 2 + 4
    assert ds.attrs["reference_run"] == str(ds["run"].values[0])
    assert ds["dt"].values[1] == pytest.approx(4 * ds["dt"].values[0], rel=4 * EPS)
    for var, unit in {
        "tip_y": "m",
        "time": "s",
        "period_error": "1",
        "wall_s": "s",
        "decay_rate": "1/s",
        "omega_fit": "rad/s",
    }.items():
        assert ds[var].attrs["units"] == unit, var
    implicit = ds["integrator"].values != "central-difference"
    assert np.all(ds["newton_mean"].values[implicit] >= 1)
    assert np.all(np.isnan(ds["newton_mean"].values[~implicit]))
    assert ds["tip_error"].values[0] == 0.0
    # the explicit run is measured against the reference, not against itself (a nonzero
    # error; its size is checked against the linear discrete model in the integrator report)
    assert ds["tip_error"].values[1] > 0.0


def test_integrator_study_matches_linear_theory(small_study):
    ds = small_study
    und = (ds["damped"].values == 0) & (ds["integrator"].values != "central-difference")
    meas = ds["period_error"].values[und]
    theory = ds["theory_period_error"].values[und]
    std = ds["period_error_std"].values[und]
    # NOT derived (the integrator report's checks are: tests/test_validation_bounds.py and
    # the pipeline): 5 % of the theory for the multi-mode beam, 3 fit standard errors, 1e-6
    assert np.all(np.abs(meas - theory) <= 0.05 * np.abs(theory) + 3 * std + 1e-6)
    damped = ds["damped"].values == 1
    assert np.all(ds["final_tip_rel_error"].values[damped] < 2e-3)  # NOT derived (as above)


def test_half_load_estimate_matches_the_linear_strain_model(small_study):
    # tip_error_nonlinear (the nonlinear part of the explicit run's tip difference history
    # from halving the load) against the part measured directly: the same two runs of the
    # linear-strain model (an independent linear FE model) give the linear difference
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers import DynamicsSettings, simulate
    from ancf_beam.studies.integrators import tip_difference

    ds = small_study
    assert ds.attrs["half_load_order"] == 2.0  # straight reference: the tip is odd in g
    est = ds["tip_error_nonlinear"].values
    assert np.all(np.isnan(np.delete(est, 1)))  # only the undamped explicit run
    lin = case_with(**{"mesh.n_elements": 4, "mesh.strain": "linear"})
    hist = []
    for i in (0, 1):
        st = DynamicsSettings.from_case(
            lin,
            integrator="central-difference",
            dt=float(ds["dt"][i]),
            t_end=ds.attrs["t_end"],
            damping=(0.0, 0.0),
        )
        r = simulate(BeamModel(lin), st, progress=False)
        hist.append((r.t, r.tip_y))
    n = hist[1][0].size
    t, y = ds["time"].values, ds["tip_y"].values
    d_full = tip_difference(t[1, :n], y[1, :n], t[0][np.isfinite(t[0])], y[0][np.isfinite(t[0])])
    d_lin = tip_difference(*hist[1], *hist[0])
    measured = float(np.nanmax(np.abs(d_full - d_lin)))
    # the halving's next order (g^4) is what FS covers
    assert measured / FS <= est[1] <= FS * measured, (est[1], measured)
    # the study's own gap to the linear (modal) model is the same quantity: its modes are
    # the linear-strain model's, apart from the shortened last step it leaves out
    gap = float(ds["tip_difference_vs_linear"][1])
    assert gap == pytest.approx(measured, rel=1e-3), (gap, measured)


def test_recommendation_table(small_study):
    rec = recommend_integrators(small_study)
    assert list(rec.columns) == ["purpose", "recommended", "dt (s)", "rule", "justification"]
    assert rec["purpose"].str.contains("static equilibrium").any()
    row = rec[rec["purpose"].str.startswith("reference")].iloc[0]
    assert row["recommended"].startswith("central-difference")
    # the reference run is what the others are measured against, never a recommendation
    assert not rec["recommended"].str.contains("(reference)", regex=False).any()


def test_scaling_study_labels_projection():
    case = case_with()
    ds = run_scaling_study(
        case,
        [2, 4, 8],
        t_end=0.05,
        full_max_elements=4,
        window_wall_s=0.05,
        min_window_steps=200,
        per_period_candidates=(50, 200),
        tip_error_target=0.05,
    )
    src = list(ds["explicit_cost_source"].values)
    assert src[:2] == ["measured full run"] * 2
    assert src[2].startswith("projected from a measured window of")
    assert np.isnan(ds["explicit_measured_s"].values[2])
    assert ds["explicit_cost_s"].values[2] == ds["explicit_projected_s"].values[2]
    assert ds["explicit_cost_s"].attrs["units"] == "s"
    assert ds.attrs["study"] == "scaling"
    assert ds.attrs["crossover_kind"] in ("interpolated", "extrapolated", "none")
    assert np.all(ds["implicit_cost_s"].values > 0)
    with pytest.raises(ValueError):
        run_scaling_study(case, [8, 16], full_max_elements=4)
