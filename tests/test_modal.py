"""Natural frequencies against the analytic uniform cantilever; graded and mapping behaviour."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.solvers.modal import modal_analysis
from conftest import BETA_L, EI, RHOA, L, make_model

OMEGA_EXACT = BETA_L**2 / L**2 * np.sqrt(EI / RHOA)  # 104.24, 653.3, 1829.2 rad/s


def test_first_three_frequencies_at_40_elements():
    assert OMEGA_EXACT[0] == pytest.approx(104.24, abs=0.01)
    r = modal_analysis(make_model(**{"mesh.n_elements": 40}), n_modes=3)
    np.testing.assert_allclose(r.omega, OMEGA_EXACT, rtol=1e-3)
    assert np.all(r.axial_fraction < 1e-6)  # bending modes


def test_frequency_mesh_convergence():
    errs = []
    for ne in [2, 4, 8, 16]:
        r = modal_analysis(make_model(**{"mesh.n_elements": ne}), n_modes=3)
        errs.append(abs(r.omega[2] / OMEGA_EXACT[2] - 1))
    assert all(b < a for a, b in zip(errs, errs[1:], strict=False)), errs
    slope = np.polyfit(np.log([2, 4, 8, 16]), np.log(errs), 1)[0]
    assert slope < -3.0, (errs, slope)  # cubic Hermite: O(h^4) for frequencies


def test_static_prestress_barely_changes_stiff_beam():
    m = make_model(**{"mesh.n_elements": 20})
    r0 = modal_analysis(m, n_modes=3, about="reference")
    r1 = modal_analysis(m, n_modes=3, about="static")
    np.testing.assert_allclose(r1.omega, r0.omega, rtol=1e-4)


def test_soft_beam_about_static_state_is_a_hanging_chain():
    """A very soft beam hanging straight down behaves like a heavy hanging chain/rod: gravity
    stiffening dominates, so omega_1 about the static state is far above the bending value."""
    m = make_model(**{"material.E0": 2.07e6, "mesh.n_elements": 40})
    r_ref = modal_analysis(m, n_modes=1, about="reference")
    r_st = modal_analysis(m, n_modes=1, about="static")
    # hanging chain: omega_1 = 2.405 / 2 * sqrt(g / L) = 3.77 rad/s
    assert r_st.omega[0] > 3 * r_ref.omega[0]
    assert r_st.omega[0] == pytest.approx(1.2024 * np.sqrt(9.81 / L), rel=0.1)
