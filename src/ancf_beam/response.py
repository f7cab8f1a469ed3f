"""Response analysis: tip spectra, envelopes and beats, curvature distribution and concentration.

Plain numpy/scipy post-processing of what :func:`ancf_beam.analyses.run_simulate` produces (the
variable ``tip_y`` over the coordinate ``time``, and ``node_x``/``node_y`` snapshots) and of full
coordinate vectors ``q`` of a :class:`~ancf_beam.beam.model.BeamModel`. All quantities are SI: time
in s, frequency in Hz *and* rad/s (both are reported, named ``*_hz`` and ``*_omega``),
positions in m, curvature in 1/m (= rad/m), bending stiffness in N m^2, energy in J.

Functions
---------
* :func:`tip_spectrum` -- Welch power spectral density, dominant peak with sub-bin interpolation;
* :func:`envelope` -- amplitude envelope ``|hilbert(y - trend)|``, phase, instantaneous frequency;
* :func:`detect_beat` -- beat (amplitude modulation at the difference of two close frequencies)
  from the spectrum of the squared envelope; ``has_beat`` is False when the envelope is flat;
* :func:`curvature_distribution` -- curvature, moment and bending-energy density along the beam
  from a full coordinate vector (the element's own curvature measure, via ``BeamModel.sample``);
* :func:`curvature_from_nodes` -- the same from nodal positions only (snapshots of a run);
* :func:`concentration_metrics` -- how localised the deformation is (peak, peak/mean, energy
  fractions of the inner/outer halves, centroid, participation length, Gini index);
* :func:`summarize_run` -- all of the above for one ``run_simulate`` Dataset, as a JSON-ready dict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import interpolate, optimize, signal
from scipy.integrate import cumulative_trapezoid

from ancf_beam.io import json_ready

__all__ = [
    "BeatResult",
    "CurvatureProfile",
    "Envelope",
    "Spectrum",
    "concentration_metrics",
    "curvature_distribution",
    "curvature_from_nodes",
    "detect_beat",
    "envelope",
    "summarize_run",
    "tip_spectrum",
]

TWO_PI = 2.0 * math.pi


def _off_grid_end(d: np.ndarray, dt: float) -> bool:
    """Whether the last of the sample intervals ``d`` is shorter than the regular ``dt``."""
    return d.size > 1 and 0.0 < d[-1] < dt * (1.0 - 1e-6)


def _grid_part(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``t``, ``y`` without a final sample off the uniform grid (see :func:`_check_signal`)."""
    d = np.diff(t)
    if d.size > 1 and _off_grid_end(d, float(np.median(d))):
        return t[:-1], y[:-1]
    return t, y


def _check_signal(t, y, min_len: int = 8) -> tuple[np.ndarray, np.ndarray, float]:
    """Validate ``t`` (s) and ``y`` (any unit): 1-D, same length, finite, uniformly sampled.
    A last sample after a shorter interval (a run's final state at ``t_end``, off the sampling
    grid, see :class:`~ancf_beam.solvers.timeloop.StepPlan`) is left out.

    Returns ``(t, y, dt)``.
    """
    t = np.asarray(t, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if t.size != y.size:
        raise ValueError(f"t and y must have the same length, got {t.size} and {y.size}")
    if t.size < min_len:
        raise ValueError(f"signal too short: {t.size} samples (need at least {min_len})")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(y))):
        raise ValueError("t and y must be finite (the run may have become unstable)")
    d = np.diff(t)
    dt = float(np.median(d))
    if not dt > 0:
        raise ValueError("t must be strictly increasing")
    if t.size > min_len and _off_grid_end(d, dt):
        t, y, d = t[:-1], y[:-1], d[:-1]
    if np.max(np.abs(d - dt)) > 1e-6 * dt + 1e-12 * abs(t[-1]):
        raise ValueError(
            "t must be uniformly sampled for spectral analysis "
            f"(sample intervals range from {d.min():.6g} to {d.max():.6g} s); resample first"
        )
    return t, y, dt


