"""Unit tests of the study helpers: observed order, Richardson extrapolation, checks, collect."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from ancf_beam.config import resolve_case
from ancf_beam.io import package_fingerprint
from ancf_beam.studies.bounds import EPS
from ancf_beam.studies.checks import check, checks_dataset, checks_frame
from ancf_beam.studies.convergence import (
    convergence_analysis,
    fit_slope,
    observed_order,
    richardson,
    run_mesh_convergence,
)
from ancf_beam.studies.validation import run_validation, whole_period_mean


def synthetic(h, f0=2.5, c=0.7, p=4.0):
    return f0 + c * np.asarray(h, float) ** p


def order_roundoff(f, r):
    """Bound of the round-off of the observed order from ``f1, f2, f3`` (refinement ratio
    ``r``): each value carries a rounding of its evaluation (4 eps |f|, the power and the sum),
    the differences ``d`` carry both, and the order is ``log(d12 / d23) / log r``:
    ``8 eps max|f| (1 / |d12| + 1 / |d23|) / ln r``."""
    f = np.asarray(f, float)
    d = np.abs(np.diff(f))
    return 8 * EPS * np.abs(f).max() * float(np.sum(1.0 / d)) / math.log(r)


def richardson_roundoff(f, r, p):
    """Bound of the round-off of ``f2 + (f2 - f1) / (r^p - 1)``: the rounding of the values and
    of the correction, plus the correction's change with the order's round-off
    (``|d| ln r r^p / (r^p - 1)^2`` per unit of order)."""
    f = np.asarray(f, float)
    d = abs(f[-1] - f[-2])
    rp = r**p
    dp = order_roundoff(f, r)
    return 8 * EPS * np.abs(f).max() + d * math.log(r) * rp / (rp - 1.0) ** 2 * dp


@pytest.mark.parametrize("p", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("r", [2.0, 3.0])
def test_observed_order_and_richardson_exact_for_power_law(p, r):
    h = np.array([0.5, 0.5 / r, 0.5 / r**2])
    f = synthetic(h, p=p)
    order = observed_order(*f, r12=r)
    # exact power law: the values' round-off through the differences (measured 6.6e-14)
    assert order == pytest.approx(p, rel=0, abs=order_roundoff(f, r))
    assert richardson(f[1], f[2], r, order) == pytest.approx(
        2.5, rel=0, abs=richardson_roundoff(f, r, p)
    )


def test_observed_order_non_uniform_refinement():
    h = np.array([0.4, 0.25, 0.1])  # ratios 1.6 and 2.5
    f = synthetic(h, p=3.0)
    # the root finder's xtol 1e-12 plus the differences' round-off (smallest ratio 1.6)
    tol = 1e-12 + order_roundoff(f, 1.6)
    assert observed_order(*f, r12=h[0] / h[1], r23=h[1] / h[2]) == pytest.approx(3.0, abs=tol)


def test_observed_order_nan_for_oscillation_or_no_change():
    assert math.isnan(observed_order(1.0, 0.5, 0.75, 2.0))  # differences change sign
    assert math.isnan(observed_order(1.0, 1.0, 1.0, 2.0))
    assert math.isnan(richardson(1.0, 1.1, 2.0, float("nan")))


def test_fit_slope_recovers_power_and_ignores_nonpositive():
    h = np.array([0.5, 0.25, 0.125, 0.0625])
    err = 3.0 * h**2
    # exact data: the logs' rounding (eps of the largest |log|) over the spread of log h, a
    # few times for the least-squares sums: 16 eps max|log| / ptp(log h)
    tol = 16 * EPS * np.abs(np.log(err)).max() / np.ptp(np.log(h))
    assert fit_slope(h, err) == pytest.approx(2.0, abs=tol)
    assert fit_slope(h, np.append(err[:-1], 0.0)) == pytest.approx(2.0, abs=tol)
    assert math.isnan(fit_slope([0.5], [1.0]))


def test_convergence_analysis_power_law():
    h = 1.0 / np.array([2, 4, 8, 16, 32])
    f = synthetic(h, p=4.0)
    res = convergence_analysis(h, f, noise_rel=1e-14)
    assert res["status"] == "asymptotic"
    # each triplet's order within its differences' round-off; the finest triplet's for the
    # order and the extrapolation; the slope: the differences from the extrapolation (errors
    # of 1e-6 of f) carry its round-off, through the fit (measured 0 and 2.0e-11)
    tol = [order_roundoff(f[k : k + 3], 2.0) for k in range(len(f) - 2)]
    assert np.all(np.abs(res["orders"] - 4.0) <= tol)
    assert res["order"] == pytest.approx(4.0, abs=tol[-1])
    assert res["extrapolated"] == pytest.approx(2.5, abs=richardson_roundoff(f[-3:], 2.0, 4.0))
    err_min = abs(f[-1] - 2.5)
    slope_tol = 16 * EPS * np.abs(f).max() / err_min / np.ptp(np.log(h))
    assert res["slope"] == pytest.approx(4.0, abs=slope_tol)
    # unsorted input gives the same answer
    perm = [3, 0, 4, 1, 2]
    res2 = convergence_analysis(h[perm], synthetic(h, p=4.0)[perm], noise_rel=1e-14)
    assert res2["order"] == res["order"]  # the same sorted data: bit for bit


def test_convergence_analysis_skips_noise_floor():
    """The finest difference is below the noise floor: the order comes from a coarser triplet."""
    h = 1.0 / np.array([2, 4, 8, 16, 32, 64])
    f = synthetic(h, c=1.0, p=4.0)
    f[-1] += 5e-7  # "solver noise"; the last difference (~1.4e-6) is below 1e-6 * |f| = 2.5e-6
    res = convergence_analysis(h, f, noise_rel=1e-6)
    assert abs(res["orders"][-1] - 4.0) > 0.5  # the polluted triplet
    assert res["status"] == "asymptotic"
    k = int(np.argmin(np.abs(res["orders"] - res["order"])))  # the triplet used
    assert res["order"] == pytest.approx(4.0, abs=order_roundoff(f[k : k + 3], 2.0))
    assert res["extrapolated"] == pytest.approx(
        2.5, abs=richardson_roundoff(f[k : k + 3], 2.0, 4.0)
    )


def test_convergence_analysis_round_off():
    h = 1.0 / np.array([2, 4, 8, 16])
    f = np.full(4, 1.2345) + np.array([0.0, 1e-15, -1e-15, 0.0])
    res = convergence_analysis(h, f, noise_rel=1e-9)
    assert res["status"] == "round-off"
    assert math.isnan(res["order"])
    assert res["reference"] == f[-1]


def test_convergence_analysis_rejects_bad_input():
    with pytest.raises(ValueError):
        convergence_analysis([0.5, 0.25], [1.0, 2.0])
    with pytest.raises(ValueError):
        convergence_analysis([0.5, 0.5, 0.25], [1.0, 2.0, 3.0])


def test_check_modes():
    assert check("a", 2.0, 2.001, 1e-3)["status"] == "PASS"
    assert check("a", 2.0, 2.01, 1e-3)["status"] == "FAIL"
    assert check("a", 0.0, 5e-4, 1e-3, mode="abs")["status"] == "PASS"
    assert check("a", 1.0, 0.5, 0.0, mode="max")["status"] == "PASS"
    assert check("a", 1.0, 1.01, 0.0, mode="max")["status"] == "FAIL"
    assert check("a", 4.0, 5.4, 0.25, mode="min")["status"] == "PASS"
    assert check("a", 4.0, 2.9, 0.25, mode="min")["status"] == "FAIL"
    assert check("a", 1.0, float("nan"), 1.0)["status"] == "FAIL"
    with pytest.raises(ValueError):
        check("a", 1.0, 1.0, 1.0, mode="bogus")
    ds = checks_dataset([check("a", 1.0, 1.0, 0.1), check("b", 1.0, 2.0, 0.1)])
    assert (ds.attrs["n_checks"], ds.attrs["n_pass"], ds.attrs["n_fail"]) == (2, 1, 1)
    assert list(ds["status"].values) == ["PASS", "FAIL"]
    assert checks_dataset([]).attrs["n_checks"] == 0


def test_whole_period_mean_removes_oscillation():
    t = np.linspace(0.0, 2.0, 20001)
    period = 2 * np.pi / 97.0
    y = -1.5 + np.cos(2 * np.pi * t / period)
    mean, n = whole_period_mean(t, y, period)
    assert n == int(1.0 // period)
    # whole periods by the trapezoidal rule from an interpolated start: the Euler-Maclaurin
    # end corrections cancel over whole periods but for the partial first interval (length
    # delta <= dt): at most dt^3 max|y''| / 12 over the window, x FS, plus the sums' round-off
    # (1.6e-9; measured 5.3e-11)
    dt = t[1] - t[0]
    bound = 2 * dt**3 * (2 * np.pi / period) ** 2 / 12 / (n * period) + t.size * EPS * 1.5
    assert mean == pytest.approx(-1.5, abs=bound)
    assert abs(np.mean(y[t >= 1.0]) + 1.5) > 10 * abs(mean + 1.5)


def test_package_fingerprint_format():
    fp = package_fingerprint()
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*\+[0-9a-f]{12}", fp)
    assert fp == package_fingerprint()


def test_mesh_convergence_dataset_small():
    case = resolve_case({}, None, {"defect.lam": 0.5, "defect.n": 2.0})
    ds = run_mesh_convergence(case, [2, 4, 8, 16], n_modes=2)
    assert list(ds["quantity"].values) == ["tip_y", "omega_1", "omega_2"]
    assert ds["element_length"].attrs["units"] == "m"
    # order 4 (cubic Hermite) within the pre-asymptotic deviation: FS x twice the change of
    # the triplets' orders (as the convergence report)
    orders = ds["triplet_order"].sel(quantity="omega_1").values
    assert abs(orders[-1] - 4.0) <= 2 * 2 * abs(orders[-1] - orders[-2]), orders
    assert ds.attrs["study"] == "mesh_convergence"
    assert ds.attrs["param.defect.lam"] == 0.5


def test_validation_dataset_without_dynamics():
    from ancf_beam.analyses import run_modal, run_static

    case = resolve_case({}, None, {"defect.lam": 0.6})  # the default tolerances' mesh
    _, st = run_static(case)
    _, mo = run_modal(case)
    ds = run_validation(case, st, mo)
    assert ds.attrs["n_fail"] == 0, checks_frame(ds).to_string()
    assert ds.attrs["n_checks"] == len(ds["check"]) == 14
    assert ds.attrs["large_deflection"] == 0 and ds.sizes["number"] == 0
    assert ds["exact_x"].attrs["units"] == "m"


NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "workflow" / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_only_plot_and_display(path):
    """Check rows, thresholds and the table/figure helpers live in ancf_beam.studies.checks:
    a report notebook calls its check builder and defines no helpers of its own."""
    import json

    code = "".join(
        "".join(c["source"]) + "\n"
        for c in json.loads(path.read_text())["cells"]
        if c["cell_type"] == "code"
    )
    assert not re.search(r"(?<![_\w])check\(", code), "check rows are built in the library"
    assert not re.search(r"^def (show_checks|save)\(", code, re.M)
    assert re.search(r"(save|show)_figure\(", code)
    # a saved figure is shown from its file, not rendered a second time by the inline backend
    assert not re.search(r"save_figure\([^\n]*\)\n\s*plt\.show\(\)", code)
    if path.stem != "seed_audit":  # verdicts on the seed documents, not checks of this code
        assert "show_checks(" in code


def test_show_figure_saves_once_and_displays_the_file(tmp_path, monkeypatch):
    """show_figure writes the PNG, closes the figure (nothing left for the inline backend to
    render again) and displays the file's bytes at the inline size; without a path it leaves
    the figure to plt.show()."""
    import IPython.display
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ancf_beam.studies.checks import show_figure

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    monkeypatch.setitem(plt.rcParams, "figure.dpi", 100)
    monkeypatch.setitem(plt.rcParams, "savefig.dpi", 110)
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    path = tmp_path / "f.png"
    show_figure(fig, {"f": str(path)}, "f")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and not plt.fignum_exists(fig.number)
    (img,) = shown
    assert img.data == data
    assert img.width == round(int.from_bytes(data[16:20], "big") * 100 / 110)
    fig2 = plt.figure()
    show_figure(fig2, {}, "f")  # no path: plt.show(), a no-op under Agg
    assert len(shown) == 1
    plt.close("all")


def test_report_tolerances_come_from_the_pipeline_defaults():
    from ancf_beam.config import PIPELINE_DEFAULTS
    from ancf_beam.studies.checks import report_tolerances

    reports = [k for k, v in PIPELINE_DEFAULTS.items() if "tolerances" in v]
    assert {
        "case_report",
        "comparison",
        "convergence",
        "critical_dt",
        "validation",
        "defects",
        "identification",
        "integrators",
        "scaling",
        "mechanisms",
        "clearance_sweep",
        "contact_laws",
        "flagship",
    } == set(reports)
    for r in reports:
        assert report_tolerances(r) == PIPELINE_DEFAULTS[r]["tolerances"]
    assert report_tolerances("convergence", {"estimate_factor": 3.0})["estimate_factor"] == 3.0


def test_seed_audit_rows():
    """The audit recomputes the quoted numbers: a few of them against closed forms written
    here (measured differences 0 to 7e-8: the rounded root of conftest, 6 decimals of beta L
    whose half unit, squared into omega, is 2 x 0.5e-6 / 1.875 = 5.3e-7), every checkable row
    with a finite value, the verdicts from the fixed vocabulary; the other closed forms the
    same formula evaluated twice, a few roundings (8 eps)."""
    from ancf_beam.studies.seed_audit import run_seed_audit
    from conftest import BETA_L, EI, RHOA, L, Q

    rows = {r.quantity: r for r in run_seed_audit()}
    assert {r.verdict for r in rows.values()} <= {"holds", "wrong", "conservative", "not checkable"}
    for r in rows.values():
        assert math.isfinite(r.computed) or r.verdict == "not checkable", r
    w1 = rows["omega_1 of the uniform seed beam"]
    digits = 2 * 0.5e-6 / BETA_L[0] + 8 * EPS
    assert w1.computed == pytest.approx(BETA_L[0] ** 2 / L**2 * math.sqrt(EI / RHOA), rel=digits)
    assert w1.verdict == "wrong" and w1.quoted_value == 128.6
    tip = rows["linear tip deflection q L^4 / (8 EI)"]
    assert tip.computed == pytest.approx(Q * L**4 / (8 * EI), rel=8 * EPS)
    zeta = rows["damping ratio of its example"]
    assert zeta.computed == pytest.approx(200 / (2 * math.sqrt(1e7 * 1.2)), rel=8 * EPS)
    lag = rows["phase lag from a 0.25 mm clearance"]
    assert lag.computed == pytest.approx(math.degrees(math.asin(0.25e-3 / 0.12)), rel=8 * EPS)
    assert lag.verdict == "wrong"
