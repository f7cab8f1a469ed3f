"""What the report pages say about their numbers: the headline box of every page, the defect
laws of a case in words (only the laws the case carries), the resolved parameters as a grouped
table with units, the defect profiles of a case, and the synthetic two-tone signal that shows
the beat detector working (its check rows are in :func:`ancf_beam.studies.checks.defects_checks`).

The notebooks only call these and display the result; nothing here computes a result that a
check compares with itself.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "BEAT_CONTROL",
    "beat_control_signal",
    "case_styles",
    "defect_laws",
    "defect_profiles",
    "headline",
    "parameter_table",
    "params_from_attrs",
    "frame_html",
]

# units of the resolved case parameters (``param.<section>.<key>``), by key
PARAM_UNITS = {
    "beam.length": "m",
    "beam.width": "m",
    "beam.height": "m",
    "material.E0": "Pa",
    "material.rho": "kg/m^3",
    "load.g": "m/s^2",
    "imperfection.kappa0": "1/m",
    "imperfection.tip_offset": "m",
    "damage.threshold": "1",
    "damage.softening": "1",
    "damage.d_max": "1",
    "defect.lam": "1",
    "defect.n": "1",
    "defect.table": "(x/L, factor)",
    "defect.rho.lam": "1",
    "defect.rho.n": "1",
    "defect.rho.table": "(x/L, factor)",
    "defect.width.lam": "1",
    "defect.width.n": "1",
    "defect.width.table": "(x/L, factor)",
    "defect.height.lam": "1",
    "defect.height.n": "1",
    "defect.height.table": "(x/L, factor)",
    "static.rtol": "1",
    "dynamics.t_end": "s",
    "dynamics.dt": "s",
    "dynamics.dt_safety": "1",
    "dynamics.damping_alpha": "1/s",
    "dynamics.damping_beta": "s",
    "dynamics.sample_dt": "s",
    "dynamics.snapshot_dt": "s",
    "dynamics.energy_growth_limit": "1",
    "dynamics.rho_inf": "1",
    "dynamics.newmark_beta": "1",
    "dynamics.newmark_gamma": "1",
    "damage.enabled": "1",
    "mesh.n_elements": "1",
    "mesh.n_gauss_axial": "1",
    "mesh.n_gauss_bending": "1",
    "static.load_steps": "1",
    "static.max_iterations": "1",
    "static.max_cutbacks": "1",
    "modal.n_modes": "1",
    "stepped.segments": "1",
}

# gradient laws: config prefix, symbol, clamp value symbol, unit of the clamp value
_GRADIENTS = (
    ("defect", "E", "E0", "material.E0", "Pa"),
    ("defect.rho", "rho", "rho0", "material.rho", "kg/m^3"),
    ("defect.width", "b", "b0", "beam.width", "m"),
    ("defect.height", "h", "h0", "beam.height", "m"),
)


def params_from_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved case parameters (``param.*`` attributes of a result file), prefix removed,
    numpy scalars as Python numbers."""
    out = {}
    for k, v in attrs.items():
        if k.startswith("param."):
            out[k[len("param.") :]] = v.item() if isinstance(v, np.generic) else v
    return out


def _table(value: Any) -> list[list[float]] | None:
    if value is None or str(value) == "none":
        return None
    if isinstance(value, str):
        return json.loads(value)
    return [list(map(float, r)) for r in value]


def _fmt(v: float) -> str:
    return f"{float(v):.6g}"


