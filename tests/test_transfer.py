"""Tests of the independent linear Euler-Bernoulli references (ancf_beam.references.transfer).

Every check compares against a reference computed *independently* here: textbook constants,
closed forms, a double quadrature written in the reversed integration order, or a dense
cubic-Hermite (Rayleigh-Ritz) finite-element model of the graded beam.

Seed case (SI units): L = 1 m, b = h = 0.02 m, rho = 7850 kg/m^3, E0 = 2.07e11 Pa, g = 9.81 m/s^2,
so EI0 = E0 b h^3 / 12 = 2760 N m^2, q0 = rho g b h = 30.8034 N/m, rhoA0 = rho b h = 3.14 kg/m.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
from scipy import integrate

from ancf_beam.references.transfer import (
    cantilever_beta_l,
    exact_graded_static,
    stepped_convergence,
    stepped_frequencies,
    stepped_static,
    uniform_frequencies,
    uniform_static_tip,
)

L = 1.0
B = H = 0.02
RHO = 7850.0
E0 = 2.07e11
G = 9.81
EI0 = E0 * B * H**3 / 12.0  # 2760 N m^2
Q0 = RHO * G * B * H  # 30.8034 N/m
RHOA0 = RHO * B * H  # 3.14 kg/m

GRADED_CASES = [(0.3, 1), (0.6, 1), (0.6, 2), (0.5, 2)]
STATIC_NS = [5, 10, 20, 40, 80]
FREQ_NS = [10, 20, 40, 80, 160]


def const(value: float):
    """Constant property profile."""
    return lambda x: np.full_like(np.asarray(x, dtype=float), value)


def graded(value: float, lam: float, n: float):
    """Profile ``value * (1 - lam (x/L)^n)``."""
    return lambda x: value * (1.0 - lam * (np.asarray(x, dtype=float) / L) ** n)


def quad_tip(EI, q) -> tuple[float, float]:
    """Independent tip deflection (m) and slope (rad) by double quadrature, reversed order.

    Exchanging the order of ``w(L) = -int_0^L (L-t)/EI(t) int_t^L q(s)(s-t) ds dt`` gives
    ``w(L) = -int_0^L q(s) int_0^s (s-t)(L-t)/EI(t) dt ds`` (and the same without ``(L-t)`` for
    the slope), which shares no code path with :func:`exact_graded_static`.
    """
    opts = dict(epsabs=0.0, epsrel=1e-13, limit=200)

    def ei(t):
        return float(EI(np.array([t]))[0])

    def qq(s):
        return float(q(np.array([s]))[0])

    def inner_w(s):
        return integrate.quad(lambda t: (s - t) * (L - t) / ei(t), 0.0, s, **opts)[0]

    def inner_slope(s):
        return integrate.quad(lambda t: (s - t) / ei(t), 0.0, s, **opts)[0]

    w = -integrate.quad(lambda s: qq(s) * inner_w(s), 0.0, L, **opts)[0]
    slope = -integrate.quad(lambda s: qq(s) * inner_slope(s), 0.0, L, **opts)[0]
    return w, slope


def linear_ei_closed_form(lam: float) -> tuple[float, float]:
    """Closed-form tip values for EI = EI0 (1 - lam x/L) and uniform q = Q0.

    With ``u = 1 - lam x/L`` and ``c = 1 - lam``:
    ``w(L) = -q L^4 / (2 EI0 lam^4) * [(1-c^3)/3 - 3c(1-c^2)/2 + 3c^2(1-c) + c^3 ln c]``,
    ``w'(L) = -q L^3 / (2 EI0 lam^3) * [(1-c^2)/2 - 2c(1-c) - c^2 ln c]``.
    """
    c = 1.0 - lam
    iw = (1 - c**3) / 3 - 1.5 * c * (1 - c**2) + 3 * c**2 * (1 - c) + c**3 * math.log(c)
    islope = 0.5 * (1 - c**2) - 2 * c * (1 - c) - c**2 * math.log(c)
    return -Q0 * L**4 / (2 * EI0 * lam**4) * iw, -Q0 * L**3 / (2 * EI0 * lam**3) * islope


def hermite_fe_frequencies(EI, rhoA, n_el: int = 200, k: int = 3) -> np.ndarray:
    """Rayleigh-Ritz reference: cubic-Hermite FE of the graded clamped-free beam (rad/s).

    ``n_el`` equal elements, 8-point Gauss-Legendre quadrature of the exact graded ``EI(x)``
    and ``rhoA(x)`` in every element, consistent mass, clamp DOFs removed. The rotational DOFs
    are scaled by the element length (``le * w'``) and the pencil is solved as
    ``M x = (1/omega^2) K x`` so that the *lowest* frequencies are the best-conditioned ones
    (round-off ~1e-8 relative instead of ~1e-5 for ``K x = omega^2 M x`` at 200 elements).
    """
    le = L / n_el
    xi, wq = np.polynomial.legendre.leggauss(8)
    u, wq = 0.5 * (1 + xi), 0.5 * wq
    N = np.stack([1 - 3 * u**2 + 2 * u**3, u - 2 * u**2 + u**3, 3 * u**2 - 2 * u**3, u**3 - u**2])
    B2 = np.stack([-6 + 12 * u, -4 + 6 * u, 6 - 12 * u, -2 + 6 * u]) / le**2
    ndof = 2 * (n_el + 1)
    K = np.zeros((ndof, ndof))
    M = np.zeros((ndof, ndof))
    for e in range(n_el):
        x = e * le + le * u
        sl = slice(2 * e, 2 * e + 4)
        K[sl, sl] += le * np.einsum("g,ig,jg->ij", wq * EI(x), B2, B2)
        M[sl, sl] += le * np.einsum("g,ig,jg->ij", wq * rhoA(x), N, N)
    n = ndof - 2
    mu = scipy.linalg.eigh(M[2:, 2:], K[2:, 2:], eigvals_only=True, subset_by_index=[n - k, n - 1])
    return np.sqrt(1.0 / mu[::-1])


# ------------------------------------------------------------------------------------------------
# uniform beam
# ------------------------------------------------------------------------------------------------
def test_beta_l_textbook_values():
    """Classical cantilever roots (e.g. Blevins), tolerance 1e-6 absolute."""
    roots = cantilever_beta_l(5)
    np.testing.assert_allclose(roots[:3], [1.875104, 4.694091, 7.854757], atol=1e-6)
    assert np.all(np.abs(1.0 + np.cos(roots) * np.cosh(roots)) < 1e-9 * np.cosh(roots))
    # asymptotic (2i - 1) pi / 2 for higher modes
    assert abs(roots[4] - 9 * math.pi / 2) < 1e-5


def test_uniform_seed_static():
    """Uniform seed beam: tip = -q L^4/(8 EI) = -1.3951e-3 m, slope -q L^3/(6 EI); measured
    4e-15, tolerance 1e-12."""
    assert EI0 == pytest.approx(2760.0, rel=1e-12)
    assert Q0 == pytest.approx(30.8034, rel=1e-12)
    w_ref, s_ref = uniform_static_tip(Q0, L, EI0)
    assert w_ref == pytest.approx(-Q0 * L**4 / (8 * EI0), rel=1e-15)
    assert w_ref == pytest.approx(-1.3951e-3, rel=1e-4)
    assert s_ref == pytest.approx(-Q0 * L**3 / (6 * EI0), rel=1e-15)

    ex = exact_graded_static(L, const(EI0), const(Q0))
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=1e-12)
    assert ex["tip_slope"] == pytest.approx(s_ref, rel=1e-12)
    x = ex["x"]
    w_curve = -Q0 * x**2 * (6 * L**2 - 4 * L * x + x**2) / (24 * EI0)
    np.testing.assert_allclose(ex["w"], w_curve, rtol=0, atol=1e-12 * abs(w_ref))

    for n in (1, 3, 10, 37):
        st = stepped_static(L, const(EI0), const(Q0), n)
        assert st["tip_deflection"] == pytest.approx(w_ref, rel=1e-12)
        assert st["tip_slope"] == pytest.approx(s_ref, rel=1e-12)
        w_nodes = -Q0 * st["x_nodes"] ** 2 * (6 * L**2 - 4 * L * st["x_nodes"] + st["x_nodes"] ** 2)
        np.testing.assert_allclose(st["w_nodes"], w_nodes / (24 * EI0), atol=1e-12 * abs(w_ref))
        assert st["clamp_moment"] == pytest.approx(-Q0 * L**2 / 2, rel=1e-12)
        assert st["clamp_shear"] == pytest.approx(Q0 * L, rel=1e-12)


def test_scalar_property_callables_are_broadcast():
    """A callable returning a scalar is accepted (same result as an array profile, 1e-14 rel)."""
    a = stepped_static(L, lambda x: EI0, lambda x: Q0, 4)["tip_deflection"]
    b = stepped_static(L, const(EI0), const(Q0), 4)["tip_deflection"]
    assert a == pytest.approx(b, rel=1e-14)


def test_uniform_seed_frequencies():
    """Stepped uniform beam = analytic (beta L)^2 sqrt(EI/rhoA)/L^2 to 1e-12 rel (any N;
    measured 4.1e-15)."""
    ref = uniform_frequencies(L, EI0, RHOA0, 5)
    assert ref[0] == pytest.approx(104.24, abs=0.01)
    for n in (1, 7, 50, 200):
        om = stepped_frequencies(L, const(EI0), const(RHOA0), n, 5)
        np.testing.assert_allclose(om, ref, rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# graded statics
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("lam", "n"), GRADED_CASES)
def test_graded_static_exact_vs_independent(lam, n):
    """exact_graded_static tip vs reversed-order double quad (and closed form for n=1);
    measured 5.9e-14, tolerance 1e-12."""
    EI = graded(EI0, lam, n)
    ex = exact_graded_static(L, EI, const(Q0))
    w_ref, s_ref = quad_tip(EI, const(Q0))
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=1e-12)
    assert ex["tip_slope"] == pytest.approx(s_ref, rel=1e-12)
    if n == 1:
        w_cf, s_cf = linear_ei_closed_form(lam)
        assert ex["tip_deflection"] == pytest.approx(w_cf, rel=1e-12)
        assert ex["tip_slope"] == pytest.approx(s_cf, rel=1e-12)


def _observed_order(ns, errs) -> float:
    return -np.polyfit(np.log(ns), np.log(errs), 1)[0]


@pytest.mark.parametrize(("lam", "n"), GRADED_CASES)
def test_stepped_static_converges_second_order(lam, n):
    """Stepped-beam tip error vs exact: strictly decreasing, order in [1.8, 2.2], N=80 < 1e-3."""
    EI = graded(EI0, lam, n)
    exact = exact_graded_static(L, EI, const(Q0))["tip_deflection"]
    conv = stepped_convergence(L, EI, const(Q0), STATIC_NS)
    assert [c[0] for c in conv] == STATIC_NS
    errs = np.array([abs(w / exact - 1.0) for _, w in conv])
    assert np.all(np.diff(errs) < 0)
    assert 1.9 <= _observed_order(STATIC_NS, errs) <= 2.1  # measured 1.99-2.014
    assert errs[-1] < 3.4e-4  # N = 80: measured 1.0-3.4e-5


def test_graded_static_weak_singularity():
    """EI = EI0 (1 - 0.5 sqrt(x/L)) (infinite EI' at the clamp): exact vs double quad, 1e-12."""
    EI = graded(EI0, 0.5, 0.5)
    ex = exact_graded_static(L, EI, const(Q0))
    w_ref, s_ref = quad_tip(EI, const(Q0))
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=1e-12)
    assert ex["tip_slope"] == pytest.approx(s_ref, rel=1e-12)
    # the stepped beam still converges, at a reduced rate (~1.6 for this profile)
    errs = [
        abs(stepped_static(L, EI, const(Q0), m)["tip_deflection"] / w_ref - 1) for m in (20, 80)
    ]
    assert errs[1] < errs[0] / 4.0


def test_load_graded_static():
    """q = q0 (1 + x/L), uniform EI: closed form (1/8 + 11/120) q0 L^4/EI, (1/6 + 1/8) q0 L^3/EI.

    Tolerance 1e-12 for the quadrature solution; stepped beam of order 2 (in [1.9, 2.1]),
    also for the combined graded EI and graded q case.
    """
    q = graded(Q0, -1.0, 1)
    w_ref = -(1 / 8 + 11 / 120) * Q0 * L**4 / EI0
    s_ref = -(1 / 6 + 1 / 8) * Q0 * L**3 / EI0
    ex = exact_graded_static(L, const(EI0), q)
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=1e-12)
    assert ex["tip_slope"] == pytest.approx(s_ref, rel=1e-12)
    errs = [
        abs(stepped_static(L, const(EI0), q, m)["tip_deflection"] / w_ref - 1) for m in STATIC_NS
    ]
    assert np.all(np.diff(errs) < 0)
    assert 1.9 <= _observed_order(STATIC_NS, errs) <= 2.1

    EI = graded(EI0, 0.6, 2)
    ex = exact_graded_static(L, EI, q)
    w_ref, _ = quad_tip(EI, q)
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=1e-12)
    errs = [abs(w / w_ref - 1) for _, w in stepped_convergence(L, EI, q, STATIC_NS)]
    assert np.all(np.diff(errs) < 0)
    assert 1.9 <= _observed_order(STATIC_NS, errs) <= 2.1
    assert errs[-1] < 1e-4  # measured 1.0e-5


