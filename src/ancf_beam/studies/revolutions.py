"""Statistics over crank revolutions of a driven mechanism (the flagship study and the clearance
sweep, :mod:`ancf_beam.studies.mechanisms`): a run split by crank angle into revolutions, the
peak of a quantity per revolution, their distribution (median and quantiles), a Poincare
section (the state at fixed crank phases, once per revolution) and the shift of the median
between two variants with its bootstrap interval.

Revolution ``k`` holds the samples with ``2 pi k <= angle < 2 pi (k + 1)`` (``angle`` the crank
angle in rad, increasing); it is *complete* when the samples cover it to within half a sample
step at both ends. Only complete revolutions count, and the first ``skip`` of them (the start-up
transient) are left out.

The revolutions of one run are successive, not independent draws: the bootstrap interval of a
median shift treats them as exchangeable, so it measures the spread across revolutions, not a
sampling error in the strict sense.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = [
    "QUANTILES",
    "complete_revolutions",
    "distribution",
    "median_shift",
    "per_revolution_max",
    "poincare_section",
]

TWO_PI = 2.0 * math.pi
#: quantiles reported per distribution (10 %, quartiles, median, 90 %)
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def _half_step(angle: np.ndarray) -> float:
    """Half the median sample step of ``angle`` (rad): the slack of a revolution's ends."""
    return 0.5 * float(np.median(np.diff(angle))) if angle.size > 1 else 0.0


def complete_revolutions(angle, skip: int = 0) -> np.ndarray:
    """Numbers ``k`` of the complete revolutions of the increasing crank angle ``angle`` (rad),
    the first ``skip`` complete ones left out."""
    angle = np.asarray(angle, float)
    if angle.ndim != 1 or angle.size < 2:
        raise ValueError("angle must be a 1-D array of at least two samples")
    if np.any(np.diff(angle) <= 0.0):
        raise ValueError("the crank angle must increase from sample to sample")
    if skip < 0:
        raise ValueError(f"skip must be >= 0, got {skip}")
    h = _half_step(angle)
    first = math.ceil((angle[0] - h) / TWO_PI)
    last = math.floor((angle[-1] + h) / TWO_PI) - 1
    return np.arange(first + skip, last + 1) if last >= first + skip else np.arange(0)


def per_revolution_max(angle, y, skip: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(revolutions, peaks)``: the largest sample of ``y`` in each complete revolution of
    ``angle`` (:func:`complete_revolutions`; for a peak magnitude pass ``|y|``)."""
    angle = np.asarray(angle, float)
    y = np.asarray(y, float)
    if y.shape != angle.shape:
        raise ValueError(f"y has shape {y.shape}, angle {angle.shape}")
    revs = complete_revolutions(angle, skip)
    k = np.floor(angle / TWO_PI).astype(np.int64)
    peaks = np.array([np.max(y[k == r]) for r in revs], float)
    return revs, peaks


def poincare_section(
    angle, series: Mapping[str, np.ndarray], phases: Sequence[float], skip: int = 0
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(revolutions, sections)``: each of ``series`` at the crank angles ``2 pi k + phase``
    (``phases`` in rad, ``0 <= phase < 2 pi``) for every complete revolution ``k``
    (:func:`complete_revolutions`), linearly interpolated in the angle between the two samples
    around it; ``sections[name]`` has shape ``(len(phases), len(revolutions))``."""
    angle = np.asarray(angle, float)
    ph = np.asarray(phases, float)
    if ph.ndim != 1 or ph.size == 0 or np.any(ph < 0.0) or np.any(ph >= TWO_PI):
        raise ValueError(f"phases must be a non-empty list in [0, 2 pi), got {list(ph)}")
    revs = complete_revolutions(angle, skip)
    targets = TWO_PI * revs[None, :] + ph[:, None]
    out = {}
    for name, y in series.items():
        y = np.asarray(y, float)
        if y.shape != angle.shape:
            raise ValueError(f"series '{name}' has shape {y.shape}, angle {angle.shape}")
        out[name] = np.interp(targets, angle, y)
    return revs, out


def distribution(x) -> dict[str, float]:
    """Median, :data:`QUANTILES` (keys ``q10``, ``q25``, ``q50``, ``q75``, ``q90``; linear
    interpolation between order statistics), minimum, maximum and count of the values ``x``."""
    x = np.asarray(x, float)
    if x.size == 0:
        raise ValueError("no values")
    q = np.quantile(x, QUANTILES)
    out = {f"q{round(100 * p):d}": float(v) for p, v in zip(QUANTILES, q, strict=True)}
    out.update(median=float(np.median(x)), min=float(x.min()), max=float(x.max()), n=x.size)
    return out


def median_shift(
    ref, x, confidence: float = 0.9, n_resamples: int = 2000, seed: int = 0
) -> dict[str, float]:
    """The shift ``median(x) - median(ref)`` and its percentile bootstrap interval at
    ``confidence`` (:func:`scipy.stats.bootstrap`, ``ref`` and ``x`` resampled independently,
    ``n_resamples`` times with the seed ``seed``): keys ``shift``, ``low``, ``high``, the same
    relative to ``median(ref)`` (``rel``, ``rel_low``, ``rel_high``) and ``resolved`` (1.0 when
    the interval excludes 0, else 0.0)."""
    from scipy.stats import bootstrap

    ref = np.asarray(ref, float)
    x = np.asarray(x, float)
    if ref.size < 2 or x.size < 2:
        raise ValueError("median_shift needs at least two values in each sample")

    def stat(a, b, axis=-1):
        return np.median(b, axis=axis) - np.median(a, axis=axis)

    res = bootstrap(
        (ref, x),
        stat,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    shift = float(np.median(x) - np.median(ref))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    m = float(np.median(ref))
    return {
        "shift": shift,
        "low": lo,
        "high": hi,
        "rel": shift / m,
        "rel_low": lo / m,
        "rel_high": hi / m,
        "resolved": float(lo > 0.0 or hi < 0.0),
    }
