"""Moreau-Jean time stepping of a multibody system with nonsmooth (unilateral) contacts.

The contacts with ``model="nonsmooth"`` (:class:`~ancf_beam.mbs.forces.CircleContact`,
:class:`~ancf_beam.mbs.forces.LineContact`, guide corners) are unilateral constraints ``g(q) >=
0`` (the gap ``g = -delta`` of the compliant contact's geometry, :func:`ancf_beam.mbs.core.
contact_kinematics` and :func:`ancf_beam.mbs.core.line_kinematics`) with Newton's impact law
and Coulomb friction at velocity level. One step ``t -> t + h`` (Jean 1999; Acary & Brogliato
2008, ch. 10), ``theta`` in [1/2, 1]:

1. mid-step positions ``q_m = q + h/2 v``; at ``q_m`` the gaps ``g``, the normal and tangential
   rows ``w_n = dg/dq`` and ``w_t`` (the sliding speed ``u_t = w_t v`` of the contact point
   along the tangent, a rigid marker's rotation times its radius included) of every
   contact, and the constraint Jacobian ``G`` (velocity constraints ``G v+ + Phi_t(t + h) =
   0``, drivers included). Active: the contacts with ``g(q_m) <= 64 eps L_ref`` (coordinate
   round-off, ``L_ref`` the largest initial coordinate, at least 1 mm: a resting contact whose
   gap is a rounding error above zero stays active).
2. theta-method on the velocities, the forces linearised about ``(q, v)`` (linearised-implicit,
   so that stiff ANCF beams are stable at the step sizes of the contacts)::

       A (v+ - v) = h f(q, v, t) - h^2 theta K v + G^T L + H P,
       A = M + h theta C + h^2 theta^2 K,     q+ = q + h (theta v+ + (1 - theta) v),

   ``K``, ``C`` the system's tangent stiffness and damping (beams, compliant force elements;
   :func:`ancf_beam.mbs.core.system_tangent`), ``H = [w_n, w_t]`` the active contacts' rows,
   ``P`` their impulses and ``L`` the bilateral impulses (``lam = -L / h`` in the convention of
   the other integrators). ``A`` is factorised densely (LU; the systems have a few hundred
   coordinates at most).
3. The bilateral rows are condensed exactly (saddle point by the Schur complement ``S = G A^-1
   G^T``): the contact velocities are ``u = u_free + W P`` with the Delassus matrix ``W = H^T
   (A^-1 - A^-1 G^T S^-1 G A^-1) H``. Per active contact ``i`` Newton's law ``u_n+ + e
   min(u_n-, 0) >= 0 _|_ P_n >= 0`` (``u_n-`` the normal velocity before the step: restitution
   acts on approach only) and Coulomb's law ``|P_t| <= mu P_n``, ``|P_t| < mu P_n => u_t+ =
   0``, ``|P_t| = mu P_n => u_t+ P_t <= 0``, solved by projected Gauss-Seidel
   (:func:`pgs_solve`, numba).
4. Positions: ``q+`` above, then the mass-orthogonal Gauss-Newton projection onto ``Phi(q+, t +
   h) = 0`` (:func:`ancf_beam.mbs.core.project_position`) to coordinate round-off; the drift
   it removes is reported (``stats["phi_drift_max"]``).

Contact solver: no maintained PyPI package solves the frictional contact problem (siconos'
numerics and fclib are not on PyPI; ``lemkelcp`` 0.1 of 2016 is a frictionless LCP solver;
``qpsolvers``/``osqp`` solve the frictionless problem as a QP but Coulomb's law is not a QP), so
it is projected Gauss-Seidel (:func:`pgs_solve`): sweeps over the contacts, normal then
tangential impulse, each projected on its admissible set; converged when the largest change of
an impulse in a sweep is at most ``tol`` times the largest impulse, capped at ``max_iter``
sweeps (the steps that hit the cap are counted per contact). A fixed point satisfies the
laws above exactly (:func:`pgs_residual` measures it).

Energy: the work of the contact impulses in a step, ``P . (u+ + u-)/2`` (``u-``, ``u+`` the
contact velocities before and after, the rows at ``q_m``), is booked as dissipation (<= 0 work
for ``e <= 1`` and friction); the compliant force elements' dissipation (trapezoidal rule on
:func:`ancf_beam.mbs.core.contact_dissipation`) and the beams' damage as in the other
integrators.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ancf_beam.errors import ConstraintSingularityError
from ancf_beam.linalg import BANDWIDTH, band_to_dense
from ancf_beam.mbs import core
from ancf_beam.mbs.core import FE_LINE
from ancf_beam.mbs.settings import IntegratorSettings
from ancf_beam.mbs.system import System, _lowrank_dense
from ancf_beam.mbs.timeloop import SampleBuffers, record_sample, release_damage, step_end
from ancf_beam.resources import check_mechanism
from ancf_beam.results import MechanismResult
from ancf_beam.solvers.timeloop import step_plan

__all__ = [
    "contact_geometry",
    "pgs_residual",
    "pgs_solve",
    "run_moreau_jean",
    "unilateral_gaps",
]

_PT_GROUND, _PT_RIGID = 0, 2
#: largest position-projection iterations (Gauss-Newton from an O(h^2) drift: a few suffice)
PROJECTION_ITER = 20


# ------------------------------------------------------------------------------------------
# geometry of the unilateral contacts
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def _kin(fei_r, fef_r, q, v, pp, pq):
    """``(gap, normal velocity, sliding speed)`` of one contact at ``(q, v)``: ``gap = -delta``
    and ``g' = -delta'`` of the compliant geometry; the sliding speed along its tangent."""
    if fei_r[0] == FE_LINE:
        delta, ddot, _, _, _, _, vt, _ = core.line_kinematics(fei_r, fef_r, q, v)
    else:
        delta, ddot, _, _, _, vt, _ = core.contact_kinematics(fei_r, fef_r, q, v, pp, pq)
    return -delta, -ddot, vt


@njit(cache=True, nogil=True, error_model="numpy")
def _point_dofs(kind, off, n, dofs, k):
    """Append the coordinates a point reads to ``dofs`` from ``k``; return the new count."""
    if kind == _PT_GROUND:
        return k
    if kind == _PT_RIGID:
        for i in range(3):
            dofs[k] = off + i
            k += 1
        return k
    for i in range(2 * n):
        dofs[k] = off + i
        k += 1
    return k


@njit(cache=True, nogil=True, error_model="numpy")
def contact_geometry(uei, uef, q, unit, gap, wn, wt, pp, pq, dofs):
    """Gap ``gap[c]`` (m, > 0 apart) and the dense rows ``wn[c]`` (normal velocity ``g' = wn .
    v``) and ``wt[c]`` (sliding speed ``u_t = wt . v``) of every unilateral contact at ``q``.
    The velocities are linear in ``v``, so each row entry is the kinematics at a unit velocity
    of one of the contact's coordinates (``unit``: a zero vector of length n, left zero)."""
    for c in range(uei.shape[0]):
        fr = uei[c]
        ff = uef[c]
        for j in range(wn.shape[1]):
            wn[c, j] = 0.0
            wt[c, j] = 0.0
        g, _, _ = _kin(fr, ff, q, unit, pp, pq)
        gap[c] = g
        k = _point_dofs(fr[1], fr[2], fr[3], dofs, 0)
        k = _point_dofs(fr[4], fr[5], fr[6], dofs, k)
        for a in range(k):
            j = dofs[a]
            unit[j] = 1.0
            _, un, ut = _kin(fr, ff, q, unit, pp, pq)
            unit[j] = 0.0
            wn[c, j] = un
            wt[c, j] = ut


