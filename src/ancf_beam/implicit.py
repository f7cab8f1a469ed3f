"""Implicit time integrators: BDF1 (backward Euler), Newmark and generalized-alpha.

All three integrate the reduced (clamp-eliminated) equations of motion

    M a + C v = Q_e(q) + Q_g,        C = alpha M + beta K0

(Rayleigh damping; ``K0`` is the stiffness of the straight undamaged beam, the same ``C`` as the
explicit solver builds),

and return the same :class:`~ancf_beam.explicit.DynamicsResult` as the explicit solver (with
``integrator`` and the per-step ``newton_iterations`` filled in).

Every step solves for the displacement increment ``d = q_{n+1} - q_n`` by Newton's method. The
unknown is written as ``d = d_nat + e`` (the scheme's own extrapolation + correction); rates are
affine in ``e``::

    v_{n+1} = v_pred + c_v e,    a_{n+1} = a_pred + c_a e,

so the Newton matrix is the effective stiffness ``K_eff = K_T(q) + c_v C + c_a M`` (symmetric,
assembled from the analytic tangent ``K_T`` by the numba kernel on the free DOFs, factorised by
LAPACK's banded Cholesky ``dpbtrf`` via ``scipy.linalg.lapack``, with a banded LU ``dgbtrf``
fallback when it is not positive definite) and the right-hand side is the dynamic residual
``-R``, ``R = M a + C v - Q_e(q) - Q_g``. Newton starts (``predictor='auto'``) from whichever of
``q_{n+1} = q_n`` and ``d = d_nat`` has the smaller residual: the extrapolation saves an iteration
at small ``dt``, while for a very large ``dt`` (free-fall extrapolation of metres) it can send
Newton to a spurious far-away equilibrium, which the constant start avoids.

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
stress-free reference, as in :mod:`ancf_beam.static`, and rigidly moved copies of it; the axial
stiffness ``EA ~ 8e7 N`` of the seed beam puts the floor near 1e-5 N at 20 elements, so an
absolute 1e-10 N would never be met). A step also converges when the last
correction is below ``increment_tol * ||d||`` (or at coordinate round-off) *and* the residual is
below ``max(sqrt(tol) F_ref, floor)``. A step that does not converge in ``max_iter`` iterations is
retried as two half steps (up to ``max_halvings`` times); if that also fails
:class:`NewtonConvergenceError` names the time, step, iteration count, residual and tolerance.
``newton='modified'`` keeps the factorisation of ``K_eff`` across iterations and steps and only
refactorises when the residual stops contracting fast (cheap for the weakly nonlinear seed case).

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
from scipy.linalg import lapack

from . import kernels
from .explicit import DynamicsResult, simulate_explicit
from .model import CLAMP, BeamModel
from .static import ConvergenceError

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
_FLOOR_FACTOR = 10.0
_ROUNDOFF = 64 * np.finfo(float).eps  # relative round-off of the coordinates
_SLOW_CONTRACTION = 0.25  # modified Newton: refactorise when ||R_k+1|| > this * ||R_k||
_BW = kernels.BANDWIDTH


class NewtonConvergenceError(ConvergenceError):
    """Newton's method failed in an implicit time step (attributes name where and how far)."""

    def __init__(
        self,
        message: str,
        *,
        t: float,
        step: int,
        dt: float,
        iterations: int,
        residual: float,
        tolerance: float,
    ):
        super().__init__(message)
        self.t = t
        self.step = step
        self.dt = dt
        self.iterations = iterations
        self.residual = residual
        self.tolerance = tolerance


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
# banded linear algebra on the free DOFs
# ------------------------------------------------------------------------------------------
def _lower_to_general(lb: np.ndarray) -> np.ndarray:
    """Symmetric lower band (8, n) -> general band (15, n) (``solve_banded((7, 7))`` layout)."""
    n = lb.shape[1]
    ab = np.zeros((2 * _BW + 1, n))
    ab[_BW:] = lb
    for d in range(1, _BW + 1):
        ab[_BW - d, d:] = lb[d, : n - d]  # K[j-d, j] = K[j, j-d]
    return ab


