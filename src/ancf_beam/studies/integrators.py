"""Integrator study: accuracy, dissipation and cost of every time integrator on one case, with
linear single-mode theory (amplification matrices) as the reference, and the recommendation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import xarray as xr
from scipy import optimize

from ancf_beam.beam.model import BeamModel
from ancf_beam.io import provenance_attrs
from ancf_beam.kernel_cache import run_clock
from ancf_beam.results import DynamicsResult
from ancf_beam.solvers import DynamicsSettings, simulate
from ancf_beam.solvers.schemes import rayleigh_zeta
from ancf_beam.solvers.settings import EXPLICIT_INTEGRATOR, INTEGRATORS, make_scheme
from ancf_beam.specs import CaseSpec

__all__ = [
    "STUDY_VARIABLES",
    "TWO_PI",
    "LinearModes",
    "PlannedRun",
    "StudyRun",
    "amplification_matrix",
    "fit_first_mode",
    "integrator_plan",
    "linear_step_properties",
    "mode_history",
    "modes_history",
    "pad_rows",
    "recommend_integrators",
    "run_integrator_study",
    "settle_time",
    "tip_difference",
    "tip_error",
]

TWO_PI = 2.0 * math.pi


def amplification_matrix(
    integrator: str,
    omega_dt: float,
    damping_ratio: float = 0.0,
    *,
    beta: float | None = None,
    gamma: float | None = None,
    rho_inf: float | None = None,
) -> np.ndarray:
    """One-step amplification matrix of ``integrator`` for ``u'' + 2 zeta omega u' + omega^2 u
    = 0``.

    ``omega_dt`` is ``Omega = omega * dt`` (rad), ``damping_ratio`` is ``zeta``. States: central
    differences ``(u_n, u_{n-1})`` (damping at the central velocity, as
    :mod:`~ancf_beam.solvers.explicit`); BDF1 ``(u, dt v)``; Newmark and generalized-alpha
    (Chung-Hulbert parameters from ``rho_inf``, the same as
    :func:`ancf_beam.solvers.settings.make_scheme`; damping force alpha-weighted like the elastic
    force) ``(u, dt v, dt^2 a)``.
    """
    w = float(omega_dt)
    w2 = w * w
    c = 2.0 * float(damping_ratio) * w  # 2 zeta Omega
    if integrator == EXPLICIT_INTEGRATOR:
        # (u1 - 2 u0 + u_) + c/2 (u1 - u_) + w2 u0 = 0
        d = 1.0 + 0.5 * c
        return np.array([[(2.0 - w2) / d, -(1.0 - 0.5 * c) / d], [1.0, 0.0]])
    if integrator == "bdf1":
        # u1 - v1' = u0 ; w2 u1 + (1 + c) v1' = v0'   (v' = dt v)
        return np.linalg.solve(np.array([[1.0, -1.0], [w2, 1.0 + c]]), np.eye(2))
    s = make_scheme(integrator, beta=beta, gamma=gamma, rho_inf=rho_inf)
    b, g, am, af = s.beta, s.gamma, s.alpha_m, s.alpha_f
    # u1 = u0 + v0' + (1/2 - b) a0' + b a1' ; v1' = v0' + (1 - g) a0' + g a1'
    # (1 - am) a1' + am a0' + c ((1 - af) v1' + af v0') + w2 ((1 - af) u1 + af u0) = 0
    lhs = np.array([[1.0, 0.0, -b], [0.0, 1.0, -g], [w2 * (1.0 - af), c * (1.0 - af), 1.0 - am]])
    rhs = np.array([[1.0, 1.0, 0.5 - b], [0.0, 1.0, 1.0 - g], [-w2 * af, -c * af, -am]])
    return np.linalg.solve(lhs, rhs)


def linear_step_properties(
    integrator: str, omega_dt: float, damping_ratio: float = 0.0, **params
) -> dict[str, float]:
    """Spectral radius, period error and decay of ``integrator`` at ``Omega = omega dt``.

    Linear theory on ``u'' + 2 zeta omega u' + omega^2 u = 0`` (``zeta = damping_ratio``), from
    the principal (complex) eigenvalue ``lambda = rho exp(i phi)`` of
    :func:`amplification_matrix`: ``spectral_radius`` rho per step, ``omega_ratio``
    ``phi / (Omega sqrt(1 - zeta^2))`` (numerical over exact damped frequency),
    ``period_error`` ``Omega sqrt(1 - zeta^2) / phi - 1`` (> 0: period elongation),
    ``decay_per_period`` ``1 - rho^(2 pi / phi)`` (fraction of the amplitude lost per numerical
    period; physical damping included), ``exact_decay_per_period`` the same for the exact
    solution, and ``damping_ratio`` ``-ln(rho) / phi`` (approximately the equivalent viscous
    damping ratio, numerical plus physical). NaN when the roots are real (no oscillation, e.g.
    central differences beyond its stability limit ``Omega > 2``).
    """
    lam = np.linalg.eigvals(amplification_matrix(integrator, omega_dt, damping_ratio, **params))
    zeta = float(damping_ratio)
    wd = omega_dt * math.sqrt(max(1.0 - zeta * zeta, 0.0))
    exact = 1.0 - math.exp(-zeta * TWO_PI / math.sqrt(1.0 - zeta * zeta)) if zeta < 1 else 1.0
    osc = lam[np.abs(lam.imag) > 1e-14 * max(1.0, float(np.max(np.abs(lam))))]
    nan = float("nan")
    if osc.size == 0:
        return {
            "spectral_radius": float(np.max(np.abs(lam))),
            "omega_ratio": nan,
            "period_error": nan,
            "decay_per_period": nan,
            "exact_decay_per_period": exact,
            "damping_ratio": nan,
        }
    p = osc[np.argmax(np.abs(osc))]
    rho = float(abs(p))
    phi = float(abs(np.angle(p)))
    return {
        "spectral_radius": rho,
        "omega_ratio": phi / wd,
        "period_error": wd / phi - 1.0,
        "decay_per_period": 1.0 - rho ** (TWO_PI / phi),
        "exact_decay_per_period": exact,
        "damping_ratio": -math.log(rho) / phi if rho > 0 else math.inf,
    }


def _project(t: np.ndarray, y: np.ndarray, omega: float, sigma: float):
    """Linear least squares ``y ~ c0 + exp(-sigma t) (a cos wt + b sin wt)``: coefficients, RSS."""
    g = np.exp(-sigma * (t - t[0]))
    basis = np.column_stack([np.ones_like(t), g * np.cos(omega * t), g * np.sin(omega * t)])
    c, *_ = np.linalg.lstsq(basis, y, rcond=None)
    r = y - basis @ c
    return c, r


def fit_first_mode(
    t: Sequence[float],
    y: Sequence[float],
    omega_guess: float,
    band: float = 0.3,
    min_amplitude_ratio: float = 1e-3,
    max_samples: int = 4000,
) -> dict[str, float]:
    """Fit ``y(t) ~ c0 + A exp(-sigma t) cos(omega t + phi)`` near ``omega_guess`` (rad/s).

    ``t`` (s) and ``y`` (e.g. the tip deflection, m) of a free vibration; higher modes are left
    in the residual. The frequency is searched in ``(1 +- band) omega_guess`` on a grid finer than
    the record's resolution together with a grid of decay rates, then refined by nonlinear least
    squares (linear coefficients projected out). When the fitted envelope decays below
    ``min_amplitude_ratio`` of its start within the record, the fit is repeated on the part
    before that time (a fully decayed tail is round-off). Records are decimated to at most
    ``max_samples`` samples.

    Returns ``omega`` (rad/s), ``period`` (s), ``decay_rate`` sigma (1/s; > 0 decaying),
    ``decay_per_period`` ``1 - exp(-sigma 2 pi / omega)``, ``amplitude`` A at the window start
    (unit of y), ``offset`` c0, ``window_s`` (s), ``rel_residual`` (RMS residual over A) and
    the linearised standard errors ``omega_std`` (rad/s) and ``decay_rate_std`` (1/s) from the
    residual (white-noise assumption: an indication of the fit's precision).
    """
    t = np.asarray(t, float).ravel()
    y = np.asarray(y, float).ravel()
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = t[ok], y[ok]
    if t.size < 16:
        raise ValueError(f"fit_first_mode needs at least 16 samples, got {t.size}")
    stride = max(1, int(math.ceil(t.size / max_samples)))
    t, y = t[::stride], y[::stride]
    w0 = float(omega_guess)
    t_end = float(t[-1])
    result: dict[str, float] = {}
    window = t_end - t[0]
    for _ in range(3):
        sel = t <= t[0] + window
        tt, yy = t[sel], y[sel]
        span = tt[-1] - tt[0]
        if tt.size < 16 or span * w0 < 2 * TWO_PI:  # need about two periods
            break
        result = _fit_window(tt, yy, w0, band)
        s = result["decay_rate"]
        if s <= 0 or math.exp(-s * span) >= min_amplitude_ratio:
            break
        window = math.log(1.0 / min_amplitude_ratio) / s
    if not result:
        raise ValueError("record too short for a first-mode fit (less than two periods)")
    return result


def _fit_window(tt: np.ndarray, yy: np.ndarray, w0: float, band: float) -> dict[str, float]:
    """One first-mode fit of :func:`fit_first_mode` over the samples ``(tt, yy)``: grid search
    over frequency and decay rate, then nonlinear least squares."""
    span = tt[-1] - tt[0]
    dw = 0.25 * TWO_PI / span
    omegas = np.arange((1 - band) * w0, (1 + band) * w0 + dw, dw)
    sigmas = np.concatenate([[0.0], np.geomspace(1e-3, 5.0, 13) * w0 / TWO_PI])
    best = (math.inf, w0, 0.0)
    for s in sigmas:
        for w in omegas:
            _, r = _project(tt, yy, w, s)
            rss = float(r @ r)
            if rss < best[0]:
                best = (rss, w, s)
    sol = optimize.least_squares(
        lambda p: _project(tt, yy, p[0], p[1])[1],
        x0=[best[1], best[2]],
        bounds=([(1 - band) * w0, -0.5 * w0 / TWO_PI], [(1 + band) * w0, w0]),
        x_scale=[dw, 1.0 / span],
        xtol=1e-13,
        ftol=1e-13,
    )
    w, s = float(sol.x[0]), float(sol.x[1])
    c, r = _project(tt, yy, w, s)
    amp = float(math.hypot(c[1], c[2]))
    dof = max(tt.size - 5, 1)
    jac = np.asarray(sol.jac, float)
    try:
        cov = float(r @ r) / dof * np.linalg.inv(jac.T @ jac)
        w_std, s_std = float(np.sqrt(abs(cov[0, 0]))), float(np.sqrt(abs(cov[1, 1])))
    except np.linalg.LinAlgError:
        w_std = s_std = math.nan
    return {
        "omega": w,
        "period": TWO_PI / w,
        "decay_rate": s,
        "decay_per_period": 1.0 - math.exp(-s * TWO_PI / w),
        "amplitude": amp,
        "offset": float(c[0]),
        "window_s": float(span),
        "rel_residual": float(np.sqrt(np.mean(r * r)) / amp) if amp > 0 else math.nan,
        "omega_std": w_std,
        "decay_rate_std": s_std,
    }


def tip_difference(t, y, t_ref, y_ref) -> np.ndarray:
    """``(y(t) - y_ref(t)) / max |y_ref - y_ref(0)|`` at the samples ``t`` (s) within the
    reference's time range (``y_ref`` linearly interpolated; NaN elsewhere and when the
    reference does not move)."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    t_ref = np.asarray(t_ref, float)
    y_ref = np.asarray(y_ref, float)
    sel = np.isfinite(t) & np.isfinite(y) & (t >= t_ref[0]) & (t <= t_ref[-1] * (1 + 1e-12))
    scale = float(np.max(np.abs(y_ref - y_ref[0])))
    out = np.full(t.shape, np.nan)
    if scale > 0:
        out[sel] = (y[sel] - np.interp(t[sel], t_ref, y_ref)) / scale
    return out