@njit(cache=True, nogil=True, error_model="numpy")
def unilateral_gaps(uei, uef, q, unit, gap, pp, pq):
    """Gap (m) of every unilateral contact at ``q``."""
    for c in range(uei.shape[0]):
        g, _, _ = _kin(uei[c], uef[c], q, unit, pp, pq)
        gap[c] = g


# ------------------------------------------------------------------------------------------
# contact solver: projected Gauss-Seidel
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def pgs_solve(wd, b, mu, k, p, tol, max_iter):
    """Projected Gauss-Seidel for ``k`` contacts: unknowns ``p[2i]`` (normal impulse) and
    ``p[2i + 1]`` (tangential), contact velocities ``u = b + W p`` (``W = wd[:2k, :2k]``; ``b``
    the free velocities, the normal ones shifted by ``e min(u_n-, 0)``). Per contact and sweep:
    ``p_n <- max(0, p_n - u_n / W_nn)``, then ``p_t <- clip(p_t - u_t / W_tt, -mu p_n, mu p_n)``
    (``p_t = 0`` when ``mu = 0``); a contact whose ``W_nn`` is not positive takes no impulse.
    ``p`` holds the start (warm start) and the result. Stops when the largest change of an
    impulse in a sweep is ``<= tol`` times the largest impulse (both 0 included), after at most
    ``max_iter`` sweeps. Returns ``(sweeps, converged)``."""
    nk = 2 * k
    for it in range(max_iter):
        dmax = 0.0
        pmax = 0.0
        for i in range(k):
            a = 2 * i
            c = a + 1
            pn_old = p[a]
            pn = 0.0
            wnn = wd[a, a]
            if wnn > 0.0:
                r = b[a]
                for j in range(nk):
                    r += wd[a, j] * p[j]
                pn = pn_old - r / wnn
                if pn < 0.0:
                    pn = 0.0
            p[a] = pn
            pt_old = p[c]
            pt = 0.0
            wtt = wd[c, c]
            if mu[i] > 0.0 and wtt > 0.0 and pn > 0.0:
                r = b[c]
                for j in range(nk):
                    r += wd[c, j] * p[j]
                pt = pt_old - r / wtt
                lim = mu[i] * pn
                if pt > lim:
                    pt = lim
                elif pt < -lim:
                    pt = -lim
            p[c] = pt
            dmax = max(dmax, abs(pn - pn_old), abs(pt - pt_old))
            pmax = max(pmax, abs(pn), abs(pt))
        if dmax <= tol * pmax:
            return it + 1, True
    return max_iter, False