# --------------------------------------------------------------------------------------------
# spectrum
# --------------------------------------------------------------------------------------------
@dataclass
class Spectrum:
    """One-sided power spectral density of a sampled signal and its dominant peak.

    ``psd`` is in (signal unit)^2/Hz. ``peak_hz``/``peak_omega`` are the dominant peak's
    frequency (Hz, rad/s) after sub-bin interpolation: a parabola through the logarithm of the
    PSD at the highest bin and its two neighbours (exact for a Gaussian-shaped peak, within a few
    thousandths of a bin for the Hann window). ``resolution_hz = fs / nperseg`` is the window's
    true resolution (the bins are ``fs / nfft`` apart when zero-padded).
    """

    f_hz: np.ndarray
    omega: np.ndarray
    psd: np.ndarray
    peak_hz: float
    peak_omega: float
    peak_psd: float
    resolution_hz: float
    nperseg: int
    nfft: int

    def to_dict(self) -> dict[str, Any]:
        """The scalar fields (no arrays), JSON-ready."""
        keys = ("peak_hz", "peak_omega", "peak_psd", "resolution_hz", "nperseg", "nfft")
        return {k: json_ready(getattr(self, k)) for k in keys}


def _parabolic_peak(f: np.ndarray, p: np.ndarray, i: int) -> tuple[float, float]:
    """Sub-bin peak location/height by a parabola through ``log p`` at bins i-1, i, i+1."""
    if i <= 0 or i >= p.size - 1 or np.any(p[i - 1 : i + 2] <= 0):
        return float(f[i]), float(p[i])
    a, b, c = np.log(p[i - 1 : i + 2])
    den = a - 2.0 * b + c
    if den >= 0:  # not a local maximum of log p (flat top): keep the bin
        return float(f[i]), float(p[i])
    delta = 0.5 * (a - c) / den  # in bins, |delta| <= 1/2 at a local maximum
    df = f[i + 1] - f[i]
    return float(f[i] + delta * df), float(np.exp(b - 0.25 * (a - c) * delta))


def tip_spectrum(
    t,
    y,
    nperseg: int | None = None,
    pad: int = 8,
    window: str = "hann",
    detrend: str = "constant",
    fmin_hz: float | None = None,
    fmax_hz: float | None = None,
) -> Spectrum:
    """Welch PSD of ``y(t)`` and its dominant peak (Hz and rad/s, sub-bin interpolated).

    Parameters
    ----------
    t : array
        Sample times (s), uniformly spaced.
    y : array
        Signal, e.g. the tip deflection ``tip_y`` (m).
    nperseg : int, optional
        Welch segment length (samples). Default: the whole record (one Hann-windowed
        periodogram, the best resolution for the short, clean records of a simulation); pass a
        smaller value to average segments of long noisy records.
    pad : int
        Zero-padding factor: ``nfft`` is the power of two >= ``pad * nperseg`` (finer bins
        for the interpolation; it does not improve the true resolution ``fs / nperseg``).
    window, detrend : str
        Passed to :func:`scipy.signal.welch` (``detrend='constant'`` removes the static offset
        of a gravity-loaded tip).
    fmin_hz, fmax_hz : float, optional
        Search range of the dominant peak (Hz). ``fmin_hz`` defaults to twice the resolution,
        i.e. just outside the window's main lobe around 0 Hz (residual trend / offset leakage).

    Returns
    -------
    Spectrum
        ``peak_hz`` is NaN when the signal has no power in the search range.
    """
    t, y, dt = _check_signal(t, y)
    fs = 1.0 / dt
    n = y.size
    nperseg = n if nperseg is None else int(min(max(nperseg, 8), n))
    nfft = int(2 ** math.ceil(math.log2(max(pad, 1) * nperseg)))
    f, p = signal.welch(
        y, fs=fs, window=window, nperseg=nperseg, nfft=nfft, detrend=detrend, scaling="density"
    )
    res = fs / nperseg
    lo = 2.0 * res if fmin_hz is None else float(fmin_hz)
    hi = f[-1] if fmax_hz is None else float(fmax_hz)
    mask = (f >= lo) & (f <= hi)
    peak_hz = peak_psd = float("nan")
    flat = np.ptp(y) <= 1e-13 * np.max(np.abs(y))  # constant up to round-off: no peak
    if not flat and np.any(mask) and np.max(p[mask]) > 0:
        idx = np.flatnonzero(mask)
        i = int(idx[np.argmax(p[idx])])
        peak_hz, peak_psd = _parabolic_peak(f, p, i)
    return Spectrum(
        f_hz=f,
        omega=TWO_PI * f,
        psd=p,
        peak_hz=peak_hz,
        peak_omega=TWO_PI * peak_hz,
        peak_psd=peak_psd,
        resolution_hz=res,
        nperseg=nperseg,
        nfft=nfft,
    )


