"""The spin-up beam reference (:mod:`ancf_beam.references.spinup`) against independent results:
the hub profile's continuity and derivatives; the clamped-free roots (tabulated values and
their asymptotic form); the frequencies at rest; the static tip deflection under the spin-up's
tangential load (closed form, with the alternating modal series' own error bound); the
Southwell law of the rotating frequencies (Rayleigh integral by adaptive quadrature, the
literature coefficient); the modal convergence of the spin-up history; the divergence of the
unstiffened model at the closed-form rate once Omega exceeds the first frequency.

Bounds: round-off from the operation count (stated at each), finite differences from the
Richardson estimate of two steps times the project's factor of safety ``FS``, the integrator
from a run at tighter tolerances."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from ancf_beam.references.spinup import (
    SpinUpBeam,
    cantilever_roots,
    modal_matrices,
    spin_up_profile,
    spin_up_response,
    squared_frequencies,
    tip_deflection,
)
from conftest import FS

EPS = np.finfo(float).eps
BEAM = SpinUpBeam()
#: sqrt(EI / (rho A L^4)), 1/s: omega_k = (beta_k L)^2 C
C = math.sqrt(BEAM.ei / (BEAM.rho_a * BEAM.length**4))
#: tabulated clamped-free roots beta_k L (Blevins, 10 significant digits)
TABLE = np.array([1.875104069, 4.694091133, 7.854757438, 10.99554073, 14.13716839])
TABLE_ERR = np.array([5e-10, 5e-10, 5e-10, 5e-9, 5e-9])  # half a unit of the last digit
#: the first root to round-off, solved here (the table's rounding would show in S and in the
#: growth rate at the 1e-10 level)
ROOT1 = brentq(lambda b: math.cos(b) * math.cosh(b) + 1.0, 1.8, 1.9, xtol=1e-15, rtol=4 * EPS)
W, T = 4.0, 15.0


def reference_roots(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Roots beta_k L, k = 1..n, and their error bounds: the table for k <= 5; for k >= 6 the
    asymptotic form of ``cos b = -1/cosh b`` about ``b0 = (2k - 1) pi / 2``, ``b = b0 + d0 -
    d0^2 + O(d0^3)`` with ``d0 = 2 (-1)^(k+1) e^(-b0)``, taken as ``b0 + d0`` with the error
    ``d0^2 (1 + |d0|) <= 5 e^(-2 b0)`` (``|d0| < 1e-3``)."""
    k = np.arange(1, n + 1)
    b0 = (2 * k - 1) * np.pi / 2
    roots = b0 + 2.0 * (-1.0) ** (k + 1) * np.exp(-b0)
    err = 5.0 * np.exp(-2 * b0) + 4 * EPS * b0
    m = min(n, len(TABLE))
    roots[:m], err[:m] = TABLE[:m], TABLE_ERR[:m]
    return roots, err


def test_profile_values_continuity_and_bad_input():
    th, rate, acc = spin_up_profile([0.0, T, 20.0], W, T)
    assert th[0] == rate[0] == acc[0] == 0.0  # from rest
    assert th[1] == W * T / 2 and rate[1] == W and acc[1] == 0.0
    assert th[2] == W * (20.0 - T / 2)
    # one-sided limits at T from each branch by Taylor from T -+ delta (the branches'
    # derivatives: theta' and theta'' of the profile, theta''' = (w/T)(2 pi/T) sin(2 pi t/T)
    # before T, 0 after): the remainders are <= delta^3/6, delta^2/2, delta times max
    # |theta'''| = (w/T)(2 pi/T)(2 pi delta/T) near T, plus a few ulps of each term
    delta = 1e-3 * T
    th_l, w_l, a_l = spin_up_profile(T - delta, W, T)
    th_r, w_r, a_r = spin_up_profile(T + delta, W, T)
    jerk_l = W / T * (2 * math.pi / T) * math.sin(2 * math.pi * (T - delta) / T)
    left = np.array(
        [th_l + delta * w_l + delta**2 / 2 * a_l + delta**3 / 6 * jerk_l, w_l + delta * a_l, a_l]
    )
    right = np.array([th_r - delta * w_r + delta**2 / 2 * a_r, w_r - delta * a_r, a_r])
    jerk = W / T * (2 * math.pi / T) * (2 * math.pi * delta / T)
    bound = jerk * np.array([delta**3 / 6, delta**2 / 2, delta]) + 8 * EPS * np.array(
        [W * T, W, W / T]
    )
    print(f"\njumps at T: {np.abs(left - right)}, bounds {bound}")
    assert np.all(np.abs(left - right) <= bound)
    with pytest.raises(ValueError, match="times must be >= 0"):
        spin_up_profile([-1.0, 2.0])
    with pytest.raises(ValueError, match="spin-up time T = 0"):
        spin_up_profile(1.0, W, 0.0)


