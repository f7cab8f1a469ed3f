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
from ancf_beam.studies.checks import (
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
from conftest import EI, L, Q, case_with

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
    np.testing.assert_allclose(om, om0 * math.sqrt(0.81), rtol=1e-10)
    damaged = case_with(**{**DAMAGE, "mesh.n_elements": 6})
    assert not frozen_damage_model(damaged, d).case.damage.enabled


def test_curved_linear_static_tip():
    dx, dy = curved_linear_static_tip(case_with())
    assert dy == pytest.approx(-Q * L**4 / (8 * EI), rel=1e-6)
    assert dx == 0.0
    case = case_with(**{"imperfection.kappa0": 0.3, "mesh.n_elements": 20})
    model = BeamModel(case)
    ref = model.reference()
    st = solve_static(model)
    dx, dy = curved_linear_static_tip(case)
    assert st.tip_y - ref[-3] == pytest.approx(dy, rel=2e-3)
    assert st.tip_x - ref[-4] == pytest.approx(dx, rel=2e-2)


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
    for var, unit in {"peak_omega": "rad/s", "static_dkappa": "1/m", "static_EI": "N m^2",
                      "spectrum_psd": "m^2/Hz", "damage_final": "1",
                      "omega_damaged_final": "rad/s", "static_gini": "1"}.items():  # fmt: skip
        assert rs[var].attrs["units"] == unit, var
    # damage lowers the frequencies; the damaged beam's omega_1 is what the tip shows
    assert float(rs["omega_damaged_final"][0]) < float(mo["omega"][0])
    assert float(rs["damage_final"].max()) >= float(rs["damage_static"].max())
    u = run_response(case_with(**{"mesh.n_elements": 6}), *_elastic(6))
    assert float(u["static_peak_to_mean"]) == pytest.approx(3.0, rel=0.01)
    assert float(u["static_gini"]) == pytest.approx(0.5, rel=0.01)
    assert float(u["linear_tip_dy"]) == pytest.approx(-Q * L**4 / (8 * EI), rel=1e-6)


def _elastic(ne):
    case = case_with(**{"mesh.n_elements": ne})
    return run_static(case)[1], run_simulate(case, t_end=0.2, progress=False)[1]


def test_coverage_tolerance():
    assert coverage_tolerance(0, 0.95) == 1.0
    tol = coverage_tolerance(100, 0.954)
    assert 0.03 < tol < 0.12
    assert coverage_tolerance(1000, 0.954) < tol


def test_identification_study_small():
    case = case_with(**{"mesh.n_elements": 6})
    ds = run_identification_study(case, [0.6], [1.0], draws=2, truth_mesh=12)
    assert ds.attrs["study"] == "identification"
    assert ds.sizes["truth"] == 1 and ds.sizes["draw"] == 2
    assert float(ds["clean_lam_est"][0]) == pytest.approx(0.6, abs=0.01)
    assert np.all(ds["control_identifiable"].values == 0)
    assert ds["lam_z"].attrs["units"] == "1"
    again = run_identification_study(case, [0.6], [1.0], draws=2, truth_mesh=12)
    np.testing.assert_array_equal(ds["omega_measured"].values, again["omega_measured"].values)
