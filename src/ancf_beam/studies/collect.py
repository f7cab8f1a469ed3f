"""Collected summary of every case: one Dataset along ``case`` and the parameter record table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam import __version__

__all__ = ["collect"]


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

    records = [_case_record(name, d) for name, d in per_case.items()]
    df = pd.DataFrame.from_records(records)
    return _summary_dataset(df, records), df


def _case_record(name: str, d: Mapping[str, xr.Dataset]) -> dict[str, Any]:
    """One row of the summary: the case's parameters and results (see :func:`collect`)."""
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
    return rec


def _summary_dataset(df, records: list[dict[str, Any]]) -> xr.Dataset:
    """The summary DataFrame as a Dataset along ``case`` with units and collection attributes."""
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
    return ds