# --------------------------------------------------------------------------------------------
# envelope and beats
# --------------------------------------------------------------------------------------------
@dataclass
class Envelope:
    """Analytic-signal description of ``y(t) = trend(t) + A(t) cos(phi(t))``.

    ``amplitude`` A (unit of y), ``phase`` phi (rad, unwrapped), ``inst_omega`` d(phi)/dt
    (rad/s, central differences), ``trend`` the removed mean or linear trend (unit of y).
    Near both ends of a finite record the Hilbert transform has edge effects over about one
    carrier period: discard those samples when judging the envelope.
    """

    t: np.ndarray
    amplitude: np.ndarray
    phase: np.ndarray
    inst_omega: np.ndarray
    trend: np.ndarray


def envelope(t, y, detrend: str = "constant") -> Envelope:
    """Amplitude envelope ``|hilbert(y - trend)|`` of ``y(t)`` (``t`` in s, uniformly sampled).

    ``detrend`` is ``'constant'`` (remove the mean: the static offset of a gravity-loaded tip)
    or ``'linear'``.
    """
    t, y, dt = _check_signal(t, y)
    if detrend not in ("constant", "linear"):
        raise ValueError(f"detrend must be 'constant' or 'linear', got {detrend!r}")
    yd = signal.detrend(y, type=detrend)
    z = signal.hilbert(yd)
    phase = np.unwrap(np.angle(z))
    return Envelope(
        t=t,
        amplitude=np.abs(z),
        phase=phase,
        inst_omega=np.gradient(phase, dt),
        trend=y - yd,
    )


@dataclass
class BeatResult:
    """Beat detection result (see :func:`detect_beat` for the definitions).

    ``beat_hz``/``beat_omega``: modulation frequency (Hz, rad/s), for two tones
    ``|w1 - w2| / (2 pi)``; ``beat_period_s`` its period; ``modulation_depth`` m of the squared
    envelope, for ``cos(w1 t) + a cos(w2 t)`` exactly ``2a / (1 + a^2)``; ``amplitude_ratio`` the
    two-tone ratio ``a = (1 - sqrt(1 - m^2)) / m`` (weaker / stronger tone) implied by m;
    ``carrier_hz`` the dominant frequency of the signal; ``envelope_mean`` the mean amplitude
    (unit of y); ``cycles`` the number of beat periods in the analysed window; ``r2`` the
    fraction of the squared envelope's variance (about its linear trend) explained by the beat
    sinusoid. The beat fields are NaN when no candidate was found; ``reason`` says why
    ``has_beat`` is what it is.
    """

    has_beat: bool
    beat_hz: float
    beat_omega: float
    beat_period_s: float
    modulation_depth: float
    amplitude_ratio: float
    carrier_hz: float
    envelope_mean: float
    cycles: float
    r2: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {k: json_ready(v) for k, v in asdict(self).items()}


def _project(tt: np.ndarray, z: np.ndarray, omega: float | None, beta: float):
    """Variable projection for ``z ~ exp(beta (t - tm)) (c0 + a cos(w t) + b sin(w t))``
    (the sinusoid omitted when ``omega`` is None): linear coefficients and residual vector."""
    tm = 0.5 * (tt[0] + tt[-1])
    g = np.exp(beta * (tt - tm))
    cols = [g]
    if omega is not None:
        cols += [g * np.cos(omega * tt), g * np.sin(omega * tt)]
    basis = np.column_stack(cols)
    c, *_ = np.linalg.lstsq(basis, z, rcond=None)
    return c, z - basis @ c


def _fit_modulated(tt, z, w0, dw, beta0):
    """Nonlinear least squares over (w, beta) with the linear coefficients projected out."""
    scale = 1.0 / max(tt[-1] - tt[0], 1e-300)
    res = optimize.least_squares(
        lambda p: _project(tt, z, p[0], p[1])[1],
        x0=[w0, beta0],
        bounds=([max(w0 - dw, 0.5 * w0), -np.inf], [w0 + dw, np.inf]),
        x_scale=[dw, scale],
        xtol=1e-12,
        ftol=1e-12,
    )
    w, beta = float(res.x[0]), float(res.x[1])
    c, r = _project(tt, z, w, beta)
    return w, beta, c, float(r @ r)


