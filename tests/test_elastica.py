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
from scipy.special import airy

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


def shoot_tip(EI, EA, q: float, length: float, kappa0: float = 0.0, rtol: float = 1e-13):
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
        return [
            stretch * np.cos(th),
            stretch * np.sin(th),
            M / EI_f(X) + kappa0,
            stretch * W * np.cos(th),
        ]

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
            rhs, (0.0, length), u0, method="DOP853", rtol=rtol, atol=1e-2 * rtol, events=events
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


def shoot_bound(EI, EA, q, length, kappa0=0.0):
    """The shooting tip (x, y, angle in deg) and its error bound per component: the change
    from an integration a hundred times less tight (``rtol`` 1e-11; DOP853's error falls with
    it) and the clamp curvature resolved to round-off (brentq at 4 eps), amplified towards the
    tip by ``A = exp(int sqrt(W / EI) dX)`` (the hanging state is a saddle): ``4 eps A L`` in
    position, ``4 eps A`` rad in angle."""
    tip = np.array(shoot_tip(EI, EA, q, length, kappa0))
    loose = np.array(shoot_tip(EI, EA, q, length, kappa0, rtol=1e-11))
    EI_f = EI if callable(EI) else (lambda X: EI)
    amp = np.exp(quad(lambda X: np.sqrt(q * (length - X) / EI_f(X)), 0.0, length)[0])
    saddle = 4.0 * np.finfo(float).eps * amp * np.array([length, length, np.degrees(1.0)])
    return tip, np.abs(tip - loose) + saddle


def bvp_bound(res, *args, **kwargs):
    """Error of a ``solve_elastica`` result at its default ``tol = 1e-10`` per tip quantity:
    its change from ``tol = 1e-9`` (the collocation error falls with the tolerance)."""
    loose = solve_elastica(*args, tol=1e-9, **kwargs)
    return {k: abs(res[k] - loose[k]) for k in ("tip_x", "tip_y", "tip_angle_deg")}


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
    assert linear == pytest.approx(-1.3951e-3, rel=4e-5)  # 5 digits written: half a unit
    assert res["converged"]
    # the linear solution limits these two comparisons: the geometric nonlinearity, second
    # order in w/L with a coefficient below 1 (measured 0.82 (w/L)^2 = 1.6e-6 at the tip, 0.40
    # (w/L)^2 = 7.8e-7 at the clamp moment); bound FS (w/L)^2 = 3.9e-6
    nonlinear = 2.0 * (linear / L) ** 2
    assert res["tip_y"] == pytest.approx(linear, rel=nonlinear)
    # the linear moment at the clamp is -q L^2 / 2 (hogging, counter-clockwise positive)
    assert res["moment"][0] == pytest.approx(-Q * L**2 / 2.0, rel=nonlinear)
    # the boundary conditions hold to the solver's tolerance (1e-10 on the dimensionless
    # moment M L / EI and positions x / L)
    assert abs(res["moment"][-1]) < 1e-10 * EI / L
    clamp = [res["x"][0], res["y"][0], res["theta"][0]]
    np.testing.assert_allclose(clamp, 0.0, atol=1e-10 * L)


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
    # 3.5e-13 m (y), within the BVP's and the shooting's error bounds (bvp_bound,
    # shoot_bound). Shooting from the clamp across the saddle at theta = -pi/2 resolves k0 only
    # to round-off, which is amplified ~exp(int sqrt(W/EI) dX) ~ 1e9 towards the tip for
    # E = 2.07e6; this limits the shooting tip angle to ~2e-4 deg (tip position ~3e-7 m).
    ref, ref_err = shoot_bound(E * INERTIA, EA, Q, L)
    assert abs(np.array([tip_x, tip_y, tip_deg]) - ref).max() == 0.0  # the same shooting
    err = bvp_bound(res, L, E * INERTIA, EA, RHOA, G)
    for i, k in enumerate(("tip_x", "tip_y", "tip_angle_deg")):
        assert abs(res[k] - ref[i]) <= ref_err[i] + err[k], k


def test_solution_satisfies_rod_equations(soft_solutions):
    """Internal consistency: eps = N/EA and the constitutive moment M = EI dtheta/dX."""
    E = 2.07e7
    res = soft_solutions[E, True]
    X, theta = res["X"], res["theta"]
    W = Q * (L - X)
    np.testing.assert_allclose(res["eps"], -W * np.sin(theta) / (E * AREA), atol=1e-12)
    dtheta = np.gradient(theta, X, edge_order=2)
    # second-order central differences of theta on the uniform output grid (away from the
    # steep clamp boundary layer): error h^2 / 6 times the third derivative of theta,
    # estimated by the third differences nearby, times FS; measured 6.2e-4 N m
    h = X[1] - X[0]
    third = np.abs(np.diff(theta, 3)) / h**3  # third[j]: at X[j + 1.5]
    idx = np.arange(20, theta.size - 2)
    near = np.maximum(third[idx - 2], third[idx - 1])
    diff = np.abs(res["moment"][idx] - E * INERTIA * dtheta[idx])
    assert np.all(diff <= 2.0 * E * INERTIA * h**2 / 6.0 * near + 1e-10 * E * INERTIA / L)
    assert np.all(res["eps"] >= 0.0)  # hanging beam is in tension


