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
* ``generalized-alpha`` / ``newmark`` -- index-3 (Arnold & Bruels 2007 form, as the cantilever's
  :mod:`ancf_beam.solvers.implicit`): equilibrium ``M a + J^T lambda = Q`` and ``Phi(q, t) = 0``
  enforced at ``t_{n+1}`` with the multipliers as unknowns; Newmark formulas on the
  acceleration-like ``a~`` with ``(1 - alpha_m) a~+ + alpha_m a~ = (1 - alpha_f) a+ + alpha_f a``,
  ``alpha_m = (2 rho - 1)/(rho + 1)``, ``alpha_f = rho/(rho + 1)`` from ``rho_inf``; Newmark is
  ``alpha_m = alpha_f = 0`` with ``beta``, ``gamma``. Newton on ``[K_eff J^T; J 0]`` with
  ``K_eff = c_a M + c_v C + K_T + sum lambda Phi_qq`` (banded, half-bandwidth 7, factorised by the
  numba banded Cholesky/LU of :mod:`ancf_beam.linalg`) and the constraints through the Schur
  complement ``J K_eff^-1 J^T`` (m x m). Modified Newton by default: the factorisation is kept
  while the residual contracts by 4x per iteration and the step size is unchanged. Positions
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
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from ancf_beam.beam.damage import update_damage
from ancf_beam.config import IVP_METHODS, MECHANISM_INTEGRATORS, MechanismSolverSpec
from ancf_beam.linalg import (
    BANDWIDTH,
    NO_FACTOR,
    band_factor_solve,
    band_factorize,
    sym_band_matvec,
)
from ancf_beam.mbs import core
from ancf_beam.mbs.forces import STATE_SIZE
from ancf_beam.mbs.system import System
from ancf_beam.resources import MAX_ADAPTIVE_STEPS, check_mechanism
from ancf_beam.results import (
    ConstraintSingularityError,
    InstabilityError,
    MechanismResult,
    NewtonConvergenceError,
)
from ancf_beam.solvers.timeloop import step_plan

log = logging.getLogger(__name__)

__all__ = [
    "INTEGRATORS",
    "IVP_METHODS",
    "IntegratorSettings",
    "default_dt",
    "explicit_dt_bound",
    "explicit_dt_bounds",
    "initial_state",
    "integrate",
    "n_sample_times",
    "sample_times",
]

INTEGRATORS = MECHANISM_INTEGRATORS  # generalized-alpha (default), newmark, central-difference,
# adaptive
NEWTON_VARIANTS = ("modified", "full")
_SOLVER = MechanismSolverSpec()  # the defaults (ancf_beam.config holds them)

_BW = BANDWIDTH
_EPS = float(np.finfo(float).eps)
_ROUNDOFF = 64 * _EPS
_SLOW_CONTRACTION = 0.25

# status codes of the numba loops
OK, NONFINITE, SINGULAR, NEWTON_FAIL = 0, 1, 2, 3


@dataclass(frozen=True)
class IntegratorSettings:
    """Time integration settings (SI units).

    ``dt`` (s): fixed step (``None``: :func:`default_dt`); ``sample_dt`` (s): output interval;
    ``alpha``, ``beta`` (1/s): Baumgarte stabilisation of the index-1 integrators; ``rho_inf``:
    generalized-alpha spectral radius at infinity; ``newmark_beta``, ``newmark_gamma``;
    ``max_iter``, ``tol`` (relative residual), ``max_halvings``, ``newton`` (``modified`` or
    ``full``) for the index-3 Newton; ``projection``: project positions (central difference) and
    velocities (central difference, index-3) onto the constraint manifold after every step;
    ``method``, ``rtol``, ``atol``: the adaptive integrator; ``step_control`` (index-3 with
    contact elements): steps of ``dt`` (None: ``sample_dt``) in free flight and ``dt_contact``
    (s; None: the fixed-step default with contacts, :func:`default_dt`) while a contact gap is
    below ``contact_margin`` (m) or would close within the next step, contact onsets located to
    a penetration of at most ``onset_tol`` (m) (:mod:`ancf_beam.mbs.stepping`; the other
    integrators ignore it: the adaptive one controls its own step and restarts at every
    onset).
    The solver fields and their defaults are those of
    :class:`ancf_beam.config.MechanismSolverSpec`."""

    integrator: str = INTEGRATORS[0]
    t_end: float = 1.0
    sample_dt: float = 1e-3
    alpha: float = 0.0
    beta: float = 0.0
    dt: float | None = _SOLVER.dt
    rho_inf: float = _SOLVER.rho_inf
    newmark_beta: float = _SOLVER.newmark_beta
    newmark_gamma: float = _SOLVER.newmark_gamma
    max_iter: int = _SOLVER.max_iter
    tol: float = _SOLVER.tol
    max_halvings: int = _SOLVER.max_halvings
    newton: str = _SOLVER.newton
    projection: bool = _SOLVER.projection
    method: str = _SOLVER.method
    rtol: float = _SOLVER.rtol
    atol: float = _SOLVER.atol
    step_control: bool = _SOLVER.step_control
    dt_contact: float | None = _SOLVER.dt_contact
    contact_margin: float = _SOLVER.contact_margin
    onset_tol: float = _SOLVER.onset_tol

    def validate(self) -> None:
        if self.integrator not in INTEGRATORS:
            raise ValueError(f"unknown integrator {self.integrator!r}; choose one of "
                             + ", ".join(INTEGRATORS))  # fmt: skip
        for key in ("t_end", "sample_dt", "tol", "rtol", "atol"):
            x = getattr(self, key)
            if not (math.isfinite(x) and x > 0):
                raise ValueError(f"{key} must be > 0, got {x!r}")
        if self.dt is not None and not (math.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"dt must be > 0, got {self.dt!r}")
        if self.alpha < 0 or self.beta < 0:
            raise ValueError("Baumgarte alpha and beta must be >= 0")
        if not 0 <= self.rho_inf <= 1:
            raise ValueError(f"rho_inf must be in [0, 1], got {self.rho_inf!r}")
        if self.method not in IVP_METHODS:
            raise ValueError(f"method must be one of {', '.join(IVP_METHODS)}")
        if self.newton not in NEWTON_VARIANTS:
            raise ValueError(f"newton must be one of {', '.join(NEWTON_VARIANTS)}")
        if self.dt_contact is not None and not (math.isfinite(self.dt_contact)
                                                and self.dt_contact > 0):  # fmt: skip
            raise ValueError(f"dt_contact must be > 0, got {self.dt_contact!r}")
        if not (math.isfinite(self.onset_tol) and self.onset_tol > 0):
            raise ValueError(f"onset_tol must be > 0, got {self.onset_tol!r}")
        if not (math.isfinite(self.contact_margin) and self.contact_margin >= 0):
            raise ValueError(f"contact_margin must be >= 0, got {self.contact_margin!r}")
        if self.projection and self.integrator == "adaptive":
            raise ValueError("projection is not available with the adaptive integrator")

    def scheme(self) -> tuple[float, float, float, float]:
        """``(beta, gamma, alpha_m, alpha_f)`` of the index-3 integrators."""
        if self.integrator == "newmark":
            return self.newmark_beta, self.newmark_gamma, 0.0, 0.0
        r = self.rho_inf
        am = (2.0 * r - 1.0) / (r + 1.0)
        af = r / (r + 1.0)
        return 0.25 * (1.0 - am + af) ** 2, 0.5 - am + af, am, af


