"""Study-level entry points: case -> computation -> (summary dict, xarray Dataset).

These are what the CLI and the workflow scripts call; each returns a JSON-ready summary and a
Dataset with provenance attributes (see :mod:`ancf_beam.io`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import xarray as xr

from .config import CaseSpec
from .defects import SectionProfile
from .io import provenance_attrs
from .modal import modal_analysis
from .model import BeamModel
from .static import solve_static


def _shape_vars(model: BeamModel, q: np.ndarray, prefix: str) -> dict[str, Any]:
    s = model.sample(q)
    return {
        f"{prefix}x": ("s", s["x"], {"units": "m", "long_name": "x position"}),
        f"{prefix}y": ("s", s["y"], {"units": "m", "long_name": "y position"}),
        f"{prefix}curvature": (
            "s",
            s["kappa"],
            {"units": "rad/m", "long_name": "curvature (r' x r'')/|r'|^2"},
        ),
        f"{prefix}axial_strain": ("s", s["eps"], {"units": "1", "long_name": "|r'| - 1"}),
    }, s["X"]


def run_static(case: CaseSpec) -> tuple[dict[str, Any], xr.Dataset]:
    """Static equilibrium under gravity."""
    model = BeamModel(case)
    t0 = time.perf_counter()
    res = solve_static(model)
    wall = time.perf_counter() - t0
    summary = {
        "case": case.name,
        "tip_x": res.tip_x,
        "tip_y": res.tip_y,
        "tip_angle_deg": res.tip_angle_deg,
        "newton_iterations": res.newton_iterations,
        "load_steps": res.load_steps,
        "residual_norm": res.residual_norm,
        "wall_s": wall,
    }
    shape, X = _shape_vars(model, res.q, "")
    ds = xr.Dataset(
        {
            **shape,
            "tip_x": ((), res.tip_x, {"units": "m"}),
            "tip_y": ((), res.tip_y, {"units": "m", "long_name": "tip deflection (down < 0)"}),
            "tip_angle_deg": ((), res.tip_angle_deg, {"units": "degree"}),
            "q": ("dof", res.q, {"units": "m or 1", "long_name": "full nodal coordinates"}),
        },
        coords={"X": ("s", X, {"units": "m", "long_name": "reference position"})},
    )
    ds.attrs.update(
        provenance_attrs(
            case,
            study="static",
            solver="newton-load-stepping",
            newton_iterations=res.newton_iterations,
            load_steps=res.load_steps,
            residual_norm=res.residual_norm,
            residual_tol=res.residual_tol,
            wall_s=wall,
        )
    )
    return summary, ds


def run_modal(case: CaseSpec, n_modes: int | None = None, about: str | None = None):
    """Natural frequencies and mode shapes."""
    model = BeamModel(case)
    t0 = time.perf_counter()
    res = modal_analysis(model, n_modes=n_modes, about=about)
    wall = time.perf_counter() - t0
    summary = {
        "case": case.name,
        "about": res.about,
        "omega": res.omega.tolist(),
        "frequency_hz": res.frequency_hz.tolist(),
        "wall_s": wall,
    }
    nm = res.omega.size
    full = np.zeros((nm, model.n_dof))
    full[:, 4:] = res.shapes
    ds = xr.Dataset(
        {
            "omega": ("mode", res.omega, {"units": "rad/s"}),
            "frequency_hz": ("mode", res.frequency_hz, {"units": "Hz"}),
            "axial_fraction": ("mode", res.axial_fraction, {"units": "1"}),
            "shape_x": (("mode", "node"), full[:, 0::4], {"units": "m/sqrt(kg)"}),
            "shape_y": (("mode", "node"), full[:, 1::4], {"units": "m/sqrt(kg)"}),
        },
        coords={
            "mode": np.arange(1, nm + 1),
            "x_node": ("node", model.x_nodes, {"units": "m"}),
        },
    )
    ds.attrs.update(provenance_attrs(case, study="modal", about=res.about, wall_s=wall))
    return summary, ds


def run_stepped(case: CaseSpec, segments: int | None = None, n_modes: int | None = None):
    """Stepped-beam transfer matrix (N uniform segments) and exact linear graded quadrature."""
    from . import transfer

    segments = case.stepped.segments if segments is None else segments
    n_modes = case.modal.n_modes if n_modes is None else n_modes
    p = SectionProfile(case)
    L = case.beam.length
    t0 = time.perf_counter()
    st = transfer.stepped_static(L, p.EI, p.q, segments)
    om = np.asarray(transfer.stepped_frequencies(L, p.EI, p.rhoA, segments, n_modes))
    ex = transfer.exact_graded_static(L, p.EI, p.q)
    wall = time.perf_counter() - t0
    summary = {
        "case": case.name,
        "segments": segments,
        "tip_deflection": float(st["tip_deflection"]),
        "tip_slope": float(st["tip_slope"]),
        "omega": om.tolist(),
        "exact_tip_deflection": float(ex["tip_deflection"]),
        "exact_tip_slope": float(ex["tip_slope"]),
        "wall_s": wall,
    }
    ds = xr.Dataset(
        {
            "tip_deflection": ((), summary["tip_deflection"], {"units": "m"}),
            "tip_slope": ((), summary["tip_slope"], {"units": "rad"}),
            "exact_tip_deflection": ((), summary["exact_tip_deflection"], {"units": "m"}),
            "exact_tip_slope": ((), summary["exact_tip_slope"], {"units": "rad"}),
            "omega": ("mode", om, {"units": "rad/s"}),
        },
        coords={"mode": np.arange(1, om.size + 1)},
    )
    ds.attrs.update(provenance_attrs(case, study="stepped", segments=segments, wall_s=wall))
    return summary, ds