def test_very_soft_beam_hangs_vertically(soft_solutions):
    E = 2.07e6
    ext = soft_solutions[E, True]
    inext = soft_solutions[E, False]
    # the bending stiffness turns the hanging part back only within the clamp's boundary layer:
    # the angle's departure phi from the vertical solves the linearised hanging rod
    # EI phi'' = q (L - X) phi (an Airy equation in z = (q / EI)^(1/3) (L - X)) with phi = pi/2
    # at the clamp and phi' = 0 at the tip: phi(tip) = pi/2 (Bi + sqrt(3) Ai)(0) / (Bi +
    # sqrt(3) Ai)(z0), 1.3e-9 rad = 7.4e-8 deg for E = 2.07e6 (measured 6.2e-8 and 7.9e-8 deg,
    # the extensible rod a little less). Bound: FS x that plus the solver's accuracy (bvp_bound)
    z0 = (Q / (E * INERTIA)) ** (1.0 / 3.0) * L
    (a0, _, b0, _), (a1, _, b1, _) = airy(0.0), airy(z0)
    decay = np.degrees(np.pi / 2 * (b0 + np.sqrt(3) * a0) / (b1 + np.sqrt(3) * a1))
    for res, EA in ((ext, E * AREA), (inext, None)):
        err = bvp_bound(res, L, E * INERTIA, EA, RHOA, G)["tip_angle_deg"]
        assert abs(res["tip_angle_deg"] + 90.0) <= 2.0 * (decay + err), res["tip_angle_deg"]
    diff = np.hypot(ext["tip_x"] - inext["tip_x"], ext["tip_y"] - inext["tip_y"])
    # expected elongation of a hanging rod ~ q L^2 / (2 EA) = 1.86 % of L
    logger.info(
        "E=2.07e6: extensible - inextensible tip distance = %.5f m (%.3f %% of L)",
        diff,
        100.0 * diff / L,
    )
    # the elongation of a vertical rod, corrected by the clamp's boundary layer (relative length
    # sqrt(EI / (q L^3)) = 0.030) and the stretch itself (q L / EA = 0.037): bound FS x their sum
    corr = np.sqrt(E * INERTIA / (Q * L**3)) + Q * L / (E * AREA)
    assert diff == pytest.approx(Q * L**2 / (2.0 * E * AREA), rel=2.0 * corr)


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
    # limited by the geometric nonlinearity, second order in w/L (measured 2.1e-6 = 0.82
    # (w/L)^2): bound FS (w/L)^2
    assert res["tip_y"] == pytest.approx(-linear, rel=2.0 * (linear / L) ** 2)


def test_graded_large_deflection_matches_shooting():
    E0 = 2.07e7
    EI = _graded_EI(E0)
    res = solve_elastica(L, EI, E0 * AREA, RHOA, G)
    ref, ref_err = shoot_bound(EI, E0 * AREA, Q, L)
    assert res["converged"]
    # measured 9.9e-14 and 7.8e-16 m, within both solutions' error bounds
    err = bvp_bound(res, L, EI, E0 * AREA, RHOA, G)
    assert abs(res["tip_x"] - ref[0]) <= ref_err[0] + err["tip_x"]
    assert abs(res["tip_y"] - ref[1]) <= ref_err[1] + err["tip_y"]


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
    base_err = bvp_bound(base, L, E * INERTIA, None, RHOA, G)
    for res, n_nodes in ((as_callables, 51), (flag, 201)):
        # the same problem in other inputs (another start mesh): measured 1.0e-15 m, within
        # both solutions' error bounds
        err = bvp_bound(res, L, E * INERTIA, None, RHOA, G, n_nodes=n_nodes)
        for k in ("tip_x", "tip_y"):
            assert abs(res[k] - base[k]) <= err[k] + base_err[k], k
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
    (1 - cos(k L)) / k), tip angle k L. Measured 3.3e-16 m, 0 deg: within the solver's
    tolerance 1e-10 of the dimensionless unknowns (L, rad, EI / L)."""
    k = 0.2
    res = solve_elastica(L, 2.07e11 * INERTIA, 2.07e11 * AREA, RHOA, 0.0, kappa0=k)
    assert res["tip_x"] == pytest.approx(np.sin(k * L) / k, abs=1e-10 * L)
    assert res["tip_y"] == pytest.approx((1 - np.cos(k * L)) / k, abs=1e-10 * L)
    assert res["tip_angle_deg"] == pytest.approx(np.degrees(k * L), abs=np.degrees(1e-10))
    np.testing.assert_allclose(res["moment"], 0.0, atol=1e-10 * 2.07e11 * INERTIA / L)


@pytest.mark.parametrize("E", [2.07e11, 2.07e8])
def test_curved_reference_matches_shooting(E):
    """Initially curved (kappa0 = 0.2 1/m, M = EI (theta' - kappa0)) under its weight: the BVP
    against the shooting solution with the same curvature. Measured up to 6.2e-15 m, within
    both solutions' error bounds (bvp_bound, shoot_bound)."""
    res = solve_elastica(L, E * INERTIA, E * AREA, RHOA, G, kappa0=0.2)
    ref, ref_err = shoot_bound(E * INERTIA, E * AREA, Q, L, kappa0=0.2)
    err = bvp_bound(res, L, E * INERTIA, E * AREA, RHOA, G, kappa0=0.2)
    assert res["converged"]
    assert abs(res["tip_x"] - ref[0]) <= ref_err[0] + err["tip_x"]
    assert abs(res["tip_y"] - ref[1]) <= ref_err[1] + err["tip_y"]
