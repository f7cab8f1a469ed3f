"""Collected summary of every case: one Dataset along ``case`` and the parameter record table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam import __version__

__all__ = ["collect", "data_dictionary"]


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
    Units and meanings of the columns: :func:`data_dictionary`.
    """
    import pandas as pd

    records = [_case_record(name, d) for name, d in per_case.items()]
    df = pd.DataFrame.from_records(records)
    return _summary_dataset(df, records), df


def _case_record(name: str, d: Mapping[str, xr.Dataset]) -> dict[str, Any]:
    """One row of the summary: the case's parameters and results (see :func:`collect`)."""
    st, mo, si, cr, va = (
        d[k] for k in ("static", "modal", "simulate", "critical_dt", "validation")
    )
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
    # displacements from the stress-free reference tip (the run starts at rest in it): for an
    # initially curved beam the tip positions above are not its deflection
    x0, y0 = float(si["tip_x"].values[0]), float(si["tip_y"].values[0])
    rec["ref_tip_x"], rec["ref_tip_y"] = x0, y0
    rec["static_tip_dx"] = rec["static_tip_x"] - x0
    rec["static_tip_dy"] = rec["static_tip_y"] - y0
    rec["dynamic_tip_dy_min"] = rec["dynamic_tip_y_min"] - y0
    for var in ("kinetic", "strain"):
        rec[f"{var}_energy_max"] = float(si[var].max())
    rec["gravity_energy_min"] = float(si["gravity"].min())
    rec["t_kinetic_energy_max"] = float(si["time"].values[int(np.argmax(si["kinetic"].values))])
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


# unit and meaning of the summary columns that are not case parameters (see data_dictionary)
_COLUMNS = {
    "case": ("", "case name (config cases:)"),
    "sim.n_elements": ("1", "elements of the explicit run"),
    "sim.t_end": ("s", "end time of the explicit run"),
    "dt_critical": ("s", "critical explicit step 2/omega_max at the run's mesh"),
    "dt_element_bound": ("s", "element-by-element bound of the critical step (conservative)"),
    "governing_mode": ("", "mode of omega_max: axial or bending"),
    "dt": ("s", "time step of the explicit run"),
    "dt_over_dt_critical": ("1", "dt / dt_critical"),
    "steps": ("1", "time steps of the explicit run"),
    "static_tip_x": ("m", "static tip position x (absolute)"),
    "static_tip_y": ("m", "static tip position y (absolute; negative downward)"),
    "static_tip_angle_deg": ("degree", "static tip tangent angle from +x"),
    "dynamic_tip_y_min": ("m", "lowest tip position y of the explicit run (absolute)"),
    "dynamic_tip_y_mean_2nd_half": ("m", "mean tip position y over the second half of the run"),
    "dynamic_tip_y_final": ("m", "tip position y at the end of the run"),
    "ref_tip_x": ("m", "tip x of the stress-free reference (L for a straight beam)"),
    "ref_tip_y": ("m", "tip y of the stress-free reference (0 for a straight beam)"),
    "static_tip_dx": ("m", "static tip displacement x from the reference tip"),
    "static_tip_dy": ("m", "static tip displacement y from the reference tip (deflection)"),
    "dynamic_tip_dy_min": ("m", "largest downward tip displacement of the run (signed)"),
    "kinetic_energy_max": ("J", "peak kinetic energy T of the run"),
    "strain_energy_max": ("J", "peak strain energy U of the run"),
    "gravity_energy_min": ("J", "lowest gravity potential V of the run (V = 0 at the start)"),
    "t_kinetic_energy_max": ("s", "time of the peak kinetic energy"),
    "energy_drift_rel": ("1", "max |E - E0| / max T of the run"),
    "validation_pass": ("1", "validation checks that PASS"),
    "validation_checks": ("1", "validation checks"),
    "config_hash": ("", "hash of the resolved case"),
    "package_version": ("", "ancf_beam version"),
    "git_commit": ("", "git commit of the code that computed the case"),
}


def _column_meta(col: str) -> tuple[str, str]:
    """``(unit, meaning)`` of a summary column."""
    from ancf_beam.studies.presentation import PARAM_UNITS

    if col in _COLUMNS:
        return _COLUMNS[col]
    if col.startswith("param."):
        key = col[len("param.") :]
        return PARAM_UNITS.get(key, ""), f"resolved case parameter {key} (config.yaml)"
    if col.startswith("omega_"):
        return "rad/s", f"natural circular frequency {col[6:]} (modal, about the reference)"
    if col.startswith("f_") and col.endswith("_hz"):
        return "Hz", f"natural frequency {col[2:-3]} in Hz"
    if col.startswith("conv."):
        _, q, what = col.split(".")
        if what == "order":
            return "1", f"observed mesh-convergence order of {q}"
        unit = "m" if q == "tip_y" else "rad/s"
        return unit, f"Richardson-extrapolated {q} of the mesh study"
    if col.startswith("wall_s."):
        return "s", f"wall time of the {col[7:]} step"
    return "", ""


def data_dictionary(columns) -> Any:
    """Unit and meaning of each summary column (``summary_units.csv``): a DataFrame with
    ``column``, ``unit`` (``1``: dimensionless, empty: text) and ``description``."""
    import pandas as pd

    rows = [(c, *_column_meta(c)) for c in columns]
    return pd.DataFrame(rows, columns=["column", "unit", "description"])


def _summary_dataset(df, records: list[dict[str, Any]]) -> xr.Dataset:
    """The summary DataFrame as a Dataset along ``case`` with units and collection attributes."""
    data_vars = {}
    for col in df.columns:
        if col == "case":
            continue
        vals = df[col].to_numpy()
        if vals.dtype == object:
            vals = vals.astype(str).astype(object)
        unit, meaning = _column_meta(col)
        attrs = {"long_name": meaning} if meaning else {}
        if unit:
            attrs["units"] = unit
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
