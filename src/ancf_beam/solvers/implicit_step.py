"""The numba core of the implicit integrators: one Newton-solved step and the time loop.

The scheme and the Newton iteration are described in :mod:`~ancf_beam.solvers.implicit`, which
builds the arguments (named tuples, so every array and parameter travels under its name) and
drives the loop. Everything here is allocation-free.

Every array a numba function receives (also inside a tuple, also when the function is inlined)
is reference-counted on each call, and on the per-step path that is measurable: so the Newton
vectors live in the rows of one array (``IterateWork.vec``, rows named by :data:`ROW`), the
mutable scalars in one structured record (``ImplicitState.s``, fields named by
:data:`STEP_SCALARS`), the per-iteration helpers receive only the groups they use
(``kargs``, :class:`ResidualData`, :class:`IterateWork`) and the per-step helpers are inlined.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.beam.model import CLAMP
from ancf_beam.borrow import borrow
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
    "ROW",
    "SLOW_CONTRACTION",
    "STEP_SCALARS",
    "ImplicitState",
    "ImplicitSystem",
    "FactorWork",
    "IterateWork",
    "NewtonParams",
    "NewtonWork",
    "ResidualData",
    "VectorRows",
    "newton_step",
    "record",
    "run_chunk",
]

ROUNDOFF = 64 * np.finfo(float).eps  # relative round-off of the coordinates
SLOW_CONTRACTION = 0.25  # modified Newton: refactorise when ||R_k+1|| > this * ||R_k||
PREDICTOR_CODES = {"auto": 0, "constant": 1, "extrapolate": 2}
_BW = BANDWIDTH

#: The mutable scalars of a run (one structured record, ``ImplicitState.s``).
STEP_SCALARS = np.dtype(
    [
        ("fq_valid", np.int64),  # ImplicitState.fq is the elastic force at q
        ("energy", np.float64),  # strain energy at q (J)
        ("dissipated", np.float64),  # work dissipated by damping and damage so far (J)
        ("increment_converged", np.int64),  # steps accepted on the increment criterion
        ("factor_kind", np.int64),  # linalg.NO_FACTOR / CHOLESKY / LU
        ("factor_h", np.float64),  # step size the factorisation was built for (s)
        ("factorizations", np.int64),
        ("fail_iterations", np.int64),  # the last failed step: iterations,
        ("fail_residual", np.float64),  # residual (N)
        ("fail_tolerance", np.float64),  # and tolerance (N)
    ]
)


class VectorRows(NamedTuple):
    """Rows of ``IterateWork.vec``: the Newton vectors on the free DOFs."""

    d: int  # increment q_{n+1} - q_n
    e: int  # correction of the scheme's extrapolation
    vp: int  # predicted velocity (v = vp + c_v e)
    ap: int  # predicted acceleration (a = ap + c_a e)
    v: int  # velocity of the iterate
    a: int  # acceleration of the iterate
    ma: int  # M a
    cv: int  # C v
    r: int  # residual, then the Newton correction
    vc: int  # constant start ('auto' predictor): velocity,
    ac: int  # acceleration
    rc: int  # and residual
    mv: int  # M v of the recorded state


ROW = VectorRows(*range(len(VectorRows._fields)))


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


class ResidualData(NamedTuple):
    """What the dynamic residual needs besides the elastic force: mass and damping matrices in
    padded band storage (linalg.padded_band) and the gravity force on the free DOFs."""

    mp: np.ndarray
    m_even: bool
    cp: np.ndarray
    c_even: bool
    damped: bool
    g: np.ndarray


class ImplicitSystem(NamedTuple):
    """Constant data of a run."""

    kargs: tuple  # BeamModel.kernel_args()
    sa: kernels.SoaArgs  # structure-of-arrays force data (kernels.soa_args)
    rd: ResidualData
    mlb: np.ndarray  # mass, lower band storage (free DOFs)
    clb: np.ndarray  # damping, lower band storage
    g_full: np.ndarray  # gravity force, full DOFs
    q_ref: np.ndarray  # full reference coordinates (zero of the gravity potential)


class ImplicitState(NamedTuple):
    """The state after the last converged step and the scalars that travel with it."""

    q: np.ndarray  # full coordinates
    v: np.ndarray  # free velocities
    a: np.ndarray  # free accelerations
    at: np.ndarray  # generalized-alpha acceleration-like variable (= a for Newmark)
    fq: np.ndarray  # free elastic force at q (valid when s[0].fq_valid)
    s: np.ndarray  # (1,) STEP_SCALARS record


class IterateWork(NamedTuple):
    """The Newton iterate: the Newton vectors, its coordinates and elastic force."""

    vec: np.ndarray  # (len(ROW), n_free), rows named by ROW
    qi: np.ndarray  # full coordinates of the iterate
    f: np.ndarray  # its elastic force (full)
    xp: np.ndarray  # padded vector (linalg.padded_band_matvec, band_factor_solve)


class FactorWork(NamedTuple):
    """The effective stiffness ``K_eff`` and its factorisation."""

    ab: np.ndarray  # tangent, general band storage (full DOFs)
    lb: np.ndarray  # K_eff, lower band storage
    fac: np.ndarray  # Cholesky factor
    lu: np.ndarray  # LU factor (fallback)
    piv: np.ndarray  # LU pivots


class NewtonWork(NamedTuple):
    """Work arrays of a run."""

    iw: IterateWork
    fw: FactorWork


_STEP = {"cache": True, "nogil": True, "error_model": "numpy", "inline": "always"}
_CONTINUE, _CONVERGED, _BY_INCREMENT, _FAILED = range(4)  # Newton status


@njit(cache=True, nogil=True, error_model="numpy")
def _residual(fr, rd, v, a, ma, cv, r, xp):
    """Newton right-hand side ``r = -(M a + C v - Q_e - Q_g)`` from the free elastic force
    ``fr``. Returns (||r||, ||Q_e||, ||M a||)."""
    g, damped = rd.g, rd.damped
    padded_band_matvec(rd.mp, rd.m_even, a, xp, ma)
    if damped:
        padded_band_matvec(rd.cp, rd.c_even, v, xp, cv)
    rn = 0.0
    fn = 0.0
    mn = 0.0
    for i in range(v.shape[0]):
        fi = fr[i]
        ri = ma[i] - fi - g[i]
        if damped:
            ri += cv[i]
        r[i] = -ri
        rn += ri * ri
        fn += fi * fi
        mn += ma[i] * ma[i]
    return np.sqrt(rn), np.sqrt(fn), np.sqrt(mn)


@njit(cache=True, nogil=True, error_model="numpy")
def _evaluate(q, c_v, c_a, kargs, sa, rd, iw):
    """The iterate ``qi = q + d``, ``v = v_pred + c_v e``, ``a = a_pred + c_a e``, its elastic
    force ``f`` and residual ``r`` (in ``iw``). Returns (U, ||r||, ||Q_e||, ||M a||,
    ||q_free||)."""
    vec, qi, f = iw.vec, iw.qi, iw.f
    d, e, vp, ap, vi, ai = vec[ROW.d], vec[ROW.e], vec[ROW.vp], vec[ROW.ap], vec[ROW.v], vec[ROW.a]
    qn = 0.0
    for i in range(d.shape[0]):
        x = q[CLAMP + i] + d[i]
        qi[CLAMP + i] = x
        qn += x * x
        vi[i] = vp[i] + c_v * e[i]
        ai[i] = ap[i] + c_a * e[i]
    energy = kernels.force(qi, kargs, sa, f)
    rn, fn, mn = _residual(f[CLAMP:], rd, vi, ai, vec[ROW.ma], vec[ROW.cv], vec[ROW.r], iw.xp)
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


@njit(**_STEP)
def _predict(h, par, v, a, at, vec):
    """The scheme's extrapolation ``d_nat`` (row ``d``), the predicted rates and ``e = 0``.
    Returns ``(c_a, c_v)``: the rates are ``v = vp + c_v e``, ``a = ap + c_a e``."""
    d, vp, ap, e = vec[ROW.d], vec[ROW.vp], vec[ROW.ap], vec[ROW.e]
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


@njit(**_STEP)
def _constant_start_rates(c_a, c_v, q, vec):
    """Rates of the constant start ``q_{n+1} = q_n`` (``e = -d_nat``) in rows ``vc``, ``ac``;
    returns ``||q_free||^2``."""
    d, vp, ap, vc, ac = vec[ROW.d], vec[ROW.vp], vec[ROW.ap], vec[ROW.vc], vec[ROW.ac]
    qc = 0.0
    for i in range(d.shape[0]):
        vc[i] = vp[i] - c_v * d[i]
        ac[i] = ap[i] - c_a * d[i]
        qc += q[CLAMP + i] * q[CLAMP + i]
    return qc


@njit(**_STEP)
def _take_constant_start(q, fq, vec, qi, f):
    """Make the constant start the iterate (its elastic force is ``fq``, its residual is in row
    ``rc``)."""
    d, e, vi, ai, r = vec[ROW.d], vec[ROW.e], vec[ROW.v], vec[ROW.a], vec[ROW.r]
    vc, ac, rc = vec[ROW.vc], vec[ROW.ac], vec[ROW.rc]
    fr = f[CLAMP:]
    for i in range(d.shape[0]):
        e[i] = -d[i]
        d[i] = 0.0
        qi[CLAMP + i] = q[CLAMP + i]
        vi[i] = vc[i]
        ai[i] = ac[i]
        r[i] = rc[i]
        fr[i] = fq[i]


@njit(**_STEP)
def _newton_status(it, rn, fn, mn, qn, dnorm, dtot, tol_r, par):
    """Convergence test of a Newton iterate (module docstring of ``implicit``). Returns
    (status, residual tolerance): ``_CONTINUE``, ``_CONVERGED``, ``_BY_INCREMENT`` (converged on
    the increment criterion) or ``_FAILED`` (non-finite residual or ``max_iter`` reached)."""
    if not np.isfinite(rn):
        return _FAILED, tol_r
    f_ref = max(par.g_norm, fn, mn)
    tol_r = max(par.tol * f_ref, par.floor)
    if rn <= tol_r:
        return _CONVERGED, tol_r
    if it > 0 and rn <= max(par.loose * f_ref, par.floor):
        if dnorm <= max(par.increment_tol * dtot, ROUNDOFF * qn):
            return _BY_INCREMENT, tol_r
    if it >= par.max_iter:
        return _FAILED, tol_r
    return _CONTINUE, tol_r


@njit(**_STEP)
def _add_correction(r, e, d):
    """``e += r``, ``d += r``; returns (||r||, ||d||)."""
    dn = 0.0
    dt2 = 0.0
    for i in range(d.shape[0]):
        x = r[i]
        dn += x * x
        e[i] += x
        d[i] += x
        dt2 += d[i] * d[i]
    return np.sqrt(dn), np.sqrt(dt2)


@njit(**_STEP)
def _factorize(h, c_a, c_v, s, sy, qi, fw):
    """Assemble and factorise ``K_eff`` at the iterate ``qi``; False when it is singular."""
    kernels.assemble_tangent_banded(qi, *sy.kargs, fw.ab)
    _effective_lower(fw.ab, sy.mlb, sy.clb, c_a, c_v, sy.rd.damped, fw.lb)
    kind = band_factorize(fw.lb, fw.fac, fw.lu, fw.piv)
    s.factor_kind = kind
    s.factor_h = h
    if kind == NO_FACTOR:
        return False
    s.factorizations += 1
    return True


@njit(**_STEP)
def _accept(h, energy, st, rd, par, iw):
    """Make the converged iterate the new state; returns the damping work ``d^T C d / h`` (the
    damping work at the mean velocity ``d / h``)."""
    q, v, a, at, fq, s = st.q, st.v, st.a, st.at, st.fq, st.s[0]
    vec, qi = iw.vec, iw.qi
    vi, ai, e, d = vec[ROW.v], vec[ROW.a], vec[ROW.e], vec[ROW.d]
    bdf1 = par.bdf1
    inv_bh2 = 1.0 / (par.beta * h * h)
    fr = iw.f[CLAMP:]
    for i in range(v.shape[0]):
        q[CLAMP + i] = qi[CLAMP + i]
        v[i] = vi[i]
        at[i] = ai[i] if bdf1 else at[i] + e[i] * inv_bh2
        a[i] = ai[i]
        fq[i] = fr[i]
    s.fq_valid = 1
    s.energy = energy
    work_d = 0.0
    if rd.damped:
        cv = vec[ROW.cv]
        padded_band_matvec(rd.cp, rd.c_even, d, iw.xp, cv)
        for i in range(d.shape[0]):
            work_d += d[i] * cv[i]
        work_d /= h
    return work_d


@njit(cache=True, nogil=True, error_model="numpy")
def newton_step(h, st, sy, par, wk):
    """One Newton-solved implicit step of size ``h`` from the state ``st``. On success the state
    (with ``fq`` and the strain energy) is overwritten and (True, iterations, damping work) is
    returned; on failure the state is left untouched, the failure is described in ``st.s``
    and (False, iterations, 0) is returned."""
    iw, fw, kargs, sa, rd = wk.iw, wk.fw, sy.kargs, sy.sa, sy.rd
    q, fq, s, vec, qi, f = st.q, st.fq, st.s[0], iw.vec, iw.qi, iw.f
    d, e, r = vec[ROW.d], vec[ROW.e], vec[ROW.r]
    c_a, c_v = _predict(h, par, st.v, st.a, st.at, vec)
    for i in range(CLAMP):
        qi[i] = q[i]
    have = par.predictor == 0  # 'auto': the start is chosen, and evaluated, here
    energy = rn = fn = mn = qn = 0.0
    if have:  # the extrapolation or the constant start (reusing Q_e(q_n)), the smaller residual
        if s.fq_valid == 0:
            s.energy = kernels.force(q, kargs, sa, f)
            for i in range(fq.shape[0]):
                fq[i] = f[CLAMP + i]
            s.fq_valid = 1
        qc = _constant_start_rates(c_a, c_v, q, vec)
        rn_c, fn_c, mn_c = _residual(
            fq, rd, vec[ROW.vc], vec[ROW.ac], vec[ROW.ma], vec[ROW.cv], vec[ROW.rc], iw.xp
        )
        energy, rn, fn, mn, qn = _evaluate(q, c_v, c_a, kargs, sa, rd, iw)
        if not (rn <= rn_c):  # also when the extrapolation is not finite
            energy, rn, fn, mn, qn = s.energy, rn_c, fn_c, mn_c, np.sqrt(qc)
            _take_constant_start(q, fq, vec, qi, f)
    elif par.predictor == 1:  # 'constant'
        for i in range(d.shape[0]):
            e[i] = -d[i]
            d[i] = 0.0
    modified = par.modified
    it = 0
    prev = dnorm = tol_r = np.inf
    dtot = 0.0
    refactor = (not modified) or s.factor_kind == NO_FACTOR or s.factor_h != h
    status = _FAILED
    while True:
        if not have:
            energy, rn, fn, mn, qn = _evaluate(q, c_v, c_a, kargs, sa, rd, iw)
        have = False
        status, tol_r = _newton_status(it, rn, fn, mn, qn, dnorm, dtot, tol_r, par)
        if status != _CONTINUE:
            break
        if modified and it > 0 and rn > SLOW_CONTRACTION * prev:
            refactor = True
        if refactor:
            if not _factorize(h, c_a, c_v, s, sy, qi, fw):
                status = _FAILED
                break
            refactor = not modified
        band_factor_solve(s.factor_kind, fw.fac, fw.lu, fw.piv, iw.xp, r)  # r <- correction
        dnorm, dtot = _add_correction(r, e, d)
        if not np.isfinite(dnorm):
            status = _FAILED
            break
        prev = rn
        it += 1
    if status == _FAILED:
        s.fail_iterations, s.fail_residual, s.fail_tolerance = it, rn, tol_r
        if modified:
            s.factor_kind = NO_FACTOR  # retry from a fresh tangent
        return False, it, 0.0
    if status == _BY_INCREMENT:
        s.increment_converged += 1
    return True, it, _accept(h, energy, st, rd, par, iw)


@njit(**_STEP)
def _record(step, st, rd, g_full, q_ref, vec, xp, out, dmg):
    q, v = st.q, st.v
    if step % out.sample_every == 0:
        i = out.i_sample[0]
        s, mv, energy, tip = st.s[0], vec[ROW.mv], out.energy, out.tip
        padded_band_matvec(rd.mp, rd.m_even, v, xp, mv)
        kin = 0.0
        for k in range(v.shape[0]):
            kin += v[k] * mv[k]
        pot = 0.0
        for k in range(q.shape[0]):
            pot -= g_full[k] * (q[k] - q_ref[k])
        energy[i, 0] = 0.5 * kin
        energy[i, 1] = s.energy
        energy[i, 2] = pot
        energy[i, 3] = s.dissipated
        o_tip = q.shape[0] - 4
        tip[i, 0] = q[o_tip]
        tip[i, 1] = q[o_tip + 1]
        out.i_sample[0] = i + 1
    if step % out.snap_every == 0:
        j = out.i_snap[0]
        snap, dsnap = out.snap, out.dsnap
        for k in range(q.shape[0]):
            snap[j, k] = q[k]
        if dsnap.shape[0] == snap.shape[0]:
            for el in range(dmg.shape[0]):
                for k in range(dmg.shape[1]):
                    dsnap[j, el, k] = dmg[el, k]
        out.i_snap[0] = j + 1


@njit(cache=True, nogil=True, error_model="numpy")
def record(step, st, sy, wk, out, dmg):
    """Store the sampled outputs of the state after ``step`` steps in ``out`` (Outputs; the
    damage snapshots only when ``out.dsnap`` has one row per snapshot)."""
    _record(step, st, sy.rd, sy.g_full, sy.q_ref, wk.iw.vec, wk.iw.xp, out, dmg)


@njit(cache=True, nogil=True, error_model="numpy")
def run_chunk(n_steps, step0, h, st, sy, par, wk, damage_on, dargs, out, iters):
    """Advance up to ``n_steps`` steps of size ``h`` in place, recording the outputs. Returns
    the steps done; fewer than asked means that the next step failed (state left at its start,
    failure described in ``st.s``)."""
    st, sy, par, wk, dargs, out, iters = borrow((st, sy, par, wk, dargs, out, iters))
    s, q, dmg = st.s[0], st.q, dargs.dmg
    rd, g_full, q_ref, vec, xp = sy.rd, sy.g_full, sy.q_ref, wk.iw.vec, wk.iw.xp
    for k in range(n_steps):
        ok, it, w = newton_step(h, st, sy, par, wk)
        if not ok:
            return k
        iters[step0 + k] = it
        s.dissipated += w
        if damage_on:
            # staggered, as in the explicit solver: grow damage at the converged state; the
            # strain energy it releases is booked as dissipated work
            released = update_damage_with(q, dargs)
            if released != 0.0:
                s.energy -= released
                s.dissipated += released
                s.fq_valid = 0  # the stiffness changed: Q_e(q_n) must be re-evaluated
        _record(step0 + k + 1, st, rd, g_full, q_ref, vec, xp, out, dmg)
    return n_steps
