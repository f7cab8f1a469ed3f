"""Static equilibrium: analytic uniform beam, exact graded quadrature, extensible elastica, very
soft beam. The small-deflection (linear) model is compared with the linear references and the
nonlinear model with the extensible elastica (same strain measures): comparing the nonlinear
tip with a linear reference would be limited by the geometric nonlinearity (~(w/L)^2 = 2e-6
for the seed beam), not by the element."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam.defects import SectionProfile
from ancf_beam.beam.model import CLAMP
from ancf_beam.references.transfer import exact_graded_static
from ancf_beam.solvers.static import solve_static
from ancf_beam.studies.bounds import (
    EPS,
    QUADRATURE_REL,
    residual_roundoff_samples,
    static_solution_error,
    tip_gradients,
)
from conftest import EI, FS, L, Q, ancf_tip_bound, case_with, elastica_bound, make_model

W_EXACT = -Q * L**4 / (8 * EI)  # -1.3951e-3 m


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
    # bound per DOF: the first-order Newton error K^-1 R and 4 x the largest effect of the
    # residual's sampled round-off (measured max 2.2e-16 m against a bound of 2.1e-15 m;
    # largest share of its bound 0.31)
    corr = np.abs(m.tangent_solve(r.q, m.residual_free(r.q, 0.0)))
    rnd = np.max(
        [np.abs(m.tangent_solve(r.q, d)) for d in residual_roundoff_samples(m, r.q)], axis=0
    )
    assert np.all(np.abs(r.q - m.reference())[4:] <= corr + 4.0 * rnd)


@pytest.mark.parametrize("ne", [20, 40])
def test_uniform_seed_tip_deflection(ne):
    """Linear model vs -q L^4 / (8 EI): cubic Hermite elements are nodally exact for a uniform
    beam (Tong), so the bound is the solver's (adjoint of the residual, with its sampled
    round-off) and the closed form's 8 eps: measured 9e-16 and 2e-15 of the tip against 2.1e-12
    and 3.3e-11 (20, 40 elements). Nonlinear model vs the extensible elastica: FS x the ANCF
    estimate from n, 2n, 4n elements + the elastica's change from tol 1e-9 + the solver:
    measured 1.1e-11 and 1.3e-13 of the tip against 5.0e-11 and 8.6e-12."""
    assert W_EXACT == pytest.approx(-1.3951e-3, rel=1e-4)  # (the 5 digits written)
    over = {"mesh.n_elements": ne}
    lm = make_model(**over, **{"mesh.strain": "linear"})
    lin = solve_static(lm)
    (solver,) = static_solution_error(lm, lin.q, [tip_gradients(lm, lin.q)["tip_y"]])
    assert abs(lin.tip_y - W_EXACT) <= solver + 8 * EPS * abs(W_EXACT)
    case = case_with(**over)
    vals, bound = ancf_tip_bound(case)
    el, el_err = elastica_bound(SectionProfile(case))
    assert abs(vals["tip_y"] - el["tip_y"]) <= bound["tip_y"] + el_err["tip_y"]


@pytest.fixture(scope="module")
def seed_discretisation():
    """The seed beam's tip error estimate on 20 elements (from 20, 40, 80: x FS) and the
    elastica with its error: the constant of the order-4 bound on finer meshes."""
    vals, bound = ancf_tip_bound(case_with(**{"mesh.n_elements": 20}))
    return bound["tip_y"], elastica_bound(SectionProfile(case_with()))


@pytest.mark.parametrize("ne", [20, 200, 2000, 5000])
def test_static_tip_is_right_on_fine_meshes(ne, seed_discretisation):
    """The Newton criterion stays meaningful at any mesh: the residual round-off floor grows
    like n^1.5 and the load norm falls like n^-0.5, so at 2000 elements the unloaded start
    passed the residual test (tip 0, 0 iterations). Nonlinear tip vs the extensible elastica
    within the order-4 bound of the cubic element with the constant estimated on 20 elements
    (``bound_20 (20 / n)^4``), the elastica's error and the solver's bound at ``n`` (adjoint,
    sampled round-off): measured 1.1e-11 (20), 5.9e-14 (200), 9.4e-13 (2000) of the tip
    against 5.6e-11, 2.8e-10, 1.1e-8 (the solver's round-off bound grows with the mesh)."""
    bound_20, (el, el_err) = seed_discretisation
    m = make_model(**{"mesh.n_elements": ne})
    r = solve_static(m)
    assert r.newton_iterations >= 1
    (solver,) = static_solution_error(m, r.q, [tip_gradients(m, r.q)["tip_y"]])
    bound = bound_20 * (20 / ne) ** 4 + el_err["tip_y"] + solver
    assert abs(r.tip_y - el["tip_y"]) <= bound


@pytest.mark.parametrize("lam,n", [(0.3, 1.0), (0.6, 1.0), (0.6, 2.0), (0.45, 1.5), (0.9, 0.5)])
def test_graded_tip_matches_exact_quadrature_and_elastica(lam, n):
    """20 elements. Linear model vs the exact graded quadrature, nonlinear model vs the
    extensible elastica (tip position): within FS x the ANCF estimate from 20, 40, 80
    elements + the reference's error (quadrature: 1e-12 relative; elastica: its change from
    tol 1e-9) + the solver's bound. Measured up to 7.3e-8 (linear) and 7.6e-8 (nonlinear) of
    the tip for n = 1, 2: err/bound 0.27; n = 1.5 and 0.5 (E' singular at the clamp, order
    1 + n): 0.31 and 0.39. (Nonlinear vs the linear quadrature would differ by the geometric
    nonlinearity, 1.7-2.1e-6.)"""
    over = {"defect.lam": lam, "defect.n": n, "mesh.n_elements": 20}
    case = case_with(**over)
    p = SectionProfile(case)
    exact = exact_graded_static(L, p.EI, p.q)["tip_deflection"]
    lin_vals, lin_bound = ancf_tip_bound(case.with_overrides({"mesh.strain": "linear"}))
    assert abs(lin_vals["tip_y"] - exact) <= lin_bound["tip_y"] + QUADRATURE_REL * abs(exact)
    vals, bound = ancf_tip_bound(case, keys=("tip_x", "tip_y"))
    el, el_err = elastica_bound(p, clamp_exponent=None if n in (1.0, 2.0) else n)
    assert abs(vals["tip_x"] - el["tip_x"]) <= bound["tip_x"] + el_err["tip_x"]
    assert abs(vals["tip_y"] - el["tip_y"]) <= bound["tip_y"] + el_err["tip_y"]


def test_graded_static_mesh_convergence():
    """Error against the exact quadrature falls with refinement, at order 4 for a smooth
    profile: the local order between the two finest meshes at least 4 less its pre-asymptotic
    deviation, estimated as FS x twice its change from the previous local order (the next
    error term is at least one order higher). Linear model (no geometric nonlinearity between
    it and the quadrature): local orders 3.48, 3.29, 3.66 on 1-8 elements, the bound 2.55."""
    over = {"defect.lam": 0.6, "defect.n": 2.0, "defect.mapping": "gauss", "mesh.strain": "linear"}
    p = SectionProfile(case_with(**over))
    exact = exact_graded_static(L, p.EI, p.q)["tip_deflection"]
    ns = [1, 2, 4, 8]
    tips = [solve_static(make_model(**over, **{"mesh.n_elements": n})).tip_y for n in ns]
    errs = [abs(t / exact - 1) for t in tips]
    assert all(e2 < e1 for e1, e2 in zip(errs, errs[1:], strict=False)), errs
    local = -np.diff(np.log(errs)) / np.diff(np.log(ns))
    assert local[-1] >= 4.0 - FS * 2.0 * abs(local[-1] - local[-2]), (errs, local)


@pytest.mark.parametrize("E0", [2.07e8, 2.07e7])
def test_large_deflection_matches_extensible_elastica(E0):
    """20 elements. E0 = 2.07e8 Pa (tip at -63 deg): measured tip error 1.6e-6 m (x),
    3.6e-6 m (y), angle 1.3e-4 deg. E0 = 2.07e7 Pa (-90 deg): 6.3e-5 m, 1.0e-4 m, 1.7e-4 deg.
    Bounds: FS x the ANCF estimate from 20, 40, 80 elements + the elastica's change from
    tol 1e-9 + the solver's bound (err/bound 0.25 to 0.26)."""
    case = case_with(**{"material.E0": E0, "mesh.n_elements": 20})
    ref, ref_err = elastica_bound(SectionProfile(case))
    vals, bound = ancf_tip_bound(case, keys=("tip_x", "tip_y", "tip_angle"))
    assert abs(vals["tip_x"] - ref["tip_x"]) <= bound["tip_x"] + ref_err["tip_x"]
    assert abs(vals["tip_y"] - ref["tip_y"]) <= bound["tip_y"] + ref_err["tip_y"]
    angle_err = abs(vals["tip_angle"] - np.radians(ref["tip_angle_deg"]))
    assert angle_err <= bound["tip_angle"] + ref_err["tip_angle"]
    r = solve_static(make_model(**{"material.E0": E0, "mesh.n_elements": 20}))
    assert r.newton_iterations <= 10  # a count: 7 and 8 (Newton converges quadratically)


def test_very_soft_beam_hangs_vertically():
    """E0 = 2.07e6 Pa, 40 elements: the tip hangs straight down and matches the extensible
    elastica, which stretches below -L (measured 1.2e-5 m in x, 7.7e-5 m in y: the steep clamp
    boundary layer), within FS x the ANCF estimate from 40, 80, 160 elements + the elastica's
    error + the solver's bound. The tip angle's departure from -90 deg (6.3e-8 deg) is
    physical: the bending stiffness bends the hanging part back only within the clamp's
    boundary layer; it is checked against the elastica's within the same kind of bound
    (err/bound 0.18 to 0.27)."""
    case = case_with(**{"material.E0": 2.07e6, "mesh.n_elements": 40})
    vals, bound = ancf_tip_bound(case, keys=("tip_x", "tip_y", "tip_angle"))
    el, el_err = elastica_bound(SectionProfile(case))
    assert el["tip_y"] < -L  # stretched
    assert abs(vals["tip_x"] - el["tip_x"]) <= bound["tip_x"] + el_err["tip_x"]
    assert abs(vals["tip_y"] - el["tip_y"]) <= bound["tip_y"] + el_err["tip_y"]
    angle_err = abs(vals["tip_angle"] - np.radians(el["tip_angle_deg"]))
    assert angle_err <= bound["tip_angle"] + el_err["tip_angle"]
    assert abs(np.degrees(vals["tip_angle"]) + 90.0) < 1e-3  # hangs down (the physics)


def test_load_stepping_reaches_same_solution():
    """One load step vs seven: the same equilibrium within the sum of both solutions' Newton
    and round-off bounds (adjoint of the residual): the first-order Newton estimates of the
    two have opposite signs and make up the whole difference (5.04e-12 m of their 5.06e-12 m;
    the bound doubles them for their second-order remainder)."""
    m = make_model(**{"material.E0": 2.07e7})
    r1 = solve_static(m)
    r2 = solve_static(m, load_steps=7)
    b1, b2 = (static_solution_error(m, r.q, [tip_gradients(m, r.q)["tip_y"]])[0] for r in (r1, r2))
    assert abs(r2.tip_y - r1.tip_y) <= b1 + b2
    assert r2.load_steps >= 7


def _plain_newton(m, rtol: float, max_iterations: int):
    """The module docstring's Newton at full load in one step, written with numpy only: dense
    tangent (``BeamModel.tangent_dense``) and ``numpy.linalg.solve``, norms by numpy."""
    q = m.reference()
    u_ref = q[CLAMP:].copy()
    g_norm = np.linalg.norm(m.gravity_free)
    strict, tol = rtol * g_norm, max(rtol * g_norm, m.roundoff_floor())
    du1, small = 0.0, False
    for it in range(max_iterations + 1):
        r = m.residual_free(q, 1.0)
        if np.linalg.norm(r) <= strict or (small and np.linalg.norm(r) <= tol):
            return q, it
        du = np.linalg.solve(m.tangent_dense(q), r)
        q[CLAMP:] += du
        dn = np.linalg.norm(du)
        du1 = dn if it == 0 else du1
        scale = np.linalg.norm(q[CLAMP:] - u_ref) + du1
        small = dn <= rtol * scale + 1e-13 * (m.length + np.linalg.norm(q[CLAMP:]))
    raise AssertionError("the plain Newton did not converge")


@pytest.mark.parametrize("dense", [False, True], ids=["compiled", "dense"])
@pytest.mark.parametrize("E0", [2.07e7, 2.07e8])
def test_compiled_newton_takes_the_documented_iterations(E0, dense):
    """solve_static's Newton runs in one compiled call (or, ``dense``, in the plain-numpy path
    of small meshes): at full load in one step it must take the iterations of a plain numpy
    Newton with the same criteria (one more or fewer only when a criterion sits within round-off
    of its threshold) and reach its equilibrium within both solutions' Newton and round-off
    bounds (as test_load_stepping_reaches_same_solution)."""
    m = make_model(**{"material.E0": E0})
    r = solve_static(m, load_steps=1, dense=dense)
    q_plain, it_plain = _plain_newton(make_model(**{"material.E0": E0}), m.case.static.rtol, 30)
    assert r.load_steps == 1 and abs(r.newton_iterations - it_plain) <= 1
    b1, b2 = (
        static_solution_error(m, q, [tip_gradients(m, q)["tip_y"]])[0] for q in (r.q, q_plain)
    )
    assert abs(r.tip_y - q_plain[-3]) <= b1 + b2


@pytest.mark.parametrize("dense", [None, False, True], ids=["default", "compiled", "dense"])
def test_singular_tangent_raises(dense):
    """A tangent with no stiffness (every Gauss weight zero) cannot be factorised: the compiled
    Newton reports it and the solve raises numpy's LinAlgError, as the Python solve did; so
    does the dense path (numpy's solve of the zero matrix)."""
    m = make_model(**{"mesh.n_elements": 4})
    m.ea_w[:] = 0.0
    m.ei_w[:] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        solve_static(m, dense=dense)