@njit(cache=True, nogil=True, error_model="numpy")
def pgs_residual(wd, b, mu, k, p):
    """Largest violation of the contact laws by ``p`` (:func:`pgs_solve`), as an impulse (N s):
    normal ``|min(p_n, u_n / W_nn)|``; tangential, sticking (``|p_t| < mu p_n``) ``|u_t| /
    W_tt``, sliding ``max(0, u_t sign(p_t)) / W_tt``; and ``max(0, |p_t| - mu p_n)``. Zero
    for an exact solution."""
    nk = 2 * k
    res = 0.0
    for i in range(k):
        a = 2 * i
        c = a + 1
        un = b[a]
        ut = b[c]
        for j in range(nk):
            un += wd[a, j] * p[j]
            ut += wd[c, j] * p[j]
        if wd[a, a] > 0.0:
            res = max(res, abs(min(p[a], un / wd[a, a])))
        if mu[i] > 0.0 and wd[c, c] > 0.0:
            lim = mu[i] * p[a]
            res = max(res, abs(p[c]) - lim)
            if abs(p[c]) < lim * (1.0 - 1e-12):
                res = max(res, abs(ut) / wd[c, c])
            elif p[c] != 0.0:
                res = max(res, max(0.0, ut * math.copysign(1.0, p[c])) / wd[c, c])
        else:
            res = max(res, abs(p[c]))
    return res


@njit(cache=True, nogil=True, error_model="numpy")
def _dot(x, y):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i] * y[i]
    return acc


@njit(cache=True, nogil=True, error_model="numpy")
def condense(amat, piv, rhs, v, grows, phit, spiv, smat, xg, vf, lb):
    """Factorise ``A`` in place (LU, :func:`ancf_beam.mbs.core.lu_factor`), the free velocity
    ``vf = v + A^-1 rhs`` and, with ``m`` bilateral rows ``G`` (``grows``), the velocities that
    satisfy ``G vf + Phi_t = 0``: ``xg = A^-1 G^T`` (rows), ``S = G A^-1 G^T`` factorised in
    ``smat``, ``lb = S^-1 (-Phi_t - G vf0)`` and ``vf += xg^T lb``. Dense loops (no BLAS: at
    these sizes its threads cost more than they save). Returns the smaller pivot ratio of
    ``A`` and ``S`` (0: singular)."""
    ratio = core.lu_factor(amat, piv)
    if ratio == 0.0:
        return 0.0
    for i in range(vf.shape[0]):
        vf[i] = rhs[i]
    core.lu_solve(amat, piv, vf)
    for i in range(vf.shape[0]):
        vf[i] += v[i]
    m = grows.shape[0]
    if m == 0:
        return ratio
    for r in range(m):
        for i in range(vf.shape[0]):
            xg[r, i] = grows[r, i]
        core.lu_solve(amat, piv, xg[r])
    for r in range(m):
        for c in range(m):
            smat[r, c] = _dot(grows[r], xg[c])
        lb[r] = -phit[r] - _dot(grows[r], vf)
    rs = core.lu_factor(smat, spiv)
    if rs == 0.0:
        return 0.0
    core.lu_solve(smat, spiv, lb)
    for r in range(m):
        for i in range(vf.shape[0]):
            vf[i] += lb[r] * xg[r, i]
    return min(ratio, rs)


