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
from ancf_beam.studies.bounds import EPS, modal_roundoff
from ancf_beam.studies.checks import OPTIMISER_STEP
from conftest import EI, FS, RHOA, L

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
    mu = scipy.linalg.eigh(
        m_mat[2:, 2:], k_mat[2:, 2:], eigvals_only=True, subset_by_index=[nf - k, nf - 1]
    )
    return np.sqrt(1.0 / mu[::-1])


def discrepancy(fm, lam, n, data, n_el=40):
    """The forward model's relative error at the truth, ``||omega_model / omega_data - 1||_2``
    (the identification study's ``model_discrepancy``), plus its own round-off (the Ritz
    bound per frequency)."""
    data = np.asarray(data, float)
    d = float(np.linalg.norm(fm.omega(lam, n)[: data.size] / data - 1.0))
    return d + np.sqrt(data.size) * modal_roundoff(n_el)


def bias_bound(r, d, truth):
    """Bound of each estimate's error from a forward-model error ``d`` at the truth (the
    identification report's): the estimator minimises ``||r||`` with ``r_0`` of norm ``d`` at
    the truth, and to first order errs by ``(J^T J)^-1 J^T r_0``, whose ``p`` component is at
    most ``std_p d / sigma`` (``std_p`` the reported standard uncertainty with noise ``sigma``);
    x FS, plus the optimiser's step tolerance (:data:`OPTIMISER_STEP`)."""
    return {
        p: FS * getattr(r, f"{p}_std") * d / r.sigma + OPTIMISER_STEP * max(1.0, abs(truth[p]))
        for p in truth
    }


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
@pytest.mark.parametrize("n_el", [20, 320])
def test_refined_eigenvalues_match_an_independent_hermite_model(n_el):
    """For n = 1 the ANCF bending block is the same discrete beam as the reference (3 Gauss
    points integrate the linear EI exactly), so the frequencies agree to round-off: the Ritz
    bound 32 eps n^2 of the forward model plus the reference's dense inverted pencil, at most
    eps n^4 of the frequency (as tests/test_transfer.py's FE reference): 3.8e-11 at 20
    elements, 2.3e-6 at 320; measured 4e-12 and 4e-8. The plain eigensolver value
    (modal_analysis without the Ritz step) was off by 4e-5 at 320 elements (eps w_max^2 /
    w_1^2)."""
    c = resolve_case({}, None, {"mesh.n_elements": n_el})
    om = I.FrequencyModel(c, 3).omega(0.45, 1.0)
    rtol = modal_roundoff(n_el) + EPS * float(n_el) ** 4
    np.testing.assert_allclose(om, hermite_fe_frequencies(0.45, 1.0, n_el), rtol=rtol, atol=0)


def test_forward_model_is_modal_analysis_and_scales_with_sqrt_E0(case):
    """Same eigenproblem as modal_analysis (20 elements): within both Ritz round-off bounds
    (2 x 32 eps n^2 = 5.7e-12; measured 4e-13); omega ~ sqrt(E0) exactly: sqrt(1.21) and the
    product round, a few eps (8 eps; measured 1.7e-16)."""
    c20 = case.with_overrides({"mesh.n_elements": 20})
    fm = I.FrequencyModel(c20, 3)
    truth = c20.with_overrides({"defect.lam": LAM, "defect.n": N})
    ref = modal_analysis(BeamModel(truth), n_modes=3).omega
    np.testing.assert_allclose(fm.omega(LAM, N), ref, rtol=2 * modal_roundoff(20), atol=0)
    np.testing.assert_allclose(fm.omega(LAM, N, 1.21), 1.1 * fm.omega(LAM, N), rtol=8 * EPS)