class _Factor:
    """Factorisation of a symmetric banded ``K_eff``: Cholesky, or banded LU when not SPD."""

    def __init__(self, lb: np.ndarray):
        self.kind = "cholesky"
        cb, info = lapack.dpbtrf(lb, lower=1, overwrite_ab=0)
        if info == 0:
            self.cb = np.ascontiguousarray(cb)
            return
        self.kind = "lu"
        ab = np.zeros((3 * _BW + 1, lb.shape[1]))
        ab[_BW:] = _lower_to_general(lb)
        lu, piv, info = lapack.dgbtrf(ab, _BW, _BW)
        if info != 0:
            raise np.linalg.LinAlgError(f"effective stiffness is singular (info = {info})")
        self.lu, self.piv = lu, piv

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """Solution of ``K_eff x = rhs`` (``rhs`` is overwritten for the Cholesky path)."""
        if self.kind == "cholesky":
            kernels.cho_solve_banded_inplace(self.cb, rhs)
            return rhs
        x, info = lapack.dgbtrs(self.lu, _BW, _BW, rhs, self.piv)
        if info != 0:
            raise np.linalg.LinAlgError(f"banded LU solve failed (info = {info})")
        return x


# ------------------------------------------------------------------------------------------
# allocation-free pieces of a Newton iteration (numba)
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def _iterate(q, q_base, d, e, v_pred, a_pred, c_v, c_a, v, a):
    """Set the iterate ``q = q_n + d``, ``v = v_pred + c_v e``, ``a = a_pred + c_a e``;
    returns ``||q_free||``."""
    qn = 0.0
    for i in range(d.shape[0]):
        qi = q_base[i] + d[i]
        q[CLAMP + i] = qi
        qn += qi * qi
        v[i] = v_pred[i] + c_v * e[i]
        a[i] = a_pred[i] + c_a * e[i]
    return np.sqrt(qn)


@njit(cache=True, nogil=True, error_model="numpy")
def _residual(f, mlb, clb, damped, g, v, a, ma, cv, r):
    """Newton right-hand side ``r = -(M a + C v - Q_e - Q_g)`` from the full elastic force ``f``.
    Returns (||r||, ||Q_e||, ||M a||) over the free DOFs."""
    nf = v.shape[0]
    kernels.sym_band_matvec(mlb, a, ma)
    if damped:
        kernels.sym_band_matvec(clb, v, cv)
    rn = 0.0
    fn = 0.0
    mn = 0.0
    for i in range(nf):
        fi = f[CLAMP + i]
        ri = ma[i] - fi - g[i]
        if damped:
            ri += cv[i]
        r[i] = -ri
        rn += ri * ri
        fn += fi * fi
        mn += ma[i] * ma[i]
    return np.sqrt(rn), np.sqrt(fn), np.sqrt(mn)


@njit(cache=True, nogil=True, error_model="numpy")
def _update(e, d, de):
    """``e += de``, ``d += de``; returns (||de||, ||d||), NaN when ``de`` is not finite."""
    dn = 0.0
    tn = 0.0
    for i in range(e.shape[0]):
        x = de[i]
        dn += x * x
        e[i] += x
        d[i] += x
        tn += d[i] * d[i]
    return np.sqrt(dn), np.sqrt(tn)


@njit(cache=True, nogil=True, error_model="numpy")
def _effective_lower(ab, mlb, clb, c_a, c_v, damped, out):
    """Lower band (8, n_free) of ``K_T + c_a M + c_v C`` from the full general band ``ab``."""
    nb = out.shape[0]
    n = out.shape[1]
    for k in range(nb):
        for j in range(n):
            x = ab[_BW + k, CLAMP + j] + c_a * mlb[k, j]
            if damped:
                x += c_v * clb[k, j]
            out[k, j] = x


# ------------------------------------------------------------------------------------------
# the integrator
# ------------------------------------------------------------------------------------------
@dataclass
class _State:
    q: np.ndarray  # full coordinates
    v: np.ndarray  # free velocities
    a: np.ndarray  # free accelerations (equilibrium at this time)
    at: np.ndarray  # generalized-alpha acceleration-like variable a~ (= a for Newmark)
    energy: float  # strain energy U(q)