def tip_error(t, y, t_ref, y_ref) -> float:
    """``max |y(t) - y_ref(t)| / max |y_ref - y_ref(0)|`` over the common time range.

    ``y_ref`` is linearly interpolated to the samples ``t`` (s); the error is relative to the
    largest tip displacement of the reference (dimensionless).
    """
    d = tip_difference(t, y, t_ref, y_ref)
    return float(np.nanmax(np.abs(d))) if np.isfinite(d).any() else math.nan


def settle_time(t, y, target: float, rel_band: float = 0.01) -> float:
    """First time (s) after which ``|y - target| <= rel_band |target|`` holds to the end (NaN if
    never)."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    ok = np.isfinite(y)
    t, y = t[ok], y[ok]
    out = np.abs(y - target) > rel_band * abs(target)
    if not out.any():
        return float(t[0])
    last = int(np.flatnonzero(out)[-1])
    return float(t[last + 1]) if last + 1 < t.size else math.nan


def pad_rows(rows: list[np.ndarray], fill=np.nan) -> np.ndarray:
    n = max((r.size for r in rows), default=0)
    out = np.full((len(rows), n), fill, dtype=float)
    for i, r in enumerate(rows):
        out[i, : r.size] = r
    return out


#: the reference run's step is the explicit run's divided by this
REFERENCE_REFINEMENT = 4.0


class PlannedRun(NamedTuple):
    """One run of the integrator study before it runs."""

    integrator: str
    dt: float  # s
    per_period: float  # T1 / dt (NaN: explicit)
    damped: bool
    label: str


@dataclass(frozen=True)
class StudyRun:
    """One run of the integrator study: the plan, the settings it ran with and its result."""

    plan: PlannedRun
    settings: DynamicsSettings
    result: DynamicsResult

    @property
    def t(self) -> np.ndarray:
        return self.result.t

    @property
    def y(self) -> np.ndarray:
        return self.result.tip_y

    @property
    def its(self) -> np.ndarray | None:
        its = self.result.newton_iterations
        return None if its is None else its.astype(float)

    def scheme_options(self) -> dict[str, float]:
        """``beta``/``gamma`` or ``rho_inf`` as the run used them (for the linear theory)."""
        st = self.settings
        opts = {"beta": st.beta, "gamma": st.gamma, "rho_inf": st.rho_inf}
        return {k: v for k, v in opts.items() if v is not None}


def integrator_plan(
    integrators: Sequence[str],
    dt_critical: float,
    omega_1: float,
    explicit_safety: float,
    per_period: Sequence[float],
    damped_per_period: float,
) -> list[PlannedRun]:
    """The runs of :func:`run_integrator_study`: the reference (explicit at a quarter of the
    explicit step, so that the explicit run itself is compared with something else), the
    explicit run at ``explicit_safety x dt_critical``, then each implicit integrator at
    ``T1 / N`` for ``N`` in ``per_period``, then one damped run per integrator (explicit at
    the explicit step, implicit at ``T1 / damped_per_period``)."""
    T1 = TWO_PI / omega_1
    ref_dt = explicit_safety * dt_critical
    ex = EXPLICIT_INTEGRATOR
    q = explicit_safety / REFERENCE_REFINEMENT
    plan = [
        PlannedRun(
            ex, ref_dt / REFERENCE_REFINEMENT, math.nan, False, f"{ex} {q:g} dt_cr (reference)"
        ),
        PlannedRun(ex, ref_dt, math.nan, False, f"{ex} {explicit_safety:g} dt_cr"),
    ]
    for integ in integrators:
        if integ != ex:
            plan += [
                PlannedRun(integ, T1 / n, float(n), False, f"{integ} T1/{n:g}") for n in per_period
            ]
    for integ in integrators:
        if integ == ex:
            plan.append(
                PlannedRun(
                    integ, ref_dt, math.nan, True, f"{integ} {explicit_safety:g} dt_cr damped"
                )
            )
        else:
            n = damped_per_period
            plan.append(PlannedRun(integ, T1 / n, float(n), True, f"{integ} T1/{n:g} damped"))
    return plan


class LinearModes:
    """The linear discrete model of the case released from rest under gravity, mode by mode
    (static tip participations ``c_k`` and frequencies ``w_k``, all modes): the predictions
    the integrator checks are bounded by."""

    def __init__(self, case: CaseSpec):
        from ancf_beam.identify import TipHistoryModel
        from ancf_beam.solvers.modal import modal_analysis

        tm = TipHistoryModel(case, min_participation=0.0)
        self.omega, self.c = tm.modal(case.defect.E.lam, case.defect.E.n)
        self.tip0 = tm.eigen.tip_y0
        self.model = BeamModel(case)
        self.omega_static = float(modal_analysis(self.model, n_modes=1, about="static").omega[0])

    def nonlinearity(self, static_tip: float) -> float:
        """The geometric-nonlinearity estimate relative to the static tip
        (:func:`ancf_beam.studies.bounds.geometric_nonlinearity`)."""
        from ancf_beam.studies.bounds import geometric_nonlinearity

        return geometric_nonlinearity(self.model, static_tip) / abs(static_tip)

    def tip(self, t, dt: float) -> np.ndarray:
        """Tip history of the undamped central differences at step ``dt`` (each mode a discrete
        cosine of frequency ``2 / dt asin(w dt / 2)``)."""
        w = 2.0 / dt * np.arcsin(np.clip(0.5 * self.omega * dt, 0.0, 1.0))
        return self.tip0 + (1.0 - np.cos(np.outer(np.asarray(t, float), w))) @ self.c

    def bounds(self, r: StudyRun, ref: StudyRun, alpha: float, static_tip: float) -> dict:
        """``tip_error_linear``: the undamped explicit run's tip error against the reference
        predicted by the linear model (NaN for other runs); ``tip_difference_vs_linear``: the
        largest gap between that run's tip difference history (:func:`tip_difference`) and
        the linear model's; ``final_tip_linear``: for a damped
        run, the linear model's final tip (mean over the samples of the last first-mode
        period) less its static tip, relative to the static tip: every mode ``k`` runs the
        scheme's amplification matrix ``A_k`` (at ``w_k dt``, ``zeta_k = alpha / (2 w_k)``)
        from its start at rest ``c_k`` below its static position (NaN for undamped runs)."""
        out = {
            "tip_error_linear": math.nan,
            "tip_difference_vs_linear": math.nan,
            "final_tip_linear": math.nan,
            "final_tip_sample_bound": math.nan,
            "decay_rate_linear": math.nan,
        }
        p = r.plan
        fit = fit_first_mode(r.t, self.history(r, alpha), self.omega[0])
        out["omega_fit_linear"] = fit["omega"]
        out["decay_rate_fit_linear"] = fit["decay_rate"]
        if p.integrator == EXPLICIT_INTEGRATOR and not p.damped and r is not ref:
            y_lin, y_lin_ref = self.tip(r.t, p.dt), self.tip(ref.t, ref.plan.dt)
            out["tip_error_linear"] = tip_error(r.t, y_lin, ref.t, y_lin_ref)
            # the whole difference history against the linear model's, on whole steps (the
            # last samples end a shortened step, which the discrete model does not take)
            whole = r.t <= min(r.t[-2], ref.t[-2]) if min(r.t.size, ref.t.size) > 2 else []
            gap = (
                tip_difference(r.t, r.y, ref.t, ref.y)
                - tip_difference(r.t, y_lin, ref.t, y_lin_ref)
            )[whole]
            out["tip_difference_vs_linear"] = (
                float(np.nanmax(np.abs(gap))) if np.isfinite(gap).any() else math.nan
            )
        if p.damped:
            last = r.t >= r.t[-1] - TWO_PI / self.omega[0]
            steps = np.rint(r.t / p.dt)
            opts = r.scheme_options()
            hist = np.array(
                [
                    c * self._mode_history(p.integrator, p.dt, w, alpha, steps, opts)
                    for w, c in zip(self.omega, self.c, strict=True)
                ]
            )
            out["final_tip_linear"] = float(np.mean(hist[:, last].sum(axis=0))) / abs(static_tip)
            # the last sample ends a shortened step (t_end): the modes' largest residual there,
            # twice, over the number of samples averaged
            out["final_tip_sample_bound"] = (
                2.0
                * float(np.abs(hist[:, last]).max(axis=1).sum())
                / (int(last.sum()) * abs(static_tip))
            )
            if p.integrator == EXPLICIT_INTEGRATOR:
                lin = self.tip0 + self.c.sum() + hist.sum(axis=0)
                out["decay_rate_linear"] = fit_first_mode(r.t, lin, self.omega[0])["decay_rate"]
        return out

    def history(self, r: StudyRun, alpha: float) -> np.ndarray:
        """Tip history of the linear discrete model with the run's scheme, step and damping,
        at the run's samples (the shortened last step taken as a whole one)."""
        a = alpha if r.plan.damped else 0.0
        return self.scheme_tip(r.plan.integrator, r.plan.dt, r.t, a, **r.scheme_options())

    def scheme_tip(self, integrator: str, dt: float, t, alpha: float = 0.0, **options):
        """Tip history of the linear discrete model released from rest, run with
        ``integrator`` at step ``dt`` (mass-proportional damping ``alpha``, 1/s; the scheme's
        ``options``), at the times ``t`` (rounded to whole steps)."""
        zeta = rayleigh_zeta(np.asarray(self.omega, float), alpha, 0.0)
        modes = modes_history(integrator, dt, t, self.omega, self.c, zeta, options)
        return self.tip0 + float(np.sum(self.c)) + modes

    @staticmethod
    def _mode_history(integrator, dt, w: float, alpha: float, steps, options) -> np.ndarray:
        """:func:`mode_history` with mass-proportional damping ``alpha`` (1/s)."""
        return mode_history(integrator, dt, w, rayleigh_zeta(w, alpha, 0.0), steps, options)