@pytest.mark.parametrize(
    "over",
    [
        {},
        {"imperfection.kappa0": 0.2},
        {"mesh.strain": "linear"},
        {"defect.lam": 0.5, "defect.mapping": "nodal"},
    ],
    ids=["straight", "curved", "linear", "nodal"],
)
def test_strain_operators_reproduce_the_kernel_tangent(over):
    """sum ea_w b_a b_a^T + ei_w b_b b_b^T equals the kernels' tangent at the stress-free
    reference: sums of the same Gauss-point products in another order, a few eps of the
    largest entry (16 eps; measured 8e-16 = 3.6 eps), and the sensitivities phi^T dK/dp phi of
    the energy form equal those of the kernel-assembled dK/dp (the tangent is linear in the
    weights): within the round-off of the quadratic form, 2 n eps |phi|^T |dK| |phi| (n the
    DOFs; the standard bound of a sum of n products; measured 1.2e-11 relative)."""
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
    assert np.abs(k_ref - k_b[4:, 4:]).max() <= 16 * EPS * np.abs(k_ref).max()
    _, phi, dw2 = eig.solve(0.3, 1.5, 3)
    for j, which in enumerate(("lam", "n")):
        dk = eig.tangent(*eig.stiffness.weights(0.3, 1.5, which))
        quad = np.einsum("ik,ij,jk->k", phi, dk, phi)
        bound = (
            2 * phi.shape[0] * EPS * np.einsum("ik,ij,jk->k", np.abs(phi), np.abs(dk), np.abs(phi))
        )
        assert np.all(np.abs(quad - dw2[j]) <= bound)


def test_analytic_jacobian_matches_central_differences(fmodel):
    """d omega / d(lam, n) analytic vs central differences (h = 1e-5): the differences'
    truncation (order 2: FS x their change from h = 2e-5 over 3) plus the frequencies'
    round-off over 2h (the Ritz bound 32 eps n^2 each); measured 1.7e-8 relative."""
    h = 1e-5
    ro = modal_roundoff(40)

    def fd(la, n, step, col):
        e = np.array([step, 0.0]) if col == 0 else np.array([0.0, step])
        return (fmodel.omega(la + e[0], n + e[1]) - fmodel.omega(la - e[0], n - e[1])) / (2 * step)

    for la, n in [(0.3, 1.0), (0.7, 2.5), (0.2, 1.5)]:
        jac = fmodel.jacobian(la, n)
        om = fmodel.omega(la, n)
        for col in (0, 1):
            d1, d2 = fd(la, n, h, col), fd(la, n, 2 * h, col)
            bound = FS * np.abs(d2 - d1) / 3 + 2 * ro * om / (2 * h)
            assert np.all(np.abs(jac[:, col] - d1) <= bound), (la, n, col)


# ------------------------------------------------------------------------------------------
# estimation from frequencies
# ------------------------------------------------------------------------------------------
def test_issue_command_recovers_the_defect_from_exact_frequencies(capsys):
    """The frequencies modal_analysis gives for lam = 0.3, n = 1 at 40 elements, to 8
    decimals. With finite differences (step 1e-7) on eigenvalues carrying ~1e-8 round-off the
    estimate was lam = 0.325, n = 1.12 (0.3 % residual). Now within the bias the data's own
    error explains (they carry the old eigensolver's round-off, 1e-8 in omega_1: the forward
    model differs from them by 1.1e-8 at the truth; :func:`bias_bound`): measured |lam - 0.3|
    = 7e-8, |n - 1| = 4.3e-7 (err/bound 0.39, 0.46). The residual is at most its value at the
    truth, that difference (x FS; measured 3.1e-9)."""
    code = main(
        [
            "identify",
            "--omega",
            "101.03691085",
            "610.69173092",
            "1691.06481088",
            "--set",
            "mesh.n_elements=40",
            "--json",
        ]
    )
    d = json.loads(capsys.readouterr().out)
    assert code == 0 and d["identifiable"] is True
    data = [101.03691085, 610.69173092, 1691.06481088]
    case40 = resolve_case({}, None, {"mesh.n_elements": 40})
    fm = I.FrequencyModel(case40, 3)
    r = I.identify_from_frequencies(case40, data, model=fm)  # the command's estimate
    assert (r.lam, r.n) == (d["lam"], d["n"])
    disc = discrepancy(fm, 0.3, 1.0, data)
    b = bias_bound(r, disc, {"lam": 0.3, "n": 1.0})
    assert abs(d["lam"] - 0.3) <= b["lam"], d["lam"]
    assert abs(d["n"] - 1.0) <= b["n"], d["n"]
    assert d["residual"] <= FS * disc


def test_own_frequencies_recovered_to_round_off(case, fmodel):
    """Estimator convergence (not physics): the forward model's own frequencies over the
    study's grid give back (lam, n) within the optimiser's step tolerance and the effect of the
    frequencies' round-off (:func:`bias_bound` with the Ritz bound as the only discrepancy;
    about 1.7e-9, measured 5.6e-13)."""
    for la, n in GRID:
        om = fmodel.omega(la, n)
        r = I.identify_from_frequencies(case, om, model=fmodel)
        b = bias_bound(r, discrepancy(fmodel, la, n, om), {"lam": la, "n": n})
        assert abs(r.lam - la) <= b["lam"] and abs(r.n - n) <= b["n"], (la, n, r.lam, r.n)


