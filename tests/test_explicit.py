"""Explicit central-difference dynamics against an independent linear modal superposition,
energy conservation, the critical time step, and the stability guard."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from scipy import integrate, optimize

from ancf_beam.cli import main
from ancf_beam.results import InstabilityError
from ancf_beam.solvers.critical import critical_dt, measure_dt_limit
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.modal import modal_analysis, omega_max
from ancf_beam.solvers.static import solve_static
from conftest import EI, RHOA, L, Q, make_model


# ------------------------------------------------------------------------------------------
# independent reference: continuous Euler-Bernoulli cantilever, modal superposition
# ------------------------------------------------------------------------------------------
def _beta_roots(k):
    f = lambda b: np.cos(b) + 1.0 / np.cosh(b)  # same roots as 1 + cos b cosh b  # noqa: E731
    return np.array(
        [optimize.brentq(f, (i - 0.5) * np.pi - 1, (i - 0.5) * np.pi + 1) for i in range(1, k + 1)]
    )


def _mode(beta, x):
    """Clamped-free mode shape, written without cancellation for large beta L:
    cosh(bx) - sigma sinh(bx) = exp(-bx) + (1 - sigma) sinh(bx)."""
    bl = beta * L
    bx = beta * x
    den = np.sinh(bl) + np.sin(bl)
    sigma = (np.cosh(bl) + np.cos(bl)) / den
    # (1 - sigma) sinh(bx) = (sin bl - cos bl - exp(-bl)) * sinh(bx) / den, ratio kept bounded
    ratio = 0.5 * (np.exp(bx - bl) - np.exp(-bx - bl)) / (den * np.exp(-bl))
    return (
        np.exp(-bx)
        + (np.sin(bl) - np.cos(bl) - np.exp(-bl)) * ratio
        - np.cos(bx)
        + sigma * np.sin(bx)
    )


def modal_amplitudes(n_modes=12):
    """(omega_k, static tip contribution c_k) of the uniform beam under its weight (downward)."""
    out = []
    for beta in _beta_roots(n_modes) / L:
        omega = beta**2 * np.sqrt(EI / RHOA)
        phi = lambda x, b=beta: _mode(b, x)  # noqa: E731
        num = -Q * integrate.quad(phi, 0, L, limit=400)[0]
        den = RHOA * integrate.quad(lambda x, b=beta: _mode(b, x) ** 2, 0, L, limit=400)[0]
        out.append((omega, num / (den * omega**2) * phi(L)))
    return out


def modal_tip_history(t, n_modes=12):
    """Tip deflection released from rest under gravity: sum_k c_k (1 - cos omega_k t)."""
    return sum(c * (1 - np.cos(w * t)) for w, c in modal_amplitudes(n_modes))


def test_modal_reference_reproduces_static_deflection():
    """Sanity of the independent reference: the static parts sum to -q L^4 / 8 EI."""
    # textbook roots to 7 digits (their rounding, 5.6e-8, limits this comparison)
    assert _beta_roots(3) == pytest.approx([1.875104, 4.694091, 7.854757], rel=1e-6)
    total = sum(c for _, c in modal_amplitudes(12))
    # 12 modes: the truncated series is 2.0e-7 short of the static deflection; tolerance 2e-6
    assert total == pytest.approx(-Q * L**4 / (8 * EI), rel=2e-6)
    # mode shapes are normalised so that phi(L) = +-2 (classical property; measured 1.6e-15)
    assert abs(_mode(_beta_roots(8)[-1] / L, L)) == pytest.approx(2.0, rel=1e-12)


@pytest.fixture(scope="module")
def uniform_run():
    m = make_model(**{"mesh.n_elements": 20})
    w = omega_max(m)[0]
    dtc = 2 / w
    t1 = 2 * np.pi / modal_analysis(m, 1).omega[0]
    n_per = int(np.ceil(0.5 / t1))
    res = simulate_explicit(m, n_per * t1 + 2e-4, 0.8 * dtc, dtc, sample_dt=2e-5, progress=False)
    return m, res, t1, n_per, dtc


def test_tip_history_matches_modal_superposition(uniform_run):
    _, res, t1, _, _ = uniform_run
    ref_t = np.linspace(0, t1, 20001)
    ref = modal_tip_history(ref_t)
    first = res.t <= t1
    i = int(np.argmin(res.tip_y[first]))
    j = int(np.argmin(ref))
    # the 20-element ANCF run against the continuous beam's 12-mode superposition: peak
    # measured 1.8e-7 (tolerance 2e-6), its time 1.3e-4 (the 2e-5 s sampling; tolerance 1.3e-3)
    assert res.tip_y[i] == pytest.approx(ref[j], rel=2e-6)
    assert res.t[i] == pytest.approx(ref_t[j], rel=1.3e-3)
    # and the whole first period, point by point: measured 1.3e-5 of the peak; tol. 1.3e-4
    ref_on_samples = modal_tip_history(res.t[first])
    assert np.abs(res.tip_y[first] - ref_on_samples).max() < 1.3e-4 * abs(ref[j])
    # the dynamic peak is not exactly twice the static value
    assert abs(ref[j]) != pytest.approx(2 * Q * L**4 / (8 * EI), rel=1e-3)


def test_mean_over_whole_periods_is_static_and_period_is_first_mode(uniform_run):
    m, res, t1, n_per, _ = uniform_run
    assert n_per * t1 >= 0.5
    window = res.t <= n_per * t1
    mean = np.trapezoid(res.tip_y[window], res.t[window]) / res.t[window][-1]
    static = solve_static(m).tip_y
    assert mean == pytest.approx(static, rel=2.2e-4)  # measured 2.2e-5
    y = res.tip_y[window] - mean
    s = np.signbit(y)
    idx = np.nonzero(s[1:] != s[:-1])[0]
    tc = res.t[idx] - y[idx] * (res.t[idx + 1] - res.t[idx]) / (y[idx + 1] - y[idx])
    period = 2 * (tc[-1] - tc[0]) / (len(tc) - 1)
    # zero crossings of the sampled record: measured 5.0e-5; tolerance 5e-4
    assert period == pytest.approx(2 * np.pi / (1.875104**2 * np.sqrt(EI / RHOA)), rel=5e-4)


def test_energy_conservation_and_second_order_drift():
    m = make_model(**{"mesh.n_elements": 20})
    dtc = 2 / omega_max(m)[0]
    r1 = simulate_explicit(m, 0.5, 0.8 * dtc, dtc, progress=False)
    r2 = simulate_explicit(m, 0.5, 0.4 * dtc, dtc, progress=False)
    assert r1.energy_drift_rel < 1.1e-7  # measured 1.1e-8
    ratio = r1.energy_drift_rel / r2.energy_drift_rel
    assert 3.8 < ratio < 4.2, (r1.energy_drift_rel, r2.energy_drift_rel)  # measured 3.996
    # the bookkeeping is real: strain energy and gravity potential are both large
    assert r1.strain.max() > 0.5 * r1.kinetic.max()
    assert r1.gravity.min() < -r1.kinetic.max()


@pytest.mark.parametrize("ne", [5, 10, 20, 40])
def test_predicted_critical_step_matches_measured(ne):
    m = make_model(**{"mesh.n_elements": ne})
    dtc = 2 / omega_max(m)[0]
    measured = measure_dt_limit(m, dtc, steps=2500, rel_tol=5e-3)
    # measured up to 2.9e-3 below; the bisection resolution (5e-3) bounds it: tolerance 1e-2
    assert measured == pytest.approx(dtc, rel=1e-2)


def test_critical_dt_regimes_and_bounds():
    res = {
        ne: critical_dt(make_model(**{"mesh.n_elements": ne}), fit_meshes=(20, 40, 80))
        for ne in (5, 10, 40, 80)
    }
    for c in res.values():
        assert c.dt_element_bound <= c.dt_critical * (1 + 1e-9)
    assert res[5].governing_mode == "axial" and res[10].governing_mode == "axial"
    assert res[40].governing_mode == "bending" and res[80].governing_mode == "bending"
    # axial regime: dt ~ l_e ; bending regime: dt ~ l_e^2
    # measured 4.8e-5 (axial: l_e); 5.3e-15 (bending: l_e^2 exactly on fine uniform meshes)
    assert res[5].dt_critical / res[10].dt_critical == pytest.approx(2.0, rel=5e-4)
    assert res[40].dt_critical / res[80].dt_critical == pytest.approx(4.0, rel=1e-10)
    # the formula's C is fitted on 20-160 elements: measured 1.5e-12 at 80
    assert res[80].dt_formula == pytest.approx(res[80].dt_critical, rel=1e-10)


def test_unstable_run_raises_clear_error():
    m = make_model(**{"mesh.n_elements": 10})
    dtc = 2 / omega_max(m)[0]
    with pytest.raises(InstabilityError) as err:
        simulate_explicit(m, 0.05, 1.2 * dtc, dtc, progress=False)
    msg = str(err.value)
    for word in ["step", "t =", "dt =", "critical dt", f"{dtc:.4e}"]:
        assert word in msg


def test_cli_refuses_dt_above_critical_and_force_fails_cleanly(capsys, tmp_path):
    out = tmp_path / "run.nc"
    base = [
        "simulate",
        "--t-end",
        "0.02",
        "--json",
        "--out",
        str(out),
        "--set",
        "mesh.n_elements=10",
    ]
    code = main(base + ["--dt", "1e-5"])
    o, e = capsys.readouterr()
    assert code == 2 and "exceeds the critical step" in e and o == ""
    assert not out.exists()
    dtc = 2 / omega_max(make_model(**{"mesh.n_elements": 10}))[0]
    code = main(base + ["--dt", f"{1.2 * dtc:.6e}", "--force"])
    o, e = capsys.readouterr()
    assert code == 1 and "unstable" in e and "critical dt" in e and o == ""
    assert list(tmp_path.iterdir()) == []


def test_cli_simulate_json_fields(capsys, tmp_path):
    out = tmp_path / "run.nc"
    code = main(["simulate", "--t-end", "0.05", "--json", "--quiet", "--out", str(out)])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    for k in [
        "tip_y_min",
        "t_at_tip_y_min",
        "tip_y_final",
        "tip_y_mean",
        "energy_drift_rel",
        "steps",
        "dt",
        "dt_critical",
        "wall_s",
    ]:
        assert k in d
    assert d["dt"] == pytest.approx(0.8 * d["dt_critical"], rel=1e-12)
    import xarray as xr

    with xr.open_dataset(out) as ds:
        assert ds["tip_y"].attrs["units"] == "m" and ds["time"].attrs["units"] == "s"
        assert ds.attrs["study"] == "simulate" and ds.attrs["dt"] == d["dt"]


def test_cli_critical_dt_json(capsys):
    code = main(["critical-dt", "--json", "--measure", "--set", "mesh.n_elements=10"])
    d = json.loads(capsys.readouterr().out)
    assert code == 0
    for k in [
        "omega_max",
        "dt_critical",
        "dt_element_bound",
        "dt_formula",
        "formula_C",
        "dt_measured",
        "governing_mode",
    ]:
        assert k in d
    assert d["dt_critical"] == pytest.approx(2 / d["omega_max"], rel=1e-12)  # measured 0
    # bisection (resolution 5e-3): measured 8.8e-4; tolerance 1e-2
    assert d["dt_measured"] == pytest.approx(d["dt_critical"], rel=1e-2)
    assert d["governing_mode"] in ("axial", "bending")


def test_graded_mean_tip_matches_static():
    m = make_model(**{"mesh.n_elements": 20, "defect.lam": 0.6, "defect.n": 1.0})
    dtc = 2 / omega_max(m)[0]
    t1 = 2 * np.pi / modal_analysis(m, 1).omega[0]
    n_per = int(np.ceil(1.0 / t1))
    res = simulate_explicit(m, n_per * t1 + 1e-3, 0.8 * dtc, dtc, progress=False)
    window = res.t <= n_per * t1
    mean = np.trapezoid(res.tip_y[window], res.t[window]) / res.t[window][-1]
    assert mean == pytest.approx(solve_static(m).tip_y, rel=6e-4)  # measured 6.1e-5


def test_damped_run_settles_on_static_equilibrium():
    m = make_model(**{"mesh.n_elements": 10})
    dtc = 2 / omega_max(m)[0]
    # mass-proportional damping: amplitude decays like exp(-alpha t / 2) = exp(-12) at 0.4 s
    res = simulate_explicit(m, 0.4, 0.8 * dtc, dtc, damping=(60.0, 0.0), progress=False)
    assert res.tip_y[-1] == pytest.approx(solve_static(m).tip_y, rel=2.3e-5)  # meas. 2.3e-6
    assert res.damping_work[-1] > 0
    assert res.energy_drift_rel < 6e-7  # damping work booked: measured 5.7e-8


def test_progress_is_reported_and_can_be_silenced(caplog):
    m = make_model(**{"mesh.n_elements": 5})
    dtc = 2 / omega_max(m)[0]
    with caplog.at_level(logging.INFO, logger="ancf_beam.solvers.explicit"):
        simulate_explicit(m, 0.2, 0.8 * dtc, dtc, progress=True, progress_interval_s=0.0)
    assert any("steps/s" in r.message and "ETA" in r.message for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="ancf_beam.solvers.explicit"):
        simulate_explicit(m, 0.2, 0.8 * dtc, dtc, progress=False)
    assert not caplog.records
