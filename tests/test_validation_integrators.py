"""The per-case validation of a dynamic run with any integrator and Rayleigh damping.

A case whose ``dynamics`` section names an implicit integrator crashed the pipeline's
validation job (it asserted the explicit step ``dt_safety x dt_critical``), and a case with
``damping_alpha`` or ``damping_beta`` reported FAIL: the linear references were the undamped
central differences. The references are now the run's own scheme, step and damping on the
linear discrete model (:func:`ancf_beam.studies.integrators.mode_history`), checked here
against the closed form, and the checks can still fail: a run compared with another scheme's
linear model does.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from ancf_beam.analyses import run_modal, run_simulate, run_static
from ancf_beam.studies.checks import case_checks, case_run
from ancf_beam.studies.integrators import mode_history
from ancf_beam.studies.validation import run_family_validation
from conftest import HYPOTHESIS_SETTINGS, case_with

#: 6 elements: the runs take a fraction of a second; 0.3 s holds whole first-mode periods in
#: its second half (T1 = 0.06 s) for the mean-tip check
BASE = {"mesh.n_elements": 6, "dynamics.t_end": 0.3}


def _validate(overrides):
    case = case_with(**{**BASE, **overrides})
    st_ds, mo_ds = run_static(case)[1], run_modal(case)[1]
    si_ds = run_simulate(case, progress=False)[1]
    return case, st_ds, mo_ds, si_ds, run_family_validation(case, st_ds, mo_ds, si_ds)


def _dynamic_rows(va):
    return {
        str(n): (str(s), float(e), float(t))
        for n, s, e, t in zip(
            va["name"].values,
            va["status"].values,
            va["rel_error"].values,
            va["tolerance"].values,
            strict=True,
        )
        if " run: " in str(n)
    }


@pytest.mark.parametrize(
    ("overrides", "label", "energy"),
    [
        ({"dynamics.integrator": "generalized-alpha"}, "generalized-alpha run", True),
        ({"dynamics.integrator": "newmark"}, "newmark run", True),
        ({"dynamics.integrator": "bdf1"}, "bdf1 run", False),
        ({"dynamics.damping_alpha": 2.0}, "explicit run", True),
        ({"dynamics.damping_beta": 1.0e-4}, "explicit run", True),
        (
            {"dynamics.integrator": "generalized-alpha", "dynamics.damping_alpha": 2.0},
            "generalized-alpha run",
            True,
        ),
    ],
)
def test_implicit_and_damped_runs_pass_their_dynamic_checks(overrides, label, energy):
    *_, va = _validate(overrides)
    rows = _dynamic_rows(va)
    assert all(name.startswith(label) for name in rows), list(rows)
    # energy (not for BDF1: it dissipates the vibration within a few periods at its step),
    # mean tip over whole periods, tip history over the first period
    assert len(rows) == 2 + energy, list(rows)
    assert any("energy drift" in n for n in rows) == energy
    assert va.attrs["n_fail"] == 0, {n: r for n, r in rows.items() if r[0] != "PASS"}


def test_a_run_against_another_schemes_linear_model_fails():
    """The first-period check sees the scheme: the generalized-alpha run (rho_inf = 0.8)
    against the linear model of rho_inf = 0.3, and the BDF1 run against Newmark's, fail."""
    case, st_ds, mo_ds, si_ds, va = _validate({"dynamics.integrator": "generalized-alpha"})
    first = next(n for n in _dynamic_rows(va) if "first period" in n)
    assert _dynamic_rows(va)[first][0] == "PASS"
    wrong = si_ds.copy()
    wrong.attrs["rho_inf"] = 0.3
    rows = _dynamic_rows(run_family_validation(case, st_ds, mo_ds, wrong))
    assert rows[first][0] == "FAIL", rows[first]
    case, st_ds, mo_ds, si_ds, _ = _validate({"dynamics.integrator": "bdf1"})
    wrong = si_ds.copy()
    wrong.attrs.update(integrator="newmark", beta=0.25, gamma=0.5)
    rows = _dynamic_rows(run_family_validation(case, st_ds, mo_ds, wrong))
    row = next(r for n, r in rows.items() if "first period" in n)
    assert row[0] == "FAIL", row