def test_profile_rates_are_derivatives():
    """theta' and theta'' against central differences of theta and theta' (the profile is C^3
    but its 4th derivative jumps at T: sample times keep 2 steps away from T)."""
    h = 1e-2
    t = np.linspace(0.1, 19.9, 397)
    t = t[np.abs(t - T) > 2 * h]
    _, rate, acc = spin_up_profile(t, W, T)
    for k, exact in ((0, rate), (1, acc)):

        def diff(step, k=k):
            return (spin_up_profile(t + step, W, T)[k] - spin_up_profile(t - step, W, T)[k]) / (
                2 * step
            )

        fine = diff(h / 2)
        trunc = np.max(np.abs(diff(h) - fine)) / 3  # Richardson: error of the h/2 difference
        rnd = 8 * EPS * W * 20.0 / h  # a few ulps of theta (<= w t_end) over the step
        err = np.max(np.abs(fine - exact))
        print(f"\nderivative {k + 1}: err {err:.3e}, estimate {trunc:.3e}")
        assert err <= FS * trunc + rnd


def test_cantilever_roots():
    roots = cantilever_roots(12)
    ref, err = reference_roots(12)
    print(f"\nroots: |error| / bound {np.abs(roots - ref) / err}")
    assert np.all(np.abs(roots - ref) <= err)
    with pytest.raises(ValueError, match="n_modes = 0"):
        cantilever_roots(0)


@pytest.mark.parametrize("n_modes", [5, 10])
def test_frequencies_at_rest_are_the_cantilevers(n_modes):
    """omega_k^2 = (beta_k L)^4 EI / (rho A L^4). The eigenfunction basis makes Galerkin exact:
    the error is the quadrature's (estimated with twice the Gauss points), the eigensolver's
    round-off (~ n eps lambda_max), the eigenfunctions' (exp(z) to eps z, z <= beta L) and
    the reference roots' (relative 4 d(beta L) / (beta L) on omega^2)."""
    lam = squared_frequencies(0.0, n_modes)
    ref, err = reference_roots(n_modes)
    exact = ref**4 * C**2

    def eig(n_quad):
        m = modal_matrices(BEAM, n_modes, n_quad)
        return np.sort(np.linalg.eigvals(np.linalg.solve(m["M"], m["K"])).real)

    quad_est = np.abs(eig(40 + 8 * n_modes) - eig(80 + 16 * n_modes))
    bound = (
        FS * quad_est
        + 4 * n_modes * EPS * lam.max()
        + 4 * EPS * ref.max() * lam
        + 4 * err / ref * exact
    )
    ratio = np.max(np.abs(lam - exact) / bound)
    print(f"\n{n_modes} modes: rel. error {np.abs(lam / exact - 1)}, err / bound {ratio:.3f}")
    assert np.all(np.abs(lam - exact) <= bound)
    mass = modal_matrices(BEAM, n_modes)["M"] / (BEAM.rho_a * BEAM.length)
    assert np.abs(mass - np.eye(n_modes)).max() <= 4 * n_modes * EPS * ref.max()


def test_static_tip_under_the_tangential_load():
    """At rest under the spin-up's load ``-rho A Omega' x`` (Omega' = 1): tip deflection
    ``-11 rho A L^5 / (120 EI)`` (a cantilever under a triangular load). The modal terms are
    ``4 (-1)^k rho A L^5 / (EI (beta_k L)^6)`` (f_i = 2 rho A L^2 / (beta_i L)^2, phi_i(L) =
    2 (-1)^(i+1)): an alternating series with decreasing terms, whose error after n terms is
    below the next term."""
    exact = -11 * BEAM.rho_a * BEAM.length**5 / (120 * BEAM.ei)
    roots = cantilever_roots(8)
    for n in range(1, 8):
        mat = modal_matrices(BEAM, n)
        v = mat["tip"] @ np.linalg.solve(mat["K"], -mat["f"])
        next_term = 4 * BEAM.rho_a * BEAM.length**5 / (BEAM.ei * roots[n] ** 6)
        print(f"\n{n} modes: tip {v:.12f} m, error {v - exact:.3e}, next term {next_term:.3e}")
        assert abs(v - exact) <= next_term + 64 * EPS * abs(exact)


