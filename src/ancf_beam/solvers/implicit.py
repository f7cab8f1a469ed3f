"""Implicit time integrators: BDF1 (backward Euler), Newmark and generalized-alpha.

All three integrate the reduced (clamp-eliminated) equations of motion

    M a + C v = Q_e(q) + Q_g,        C = alpha M + beta K0

(Rayleigh damping; ``K0`` is the stiffness of the straight undamaged beam, the same ``C`` as the
explicit solver builds),

and return the same :class:`~ancf_beam.results.DynamicsResult` as the explicit solver (with
``integrator``, the per-step ``newton_iterations`` and the ``newton_stats`` filled in).

Every step solves for the displacement increment ``d = q_{n+1} - q_n`` by Newton's method. The
unknown is written as ``d = d_nat + e`` (the scheme's own extrapolation + correction); rates are
affine in ``e``::

    v_{n+1} = v_pred + c_v e,    a_{n+1} = a_pred + c_a e,

so the Newton matrix is the effective stiffness ``K_eff = K_T(q) + c_v C + c_a M`` (symmetric,
assembled from the analytic tangent ``K_T`` by the numba kernel on the free DOFs and factorised
by a banded Cholesky written in numba, with a banded LU with partial pivoting as the fallback
when it is not positive definite) and the right-hand side is the dynamic residual ``-R``,
``R = M a + C v - Q_e(q) - Q_g``. Newton starts (``predictor='auto'``, the default) from
whichever of ``q_{n+1} = q_n`` and ``d = d_nat`` has the smaller residual: the extrapolation saves
iterations at small ``dt``, while for a very large ``dt`` (free-fall extrapolation of metres) it
can send Newton to a spurious far-away equilibrium, which the constant start avoids. The residual
of the constant start reuses the elastic force of the last converged iterate, so ``'auto'`` costs
one mass-matrix product per step more than ``'extrapolate'``, not a force evaluation.

Schemes (``h = dt``):

* ``bdf1`` -- backward Euler on the first-order form ``u' = v``, ``M v' + C v = F(u)``:
  ``(u_{n+1} - u_n)/h = v_{n+1}``, ``M (v_{n+1} - v_n)/h + C v_{n+1} = F(u_{n+1})``. Newton on
  the kinematic and dynamic residuals ``R_u``, ``R_v`` gives ``(K_T + M/h^2) du = -R_v - (M/h)
  R_u`` (plus ``C/h`` on the left and ``-C R_u`` on the right with damping); it is used with
  ``R_u`` eliminated exactly: ``v = d/h`` at every iterate, so ``R_u = 0`` and the right-hand
  side is ``-R_v``; ``c_v = 1/h``, ``c_a = 1/h^2``. First order, L-stable (strong numerical
  damping).
* ``newmark`` -- ``u_{n+1} = u_n + h v_n + h^2 ((1/2 - beta) a_n + beta a_{n+1})``,
  ``v_{n+1} = v_n + h ((1 - gamma) a_n + gamma a_{n+1})``; default average acceleration
  ``beta = 1/4, gamma = 1/2`` (second order, unconditionally stable, no numerical damping).
* ``generalized-alpha`` -- Chung & Hulbert (1993) with ``alpha_m = (2 rho - 1)/(rho + 1)``,
  ``alpha_f = rho/(rho + 1)``, ``gamma = 1/2 - alpha_m + alpha_f``,
  ``beta = (1 - alpha_m + alpha_f)^2 / 4`` from the spectral radius at infinity ``rho_inf``.
  It is implemented in the equivalent form of Arnold & Bruels (2007): equilibrium is enforced at
  ``t_{n+1}`` and the Newmark formulas act on an acceleration-like variable ``a~`` with
  ``(1 - alpha_m) a~_{n+1} + alpha_m a~_n = (1 - alpha_f) a_{n+1} + alpha_f a_n``. For linear
  systems this *is* the Chung-Hulbert recurrence (same amplification matrix, ``a~`` playing the
  role of CH's acceleration); for nonlinear forces it is the variant with alpha-weighted forces
  ``(1 - alpha_f) F(q_{n+1}) + alpha_f F(q_n)``. ``newmark`` is the same code with
  ``alpha_m = alpha_f = 0``; ``rho_inf = 1`` gives ``alpha_m = alpha_f = 1/2``, ``beta = 1/4``,
  ``gamma = 1/2`` and the same sequence as average-acceleration Newmark (``a~ = a``).

Newton convergence (per step): ``||R|| <= max(tol * F_ref, floor)`` where ``F_ref`` is the
largest of ``||Q_g||``, ``||Q_e(q)||`` and ``||M a||`` at the iterate and ``floor`` is ten times
the round-off level of the elastic force, measured as ``||Q_e||`` of strain-free states (the
stress-free reference, as in :mod:`~ancf_beam.solvers.static`, and rigidly moved copies; the axial
stiffness ``EA ~ 8e7 N`` of the seed beam puts the floor near 1e-5 N at 20 elements, so an
absolute 1e-10 N would never be met). A step also converges when the last
correction is below ``increment_tol * ||d||`` (or at coordinate round-off) *and* the residual is
below ``max(sqrt(tol) F_ref, floor)``. A step that does not converge in ``max_iter`` iterations is
retried as two half steps (up to ``max_halvings`` times); if that also fails
:class:`NewtonConvergenceError` names the time, step, iteration count, residual and tolerance.
``newton='modified'`` (the default) keeps the factorisation of ``K_eff`` across iterations and
steps and only refactorises when the residual stops contracting fast (by less than 4x per
iteration) or the step size changes: for the weakly nonlinear seed case one factorisation serves
the whole run, at about three iterations per step. ``newton='full'`` refactorises every
iteration (about one iteration per step, but the tangent assembly costs ten force evaluations).
Both stop at the same residual tolerance, but modified Newton converges linearly and stops just
below it, while full Newton usually ends far below: with the floor-dominated tolerance of the
seed beam their tips differ by 1e-8 to 1e-7 (relative) at ``dt = 1e-4`` and by up to 2e-5 at
``dt = T1/100`` with 80 elements over 2 s, far below the time-discretisation error in both
cases. Use ``newton='full'`` when the Newton error must be negligible in comparisons at the
round-off level.

Implementation: the whole time loop runs in numba without allocation
(:func:`~ancf_beam.solvers.implicit_step.run_chunk`, in chunks between progress reports, like the
explicit solver), including the damage update and the sampled outputs. A step that fails is left
undone by the loop and retried as half steps from Python (:meth:`ImplicitRun.recover`), one numba
step (:func:`~ancf_beam.solvers.implicit_step.newton_step`) at a time. The settings (scheme,
Newton controls, time step) come validated in a
:class:`~ancf_beam.solvers.settings.DynamicsSettings`.

Energies (sampled every ``sample_dt``): kinetic ``1/2 v^T M v``, nonlinear strain energy ``U``,
gravity potential, and the damping work accumulated as ``d^T C d / h`` per step (``h`` times the
damping power at the mean velocity ``d/h``; exact for average-acceleration Newmark, whose
discrete energy balance it then closes up to the trapezoidal error in the nonlinear force).
With ``damage.enabled`` the damage is updated after every converged step (staggered, as in the
explicit solver) and the strain energy it releases is added to the dissipated work.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import scipy.linalg as sla

from ancf_beam.beam import kernels
from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.linalg import BANDWIDTH, padded_band, sym_band_matvec
from ancf_beam.results import DynamicsResult, NewtonConvergenceError, NewtonStats
from ancf_beam.solvers.implicit_step import (
    PREDICTOR_CODES,
    ROW,
    STEP_SCALARS,
    FactorWork,
    ImplicitState,
    ImplicitSystem,
    IterateWork,
    NewtonParams,
    NewtonWork,
    ResidualData,
    newton_step,
    record,
    run_chunk,
)
from ancf_beam.solvers.schemes import newmark_dissipation_advice
from ancf_beam.solvers.settings import (
    IMPLICIT_INTEGRATORS,
    DynamicsSettings,
    SettingsError,
    check_integrator,
)
from ancf_beam.solvers.timeloop import (
    Outputs,
    RunSpec,
    damage_args,
    final_outputs,
    outputs,
    result_from_outputs,
    run_chunks,
    step_plan,
)

__all__ = ["FLOOR_FACTOR", "ImplicitRun", "run_implicit", "simulate_implicit"]

log = logging.getLogger(__name__)

FLOOR_FACTOR = 10.0  # residual floor: this x the round-off level of the elastic force


def _system(model: BeamModel, damping: tuple[float, float]) -> ImplicitSystem:
    mlb = np.ascontiguousarray(model.mass_free_lower_band)
    alpha, beta = damping
    damped = alpha != 0.0 or beta != 0.0
    clb = model.rayleigh_lower_band(alpha, beta) if damped else np.zeros_like(mlb)
    rd = ResidualData(
        *padded_band(mlb), *padded_band(clb), damped, np.ascontiguousarray(model.gravity_free)
    )
    kargs = model.kernel_args()
    sa = kernels.soa_args(kargs, model.le, model.case.damage.enabled)
    return ImplicitSystem(
        kargs,
        sa,
        rd,
        mlb,
        clb,
        np.ascontiguousarray(model.gravity_full),
        model.reference(),
    )


def _work(model: BeamModel) -> NewtonWork:
    nf, n, bw = model.n_free, model.n_dof, BANDWIDTH
    iw = IterateWork(np.zeros((len(ROW), nf)), np.zeros(n), np.zeros(n), np.zeros(nf + 2 * bw))
    fw = FactorWork(
        np.zeros((2 * bw + 1, n)),
        np.zeros((bw + 1, nf)),
        np.zeros((2, nf, bw + 1)),
        np.zeros((3 * bw + 1, nf)),
        np.zeros(nf, dtype=np.int64),
    )
    return NewtonWork(iw, fw)


class ImplicitRun:
    """State, constant data and work arrays of one implicit run. Every step runs in numba
    (:func:`~ancf_beam.solvers.implicit_step.run_chunk`, or
    :func:`~ancf_beam.solvers.implicit_step.newton_step` one at a time); the step halving after
    a failed step is driven from here."""

    def __init__(self, model: BeamModel, settings: DynamicsSettings):
        if settings.is_explicit:
            raise SettingsError(("integrator",), "{0} must be an implicit integrator")
        self.model = model
        self.settings = settings
        self.scheme = scheme = settings.scheme
        self.max_halvings = int(settings.max_halvings)
        self.system = sy = _system(model, settings.damping)
        self.floor = model.roundoff_floor(FLOOR_FACTOR)
        tol = settings.tol
        self.params = NewtonParams(
            scheme.beta,
            scheme.gamma,
            scheme.alpha_m,
            scheme.alpha_f,
            scheme.is_bdf1,
            tol,
            math.sqrt(tol),
            settings.increment_tol,
            self.floor,
            float(np.linalg.norm(sy.rd.g)),
            int(settings.max_iter),
            settings.newton == "modified",
            PREDICTOR_CODES[settings.predictor],
        )
        self.work = _work(model)
        self.dargs, self.damage = damage_args(model)
        self.halvings = 0
        self.state: ImplicitState | None = None

    # -- state -------------------------------------------------------------------------
    def set_initial_state(self, q0: np.ndarray, v0: np.ndarray) -> None:
        q = np.array(q0, dtype=float)
        v = np.array(v0, dtype=float)
        sy = self.system
        f = self.work.iw.f
        energy = kernels.force(q, sy.kargs, sy.sa, f)
        rhs = f[CLAMP:] + sy.rd.g
        if sy.rd.damped:
            cv = np.empty(self.model.n_free)
            sym_band_matvec(sy.clb, v, cv)
            rhs = rhs - cv
        a0 = sla.cho_solve_banded((self.model.mass_cholesky, True), rhs, check_finite=False)
        if not (np.all(np.isfinite(a0)) and math.isfinite(energy)):
            raise ValueError(
                "the initial state gives non-finite forces (degenerate q0, e.g. a zero slope "
                "vector |r'| = 0, or non-finite q0 / v0)"
            )
        a = np.ascontiguousarray(a0)
        scalars = np.zeros(1, dtype=STEP_SCALARS)
        scalars[0]["fq_valid"] = 1
        scalars[0]["energy"] = energy
        scalars[0]["factor_h"] = -1.0  # no factorisation yet (factor_kind = NO_FACTOR = 0)
        self.state = ImplicitState(q, v, a, a.copy(), f[CLAMP:].copy(), scalars)

    @property
    def q(self) -> np.ndarray:
        return self.state.q

    @property
    def v(self) -> np.ndarray:
        return self.state.v

    def scalar(self, name: str):
        """A field of the run's :data:`~ancf_beam.solvers.implicit_step.STEP_SCALARS`."""
        return self.state.s[0][name].item()

    @property
    def energy(self) -> float:
        return float(self.scalar("energy"))

    @property
    def dissipated(self) -> float:
        return float(self.scalar("dissipated"))

    def stats(self) -> NewtonStats:
        return NewtonStats(
            factorizations=int(self.scalar("factorizations")),
            halvings=self.halvings,
            increment_converged=int(self.scalar("increment_converged")),
            residual_floor=self.floor,
        )

    # -- steps -------------------------------------------------------------------------
    def run_chunk(self, n_steps: int, step0: int, h: float, out: Outputs, iters: np.ndarray):
        """Up to ``n_steps`` steps in numba; returns the steps done (see
        :func:`~ancf_beam.solvers.implicit_step.run_chunk`)."""
        return run_chunk(
            n_steps,
            step0,
            h,
            self.state,
            self.system,
            self.params,
            self.work,
            self.damage is not None,
            self.dargs,
            out,
            iters,
        )

    def record(self, step: int, out: Outputs) -> None:
        record(step, self.state, self.system, self.work, out, self.dargs.dmg)

    def try_step(self, h: float) -> tuple[bool, int, float]:
        ok, it, work = newton_step(h, self.state, self.system, self.params, self.work)
        return bool(ok), int(it), float(work)

    def recover(self, h: float, t: float, step: int) -> tuple[int, float]:
        """The step of size ``h`` from ``t`` just failed (state untouched): retry it as two half
        steps, recursively. Returns (iterations including the failed attempt, dissipated
        work); raises :class:`NewtonConvergenceError` when the halvings run out."""
        return self._halve(h, t, step, 0, int(self.scalar("fail_iterations")))

    def _failure(self, h: float, t: float, step: int, depth: int) -> NewtonConvergenceError:
        it = int(self.scalar("fail_iterations"))
        rn = float(self.scalar("fail_residual"))
        tl = float(self.scalar("fail_tolerance"))
        what = "a non-finite residual" if not math.isfinite(rn) else f"residual {rn:.3e} N"
        return NewtonConvergenceError(
            f"{self.scheme.name}: Newton did not converge in step {step} at t = {t:.6g} s "
            f"(dt = {h:.4e} s after {depth} halvings): {what} after {it} iterations "
            f"(tolerance {tl:.3e} N, max_iter = {self.settings.max_iter}); reduce dt or raise "
            f"max_iter / max_halvings{self._advice()}",
            t=t,
            step=step,
            dt=h,
            iterations=it,
            residual=rn,
            tolerance=tl,
        )

    def _advice(self) -> str:
        """Newmark at ``gamma = 1/2``: :func:`~ancf_beam.solvers.schemes.
        newmark_dissipation_advice` (the CLI's ``--gamma`` / ``--beta``, the case's
        ``dynamics.newmark_gamma`` / ``newmark_beta``)."""
        s = self.scheme
        if s.name == "newmark" and s.gamma == 0.5:
            keys = "; dynamics.newmark_gamma, newmark_beta"
            return "; but " + newmark_dissipation_advice(
                "geometrically nonlinear beam", "gamma", "beta", keys
            )
        return ""

    def _halve(self, h: float, t: float, step: int, depth: int, failed_iters: int):
        if depth >= self.max_halvings:
            raise self._failure(h, t, step, depth)
        self.halvings += 1
        log.debug("step %d at t = %.6g s: halving dt to %.3e s", step, t, 0.5 * h)
        total_it, total_w = failed_iters, 0.0
        for k in range(2):
            it, w = self.advance(0.5 * h, t + k * 0.5 * h, step, depth + 1)
            total_it += it
            total_w += w
        return total_it, total_w

    def advance(self, h: float, t: float, step: int, depth: int = 0) -> tuple[int, float]:
        """Step ``h`` from ``t`` (halving on failure). Returns (iterations, dissipated work)."""
        ok, it, work = self.try_step(h)
        if not ok:
            return self._halve(h, t, step, depth, it)
        if self.damage is not None:  # staggered damage update, as in the numba loop
            released = self.damage.update(self.state.q)
            if released != 0.0:
                s = self.state.s
                s[0]["energy"] -= released
                work += released
                s[0]["fq_valid"] = 0
        return it, work


