"""Time integration of a multibody :class:`~ancf_beam.mbs.system.System`.

Integrators (``IntegratorSettings.integrator``):

* ``central-difference`` -- index-1 form with Baumgarte stabilisation, explicit:
  velocity-Verlet form of central differences (``v+1/2 = v + h/2 a``, ``q+ = q + h v+1/2``,
  ``a+ = a(q+, v*, t+)`` with the predicted end velocity ``v* = v+1/2 + h/2 a``,
  ``v+ = v+1/2 + h/2 a+``); the accelerations and multipliers of every step solve
  ``[M J^T; J 0][a; lambda] = [Q; gamma - 2 alpha Phi' - beta^2 Phi]`` by a Schur complement
  with the mass factorised once. With constant constraint Jacobians (pins, welds on beams) and no
  velocity-dependent forces the positions are exactly those of classic central differences.
  Stable for ``dt < 2 / omega_max``; Baumgarte needs ``beta dt, alpha dt << 1``.
* ``adaptive`` -- the same index-1 right-hand side (numba) under a scipy error-controlled
  integrator (``method``: RK45, DOP853, Radau, BDF, LSODA; ``rtol``, ``atol``), outputs at the
  sample times from its dense output. Contacts are events: a contact that has not recorded
  its onset exerts no force (``core.C_EVENTS``), so every step before an impact is free
  flight; the onset (``delta = 0``: a gap that closes by the end of a step, or dips below zero
  at one of ``stepping.DENSE_POINTS`` dense-output times inside it when it could close within
  the step at its end speeds) and the end of the positive normal force are located on the
  dense output (:mod:`ancf_beam.mbs.events`: bracketing to ``TIME_RTOL`` of the step plus
  round-off, iteration caps, never raising at round-off) and the integrator restarts there,
  so each piece it integrates is smooth. Peaks of the contact force and penetration are
  searched on the dense output (:class:`ancf_beam.mbs.stepping.AdaptiveRecorder`); the work the
  contacts dissipate is integrated on it per step (Gauss-Legendre, split where it has kinks).
  Restarts that do not advance time are counted and end the run with an error naming the
  system, the time and the contact.
* ``moreau-jean`` -- fixed-step Moreau-Jean time stepping (theta-method on the velocities,
  contacts detected at mid-step positions, linearised-implicit forces, bilateral constraints at
  velocity level with a position projection): the integrator of nonsmooth contacts
  (``model="nonsmooth"``: Newton's impact law, Coulomb friction), :mod:`ancf_beam.mbs.moreau`;
  the only one that takes them.
* ``generalized-alpha`` / ``newmark`` -- index-3 (Arnold & Bruels 2007 form, as the cantilever's
  :mod:`ancf_beam.solvers.implicit`): equilibrium ``M a + J^T lambda = Q`` and ``Phi(q, t) = 0``
  enforced at ``t_{n+1}`` with the multipliers as unknowns; Newmark formulas on the
  acceleration-like ``a~`` with ``(1 - alpha_m) a~+ + alpha_m a~ = (1 - alpha_f) a+ + alpha_f a``,
  ``alpha_m = (2 rho - 1)/(rho + 1)``, ``alpha_f = rho/(rho + 1)`` from ``rho_inf``; Newmark is
  ``alpha_m = alpha_f = 0`` with ``beta``, ``gamma``. Newton on ``[K_eff J^T; J 0]`` with
  ``K_eff = c_a M + c_v C + K_T + sum lambda Phi_qq`` (banded, half-bandwidth 7, factorised by the
  numba banded Cholesky/LU of :mod:`ancf_beam.linalg`) and the constraints through the Schur
  complement ``J K_eff^-1 J^T`` (m x m). Modified Newton by default: the factorisation is kept
  while the residual contracts by 20x per iteration (4x with contact step control) and the
  step size is unchanged. At fixed steps the iteration starts from the Newmark state of the
  linearly extrapolated ``a~`` (:func:`ancf_beam.mbs.index3._ga_predict`; with contact step
  control from ``a~+ = a~``); the beams' elastic forces use the structure-of-arrays kernels
  (:func:`ancf_beam.mbs.system._soa_entry`). Positions
  satisfy ``Phi = 0`` to the Newton tolerance at every step; ``projection`` additionally
  projects the velocities onto ``J v + Phi_t = 0`` (mass-orthogonal) after each step. A step that
  does not converge is retried as two half steps (``max_halvings``).

Newton convergence: dynamic residual ``||M a + J^T lambda - Q|| <= max(tol F_ref, floor)``
(``F_ref`` the largest of the norms of gravity, the applied and elastic forces, ``M a`` and
``J^T lambda``; ``floor`` ten times the beams' elastic-force round-off) and the constraint
residual measured as the inertial force it leaves, ``c_a m_ref max|Phi| <= tol F_ref``
(``c_a = da/dq`` of the scheme, ``~ 1/(beta h^2)``; ``m_ref`` the largest diagonal mass entry),
or ``max|Phi|`` at coordinate round-off (``64 eps L_ref``, ``L_ref`` the largest initial
coordinate magnitude, at least 1 mm). A looser position tolerance would show up amplified by
``1/(beta h^2)`` in the accelerations and multipliers.

Initial state: ``q0`` must satisfy the constraints (it is projected when it is off by more than
round-off); velocities are made consistent (:meth:`System.consistent_velocities`), accelerations
and multipliers come from the index-1 system.

Every run ends exactly at ``t_end``: the fixed-step integrators take ``max(1, ceil(t_end /
dt))`` steps, the last one shortened to end at ``t_end`` (:func:`ancf_beam.solvers.timeloop.
step_plan`, as the cantilever's runs), the adaptive and contact-controlled ones stop at it.
Outputs at ``t = 0``, every ``sample_every = round(sample_dt / dt)`` steps (the adaptive and
contact-controlled integrators: every ``sample_dt``) and always the final state at ``t_end``:
coordinates, velocities, accelerations, multipliers, the largest violation of
``Phi`` and of ``Phi'`` and the energies (kinetic ``1/2 v^T M v``, strain + force-element
potential, gravity ``-Q_g . (q - q0)``, work released by damage).

Per-step state for force elements (``System.fst``) is carried by all integrators; the numba loops
stop at a failed step and leave it to Python (step halving). Systems with contact elements run
the index-3 and adaptive integrators through :mod:`ancf_beam.mbs.stepping` (step control, onset
location, the contact record).

Layout (as :mod:`ancf_beam.solvers`): this module is the front door (:func:`integrate`,
:func:`initial_state`; it re-exports the settings); :mod:`ancf_beam.mbs.settings` holds
:class:`IntegratorSettings` and the default steps, :mod:`ancf_beam.mbs.explicit` central
differences, :mod:`ancf_beam.mbs.index3` the generalized-alpha / Newmark step and its fixed-step
run, :mod:`ancf_beam.mbs.adaptive` the adaptive integrator, :mod:`ancf_beam.mbs.stepping` the
contact-controlled index-3 run and :mod:`ancf_beam.mbs.timeloop` what their loops share (sample
buffers and recorder, damage update, drive power). Each imports only from the modules below it.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from ancf_beam.kernel_cache import run_clock
from ancf_beam.mbs.adaptive import integrate_adaptive
from ancf_beam.mbs.explicit import run_explicit
from ancf_beam.mbs.index3 import run_index3
from ancf_beam.mbs.settings import (
    CONTACT_STEP_FRACTION,
    INTEGRATORS,
    IVP_METHODS,
    NEWTON_VARIANTS,
    IntegratorSettings,
    default_dt,
    explicit_dt_bound,
    explicit_dt_bounds,
)
from ancf_beam.mbs.system import System
from ancf_beam.mbs.timeloop import SampleBuffers, first_sample, n_sample_times, sample_times
from ancf_beam.resources import check_mechanism
from ancf_beam.results import MechanismResult
from ancf_beam.solvers.timeloop import step_plan

log = logging.getLogger(__name__)

__all__ = [
    "CONTACT_STEP_FRACTION",
    "INTEGRATORS",
    "IVP_METHODS",
    "NEWTON_VARIANTS",
    "IntegratorSettings",
    "default_dt",
    "explicit_dt_bound",
    "explicit_dt_bounds",
    "initial_state",
    "integrate",
    "n_sample_times",
    "sample_times",
]


def initial_state(system: System, q0=None, v0=None, t0: float = 0.0):
    """Consistent ``(q0, v0, a0, lam0)``: positions projected onto ``Phi = 0`` when they are off
    by more than round-off, velocities made consistent, index-1 accelerations and multipliers."""
    q = system.q0.copy() if q0 is None else np.array(q0, dtype=float)
    scale = max(1e-3, float(np.max(np.abs(q))))
    if system.m:
        phi = system.constraints(q, None, t0)["phi"]
        if np.max(np.abs(phi)) > 1e-12 * scale:
            log.info(
                "initial positions violate the constraints by %.3e: projecting",
                float(np.max(np.abs(phi))),
            )
            q = system.project_positions(q, t0, tol=1e-14 * scale)
    v = system.consistent_velocities(q, t0, v0)
    a, lam = system.accelerations(q, v, t0)
    return q, v, a, lam


def integrate(
    system: System,
    settings: IntegratorSettings,
    q0: np.ndarray | None = None,
    v0: np.ndarray | None = None,
    progress: bool = False,
    progress_interval_s: float = 5.0,
) -> MechanismResult:
    """Integrate ``system`` from ``t = 0`` to ``settings.t_end`` (see the module docstring).


    Raises :class:`InstabilityError` (explicit run became non-finite),
    :class:`NewtonConvergenceError` (index-3 step failed after all halvings) or
    :class:`ConstraintSingularityError` (the constraint Jacobian became singular)."""
    settings.validate()
    system.finalize()
    if system.unilateral and settings.integrator != "moreau-jean":
        c = system.unilateral[0]
        raise ValueError(
            f"contact '{c.name}' is nonsmooth (model 'nonsmooth'), which the integrator "
            f"'{settings.integrator}' cannot take: use integrator 'moreau-jean' or a compliant "
            "contact law"
        )
    q, v, a, lam = initial_state(system, q0, v0)
    system.reset_force_state(q, v)
    if settings.integrator == "moreau-jean":
        from ancf_beam.mbs.moreau import run_moreau_jean  # nonsmooth contacts, fixed step

        res = run_moreau_jean(system, settings, q, v, a, lam, progress, progress_interval_s)
    elif settings.integrator in ("generalized-alpha", "newmark") and system.contact_indices:
        from ancf_beam.mbs import stepping  # step control, onsets located, contact record

        res = stepping.integrate_contact_index3(
            system, settings, q, v, a, lam, progress, progress_interval_s
        )
    elif settings.integrator == "adaptive":
        res = integrate_adaptive(system, settings, q, v, a, lam, progress, progress_interval_s)
    else:
        res = _integrate_fixed_step(system, settings, q, v, a, lam, progress, progress_interval_s)
    return _with_roundoff(system, res)


def _sampled_default_dt(system: System, settings: IntegratorSettings) -> float:
    """:func:`default_dt`, shortened to the largest divisor of ``sample_dt`` below it where
    ``sample_dt`` is not already a multiple of it (the test of the fixed-step run's warning)."""
    dt = default_dt(system, settings)
    sample_dt = settings.sample_dt
    if abs(round(sample_dt / dt) * dt - sample_dt) > 1e-9 * sample_dt:
        dt = sample_dt / math.ceil(sample_dt / dt)
    return dt


def _integrate_fixed_step(
    system: System,
    settings: IntegratorSettings,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    lam: np.ndarray,
    progress: bool,
    progress_interval_s: float,
) -> MechanismResult:
    """A run at a fixed step ``dt`` (central differences also with contacts) by central
    differences (:func:`~ancf_beam.mbs.explicit.run_explicit`) or the index-3 integrators
    (:func:`~ancf_beam.mbs.index3.run_index3`), sampled every ``sample_dt``. The default step
    (:func:`default_dt`) is shortened to divide ``sample_dt`` where it does not already, so
    that the samples fall on steps (a given ``dt`` is taken as given)."""
    dt = settings.dt if settings.dt is not None else _sampled_default_dt(system, settings)
    plan = step_plan(settings.t_end, dt, settings.sample_dt, settings.sample_dt)
    check_mechanism(system, settings, plan.n_samples, plan.n_steps)
    sample_every = plan.sample_every
    if abs(sample_every * dt - settings.sample_dt) > 1e-9 * settings.sample_dt:
        log.warning(
            "sample_dt = %g s is not a multiple of dt = %g s: sampling every %d steps (%g s)",
            settings.sample_dt,
            dt,
            sample_every,
            sample_every * dt,
        )
    buf = SampleBuffers(plan.n_samples, system.n, system.m, system.fst.size)
    W, q_ref, u, p = first_sample(system, q, v, a, lam, buf)
    chunk_one = system.has_function_drivers  # user functions are evaluated in Python per step
    t_start = run_clock()
    c_start = time.process_time()
    stats: dict = {"dt": dt, "sample_every": sample_every}
    args = (
        system,
        settings,
        dt,
        plan,
        q,
        v,
        a,
        lam,
        W,
        q_ref,
        buf,
        chunk_one,
        progress,
        progress_interval_s,
    )
    if settings.integrator == "central-difference":
        k, steps = run_explicit(*args)
        iters = None
    else:
        k, steps, iters = run_index3(*args, stats)
    wall = run_clock() - t_start
    cpu = time.process_time() - c_start
    t = np.arange(plan.n_samples) * sample_every * dt
    t[k - 1] = settings.t_end  # the last record is the final state (the last step shortened)
    return buf.result(
        t,
        k,
        integrator=settings.integrator,
        dt=dt,
        steps=steps,
        wall_s=wall,
        cpu_s=cpu,
        newton_iterations=iters,
        stats=stats,
    )


def _with_roundoff(system: System, res: MechanismResult) -> MechanismResult:
    """``res`` with the round-off level of the beams' strain energy (J), below which an energy
    input leaves ``energy_drift_rel`` not available."""
    res.energy_roundoff = sum(b.model.energy_roundoff() for b in system.beams)
    return res