#: fixed step in contact: this fraction of the contact bound 2/omega (0.1/omega: about 31 steps
#: per contact of a linear law, whose duration is pi/omega); also the first step of the adaptive
#: integrator after an onset
CONTACT_STEP_FRACTION = 0.05


def explicit_dt_bounds(system: System) -> dict[str, float]:
    """Explicit stability bounds ``2 / omega`` (s) by governing mode: ``"beam"`` (the largest
    unconstrained element frequency of the beams at their reference: a conservative bound, joints
    and rigid bodies only lower the system's frequencies) and ``"contact"`` (the stiffest
    contact, ``omega = sqrt(k_lin / m_eff)`` with the stiffness of
    :meth:`~ancf_beam.mbs.forces.CircleContact.linear_stiffness`: for the nonlinear laws the
    tangent at the estimated largest penetration; contact damping lowers the undamped bound
    ``2 / omega`` by the factor ``sqrt(1 + zeta^2) - zeta``). Modes that do not apply are
    left out."""
    out = {}
    if system.beams:
        from ancf_beam.solvers.critical import element_omega_max

        out["beam"] = 2.0 / max(element_omega_max(b.model) for b in system.beams)
    omegas = [w for fe in system.contact_forces.values() if (w := fe.omega()) is not None]
    if omegas:
        out["contact"] = 2.0 / max(omegas)
    return out


def explicit_dt_bound(system: System) -> float | None:
    """The smallest of :func:`explicit_dt_bounds` (s); None without beams or contacts."""
    b = explicit_dt_bounds(system)
    return min(b.values()) if b else None


def default_dt(system: System, settings: IntegratorSettings, safety: float = 0.8) -> float:
    """Default step: ``sample_dt`` for the implicit integrators and for systems without beams;
    for central differences with beams ``safety`` times the beam bound of
    :func:`explicit_dt_bounds`, at most ``sample_dt``. With contacts every fixed-step integrator
    takes at most ``CONTACT_STEP_FRACTION`` times the contact bound (the step is not controlled:
    it must resolve the impacts)."""
    bounds = explicit_dt_bounds(system)
    dt = settings.sample_dt
    if settings.integrator == "central-difference" and "beam" in bounds:
        dt = min(dt, safety * bounds["beam"])
    if "contact" in bounds:
        dt = min(dt, CONTACT_STEP_FRACTION * bounds["contact"])
    return dt


# ------------------------------------------------------------------------------------------
# numba loops
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def _damage(q, S):
    """Staggered damage update of every damaging beam; returns the released energy (J)."""
    released = 0.0
    for b in S[3]:
        if b[3]:
            o = b[0]
            released += update_damage(q[o : o + b[1]], *b[4])
    return released


@njit(cache=True, nogil=True, error_model="numpy")
def _record(i, q, v, a, lam, S, W, energy, pot, diss, work, q_ref, out_q, out_v, out_a, out_l,
            out_e, mv, out_s):  # fmt: skip
    """Store sample ``i`` (constraint rows of ``W`` evaluated at ``q``; the force elements'
    carried state ``W[20]`` flattened into ``out_s``; ``diss`` the dissipated work, ``work``
    the work the driving constraints fed in, both since ``t = 0``)."""
    phi = W[1]
    dphi = W[2]
    for k in range(q.shape[0]):
        out_q[i, k] = q[k]
        out_v[i, k] = v[k]
        out_a[i, k] = a[k]
    for k in range(lam.shape[0]):
        out_l[i, k] = lam[k]
    fs = W[20]
    for e in range(fs.shape[0]):
        for k in range(fs.shape[1]):
            out_s[i, e * fs.shape[1] + k] = fs[e, k]
    sym_band_matvec(S[0], v, mv)
    kin = 0.0
    grav = 0.0
    for k in range(q.shape[0]):
        kin += v[k] * mv[k]
        grav -= S[2][k] * (q[k] - q_ref[k])
    core.jac_mul(W[3], W[4], W[5], v, dphi)
    pmax = 0.0
    vmax = 0.0
    for r in range(phi.shape[0]):
        pmax = max(pmax, abs(phi[r]))
        vmax = max(vmax, abs(dphi[r] + W[7][r]))
    out_e[i, 0] = 0.5 * kin
    out_e[i, 1] = energy + pot
    out_e[i, 2] = grav
    out_e[i, 3] = diss
    out_e[i, 4] = pmax
    out_e[i, 5] = vmax
    out_e[i, 6] = work


@njit(cache=True, nogil=True, error_model="numpy")
def drive_power(lam, phit):
    """Power (W) the constraints feed in: ``lam . Phi_t`` (the constraint forces ``-J^T lam``
    do the work ``-lam . J v = lam . Phi_t`` on a motion that satisfies ``J v + Phi_t = 0``:
    only rheonomic rows, i.e. drives, contribute)."""
    p = 0.0
    for r in range(lam.shape[0]):
        p += lam[r] * phit[r]
    return p


