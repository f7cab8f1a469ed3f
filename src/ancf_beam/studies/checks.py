"""Tables of checks shared by every study and report: one row per check (reference, computed,
error, tolerance, PASS/FAIL), as a Dataset or a DataFrame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr


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


def extend_checks(ds: xr.Dataset, rows: Sequence[Mapping[str, Any]], **attrs) -> xr.Dataset:
    """A check Dataset (:func:`checks_dataset` layout, e.g. from
    :func:`~ancf_beam.studies.validation.run_validation`) with ``rows`` appended; the other
    variables and the attributes are kept, ``n_checks``/``n_pass``/``n_fail`` recounted."""

    old = [
        {"case": c, "check": n, "reference": r, "computed": v, "rel_error": e, "tolerance": t,
         "mode": m, "status": s, "note": no}
        for c, n, r, v, e, t, m, s, no in zip(
            ds["case"].values, ds["name"].values, ds["reference"].values, ds["computed"].values,
            ds["rel_error"].values, ds["tolerance"].values, ds["check_mode"].values,
            ds["status"].values, ds["note"].values, strict=True)
    ]  # fmt: skip
    new = checks_dataset([*old, *rows])
    keep = ds.drop_vars([v for v in new.data_vars if v in ds] + ["check"], errors="ignore")
    out = xr.merge([new, keep], combine_attrs="override")
    out.attrs = dict(ds.attrs)
    out.attrs.update(new.attrs)
    out.attrs.update(attrs)
    return out
