"""Implicit time integrators: BDF1 (backward Euler), Newmark and generalized-alpha.

All three integrate the reduced (clamp-eliminated) equations of motion

    M a + C v = Q_e(q) + Q_g,        C = alpha M + beta K0

(Rayleigh damping; ``K0`` is the stiffness of the straight undamaged beam, the same ``C`` as the
explicit solver builds),

and return the same :class:`~ancf_beam.solvers.explicit.DynamicsResult` as the explicit solver (with
``integrator`` and the per-step ``newton_iterations`` filled in).

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

* ``bdf1`` -- backward Euler on the first-order form ``u' = v``, ``M v' + C v = F(u)``
  (seeds/002): ``(u_{n+1} - u_n)/h = v_{n+1}``, ``M (v_{n+1} - v_n)/h + C v_{n+1} = F(u_{n+1})``.
  The seed's Newton system ``(K_T + M/h^2) du = -R_v - (M/h) R_u`` (plus ``C/h`` on the left and
  ``-C R_u`` on the right with damping) is used with the kinematic residual ``R_u`` eliminated
  exactly: ``v = d/h`` at every iterate, so ``R_u = 0`` and the right-hand side is ``-R_v``;
  ``c_v = 1/h``, ``c_a = 1/h^2``. First order, L-stable (strong numerical damping).
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

Implementation: the whole time loop runs in numba without allocation (:func:`_run_chunk`, in
chunks between progress reports, like the explicit solver), including the damage update and the
sampled outputs. A step that fails is left undone by the loop and retried as half steps from
Python (:meth:`_Integrator.recover`), one numba step (:func:`_step`) at a time.

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
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.beam.damage import update_damage
from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.linalg import (
    BANDWIDTH,
    NO_FACTOR,
    band_factor_solve,
    band_factorize,
    padded_band,
    padded_band_matvec,
    sym_band_matvec,
)
from ancf_beam.results import DynamicsResult, NewtonConvergenceError
from ancf_beam.solvers.explicit import simulate_explicit

log = logging.getLogger(__name__)

EXPLICIT = "central-difference"
IMPLICIT_INTEGRATORS = ("bdf1", "newmark", "generalized-alpha")
INTEGRATORS = (EXPLICIT, *IMPLICIT_INTEGRATORS)
NEWTON_VARIANTS = ("full", "modified")
PREDICTORS = ("auto", "constant", "extrapolate")

DEFAULT_RHO_INF = 0.8
DEFAULT_MAX_ITER = 20
DEFAULT_TOL = 1e-8
DEFAULT_INCREMENT_TOL = 1e-10
DEFAULT_MAX_HALVINGS = 4
DEFAULT_NEWTON = "modified"
DEFAULT_PREDICTOR = "auto"
_FLOOR_FACTOR = 10.0
_ROUNDOFF = 64 * np.finfo(float).eps  # relative round-off of the coordinates
_SLOW_CONTRACTION = 0.25  # modified Newton: refactorise when ||R_k+1|| > this * ||R_k||
_BW = BANDWIDTH


# ------------------------------------------------------------------------------------------
# schemes
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scheme:
    """Parameters of one implicit integrator (see the module docstring)."""

    name: str
    beta: float = 0.25
    gamma: float = 0.5
    alpha_m: float = 0.0
    alpha_f: float = 0.0
    rho_inf: float | None = None

    @property
    def is_bdf1(self) -> bool:
        return self.name == "bdf1"

    def coefficients(self, h: float) -> tuple[float, float]:
        """``(c_a, c_v)``: ``da/de`` and ``dv/de`` of the Newton correction ``e``."""
        if self.is_bdf1:
            return 1.0 / (h * h), 1.0 / h
        c_a = (1.0 - self.alpha_m) / ((1.0 - self.alpha_f) * self.beta * h * h)
        return c_a, self.gamma / (self.beta * h)

    def describe(self) -> dict[str, float | str]:
        if self.is_bdf1:
            return {"integrator": self.name}
        out: dict[str, float | str] = {
            "integrator": self.name,
            "beta": self.beta,
            "gamma": self.gamma,
            "alpha_m": self.alpha_m,
            "alpha_f": self.alpha_f,
        }
        if self.rho_inf is not None:
            out["rho_inf"] = self.rho_inf
        return out


def generalized_alpha_parameters(rho_inf: float) -> tuple[float, float, float, float]:
    """Chung-Hulbert ``(alpha_m, alpha_f, beta, gamma)`` for spectral radius ``rho_inf``."""
    if not (0.0 <= rho_inf <= 1.0):
        raise ValueError(f"rho_inf must be in [0, 1], got {rho_inf!r}")
    am = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)
    af = rho_inf / (rho_inf + 1.0)
    gamma = 0.5 - am + af
    beta = 0.25 * (1.0 - am + af) ** 2
    return am, af, beta, gamma


def make_scheme(
    integrator: str,
    beta: float | None = None,
    gamma: float | None = None,
    rho_inf: float | None = None,
) -> Scheme:
    """Validated :class:`Scheme` for ``'bdf1'``, ``'newmark'`` or ``'generalized-alpha'``.

    ``beta``/``gamma`` only apply to Newmark, ``rho_inf`` only to generalized-alpha; giving a
    parameter the chosen integrator does not use raises ``ValueError``.
    """
    if integrator not in IMPLICIT_INTEGRATORS:
        raise ValueError(
            f"unknown implicit integrator {integrator!r}; choose one of "
            + ", ".join(IMPLICIT_INTEGRATORS)
        )
    if integrator != "newmark" and (beta is not None or gamma is not None):
        raise ValueError(f"beta/gamma are Newmark parameters, not used by {integrator!r}")
    if integrator != "generalized-alpha" and rho_inf is not None:
        raise ValueError(f"rho_inf is a generalized-alpha parameter, not used by {integrator!r}")
    if integrator == "bdf1":
        return Scheme("bdf1", beta=1.0, gamma=1.0)
    if integrator == "newmark":
        b = 0.25 if beta is None else float(beta)
        g = 0.5 if gamma is None else float(gamma)
        if not (math.isfinite(b) and b > 0.0):
            raise ValueError(f"Newmark beta must be > 0 (beta = 0 is explicit), got {b!r}")
        if not (math.isfinite(g) and g >= 0.0):
            raise ValueError(f"Newmark gamma must be >= 0, got {g!r}")
        if g < 0.5 or b < 0.25 * (g + 0.5) ** 2 * (1.0 - 1e-12):
            log.warning(
                "Newmark beta = %g, gamma = %g is not unconditionally stable "
                "(needs gamma >= 1/2 and beta >= (gamma + 1/2)^2 / 4)",
                b,
                g,
            )
        return Scheme("newmark", beta=b, gamma=g)
    rho = DEFAULT_RHO_INF if rho_inf is None else float(rho_inf)
    am, af, b, g = generalized_alpha_parameters(rho)
    return Scheme("generalized-alpha", beta=b, gamma=g, alpha_m=am, alpha_f=af, rho_inf=rho)


# ------------------------------------------------------------------------------------------
# banded linear algebra on the free DOFs (numba)
# ------------------------------------------------------------------------------------------
# The Cholesky factor ``K = L L^T`` is kept in two row layouts of one cache line per row, both
# pre-scaled by the reciprocal diagonal: ``fac[0, i, k] = L[i, i-7+k] / L[i, i]`` (k < 7; zero
# outside the matrix) for the forward sweep, ``fac[1, i, k] = L[i+1+k, i] / L[i, i]`` for the
# backward sweep, and ``fac[:, i, 7] = 1 / L[i, i]``. The sweeps run on a copy of the right-hand
# side padded with 7 zeros at both ends (fixed-length inner loops without branches) and keep the
# three most recent unknowns in registers, so that each row adds one multiply-add to the
# dependency chain. When ``K`` is not positive definite a banded LU with partial pivoting is
# used instead (LAPACK ``dgbtf2`` algorithm and layout ``lu[2 bw + i - j, j] = A[i, j]``).


# ------------------------------------------------------------------------------------------
# one Newton-solved step and the time loop (numba)
# ------------------------------------------------------------------------------------------
# par: scheme and Newton parameters (floats)
_P_BETA, _P_GAMMA, _P_AM, _P_AF, _P_BDF1 = 0, 1, 2, 3, 4
_P_TOL, _P_LOOSE, _P_INC, _P_FLOOR, _P_GNORM, _P_MAXIT, _P_MODIFIED, _P_PRED = range(5, 13)
_N_PAR = 13
# ist: integer state / counters
_I_KIND, _I_FACT, _I_INCR, _I_FQ, _I_FAIL_IT = range(5)
# fst: float state
_F_H, _F_ENERGY, _F_FAIL_R, _F_FAIL_TOL = range(4)
# wk rows: Newton work vectors on the free DOFs
_W_D, _W_E, _W_VP, _W_AP, _W_V, _W_A, _W_MA, _W_CV, _W_R, _W_VC, _W_AC, _W_RC = range(12)
_N_WORK = 12
_PRED_CODE = {"auto": 0, "constant": 1, "extrapolate": 2}
# The constant data of a run travel as tuples:
#   mats = (mlb, mp, m_even, clb, cp, c_even, damped, g): mass and damping matrices in lower band
#          storage and padded (padded_band), the damping switch and the free gravity force;
#   work = (wk, qi, f, ab, lb, fac, lu, piv, xp): work arrays (see _Integrator).


@njit(cache=True, nogil=True, error_model="numpy")
def _residual(fr, mats, v, a, ma, cv, r, xp):
    """Newton right-hand side ``r = -(M a + C v - Q_e - Q_g)`` from the free elastic force
    ``fr``. Returns (||r||, ||Q_e||, ||M a||)."""
    _, mp, m_even, _, cp, c_even, damped, g = mats
    padded_band_matvec(mp, m_even, a, xp, ma)
    if damped:
        padded_band_matvec(cp, c_even, v, xp, cv)
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
def _evaluate(q, d, e, c_v, c_a, kargs, mats, work):
    """The iterate ``qi = q + d``, ``v = v_pred + c_v e``, ``a = a_pred + c_a e``, its elastic
    force ``f`` and residual ``r`` (in ``work``). Returns (U, ||r||, ||Q_e||, ||M a||,
    ||q_free||)."""
    wk, qi, f, _, _, _, _, _, xp = work
    vp = wk[_W_VP]
    ap = wk[_W_AP]
    vi = wk[_W_V]
    ai = wk[_W_A]
    qn = 0.0
    for i in range(d.shape[0]):
        x = q[CLAMP + i] + d[i]
        qi[CLAMP + i] = x
        qn += x * x
        vi[i] = vp[i] + c_v * e[i]
        ai[i] = ap[i] + c_a * e[i]
    energy = kernels.elastic_force(qi, *kargs, f)
    rn, fn, mn = _residual(f[CLAMP:], mats, vi, ai, wk[_W_MA], wk[_W_CV], wk[_W_R], xp)
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
def _step(h, q, v, a, at, fq, par, ist, fst, kargs, mats, work):
    """One Newton-solved implicit step of size ``h`` from the state ``(q, v, a, at)`` (``fq``:
    free elastic force at ``q`` when ``ist[_I_FQ]``). On success the state, ``fq`` and
    ``fst[_F_ENERGY]`` are overwritten and (True, iterations, damping work) is returned; on
    failure the state is left untouched, the failure is described in ``ist``/``fst`` and
    (False, iterations, 0) is returned."""
    nf = v.shape[0]
    mlb, _, _, clb, cp, c_even, damped, _ = mats
    wk, qi, f, ab, lb, fac, lu, piv, xp = work
    beta = par[_P_BETA]
    af = par[_P_AF]
    bdf1 = par[_P_BDF1] != 0.0
    tol = par[_P_TOL]
    loose = par[_P_LOOSE]
    inc_tol = par[_P_INC]
    floor = par[_P_FLOOR]
    g_norm = par[_P_GNORM]
    max_iter = int(par[_P_MAXIT])
    modified = par[_P_MODIFIED] != 0.0
    pred = int(par[_P_PRED])
    d = wk[_W_D]
    e = wk[_W_E]
    vp = wk[_W_VP]
    ap = wk[_W_AP]
    vi = wk[_W_V]
    ai = wk[_W_A]
    r = wk[_W_R]
    fr = f[CLAMP:]
    # scheme: extrapolation d_nat (in d) and the affine rates v = vp + c_v e, a = ap + c_a e
    if bdf1:
        c_a = 1.0 / (h * h)
        c_v = 1.0 / h
        for i in range(nf):
            d[i] = h * v[i] + (h * h) * a[i]
            vp[i] = v[i] + h * a[i]
            ap[i] = a[i]
            e[i] = 0.0
    else:
        c_a = (1.0 - par[_P_AM]) / ((1.0 - af) * beta * h * h)
        c_v = par[_P_GAMMA] / (beta * h)
        for i in range(nf):
            d[i] = h * v[i] + (0.5 * h * h) * at[i]
            vp[i] = v[i] + h * at[i]
            ap[i] = at[i] if af == 0.0 else (at[i] - af * a[i]) / (1.0 - af)
            e[i] = 0.0
    for i in range(CLAMP):
        qi[i] = q[i]
    energy = rn = fn = mn = qn = 0.0
    have = False  # the iterate (d, e) is already evaluated
    if pred == 0:
        # 'auto': the constant start q_{n+1} = q_n (d = 0, e = -d_nat) needs no new force
        vc = wk[_W_VC]
        ac = wk[_W_AC]
        rc = wk[_W_RC]
        if ist[_I_FQ] == 0:
            fst[_F_ENERGY] = kernels.elastic_force(q, *kargs, f)
            for i in range(nf):
                fq[i] = fr[i]
            ist[_I_FQ] = 1
        qc = 0.0
        for i in range(nf):
            vc[i] = vp[i] - c_v * d[i]
            ac[i] = ap[i] - c_a * d[i]
            qc += q[CLAMP + i] * q[CLAMP + i]
        rn_c, fn_c, mn_c = _residual(fq, mats, vc, ac, wk[_W_MA], wk[_W_CV], rc, xp)
        energy, rn, fn, mn, qn = _evaluate(q, d, e, c_v, c_a, kargs, mats, work)
        have = True
        if not (rn <= rn_c):  # also when the extrapolation is not finite
            energy, rn, fn, mn, qn = fst[_F_ENERGY], rn_c, fn_c, mn_c, np.sqrt(qc)
            for i in range(nf):
                e[i] = -d[i]
                d[i] = 0.0
                qi[CLAMP + i] = q[CLAMP + i]
                vi[i] = vc[i]
                ai[i] = ac[i]
                r[i] = rc[i]
                fr[i] = fq[i]
    elif pred == 1:
        for i in range(nf):
            e[i] = -d[i]
            d[i] = 0.0
    it = 0
    prev = np.inf
    dnorm = np.inf
    dtot = 0.0
    tol_r = np.inf
    refactor = (not modified) or ist[_I_KIND] == NO_FACTOR or fst[_F_H] != h
    converged = False
    while True:
        if not have:
            energy, rn, fn, mn, qn = _evaluate(q, d, e, c_v, c_a, kargs, mats, work)
        have = False
        if not np.isfinite(rn):
            break
        f_ref = max(g_norm, fn, mn)
        tol_r = max(tol * f_ref, floor)
        if rn <= tol_r:
            converged = True
            break
        if it > 0 and rn <= max(loose * f_ref, floor):
            if dnorm <= max(inc_tol * dtot, _ROUNDOFF * qn):
                ist[_I_INCR] += 1
                converged = True
                break
        if it >= max_iter:
            break
        if modified and it > 0 and rn > _SLOW_CONTRACTION * prev:
            refactor = True
        if refactor:
            kernels.assemble_tangent_banded(qi, *kargs, ab)
            _effective_lower(ab, mlb, clb, c_a, c_v, damped, lb)
            kind = band_factorize(lb, fac, lu, piv)
            ist[_I_KIND] = kind
            fst[_F_H] = h
            if kind == NO_FACTOR:
                break
            ist[_I_FACT] += 1
            refactor = not modified
        band_factor_solve(ist[_I_KIND], fac, lu, piv, xp, r)  # r <- Newton correction
        dn = 0.0
        dt2 = 0.0
        for i in range(nf):
            x = r[i]
            dn += x * x
            e[i] += x
            d[i] += x
            dt2 += d[i] * d[i]
        dnorm = np.sqrt(dn)
        dtot = np.sqrt(dt2)
        if not np.isfinite(dnorm):
            break
        prev = rn
        it += 1
    if not converged:
        ist[_I_FAIL_IT] = it
        fst[_F_FAIL_R] = rn
        fst[_F_FAIL_TOL] = tol_r
        if modified:
            ist[_I_KIND] = NO_FACTOR  # retry from a fresh tangent
        return False, it, 0.0
    inv_bh2 = 1.0 / (beta * h * h)
    for i in range(nf):
        q[CLAMP + i] = qi[CLAMP + i]
        v[i] = vi[i]
        at[i] = ai[i] if bdf1 else at[i] + e[i] * inv_bh2
        a[i] = ai[i]
        fq[i] = fr[i]
    ist[_I_FQ] = 1
    fst[_F_ENERGY] = energy
    work_d = 0.0
    if damped:  # d^T C d / h: damping work at the mean velocity d / h
        cv = wk[_W_CV]
        padded_band_matvec(cp, c_even, d, xp, cv)
        for i in range(nf):
            work_d += d[i] * cv[i]
        work_d /= h
    return True, it, work_d


@njit(cache=True, nogil=True, error_model="numpy")
def _record(step, q, v, energy, wd, mats, out, dmg, i_sample, i_snap, xp):
    """Store the sampled outputs of the state after ``step`` steps; returns the new counters.
    ``out = (g_full, q_ref, sample_every, snap_every, tip_out, en_out, snap_out, dsnap_out, mv)``
    (``dsnap_out`` is only written when it has one row per snapshot)."""
    g_full, q_ref, sample_every, snap_every, tip_out, en_out, snap_out, dsnap_out, mv = out
    if step % sample_every == 0:
        padded_band_matvec(mats[1], mats[2], v, xp, mv)
        kin = 0.0
        for i in range(v.shape[0]):
            kin += v[i] * mv[i]
        pot = 0.0
        for i in range(q.shape[0]):
            pot -= g_full[i] * (q[i] - q_ref[i])
        en_out[i_sample, 0] = 0.5 * kin
        en_out[i_sample, 1] = energy
        en_out[i_sample, 2] = pot
        en_out[i_sample, 3] = wd
        o_tip = q.shape[0] - 4
        tip_out[i_sample, 0] = q[o_tip]
        tip_out[i_sample, 1] = q[o_tip + 1]
        i_sample += 1
    if step % snap_every == 0:
        for i in range(q.shape[0]):
            snap_out[i_snap, i] = q[i]
        if dsnap_out.shape[0] == snap_out.shape[0]:
            for el in range(dmg.shape[0]):
                for k in range(dmg.shape[1]):
                    dsnap_out[i_snap, el, k] = dmg[el, k]
        i_snap += 1
    return i_sample, i_snap


@njit(cache=True, nogil=True, error_model="numpy")
def _run_chunk(n_steps, step0, h, q, v, a, at, fq, par, ist, fst, kargs, mats, work, damage_on,
               dargs, out, iters, wd, i_sample, i_snap):  # fmt: skip
    """Advance up to ``n_steps`` steps of size ``h`` in place, recording the outputs. Returns
    (steps done, wd, i_sample, i_snap); fewer steps than asked means that the next step failed
    (state left at its start, failure described in ``ist``/``fst``)."""
    for s in range(n_steps):
        ok, it, w = _step(h, q, v, a, at, fq, par, ist, fst, kargs, mats, work)
        if not ok:
            return s, wd, i_sample, i_snap
        iters[step0 + s] = it
        wd += w
        if damage_on:
            # staggered, as in the explicit solver: grow damage at the converged state; the
            # strain energy it releases is booked as dissipated work
            released = update_damage(q, *dargs)
            if released != 0.0:
                fst[_F_ENERGY] -= released
                wd += released
                ist[_I_FQ] = 0  # the stiffness changed: Q_e(q_n) must be re-evaluated
        i_sample, i_snap = _record(
            step0 + s + 1, q, v, fst[_F_ENERGY], wd, mats, out, dargs[11], i_sample, i_snap,
            work[-1],
        )  # fmt: skip
    return n_steps, wd, i_sample, i_snap


# ------------------------------------------------------------------------------------------
# the integrator
# ------------------------------------------------------------------------------------------
class _Integrator:
    """State, constant matrices and work arrays of one implicit run. Every step runs in numba
    (:func:`_run_chunk`, or :func:`_step` one at a time); the step halving after a failed
    step is driven from here."""

    def __init__(
        self,
        model: BeamModel,
        scheme: Scheme,
        damping: tuple[float, float],
        max_iter: int,
        tol: float,
        increment_tol: float,
        max_halvings: int,
        newton: str,
        predictor: str,
    ):
        self.model = model
        self.scheme = scheme
        self.max_iter = max_iter
        self.max_halvings = max_halvings
        self.kargs = model.kernel_args()
        nf = self.nf = model.n_free
        n = model.n_dof
        mlb = np.ascontiguousarray(model.mass_free_lower_band)
        alpha, beta = damping
        self.damped = alpha != 0.0 or beta != 0.0
        clb = model.rayleigh_lower_band(alpha, beta) if self.damped else np.zeros_like(mlb)
        self.g = np.ascontiguousarray(model.gravity_free)
        self.mats = (
            mlb, *padded_band(mlb), clb, *padded_band(clb), self.damped, self.g,
        )  # fmt: skip
        self.floor = model.roundoff_floor(_FLOOR_FACTOR)
        self.par = np.zeros(_N_PAR)
        self.par[[_P_BETA, _P_GAMMA, _P_AM, _P_AF]] = (
            scheme.beta, scheme.gamma, scheme.alpha_m, scheme.alpha_f,
        )  # fmt: skip
        self.par[_P_BDF1] = float(scheme.is_bdf1)
        self.par[_P_TOL] = tol
        self.par[_P_LOOSE] = math.sqrt(tol)
        self.par[_P_INC] = increment_tol
        self.par[_P_FLOOR] = self.floor
        self.par[_P_GNORM] = float(np.linalg.norm(self.g))
        self.par[_P_MAXIT] = max_iter
        self.par[_P_MODIFIED] = float(newton == "modified")
        self.par[_P_PRED] = _PRED_CODE[predictor]
        self.ist = np.zeros(5, dtype=np.int64)
        self.fst = np.zeros(4)
        self.fst[_F_H] = -1.0
        self.work = (
            np.zeros((_N_WORK, nf)),  # Newton vectors (rows _W_*)
            np.zeros(n),  # iterate q
            np.zeros(n),  # its elastic force
            np.zeros((2 * _BW + 1, n)),  # tangent (general band, full DOFs)
            np.zeros((_BW + 1, nf)),  # K_eff (lower band)
            np.zeros((2, nf, _BW + 1)),  # Cholesky factor
            np.zeros((3 * _BW + 1, nf)),  # LU factor
            np.zeros(nf, dtype=np.int64),  # LU pivots
            np.zeros(nf + 2 * _BW),  # padded vector
        )
        self.halvings = 0
        self.damage = None
        m = model
        if model.case.damage.enabled:
            from ancf_beam.beam.damage import DamageState

            self.damage = DamageState(model)
            s = self.damage.spec
            self.dargs = (
                m.n_el, m.spb, m.sppb, m.eps0, m.kap0, m.linear, self.damage.half_h,
                float(s.threshold), float(s.softening), float(s.d_max), self.damage.hist,
                m.damage, m.ea_w0, m.ei_w0, m.ea_w, m.ei_w,
            )  # fmt: skip
        else:  # same types (one compiled version), never used
            z = np.zeros((1, 1))
            self.dargs = (
                m.n_el, m.spb, m.sppb, m.eps0, m.kap0, m.linear, z, 0.0, 1.0, 0.0, z, z, z, z,
                z, z,
            )  # fmt: skip

    # -- state -------------------------------------------------------------------------
    def set_initial_state(self, q0: np.ndarray, v0: np.ndarray) -> None:
        self.q = np.array(q0, dtype=float)
        self.v = np.array(v0, dtype=float)
        f = self.work[2]
        energy = kernels.elastic_force(self.q, *self.kargs, f)
        rhs = f[CLAMP:] + self.g
        if self.damped:
            cv = np.empty(self.nf)
            sym_band_matvec(self.mats[3], self.v, cv)
            rhs = rhs - cv
        a0 = sla.cho_solve_banded((self.model.mass_cholesky, True), rhs, check_finite=False)
        if not (np.all(np.isfinite(a0)) and math.isfinite(energy)):
            raise ValueError(
                "the initial state gives non-finite forces (degenerate q0, e.g. a zero slope "
                "vector |r'| = 0, or non-finite q0 / v0)"
            )
        self.a = np.ascontiguousarray(a0)
        self.at = self.a.copy()
        self.fq = f[CLAMP:].copy()
        self.ist[_I_FQ] = 1
        self.fst[_F_ENERGY] = energy

    @property
    def energy(self) -> float:
        return float(self.fst[_F_ENERGY])

    @property
    def factorizations(self) -> int:
        return int(self.ist[_I_FACT])

    @property
    def increment_converged(self) -> int:
        return int(self.ist[_I_INCR])

    # -- steps -------------------------------------------------------------------------
    def _state_args(self):
        return (
            self.q, self.v, self.a, self.at, self.fq, self.par, self.ist, self.fst, self.kargs,
            self.mats, self.work,
        )  # fmt: skip

    def run_chunk(self, n_steps, step0, h, out, iters, wd, i_sample, i_snap):
        """Up to ``n_steps`` steps in numba; see :func:`_run_chunk`."""
        return _run_chunk(
            n_steps, step0, h, *self._state_args(), self.damage is not None, self.dargs, out,
            iters, wd, i_sample, i_snap,
        )  # fmt: skip

    def record(self, step, wd, out, i_sample, i_snap):
        return _record(
            step, self.q, self.v, self.energy, wd, self.mats, out, self.dargs[11], i_sample,
            i_snap, self.work[-1],
        )  # fmt: skip

    def try_step(self, h: float) -> tuple[bool, int, float]:
        ok, it, work = _step(h, *self._state_args())
        return bool(ok), int(it), float(work)

    def recover(self, h: float, t: float, step: int) -> tuple[int, float]:
        """The step of size ``h`` from ``t`` just failed (state untouched): retry it as two half
        steps, recursively. Returns (iterations including the failed attempt, dissipated
        work); raises :class:`NewtonConvergenceError` when the halvings run out."""
        return self._halve(h, t, step, 0, int(self.ist[_I_FAIL_IT]))

    def _halve(self, h: float, t: float, step: int, depth: int, failed_iters: int):
        if depth >= self.max_halvings:
            it = int(self.ist[_I_FAIL_IT])
            rn = float(self.fst[_F_FAIL_R])
            tl = float(self.fst[_F_FAIL_TOL])
            what = "a non-finite residual" if not math.isfinite(rn) else f"residual {rn:.3e} N"
            raise NewtonConvergenceError(
                f"{self.scheme.name}: Newton did not converge in step {step} at t = {t:.6g} s "
                f"(dt = {h:.4e} s after {depth} halvings): {what} after {it} iterations "
                f"(tolerance {tl:.3e} N, max_iter = {self.max_iter}); reduce dt or raise "
                f"max_iter / max_halvings",
                t=t,
                step=step,
                dt=h,
                iterations=it,
                residual=rn,
                tolerance=tl,
            )
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
        if self.damage is not None:  # staggered damage update, as in _run_chunk
            released = self.damage.update(self.q)
            if released != 0.0:
                self.fst[_F_ENERGY] -= released
                work += released
                self.ist[_I_FQ] = 0
        return it, work


def simulate_implicit(
    model: BeamModel,
    t_end: float,
    dt: float,
    integrator: str = "newmark",
    *,
    beta: float | None = None,
    gamma: float | None = None,
    rho_inf: float | None = None,
    damping: tuple[float, float] = (0.0, 0.0),
    sample_dt: float | None = None,
    snapshot_dt: float | None = None,
    q0: np.ndarray | None = None,
    v0: np.ndarray | None = None,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    increment_tol: float = DEFAULT_INCREMENT_TOL,
    max_halvings: int = DEFAULT_MAX_HALVINGS,
    newton: str = DEFAULT_NEWTON,
    predictor: str = DEFAULT_PREDICTOR,
    dt_critical: float | None = None,
    progress: bool = True,
    progress_interval_s: float = 5.0,
    stats: dict | None = None,
) -> DynamicsResult:
    """Implicit run from ``q0`` (default: straight reference) released with ``v0`` (default:
    rest) under gravity, up to ``t_end`` (s) with step ``dt`` (s); ``dt`` may exceed the explicit
    critical step (``dt_critical`` is only reported in the log).

    ``integrator``: ``'bdf1'``, ``'newmark'`` (``beta``, ``gamma``; default 1/4, 1/2) or
    ``'generalized-alpha'`` (``rho_inf`` in [0, 1], default 0.8). ``damping = (alpha, beta)``:
    Rayleigh ``C = alpha M + beta K0``. Newton: at most ``max_iter`` iterations per step,
    relative residual ``tol``, relative increment ``increment_tol``, up to ``max_halvings``
    step halvings, ``newton='modified'`` (default: reuse the factorisation while the residual
    contracts) or ``'full'`` (new tangent every iteration); ``predictor`` ``'auto'`` (default),
    ``'extrapolate'`` or ``'constant'`` (see the module docstring). ``stats``, when given,
    receives ``factorizations``, ``halvings``, ``increment_converged``, ``residual_floor``,
    ``newton``, ``predictor`` and the scheme parameters.

    Raises :class:`NewtonConvergenceError` when a step cannot be converged.
    """
    scheme = make_scheme(integrator, beta=beta, gamma=gamma, rho_inf=rho_inf)
    dyn = model.case.dynamics
    sample_dt = dyn.sample_dt if sample_dt is None else sample_dt
    snapshot_dt = dyn.snapshot_dt if snapshot_dt is None else snapshot_dt
    if not (dt > 0 and math.isfinite(dt)):
        raise ValueError(f"time step must be a positive number, got {dt!r}")
    if not (t_end > 0 and math.isfinite(t_end)):
        raise ValueError(f"t_end must be > 0, got {t_end!r}")
    if not (isinstance(max_iter, int | np.integer) and max_iter >= 1):
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if not (isinstance(max_halvings, int | np.integer) and max_halvings >= 0):
        raise ValueError(f"max_halvings must be an integer >= 0, got {max_halvings!r}")
    if not (0.0 < tol < 1.0):
        raise ValueError(f"tol must be in (0, 1), got {tol!r}")
    if not (0.0 < increment_tol < 1.0):
        raise ValueError(f"increment_tol must be in (0, 1), got {increment_tol!r}")
    if newton not in NEWTON_VARIANTS:
        raise ValueError(f"newton must be one of {', '.join(NEWTON_VARIANTS)}, got {newton!r}")
    if predictor not in PREDICTORS:
        raise ValueError(f"predictor must be one of {', '.join(PREDICTORS)}, got {predictor!r}")
    if any((not math.isfinite(c)) or c < 0 for c in damping):
        raise ValueError(f"damping coefficients must be >= 0, got {damping!r}")

    n_steps = int(math.ceil(t_end / dt - 1e-9))
    sample_every = max(1, int(round(sample_dt / dt)))
    snap_every = max(1, int(round(snapshot_dt / dt)))
    n_samples = n_steps // sample_every + 1
    n_snaps = n_steps // snap_every + 1

    nf = model.n_free
    q = model.reference() if q0 is None else np.array(q0, dtype=float)
    if q.shape != (model.n_dof,):
        raise ValueError(f"q0 must have {model.n_dof} entries, got shape {q.shape}")
    v = np.zeros(nf) if v0 is None else np.array(v0, dtype=float)[-nf:].copy()
    run = _Integrator(
        model, scheme, damping, int(max_iter), tol, increment_tol, int(max_halvings), newton,
        predictor,
    )  # fmt: skip
    run.set_initial_state(q, v)

    tip_out = np.zeros((n_samples, 2))
    en_out = np.zeros((n_samples, 4))
    snap_out = np.zeros((n_snaps, model.n_dof))
    damage_on = run.damage is not None
    # damage snapshots: one row per snapshot when damage is on, else a placeholder
    dsnap_out = np.zeros((n_snaps, *model.damage.shape) if damage_on else (0, 1, 1))
    out = (
        np.ascontiguousarray(model.gravity_full), model.reference(), sample_every, snap_every,
        tip_out, en_out, snap_out, dsnap_out, np.empty(nf),
    )  # fmt: skip
    iters = np.zeros(n_steps, dtype=np.int32)
    wd = 0.0
    i_sample, i_snap = run.record(0, wd, out, 0, 0)

    if dt_critical:
        log.debug("%s: dt = %.4e s = %.3g dt_cr", scheme.name, dt, dt / dt_critical)
    t_start = time.perf_counter()
    c_start = time.process_time()
    t_last = t_start
    step = 0
    chunk = min(n_steps, 200)  # short first chunk: calibrates the speed for the progress log
    while step < n_steps:
        todo = min(chunk, n_steps - step)
        done, wd, i_sample, i_snap = run.run_chunk(todo, step, dt, out, iters, wd, i_sample, i_snap)
        step += done
        if done < todo:  # step `step` failed in numba: retry it as half steps
            iters[step], w = run.recover(dt, step * dt, step)
            wd += w
            i_sample, i_snap = run.record(step + 1, wd, out, i_sample, i_snap)
            step += 1
        now = time.perf_counter()
        rate = step / max(now - t_start, 1e-9)
        chunk = max(100, int(rate * min(progress_interval_s, 2.0)))
        if progress and now - t_last >= progress_interval_s and step < n_steps:
            log.info(
                "%s: t = %.4g / %.4g s, %.3g steps/s, %.2f Newton it/step, ETA %.0f s",
                scheme.name, step * dt, t_end, rate, iters[:step].mean(),
                (n_steps - step) / rate,
            )  # fmt: skip
            t_last = now
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - c_start
    if stats is not None:
        stats.update(
            factorizations=run.factorizations,
            halvings=run.halvings,
            increment_converged=run.increment_converged,
            residual_floor=run.floor,
            newton=newton,
            predictor=predictor,
            **scheme.describe(),
        )
    return DynamicsResult.from_buffers(
        tip_out,
        en_out,
        snap_out,
        dsnap_out if damage_on else None,
        i_sample,
        i_snap,
        sample_every,
        snap_every,
        dt,
        steps=n_steps,
        wall_s=wall,
        cpu_s=cpu,
        integrator=scheme.name,
        newton_iterations=iters,
    )


def simulate(
    model: BeamModel,
    t_end: float,
    dt: float,
    integrator: str = EXPLICIT,
    **kwargs,
) -> DynamicsResult:
    """One entry point for every integrator: ``'central-difference'`` dispatches to
    :func:`~ancf_beam.solvers.explicit.simulate_explicit`, the others to :func:`simulate_implicit`.
    Keyword arguments are passed through (each solver rejects the ones it does not know)."""
    if integrator == EXPLICIT:
        return simulate_explicit(model, t_end, dt, **kwargs)
    if integrator not in IMPLICIT_INTEGRATORS:
        raise ValueError(
            f"unknown integrator {integrator!r}; choose one of {', '.join(INTEGRATORS)}"
        )
    return simulate_implicit(model, t_end, dt, integrator, **kwargs)


def default_implicit_dt(model: BeamModel, per_period: float = 100.0) -> float:
    """Default implicit step ``T1 / per_period`` with ``T1 = 2 pi / omega_1`` (reference state)."""
    from ancf_beam.solvers.modal import modal_analysis

    w1 = float(modal_analysis(model, n_modes=1, about="reference").omega[0])
    if not w1 > 0:
        raise ValueError("the first natural frequency is zero: cannot derive a default dt")
    return 2.0 * math.pi / w1 / per_period