def detect_beat(
    t,
    y,
    min_depth: float = 0.05,
    min_cycles: float = 1.5,
    max_ratio: float = 0.5,
    min_r2: float = 0.5,
    trim_periods: float = 2.0,
) -> BeatResult:
    """Detect a beat -- amplitude modulation at the difference of two close frequencies.

    Method: the envelope ``A(t)`` of the detrended signal (:func:`envelope`) is cut by
    ``trim_periods`` carrier periods at each end (Hilbert edge effects; at most 20 % of the
    record per side). For two tones ``cos(w1 t) + a cos(w2 t)`` the *squared* envelope is exactly
    ``A^2 = 1 + a^2 + 2 a cos((w1 - w2) t)``, a pure sinusoid at the beat frequency, so the beat
    is sought as the dominant peak of the spectrum of ``A^2`` (linear trend removed, so a slowly
    decaying amplitude is not taken for a beat), refined by a least-squares sinusoid fit
    ``A^2 ~ c0 + c1 t + C cos(w_b t + phi)`` over ``w_b`` within one resolution bin.

    Definitions: modulation depth ``m = C / c0`` (beat amplitude of ``A^2`` over its mean, i.e.
    ``(A_max^2 - A_min^2) / (A_max^2 + A_min^2)``; ``2 a / (1 + a^2)`` for two tones).

    ``has_beat`` is True only if all hold: ``m >= min_depth``; the window spans at least
    ``min_cycles`` beat periods; ``f_b <= max_ratio * f_carrier`` (a beat is a *slow* modulation:
    envelope ripple at or near the carrier frequency is leakage of a residual offset, a
    harmonic or two well-separated modes, not a beat; ``max_ratio = 0.5`` means two tones within
    a ratio of 5/3); and the sinusoid explains at least ``min_r2`` of the envelope variance.
    A flat envelope (single tone) gives ``has_beat = False``.

    ``t`` in s (uniformly sampled), ``y`` in any unit (e.g. m for ``tip_y``).
    """
    t, y, dt = _check_signal(t, y, min_len=16)
    carrier = tip_spectrum(t, y).peak_hz
    env = envelope(t, y)
    amp_mean = float(np.mean(env.amplitude))

    def result(has, fb=math.nan, m=math.nan, cycles=math.nan, r2=math.nan, reason=""):
        return _beat_result(has, fb, m, cycles, r2, reason, carrier, amp_mean)

    if not math.isfinite(carrier) or amp_mean == 0.0:
        return result(False, reason="no oscillation (zero or constant signal)")
    duration = t[-1] - t[0]
    trim = min(trim_periods / carrier, 0.2 * duration)
    keep = (t >= t[0] + trim) & (t <= t[-1] - trim)
    tt = t[keep]
    a2 = env.amplitude[keep] ** 2
    if tt.size < 16:
        return result(False, reason="record too short after trimming the Hilbert edge effects")
    # exponential trend of the envelope (damping), removed before the spectral search
    tm = 0.5 * (tt[0] + tt[-1])
    log_a2 = np.log(np.maximum(a2, 1e-12 * a2.max()))
    beta0, l0 = np.polyfit(tt - tm, log_a2, 1)
    a2n = a2 / np.exp(l0 + beta0 * (tt - tm))
    es = tip_spectrum(tt, a2n, detrend="linear", fmax_hz=max_ratio * carrier)
    if not math.isfinite(es.peak_hz):
        return result(False, reason="flat envelope: no modulation below max_ratio * carrier")
    fb, depth, r2 = _beat_fit(tt, a2, es, beta0)
    cycles = float(fb * (tt[-1] - tt[0]))
    reasons = []
    if not depth >= min_depth:
        reasons.append(f"modulation depth {depth:.3g} < {min_depth}")
    if cycles < min_cycles:
        reasons.append(f"only {cycles:.2f} beat periods in the record (< {min_cycles})")
    if fb > max_ratio * carrier:
        reasons.append(f"modulation {fb:.4g} Hz not slow against carrier {carrier:.4g} Hz")
    if r2 < min_r2:
        reasons.append(f"sinusoid explains only {r2:.2f} of the envelope variance")
    has = not reasons
    reason = (
        f"beat at {fb:.4g} Hz, depth {depth:.3g}, {cycles:.1f} periods"
        if has
        else "; ".join(reasons)
    )
    return result(has, fb, depth, cycles, r2, reason)


def _beat_fit(tt, a2, es: Spectrum, beta0: float) -> tuple[float, float, float]:
    """Beat frequency (Hz), modulation depth and explained variance share of the squared
    envelope ``a2``: the modulated-exponential fit started within one bin of the envelope
    spectrum's peak, against the best pure exponential trend."""
    w0 = TWO_PI * es.peak_hz
    dw = TWO_PI * es.resolution_hz
    wb, beta, c, rss = _fit_modulated(tt, a2, w0, dw, beta0)
    depth = float(math.hypot(c[1], c[2]) / c[0]) if c[0] > 0 else math.nan
    fit0 = optimize.least_squares(lambda p: _project(tt, a2, None, p[0])[1], x0=[beta0])
    r0 = fit0.fun
    sst = float(r0 @ r0)
    r2 = 1.0 - rss / sst if sst > 0 else 0.0
    return wb / TWO_PI, depth, r2


