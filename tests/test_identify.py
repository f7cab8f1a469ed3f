"""Inverse identification of (lam, n) of E(x) = E0 (1 - lam (x/L)^n): the forward model's
eigenvalues and analytic sensitivities, recovery from frequencies and tip histories of a
*different* discretisation (no inverse crime), uncertainty calibration, and honest
non-identifiability.

Synthetic "measurements" come from an independent reference written here (a cubic-Hermite
Euler-Bernoulli FE model of the graded beam with 320 elements, 8-point quadrature, solved as
the inverted pencil ``M x = (1/omega^2) K x``), or from the nonlinear explicit run on a finer
mesh than the estimator's; the forward model is the ANCF beam on 40 (or 8) elements.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.linalg

from ancf_beam import identify as I
from ancf_beam.beam.model import BeamModel
from ancf_beam.cli import main
from ancf_beam.config import resolve_case
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.modal import modal_analysis, omega_max
from conftest import EI, RHOA, L

LAM, N = 0.45, 1.5
E0 = 2.07e11
#: the identification study's grid (pipeline.identification.lam x n)
GRID = [(la, n) for la in (0.2, 0.45, 0.7) for n in (1.0, 1.5, 2.5)]


def hermite_fe_frequencies(lam: float, n: float, n_el: int = 320, k: int = 3) -> np.ndarray:
    """Independent reference: the first ``k`` frequencies (rad/s) of the graded clamped-free
    Euler-Bernoulli beam ``EI (1 - lam (x/L)^n)``, uniform ``rhoA``, by ``n_el`` cubic-Hermite
    elements with 8-point Gauss quadrature. The rotations are scaled by the element length and
    the pencil is inverted (``M x = mu K x``, ``mu = 1/omega^2``) so that the lowest frequencies
    are the best conditioned ones."""
    le = L / n_el
    xg, wg = np.polynomial.legendre.leggauss(8)
    u, wq = 0.5 * (1 + xg), 0.5 * wg
    sh = np.stack([1 - 3 * u**2 + 2 * u**3, u - 2 * u**2 + u**3, 3 * u**2 - 2 * u**3, u**3 - u**2])
    b2 = np.stack([-6 + 12 * u, -4 + 6 * u, 6 - 12 * u, -2 + 6 * u]) / le**2
    ndof = 2 * (n_el + 1)
    k_mat = np.zeros((ndof, ndof))
    m_mat = np.zeros((ndof, ndof))
    for e in range(n_el):
        x = (e + u) * le
        ei = EI * (1.0 - lam * (x / L) ** n)
        sl = slice(2 * e, 2 * e + 4)
        k_mat[sl, sl] += le * np.einsum("g,ig,jg->ij", wq * ei, b2, b2)
        m_mat[sl, sl] += le * RHOA * np.einsum("g,ig,jg->ij", wq, sh, sh)
    nf = ndof - 2
    mu = scipy.linalg.eigh(m_mat[2:, 2:], k_mat[2:, 2:], eigvals_only=True,
                           subset_by_index=[nf - k, nf - 1])  # fmt: skip
    return np.sqrt(1.0 / mu[::-1])


@pytest.fixture(scope="module")
def case():
    """The seed beam on 40 elements with unknown gradient (its own lam = 0, n = 1 are only a
    start): the estimator's forward model."""
    return resolve_case({}, None, {"mesh.n_elements": 40})


@pytest.fixture(scope="module")
def fmodel(case):
    return I.FrequencyModel(case, 3)


@pytest.fixture(scope="module")
def omega_true():
    """First three frequencies of the (0.45, 1.5) beam: independent 320-element reference."""
    return hermite_fe_frequencies(LAM, N)


# ------------------------------------------------------------------------------------------
# forward model: eigenvalues and sensitivities
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n_el", "rtol"), [(20, 4e-11), (320, 4e-7)])
def test_refined_eigenvalues_match_an_independent_hermite_model(n_el, rtol):
    """For n = 1 the ANCF bending block is the same discrete beam as the reference (3 Gauss
    points integrate the linear EI exactly), so the frequencies agree to round-off: measured
    4e-12 at 20 elements and 4e-8 at 320, where the reference's own round-off (inverted pencil,
    cond(K) ~ 1e12) limits the comparison; tolerances 10x. The plain eigensolver value
    (modal_analysis) is off by 4e-5 at 320 elements (eps w_max^2 / w_1^2)."""
    c = resolve_case({}, None, {"mesh.n_elements": n_el})
    om = I.FrequencyModel(c, 3).omega(0.45, 1.0)
    np.testing.assert_allclose(om, hermite_fe_frequencies(0.45, 1.0, n_el), rtol=rtol, atol=0)