def defect_laws(params: Mapping[str, Any]) -> list[str]:
    """One Markdown line per defect law the case carries, with its parameters: the power law
    and/or measured table of each graded property, the initial curvature, the damage law. A
    beam with none gets the one line saying it is uniform."""
    lines = []
    for prefix, sym, sym0, key0, unit in _GRADIENTS:
        lam = float(params.get(f"{prefix}.lam", 0.0))
        n = float(params.get(f"{prefix}.n", 1.0))
        table = _table(params.get(f"{prefix}.table"))
        if lam == 0.0 and table is None:
            continue
        parts = []
        if lam != 0.0:
            parts.append(f"(1 - {_fmt(lam)} (x/L)^{_fmt(n)})")
        if table is not None:
            parts.append("t(x/L)")
        line = f"`{sym}(x) = {sym0} {' '.join(parts)}`, {sym0} = {_fmt(params[key0])} {unit}"
        if table is not None:
            pts = ", ".join(f"({_fmt(a)}, {_fmt(b)})" for a, b in table)
            line += f"; `t` piecewise linear through (x/L, t) = {pts}"
        if sym == "h":
            line += " (A ~ h, I ~ h^3)"
        elif sym == "b":
            line += " (A ~ b, I ~ b)"
        lines.append(line)
    kappa0 = float(params.get("imperfection.kappa0", 0.0))
    tip_offset = params.get("imperfection.tip_offset", "none")
    if kappa0 != 0.0 or str(tip_offset) != "none":
        profile = str(params.get("imperfection.profile", "uniform"))
        p = "" if profile == "uniform" else " (1 - x/L)"
        what = f"kappa0 = {_fmt(kappa0)} 1/m" if kappa0 != 0.0 else f"tip offset {tip_offset} m"
        lines.append(
            f"stress-free initially curved reference: curvature `kappa_0(x) = kappa0{p}` "
            f"({profile} profile{': a circular arc' if not p else ''}), {what}; "
            "strains are measured from it"
        )
    if int(params.get("damage.enabled", 0)):
        lines.append(
            "strain-driven damage at the integration points: `d = d_max (1 - exp(-(k - k0) / "
            f"s))` for history strain `k > k0`, k0 = {_fmt(params['damage.threshold'])}, "
            f"s = {_fmt(params['damage.softening'])}, d_max = {_fmt(params['damage.d_max'])}; "
            "`EA_eff = EA (1 - d)`, `EI_eff = EI (1 - d)`, `k` = largest fibre strain so far"
        )
    if not lines:
        lines.append(
            f"uniform beam: no gradient, no imperfection, no damage (E0 = "
            f"{_fmt(params['material.E0'])} Pa, rho = {_fmt(params['material.rho'])} kg/m^3)"
        )
    return lines


def defect_profiles(params: Mapping[str, Any], x_over_l: np.ndarray) -> dict[str, np.ndarray]:
    """Factors ``E/E0``, ``rho/rho0``, ``b/b0``, ``h/h0`` of a case at ``x/L`` (every one, ones
    where the case does not grade that property), from the library's own gradient law."""
    from ancf_beam.beam.defects import gradient_factor
    from ancf_beam.specs import GradientSpec

    x_over_l = np.asarray(x_over_l, float)
    out = {}
    for prefix, sym, sym0, _, _ in _GRADIENTS:
        table = _table(params.get(f"{prefix}.table"))
        g = GradientSpec(
            lam=float(params.get(f"{prefix}.lam", 0.0)),
            n=float(params.get(f"{prefix}.n", 1.0)),
            table=None if table is None else tuple(tuple(r) for r in table),
        )
        out[f"{sym}/{sym0}"] = np.asarray(gradient_factor(g, x_over_l), float) * np.ones_like(
            x_over_l
        )
    return out


def parameter_table(params: Mapping[str, Any]):
    """The resolved parameters grouped by config section: a DataFrame with columns ``group``
    and ``parameters`` (``name = value unit`` of every key of the group, ``none`` for unset
    keys), one row per section."""
    import pandas as pd

    groups: dict[str, list[str]] = {}
    for key in sorted(params, key=lambda k: (k.split(".")[0], k)):
        group, _, name = key.partition(".")
        v = params[key]
        if isinstance(v, float):
            v = _fmt(v)
        unit = PARAM_UNITS.get(key, "")
        unit = "" if unit in ("", "1") or str(v) == "none" else f" {unit}"
        groups.setdefault(group, []).append(f"{name} = {v}{unit}")
    rows = [{"group": g, "parameters": "; ".join(items)} for g, items in groups.items()]
    return pd.DataFrame(rows, columns=["group", "parameters"])


def frame_html(df, formats: Mapping[str, str] | None = None, caption: str = "") -> str:
    """A DataFrame as a complete HTML table (no index column, every row and column, numbers
    formatted per column with ``formats``)."""
    sty = df.style.hide(axis="index")
    if formats:
        sty = sty.format({k: v for k, v in formats.items() if k in df.columns}, na_rep="")
    if caption:
        sty = sty.set_caption(caption)
    sty = sty.set_table_styles(
        [
            {"selector": "", "props": "font-size: 0.85em;"},
            {"selector": "th, td", "props": "padding: 2px 6px; text-align: left;"},
            {"selector": "caption", "props": "text-align: left; font-weight: bold;"},
        ]
    )
    return sty.to_html()


