"""Static equilibrium under gravity: Newton-Raphson with adaptive load stepping.

Solves ``Q_e(q) + lambda Q_g = 0`` on the free DOFs for ``lambda`` ramped from 0 to 1.

Convergence test (per load step, ``f = ||lambda Q_g||`` the external load): the residual
criterion ``||R|| <= rtol f`` accepts the current state at once; otherwise a Newton increment
``du`` is taken, and the step converges at the next state whose residual is below
``max(rtol f, floor)`` when that increment was negligible,
``||du|| <= rtol (||u - u_ref|| + ||du_1||) + 1e-13 (L + ||q||)`` (``du_1``: the first
increment of the load step, ``u - u_ref`` the displacement from the stress-free reference).
``floor`` is ten times the round-off level of the elastic force, *measured* as ``||Q_e||`` in
strain-free states where it is analytically zero (:meth:`BeamModel.roundoff_floor`). The
residual alone cannot decide on fine meshes: the floor grows like ``n^1.5`` while ``f`` falls
like ``n^-0.5``, so from 1500 elements (seed beam) the *unloaded* start already had a residual
below it and was returned with 0 iterations. The round-off sits in the stiff, short-wave
components, where ``K^-1`` makes it harmless, so the increment stays meaningful at any mesh
(measured: it stalls at 1e-10 of the displacement at 5000 elements). A load step therefore
always takes at least one Newton increment unless the residual criterion holds, and a solve
under a non-zero load that ends at its start vector is a :class:`ConvergenceError`.
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
        # zero load: the stress-free reference is the equilibrium, but solve from the start
        # vector and check the residual rather than assume it
        ok, iters, rnorm, tol = _newton(model, q, 1.0, 0.0, floor, rtol, max_iterations)
        if not ok:
            raise ConvergenceError(
                f"static Newton did not converge without load after {iters} iterations "
                f"(residual {rnorm:.3e} N, tolerance {tol:.3e} N)"
            )
        x, y, a = model.tip(q)
        return StaticResult(q, x, y, float(np.degrees(a)), iters, 1, 0, rnorm, tol)

    def newton(trial: np.ndarray, lam: float):
        return _newton(model, trial, lam, g_norm, floor, rtol, max_iterations)

    q_start = q.copy()
    res = _load_path(model, q, newton, 1.0 / load_steps, max_cutbacks, floor)
    if np.array_equal(res.q, q_start) and res.residual_norm > rtol * g_norm:
        raise ConvergenceError(
            f"static solve made no progress from its start vector under a load of "
            f"{g_norm:.3e} N (residual {res.residual_norm:.3e} N, tolerance "
            f"{res.residual_tol:.3e} N)"
        )
    return res


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
    # terminates: every pass accepts a step (lam grows by dlam >= the first step / 2^cutbacks)
    # or spends one of max_cutbacks; a step below the spacing of lam (no progress) is refused
    while lam < 1.0 - 1e-14:
        target = min(1.0, lam + dlam)
        if target <= lam:
            raise ConvergenceError(
                f"static load stepping stalled at load factor {lam:.17g}: the step {dlam:.3e} "
                "is below its round-off after the cutbacks; lower static.max_cutbacks or raise "
                "static.load_steps"
            )
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
    """Newton iterations in place on ``q``; returns (converged, iterations, ||R||, tolerance).

    ``iterations`` counts the Newton increments taken; the returned residual is that of the
    returned ``q`` (see the module docstring for the criteria)."""
    f = lam * g_norm
    strict = rtol * f
    tol = max(strict, floor)
    u_ref = model.reference()[CLAMP:]
    du1 = 0.0
    small = False
    rnorm = np.inf
    for it in range(max_iterations + 1):
        r = model.residual_free(q, lam)
        rnorm = float(np.linalg.norm(r))
        if not np.isfinite(rnorm):
            return False, it, rnorm, tol
        if rnorm <= strict or (small and rnorm <= tol):
            return True, it, rnorm, tol
        if it == max_iterations:
            break
        du = _newton_step_solve(model, q, r)
        if not np.all(np.isfinite(du)):
            return False, it, rnorm, tol
        q[CLAMP:] += du
        dnorm = float(np.linalg.norm(du))
        if it == 0:
            du1 = dnorm
        scale = float(np.linalg.norm(q[CLAMP:] - u_ref)) + du1
        roundoff = 1e-13 * (model.length + float(np.linalg.norm(q[CLAMP:])))
        small = dnorm <= rtol * scale + roundoff
    return False, max_iterations, rnorm, tol
