"""Mesh convergence study: observed order, Richardson extrapolation, static tip and natural
frequencies over a mesh sequence.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.io import provenance_attrs
from ancf_beam.kernel_cache import run_clock
from ancf_beam.specs import CaseSpec

__all__ = [
    "EXPECTED_ORDER",
    "convergence_analysis",
    "expected_convergence",
    "fit_slope",
    "observed_order",
    "richardson",
    "run_mesh_convergence",
]

#: Expected order of convergence of the cubic Hermite (ANCF) element for the static tip deflection
#: and the natural frequencies (eigenvalue error ~ h^(2(p+1-m)) = h^4 for p = 3, m = 2).
EXPECTED_ORDER = 4.0


def expected_convergence(params: Mapping[str, Any], meshes: Sequence[int]) -> tuple[float, str]:
    """Leading order of the ANCF error of a case (its ``param.*`` attributes) on ``meshes``,
    and, when no single order governs those meshes, why (else an empty string).

    * Properties smooth on ``[0, L]`` with the ``gauss`` mapping: 4 (cubic Hermite).
    * ``element`` mapping (piecewise constant properties) or ``nodal`` (piecewise linear) of a
      graded or tabulated profile: 2, the next term ``(L/n)^4``.
    * A power law ``x^a`` with a non-integer ``a < 3`` (any family): the clamp element's
      integration adds ``(L/n)^(1 + a)``, which competes with ``(L/n)^4`` (and ``2 + a``...)
      on practical meshes -- where their coefficients have opposite signs the error crosses
      zero and a triplet's order means nothing (``a = 1.5``: 4.4, -, 0.27 on 2..32 elements):
      no order is checked.
    * A table breakpoint that is not a node of every mesh: an ``(L/n)^3`` term whose constant
      depends on where the breakpoint falls in its element: no order is checked.
    * Damage: the unregularised softening localises in one element: no convergence."""
    if int(params.get("param.damage.enabled", 0)):
        return math.nan, "mesh-dependent damage localisation (no regularisation)"
    graded, breaks, singular = False, set(), []
    for fam in ("", "rho.", "width.", "height."):
        lam = float(params.get(f"param.defect.{fam}lam", 0.0))
        n = float(params.get(f"param.defect.{fam}n", 1.0))
        if lam != 0.0:
            graded = True
            if abs(n - round(n)) > 1e-9 and n < 3.0:
                singular.append(n)
        table = params.get(f"param.defect.{fam}table", "none")
        if table not in (None, "none", "None"):
            graded = True
            rows = ast.literal_eval(table) if isinstance(table, str) else table
            breaks.update(float(x) for x, _ in rows if 0.0 < float(x) < 1.0)
    if singular:
        return math.nan, (
            f"x^{min(singular):g} at the clamp: error terms of orders "
            f"{1 + min(singular):g} and 4 compete"
        )
    off = sorted(x for x in breaks if any(abs(x * m - round(x * m)) > 1e-9 for m in meshes))
    if off:
        return math.nan, (
            f"table breakpoint x/L = {off[0]:g} inside elements: an O(l_e^3) "
            "term with a constant that depends on the mesh"
        )
    mapping = str(params.get("param.defect.mapping", "gauss"))
    return (2.0 if graded and mapping != "gauss" else EXPECTED_ORDER), ""


def observed_order(f1: float, f2: float, f3: float, r12: float, r23: float | None = None) -> float:
    """Observed order ``p`` from solutions ``f1, f2, f3`` on meshes ``h1 > h2 > h3``.

    ``r12 = h1 / h2`` and ``r23 = h2 / h3`` (default ``r23 = r12``). Assumes
    ``f_i = f + C h_i^p``. Returns NaN when the differences do not decrease monotonically with
    the same sign (oscillatory or non-asymptotic convergence) or vanish.
    """
    r23 = r12 if r23 is None else r23
    d12 = f1 - f2
    d23 = f2 - f3
    if d12 == 0.0 or d23 == 0.0 or (d12 > 0) != (d23 > 0):
        return float("nan")
    ratio = d12 / d23  # = r23^p (r12^p - 1) / (r23^p - 1)
    if math.isclose(r12, r23, rel_tol=1e-9):
        return float(math.log(ratio) / math.log(r12)) if ratio > 0 else float("nan")

    def g(p: float) -> float:
        return math.log(r23**p * (r12**p - 1.0) / (r23**p - 1.0)) - math.log(ratio)

    from scipy.optimize import brentq

    lo, hi = 1e-3, 30.0
    if g(lo) * g(hi) > 0:
        return float("nan")
    return float(brentq(g, lo, hi, xtol=1e-12))  # smooth in p; 1e-12 far above round-off


def richardson(f_coarse: float, f_fine: float, r: float, p: float) -> float:
    """Richardson extrapolation ``f_fine + (f_fine - f_coarse) / (r^p - 1)``, ``r = h_c / h_f``."""
    if not (math.isfinite(p) and p > 0 and r > 1):
        return float("nan")
    return float(f_fine + (f_fine - f_coarse) / (r**p - 1.0))


def fit_slope(h: Sequence[float], err: Sequence[float]) -> float:
    """Least-squares slope of ``log(err)`` against ``log(h)`` (NaN with fewer than 2 points)."""
    h = np.asarray(h, float)
    err = np.asarray(err, float)
    ok = np.isfinite(h) & np.isfinite(err) & (h > 0) & (err > 0)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(h[ok]), np.log(err[ok]), 1)[0])


def convergence_analysis(
    h: Sequence[float], values: Sequence[float], noise_rel: float = 1e-7
) -> dict[str, Any]:
    """Observed order, Richardson-extrapolated value and errors of a mesh sequence.

    ``h`` are element lengths (any order, at least three distinct), ``values`` the computed
    quantity on each. The order is taken from the *finest* triplet whose two differences both
    exceed the noise floor ``noise_rel * |f_finest|`` (solver tolerance / round-off); the
    extrapolated value uses the two finest meshes of that triplet.

    Returns a dict with ``h``, ``values`` (sorted coarse to fine), ``orders`` (one per
    consecutive triplet), ``order``, ``extrapolated``, ``error`` (``|f - f_ext|``, or
    ``|f - f_finest|`` when no order could be determined), ``rel_error``, ``slope`` (least-squares
    slope of the errors above the noise floor) and ``status``: ``'asymptotic'``, ``'round-off'``
    (the finest differences are at the noise floor: the quantity is converged to solver accuracy,
    e.g. the nodally exact uniform-beam statics) or ``'not-asymptotic'``.
    """
    h = np.asarray(h, float)
    f = np.asarray(values, float)
    if h.size != f.size or h.size < 3:
        raise ValueError("convergence_analysis needs at least three (h, value) pairs")
    order_idx = np.argsort(-h)
    h, f = h[order_idx], f[order_idx]
    if np.any(np.diff(h) >= 0):
        raise ValueError("element lengths must be distinct")
    floor = noise_rel * abs(f[-1])
    orders = np.array(
        [
            observed_order(f[i], f[i + 1], f[i + 2], h[i] / h[i + 1], h[i + 1] / h[i + 2])
            for i in range(f.size - 2)
        ]
    )
    d = np.abs(np.diff(f))
    status = "not-asymptotic"
    order = float("nan")
    extrap = float("nan")
    for i in range(f.size - 3, -1, -1):
        if d[i] > floor and d[i + 1] > floor and np.isfinite(orders[i]):
            order = float(orders[i])
            extrap = richardson(f[i + 1], f[i + 2], h[i + 1] / h[i + 2], order)
            status = "asymptotic"
            break
    if status != "asymptotic" and d[-1] <= floor:
        status = "round-off"
    ref = extrap if math.isfinite(extrap) else float(f[-1])
    err = np.abs(f - ref)
    rel = err / abs(ref) if ref != 0 else err
    above = err > floor
    slope = fit_slope(h[above], err[above])
    return {
        "h": h,
        "values": f,
        "orders": orders,
        "order": order,
        "extrapolated": extrap,
        "reference": ref,
        "error": err,
        "rel_error": rel,
        "slope": slope,
        "status": status,
        "noise_floor": floor,
    }


def run_mesh_convergence(
    case: CaseSpec, meshes: Iterable[int], n_modes: int = 3, noise_rel: float = 1e-7
) -> xr.Dataset:
    """Static tip deflection and first ``n_modes`` frequencies of ``case`` over ``meshes``.

    Everything but ``mesh.n_elements`` is the case's own setting (mapping, Gauss points, strain
    model). Frequencies are about the straight reference. Returns a Dataset with dimensions
    ``mesh`` and ``quantity`` (``tip_y``, ``omega_1`` ...).
    """
    meshes = sorted({int(m) for m in meshes})
    t0 = run_clock()
    vals = np.array([_mesh_values(case, ne, n_modes) for ne in meshes])  # (mesh, quantity)
    wall = run_clock() - t0
    names = ["tip_y"] + [f"omega_{k}" for k in range(1, n_modes + 1)]
    units = ["m"] + ["rad/s"] * n_modes
    le = case.beam.length / np.array(meshes, float)
    res = [convergence_analysis(le, vals[:, j], noise_rel) for j in range(len(names))]
    # convergence_analysis sorts coarse to fine: meshes ascending is already that order
    ds = _convergence_dataset(meshes, le, names, units, vals, res)
    ds.attrs.update(
        provenance_attrs(
            case,
            study="mesh_convergence",
            meshes=",".join(map(str, meshes)),
            expected_order=EXPECTED_ORDER,
            noise_rel=noise_rel,
            modal_about="reference",
            wall_s=wall,
        )
    )
    return ds


def _mesh_values(case: CaseSpec, ne: int, n_modes: int) -> list[float]:
    """Static tip deflection and the first ``n_modes`` frequencies of ``case`` on ``ne``
    elements (NaN-padded when fewer modes come out)."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    model = BeamModel(case.with_overrides({"mesh.n_elements": ne}))
    st = solve_static(model)
    # a fresh model: with damage enabled the static solve leaves its damage in `model`
    om = modal_analysis(BeamModel(model.case), n_modes=n_modes, about="reference").omega
    om = np.pad(om, (0, n_modes - om.size), constant_values=np.nan)
    return [st.tip_y, *om]