def case_styles(cases: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Matplotlib line styles that tell up to 40 cases apart: ten colours (``tab10``) and four
    dash patterns, both changing from one case to the next (no two of the first 40 cases share
    colour and dash)."""
    dashes = ["-", "--", "-.", ":"]
    return {
        c: {"color": f"C{i % 10}", "ls": dashes[(i // 10 + i % 4) % 4]} for i, c in enumerate(cases)
    }


def report_counts(df, seen: set | None = None) -> dict:
    """The counts of one report's table of checks (a DataFrame as in ``reports/checks/*.csv``)
    for the index page: rows already in ``seen`` (same case, check, reference and computed
    value: a repeat of another report's row) are dropped and the new ones added to it;
    ``n`` the rows that decide (PASS or FAIL), ``passed``, ``failed`` (their names),
    ``info`` (rows of status INFO: shown, not counted), ``repeats`` and ``worst`` (largest
    err/tol of the deciding rows, NaN if none)."""
    import pandas as pd

    seen = set() if seen is None else seen
    keys = list(
        zip(
            df["case"].astype(str),
            df["check"].astype(str),
            df["reference"].round(12),
            df["computed"].round(12),
            strict=True,
        )
    )
    distinct = [k not in seen for k in keys]
    seen.update(keys)
    df = df.loc[pd.Series(distinct, index=df.index, dtype=bool)]
    info = int((df["status"] == "INFO").sum())
    df = df.loc[df["status"].isin(("PASS", "FAIL"))]
    ratio = pd.to_numeric(df["err/tol"], errors="coerce") if "err/tol" in df else pd.Series([])
    worst = float(ratio.max()) if len(ratio) and ratio.notna().any() else math.nan
    return {
        "n": len(df),
        "passed": int((df["status"] == "PASS").sum()),
        "failed": df.loc[df["status"] == "FAIL", "check"].astype(str).tolist(),
        "info": info,
        "repeats": len(keys) - sum(distinct),
        "worst": worst,
    }


def headline(
    question: str,
    numbers: Sequence[tuple[str, str]],
    checks=None,
) -> str:
    """The headline box of a report page (HTML): the question it answers, its key numbers
    (label, value with unit) and, given its table of checks (rows or DataFrame with a
    ``status`` column), how many of them PASS."""
    items = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in numbers)
    count = ""
    if checks is not None:
        status = (
            [r["status"] for r in checks] if isinstance(checks, list) else list(checks["status"])
        )
        n, k = sum(s in ("PASS", "FAIL") for s in status), sum(s == "PASS" for s in status)
        n_info = sum(s == "INFO" for s in status)
        info = f" ({n_info} informational rows not counted)" if n_info else ""
        if n:
            colour = "#060" if k == n else "#b00"
            count = (
                f"<p style='color:{colour};font-weight:bold;margin:0.3em 0'>{k} of {n} "
                f"distinct checks PASS{info} (table at the end of the page)</p>"
            )
        else:
            count = f"<p style='margin:0.3em 0'>No checks of its own (display only){info}.</p>"
    return (
        "<div style='border:2px solid #4a6fa5;border-radius:6px;background:#f3f6fb;"
        "padding:0.6em 1em;margin:0.5em 0 1em 0'>"
        f"<p style='margin:0.2em 0'><b>Question.</b> {html.escape(question)}</p>"
        f"<ul style='margin:0.3em 0'>{items}</ul>{count}</div>"
    )


# Synthetic two-tone signal of the beat detector's positive control: the seed beam's first
# frequency and a second tone 20 rad/s below it at 0.3 of its amplitude, sampled like the
# explicit runs (1e-4 s) over 2 s -- 6.4 beat periods of 2 pi / 20 = 0.314 s. Measured with
# ancf_beam.response.detect_beat: period error 1.3e-5, depth error 1.7e-3 (relative).
BEAT_CONTROL = {
    "omega_1": 104.24,  # rad/s
    "omega_2": 84.24,  # rad/s
    "ratio": 0.3,  # amplitude of the second tone / the first
    "amplitude": 1.0e-3,  # m
    "t_end": 2.0,  # s
    "sample_dt": 1.0e-4,  # s
}


def beat_control_signal(two_tones: bool = True, **over: float):
    """``(t, y, expected)`` of the beat positive control (``BEAT_CONTROL``, overridden by
    ``over``): ``y = A (cos(w1 t) + a cos(w2 t))`` in m, and the expected beat period
    ``2 pi / |w1 - w2|`` (s) and modulation depth ``2 a / (1 + a^2)`` of the squared envelope.
    ``two_tones=False`` gives the single tone (the negative control: no beat)."""
    p = dict(BEAT_CONTROL, **over)
    t = np.arange(0.0, p["t_end"], p["sample_dt"])
    a = p["ratio"] if two_tones else 0.0
    y = p["amplitude"] * (np.cos(p["omega_1"] * t) + a * np.cos(p["omega_2"] * t))
    expected = {
        "period_s": 2 * math.pi / abs(p["omega_1"] - p["omega_2"]),
        "depth": 2 * a / (1 + a * a),
    }
    return t, y, expected
