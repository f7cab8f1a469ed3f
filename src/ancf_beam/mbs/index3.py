"""Index-3 generalized-alpha / Newmark steps of a multibody system (module docstring of
:mod:`ancf_beam.mbs.integrators`): the numba Newton step :func:`ga_step`, the fixed-step loop
:func:`ga_chunk`, the run state with step halving :class:`Index3Run` and the fixed-step driver
:func:`run_index3`. :mod:`ancf_beam.mbs.stepping` drives the same step with contact step
control.

Each Newton iteration solves with ``K = K_T + c_v C + c_a M``: its band factorised, the force
elements outside the band by the low-rank correction (:func:`ancf_beam.mbs.core.lowrank_prepare`,
only when the system has such elements), the constraint rows by the Schur complement.

The run state is shared with the numba code through arrays indexed by the names below:
``par`` (``P_*``, ``N_PAR`` entries: scheme and Newton parameters), ``ist`` (``I_*``: the
factorisation kind and counters) and ``fst`` (``F_*``: the step of the current factorisation,
the last failure, the energies and the drives' power and work).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ancf_beam.borrow import borrow
from ancf_beam.errors import ConstraintSingularityError, NewtonConvergenceError
from ancf_beam.linalg import (
    BANDWIDTH,
    NO_FACTOR,
    band_factor_solve,
    band_factorize,
    sym_band_matvec,
)
from ancf_beam.mbs import core
from ancf_beam.mbs.settings import IntegratorSettings
from ancf_beam.mbs.system import System
from ancf_beam.mbs.timeloop import (
    NEWTON_FAIL,
    NONFINITE,
    SINGULAR,
    drive_power,
    record_sample,
    release_damage,
    report_progress,
    step_end,
)

__all__ = ["N_PAR", "Index3Run", "effective_lower", "ga_chunk", "ga_step", "run_index3"]

_BW = BANDWIDTH
_EPS = float(np.finfo(float).eps)
#: round-off of a residual relative to the largest force scale of the step: an iterate's
#: ``a = a_pred + c_a e`` keeps ``eps |a|`` of the step's largest acceleration (the
#: predictor's), so ``|r|`` cannot fall below a few eps of that force even where every force
#: vanishes (free flight without gravity); also the floor of the constraint tolerance
_ROUNDOFF = 64 * _EPS
#: modified Newton refactorises when an iteration contracts the residual by less than this
#: (the default, kept by the contact-controlled run of :mod:`ancf_beam.mbs.stepping`) ...
_SLOW_CONTRACTION = 0.25
#: ... and the fixed-step run by less than this: a factorisation (tangent, band factor, Schur
#: complement) costs about as much as 5-10 iterations, and at a contraction of 0.25 the 1e-8
#: tolerance takes 4-6 more stale iterations after the first, at 0.05 two or three (Berzeri
#: pendulum: 5.3 -> 3.4 iterations per step for 18 -> 95 factorisations per 1000 steps;
#: benchmarks/README.md)
_SLOW_CONTRACTION_FIXED = 0.05
#: an iteration whose matrix was factorised at its own iterate and that still contracts the
#: residual by less than this has met a kink of a law (the corners of the coulomb-transition
#: friction, the clipping of a contact force) or a tangent that leaves a term out: full Newton
#: then cycles across the kink (the flagship's clearance with friction: a 2-cycle at 3.19 N,
#: 20 iterations and a halving, 1064 halvings per revolution). The next correction is taken
#: at half length (_DAMPED), which breaks the cycle; a smooth law converges quadratically
#: with a fresh matrix, so this never fires there.
_STAGNATION = 0.5
_DAMPED = 0.5

#: ``par``: scheme (beta, gamma, alpha_m, alpha_f) and Newton parameters
P_BETA, P_GAMMA, P_AM, P_AF, P_TOL, P_LOOSE, P_INC, P_FLOOR, P_FMIN = range(9)
P_MAXIT, P_MODIFIED, P_PHIFLOOR, P_PROJ, P_MREF, P_EXTRAP, P_SLOW = range(9, 16)
#: (P_EXTRAP: weight of the extrapolated change of ``a~`` in the predictor, 0 or 1; P_SLOW: the
#: contraction below which modified Newton keeps its factorisation)
N_PAR = 16
#: ``ist``: factorisation kind, factorisations, increment-converged steps, iterations of the
#: last failure, reason of the last failure (a status code)
I_KIND, I_FACT, I_INCR, I_FAIL_IT, I_REASON = range(5)
#: ``fst``: step of the factorisation, residual and max|Phi| of the last failure, elastic and
#: force-element energy, the drives' power and their work since t = 0, the last accepted step
F_H, F_FAIL_R, F_FAIL_PHI, F_ENERGY, F_POT, F_POWER, F_WORK, F_HPREV = range(8)


@njit(cache=True, nogil=True, error_model="numpy")
def effective_lower(ab, mlb, c_a, out):
    for k in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = ab[_BW + k, j] + c_a * mlb[k, j]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ga_predict(h, af, beta, m, v, a, at, lam, d, e, vp, ap, lam_i, atp, th):
    """Start of the Newton iteration of a step ``h``: the increment ``d`` of the positions and
    the velocities ``vp`` and accelerations ``ap`` predicted from ``at``, the correction ``e``
    zero, the multipliers ``lam_i`` those of the start. With ``th`` != 0 the start is the
    Newmark state of ``a~+ = at + th (at - atp)`` instead of ``a~+ = at`` (``atp``: ``a~`` at
    the start of the previous step, ``th`` its weight times the ratio of the steps): the
    linear extrapolation of ``a~``, carried as the correction ``e = beta h^2 (a~+ - at)``, so
    that the iterate of :func:`_ga_iterate` is a consistent Newmark state. Only the start
    changes, not the solution Newton converges to."""
    for i in range(v.shape[0]):
        d[i] = h * v[i] + (0.5 * h * h) * at[i]
        vp[i] = v[i] + h * at[i]
        ap[i] = at[i] if af == 0.0 else (at[i] - af * a[i]) / (1.0 - af)
        e[i] = 0.0
    if th != 0.0:
        c_e = th * beta * h * h
        for i in range(v.shape[0]):
            x = c_e * (at[i] - atp[i])
            d[i] += x
            e[i] = x
    for k in range(m):
        lam_i[k] = lam[k]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ga_iterate(c_v, c_a, q, d, e, vp, ap, qi, vi, ai):
    """The iterate ``qi = q + d``, ``vi = vp + c_v e``, ``ai = ap + c_a e``; returns |qi|^2."""
    qn = 0.0
    for i in range(q.shape[0]):
        qi[i] = q[i] + d[i]
        vi[i] = vp[i] + c_v * e[i]
        ai[i] = ap[i] + c_a * e[i]
        qn += qi[i] * qi[i]
    return qn


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ga_norms(m, f_min, f, ma, r, phi, jc, jv, jn, lam_i):
    """The residual ``r = f - M a - C^T lam_i`` (``ma = M a``); returns ``(|r|, max|Phi|,
    f_ref)``: ``f_ref`` the force scale of the tolerances, the largest of ``f_min``, ``|f|``,
    ``|M a|`` and ``|C^T lam_i|``."""
    n = f.shape[0]
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
    return rn, pmax, max(f_min, np.sqrt(fn), np.sqrt(mn), np.sqrt(ln))


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ga_refactor(h, c_a, mlb, ab, lb, fac, lu, piv, ist, fst):
    """Factorise the band of the iteration matrix (``ab``: the tangent band assembled at the
    iterate, ``mlb``: the mass band); False when it is singular (``ist[I_KIND]``: the
    factorisation kind, ``fst[F_H]``: its step)."""
    effective_lower(ab, mlb, c_a, lb)
    kind = band_factorize(lb, fac, lu, piv)
    ist[I_KIND] = kind
    fst[F_H] = h
    if kind == NO_FACTOR:
        return False
    ist[I_FACT] += 1
    return True


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ga_schur(m, kind, fac, lu, piv, xpk, L, jc, jv, jn, yk, sk, spk, ist):
    """Low-rank part and Schur complement of the constraint rows of the factorised band;
    False when the iteration matrix or the complement is singular (``ist`` says so)."""
    if L is not None:  # (numba prunes the branches on L for L = None at compile time)
        if core.lowrank_prepare(kind, fac, lu, piv, xpk, L) == 0.0:
            ist[I_KIND] = NO_FACTOR  # the iteration matrix is singular
            return False
    if m > 0:
        if L is not None:
            ratio = core.schur_prepare_lr(kind, fac, lu, piv, xpk, L, jc, jv, jn, yk, sk, spk)
        else:
            ratio = core.schur_prepare(kind, fac, lu, piv, xpk, jc, jv, jn, yk, sk, spk)
        if ratio == 0.0:
            ist[I_KIND] = NO_FACTOR
            ist[I_REASON] = SINGULAR
            return False
    return True


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ga_correct(m, kind, fac, lu, piv, xpk, L, jc, jv, jn, phi, yk, sk, spk, bk, r, e, d, lam_i, w):
    """Newton correction with the factorised matrix: ``r <- K^-1 r``, the multipliers by the
    Schur complement, then ``e``, ``d`` and ``lam_i`` advanced by ``w`` times it (1, or
    _DAMPED after a stagnating iteration). Returns ``(|w dr|, |d|)``."""
    n = r.shape[0]
    band_factor_solve(kind, fac, lu, piv, xpk, r)  # r <- K^-1 r
    if L is not None:
        core.lowrank_solve(L, r)
    if m > 0:
        core.jac_mul(jc, jv, jn, r, bk)
        for k in range(m):
            bk[k] += phi[k]
        core.lu_solve(sk, spk, bk)
        for k in range(m):
            lam_i[k] += w * bk[k]
            yr = yk[k]
            lk = bk[k]
            for i in range(n):
                r[i] -= lk * yr[i]
    dn = 0.0
    dt2 = 0.0
    for i in range(n):
        x = w * r[i]
        dn += x * x
        e[i] += x
        d[i] += x
        dt2 += d[i] * d[i]
    return np.sqrt(dn), np.sqrt(dt2)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ga_accept(h, beta, m, q, v, a, at, lam, qi, vi, ai, e, lam_i, atp):
    """Take the converged iterate as the state at the end of the step (``atp``: ``a~`` at its
    start, for the next step's predictor)."""
    inv_bh2 = 1.0 / (beta * h * h)
    for i in range(q.shape[0]):
        atp[i] = at[i]
        q[i] = qi[i]
        v[i] = vi[i]
        at[i] += e[i] * inv_bh2
        a[i] = ai[i]
    for k in range(m):
        lam[k] = lam_i[k]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _project_velocity(q, v, t1, S, W, jc, jv, jn):
    """The velocity projection after a step (``projection``): the Schur complement of the
    mass-orthogonal projection, prepared once where the constraint Jacobian is constant
    (``S[9]``), then ``v`` projected onto ``J v + Phi_t = 0``."""
    if not (S[9] and W[21][0] == 1):
        core.schur_prepare(1, S[1], W[17], W[18], W[12], jc, jv, jn, W[8], W[9], W[10])
        W[21][0] = 1
    core.project_velocity(q, v, t1, S, W)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ga_book(h, energy, pot, lam, phit, fst):
    """After an accepted step: the energies and the drives' work over the step (trapezoidal
    rule, ``Phi_t`` at the end)."""
    fst[F_ENERGY] = energy
    fst[F_POT] = pot
    power = drive_power(lam, phit)
    fst[F_WORK] += 0.5 * h * (fst[F_POWER] + power)
    fst[F_POWER] = power


@njit(cache=True, nogil=True, error_model="numpy")
def ga_step(h, t1, q, v, a, at, lam, par, ist, fst, S, W, G, L):
    """One Newton-solved index-3 step of size ``h`` ending at ``t1`` (``L``: the low-rank part
    of the force elements outside the band, None without them: the band path alone). On
    success the state is overwritten and (True, iterations) returned; on failure it is left
    untouched and the failure described in ``ist``/``fst``. (Its arrays arrive borrowed from
    :func:`ga_chunk`, so passing them on counts no references: :mod:`ancf_beam.borrow`.)"""
    mlb, ei, m = S[0], S[5], S[5].shape[0]
    f, phi, jc, jv, jn, gam, phit = W[0], W[1], W[3], W[4], W[5], W[6], W[7]
    pp, pq, cols, vals, dext, fstate = W[13], W[14], W[15], W[16], W[19], W[20]
    d, e, vp, ap, qi, vi, ai, r, ma, lam_i, ab, lb, fac, lu, piv, xpk, yk, sk, spk, bk, atp = G
    beta, af = par[P_BETA], par[P_AF]
    c_a = (1.0 - par[P_AM]) / ((1.0 - af) * beta * h * h)
    c_v = par[P_GAMMA] / (beta * h)
    tol, floor = par[P_TOL], par[P_FLOOR]
    phi_scale = c_a * par[P_MREF]  # |Phi| as the inertial force it leaves (Arnold & Bruels)
    modified = par[P_MODIFIED] != 0.0
    hp = fst[F_HPREV]
    th = par[P_EXTRAP] * h / hp if hp > 0.0 else 0.0
    _ga_predict(h, af, beta, m, v, a, at, lam, d, e, vp, ap, lam_i, atp, th)
    it, prev, dnorm, dtot = 0, np.inf, np.inf, 0.0
    rn, pmax, energy, pot, f_hi = np.inf, np.inf, 0.0, 0.0, 0.0
    refactor = (not modified) or ist[I_KIND] == NO_FACTOR or fst[F_H] != h
    fresh = False  # the last correction's matrix was factorised at its own iterate
    converged = False
    ist[I_REASON] = NEWTON_FAIL
    while True:
        qn = _ga_iterate(c_v, c_a, q, d, e, vp, ap, qi, vi, ai)
        energy, pot = core.system_forces(qi, vi, t1, S, fstate, f, pp, pq, cols, vals)
        core.eval_constraints(qi, vi, t1, ei, S[6], dext, phi, jc, jv, jn, gam, phit, pp, pq)
        sym_band_matvec(mlb, ai, ma)
        rn, pmax, f_ref = _ga_norms(m, par[P_FMIN], f, ma, r, phi, jc, jv, jn, lam_i)
        if not (np.isfinite(rn) and np.isfinite(pmax)):
            ist[I_REASON] = NONFINITE
            break
        f_hi = max(f_hi, f_ref)  # the step's largest force scale: see _ROUNDOFF
        tol_r = max(tol * f_ref, floor, _ROUNDOFF * f_hi)
        phi_tol = max(tol * f_ref / phi_scale, par[P_PHIFLOOR])
        if rn <= tol_r and pmax <= phi_tol:
            converged = True
            break
        if it > 0 and rn <= max(par[P_LOOSE] * f_ref, tol_r) and pmax <= phi_tol:
            if dnorm <= max(par[P_INC] * dtot, _ROUNDOFF * np.sqrt(qn)):
                ist[I_INCR] += 1
                converged = True
                break
        if it >= int(par[P_MAXIT]):
            break
        if modified and it > 0 and rn > par[P_SLOW] * prev:
            refactor = True
        w = _DAMPED if fresh and rn > _STAGNATION * prev else 1.0
        fresh = refactor
        if refactor:
            core.system_tangent(qi, vi, t1, lam_i, S, fstate, c_v, ab, pp, pq, cols, vals, L)
            if not _ga_refactor(h, c_a, mlb, ab, lb, fac, lu, piv, ist, fst):
                break
            if not _ga_schur(m, ist[I_KIND], fac, lu, piv, xpk, L, jc, jv, jn, yk, sk, spk, ist):
                break
            refactor = not modified
        k = ist[I_KIND]
        dnorm, dtot = _ga_correct(
            m, k, fac, lu, piv, xpk, L, jc, jv, jn, phi, yk, sk, spk, bk, r, e, d, lam_i, w
        )
        if not np.isfinite(dnorm):
            ist[I_REASON] = NONFINITE
            break
        prev = rn
        it += 1
    if not converged:
        ist[I_FAIL_IT], fst[F_FAIL_R], fst[F_FAIL_PHI] = it, rn, pmax
        if modified:
            ist[I_KIND] = NO_FACTOR
        return False, it
    fst[F_HPREV] = h
    _ga_accept(h, beta, m, q, v, a, at, lam, qi, vi, ai, e, lam_i, atp)
    if par[P_PROJ] != 0.0 and m > 0:
        _project_velocity(q, v, t1, S, W, jc, jv, jn)
    core.update_force_state(q, v, t1, S, fstate)
    _ga_book(h, energy, pot, lam, phit, fst)
    return True, it


@njit(cache=True, nogil=True, error_model="numpy")
def ga_chunk(
    n_steps,
    step0,
    dt,
    n_total,
    h_last,
    t_end,
    q,
    v,
    a,
    at,
    lam,
    par,
    ist,
    fst,
    S,
    W,
    G,
    L,
    diss,
    sample_every,
    q_ref,
    bufs,
    iters,
    i_sample,
):
    """Up to ``n_steps`` index-3 steps of the ``n_total`` of a run (steps of ``dt``, the last
    one of ``h_last``, ending at ``t_end``; the final state is always recorded); returns
    (steps done, i_sample, dissipated work); fewer steps than asked means the next one failed
    (state left at its start). Every step books the drives' work in ``fst[F_WORK]``
    (:func:`ga_step`) and the work the dampers dissipate (trapezoidal rule,
    :func:`~ancf_beam.mbs.core.dissipation_power`; the runs with contacts take
    :mod:`ancf_beam.mbs.stepping`)."""
    q, v, a, at, lam, par, ist, fst, S, W, G, L, bufs, iters = borrow(
        (q, v, a, at, lam, par, ist, fst, S, W, G, L, bufs, iters)
    )
    p1 = core.dissipation_power(q, v, S, W[20], W[13], W[14])
    for s in range(n_steps):
        step = step0 + s
        last = step == n_total - 1
        h = h_last if last else dt
        t1 = t_end if last else (step + 1) * dt
        ok, it = ga_step(h, t1, q, v, a, at, lam, par, ist, fst, S, W, G, L)
        if not ok:
            return s, i_sample, diss
        iters[step] = it
        p0 = p1
        p1 = core.dissipation_power(q, v, S, W[20], W[13], W[14])
        diss += 0.5 * h * (p0 + p1)
        released = release_damage(q, S)
        if released != 0.0:
            diss += released
            fst[F_ENERGY] -= released
            ist[I_KIND] = NO_FACTOR  # stiffness changed
        if (step + 1) % sample_every == 0 or last:
            record_sample(
                i_sample,
                q,
                v,
                a,
                lam,
                S,
                W,
                fst[F_ENERGY],
                fst[F_POT],
                diss,
                fst[F_WORK],
                q_ref,
                bufs,
            )
            i_sample += 1
    return n_steps, i_sample, diss


class Index3Run:
    """State of an index-3 run (numba arrays) and the step halving."""

    def __init__(self, system: System, st: IntegratorSettings, W, q, v, a, lam):
        n, m = system.n, system.m
        self.system = system
        self.st = st
        self.W = W
        self.q, self.v, self.a, self.lam = q, v, a, lam
        self.at = a.copy()
        beta, gamma, am, af = st.scheme()
        par = np.zeros(N_PAR)
        par[[P_BETA, P_GAMMA, P_AM, P_AF]] = beta, gamma, am, af
        par[P_TOL] = st.tol
        par[P_LOOSE] = math.sqrt(st.tol)
        par[P_INC] = 1e-10
        floor = 0.0
        for b in system.beams:
            floor = max(floor, b.model.roundoff_floor(10.0))
        par[P_FLOOR] = floor
        par[P_FMIN] = float(np.linalg.norm(system.qg))
        par[P_MAXIT] = st.max_iter
        par[P_MODIFIED] = float(st.newton == "modified")
        par[P_PHIFLOOR] = _ROUNDOFF * max(1e-3, float(np.max(np.abs(system.q0))))
        par[P_MREF] = float(np.max(system.mlb[0]))
        par[P_PROJ] = float(st.projection)
        par[P_SLOW] = _SLOW_CONTRACTION
        self.par = par
        self.ist = np.zeros(5, dtype=np.int64)
        self.fst = np.zeros(8)
        self.fst[F_H] = -1.0
        self.fst[F_POWER] = drive_power(lam, W[7])  # W[7]: Phi_t at the initial state
        self.G = (
            np.zeros(n),
            np.zeros(n),
            np.zeros(n),
            np.zeros(n),
            np.zeros(n),
            np.zeros(n),
            np.zeros(n),
            np.zeros(n),
            np.zeros(n),
            np.zeros(m),
            np.zeros((2 * _BW + 1, n)),
            np.zeros((_BW + 1, n)),
            np.zeros((2, n, _BW + 1)),
            np.zeros((3 * _BW + 1, n)),
            np.zeros(n, dtype=np.int64),
            np.zeros(n + 2 * _BW),
            np.zeros((m, n)),
            np.zeros((m, m)),
            np.zeros(m, dtype=np.int64),
            np.zeros(m),
            np.zeros(n),
        )
        self.L = system.lowrank_work() if system.n_low_rank else None
        self.halvings = 0

    def args(self):
        return (
            self.q,
            self.v,
            self.a,
            self.at,
            self.lam,
            self.par,
            self.ist,
            self.fst,
            self.system.data,
            self.W,
            self.G,
            self.L,
        )

    def advance(self, h: float, t: float, step: int, depth: int = 0) -> int:
        """Step ``h`` from ``t`` with halving on failure; returns Newton iterations."""
        if self.system.has_function_drivers:
            self.system.update_drivers(t + h, self.W)
        ok, it = ga_step(h, t + h, *self.args())
        if ok:
            return int(it)
        return self._halve(h, t, step, depth, int(it))

    def recover(self, h: float, t: float, step: int) -> int:
        """The step ``h`` from ``t`` just failed in the numba loop (state untouched): retry it
        as two half steps, recursively; returns the Newton iterations spent."""
        return self._halve(h, t, step, 0, int(self.ist[I_FAIL_IT]))

    def _halve(self, h: float, t: float, step: int, depth: int, failed_it: int) -> int:
        if self.ist[I_REASON] == SINGULAR:
            raise ConstraintSingularityError(
                f"{self.st.integrator}: the constraint Jacobian is singular at t = {t + h:.6g} s"
            )
        if depth >= self.st.max_halvings:
            rn = float(self.fst[F_FAIL_R])
            advice = self.st.newton_advice("reduce dt or raise max_iter / max_halvings")
            raise NewtonConvergenceError(
                f"{self.st.integrator}: Newton did not converge in step {step + 1} from "
                f"t = {t:.6g} s (dt = {h:.4e} s after {depth} halvings): residual {rn:.3e} N, "
                f"max|Phi| = {self.fst[F_FAIL_PHI]:.3e} after {int(self.ist[I_FAIL_IT])} "
                f"iterations; {advice}",
                t=t,
                step=step + 1,
                dt=h,
                iterations=int(self.ist[I_FAIL_IT]),
                residual=rn,
                tolerance=float(self.par[P_TOL]),
            )
        self.halvings += 1
        total = failed_it
        for k in range(2):
            total += self.advance(0.5 * h, t + k * 0.5 * h, step, depth + 1)
        return total


def run_index3(system, st, dt, plan, q, v, a, lam, W, q_ref, buf, one, progress, interval, stats):
    n_steps, sample_every = plan.n_steps, plan.sample_every
    run = Index3Run(system, st, W, q, v, a, lam)
    run.par[P_EXTRAP] = 1.0  # fixed steps: the extrapolating predictor (_ga_predict)
    run.par[P_SLOW] = _SLOW_CONTRACTION_FIXED
    run.fst[F_ENERGY], run.fst[F_POT] = system.forces_at(q, v, 0.0)[1:]
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
            system.update_drivers(step_end(step, dt, plan, st.t_end), W)
        done, i_sample, diss = ga_chunk(
            todo,
            step,
            dt,
            n_steps,
            plan.last_dt,
            st.t_end,
            *run.args(),
            diss,
            sample_every,
            q_ref,
            buf.args(),
            iters,
            i_sample,
        )
        step += done
        if done < todo:  # retry step `step` as half steps from Python
            h = plan.last_dt if step == n_steps - 1 else dt
            p0 = core.dissipation_power(q, v, system.data, W[20], W[13], W[14])
            iters[step] = run.recover(h, step * dt, step)
            p1 = core.dissipation_power(q, v, system.data, W[20], W[13], W[14])
            released = release_damage(q, system.data)
            diss += released + 0.5 * h * (p0 + p1)
            run.fst[F_ENERGY] -= released
            step += 1
            if step % sample_every == 0 or step == n_steps:
                record_sample(
                    i_sample,
                    q,
                    v,
                    a,
                    lam,
                    system.data,
                    W,
                    run.fst[F_ENERGY],
                    run.fst[F_POT],
                    diss,
                    run.fst[F_WORK],
                    q_ref,
                    buf.args(),
                )
                i_sample += 1
        if not one:
            chunk = min(
                max(50, report_progress(st.integrator, step, n_steps, dt, t0, state)), 100000
            )
    stats.update(
        factorizations=int(run.ist[I_FACT]),
        halvings=run.halvings,
        increment_converged=int(run.ist[I_INCR]),
        newton=st.newton,
        mean_iterations=float(iters.mean()) if n_steps else 0.0,
    )
    return i_sample, step, iters
