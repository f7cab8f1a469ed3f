"""Tables of checks shared by every study and report: one row per check (reference, computed,
error, tolerance, PASS/FAIL, or INFO for a row that is shown but decides nothing), as a
Dataset or a DataFrame; the helpers the report notebooks
display and save them with; and one check builder per report (``<report>_checks``), which
turns that report's results into rows. The acceptance thresholds of a report are
``pipeline.<report>.tolerances`` of the workflow config (defaults in
:data:`ancf_beam.config.PIPELINE_DEFAULTS`); a builder given none uses those defaults.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import xarray as xr

from ancf_beam.config import EXPLICIT_INTEGRATOR, PIPELINE_DEFAULTS
from ancf_beam.solvers.schemes import rayleigh_zeta, scheme_options
from ancf_beam.studies.bounds import EPS, Bound

__all__ = [
    "DECIDED",
    "INFO",
    "CaseRun",
    "case_checks",
    "check_counts",
    "check_rows",
    "case_run",
    "check",
    "checks_dataset",
    "checks_frame",
    "comparison_checks",
    "convergence_checks",
    "critical_dt_checks",
    "critical_dt_table",
    "beat_control_rows",
    "defects_checks",
    "distinct_checks",
    "err_over_tol",
    "extend_checks",
    "identification_checks",
    "integrators_checks",
    "save_figure",
    "scaling_checks",
    "show_checks",
    "spectral_peak",
    "show_headline",
    "report_tolerances",
    "run_label",
    "run_summary",
    "validation_checks",
]


#: Status of a row that is shown with its error and tolerance but decides nothing: a
#: comparison whose outcome depends on the machine's load (wall or CPU time), not on the code.
INFO = "INFO"
#: The statuses that decide a report: counted in ``n_checks`` (PASS + FAIL).
DECIDED = ("PASS", "FAIL")


def check(
    name: str,
    reference: float,
    computed: float,
    tolerance: float,
    mode: str = "rel",
    note: str = "",
    case: str = "",
    informational: bool = False,
) -> dict[str, Any]:
    """One row of a check table.

    ``mode``: ``'rel'`` (``|c - r| / |r| <= tol``), ``'abs'`` (``|c - r| <= tol``; the error
    column then holds the absolute error), ``'max'`` (``c <= r (1 + tol)``: the computed value
    must not exceed the reference; the error column holds ``(c - r) / |r|``) or ``'min'``
    (``c >= r (1 - tol)``; the error column holds ``(r - c) / |r|``). Every row also carries
    ``err/tol`` (:func:`err_over_tol`): how much of its tolerance the check uses (PASS <= 1).
    ``informational``: the row's status is :data:`INFO` whatever the error (a measured time
    against a cost model: the same code passes or fails with the machine's load), shown in the
    tables but counted neither as PASS nor as FAIL.
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
        "err_over_tol": err_over_tol(err, tolerance),
        "mode": mode,
        "status": INFO if informational else ("PASS" if ok else "FAIL"),
        "note": note,
    }


def err_over_tol(err: float, tolerance: float) -> float:
    """The share of its tolerance a check uses: ``err / tol`` (signed for the one-sided modes,
    negative when the bound holds with margin). With a zero tolerance: 0 when the error is not
    positive, inf (or NaN for a NaN error) otherwise."""
    err, tolerance = float(err), float(tolerance)
    if tolerance > 0:
        return err / tolerance
    if math.isnan(err):
        return math.nan
    return 0.0 if err <= 0 else math.inf


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
            "err_over_tol": (
                "check",
                np.array([err_over_tol(r["rel_error"], r["tolerance"]) for r in rows], float),
                {"units": "1", "long_name": "error / tolerance (PASS <= 1)"},
            ),
            "check_mode": ("check", col("mode", object)),
            "status": ("check", col("status", object)),
            "note": ("check", col("note", object)),
        },
        coords={"check": np.arange(n)},
    )
    ds.attrs.update(check_counts(rows))
    return ds


def check_counts(rows_or_status) -> dict[str, int]:
    """``n_checks`` (rows that decide: PASS or FAIL), ``n_pass``, ``n_fail`` and ``n_info`` of
    check rows (dicts with a ``status``) or of a sequence of statuses."""
    status = [r["status"] if isinstance(r, Mapping) else str(r) for r in rows_or_status]
    n_pass = sum(s == "PASS" for s in status)
    n_fail = sum(s == "FAIL" for s in status)
    return {
        "n_checks": n_pass + n_fail,
        "n_pass": n_pass,
        "n_fail": n_fail,
        "n_info": sum(s == INFO for s in status),
    }


def checks_frame(ds: xr.Dataset):
    """A check Dataset (see :func:`checks_dataset`) as a pandas DataFrame."""
    import pandas as pd

    cols = [
        "case",
        "name",
        "reference",
        "computed",
        "rel_error",
        "tolerance",
        "err_over_tol",
        "check_mode",
    ]
    if "err_over_tol" not in ds:  # a table written before the column existed
        ds = ds.assign(
            err_over_tol=(
                "check",
                [
                    err_over_tol(e, t)
                    for e, t in zip(ds["rel_error"].values, ds["tolerance"].values, strict=True)
                ],
            )
        )
    df = pd.DataFrame({c: ds[c].values for c in cols + ["status", "note"]})
    return df.rename(
        columns={
            "name": "check",
            "rel_error": "rel. error",
            "check_mode": "mode",
            "err_over_tol": "err/tol",
        }
    )


def extend_checks(ds: xr.Dataset, rows: Sequence[Mapping[str, Any]], **attrs) -> xr.Dataset:
    """A check Dataset (:func:`checks_dataset` layout, e.g. from
    :func:`~ancf_beam.studies.validation.run_validation`) with ``rows`` appended; the other
    variables and the attributes are kept, ``n_checks``/``n_pass``/``n_fail``/``n_info``
    recounted."""

    new = checks_dataset([*_rows(ds), *rows])
    keep = ds.drop_vars([v for v in new.data_vars if v in ds] + ["check"], errors="ignore")
    out = xr.merge([new, keep], combine_attrs="override")
    out.attrs = dict(ds.attrs)
    out.attrs.update(new.attrs)
    out.attrs.update(attrs)
    return out


def validation_checks(validation: Mapping[str, xr.Dataset]) -> xr.Dataset:
    """The check tables of several cases' validation results, one after the other (in the
    order of ``validation``), as one check Dataset of distinct checks
    (:func:`distinct_checks`: the uniform counterpart of every graded case is the same beam,
    so its rows are counted once)."""
    rows = []
    for ds in validation.values():
        rows.extend(_rows(ds))
    return checks_dataset(distinct_checks(rows))


def _rows(ds: xr.Dataset) -> list[dict[str, Any]]:
    """The rows of a check Dataset (see :func:`checks_dataset`)."""
    return [
        {
            "case": c,
            "check": n,
            "reference": r,
            "computed": v,
            "rel_error": e,
            "tolerance": t,
            "mode": m,
            "status": s,
            "note": no,
        }
        for c, n, r, v, e, t, m, s, no in zip(
            ds["case"].values,
            ds["name"].values,
            ds["reference"].values,
            ds["computed"].values,
            ds["rel_error"].values,
            ds["tolerance"].values,
            ds["check_mode"].values,
            ds["status"].values,
            ds["note"].values,
            strict=True,
        )
    ]


