"""Static equilibrium and linearised natural frequencies of a constrained multibody system.

Static equilibrium (time ``t`` frozen, no velocities): Newton on

    G(q, lambda) = Phi_q^T lambda - Q(q) = 0,      Phi(q, t) = 0,

``Q = Q_e + Q_fe + s Q_g`` with the gravity load factor ``s`` ramped over ``load_steps``, with the
dense augmented matrix ``[K_T + sum lambda Phi_qq, Phi_q^T; Phi_q, 0]`` (static analyses are not
a hot loop; the tangent of a free beam is singular on its own, the augmented matrix is not).
Convergence: ``max|Phi| <= 1e-12 L_ref`` and either ``||G|| <= rtol ||s Q_g||`` or, after a
negligible Newton increment (``||dq|| <= rtol (||q - q0|| + ||dq_1||) + 1e-13 (L_ref + ||q||)``),
``||G|| <= floor`` (``floor``: ten times the beams' elastic-force round-off): on fine meshes the
floor alone would accept a state short of equilibrium (the beam solver's rule, solvers/static.py).

Natural frequencies about a configuration: the generalized eigenproblem of the tangent and the
mass restricted to the null space of ``Phi_q`` (the admissible motions), ``omega`` in rad/s.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ancf_beam.mbs.system import System
from ancf_beam.results import ConvergenceError

log = logging.getLogger(__name__)

__all__ = ["ConstrainedModes", "StaticEquilibrium", "constrained_modes", "solve_static"]


@dataclass
class StaticEquilibrium:
    q: np.ndarray  # coordinates at equilibrium
    lam: np.ndarray  # multipliers (N, N m; sign convention of ancf_beam.mbs.joints)
    iterations: int
    residual_norm: float  # N
    phi_max: float


@dataclass
class ConstrainedModes:
    omega: np.ndarray  # rad/s, ascending
    shapes: np.ndarray  # (n_modes, n) mass-normalised, full coordinates


def _floor(system: System) -> float:
    return max([b.model.roundoff_floor(10.0) for b in system.beams] + [1e-300])


def solve_static(
    system: System,
    load_steps: int = 1,
    rtol: float = 1e-10,
    max_iter: int = 30,
    q0: np.ndarray | None = None,
    t: float = 0.0,
) -> StaticEquilibrium:
    """Equilibrium under gravity (and the force elements), see the module docstring."""
    system.finalize()
    q = system.q0.copy() if q0 is None else np.array(q0, dtype=float)
    lam = np.zeros(system.m)
    n, m = system.n, system.m
    floor = _floor(system)
    scale = max(1e-3, float(np.max(np.abs(q))))
    zero_v = np.zeros(n)
    total_it = 0
    rn = np.inf
    pmax = np.inf
    for k in range(1, load_steps + 1):
        s = k / load_steps
        small = False
        du1 = 0.0
        for it in range(max_iter + 1):
            f, _, _ = system.forces_at(q, zero_v, t)
            f -= (1.0 - s) * system.qg
            c = system.constraints(q, None, t)
            jac = c["jacobian"]
            g = jac.T @ lam - f
            rn = float(np.linalg.norm(g))
            pmax = float(np.max(np.abs(c["phi"]))) if m else 0.0
            strict = rtol * s * np.linalg.norm(system.qg)
            if (rn <= strict or (small and rn <= floor)) and pmax <= 1e-12 * scale:
                break
            if it == max_iter:
                raise ConvergenceError(
                    f"static: Newton did not converge at load factor {s:.3g} in {max_iter} "
                    f"iterations (residual {rn:.3e} N, max|Phi| = {pmax:.3e})"
                )
            kt = system.tangent_dense(q, zero_v, t, lam)
            a = np.zeros((n + m, n + m))
            a[:n, :n] = kt
            a[:n, n:] = jac.T
            a[n:, :n] = jac
            x = sla.solve(a, -np.concatenate([g, c["phi"]]), check_finite=False)
            q += x[:n]
            lam += x[n:]
            total_it += 1
            dnorm = float(np.linalg.norm(x[:n]))
            du1 = dnorm if it == 0 else du1
            disp = float(np.linalg.norm(q - system.q0))
            small = dnorm <= rtol * (disp + du1) + 1e-13 * (scale + float(np.linalg.norm(q)))
    log.debug("static equilibrium: %d Newton iterations, residual %.3e N", total_it, rn)
    return StaticEquilibrium(q=q, lam=lam, iterations=total_it, residual_norm=rn, phi_max=pmax)


def constrained_modes(
    system: System,
    q: np.ndarray | None = None,
    lam: np.ndarray | None = None,
    n_modes: int = 3,
    t: float = 0.0,
) -> ConstrainedModes:
    """Lowest ``n_modes`` natural frequencies about ``q`` (default: the initial configuration)
    with multipliers ``lam`` (their geometric stiffness ``sum lam Phi_qq``; zero by default)."""
    system.finalize()
    q = system.q0 if q is None else np.asarray(q, float)
    kt = system.tangent_dense(q, None, t, lam)
    mass = system.mass_dense()
    if system.m:
        basis = sla.null_space(system.jacobian(q, t))
    else:
        basis = np.eye(system.n)
    kr = basis.T @ kt @ basis
    mr = basis.T @ mass @ basis
    kr = 0.5 * (kr + kr.T)
    k = min(n_modes, kr.shape[0])
    w2, phi = sla.eigh(kr, mr, subset_by_index=(0, k - 1))
    return ConstrainedModes(omega=np.sqrt(np.clip(w2, 0.0, None)), shapes=(basis @ phi).T)