# ------------------------------------------------------------------------------------------------
# graded frequencies
# ------------------------------------------------------------------------------------------------
FREQ_CASES = [
    ("E graded 0.3, n=1", graded(EI0, 0.3, 1), const(RHOA0)),
    ("E graded 0.6, n=1", graded(EI0, 0.6, 1), const(RHOA0)),
    ("E graded 0.6, n=2", graded(EI0, 0.6, 2), const(RHOA0)),
    ("E graded 0.5, n=2", graded(EI0, 0.5, 2), const(RHOA0)),
    ("rho graded 0.4, n=1", const(EI0), graded(RHOA0, 0.4, 1)),
    ("E 0.6 n=2 + rho -0.5 n=1", graded(EI0, 0.6, 2), graded(RHOA0, -0.5, 1)),
]


@pytest.mark.parametrize(("name", "EI", "rhoA"), FREQ_CASES, ids=[c[0] for c in FREQ_CASES])
def test_stepped_frequencies_converge_to_fe(name, EI, rhoA):
    """Stepped frequencies for N = 10..160: successive differences shrink ~4x (ratio in [3, 5]);
    N=160 vs 200-element Hermite FE within 5e-5 rel (first 3 modes; measured 4.9e-6); the
    Richardson extrapolation (4 w_160 - w_80)/3 within 1.2e-7 rel (measured 1.2e-8).
    """
    om = np.array([stepped_frequencies(L, EI, rhoA, m, 5) for m in FREQ_NS])
    assert np.all(np.diff(om, axis=1) > 0)
    diffs = np.abs(np.diff(om, axis=0))
    ratios = diffs[:-1] / diffs[1:]
    assert np.all((ratios[:, :3] > 3.0) & (ratios[:, :3] < 5.0)), ratios
    assert np.all((ratios[-1] > 3.5) & (ratios[-1] < 4.5)), ratios

    ref = hermite_fe_frequencies(EI, rhoA, n_el=200, k=3)
    np.testing.assert_allclose(om[-1, :3], ref, rtol=5e-5)  # N = 160: measured 4.9e-6
    richardson = (4.0 * om[-1, :3] - om[-2, :3]) / 3.0
    np.testing.assert_allclose(richardson, ref, rtol=1.2e-7)  # measured 1.2e-8


def test_stepped_frequencies_many_segments_strong_grading():
    """k = 5 modes for N = 200 with a 10:1 stiffness and 3:1 mass grading; FE check (1e-4 rel)."""
    EI = graded(EI0, 0.9, 1)
    rhoA = graded(RHOA0, 0.66, 1)
    om = stepped_frequencies(L, EI, rhoA, 200, 5)
    assert om.shape == (5,)
    assert np.all(np.diff(om) > 0)
    np.testing.assert_allclose(om[:3], hermite_fe_frequencies(EI, rhoA, n_el=200, k=3), rtol=1e-4)