def mode_history(
    integrator: str, dt: float, w: float, zeta: float, steps, options: dict[str, float]
) -> np.ndarray:
    """One mode of frequency ``w`` (rad/s, damping ratio ``zeta``) released at rest from -1
    below its static position, after ``steps`` steps of ``integrator`` at step ``dt`` (the
    scheme's ``options``: ``beta``, ``gamma``, ``rho_inf``): ``e_u^T A^n x0`` by the
    eigen-decomposition of the amplification matrix ``A`` (:func:`amplification_matrix`)."""
    wdt = float(w * dt)
    a = amplification_matrix(integrator, wdt, zeta, **options)
    if integrator == EXPLICIT_INTEGRATOR:  # (u_0, u_-1), u_-1 = u0 + dt^2 / 2 a0
        x0 = np.array([-1.0, -1.0 + 0.5 * wdt * wdt])
    elif integrator == "bdf1":  # (u, dt v)
        x0 = np.array([-1.0, 0.0])
    else:  # (u, dt v, dt^2 a), a0 = w^2
        x0 = np.array([-1.0, 0.0, wdt * wdt])
    lam, vec = np.linalg.eig(a)
    coef = np.linalg.solve(vec, x0.astype(complex))
    hist = (vec[0][None, :] * coef[None, :] * lam.astype(complex)[None, :] ** steps[:, None]).sum(
        axis=1
    )
    return hist.real


