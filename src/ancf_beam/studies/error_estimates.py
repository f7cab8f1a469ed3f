"""Error estimates of mechanism runs for the checks (:mod:`ancf_beam.studies.mechanisms`,
:mod:`ancf_beam.studies.general`): Richardson estimates from refined runs, the adaptive
integrator's per-step floor, the round-off of a run, the energy balance against the drives'
work."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.specs import MechanismSpec
from ancf_beam.studies.checks import check

__all__ = [
    "EPS",
    "HistoryBound",
    "energy_balance_row",
    "energy_residual",
    "est_check",
    "estimate",
    "max_rel",
    "resolved",
    "roundoff",
    "tol_floor",
]

EPS = float(np.finfo(float).eps)


def max_rel(computed, reference) -> float:
    """``max |computed - reference| / max |reference|``."""
    return float(np.max(np.abs(computed - reference)) / np.max(np.abs(reference)))


def estimate(x, fines, kappa: float, floor: float = 0.0) -> float:
    """Error estimate of ``x`` (arrays: the largest over the samples) from the same quantity of
    the refined runs ``fines`` (a value or a list, finest last; each refinement shrinks the
    error at least ``kappa`` times): ``kappa / (kappa - 1)`` times the largest difference of
    successive levels (Richardson; with two refined runs the larger difference covers a rate
    not yet asymptotic; :func:`ancf_beam.mbs.analysis.refinement`), plus ``floor`` (an
    adaptive run: the error one step admits, rtol times the quantity's scale, since the
    difference can vanish by coincidence; :func:`_tol_floor`)."""
    levels = [np.asarray(x, float)] + [
        np.asarray(f, float) for f in (fines if isinstance(fines, list) else [fines])
    ]
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(levels[:-1], levels[1:], strict=True))
    return (diff * kappa / (kappa - 1.0) if kappa > 1.0 else math.inf) + floor


def tol_floor(spec: MechanismSpec, ds: xr.Dataset) -> float:
    """The relative error one step of an adaptive run admits (its rtol); 0 for the fixed-step
    integrators (their estimate needs no floor: Richardson of a fixed scheme)."""
    integrator = str(ds.attrs.get("integrator", spec.integrator))
    return float(spec.solver.rtol) if integrator == "adaptive" else 0.0


def roundoff(ds: xr.Dataset) -> float:
    """Relative round-off floor of a run's results: ``8 eps`` per accepted step (each step
    rounds the state a few times; the worst case adds up)."""
    steps = ds.attrs.get("steps", ds.attrs.get("summary.steps", 1))
    return 8.0 * EPS * max(float(steps), 1.0)


def energy_residual(ds: xr.Dataset) -> np.ndarray:
    """``(E(t) - E(0)) - W(t)`` (J) per sample: total energy (kinetic + potential + the work
    dissipated by damage and the contacts) minus the work the drives fed in (both booked every
    step; without ``drive_work``, e.g. an older file, the trapezoidal work of the sampled drive
    torque). Zero for the exact solution."""
    e = ds["energy_total"].values - ds["energy_total"].values[0]
    if "drive_work" in ds:
        return e - ds["drive_work"].values
    if "drive_torque" in ds:
        from scipy.integrate import cumulative_trapezoid

        omega = float(ds.attrs["param.drive.omega"])
        return e - cumulative_trapezoid(
            ds["drive_torque"].values * omega, ds["time"].values, initial=0.0
        )
    return e


def est_check(name, reference, computed, est, floor, factor, case, note, scale=1.0):
    """A check of ``computed`` against ``reference`` within ``factor`` times the error estimate
    ``est`` plus ``floor`` (all absolute; ``scale`` divides them for display)."""
    row = check(
        name,
        reference / scale,
        computed / scale,
        (factor * est + floor) / scale,
        mode="abs",
        note=note,
        case=case,
    )
    return row


def resolved(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` (an error over the quantity's own scale, such as ``/ max T``) marked FAIL when
    its tolerance reaches that scale (1): the refined runs differ by as much as the quantity
    itself, so the run does not resolve it, and any result, zero included, would pass."""
    if row["tolerance"] >= 1.0:
        row["status"] = "FAIL"
        row["note"] = (
            f"not resolved: the tolerance {row['tolerance']:.3g} (from the refined runs) reaches "
            f"the quantity's scale (1); {row['note']}"
        )
    return row


@dataclass(frozen=True)
class HistoryBound:
    """How a history is checked against its reference: the largest error over the reference's
    largest magnitude, within ``factor`` times the error estimated from the refined runs
    (Richardson with ``kappa``, plus ``rtol`` times that magnitude) plus ``floor``."""

    kappa: float
    rtol: float
    floor: float
    factor: float
    case: str

    def check(self, label, computed, refined, reference, note) -> dict[str, Any]:
        sc = float(np.max(np.abs(reference)))
        est = estimate(computed, refined, self.kappa, self.rtol * sc) / sc
        error = max_rel(computed, reference)
        return resolved(est_check(label, 0.0, error, est, self.floor, self.factor, self.case, note))


def energy_balance_row(ds, fine, bound: HistoryBound, est_note: str) -> dict[str, Any]:
    """The change of the total energy against the drive's work, over the largest kinetic
    energy."""
    res = energy_residual(ds)
    tmax = float(ds["kinetic_energy"].max())
    e_scale = float(np.max(np.abs(ds["energy_total"].values))) / tmax
    e_terms = (
        e_scale + float(np.max(np.abs(ds["drive_work"].values))) / tmax
        if "drive_work" in ds
        else e_scale
    )
    refined = [energy_residual(f) for f in fine]
    row = est_check(
        "energy change vs drive work (/ max T)",
        0.0,
        float(np.max(np.abs(res))) / tmax,
        estimate(res, refined, bound.kappa, bound.rtol * e_terms * tmax) / tmax,
        bound.floor * max(e_scale, 1.0),
        bound.factor,
        bound.case,
        f"drive work and dissipation booked every step; {est_note}",
    )
    return resolved(row)
