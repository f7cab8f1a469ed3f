"""Natural frequencies against the analytic uniform cantilever; graded and mapping behaviour."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from ancf_beam.solvers.modal import modal_analysis
from conftest import EI, RHOA, L, make_model

#: roots of 1 + cos(b) cosh(b) = 0 to round-off (the same roots as cos(b) + 1/cosh(b) = 0)
BETA_L = np.array([brentq(lambda b: np.cos(b) + 1.0 / np.cosh(b), (i - 0.5) * np.pi - 1,
                          (i - 0.5) * np.pi + 1, xtol=1e-15) for i in (1, 2, 3)])  # fmt: skip
OMEGA_EXACT = BETA_L**2 / L**2 * np.sqrt(EI / RHOA)  # 104.24, 653.3, 1829.2 rad/s


def test_first_three_frequencies_at_40_elements():
    """40 elements vs the closed form: measured 3.3e-9, 1.3e-7, 1.0e-6; tolerance 1e-5."""
    assert OMEGA_EXACT[0] == pytest.approx(104.24, abs=0.01)
    r = modal_analysis(make_model(**{"mesh.n_elements": 40}), n_modes=3)
    np.testing.assert_allclose(r.omega, OMEGA_EXACT, rtol=1e-5)
    assert np.all(r.axial_fraction < 1e-6)  # bending modes (measured 0)


@pytest.mark.parametrize(
    "ne,rtol", [(20, 2e-4), (200, 2e-8), (2000, 2e-10), (5000, 2e-9)]
)  # fmt: skip
def test_frequencies_are_right_on_fine_meshes(ne, rtol):
    """omega_1..3 vs the closed form. The assembled tangent's round-off shifts omega_1^2 by
    ~eps n^4 (dense eigh gave 105.48 / 98.49 rad/s at 1000 / 2000 elements); the energy-form
    Rayleigh-Ritz step removes it. Measured (largest of the three): 1.6e-5 at 20 elements (the
    discretisation error), 1.7e-9 at 200, 1.6e-11 at 2000, 1.9e-10 at 5000; tolerances ~10x."""
    r = modal_analysis(make_model(**{"mesh.n_elements": ne}), n_modes=3)
    np.testing.assert_allclose(r.omega, OMEGA_EXACT, rtol=rtol)
    assert np.all(r.axial_fraction < 1e-6)  # bending modes (measured 0)


@pytest.mark.parametrize("ne,rtol", [(2000, 2e-9), (5000, 5e-7)])
def test_coupled_frequencies_about_static_on_fine_meshes(ne, rtol):
    """Graded beam (lam = 0.6) about its static equilibrium (the x-y coupled problem, solved by
    shift-invert Lanczos and the Ritz step) vs 400 elements, converged to ~1e-10 (the change
    from 200 to 400 elements is 1.6e-9 for omega_3 and falls like n^-4). The Lanczos start
    vector is fixed; the digits the Ritz step cannot fix depend on it. Measured with the fixed
    start: 1.6e-10 (2000) and 9.4e-10 (5000 elements); over eight other start vectors up to
    3.8e-10 (2000) and 3.0e-9..7.6e-8 (5000; a CI run with ARPACK's random start saw 3.6e-8).
    Tolerances ~5-7x the worst of those, not of the lucky fixed start."""
    over = {"defect.lam": 0.6}
    ref = modal_analysis(make_model(**over, **{"mesh.n_elements": 400}), 3, about="static")
    r = modal_analysis(make_model(**over, **{"mesh.n_elements": ne}), 3, about="static")
    np.testing.assert_allclose(r.omega, ref.omega, rtol=rtol)


def test_frequency_mesh_convergence():
    """omega_3 error on 2-16 elements falls at order 4.09 (cubic Hermite: 4); bound 3.7."""
    errs = []
    for ne in [2, 4, 8, 16]:
        r = modal_analysis(make_model(**{"mesh.n_elements": ne}), n_modes=3)
        errs.append(abs(r.omega[2] / OMEGA_EXACT[2] - 1))
    assert all(b < a for a, b in zip(errs, errs[1:], strict=False)), errs
    slope = np.polyfit(np.log([2, 4, 8, 16]), np.log(errs), 1)[0]
    assert slope < -3.7, (errs, slope)


def test_static_prestress_barely_changes_stiff_beam():
    """About the static state vs about the reference: measured 1.2e-6 (the gravity prestress of
    the stiff beam); tolerance 1.2e-5."""
    m = make_model(**{"mesh.n_elements": 20})
    r0 = modal_analysis(m, n_modes=3, about="reference")
    r1 = modal_analysis(m, n_modes=3, about="static")
    np.testing.assert_allclose(r1.omega, r0.omega, rtol=1.2e-5)


def test_soft_beam_about_static_state_is_a_hanging_chain():
    """A very soft beam hanging straight down behaves like a heavy hanging chain/rod: gravity
    stiffening dominates, so omega_1 about the static state is far above the bending value.
    The chain (j_0,1 / 2) sqrt(g / L) has no bending stiffness and no stretch: it limits the
    comparison (measured 1.05e-2; tolerance 0.1)."""
    m = make_model(**{"material.E0": 2.07e6, "mesh.n_elements": 40})
    r_ref = modal_analysis(m, n_modes=1, about="reference")
    r_st = modal_analysis(m, n_modes=1, about="static")
    # hanging chain: omega_1 = 2.405 / 2 * sqrt(g / L) = 3.77 rad/s
    assert r_st.omega[0] > 3 * r_ref.omega[0]
    assert r_st.omega[0] == pytest.approx(1.2024 * np.sqrt(9.81 / L), rel=0.1)


def test_omega_max_of_a_large_block_matches_dense_eigh():
    """500 elements (blocks of 1000 DOFs: Lanczos, no dense matrix built) vs dense eigh of
    the assembled matrices: measured 1.7e-15 (the bending block governs at this mesh; the top
    of the spectrum has no cancellation problem); tolerance 2e-14."""
    import scipy.linalg as sla

    from ancf_beam.solvers.modal import DENSE_MAX, omega_max

    m = make_model(**{"mesh.n_elements": 500})
    w, phi = omega_max(m)
    assert m.n_free // 2 > DENSE_MAX
    k, mm = m.tangent_dense(m.reference()), m.mass_dense()
    iy = np.arange(1, m.n_free, 2)  # bending block, which holds the top mode of this mesh
    n = iy.size
    w2 = sla.eigh(k[np.ix_(iy, iy)], mm[np.ix_(iy, iy)], eigvals_only=True,
                  subset_by_index=(n - 1, n - 1))[0]  # fmt: skip
    assert w == pytest.approx(np.sqrt(w2), rel=2e-14)
    assert np.abs(phi[0::2]).max() == 0.0  # a bending mode


@pytest.mark.parametrize(
    "over", [{}, {"imperfection.kappa0": 0.5}, {"mesh.strain": "linear"}, {"defect.lam": 0.6}]
)
def test_projected_tangent_equals_the_assembled_tangent_projected(over):
    """The energy-form ``V^T K_T V`` of the Ritz step (numba) vs the assembled banded tangent
    projected on five random vectors at a random state 1 cm off the reference: measured
    2.0e-16 .. 4.3e-16 of the largest entry; tolerance 4e-15."""
    from ancf_beam.linalg import band_to_dense
    from ancf_beam.solvers.modal import projected_tangent

    rng = np.random.default_rng(3)
    m = make_model(**over, **{"mesh.n_elements": 6})
    q = m.reference() + 1e-2 * rng.standard_normal(m.n_dof)
    q[:4] = m.reference()[:4]
    v = rng.standard_normal((m.n_free, 5))
    expected = v.T @ band_to_dense(m.tangent_band(q)) @ v
    got = projected_tangent(m, q, v)
    assert np.abs(got - expected).max() <= 4e-15 * np.abs(expected).max()


@pytest.mark.parametrize("n_modes", [3, 8, 20])
def test_block_skipped_by_inertia_changes_nothing(monkeypatch, n_modes):
    """The axial block is skipped when K_x - omega_n^2 M_x is positive definite (it then holds
    none of the lowest modes). With and without the skip the frequencies are identical (the
    same computations; measured 0) and the axial modes that belong among the lowest are kept:
    with 20 modes some are axial. The skip must happen for 3 modes (bending only)."""
    import ancf_beam.solvers.modal as modal

    m = make_model(**{"mesh.n_elements": 20})
    calls = []
    real = modal._none_below
    monkeypatch.setattr(modal, "_none_below", lambda *a: calls.append(real(*a)) or calls[-1])
    with_skip = modal_analysis(m, n_modes)
    monkeypatch.setattr(modal, "_none_below", lambda *a: False)
    without = modal_analysis(m, n_modes)
    np.testing.assert_array_equal(with_skip.omega, without.omega)
    np.testing.assert_array_equal(with_skip.axial_fraction, without.axial_fraction)
    if n_modes == 3:
        assert calls == [True]
    if n_modes == 20:
        assert calls == [False] and with_skip.axial_fraction.sum() >= 1
