"""The numba core of the implicit integrators: one Newton-solved step and the time loop.

The scheme and the Newton iteration are described in :mod:`~ancf_beam.solvers.implicit`, which
builds the arguments (named tuples, so every array and parameter travels under its name) and
drives the loop. Everything here is allocation-free; mutable scalars live in arrays of one entry
inside :class:`ImplicitState`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.beam.model import CLAMP
from ancf_beam.linalg import (
    BANDWIDTH,
    NO_FACTOR,
    band_factor_solve,
    band_factorize,
    padded_band_matvec,
)
from ancf_beam.solvers.timeloop import update_damage_with

__all__ = [
    "PREDICTOR_CODES",
    "ROUNDOFF",
    "SLOW_CONTRACTION",
    "ImplicitState",
    "ImplicitSystem",
    "NewtonParams",
    "NewtonWork",
    "newton_step",
    "record",
    "run_chunk",
]

ROUNDOFF = 64 * np.finfo(float).eps  # relative round-off of the coordinates
SLOW_CONTRACTION = 0.25  # modified Newton: refactorise when ||R_k+1|| > this * ||R_k||
PREDICTOR_CODES = {"auto": 0, "constant": 1, "extrapolate": 2}
_BW = BANDWIDTH


class NewtonParams(NamedTuple):
    """Scheme and Newton parameters of a run."""

    beta: float
    gamma: float
    alpha_m: float
    alpha_f: float
    bdf1: bool
    tol: float  # relative residual tolerance
    loose: float  # sqrt(tol): residual bound of the increment criterion
    increment_tol: float
    floor: float  # N, round-off floor of the residual tolerance
    g_norm: float  # N, ||Q_g||
    max_iter: int
    modified: bool  # modified Newton: keep the factorisation while the residual contracts
    predictor: int  # PREDICTOR_CODES


class ImplicitSystem(NamedTuple):
    """Constant data of a run: element kernel arguments, mass and damping matrices (lower band
    storage and padded, see linalg.padded_band), the gravity forces and the reference."""

    kargs: tuple  # BeamModel.kernel_args()
    mlb: np.ndarray
    mp: np.ndarray
    m_even: bool
    clb: np.ndarray
    cp: np.ndarray
    c_even: bool
    damped: bool
    g: np.ndarray  # gravity force, free DOFs
    g_full: np.ndarray  # gravity force, full DOFs
    q_ref: np.ndarray  # full reference coordinates


class ImplicitState(NamedTuple):
    """The state after the last converged step and the bookkeeping that travels with it."""

    q: np.ndarray  # full coordinates
    v: np.ndarray  # free velocities
    a: np.ndarray  # free accelerations
    at: np.ndarray  # generalized-alpha acceleration-like variable (= a for Newmark)
    fq: np.ndarray  # free elastic force at q, valid when fq_valid[0]
    fq_valid: np.ndarray  # (1,) int
    energy: np.ndarray  # (1,) strain energy at q (J)
    dissipated: np.ndarray  # (1,) work dissipated by damping and damage so far (J)
    factor_kind: np.ndarray  # (1,) int: linalg.NO_FACTOR / CHOLESKY / LU
    factor_h: np.ndarray  # (1,) step size of the current factorisation (s)
    factorizations: np.ndarray  # (1,) int
    increment_converged: np.ndarray  # (1,) int: steps accepted on the increment criterion
    fail_iterations: np.ndarray  # (1,) int: the last failed step ...
    fail_residual: np.ndarray  # (1,) ... its residual (N)
    fail_tolerance: np.ndarray  # (1,) ... and tolerance (N)


class NewtonWork(NamedTuple):
    """Work arrays: Newton vectors on the free DOFs, the iterate, the matrices and factors."""

    d: np.ndarray  # increment q_{n+1} - q_n
    e: np.ndarray  # correction of the scheme's extrapolation
    vp: np.ndarray  # predicted velocity (v = vp + c_v e)
    ap: np.ndarray  # predicted acceleration (a = ap + c_a e)
    v: np.ndarray  # velocity of the iterate
    a: np.ndarray  # acceleration of the iterate
    ma: np.ndarray  # M a
    cv: np.ndarray  # C v
    r: np.ndarray  # residual, then the Newton correction
    vc: np.ndarray  # constant start: velocity, acceleration, residual
    ac: np.ndarray
    rc: np.ndarray
    mv: np.ndarray  # M v of the recorded state
    qi: np.ndarray  # full coordinates of the iterate
    f: np.ndarray  # its elastic force (full)
    ab: np.ndarray  # tangent, general band storage (full DOFs)
    lb: np.ndarray  # K_eff, lower band storage
    fac: np.ndarray  # Cholesky factor
    lu: np.ndarray  # LU factor (fallback)
    piv: np.ndarray  # LU pivots
    xp: np.ndarray  # padded vector


@njit(cache=True, nogil=True, error_model="numpy")
def _residual(fr, sy, v, a, ma, cv, r, xp):
    """Newton right-hand side ``r = -(M a + C v - Q_e - Q_g)`` from the free elastic force
    ``fr``. Returns (||r||, ||Q_e||, ||M a||)."""
    padded_band_matvec(sy.mp, sy.m_even, a, xp, ma)
    if sy.damped:
        padded_band_matvec(sy.cp, sy.c_even, v, xp, cv)
    rn = 0.0
    fn = 0.0
    mn = 0.0
    for i in range(v.shape[0]):
        fi = fr[i]
        ri = ma[i] - fi - sy.g[i]
        if sy.damped:
            ri += cv[i]
        r[i] = -ri
        rn += ri * ri
        fn += fi * fi
        mn += ma[i] * ma[i]
    return np.sqrt(rn), np.sqrt(fn), np.sqrt(mn)


@njit(cache=True, nogil=True, error_model="numpy")
def _evaluate(q, c_v, c_a, sy, wk):
    """The iterate ``qi = q + d``, ``v = v_pred + c_v e``, ``a = a_pred + c_a e``, its elastic
    force ``f`` and residual ``r`` (in ``wk``). Returns (U, ||r||, ||Q_e||, ||M a||,
    ||q_free||)."""
    d, e, qi = wk.d, wk.e, wk.qi
    qn = 0.0
    for i in range(d.shape[0]):
        x = q[CLAMP + i] + d[i]
        qi[CLAMP + i] = x
        qn += x * x
        wk.v[i] = wk.vp[i] + c_v * e[i]
        wk.a[i] = wk.ap[i] + c_a * e[i]
    energy = kernels.elastic_force(qi, *sy.kargs, wk.f)
    rn, fn, mn = _residual(wk.f[CLAMP:], sy, wk.v, wk.a, wk.ma, wk.cv, wk.r, wk.xp)
    return energy, rn, fn, mn, np.sqrt(qn)


@njit(cache=True, nogil=True, error_model="numpy")
def _effective_lower(ab, mlb, clb, c_a, c_v, damped, out):
    """Lower band (8, n_free) of ``K_T + c_a M + c_v C`` from the full general band ``ab``."""
    for k in range(out.shape[0]):
        for j in range(out.shape[1]):
            x = ab[_BW + k, CLAMP + j] + c_a * mlb[k, j]
            if damped:
                x += c_v * clb[k, j]
            out[k, j] = x


@njit(cache=True, nogil=True, error_model="numpy")
def _predict(h, st, par, wk):
    """The scheme's extrapolation ``d_nat`` (in ``wk.d``), the predicted rates and ``e = 0``.
    Returns ``(c_a, c_v)``: the rates are ``v = vp + c_v e``, ``a = ap + c_a e``."""
    v, a, at = st.v, st.a, st.at
    d, vp, ap, e = wk.d, wk.vp, wk.ap, wk.e
    nf = v.shape[0]
    if par.bdf1:
        c_a = 1.0 / (h * h)
        c_v = 1.0 / h
        for i in range(nf):
            d[i] = h * v[i] + (h * h) * a[i]
            vp[i] = v[i] + h * a[i]
            ap[i] = a[i]
            e[i] = 0.0
        return c_a, c_v
    beta = par.beta
    af = par.alpha_f
    c_a = (1.0 - par.alpha_m) / ((1.0 - af) * beta * h * h)
    c_v = par.gamma / (beta * h)
    for i in range(nf):
        d[i] = h * v[i] + (0.5 * h * h) * at[i]
        vp[i] = v[i] + h * at[i]
        ap[i] = at[i] if af == 0.0 else (at[i] - af * a[i]) / (1.0 - af)
        e[i] = 0.0
    return c_a, c_v


@njit(cache=True, nogil=True, error_model="numpy")
def _auto_start(c_a, c_v, st, sy, wk):
    """Predictor 'auto': evaluate the extrapolation and the constant start ``q_{n+1} = q_n``
    (``d = 0``, ``e = -d_nat``; it reuses the elastic force at ``q_n``) and keep the one with the
    smaller residual in ``wk``. Returns its (U, ||r||, ||Q_e||, ||M a||, ||q_free||)."""
    q, fq = st.q, st.fq
    d, e, vc, ac, rc = wk.d, wk.e, wk.vc, wk.ac, wk.rc
    fr = wk.f[CLAMP:]
    nf = d.shape[0]
    if st.fq_valid[0] == 0:
        st.energy[0] = kernels.elastic_force(q, *sy.kargs, wk.f)
        for i in range(nf):
            fq[i] = fr[i]
        st.fq_valid[0] = 1
    qc = 0.0
    for i in range(nf):
        vc[i] = wk.vp[i] - c_v * d[i]
        ac[i] = wk.ap[i] - c_a * d[i]
        qc += q[CLAMP + i] * q[CLAMP + i]
    rn_c, fn_c, mn_c = _residual(fq, sy, vc, ac, wk.ma, wk.cv, rc, wk.xp)
    energy, rn, fn, mn, qn = _evaluate(q, c_v, c_a, sy, wk)
    if rn <= rn_c:  # not taken either when the extrapolation is not finite
        return energy, rn, fn, mn, qn
    for i in range(nf):
        e[i] = -d[i]
        d[i] = 0.0
        wk.qi[CLAMP + i] = q[CLAMP + i]
        wk.v[i] = vc[i]
        wk.a[i] = ac[i]
        wk.r[i] = rc[i]
        fr[i] = fq[i]
    return st.energy[0], rn_c, fn_c, mn_c, np.sqrt(qc)


@njit(cache=True, nogil=True, error_model="numpy")
def _correct(h, c_a, c_v, refactor, st, sy, wk):
    """Factorise ``K_eff`` at the iterate when ``refactor`` and replace ``wk.r`` by the Newton
    correction. Returns False when ``K_eff`` is singular."""
    if refactor:
        kernels.assemble_tangent_banded(wk.qi, *sy.kargs, wk.ab)
        _effective_lower(wk.ab, sy.mlb, sy.clb, c_a, c_v, sy.damped, wk.lb)
        kind = band_factorize(wk.lb, wk.fac, wk.lu, wk.piv)
        st.factor_kind[0] = kind
        st.factor_h[0] = h
        if kind == NO_FACTOR:
            return False
        st.factorizations[0] += 1
    band_factor_solve(st.factor_kind[0], wk.fac, wk.lu, wk.piv, wk.xp, wk.r)
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def _iterate(h, c_a, c_v, have, start, st, sy, par, wk):
    """Newton iterations from the predicted iterate (already evaluated when ``have``, with
    ``start`` = its (U, ||r||, ||Q_e||, ||M a||, ||q_free||)). Returns (converged, iterations,
    U, ||r||, residual tolerance) of the last iterate."""
    energy, rn, fn, mn, qn = start
    modified = par.modified
    it = 0
    prev = np.inf
    dnorm = np.inf
    dtot = 0.0
    tol_r = np.inf
    refactor = (not modified) or st.factor_kind[0] == NO_FACTOR or st.factor_h[0] != h
    while True:
        if not have:
            energy, rn, fn, mn, qn = _evaluate(st.q, c_v, c_a, sy, wk)
        have = False
        if not np.isfinite(rn):
            return False, it, energy, rn, tol_r
        f_ref = max(par.g_norm, fn, mn)
        tol_r = max(par.tol * f_ref, par.floor)
        if rn <= tol_r:
            return True, it, energy, rn, tol_r
        if it > 0 and rn <= max(par.loose * f_ref, par.floor):
            if dnorm <= max(par.increment_tol * dtot, ROUNDOFF * qn):
                st.increment_converged[0] += 1
                return True, it, energy, rn, tol_r
        if it >= par.max_iter:
            return False, it, energy, rn, tol_r
        if modified and it > 0 and rn > SLOW_CONTRACTION * prev:
            refactor = True
        if not _correct(h, c_a, c_v, refactor, st, sy, wk):
            return False, it, energy, rn, tol_r
        refactor = not modified
        dn = 0.0
        dt2 = 0.0
        for i in range(wk.d.shape[0]):
            x = wk.r[i]
            dn += x * x
            wk.e[i] += x
            wk.d[i] += x
            dt2 += wk.d[i] * wk.d[i]
        dnorm = np.sqrt(dn)
        dtot = np.sqrt(dt2)
        if not np.isfinite(dnorm):
            return False, it, energy, rn, tol_r
        prev = rn
        it += 1


@njit(cache=True, nogil=True, error_model="numpy")
def _accept(h, energy, st, sy, par, wk):
    """Make the converged iterate the new state; returns the damping work ``d^T C d / h`` (the
    damping work at the mean velocity ``d / h``)."""
    inv_bh2 = 1.0 / (par.beta * h * h)
    fr = wk.f[CLAMP:]
    for i in range(st.v.shape[0]):
        st.q[CLAMP + i] = wk.qi[CLAMP + i]
        st.v[i] = wk.v[i]
        st.at[i] = wk.a[i] if par.bdf1 else st.at[i] + wk.e[i] * inv_bh2
        st.a[i] = wk.a[i]
        st.fq[i] = fr[i]
    st.fq_valid[0] = 1
    st.energy[0] = energy
    work_d = 0.0
    if sy.damped:
        cv = wk.cv
        padded_band_matvec(sy.cp, sy.c_even, wk.d, wk.xp, cv)
        for i in range(wk.d.shape[0]):
            work_d += wk.d[i] * cv[i]
        work_d /= h
    return work_d


@njit(cache=True, nogil=True, error_model="numpy")
def newton_step(h, st, sy, par, wk):
    """One Newton-solved implicit step of size ``h`` from the state ``st``. On success the state
    (with ``fq`` and ``energy``) is overwritten and (True, iterations, damping work) is
    returned; on failure the state is left untouched, the failure is described in
    ``st.fail_*`` and (False, iterations, 0) is returned."""
    c_a, c_v = _predict(h, st, par, wk)
    for i in range(CLAMP):
        wk.qi[i] = st.q[i]
    start = (0.0, 0.0, 0.0, 0.0, 0.0)
    have = False  # the iterate (d, e) is already evaluated
    if par.predictor == 0:
        start = _auto_start(c_a, c_v, st, sy, wk)
        have = True
    elif par.predictor == 1:
        for i in range(wk.d.shape[0]):
            wk.e[i] = -wk.d[i]
            wk.d[i] = 0.0
    ok, it, energy, rn, tol_r = _iterate(h, c_a, c_v, have, start, st, sy, par, wk)
    if not ok:
        st.fail_iterations[0] = it
        st.fail_residual[0] = rn
        st.fail_tolerance[0] = tol_r
        if par.modified:
            st.factor_kind[0] = NO_FACTOR  # retry from a fresh tangent
        return False, it, 0.0
    return True, it, _accept(h, energy, st, sy, par, wk)


@njit(cache=True, nogil=True, error_model="numpy")
def record(step, st, sy, wk, out, dmg):
    """Store the sampled outputs of the state after ``step`` steps in ``out`` (Outputs; the
    damage snapshots only when ``out.dsnap`` has one row per snapshot)."""
    q, v, mv = st.q, st.v, wk.mv
    if step % out.sample_every == 0:
        i = out.i_sample[0]
        padded_band_matvec(sy.mp, sy.m_even, v, wk.xp, mv)
        kin = 0.0
        for k in range(v.shape[0]):
            kin += v[k] * mv[k]
        pot = 0.0
        for k in range(q.shape[0]):
            pot -= sy.g_full[k] * (q[k] - sy.q_ref[k])
        out.energy[i, 0] = 0.5 * kin
        out.energy[i, 1] = st.energy[0]
        out.energy[i, 2] = pot
        out.energy[i, 3] = st.dissipated[0]
        o_tip = q.shape[0] - 4
        out.tip[i, 0] = q[o_tip]
        out.tip[i, 1] = q[o_tip + 1]
        out.i_sample[0] = i + 1
    if step % out.snap_every == 0:
        j = out.i_snap[0]
        for k in range(q.shape[0]):
            out.snap[j, k] = q[k]
        if out.dsnap.shape[0] == out.snap.shape[0]:
            for el in range(dmg.shape[0]):
                for k in range(dmg.shape[1]):
                    out.dsnap[j, el, k] = dmg[el, k]
        out.i_snap[0] = j + 1


@njit(cache=True, nogil=True, error_model="numpy")
def run_chunk(n_steps, step0, h, st, sy, par, wk, damage_on, dargs, out, iters):
    """Advance up to ``n_steps`` steps of size ``h`` in place, recording the outputs. Returns
    the steps done; fewer than asked means that the next step failed (state left at its start,
    failure described in ``st``)."""
    for s in range(n_steps):
        ok, it, w = newton_step(h, st, sy, par, wk)
        if not ok:
            return s
        iters[step0 + s] = it
        st.dissipated[0] += w
        if damage_on:
            # staggered, as in the explicit solver: grow damage at the converged state; the
            # strain energy it releases is booked as dissipated work
            released = update_damage_with(st.q, dargs)
            if released != 0.0:
                st.energy[0] -= released
                st.dissipated[0] += released
                st.fq_valid[0] = 0  # the stiffness changed: Q_e(q_n) must be re-evaluated
        record(step0 + s + 1, st, sy, wk, out, dargs.dmg)
    return n_steps