def test_forward_model_is_modal_analysis_and_scales_with_sqrt_E0(case):
    """Same eigenproblem as modal_analysis (20 elements, where the eigensolver's round-off is
    small: measured difference 8.7e-10; tolerance 9e-9); omega ~ sqrt(E0) exactly (measured
    1.7e-16)."""
    c20 = case.with_overrides({"mesh.n_elements": 20})
    fm = I.FrequencyModel(c20, 3)
    truth = c20.with_overrides({"defect.lam": LAM, "defect.n": N})
    ref = modal_analysis(BeamModel(truth), n_modes=3).omega
    np.testing.assert_allclose(fm.omega(LAM, N), ref, rtol=9e-9, atol=0)
    np.testing.assert_allclose(fm.omega(LAM, N, 1.21), 1.1 * fm.omega(LAM, N), rtol=1e-14)


@pytest.mark.parametrize(
    "over",
    [{}, {"imperfection.kappa0": 0.2}, {"mesh.strain": "linear"},
     {"defect.lam": 0.5, "defect.mapping": "nodal"}],
    ids=["straight", "curved", "linear", "nodal"],
)  # fmt: skip
def test_strain_operators_reproduce_the_kernel_tangent(over):
    """sum ea_w b_a b_a^T + ei_w b_b b_b^T equals the kernels' tangent at the stress-free
    reference (measured 8e-16 of the largest entry; tolerance 1e-14), and the sensitivities
    phi^T dK/dp phi of the energy form equal those of the kernel-assembled dK/dp (the tangent
    is linear in the weights; measured 1.2e-11; tolerance 1e-10)."""
    c = resolve_case({}, None, {"mesh.n_elements": 10, **over})
    eig = I._Eigen(c)
    m = eig.base
    k_ref = m.tangent_dense(m.reference())
    k_b = np.zeros((m.n_dof, m.n_dof))
    for el in range(m.n_el):
        ba = eig.b_a[el].reshape(-1, 8)
        bb = eig.b_b[el].reshape(-1, 8)
        k_b[4 * el : 4 * el + 8, 4 * el : 4 * el + 8] += np.einsum(
            "g,gi,gj->ij", m.ea_w[el], ba, ba
        ) + np.einsum("g,gi,gj->ij", m.ei_w[el], bb, bb)
    assert np.abs(k_ref - k_b[4:, 4:]).max() <= 1e-14 * np.abs(k_ref).max()
    _, phi, dw2 = eig.solve(0.3, 1.5, 3)
    for j, which in enumerate(("lam", "n")):
        dk = eig.tangent(*eig.stiffness.weights(0.3, 1.5, which))
        np.testing.assert_allclose(np.einsum("ik,ij,jk->k", phi, dk, phi), dw2[j], rtol=1e-10)


def test_analytic_jacobian_matches_central_differences(fmodel):
    """d omega / d(lam, n) analytic vs central differences (h = 1e-5): measured 1.7e-8 (the
    differences' truncation error); tolerance 2e-7."""
    h = 1e-5
    for la, n in [(0.3, 1.0), (0.7, 2.5), (0.2, 1.5)]:
        jac = fmodel.jacobian(la, n)
        d_lam = (fmodel.omega(la + h, n) - fmodel.omega(la - h, n)) / (2 * h)
        d_n = (fmodel.omega(la, n + h) - fmodel.omega(la, n - h)) / (2 * h)
        np.testing.assert_allclose(jac[:, 0], d_lam, rtol=2e-7)
        np.testing.assert_allclose(jac[:, 1], d_n, rtol=2e-7)


# ------------------------------------------------------------------------------------------
# estimation from frequencies
# ------------------------------------------------------------------------------------------
def test_issue_command_recovers_the_defect_from_exact_frequencies(capsys):
    """The frequencies modal_analysis gives for lam = 0.3, n = 1 at 40 elements, to 8
    decimals. With finite differences (step 1e-7) on eigenvalues carrying ~1e-8 round-off the
    estimate was lam = 0.325, n = 1.12 (0.3 % residual). Measured now: |lam - 0.3| = 7e-8,
    |n - 1| = 4.3e-7 (what the data's own round-off, 1e-8 in omega_1, allows); tolerance 1e-6."""
    code = main(["identify", "--omega", "101.03691085", "610.69173092", "1691.06481088",
                 "--set", "mesh.n_elements=40", "--json"])  # fmt: skip
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["identifiable"] is True
    assert abs(d["lam"] - 0.3) < 1e-6, d["lam"]
    assert abs(d["n"] - 1.0) < 1e-6, d["n"]
    assert d["residual"] < 3e-8  # measured 3.1e-9


def test_own_frequencies_recovered_to_round_off(case, fmodel):
    """Estimator convergence (not physics): the forward model's own frequencies over the
    study's grid give back (lam, n): measured 5.6e-13; tolerance 1e-11."""
    for la, n in GRID:
        r = I.identify_from_frequencies(case, fmodel.omega(la, n), model=fmodel)
        assert abs(r.lam - la) < 1e-11 and abs(r.n - n) < 1e-11, (la, n, r.lam, r.n)


