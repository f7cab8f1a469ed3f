"""Scalar searches on an integrator's dense output between two accepted steps: the root of a
smooth function (a contact gap), the end of a positive quantity (the normal force, which may
end at a kink or a corner) and the largest value of a quantity (force, penetration).

Every search works on a bracket inside one step ``[t0, t1]`` and terminates by construction:

* the time tolerance is :func:`time_tolerance`: ``TIME_RTOL`` of the step plus a few units of
  round-off of the time itself (``ROUNDOFF_ULPS eps max(|t0|, |t1|)``), so no search asks for
  more than the floating-point time axis can resolve;
* :func:`bracket_root` (Illinois, a regula falsi that halves the stale end's value) bisects
  whenever an interpolation step fails to halve the bracket, so the bracket at least halves
  every second iteration: about ``2 log2(step / tolerance)`` evaluations at most (about 100 for
  a step of 1 s at t = 1 s), and an iteration cap ``MAX_ITER`` on top;
* :func:`last_positive` bisects on the sign alone (the function may jump), at most
  ``log2(step / tolerance) + 1`` evaluations;
* :func:`bracket_max` refines the largest of a set of samples by a bounded Brent search
  (:func:`scipy.optimize.minimize_scalar`, golden section with parabolic steps) between its
  neighbours, to ``TIME_RTOL`` of that interval.

None of them raises when round-off is reached: they return their best bracket. The dense
output of the integrators used here (scipy's ``DenseOutput``) accepts an array of times.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = [
    "MAX_ITER",
    "ROUNDOFF_ULPS",
    "TIME_RTOL",
    "bracket_max",
    "bracket_root",
    "last_positive",
    "time_tolerance",
]

#: relative tolerance of a located time, as a share of the step it lies in
TIME_RTOL = 1e-12
#: and never below this many units of round-off of the time itself
ROUNDOFF_ULPS = 4.0
#: iteration cap of every search (never reached: the bracket halves at least every second step)
MAX_ITER = 200
_EPS = float(np.finfo(float).eps)


def time_tolerance(t0: float, t1: float) -> float:
    """Width (s) at which a bracket inside the step ``[t0, t1]`` counts as located:
    ``TIME_RTOL (t1 - t0) + ROUNDOFF_ULPS eps max(|t0|, |t1|)`` (at least the smallest
    positive spacing of doubles)."""
    return max(TIME_RTOL * abs(t1 - t0) + ROUNDOFF_ULPS * _EPS * max(abs(t0), abs(t1)), 5e-324)


def bracket_root(
    f: Callable[[float], float],
    a: float,
    b: float,
    fa: float | None = None,
    fb: float | None = None,
    xtol: float | None = None,
) -> tuple[float, float, float, float, int]:
    """Bracket of a sign change of ``f`` in ``[a, b]`` (``f(a)`` and ``f(b)`` of opposite
    signs, or one of them zero) narrowed to ``xtol`` (default :func:`time_tolerance`) by the
    Illinois method with a bisection safeguard. Returns ``(lo, hi, f(lo), f(hi), evaluations)``
    with ``f(lo)`` of the sign of ``f(a)``; an exact zero ends the search with ``lo = hi``.
    Never raises for a bracket at round-off; raises ``ValueError`` when ``[a, b]`` is not a
    bracket."""
    fa = f(a) if fa is None else fa
    fb = f(b) if fb is None else fb
    n_eval = 0
    if fa == 0.0:
        return a, a, fa, fa, n_eval
    if fb == 0.0:
        return b, b, fb, fb, n_eval
    if (fa > 0.0) == (fb > 0.0) or not (math.isfinite(fa) and math.isfinite(fb)):
        raise ValueError(
            f"bracket_root: f({a!r}) = {fa!r} and f({b!r}) = {fb!r} do not bracket a sign change"
        )
    tol = time_tolerance(a, b) if xtol is None else xtol
    lo, hi, flo, fhi = a, b, fa, fb
    wlo, whi = flo, fhi  # Illinois weights (the value at a stale end is halved)
    side = 0
    w_ref = abs(hi - lo)  # width two iterations ago
    for k in range(1, MAX_ITER + 1):
        width = abs(hi - lo)
        if width <= tol:
            break
        x = lo + (hi - lo) * wlo / (wlo - whi)  # regula falsi on the weighted values
        halve = k % 2 == 0 and width > 0.5 * w_ref  # two steps did not halve the bracket
        if k % 2 == 0:
            w_ref = width
        if halve or not (min(lo, hi) < x < max(lo, hi)):
            x = 0.5 * (lo + hi)
            if x == lo or x == hi:  # the bracket is two adjacent doubles
                break
        fx = f(x)
        n_eval += 1
        if fx == 0.0:
            return x, x, fx, fx, n_eval
        if (fx > 0.0) == (flo > 0.0):
            lo, flo, wlo = x, fx, fx
            if side == -1:
                whi *= 0.5
            side = -1
        else:
            hi, fhi, whi = x, fx, fx
            if side == 1:
                wlo *= 0.5
            side = 1
    return lo, hi, flo, fhi, n_eval


def last_positive(
    positive: Callable[[float], bool], a: float, b: float, xtol: float | None = None
) -> tuple[float, float, int]:
    """For ``positive(a)`` true and ``positive(b)`` false: a bracket ``(lo, hi)`` with
    ``positive(lo)`` and not ``positive(hi)``, ``hi - lo <= xtol`` (default
    :func:`time_tolerance`), by bisection on the predicate alone (the quantity may end at a
    corner or jump). Returns ``(lo, hi, evaluations)``."""
    tol = time_tolerance(a, b) if xtol is None else xtol
    lo, hi = a, b
    n_eval = 0
    for _ in range(MAX_ITER):
        if hi - lo <= tol:
            break
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        n_eval += 1
        if positive(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi, n_eval


def bracket_max(
    f: Callable[[float], float], ts: np.ndarray, fs: np.ndarray, xrtol: float = TIME_RTOL
) -> tuple[float, float]:
    """Largest value of ``f`` near the largest of its samples ``fs`` at the increasing times
    ``ts``: :func:`maximise` between the neighbours of the best sample. Returns ``(t, f(t))``;
    a best sample at either end is returned as it is (the caller brackets it with the samples
    of the neighbouring step)."""
    j = int(np.argmax(fs))
    if j == 0 or j == len(fs) - 1:
        return float(ts[j]), float(fs[j])
    return maximise(f, float(ts[j - 1]), float(ts[j + 1]), float(ts[j]), float(fs[j]), xrtol)


def maximise(
    f: Callable[[float], float],
    a: float,
    b: float,
    t_best: float,
    f_best: float,
    xrtol: float = TIME_RTOL,
) -> tuple[float, float]:
    """Bounded Brent search (:func:`scipy.optimize.minimize_scalar`, golden section with
    parabolic steps; at most ``MAX_ITER`` evaluations) for the largest value of ``f`` in
    ``[a, b]``, which brackets a maximum (``f(t_best) = f_best`` with ``a < t_best < b`` at
    least as large as both ends), to ``xrtol (b - a)`` plus the search's own ``sqrt(eps) |t|``
    (the value is flat there: its error is ``f'' dt^2 / 2``). Never returns less than
    ``f_best``."""
    from scipy.optimize import minimize_scalar

    xatol = max(xrtol * (b - a), ROUNDOFF_ULPS * _EPS * max(abs(a), abs(b)))
    res = minimize_scalar(
        lambda t: -f(t),
        bounds=(a, b),
        method="bounded",
        options={"xatol": xatol, "maxiter": MAX_ITER},
    )
    if np.isfinite(res.fun) and -res.fun > f_best:
        return float(res.x), float(-res.fun)
    return t_best, f_best
