"""The spin-up beam of Kane, Ryan and Banerjee: a uniform cantilever clamped at the axis of a hub
whose angle follows a prescribed spin-up; assumed-modes (Galerkin) models of its transverse
deflection in the rotating frame, with and without centrifugal (geometric) stiffening. An
independent reference: plain numpy/scipy, nothing from the beam or multibody code.

Hub angle (:func:`spin_up_profile`), ``T`` the spin-up time (s), ``w`` the final rate (rad/s)::

    theta(t) = (w/T) (t^2/2 + (T/(2 pi))^2 (cos(2 pi t/T) - 1)),   t < T
             = w (t - T/2),                                          t >= T

so ``Omega = (w/T)(t - (T/(2 pi)) sin(2 pi t/T))`` and ``Omega_t = (w/T)(1 - cos(2 pi t/T))``
before ``T``; theta, Omega and Omega_t are continuous at ``T`` (Omega_t = 0 there).

Model (Euler-Bernoulli, hub radius zero, no gravity). In the frame turning with the hub, ``x``
along the undeformed beam (0 <= x <= L) and ``v(x, t)`` the transverse deflection (positive
towards the rotation), a material point sits at ``R(theta) (x + u, v)``; its inertial
acceleration along the rotating transverse axis is ``v_tt + Omega_t (x + u) + 2 Omega u_t -
Omega^2 v`` (subscripts: partial derivatives, ``Omega_t = dOmega/dt``). Dropping the axial
terms ``u`` and ``2 Omega u_t`` (of second order in the deflection) gives the classical linear
model, the "conventional" or unstiffened model::

    rho A (v_tt - Omega^2 v) + EI v_xxxx = -rho A Omega_t x                     (1)

which has the softening ``-Omega^2 v`` and no stiffening: its first mode loses stability once
``Omega`` exceeds the first bending frequency. The first-order model with geometric
(centrifugal) stiffening adds the work of the axial force of the centrifugal load,
``P(x) = int_x^L rho A Omega^2 s ds = rho A Omega^2 (L^2 - x^2)/2``, on the slope::

    rho A (v_tt - Omega^2 v) + EI v_xxxx - (P v_x)_x = -rho A Omega_t x          (2)

Galerkin with the clamped-free eigenfunctions ``phi_i`` (``v = sum_i phi_i(x) q_i(t)``; the
clamp ``v = v_x = 0`` at x = 0 and the free end hold for every phi_i; primes: d/dx)::

    M q_tt + (K + Omega^2 (s G - M)) q = -Omega_t f,    s = 1 (2) or 0 (1)
    M_ij = int rho A phi_i phi_j dx,   K_ij = int EI phi_i'' phi_j'' dx,
    G_ij = int rho A (L^2 - x^2)/2 phi_i' phi_j' dx,   f_i = int rho A x phi_i dx

(integrals over [0, L] by Gauss-Legendre quadrature). Tip: transverse ``v(L) = sum phi_i(L)
q_i``; axial, to the same order, the foreshortening ``-1/2 int_0^L v_x^2 dx = -1/2 q^T H q``
(``H_ij = int phi_i' phi_j' dx``) plus the quasi-static stretch of the centrifugal force
``int_0^L P/(E A) dx = rho Omega^2 L^3 / (3 E)`` (the axial modes, above 900 rad/s here, follow
the load quasi-statically). For constant ``Omega`` the squared frequencies are the generalized
eigenvalues of ``(K + Omega^2 (s G - M), M)``; for one mode ``omega^2 = omega_0^2 + (s S - 1)
Omega^2`` with the Southwell coefficient ``S = G_11 / M_11`` (the Rayleigh integral of the first
mode, about 1.193 for zero hub radius).

Magnitudes of the benchmark (6 modes): the tip lags by at most 0.5724 m (t = 6.84 s), near
the quasi-static lag 0.554 m at the peak load (t = T/2; 0.61 m for the beam at rest,
``11 rho A Omega_t L^5 / (120 EI)``, less the net stiffening ``(S - 1) Omega^2``), and vibrates
by about 5.4 mm after ``T``. The unstiffened model passes omega_1 = 2.816 rad/s at t = 9.09 s
and then grows like ``exp(sqrt(w^2 - omega_1^2) t)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import eigh
from scipy.optimize import brentq

__all__ = [
    "SpinUpBeam",
    "cantilever_modes",
    "cantilever_roots",
    "modal_matrices",
    "spin_up_profile",
    "spin_up_response",
    "squared_frequencies",
    "tip_deflection",
]


@dataclass(frozen=True)
class SpinUpBeam:
    """Uniform beam of the benchmark (SI): length ``length`` (m), cross-section ``area``
    (m^2), second moment ``inertia`` (m^4), density ``density`` (kg/m^3), Young's modulus
    ``modulus`` (Pa)."""

    length: float = 8.0
    area: float = 7.3e-5
    inertia: float = 8.218e-9
    density: float = 3000.0
    modulus: float = 7.0e10

    def __post_init__(self):
        for key in ("length", "area", "inertia", "density", "modulus"):
            value = getattr(self, key)
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"SpinUpBeam.{key} = {value!r}: must be finite and > 0")

    @property
    def rho_a(self) -> float:
        """Mass per length (kg/m)."""
        return self.density * self.area

    @property
    def ei(self) -> float:
        """Bending stiffness (N m^2)."""
        return self.modulus * self.inertia


def spin_up_profile(t, w: float = 4.0, T: float = 15.0):
    """Hub angle (rad), rate (rad/s) and acceleration (rad/s^2) of the spin-up (module doc)
    at times ``t >= 0`` (s, any shape), final rate ``w`` (rad/s), spin-up time ``T > 0`` (s)."""
    t = np.asarray(t, dtype=float)
    if not T > 0:
        raise ValueError(f"spin-up time T = {T!r}: must be > 0")
    if np.any(~(t >= 0)):
        raise ValueError(f"spin-up profile: times must be >= 0, got min {np.min(t)!r}")
    return _profile(t, w, T)


def _profile(t, w, T):
    """:func:`spin_up_profile` without the checks (the integrator's right-hand side)."""
    ts = np.minimum(t, T)  # the spin-up phase, frozen at T afterwards
    arg = 2.0 * np.pi * ts / T
    k = T / (2.0 * np.pi)
    before = t < T
    theta = np.where(before, (w / T) * (ts**2 / 2 + k**2 * (np.cos(arg) - 1.0)), w * (t - T / 2))
    rate = np.where(before, (w / T) * (ts - k * np.sin(arg)), w)
    acc = np.where(before, (w / T) * (1.0 - np.cos(arg)), 0.0)
    return theta, rate, acc


def cantilever_roots(n_modes: int) -> np.ndarray:
    """The first ``n_modes`` roots ``beta_k L`` of ``1 + cos(b) cosh(b) = 0`` (clamped-free),
    each bracketed in ``[(k - 1) pi, k pi]`` where ``cos(b) + 1/cosh(b)`` changes sign once."""
    if int(n_modes) != n_modes or n_modes < 1:
        raise ValueError(f"n_modes = {n_modes!r}: must be an integer >= 1")
    n_modes = int(n_modes)

    def f(b):
        return np.cos(b) + 1.0 / np.cosh(b)

    rtol = 4 * np.finfo(float).eps  # brentq's smallest allowed relative tolerance
    roots = [
        brentq(f, (k - 1) * np.pi, k * np.pi, xtol=1e-15, rtol=rtol) for k in range(1, n_modes + 1)
    ]
    return np.array(roots)


def cantilever_modes(xi, beta_l):
    """Clamped-free eigenfunctions ``phi(xi) = cosh(z) - cos(z) - sigma (sinh(z) - sin(z))``,
    ``z = b xi`` (``xi = x / L`` in [0, 1], ``b`` the roots ``beta_l``), ``sigma = (cosh b +
    cos b) / (sinh b + sin b)``, normalised by ``int_0^1 phi^2 dxi = 1``, with their first and
    second derivatives in ``xi``; each of shape ``xi.shape + (len(beta_l),)``. Evaluated as
    ``cosh z - sigma sinh z = ((1 - sigma) e^z + (1 + sigma) e^-z) / 2`` with ``1 - sigma =
    (sin b - cos b - e^-b) / (sinh b + sin b)``, free of the cancellation of large terms."""
    xi = np.asarray(xi, dtype=float)[..., None]
    b = np.asarray(beta_l, dtype=float)
    sigma = (np.cosh(b) + np.cos(b)) / (np.sinh(b) + np.sin(b))
    one_minus = (np.sin(b) - np.cos(b) - np.exp(-b)) / (np.sinh(b) + np.sin(b))
    z = b * xi
    grow, decay = 0.5 * one_minus * np.exp(z), 0.5 * (1.0 + sigma) * np.exp(-z)
    phi = grow + decay - np.cos(z) + sigma * np.sin(z)
    dphi = b * (grow - decay + np.sin(z) + sigma * np.cos(z))
    ddphi = b**2 * (grow + decay + np.cos(z) - sigma * np.sin(z))
    return phi, dphi, ddphi


def modal_matrices(beam: SpinUpBeam, n_modes: int, n_quad: int | None = None) -> dict:
    """Galerkin matrices of the module doc (SI): ``M``, ``K``, ``G`` (geometric, per unit
    Omega^2), ``f`` (load per unit Omega_t), ``H`` (foreshortening) and ``tip`` (``phi_i(L)``),
    by ``n_quad``-point Gauss-Legendre quadrature on [0, L] (default ``40 + 8 n_modes``)."""
    n_quad = 40 + 8 * int(n_modes) if n_quad is None else int(n_quad)
    nodes, weights = np.polynomial.legendre.leggauss(n_quad)
    xi, wq = 0.5 * (nodes + 1.0), 0.5 * weights
    roots = cantilever_roots(n_modes)
    phi, dphi, ddphi = cantilever_modes(xi, roots)
    L, rho_a = beam.length, beam.rho_a

    def integral(a, b, weight=1.0):  # int_0^1 weight a_i b_j dxi
        return np.einsum("q,qi,qj->ij", wq * weight, a, b)

    return {
        "M": rho_a * L * integral(phi, phi),
        "K": beam.ei / L**3 * integral(ddphi, ddphi),
        "G": rho_a * L * integral(dphi, dphi, 0.5 * (1.0 - xi**2)),
        "f": rho_a * L**2 * (wq * xi) @ phi,
        "H": integral(dphi, dphi) / L,
        "tip": cantilever_modes(1.0, roots)[0],
        "roots": roots,
    }


def squared_frequencies(
    omega_hub: float, n_modes: int, stiffening: bool = True, beam: SpinUpBeam | None = None
) -> np.ndarray:
    """Squared natural frequencies (rad^2/s^2, ascending) of the beam turning at the constant
    rate ``omega_hub`` (rad/s): eigenvalues of ``(K + Omega^2 (s G - M), M)``. A negative value
    is a divergent (unstable) mode."""
    mat = modal_matrices(beam or SpinUpBeam(), n_modes)
    s = 1.0 if stiffening else 0.0
    stiff = mat["K"] + omega_hub**2 * (s * mat["G"] - mat["M"])
    return eigh(stiff, mat["M"], eigvals_only=True)


def spin_up_response(
    t,
    w: float = 4.0,
    T: float = 15.0,
    n_modes: int = 6,
    stiffening: bool = True,
    beam: SpinUpBeam | None = None,
    rtol: float = 1e-10,
    atol: float = 1e-13,
) -> dict[str, np.ndarray]:
    """Tip motion in the rotating frame under the spin-up, from rest and undeformed at t = 0:
    ``v_tip`` (m, transverse, positive towards the rotation), ``u_tip_foreshortening``,
    ``u_tip_stretch`` and their sum ``u_tip`` (m, axial), and the modal coordinates ``q``
    (m, shape ``(len(t), n_modes)``) and their rates ``q_dot`` (m/s), at the sorted times
    ``t >= 0`` (s); ``nfev`` the right-hand-side evaluations (12 per DOP853 step).
    Integrated with DOP853 (``rtol``, ``atol`` in m and m/s on q, q'); the default 6 modes
    give the tip deflection to about 2e-5 m (the change to 7 and 8 modes); RuntimeError if
    the integrator fails."""
    beam = beam or SpinUpBeam()
    t = np.atleast_1d(np.asarray(t, dtype=float))
    spin_up_profile(t, w, T)  # validates t and T
    if np.any(np.diff(t) < 0):
        raise ValueError("spin_up_response: times t must be sorted")
    mat = modal_matrices(beam, n_modes)
    s = 1.0 if stiffening else 0.0
    minv = np.linalg.inv(mat["M"])  # M is the identity times rho A L to quadrature accuracy
    k0, k2, load = minv @ mat["K"], minv @ (s * mat["G"] - mat["M"]), minv @ mat["f"]
    n = int(n_modes)

    def rhs(time, y):
        _, rate, acc = _profile(time, w, T)
        return np.concatenate([y[n:], -(k0 + rate**2 * k2) @ y[:n] - acc * load])

    sol = solve_ivp(
        rhs, (0.0, t[-1]), np.zeros(2 * n), method="DOP853", t_eval=t, rtol=rtol, atol=atol
    )
    if not sol.success:
        raise RuntimeError(f"spin_up_response: DOP853 failed: {sol.message}")
    q = sol.y[:n].T
    _, rate, _ = spin_up_profile(t, w, T)
    fore = -0.5 * np.einsum("ti,ij,tj->t", q, mat["H"], q)
    stretch = beam.density * rate**2 * beam.length**3 / (3.0 * beam.modulus)
    return {
        "v_tip": q @ mat["tip"],
        "u_tip_foreshortening": fore,
        "u_tip_stretch": stretch,
        "u_tip": fore + stretch,
        "q": q,
        "q_dot": sol.y[n:].T,
        "nfev": sol.nfev,
    }


def tip_deflection(
    t,
    w: float = 4.0,
    T: float = 15.0,
    n_modes: int = 6,
    stiffening: bool = True,
    beam: SpinUpBeam | None = None,
) -> np.ndarray:
    """Transverse tip deflection (m) in the rotating frame at times ``t`` (s): the
    ``v_tip`` of :func:`spin_up_response` (``stiffening=True``: model (2), the reference;
    ``False``: the classical linear model (1), which diverges once Omega > omega_1)."""
    return spin_up_response(t, w, T, n_modes, stiffening, beam)["v_tip"]
