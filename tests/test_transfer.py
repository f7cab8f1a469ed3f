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
from ancf_beam.studies.bounds import EPS, QUADRATURE_REL, stepped_roundoff

L = 1.0
B = H = 0.02
RHO = 7850.0
E0 = 2.07e11
G = 9.81
EI0 = E0 * B * H**3 / 12.0  # 2760 N m^2
Q0 = RHO * G * B * H  # 30.8034 N/m
RHOA0 = RHO * B * H  # 3.14 kg/m

GRADED_CASES = [(0.3, 1), (0.6, 1), (0.6, 2), (0.5, 2)]
#: Factor of safety on the error estimates (the validation default)
FS = 2.0
#: the exact quadrature's accuracy (QUADRATURE_REL, its end panels' adaptive quadrature at
#: epsrel 1e-12) plus the independent double quadrature's (epsrel 1e-13 below)
QUAD = QUADRATURE_REL + 1e-13
#: the stepped frequencies' root finding (brentq, xtol 1e-14 of the bracket)
ROOT = 1e-14
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
    """Classical cantilever roots (e.g. Blevins) to the 6 decimals they are written with
    (half a unit of the last digit: 5e-7); the residual of 1 + cos b cosh b within the
    round-off of evaluating it near the root (a few eps times cosh b); the fifth root within
    its asymptotic correction 2 (-1)^i exp(-b) of (2i - 1) pi / 2 (1.4e-6 for i = 5)."""
    roots = cantilever_beta_l(5)
    np.testing.assert_allclose(roots[:3], [1.875104, 4.694091, 7.854757], atol=5e-7)
    assert np.all(np.abs(1.0 + np.cos(roots) * np.cosh(roots)) < 8 * EPS * np.cosh(roots))
    # asymptotic (2i - 1) pi / 2 for higher modes: cos b = -1/cosh b ~ -2 exp(-b)
    assert abs(roots[4] - 9 * math.pi / 2) < 2.0 * 2.0 * math.exp(-9 * math.pi / 2)


def test_uniform_seed_static():
    """Uniform seed beam: tip = -q L^4/(8 EI) = -1.3951e-3 m, slope -q L^3/(6 EI); measured
    4e-15. The quadrature within its accuracy (QUAD), the stepped beam -- exact for uniform
    segments -- within its transfer-matrix round-off (4 eps per segment, stepped_roundoff) and
    the closed form's few operations (8 eps)."""
    assert EI0 == pytest.approx(2760.0, rel=1e-12)  # the constants as written (exact values)
    assert Q0 == pytest.approx(30.8034, rel=2e-6)  # 6 digits written: half a unit, 1.6e-6
    w_ref, s_ref = uniform_static_tip(Q0, L, EI0)
    assert w_ref == pytest.approx(-Q0 * L**4 / (8 * EI0), rel=8 * EPS)
    assert w_ref == pytest.approx(-1.3951e-3, rel=4e-5)  # 5 digits written: half a unit
    assert s_ref == pytest.approx(-Q0 * L**3 / (6 * EI0), rel=8 * EPS)

    ex = exact_graded_static(L, const(EI0), const(Q0))
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=QUAD)
    assert ex["tip_slope"] == pytest.approx(s_ref, rel=QUAD)
    x = ex["x"]
    w_curve = -Q0 * x**2 * (6 * L**2 - 4 * L * x + x**2) / (24 * EI0)
    np.testing.assert_allclose(ex["w"], w_curve, rtol=0, atol=QUAD * abs(w_ref))

    for n in (1, 3, 10, 37):
        tol = stepped_roundoff(n) + 8 * EPS
        st = stepped_static(L, const(EI0), const(Q0), n)
        assert st["tip_deflection"] == pytest.approx(w_ref, rel=tol)
        assert st["tip_slope"] == pytest.approx(s_ref, rel=tol)
        w_nodes = -Q0 * st["x_nodes"] ** 2 * (6 * L**2 - 4 * L * st["x_nodes"] + st["x_nodes"] ** 2)
        np.testing.assert_allclose(st["w_nodes"], w_nodes / (24 * EI0), atol=tol * abs(w_ref))
        assert st["clamp_moment"] == pytest.approx(-Q0 * L**2 / 2, rel=tol)
        assert st["clamp_shear"] == pytest.approx(Q0 * L, rel=tol)


def test_scalar_property_callables_are_broadcast():
    """A callable returning a scalar is accepted: the same numbers as an array profile, so the
    same result exactly (0 difference)."""
    a = stepped_static(L, lambda x: EI0, lambda x: Q0, 4)["tip_deflection"]
    b = stepped_static(L, const(EI0), const(Q0), 4)["tip_deflection"]
    assert a == b


