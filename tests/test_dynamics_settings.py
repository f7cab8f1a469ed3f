"""DynamicsSettings: defaults from the case, which options apply to which integrator, ranges,
the time-step policy, and the front door simulate()."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from ancf_beam.config import INTEGRATORS
from ancf_beam.solvers import DynamicsSettings, SettingsError, simulate
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.implicit import simulate_implicit
from ancf_beam.solvers.modal import modal_analysis, omega_max
from ancf_beam.solvers.schemes import NEWTON_DEFAULTS
from ancf_beam.studies.bounds import EPS
from conftest import case_with, make_model


def test_defaults_come_from_the_case_and_apply_per_integrator():
    case = case_with(**{"dynamics.rho_inf": 0.6, "dynamics.t_end": 0.3})
    ex = DynamicsSettings.from_case(case)
    assert ex.integrator == "central-difference" and ex.is_explicit and ex.scheme is None
    assert (ex.t_end, ex.dt, ex.dt_safety, ex.energy_growth_limit) == (0.3, None, 0.8, 0.5)
    assert ex.beta is ex.rho_inf is ex.max_iter is ex.newton is None
    ga = DynamicsSettings.from_case(case, integrator="generalized-alpha")
    assert ga.rho_inf == 0.6 and ga.beta is None and ga.energy_growth_limit is None
    assert ga.dt_safety is None  # implicit: only a dt_safety given for the run counts
    assert {k: getattr(ga, k) for k in NEWTON_DEFAULTS} == NEWTON_DEFAULTS
    assert ga.scheme.alpha_f == pytest.approx(0.6 / 1.6)
    nm = DynamicsSettings.from_case(case, integrator="newmark", gamma=0.6)
    assert (nm.beta, nm.gamma, nm.rho_inf) == (0.25, 0.6, None)
    assert set(INTEGRATORS) == {"central-difference", "bdf1", "newmark", "generalized-alpha"}


@pytest.mark.parametrize(
    "overrides,options,needle",
    [
        ({"integrator": "rk4"}, ("integrator",), "unknown integrator 'rk4'"),
        ({"beta": 0.3}, ("beta",), "applies to newmark, not to central-difference"),
        ({"max_iter": 5}, ("max_iter",), "applies to the implicit integrators"),
        ({"integrator": "bdf1", "rho_inf": 0.5}, ("rho_inf",), "generalized-alpha"),
        ({"integrator": "newmark", "energy_growth_limit": 1.0}, ("energy_growth_limit",), ""),
        ({"integrator": "generalized-alpha", "rho_inf": 1.5}, ("rho_inf",), "in [0, 1]"),
        ({"integrator": "newmark", "beta": 0.0}, ("beta",), "(0, 0.5]"),  # dynamics.newmark_beta
        ({"integrator": "bdf1", "max_halvings": -1}, ("max_halvings",), "integer >= 0"),
        ({"integrator": "bdf1", "tol": 1.0}, ("tol",), "in (0, 1)"),
        ({"integrator": "bdf1", "predictor": "linear"}, ("predictor",), "auto"),
        ({"dt_safety": 1.5}, ("dt_safety",), "in (0, 1]"),
        ({"integrator": "bdf1", "dt_safety": -1.0}, ("dt_safety",), "> 0"),
        ({"dt": 1e-6, "dt_safety": 0.5}, ("dt", "dt_safety"), "not both"),
        ({"t_end": 0.0}, ("t_end",), "> 0"),
        ({"damping": (-1.0, 0.0)}, ("damping",), ">= 0"),
    ],
)
def test_bad_settings_name_the_option(overrides, options, needle):
    with pytest.raises(SettingsError) as info:
        DynamicsSettings.from_case(case_with(), **overrides)
    err = info.value
    assert isinstance(err, ValueError) and err.options == options
    assert needle in str(err) and all(o in str(err) for o in options)
    flags = err.render(lambda o: "--" + o.replace("_", "-"))
    assert all("--" + o.replace("_", "-") in flags for o in options)


def test_direct_construction_is_validated_too():
    ok = DynamicsSettings.from_case(case_with())
    with pytest.raises(SettingsError, match="sample_dt"):
        dataclasses.replace(ok, sample_dt=0.0)
    with pytest.raises(SettingsError, match="max_iter must be given"):
        dataclasses.replace(ok, integrator="bdf1", energy_growth_limit=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ok.dt = 1.0


def test_time_step_policy():
    m = make_model(**{"mesh.n_elements": 4})
    dt_cr = 2.0 / omega_max(m)[0]
    t1 = 2 * math.pi / modal_analysis(m, n_modes=1).omega[0]
    ex = DynamicsSettings.from_case(m.case)
    # the same formulas: a few roundings (4 eps)
    assert ex.time_step(m) == pytest.approx((0.8 * dt_cr, dt_cr), rel=4 * EPS)
    assert DynamicsSettings.from_case(m.case, dt=1e-6).time_step(m, 1e-5) == (1e-6, 1e-5)
    with pytest.raises(SettingsError, match="exceeds the critical step"):
        DynamicsSettings.from_case(m.case, dt=2e-5).time_step(m, 1e-5)
    assert DynamicsSettings.from_case(m.case, dt=2e-5, force=True).time_step(m) == (2e-5, None)
    # one rule for every integrator: dt given > dt_safety given > dynamics.dt > default
    case_dt = m.case.with_overrides({"dynamics.dt": 3e-6})
    assert DynamicsSettings.from_case(case_dt, dt_safety=0.5).time_step(m, 1e-5)[0] == 5e-6
    assert DynamicsSettings.from_case(case_dt).time_step(m, 1e-5)[0] == 3e-6
    # implicit: dt given > dt_safety given > dynamics.dt > T1 / 100
    im = {"integrator": "bdf1"}
    assert DynamicsSettings.from_case(case_dt, dt=1e-3, **im).time_step(m)[0] == 1e-3
    assert DynamicsSettings.from_case(case_dt, dt_safety=20, **im).time_step(m, 1e-5)[0] == (
        pytest.approx(2e-4, rel=4 * EPS)
    )
    assert DynamicsSettings.from_case(case_dt, **im).time_step(m) == (3e-6, None)
    dt, _ = DynamicsSettings.from_case(m.case, **im).time_step(m)
    assert dt == pytest.approx(t1 / 100, rel=4 * EPS)


def test_front_door_is_the_keyword_forms():
    m = make_model(**{"mesh.n_elements": 4})
    dt_cr = 2.0 / omega_max(m)[0]
    a = simulate(m, DynamicsSettings.from_case(m.case, t_end=0.01), progress=False)
    b = simulate_explicit(m, 0.01, 0.8 * dt_cr, dt_cr, progress=False)
    np.testing.assert_array_equal(a.tip_y, b.tip_y)
    settings = DynamicsSettings.from_case(
        m.case, integrator="newmark", t_end=0.02, dt=1e-3, damping=(0.0, 0.0)
    )
    c = simulate(m, settings, progress=False)
    d = simulate_implicit(m, 0.02, 1e-3, "newmark", progress=False)
    np.testing.assert_array_equal(c.q_snap, d.q_snap)
    assert c.newton_stats == d.newton_stats and c.newton_stats.factorizations >= 1
