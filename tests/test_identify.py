"""Inverse identification of (lam, n) of E(x) = E0 (1 - lam (x/L)^n): recovery from synthetic
frequencies and tip histories, uncertainty calibration, and honest non-identifiability."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ancf_beam import identify as I
from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.modal import modal_analysis, omega_max

LAM, N = 0.45, 1.5
E0 = 2.07e11


@pytest.fixture(scope="module")
def case():
    """The seed beam with unknown gradient (its own lam = 0, n = 1 are only a start)."""
    return resolve_case({}, None, {})


@pytest.fixture(scope="module")
def fmodel(case):
    return I.FrequencyModel(case, 3)


@pytest.fixture(scope="module")
def omega_true(case):
    """First three frequencies of the (0.45, 1.5) beam from modal_analysis itself."""
    truth = case.with_overrides({"defect.lam": LAM, "defect.n": N})
    return modal_analysis(BeamModel(truth), n_modes=3).omega


def test_forward_model_is_modal_analysis(fmodel, omega_true):
    # same eigenproblem; the bending (y) block alone is solved, which avoids the round-off of
    # the stiff axial modes (eps * w_max^2 / w_1^2 ~ 1e-9) in the full reduced system
    np.testing.assert_allclose(fmodel.omega(LAM, N), omega_true, rtol=1e-8)
    # omega ~ sqrt(E0) exactly (M independent of E, K proportional to E0)
    np.testing.assert_allclose(fmodel.omega(LAM, N, 1.21), 1.1 * fmodel.omega(LAM, N), rtol=1e-14)


def test_noise_free_frequencies_recover_lam_n(case, fmodel, omega_true):
    r = I.identify_from_frequencies(case, omega_true, model=fmodel)
    assert r.lam == pytest.approx(LAM, rel=1e-2)
    assert r.n == pytest.approx(N, rel=1e-2)
    assert abs(r.lam / LAM - 1) < 1e-5 and abs(r.n / N - 1) < 1e-5  # what it achieves
    assert r.identifiable, r.message
    assert r.residual < 1e-8
    assert r.E0 == E0 and np.isnan(r.E0_std)
    assert r.sigma_source == "floor"  # noise-free: uncertainty at the 1e-4 floor
    assert 0 < r.lam_std < 0.01 and 0 < r.n_std < 0.05
    d = r.to_dict()
    text = json.dumps(d)
    for key in ("lam", "n", "lam_std", "n_std", "residual", "identifiable", "cond", "E0"):
        assert key in d
    assert d["E0_std"] is None and '"identifiable": true' in text


def test_noise_free_frequencies_with_E0(case, fmodel, omega_true):
    r = I.identify_from_frequencies(case, omega_true, fit_E0=True, model=fmodel)
    assert r.params == ("lam", "n", "E0")
    assert r.lam == pytest.approx(LAM, rel=1e-3)
    assert r.n == pytest.approx(N, rel=1e-3)
    assert r.E0 == pytest.approx(E0, rel=1e-4)
    assert r.identifiable, r.message
    assert np.isfinite(r.E0_std) and r.covariance.shape == (3, 3)


def test_noisy_frequencies_uncertainty_is_calibrated(case, fmodel, omega_true):
    """0.5 % relative noise, 20 fixed draws: the true value lies within the reported 1 sigma in
    a plausible fraction of draws (ideal 68 %) and within 2 sigma in >= 80 % (ideal 95 %)."""
    rng = np.random.default_rng(100)
    z = []
    for _ in range(20):
        om = omega_true * (1 + 0.005 * rng.standard_normal(3))
        r = I.identify_from_frequencies(case, om, sigma_rel=0.005, model=fmodel, n_starts=2)
        assert r.identifiable, r.message
        assert r.sigma_source == "given"
        z.append([(r.lam - LAM) / r.lam_std, (r.n - N) / r.n_std])
    z = np.abs(np.array(z))
    within1 = np.mean(z < 1, axis=0)
    within2 = np.mean(z < 2, axis=0)
    assert np.all(within2 >= 0.8), within2
    assert np.all((within1 >= 0.5) & (within1 <= 0.9)), within1


def test_uniform_beam_gradient_exponent_not_identifiable(case, fmodel):
    """lam = 0: the frequencies do not depend on n at all."""
    om = modal_analysis(BeamModel(case), n_modes=3).omega
    r = I.identify_from_frequencies(case, om, model=fmodel)
    assert r.identifiable is False
    assert "not identifiable" in r.message
    assert r.lam < 0.05
    rng = np.random.default_rng(7)
    om_noisy = om * (1 + 0.005 * rng.standard_normal(3))
    r2 = I.identify_from_frequencies(case, om_noisy, sigma_rel=0.005, model=fmodel, n_starts=2)
    assert r2.identifiable is False


def test_single_frequency_not_identifiable(case, omega_true):
    r = I.identify_from_frequencies(case, omega_true[:1])
    assert r.identifiable is False
    assert "underdetermined" in r.message
    # it still fits the one frequency it has
    assert r.residual < 1e-8
    json.dumps(r.to_dict())


def test_bad_input(case):
    with pytest.raises(ValueError, match="ascending"):
        I.identify_from_frequencies(case, [600.0, 100.0])
    with pytest.raises(ValueError, match="positive"):
        I.identify_from_frequencies(case, [-1.0, 100.0])
    with pytest.raises(ValueError, match="n_modes"):
        I.identify_from_frequencies(case, [100.0, 600.0], n_modes=3)


def test_run_identify_summary_and_dataset(case, omega_true):
    summary, ds = I.run_identify(case, omega_true, sigma_rel=0.005)
    json.dumps(summary)
    assert summary["identifiable"] is True
    assert summary["lam"] == pytest.approx(LAM, rel=1e-3)
    assert ds.attrs["study"] == "identify"
    np.testing.assert_allclose(ds["omega_fit"].values, omega_true, rtol=1e-6)


def test_tip_history_recovers_lam_n():
    """Synthetic 'measurement': the nonlinear explicit central-difference run (8 elements,
    0.3 s, released from rest under gravity); the estimator's forward model is the linear modal
    superposition on the same mesh."""
    truth = resolve_case({}, None, {"defect.lam": LAM, "defect.n": N, "mesh.n_elements": 8})
    model = BeamModel(truth)
    res = simulate_explicit(
        model, t_end=0.3, dt=0.8 * 2.0 / omega_max(model)[0], sample_dt=2e-4, progress=False
    )
    case8 = resolve_case({}, None, {"mesh.n_elements": 8})
    r = I.identify_from_tip_history(case8, res.t, res.tip_y)
    assert r.method == "tip_history"
    assert r.lam == pytest.approx(LAM, rel=0.02)
    assert r.n == pytest.approx(N, rel=0.02)
    assert abs(r.lam / LAM - 1) < 1e-3 and abs(r.n / N - 1) < 1e-3  # what it achieves
    assert r.identifiable, r.message
    assert r.residual < 1e-4  # RMS misfit relative to max |tip_y|: nonlinearity ~ 3e-5
    assert r.omega_fit[0] == pytest.approx(modal_analysis(model, n_modes=1).omega[0], rel=1e-4)
    json.dumps(r.to_dict())