@njit(cache=True, nogil=True, error_model="numpy")
def delassus(amat, piv, grows, smat, spiv, xg, hrows, k2, xh, tg, wk):
    """For the ``k2`` contact rows ``H`` (``hrows[:k2]``) with the factors of :func:`condense`:
    ``xh = (A^-1 - A^-1 G^T S^-1 G A^-1) H`` (rows), ``tg[c] = S^-1 G A^-1 H_c`` (the
    bilateral impulses a unit contact impulse ``c`` moves) and the Delassus matrix ``wk =
    H^T xh`` (``k2 x k2``)."""
    m = grows.shape[0]
    n = hrows.shape[1]
    for c in range(k2):
        for i in range(n):
            xh[c, i] = hrows[c, i]
        core.lu_solve(amat, piv, xh[c])
        if m:
            for r in range(m):
                tg[c, r] = _dot(grows[r], xh[c])
            core.lu_solve(smat, spiv, tg[c])
            for r in range(m):
                for i in range(n):
                    xh[c, i] -= tg[c, r] * xg[r, i]
    for c in range(k2):
        for d in range(k2):
            wk[c, d] = _dot(hrows[c], xh[d])


@njit(cache=True, nogil=True, error_model="numpy")
def _rows_dense(jc, jv, jn, out):
    """Dense constraint Jacobian from the row storage (entries add up)."""
    for r in range(jn.shape[0]):
        for j in range(out.shape[1]):
            out[r, j] = 0.0
        for k in range(jn[r]):
            out[r, jc[r, k]] += jv[r, k]


# ------------------------------------------------------------------------------------------
# the time loop
# ------------------------------------------------------------------------------------------
class _Tangent:
    """Dense tangent ``K + c_v C`` of the system (beams, force elements) at a state."""

    def __init__(self, system: System):
        self.system = system
        self.ab = np.zeros((2 * BANDWIDTH + 1, system.n))
        self.L = system.lowrank_work() if system.n_low_rank else None
        self.lam = np.zeros(system.m)
        # nothing but constant forces and rigid bodies: the tangent is zero (skipped)
        self.zero = not system.beams and not system.forces

    def __call__(self, q, v, t, c_v, W):
        s = self.system
        if self.zero:
            return None
        core.system_tangent(
            q, v, t, self.lam, s.data, s.fst, c_v, self.ab, W[13], W[14], W[15], W[16], self.L
        )
        out = band_to_dense(self.ab)
        if self.L is not None:
            out += _lowrank_dense(self.L, s.n)
        return out