def run_implicit(model: BeamModel, settings: DynamicsSettings, run: RunSpec) -> DynamicsResult:
    """The implicit loop (``run.dt`` may exceed the explicit critical step, ``run.dt_critical``
    is only logged); see :func:`ancf_beam.solvers.simulate`. Raises
    :class:`NewtonConvergenceError` when a step cannot be converged."""
    dt, q0, v0 = run.dt, run.q0, run.v0
    plan = step_plan(settings.t_end, dt, settings.sample_dt, settings.snapshot_dt)
    nf = model.n_free
    q = model.reference() if q0 is None else np.array(q0, dtype=float)
    if q.shape != (model.n_dof,):
        raise ValueError(f"q0 must have {model.n_dof} entries, got shape {q.shape}")
    v = np.zeros(nf) if v0 is None else np.array(v0, dtype=float)[-nf:].copy()
    loop = ImplicitRun(model, settings)
    loop.set_initial_state(q, v)
    out = outputs(plan, model, loop.damage is not None)
    iters = np.zeros(plan.n_steps, dtype=np.int32)
    loop.record(0, out)
    name = settings.integrator
    if run.dt_critical:
        log.debug("%s: dt = %.4e s = %.3g dt_cr", name, dt, dt / run.dt_critical)

    def advance(step: int, todo: int) -> int:
        done = loop.run_chunk(todo, step, dt, out, iters)
        step += done
        if done < todo:  # step `step` failed in numba: retry it as half steps
            iters[step], w = loop.recover(dt, step * dt, step)
            loop.state.s[0]["dissipated"] += w
            loop.record(step + 1, out)
            step += 1
        return step

    def report(step: int, rate: float) -> None:
        log.info(
            "%s: t = %.4g / %.4g s, %.3g steps/s, %.2f Newton it/step, ETA %.0f s",
            name,
            step * dt,
            settings.t_end,
            rate,
            iters[:step].mean(),
            (plan.n_steps - step) / rate,
        )

    n, last = plan.n_steps, plan.last_dt
    regular = n if last == dt else n - 1  # steps of dt; the last one is shortened to t_end
    wall, cpu = run_chunks(
        advance,
        regular,
        first=200,
        least=100,
        progress=run.progress,
        interval_s=run.progress_interval_s,
        report=report,
    )
    if last != dt:
        iters[n - 1], w = loop.advance(last, (n - 1) * dt, n - 1)
        loop.state.s[0]["dissipated"] += w
    # the final state, at t_end, unless the regular strides recorded it already
    done = last == dt
    loop.record(
        n,
        final_outputs(
            out, n, done and n % plan.sample_every == 0, done and n % plan.snap_every == 0
        ),
    )
    return result_from_outputs(
        out,
        dt,
        settings.t_end,
        steps=n,
        wall_s=wall,
        cpu_s=cpu,
        integrator=name,
        newton_iterations=iters,
        newton_stats=loop.stats(),
        energy_roundoff=model.energy_roundoff(),
    )


