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
from conftest import L, case_with, make_model

FAMILIES = {
    "density": {"defect.rho.lam": 0.5, "defect.rho.n": 1.0},
    "height": {"defect.height.lam": 0.4, "defect.height.n": 1.5},
    "width": {"defect.width.lam": 0.5, "defect.width.n": 2.0},
    "combined": {"defect.lam": 0.3, "defect.rho.lam": 0.3, "defect.height.lam": 0.2},
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_graded_family_static_matches_exact_quadrature(family):
    """The small-deflection model (the linear reference's own physics) against the exact
    quadrature of the graded EI(x) and load q(x), 20 elements: measured up to 4.3e-7 (height);
    tolerance 4e-6. (The nonlinear tip would differ by the geometric nonlinearity, ~2e-6.)"""
    over = {**FAMILIES[family], "mesh.n_elements": 20}
    p = SectionProfile(case_with(**over))
    exact = exact_graded_static(L, p.EI, p.q)["tip_deflection"]  # graded EI(x) and load q(x)
    tip = solve_static(make_model(**over, **{"mesh.strain": "linear"})).tip_y
    assert tip == pytest.approx(exact, rel=4e-6)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_graded_family_frequencies_match_stepped_transfer_matrix(family):
    """40 elements against the stepped beam Richardson-extrapolated from 200 and 400 segments
    (the stepped beam alone is O(1/N^2): 9.5e-6 at 200): measured 1.1e-6; tolerance 1e-5."""
    over = {**FAMILIES[family], "mesh.n_elements": 40}
    p = SectionProfile(case_with(**over))
    f1 = np.asarray(stepped_frequencies(L, p.EI, p.rhoA, 200, 3))
    f2 = np.asarray(stepped_frequencies(L, p.EI, p.rhoA, 400, 3))
    omega = modal_analysis(make_model(**over), n_modes=3).omega
    np.testing.assert_allclose(omega, (4 * f2 - f1) / 3, rtol=1e-5)


def test_density_gradient_changes_load_and_mass_not_stiffness():
    p0 = SectionProfile(case_with())
    p = SectionProfile(case_with(**FAMILIES["density"]))
    x = np.linspace(0, L, 11)
    np.testing.assert_allclose(p.EI(x), p0.EI(x), rtol=1e-14)  # measured 0
    np.testing.assert_allclose(p.q(x), p0.q(x) * (1 - 0.5 * x / L), rtol=1e-14)  # 1.4e-16


def test_section_height_gradient_scales_area_and_inertia():
    p0 = SectionProfile(case_with())
    p = SectionProfile(case_with(**FAMILIES["height"]))
    x = np.linspace(0, L, 11)
    f = 1 - 0.4 * (x / L) ** 1.5
    np.testing.assert_allclose(p.A(x), p0.A(x) * f, rtol=1e-14)  # measured 2.1e-16
    np.testing.assert_allclose(p.I(x), p0.I(x) * f**3, rtol=1e-14)  # measured 2.3e-16


def test_table_profile_reproduces_power_law():
    xs = np.linspace(0, 1, 201)
    table = [[float(a), float(1 - 0.6 * a**2)] for a in xs]
    t_tab = solve_static(make_model(**{"defect.table": table})).tip_y
    t_pow = solve_static(make_model(**{"defect.lam": 0.6, "defect.n": 2.0})).tip_y
    assert t_tab == pytest.approx(t_pow, rel=1e-5)  # 201-point table: measured 9.7e-7
    # measured-profile table for density, combined with a power law on E
    c = case_with(**{"defect.lam": 0.2, "defect.rho.table": [[0, 1.0], [0.5, 0.8], [1, 0.9]]})
    p = SectionProfile(c)
    assert p.rho(0.25) == pytest.approx(7850 * 0.9, rel=1e-14)
    assert p.E(1.0) == pytest.approx(2.07e11 * 0.8, rel=1e-14)


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


@pytest.mark.parametrize("imp", IMPERFECT)
def test_curved_beam_without_gravity_stays_at_rest(imp):
    m = make_model(**{"mesh.n_elements": 10, "load.g": 0.0, **imp})
    q0 = m.reference()
    assert abs(q0[-3]) > 0.04  # it is really curved
    f = m.elastic_force(q0)
    assert np.abs(f).max() < 1e-6  # round-off (EA ~ 8e7 N)
    # the solver takes one Newton increment from the round-off residual: measured 5.6e-16 m
    # (one ulp of the coordinates); tolerance 5e-15
    assert np.abs(solve_static(m).q - q0).max() < 5e-15
    dtc = 2 / omega_max(m)[0]
    r = simulate_explicit(m, 0.02, 0.8 * dtc, dtc, progress=False)
    assert np.abs(r.tip_y - q0[-3]).max() < 1e-12
    assert r.kinetic.max() < 1e-18


def test_tip_offset_and_circular_arc_geometry():
    m = make_model(**{"mesh.n_elements": 8, "imperfection.tip_offset": 0.1})
    assert m.reference()[-3] == pytest.approx(0.1, abs=1e-12)
    k = 0.5
    m = make_model(**{"mesh.n_elements": 8, "imperfection.kappa0": k})
    x, y, a = m.tip(m.reference())
    assert (x, y, a) == pytest.approx(
        (np.sin(k * L) / k, (1 - np.cos(k * L)) / k, k * L), rel=1e-12
    )
    np.testing.assert_allclose(m.kap0, k, rtol=1e-3)  # interpolated arc: curvature ~ 1/R


def test_imperfect_beam_tangent_and_rigid_motion():
    m = make_model(**{"mesh.n_elements": 4, "imperfection.kappa0": 0.8, "material.E0": 2.07e8})
    rng = np.random.default_rng(3)
    q = m.reference() + rng.normal(0, 0.03, m.n_dof)
    k = m.tangent_dense(q, free=False)
    h = 1e-6
    kfd = np.column_stack(
        [
            -(m.elastic_force(q + h * e) - m.elastic_force(q - h * e)) / (2 * h)
            for e in np.eye(q.size)
        ]
    )
    assert np.abs(k - kfd).max() / np.abs(k).max() < 5e-10  # h = 1e-6: measured 5.3e-11
    c, s = np.cos(1.1), np.sin(1.1)
    qr = (m.reference().reshape(-1, 2) @ np.array([[c, -s], [s, c]]).T).ravel()
    assert m.strain_energy(qr) < 1e-26  # measured 8.5e-28 J


def test_mild_imperfection_barely_changes_gravity_deflection():
    r0 = solve_static(make_model()).tip_y
    m = make_model(**{"imperfection.tip_offset": 1e-3})
    r1 = solve_static(m).tip_y - m.reference()[-3]
    assert r1 == pytest.approx(r0, rel=1.1e-5)  # the 1 mm offset changes it by 1.1e-6


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
    assert r1.tip_y == pytest.approx(r0.tip_y, rel=2e-8)  # load stepping: measured 2.0e-9
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