def _convergence_dataset(meshes, le, names, units, vals, res) -> xr.Dataset:
    """The mesh study as a Dataset over ``mesh`` and ``quantity`` (:func:`run_mesh_convergence`)."""
    return xr.Dataset(
        {
            "value": (("mesh", "quantity"), vals, {"long_name": "computed value (see units)"}),
            "error": (
                ("mesh", "quantity"),
                np.stack([r["error"] for r in res], axis=1),
                {"long_name": "|value - Richardson extrapolation| (units of the quantity)"},
            ),
            "rel_error": (
                ("mesh", "quantity"),
                np.stack([r["rel_error"] for r in res], axis=1),
                {"units": "1", "long_name": "relative error vs Richardson extrapolation"},
            ),
            "observed_order": (
                "quantity",
                np.array([r["order"] for r in res]),
                {"units": "1", "long_name": "observed order from the finest usable triplet"},
            ),
            "fitted_slope": (
                "quantity",
                np.array([r["slope"] for r in res]),
                {"units": "1", "long_name": "least-squares log-log slope of error vs l_e"},
            ),
            "extrapolated": (
                "quantity",
                np.array([r["extrapolated"] for r in res]),
                {"long_name": "Richardson-extrapolated value (units of the quantity)"},
            ),
            "triplet_order": (
                ("triplet", "quantity"),
                np.stack([r["orders"] for r in res], axis=1),
                {"units": "1", "long_name": "observed order of meshes (k, k+1, k+2)"},
            ),
            "status": ("quantity", np.array([r["status"] for r in res], dtype=object)),
            "quantity_units": ("quantity", np.array(units, dtype=object)),
        },
        coords={
            "mesh": ("mesh", np.array(meshes), {"units": "1", "long_name": "number of elements"}),
            "element_length": ("mesh", le, {"units": "m"}),
            "quantity": ("quantity", np.array(names, dtype=object)),
            "triplet": ("triplet", np.arange(len(meshes) - 2)),
        },
    )
