"""Identification study: truth vs estimate of (lam, n) from noisy synthetic frequencies."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.io import provenance_attrs
from ancf_beam.kernel_cache import run_clock
from ancf_beam.specs import CaseSpec

__all__ = [
    "coverage_tolerance",
    "run_identification_study",
]


def coverage_tolerance(n: int, nominal: float, alpha: float = 1e-3) -> float:
    """Relative shortfall of an observed coverage below ``nominal`` that ``n`` Bernoulli trials
    still explain at level ``alpha``: ``(nominal - k/n) / nominal`` with ``k`` the largest count
    whose lower binomial tail ``P(X <= k)`` is below ``alpha`` (plus one). A coverage check
    ``observed >= nominal (1 - tol)`` then fails with probability below ``alpha`` when the
    uncertainties are right."""
    from scipy.stats import binom

    if n <= 0:
        return 1.0
    k = int(binom.ppf(alpha, n, nominal))  # smallest k with P(X <= k) >= alpha
    return max(0.0, (nominal - k / n) / nominal)


def run_identification_study(
    case: CaseSpec,
    lam_values: Sequence[float],
    n_values: Sequence[float],
    draws: int = 3,
    sigma_rel: float = 0.005,
    n_modes: int = 3,
    seed: int = 12345,
    truth_mesh: int | None = None,
    controls: bool = True,
    forward_mesh: int | None = None,
) -> xr.Dataset:
    """Identification of synthetic defects ``E(x) = E0 (1 - lam (x/L)^n)`` from noisy frequencies.

    The forward model is ``case`` (beam, section, density, mapping; its own
    ``defect.lam``/``defect.n`` are only a starting point) on ``forward_mesh`` elements
    (default the case's mesh). For every ``(lam, n)`` of the grid ``lam_values x n_values``
    the "measured" frequencies are the first ``n_modes`` bending frequencies of the same beam
    on a much finer mesh ``truth_mesh`` (default 8 times the forward model's), so the data do
    not come from the forward model's discretisation (no inverse crime); they are the
    eigenvalues refined to round-off (:class:`ancf_beam.identify.FrequencyModel`: a plain
    dense eigensolver loses ``eps (w_max / w_1)^2``, 4e-5 of ``omega_1`` at 320 elements).
    Each is multiplied by ``1 + sigma_rel z`` with ``z`` standard normal, ``draws`` seeded
    draws each (``numpy.random.default_rng(seed)``; the draws are reproducible). Each draw is
    identified by :func:`ancf_beam.identify.identify_from_frequencies` with ``sigma_rel``
    given; the noise-free frequencies are identified as well (estimator bias, which is the
    forward model's discretisation error). Negative controls (when ``controls``): ``lam = 0``
    (the uniform beam: ``n`` is not determined) and a single frequency (one datum for two
    parameters), each with ``draws`` draws.

    Returns a Dataset over ``(truth, draw)`` with the truth, the estimates, standard
    uncertainties, identifiable flags and standardized errors ``(estimate - truth) / std``, the
    noise-free estimates over ``truth``, and the controls over ``(control, draw)``; attributes
    hold the coverage of the 1- and 2-sigma intervals over the identifiable estimates.
    """
    t0 = run_clock()
    fwd = _forward_model(case, truth_mesh, sigma_rel, n_modes, forward_mesh)
    case = fwd.case
    rng = np.random.default_rng(seed)
    grid = [(float(la), float(nn)) for la in lam_values for nn in n_values]
    est, msgs, clean, om_true, om_meas = _grid_runs(fwd, grid, draws, rng)
    lam_t = np.array([g[0] for g in grid])
    n_t = np.array([g[1] for g in grid])
    lam_z = (est[:, :, 0] - lam_t[:, None]) / est[:, :, 1]
    n_z = (est[:, :, 2] - n_t[:, None]) / est[:, :, 3]
    data = _grid_vars(est, msgs, clean, lam_z, n_z, om_true, om_meas)
    data["model_discrepancy"] = _model_discrepancy(fwd, grid, om_true)
    coords = _truth_coords(lam_t, n_t, draws, n_modes)
    if controls:
        cdata, ccoords = _control_vars(fwd, lam_values, n_values, draws, rng)
        data.update(cdata)
        coords.update(ccoords)
    ok = est[:, :, 4] > 0.5
    ds = xr.Dataset(data, coords=coords)
    ds.attrs.update(
        provenance_attrs(
            case,
            study="identification",
            method="frequencies",
            **_study_attrs(fwd, draws, seed, lam_values, n_values),
            n_estimates=int(est.shape[0] * est.shape[1]),
            n_identifiable=int(ok.sum()),
            **_coverage(np.abs(lam_z[ok]), np.abs(n_z[ok])),
            wall_s=run_clock() - t0,
        )
    )
    return ds


def _forward_model(case, truth_mesh, sigma_rel, n_modes, forward_mesh) -> _Forward:
    """The forward model of the study (``case`` on ``forward_mesh`` elements, default its
    own) and the model of the synthetic data on ``truth_mesh`` elements (default 8 times
    as many; the same mesh is refused: no inverse crime)."""
    from ancf_beam.identify import FrequencyModel

    if forward_mesh is not None:
        case = case.with_overrides({"mesh.n_elements": int(forward_mesh)})
    truth_mesh = 8 * case.mesh.n_elements if truth_mesh is None else int(truth_mesh)
    if truth_mesh == case.mesh.n_elements:
        raise ValueError(
            f"truth_mesh = {truth_mesh} is the forward model's mesh: the synthetic data must "
            "come from a different discretisation"
        )
    truth_case = case.with_overrides({"mesh.n_elements": truth_mesh, "defect.lam": 0.0})
    return _Forward(
        case,
        truth_mesh,
        sigma_rel,
        n_modes,
        FrequencyModel(case, n_modes),
        FrequencyModel(truth_case, n_modes),
    )


def _model_discrepancy(fwd, grid, om_true) -> tuple:
    """The forward model's discretisation error at the truth, relative: what the noise-free
    estimates are biased by (ancf_beam.studies.checks.identification_checks)."""
    om_model = np.array([fwd.model.omega(la, nn)[: fwd.n_modes] for la, nn in grid])
    return (
        "truth",
        np.linalg.norm(om_model / om_true - 1.0, axis=1),
        {"units": "1", "long_name": "|omega_forward / omega_data - 1| at the truth (2-norm)"},
    )


def _truth_coords(lam_t, n_t, draws, n_modes) -> dict[str, Any]:
    """Coordinates of the grid of truths, the draws and the modes."""
    return {
        "truth": ("truth", np.arange(lam_t.size)),
        "lam_true": ("truth", lam_t, {"units": "1"}),
        "n_true": ("truth", n_t, {"units": "1"}),
        "draw": ("draw", np.arange(draws)),
        "mode": ("mode", np.arange(1, n_modes + 1)),
    }


def _study_attrs(fwd, draws, seed, lam_values, n_values) -> dict[str, Any]:
    """The study's settings as provenance attributes."""
    return {
        "sigma_rel": fwd.sigma_rel,
        "n_modes": fwd.n_modes,
        "draws": draws,
        "seed": seed,
        "truth_mesh": fwd.truth_mesh,
        "forward_mesh": fwd.case.mesh.n_elements,
        "lam_values": ",".join(f"{v:g}" for v in lam_values),
        "n_values": ",".join(f"{v:g}" for v in n_values),
    }


#: Per-estimate quantities of the study (all dimensionless).
_KEYS = ("lam_est", "lam_std", "n_est", "n_std", "identifiable", "residual", "cond")


@dataclass(frozen=True)
class _Forward:
    """The study's forward model: the case, the mesh of the synthetic data and the identifier."""

    case: CaseSpec
    truth_mesh: int
    sigma_rel: float
    n_modes: int
    model: Any  # ancf_beam.identify.FrequencyModel of the case with n_modes frequencies
    truth: Any  # the same on the data mesh

    def truth_omega(self, lam: float, n: float, k: int) -> np.ndarray:
        """First ``k`` frequencies of the graded beam on the data mesh (the "measurement")."""
        return self.truth.omega(lam, n)[:k]

    def identify(self, om: np.ndarray, k: int | None = None) -> tuple[list[float], str]:
        """``[lam, lam_std, n, n_std, identifiable, residual, cond]`` and the message."""
        from ancf_beam.identify import FrequencyModel, identify_from_frequencies

        k = self.n_modes if k is None else k
        model = self.model
        if k != self.n_modes:
            model = FrequencyModel(self.case, k, eigen=self.model.eigen)
        r = identify_from_frequencies(self.case, om, sigma_rel=self.sigma_rel, model=model)
        return [r.lam, r.lam_std, r.n, r.n_std, float(r.identifiable), r.residual, r.cond], (
            r.message
        )


def _grid_runs(fwd: _Forward, grid, draws: int, rng):
    """Noise-free and ``draws`` noisy identifications of every ``(lam, n)`` of ``grid``."""
    nm = fwd.n_modes
    est = np.full((len(grid), draws, len(_KEYS)), np.nan)
    msgs = np.empty((len(grid), draws), dtype=object)
    clean = np.full((len(grid), len(_KEYS)), np.nan)
    om_true = np.zeros((len(grid), nm))
    om_meas = np.zeros((len(grid), draws, nm))
    for i, (la, nn) in enumerate(grid):
        om = fwd.truth_omega(la, nn, nm)
        om_true[i] = om
        clean[i], _ = fwd.identify(om)
        for j in range(draws):
            noisy = om * (1.0 + fwd.sigma_rel * rng.standard_normal(nm))
            om_meas[i, j] = noisy
            est[i, j], msgs[i, j] = fwd.identify(noisy)
    return est, msgs, clean, om_true, om_meas


def _grid_vars(est, msgs, clean, lam_z, n_z, om_true, om_meas) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for k, key in enumerate(_KEYS):
        data[key] = (("truth", "draw"), est[:, :, k], {"units": "1"})
        data[f"clean_{key}"] = (
            "truth",
            clean[:, k],
            {"units": "1", "long_name": f"{key}, noise-free data"},
        )
    data["message"] = (("truth", "draw"), msgs)
    data["lam_z"] = (
        ("truth", "draw"),
        lam_z,
        {"units": "1", "long_name": "(lam_est - lam) / lam_std"},
    )
    data["n_z"] = (("truth", "draw"), n_z, {"units": "1", "long_name": "(n_est - n) / n_std"})
    data["omega_true"] = (("truth", "mode"), om_true, {"units": "rad/s"})
    data["omega_measured"] = (("truth", "draw", "mode"), om_meas, {"units": "rad/s"})
    return data


def _control_vars(fwd: _Forward, lam_values, n_values, draws: int, rng):
    """Negative controls: ``lam = 0`` (``n`` undetermined) and a single frequency (one datum,
    two parameters), ``draws`` noisy draws each; variables and coordinates."""
    nm = fwd.n_modes
    ctrl_names = ["lam = 0 (uniform beam)", "single frequency"]
    la_c, n_c = float(np.median(lam_values)), float(np.median(n_values))
    cest = np.full((2, draws, len(_KEYS)), np.nan)
    cmsg = np.empty((2, draws), dtype=object)
    om0 = fwd.truth_omega(0.0, n_c, nm)
    om1 = fwd.truth_omega(la_c, n_c, nm)
    for j in range(draws):
        noisy = om0 * (1.0 + fwd.sigma_rel * rng.standard_normal(nm))
        cest[0, j], cmsg[0, j] = fwd.identify(noisy)
        noisy1 = om1[:1] * (1.0 + fwd.sigma_rel * rng.standard_normal(1))
        cest[1, j], cmsg[1, j] = fwd.identify(noisy1, k=1)
    data: dict[str, Any] = {}
    for k, key in enumerate(_KEYS):
        data[f"control_{key}"] = (("control", "draw"), cest[:, :, k], {"units": "1"})
    data["control_message"] = (("control", "draw"), cmsg)
    coords = {
        "control": ("control", np.array(ctrl_names, dtype=object)),
        "control_lam_true": ("control", np.array([0.0, la_c]), {"units": "1"}),
        "control_n_true": ("control", np.array([n_c, n_c]), {"units": "1"}),
        "control_n_modes": ("control", np.array([nm, 1]), {"units": "1"}),
    }
    return data, coords


def _coverage(zl: np.ndarray, zn: np.ndarray) -> dict[str, float]:
    """Share of the identifiable estimates whose ``|z|`` is within 1 and 2 (NaN when none)."""
    if not zl.size:
        return {
            k: math.nan
            for k in (
                "coverage_1sigma_lam",
                "coverage_1sigma_n",
                "coverage_1sigma_both",
                "coverage_2sigma_lam",
                "coverage_2sigma_n",
            )
        }
    return {
        "coverage_1sigma_lam": float(np.mean(zl <= 1)),
        "coverage_1sigma_n": float(np.mean(zn <= 1)),
        "coverage_1sigma_both": float(np.mean((zl <= 1) & (zn <= 1))),
        "coverage_2sigma_lam": float(np.mean(zl <= 2)),
        "coverage_2sigma_n": float(np.mean(zn <= 2)),
    }