@njit(cache=True, nogil=True, error_model="numpy")
def _cd_chunk(n_steps, step0, dt, n_total, h_last, t_end, q, v, a, lam, S, W, alpha, beta, proj,
              ptol, lref, vs, diss, work, sample_every, q_ref, out_q, out_v, out_a, out_l, out_e,
              mv, out_s, i_sample):  # fmt: skip
    """Up to ``n_steps`` central-difference steps of the ``n_total`` of a run (steps of ``dt``,
    the last one of ``h_last``, ending at ``t_end``; the final state is always recorded);
    returns (steps done, status, i_sample, dissipated work, work fed in by the drives). A state
    that is not finite, or a coordinate that moves more than ``lref`` in one step (an unstable
    run long before it overflows), stops the loop. ``W[7]`` must hold ``Phi_t`` at the start
    (the last evaluation)."""
    n = q.shape[0]
    p1 = core.contact_dissipation(q, v, S, W[20], W[13], W[14])
    w1 = drive_power(lam, W[7])
    for s in range(n_steps):
        step = step0 + s
        last = step == n_total - 1
        h = h_last if last else dt
        t1 = t_end if last else (step + 1) * dt
        p0 = p1
        w0 = w1
        for i in range(n):
            v[i] += 0.5 * h * a[i]
            q[i] += h * v[i]
        if proj:
            core.project_position(q, t1, S, W, ptol, 3)
        for i in range(n):
            vs[i] = v[i] + 0.5 * h * a[i]
        energy, pot, _, _, ratio = core.accel_index1(q, vs, t1, S, W, alpha, beta, a, lam)
        if ratio == 0.0:
            return s, SINGULAR, i_sample, diss, work
        finite = np.isfinite(energy)
        vmax = 0.0
        for i in range(n):
            v[i] += 0.5 * h * a[i]
            vmax = max(vmax, abs(v[i]))
            if not np.isfinite(v[i]):
                finite = False
        if not finite or vmax * h > lref:
            return s, NONFINITE, i_sample, diss, work
        if proj:
            core.project_velocity(q, v, t1, S, W)
        core.update_force_state(q, v, t1, S, W[20])
        released = _damage(q, S)
        p1 = core.contact_dissipation(q, v, S, W[20], W[13], W[14])
        diss += released + 0.5 * h * (p0 + p1)  # damage; contacts (trapezoidal rule)
        w1 = drive_power(lam, W[7])
        work += 0.5 * h * (w0 + w1)
        if (step + 1) % sample_every == 0 or last:
            _record(i_sample, q, v, a, lam, S, W, energy - released, pot, diss, work, q_ref,
                    out_q, out_v, out_a, out_l, out_e, mv, out_s)  # fmt: skip
            i_sample += 1
    return n_steps, OK, i_sample, diss, work


# index-3 parameters and state
_P_BETA, _P_GAMMA, _P_AM, _P_AF, _P_TOL, _P_LOOSE, _P_INC, _P_FLOOR, _P_FMIN = range(9)
_P_MAXIT, _P_MODIFIED, _P_PHIFLOOR, _P_PROJ, _P_MREF = range(9, 14)
_N_PAR = 14
_I_KIND, _I_FACT, _I_INCR, _I_FAIL_IT, _I_REASON = range(5)
_F_H, _F_FAIL_R, _F_FAIL_PHI, _F_ENERGY, _F_POT, _F_POWER, _F_WORK = range(7)


@njit(cache=True, nogil=True, error_model="numpy")
def _effective_lower(ab, mlb, c_a, out):
    for k in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = ab[_BW + k, j] + c_a * mlb[k, j]


@njit(cache=True, nogil=True, error_model="numpy")
def _ga_step(h, t1, q, v, a, at, lam, par, ist, fst, S, W, G):
    """One Newton-solved index-3 step of size ``h`` ending at ``t1``. On success the state is
    overwritten and (True, iterations) returned; on failure it is left untouched and the failure
    described in ``ist``/``fst``."""
    n = q.shape[0]
    mlb = S[0]
    ei = S[5]
    ef = S[6]
    m = ei.shape[0]
    (f, phi, dphi, jc, jv, jn, gam, phit, y, smat, spiv, bm, xp, pp, pq, cols, vals, lu_d,
     piv_d, dext, fstate, flags) = W  # fmt: skip
    (d, e, vp, ap, qi, vi, ai, r, ma, lam_i, ab, lb, fac, lu, piv, xpk, yk, sk, spk,
     bk) = G  # fmt: skip
    beta = par[_P_BETA]
    af = par[_P_AF]
    c_a = (1.0 - par[_P_AM]) / ((1.0 - af) * beta * h * h)
    c_v = par[_P_GAMMA] / (beta * h)
    tol = par[_P_TOL]
    loose = par[_P_LOOSE]
    floor = par[_P_FLOOR]
    # constraint residual measured as the inertial force it leaves: c_a m_ref |Phi| (Arnold &
    # Bruels scale the constraint rows by 1/(beta h^2) for the same reason)
    phi_scale = c_a * par[_P_MREF]
    max_iter = int(par[_P_MAXIT])
    modified = par[_P_MODIFIED] != 0.0
    for i in range(n):
        d[i] = h * v[i] + (0.5 * h * h) * at[i]
        vp[i] = v[i] + h * at[i]
        ap[i] = at[i] if af == 0.0 else (at[i] - af * a[i]) / (1.0 - af)
        e[i] = 0.0
    for k in range(m):
        lam_i[k] = lam[k]
    it = 0
    prev = np.inf
    dnorm = np.inf
    dtot = 0.0
    rn = np.inf
    pmax = np.inf
    energy = 0.0
    pot = 0.0
    refactor = (not modified) or ist[_I_KIND] == NO_FACTOR or fst[_F_H] != h
    converged = False
    ist[_I_REASON] = NEWTON_FAIL
    while True:
        qn = 0.0
        for i in range(n):
            qi[i] = q[i] + d[i]
            vi[i] = vp[i] + c_v * e[i]
            ai[i] = ap[i] + c_a * e[i]
            qn += qi[i] * qi[i]
        energy, pot = core.system_forces(qi, vi, t1, S, fstate, f, pp, pq, cols, vals)
        core.eval_constraints(qi, vi, t1, ei, ef, dext, phi, jc, jv, jn, gam, phit, pp, pq)
        sym_band_matvec(mlb, ai, ma)
        fn = 0.0
        mn = 0.0
        for i in range(n):
            fn += f[i] * f[i]
            mn += ma[i] * ma[i]
            r[i] = f[i] - ma[i]
        core.jac_tmul_add(jc, jv, jn, lam_i, r, -1.0)
        rn = 0.0
        ln = 0.0
        for i in range(n):
            rn += r[i] * r[i]
            x = f[i] - ma[i] - r[i]
            ln += x * x
        rn = np.sqrt(rn)
        pmax = 0.0
        for k in range(m):
            pmax = max(pmax, abs(phi[k]))
        if not (np.isfinite(rn) and np.isfinite(pmax)):
            ist[_I_REASON] = NONFINITE
            break
        f_ref = max(par[_P_FMIN], np.sqrt(fn), np.sqrt(mn), np.sqrt(ln))
        tol_r = max(tol * f_ref, floor)
        phi_tol = max(tol * f_ref / phi_scale, par[_P_PHIFLOOR])
        if rn <= tol_r and pmax <= phi_tol:
            converged = True
            break
        if it > 0 and rn <= max(loose * f_ref, floor) and pmax <= phi_tol:
            if dnorm <= max(par[_P_INC] * dtot, _ROUNDOFF * np.sqrt(qn)):
                ist[_I_INCR] += 1
                converged = True
                break
        if it >= max_iter:
            break
        if modified and it > 0 and rn > _SLOW_CONTRACTION * prev:
            refactor = True
        if refactor:
            core.system_tangent(qi, vi, t1, lam_i, S, fstate, c_v, ab, pp, pq, cols, vals)
            _effective_lower(ab, mlb, c_a, lb)
            kind = band_factorize(lb, fac, lu, piv)
            ist[_I_KIND] = kind
            fst[_F_H] = h
            if kind == NO_FACTOR:
                break
            ist[_I_FACT] += 1
            if m > 0:
                ratio = core.schur_prepare(kind, fac, lu, piv, xpk, jc, jv, jn, yk, sk, spk)
                if ratio == 0.0:
                    ist[_I_KIND] = NO_FACTOR
                    ist[_I_REASON] = SINGULAR
                    break
            refactor = not modified
        band_factor_solve(ist[_I_KIND], fac, lu, piv, xpk, r)  # r <- K^-1 r
        if m > 0:
            core.jac_mul(jc, jv, jn, r, bk)
            for k in range(m):
                bk[k] += phi[k]
            core.lu_solve(sk, spk, bk)
            for k in range(m):
                lam_i[k] += bk[k]
                yr = yk[k]
                lk = bk[k]
                for i in range(n):
                    r[i] -= lk * yr[i]
        dn = 0.0
        dt2 = 0.0
        for i in range(n):
            x = r[i]
            dn += x * x
            e[i] += x
            d[i] += x
            dt2 += d[i] * d[i]
        dnorm = np.sqrt(dn)
        dtot = np.sqrt(dt2)
        if not np.isfinite(dnorm):
            ist[_I_REASON] = NONFINITE
            break
        prev = rn
        it += 1
    if not converged:
        ist[_I_FAIL_IT] = it
        fst[_F_FAIL_R] = rn
        fst[_F_FAIL_PHI] = pmax
        if modified:
            ist[_I_KIND] = NO_FACTOR
        return False, it
    inv_bh2 = 1.0 / (beta * h * h)
    for i in range(n):
        q[i] = qi[i]
        v[i] = vi[i]
        at[i] += e[i] * inv_bh2
        a[i] = ai[i]
    for k in range(m):
        lam[k] = lam_i[k]
    if par[_P_PROJ] != 0.0 and m > 0:
        if not (S[9] and flags[0] == 1):
            core.schur_prepare(1, S[1], lu_d, piv_d, xp, jc, jv, jn, y, smat, spiv)
            flags[0] = 1
        core.project_velocity(q, v, t1, S, W)
    core.update_force_state(q, v, t1, S, fstate)
    fst[_F_ENERGY] = energy
    fst[_F_POT] = pot
    # work of the drives over the step (trapezoidal rule; Phi_t at the converged state)
    power = drive_power(lam, phit)
    fst[_F_WORK] += 0.5 * h * (fst[_F_POWER] + power)
    fst[_F_POWER] = power
    return True, it


