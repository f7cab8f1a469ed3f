"""Unit tests of the defect-family studies: family classification, frozen damage, the curved
linear reference, damage-aware validation, the response study and identification."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ancf_beam.analyses import run_modal, run_simulate, run_static
from ancf_beam.beam.model import BeamModel
from ancf_beam.solvers.modal import modal_analysis
from ancf_beam.solvers.static import solve_static
from ancf_beam.studies.bounds import EPS, modal_roundoff
from ancf_beam.studies.checks import (
    OPTIMISER_STEP,
    check,
    checks_dataset,
    extend_checks,
)
from ancf_beam.studies.defects import (
    convergence_expected,
    curved_linear_static_tip,
    families,
    family_label,
    frozen_damage_model,
    straight_elastic,
)
from ancf_beam.studies.identification import coverage_tolerance, run_identification_study
from ancf_beam.studies.response import run_response
from ancf_beam.studies.validation import run_family_validation
from conftest import EI, FS, L, Q, case_with

#: Error bound (m) of curved_linear_static_tip's trapezoidal quadrature (4001 points) for the
#: straight uniform beam: the moments are exact (polynomial integrands of degree 1), the tip
#: integral of M (L - s) / EI = q (L - s)^3 / (2 EI) errs by at most L h^2 / 12 max|f''| =
#: L h^2 / 12 x 3 q L / EI (1.7e-10 m; measured 8.7e-11, the leading Euler-Maclaurin term)
STRAIGHT_QUADRATURE = L * (L / 4000) ** 2 / 12 * 3 * Q * L / EI

DAMAGE = {"damage.enabled": True, "damage.threshold": 3e-5, "damage.softening": 2e-5}


def test_families_and_labels():
    assert families(case_with()) == []
    assert family_label(case_with()) == "uniform"
    c = case_with(**{"defect.lam": 0.3, "defect.rho.lam": 0.2, "imperfection.kappa0": 0.1})
    assert families(c) == ["E", "density", "imperfection"]
    assert not straight_elastic(c)
    t = case_with(**{"defect.table": [[0, 1.0], [1, 0.5]]})
    assert families(t) == ["table"] and straight_elastic(t)
    d = case_with(**DAMAGE)
    assert "damage" in families(d)
    assert convergence_expected(d)[0] is False
    assert convergence_expected(t) == (True, "")


def test_frozen_damage_scales_frequencies_exactly():
    case = case_with(**{"mesh.n_elements": 6})
    model = BeamModel(case)
    om0 = modal_analysis(model, n_modes=3).omega
    d = np.full(model.damage.shape, 0.19)
    om = modal_analysis(frozen_damage_model(case, d), n_modes=3).omega
    # both stiffnesses scaled by 0.81: omega by 0.9, exactly but for both runs' Ritz round-off
    # (32 eps n^2 each) and a few roundings
    np.testing.assert_allclose(om, om0 * math.sqrt(0.81), rtol=2 * modal_roundoff(6) + 8 * EPS)
    damaged = case_with(**{**DAMAGE, "mesh.n_elements": 6})
    assert not frozen_damage_model(damaged, d).case.damage.enabled


def test_curved_linear_static_tip():
    """Straight: the closed form within the quadrature's error (:data:`STRAIGHT_QUADRATURE`).
    Curved (kappa0 = 0.3): the nonlinear static
    displacement differs from the linear one by the geometric nonlinearity, quadratic in the
    load: estimated from the solution at half the load as FS x 2 |u(g) - 2 u(g/2)| (the
    nonlinear part nl(g) = 4 nl(g/2)), plus the quadrature's error (order 2: 4/3 of its change
    from 2001 points, x FS); the stretch (inextensible reference) is 3e-6 of dy. Measured
    3.8e-4 of dy and 4.2e-3 of dx (err/bound 0.50: the estimate is the nonlinear part)."""
    base = case_with()
    dx, dy = curved_linear_static_tip(base)
    assert abs(dy + Q * L**4 / (8 * EI)) <= STRAIGHT_QUADRATURE
    assert dx == 0.0
    over = {"imperfection.kappa0": 0.3, "mesh.n_elements": 20}
    case = case_with(**over)
    model = BeamModel(case)
    ref = model.reference()
    st = solve_static(model)
    half = solve_static(BeamModel(case_with(**over, **{"load.g": 0.5 * case.load.g})))
    dx, dy = curved_linear_static_tip(case)
    dx2, dy2 = curved_linear_static_tip(case, n=2001)
    nl_y = 2 * abs((st.tip_y - ref[-3]) - 2 * (half.tip_y - ref[-3]))
    nl_x = 2 * abs((st.tip_x - ref[-4]) - 2 * (half.tip_x - ref[-4]))
    assert abs(st.tip_y - ref[-3] - dy) <= FS * (nl_y + 4 / 3 * abs(dy - dy2))
    assert abs(st.tip_x - ref[-4] - dx) <= FS * (nl_x + 4 / 3 * abs(dx - dx2))


def test_extend_checks_recounts():
    ds = checks_dataset([check("a", 1.0, 1.0, 0.1)])
    ds = ds.assign(extra=("x", np.arange(3)))
    ds.attrs["keep"] = "yes"
    out = extend_checks(ds, [check("b", 1.0, 2.0, 0.1)], note="n")
    assert out.attrs["n_checks"] == 2 and out.attrs["n_fail"] == 1
    assert out.attrs["keep"] == "yes" and out.attrs["note"] == "n"
    assert list(out["name"].values) == ["a", "b"]
    assert "extra" in out


@pytest.fixture(scope="module")
def damage_runs():
    case = case_with(**{**DAMAGE, "mesh.n_elements": 6})
    st = run_static(case)[1]
    mo = run_modal(case)[1]
    si = run_simulate(case, t_end=0.6, progress=False)[1]
    return case, st, mo, si


def test_damage_validation_uses_the_applicable_checks(damage_runs):
    case, st, mo, si = damage_runs
    # the default tolerances: error bounds computed for this case (6 elements: the uniform
    # counterpart's omega_3 is 1.8e-3 off the closed form, inside its mesh's estimate)
    va = run_family_validation(case, st, mo, si)
    names = list(va["name"].values)
    assert va.attrs["dynamics_checks"] == "damage"
    assert any("final damage frozen" in n for n in names)
    assert any("observed order" in n and "damage" in n for n in names)
    assert not any(n.startswith("explicit run: mean tip over whole periods") for n in names)
    assert va.attrs["n_fail"] == 0, [
        (n, s) for n, s in zip(names, va["status"].values, strict=True) if s != "PASS"
    ]
    assert "exact_x" in va


def test_elastic_validation_is_unchanged():
    from ancf_beam.studies.validation import run_validation

    case = case_with(**{"mesh.n_elements": 6, "defect.lam": 0.4})
    st, mo = run_static(case)[1], run_modal(case)[1]
    a = run_family_validation(case, st, mo)
    b = run_validation(case, st, mo)
    assert list(a["name"].values) == list(b["name"].values)
    assert a.attrs["dynamics_checks"] == "elastic"


def test_response_study(damage_runs):
    case, st, mo, si = damage_runs
    rs = run_response(case, st, si)
    assert rs.attrs["study"] == "response" and rs.attrs["families"] == "damage"
    for var, unit in {
        "peak_omega": "rad/s",
        "static_dkappa": "1/m",
        "static_EI": "N m^2",
        "spectrum_psd": "m^2/Hz",
        "damage_final": "1",
        "omega_damaged_final": "rad/s",
        "static_gini": "1",
    }.items():
        assert rs[var].attrs["units"] == unit, var
    # damage lowers the frequencies; the damaged beam's omega_1 is what the tip shows
    assert float(rs["omega_damaged_final"][0]) < float(mo["omega"][0])
    assert float(rs["damage_final"].max()) >= float(rs["damage_static"].max())
    c6 = case_with(**{"mesh.n_elements": 6})
    u = run_response(c6, *_elastic(6))
    # the uniform beam's metrics of kappa ~ (L - x)^2 within FS x 4/3 their change to the mesh
    # four times finer plus the static geometric nonlinearity (as the case report's checks)
    m6 = BeamModel(c6)
    tip = solve_static(m6).tip_y
    lin = m6.reference()[-3] + m6.tangent_solve(m6.reference(), m6.gravity_free)[-3]
    nonlinearity = abs(tip - lin) / abs(tip)
    for key, exact in (("peak_to_mean", 3.0), ("gini", 0.5)):
        value, fine = float(u[f"static_{key}"]), float(u[f"static_{key}_fine"])
        bound = FS * 4 / 3 * abs(value - fine) + nonlinearity * exact
        assert abs(value - exact) <= bound, key
    assert abs(float(u["linear_tip_dy"]) + Q * L**4 / (8 * EI)) <= STRAIGHT_QUADRATURE


def _elastic(ne):
    case = case_with(**{"mesh.n_elements": ne})
    return run_static(case)[1], run_simulate(case, t_end=0.2, progress=False)[1]


def test_coverage_tolerance():
    from scipy.stats import binom

    assert coverage_tolerance(0, 0.95) == 1.0
    tol = coverage_tolerance(100, 0.954)
    # the definition: the largest count whose lower tail is below 1e-3, as a relative shortfall
    k = binom.ppf(1e-3, 100, 0.954)
    assert binom.cdf(k - 1, 100, 0.954) < 1e-3 <= binom.cdf(k, 100, 0.954)
    assert tol == pytest.approx((0.954 - k / 100) / 0.954, rel=4 * EPS)
    assert coverage_tolerance(1000, 0.954) < tol


def test_identification_study_small():
    case = case_with(**{"mesh.n_elements": 6})
    ds = run_identification_study(case, [0.6], [1.0], draws=2, truth_mesh=12)
    assert ds.attrs["study"] == "identification"
    assert ds.sizes["truth"] == 1 and ds.sizes["draw"] == 2
    # within the first-order bias the forward model's error explains (the identification
    # report's bound)
    bias = (
        FS
        * float(ds["clean_lam_std"][0])
        * float(ds["model_discrepancy"][0])
        / float(ds.attrs["sigma_rel"])
        + OPTIMISER_STEP
    )
    assert abs(float(ds["clean_lam_est"][0]) - 0.6) <= bias
    assert np.all(ds["control_identifiable"].values == 0)
    assert ds["lam_z"].attrs["units"] == "1"
    again = run_identification_study(case, [0.6], [1.0], draws=2, truth_mesh=12)
    np.testing.assert_array_equal(ds["omega_measured"].values, again["omega_measured"].values)