def test_finer_discretisation_recovered_over_the_study_grid(case, fmodel):
    """No inverse crime: data from the independent 320-element model, forward model on 40
    elements; the forward model's discretisation error (omega_3 ~ 1e-6) is the only misfit, and
    every estimate lies within the bias it explains (:func:`bias_bound`). Measured max |error|
    1.3e-4 (n at lam = 0.2, n = 2.5); err/bound at most 0.32."""
    for la, n in GRID:
        om = hermite_fe_frequencies(la, n)
        r = I.identify_from_frequencies(case, om, model=fmodel)
        assert r.identifiable, r.message
        b = bias_bound(r, discrepancy(fmodel, la, n, om), {"lam": la, "n": n})
        assert abs(r.lam - la) <= b["lam"] and abs(r.n - n) <= b["n"], (la, n, r.lam, r.n)


def test_noise_free_frequencies_result_fields(case, fmodel, omega_true):
    r = I.identify_from_frequencies(case, omega_true, model=fmodel)
    disc = discrepancy(fmodel, LAM, N, omega_true)
    b = bias_bound(r, disc, {"lam": LAM, "n": N})
    # measured 6.9e-6, 2.0e-5 (err/bound 0.29, 0.19)
    assert abs(r.lam - LAM) <= b["lam"] and abs(r.n - N) <= b["n"]
    assert r.identifiable, r.message
    # at most the residual at the truth (the 40-element discretisation error): measured 3.9e-7
    assert r.residual <= FS * disc
    assert r.E0 == E0 and np.isnan(r.E0_std)
    assert r.sigma_source == "floor"  # noise-free: uncertainty at the 1e-4 floor
    # identifiability ranges, not error tolerances (the floor times the sensitivities:
    # 1.1e-3 and 5.2e-3 measured)
    assert 0 < r.lam_std < 0.01 and 0 < r.n_std < 0.05
    d = r.to_dict()
    text = json.dumps(d)
    for key in ("lam", "n", "lam_std", "n_std", "residual", "identifiable", "cond", "E0"):
        assert key in d
    assert d["E0_std"] is None and '"identifiable": true' in text


def test_noise_free_frequencies_with_E0(case, fmodel, omega_true):
    """Three frequencies, three parameters: measured |lam| 1.4e-5, |n| 1.0e-4 and E0 4.4e-6
    relative (the 40-element discretisation error enters all three), each within the bias it
    explains (:func:`bias_bound`; err/bound 0.31, 0.22, 0.19)."""
    r = I.identify_from_frequencies(case, omega_true, fit_E0=True, model=fmodel)
    assert r.params == ("lam", "n", "E0")
    b = bias_bound(r, discrepancy(fmodel, LAM, N, omega_true), {"lam": LAM, "n": N, "E0": E0})
    assert abs(r.lam - LAM) <= b["lam"]
    assert abs(r.n - N) <= b["n"]
    assert abs(r.E0 - E0) <= b["E0"]
    assert r.identifiable, r.message
    assert np.isfinite(r.E0_std) and r.covariance.shape == (3, 3)


def test_noisy_frequencies_uncertainty_is_calibrated(case, fmodel, omega_true):
    """0.5 % relative noise, 20 fixed draws: the true value lies within the reported 1 sigma and
    2 sigma in a fraction of the draws that 20 Bernoulli trials with the nominal 68.3 % / 95.4 %
    explain at the 1e-3 level (binomial tails, as the identification report's coverage checks:
    2 sigma at least 0.75, 1 sigma between 0.40 and 0.95)."""
    from scipy.stats import binom

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
    alpha, n_draws = 1e-3, 20
    lo2 = binom.ppf(alpha, n_draws, 0.954) / n_draws
    lo1 = binom.ppf(alpha, n_draws, 0.683) / n_draws
    hi1 = binom.isf(alpha, n_draws, 0.683) / n_draws
    assert np.all(within2 >= lo2), (within2, lo2)
    assert np.all((within1 >= lo1) & (within1 <= hi1)), (within1, lo1, hi1)