def modes_history(integrator: str, dt: float, t, omega, c, zeta, options) -> np.ndarray:
    """The sum over modes of ``c_k`` times :func:`mode_history` (frequency ``omega_k``, damping
    ratio ``zeta_k``) at the times ``t`` rounded to whole steps of ``dt``: a linear discrete
    model released from rest, about its static state."""
    steps = np.rint(np.asarray(t, float) / dt)
    modes = [
        ck * mode_history(integrator, dt, w, z, steps, options)
        for w, ck, z in zip(omega, c, zeta, strict=True)
    ]
    return np.sum(modes, axis=0)


def _run_planned(case, p: PlannedRun, dt_critical, t_end, alpha, progress) -> StudyRun:
    damping = (alpha, 0.0) if p.damped else (0.0, 0.0)
    settings = DynamicsSettings.from_case(
        case, integrator=p.integrator, dt=p.dt, t_end=t_end, damping=damping
    )
    res = simulate(BeamModel(case), settings, dt_critical=dt_critical, progress=progress)
    return StudyRun(p, settings, res)


def _run_row(
    r: StudyRun, fit, base: StudyRun, fb, omega_1: float, damping_ratio: float, static_tip: float
) -> dict[str, float]:
    """The measured and theoretical numbers of one run (``base``/``fb``: its reference run and
    that run's fit)."""
    T1 = TWO_PI / omega_1
    damped = r.plan.damped
    w_dt = omega_1 * r.plan.dt
    zeta = damping_ratio if damped else 0.0
    theory = linear_step_properties(r.plan.integrator, w_dt, zeta, **r.scheme_options())
    last = r.t >= r.t[-1] - T1
    final = float(np.mean(r.y[last]))
    res, its = r.result, r.its
    stats = res.newton_stats
    return {
        "omega_fit": fit["omega"],
        "period_fit": fit["period"],
        "decay_rate": fit["decay_rate"],
        "decay_per_period": fit["decay_per_period"],
        "fit_window": fit["window_s"],
        "fit_rel_residual": fit["rel_residual"],
        "period_error": fit["period"] / fb["period"] - 1.0,
        "period_error_std": (fit["period"] / fb["period"])
        * math.hypot(
            fit["omega_std"] / fit["omega"], fb["omega_std"] / fb["omega"] if r is not base else 0.0
        ),
        "decay_per_period_std": fit["period"]
        * math.hypot(fit["decay_rate_std"], fb["decay_rate_std"] if r is not base else 0.0),
        "period_error_modal": fit["period"] / T1 - 1.0,
        "decay_per_period_rel": 1.0
        - math.exp(-(fit["decay_rate"] - fb["decay_rate"]) * fit["period"]),
        "theory_period_error": theory["period_error"],
        "theory_decay_per_period": theory["decay_per_period"],
        # numerical decay beyond the exact rate zeta omega, over the numerical period
        "theory_decay_per_period_rel": 1.0
        - (1.0 - theory["decay_per_period"])
        * math.exp(
            zeta
            * w_dt
            * (1.0 + theory["period_error"])
            * TWO_PI
            / (w_dt * math.sqrt(1.0 - zeta * zeta))
        ),
        "theory_spectral_radius": theory["spectral_radius"],
        "omega_dt": w_dt,
        "tip_error": tip_error(r.t, r.y, base.t, base.y) if r is not base else 0.0,
        "final_tip": final,
        "final_tip_rel_error": abs(final - static_tip) / abs(static_tip),
        "settle_time": settle_time(r.t, r.y, static_tip) if damped else math.nan,
        "wall_s": float(res.wall_s),
        "steps": int(res.steps),
        "newton_mean": float(np.mean(its)) if its is not None else math.nan,
        "newton_max": float(np.max(its)) if its is not None else math.nan,
        "newton_total": float(np.sum(its)) if its is not None else 0.0,
        "factorizations": float(stats.factorizations if stats is not None else 0),
        "step_halvings": float(stats.halvings if stats is not None else 0),
    }