def rayleigh_southwell() -> float:
    """``S = int_0^1 (1 - xi^2)/2 phi'^2 dxi / int_0^1 phi^2 dxi`` for the first clamped-free
    mode (written here in its direct form), by adaptive Gauss-Kronrod quadrature."""
    b = ROOT1
    sigma = (math.cosh(b) + math.cos(b)) / (math.sinh(b) + math.sin(b))

    def phi(x):
        return math.cosh(b * x) - math.cos(b * x) - sigma * (math.sinh(b * x) - math.sin(b * x))

    def dphi(x):
        z = b * x
        return b * (math.sinh(z) + math.sin(z) - sigma * (math.cosh(z) - math.cos(z)))

    num = quad(lambda x: 0.5 * (1 - x * x) * dphi(x) ** 2, 0, 1, epsabs=0, epsrel=1e-13)[0]
    return num / quad(lambda x: phi(x) ** 2, 0, 1, epsabs=0, epsrel=1e-13)[0]


def test_southwell_law_of_the_rotating_frequencies():
    """One mode: ``omega^2 = omega_0^2 + (S - 1) Omega^2`` exactly (the in-plane softening
    -Omega^2 included), S the Rayleigh integral of the first mode; S against the literature's
    Southwell coefficient 1.193 of a uniform cantilever with zero hub radius (Wright et al.,
    rounded: +- 5e-4). Unstiffened: ``omega_k^2 = omega_0k^2 - Omega^2`` for every mode. Six
    modes: ``(omega_1^2 - omega_0^2) / Omega^2 -> S - 1`` as Omega -> 0 (first-order
    perturbation with the exact mode), error O(Omega^2) estimated from Omega and Omega/2."""
    s = rayleigh_southwell()
    print(f"\nSouthwell coefficient (Rayleigh integral, first mode): S = {s:.9f}")
    assert abs(s - 1.193) <= 5e-4
    lam0 = squared_frequencies(0.0, 1)[0]
    rnd = 64 * EPS * (lam0 + W**2 * s)  # eigh of 1x1 matrices and the quadrature's round-off
    # the relative quadrature error of S (epsrel 1e-13 on two integrals) adds 2e-13 S Omega^2
    for omega in (0.5, 2.0, 4.0, 8.0):
        lam = squared_frequencies(omega, 1)[0]
        assert abs(lam - (lam0 + (s - 1) * omega**2)) <= rnd + 2e-13 * s * omega**2
    lam0_6 = squared_frequencies(0.0, 6)
    for omega in (1.0, 4.0):
        lam = squared_frequencies(omega, 6, stiffening=False)
        assert np.all(np.abs(lam - (lam0_6 - omega**2)) <= 16 * 6 * EPS * lam0_6.max())
        assert (lam[0] < 0) == (omega > math.sqrt(lam0_6[0]))  # divergence beyond omega_1

    def slope(omega):
        return (squared_frequencies(omega, 6)[0] - lam0_6[0]) / omega**2

    coarse, fine = slope(0.2), slope(0.1)
    est = abs(coarse - fine) / 3  # slope(O) = S - 1 + c O^2: error of the O = 0.1 value
    rnd6 = 16 * 6 * EPS * lam0_6.max() / 0.1**2
    omega_w = math.sqrt(squared_frequencies(W, 6)[0])
    print(f"six modes: slope(0.1) - (S - 1) = {fine - (s - 1):.3e}, estimate {est:.3e}")
    print(f"omega_1 = {math.sqrt(lam0):.6f} rad/s at rest, {omega_w:.6f} at 4 rad/s (stiffened)")
    assert abs(fine - (s - 1)) <= FS * est + rnd6
    assert coarse < fine < s - 1  # Ritz with more modes lies below the one-mode Rayleigh line


