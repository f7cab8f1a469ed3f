"""Static equilibrium under gravity: Newton-Raphson with adaptive load stepping.

Solves ``Q_e(q) + lambda Q_g = 0`` on the free DOFs for ``lambda`` ramped from 0 to 1.

Convergence test (per load step): ``||R|| <= max(rtol ||lambda Q_g||, floor)`` where ``floor``
is ten times the round-off level of the elastic force, *measured* as ``||Q_e||`` in strain-free
states where it is analytically zero (:meth:`BeamModel.roundoff_floor`). For the stiff seed
beam the axial stiffness ``EA ~ 1e8 N`` puts this floor near 1e-6 N, so an absolute tolerance
such as 1e-10 N could never be met. A step also converges when the Newton increment has
fallen to round-off, ``||du|| <= 1e-13 (L + ||u||)``, with a residual below
``sqrt(rtol) ||lambda Q_g||``.
"""

from __future__ import annotations

import logging

import numpy as np

from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.results import ConvergenceError, StaticResult

__all__ = ["solve_static"]

log = logging.getLogger(__name__)


def _newton_step_solve(model: BeamModel, q: np.ndarray, r: np.ndarray) -> np.ndarray:
    return model.tangent_solve(q, r)


def solve_static(
    model: BeamModel,
    q0: np.ndarray | None = None,
    load_steps: int | None = None,
    max_iterations: int | None = None,
    rtol: float | None = None,
    max_cutbacks: int | None = None,
) -> StaticResult:
    """Static equilibrium of the cantilever under its self-weight (full load ``lambda = 1``).

    With ``damage.enabled`` the damage grown along the load path stays in ``model`` (its
    ``damage``, ``ea_w`` and ``ei_w``), so later analyses of the same model see the damaged beam.
    """
    spec = model.case.static
    load_steps = spec.load_steps if load_steps is None else load_steps
    max_iterations = spec.max_iterations if max_iterations is None else max_iterations
    rtol = spec.rtol if rtol is None else rtol
    max_cutbacks = spec.max_cutbacks if max_cutbacks is None else max_cutbacks

    q_ref = model.reference()
    floor = model.roundoff_floor()
    g_norm = float(np.linalg.norm(model.gravity_free))
    q = q_ref.copy() if q0 is None else np.array(q0, dtype=float)
    if g_norm == 0.0:
        # zero load: the reference is the equilibrium (verified by the residual below)
        rnorm = float(np.linalg.norm(model.residual_free(q, 0.0)))
        x, y, a = model.tip(q)
        return StaticResult(q, x, y, np.degrees(a), 0, 0, 0, rnorm, floor)

    def newton(trial: np.ndarray, lam: float):
        return _newton(model, trial, lam, g_norm, floor, rtol, max_iterations)

    return _load_path(model, q, newton, 1.0 / load_steps, max_cutbacks, floor)


def _equilibrate_damage(newton, dmg, trial: np.ndarray, target: float, last):
    """Staggered: grow damage at this load level and re-equilibrate until it settles. ``last``:
    (converged, iterations, ||R||, tolerance) of the solve at this level. Returns the same of
    the last solve, with the iterations of the re-solves only."""
    ok, _, rnorm, tol = last
    extra = 0
    for _ in range(100):
        d_before = dmg.d.copy()
        dmg.update(trial)
        if np.max(dmg.d - d_before) <= 1e-10:
            break
        ok, it2, rnorm, tol = newton(trial, target)
        extra += it2
        if not ok:
            break
    return ok, extra, rnorm, tol


def _load_path(model: BeamModel, q, newton, dlam: float, max_cutbacks: int, floor: float):
    """Adaptive load stepping from ``lambda = 0`` to 1 (halving a failed step, doubling after
    a quick one); with damage, small steps along the path and the damage history."""
    lam = 0.0
    total_iter = accepted = cutbacks = 0
    rnorm = 0.0
    tol = floor
    dmg = None
    lams: list[float] = []
    dhist: list[np.ndarray] = []
    if model.case.damage.enabled:
        from ancf_beam.beam.damage import DamageState

        dmg = DamageState(model)
        dlam = min(dlam, 0.1)  # damage is path dependent: follow the load in small steps
    while lam < 1.0 - 1e-14:
        target = min(1.0, lam + dlam)
        trial = q.copy()
        saved = dmg.save() if dmg is not None else None
        ok, iters, rnorm, tol = newton(trial, target)
        total_iter += iters
        if ok and dmg is not None:
            last = (ok, iters, rnorm, tol)
            ok, extra, rnorm, tol = _equilibrate_damage(newton, dmg, trial, target, last)
            total_iter += extra
        if ok:
            q = trial
            lam = target
            accepted += 1
            if iters <= 4:
                dlam = min(1.0, dlam * 2.0)
            if dmg is not None:
                lams.append(lam)
                dhist.append(dmg.d.copy())
                dlam = min(dlam, 0.1)
            log.debug("load factor %.4g reached in %d iterations", lam, iters)
            continue
        if saved is not None:
            dmg.restore(saved)
        cutbacks += 1
        if cutbacks > max_cutbacks:
            raise ConvergenceError(
                f"static Newton did not converge: load factor {target:.4g} after {iters} "
                f"iterations (residual {rnorm:.3e} N, tolerance {tol:.3e} N) and "
                f"{cutbacks - 1} load-step cutbacks; raise static.max_cutbacks or "
                f"static.load_steps"
            )
        dlam *= 0.5
        log.info("load step to %.4g failed; halving to %.4g", target, dlam)
    x, y, a = model.tip(q)
    res = StaticResult(q, x, y, float(np.degrees(a)), total_iter, accepted, cutbacks, rnorm, tol)
    if dmg is not None:
        res.load_factors = np.array(lams)
        res.damage_history = np.array(dhist)
    return res


def _newton(model, q, lam, g_norm, floor, rtol, max_iterations):
    """Newton iterations in place on ``q``; returns (converged, iterations, ||R||, tolerance)."""
    tol = max(rtol * lam * g_norm, floor)
    loose = max(np.sqrt(rtol) * lam * g_norm, floor)
    scale = model.length
    rnorm = np.inf
    for it in range(1, max_iterations + 1):
        r = model.residual_free(q, lam)
        rnorm = float(np.linalg.norm(r))
        if not np.isfinite(rnorm):
            return False, it, rnorm, tol
        if rnorm <= tol:
            return True, it - 1, rnorm, tol
        du = _newton_step_solve(model, q, r)
        if not np.all(np.isfinite(du)):
            return False, it, rnorm, tol
        q[CLAMP:] += du
        dnorm = float(np.linalg.norm(du))
        if dnorm <= 1e-13 * (scale + float(np.linalg.norm(q[CLAMP:]))):
            r = model.residual_free(q, lam)
            rnorm = float(np.linalg.norm(r))
            if rnorm <= loose:
                return True, it, rnorm, tol
    return False, max_iterations, rnorm, tol
