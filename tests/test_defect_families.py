"""Defect families beyond E(x): density and section gradients, measured-profile tables, the
initial geometric imperfection, and strain-driven damage."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam import kernels
from ancf_beam.beam.defects import SectionProfile
from ancf_beam.config import ConfigError
from ancf_beam.references.transfer import exact_graded_static, stepped_frequencies
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.modal import modal_analysis, omega_max
from ancf_beam.solvers.static import solve_static
from ancf_beam.studies.bounds import (
    EPS,
    QUADRATURE_REL,
    modal_roundoff,
    refinement_estimate,
    residual_roundoff_samples,
    static_solution_error,
    stepped_exponents,
    stepped_richardson,
    stepped_roundoff,
    tip_gradients,
)
from ancf_beam.studies.validation import ROOT_REL
from conftest import FS, L, ancf_tip_bound, case_with, make_model

FAMILIES = {
    "density": {"defect.rho.lam": 0.5, "defect.rho.n": 1.0},
    "height": {"defect.height.lam": 0.4, "defect.height.n": 1.5},
    "width": {"defect.width.lam": 0.5, "defect.width.n": 2.0},
    "combined": {"defect.lam": 0.3, "defect.rho.lam": 0.3, "defect.height.lam": 0.2},
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_graded_family_static_matches_exact_quadrature(family):
    """The small-deflection model (the linear reference's own physics) against the exact
    quadrature of the graded EI(x) and load q(x), 20 elements: within FS x the ANCF estimate
    from 20, 40, 80 elements + the solver's bound (adjoint of the residual) + the quadrature's
    accuracy (1e-12 relative). Measured up to 4.3e-7 of the tip (height, x^1.5: order 2.5 on the
    clamp element), err/bound up to 0.31. (The nonlinear tip would differ by the geometric
    nonlinearity, ~2e-6.)"""
    over = {**FAMILIES[family], "mesh.n_elements": 20, "mesh.strain": "linear"}
    case = case_with(**over)
    p = SectionProfile(case)
    exact = exact_graded_static(L, p.EI, p.q)["tip_deflection"]  # graded EI(x) and load q(x)
    vals, bound = ancf_tip_bound(case)
    assert abs(vals["tip_y"] - exact) <= bound["tip_y"] + QUADRATURE_REL * abs(exact)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_graded_family_frequencies_match_stepped_transfer_matrix(family):
    """40 elements against the stepped beam Richardson-extrapolated with its leading exponent
    (2, or 2.5 for the x^1.5 height: :func:`stepped_exponents`) from 200 and 400 segments. The
    reference's error: FS x its change from the extrapolation of 100 and 200 segments (the
    remaining terms at least halve per doubling) + the transfer matrices' round-off and the
    roots' accuracy; the ANCF's: FS x its estimate from 40, 80, 160 elements + the Ritz
    round-off. Measured up to 1.1e-6 of omega_3, err/bound 0.27 (the stepped beam alone is
    O(1/N^2): 9.5e-6 at 200)."""
    over = {**FAMILIES[family], "mesh.n_elements": 40}
    case = case_with(**over)
    p = SectionProfile(case)
    f = np.array([stepped_frequencies(L, p.EI, p.rhoA, N, 3) for N in (100, 200, 400)])
    r = stepped_richardson(f, stepped_exponents(case)[0])
    ref = r[1]
    ref_err = FS * np.abs(r[0] - r[1]) + (stepped_roundoff(400) + ROOT_REL) * ref
    om = [
        modal_analysis(make_model(**{**over, "mesh.n_elements": m}), n_modes=3).omega
        for m in (40, 80, 160)
    ]
    ancf_err = FS * refinement_estimate(*om) + modal_roundoff(160) * om[0]
    assert np.all(np.abs(om[0] - ref) <= ref_err + ancf_err)


#: Relative round-off of a profile evaluated two ways: each side rounds a few operations (a
#: power, ``1 - lam (x/L)^n`` with its cancellation amplified at most (1 + lam) / (1 - lam)
#: = 2.3 for lam 0.4, a cube: x3, products with the constants), half an eps each: 16 eps.
PROFILE_REL = 16 * EPS


def test_density_gradient_changes_load_and_mass_not_stiffness():
    p0 = SectionProfile(case_with())
    p = SectionProfile(case_with(**FAMILIES["density"]))
    x = np.linspace(0, L, 11)
    np.testing.assert_allclose(p.EI(x), p0.EI(x), rtol=PROFILE_REL)  # measured 0
    np.testing.assert_allclose(p.q(x), p0.q(x) * (1 - 0.5 * x / L), rtol=PROFILE_REL)  # 1.4e-16


def test_section_height_gradient_scales_area_and_inertia():
    p0 = SectionProfile(case_with())
    p = SectionProfile(case_with(**FAMILIES["height"]))
    x = np.linspace(0, L, 11)
    f = 1 - 0.4 * (x / L) ** 1.5
    np.testing.assert_allclose(p.A(x), p0.A(x) * f, rtol=PROFILE_REL)  # measured 2.1e-16
    np.testing.assert_allclose(p.I(x), p0.I(x) * f**3, rtol=PROFILE_REL)  # measured 2.3e-16


def test_table_profile_reproduces_power_law():
    """A 201-point table of 1 - 0.6 a^2 against the power law, linear strain. The continuum
    tips differ by the piecewise-linear interpolation: the tip deflection is the integral of
    M(x) (L - x) / EI(x) with an integrand of one sign, so a relative change of EI by at most
    ``d`` changes it by at most ``d / (1 - d)``, with ``d = (h^2 / 8) max|f''| / min f`` (h =
    1/200, f'' = -1.2, min f = 0.4: 9.4e-6). Each ANCF tip errs by at most FS x its estimate
    from 20, 40, 80 elements + the solver's bound. Measured 9.7e-7 (err/bound 0.05: the
    interpolation error's mean over an interval is two thirds of its peak, and it peaks only
    between table points)."""
    xs = np.linspace(0, 1, 201)
    table = [[float(a), float(1 - 0.6 * a**2)] for a in xs]
    lin = {"mesh.strain": "linear"}
    t_tab, b_tab = ancf_tip_bound(case_with(**lin, **{"defect.table": table}))
    t_pow, b_pow = ancf_tip_bound(case_with(**lin, **{"defect.lam": 0.6, "defect.n": 2.0}))
    d = (xs[1] - xs[0]) ** 2 / 8 * 1.2 / 0.4
    bound = d / (1 - d) * abs(t_pow["tip_y"]) + b_tab["tip_y"] + b_pow["tip_y"]
    assert abs(t_tab["tip_y"] - t_pow["tip_y"]) <= bound
    # measured-profile table for density, combined with a power law on E: the interpolation
    # at 0.25 (between 1.0 and 0.8) and 1 - 0.2 x 1, a few roundings
    c = case_with(**{"defect.lam": 0.2, "defect.rho.table": [[0, 1.0], [0.5, 0.8], [1, 0.9]]})
    p = SectionProfile(c)
    assert p.rho(0.25) == pytest.approx(7850 * 0.9, rel=PROFILE_REL)
    assert p.E(1.0) == pytest.approx(2.07e11 * 0.8, rel=PROFILE_REL)


@pytest.mark.parametrize(
    "table",
    [
        [[0, 1.0]],
        [[0.1, 1.0], [1, 0.5]],
        [[0, 1.0], [0.5, 0.0], [1, 1.0]],
        [[0, 1], [0.6, 1], [0.5, 1], [1, 1]],
    ],
)
def test_bad_tables_are_rejected(table):
    with pytest.raises(ConfigError, match="defect.table"):
        case_with(**{"defect.table": table})


# ------------------------------------------------------------------------------------------
# imperfection
# ------------------------------------------------------------------------------------------
IMPERFECT = [
    {"imperfection.kappa0": 0.5},
    {"imperfection.tip_offset": -0.05, "imperfection.profile": "linear"},
]


def _roundoff_motion_bound(m, q0, t_end):
    """Bounds of the tip's displacement (m) and the kinetic energy (J) of the free DOFs of
    ``m`` driven from rest at the stress-free ``q0`` by a force no larger than its round-off:
    per DOF 16 x the largest of three samples (:func:`residual_roundoff_samples`, the
    static bounds' factor). A mass-normalised mode ``k`` (``w_k``, ``phi_k``) under any force
    with ``|phi_k . F(t)| <= R_k`` moves at most ``R_k int_0^t |sin w_k s| ds / w_k <= R_k
    (2 t / pi + 2 / w_k) / w_k`` with speed ``R_k (2 t / pi + 2 / w_k)`` (the worst case: a
    force in resonance, its sign switching in step with the mode); ``R_k = |phi_k| . R``."""
    from scipy.linalg import eigh

    r = 16.0 * np.max([np.abs(d) for d in residual_roundoff_samples(m, q0)], axis=0)
    w2, phi = eigh(m.tangent_dense(q0), m.mass_dense())
    w = np.sqrt(w2)
    amp = np.abs(phi).T @ r * (2.0 * t_end / np.pi + 2.0 / w)
    return float(np.abs(phi[-3]) @ (amp / w)), 0.5 * float(amp @ amp)


@pytest.mark.parametrize("imp", IMPERFECT)
def test_curved_beam_without_gravity_stays_at_rest(imp):
    """The curved reference is the stress-free state: its elastic force is round-off (within 16
    x its largest sample, the static bounds' factor: measured 5.8e-8 N against 4e-6 N); the
    static solver moves it by at most Newton's step from that residual (x2, the Newton factor)
    plus the rounding of the update (2 eps of the coordinates): measured 5.6e-16 m against
    1.5e-15 m; an explicit run stays within the motion a force of the round-off's size can
    drive (:func:`_roundoff_motion_bound`; measured 2.5e-15 m, 4.6e-20 J against 3.5e-9 m,
    1.2e-12 J: the round-off force does not resonate, the bound assumes it does)."""
    m = make_model(**{"mesh.n_elements": 10, "load.g": 0.0, **imp})
    q0 = m.reference()
    assert abs(q0[-3]) > 0.04  # it is really curved
    f = m.residual_free(q0)
    samples = residual_roundoff_samples(m, q0)
    assert np.abs(f).max() <= 16.0 * max(np.abs(d).max() for d in samples)
    step = np.abs(m.tangent_solve(q0, f)).max()
    assert np.abs(solve_static(m).q - q0).max() <= 2.0 * step + 2.0 * EPS * np.abs(q0).max()
    dtc = 2 / omega_max(m)[0]
    t_end = 0.02
    r = simulate_explicit(m, t_end, 0.8 * dtc, dtc, progress=False)
    tip_bound, kinetic_bound = _roundoff_motion_bound(m, q0, t_end)
    assert np.abs(r.tip_y - q0[-3]).max() <= tip_bound
    assert r.kinetic.max() <= kinetic_bound


def test_tip_offset_and_circular_arc_geometry():
    """The reference geometry to rounding: the tip offset within 4 eps L (measured 0.125 eps);
    the arc's tip from sin / cos of kL within 16 eps (1 - cos kL amplifies cos's rounding by
    cos / (1 - cos) = 7.3; measured 1 eps). The interpolated arc's curvature at the Gauss
    points: cubic Hermite interpolation with exact nodal positions and unit tangents errs in
    the second derivative by at most h^2 / 12 max|r^(4)| = h^2 k^3 / 12 and in the first by
    h^3 k^3 / 24: relative curvature error at most FS x ((hk)^2 / 12 + 3 (hk)^3 / 24) (7.4e-4;
    measured 1.6e-4)."""
    m = make_model(**{"mesh.n_elements": 8, "imperfection.tip_offset": 0.1})
    assert m.reference()[-3] == pytest.approx(0.1, abs=4 * EPS * L)
    k = 0.5
    m = make_model(**{"mesh.n_elements": 8, "imperfection.kappa0": k})
    x, y, a = m.tip(m.reference())
    assert (x, y, a) == pytest.approx(
        (np.sin(k * L) / k, (1 - np.cos(k * L)) / k, k * L), rel=16 * EPS
    )
    hk = L / 8 * k
    np.testing.assert_allclose(m.kap0, k, rtol=FS * (hk**2 / 12 + 3 * hk**3 / 24))


def test_imperfect_beam_tangent_and_rigid_motion():
    """The tangent against central differences of the force (h = 1e-6): the differences err by
    their truncation, estimated as FS x their change from h = 2e-6 over 3 (order 2), plus the
    force's round-off over 2h (16 x its largest sample); measured 5.1e-11 of max|K| against
    3.0e-9 (the round-off term dominates: err/bound 0.017). A rigid
    rotation of the reference stores no strain energy but round-off: strains of a few eps
    (8 eps: the rotated coordinates, four shape-function terms, the squared length) give at
    most L / 2 (EA (8 eps)^2 + EI (8 eps / l_e)^2) (1.3e-25 J; measured 8.5e-28 J)."""
    m = make_model(**{"mesh.n_elements": 4, "imperfection.kappa0": 0.8, "material.E0": 2.07e8})
    rng = np.random.default_rng(3)
    q = m.reference() + rng.normal(0, 0.03, m.n_dof)
    k = m.tangent_dense(q, free=False)

    def fd(h):
        return np.column_stack(
            [
                -(m.elastic_force(q + h * e) - m.elastic_force(q - h * e)) / (2 * h)
                for e in np.eye(q.size)
            ]
        )

    h = 1e-6
    kfd, kfd2 = fd(h), fd(2 * h)
    roundoff = 16.0 * max(np.abs(d).max() for d in residual_roundoff_samples(m, q))
    bound = FS * np.abs(kfd2 - kfd).max() / 3 + 2 * roundoff / (2 * h)
    assert np.abs(k - kfd).max() <= bound
    c, s = np.cos(1.1), np.sin(1.1)
    qr = (m.reference().reshape(-1, 2) @ np.array([[c, -s], [s, c]]).T).ravel()
    ea = 2.07e8 * 0.02 * 0.02
    ei = 2.07e8 * 0.02 * 0.02**3 / 12
    assert m.strain_energy(qr) <= L / 2 * (ea * (8 * EPS) ** 2 + ei * (8 * EPS * 4 / L) ** 2)


def test_mild_imperfection_barely_changes_gravity_deflection():
    """A 1 mm tip offset (slope up to th0 = 2e-3) against the straight beam (tip slope under
    gravity thw = 1.9e-3): the moment arms are horizontal projections, shortened by the
    cosine of the axis angle, so the deflection changes by about (th0^2 + 2 th0 thw) / 2
    relative; bound FS x that (1.1e-5; measured 1.2e-6). (Both on the same mesh: their
    discretisation errors differ by that relative change of themselves, negligible.)"""
    r0 = solve_static(make_model())
    m = make_model(**{"imperfection.tip_offset": 1e-3})
    q0 = m.reference()
    th0 = np.abs(np.arctan2(q0[3::4], q0[2::4])).max()
    thw = abs(np.arctan2(r0.q[-1], r0.q[-2]))
    r1 = solve_static(m).tip_y - q0[-3]
    assert r1 == pytest.approx(r0.tip_y, rel=FS * (th0**2 + 2 * th0 * thw) / 2)


def test_imperfection_keys_are_exclusive():
    with pytest.raises(ConfigError, match="exclusive"):
        case_with(**{"imperfection.kappa0": 0.1, "imperfection.tip_offset": 0.01})


# ------------------------------------------------------------------------------------------
# damage
# ------------------------------------------------------------------------------------------
def test_damage_below_threshold_leaves_d_zero_and_results_unchanged():
    base = {"mesh.n_elements": 10}
    r0 = solve_static(make_model(**base))
    r1 = solve_static(make_model(**base, **{"damage.enabled": True, "damage.threshold": 1e-3}))
    assert r1.damage_history.shape[0] >= 10 and np.all(r1.damage_history == 0.0)
    # the same equilibrium by load stepping: within both solutions' Newton and round-off
    # bounds (adjoint of the residual); measured 2.0e-9 of the tip
    m0, m1 = (
        make_model(**base),
        make_model(**base, **{"damage.enabled": True, "damage.threshold": 1e-3}),
    )
    b0, b1 = (
        static_solution_error(mm, r.q, [tip_gradients(mm, r.q)["tip_y"]])[0]
        for mm, r in ((m0, r0), (m1, r1))
    )
    assert abs(r1.tip_y - r0.tip_y) <= b0 + b1
    # A model with damage always runs the element-major force kernel (damage rescales the
    # Gauss weights); below SOA_MIN_ELEMENTS the undamaged model does too, so the two runs
    # must agree bit for bit.
    small = {"mesh.n_elements": kernels.SOA_MIN_ELEMENTS - 1}
    m = make_model(**small)
    dtc = 2 / omega_max(m)[0]
    d0 = simulate_explicit(m, 0.05, 0.8 * dtc, dtc, progress=False)
    md = make_model(**small, **{"damage.enabled": True})
    d1 = simulate_explicit(md, 0.05, 0.8 * dtc, dtc, progress=False)
    assert np.array_equal(d0.tip_y, d1.tip_y)  # identical, bit for bit
    assert np.all(d1.damage_snap == 0.0)


def test_damage_above_threshold_grows_monotonically_and_softens():
    base = {"mesh.n_elements": 10}
    dmg = {"damage.enabled": True, "damage.threshold": 3e-5, "damage.softening": 2e-5}
    # the peak fibre strain at the clamp is M h / (2 EI) = 5.6e-5 > threshold
    r0 = solve_static(make_model(**base))
    r1 = solve_static(make_model(**base, **dmg))
    hist = r1.damage_history
    assert np.all(np.diff(hist, axis=0) >= 0.0)  # never decreases along the monotonic load
    assert hist[-1].max() > 0.1
    assert hist[-1][-1].max() == 0.0  # the lightly strained tip element stays intact
    assert r1.tip_y < r0.tip_y  # deflection grows
    m = make_model(**base, **dmg)
    dtc = 2 / omega_max(make_model(**base))[0]
    d1 = simulate_explicit(m, 0.1, 0.8 * dtc, dtc, progress=False)
    assert np.all(np.diff(d1.damage_snap, axis=0) >= 0.0)
    assert d1.damping_work[-1] > 0.0  # released energy is booked as dissipation


def test_damage_needs_shared_integration_points():
    with pytest.raises(ConfigError, match="n_gauss_axial"):
        case_with(**{"damage.enabled": True, "mesh.n_gauss_axial": 4})
