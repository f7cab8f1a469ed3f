"""Tests for the large-deflection elastica reference (:mod:`ancf_beam.references.elastica`).

Seed beam: L = 1 m, square section b = h = 0.02 m, steel density 7850 kg/m^3, g = 9.81 m/s^2.
References used here are independent of the BVP solver: closed-form linear beam theory, a
linear quadrature for graded stiffness, and a shooting method (solve_ivp + brentq) that
integrates the same rod equations from the clamp.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp
from scipy.optimize import brentq

from ancf_beam.references.elastica import solve_elastica

logger = logging.getLogger(__name__)

L = 1.0  # m
B = H = 0.02  # m
RHO = 7850.0  # kg/m^3
G = 9.81  # m/s^2
AREA = B * H  # m^2
INERTIA = B * H**3 / 12.0  # m^4
RHOA = RHO * AREA  # kg/m
Q = RHOA * G  # N/m, weight per unit length (30.80 N/m)

SOFT_MODULI = [2.07e8, 2.07e7, 2.07e6]  # Pa


def shoot_tip(EI, EA, q: float, length: float, kappa0: float = 0.0) -> tuple[float, float, float]:
    """Independent shooting solution; returns the tip (x, y) in m and the tip angle in degrees.

    Integrates ``x' = (1+eps) cos(th)``, ``y' = (1+eps) sin(th)``, ``th' = M/EI(X)``,
    ``M' = (1+eps) W cos(th)`` with ``W = q (L - X)`` and ``eps = -W sin(th)/EA`` from the clamp,
    with the unknown clamp curvature ``k0 = theta'(0)`` found by brentq on ``M(L) = 0``.

    Because the hanging state ``theta = -pi/2`` is a saddle of these equations, ``M(L)`` is not
    monotone in ``k0`` far from the root. Trajectories are therefore classified with terminal
    events: reaching ``M = 0`` before the tip (not bent enough) counts as positive, crossing
    ``theta = -pi/2`` (bent too much; ``M`` can then never return to zero) as negative. Near
    the root neither event fires and the residual is the plain ``M(L)``.
    """
    EI_f = EI if callable(EI) else (lambda X: EI)
    eps_max = 0.0 if EA is None else q * length / EA

    def rhs(X, u):
        _, _, th, M = u
        W = q * (length - X)
        stretch = 1.0 if EA is None else 1.0 - W * np.sin(th) / EA
        return [stretch * np.cos(th), stretch * np.sin(th), M / EI_f(X) + kappa0,
                stretch * W * np.cos(th)]  # fmt: skip

    def moment_zero(X, u):
        return u[3]

    moment_zero.terminal = True
    moment_zero.direction = 1.0

    def hangs_past_vertical(X, u):
        return u[2] + 0.5 * np.pi

    hangs_past_vertical.terminal = True
    hangs_past_vertical.direction = -1.0

    def integrate(k0, events=None):
        u0 = [0.0, 0.0, 0.0, EI_f(0.0) * k0]
        return solve_ivp(
            rhs, (0.0, length), u0, method="DOP853", rtol=1e-13, atol=1e-15, events=events
        )

    scale = q * length**2

    def residual(k0):
        if k0 >= 0.0:
            return scale
        sol = integrate(k0, events=[moment_zero, hangs_past_vertical])
        if sol.status == 1:
            return scale if sol.t_events[0].size else -scale
        return sol.y[3, -1]

    # M(0) lies in [-(1 + eps_max) q L^2 / 2, 0): with cos <= 1 and eps <= eps_max the moment
    # cannot reach zero before the tip at the lower bound.
    k_low = -(1.0 + eps_max) * scale / (2.0 * EI_f(0.0)) * (1.0 + 1e-9)
    k0 = brentq(residual, k_low, 0.0, xtol=1e-300, rtol=4.0 * np.finfo(float).eps, maxiter=500)
    sol = integrate(k0)
    return float(sol.y[0, -1]), float(sol.y[1, -1]), float(np.degrees(sol.y[2, -1]))


@pytest.fixture(scope="module")
def soft_solutions():
    """BVP solutions for the soft moduli, keyed by (E, extensible)."""
    out = {}
    for E in SOFT_MODULI:
        for extensible in (True, False):
            EA = E * AREA if extensible else None
            out[E, extensible] = solve_elastica(L, E * INERTIA, EA, RHOA, G)
    return out


def test_small_load_matches_linear_cantilever():
    E = 2.07e11
    EI = E * INERTIA
    res = solve_elastica(L, EI, E * AREA, RHOA, G)
    linear = -Q * L**4 / (8.0 * EI)
    assert linear == pytest.approx(-1.3951e-3, rel=1e-4)
    assert res["converged"]
    # the linear solution limits these two comparisons: the geometric nonlinearity, ~(w/L)^2,
    # measured 1.6e-6 (tip) and 7.8e-7 (clamp moment); tolerances 1.6e-5 and 8e-6
    assert res["tip_y"] == pytest.approx(linear, rel=1.6e-5)
    # the linear moment at the clamp is -q L^2 / 2 (hogging, counter-clockwise positive)
    assert res["moment"][0] == pytest.approx(-Q * L**2 / 2.0, rel=8e-6)
    assert abs(res["moment"][-1]) < 1e-8
    clamp = [res["x"][0], res["y"][0], res["theta"][0]]
    np.testing.assert_allclose(clamp, 0.0, atol=1e-14)


@pytest.mark.parametrize("E", SOFT_MODULI)
@pytest.mark.parametrize("extensible", [True, False])
def test_matches_shooting(soft_solutions, E, extensible):
    res = soft_solutions[E, extensible]
    EA = E * AREA if extensible else None
    tip_x, tip_y, tip_deg = shoot_tip(E * INERTIA, EA, Q, L)
    logger.info(
        "E=%.3g ext=%s bvp tip=(%.9f, %.9f) shoot tip=(%.9f, %.9f)",
        E,
        extensible,
        res["tip_x"],
        res["tip_y"],
        tip_x,
        tip_y,
    )
    assert res["converged"]
    # measured up to 3.4e-7 m (x, E = 2.07e6: the shooting's own limit, see below) and
    # 3.5e-13 m (y); tolerances 1e-6 and 4e-12 m
    assert res["tip_x"] == pytest.approx(tip_x, abs=1e-6)
    assert res["tip_y"] == pytest.approx(tip_y, abs=4e-12)
    # Shooting from the clamp across the saddle at theta = -pi/2 resolves k0 only to round-off,
    # which is amplified ~exp(int sqrt(W/EI) dX) ~ 1e9 towards the tip for E = 2.07e6; this
    # limits the shooting tip angle to ~2e-4 deg (tip position ~3e-7 m).
    assert res["tip_angle_deg"] == pytest.approx(tip_deg, abs=1e-3)


def test_solution_satisfies_rod_equations(soft_solutions):
    """Internal consistency: eps = N/EA and the constitutive moment M = EI dtheta/dX."""
    E = 2.07e7
    res = soft_solutions[E, True]
    X, theta = res["X"], res["theta"]
    W = Q * (L - X)
    np.testing.assert_allclose(res["eps"], -W * np.sin(theta) / (E * AREA), atol=1e-12)
    dtheta = np.gradient(theta, X, edge_order=2)
    interior = slice(20, -1)  # skip the steep clamp boundary layer on the uniform output grid
    # second-order differences of theta on the output grid: measured 6.2e-4 N m (2e-5 Q L^2)
    np.testing.assert_allclose(
        res["moment"][interior], E * INERTIA * dtheta[interior], atol=2e-4 * Q * L**2
    )
    assert np.all(res["eps"] >= 0.0)  # hanging beam is in tension


def test_very_soft_beam_hangs_vertically(soft_solutions):
    E = 2.07e6
    ext = soft_solutions[E, True]
    inext = soft_solutions[E, False]
    for res in (ext, inext):
        # measured 7.9e-8 deg from the vertical; tolerance 1e-6 deg
        assert res["tip_angle_deg"] == pytest.approx(-90.0, abs=1e-6), res["tip_angle_deg"]
    diff = np.hypot(ext["tip_x"] - inext["tip_x"], ext["tip_y"] - inext["tip_y"])
    # expected elongation of a hanging rod ~ q L^2 / (2 EA) = 1.86 % of L
    logger.info(
        "E=2.07e6: extensible - inextensible tip distance = %.5f m (%.3f %% of L)",
        diff,
        100.0 * diff / L,
    )
    assert 0.005 * L < diff < 0.05 * L, f"tip difference {diff:.5f} m"
    assert diff == pytest.approx(Q * L**2 / (2.0 * E * AREA), rel=0.1)


def _graded_EI(E0):
    return lambda X: E0 * (1.0 - 0.6 * np.asarray(X) / L) * INERTIA


def test_graded_small_load_matches_quadrature():
    E0 = 2.07e11
    EI = _graded_EI(E0)
    res = solve_elastica(L, EI, E0 * AREA, RHOA, G)

    def integrand(x):
        return Q * (L - x) ** 2 / 2.0 * (L - x) / EI(x)

    linear, _ = quad(integrand, 0.0, L, epsabs=0.0, epsrel=1e-13)
    assert res["converged"]
    # limited by the geometric nonlinearity: measured 2.1e-6; tolerance 2e-5
    assert res["tip_y"] == pytest.approx(-linear, rel=2e-5)


def test_graded_large_deflection_matches_shooting():
    E0 = 2.07e7
    EI = _graded_EI(E0)
    res = solve_elastica(L, EI, E0 * AREA, RHOA, G)
    tip_x, tip_y, _ = shoot_tip(EI, E0 * AREA, Q, L)
    assert res["converged"]
    # measured 9.9e-14 and 7.8e-16 m; tolerance 1e-12 m
    assert res["tip_x"] == pytest.approx(tip_x, abs=1e-12)
    assert res["tip_y"] == pytest.approx(tip_y, abs=1e-12)


def test_callable_and_infinite_inputs_agree():
    E = 2.07e8
    base = solve_elastica(L, E * INERTIA, None, RHOA, G)
    as_callables = solve_elastica(
        L,
        lambda X: np.full_like(X, E * INERTIA),
        np.inf,
        lambda X: np.full_like(X, RHOA),
        G,
        n_nodes=51,
    )
    flag = solve_elastica(L, E * INERTIA, E * AREA, RHOA, G, extensible=False)
    for res in (as_callables, flag):
        # the same problem in other inputs: measured 1.0e-15 m; tolerance 1e-12 m
        assert res["tip_x"] == pytest.approx(base["tip_x"], abs=1e-12)
        assert res["tip_y"] == pytest.approx(base["tip_y"], abs=1e-12)
        assert np.all(res["eps"] == 0.0)
    assert as_callables["X"].size == 51


def test_invalid_input_raises():
    with pytest.raises(ValueError):
        solve_elastica(-1.0, 1.0, 1.0, 1.0, G)
    with pytest.raises(ValueError):
        solve_elastica(L, None, 1.0, 1.0, G)


def test_failure_raises_runtime_error(monkeypatch):
    import ancf_beam.references.elastica as elastica

    monkeypatch.setattr(elastica, "_MAX_NODES", 5)  # no step can converge on so few nodes
    with pytest.raises(RuntimeError, match="continuation"):
        elastica.solve_elastica(L, 2.07e6 * INERTIA, None, RHOA, G)


def test_curved_reference_without_load_is_the_arc():
    """kappa0 = 0.2 1/m, no load: the stress-free circular arc, tip (sin(k L) / k,
    (1 - cos(k L)) / k), tip angle k L. Measured 3.3e-16 m, 0 deg; tolerance 1e-14 (round-off)."""
    k = 0.2
    res = solve_elastica(L, 2.07e11 * INERTIA, 2.07e11 * AREA, RHOA, 0.0, kappa0=k)
    assert res["tip_x"] == pytest.approx(np.sin(k * L) / k, abs=1e-14)
    assert res["tip_y"] == pytest.approx((1 - np.cos(k * L)) / k, abs=1e-14)
    assert res["tip_angle_deg"] == pytest.approx(np.degrees(k * L), abs=1e-12)
    np.testing.assert_allclose(res["moment"], 0.0, atol=1e-12)


@pytest.mark.parametrize("E", [2.07e11, 2.07e8])
def test_curved_reference_matches_shooting(E):
    """Initially curved (kappa0 = 0.2 1/m, M = EI (theta' - kappa0)) under its weight: the BVP
    against the shooting solution with the same curvature. Measured up to 6.2e-15 m; tolerance
    1e-12 m (round-off)."""
    res = solve_elastica(L, E * INERTIA, E * AREA, RHOA, G, kappa0=0.2)
    tip_x, tip_y, _ = shoot_tip(E * INERTIA, E * AREA, Q, L, kappa0=0.2)
    assert res["converged"]
    assert res["tip_x"] == pytest.approx(tip_x, abs=1e-12)
    assert res["tip_y"] == pytest.approx(tip_y, abs=1e-12)
