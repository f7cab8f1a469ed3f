"""Pipeline-level studies: mesh convergence, validation checks and the collected summary.

These functions sit between :mod:`ancf_beam.analyses` (one computation per case) and the
Snakemake workflow (``workflow/``): the workflow scripts are thin adapters that call them and
write the returned :class:`xarray.Dataset` to NetCDF. Everything here is plain numpy/xarray.

* :func:`observed_order`, :func:`richardson`, :func:`convergence_analysis`, :func:`fit_slope`:
  order of convergence from three solutions on uniformly (or non-uniformly) refined meshes and the
  Richardson-extrapolated value.
* :func:`run_mesh_convergence`: static tip deflection and the first natural frequencies over a
  list of meshes, with observed orders and extrapolated values.
* :func:`check`, :func:`checks_dataset`, :func:`run_validation`: a table of checks (reference,
  computed, relative error, tolerance, PASS/FAIL) comparing the ANCF results with independent
  references (exact graded quadrature, stepped transfer matrix, closed forms, energy balance).
* :func:`collect`: one summary Dataset (dimension ``case``) and the "parameter record table".
* :func:`package_fingerprint`: package version + hash of the package source (the workflow puts
  it into ``params`` so that editing the library re-runs the affected jobs).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam import __version__
from ancf_beam.config import PIPELINE_DEFAULTS, CaseSpec
from ancf_beam.io import provenance_attrs

#: Expected order of convergence of the cubic Hermite (ANCF) element for the static tip deflection
#: and the natural frequencies (eigenvalue error ~ h^(2(p+1-m)) = h^4 for p = 3, m = 2).
EXPECTED_ORDER = 4.0

#: Default tolerances of the validation checks (relative unless stated; see :func:`run_validation`),
#: from the one home of defaults, ``ancf_beam.config.PIPELINE_DEFAULTS['validation']``.
DEFAULT_TOLERANCES: dict[str, float] = {
    k: v
    for k, v in PIPELINE_DEFAULTS["validation"]["tolerances"].items()
    if k not in ("energy_drift_damage", "damage_energy_order_rel")
}


# --------------------------------------------------------------------------------------------
# provenance helper
# --------------------------------------------------------------------------------------------
def package_fingerprint() -> str:
    """``'<version>+<sha256[:12]>'`` of every ``*.py`` file of the installed package source."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return f"{__version__}+{h.hexdigest()[:12]}"


