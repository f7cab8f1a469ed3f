"""Large-deflection reference: planar extensible elastica of a cantilever under its own weight.

This module is an *independent* reference for the geometrically nonlinear ANCF statics. It solves
the exact planar rod equations (no shear) as a two-point boundary-value problem with
:func:`scipy.integrate.solve_bvp`; nothing from the finite-element code is reused.

Kinematics and strain measures (identical to the ANCF element)
--------------------------------------------------------------
* Reference configuration: straight, along ``+x`` from the origin, reference arc length
  ``X in [0, L]`` (m).
* Current position ``r(X) = (x, y)`` (m) and tangent angle ``theta(X)`` (rad), measured from
  ``+x``, counter-clockwise positive, so a beam sagging under gravity has ``theta < 0``.
* ``r' = (1 + eps) (cos theta, sin theta)``, where ``' = d/dX`` and ``eps = |r'| - 1`` is the
  axial engineering (stretch - 1) strain (-).
* Curvature per unit *reference* length ``kappa = dtheta/dX = (r' x r'') / |r'|^2`` (1/m).

Constitutive law
----------------
* Axial force ``N = EA(X) eps`` (N), positive in tension, along the current tangent.
* Bending moment ``M = EI(X) kappa`` (N m), counter-clockwise positive.

Equilibrium and sign conventions
--------------------------------
The internal force ``n(X)`` and moment ``M(X)`` are those exerted by the *outer* part
``(X, L]`` on the *inner* part ``[0, X]`` (standard Cosserat convention, ``n' + f = 0`` and
``M' + r' x n = 0`` with ``a x b = a_x b_y - a_y b_x``). The only load is gravity, a force per
unit reference length ``f = (0, -q(X))`` with ``q = rhoA(X) g`` (N/m). The outer part carries
its weight ``W(X) = int_X^L q ds`` (N) and no other external load (free end), so its equilibrium
gives ``n(X) = (0, -W(X))``: the outer part pulls the inner part straight down. Hence

* ``N = n . t = -W sin(theta)``           (tension, > 0, when the beam points downwards),
* ``eps = N / EA = -W sin(theta) / EA``,
* ``M' = -r' x n = (1 + eps) W cos(theta)``.

For the linear cantilever this gives ``M(X) = -q (L - X)^2 / 2`` (hogging, ``M < 0``), i.e. the
familiar result with the sign fixed by the counter-clockwise convention. These equations are
the Euler-Lagrange equations of ``U = int (EA eps^2 + EI kappa^2)/2 dX - int f . r dX`` with the
strain measures above, so they match the ANCF energy exactly.

Boundary conditions: clamp ``x(0) = y(0) = 0``, ``theta(0) = 0``; free end ``M(L) = 0`` (and the
zero end force is built into ``W(L) = 0``). The inextensible limit (``EA`` = ``None``/``inf``
or ``extensible=False``) sets ``eps = 0``.

Initially curved reference (``kappa0``): a stress-free centre line parameterised by arc length,
horizontal at the clamp, with curvature ``kappa0(X)``; the moment is then
``M = EI (dtheta/dX - kappa0)`` (the ANCF element measures ``kappa - kappa0`` likewise).

Numerics
--------
Unknowns are solved in dimensionless form with ``s = X / L``, ``xh = x / L``, ``yh = y / L``,
``m = M L / EI_ref`` and ``w = W L^2 / EI_ref`` (``EI_ref = EI(0)``); ``w`` is carried as an
extra state with ``dw/ds = -q L^3 / EI_ref`` and ``w(1) = 0`` so that graded ``rhoA(X)`` is
integrated to solver accuracy. Gravity is ramped by load continuation: the first step has
``q L^3 / EI_ref ~ 1`` (or is the full load if that is smaller), each converged step is reused as
the initial guess (mesh included) and doubles the next increment, a failed step halves it.
Intermediate steps use ``tol = 1e-6``; the full load is then re-solved at the requested ``tol``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_bvp

__all__ = ["solve_elastica"]

logger = logging.getLogger(__name__)

Profile = float | Callable[[np.ndarray], np.ndarray]

#: dimensionless load ``q L^3 / EI`` of the first continuation step (mildly nonlinear)
_FIRST_LOAD_PARAMETER = 1.0
#: solver tolerance used on intermediate continuation steps
_CONTINUATION_TOL = 1e-6
_MAX_NODES = 200_000
_MIN_STEP = 1e-7
_MAX_STEPS = 400


def _as_function(value: Profile | None, name: str) -> Callable[[np.ndarray], np.ndarray]:
    """Wrap a float or a callable of ``X`` (m) into a vectorised callable returning floats."""
    if callable(value):

        def evaluate(X: np.ndarray) -> np.ndarray:
            out = np.asarray(value(np.asarray(X, dtype=float)), dtype=float)
            return np.broadcast_to(out, np.shape(X)).astype(float)

        return evaluate
    if value is None:
        raise ValueError(f"{name} must be a float or a callable, got None")
    const = float(value)

    def constant(X: np.ndarray) -> np.ndarray:
        return np.full(np.shape(X), const)

    return constant


def _is_inextensible(EA: Profile | None) -> bool:
    return EA is None or (not callable(EA) and np.isinf(float(EA)))


def solve_elastica(
    L: float,
    EI: Profile,
    EA: Profile | None,
    rhoA: Profile,
    g: float,
    n_nodes: int = 201,
    extensible: bool = True,
    tol: float = 1e-10,
    kappa0: Profile | None = None,
    clamp_exponent: float | None = None,
    breaks: Sequence[float] = (),
) -> dict:
    """Static large deflection of a cantilever hanging under its own weight.

    Parameters
    ----------
    L : float
        Reference length (m).
    EI : float or callable
        Bending stiffness (N m^2), constant or a function of the reference coordinate array
        ``X`` (m).
    EA : float, callable or None
        Axial stiffness (N). ``None`` or ``inf`` gives the inextensible limit.
    rhoA : float or callable
        Mass per unit reference length (kg/m).
    g : float
        Gravitational acceleration (m/s^2), acting in ``-y``.
    n_nodes : int
        Number of uniformly spaced output points (also the initial collocation mesh).
    extensible : bool
        If False the rod is inextensible (``eps = 0``) regardless of ``EA``.
    tol : float
        Relative residual tolerance of :func:`scipy.integrate.solve_bvp` at the final load.
    kappa0 : float or callable, optional
        Curvature (1/m) of the stress-free reference, constant or a function of ``X`` (m);
        None: straight.
    clamp_exponent : float, optional
        The smallest non-integer power ``a`` of ``X`` in the properties' expansion at the clamp
        (a power-law profile ``1 - lam (X/L)^a``), if any. Its derivatives are singular there
        and the collocation would need ever more nodes near ``X = 0`` (``a = 0.15`` exceeds
        200000 nodes at ``tol = 1e-8``); the arc length is then stretched, ``s = sigma^m``
        with ``m = ceil(6 / (1 + a))``, which makes the solution's singular terms
        ``s^(1 + a)`` at least five times differentiable in ``sigma``.
    breaks : sequence of float
        Positions ``X`` (m) where a property has a kink (the breakpoints of a measured
        table): nodes of the collocation mesh, so that the solution is smooth inside every
        interval (the solver only adds nodes).

    Returns
    -------
    dict
        ``X`` (m, uniform output grid), ``x``, ``y`` (m), ``theta`` (rad), ``eps`` (-),
        ``moment`` (N m, counter-clockwise positive, ``M = EI dtheta/dX``), ``axial_force``
        (N, tension positive), ``tip_x``, ``tip_y`` (m), ``tip_angle_deg`` (deg, angle of the
        tip tangent from ``+x``, negative downwards), ``converged`` (bool), ``n_load_steps`` and
        ``n_mesh`` (final collocation mesh size).

    Raises
    ------
    RuntimeError
        If the load continuation cannot reach the full load.
    """
    if L <= 0.0:
        raise ValueError("L must be positive")
    if n_nodes < 2:
        raise ValueError("n_nodes must be at least 2")
    problem = _problem(L, EI, EA, rhoA, extensible, kappa0, clamp_exponent)
    cuts = sorted({float(b) / L for b in breaks if 0.0 < float(b) < L})
    sol, n_steps = _continuation(problem, g, n_nodes, tol, cuts)
    logger.info(
        "elastica solved: %d load steps, %d mesh nodes, tip = (%.6g, %.6g) m",
        n_steps,
        sol.x.size,
        L * sol.y[0, -1],
        L * sol.y[1, -1],
    )
    return problem.output(sol, n_nodes, n_steps)


def _problem(
    L: float,
    EI: Profile,
    EA: Profile | None,
    rhoA: Profile,
    extensible: bool,
    kappa0: Profile | None,
    clamp_exponent: float | None,
) -> _Elastica:
    """The :class:`_Elastica` of :func:`solve_elastica`'s arguments (profiles as functions, the
    arc-length stretch of ``clamp_exponent``); ``EI(0) <= 0`` is a ValueError."""
    EI_f = _as_function(EI, "EI")
    rhoA_f = _as_function(rhoA, "rhoA")
    inextensible = (not extensible) or _is_inextensible(EA)
    EA_f = None if inextensible else _as_function(EA, "EA")
    k0_f = None if kappa0 is None else _as_function(kappa0, "kappa0")
    m = 1 if clamp_exponent is None else max(1, math.ceil(6.0 / (1.0 + float(clamp_exponent))))
    problem = _Elastica(
        L=L,
        EI=EI_f,
        EA=EA_f,
        rhoA=rhoA_f,
        EI_ref=float(EI_f(np.zeros(1))[0]),
        kappa0=k0_f,
        stretch=m,
    )
    if problem.EI_ref <= 0.0:
        raise ValueError("EI(0) must be positive")
    return problem


@dataclass(frozen=True)
class _Elastica:
    """The cantilever elastica in dimensionless form: arc length ``s = X / L`` in [0, 1] and
    unknowns ``u = (x/L, y/L, theta, m, w)`` (moment ``M = m EI_ref / L``, vertical section
    force ``W = w EI_ref / L^2``)."""

    L: float  # m
    EI: Callable[[np.ndarray], np.ndarray]  # N m^2
    EA: Callable[[np.ndarray], np.ndarray] | None  # N; None: inextensible
    rhoA: Callable[[np.ndarray], np.ndarray]  # kg/m
    EI_ref: float  # N m^2, EI at the clamp
    kappa0: Callable[[np.ndarray], np.ndarray] | None = None  # 1/m; None: straight reference
    stretch: int = 1  # the ODE's variable is sigma, s = sigma^stretch (1: s itself)

    def reference_rate(self, s: np.ndarray) -> np.ndarray:
        """Dimensionless stress-free curvature ``L kappa0(L s)`` (0 for a straight rod)."""
        if self.kappa0 is None:
            return np.zeros_like(s)
        return self.L * self.kappa0(self.L * s)

    def coefficients(self, s: np.ndarray, load: float):
        """Dimensionless coefficients at ``s``: EI_ref/EI, EI_ref/(L^2 EA), q L^3/EI_ref."""
        L = self.L
        X = L * s
        c_ei = self.EI_ref / self.EI(X)
        c_ea = np.zeros_like(s) if self.EA is None else self.EI_ref / (L**2 * self.EA(X))
        p = load * self.rhoA(X) * L**3 / self.EI_ref
        return c_ei, c_ea, p

    def rhs(self, load: float):
        """ODE right-hand side and its Jacobian for gravity ``load`` (m/s^2)."""

        k = self.stretch

        def fun(sig, u):
            s, ds = sig**k, k * sig ** (k - 1)  # d/dsigma = ds d/ds
            _, _, th, m, w = u
            c_ei, c_ea, p = self.coefficients(s, load)
            c, sn = np.cos(th), np.sin(th)
            stretch = 1.0 - c_ea * w * sn  # 1 + eps
            dth = c_ei * m + self.reference_rate(s)
            return ds * np.vstack([stretch * c, stretch * sn, dth, stretch * w * c, -p])

        def fun_jac(sig, u):
            s, ds = sig**k, k * sig ** (k - 1)
            _, _, th, m, w = u
            c_ei, c_ea, _ = self.coefficients(s, load)
            c, sn = np.cos(th), np.sin(th)
            stretch = 1.0 - c_ea * w * sn
            deps_dth = -c_ea * w * c
            deps_dw = -c_ea * sn
            jac = np.zeros((5, 5, s.size))
            jac[0, 2] = deps_dth * c - stretch * sn
            jac[0, 4] = deps_dw * c
            jac[1, 2] = deps_dth * sn + stretch * c
            jac[1, 4] = deps_dw * sn
            jac[2, 3] = c_ei
            jac[3, 2] = w * (deps_dth * c - stretch * sn)
            jac[3, 4] = stretch * c + w * deps_dw * c
            return ds * jac

        return fun, fun_jac

    def attempt(self, load: float, mesh: np.ndarray, guess: np.ndarray, step_tol: float):
        """One :func:`~scipy.integrate.solve_bvp` at gravity ``load``; (solution, success)."""
        fun, fun_jac = self.rhs(load)
        # Give the initial guess the correct weight distribution at this load level.
        guess = guess.copy()
        guess[4] = _weight_profile(mesh**self.stretch, lambda s: self.coefficients(s, load)[2])
        with np.errstate(over="ignore", invalid="ignore"):
            sol = solve_bvp(
                fun,
                _bc,
                mesh,
                guess,
                fun_jac=fun_jac,
                bc_jac=_bc_jac,
                tol=step_tol,
                max_nodes=_MAX_NODES,
            )
        ok = sol.success and np.all(np.isfinite(sol.y))
        return sol, ok

    def output(self, sol, n_nodes: int, n_steps: int) -> dict:
        """The result dict of :func:`solve_elastica` on ``n_nodes`` uniform points."""
        L = self.L
        s_out = np.linspace(0.0, 1.0, n_nodes)
        u = sol.sol(s_out ** (1.0 / self.stretch))
        u[:, 0] = sol.y[:, 0]
        u[:, -1] = sol.y[:, -1]
        X = L * s_out
        theta = u[2]
        W = u[4] * self.EI_ref / L**2
        if self.EA is None:
            eps = np.zeros_like(X)
            axial = -W * np.sin(theta)  # reaction force in the inextensible limit
        else:
            eps = -W * np.sin(theta) / self.EA(X)
            axial = self.EA(X) * eps
        tip_theta = float(sol.y[2, -1])
        return {
            "X": X,
            "x": L * u[0],
            "y": L * u[1],
            "theta": theta,
            "eps": eps,
            "moment": u[3] * self.EI_ref / L,
            "axial_force": axial,
            "tip_x": float(L * sol.y[0, -1]),
            "tip_y": float(L * sol.y[1, -1]),
            "tip_angle_deg": float(np.degrees(tip_theta)),
            "converged": bool(sol.success),
            "n_load_steps": n_steps,
            "n_mesh": int(sol.x.size),
        }


def _bc(ua, ub):
    """Clamp (x = y = theta = 0 at s = 0), free end (m = w = 0 at s = 1)."""
    return np.array([ua[0], ua[1], ua[2], ub[3], ub[4]])


def _bc_jac(ua, ub):
    dua = np.zeros((5, 5))
    dub = np.zeros((5, 5))
    dua[0, 0] = dua[1, 1] = dua[2, 2] = 1.0
    dub[3, 3] = dub[4, 4] = 1.0
    return dua, dub


def _continuation(
    problem: _Elastica, g: float, n_nodes: int, tol: float, cuts: Sequence[float] = ()
):
    """Load continuation from the straight, unloaded rod to gravity ``g`` (step doubled after
    a success, halved after a failure) at a loose tolerance, then a final solve at ``tol``.
    ``cuts`` (``s`` of the property kinks) are nodes of the initial mesh. Returns the solution
    and the number of solves."""
    mesh = np.linspace(0.0, 1.0, n_nodes)  # in sigma (s = sigma^stretch)
    mesh = np.union1d(mesh, np.asarray(cuts, dtype=float) ** (1.0 / problem.stretch))
    n_nodes = mesh.size
    s_mesh = mesh**problem.stretch
    guess = np.zeros((5, n_nodes))
    # the unloaded stress-free reference: tangent angle int kappa0, positions int (cos, sin)
    rate = problem.reference_rate(s_mesh)
    step_s = np.diff(s_mesh)
    guess[2, 1:] = np.cumsum(0.5 * (rate[1:] + rate[:-1]) * step_s)
    c, sn = np.cos(guess[2]), np.sin(guess[2])
    guess[0, 1:] = np.cumsum(0.5 * (c[1:] + c[:-1]) * step_s)
    guess[1, 1:] = np.cumsum(0.5 * (sn[1:] + sn[:-1]) * step_s)
    p_max = float(np.max(problem.coefficients(mesh, g)[2])) if g != 0.0 else 0.0
    fraction = 0.0
    step = 1.0 if p_max <= _FIRST_LOAD_PARAMETER else _FIRST_LOAD_PARAMETER / p_max
    loose_tol = max(tol, _CONTINUATION_TOL)
    sol = None
    n_steps = 0
    while fraction < 1.0:
        if n_steps >= _MAX_STEPS:
            raise RuntimeError(
                f"elastica continuation exceeded {_MAX_STEPS} steps at load fraction {fraction:.3g}"
            )
        trial = min(1.0, fraction + step)
        sol_t, ok = problem.attempt(trial * g, mesh, guess, loose_tol)
        n_steps += 1
        if ok:
            fraction = trial
            sol = sol_t
            mesh, guess = sol.x, sol.y
            step *= 2.0
            logger.debug("continuation: load fraction %.4g ok (%d nodes)", fraction, mesh.size)
        else:
            step *= 0.5
            logger.debug("continuation: step to %.4g failed (%s); halving", trial, sol_t.message)
            if step < _MIN_STEP:
                raise RuntimeError(
                    "elastica continuation failed: step below "
                    f"{_MIN_STEP:g} at load fraction {fraction:.6g} ({sol_t.message})"
                )
    if tol < loose_tol or sol is None:
        sol, ok = problem.attempt(g, mesh, guess, tol)
        n_steps += 1
        if not ok:
            raise RuntimeError(
                f"elastica final solve at tol={tol:g} failed ({sol.message}); the continuation "
                f"converged at tol={loose_tol:g}, so a looser tol may be adequate"
            )
    return sol, n_steps


def _weight_profile(s: np.ndarray, p: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Dimensionless weight ``w(s) = int_s^1 p ds`` on the mesh ``s`` (trapezoidal, guess only)."""
    ps = p(s)
    seg = 0.5 * (ps[1:] + ps[:-1]) * np.diff(s)
    tail = np.concatenate([np.cumsum(seg[::-1])[::-1], [0.0]])
    return tail