def test_uniform_seed_frequencies():
    """Stepped uniform beam = analytic (beta L)^2 sqrt(EI/rhoA)/L^2 for any N (measured
    4.1e-15): within the root finding (ROOT), the transfer-matrix round-off (4 eps per
    segment) and the closed form's root (16 eps)."""
    ref = uniform_frequencies(L, EI0, RHOA0, 5)
    assert ref[0] == pytest.approx(104.24, abs=0.005)  # 5 digits written: half a unit
    for n in (1, 7, 50, 200):
        om = stepped_frequencies(L, const(EI0), const(RHOA0), n, 5)
        np.testing.assert_allclose(om, ref, rtol=ROOT + stepped_roundoff(n) + 16 * EPS)


# ------------------------------------------------------------------------------------------------
# graded statics
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("lam", "n"), GRADED_CASES)
def test_graded_static_exact_vs_independent(lam, n):
    """exact_graded_static tip vs reversed-order double quad (and closed form for n=1);
    measured 5.9e-14, within both quadratures' accuracy (QUAD)."""
    EI = graded(EI0, lam, n)
    ex = exact_graded_static(L, EI, const(Q0))
    w_ref, s_ref = quad_tip(EI, const(Q0))
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=QUAD)
    assert ex["tip_slope"] == pytest.approx(s_ref, rel=QUAD)
    if n == 1:
        w_cf, s_cf = linear_ei_closed_form(lam)
        assert ex["tip_deflection"] == pytest.approx(w_cf, rel=QUAD)
        assert ex["tip_slope"] == pytest.approx(s_cf, rel=QUAD)


def _observed_order(ns, errs) -> float:
    return -np.polyfit(np.log(ns), np.log(errs), 1)[0]


def _order_deviation(ns, errs, next_gap: float = 2.0) -> float:
    """Bound of the least-squares order's deviation from the leading exponent: the coarsest
    local order's deviation, which decays geometrically by ``2^-next_gap`` per halving (the
    next exponent of the expansion; 2 for smooth profiles: ``(L/N)^2, (L/N)^4``), estimated
    from the change of the local order, times FS."""
    local = -np.diff(np.log(errs)) / np.diff(np.log(ns))
    return FS * abs(local[0] - local[1]) / (1.0 - 2.0**-next_gap)


@pytest.mark.parametrize(("lam", "n"), GRADED_CASES)
def test_stepped_static_converges_second_order(lam, n):
    """Stepped-beam tip error vs exact: strictly decreasing, least-squares order 2 within its
    pre-asymptotic deviation (the expansion of a smooth profile: (L/N)^2, (L/N)^4; measured
    orders 1.99-2.014 against deviations up to 0.05)."""
    EI = graded(EI0, lam, n)
    exact = exact_graded_static(L, EI, const(Q0))["tip_deflection"]
    conv = stepped_convergence(L, EI, const(Q0), STATIC_NS)
    assert [c[0] for c in conv] == STATIC_NS
    errs = np.array([abs(w / exact - 1.0) for _, w in conv])
    assert np.all(np.diff(errs) < 0)
    assert abs(_observed_order(STATIC_NS, errs) - 2.0) <= _order_deviation(STATIC_NS, errs)


def test_graded_static_weak_singularity():
    """EI = EI0 (1 - 0.5 sqrt(x/L)) (infinite EI' at the clamp): exact vs double quad within
    both quadratures' accuracy (QUAD)."""
    EI = graded(EI0, 0.5, 0.5)
    ex = exact_graded_static(L, EI, const(Q0))
    w_ref, s_ref = quad_tip(EI, const(Q0))
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=QUAD)
    assert ex["tip_slope"] == pytest.approx(s_ref, rel=QUAD)
    # the stepped beam still converges, at a reduced rate (leading exponent 1 + n = 1.5): every
    # exponent of its expansion exceeds 1, so over two halvings the error at least quarters
    errs = [
        abs(stepped_static(L, EI, const(Q0), m)["tip_deflection"] / w_ref - 1) for m in (20, 80)
    ]
    assert errs[1] < errs[0] / 4.0