class _Stepper:
    """Newton solver for one implicit step; holds the constant matrices and work arrays."""

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
        self.tol = tol
        self.loose = math.sqrt(tol)
        self.increment_tol = increment_tol
        self.max_halvings = max_halvings
        self.modified = newton == "modified"
        self.predictor = predictor
        self.args = model.kernel_args()
        self.nf = model.n_free
        self.mlb = model.mass_free_lower_band
        alpha, beta = damping
        self.damped = alpha != 0.0 or beta != 0.0
        self.clb = model.rayleigh_lower_band(alpha, beta) if self.damped else None
        self.g = np.ascontiguousarray(model.gravity_free)
        self.g_norm = float(np.linalg.norm(self.g))
        self.q_ref = model.reference()
        self.damage = None
        if model.case.damage.enabled:
            from .damage import DamageState

            self.damage = DamageState(model)
        self.f = np.empty(model.n_dof)
        self.floor = model.roundoff_floor(_FLOOR_FACTOR)
        self.ab = np.empty((2 * _BW + 1, model.n_dof))
        self.ma = np.empty(self.nf)
        self.cv = np.empty(self.nf)
        self.r = np.empty(self.nf)
        self.lb = np.empty((_BW + 1, self.nf))
        self.clb_arg = self.clb if self.damped else np.zeros((1, self.nf))
        self.factor: _Factor | None = None
        self.factor_h = -1.0
        self.factorizations = 0
        self.halvings = 0
        self.increment_converged = 0  # steps accepted by the increment (not residual) test
        self.last_fail = (0, math.inf, math.inf)  # iterations, residual, tolerance

    # -- pieces ------------------------------------------------------------------------
    def initial_state(self, q0: np.ndarray, v0: np.ndarray) -> _State:
        try:
            energy = kernels.elastic_force(q0, *self.args, self.f)
        except ZeroDivisionError:  # numba raises on 0/0 (|r'| = 0)
            energy = math.nan
        rhs = self.f[CLAMP:] + self.g
        if self.damped:
            kernels.sym_band_matvec(self.clb, v0, self.cv)
            rhs = rhs - self.cv
        a0 = sla.cho_solve_banded((self.model.mass_cholesky, True), rhs, check_finite=False)
        if not (np.all(np.isfinite(a0)) and math.isfinite(energy)):
            raise ValueError(
                "the initial state gives non-finite forces (degenerate q0, e.g. a zero slope "
                "vector |r'| = 0, or non-finite q0 / v0)"
            )
        return _State(q0.copy(), v0.copy(), a0, a0.copy(), float(energy))

    def _refactor(self, q: np.ndarray, h: float) -> None:
        c_a, c_v = self.scheme.coefficients(h)
        kernels.assemble_tangent_banded(q, *self.args, self.ab)
        _effective_lower(self.ab, self.mlb, self.clb_arg, c_a, c_v, self.damped, self.lb)
        self.factor = _Factor(self.lb)
        self.factor_h = h
        self.factorizations += 1

    def damping_power_work(self, d: np.ndarray, h: float) -> float:
        """``d^T C d / h``: damping work over a step at the mean velocity ``d / h``."""
        if not self.damped:
            return 0.0
        cd = np.empty(self.nf)
        kernels.sym_band_matvec(self.clb, d, cd)
        return float(d @ cd) / h

    # -- one step ----------------------------------------------------------------------
    def try_step(self, st: _State, h: float) -> tuple[_State | None, int, np.ndarray | None]:
        """One Newton-solved step of size ``h``. Returns (new state or None, iterations, d)."""
        sc = self.scheme
        c_a, c_v = sc.coefficients(h)
        if sc.is_bdf1:
            d = h * st.v + (h * h) * st.a
            v_pred = st.v + h * st.a
            a_pred = st.a
        else:
            d = h * st.v + (0.5 * h * h) * st.at
            v_pred = st.v + h * st.at
            if sc.alpha_f == 0.0:
                a_pred = st.at
            else:
                a_pred = (st.at - sc.alpha_f * st.a) / (1.0 - sc.alpha_f)
        v = np.empty(self.nf)
        a = np.empty(self.nf)
        q = st.q.copy()
        q_base = st.q[CLAMP:]
        r = self.r
        f, kargs = self.f, self.args
        rargs = (self.mlb, self.clb_arg, self.damped, self.g, v, a, self.ma, self.cv, r)

        def evaluate(d, e):
            qn = _iterate(q, q_base, d, e, v_pred, a_pred, c_v, c_a, v, a)
            try:
                u = kernels.elastic_force(q, *kargs, f)
            except ZeroDivisionError:  # a collapsed slope vector |r'| = 0 in a wild iterate
                return math.nan, math.inf, math.inf, math.inf, qn
            return (u, *_residual(f, *rargs), qn)

        # starting point: q_{n+1} = q_n ("constant", robust for any dt) or the scheme's own
        # extrapolation d_nat ("extrapolate", one Newton iteration fewer for small dt);
        # "auto" evaluates both and starts from the smaller residual.
        e = np.zeros(self.nf)
        evaluated = None
        if self.predictor != "extrapolate":
            e_c = -d  # e = d - d_nat with d = 0
            d_c = np.zeros(self.nf)
            if self.predictor == "constant":
                d, e = d_c, e_c
            else:
                res_c = evaluate(d_c, e_c)
                evaluated = evaluate(d, e)
                if not (evaluated[1] <= res_c[1]):  # also when the extrapolation is not finite
                    d, e, evaluated = d_c, e_c, None
        it = 0
        prev = dnorm = math.inf
        rnorm = tol_r = math.inf
        dtot = 0.0
        refactor = not self.modified or self.factor is None or self.factor_h != h
        while True:
            if evaluated is None:
                evaluated = evaluate(d, e)
            energy, rnorm, fnorm, manorm, qnorm = evaluated
            evaluated = None
            if not math.isfinite(rnorm):
                break
            f_ref = max(self.g_norm, fnorm, manorm)
            tol_r = max(self.tol * f_ref, self.floor)
            if rnorm <= tol_r:
                return self._accept(st, q, v, a, e, h, energy), it, d
            if it > 0 and rnorm <= max(self.loose * f_ref, self.floor):
                small = max(self.increment_tol * dtot, _ROUNDOFF * qnorm)
                if dnorm <= small:
                    self.increment_converged += 1
                    return self._accept(st, q, v, a, e, h, energy), it, d
            if it >= self.max_iter:
                break
            if self.modified and it > 0 and rnorm > _SLOW_CONTRACTION * prev:
                refactor = True
            try:
                if refactor:
                    self._refactor(q, h)
                    refactor = not self.modified
                de = self.factor.solve(r)
            except (np.linalg.LinAlgError, ZeroDivisionError):
                break
            dnorm, dtot = _update(e, d, de)
            if not math.isfinite(dnorm):
                break
            prev = rnorm
            it += 1
        self.last_fail = (it, rnorm, tol_r)
        if self.modified:
            self.factor = None  # start the retry from a fresh tangent
        return None, it, None

    def _accept(self, st, q, v, a, e, h, energy) -> _State:
        sc = self.scheme
        if sc.is_bdf1:
            at = a
        else:
            at = st.at + e / (sc.beta * h * h)
        return _State(q, v, a, at, float(energy))

    def advance(self, st: _State, h: float, t: float, step: int, depth: int = 0):
        """Step ``h`` from time ``t``, halving on failure. Returns (state, iterations, W_d)."""
        new, iters, d = self.try_step(st, h)
        if new is not None:
            work = self.damping_power_work(d, h)
            if self.damage is not None:
                # staggered, as in the explicit solver: grow damage at the converged state; the
                # strain energy it releases is booked as dissipated work
                released = self.damage.update(new.q)
                new.energy -= released
                work += released
            return new, iters, work
        if depth >= self.max_halvings:
            it, rn, tl = self.last_fail
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
        mid, i1, w1 = self.advance(st, 0.5 * h, t, step, depth + 1)
        end, i2, w2 = self.advance(mid, 0.5 * h, t + 0.5 * h, step, depth + 1)
        return end, iters + i1 + i2, w1 + w2


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
    newton: str = "full",
    predictor: str = "auto",
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
    step halvings, ``newton='full'`` (new tangent every iteration) or ``'modified'`` (reuse the
    factorisation while it converges). ``stats``, when given, receives ``factorizations`` and
    ``halvings``.

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
    stepper = _Stepper(
        model,
        scheme,
        damping,
        int(max_iter),
        tol,
        increment_tol,
        int(max_halvings),
        newton,
        predictor,
    )
    st = stepper.initial_state(np.ascontiguousarray(q), v)

    q_ref = model.reference()
    mlb = model.mass_free_lower_band
    g_full = model.gravity_full
    tip_out = np.zeros((n_samples, 2))
    en_out = np.zeros((n_samples, 4))
    snap_out = np.zeros((n_snaps, model.n_dof))
    dsnap_out = np.zeros((n_snaps, *model.damage.shape)) if stepper.damage is not None else None
    iters = np.zeros(n_steps, dtype=np.int32)
    mv = np.empty(nf)
    o_tip = model.n_dof - 4
    wd = 0.0
    i_sample = i_snap = 0

    def record(step: int) -> None:
        nonlocal i_sample, i_snap
        if step % sample_every == 0:
            kernels.sym_band_matvec(mlb, st.v, mv)
            en_out[i_sample] = (
                0.5 * float(st.v @ mv),
                st.energy,
                -float(g_full @ (st.q - q_ref)),
                wd,
            )
            tip_out[i_sample] = st.q[o_tip], st.q[o_tip + 1]
            i_sample += 1
        if step % snap_every == 0:
            snap_out[i_snap] = st.q
            if dsnap_out is not None:
                dsnap_out[i_snap] = model.damage
            i_snap += 1

    if dt_critical:
        log.debug("%s: dt = %.4e s = %.3g dt_cr", scheme.name, dt, dt / dt_critical)
    t_start = time.perf_counter()
    t_last = t_start
    record(0)
    for n in range(n_steps):
        st, iters[n], w = stepper.advance(st, dt, n * dt, n)
        wd += w
        record(n + 1)
        if progress and (n & 63) == 0:
            now = time.perf_counter()
            if now - t_last >= progress_interval_s:
                rate = (n + 1) / (now - t_start)
                log.info(
                    "%s: t = %.4g / %.4g s, %.3g steps/s, %.2f Newton it/step, ETA %.0f s",
                    scheme.name, (n + 1) * dt, t_end, rate, iters[: n + 1].mean(),
                    (n_steps - n - 1) / rate,
                )  # fmt: skip
                t_last = now
    wall = time.perf_counter() - t_start
    if stats is not None:
        stats.update(
            factorizations=stepper.factorizations,
            halvings=stepper.halvings,
            increment_converged=stepper.increment_converged,
            residual_floor=stepper.floor,
            **scheme.describe(),
        )
    return DynamicsResult(
        t=np.arange(i_sample) * sample_every * dt,
        tip_x=tip_out[:i_sample, 0].copy(),
        tip_y=tip_out[:i_sample, 1].copy(),
        kinetic=en_out[:i_sample, 0].copy(),
        strain=en_out[:i_sample, 1].copy(),
        gravity=en_out[:i_sample, 2].copy(),
        damping_work=en_out[:i_sample, 3].copy(),
        t_snap=np.arange(i_snap) * snap_every * dt,
        q_snap=snap_out[:i_snap].copy(),
        damage_snap=dsnap_out[:i_snap].copy() if dsnap_out is not None else None,
        dt=dt,
        steps=n_steps,
        wall_s=wall,
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
    :func:`~ancf_beam.explicit.simulate_explicit`, the others to :func:`simulate_implicit`.
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
    from .modal import modal_analysis

    w1 = float(modal_analysis(model, n_modes=1, about="reference").omega[0])
    if not w1 > 0:
        raise ValueError("the first natural frequency is zero: cannot derive a default dt")
    return 2.0 * math.pi / w1 / per_period