def check_rows(ds: xr.Dataset) -> list[dict[str, Any]]:
    """The rows of a check Dataset (:func:`checks_dataset` layout), as :func:`check` makes them."""
    return _rows(ds)


def distinct_checks(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with repeats merged: rows of equal check name, reference, computed value and
    tolerance compare the same numbers (e.g. the uniform counterpart, which every graded case
    of the same beam carries) and count as one check; the merged row lists all their cases."""
    out: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        key = (r["check"], float(r["reference"]), float(r["computed"]), float(r["tolerance"]))
        if key in out:
            out[key]["case"] = f"{out[key]['case']}, {r['case']}"
        else:
            out[key] = dict(r)
    return list(out.values())


# --------------------------------------------------------------------------------------------
# display (report notebooks)
# --------------------------------------------------------------------------------------------
_FORMATS = {
    "reference": "{:.6g}",
    "computed": "{:.6g}",
    "rel. error": "{:.3g}",
    "tolerance": "{:.3g}",
    "err/tol": "{:.3g}",
}


def _status_colour(v: str) -> str:
    if v == INFO:
        return "color: #555; font-style: italic"
    return "color: #060; font-weight: bold" if v == "PASS" else "color: #b00; font-weight: bold"


def show_checks(rows_or_ds, path: str | None = None):
    """Display a table of checks (PASS/FAIL coloured; rows of :func:`check` or a check Dataset)
    in a notebook, write it to CSV at ``path`` when given, and return it as a DataFrame."""
    from IPython.display import Markdown, display

    ds = rows_or_ds if isinstance(rows_or_ds, xr.Dataset) else checks_dataset(rows_or_ds)
    df = checks_frame(ds)
    if path:
        df.to_csv(path, index=False)
    counts = check_counts(df["status"])
    decided = df[df["status"].isin(DECIDED)]
    info = (
        f"; {counts['n_info']} informational rows (INFO: timings, not counted)"
        if counts["n_info"]
        else ""
    )
    if len(decided):
        ratio = decided["err/tol"].astype(float)
        worst = float(np.nanmax(np.where(np.isfinite(ratio), ratio, np.inf)))
        display(
            Markdown(
                f"**{counts['n_pass']} of {counts['n_checks']} checks PASS** (largest "
                f"err/tol {worst:.3g}){info}"
            )
        )
    else:
        display(Markdown(f"**No checks in this report** (display only){info}."))
    display(df.style.format(_FORMATS).map(_status_colour, subset=["status"]).hide(axis="index"))
    return df


def show_headline(
    question: str, numbers: Sequence[tuple[str, str]], rows: Sequence[Mapping[str, Any]]
) -> None:
    """A report's headline box: the question it answers, its key numbers (``(label, value with
    units)`` pairs) and how many of its distinct checks (``rows``, :func:`distinct_checks`)
    PASS."""
    import html

    from IPython.display import HTML, display

    counts = check_counts(distinct_checks(rows))
    n_pass, n_checks = counts["n_pass"], counts["n_checks"]
    ok = n_pass == n_checks
    items = "".join(f"<li>{html.escape(k)}: <b>{html.escape(v)}</b></li>" for k, v in numbers)
    colour = "#060" if ok else "#b00"
    display(
        HTML(
            f"<div style='border: 2px solid {colour}; border-radius: 6px; padding: 0.6em 1em; "
            f"margin: 0.5em 0 1em 0; background: #f7faf7'><p style='margin: 0'><b>Question.</b> "
            f"{html.escape(question)}</p><ul style='margin: 0.4em 0'>{items}</ul>"
            f"<p style='margin: 0; color: {colour}'><b>{n_pass} of {n_checks} distinct checks "
            f"PASS</b> (table at the end of the page)</p></div>"
        )
    )


def save_figure(fig, figures: Mapping[str, str], key: str) -> None:
    """Save ``fig`` to ``figures[key]`` (the report rule's figure outputs) when it has one."""
    path = figures.get(key)
    if path:
        fig.savefig(path, bbox_inches="tight")


def show_figure(fig, figures: Mapping[str, str], key: str) -> None:
    """Save ``fig`` as :func:`save_figure` does and show that PNG in the notebook, then close
    the figure: one rendering, where ``plt.show()`` would render it again for the inline
    backend (a third of a report's run time: 8 of 21.6 s in the mechanisms report). Shown at
    the inline size (``figure.dpi`` / ``savefig.dpi`` of the file's width). Without a path
    (or not a PNG) the figure is shown as usual."""
    import matplotlib.pyplot as plt

    path = figures.get(key)
    if not path or not str(path).endswith(".png"):
        plt.show()
        return
    save_figure(fig, figures, key)
    plt.close(fig)
    from IPython.display import Image, display

    with open(path, "rb") as f:
        data = f.read()
    width = int.from_bytes(data[16:20], "big")  # the PNG header's IHDR width (pixels)
    dpi = plt.rcParams["savefig.dpi"]
    if isinstance(dpi, int | float):
        width = round(width * plt.rcParams["figure.dpi"] / dpi)
    display(Image(data=data, format="png", width=width))


def report_tolerances(report: str, given: Mapping[str, float] | None = None) -> dict[str, float]:
    """``pipeline.<report>.tolerances``: the defaults, updated with ``given``."""
    out = dict(PIPELINE_DEFAULTS[report]["tolerances"])
    out.update(given or {})
    return out


# --------------------------------------------------------------------------------------------
# per-case report
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CaseRun:
    """What the per-case report plots and checks, derived from the case's result files
    (:func:`case_run`). Times in s, displacements in m, frequencies in rad/s."""

    case: str
    families: str  # ``'+'``-joined defect families, ``'uniform'`` when none
    straight: bool  # the straight linear-elastic references apply
    large: bool  # large deflection: the small-deflection references do not apply
    damaged: bool
    curved: bool
    t: np.ndarray  # sample times of the explicit run
    tip: np.ndarray  # tip y of the run
    tip_static: float  # static tip y (Newton)
    drift: np.ndarray  # (E - E0) / max T over the run
    omega_fft: np.ndarray  # circular frequencies of the tip FFT
    spectrum: np.ndarray  # tip amplitude spectrum about the mean (Hann window, 8x zero padding)
    omega: np.ndarray  # expected frequencies: modal, or with the run's final damage frozen
    peak: float  # FFT peak near omega[0] (parabolic interpolation of the log spectrum)
    resolution: float  # FFT bin 2 pi / T of the record
    curvature_error: float  # RMS static curvature error / RMS exact (NaN unless straight)
    dt: float = math.nan  # step of the run (s)
    omega_static: float = math.nan  # omega_1 about the static state (validation; rad/s)
    nonlinearity: float = math.nan  # geometric-nonlinearity estimate / static tip (validation)
    static_nonlinearity: float = math.nan  # the static tip's nonlinear part / static tip
    curvature_estimate: float = math.nan  # 4/3 RMS(kappa_n - kappa_4n) / RMS exact
    integrator: str = EXPLICIT_INTEGRATOR  # the run's integrator
    scheme: dict[str, float] = field(default_factory=dict)  # its beta, gamma or rho_inf
    damping: tuple[float, float] = (0.0, 0.0)  # Rayleigh alpha (1/s), beta (s)

    @property
    def label(self) -> str:
        """The run in words: ``explicit run``, ``generalized-alpha run (damped)``, ..."""
        return run_label(self.integrator) + (" (damped)" if any(self.damping) else "")

    def zeta(self, w: float) -> float:
        """The Rayleigh damping ratio of a mode of frequency ``w`` (rad/s)."""
        return rayleigh_zeta(w, *self.damping)


def run_label(integrator: str) -> str:
    """A run of ``integrator`` in the checks' names: ``explicit run``, ``newmark run``, ..."""
    return "explicit run" if integrator == EXPLICIT_INTEGRATOR else f"{integrator} run"


def case_run(
    case: str,
    static: xr.Dataset,
    modal: xr.Dataset,
    simulate: xr.Dataset,
    validation: xr.Dataset,
    response: xr.Dataset,
) -> CaseRun:
    """The quantities of the per-case report from the case's ``static``, ``modal``,
    ``simulate``, ``validation`` and ``response`` results."""
    fam = str(response.attrs.get("families", ""))
    straight = bool(int(validation.attrs.get("straight_elastic_references", 1)))
    large = bool(int(validation.attrs.get("large_deflection", 0)))
    damaged = "damage" in fam.split("+")
    t = simulate["time"].values
    tip = simulate["tip_y"].values
    etot = simulate["total_energy"].values
    drift = (etot - etot[0]) / float(simulate["kinetic"].max())
    dt_s = float(np.median(np.diff(t)))
    yy = tip - tip.mean()
    win = np.hanning(yy.size)
    nfft = 8 * int(2 ** np.ceil(np.log2(yy.size)))
    spec = np.abs(np.fft.rfft(yy * win, n=nfft)) * 2 / win.sum()
    w = 2 * np.pi * np.fft.rfftfreq(nfft, dt_s)
    omega = response["omega_damaged_final"].values if damaged else modal["omega"].values
    peak = spectral_peak(t, tip, float(omega[0]))
    curv_err = curv_est = math.nan
    if straight:
        kx = np.interp(
            static["X"].values, validation["exact_x"].values, validation["exact_curvature"].values
        )
        curv_err = float(
            np.sqrt(np.mean((static["curvature"].values - kx) ** 2)) / np.sqrt(np.mean(kx**2))
        )
        if "static_dkappa_fine" in response:
            kr = np.interp(
                response["static_X"].values,
                validation["exact_x"].values,
                validation["exact_curvature"].values,
            )
            diff = response["static_dkappa"].values - response["static_dkappa_fine"].values
            curv_est = 4.0 / 3.0 * float(np.sqrt(np.mean(diff**2)) / np.sqrt(np.mean(kr**2)))
    va = validation.attrs
    return CaseRun(
        case=case,
        families=fam,
        straight=straight,
        large=large,
        damaged=damaged,
        curved="imperfection" in fam.split("+"),
        t=t,
        tip=tip,
        tip_static=float(static["tip_y"]),
        drift=drift,
        omega_fft=w,
        spectrum=spec,
        omega=omega,
        peak=peak,
        resolution=2 * np.pi / (t[-1] - t[0]),
        curvature_error=curv_err,
        dt=float(simulate.attrs.get("dt", math.nan)),
        omega_static=float(va.get("omega_1_static", math.nan)),
        nonlinearity=float(va.get("nonlinearity_rel", math.nan)),
        static_nonlinearity=float(va.get("static_nonlinearity_rel", math.nan)),
        curvature_estimate=curv_est,
        integrator=str(simulate.attrs.get("integrator", EXPLICIT_INTEGRATOR)),
        scheme=scheme_options(simulate.attrs),
        damping=tuple(float(simulate.attrs.get(k, 0.0)) for k in ("damping_alpha", "damping_beta")),
    )


def spectral_peak(t: np.ndarray, y: np.ndarray, omega_guess: float) -> float:
    """The tip spectrum's peak (rad/s) within ``[0.5, 1.5] omega_guess``: Hann window on the
    signal less its mean, zero padding to 8 times the next power of two, parabolic
    interpolation of the log amplitude around the largest bin."""
    dt_s = float(np.median(np.diff(t)))
    yy = np.asarray(y, float) - np.mean(y)
    win = np.hanning(yy.size)
    nfft = 8 * int(2 ** np.ceil(np.log2(yy.size)))
    spec = np.abs(np.fft.rfft(yy * win, n=nfft)) * 2 / win.sum()
    w = 2 * np.pi * np.fft.rfftfreq(nfft, dt_s)
    band = (w > 0.5 * omega_guess) & (w < 1.5 * omega_guess)
    i = int(np.argmax(np.where(band, spec, 0)))
    a, b, c = np.log(spec[i - 1 : i + 2])  # parabolic interpolation of the log peak
    return float(w[i] + 0.5 * (a - c) / (a - 2 * b + c) * (w[1] - w[0]))


def case_checks(
    run: CaseRun, response: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the per-case report (``pipeline.case_report.tolerances``).

    Below large deflection: the FFT tip peak of the run against the expected ``omega_1``
    (modal; for damage the beam with the run's final damage frozen), in spectral bins
    ``2 pi / T``; straight elastic beams: the RMS static curvature error against the exact
    ``-M/EI``; the uniform beam: the concentration metrics of ``kappa ~ (L - x)^2``
    (peak/mean 3, Gini 1/2, clamp-side energy share 31/32). The energy balance and the
    response to suddenly applied gravity are checked once, in the validation report.

    Tolerances (``estimate_factor`` on every estimate): the spectral peak, the estimator's own
    error on a pure tone at the expected frequency with the run's sampling and length (exact)
    plus the run's frequency shift from the expected one: about the static state instead of
    the reference, the geometric nonlinearity (validation's estimate, relative) and the
    central differences' ``(omega dt)^2 / 24``; the curvature and the metrics, their change to
    the mesh four times finer (response study, ``x 4/3``) plus the static geometric
    nonlinearity (curvature against the linear ``-M/EI``).
    """
    tol = report_tolerances("case_report", tolerances)
    fs = float(tol["estimate_factor"])
    scal = {k: float(response[k]) for k in response.data_vars if response[k].ndim == 0}
    if run.large:  # nonlinear vibration: no linear reference frequency or curvature
        return []
    rows = [_spectral_peak_check(run, fs)]
    if run.straight and math.isfinite(run.curvature_estimate):
        b = Bound().add(f"{fs:g} x 4/3 RMS(kappa_n - kappa_4n)", fs * run.curvature_estimate)
        if math.isfinite(run.static_nonlinearity):
            b.add("static geometric nonlinearity", run.static_nonlinearity)
        rows.append(
            check(
                "static curvature: RMS error vs exact -M/EI",
                0.0,
                run.curvature_error,
                b.total,
                mode="abs",
                note="relative to RMS exact curvature; " + b.note(),
                case=run.case,
            )
        )
    if run.families == "uniform":  # no defect: exact concentration metrics of kappa ~ (L - x)^2
        rows.extend(_uniform_metric_checks(run, scal, fs))
    return rows


def _spectral_peak_check(run: CaseRun, fs: float) -> dict[str, Any]:
    """The FFT tip peak against the expected ``omega_1`` (see :func:`case_checks`)."""
    w_ref = float(run.omega[0])
    ref_name = "damaged beam, final damage frozen" if run.damaged else "modal"
    shift = 0.0
    if math.isfinite(run.omega_static):
        shift += abs(run.omega_static - w_ref)
    if math.isfinite(run.nonlinearity):
        shift += run.nonlinearity * w_ref
    if run.integrator == EXPLICIT_INTEGRATOR and not any(run.damping):
        tone = abs(spectral_peak(run.t, np.cos(w_ref * run.t), w_ref) - w_ref)
        shift += (w_ref * run.dt) ** 2 / 24.0 * w_ref if math.isfinite(run.dt) else 0.0
        b = Bound().add("estimator on a pure tone", tone / run.resolution)
        what = "central differences"
    else:  # the scheme's damped frequency and decay on the linear mode (exact)
        w_num, sigma = _scheme_mode(run, w_ref)
        signal = np.exp(-sigma * run.t) * np.cos(w_num * run.t)
        tone = abs(spectral_peak(run.t, signal, w_ref) - w_num)
        shift += abs(w_num - w_ref)
        b = Bound().add("estimator on a decaying tone", tone / run.resolution)
        what = f"{run.integrator} and damping"
    b.add(
        f"{fs:g} x frequency shift (static state, nonlinearity, {what})",
        fs * shift / run.resolution,
    )
    return check(
        f"spectral peak vs omega_1 ({ref_name})",
        w_ref,
        run.peak,
        b.total * run.resolution / w_ref,
        note=f"rad/s; in FFT bins of {run.resolution:.3g} rad/s: " + b.note(),
        case=run.case,
    )


def _scheme_mode(run: CaseRun, w: float) -> tuple[float, float]:
    """The frequency (rad/s) and decay rate (1/s) of the run's scheme, step and damping on a
    linear mode of frequency ``w``
    (:func:`ancf_beam.studies.integrators.linear_step_properties`)."""
    from ancf_beam.studies.integrators import linear_step_properties

    zeta = run.zeta(w)
    p = linear_step_properties(run.integrator, w * run.dt, zeta, **run.scheme)
    w_num = p["omega_ratio"] * w * math.sqrt(max(1.0 - zeta * zeta, 0.0))
    return w_num, p["damping_ratio"] * w_num


def _uniform_metric_checks(run: CaseRun, scal: Mapping[str, float], fs: float) -> list[dict]:
    """The uniform beam's static curvature concentration metrics (response scalars ``scal``)
    against the exact values of ``kappa ~ (L - x)^2`` (see :func:`case_checks`)."""
    rows = []
    for name, key, exact in (
        ("static curvature peak/mean vs 3 (kappa ~ (L - x)^2)", "peak_to_mean", 3.0),
        ("static curvature Gini vs 1/2", "gini", 0.5),
        (
            "static bending energy share of the clamp-side half vs 31/32",
            "energy_fraction_inner",
            31 / 32,
        ),
    ):
        fine = scal.get(f"static_{key}_fine", math.nan)
        b = Bound().add(
            f"{fs:g} x 4/3 |mesh n - 4n|",
            fs * 4.0 / 3.0 * abs(scal[f"static_{key}"] - fine) / exact,
        )
        if math.isfinite(run.static_nonlinearity):
            b.add("static geometric nonlinearity", run.static_nonlinearity)
        rows.append(
            check(name, exact, scal[f"static_{key}"], b.total, note=b.note(), case=run.case)
        )
    return rows


# --------------------------------------------------------------------------------------------
# reports across cases
# --------------------------------------------------------------------------------------------
def comparison_checks(
    cases: Sequence[str], tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the comparison report: none of its own. It displays the cases side by side;
    every quantity it shows against a reference (static tips, ``omega_1``, the large-deflection
    shapes) is checked once, in the validation report, and the summary table is the collected
    copy of those results (a comparison of a value with its own copy cannot fail)."""
    return []


def convergence_checks(
    cases: Sequence[str],
    families: Mapping[str, Sequence[str]],
    convergence: Mapping[str, xr.Dataset],
    tolerances: Mapping[str, float] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Checks of the convergence report and the cases left out, with why
    (:func:`~ancf_beam.studies.convergence.expected_convergence`: mesh-dependent damage, a
    power law with a non-integer exponent below 3, a table breakpoint inside elements).

    Per quantity: the observed order of the finest usable triplet at least the case's leading
    order ``p`` (4; 2 for the ``element`` and ``nodal`` mappings of a graded profile) less
    its pre-asymptotic deviation: the change from the previous triplet's order over
    ``1 - 1/2`` (the next error term is at least one order higher, so the deviation at least
    halves per halving of ``l_e``), times ``estimate_factor``. Higher passes (a term of higher
    order may dominate on these meshes). With a single usable triplet no deviation can be
    estimated: the order must be at least 1 (the quantity converges). A quantity converged
    to the noise floor (``round-off`` status, shown in the report) has no order to check."""
    from ancf_beam.studies.convergence import expected_convergence

    tol = report_tolerances("convergence", tolerances)
    fs = float(tol["estimate_factor"])
    quantities = [str(q) for q in convergence[cases[0]]["quantity"].values]
    rows, skipped = [], {}
    for c in cases:
        d = convergence[c]
        meshes = [int(m) for m in d["mesh"].values]
        p, why = expected_convergence(d.attrs, meshes)
        if why:
            skipped[c] = why
            continue
        for q in quantities:
            status = str(d["status"].sel(quantity=q).item())
            if status == "round-off":
                continue
            orders = np.asarray(d["triplet_order"].sel(quantity=q).values, float)
            observed = float(d["observed_order"].sel(quantity=q))
            used = [i for i in range(orders.size) if orders[i] == observed]
            i = used[-1] if used else -1
            if i >= 1 and math.isfinite(orders[i - 1]):
                dev = fs * abs(orders[i] - orders[i - 1]) / (1.0 - 0.5)
                note = (
                    f"{status}; triplet orders {orders[i - 1]:.3f}, {orders[i]:.3f}: tol = "
                    f"{fs:g} x 2 |change| = {dev:.3g}"
                )
                rows.append(
                    check(
                        f"{q}: observed order vs {p:g}",
                        p,
                        observed,
                        dev / p,
                        mode="min",
                        note=note,
                        case=c,
                    )
                )
            else:
                rows.append(
                    check(
                        f"{q}: observed order vs {p:g}",
                        p,
                        observed,
                        1.0 - 1.0 / p,
                        mode="min",
                        note=f"{status}; one usable triplet: no "
                        "pre-asymptotic estimate, order at least 1",
                        case=c,
                    )
                )
    return rows, skipped


_CRITICAL_COLUMNS = (
    "element_length",
    "dt_critical",
    "dt_axial",
    "dt_bending",
    "dt_element_bound",
    "dt_formula",
    "dt_measured",
    "omega_max",
)


def critical_dt_table(critical: Mapping[str, Sequence[xr.Dataset]]):
    """The critical-step results of every case and mesh as one DataFrame (one row per case
    and mesh, sorted by case and number of elements)."""
    import pandas as pd

    frames = []
    for c, datasets in critical.items():
        for d in datasets:
            row = {
                "case": c,
                "n_elements": int(d.attrs["param.mesh.n_elements"]),
                "governing": d.attrs["governing_mode"],
                "sampling_exponent": _sampling_exponent(d.attrs),
            }
            row.update({k: float(d[k]) for k in _CRITICAL_COLUMNS})
            # results written before the modulation was recorded: NaN (no bound term)
            row["omega_max_variation"] = float(d.get("omega_max_variation", math.nan))
            frames.append(row)
    return pd.DataFrame(frames).sort_values(["case", "n_elements"]).reset_index(drop=True)


def _sampling_exponent(attrs: Mapping[str, Any]) -> float:
    """``min(1, n)`` over the active power laws of a result's ``param.*`` attributes: the
    order in ``l_e`` of the top frequency's dependence on where the elements sample the
    properties (a table or no law: 1)."""
    ns = [
        float(attrs.get(f"param.defect.{f}n", 1.0))
        for f in ("", "rho.", "width.", "height.")
        if float(attrs.get(f"param.defect.{f}lam", 0.0)) != 0.0
    ]
    return min([1.0, *ns])


def critical_dt_checks(
    cases: Sequence[str],
    families: Mapping[str, Sequence[str]],
    table,
    tolerances: Mapping[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Checks of the critical-step report from :func:`critical_dt_table`: per case the slopes
    of ``dt_axial`` (1) and ``dt_bending`` (2) against ``l_e`` (not for an initially curved
    reference, whose x- and y-subsystems are coupled by the arc), the slope of ``dt_cr`` on
    the meshes each regime governs (at least three), the element bound against ``dt_cr``, and
    every measured stability limit against ``2 / omega_max``.

    Tolerances. A slope's deviation from its exponent is pre-asymptotic: the top frequency
    samples the properties over an element, ``omega_max ~ l_e^-p (1 + O(l_e^a))`` with ``a =
    min(1, n)`` of the power laws (1 without), so the local slopes between consecutive meshes
    approach ``p`` geometrically (ratio ``r^-a``, ``r`` the mesh ratio); the fitted slope lies
    within the coarsest local slope's deviation, ``|s_1 - s_2| / (1 - r^-a)``, times
    ``estimate_factor``. The element bound is a theorem (element eigenvalue inequality):
    ``element_bound_rel`` is the round-off of two eigenvalues at the top of the spectrum. The
    measured limit: :func:`ancf_beam.solvers.critical.measured_limit_bound` (bisection bracket,
    detection and the modulation of the top frequency along the measured run, which a large
    motion brings: ``omega_max_variation``)."""
    from ancf_beam.solvers.critical import measured_limit_bound

    tol = report_tolerances("critical_dt", tolerances)
    fs = float(tol["estimate_factor"])
    measured = measured_limit_bound()
    rows = []
    for c in cases:
        d = table[table.case == c]
        a = _critical_sampling_exponent(d)
        if "imperfection" not in families.get(c, []):
            for col, p in (("dt_axial", 1.0), ("dt_bending", 2.0)):
                rows.append(
                    _slope_row(f"slope of {col} vs l_e", d.element_length, d[col], p, a, fs, c)
                )
        for mode, p in (("axial", 1.0), ("bending", 2.0)):
            g = d[d.governing == mode]
            if len(g) >= 3:
                rows.append(
                    _slope_row(
                        f"slope of dt_cr where {mode} governs ({len(g)} meshes)",
                        g.element_length,
                        g.dt_critical,
                        p,
                        a,
                        fs,
                        c,
                    )
                )
        rows.append(
            check(
                "element bound <= dt_cr (max ratio over meshes)",
                1.0,
                float(np.max(d.dt_element_bound / d.dt_critical)),
                tol["element_bound_rel"],
                mode="max",
                note="element eigenvalue inequality; tol: round-off",
                case=c,
            )
        )
        for _, r in d[np.isfinite(d.dt_measured)].iterrows():
            mod = float(r.omega_max_variation) if np.isfinite(r.omega_max_variation) else 0.0
            rows.append(
                check(
                    f"measured limit vs 2/omega_max ({r.n_elements} elements)",
                    r.dt_critical,
                    r.dt_measured,
                    measured + mod,
                    note=f"s; tol = {measured:.4g} (bisection bracket 2e-3 + "
                    "instability detection within 3000 steps) + "
                    f"{mod:.3g} (top-frequency modulation along the run)",
                    case=c,
                )
            )
    return rows


def _critical_sampling_exponent(d) -> float:
    """``min(1, n)`` of the case's active power laws (the ``param.*`` columns are not in the
    table: the exponent is carried by :func:`critical_dt_table` as ``sampling_exponent``)."""
    if "sampling_exponent" in d and len(d):
        return float(d["sampling_exponent"].iloc[0])
    return 1.0


def _slope_row(name, h, dt, p, a, fs, case):
    """Least-squares slope of ``log dt`` against ``log l_e`` vs ``p``, with the pre-asymptotic
    deviation estimated from the two coarsest local slopes."""
    from ancf_beam.studies.convergence import fit_slope

    order = np.argsort(-np.asarray(h, float))
    hs, ds = np.asarray(h, float)[order], np.asarray(dt, float)[order]
    local = np.diff(np.log(ds)) / np.diff(np.log(hs))
    slope = fit_slope(hs, ds)
    if local.size >= 2:
        rho = (hs[0] / hs[1]) ** (-a)
        dev = fs * abs(local[0] - local[1]) / (1.0 - rho)
        note = (
            f"local slopes {', '.join(f'{x:.4f}' for x in local)}; tol = {fs:g} x "
            f"|s_1 - s_2| / (1 - {rho:.3g})"
        )
    else:
        dev, note = math.inf, "two meshes: no estimate of the pre-asymptotic deviation"
    return check(name, p, slope, dev / p, note=note, case=case)


def defects_checks(
    cases: Sequence[str],
    families: Mapping[str, Sequence[str]],
    response: Mapping[str, xr.Dataset],
    static: Mapping[str, xr.Dataset],
    tolerances: Mapping[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Checks of the defect-families report: what no other report checks. Damage: the largest
    static damage sits at the integration point nearest the clamp, where the bending moment
    is largest (within ``damage_peak_elements`` elements; 0: that very point). The static
    tips, frequencies, the curved reference (against the elastica with initial curvature) and
    the dynamic checks of every family are in the validation report, the tip spectra in the
    case reports. The beat detector's positive and negative controls (:func:`beat_control_rows`)
    come first: no shipped case beats, so without them the beat analysis is never seen working."""
    tol = report_tolerances("defects", tolerances)
    rows = beat_control_rows(tol)
    for c in cases:
        if "damage" in families.get(c, []):
            rows.extend(_damage_rows(c, response[c], static[c], tol))
    return rows


def beat_control_rows(tolerances: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """Positive and negative controls of :func:`ancf_beam.response.detect_beat` on the
    synthetic signals of :func:`ancf_beam.studies.presentation.beat_control_signal`: two tones
    ``w1``, ``w2`` must give a beat at ``2 pi / |w1 - w2|`` (``beat_period_rel``) with the
    two-tone modulation depth ``2 a / (1 + a^2)`` (``beat_depth_rel``); one tone must give
    none."""
    from ancf_beam.response import detect_beat
    from ancf_beam.studies.presentation import beat_control_signal

    tol = report_tolerances("defects", tolerances)
    t, y, exp = beat_control_signal()
    b = detect_beat(t, y)
    t1, y1, _ = beat_control_signal(two_tones=False)
    b1 = detect_beat(t1, y1)
    return [
        check(
            "beat control: two tones, detected (1 = yes)",
            1.0,
            float(b.has_beat),
            0.0,
            mode="abs",
            note=b.reason,
            case="synthetic",
        ),
        check(
            "beat control: two tones, beat period vs 2 pi / |w1 - w2|",
            exp["period_s"],
            b.beat_period_s,
            tol["beat_period_rel"],
            note="s",
            case="synthetic",
        ),
        check(
            "beat control: two tones, modulation depth vs 2a / (1 + a^2)",
            exp["depth"],
            b.modulation_depth,
            tol["beat_depth_rel"],
            case="synthetic",
        ),
        check(
            "beat control: one tone, detected (0 = no)",
            0.0,
            float(b1.has_beat),
            0.0,
            mode="abs",
            note=b1.reason,
            case="synthetic",
        ),
    ]


def _scalar(ds: xr.Dataset, key: str) -> float:
    return float(ds[key]) if key in ds else float("nan")


def _damage_rows(c, rs, st, tol):
    dmg = rs["damage_static"].values
    x = rs["x_gp"].values
    le = float(x.max()) / max(1, int(st.attrs["param.mesh.n_elements"]))
    return [
        check(
            "damage: position of the largest static damage vs the clamp-side point",
            float(x.min()),
            float(x[int(np.argmax(dmg))]),
            tol["damage_peak_elements"] * le,
            mode="abs",
            note=f"m; max damage {float(dmg.max()):.3g}",
            case=c,
        )
    ]


# --------------------------------------------------------------------------------------------
# optional studies
# --------------------------------------------------------------------------------------------
#: The identifier's least-squares step tolerance (``xtol`` of ``ancf_beam.identify``), with a
#: factor 10: the optimiser's own contribution to an estimate's error.
OPTIMISER_STEP = 1.0e-9


def identification_checks(
    ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the identification report (``ds``: the identification study's result).

    Noise-free data (a finer discretisation than the forward model): every grid point's
    ``lam`` and ``n`` within the bias the forward model's discretisation error explains. The
    estimator minimises ``sum r_k^2`` with ``r = (omega_model(p) - omega_data) / (sigma_rel
    omega_data)``; at the truth ``r_0 = d / sigma_rel`` (``d`` the forward model's relative
    error, ``model_discrepancy``), and to first order the estimate errs by ``(J^T J)^-1 J^T
    r_0``, whose ``p`` component is at most ``std_p |r_0|`` (``std_p``: the estimate's standard
    uncertainty, ``sqrt((J^T J)^-1)_pp``): tolerance ``estimate_factor x std_p d / sigma_rel``
    plus the optimiser's step tolerance. Coverage of the 2- and 1-std intervals of the
    identifiable estimates at least the nominal 95.4 % / 68.3 % less the shortfall the number
    of estimates explains at the ``coverage_alpha`` level (binomial). The largest ``lam``
    identifiable in every draw; negative controls never identifiable."""
    from ancf_beam.studies.identification import coverage_tolerance

    tol = report_tolerances("identification", tolerances)
    fs = float(tol["estimate_factor"])
    a = ds.attrs
    rows = _noise_free_checks(ds, fs)
    ident = ds["identifiable"].values > 0.5
    n_ok = int(ident.sum())
    for level, nominal in ((2, 0.954), (1, 0.683)):
        cov_tol = coverage_tolerance(n_ok, nominal, alpha=tol["coverage_alpha"])
        for p in ("lam", "n"):
            rows.append(
                check(
                    f"coverage of the {level}-std interval of {p}",
                    nominal,
                    a[f"coverage_{level}sigma_{p}"],
                    cov_tol,
                    mode="min",
                    note=f"{n_ok} identifiable estimates; binomial 0.1 % allowance",
                    case=a["case"],
                )
            )
    top = ds["lam_true"].values == np.max(ds["lam_true"].values)
    rows.append(
        check(
            "largest lam: identifiable fraction of the draws",
            1.0,
            float(ident[top].mean()),
            tol["strongest_identifiable"],
            mode="min",
            case=a["case"],
        )
    )
    if "control" in ds.coords:
        for k, name in enumerate(ds["control"].values):
            rows.append(
                check(
                    f"negative control '{name}': identifiable draws",
                    0.0,
                    float(np.sum(ds["control_identifiable"].values[k] > 0.5)),
                    tol["control_identifiable"],
                    mode="abs",
                    case=a["case"],
                )
            )
    return rows


def _noise_free_checks(ds: xr.Dataset, fs: float) -> list[dict[str, Any]]:
    """Every grid point's noise-free ``lam`` and ``n`` estimates against the truth, within the
    bias the forward model's discretisation error explains (see
    :func:`identification_checks`)."""
    a = ds.attrs
    sigma = float(a["sigma_rel"])
    rows = []
    for i in range(ds.sizes["truth"]):
        tag = f"lam = {float(ds['lam_true'][i]):g}, n = {float(ds['n_true'][i]):g}"
        ok = "identifiable" if ds["clean_identifiable"].values[i] > 0.5 else "NOT identifiable"
        disc = float(ds["model_discrepancy"][i]) if "model_discrepancy" in ds else math.nan
        for p in ("lam", "n"):
            std = float(ds[f"clean_{p}_std"][i])
            truth = float(ds[f"{p}_true"][i])
            bias = fs * std * disc / sigma + OPTIMISER_STEP * max(1.0, abs(truth))
            rows.append(
                check(
                    f"noise-free {tag}: {p} estimate vs truth",
                    float(ds[f"{p}_true"][i]),
                    float(ds[f"clean_{p}_est"][i]),
                    bias,
                    mode="abs",
                    note=f"std {std:.2g}; forward-model error {disc:.2g}; tol = {fs:g}"
                    f" x std x error / sigma_rel + optimiser step; {ok}; data "
                    f"{a['truth_mesh']} elements, model {a['forward_mesh']}",
                    case=a["case"],
                )
            )
    return rows


def integrators_checks(
    integrators: Mapping[str, xr.Dataset], tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the integrators report (one integrator-study result per case).

    Every reference is the *linear discrete model* of the case (all modes, released from rest
    under gravity; :class:`ancf_beam.studies.integrators.LinearModes`) run with the same
    scheme, step and damping, so that the scheme's exact linear behaviour on the multi-mode
    beam, the sampling and the estimators are in the reference, and the tolerance is what the
    linear model leaves out: the geometric nonlinearity (``nonlinearity_rel``, the validation
    estimate) times ``estimate_factor``, the fits' statistical error (``fit_sigmas`` standard
    errors, from the residual) where a fit is compared, the solver (Newton ``tol`` per step of
    the implicit runs, round-off per step of the explicit ones) and ``theory_abs``.

    Per case: the reference run's (explicit at a quarter of the explicit step) fitted
    ``omega_1`` against the modal one (the estimator's error on the linear model, the shift to
    the static state and the nonlinearity); the explicit run's tip history against the
    reference (against the linear model's tip error, within the nonlinear part of the tip
    difference history estimated by halving the load, ``tip_error_nonlinear`` of
    :func:`ancf_beam.studies.integrators.run_integrator_study`: the top bending modes'
    frequency shift about the moving state drifts their phase like ``t``, far beyond
    ``nonlinearity_rel`` of the linear error over a long run); for the explicit run and every
    implicit run the period error and decay per period relative to the reference against the
    linear model's; every damped run's final tip against the static tip plus the linear
    model's residual; the damped explicit run's decay rate against the linear model's (``alpha / 2``
    up to the scheme); the Newton step halvings of all implicit runs."""
    from ancf_beam.solvers.schemes import NEWTON_DEFAULTS

    tol = report_tolerances("integrators", tolerances)
    fs = float(tol["estimate_factor"])
    rows = []
    for c, d in integrators.items():
        a = d.attrs
        nl = float(a.get("nonlinearity_rel", 0.0))
        w1 = float(a["omega_1"])
        b = Bound().add(
            "fit of the linear model", abs(float(a["reference_omega_fit_linear"]) - w1) / w1
        )
        b.add(
            f"{fs:g} x (static state + nonlinearity)",
            fs * (abs(float(a.get("omega_1_static", w1)) - w1) / w1 + nl),
        )
        rows.append(
            check(
                "reference run: fitted omega_1 vs modal omega_1",
                w1,
                a["reference_omega_fit"],
                b.total,
                note="rad/s; " + b.note(),
                case=c,
            )
        )
        for i in range(d.sizes["run"]):
            rows.extend(_integrator_run_rows(c, d, i, tol, fs, nl, NEWTON_DEFAULTS["tol"]))
        rows.append(
            check(
                "implicit runs: Newton step halvings",
                0.0,
                float(np.nansum(d["step_halvings"].values)),
                tol["step_halvings"],
                mode="abs",
                note="a count: the steps converge without halving",
                case=c,
            )
        )
    return rows


class _RunBound(NamedTuple):
    """Run ``i`` of an integrator study ``d`` (case ``c``): its label and the shared terms of
    its bounds (``fs`` estimate factor, ``nl`` geometric nonlinearity, the solver's error)."""

    c: str
    d: xr.Dataset
    i: int
    run: str
    fs: float
    nl: float
    solver: float
    solver_name: str


def _integrator_run_rows(c, d, i, tol, fs, nl, newton_tol):
    rows = []
    a = d.attrs
    run = str(d["run"].values[i])
    integ = str(d["integrator"].values[i])
    if run == a.get("reference_run"):
        return rows  # what the others are measured against: its omega_1 is checked above
    damped = bool(int(d["damped"][i]))
    explicit = integ == EXPLICIT_INTEGRATOR
    steps = float(d["steps"][i])
    solver = steps * (EPS if explicit else newton_tol)
    solver_name = "round-off eps x steps" if explicit else "Newton tol x steps"
    r = _RunBound(c, d, i, run, fs, nl, solver, solver_name)
    if explicit and not damped:
        rows.extend(_tip_history_rows(r))
    if not (explicit and damped):  # the damped explicit run is the damped runs' reference
        rows.extend(_fit_rows(r, damped, tol))
    if damped:
        rows.extend(_damped_rows(r, explicit))
    return rows


def _tip_history_rows(r: _RunBound) -> list[dict[str, Any]]:
    """An undamped explicit run's tip history against the reference's, beyond the linear
    model's difference by at most its nonlinear part."""
    c, d, i, run, fs, nl, solver, solver_name = r
    rows = []
    lin = float(d["tip_error_linear"][i])
    # the nonlinear part of the tip difference history, estimated by halving the load
    # (tip_error_nonlinear; its order in g: half_load_order), bounds |tip_error - lin|
    est = float(d["tip_error_nonlinear"][i]) if "tip_error_nonlinear" in d else math.nan
    if math.isfinite(est):
        b = Bound().add(f"{fs:g} x nonlinear part (load halving)", fs * est)
    else:  # a result without the halving runs
        b = Bound().add(f"{fs:g} x nonlinearity x linear error", fs * nl * lin)
    b.add(solver_name, solver)
    rows.append(
        check(
            f"{run}: tip history vs the reference (explicit at dt/4)",
            lin,
            float(d["tip_error"][i]),
            b.total,
            mode="abs",
            note="max |tip - tip_ref| / max |tip_ref|; reference: the linear model's; " + b.note(),
            case=c,
        )
    )
    if math.isfinite(est) and "tip_difference_vs_linear" in d:
        # the whole history (the maximum above can hide a change): D - D_lin is the
        # nonlinear part itself, so the same bound holds without the triangle inequality
        rows.append(
            check(
                f"{run}: tip difference history vs the linear model's (max over t)",
                0.0,
                float(d["tip_difference_vs_linear"][i]),
                b.total,
                mode="abs",
                note="max |D - D_lin|, D = (tip - tip_ref) / max |tip_ref|; " + b.note(),
                case=c,
            )
        )
    return rows


def _fit_rows(r: _RunBound, damped: bool, tol) -> list[dict[str, Any]]:
    """The fitted period error and decay per period against the linear discrete model's."""
    c, d, i, run, fs, nl, solver, solver_name = r
    rows = []
    ref = np.flatnonzero(
        (d["damped"].values == int(damped)) & (d["run"].values == _reference_of(d, damped))
    )[0]
    lin = _linear_measures(d, i, ref)
    for name, key, std_key in (
        ("period error", "period_error", "period_error_std"),
        ("decay per period", "decay_per_period_rel", "decay_per_period_std"),
    ):
        sd = float(d[std_key][i])
        b = Bound().add(f"{tol['fit_sigmas']:g} x fit std", tol["fit_sigmas"] * sd)
        b.add(f"{fs:g} x nonlinearity", fs * nl * abs(lin[key]))
        b.add(solver_name, solver).add("floor theory_abs", tol["theory_abs"])
        note = f"SDOF theory {float(d[f'theory_{key}'][i]):.4g}; " + b.note()
        if key == "period_error":
            note = f"omega_1 dt = {float(d['omega_dt'][i]):.3g}; " + note
        rows.append(
            check(
                f"{run}: {name} vs the linear discrete model",
                lin[key],
                float(d[key][i]),
                b.total,
                mode="abs",
                note=note,
                case=c,
            )
        )
    return rows


def _damped_rows(r: _RunBound, explicit: bool) -> list[dict[str, Any]]:
    """A damped run's final tip against the static tip plus the linear residual and, for the
    explicit run, its decay rate against the linear discrete model's."""
    c, d, i, run, fs, nl, solver, solver_name = r
    a = d.attrs
    rows = []
    lin = float(d["final_tip_linear"][i])
    st = float(a["static_tip"])
    b = Bound().add(
        f"{fs:g} x (nonlinearity x residual + last shortened sample)",
        fs * (nl * abs(lin) + float(d["final_tip_sample_bound"][i])),
    )
    b.add(solver_name, solver)
    rows.append(
        check(
            f"{run}: final tip vs static tip + linear residual",
            st + lin * abs(st),
            float(d["final_tip"][i]),
            b.total,
            note=f"m; linear residual {lin:.3g} of the static tip; " + b.note(),
            case=c,
        )
    )
    if explicit:
        lin_rate = float(d["decay_rate_linear"][i])
        b = Bound().add(f"{fs:g} x nonlinearity", fs * nl).add(solver_name, solver)
        rows.append(
            check(
                f"{run}: decay rate vs the linear discrete model (alpha / 2 = zeta omega_1)",
                lin_rate,
                float(d["decay_rate"][i]),
                b.total,
                note=f"1/s; alpha / 2 = {a['damping_alpha'] / 2:.6g}; " + b.note(),
                case=c,
            )
        )
    return rows


def _reference_of(d, damped: bool) -> str:
    """The run the period errors are measured against: the reference run, or the damped
    explicit run for the damped runs."""
    if not damped:
        return str(d.attrs["reference_run"])
    sel = (d["damped"].values == 1) & (d["integrator"].values == EXPLICIT_INTEGRATOR)
    return str(d["run"].values[np.flatnonzero(sel)[0]])


def _linear_measures(d, i, ref) -> dict[str, float]:
    """The period error and decay per period of run ``i`` relative to run ``ref`` measured on
    the linear discrete model's histories (the same estimator as the study's)."""
    p, p_ref = (
        2 * math.pi / float(d["omega_fit_linear"][i]),
        2 * math.pi / float(d["omega_fit_linear"][ref]),
    )
    rate = float(d["decay_rate_fit_linear"][i]) - float(d["decay_rate_fit_linear"][ref])
    return {"period_error": p / p_ref - 1.0, "decay_per_period_rel": 1.0 - math.exp(-rate * p)}


def scaling_checks(
    ds: xr.Dataset, tolerances: Mapping[str, float] | None = None
) -> list[dict[str, Any]]:
    """Checks of the scaling report (``ds``: the scaling study's result).

    Informational rows (status :data:`INFO`, not counted: measured times, which move with
    the machine's load): the explicit cost exponent against ``1 + p_dt`` (``p_dt``: slope of
    ``1/dt_cr`` against ``n`` over the fitted meshes) less ``explicit_exponent_rel``; the
    implicit exponent against linear plus ``implicit_exponent_rel``; the window projection
    against the measured full run on the full runs of at least ``projection_min_s``. Checks:
    the generalized-alpha step chosen on the calibration mesh meets the tip-error target on
    every other mesh (on the calibration mesh it does by construction); the calibration found
    such a step."""
    tol = report_tolerances("scaling", tolerances)
    a = ds.attrs
    case = a["case"]
    n = ds["mesh"].values
    rows = _scaling_timing_rows(ds, tol)
    for i in range(n.size):
        if int(n[i]) == int(a["calibration_mesh"]):  # the step was chosen to meet it there
            continue
        e_ex = float(ds["implicit_tip_error_explicit"][i])
        e = e_ex if np.isfinite(e_ex) else float(ds["implicit_tip_error_fine"][i])
        src = "vs explicit" if np.isfinite(e_ex) else "vs GA dt/4 (Richardson)"
        rows.append(
            check(
                f"GA tip error <= target ({n[i]} elements)",
                a["tip_error_target"],
                e,
                tol["tip_error_rel"],
                mode="max",
                note=src,
                case=case,
            )
        )
    rows.append(
        check(
            "calibration found a step meeting the target",
            1.0,
            float(a["per_period_met_target"]),
            0.0,
            mode="min",
            case=case,
        )
    )
    return rows


def _scaling_timing_rows(ds: xr.Dataset, tol: Mapping[str, float]) -> list[dict[str, Any]]:
    """The informational rows of the scaling report (measured times; see
    :func:`scaling_checks`)."""
    from ancf_beam.studies.convergence import fit_slope

    a = ds.attrs
    case = a["case"]
    n = ds["mesh"].values
    sel = n >= a["fit_min_elements"]
    p_dt = fit_slope(n[sel], 1.0 / ds["dt_critical"].values[sel])
    # measured times: INFO rows (the same code is inside or outside a time model depending on
    # the machine's load), shown against the model with the tolerance but not counted
    timing = "measured CPU time (INFO: depends on the machine's load, not counted)"
    rows = [
        check(
            "explicit cost exponent vs 1 + slope of 1/dt_cr",
            1.0 + p_dt,
            a["explicit_exponent"],
            tol["explicit_exponent_rel"],
            mode="min",
            note=f"{timing}; fit over n >= {a['fit_min_elements']}; 1/dt_cr ~ n^{p_dt:.2f}",
            case=case,
            informational=True,
        ),
        check(
            "implicit cost exponent at most linear",
            1.0,
            a["implicit_exponent"],
            tol["implicit_exponent_rel"],
            mode="max",
            note=f"{timing}; fixed steps, cost per step ~ n",
            case=case,
            informational=True,
        ),
    ]
    meas = ds["explicit_measured_s"].values
    for i in np.flatnonzero(np.isfinite(meas) & (meas >= tol["projection_min_s"])):
        rows.append(
            check(
                f"window projection vs full run ({n[i]} elements)",
                meas[i],
                ds["explicit_projected_s"].values[i],
                tol["projection_rel"],
                note=f"{timing}; s; K = {int(ds['explicit_window_steps'][i])} steps",
                case=case,
                informational=True,
            )
        )
    return rows


def run_summary(ds: xr.Dataset, key: str, default: Any = None) -> Any:
    """Field ``key`` of a run's summary stored in ``ds.attrs`` (``summary.KEY``; mappings and
    lists parsed from their JSON text, ``'null'`` as None). Here, not in ``studies.general``
    (which re-exports it): a report that reads summaries then imports no solver."""
    v = ds.attrs.get(f"summary.{key}", default)
    if isinstance(v, str) and v[:1] in "{[":
        return json.loads(v)
    return None if v == "null" else v