def test_uniform_beam_gradient_exponent_not_identifiable(case, fmodel):
    """lam = 0: the frequencies do not depend on n at all."""
    om = hermite_fe_frequencies(0.0, 1.0)
    r = I.identify_from_frequencies(case, om, model=fmodel)
    assert r.identifiable is False
    assert "not identifiable" in r.message
    # the estimate of lam (0) within the bias the forward model's error explains (1.6e-3;
    # measured 6.5e-5)
    assert r.lam <= bias_bound(r, discrepancy(fmodel, 0.0, 1.0, om), {"lam": 0.0})["lam"]
    rng = np.random.default_rng(7)
    om_noisy = om * (1 + 0.005 * rng.standard_normal(3))
    r2 = I.identify_from_frequencies(case, om_noisy, sigma_rel=0.005, model=fmodel, n_starts=2)
    assert r2.identifiable is False


def test_single_frequency_not_identifiable(case, omega_true):
    r = I.identify_from_frequencies(case, omega_true[:1])
    assert r.identifiable is False
    assert "underdetermined" in r.message
    # it still fits the one frequency it has: to the forward model's round-off (Ritz bound,
    # x FS; measured 2.4e-15)
    assert r.residual <= FS * modal_roundoff(40)
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
    r = I.identify_from_frequencies(case, omega_true, sigma_rel=0.005)
    assert summary["lam"] == r.lam
    disc = discrepancy(I.FrequencyModel(case, 3), LAM, N, omega_true)
    # within the bias (measured 6.9e-6)
    assert abs(summary["lam"] - LAM) <= bias_bound(r, disc, {"lam": LAM})["lam"]
    assert ds.attrs["study"] == "identify"
    # fitted vs measured frequencies: each at most the residual's 2-norm, at most its value
    # at the truth (x FS); measured 2.9e-7
    np.testing.assert_allclose(ds["omega_fit"].values, omega_true, rtol=FS * disc)


def test_tip_history_recovers_lam_n():
    """Synthetic 'measurement': the nonlinear explicit central-difference run on 16 elements
    (0.3 s, released from rest under gravity); the estimator's forward model is the linear
    modal superposition on 8 elements. Bounds: the misfit r_0 of the forward model at the truth
    (its tip history against the run, relative to the largest displacement) biases each
    estimate by at most FS x std_p ||r_0|| / sigma (as :func:`bias_bound`; 3.9e-3 for lam,
    8.5e-3 for n; measured 1.1e-3 and 2.3e-3, from the coarser forward model's higher modes),
    the RMS misfit is at most its value at the truth (x FS), and the fitted omega_1 differs from
    the 16-element one by the forward model's omega_1 error at the truth plus FS x its
    standard uncertainty (through the covariance) x ||r_0|| / sigma (4.0e-5; measured
    1.8e-6)."""
    truth = resolve_case({}, None, {"defect.lam": LAM, "defect.n": N, "mesh.n_elements": 16})
    model = BeamModel(truth)
    res = simulate_explicit(
        model, t_end=0.3, dt=0.8 * 2.0 / omega_max(model)[0], sample_dt=2e-4, progress=False
    )
    case8 = resolve_case({}, None, {"mesh.n_elements": 8})
    r = I.identify_from_tip_history(case8, res.t, res.tip_y)
    assert r.method == "tip_history"
    eig = I._Eigen(case8)
    t, y = np.asarray(res.t), np.asarray(res.tip_y)
    scale = float(np.max(np.abs(y - eig.tip_y0)))
    r0 = (I.TipHistoryModel(case8, eigen=eig).tip_y(t, LAM, N, 1.0) - y) / scale
    sigma = r.sigma / scale
    for p, truth in (("lam", LAM), ("n", N)):
        bound = FS * getattr(r, f"{p}_std") * np.linalg.norm(r0) / sigma
        assert abs(getattr(r, p) - truth) <= bound + OPTIMISER_STEP * max(1.0, truth), p
    assert r.identifiable, r.message
    # RMS misfit relative to max |tip_y|: measured 1.0e-4, at the truth 1.24e-4
    assert r.residual <= FS * np.sqrt(np.mean(r0**2))
    w1 = modal_analysis(model, n_modes=1).omega[0]
    fm8 = I.FrequencyModel(case8, 3)
    j1 = fm8.jacobian(LAM, N)[0, :2]
    std_w1 = float(np.sqrt(j1 @ r.covariance[:2, :2] @ j1))
    bound = abs(fm8.omega(LAM, N)[0] - w1) + FS * std_w1 * np.linalg.norm(r0) / sigma
    assert abs(r.omega_fit[0] - w1) <= bound
    json.dumps(r.to_dict())