#: variables of the integrator study over ``run``: (units, long name)
STUDY_VARIABLES = {
    "omega_fit": ("rad/s", "fitted first-mode frequency of the tip history"),
    "period_fit": ("s", "fitted first-mode period"),
    "decay_rate": ("1/s", "fitted exponential decay rate sigma of the first mode"),
    "decay_per_period": ("1", "amplitude lost per period, 1 - exp(-sigma T)"),
    "fit_window": ("s", "time window of the first-mode fit"),
    "fit_rel_residual": ("1", "RMS residual of the fit over its amplitude (higher modes)"),
    "period_error": (
        "1",
        "fitted period / fitted period of the reference run (explicit at "
        "dt/4; the damped explicit run for damped runs) - 1",
    ),
    "period_error_std": (
        "1",
        "standard error of period_error from the two fits (linearised, white-noise residual)",
    ),
    "decay_per_period_std": ("1", "standard error of decay_per_period_rel, likewise"),
    "period_error_modal": ("1", "fitted period / (2 pi / omega_1 of the modal study) - 1"),
    "decay_per_period_rel": (
        "1",
        "amplitude decay per period beyond the reference run's (numerical dissipation)",
    ),
    "theory_period_error": (
        "1",
        "period error vs the exact (damped) period, linear SDOF at omega_1 dt",
    ),
    "theory_decay_per_period": (
        "1",
        "decay per period of the scheme (physical damping included), linear SDOF",
    ),
    "theory_decay_per_period_rel": (
        "1",
        "decay per numerical period beyond the exact rate zeta omega_1, linear SDOF",
    ),
    "theory_spectral_radius": ("1", "spectral radius per step, linear SDOF at omega_1 dt"),
    "omega_dt": ("rad", "omega_1 * dt"),
    "tip_error": (
        "1",
        "max |tip - tip_ref| / max |tip_ref| (ref: explicit at dt/4, damped "
        "runs against the damped explicit run)",
    ),
    "final_tip": ("m", "mean tip deflection over the last first-mode period"),
    "final_tip_rel_error": ("1", "|final_tip - static tip| / |static tip|"),
    "tip_error_linear": (
        "1",
        "tip_error of the linear discrete model (central differences, undamped explicit run only)",
    ),
    "tip_difference_vs_linear": (
        "1",
        "max over whole steps of |D - D_lin|, D the tip "
        "difference history against the reference, D_lin the linear "
        "discrete model's (undamped explicit run only)",
    ),
    "tip_error_nonlinear": (
        "1",
        "estimate of the geometric nonlinearity's part of the tip "
        "difference history by halving the load (undamped explicit run "
        "only): 2^p / (2^p - 1) max |D(g) - D(g/2)|",
    ),
    "final_tip_linear": (
        "1",
        "(final tip - static tip) / |static tip| of the linear discrete "
        "model with the run's scheme and step (damped runs)",
    ),
    "final_tip_sample_bound": (
        "1",
        "bound of the last (shortened-step) sample's effect on the "
        "final tip of the linear model, over the static tip",
    ),
    "decay_rate_linear": (
        "1/s",
        "decay rate fitted to the linear discrete model's history (damped explicit run)",
    ),
    "omega_fit_linear": (
        "rad/s",
        "first-mode frequency fitted to the linear discrete model's "
        "history with the run's scheme, step and damping",
    ),
    "decay_rate_fit_linear": ("1/s", "decay rate fitted to the same history"),
    "settle_time": ("s", "time after which the tip stays within 1 % of the static tip"),
    "wall_s": ("s", "wall time of the time loop"),
    "steps": ("1", "time steps"),
    "newton_mean": ("1", "mean Newton iterations per step (NaN: explicit)"),
    "newton_max": ("1", "max Newton iterations in a step (NaN: explicit)"),
    "newton_total": ("1", "Newton iterations (linear solves) in the run"),
    "factorizations": ("1", "factorisations of the effective stiffness"),
    "step_halvings": ("1", "Newton step halvings"),
}