def test_finer_discretisation_recovered_over_the_study_grid(case, fmodel):
    """No inverse crime: data from the independent 320-element model, forward model on 40
    elements; the forward model's discretisation error (omega_3 ~ 1e-6) is the only misfit.
    Measured max |error| 1.3e-4 (n at lam = 0.2, n = 2.5); tolerance 1e-3."""
    worst = 0.0
    for la, n in GRID:
        r = I.identify_from_frequencies(case, hermite_fe_frequencies(la, n), model=fmodel)
        assert r.identifiable, r.message
        worst = max(worst, abs(r.lam - la), abs(r.n - n))
    assert worst < 1e-3, worst


def test_noise_free_frequencies_result_fields(case, fmodel, omega_true):
    r = I.identify_from_frequencies(case, omega_true, model=fmodel)
    assert abs(r.lam - LAM) < 7e-5 and abs(r.n - N) < 2e-4  # measured 6.9e-6, 2.0e-5
    assert r.identifiable, r.message
    assert r.residual < 4e-6  # measured 3.9e-7: the 40-element discretisation error
    assert r.E0 == E0 and np.isnan(r.E0_std)
    assert r.sigma_source == "floor"  # noise-free: uncertainty at the 1e-4 floor
    assert 0 < r.lam_std < 0.01 and 0 < r.n_std < 0.05
    d = r.to_dict()
    text = json.dumps(d)
    for key in ("lam", "n", "lam_std", "n_std", "residual", "identifiable", "cond", "E0"):
        assert key in d
    assert d["E0_std"] is None and '"identifiable": true' in text


def test_noise_free_frequencies_with_E0(case, fmodel, omega_true):
    """Three frequencies, three parameters: measured |lam| 1.4e-5, |n| 1.0e-4 and E0 4.4e-6
    relative (the 40-element discretisation error enters all three); tolerances 1.4e-4, 1e-3,
    5e-5."""
    r = I.identify_from_frequencies(case, omega_true, fit_E0=True, model=fmodel)
    assert r.params == ("lam", "n", "E0")
    assert abs(r.lam - LAM) < 1.4e-4
    assert abs(r.n - N) < 1e-3
    assert r.E0 == pytest.approx(E0, rel=5e-5)
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
    om = hermite_fe_frequencies(0.0, 1.0)
    r = I.identify_from_frequencies(case, om, model=fmodel)
    assert r.identifiable is False
    assert "not identifiable" in r.message
    assert r.lam < 7e-4  # measured 6.5e-5
    rng = np.random.default_rng(7)
    om_noisy = om * (1 + 0.005 * rng.standard_normal(3))
    r2 = I.identify_from_frequencies(case, om_noisy, sigma_rel=0.005, model=fmodel, n_starts=2)
    assert r2.identifiable is False


def test_single_frequency_not_identifiable(case, omega_true):
    r = I.identify_from_frequencies(case, omega_true[:1])
    assert r.identifiable is False
    assert "underdetermined" in r.message
    assert r.residual < 1e-12  # it still fits the one frequency it has (measured 1.1e-15)
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
    assert abs(summary["lam"] - LAM) < 7e-5  # measured 6.9e-6
    assert ds.attrs["study"] == "identify"
    # fitted vs measured frequencies: the fit residual, measured 2.9e-7; tolerance 3e-6
    np.testing.assert_allclose(ds["omega_fit"].values, omega_true, rtol=3e-6)


def test_tip_history_recovers_lam_n():
    """Synthetic 'measurement': the nonlinear explicit central-difference run on 16 elements
    (0.3 s, released from rest under gravity); the estimator's forward model is the linear
    modal superposition on 8 elements. Measured relative errors 2.4e-3 (lam) and 1.5e-3 (n),
    from the coarser forward model's higher modes; tolerance 2e-2."""
    truth = resolve_case({}, None, {"defect.lam": LAM, "defect.n": N, "mesh.n_elements": 16})
    model = BeamModel(truth)
    res = simulate_explicit(
        model, t_end=0.3, dt=0.8 * 2.0 / omega_max(model)[0], sample_dt=2e-4, progress=False
    )
    case8 = resolve_case({}, None, {"mesh.n_elements": 8})
    r = I.identify_from_tip_history(case8, res.t, res.tip_y)
    assert r.method == "tip_history"
    assert r.lam == pytest.approx(LAM, rel=2e-2)
    assert r.n == pytest.approx(N, rel=2e-2)
    assert r.identifiable, r.message
    assert r.residual < 1e-3  # RMS misfit relative to max |tip_y|; measured 1.0e-4
    w1 = modal_analysis(model, n_modes=1).omega[0]
    assert r.omega_fit[0] == pytest.approx(w1, rel=2e-5)  # measured 1.8e-6
    json.dumps(r.to_dict())
