"""Independent *linear* Euler-Bernoulli references for a graded clamped-free cantilever.

These routines are deliberately independent of the nonlinear ANCF finite-element code: they solve
the small-deflection Euler-Bernoulli beam ``(EI(x) w'')'' = p(x)`` on ``0 <= x <= L`` with a clamp
at ``x = 0`` (``w = w' = 0``) and a free end at ``x = L`` (zero bending moment and shear force).
They are used to validate the ANCF code in its linear limit.

Conventions (all SI units)
--------------------------
* ``x`` -- axial coordinate (m), ``0`` at the clamp, ``L`` at the free end.
* Property callables take a numpy array of ``x`` (m) and return an array of the same shape
  (a scalar return value is broadcast):

  - ``EI(x)``   -- bending stiffness (N m^2),
  - ``q(x)``    -- distributed load *magnitude* (N/m), acting downward, i.e. in ``-y``,
  - ``rhoA(x)`` -- mass per unit length (kg/m).

* ``w`` -- transverse deflection (m), positive in ``+y``; a downward load gives ``w < 0``.
* ``slope`` -- ``dw/dx`` (rad), negative for a downward-bending cantilever.

Provided references
-------------------
* closed forms for the uniform beam (:func:`uniform_static_tip`, :func:`uniform_frequencies`,
  :func:`cantilever_beta_l`);
* the exact linear static solution of a graded beam by quadrature (:func:`exact_graded_static`);
* the "stepped beam" approximation -- ``N`` uniform segments with midpoint properties -- solved
  with transfer matrices, for statics (:func:`stepped_static`) and free vibration
  (:func:`stepped_frequencies`). The stepped beam converges to the graded beam with order 2 in
  ``1/N`` for smooth property profiles.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import integrate, optimize

logger = logging.getLogger(__name__)

Profile = Callable[[np.ndarray], np.ndarray]

__all__ = [
    "cantilever_beta_l",
    "exact_graded_static",
    "segment_nodes",
    "stepped_convergence",
    "stepped_frequencies",
    "stepped_static",
    "uniform_frequencies",
    "uniform_static_tip",
]

#: Gauss-Legendre order used on every interior panel of :func:`exact_graded_static`.
_GL_ORDER = 20
#: Relative tolerance of the adaptive quadratures used on the end panels.
_QUAD_EPSREL = 1e-12


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _evaluate(f: Profile, x: np.ndarray | float) -> np.ndarray:
    """Evaluate a property callable at ``x`` (m) and return a float array of ``x``'s shape."""
    xa = np.asarray(x, dtype=float)
    values = np.asarray(f(xa), dtype=float)
    return np.array(np.broadcast_to(values, xa.shape), dtype=float)


def _scalar(f: Profile) -> Callable[[float], float]:
    """Wrap an array property callable as a scalar function (for :func:`scipy.integrate.quad`)."""

    def g(t: float) -> float:
        return float(_evaluate(f, np.array([t]))[0])

    return g


def _quad(func: Callable[[float], float], a: float, b: float) -> float:
    """Adaptive quadrature of ``func`` on ``[a, b]`` with a tight relative tolerance.

    Used on the panels that touch ``x = 0`` or ``x = L``, where power-law profiles such as
    ``(x/L)**0.5`` have a derivative singularity that would spoil Gauss-Legendre convergence.
    """
    if b <= a:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, err = integrate.quad(func, a, b, epsabs=0.0, epsrel=_QUAD_EPSREL, limit=200)
    if err > 1e-8 * max(abs(value), 1e-300):
        logger.debug("quad on [%g, %g]: value %.6e, error estimate %.2e", a, b, value, err)
    return float(value)


def segment_nodes(
    L: float, n_segments: int, breaks: Sequence[float] = (), refine: int = 1
) -> np.ndarray:
    """Segment boundaries (m) of a stepped beam: ``n_segments`` equal segments, or, with
    ``breaks`` (interior positions in m where a property profile has a kink, e.g. the
    breakpoints of a measured table), the pieces between them split into
    ``max(1, round(n_segments * piece / L))`` equal segments each, so every break is a
    boundary (each piece keeps the midpoint rule's even error expansion). ``refine`` splits
    every segment into that many equal parts: the nested meshes of a Richardson sequence."""
    if n_segments < 1:
        raise ValueError(f"n_segments must be >= 1, got {n_segments}")
    if L <= 0.0:
        raise ValueError(f"L must be positive, got {L}")
    if refine < 1:
        raise ValueError(f"refine must be >= 1, got {refine}")
    cuts = [0.0, *sorted({float(b) for b in breaks if 0.0 < float(b) < L}), L]
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        m = max(1, round(n_segments * (b - a) / L)) * refine
        parts.append(np.linspace(a, b, m + 1)[:-1])
    return np.append(np.concatenate(parts), L)