def test_load_graded_static():
    """q = q0 (1 + x/L), uniform EI: closed form (1/8 + 11/120) q0 L^4/EI, (1/6 + 1/8) q0 L^3/EI.

    The quadrature solution within its accuracy (QUAD); the stepped beam of order 2 within
    its pre-asymptotic deviation, also for the combined graded EI and graded q case.
    """
    q = graded(Q0, -1.0, 1)
    w_ref = -(1 / 8 + 11 / 120) * Q0 * L**4 / EI0
    s_ref = -(1 / 6 + 1 / 8) * Q0 * L**3 / EI0
    ex = exact_graded_static(L, const(EI0), q)
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=QUAD)
    assert ex["tip_slope"] == pytest.approx(s_ref, rel=QUAD)
    errs = [
        abs(stepped_static(L, const(EI0), q, m)["tip_deflection"] / w_ref - 1) for m in STATIC_NS
    ]
    assert np.all(np.diff(errs) < 0)
    assert abs(_observed_order(STATIC_NS, errs) - 2.0) <= _order_deviation(STATIC_NS, errs)

    EI = graded(EI0, 0.6, 2)
    ex = exact_graded_static(L, EI, q)
    w_ref, _ = quad_tip(EI, q)
    assert ex["tip_deflection"] == pytest.approx(w_ref, rel=QUAD)
    errs = [abs(w / w_ref - 1) for _, w in stepped_convergence(L, EI, q, STATIC_NS)]
    assert np.all(np.diff(errs) < 0)
    assert abs(_observed_order(STATIC_NS, errs) - 2.0) <= _order_deviation(STATIC_NS, errs)


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


def _fe_reference(EI, rhoA):
    """The 100-element Hermite FE's first three frequencies and their error bound: FS x the
    order-4 estimate |w_50 - w_100| / 15 plus the dense inverted eigenproblem's round-off, at
    most eps n^4 of the frequency (measured about 0.03 eps n^4: 1e-8 at 200 elements, 1.4e-7
    at 400 -- why the reference is the 100-element model)."""
    fe = hermite_fe_frequencies(EI, rhoA, n_el=100, k=3)
    fe50 = hermite_fe_frequencies(EI, rhoA, n_el=50, k=3)
    return fe, FS * np.abs(fe50 - fe) / 15.0 + EPS * 100.0**4 * fe


@pytest.mark.parametrize(("name", "EI", "rhoA"), FREQ_CASES, ids=[c[0] for c in FREQ_CASES])
def test_stepped_frequencies_converge_to_fe(name, EI, rhoA):
    """Stepped frequencies for N = 10..160: the local order of successive differences (their
    ratio 2^p) tends to 2 within its pre-asymptotic deviation (next term (L/N)^4);
    N = 160 vs the 200-element Hermite FE (first 3 modes; measured 4.9e-6) and the Richardson
    extrapolation (4 w_160 - w_80)/3 (measured 1.2e-8) within FS x their error estimates (the
    stepped value: |w_160 - w_80| / 3 for order 2, the extrapolation: its change from
    (4 w_80 - w_40)/3) plus the FE reference's error (:func:`_fe_reference`).
    """
    om = np.array([stepped_frequencies(L, EI, rhoA, m, 5) for m in FREQ_NS])
    assert np.all(np.diff(om, axis=1) > 0)
    diffs = np.abs(np.diff(om, axis=0))
    orders = np.log2(diffs[:-1] / diffs[1:])[:, :3]
    assert np.all(
        np.abs(orders[-1] - 2.0) <= FS * np.abs(orders[-1] - orders[-2]) / (1 - 0.25) + 1e-3
    ), orders  # (1e-3: the round-off of a ratio of differences 1e-9)

    ref, fe_err = _fe_reference(EI, rhoA)
    st_err = FS * np.abs(om[-1, :3] - om[-2, :3]) / 3.0
    assert np.all(np.abs(om[-1, :3] - ref) <= st_err + fe_err)  # N = 160: measured 4.9e-6
    richardson = (4.0 * om[-1, :3] - om[-2, :3]) / 3.0
    r_err = FS * np.abs(richardson - (4.0 * om[-2, :3] - om[-3, :3]) / 3.0)
    assert np.all(np.abs(richardson - ref) <= r_err + fe_err)  # measured 1.2e-8


def test_stepped_frequencies_many_segments_strong_grading():
    """k = 5 modes for N = 200 with a 10:1 stiffness and 3:1 mass grading; FE check within FS x
    the stepped estimate |w_200 - w_100| / 3 (order 2) plus the FE's change from 100
    elements."""
    EI = graded(EI0, 0.9, 1)
    rhoA = graded(RHOA0, 0.66, 1)
    om = stepped_frequencies(L, EI, rhoA, 200, 5)
    assert om.shape == (5,)
    assert np.all(np.diff(om) > 0)
    om100 = stepped_frequencies(L, EI, rhoA, 100, 3)
    fe, fe_err = _fe_reference(EI, rhoA)
    assert np.all(np.abs(om[:3] - fe) <= FS * np.abs(om[:3] - om100) / 3.0 + fe_err)