def _beat_result(has, fb, m, cycles, r2, reason, carrier, amp_mean) -> BeatResult:
    """A :class:`BeatResult`; the two-tone amplitude ratio follows from the depth ``m``."""
    nan = math.nan
    a = nan
    if math.isfinite(m) and m > 0:
        mm = min(m, 1.0)
        a = (1.0 - math.sqrt(1.0 - mm * mm)) / mm
    return BeatResult(
        has_beat=bool(has),
        beat_hz=fb,
        beat_omega=TWO_PI * fb,
        beat_period_s=1.0 / fb if fb and math.isfinite(fb) and fb > 0 else nan,
        modulation_depth=m,
        amplitude_ratio=a,
        carrier_hz=carrier,
        envelope_mean=amp_mean,
        cycles=cycles,
        r2=r2,
        reason=reason,
    )


# --------------------------------------------------------------------------------------------
# curvature distribution and concentration
# --------------------------------------------------------------------------------------------
@dataclass
class CurvatureProfile:
    """Curvature along the beam at reference positions ``X`` (m, 0 = clamp).

    ``x``, ``y`` deformed positions (m); ``kappa`` curvature (1/m) of the deformed centre line;
    ``kappa_ref`` that of the stress-free reference (0 for a straight beam); ``dkappa = kappa -
    kappa_ref`` the curvature *change* that the bending energy sees; ``EI`` bending stiffness
    (N m^2, the continuous profile ``E(x) I(x)``); ``moment = EI dkappa`` (N m);
    ``energy_density = EI dkappa^2 / 2`` (J/m); ``bending_energy`` its integral (J, trapezoidal
    rule over the samples).
    """

    X: np.ndarray
    x: np.ndarray
    y: np.ndarray
    kappa: np.ndarray
    kappa_ref: np.ndarray
    EI: np.ndarray | None
    dkappa: np.ndarray = field(init=False)
    moment: np.ndarray | None = field(init=False)
    energy_density: np.ndarray | None = field(init=False)
    bending_energy: float = field(init=False)

    def __post_init__(self):
        self.dkappa = self.kappa - self.kappa_ref
        if self.EI is None:
            self.moment = self.energy_density = None
            self.bending_energy = float("nan")
        else:
            self.moment = self.EI * self.dkappa
            self.energy_density = 0.5 * self.EI * self.dkappa**2
            self.bending_energy = float(np.trapezoid(self.energy_density, self.X))


def curvature_distribution(model, q, per_element: int = 8) -> CurvatureProfile:
    """Curvature distribution of a full coordinate vector ``q`` of ``model`` (a BeamModel).

    Uses :meth:`BeamModel.sample` -- the element's own measure ``kappa = (r' x r'') / |r'|^2``
    (``r''_y`` for the linear strain model) -- at ``per_element`` equally spaced points of every
    element plus the tip. Curvature is discontinuous at the nodes of the C1 interpolation; each
    node is sampled from the element that starts there. ``EI`` is the continuous profile
    ``model.profile.EI(X)``; ``kappa_ref`` is the curvature of ``model.reference()``.
    """
    s = model.sample(np.asarray(q, dtype=float), per_element=per_element)
    s0 = model.sample(model.reference(), per_element=per_element)
    X = np.asarray(s["X"], dtype=float)
    return CurvatureProfile(
        X=X,
        x=np.asarray(s["x"], dtype=float),
        y=np.asarray(s["y"], dtype=float),
        kappa=np.asarray(s["kappa"], dtype=float),
        kappa_ref=np.asarray(s0["kappa"], dtype=float),
        EI=np.asarray(model.profile.EI(X), dtype=float),
    )