def _segment_midpoints(
    L: float, n_segments: int, nodes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | float]:
    """Return the node coordinates (m), the segment midpoints (m) and the segment length(s)
    (m): ``n_segments`` equal segments, or the segments between the given ``nodes``."""
    if nodes is None:
        if n_segments < 1:
            raise ValueError(f"n_segments must be >= 1, got {n_segments}")
        if L <= 0.0:
            raise ValueError(f"L must be positive, got {L}")
        x_nodes = np.linspace(0.0, L, n_segments + 1)
        return x_nodes, 0.5 * (x_nodes[:-1] + x_nodes[1:]), L / n_segments
    x_nodes = np.asarray(nodes, dtype=float)
    h = np.diff(x_nodes)
    if x_nodes.size < 2 or x_nodes[0] != 0.0 or x_nodes[-1] != L or np.any(h <= 0.0):
        raise ValueError("segment nodes must rise strictly from 0 to L")
    return x_nodes, 0.5 * (x_nodes[:-1] + x_nodes[1:]), h


# --------------------------------------------------------------------------------------------
# uniform-beam closed forms
# --------------------------------------------------------------------------------------------
def cantilever_beta_l(k: int) -> np.ndarray:
    """First ``k`` roots ``beta L`` (-) of the cantilever equation ``1 + cos(b) cosh(b) = 0``.

    The roots are found with :func:`scipy.optimize.brentq`. The equation is rewritten as
    ``cos b + 1/cosh b = 0`` (same roots; ``1/cosh`` evaluated without overflow); its ``i``-th
    root lies in ``((2i - 1) pi/2 - pi/2, (2i - 1) pi/2 + pi/2)`` close to ``(2i - 1) pi/2``.

    Returns
    -------
    numpy.ndarray
        ``[1.875104..., 4.694091..., 7.854757..., 10.995541..., ...]`` (length ``k``).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")

    def f(b: float) -> float:
        e = math.exp(-b)  # 1/cosh b = 2 e^-b / (1 + e^-2b): no overflow past b = 710
        return math.cos(b) + 2.0 * e / (1.0 + e * e)

    roots = np.empty(k)
    for i in range(1, k + 1):
        centre = (2 * i - 1) * math.pi / 2.0
        # cos b changes sign at `centre`; 1/cosh b < 1 only shifts the root within +-pi/2.
        a, b = centre - math.pi / 2.0 + 1e-12, centre + math.pi / 2.0 - 1e-12
        if i == 1:
            a = 1.0  # f(1) = cos 1 + 1/cosh 1 > 0 and f(pi) < 0
        # smooth f; rtol = 4 eps is scipy's floor, so the tolerance never asks below round-off
        roots[i - 1] = optimize.brentq(f, a, b, xtol=1e-15, rtol=4.0 * np.finfo(float).eps)
    return roots


def uniform_static_tip(q: float, L: float, EI: float) -> tuple[float, float]:
    """Tip deflection (m) and tip slope (rad) of a uniform cantilever under a uniform load.

    Parameters
    ----------
    q : float
        Load magnitude (N/m), acting downward.
    L : float
        Length (m).
    EI : float
        Bending stiffness (N m^2).

    Returns
    -------
    (float, float)
        ``(-q L^4 / (8 EI), -q L^3 / (6 EI))`` -- both negative for a downward load.
    """
    return -q * L**4 / (8.0 * EI), -q * L**3 / (6.0 * EI)


def uniform_frequencies(L: float, EI: float, rhoA: float, k: int) -> np.ndarray:
    """First ``k`` natural circular frequencies (rad/s) of a uniform clamped-free beam.

    ``omega_i = (beta_i L)^2 / L^2 * sqrt(EI / rhoA)`` with ``L`` (m), ``EI`` (N m^2) and
    ``rhoA`` (kg/m).
    """
    return cantilever_beta_l(k) ** 2 / L**2 * math.sqrt(EI / rhoA)


# --------------------------------------------------------------------------------------------
# exact graded statics by quadrature
# --------------------------------------------------------------------------------------------
def exact_graded_static(L: float, EI: Profile, q: Profile, n_points: int = 1001) -> dict:
    """Exact linear static solution of a graded cantilever under a graded downward load.

    The bending-moment magnitude (hogging, N m) is ``M(x) = int_x^L q(s) (s - x) ds``, the
    shear-force magnitude (N) is ``V(x) = int_x^L q(s) ds``, the curvature is
    ``w'' = -M / EI`` and ``w, w'`` are integrated from the clamp with ``w(0) = w'(0) = 0``.

    The interval is split into ``n_points - 1`` equal panels. On every panel the increments

    * ``V(a) - V(b) = int_a^b q ds``,
    * ``M(a) - M(b) - (b - a) V(b) = int_a^b q(s) (s - a) ds``,
    * ``w'(b) - w'(a) = -int_a^b M / EI dt``,
    * ``w(b) - w(a) - (b - a) w'(a) = -int_a^b (b - t) M(t) / EI(t) dt``,

    are exact identities, with ``M(t) = M(b) + (b - t) V(b) + int_t^b q(s) (s - t) ds`` inside the
    panel. Interior panels use ``20``-point Gauss-Legendre rules (spectrally accurate for
    profiles that are smooth in the interior); the two end panels use adaptive
    :func:`scipy.integrate.quad`, so that power laws like ``(x/L)**0.5`` (singular derivative at
    an end) are integrated to ~1e-12 as well. Tip values therefore reach ~1e-13 relative accuracy.

    Parameters
    ----------
    L : float
        Beam length (m).
    EI : callable
        Bending stiffness ``EI(x)`` (N m^2).
    q : callable
        Load magnitude ``q(x)`` (N/m), acting downward.
    n_points : int
        Number of output stations (>= 2), equally spaced on ``[0, L]``.

    Returns
    -------
    dict
        ``x`` (m), ``w`` (m, negative downward), ``slope`` (rad), ``moment`` (hogging moment
        magnitude, N m), ``shear`` (shear-force magnitude, N), ``tip_deflection`` (m) and
        ``tip_slope`` (rad).
    """
    if n_points < 2:
        raise ValueError(f"n_points must be >= 2, got {n_points}")
    if L <= 0.0:
        raise ValueError(f"L must be positive, got {L}")
    x = np.linspace(0.0, L, n_points)
    a, b = x[:-1], x[1:]
    h = b - a
    xi, wgt = np.polynomial.legendre.leggauss(_GL_ORDER)
    rule = (0.5 * (1.0 + xi), 0.5 * wgt)  # Gauss-Legendre on [0, 1]
    end_panels = sorted({0, n_points - 2})
    i_q0, i_q1 = _panel_load_integrals(q, a, b, rule, end_panels)
    # backward recurrence for V and M at the nodes (free end: M = V = 0)
    V = np.zeros(n_points)
    M = np.zeros(n_points)
    for j in range(n_points - 2, -1, -1):
        V[j] = V[j + 1] + i_q0[j]
        M[j] = M[j + 1] + h[j] * V[j + 1] + i_q1[j]
    i_k0, i_k1 = _panel_curvature_integrals(q, EI, a, b, rule, end_panels, M, V)
    # forward recurrence for slope and deflection from the clamp
    slope = np.zeros(n_points)
    w = np.zeros(n_points)
    for j in range(n_points - 1):
        slope[j + 1] = slope[j] - i_k0[j]
        w[j + 1] = w[j] + h[j] * slope[j] - i_k1[j]
    logger.debug(
        "exact_graded_static: n_points=%d, tip w=%.12e m, tip slope=%.12e rad",
        n_points,
        w[-1],
        slope[-1],
    )
    return {
        "x": x,
        "w": w,
        "slope": slope,
        "moment": M,
        "shear": V,
        "tip_deflection": float(w[-1]),
        "tip_slope": float(slope[-1]),
    }


def _panel_load_integrals(q: Profile, a, b, rule, end_panels):
    """``int_a^b q ds`` and ``int_a^b q(s) (s - a) ds`` of every panel (Gauss-Legendre; adaptive
    quadrature on the end panels)."""
    u, wu = rule
    h = b - a
    s = a[:, None] + h[:, None] * u[None, :]
    qs = _evaluate(q, s)
    i_q0 = h * (qs @ wu)
    i_q1 = h * ((qs * (s - a[:, None])) @ wu)
    q_sc = _scalar(q)
    for j in end_panels:
        i_q0[j] = _quad(q_sc, a[j], b[j])
        i_q1[j] = _quad(lambda t, aj=a[j]: q_sc(t) * (t - aj), a[j], b[j])
    return i_q0, i_q1


def _panel_curvature_integrals(q: Profile, EI: Profile, a, b, rule, end_panels, M, V):
    """``int_a^b M / EI dt`` and ``int_a^b (b - t) M(t) / EI(t) dt`` of every panel, with the
    moment inside the panel from its value and the shear at ``b`` plus the local load."""
    u, wu = rule
    h = b - a
    t = a[:, None] + h[:, None] * u[None, :]  # (n_pan, p)
    span = b[:, None] - t  # length of [t, b]
    ss = t[:, :, None] + span[:, :, None] * u[None, None, :]  # (n_pan, p, p)
    local = span**2 * ((_evaluate(q, ss) * u[None, None, :]) @ wu)  # int_t^b q(s)(s-t) ds
    m_t = M[1:, None] + span * V[1:, None] + local
    kappa = m_t / _evaluate(EI, t)  # curvature magnitude M/EI (1/m)
    i_k0 = h * (kappa @ wu)
    i_k1 = h * ((kappa * span) @ wu)
    q_sc = _scalar(q)
    ei_sc = _scalar(EI)
    for j in end_panels:
        aj, bj, mb, vb = a[j], b[j], M[j + 1], V[j + 1]

        def m_scalar(tt: float, bj: float = bj, mb: float = mb, vb: float = vb) -> float:
            loc = _quad(lambda ss_: q_sc(ss_) * (ss_ - tt), tt, bj)
            return mb + (bj - tt) * vb + loc

        i_k0[j] = _quad(lambda tt: m_scalar(tt) / ei_sc(tt), aj, bj)
        i_k1[j] = _quad(lambda tt, bj=bj: (bj - tt) * m_scalar(tt) / ei_sc(tt), aj, bj)
    return i_k0, i_k1


# --------------------------------------------------------------------------------------------
# stepped beam: statics
# --------------------------------------------------------------------------------------------
def _static_field_matrix(h: float, ei: float, qi: float) -> np.ndarray:
    """5x5 extended field matrix of a uniform, uniformly loaded segment.

    State ``z = [w, w', M, V, 1]`` with the sign convention of :func:`stepped_static`:
    ``M = EI w''`` (sagging positive), ``V = dM/dx`` and ``dV/dx = -q`` (downward load ``q``).
    """
    return np.array(
        [
            [1.0, h, h**2 / (2 * ei), h**3 / (6 * ei), -qi * h**4 / (24 * ei)],
            [0.0, 1.0, h / ei, h**2 / (2 * ei), -qi * h**3 / (6 * ei)],
            [0.0, 0.0, 1.0, h, -qi * h**2 / 2],
            [0.0, 0.0, 0.0, 1.0, -qi * h],
            [0.0, 0.0, 0.0, 0.0, 1.0],
        ]
    )


def stepped_static(
    L: float, EI: Profile, q: Profile, n_segments: int, nodes: np.ndarray | None = None
) -> dict:
    """Linear statics of the *stepped beam* by 5x5 extended transfer matrices.

    The graded beam is replaced by ``n_segments`` uniform segments of length ``h = L/N``, each with
    ``EI`` and ``q`` evaluated at the segment midpoint. The state vector is
    ``z = [w, w', M, V, 1]`` with

    * ``w`` deflection (m, positive ``+y``), ``w'`` slope (rad),
    * ``M = EI w''`` bending moment (N m, *sagging positive*; the cantilever moment is hogging,
      hence ``M < 0``),
    * ``V = dM/dx`` shear force (N); equilibrium gives ``dV/dx = -q`` for the downward load
      magnitude ``q`` (N/m),
    * the constant ``1`` carries the load terms.

    With ``z_N = T_N ... T_1 z_0`` and ``z_0 = [0, 0, M0, V0, 1]`` (clamp), the free-end conditions
    ``M(L) = V(L) = 0`` give a 2x2 linear system for the unknown clamp values ``M0, V0``
    (for a uniform beam ``M0 = -q L^2/2``, ``V0 = q L``).

    Parameters
    ----------
    L : float
        Beam length (m).
    EI : callable
        Bending stiffness ``EI(x)`` (N m^2).
    q : callable
        Load magnitude ``q(x)`` (N/m), acting downward.
    n_segments : int
        Number of uniform segments ``N >= 1``.
    nodes : array, optional
        Segment boundaries (m) from 0 to ``L`` (:func:`segment_nodes`) instead of ``N``
        equal segments.

    Returns
    -------
    dict
        ``tip_deflection`` (m), ``tip_slope`` (rad), ``x_nodes`` (m, ``N + 1`` values),
        ``w_nodes`` (m), ``slope_nodes`` (rad), ``clamp_moment`` ``M0`` (N m, sagging
        positive) and ``clamp_shear`` ``V0`` (N).
    """
    x_nodes, x_mid, h = _segment_midpoints(L, n_segments, nodes)
    ei = _evaluate(EI, x_mid)
    qi = _evaluate(q, x_mid)
    if np.any(ei <= 0.0):
        raise ValueError("EI must be positive on [0, L]")
    hs = np.broadcast_to(h, ei.shape)
    mats = [_static_field_matrix(hh, e, f) for hh, e, f in zip(hs, ei, qi, strict=True)]

    total = np.eye(5)
    for mat in mats:
        total = mat @ total
    # [M(L), V(L)] = A [M0, V0] + r = 0
    A = total[2:4, 2:4]
    r = total[2:4, 4]
    m0, v0 = np.linalg.solve(A, -r)

    z = np.array([0.0, 0.0, m0, v0, 1.0])
    states = [z]
    for mat in mats:
        z = mat @ z
        states.append(z)
    states = np.array(states)
    logger.debug(
        "stepped_static: N=%d, M0=%.6e N m, V0=%.6e N, residual M(L)=%.2e, V(L)=%.2e",
        x_mid.size,
        m0,
        v0,
        states[-1, 2],
        states[-1, 3],
    )
    return {
        "tip_deflection": float(states[-1, 0]),
        "tip_slope": float(states[-1, 1]),
        "x_nodes": x_nodes,
        "w_nodes": states[:, 0].copy(),
        "slope_nodes": states[:, 1].copy(),
        "clamp_moment": float(m0),
        "clamp_shear": float(v0),
    }


def stepped_convergence(
    L: float, EI: Profile, q: Profile, ns: Sequence[int]
) -> list[tuple[int, float]]:
    """Tip deflections (m) of the stepped beam for every segment count in ``ns``.

    Returns a list of ``(N, tip_deflection)`` pairs in the order of ``ns``.
    """
    return [(int(n), stepped_static(L, EI, q, int(n))["tip_deflection"]) for n in ns]


# --------------------------------------------------------------------------------------------
# stepped beam: free vibration
# --------------------------------------------------------------------------------------------
#: Index pairs of the second compound matrix of a 4x4 matrix (lexicographic order).
_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
_MV = _PAIRS.index((2, 3))


def _krylov_scaled(z4: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scaled Krylov functions as entire functions of ``z4 = z^4 = (beta h)^4 >= 0``.

    Returns ``S(z)``, ``T(z)/z``, ``U(z)/z^2`` and ``V(z)/z^3`` where
    ``S = (cosh z + cos z)/2``, ``T = (sinh z + sin z)/2``, ``U = (cosh z - cos z)/2``,
    ``V = (sinh z - sin z)/2``. Power series (no cancellation) are used for ``z < 1``.
    """
    z4 = np.asarray(z4, dtype=float)
    s = np.empty_like(z4)
    t = np.empty_like(z4)
    u = np.empty_like(z4)
    v = np.empty_like(z4)
    small = z4 < 1.0
    if np.any(small):
        y = z4[small]
        cs, ct, cu, cv = 1.0, 1.0, 0.5, 1.0 / 6.0  # 1/0!, 1/1!, 1/2!, 1/3!
        ss, st, su, sv = (np.full_like(y, c) for c in (cs, ct, cu, cv))
        term = np.ones_like(y)
        for m in range(1, 9):  # y^8/(32)! ~ 4e-36: converged to machine precision
            term = term * y
            n = 4 * m
            cs = cs / ((n - 3) * (n - 2) * (n - 1) * n)
            ct = ct / ((n - 2) * (n - 1) * n * (n + 1))
            cu = cu / ((n - 1) * n * (n + 1) * (n + 2))
            cv = cv / (n * (n + 1) * (n + 2) * (n + 3))
            ss = ss + cs * term
            st = st + ct * term
            su = su + cu * term
            sv = sv + cv * term
        s[small], t[small], u[small], v[small] = ss, st, su, sv
    big = ~small
    if np.any(big):
        z = z4[big] ** 0.25
        ch, sh, c, sn = np.cosh(z), np.sinh(z), np.cos(z), np.sin(z)
        s[big] = 0.5 * (ch + c)
        t[big] = 0.5 * (sh + sn) / z
        u[big] = 0.5 * (ch - c) / z**2
        v[big] = 0.5 * (sh - sn) / z**3
    return s, t, u, v


def _vibration_field_matrices(
    omega: np.ndarray,
    h: float,
    ei: np.ndarray | float,
    rhoa: np.ndarray | float,
    L: float,
    ei_ref: float,
) -> np.ndarray:
    """Field transfer matrices (shape ``broadcast(omega, ei, rhoa).shape + (4, 4)``) of uniform
    vibrating segments of length ``h`` (m), stiffness ``ei`` (N m^2) and mass ``rhoa`` (kg/m).

    Physical state ``[w, w', M, V]`` with ``M = EI w''`` and ``V = EI w'''`` (so that
    ``V' = rhoA omega^2 w`` for harmonic motion), and ``beta^4 = rhoA omega^2 / EI``:

    ``w(h) = S w0 + h T^ w0' + h^2 U^ M0/EI + h^3 V^ V0/EI``, etc., with the scaled Krylov
    functions ``T^ = T/z, U^ = U/z^2, V^ = V/z^3`` of ``z = beta h``. The matrix is returned for
    the dimensionless state ``[w/L, w', M L/EI_ref, V L^2/EI_ref]``.
    """
    b4 = rhoa * omega**2 / ei  # beta^4 (1/m^4)
    s, t, u, v = _krylov_scaled(b4 * h**4)
    mw2 = rhoa * omega**2  # EI beta^4 (N/m^2 per m)
    T = np.empty(b4.shape + (4, 4))
    T[..., 0, 0] = s
    T[..., 0, 1] = h * t
    T[..., 0, 2] = h**2 * u / ei
    T[..., 0, 3] = h**3 * v / ei
    T[..., 1, 0] = b4 * h**3 * v
    T[..., 1, 1] = s
    T[..., 1, 2] = h * t / ei
    T[..., 1, 3] = h**2 * u / ei
    T[..., 2, 0] = mw2 * h**2 * u
    T[..., 2, 1] = mw2 * h**3 * v
    T[..., 2, 2] = s
    T[..., 2, 3] = h * t
    T[..., 3, 0] = mw2 * h * t
    T[..., 3, 1] = mw2 * h**2 * u
    T[..., 3, 2] = b4 * h**3 * v
    T[..., 3, 3] = s
    d = np.array([1.0 / L, 1.0, L / ei_ref, L**2 / ei_ref])
    return T * d[:, None] / d[None, :]


_IA = np.array([[a for _ in _PAIRS] for a, _ in _PAIRS])
_IB = np.array([[b for _ in _PAIRS] for _, b in _PAIRS])
_JC = np.array([[c for c, _ in _PAIRS] for _ in _PAIRS])
_JD = np.array([[d for _, d in _PAIRS] for _ in _PAIRS])


#: (segment, frequency) pairs per block of :func:`_frequency_determinant`: each pair takes about
#: 2.3 kB at the peak of a block (the 4x4 field matrix, the 6x6 compound and their
#: temporaries), so a block stays near 40 MB (it was all segments at once: 250 kB per segment
#: on the 870-point scan of three modes, 25 GB for 100000 segments)
COMPOUND_BLOCK = 1 << 14


def _second_compound(T: np.ndarray) -> np.ndarray:
    """Second compound (all 2x2 minors) of a stack of 4x4 matrices: shape ``(..., 6, 6)``.

    ``C[(a, b), (c, d)] = T[a, c] T[b, d] - T[a, d] T[b, c]`` for the index pairs of
    :data:`_PAIRS`.
    """
    return T[..., _IA, _JC] * T[..., _IB, _JD] - T[..., _IA, _JD] * T[..., _IB, _JC]


def _n_substeps(omega_max: float, h: float, ei: np.ndarray, rhoa: np.ndarray) -> int:
    """Number of identical sub-steps per segment so that ``beta h_sub <= 1.5`` at ``omega_max``.

    Splitting a uniform segment into equal parts is exact; it only keeps the 2x2 minors of each
    step free of the cancellation between ``exp(+beta h)`` and ``exp(-beta h)`` terms.
    """
    beta_h = float(np.max((rhoa * omega_max**2 / ei) ** 0.25 * h))
    return max(1, int(math.ceil(beta_h / 1.5)))


def _frequency_determinant(
    omega: np.ndarray,
    h: float,
    ei: np.ndarray,
    rhoa: np.ndarray,
    L: float,
    n_sub: int = 1,
) -> np.ndarray:
    """Sign-preserving normalised clamped-free frequency determinant at ``omega`` (rad/s).

    The determinant of the 2x2 block relating the free-end ``[M, V]`` to the clamp ``[M0, V0]``
    equals the ``(M, V)`` component of ``(T_N ... T_1)(e_M ^ e_V)``, the wedge product of the
    two clamp columns (Cauchy-Binet). It is propagated with the second compound matrices of
    the segment matrices (compound-matrix method), rescaled after every segment by its largest
    magnitude. The scaling factor is positive, so sign changes and roots are exactly those of
    the true determinant, and neither overflow (large ``N``, high modes) nor the cancellation
    of exponentially growing solutions occurs. Each segment is applied as ``n_sub`` identical
    sub-steps of length ``h / n_sub``. The result lies in ``[-1, 1]``; at ``omega = 0`` it
    is ``1``.
    """
    omega = np.atleast_1d(np.asarray(omega, dtype=float))
    ei_ref = float(np.max(ei))
    hs = np.broadcast_to(np.asarray(h, dtype=float) / n_sub, ei.shape)[:, None]
    y = np.zeros(omega.shape + (6, 1))
    y[..., _MV, 0] = 1.0
    # the segment compounds (segments x frequencies x 6 x 6), a block of segments at a time:
    # the memory stays at one block, whatever the number of segments
    per = max(1, COMPOUND_BLOCK // omega.size)
    for start in range(0, ei.size, per):
        blk = slice(start, start + per)
        C = _second_compound(
            _vibration_field_matrices(
                omega[None, :], hs[blk], ei[blk, None], rhoa[blk, None], L, ei_ref
            )
        )
        for Ci in C:
            for _ in range(n_sub):
                y = Ci @ y
                y = y / np.max(np.abs(y), axis=-2, keepdims=True)
    return y[..., _MV, 0]


def _determinant_roots(omega_hi, n_grid, n_sub, h, ei, rhoa, L) -> list[float]:
    """Roots of the frequency determinant below ``omega_hi``: sign changes on a grid uniform in
    ``sqrt(omega)`` refined by :func:`scipy.optimize.brentq` (a refined ``|det|`` not small
    against the bracket values is a pole and rejected)."""

    def det(om: float) -> float:
        return float(_frequency_determinant(np.array([om]), h, ei, rhoa, L, n_sub)[0])

    grid = np.linspace(0.0, math.sqrt(omega_hi), n_grid + 1) ** 2
    f = _frequency_determinant(grid, h, ei, rhoa, L, n_sub)
    roots = []
    for i in range(n_grid):
        fa, fb = f[i], f[i + 1]
        if fa == 0.0:
            if i > 0:
                roots.append(float(grid[i]))
            continue
        if fa * fb > 0.0 or fb == 0.0:
            continue
        # a smooth determinant between grid points; xtol = 1e-14 of the bracket end (45 ulps)
        r = optimize.brentq(det, grid[i], grid[i + 1], xtol=1e-14 * grid[i + 1], rtol=1e-15)
        fr = abs(det(r))
        if fr > 1e-6 * max(abs(fa), abs(fb)):
            logger.warning(
                "stepped_frequencies: rejected sign change at omega=%.6e rad/s "
                "(|det|=%.2e, bracket %.2e, %.2e): pole",
                r,
                fr,
                fa,
                fb,
            )
            continue
        roots.append(r)
    return roots


def stepped_frequencies(
    L: float, EI: Profile, rhoA: Profile, n_segments: int, k: int, nodes: np.ndarray | None = None
) -> np.ndarray:
    """First ``k`` natural circular frequencies (rad/s, ascending) of the stepped cantilever.

    The beam is replaced by ``n_segments`` uniform segments of length ``h = L/N`` with ``EI``
    (N m^2) and ``rhoA`` (kg/m) evaluated at the segment midpoints. Each segment has the exact
    4x4 field transfer matrix of a uniform vibrating Euler-Bernoulli beam (Krylov functions).
    The frequency equation is ``det B(omega) = 0`` where ``B`` is the 2x2 block of the overall
    transfer matrix mapping the clamp ``[M0, V0]`` to the free-end ``[M(L), V(L)]``.

    Root finding:

    1. Upper bound: by the Rayleigh/Courant-Fischer principle, ``omega_k`` is at most the
       ``k``-th frequency of a uniform beam with ``max EI`` and ``min rhoA``.
    2. Scan ``sqrt(omega)`` on a grid fine enough for ~64 points per ``pi`` of the WKB phase
       ``sqrt(omega) * sum h (rhoA/EI)^(1/4)`` (eigenvalues are ~``pi`` apart in this phase).
    3. Refine every sign change with :func:`scipy.optimize.brentq`; reject a sign change whose
       refined ``|det|`` is not small compared with the bracket values (a pole, not a root).
       The determinant is evaluated in the normalised compound-matrix form of
       :func:`_frequency_determinant`, an entire function of ``omega^2`` scaled by a
       positive factor, so poles do not actually arise.
    4. If fewer than ``k`` roots were found, extend and refine the scan.

    Parameters
    ----------
    L : float
        Beam length (m).
    EI : callable
        Bending stiffness ``EI(x)`` (N m^2).
    rhoA : callable
        Mass per unit length ``rhoA(x)`` (kg/m).
    n_segments : int
        Number of uniform segments ``N >= 1``.
    k : int
        Number of frequencies wanted.
    nodes : array, optional
        Segment boundaries (m) from 0 to ``L`` (:func:`segment_nodes`) instead of ``N``
        equal segments.

    Returns
    -------
    numpy.ndarray
        ``omega_1 < ... < omega_k`` (rad/s).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    _, x_mid, h = _segment_midpoints(L, n_segments, nodes)
    ei = _evaluate(EI, x_mid)
    rhoa = _evaluate(rhoA, x_mid)
    if np.any(ei <= 0.0) or np.any(rhoa <= 0.0):
        raise ValueError("EI and rhoA must be positive on [0, L]")
    return _frequency_scan(L, h, ei, rhoa, k)


def _frequency_scan(
    L: float, h: np.ndarray | float, ei: np.ndarray, rhoa: np.ndarray, k: int
) -> np.ndarray:
    """The first ``k`` roots of the frequency determinant of segments of length(s) ``h`` (m) with
    ``ei`` and ``rhoa`` (steps 1-4 of :func:`stepped_frequencies`): scans up to the Rayleigh
    bound, doubled with a doubled grid density while fewer than ``k`` are found (6 tries)."""
    n_segments = ei.size
    omega_hi = float(uniform_frequencies(L, ei.max(), rhoa.min(), k)[-1]) * 1.05
    phase_per_sqrt_omega = float(np.sum(h * (rhoa / ei) ** 0.25))
    points_per_pi = 64
    roots: list[float] = []
    for attempt in range(6):
        n_grid = max(
            200,
            int(math.ceil(points_per_pi * phase_per_sqrt_omega * math.sqrt(omega_hi) / math.pi)),
        )
        n_sub = _n_substeps(omega_hi, h, ei, rhoa)
        roots = _determinant_roots(omega_hi, n_grid, n_sub, h, ei, rhoa, L)
        logger.debug(
            "stepped_frequencies: N=%d (x%d sub-steps), attempt %d, grid %d points up to "
            "%.4e rad/s, %d roots",
            n_segments,
            n_sub,
            attempt,
            n_grid,
            omega_hi,
            len(roots),
        )
        if len(roots) >= k:
            break
        omega_hi *= 2.0
        points_per_pi *= 2
    if len(roots) < k:
        raise RuntimeError(
            f"stepped_frequencies: found only {len(roots)} of {k} roots below {omega_hi:.4e} rad/s"
        )
    return np.array(sorted(roots)[:k])