@njit(cache=True, nogil=True, error_model="numpy")
def _ga_chunk(n_steps, step0, dt, n_total, h_last, t_end, q, v, a, at, lam, par, ist, fst, S, W,
              G, diss, sample_every, q_ref, out_q, out_v, out_a, out_l, out_e, mv, out_s, iters,
              i_sample):  # fmt: skip
    """Up to ``n_steps`` index-3 steps of the ``n_total`` of a run (steps of ``dt``, the last
    one of ``h_last``, ending at ``t_end``; the final state is always recorded); returns
    (steps done, i_sample, dissipated work); fewer steps than asked means the next one failed
    (state left at its start). Every step books the drives' work in ``fst[_F_WORK]``
    (:func:`_ga_step`)."""
    for s in range(n_steps):
        step = step0 + s
        last = step == n_total - 1
        h = h_last if last else dt
        t1 = t_end if last else (step + 1) * dt
        ok, it = _ga_step(h, t1, q, v, a, at, lam, par, ist, fst, S, W, G)
        if not ok:
            return s, i_sample, diss
        iters[step] = it
        released = _damage(q, S)
        if released != 0.0:
            diss += released
            fst[_F_ENERGY] -= released
            ist[_I_KIND] = NO_FACTOR  # stiffness changed
        if (step + 1) % sample_every == 0 or last:
            _record(i_sample, q, v, a, lam, S, W, fst[_F_ENERGY], fst[_F_POT], diss, fst[_F_WORK],
                    q_ref, out_q, out_v, out_a, out_l, out_e, mv, out_s)  # fmt: skip
            i_sample += 1
    return n_steps, i_sample, diss


@njit(cache=True, nogil=True, error_model="numpy")
def _ivp_rhs(t, y, S, W, alpha, beta, a, lam, out):
    """First-order right-hand side ``[v; a(q, v, t)]`` of the index-1 form; returns the pivot
    ratio of the constraint Schur complement (0: singular)."""
    n = a.shape[0]
    q = y[:n]
    v = y[n:]
    res = core.accel_index1(q, v, t, S, W, alpha, beta, a, lam)
    for i in range(n):
        out[i] = v[i]
        out[n + i] = a[i]
    return res[4]