@settings(max_examples=4, **HYPOTHESIS_SETTINGS)
@given(
    integrator=st.sampled_from(["central-difference", "generalized-alpha", "newmark"]),
    alpha=st.floats(0.0, 4.0),
    lam=st.floats(0.0, 0.6),
    n=st.floats(0.5, 3.0),
)
def test_graded_damped_runs_pass_for_any_integrator(integrator, alpha, lam, n):
    """Over the documented ranges (lam in [0, 0.6], n in [0.5, 3]) and mass-proportional
    damping up to 4 1/s, every integrator's run passes the dynamic checks."""
    *_, va = _validate(
        {
            "dynamics.integrator": integrator,
            "dynamics.damping_alpha": alpha,
            "defect.lam": lam,
            "defect.n": n,
        }
    )
    rows = _dynamic_rows(va)
    assert len(rows) == 3
    assert va.attrs["n_fail"] == 0, {k: r for k, r in rows.items() if r[0] != "PASS"}


@pytest.mark.parametrize("wdt", [0.05, 0.7, 1.9])
def test_mode_history_of_central_differences_is_the_discrete_cosine(wdt):
    """Undamped central differences from rest: ``u_n = -cos(n theta)``, ``cos theta = 1 -
    (w dt)^2 / 2`` (closed form). Bound: the n-th power of the eigenvalues, round-off growing
    like n eps times the eigenvector condition (about 1 / sin theta)."""
    steps = np.arange(0, 400)
    u = mode_history("central-difference", 1.0, wdt, 0.0, steps, {})
    theta = 2.0 * math.asin(0.5 * wdt)
    exact = -np.cos(steps * theta)
    bound = 8 * np.finfo(float).eps * steps.max() / math.sin(theta)
    assert np.max(np.abs(u - exact)) <= bound


@pytest.mark.parametrize(
    "overrides",
    [
        {"dynamics.integrator": "generalized-alpha", "dynamics.damping_alpha": 2.0},
        {"dynamics.integrator": "newmark"},
        {"dynamics.integrator": "bdf1"},
        {"dynamics.damping_alpha": 2.0},
    ],
)
def test_case_report_spectral_peak_takes_the_runs_scheme_and_damping(overrides):
    """The per-case report's spectral peak: with generalized-alpha at ``alpha = 2 1/s`` (the
    seed beam, 20 elements, 2 s) the central differences' frequency shift made the tolerance
    too small (error/tolerance 1.1). Now the shift and the estimator's error on a decaying tone
    are those of the run's scheme, step and damping on the linear first mode."""
    case = case_with(**{"defect.lam": 0.3, **overrides})
    st_ds, mo_ds = run_static(case)[1], run_modal(case)[1]
    si_ds = run_simulate(case, progress=False)[1]
    va = run_family_validation(case, st_ds, mo_ds, si_ds)
    run = case_run(case.name, st_ds, mo_ds, si_ds, va, xr.Dataset(attrs={"families": "E"}))
    assert run.integrator == si_ds.attrs["integrator"]
    (row,) = [r for r in case_checks(run, xr.Dataset()) if r["check"].startswith("spectral")]
    assert row["status"] == "PASS", row
    assert "central differences" not in row["note"]
    if overrides.get("dynamics.integrator") == "generalized-alpha":  # the check discriminates:
        as_before = dataclasses.replace(run, integrator="central-difference", damping=(0.0, 0.0))
        (old,) = [
            r for r in case_checks(as_before, xr.Dataset()) if r["check"].startswith("spectral")
        ]
        assert old["status"] == "FAIL", old  # measured error/tolerance 1.10


def test_damage_with_an_implicit_integrator_passes_its_damage_checks():
    """Damage under generalized-alpha: the damage rows (first-order energy balance, observed
    order, equilibrium with the final damage frozen, irreversibility) apply to any integrator
    (the staggered damage update sets the order) and are named after it."""
    damage = {"damage.threshold": 3.0e-5, "damage.softening": 2.0e-5}
    case = case_with(
        **{**BASE, **damage, "damage.enabled": True, "dynamics.integrator": "generalized-alpha"}
    )
    st_ds, mo_ds = run_static(case)[1], run_modal(case)[1]
    si_ds = run_simulate(case, t_end=0.6, progress=False)[1]
    va = run_family_validation(case, st_ds, mo_ds, si_ds)
    names = [str(n) for n in va["name"].values]
    assert va.attrs["dynamics_checks"] == "damage"
    assert sum(n.startswith("generalized-alpha run with damage") for n in names) == 2, names
    assert not any(n.startswith("explicit run") for n in names)
    assert va.attrs["n_fail"] == 0