def _study_dataset(runs: list[StudyRun], rows: list[dict], dt_critical: float) -> xr.Dataset:
    data = {
        k: ("run", np.array([row[k] for row in rows], dtype=float), {"units": u, "long_name": d})
        for k, (u, d) in STUDY_VARIABLES.items()
    }
    data["time"] = (("run", "sample"), pad_rows([r.t for r in runs]), {"units": "s"})
    data["tip_y"] = (
        ("run", "sample"),
        pad_rows([r.y for r in runs]),
        {"units": "m", "long_name": "tip y (down < 0); NaN padding after the run's last sample"},
    )
    data["newton_iterations"] = (
        ("run", "step"),
        pad_rows([r.its if r.its is not None else np.zeros(0) for r in runs]),
        {"units": "1", "long_name": "Newton iterations per step (NaN: explicit or padding)"},
    )
    plans = [r.plan for r in runs]
    coords = {
        "run": ("run", np.array([p.label for p in plans], dtype=object)),
        "integrator": ("run", np.array([p.integrator for p in plans], dtype=object)),
        "dt": ("run", np.array([p.dt for p in plans]), {"units": "s"}),
        "per_period": (
            "run",
            np.array([p.per_period for p in plans]),
            {"units": "1", "long_name": "T1 / dt (NaN: explicit)"},
        ),
        "dt_over_dt_critical": (
            "run",
            np.array([p.dt / dt_critical for p in plans]),
            {"units": "1"},
        ),
        "damped": (
            "run",
            np.array([int(p.damped) for p in plans]),
            {"units": "1", "long_name": "1: Rayleigh-damped run"},
        ),
    }
    return xr.Dataset(data, coords=coords)


def _check_study_inputs(integrators, dt_critical, omega_1, t_end) -> None:
    unknown = [i for i in integrators if i not in INTEGRATORS]
    if unknown:
        raise ValueError(f"unknown integrators {unknown}; choose from {', '.join(INTEGRATORS)}")
    if EXPLICIT_INTEGRATOR not in integrators:
        raise ValueError("the integrator study needs central-difference (the reference run)")
    if not (dt_critical > 0 and omega_1 > 0 and t_end > 0):
        raise ValueError("dt_critical, omega_1 and t_end must be > 0")


def _half_load_estimates(case, runs, ref, dt_critical, t_end, progress):
    """Per run, the geometric nonlinearity's part of the undamped explicit run's tip
    difference history against the reference, estimated by halving the load (NaN for the
    other runs), and the order ``p`` used.

    The difference history ``D = tip_difference`` of the linear model does not depend on the
    load (both runs scale with it); the nonlinear model's adds ``g^p N(t)`` with ``p = 2`` on
    a straight reference (mirrored load, mirrored motion: the tip is odd in ``g``) and ``p =
    1`` on a curved one. So ``N g^p = 2^p / (2^p - 1) (D(g) - D(g/2))`` up to the next order,
    and ``|tip_error - tip_error of the linear model| <= max |g^p N|``. Measured on the
    default ``uniform`` case (2 s): ``max |D(g) - D_lin| = 5.3063e-8``, the estimate 5.3069e-8
    (``p = 2``; the difference halves as ``4.02``). It grows like ``t`` and lies at the top
    bending modes (8855, 5928, 3584 rad/s): their frequencies about the moving state differ
    from the straight beam's, and the phase of the high-mode content the two steps resolve
    differently drifts by ``delta omega t``."""
    p = 1.0 if np.any(BeamModel(case).kap0 != 0.0) else 2.0
    out = [math.nan] * len(runs)
    targets = [
        i
        for i, r in enumerate(runs)
        if i != ref and not r.plan.damped and r.plan.integrator == EXPLICIT_INTEGRATOR
    ]
    if not targets:
        return out, p
    half = case.with_overrides({"load.g": 0.5 * case.load.g})
    h_ref = _run_planned(half, runs[ref].plan, dt_critical, t_end, 0.0, progress)
    base = runs[ref]
    for i in targets:
        h = _run_planned(half, runs[i].plan, dt_critical, t_end, 0.0, progress)
        d_full = tip_difference(runs[i].t, runs[i].y, base.t, base.y)
        d_half = tip_difference(h.t, h.y, h_ref.t, h_ref.y)
        out[i] = 2.0**p / (2.0**p - 1.0) * float(np.nanmax(np.abs(d_full - d_half)))
    return out, p