# ------------------------------------------------------------------------------------------
# driver
# ------------------------------------------------------------------------------------------
class _Buffers:
    """Preallocated sample buffers."""

    def __init__(self, n_samples: int, n: int, m: int, n_state: int = 0):
        self.q = np.zeros((n_samples, n))
        self.v = np.zeros((n_samples, n))
        self.a = np.zeros((n_samples, n))
        self.lam = np.zeros((n_samples, m))
        self.e = np.zeros((n_samples, 7))
        self.mv = np.zeros(n)
        self.s = np.zeros((n_samples, n_state))

    def args(self):
        return self.q, self.v, self.a, self.lam, self.e, self.mv, self.s

    def result(self, t, k, **kw) -> MechanismResult:
        return MechanismResult(
            t=t[:k], q=self.q[:k].copy(), v=self.v[:k].copy(), a=self.a[:k].copy(),
            lam=self.lam[:k].copy(), phi_max=self.e[:k, 4].copy(), dphi_max=self.e[:k, 5].copy(),
            kinetic=self.e[:k, 0].copy(), strain=self.e[:k, 1].copy(),
            gravity=self.e[:k, 2].copy(), dissipated=self.e[:k, 3].copy(),
            drive_work=self.e[:k, 6].copy(),
            force_state=self.s[:k].reshape(k, self.s.shape[1] // STATE_SIZE, STATE_SIZE).copy(),
            **kw,
        )  # fmt: skip


def n_sample_times(t_end: float, sample_dt: float) -> int:
    """Number of :func:`sample_times`."""
    return max(1, int(math.ceil(t_end / sample_dt - 1e-9))) + 1


def sample_times(t_end: float, sample_dt: float) -> np.ndarray:
    """Output times (s) of a run that controls its own steps (adaptive, index-3 with contacts):
    ``0``, every ``sample_dt`` and always ``t_end`` (the last interval shorter when ``t_end`` is
    not a multiple of ``sample_dt``; within 1e-9 of a sample interval it is one)."""
    ts = np.arange(n_sample_times(t_end, sample_dt)) * sample_dt
    ts[-1] = t_end
    return ts


def initial_state(system: System, q0=None, v0=None, t0: float = 0.0):
    """Consistent ``(q0, v0, a0, lam0)``: positions projected onto ``Phi = 0`` when they are off
    by more than round-off, velocities made consistent, index-1 accelerations and multipliers."""
    q = system.q0.copy() if q0 is None else np.array(q0, dtype=float)
    scale = max(1e-3, float(np.max(np.abs(q))))
    if system.m:
        phi = system.constraints(q, None, t0)["phi"]
        if np.max(np.abs(phi)) > 1e-12 * scale:
            log.info("initial positions violate the constraints by %.3e: projecting",
                     float(np.max(np.abs(phi))))  # fmt: skip
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
    q, v, a, lam = initial_state(system, q0, v0)
    system.reset_force_state(q, v)
    if settings.integrator in ("generalized-alpha", "newmark") and system.contact_indices:
        from ancf_beam.mbs import stepping  # step control, onsets located, contact record

        if settings.integrator != "adaptive":
            res = stepping.integrate_contact_index3(system, settings, q, v, a, lam)
            return _with_roundoff(system, res)
    if settings.integrator == "adaptive":
        return _with_roundoff(system, _integrate_adaptive(system, settings, q, v, a, lam))
    dt = settings.dt if settings.dt is not None else default_dt(system, settings)
    plan = step_plan(settings.t_end, dt, settings.sample_dt, settings.sample_dt)
    check_mechanism(system, settings, plan.n_samples, plan.n_steps)
    sample_every = plan.sample_every
    if abs(sample_every * dt - settings.sample_dt) > 1e-9 * settings.sample_dt:
        log.warning("sample_dt = %g s is not a multiple of dt = %g s: sampling every %d steps "
                    "(%g s)", settings.sample_dt, dt, sample_every, sample_every * dt)  # fmt: skip
    buf = _Buffers(plan.n_samples, system.n, system.m, system.fst.size)
    W = system.work()
    q_ref = system.q0.copy()
    _, u, p = system.forces_at(q, v, 0.0)
    system.update_drivers(0.0, W)
    core.eval_constraints(q, v, 0.0, system.ei, system.ef, W[19], W[1], W[3], W[4], W[5], W[6],
                          W[7], W[13], W[14])  # fmt: skip
    _record(0, q, v, a, lam, system.data, W, u, p, 0.0, 0.0, q_ref, *buf.args())
    chunk_one = system.has_function_drivers  # user functions are evaluated in Python per step
    t_start = time.perf_counter()
    c_start = time.process_time()
    stats: dict = {"dt": dt, "sample_every": sample_every}
    if settings.integrator == "central-difference":
        k, steps = _run_explicit(system, settings, dt, plan, q, v, a, lam, W, q_ref, buf,
                                 chunk_one, progress, progress_interval_s)  # fmt: skip
        iters = None
    else:
        k, steps, iters = _run_index3(system, settings, dt, plan, q, v, a, lam, W, q_ref, buf,
                                      chunk_one, progress, progress_interval_s, stats)  # fmt: skip
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - c_start
    t = np.arange(plan.n_samples) * sample_every * dt
    t[k - 1] = settings.t_end  # the last record is the final state (the last step shortened)
    res = buf.result(t, k, integrator=settings.integrator, dt=dt, steps=steps, wall_s=wall,
                     cpu_s=cpu, newton_iterations=iters, stats=stats)  # fmt: skip
    return _with_roundoff(system, res)


def _with_roundoff(system: System, res: MechanismResult) -> MechanismResult:
    """``res`` with the round-off level of the beams' strain energy (J), below which an energy
    input leaves ``energy_drift_rel`` not available."""
    res.energy_roundoff = sum(b.model.energy_roundoff() for b in system.beams)
    return res


def _progress(name, step, n_steps, dt, t0, state):
    now = time.perf_counter()
    rate = step / max(now - t0, 1e-9)
    if now - state[0] >= state[1] and step < n_steps:
        log.info("%s: t = %.4g / %.4g s, %.3g steps/s, ETA %.0f s", name, step * dt,
                 n_steps * dt, rate, (n_steps - step) / rate)  # fmt: skip
        state[0] = now
    return max(1, int(rate * 1.0))


def _run_explicit(system, st, dt, plan, q, v, a, lam, W, q_ref, buf, one, progress,
                  interval):  # fmt: skip
    if st.beta * dt > 0.5 or st.alpha * dt > 0.5:
        log.warning("Baumgarte alpha dt = %.3g, beta dt = %.3g: explicit stability needs both "
                    "well below 1", st.alpha * dt, st.beta * dt)  # fmt: skip
    n_steps = plan.n_steps
    vs = np.zeros(system.n)
    lref = max(1e-3, float(np.max(np.abs(q))))
    ptol = 1e-12 * lref
    diss = 0.0
    work = 0.0
    i_sample = 1
    step = 0
    t0 = time.perf_counter()
    state = [t0, interval if progress else math.inf]
    chunk = 1 if one else min(n_steps, 500)
    while step < n_steps:
        todo = min(chunk, n_steps - step)
        if one:
            system.update_drivers(_step_end(step, dt, plan, st.t_end), W)
        done, status, i_sample, diss, work = _cd_chunk(
            todo, step, dt, n_steps, plan.last_dt, st.t_end, q, v, a, lam, system.data, W,
            st.alpha, st.beta, st.projection, ptol, lref, vs, diss, work, plan.sample_every,
            q_ref, *buf.args(), i_sample,
        )  # fmt: skip
        step += done
        if status != OK:
            t = _step_end(step, dt, plan, st.t_end)
            if status == SINGULAR:
                raise ConstraintSingularityError(
                    f"central-difference: the constraint Jacobian is singular at step {step + 1}"
                    f", t = {t:.6g} s"
                )
            bound = explicit_dt_bound(system)
            crit = "" if bound is None else f" (element bound {bound:.4e} s)"
            raise InstabilityError(
                f"central-difference: unstable at step {step + 1}, t = {t:.6g} s: the state "
                f"is not finite or moves more than {lref:.3g} in one step; dt = {dt:.4e} s; "
                f"keep dt below the critical step 2/omega_max{crit} and Baumgarte alpha dt, "
                "beta dt well below 1"
            )
        if not one:
            chunk = min(max(100, _progress("central-difference", step, n_steps, dt, t0, state)),
                        100000)  # fmt: skip
    return i_sample, step


class _Index3:
    """State of an index-3 run (numba arrays) and the step halving."""

    def __init__(self, system: System, st: IntegratorSettings, W, q, v, a, lam):
        n, m = system.n, system.m
        self.system = system
        self.st = st
        self.W = W
        self.q, self.v, self.a, self.lam = q, v, a, lam
        self.at = a.copy()
        beta, gamma, am, af = st.scheme()
        par = np.zeros(_N_PAR)
        par[[_P_BETA, _P_GAMMA, _P_AM, _P_AF]] = beta, gamma, am, af
        par[_P_TOL] = st.tol
        par[_P_LOOSE] = math.sqrt(st.tol)
        par[_P_INC] = 1e-10
        floor = 0.0
        for b in system.beams:
            floor = max(floor, b.model.roundoff_floor(10.0))
        par[_P_FLOOR] = floor
        par[_P_FMIN] = float(np.linalg.norm(system.qg))
        par[_P_MAXIT] = st.max_iter
        par[_P_MODIFIED] = float(st.newton == "modified")
        par[_P_PHIFLOOR] = _ROUNDOFF * max(1e-3, float(np.max(np.abs(system.q0))))
        par[_P_MREF] = float(np.max(system.mlb[0]))
        par[_P_PROJ] = float(st.projection)
        self.par = par
        self.ist = np.zeros(5, dtype=np.int64)
        self.fst = np.zeros(7)
        self.fst[_F_H] = -1.0
        self.fst[_F_POWER] = drive_power(lam, W[7])  # W[7]: Phi_t at the initial state
        self.G = (
            np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n),
            np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(m),
            np.zeros((2 * _BW + 1, n)), np.zeros((_BW + 1, n)), np.zeros((2, n, _BW + 1)),
            np.zeros((3 * _BW + 1, n)), np.zeros(n, dtype=np.int64), np.zeros(n + 2 * _BW),
            np.zeros((m, n)), np.zeros((m, m)), np.zeros(m, dtype=np.int64), np.zeros(m),
        )  # fmt: skip
        self.halvings = 0

    def args(self):
        return (self.q, self.v, self.a, self.at, self.lam, self.par, self.ist, self.fst,
                self.system.data, self.W, self.G)  # fmt: skip

    def advance(self, h: float, t: float, step: int, depth: int = 0) -> int:
        """Step ``h`` from ``t`` with halving on failure; returns Newton iterations."""
        if self.system.has_function_drivers:
            self.system.update_drivers(t + h, self.W)
        ok, it = _ga_step(h, t + h, *self.args())
        if ok:
            return int(it)
        return self._halve(h, t, step, depth, int(it))

    def recover(self, h: float, t: float, step: int) -> int:
        """The step ``h`` from ``t`` just failed in the numba loop (state untouched): retry it
        as two half steps, recursively; returns the Newton iterations spent."""
        return self._halve(h, t, step, 0, int(self.ist[_I_FAIL_IT]))

    def _halve(self, h: float, t: float, step: int, depth: int, failed_it: int) -> int:
        if self.ist[_I_REASON] == SINGULAR:
            raise ConstraintSingularityError(
                f"{self.st.integrator}: the constraint Jacobian is singular at t = {t + h:.6g} s"
            )
        if depth >= self.st.max_halvings:
            rn = float(self.fst[_F_FAIL_R])
            raise NewtonConvergenceError(
                f"{self.st.integrator}: Newton did not converge in step {step + 1} from "
                f"t = {t:.6g} s (dt = {h:.4e} s after {depth} halvings): residual {rn:.3e} N, "
                f"max|Phi| = {self.fst[_F_FAIL_PHI]:.3e} after {int(self.ist[_I_FAIL_IT])} "
                "iterations; reduce dt or raise max_iter / max_halvings",
                t=t, step=step + 1, dt=h, iterations=int(self.ist[_I_FAIL_IT]), residual=rn,
                tolerance=float(self.par[_P_TOL]),
            )  # fmt: skip
        self.halvings += 1
        total = failed_it
        for k in range(2):
            total += self.advance(0.5 * h, t + k * 0.5 * h, step, depth + 1)
        return total


