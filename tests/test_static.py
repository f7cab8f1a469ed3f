"""Static equilibrium: analytic uniform beam, exact graded quadrature, elastica, very soft beam."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam.defects import SectionProfile
from ancf_beam.references.elastica import solve_elastica
from ancf_beam.references.transfer import exact_graded_static
from ancf_beam.solvers.static import solve_static
from conftest import EI, L, Q, case_with, make_model

W_EXACT = -Q * L**4 / (8 * EI)  # -1.3951e-3 m


def test_zero_gravity_gives_zero_displacement():
    m = make_model(**{"load.g": 0.0, "defect.lam": 0.6})
    r = solve_static(m)
    assert np.abs(r.q - m.reference()).max() == 0.0
    assert r.tip_y == 0.0


@pytest.mark.parametrize("ne", [20, 40])
def test_uniform_seed_tip_deflection(ne):
    r = solve_static(make_model(**{"mesh.n_elements": ne}))
    assert W_EXACT == pytest.approx(-1.3951e-3, rel=1e-4)
    assert r.tip_y == pytest.approx(W_EXACT, rel=1e-3)


@pytest.mark.parametrize("lam,n", [(0.3, 1.0), (0.6, 1.0), (0.6, 2.0)])
def test_graded_tip_matches_exact_quadrature(lam, n):
    case = case_with(**{"defect.lam": lam, "defect.n": n, "mesh.n_elements": 20})
    p = SectionProfile(case)
    exact = exact_graded_static(L, p.EI, p.q)["tip_deflection"]
    r = solve_static(make_model(**{"defect.lam": lam, "defect.n": n, "mesh.n_elements": 20}))
    assert r.tip_y == pytest.approx(exact, rel=5e-3)


def test_graded_static_mesh_convergence():
    """Error against the exact quadrature falls with refinement (observed order ~ 2 or better)."""
    over = {"defect.lam": 0.6, "defect.n": 2.0, "defect.mapping": "gauss"}
    p = SectionProfile(case_with(**over))
    exact = exact_graded_static(L, p.EI, p.q)["tip_deflection"]
    ns = [1, 2, 4, 8]
    tips = [solve_static(make_model(**over, **{"mesh.n_elements": n})).tip_y for n in ns]
    errs = [abs(t / exact - 1) for t in tips]
    assert all(e2 < e1 for e1, e2 in zip(errs, errs[1:], strict=False)), errs
    slope = np.polyfit(np.log(ns), np.log(errs), 1)[0]
    assert slope < -1.8, (errs, slope)


@pytest.mark.parametrize("E0", [2.07e8, 2.07e7])
def test_large_deflection_matches_extensible_elastica(E0):
    case = case_with(**{"material.E0": E0, "mesh.n_elements": 20})
    p = SectionProfile(case)
    ref = solve_elastica(L, p.EI(0.0), p.EA(0.0), p.rhoA(0.0), case.load.g, extensible=True)
    r = solve_static(make_model(**{"material.E0": E0, "mesh.n_elements": 20}))
    assert abs(r.tip_x - ref["tip_x"]) < 5e-3 * L
    assert abs(r.tip_y - ref["tip_y"]) < 5e-3 * L
    assert r.newton_iterations < 60


def test_very_soft_beam_hangs_vertically():
    r = solve_static(make_model(**{"material.E0": 2.07e6, "mesh.n_elements": 40}))
    assert abs(r.tip_angle_deg + 90.0) < 0.1
    assert r.tip_y < -0.99 * L


def test_load_stepping_reaches_same_solution():
    m = make_model(**{"material.E0": 2.07e7})
    r1 = solve_static(m)
    r2 = solve_static(m, load_steps=7)
    assert r2.tip_y == pytest.approx(r1.tip_y, abs=1e-9)
    assert r2.load_steps >= 1
