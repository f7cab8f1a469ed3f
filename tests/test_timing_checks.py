"""Rows of a report that compare measured times with a cost model are informational (status
INFO): the same code gave PASS or FAIL for "explicit cost exponent" with the machine's load
(err/tol 1.018 on one run, below 1 on the next). They are shown with their error and
tolerance but counted neither as PASS nor as FAIL, by the check tables, the report headlines
and the index page alike; the deterministic checks of the same report still decide."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from ancf_beam.studies.checks import INFO, check, check_counts, checks_dataset, scaling_checks
from ancf_beam.studies.presentation import headline, report_counts

TIMING = ("explicit cost exponent", "implicit cost exponent", "window projection")


def _scaling(
    explicit_exponent: float, implicit_exponent: float, projected: float, tip_error: float
) -> xr.Dataset:
    """A scaling-study result (the fields :func:`scaling_checks` reads) on 8, 16, 32 elements:
    ``1/dt_cr ~ n^2``, the full run on 8 elements measured at 1 s."""
    n = np.array([8, 16, 32])
    return xr.Dataset(
        {
            "dt_critical": ("mesh", 1e-3 / n.astype(float) ** 2),
            "explicit_measured_s": ("mesh", [1.0, np.nan, np.nan]),
            "explicit_projected_s": ("mesh", [projected, 8.0, 64.0]),
            "explicit_window_steps": ("mesh", [1000, 1000, 1000]),
            "implicit_tip_error_explicit": ("mesh", [0.004, tip_error, np.nan]),
            "implicit_tip_error_fine": ("mesh", [np.nan, np.nan, tip_error]),
        },
        coords={"mesh": n},
        attrs={
            "case": "uniform",
            "fit_min_elements": 8,
            "explicit_exponent": explicit_exponent,
            "implicit_exponent": implicit_exponent,
            "calibration_mesh": 8,
            "tip_error_target": 0.01,
            "per_period_met_target": 1,
        },
    )


def _timing(rows):
    return [r for r in rows if r["check"].startswith(TIMING)]


def test_timing_rows_are_informational_whatever_the_measurement():
    # a loaded machine: the explicit exponent far below 1 + p_dt = 3, the implicit one far
    # above linear, the projection off by a factor 2 -- no FAIL, three INFO rows
    slow = scaling_checks(_scaling(1.2, 2.5, 2.0, 0.005))
    assert [r["status"] for r in _timing(slow)] == [INFO, INFO, INFO]
    # they still carry the comparison: err/tol above 1 where the model is missed
    assert all(r["err_over_tol"] > 1 for r in _timing(slow))
    counts = checks_dataset(slow).attrs
    assert (counts["n_fail"], counts["n_info"]) == (0, 3)
    assert counts["n_checks"] == counts["n_pass"] == len(slow) - 3
    # an idle machine meeting the model: the same three rows, the same status
    idle = scaling_checks(_scaling(3.0, 1.0, 1.05, 0.005))
    assert [r["status"] for r in _timing(idle)] == [INFO, INFO, INFO]
    assert [r["check"] for r in idle] == [r["check"] for r in slow]


def test_deterministic_scaling_checks_still_decide():
    rows = scaling_checks(_scaling(3.0, 1.0, 1.0, 0.02))  # tip error twice the target
    status = {r["check"]: r["status"] for r in rows}
    assert status["GA tip error <= target (16 elements)"] == "FAIL"
    assert status["GA tip error <= target (32 elements)"] == "FAIL"
    assert checks_dataset(rows).attrs["n_fail"] == 2


def test_counts_headline_and_index_leave_info_rows_out():
    rows = [
        check("a", 1.0, 1.0, 0.1),
        check("b", 1.0, 2.0, 0.1),
        check("t", 1.0, 5.0, 0.1, informational=True),
    ]
    assert [r["status"] for r in rows] == ["PASS", "FAIL", INFO]
    assert check_counts(rows) == {"n_checks": 2, "n_pass": 1, "n_fail": 1, "n_info": 1}
    box = headline("Q?", [], rows)
    assert "1 of 2 distinct checks PASS (1 informational rows not counted)" in box
    only_info = headline("Q?", [], [rows[2]])
    assert "No checks of its own" in only_info
    df = pd.DataFrame([{**r, "err/tol": r["err_over_tol"]} for r in rows])
    seen: set = set()
    c = report_counts(df, seen)
    assert (c["n"], c["passed"], c["failed"], c["info"]) == (2, 1, ["b"], 1)
    assert c["worst"] == 10.0  # the deciding rows only (the INFO row's err/tol is 40)
    # a second report repeating the rows adds nothing
    assert report_counts(df, seen)["repeats"] == 3