def _step_end(step: int, dt: float, plan, t_end: float) -> float:
    """End time (s) of step ``step`` (from 0) of a run planned by ``plan``: the last one ends
    at ``t_end``."""
    return t_end if step == plan.n_steps - 1 else (step + 1) * dt


def _run_index3(system, st, dt, plan, q, v, a, lam, W, q_ref, buf, one, progress, interval,
                stats):  # fmt: skip
    n_steps, sample_every = plan.n_steps, plan.sample_every
    run = _Index3(system, st, W, q, v, a, lam)
    run.fst[_F_ENERGY], run.fst[_F_POT] = system.forces_at(q, v, 0.0)[1:]
    iters = np.zeros(n_steps, dtype=np.int32)
    diss = 0.0
    i_sample = 1
    step = 0
    t0 = time.perf_counter()
    state = [t0, interval if progress else math.inf]
    chunk = 1 if one else min(n_steps, 200)
    while step < n_steps:
        todo = min(chunk, n_steps - step)
        if one:
            system.update_drivers(_step_end(step, dt, plan, st.t_end), W)
        done, i_sample, diss = _ga_chunk(todo, step, dt, n_steps, plan.last_dt, st.t_end,
                                         *run.args(), diss, sample_every, q_ref, *buf.args(),
                                         iters, i_sample)  # fmt: skip
        step += done
        if done < todo:  # retry step `step` as half steps from Python
            h = plan.last_dt if step == n_steps - 1 else dt
            iters[step] = run.recover(h, step * dt, step)
            released = _damage(q, system.data)
            diss += released
            run.fst[_F_ENERGY] -= released
            step += 1
            if step % sample_every == 0 or step == n_steps:
                _record(i_sample, q, v, a, lam, system.data, W, run.fst[_F_ENERGY],
                        run.fst[_F_POT], diss, run.fst[_F_WORK], q_ref, *buf.args())  # fmt: skip
                i_sample += 1
        if not one:
            chunk = min(max(50, _progress(st.integrator, step, n_steps, dt, t0, state)), 100000)
    stats.update(factorizations=int(run.ist[_I_FACT]), halvings=run.halvings,
                 increment_converged=int(run.ist[_I_INCR]), newton=st.newton,
                 mean_iterations=float(iters.mean()) if n_steps else 0.0)  # fmt: skip
    return i_sample, step, iters


def _integrate_adaptive(system, st, q, v, a, lam) -> MechanismResult:
    """The adaptive integrator (module docstring); contacts run in event mode (``C_EVENTS``)
    for the duration of the run."""
    contacts = system.contact_indices
    saved = system.fef[contacts, core.C_EVENTS].copy()
    system.fef[contacts, core.C_EVENTS] = 1.0
    try:
        return _adaptive_run(system, st, q, v, a, lam)
    finally:
        system.fef[contacts, core.C_EVENTS] = saved


#: restarts at a located onset that do not advance time before the run is declared stuck (each
#: contact element can start an impact at most once at a given time)
_STALL_RESTARTS = 4