def test_spin_up_modal_convergence():
    """The stiffened tip history with 1..6 modes: the largest change from n to n + 1 modes
    shrinks with n; the integrator's error (a run at rtol 1e-12) is far below the last one."""
    t = np.linspace(0.0, 20.0, 801)
    runs = {n: tip_deflection(t, W, T, n_modes=n) for n in range(1, 7)}
    changes = [np.max(np.abs(runs[n + 1] - runs[n])) for n in range(1, 6)]
    print("\nn  min v_tip (m)   at t (s)  max |v_tip| t > T  v_tip(20 s)     change to n+1")
    for n, v in runs.items():
        after = np.max(np.abs(v[t > T]))
        change = f"{changes[n - 1]:.3e}" if n < 6 else ""
        print(f"{n}  {v.min():.9f}  {t[v.argmin()]:7.3f}  {after:.6e}       {v[-1]:.6e}  {change}")
    assert all(b < a for a, b in zip(changes, changes[1:], strict=False))
    tight = spin_up_response(t, W, T, n_modes=6, rtol=1e-12, atol=1e-15)["v_tip"]
    assert np.max(np.abs(tight - runs[6])) <= 1e-3 * changes[-1]
    assert np.all(np.abs(runs[6][t > T]) < 0.01)  # bounded: a few mm of free vibration


def test_unstiffened_diverges_stiffened_does_not():
    """Once Omega(t) > omega_1 (t_c from the profile) the unstiffened first mode grows: after
    T it is ``q1(t) = q1(T) cosh(s (t - T)) + q1'(T)/s sinh(s (t - T))``, ``s = sqrt(w^2 -
    omega_1^2)`` (modes decoupled without stiffening); the stiffened tip stays below its
    spin-up peak and within a cm after T."""
    omega1 = ROOT1**2 * C
    t_c = brentq(lambda x: spin_up_profile(x, W, T)[1] - omega1, 0.0, T)
    t = np.linspace(0.0, 20.0, 401)
    free = spin_up_response(t, W, T, n_modes=2, stiffening=False)
    stiff = spin_up_response(t, W, T, n_modes=2)
    tight = spin_up_response(t, W, T, n_modes=2, stiffening=False, rtol=1e-12, atol=1e-15)
    s = math.sqrt(W**2 - omega1**2)
    i = np.searchsorted(t, T)
    q1 = free["q"][i, 0] * np.cosh(s * (t[i:] - T)) + free["q_dot"][i, 0] / s * np.sinh(
        s * (t[i:] - T)
    )
    err = np.abs(free["q"][i:, 0] - q1)
    # integrator: truncation from a run at rtol 1e-12, and its round-off (an ulp per stage
    # sum, 2 per step, accumulated over the nfev / 12 steps); round-off of the closed form:
    # cosh/sinh of s (t - T) to a few ulps of 1 + s (t - T), and the model's omega_1^2 (a
    # Gauss sum of n_quad = 56 terms, to n_quad eps omega_1^2) shifting s by n_quad eps
    # omega_1^2 / (2 s) over t - T
    dt = t[i:] - T
    rnd = 2 * EPS * free["nfev"] / 12 + 8 * EPS * (1 + s * dt) + dt * 56 * EPS * omega1**2 / (2 * s)
    bound = FS * np.abs(free["q"][i:, 0] - tight["q"][i:, 0]) + rnd * np.abs(q1)
    v_free, v_stiff = np.abs(free["v_tip"]), np.abs(stiff["v_tip"])
    print(f"\nt_c = {t_c:.4f} s (Omega = omega_1 = {omega1:.6f} rad/s), growth s = {s:.6f}/s")
    print(
        f"unstiffened |v_tip|: {np.interp(t_c, t, v_free):.3f} m at t_c, {v_free[-1]:.3e} m at 20 s"
    )
    print(f"stiffened max {v_stiff.max():.4f} m; closed form err/bound {np.max(err / bound):.3f}")
    assert np.all(err <= bound)
    assert v_free[-1] > 1e9 * v_stiff.max()
    assert v_stiff.max() < np.max(v_free[t < t_c])  # softening already before t_c
    assert np.all(v_stiff[t > T] < 0.01)