def run_integrator_study(
    case: CaseSpec,
    dt_critical: float,
    omega_1: float,
    static_tip: float,
    t_end: float = 2.0,
    explicit_safety: float | None = None,
    per_period: Sequence[float] = (100.0, 20.0),
    damping_ratio: float = 0.05,
    damped_per_period: float = 20.0,
    integrators: Sequence[str] = INTEGRATORS,
    progress: bool = False,
) -> xr.Dataset:
    """Accuracy and cost of every integrator on ``case`` (see the module docstring).

    ``dt_critical`` (s) is the explicit critical step of the case's mesh (the ``critical_dt``
    study), ``omega_1`` (rad/s) its first natural frequency (the ``modal`` study; ``T1 = 2 pi /
    omega_1``), ``static_tip`` (m) the static tip deflection (the ``static`` study). Runs, all
    from rest in the reference shape under gravity up to ``t_end`` (s), as
    :func:`integrator_plan` lists them:

    * ``central-difference`` at ``explicit_safety * dt_critical / 4``, undamped: the
      reference, independent of every run it is compared with;
    * ``central-difference`` at ``explicit_safety * dt_critical`` (default: the case's
      ``dynamics.dt_safety``), undamped; it and the reference run again at half the load,
      for the nonlinear part of their tip difference (``tip_error_nonlinear``);
    * each implicit integrator at ``dt = T1 / N`` for ``N`` in ``per_period``, undamped;
    * one run per integrator with Rayleigh damping ``alpha = 2 damping_ratio omega_1`` (1/s,
      ``beta = 0``): explicit at the reference step, implicit at ``T1 / damped_per_period``.

    Returns a Dataset over ``run`` (and ``sample``/``step`` for the histories, NaN-padded) with
    the fitted first-mode frequency and decay, the linear-theory predictions, period error and
    decay relative to the reference, tip error against the reference (undamped runs) or the
    damped explicit run (damped runs), Newton iterations, wall time, the final tip (mean over
    the last period) against ``static_tip`` and the settling time into a 1 % band.
    """
    _check_study_inputs(integrators, dt_critical, omega_1, t_end)
    safety = case.dynamics.dt_safety if explicit_safety is None else float(explicit_safety)
    alpha = 2.0 * damping_ratio * omega_1
    plan = integrator_plan(integrators, dt_critical, omega_1, safety, per_period, damped_per_period)
    t0 = run_clock()
    runs = [_run_planned(case, p, dt_critical, t_end, alpha, progress) for p in plan]
    fits = [fit_first_mode(r.t, r.y, omega_1) for r in runs]
    ref = 0
    lin = LinearModes(case)
    rows = _study_rows(runs, fits, ref, lin, omega_1, damping_ratio, alpha, static_tip)
    nonlinear, order = _half_load_estimates(case, runs, ref, dt_critical, t_end, progress)
    for row, est in zip(rows, nonlinear, strict=True):
        row["tip_error_nonlinear"] = est
    wall = run_clock() - t0
    ds = _study_dataset(runs, rows, dt_critical)
    ds.attrs.update(
        provenance_attrs(
            case,
            study="integrators",
            integrators=",".join(integrators),
            t_end=t_end,
            dt_critical=dt_critical,
            explicit_safety=safety,
            omega_1=omega_1,
            T1=TWO_PI / omega_1,
            static_tip=static_tip,
            damping_ratio=damping_ratio,
            damping_alpha=alpha,
            per_period=",".join(f"{n:g}" for n in per_period),
            damped_per_period=damped_per_period,
            reference_run=runs[ref].plan.label,
            reference_omega_fit=fits[ref]["omega"],
            reference_decay_rate=fits[ref]["decay_rate"],
            reference_omega_fit_linear=fit_first_mode(
                runs[ref].t, lin.tip(runs[ref].t, runs[ref].plan.dt), omega_1
            )["omega"],
            omega_1_static=lin.omega_static,
            nonlinearity_rel=lin.nonlinearity(static_tip),
            half_load_order=order,
            wall_s=wall,
        )
    )
    return ds


def _study_rows(runs, fits, ref, lin, omega_1, damping_ratio, alpha, static_tip) -> list[dict]:
    """Per run its row (:func:`_run_row`): measured against the reference run ``ref``
    (undamped runs) or the damped explicit run (damped runs), with the bounds of the linear
    model ``lin``."""
    ref_damped = next(
        i for i, r in enumerate(runs) if r.plan.damped and r.plan.integrator == EXPLICIT_INTEGRATOR
    )
    rows = []
    for r, fit in zip(runs, fits, strict=True):
        b = ref_damped if r.plan.damped else ref
        rows.append(_run_row(r, fit, runs[b], fits[b], omega_1, damping_ratio, static_tip))
    for r, row in zip(runs, rows, strict=True):
        row.update(lin.bounds(r, runs[ref], alpha, static_tip))
    return rows


# ------------------------------------------------------------------------------------------
# recommendation
# ------------------------------------------------------------------------------------------
def _recommendation_frame(ds: xr.Dataset):
    import pandas as pd

    # the reference run is what the others are measured against, not a candidate
    ref = ds.attrs.get("reference_run")
    if ref is not None and ref in ds["run"].values:
        ds = ds.drop_sel(run=ref)

    return pd.DataFrame(
        {
            "run": ds["run"].values,
            "integrator": ds["integrator"].values,
            "dt": ds["dt"].values,
            "per_period": ds["per_period"].values,
            "damped": ds["damped"].values.astype(bool),
            "tip_error": ds["tip_error"].values,
            "period_error": ds["period_error"].values,
            "decay": ds["decay_per_period_rel"].values,
            "decay_th": ds["theory_decay_per_period_rel"].values,
            "final_err": ds["final_tip_rel_error"].values,
            "settle": ds["settle_time"].values,
            "wall_s": ds["wall_s"].values,
            "steps": ds["steps"].values,
            "dt_ratio": ds["dt_over_dt_critical"].values,
            "newton": ds["newton_mean"].values,
        }
    )


def _pick(purpose: str, frame, rule: str, why) -> dict[str, Any]:
    """The first row of ``frame`` as the recommendation for ``purpose`` (``why(row)``: the
    justification), or a row saying that no run met the rule."""
    if frame is None or frame.empty:
        return {
            "purpose": purpose,
            "recommended": "(no run met the rule)",
            "dt (s)": math.nan,
            "rule": rule,
            "justification": "",
        }
    p = frame.iloc[0]
    return {
        "purpose": purpose,
        "recommended": p["run"],
        "dt (s)": float(p["dt"]),
        "rule": rule,
        "justification": why(p),
    }