def run_moreau_jean(
    system: System,
    settings: IntegratorSettings,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    lam: np.ndarray,
) -> MechanismResult:
    """Integrate from ``t = 0`` (consistent ``q``, ``v``; ``a``, ``lam`` the index-1 start) to
    ``settings.t_end`` by Moreau-Jean steps of ``settings.dt`` (the last one shortened), sampled
    every ``sample_dt`` (see the module docstring). Raises
    :class:`~ancf_beam.errors.ConstraintSingularityError` when the bilateral constraints become
    singular or the position projection fails."""
    h0 = float(settings.dt)
    theta = float(settings.theta)
    tol = float(settings.tol)
    max_iter = int(settings.max_iter)
    plan = step_plan(settings.t_end, h0, settings.sample_dt, settings.sample_dt)
    check_mechanism(system, settings, plan.n_samples, plan.n_steps)
    n, m = system.n, system.m
    nc = len(system.unilateral)
    names = [c.name for c in system.unilateral]
    data = system.data
    W = system.work()
    fst = system.fst
    pp, pq, cols, vals = W[13], W[14], W[15], W[16]
    mass = system.mass_dense()
    tangent = _Tangent(system)
    uei, uef, u_e, u_mu = system.uei, system.uef, system.u_e, system.u_mu
    unit = np.zeros(n)
    dofs = np.zeros(32, dtype=np.int64)
    gap = np.zeros(nc)
    gap1 = np.zeros(nc)
    wn = np.zeros((nc, n))
    wt = np.zeros((nc, n))
    gmat = np.zeros((m, n))
    phit = np.zeros(m)
    piv = np.zeros(n, dtype=np.int64)
    spiv = np.zeros(m, dtype=np.int64)
    smat = np.zeros((m, m))
    xg = np.zeros((m, n))
    vf = np.zeros(n)
    lb = np.zeros(m)
    hrows = np.zeros((2 * nc, n))
    xh = np.zeros((2 * nc, n))
    tg = np.zeros((2 * nc, m))
    mu_act = np.zeros(nc)
    q_ref = system.q0.copy()
    l_ref = max(1e-3, float(np.max(np.abs(q))))
    pos_tol = 64.0 * np.finfo(float).eps * l_ref  # coordinate round-off (as the index-3 runs)
    gap_tol = pos_tol  # a contact within round-off of touching is active (resting contacts)
    has_compliant = bool(system.contact_indices)

    buf = SampleBuffers(plan.n_samples, n, m, fst.size)
    imp_n = np.zeros((plan.n_samples, nc))
    imp_t = np.zeros((plan.n_samples, nc))
    iters = np.zeros(plan.n_steps, dtype=np.int64)
    # per contact: impacts, largest impulse, first contact time, largest penetration, steps
    # with an impulse, steps at the solver's cap; the impulse of the previous step
    n_impacts = np.zeros(nc, dtype=np.int64)
    max_imp = np.zeros(nc)
    first_t = [None] * nc
    max_pen = np.zeros(nc)
    n_active = np.zeros(nc, dtype=np.int64)
    cap_hits = np.zeros(nc, dtype=np.int64)
    pn_prev = np.zeros(nc)
    pn_step = np.zeros(nc)
    pt_step = np.zeros(nc)

    system.update_drivers(0.0, W)
    f = W[0]
    u, p = core.system_forces(q, v, 0.0, data, fst, f, pp, pq, cols, vals)
    core.eval_constraints(
        q, v, 0.0, system.ei, system.ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
    )
    record_sample(0, q, v, a, lam, data, W, u, p, 0.0, 0.0, q_ref, *buf.args())
    if nc:
        unilateral_gaps(uei, uef, q, unit, gap1, pp, pq)
        np.maximum(max_pen, -gap1, out=max_pen)
    diss = 0.0
    work = 0.0
    p_diss0 = core.contact_dissipation(q, v, data, fst, pp, pq) if has_compliant else 0.0
    drift_max = 0.0
    cap_total = 0
    k_sample = 1
    t_start = time.perf_counter()
    c_start = time.process_time()
    t = 0.0
    for step in range(plan.n_steps):
        t1 = step_end(step, h0, plan, settings.t_end)
        h = t1 - t
        # forces and the iteration matrix at (q, v, t)
        system.update_drivers(t, W)
        core.system_forces(q, v, t, data, fst, f, pp, pq, cols, vals)
        kmat = tangent(q, v, t, 0.0, W)
        rhs = h * f
        amat = mass.copy()
        if kmat is not None:
            kc = tangent(q, v, t, 1.0, W)  # K + C
            cmat = kc - kmat
            rhs -= (h * h * theta) * (kmat @ v)
            amat += (h * theta) * cmat + (h * h * theta * theta) * kmat
        # mid-step geometry: constraints (velocity level at t + h) and contacts
        qm = q + 0.5 * h * v
        if m:
            system.update_drivers(t1, W)
            core.eval_constraints(
                qm, v, t1, system.ei, system.ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
            )
            _rows_dense(W[3], W[4], W[5], gmat)
            phit[:] = W[7]
        ratio = condense(amat, piv, rhs, v, gmat, phit, spiv, smat, xg, vf, lb)
        if not ratio > 1e-14:
            raise ConstraintSingularityError(
                f"system '{system.name}': iteration matrix or constraint Jacobian singular at "
                f"t = {t:.6g} s (pivot ratio {ratio:.3e})"
            )
        pn_step[:] = 0.0
        pt_step[:] = 0.0
        d_imp = 0.0
        v1 = vf.copy()
        lb1 = lb.copy()
        if nc:
            contact_geometry(uei, uef, qm, unit, gap, wn, wt, pp, pq, dofs)
            act = np.flatnonzero(gap <= gap_tol)
            k = act.size
            if k:
                k2 = 2 * k
                hrows[0:k2:2] = wn[act]
                hrows[1:k2:2] = wt[act]
                wk = np.zeros((k2, k2))
                delassus(amat, piv, gmat, smat, spiv, xg, hrows, k2, xh, tg, wk)
                hk = hrows[:k2]
                um = hk @ v
                b = hk @ vf
                b[0::2] += u_e[act] * np.minimum(um[0::2], 0.0)
                mu_act[:k] = u_mu[act]
                pk = np.zeros(k2)
                its, ok = pgs_solve(wk, b, mu_act, k, pk, tol, max_iter)
                iters[step] = its
                if not ok:
                    cap_hits[act] += 1
                    cap_total += 1
                v1 += pk @ xh[:k2]
                if m:
                    lb1 -= pk @ tg[:k2]
                up = hk @ v1
                d_imp = -0.5 * float(pk @ (up + um))
                pn_step[act] = pk[0::2]
                pt_step[act] = pk[1::2]
        q1 = q + h * (theta * v1 + (1.0 - theta) * v)
        if m:
            core.eval_constraints(
                q1, v1, t1, system.ei, system.ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
            )
            drift_max = max(drift_max, float(np.max(np.abs(W[1]))))
            res = core.project_position(q1, t1, data, W, pos_tol, PROJECTION_ITER)
            if not res <= pos_tol:
                raise ConstraintSingularityError(
                    f"system '{system.name}': position projection failed at t = {t1:.6g} s "
                    f"(max|Phi| = {res:.3e} > {pos_tol:.3e})"
                )
            lam1 = -lb1 / h
            work += float(lam1 @ phit) * h
        else:
            lam1 = lam
        a1 = (v1 - v) / h
        # bookkeeping of the contacts
        if nc:
            for c in np.flatnonzero(pn_step > 0.0):
                if first_t[c] is None:
                    first_t[c] = t + 0.5 * h
                n_active[c] += 1
                if pn_prev[c] == 0.0 and wn[c] @ v < 0.0:
                    n_impacts[c] += 1
            np.maximum(max_imp, pn_step, out=max_imp)
            pn_prev[:] = pn_step
            unilateral_gaps(uei, uef, q1, unit, gap1, pp, pq)
            np.maximum(max_pen, -gap1, out=max_pen)
        diss += d_imp
        if has_compliant:
            core.update_force_state(q1, v1, t1, data, fst)
            p_diss1 = core.contact_dissipation(q1, v1, data, fst, pp, pq)
            diss += 0.5 * h * (p_diss0 + p_diss1)
            p_diss0 = p_diss1
        if system.damage_states:
            diss += release_damage(q1, data)
        q, v, t = q1, v1, t1
        lam = lam1
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise ConstraintSingularityError(
                f"system '{system.name}': non-finite state at t = {t:.6g} s (Moreau-Jean)"
            )
        last = step == plan.n_steps - 1
        if (step + 1) % plan.sample_every == 0 or last:
            system.update_drivers(t, W)
            u, p = core.system_forces(q, v, t, data, fst, f, pp, pq, cols, vals)
            core.eval_constraints(
                q, v, t, system.ei, system.ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
            )
            record_sample(k_sample, q, v, a1, lam, data, W, u, p, diss, work, q_ref, *buf.args())
            imp_n[k_sample] = pn_step
            imp_t[k_sample] = pt_step
            buf_t = k_sample
            k_sample += 1
            if last:
                break
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - c_start
    k_tot = k_sample
    times = np.arange(k_tot) * plan.sample_every * h0
    times[buf_t] = settings.t_end
    summary = {
        name: {
            "impulses": int(n_impacts[c]),
            "max_impulse": float(max_imp[c]),
            "first_contact_time": first_t[c],
            "max_penetration": float(max(max_pen[c], 0.0)),
            "contact_fraction": float(n_active[c]) / plan.n_steps,
            "solver_max_iter_hit": int(cap_hits[c]),
        }
        for c, name in enumerate(names)
    }
    stats = {
        "dt": h0,
        "sample_every": plan.sample_every,
        "theta": theta,
        "phi_drift_max": drift_max,
        "position_tol": pos_tol,
        "solver_max_iter_hit": cap_total,
        "cost_per_step_s": cpu / plan.n_steps,
    }
    res = buf.result(
        times,
        k_tot,
        integrator="moreau-jean",
        dt=h0,
        steps=plan.n_steps,
        wall_s=wall,
        cpu_s=cpu,
        stats=stats,
    )
    res.impulse_n = imp_n[:k_tot].copy()
    res.impulse_t = imp_t[:k_tot].copy()
    res.contact_summary = summary
    res.lcp_iterations = iters
    return res
