"""Static equilibrium: analytic uniform beam, exact graded quadrature, extensible elastica, very
soft beam. The small-deflection (linear) model is compared with the linear references and the
nonlinear model with the extensible elastica (same strain measures): comparing the nonlinear
tip with a linear reference would be limited by the geometric nonlinearity (~(w/L)^2 = 2e-6
for the seed beam), not by the element."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam.defects import SectionProfile
from ancf_beam.references.elastica import solve_elastica
from ancf_beam.references.transfer import exact_graded_static
from ancf_beam.solvers.static import solve_static
from conftest import EI, L, Q, case_with, make_model

W_EXACT = -Q * L**4 / (8 * EI)  # -1.3951e-3 m


def _elastica(case):
    p = SectionProfile(case)
    return solve_elastica(L, p.EI, p.EA, p.rhoA, case.load.g, extensible=True)


def test_zero_load_reference_is_the_equilibrium():
    """Without gravity the stress-free reference is in equilibrium: its residual is at the
    round-off floor of the elastic force (measured 0 for a straight graded beam)."""
    m = make_model(**{"load.g": 0.0, "defect.lam": 0.6})
    assert np.linalg.norm(m.residual_free(m.reference(), 0.0)) <= m.roundoff_floor()


def test_zero_gravity_static_solves_from_a_perturbed_start():
    m = make_model(**{"load.g": 0.0, "defect.lam": 0.6, "mesh.n_elements": 6})
    q0 = m.reference()
    q0[5::4] += 1e-3  # bend the beam away from its equilibrium
    r = solve_static(m, q0=q0)
    assert r.residual_norm <= r.residual_tol
    assert np.abs(r.q - m.reference()).max() < 1e-9


@pytest.mark.parametrize("ne", [20, 40])
def test_uniform_seed_tip_deflection(ne):
    """Linear model vs -q L^4 / (8 EI): cubic Hermite elements are nodally exact for a uniform
    beam, measured 7.2e-12 (20) and 3.8e-11 (40 elements; round-off of the axial stiffness);
    tolerance 4e-10. Nonlinear model vs the extensible elastica: measured 1.1e-11 (20) and
    1.3e-13 (40 elements; 1.9e-9 before the Newton increment criterion); tolerance 1e-10."""
    assert W_EXACT == pytest.approx(-1.3951e-3, rel=1e-4)
    over = {"mesh.n_elements": ne}
    lin = solve_static(make_model(**over, **{"mesh.strain": "linear"}))
    assert lin.tip_y == pytest.approx(W_EXACT, rel=4e-10)
    r = solve_static(make_model(**over))
    el = _elastica(case_with(**over))
    assert r.tip_y == pytest.approx(el["tip_y"], rel=1e-10)


@pytest.mark.parametrize("ne", [20, 200, 2000, 5000])
def test_static_tip_is_right_on_fine_meshes(ne):
    """The Newton criterion stays meaningful at any mesh: the residual round-off floor grows
    like n^1.5 and the load norm falls like n^-0.5, so at 2000 elements the unloaded start
    passed the residual test (tip 0, 0 iterations). Nonlinear tip vs the extensible elastica:
    measured 1.1e-11 (20), 3.6e-14 (200), 1.7e-12 (2000), 1.9e-11 (5000 elements);
    tolerance 2e-10."""
    r = solve_static(make_model(**{"mesh.n_elements": ne}))
    el = _elastica(case_with(**{"mesh.n_elements": ne}))
    assert r.newton_iterations >= 1
    assert r.tip_y == pytest.approx(el["tip_y"], rel=2e-10)


@pytest.mark.parametrize("lam,n", [(0.3, 1.0), (0.6, 1.0), (0.6, 2.0)])
def test_graded_tip_matches_exact_quadrature_and_elastica(lam, n):
    """20 elements. Linear model vs the exact graded quadrature: measured up to 7.3e-8;
    tolerance 7e-7. Nonlinear model vs the extensible elastica (tip distance over the tip
    deflection): measured up to 7.6e-8; tolerance 8e-7. (Nonlinear vs the linear quadrature
    would differ by the geometric nonlinearity, 1.7-2.1e-6.)"""
    over = {"defect.lam": lam, "defect.n": n, "mesh.n_elements": 20}
    case = case_with(**over)
    p = SectionProfile(case)
    exact = exact_graded_static(L, p.EI, p.q)["tip_deflection"]
    lin = solve_static(make_model(**over, **{"mesh.strain": "linear"}))
    assert lin.tip_y == pytest.approx(exact, rel=7e-7)
    r = solve_static(make_model(**over))
    el = _elastica(case)
    assert np.hypot(r.tip_x - el["tip_x"], r.tip_y - el["tip_y"]) < 8e-7 * abs(el["tip_y"])


def test_graded_static_mesh_convergence():
    """Error against the exact quadrature falls with refinement: observed order 4.19 for the
    nonlinear model on 1-8 elements (the linear-nonlinear gap, 2e-6, is far below these
    errors); bound: at least 3.5."""
    over = {"defect.lam": 0.6, "defect.n": 2.0, "defect.mapping": "gauss"}
    p = SectionProfile(case_with(**over))
    exact = exact_graded_static(L, p.EI, p.q)["tip_deflection"]
    ns = [1, 2, 4, 8]
    tips = [solve_static(make_model(**over, **{"mesh.n_elements": n})).tip_y for n in ns]
    errs = [abs(t / exact - 1) for t in tips]
    assert all(e2 < e1 for e1, e2 in zip(errs, errs[1:], strict=False)), errs
    slope = np.polyfit(np.log(ns), np.log(errs), 1)[0]
    assert slope < -3.5, (errs, slope)


@pytest.mark.parametrize(("E0", "tol_m", "tol_deg"),
                         [(2.07e8, 4e-5, 1.4e-3), (2.07e7, 1e-3, 1.7e-3)])  # fmt: skip
def test_large_deflection_matches_extensible_elastica(E0, tol_m, tol_deg):
    """20 elements. E0 = 2.07e8 Pa (tip at -63 deg): measured tip error 1.6e-6 m (x),
    3.6e-6 m (y), angle 1.3e-4 deg. E0 = 2.07e7 Pa (-90 deg): 6.3e-5 m, 1.0e-4 m, 1.7e-4 deg.
    Tolerances 10x."""
    case = case_with(**{"material.E0": E0, "mesh.n_elements": 20})
    ref = _elastica(case)
    r = solve_static(make_model(**{"material.E0": E0, "mesh.n_elements": 20}))
    assert abs(r.tip_x - ref["tip_x"]) < tol_m
    assert abs(r.tip_y - ref["tip_y"]) < tol_m
    assert abs(r.tip_angle_deg - ref["tip_angle_deg"]) < tol_deg
    assert r.newton_iterations <= 10  # measured 7 and 8


def test_very_soft_beam_hangs_vertically():
    """E0 = 2.07e6 Pa, 40 elements: the tip hangs straight down (measured 6.3e-8 deg from
    -90 deg; tolerance 1e-6 deg) and matches the extensible elastica, which stretches below
    -L (measured 1.2e-5 m in x, 7.7e-5 m in y: the steep clamp boundary layer; tolerance
    8e-4 m)."""
    case = case_with(**{"material.E0": 2.07e6, "mesh.n_elements": 40})
    r = solve_static(make_model(**{"material.E0": 2.07e6, "mesh.n_elements": 40}))
    assert abs(r.tip_angle_deg + 90.0) < 1e-6
    el = _elastica(case)
    assert el["tip_y"] < -L  # stretched
    assert np.hypot(r.tip_x - el["tip_x"], r.tip_y - el["tip_y"]) < 8e-4


def test_load_stepping_reaches_same_solution():
    """One load step vs seven: measured 5.0e-12 m apart (Newton's tolerance 6.8e-9 N on the
    residual); tolerance 5e-11 m."""
    m = make_model(**{"material.E0": 2.07e7})
    r1 = solve_static(m)
    r2 = solve_static(m, load_steps=7)
    assert r2.tip_y == pytest.approx(r1.tip_y, abs=5e-11)
    assert r2.load_steps >= 7