def _newton_note(p) -> str:
    return f", {p['newton']:.2f} Newton it/step" if np.isfinite(p["newton"]) else ""


def _scaling_recommendation(scaling: xr.Dataset) -> dict[str, Any]:
    a = scaling.attrs
    n_pp = float(a["per_period"])
    err = np.asarray(scaling["calibration_tip_error"].values, float)
    cand = np.asarray(scaling["candidate"].values, float)
    e = float(err[cand == n_pp][0]) if np.any(cand == n_pp) else math.nan
    return {
        "purpose": "accurate transient, implicit",
        "recommended": f"generalized-alpha T1/{n_pp:g} (scaling study)",
        "dt (s)": float(scaling["implicit_dt"].sel(mesh=int(a["calibration_mesh"]))),
        "rule": f"coarsest T1/N with tip error <= {float(a['tip_error_target']):g} "
        f"(scaling study, {int(a['calibration_mesh'])} elements)",
        "justification": f"tip error {e:.2%}; cost ~ n^{float(a['implicit_exponent']):.2f} "
        f"vs explicit ~ n^{float(a['explicit_exponent']):.2f}",
    }


def _transient_and_vibration(und, tip_tol: float) -> list[dict[str, Any]]:
    transient = _pick(
        "accurate transient (tip history)",
        und[und["tip_error"] <= tip_tol].sort_values("wall_s"),
        f"tip error <= {tip_tol:g} over the record, least wall time",
        lambda p: (
            f"tip error {p['tip_error']:.2%}, period error {p['period_error']:+.1e}, "
            f"wall {p['wall_s']:.3g} s{_newton_note(p)}"
        ),
    )
    cons = und[(und["period_error"].abs() <= 1e-3) & (und["integrator"] != EXPLICIT_INTEGRATOR)]
    cons = cons.assign(diss=cons["decay_th"].abs()).sort_values(["diss", "wall_s"])
    vibration = _pick(
        "long free vibration (energy kept)",
        cons,
        "implicit, |period error| <= 1e-3, least numerical dissipation (theory), then least "
        "wall time",
        lambda p: (
            f"decay {p['decay']:+.1e} per period (theory {p['decay_th']:+.1e}), period "
            f"error {p['period_error']:+.1e}, wall {p['wall_s']:.3g} s{_newton_note(p)}"
        ),
    )
    return [transient, vibration]


def _static_stiff_reference(df, und, static_tol: float, period_tol: float):
    static = _pick(
        "approach to static equilibrium",
        df[df["damped"] & (df["final_err"] <= static_tol)].sort_values("wall_s"),
        f"damped run within {static_tol:g} of the static tip, least wall time",
        lambda p: (
            f"final tip error {p['final_err']:.1e}, within 1 % after "
            f"{p['settle']:.3g} s, wall {p['wall_s']:.3g} s{_newton_note(p)}"
        ),
    )
    ga = und[(und["integrator"] == "generalized-alpha") & (und["period_error"].abs() <= period_tol)]
    stiff = _pick(
        "stiff problems / unresolved high frequencies",
        ga.sort_values("dt", ascending=False),
        f"generalized-alpha (numerical dissipation of high modes), largest dt with |period "
        f"error| <= {period_tol:g}",
        lambda p: (
            f"period error {p['period_error']:+.1e}, mode-1 decay {p['decay']:+.1e} "
            f"per period at T1/{p['per_period']:g}, wall {p['wall_s']:.3g} s{_newton_note(p)}"
        ),
    )
    reference = _pick(
        "reference / short impact-like events",
        und[und["integrator"] == EXPLICIT_INTEGRATOR],
        "explicit, dt = safety x dt_critical",
        lambda p: (
            f"no Newton; {p['steps']:.0f} steps of {p['dt']:.3g} s "
            f"({p['dt_ratio']:.2g} dt_cr), wall {p['wall_s']:.3g} s"
        ),
    )
    return [static, stiff, reference]


def recommend_integrators(
    ds: xr.Dataset,
    tip_tol: float = 0.01,
    static_tol: float = 1e-3,
    period_tol: float = 1e-2,
    scaling: xr.Dataset | None = None,
):
    """Recommendation table (pandas DataFrame) from one :func:`run_integrator_study` Dataset.

    Purposes and the rule applied to the measured numbers (each row names the run, its step and
    the numbers that justify it):

    * *accurate transient* -- among the undamped runs with ``tip_error <= tip_tol`` over the
      whole record, the one with the least wall time;
    * *accurate transient, implicit* (only with ``scaling``, a
      :func:`~ancf_beam.studies.scaling.run_scaling_study` Dataset) -- generalized-alpha at the
      ``T1 / N`` that study found to meet its tip-error target;
    * *long free vibration, energy kept* -- among the undamped implicit runs with
      ``|period_error| <= 1e-3``, the least numerical dissipation of the scheme (the linear
      theory: the measured decay of a conservative scheme is at the fit's noise level), then the
      least wall time;
    * *approach to static equilibrium* -- among the damped runs whose final tip is within
      ``static_tol`` of the static tip, the least wall time;
    * *stiff problems / unresolved high frequencies* -- generalized-alpha (``rho_inf < 1``:
      numerical dissipation of the high modes, second order for the resolved ones) at the
      largest step with ``|period_error| <= period_tol``;
    * *reference / short events* -- the explicit run (no Newton, ``dt <= dt_critical``).
    """
    import pandas as pd

    df = _recommendation_frame(ds)
    und = df[~df["damped"]]
    transient, vibration = _transient_and_vibration(und, tip_tol)
    rows = [transient]
    if scaling is not None:
        rows.append(_scaling_recommendation(scaling))
    rows.append(vibration)
    rows += _static_stiff_reference(df, und, static_tol, period_tol)
    return pd.DataFrame(rows)