def curvature_from_nodes(
    X_nodes,
    x,
    y,
    n_points: int = 201,
    clamp_tangent: tuple[float, float] | None = (1.0, 0.0),
    EI=None,
    kappa_ref=None,
    free_tip: bool = True,
) -> CurvatureProfile:
    """Curvature estimated from nodal positions only (the ``node_x``/``node_y`` snapshots).

    The deformed centre line ``r(X)`` is interpolated by cubic splines in the reference
    position ``X`` (m) with the cantilever's end conditions: clamped tangent ``r'(0) =
    clamp_tangent`` (``None``: not-a-knot) and a moment-free tip ``r''(L) = 0`` (true for a
    free end in statics and dynamics alike; ``free_tip=False``: not-a-knot, for shapes with
    an end moment). Then
    ``kappa = (r' x r'') / |r'|^2`` (1/m) at ``n_points`` equally spaced positions. Accuracy is
    O(l_e^2) against the element's own curvature (use :func:`curvature_distribution` when the
    full coordinates are available). ``EI`` (N m^2) is an optional callable of X or array at
    the output points; ``kappa_ref`` likewise for the stress-free reference curvature (1/m).
    """
    X_nodes = np.asarray(X_nodes, dtype=float)
    pts = np.column_stack([np.asarray(x, float), np.asarray(y, float)])
    if pts.shape[0] != X_nodes.size or X_nodes.size < 3:
        raise ValueError("need at least 3 nodes with matching X_nodes, x, y")
    start = "not-a-knot" if clamp_tangent is None else (1, np.asarray(clamp_tangent, float))
    end = (2, np.zeros(2)) if free_tip else "not-a-knot"
    bc = (start, end)
    sp = interpolate.CubicSpline(X_nodes, pts, axis=0, bc_type=bc)
    X = np.linspace(X_nodes[0], X_nodes[-1], n_points)
    r = sp(X)
    rp = sp(X, 1)
    rpp = sp(X, 2)
    kappa = (rp[:, 0] * rpp[:, 1] - rp[:, 1] * rpp[:, 0]) / np.sum(rp * rp, axis=1)
    ei = None if EI is None else np.broadcast_to(EI(X) if callable(EI) else EI, X.shape)
    k0 = np.zeros_like(X)
    if kappa_ref is not None:
        k0 = np.broadcast_to(kappa_ref(X) if callable(kappa_ref) else kappa_ref, X.shape)
    return CurvatureProfile(
        X=X,
        x=r[:, 0],
        y=r[:, 1],
        kappa=kappa,
        kappa_ref=np.array(k0, dtype=float),
        EI=None if ei is None else np.array(ei, dtype=float),
    )


def concentration_metrics(X, kappa, EI=None) -> dict[str, float]:
    """Deformation-concentration metrics of a curvature profile ``kappa(X)``.

    ``X`` reference positions (m, increasing, clamp first), ``kappa`` curvature (change) (1/m),
    ``EI`` bending stiffness (N m^2; array or scalar; default 1 N m^2, so the "energy" is then
    ``int kappa^2 dx / 2``). Integrals use the trapezoidal rule over the samples; the beam
    length is ``L = X[-1] - X[0]``. Returned keys:

    * ``x_peak`` (m): position of the peak ``|kappa|``; ``kappa_peak`` (1/m, signed) the
      curvature there; ``abs_kappa_peak`` (1/m) its magnitude.
    * ``mean_abs_kappa`` (1/m): ``int |kappa| dx / L``.
    * ``peak_to_mean`` (-): ``abs_kappa_peak / mean_abs_kappa``; 1 for uniform bending, 3 for
      the self-weight profile ``kappa ~ (L - x)^2``, large for a localised kink.
    * ``bending_energy`` (J, or J per (N m^2) when ``EI`` is not given): ``int EI kappa^2 / 2``.
    * ``energy_fraction_inner`` / ``energy_fraction_outer`` (-): share of that energy in the
      clamp-side half ``X < X0 + L/2`` and the tip-side half (sum 1; 1/2 each for uniform
      bending, 31/32 and 1/32 for ``kappa ~ (L - x)^2`` with uniform EI).
    * ``kappa_centroid`` (m): ``int x |kappa| dx / int |kappa| dx`` (L/2 for uniform bending).
    * ``participation_length`` (m): ``(int |kappa| dx)^2 / int kappa^2 dx``; the length over
      which a curvature of the same total and energy would be uniform (= L for uniform bending,
      ~ the width of a localised zone); ``participation_ratio`` is it divided by L (0..1].
    * ``gini`` (-): Gini coefficient of ``|kappa|`` over the length, ``1 - 2 int_0^1 Lz(p) dp``
      with ``Lz`` the Lorenz curve of ``|kappa|`` sorted ascending and weighted by the
      trapezoidal length of each sample: 0 for uniform bending, ``p / (p + 2)`` for
      ``kappa ~ x^p`` (1/2 for the self-weight profile), -> 1 when all curvature sits at a point.

    Ratios are NaN when the curvature vanishes everywhere.
    """
    X = np.asarray(X, dtype=float).ravel()
    k = np.asarray(kappa, dtype=float).ravel()
    if X.size != k.size or X.size < 2:
        raise ValueError("X and kappa must be 1-D arrays of the same length >= 2")
    if np.any(np.diff(X) <= 0):
        raise ValueError("X must be strictly increasing")
    ei = np.ones_like(X) if EI is None else np.broadcast_to(np.asarray(EI, float), X.shape)
    length = X[-1] - X[0]
    ak = np.abs(k)
    dx = np.diff(X)
    w = np.zeros_like(X)  # trapezoidal weights
    w[:-1] += 0.5 * dx
    w[1:] += 0.5 * dx
    nan = float("nan")
    i = int(np.argmax(ak))
    int_abs = float(w @ ak)
    int_sq = float(w @ (k * k))
    e = 0.5 * ei * k * k
    energy = float(w @ e)
    mid = X[0] + 0.5 * length
    if energy > 0:
        cum = cumulative_trapezoid(e, X, initial=0.0)
        inner = float(np.interp(mid, X, cum) / cum[-1])
    else:
        inner = nan
    if int_abs > 0:
        order = np.argsort(ak, kind="stable")
        p = np.concatenate([[0.0], np.cumsum(w[order])]) / w.sum()
        lz = np.concatenate([[0.0], np.cumsum((w * ak)[order])]) / int_abs
        gini = float(1.0 - np.sum(np.diff(p) * (lz[1:] + lz[:-1])))
        centroid = float(w @ (X * ak) / int_abs)
        mean_abs = int_abs / length
        peak_to_mean = float(ak[i] / mean_abs)
        part_len = int_abs**2 / int_sq
    else:
        gini = centroid = peak_to_mean = part_len = nan
        mean_abs = 0.0
    return {
        "x_peak": float(X[i]),
        "kappa_peak": float(k[i]),
        "abs_kappa_peak": float(ak[i]),
        "mean_abs_kappa": float(mean_abs),
        "peak_to_mean": peak_to_mean,
        "bending_energy": energy,
        "energy_fraction_inner": inner,
        "energy_fraction_outer": 1.0 - inner if math.isfinite(inner) else nan,
        "kappa_centroid": centroid,
        "participation_length": float(part_len),
        "participation_ratio": float(part_len / length) if math.isfinite(part_len) else nan,
        "gini": gini,
    }


