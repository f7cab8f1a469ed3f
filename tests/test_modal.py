"""Natural frequencies against the analytic uniform cantilever; graded and mapping behaviour."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from ancf_beam.solvers.modal import modal_analysis
from ancf_beam.solvers.static import solve_static
from ancf_beam.studies.bounds import (
    EPS,
    geometric_nonlinearity,
    modal_roundoff,
    refinement_estimate,
)
from conftest import EI, FS, RHOA, L, Q, make_model

#: roots of 1 + cos(b) cosh(b) = 0 to round-off (the same roots as cos(b) + 1/cosh(b) = 0)
BETA_L = np.array(
    [
        brentq(
            lambda b: np.cos(b) + 1.0 / np.cosh(b),
            (i - 0.5) * np.pi - 1,
            (i - 0.5) * np.pi + 1,
            xtol=1e-15,
        )
        for i in (1, 2, 3)
    ]
)
OMEGA_EXACT = BETA_L**2 / L**2 * np.sqrt(EI / RHOA)  # 104.24, 653.3, 1829.2 rad/s
#: relative accuracy of OMEGA_EXACT: brentq to xtol 1e-15 on beta L ~ 2..8, squared; a few eps
CLOSED_FORM = 16 * EPS


def _omega(ne, n_modes=3, **over):
    return modal_analysis(make_model(**over, **{"mesh.n_elements": ne}), n_modes=n_modes).omega


def _omega_bound(ne, **over):
    """Relative bound of the seed beam's omega_1..3 on ``ne`` elements: FS x the estimate from
    ne, 2 ne, 4 ne elements + the Ritz round-off of the finest."""
    om = [_omega(m * ne, **over) for m in (1, 2, 4)]
    return om[0], FS * refinement_estimate(*om) / om[0] + modal_roundoff(4 * ne)


def test_first_three_frequencies_at_40_elements():
    """40 elements vs the closed form: measured 3.3e-9, 1.3e-7, 1.0e-6 within FS x the
    estimate from 40, 80, 160 elements + Ritz and closed-form round-off (err/bound 0.27)."""
    assert OMEGA_EXACT[0] == pytest.approx(104.24, abs=0.01)  # (the digits written)
    r = modal_analysis(make_model(**{"mesh.n_elements": 40}), n_modes=3)
    om, bound = _omega_bound(40)
    np.testing.assert_array_equal(om, r.omega)
    assert np.all(np.abs(r.omega / OMEGA_EXACT - 1) <= bound + CLOSED_FORM)
    assert np.all(r.axial_fraction < 1e-6)  # bending modes (measured 0: decoupled blocks)


@pytest.fixture(scope="module")
def bound_20():
    """The relative bound of omega_1..3 on 20 elements: the constant of the order-4 bound."""
    return _omega_bound(20)[1]


@pytest.mark.parametrize("ne", [20, 200, 2000, 5000])
def test_frequencies_are_right_on_fine_meshes(ne, bound_20):
    """omega_1..3 vs the closed form. The assembled tangent's round-off shifts omega_1^2 by
    ~eps n^4 (dense eigh gave 105.48 / 98.49 rad/s at 1000 / 2000 elements); the energy-form
    Rayleigh-Ritz step removes it. Bound: the order-4 discretisation bound with the constant
    estimated on 20 elements, ``bound_20 (20 / n)^4``, plus the Ritz round-off ``32 eps n^2``
    and the closed form's. Measured (largest of the three): 1.6e-5 at 20 elements (the
    discretisation error), 1.7e-9 at 200, 2.7e-11 at 2000, 1.9e-10 at 5000 against 6.1e-5,
    6.4e-9, 2.8e-8, 1.8e-7."""
    r = modal_analysis(make_model(**{"mesh.n_elements": ne}), n_modes=3)
    bound = bound_20 * (20 / ne) ** 4 + modal_roundoff(ne) + CLOSED_FORM
    assert np.all(np.abs(r.omega / OMEGA_EXACT - 1) <= bound)
    assert np.all(r.axial_fraction < 1e-6)  # bending modes (measured 0: decoupled blocks)


@pytest.mark.parametrize("ne", [2000, 5000])
def test_coupled_frequencies_about_static_on_fine_meshes(ne):
    """Graded beam (lam = 0.6) about its static equilibrium (the x-y coupled problem, solved by
    shift-invert Lanczos and the Ritz step) vs 400 elements. The Lanczos start vector is
    fixed; the digits the Ritz step cannot fix depend on it. Measured with the fixed start:
    1.6e-10 (2000) and 9.4e-10 (5000 elements); over eight other start vectors up to 3.8e-10
    (2000) and 3.0e-9..7.6e-8 (5000; a CI run with ARPACK's random start saw 3.6e-8). Bound:
    the reference's discretisation error (order 4 from 200 and 400 elements: ``|w_200 -
    w_400| / 15``, x FS) plus the Ritz round-off ``32 eps n^2`` of both meshes (1.8e-7 at
    5000 elements: it covers every start vector)."""
    over = {"defect.lam": 0.6}
    w200, ref = (
        modal_analysis(make_model(**over, **{"mesh.n_elements": m}), 3, about="static").omega
        for m in (200, 400)
    )
    r = modal_analysis(make_model(**over, **{"mesh.n_elements": ne}), 3, about="static")
    bound = FS * np.abs(w200 - ref) / 15 / ref + modal_roundoff(400) + modal_roundoff(ne)
    assert np.all(np.abs(r.omega / ref - 1) <= bound)


def test_frequency_mesh_convergence():
    """omega_3 error on 2-16 elements falls at order 4 (cubic Hermite): the local order of the
    two finest meshes at least 4 less FS x twice its change from the previous local order (the
    next error term is at least one order higher)."""
    errs = []
    for ne in [2, 4, 8, 16]:
        r = modal_analysis(make_model(**{"mesh.n_elements": ne}), n_modes=3)
        errs.append(abs(r.omega[2] / OMEGA_EXACT[2] - 1))
    assert all(b < a for a, b in zip(errs, errs[1:], strict=False)), errs
    local = -np.diff(np.log(errs)) / np.log(2.0)
    assert local[-1] >= 4.0 - FS * 2.0 * abs(local[-1] - local[-2]), (errs, local)


def test_static_prestress_barely_changes_stiff_beam():
    """About the static state vs about the reference: measured 1.2e-6 (the gravity prestress of
    the stiff beam; 1.9e-7, 5.1e-7 for omega_2, omega_3). The prestress is a geometric
    nonlinearity: bound by its estimate from the static tip, ``8 |tip - tip_linearised| /
    |tip|`` (``geometric_nonlinearity``, 1.25e-5), plus the Ritz round-off."""
    m = make_model(**{"mesh.n_elements": 20})
    r0 = modal_analysis(m, n_modes=3, about="reference")
    r1 = modal_analysis(m, n_modes=3, about="static")
    tip = solve_static(make_model(**{"mesh.n_elements": 20})).tip_y
    bound = geometric_nonlinearity(m, tip) / abs(tip) + 2 * modal_roundoff(20)
    assert np.all(np.abs(r1.omega / r0.omega - 1) <= bound)


def test_soft_beam_about_static_state_is_a_hanging_chain():
    """A very soft beam hanging straight down behaves like a heavy hanging chain/rod: gravity
    stiffening dominates, so omega_1 about the static state is far above the bending value.
    The chain (j_0,1 / 2) sqrt(g / L) has no bending stiffness and no stretch: the beam departs
    from it by the bending boundary layer's relative length ``sqrt(EI / (q L^3))`` (0.030)
    and the stretch ``q L / EA`` (0.037), the leading corrections; bound FS x their sum
    (0.13; measured 1.05e-2)."""
    m = make_model(**{"material.E0": 2.07e6, "mesh.n_elements": 40})
    r_ref = modal_analysis(m, n_modes=1, about="reference")
    r_st = modal_analysis(m, n_modes=1, about="static")
    # hanging chain: omega_1 = 2.405 / 2 * sqrt(g / L) = 3.77 rad/s
    assert r_st.omega[0] > 3 * r_ref.omega[0]
    ei, ea = 2.07e6 * EI / 2.07e11, 2.07e6 * 4e-4  # the soft beam's EI, EA (A = 4e-4 m^2)
    corr = np.sqrt(ei / (Q * L**3)) + Q * L / ea
    assert r_st.omega[0] == pytest.approx(1.2024 * np.sqrt(9.81 / L), rel=FS * corr)


def test_omega_max_of_a_large_block_matches_dense_eigh():
    """500 elements (blocks of 1000 DOFs: Lanczos, no dense matrix built) vs dense eigh of
    the assembled matrices: measured 1.7e-15 (the bending block governs at this mesh; the top
    of the spectrum has no cancellation problem). Bound: both solvers' backward error at the
    top of the spectrum, a few eps each (ARPACK's tolerance is eps): 64 eps = 1.4e-14."""
    import scipy.linalg as sla

    from ancf_beam.solvers.modal import DENSE_MAX, omega_max

    m = make_model(**{"mesh.n_elements": 500})
    w, phi = omega_max(m)
    assert m.n_free // 2 > DENSE_MAX
    k, mm = m.tangent_dense(m.reference()), m.mass_dense()
    iy = np.arange(1, m.n_free, 2)  # bending block, which holds the top mode of this mesh
    n = iy.size
    w2 = sla.eigh(
        k[np.ix_(iy, iy)], mm[np.ix_(iy, iy)], eigvals_only=True, subset_by_index=(n - 1, n - 1)
    )[0]
    assert w == pytest.approx(np.sqrt(w2), rel=64 * EPS)
    assert np.abs(phi[0::2]).max() == 0.0  # a bending mode


@pytest.mark.parametrize(
    "over", [{}, {"imperfection.kappa0": 0.5}, {"mesh.strain": "linear"}, {"defect.lam": 0.6}]
)
def test_projected_tangent_equals_the_assembled_tangent_projected(over):
    """The energy-form ``V^T K_T V`` of the Ritz step (numba) vs the assembled banded tangent
    projected on five random vectors at a random state 1 cm off the reference: measured
    2.0e-16 .. 4.3e-16 of the largest entry. Bound per entry: the round-off of the two ways of
    summing the same products, ``2 n eps (|V|^T |K| |V|)`` (``n`` the free DOFs; the standard
    dot-product bound, the energy form's element terms included in ``|K|``)."""
    from ancf_beam.linalg import band_to_dense
    from ancf_beam.solvers.modal import projected_tangent

    rng = np.random.default_rng(3)
    m = make_model(**over, **{"mesh.n_elements": 6})
    q = m.reference() + 1e-2 * rng.standard_normal(m.n_dof)
    q[:4] = m.reference()[:4]
    v = rng.standard_normal((m.n_free, 5))
    expected = v.T @ band_to_dense(m.tangent_band(q)) @ v
    got = projected_tangent(m, q, v)
    kd = np.abs(band_to_dense(m.tangent_band(q)))
    bound = 2 * m.n_free * EPS * (np.abs(v).T @ kd @ np.abs(v))
    assert np.all(np.abs(got - expected) <= bound)


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