def _adaptive_run(system, st, q, v, a, lam) -> MechanismResult:
    import scipy.integrate as si

    n, m = system.n, system.m
    W = system.work()
    aw = np.zeros(n)
    lw = np.zeros(m)
    data = system.data

    def fun(t, y):
        if system.has_function_drivers:
            system.update_drivers(t, W)
        out = np.empty(2 * n)
        if _ivp_rhs(t, y, data, W, st.alpha, st.beta, aw, lw, out) == 0.0:
            raise ConstraintSingularityError(
                f"adaptive: the constraint Jacobian is singular at t = {t:.6g} s"
            )
        return out

    check_mechanism(system, st, n_sample_times(st.t_end, st.sample_dt), None)
    ts = sample_times(st.t_end, st.sample_dt)
    n_samples = len(ts)
    buf = _Buffers(n_samples, n, m, system.fst.size)
    q_ref = system.q0.copy()
    method = getattr(si, st.method)
    solver = method(fun, 0.0, np.concatenate([q, v]), st.t_end, rtol=st.rtol, atol=st.atol)
    ys = np.zeros((n_samples, 2 * n))
    ys[0] = np.concatenate([q, v])
    states = np.zeros((n_samples, *system.fst.shape))
    states[0] = system.fst
    contacts = system.contact_indices
    gaps = np.zeros(len(system.forces))
    rates = np.zeros(len(system.forces))
    contact_gap_rates = None
    core.contact_gaps(q, data, gaps)
    fn_prev = np.zeros(len(system.forces))
    for e in contacts:
        fn_prev[e] = _contact_fn(system, np.concatenate([q, v]), n, e)
    intervals = []  # (element, onset time, time the normal force returns to zero)
    recorder = None
    if contacts:
        from ancf_beam.mbs.stepping import (
            AdaptiveRecorder,
            contact_gap_rates,
            dissipation_kinks,
            step_dissipation,
        )

        recorder = AdaptiveRecorder(system)
        recorder.open_initial(q, v)
        contact_gap_rates(q, v, data, gaps, rates)
    k = 1
    steps = 0
    events = 0
    stalls = 0
    nfev = 0  # of the integrators before the last restart
    t_start = time.perf_counter()
    c_start = time.process_time()

    diss = 0.0  # work dissipated by the contacts up to the start of the current step
    work = 0.0  # work fed in by the drives, likewise
    diss_s = np.zeros(n_samples)
    work_s = np.zeros(n_samples)
    drives = any(j.works for j in system.joints)

    def step_work(dense, a, b, kinks=()):
        """Work (J) of the drives over ``[a, b]`` inside a step: Gauss-Legendre on the dense
        output (the power ``lam . Phi_t`` from the index-1 solve at each node)."""
        if not (drives and b > a):
            return 0.0
        from ancf_beam.mbs.stepping import gauss_nodes

        tq, wq = gauss_nodes(a, b, kinks)
        yq = np.asarray(dense(tq)).T
        total = 0.0
        for tj, wj, yj in zip(tq, wq, yq, strict=True):
            if system.has_function_drivers:
                system.update_drivers(tj, W)
            core.accel_index1(np.ascontiguousarray(yj[:n]), np.ascontiguousarray(yj[n:]), tj,
                              data, W, st.alpha, st.beta, aw, lw)  # fmt: skip
            total += wj * drive_power(lw, W[7])
        return total

    def fill(dense, t_stop, t_from=0.0, kinks=()):
        nonlocal k
        while k < n_samples and ts[k] <= t_stop + 1e-12 * st.t_end:
            ys[k] = dense(min(ts[k], t_stop))
            states[k] = system.fst
            t_k = min(ts[k], t_stop)
            if contacts:
                diss_s[k] = diss + step_dissipation(system, dense, t_from, t_k, system.fst,
                                                    kinks)  # fmt: skip
            work_s[k] = work + step_work(dense, t_from, t_k, kinks)
            k += 1

    h_contact = _contact_step(system)
    while solver.status == "running":
        t_old = solver.t
        msg = solver.step()
        if solver.status == "failed":
            raise InstabilityError(f"adaptive ({st.method}), system '{system.name}': {msg} at "
                                   f"t = {solver.t:.6g} s")  # fmt: skip
        steps += 1
        if steps > MAX_ADAPTIVE_STEPS:  # its step count is only known as it runs
            raise InstabilityError(
                f"adaptive ({st.method}): more than {MAX_ADAPTIVE_STEPS:.0e} steps by t = "
                f"{solver.t:.6g} s of t_end = {st.t_end:g} s (steps of {solver.t - t_old:.3g} s"
                "): the run would not end in the time a mechanism run may take (docs/design.md, "
                "'Memory and time'); shorten t_end or loosen solver.rtol"
            )
        y1 = solver.y
        onset = None
        profile = None
        dense = None
        if contacts:
            dense = solver.dense_output()
            gaps_prev = gaps.copy()
            rates_prev = rates.copy()
            contact_gap_rates(np.ascontiguousarray(y1[:n]), np.ascontiguousarray(y1[n:]), data,
                              gaps, rates)  # fmt: skip
            h = solver.t - t_old
            free = [e for e in contacts if system.fst[e, core.S_FLAG] == 0.0]
            # sample the step where a contact is active, or where a free one could close
            # within it at its end speeds (a gap that dips below zero between the step ends)
            near = any(system.fst[e, core.S_FLAG] != 0.0 for e in contacts) or any(
                min(gaps_prev[e], gaps[e]) <= h * max(abs(rates_prev[e]), abs(rates[e]))
                for e in free)  # fmt: skip
            if near:
                profile = recorder.profile(dense, t_old, solver.t, system.fst)
            if free:
                onset = _locate_onset(system, dense, t_old, solver.t, free, gaps_prev, gaps,
                                      profile, n)  # fmt: skip
        cut = None  # (time, element, kind): the step ends early at an event
        if onset is not None:
            cut = (onset[0], onset[2], "onset")
        elif contacts:  # the end of positive contact force, located on the dense output
            fn1 = np.array([_contact_fn(system, y1, n, e) for e in contacts])
            ended = [(_locate_force_end(system, dense, t_old, solver.t, e, n), e)
                     for e, f1 in zip(contacts, fn1, strict=True)
                     if fn_prev[e] > 0.0 and f1 <= 0.0]  # fmt: skip
            if ended:
                t_fe, e = min(ended)
                cut = (t_fe, e, "end")
            else:
                fn_prev[contacts] = fn1
        if cut is not None:  # restart the integrator at the event: each piece is smooth
            tc, e, kind = cut
            stalls = stalls + 1 if tc <= t_old else 0
            if stalls > _STALL_RESTARTS * len(contacts):
                raise InstabilityError(
                    f"adaptive ({st.method}), system '{system.name}': {stalls} contact events "
                    f"at t = {tc:.9g} s without progress (contact element "
                    f"'{system.forces[e].name}')"
                )
            yc = onset[1] if kind == "onset" else dense(tc)
            kinks = dissipation_kinks(system, dense, profile, tc, system.fst)
            fill(dense, tc, t_old, kinks)
            diss += step_dissipation(system, dense, t_old, tc, system.fst, kinks)
            work += step_work(dense, t_old, tc, kinks)
            qc = np.ascontiguousarray(yc[:n])
            vc = np.ascontiguousarray(yc[n:])
            before = system.fst.copy()
            if profile is not None:
                profile = recorder.profile(dense, t_old, tc, before)
            if kind == "onset":
                ddot = system.contact_forces[e].evaluate(qc, vc)["delta_dot"]
                core.contact_onset(e, float(ddot), tc, system.fef, system.fst)
                events += 1
            else:
                intervals.append((e, float(system.fst[e, core.S_T0]), float(tc)))
            core.update_force_state(qc, vc, tc, data, system.fst)
            gaps_start = gaps_prev
            contact_gap_rates(qc, vc, data, gaps, rates)
            recorder.step(t_old, tc, gaps_start, gaps, before, yc, dense, profile)
            for e2 in contacts:
                fn_prev[e2] = _contact_fn(system, yc, n, e2)
            if st.t_end - tc > 4.0 * _EPS * st.t_end:  # else the old solver ended at t_end
                nfev += solver.nfev
                first = None
                if kind == "onset" and math.isfinite(h_contact):
                    first = min(h_contact, st.t_end - tc)
                solver = method(fun, tc, yc, st.t_end, rtol=st.rtol, atol=st.atol,
                                first_step=first)  # fmt: skip
            continue
        kinks = dissipation_kinks(system, dense, profile, solver.t, system.fst) if contacts else []
        if k < n_samples and ts[k] <= solver.t + 1e-12 * st.t_end:
            fill(solver.dense_output(), solver.t, t_old, kinks)
        if drives:
            work += step_work(solver.dense_output() if dense is None else dense, t_old,
                              solver.t, kinks)  # fmt: skip
        if contacts:
            diss += step_dissipation(system, dense, t_old, solver.t, system.fst, kinks)
            before = system.fst.copy()
            core.update_force_state(np.ascontiguousarray(y1[:n]),
                                    np.ascontiguousarray(y1[n:]), solver.t, data,
                                    system.fst)  # fmt: skip
            recorder.step(t_old, solver.t, gaps_prev, gaps, before, y1, dense, profile)
    for i in range(k):
        qi = np.ascontiguousarray(ys[i, :n])
        vi = np.ascontiguousarray(ys[i, n:])
        if system.has_function_drivers:
            system.update_drivers(ts[i], W)
        W[20][:] = states[i]  # the approach speeds valid at this sample
        u, p, *_ = core.accel_index1(qi, vi, ts[i], data, W, st.alpha, st.beta, aw, lw)
        _record(i, qi, vi, aw, lw, data, W, u, p, diss_s[i], work_s[i], q_ref, *buf.args())
        buf.s[i] = states[i].ravel()
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - c_start
    return buf.result(ts, k, integrator="adaptive", dt=math.nan, steps=steps, wall_s=wall,
                      cpu_s=cpu, stats={"method": st.method, "rtol": st.rtol, "atol": st.atol,
                                        "nfev": int(nfev + solver.nfev),
                                        "contact_events": events,
                                        "contact_intervals": intervals},
                      contact=None if recorder is None else recorder.record())  # fmt: skip