# --------------------------------------------------------------------------------------------
# one run
# --------------------------------------------------------------------------------------------
def _case_from_attrs(attrs: Mapping[str, Any]):
    """Best-effort rebuild of the CaseSpec recorded as ``param.*`` attributes (None if not)."""
    from ancf_beam.config import RULES, ConfigError, build_case, parse_yaml_text

    nested: dict[str, Any] = {}
    for key, value in attrs.items():
        if not key.startswith("param."):
            continue
        if isinstance(value, np.generic):
            value = value.item()
        desc = RULES.get(key[len("param.") :], ("", None))[0]
        if value == "none":
            value = None
        elif desc.startswith("true or false") and value in (0, 1):
            value = bool(value)  # NetCDF attributes store booleans as integers
        elif isinstance(value, str) and value[:1] == "[":
            try:  # tables are stored as their text (1e-09 in it is a number, as in a config)
                value = parse_yaml_text(value)
            except ConfigError:
                pass
        node = nested
        parts = key[len("param.") :].split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    if not nested:
        return None
    try:
        return build_case(nested, str(attrs.get("case", "default")))
    except Exception:  # noqa: BLE001 - attributes of another version: fall back gracefully
        return None


def summarize_run(ds, case=None, per_element: int = 8) -> dict[str, Any]:
    """Response summary of one :func:`ancf_beam.analyses.run_simulate` Dataset (JSON-ready).

    Uses ``tip_y`` over ``time`` and, when present, the ``node_x``/``node_y`` snapshots (with
    ``x_node``), or full coordinates ``q_snapshot`` (dims ``snapshot, dof``) if a run stored
    them. ``case`` (a CaseSpec) gives the bending stiffness for the energy metrics; by default
    it is rebuilt from the Dataset's ``param.*`` attributes when possible.

    Keys (SI units):

    * ``tip_y_mean``, ``tip_y_min``, ``tip_y_max`` (m); ``tip_amplitude`` (m, half the
      peak-to-peak);
    * ``peak_hz``, ``peak_omega`` (dominant tip frequency, Hz and rad/s, :func:`tip_spectrum`),
      ``spectral_resolution_hz``;
    * ``has_beat``, ``beat_hz``, ``beat_omega``, ``modulation_depth``, ``beat_cycles``,
      ``beat_reason`` (:func:`detect_beat`);
    * ``envelope_decay_rate`` (1/s): minus the slope of ``ln A(t)`` of the envelope (edges
      trimmed); > 0 for a decaying response, ~0 for an undamped one;
    * with snapshots: ``snapshot_time`` (s, the snapshot of largest tip displacement from the
      first one), ``curvature_source`` (``'element (q_snapshot)'`` or ``'spline through
      nodes'``, see :func:`curvature_from_nodes`) and the :func:`concentration_metrics` of the
      curvature change at that snapshot, prefixed ``curv_``.

    NaN values are returned as None.
    """
    t = np.asarray(ds["time"].values, dtype=float)
    y = np.asarray(ds["tip_y"].values, dtype=float)
    out = _tip_summary(t, y)
    if case is None:
        case = _case_from_attrs(ds.attrs)
    prof = _snapshot_profile(ds, case, per_element, out)
    if prof is not None:
        m = concentration_metrics(prof.X, prof.dkappa, prof.EI)
        out.update({f"curv_{k}": v for k, v in m.items()})
    return {k: json_ready(v) for k, v in out.items()}