# --------------------------------------------------------------------------------------------
# convergence: observed order and Richardson extrapolation
# --------------------------------------------------------------------------------------------
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
    return float(brentq(g, lo, hi, xtol=1e-12))


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
        [observed_order(f[i], f[i + 1], f[i + 2], h[i] / h[i + 1], h[i + 1] / h[i + 2])
         for i in range(f.size - 2)]
    )  # fmt: skip
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
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    meshes = sorted({int(m) for m in meshes})
    t0 = time.perf_counter()
    rows = []
    for ne in meshes:
        model = BeamModel(case.with_overrides({"mesh.n_elements": ne}))
        st = solve_static(model)
        # a fresh model: with damage enabled the static solve leaves its damage in `model`
        om = modal_analysis(BeamModel(model.case), n_modes=n_modes, about="reference").omega
        om = np.pad(om, (0, n_modes - om.size), constant_values=np.nan)
        rows.append([st.tip_y, *om])
    wall = time.perf_counter() - t0
    vals = np.array(rows)  # (mesh, quantity)
    names = ["tip_y"] + [f"omega_{k}" for k in range(1, n_modes + 1)]
    units = ["m"] + ["rad/s"] * n_modes
    le = case.beam.length / np.array(meshes, float)
    res = [convergence_analysis(le, vals[:, j], noise_rel) for j in range(len(names))]
    # convergence_analysis sorts coarse to fine: meshes ascending is already that order
    ds = xr.Dataset(
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


# --------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------
def check(
    name: str,
    reference: float,
    computed: float,
    tolerance: float,
    mode: str = "rel",
    note: str = "",
    case: str = "",
) -> dict[str, Any]:
    """One row of a check table.

    ``mode``: ``'rel'`` (``|c - r| / |r| <= tol``), ``'abs'`` (``|c - r| <= tol``; the error
    column then holds the absolute error), ``'max'`` (``c <= r (1 + tol)``: the computed value
    must not exceed the reference; the error column holds ``(c - r) / |r|``) or ``'min'``
    (``c >= r (1 - tol)``; the error column holds ``(r - c) / |r|``).
    """
    reference = float(reference)
    computed = float(computed)
    if mode == "rel":
        err = abs(computed - reference) / abs(reference) if reference != 0 else abs(computed)
        ok = err <= tolerance
    elif mode == "abs":
        err = abs(computed - reference)
        ok = err <= tolerance
    elif mode == "max":
        err = (computed - reference) / abs(reference) if reference != 0 else computed
        ok = err <= tolerance
    elif mode == "min":
        err = (reference - computed) / abs(reference) if reference != 0 else -computed
        ok = err <= tolerance
    else:
        raise ValueError(f"unknown check mode {mode!r} (rel, abs, max, min)")
    ok = bool(ok and math.isfinite(err))
    return {
        "case": case,
        "check": name,
        "reference": reference,
        "computed": computed,
        "rel_error": float(err),
        "tolerance": float(tolerance),
        "mode": mode,
        "status": "PASS" if ok else "FAIL",
        "note": note,
    }


def checks_dataset(rows: Sequence[Mapping[str, Any]]) -> xr.Dataset:
    """A list of :func:`check` rows as a Dataset along dimension ``check``."""
    n = len(rows)

    def col(key, dtype):
        return np.array([r[key] for r in rows], dtype=dtype) if n else np.array([], dtype=dtype)

    ds = xr.Dataset(
        {
            "case": ("check", col("case", object)),
            "name": ("check", col("check", object)),
            "reference": ("check", col("reference", float)),
            "computed": ("check", col("computed", float)),
            "rel_error": (
                "check",
                col("rel_error", float),
                {"units": "1", "long_name": "relative error (absolute for mode 'abs')"},
            ),
            "tolerance": ("check", col("tolerance", float)),
            "check_mode": ("check", col("mode", object)),
            "status": ("check", col("status", object)),
            "note": ("check", col("note", object)),
        },
        coords={"check": np.arange(n)},
    )
    n_pass = int(sum(r["status"] == "PASS" for r in rows))
    ds.attrs.update({"n_checks": n, "n_pass": n_pass, "n_fail": n - n_pass})
    return ds


def checks_frame(ds: xr.Dataset):
    """A check Dataset (see :func:`checks_dataset`) as a pandas DataFrame."""
    import pandas as pd

    cols = ["case", "name", "reference", "computed", "rel_error", "tolerance", "check_mode"]
    df = pd.DataFrame({c: ds[c].values for c in cols + ["status", "note"]})
    return df.rename(columns={"name": "check", "rel_error": "rel. error", "check_mode": "mode"})


def whole_period_mean(
    t: np.ndarray, y: np.ndarray, period: float, start_fraction: float = 0.5
) -> tuple[float, int]:
    """Mean of ``y`` over the largest whole number of ``period`` s ending at ``t[-1]`` and lying
    in ``t >= start_fraction * t[-1]``. Returns ``(mean, n_periods)``; with less than one period
    available, the plain mean over that window and ``0``."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    t_end = t[-1]
    window = t_end - start_fraction * t_end
    n = int(window // period) if period > 0 else 0
    start = t_end - n * period if n >= 1 else start_fraction * t_end
    sel = t > start
    if sel.sum() < 1:
        return float(y[-1]), 0
    # trapezoidal mean from the (interpolated) window start (samples may be non-uniform)
    ts = np.concatenate([[start], t[sel]])
    ys = np.concatenate([[np.interp(start, t, y)], y[sel]])
    area = float(np.sum(0.5 * (ys[1:] + ys[:-1]) * np.diff(ts)))
    return area / float(ts[-1] - ts[0]), n


def _uniform_counterpart(case: CaseSpec) -> CaseSpec:
    """The same case with every defect removed: no gradients, tables, imperfection or damage."""
    flat = case.flat()
    over = {k: 0.0 for k in flat if k.startswith("defect.") and k.endswith(".lam")}
    over.update({"defect.lam": 0.0})
    over.update({k: None for k in flat if k.startswith("defect.") and k.endswith("table")})
    if "imperfection.kappa0" in flat:
        over.update({"imperfection.kappa0": 0.0, "imperfection.tip_offset": None})
    if "damage.enabled" in flat:
        over["damage.enabled"] = False
    return case.with_overrides(over)


def _straight_elastic(case: CaseSpec) -> bool:
    """True when the linear straight-beam references apply (no initial curvature, no damage)."""
    imp = getattr(case, "imperfection", None)
    dmg = getattr(case, "damage", None)
    return not (imp is not None and imp.active) and not (dmg is not None and dmg.enabled)


def run_validation(
    case: CaseSpec,
    static_ds: xr.Dataset,
    modal_ds: xr.Dataset,
    simulate_ds: xr.Dataset | None = None,
    tolerances: Mapping[str, float] | None = None,
    segments: int | None = None,
) -> xr.Dataset:
    """Validation checks of one case (a check Dataset with provenance attributes).

    References (all independent of the ANCF code): exact linear graded statics by quadrature
    (:func:`~ancf_beam.references.transfer.exact_graded_static`), the stepped transfer-matrix beam
    with
    ``segments`` (default ``stepped.segments``) uniform pieces for statics and frequencies, the
    uniform-beam closed forms for the same case with its defects removed, and for the explicit
    run (``simulate_ds``) the energy balance and the static equilibrium about which the free
    vibration oscillates. ``static_ds`` and ``modal_ds`` are the outputs of
    :func:`ancf_beam.analyses.run_static` / :func:`~ancf_beam.analyses.run_modal` for ``case``.

    Checks and default tolerances (:data:`DEFAULT_TOLERANCES`):

    * ANCF small-deflection model (``mesh.strain: linear``) tip deflection and tip slope vs the
      exact quadrature, and the nonlinear ANCF tip deflection (``static_ds``; at this load the
      geometric nonlinearity is ~1e-6) vs the same: 0.5 %;
    * stepped beam (N segments) tip deflection vs exact: 0.5 %; its observed order between N and
      2N vs 2: 10 %;
    * ANCF frequencies (``modal_ds``) vs stepped transfer-matrix frequencies: 0.5 %;
    * uniform counterpart: tip deflection ``-q L^4 / 8 EI`` and ``omega_k`` closed forms: 0.5 %;
    * explicit run: energy drift ``max |E - E0| / max T`` below 1e-3; mean tip deflection over
      the whole first-mode periods of the second half vs the static tip (at the run's mesh): 2 %
      (the free vibration about the static equilibrium averages out over whole periods; the
      plain second-half mean is reported in the note); ``dt / dt_critical`` equal to the
      configured safety factor.

    With an initially curved reference (``imperfection``) or damage the ANCF-vs-linear
    straight-beam comparisons do not apply and are left out (attribute
    ``straight_elastic_references = 0``); the other checks remain.
    """
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.references import transfer
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    tol = dict(DEFAULT_TOLERANCES)
    tol.update(tolerances or {})
    segments = case.stepped.segments if segments is None else int(segments)
    t0 = time.perf_counter()
    name = case.name
    rows: list[dict[str, Any]] = []
    p = SectionProfile(case)
    L = case.beam.length

    # ---- statics: exact graded quadrature, stepped transfer matrix, ANCF linear + nonlinear
    exact = transfer.exact_graded_static(L, p.EI, p.q)
    w_ex, s_ex = exact["tip_deflection"], exact["tip_slope"]
    straight = _straight_elastic(case)
    lin_model = BeamModel(case.with_overrides({"mesh.strain": "linear"}))
    lin = solve_static(lin_model)
    if straight:
        rows.extend(_static_reference_checks(name, static_ds, lin, w_ex, s_ex, tol))
    rows.extend(_stepped_checks(case, p, L, segments, w_ex, tol))
    om = np.asarray(modal_ds["omega"].values, float)
    about = str(modal_ds.attrs.get("about", "reference"))
    if about != "reference":  # the TM reference is the straight beam
        om = modal_analysis(BeamModel(case), n_modes=om.size, about="reference").omega
    om_tm = np.asarray(transfer.stepped_frequencies(L, p.EI, p.rhoA, segments, om.size))
    if straight:
        for k in range(om.size):
            rows.append(check(
                f"omega_{k + 1}: ANCF vs stepped TM (N={segments})", om_tm[k], om[k],
                tol["frequency_rel"], note="rad/s", case=name))  # fmt: skip
    rows.extend(_uniform_checks(case, om.size, tol))
    if simulate_ds is not None:
        rows.extend(_dynamics_checks(case, static_ds, simulate_ds, tol))
    return _validation_dataset(case, rows, exact, p, om, om_tm, segments, tol, t0)


def _static_reference_checks(name, static_ds, lin, w_ex, s_ex, tol):
    rows = []
    rows.append(check(
        "static tip deflection: ANCF linear vs exact quadrature", w_ex, lin.tip_y,
        tol["static_rel"], note="m", case=name))  # fmt: skip
    rows.append(check(
        "static tip slope: ANCF linear vs exact quadrature", s_ex,
        math.radians(lin.tip_angle_deg), tol["static_rel"], note="rad", case=name))  # fmt: skip
    rows.append(check(
        "static tip deflection: ANCF nonlinear vs exact linear quadrature", w_ex,
        float(static_ds["tip_y"]), tol["static_rel"],
        note="m; small load, geometric nonlinearity ~ (w/L)^2", case=name))  # fmt: skip
    return rows


def _stepped_checks(case, p, L, segments, w_ex, tol):
    from ancf_beam.references import transfer

    name = case.name
    rows = []
    st_n = transfer.stepped_static(L, p.EI, p.q, segments)
    st_2n = transfer.stepped_static(L, p.EI, p.q, 2 * segments)
    rows.append(check(
        f"static tip deflection: stepped TM (N={segments}) vs exact quadrature", w_ex,
        st_n["tip_deflection"], tol["stepped_rel"], note="m", case=name))  # fmt: skip
    e_n = st_n["tip_deflection"] - w_ex
    e_2n = st_2n["tip_deflection"] - w_ex
    if abs(e_n) <= 1e-9 * abs(w_ex):  # uniform sections: the stepped beam is exact for any N
        rows.append(check(
            f"stepped TM exact for a uniform beam (N={segments})", w_ex,
            st_n["tip_deflection"], 1e-9, note="m", case=name))  # fmt: skip
    else:
        p_obs = math.log(abs(e_n / e_2n)) / math.log(2.0) if e_2n != 0 else float("nan")
        rows.append(check(
            f"stepped TM observed order (N={segments}, {2 * segments})", 2.0, p_obs,
            tol["stepped_order_rel"], note="midpoint-property stepped beam: O(1/N^2)",
            case=name))  # fmt: skip
    return rows


def _uniform_checks(case, n_modes, tol):
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.references import transfer
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    name = case.name
    rows = []
    L = case.beam.length
    uc = _uniform_counterpart(case)
    pu = SectionProfile(uc)
    EI0, rhoA0 = float(pu.EI(0.0)), float(pu.rhoA(0.0))
    w_u, _ = transfer.uniform_static_tip(rhoA0 * case.load.g, L, EI0)
    umodel = BeamModel(uc)
    ust = solve_static(umodel)
    rows.append(check(
        "uniform counterpart: tip deflection vs -q L^4 / (8 EI)", w_u, ust.tip_y,
        tol["analytic_rel"], note="m; defects removed", case=name))  # fmt: skip
    nmu = min(3, n_modes)
    om_u = transfer.uniform_frequencies(L, EI0, rhoA0, nmu)
    om_anc = modal_analysis(umodel, n_modes=nmu, about="reference").omega
    for k in range(nmu):
        rows.append(check(
            f"uniform counterpart: omega_{k + 1} vs (beta_k L)^2 sqrt(EI / rhoA) / L^2",
            om_u[k], om_anc[k], tol["analytic_rel"], note="rad/s; defects removed",
            case=name))  # fmt: skip
    return rows


def _dynamics_checks(case, static_ds, simulate_ds, tol):
    from ancf_beam.analyses import run_static
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis

    name = case.name
    rows = []
    a = simulate_ds.attrs
    drift = float(a["energy_drift_rel"])
    rows.append(check(
        "explicit run: energy drift max|E - E0| / max T", 0.0, drift,
        tol["energy_drift"], mode="abs", note="undamped central differences",
        case=name))  # fmt: skip
    ne_sim = int(simulate_ds.sizes["node"]) - 1
    if ne_sim == case.mesh.n_elements:
        tip_static = float(static_ds["tip_y"])
        sim_case = case
    else:
        sim_case = case.with_overrides({"mesh.n_elements": ne_sim})
        tip_static = run_static(sim_case)[0]["tip_y"]
    w1 = float(modal_analysis(BeamModel(sim_case), n_modes=1, about="static").omega[0])
    t = simulate_ds["time"].values
    y = simulate_ds["tip_y"].values
    mean, nper = whole_period_mean(t, y, 2 * math.pi / w1)
    half_mean = float(np.mean(y[t >= 0.5 * t[-1]]))
    rows.append(check(
        "explicit run: mean tip over whole periods (2nd half) vs static tip", tip_static,
        mean, tol["mean_tip_rel"],
        note=f"m; {nper} periods of omega_1 = {w1:.4g} rad/s; plain 2nd-half mean "
             f"{half_mean:.6g} m", case=name))  # fmt: skip
    if case.dynamics.dt is None:
        rows.append(check(
            "explicit run: dt / dt_critical = dynamics.dt_safety", case.dynamics.dt_safety,
            float(a["dt"]) / float(a["dt_critical"]), tol["dt_safety_rel"],
            note="dt_critical read from the critical_dt result", case=name))  # fmt: skip
    return rows


def _validation_dataset(case, rows, exact, p, om, om_tm, segments, tol, t0):
    ds = checks_dataset(rows)
    wall = time.perf_counter() - t0
    ds = ds.assign(
        exact_x=("x_exact", exact["x"], {"units": "m"}),
        exact_w=("x_exact", exact["w"], {"units": "m", "long_name": "exact linear deflection"}),
        exact_curvature=(
            "x_exact",
            -exact["moment"] / p.EI(exact["x"]),
            {"units": "rad/m", "long_name": "exact linear curvature -M/EI"},
        ),
        stepped_omega=("mode", om_tm, {"units": "rad/s"}),
        ancf_omega=("mode", om, {"units": "rad/s"}),
    )
    ds = ds.assign_coords(mode=np.arange(1, om.size + 1))
    n_pass = sum(r["status"] == "PASS" for r in rows)
    ds.attrs.update(
        provenance_attrs(
            case,
            study="validation",
            segments=segments,
            n_checks=len(rows),
            n_pass=n_pass,
            n_fail=len(rows) - n_pass,
            straight_elastic_references=_straight_elastic(case),
            wall_s=wall,
            **{f"tolerance.{k}": v for k, v in tol.items()},
        )
    )
    return ds


# --------------------------------------------------------------------------------------------
# collect
# --------------------------------------------------------------------------------------------
def _num(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def collect(per_case: Mapping[str, Mapping[str, xr.Dataset]]):
    """Summary Dataset (dimension ``case``) and parameter record table (pandas DataFrame).

    ``per_case[name]`` maps study names to that case's Datasets: ``static``, ``modal``,
    ``simulate``, ``critical_dt`` (at the run's mesh), ``validation`` and optionally
    ``convergence``. One row per case: every resolved parameter (``param.*``), the run's mesh and
    time step, static and dynamic tip deflections, frequencies, energy drift, validation counts,
    the observed orders and extrapolated values of the mesh study, and wall times.
    """
    import pandas as pd

    records = []
    for name, d in per_case.items():
        st, mo, si, cr, va = (d[k] for k in ("static", "modal", "simulate", "critical_dt",
                                              "validation"))  # fmt: skip
        rec: dict[str, Any] = {"case": name}
        rec.update({k: _num(v) for k, v in st.attrs.items() if k.startswith("param.")})
        rec["sim.n_elements"] = int(si.sizes["node"]) - 1
        rec["sim.t_end"] = float(si.attrs["t_end"])
        rec["dt_critical"] = float(cr["dt_critical"])
        rec["dt_element_bound"] = float(cr["dt_element_bound"])
        rec["governing_mode"] = str(cr.attrs["governing_mode"])
        rec["dt"] = float(si.attrs["dt"])
        rec["dt_over_dt_critical"] = float(si.attrs["dt_safety"])
        rec["steps"] = int(si.attrs["steps"])
        rec["static_tip_x"] = float(st["tip_x"])
        rec["static_tip_y"] = float(st["tip_y"])
        rec["static_tip_angle_deg"] = float(st["tip_angle_deg"])
        rec["dynamic_tip_y_min"] = float(si.attrs["tip_y_min"])
        rec["dynamic_tip_y_mean_2nd_half"] = float(si.attrs["tip_y_mean"])
        rec["dynamic_tip_y_final"] = float(si["tip_y"].values[-1])
        for k, w in enumerate(mo["omega"].values, start=1):
            rec[f"omega_{k}"] = float(w)
            rec[f"f_{k}_hz"] = float(w) / (2 * math.pi)
        rec["energy_drift_rel"] = float(si.attrs["energy_drift_rel"])
        rec["validation_pass"] = int(va.attrs["n_pass"])
        rec["validation_checks"] = int(va.attrs["n_checks"])
        cv = d.get("convergence")
        if cv is not None:
            for q in cv["quantity"].values:
                rec[f"conv.{q}.order"] = float(cv["observed_order"].sel(quantity=q))
                rec[f"conv.{q}.extrapolated"] = float(cv["extrapolated"].sel(quantity=q))
        rec["wall_s.static"] = float(st.attrs["wall_s"])
        rec["wall_s.modal"] = float(mo.attrs["wall_s"])
        rec["wall_s.critical_dt"] = float(cr.attrs["wall_s"])
        rec["wall_s.simulate"] = float(si.attrs["wall_s"])
        rec["wall_s.validation"] = float(va.attrs["wall_s"])
        rec["wall_s.total"] = sum(rec[k] for k in list(rec) if k.startswith("wall_s."))
        rec["config_hash"] = st.attrs["config_hash"]
        rec["package_version"] = st.attrs["package_version"]
        rec["git_commit"] = st.attrs["git_commit"]
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    units = {
        "dt_critical": "s", "dt_element_bound": "s", "dt": "s", "sim.t_end": "s",
        "static_tip_x": "m", "static_tip_y": "m", "static_tip_angle_deg": "degree",
        "dynamic_tip_y_min": "m", "dynamic_tip_y_mean_2nd_half": "m",
        "dynamic_tip_y_final": "m", "energy_drift_rel": "1", "dt_over_dt_critical": "1",
    }  # fmt: skip
    data_vars = {}
    for col in df.columns:
        if col == "case":
            continue
        vals = df[col].to_numpy()
        if vals.dtype == object:
            vals = vals.astype(str).astype(object)
        attrs = {}
        if col in units:
            attrs["units"] = units[col]
        elif col.startswith("omega_") or (col.startswith("conv.omega") and "extrap" in col):
            attrs["units"] = "rad/s"
        elif col.startswith("f_"):
            attrs["units"] = "Hz"
        elif col.startswith("wall_s"):
            attrs["units"] = "s"
        data_vars[col] = ("case", vals, attrs)
    ds = xr.Dataset(data_vars, coords={"case": ("case", df["case"].to_numpy().astype(object))})
    commits = sorted({str(r["git_commit"]) for r in records})
    ds.attrs.update(
        {
            "study": "collect",
            "package": "ancf_beam",
            "package_version": __version__,
            "git_commit": ",".join(commits),
            "n_cases": len(records),
            "validation_pass": int(df["validation_pass"].sum()) if records else 0,
            "validation_checks": int(df["validation_checks"].sum()) if records else 0,
            "units": "SI (m, kg, s, N, Pa, rad)",
        }
    )
    return ds, df