def simulate_implicit(
    model: BeamModel,
    t_end: float,
    dt: float,
    integrator: str = "newmark",
    *,
    damping: tuple[float, float] = (0.0, 0.0),
    sample_dt: float | None = None,
    snapshot_dt: float | None = None,
    q0: np.ndarray | None = None,
    v0: np.ndarray | None = None,
    dt_critical: float | None = None,
    progress: bool = True,
    progress_interval_s: float = 5.0,
    stats: dict | None = None,
    **scheme_and_newton,
) -> DynamicsResult:
    """Keyword form of :func:`ancf_beam.solvers.simulate` for an implicit run at a given ``dt``
    (s) up to ``t_end`` (s), undamped unless ``damping`` is given, from ``q0`` (default: the
    reference) and ``v0`` (default: rest).

    ``scheme_and_newton``: ``beta``, ``gamma`` (Newmark), ``rho_inf`` (generalized-alpha),
    ``max_iter``, ``tol``, ``increment_tol``, ``max_halvings``, ``newton``, ``predictor``
    (:class:`~ancf_beam.solvers.settings.DynamicsSettings`; defaults from the case and
    :data:`~ancf_beam.solvers.schemes.NEWTON_DEFAULTS`). ``stats``, when given, receives
    ``factorizations``, ``halvings``, ``increment_converged``, ``residual_floor``, ``newton``,
    ``predictor`` and the scheme parameters.
    """
    check_integrator(integrator, IMPLICIT_INTEGRATORS)
    settings = DynamicsSettings.from_case(
        model.case,
        integrator=integrator,
        t_end=t_end,
        dt=dt,
        damping=damping,
        sample_dt=sample_dt,
        snapshot_dt=snapshot_dt,
        **scheme_and_newton,
    )
    run = RunSpec(dt, dt_critical, q0, v0, progress, progress_interval_s)
    res = run_implicit(model, settings, run)
    if stats is not None:
        s = res.newton_stats
        stats.update(
            factorizations=s.factorizations,
            halvings=s.halvings,
            increment_converged=s.increment_converged,
            residual_floor=s.residual_floor,
            newton=settings.newton,
            predictor=settings.predictor,
            **settings.scheme.describe(),
        )
    return res