def _tip_summary(t: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Tip statistics, dominant frequency, beat detection and envelope decay rate of a run
    (the extremes over every sample; the rest over the uniformly sampled part)."""
    out: dict[str, Any] = {
        "tip_y_mean": math.nan,
        "tip_y_min": float(np.min(y)),
        "tip_y_max": float(np.max(y)),
        "tip_amplitude": 0.5 * float(np.max(y) - np.min(y)),
    }
    t, y = _grid_part(t, y)
    out["tip_y_mean"] = float(np.mean(y))
    spec = tip_spectrum(t, y)
    out.update(
        peak_hz=spec.peak_hz, peak_omega=spec.peak_omega, spectral_resolution_hz=spec.resolution_hz
    )
    beat = detect_beat(t, y)
    out.update(
        has_beat=beat.has_beat,
        beat_hz=beat.beat_hz,
        beat_omega=beat.beat_omega,
        modulation_depth=beat.modulation_depth,
        beat_cycles=beat.cycles,
        beat_reason=beat.reason,
    )
    env = envelope(t, y)
    rate = float("nan")
    if math.isfinite(spec.peak_hz):
        trim = min(2.0 / spec.peak_hz, 0.2 * (t[-1] - t[0]))
        keep = (t >= t[0] + trim) & (t <= t[-1] - trim) & (env.amplitude > 0)
        if np.count_nonzero(keep) > 8:
            rate = -float(np.polyfit(t[keep], np.log(env.amplitude[keep]), 1)[0])
    out["envelope_decay_rate"] = rate
    return out


def _snapshot_profile(ds, case, per_element: int, out: dict[str, Any]):
    """Curvature distribution at the snapshot of largest tip displacement from the first one
    (element curvature from ``q_snapshot``, else a spline through the nodes), or None; records
    ``snapshot_time`` and ``curvature_source`` in ``out``."""
    if "q_snapshot" in ds and case is not None:
        from ancf_beam.beam.model import BeamModel

        qs = np.asarray(ds["q_snapshot"].values, dtype=float)
        model = BeamModel(case)
        tipy = qs[:, -3]
        j = int(np.argmax(np.abs(tipy - tipy[0])))
        prof = curvature_distribution(model, qs[j], per_element=per_element)
        out["snapshot_time"] = float(ds["t_snapshot"].values[j])
        out["curvature_source"] = "element (q_snapshot)"
        return prof
    if not ("node_x" in ds and "node_y" in ds):
        return None
    nx = np.asarray(ds["node_x"].values, dtype=float)
    ny = np.asarray(ds["node_y"].values, dtype=float)
    Xn = np.asarray(ds["x_node"].values, dtype=float)
    j = int(np.argmax(np.abs(ny[:, -1] - ny[0, -1])))
    ei = kref = None
    if case is not None:
        from ancf_beam.beam.defects import SectionProfile
        from ancf_beam.beam.model import BeamModel

        ei = SectionProfile(case).EI
        ref = BeamModel(case).reference()
        if np.any(ref[1::4] != 0.0):  # initially curved reference
            kref = curvature_from_nodes(Xn, ref[0::4], ref[1::4]).kappa
    prof = curvature_from_nodes(Xn, nx[j], ny[j], EI=ei, kappa_ref=kref)
    if "t_snapshot" in ds:
        out["snapshot_time"] = float(ds["t_snapshot"].values[j])
    out["curvature_source"] = "spline through nodes"
    return prof
