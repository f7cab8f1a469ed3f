"""Statistics over crank revolutions (ancf_beam.studies.revolutions) on synthetic signals whose
per-revolution peaks, quantiles and sections are known by construction (written out by hand
below, not computed by the code under test)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ancf_beam.studies.revolutions import (
    complete_revolutions,
    distribution,
    median_shift,
    per_revolution_max,
    poincare_section,
)

TWO_PI = 2.0 * math.pi
OMEGA = 150.0  # rad/s, the flagship's crank speed
N_SAMPLES_PER_REV = 4189  # about one sample per 1e-5 s at 150 rad/s


def _angle(n_rev: float, start: float = 0.0) -> np.ndarray:
    n = round(n_rev * N_SAMPLES_PER_REV)
    return start + np.arange(n + 1) * (TWO_PI / N_SAMPLES_PER_REV)


def _pulses(angle, heights, where):
    """A narrow Gaussian pulse of height ``heights[k]`` at angle ``2 pi k + where[k]`` per
    revolution k (width 0.01 rad: it decays to exp(-(1/0.01)^2 / 2) ~ 0 at 1 rad away)."""
    y = np.zeros_like(angle)
    for k, (h, w) in enumerate(zip(heights, where, strict=True)):
        y += h * np.exp(-0.5 * ((angle - (TWO_PI * k + w)) / 0.01) ** 2)
    return y


def test_complete_revolutions_counts_whole_turns_only():
    # 21 turns exactly (the last sample at 42 pi, up to round-off): 0..20
    assert list(complete_revolutions(_angle(21))) == list(range(21))
    # 20.5 turns: the half turn at the end is not complete
    assert list(complete_revolutions(_angle(20.5))) == list(range(20))
    # starting a quarter turn in: revolution 0 is incomplete
    assert list(complete_revolutions(_angle(3.0, start=TWO_PI / 4))) == [1, 2]
    # skip leaves out the first complete ones
    assert list(complete_revolutions(_angle(21), skip=1)) == list(range(1, 21))
    assert complete_revolutions(_angle(0.9)).size == 0
    with pytest.raises(ValueError, match="increase"):
        complete_revolutions(np.array([0.0, 1.0, 0.5]))


def test_per_revolution_max_finds_each_pulse():
    """One pulse per revolution at a phase away from the revolution's ends, heights 1..21 in a
    scrambled order: the peaks per revolution are those heights (the pulse centres sit on
    samples, so each peak is its height to round-off)."""
    angle = _angle(21)
    heights = [7, 3, 15, 1, 20, 11, 2, 18, 9, 4, 13, 6, 21, 16, 5, 10, 19, 8, 12, 17, 14]
    step = TWO_PI / N_SAMPLES_PER_REV
    where = [step * (1000 + 97 * k) for k in range(21)]  # on samples, inside each turn
    y = _pulses(angle, heights, where)
    revs, peaks = per_revolution_max(angle, y)
    assert list(revs) == list(range(21))
    assert peaks == pytest.approx(heights, rel=1e-12)
    revs, peaks = per_revolution_max(angle, y, skip=1)
    assert peaks == pytest.approx(heights[1:], rel=1e-12)


def test_distribution_of_known_values():
    """Values 1..20: median 10.5; the q-quantile with linear interpolation between order
    statistics is 1 + q (20 - 1): q10 2.9, q25 5.75, q75 15.25, q90 18.1."""
    x = np.arange(20, 0, -1, dtype=float)  # order must not matter
    d = distribution(x)
    assert d["median"] == d["q50"] == 10.5
    assert d["q10"] == pytest.approx(2.9, abs=1e-12)
    assert d["q25"] == pytest.approx(5.75, abs=1e-12)
    assert d["q75"] == pytest.approx(15.25, abs=1e-12)
    assert d["q90"] == pytest.approx(18.1, abs=1e-12)
    assert (d["min"], d["max"], d["n"]) == (1.0, 20.0, 20)


def test_poincare_section_of_a_linear_signal_is_exact():
    """A signal linear in the angle, y = 3 angle + 1, is interpolated exactly: at phase p of
    revolution k the section is 3 (2 pi k + p) + 1 (to round-off of the angle, ~1e-13)."""
    angle = _angle(21)
    phases = [0.0, math.pi / 2, math.pi, 1.5 * math.pi]
    revs, sec = poincare_section(angle, {"y": 3.0 * angle + 1.0}, phases, skip=1)
    assert list(revs) == list(range(1, 21))
    assert sec["y"].shape == (4, 20)
    for i, p in enumerate(phases):
        want = 3.0 * (TWO_PI * np.arange(1, 21) + p) + 1.0
        assert sec["y"][i] == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="phases"):
        poincare_section(angle, {"y": angle}, [TWO_PI])


def test_poincare_section_of_a_periodic_orbit_is_one_point():
    """A periodic orbit (period one revolution) gives the same point every revolution: cos and
    sin of the angle at phase p are cos p, sin p to the interpolation error of a chord,
    (step)^2 / 8 = 2.8e-7."""
    angle = _angle(21)
    revs, sec = poincare_section(angle, {"x": np.cos(angle), "y": np.sin(angle)}, [0.5, 2.0])
    step = TWO_PI / N_SAMPLES_PER_REV
    tol = step**2 / 8 + 1e-12
    assert np.abs(sec["x"][0] - math.cos(0.5)).max() < tol
    assert np.abs(sec["y"][1] - math.sin(2.0)).max() < tol


def test_median_shift_resolves_a_clear_shift_and_not_noise():
    """Peaks 100 +- 10 (uniform spread) against the same spread shifted by -30 (30 % of the
    median, three times the half-range): the 90 % interval excludes 0 and holds -30. The same
    values in another order: shift 0, and the interval holds 0."""
    ref = 100.0 + np.linspace(-10.0, 10.0, 20)
    low = ref - 30.0
    s = median_shift(ref, low[::-1])
    assert s["shift"] == pytest.approx(-30.0, abs=1e-12)
    assert s["rel"] == pytest.approx(-0.3, abs=1e-12)
    assert s["resolved"] == 1.0 and s["low"] <= -30.0 <= s["high"] < 0.0
    same = median_shift(ref, ref[::-1].copy())
    assert same["shift"] == 0.0
    assert same["resolved"] == 0.0 and same["low"] < 0.0 < same["high"]
    # reproducible: the same seed, the same interval
    assert median_shift(ref, low)["low"] == s["low"]
