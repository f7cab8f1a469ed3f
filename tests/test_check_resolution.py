"""An estimate-based check whose tolerance reaches the quantity's own scale reads FAIL, "not
resolved" (ancf_beam.studies.error_estimates.resolved): refined runs that differ by as much as
the quantity itself bound nothing, and a check that any result passes is no check. The inputs
are built here, so each estimate is known by hand: Richardson ``kappa / (kappa - 1)`` times the
largest difference between the run and its refinement."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from ancf_beam.studies.checks import check
from ancf_beam.studies.error_estimates import HistoryBound, energy_balance_row, resolved

T = np.linspace(0.0, 1.0, 101)
KAPPA = 4.0  # the estimate is 4/3 of the largest difference to the refined run
BOUND = HistoryBound(kappa=KAPPA, rtol=0.0, floor=0.0, factor=2.0, case="c")


def _energies(residual: np.ndarray) -> xr.Dataset:
    """An undriven run whose kinetic energy peaks at 1 J and whose total energy drifts by
    ``residual`` (J)."""
    kinetic = np.sin(np.pi * T) ** 2
    total = 5.0 + residual
    return xr.Dataset(
        {"energy_total": ("time", total), "kinetic_energy": ("time", kinetic)},
        coords={"time": T},
        attrs={"steps": 100},
    )


@pytest.mark.parametrize(
    "run, fine, status, tolerance",
    [
        # resolved: drift 1e-3 max T, the refined run's a quarter of it: estimate 1e-3
        (1e-3, 0.25e-3, "PASS", 2e-3),
        # the refinement moves the drift from +0.3 to -0.3 max T: estimate 0.8, tolerance 1.6;
        # the drift (0.3) is inside that tolerance, and the row is still no check
        (0.3, -0.3, "FAIL", 1.6),
    ],
)
def test_energy_row_fails_when_its_refinement_changes_it_by_the_scale(run, fine, status, tolerance):
    ramp = T / T[-1]
    row = energy_balance_row(_energies(run * ramp), [_energies(fine * ramp)], BOUND, "est")
    assert row["tolerance"] == pytest.approx(tolerance, rel=1e-9)
    assert row["rel_error"] <= row["tolerance"]
    assert row["status"] == status
    assert row["note"].startswith("not resolved") == (status == "FAIL")


def test_history_row_fails_when_its_refinement_changes_it_by_the_scale():
    reference = np.cos(2 * np.pi * T)
    resolved_row = BOUND.check("x", reference + 1e-4, [reference + 0.25e-4], reference, "n")
    assert resolved_row["status"] == "PASS"
    assert resolved_row["tolerance"] == pytest.approx(2e-4, rel=1e-9)
    # a run 0.2 off whose refinement lands 0.2 off the other way: tolerance 2 x 0.4 x 4/3
    loose = BOUND.check("x", reference + 0.2, [reference - 0.2], reference, "n")
    assert loose["rel_error"] == pytest.approx(0.2) and loose["tolerance"] > 1.0
    assert loose["status"] == "FAIL" and "not resolved" in loose["note"]


def test_the_rule_is_the_tolerance_against_one():
    """Below the scale the row keeps its own decision (PASS or FAIL); from the scale on FAIL."""
    assert resolved(check("a", 0.0, 0.5, 0.999, mode="abs"))["status"] == "PASS"
    assert resolved(check("a", 0.0, 1.5, 0.999, mode="abs"))["status"] == "FAIL"
    row = resolved(check("a", 0.0, 0.5, 1.0, mode="abs"))
    assert row["status"] == "FAIL" and row["note"].startswith("not resolved: the tolerance 1 ")