def _contact_step(system) -> float:
    """First step (s) of the adaptive integrator after a contact onset: ``CONTACT_STEP_FRACTION``
    of the smallest contact bound ``2 / omega`` (a Hertz-type law without an expected approach
    speed is linearised at 1 m/s here); ``inf`` without contacts."""
    h = math.inf
    for fe in system.contact_forces.values():
        w = fe.omega()
        if w is None:
            w = fe.omega(v_impact=1.0)
        if w:
            h = min(h, CONTACT_STEP_FRACTION * 2.0 / w)
    return h


def _contact_fn(system, y, n, e):
    """Normal force (N) of contact element ``e`` at state ``y = [q; v]`` with the carried
    state."""
    pp = np.zeros(8)
    pq = np.zeros(8)
    y = np.ascontiguousarray(y)
    return core.contact_forces(system.fei[e], system.fef[e], system.fst[e], y[:n], y[n:], pp,
                               pq)[7]  # fmt: skip


def _locate_force_end(system, dense, t0, t1, e, n):
    """Time in ``(t0, t1]`` at which the normal force of contact ``e`` drops to zero: bisection
    on the sign of the force along the dense output (:func:`ancf_beam.mbs.events.
    last_positive`; the force may end with a kink or, for a clipped law, at a corner), to
    :func:`ancf_beam.mbs.events.time_tolerance`. Returns the first time found without force."""
    from ancf_beam.mbs.events import last_positive

    def positive(t):
        return _contact_fn(system, dense(t), n, e) > 0.0

    if positive(t1) or not positive(t0):
        return float(t1)
    return float(last_positive(positive, t0, t1)[1])


def _locate_onset(system, dense, t0, t1, free, gaps0, gaps1, profile, n):
    """Earliest time in ``(t0, t1]`` at which one of the contact elements ``free`` (no impact
    recorded) reaches ``delta = 0``: a gap that is positive at ``t0`` and not at ``t1``, or at
    one of the ``profile`` times inside the step (a dip between the step ends), is bracketed by
    the last positive and the first non-positive time and its root located on the dense output
    (:func:`ancf_beam.mbs.events.bracket_root`, to :func:`~ancf_beam.mbs.events.
    time_tolerance`; the end of the bracket without gap is taken). A contact that already
    touches at ``t0`` and penetrates further starts at ``t0``. Returns ``(t, y, e)`` or None."""
    from ancf_beam.mbs.events import bracket_root

    gaps = np.zeros(len(system.forces))

    def gap(t, e):
        core.contact_gaps(np.ascontiguousarray(dense(t)[:n]), system.data, gaps)
        return gaps[e]

    best = None
    for e in free:
        if gaps0[e] <= 0.0:  # touching at the start of the step already
            if gaps1[e] < gaps0[e] or (profile is not None
                                       and np.any(-profile[1][:, e, 0] < gaps0[e])):  # fmt: skip
                te = t0
            else:
                continue
        else:
            ta, ga, tb, gb = t0, gaps0[e], t1, gaps1[e]
            if profile is not None:
                tp, prof = profile
                below = np.flatnonzero(-prof[1:, e, 0] <= 0.0)
                if len(below):
                    j = int(below[0]) + 1
                    ta, ga, tb, gb = tp[j - 1], -prof[j - 1, e, 0], tp[j], -prof[j, e, 0]
            if gb > 0.0:
                continue
            te = bracket_root(lambda t, e=e: gap(t, e), ta, tb, ga, gb)[1]
        if best is None or te < best[0]:
            best = (te, e)
    if best is None:
        return None
    te, e = best
    return te, dense(te), e
