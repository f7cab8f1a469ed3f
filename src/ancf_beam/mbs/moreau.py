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
   0``, drivers included). Active: the contacts with ``g(q_m) <= 64 eps L_ref`` or ``g(q) <=
   64 eps L_ref`` (coordinate round-off, ``L_ref`` the largest initial coordinate, at least 1
   mm: a resting contact whose gap is a rounding error above zero stays active, and a contact
   that touches at the start of the step takes part even while it separates, so that a bounce
   slower than ``g h`` ends in rest).
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
   acts on approach only, and only when the approach is faster than the change of the normal
   velocity the smooth forces make in the step; a slower one is a resting contact, e = 0: this
   ends an accumulation of impacts, e.g. a bouncing ball, at the step's resolution) and
   Coulomb's law ``|P_t| <= mu P_n``, ``|P_t| < mu P_n => u_t+ =
   0``, ``|P_t| = mu P_n => u_t+ P_t <= 0``, solved by projected Gauss-Seidel
   (:func:`pgs_solve`, numba).
4. Positions: ``q+`` above, then the mass-orthogonal Gauss-Newton projection onto ``Phi(q+, t +
   h) = 0`` (:func:`ancf_beam.mbs.core.project_position`) to coordinate round-off (64 eps
   times the largest coordinate, initial or current: a driven angle grows; at least 1 mm);
   the drift it removes is reported (``stats["phi_drift_max"]``). With
   ``settings.contact_projection`` (default) the positions are then projected out of
   penetration (:func:`project_contacts`: ``Phi = 0`` and ``g = 0`` for the penetrating
   contacts, mass-orthogonal; the velocities are left alone, as Acary's direct projection
   variant of Moreau-Jean). Without it a contact sliding on a curved surface (a journal in its
   bearing) drifts into penetration at O(h) (the chord of a step leaves the circle); with it
   the gaps stay >= 0 to round-off, at the price of an O(h) energy error (the projection moves
   the bodies against gravity and the elastic forces; not booked).

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
from ancf_beam.kernel_cache import run_clock
from ancf_beam.linalg import BANDWIDTH, band_to_dense_into
from ancf_beam.mbs import core
from ancf_beam.mbs.core import FE_LINE
from ancf_beam.mbs.settings import IntegratorSettings
from ancf_beam.mbs.system import System
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
@njit(cache=True, nogil=True, error_model="numpy")
def mj_step(q, v, t, t1, theta, S, W, mass, kmat, cmat, use_k, gap_tol, tol, max_iter, U, X, gap_k):
    """One Moreau-Jean step from ``(q, v, t)`` to ``t1`` (the module docstring, items 1-3 and
    the theta update of the positions, before the projection): ``X = (amat, piv, rhs, qm,
    gmat, phit, spiv, smat, xg, vf, lb, unit, dofs, gap, wn, wt, act, hrows, xh, tg, wk, bvec,
    um, pk, mu_act, v1, q1, pn_step, pt_step)`` work arrays and outputs (``v1``, ``q1``,
    ``lb`` the bilateral impulses, ``pn_step``, ``pt_step`` the contact impulses, ``act[:k]``
    the active contacts), ``U = (uei, uef, u_e, u_mu)`` the unilateral contacts, ``kmat``,
    ``cmat`` the dense tangent stiffness and damping when ``use_k``, ``gap_k`` the gaps at
    ``q``. Returns ``(pivot ratio,
    solver sweeps, converged, k, work of the impulses)``; a ratio <= 1e-14 means a singular
    iteration matrix or constraint Jacobian (nothing else is computed)."""
    amat, piv, rhs, qm, gmat, phit, spiv, smat, xg, vf, lb = X[:11]
    unit, dofs, gap, wn, wt, act, hrows, xh, tg, wk, bvec, um, pk, mu_act = X[11:25]
    v1, q1, pn_step, pt_step = X[25:]
    uei, uef, u_e, u_mu = U
    f = W[0]
    pp = W[13]
    pq = W[14]
    n = q.shape[0]
    h = t1 - t
    core.system_forces(q, v, t, S, W[20], f, pp, pq, W[15], W[16])
    for i in range(n):
        rhs[i] = h * f[i]
        qm[i] = q[i] + 0.5 * h * v[i]
        for j in range(n):
            amat[i, j] = mass[i, j]
    if use_k:
        c2 = h * h * theta
        for i in range(n):
            acc = 0.0
            for j in range(n):
                acc += kmat[i, j] * v[j]
                amat[i, j] += h * theta * cmat[i, j] + c2 * theta * kmat[i, j]
            rhs[i] -= c2 * acc
    ei = S[5]
    m = ei.shape[0]
    if m > 0:
        core.eval_constraints(
            qm, v, t1, ei, S[6], W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
        )
        _rows_dense(W[3], W[4], W[5], gmat)
        for r in range(m):
            phit[r] = W[7][r]
    ratio = condense(amat, piv, rhs, v, gmat, phit, spiv, smat, xg, vf, lb)
    if not ratio > 1e-14:
        return ratio, 0, True, 0, 0.0
    for i in range(n):
        v1[i] = vf[i]
    nc = uei.shape[0]
    for c in range(nc):
        pn_step[c] = 0.0
        pt_step[c] = 0.0
    its = 0
    ok = True
    k = 0
    d_imp = 0.0
    if nc > 0:
        contact_geometry(uei, uef, qm, unit, gap, wn, wt, pp, pq, dofs)
        for c in range(nc):
            # touching at the start (a resting or just-projected contact) or by mid-step
            if gap[c] <= gap_tol or gap_k[c] <= gap_tol:
                act[k] = c
                k += 1
        if k > 0:
            k2 = 2 * k
            for a in range(k):
                c = act[a]
                for i in range(n):
                    hrows[2 * a, i] = wn[c, i]
                    hrows[2 * a + 1, i] = wt[c, i]
                mu_act[a] = u_mu[c]
            delassus(amat, piv, gmat, smat, spiv, xg, hrows, k2, xh, tg, wk)
            for r in range(k2):
                um[r] = _dot(hrows[r], v)
                bvec[r] = _dot(hrows[r], vf)
                pk[r] = 0.0
            for a in range(k):
                # restitution on approach faster than the smooth forces change the normal
                # velocity in the step; slower: a resting contact (e = 0), which ends an
                # accumulation of impacts at the step's resolution
                un = um[2 * a]
                if un < 0.0 and -un > abs(bvec[2 * a] - un):
                    bvec[2 * a] += u_e[act[a]] * un
            its, ok = pgs_solve(wk, bvec, mu_act, k, pk, tol, max_iter)
            for r in range(k2):
                for i in range(n):
                    v1[i] += pk[r] * xh[r, i]
                for s in range(m):
                    lb[s] -= pk[r] * tg[r, s]
            for r in range(k2):
                d_imp -= 0.5 * pk[r] * (_dot(hrows[r], v1) + um[r])
            for a in range(k):
                pn_step[act[a]] = pk[2 * a]
                pt_step[act[a]] = pk[2 * a + 1]
    for i in range(n):
        q1[i] = q[i] + h * (theta * v1[i] + (1.0 - theta) * v[i])
    return ratio, its, ok, k, d_imp


@njit(cache=True, nogil=True, error_model="numpy")
def _book(t, h, v, wn, pn_step, pn_prev, act, k, ok, rec, first_t):
    """Per-contact record of one step: ``rec[c] = (impacts, largest impulse, steps with an
    impulse, steps at the solver's cap)``, ``first_t[c]`` (NaN until the first impulse: the
    step's mid-time). An impact: a positive impulse after a step without, approaching."""
    for c in range(pn_step.shape[0]):
        p = pn_step[c]
        if p > 0.0:
            if first_t[c] != first_t[c]:
                first_t[c] = t + 0.5 * h
            rec[c, 2] += 1.0
            if pn_prev[c] == 0.0 and _dot(wn[c], v) < 0.0:
                rec[c, 0] += 1.0
            rec[c, 1] = max(rec[c, 1], p)
        pn_prev[c] = p
    if not ok:
        for a in range(k):
            rec[act[a], 3] += 1.0


@njit(cache=True, nogil=True, error_model="numpy")
def project_contacts(q1, t1, S, W, U, mlu, mpiv, unit, gap, wn, wt, pp, pq, dofs, ptol, iters,
                     sel, rows, y, smat, spiv, r, qs):  # fmt: skip
    """Direct projection of the positions out of penetration (after the bilateral projection):
    mass-orthogonal Gauss-Newton onto ``Phi(q, t1) = 0`` and ``g_c(q) = 0`` for every contact
    that penetrates (``g < -ptol``; once selected a contact stays in the set), ``mlu`` the LU
    factors of the mass. Velocities are left alone. Returns the largest residual; when the
    iteration does not reach ``ptol`` or the rows are singular, ``q1`` is restored and the
    penetration is left (returns -1)."""
    ei = S[5]
    ef = S[6]
    m = ei.shape[0]
    n = q1.shape[0]
    uei = U[0]
    uef = U[1]
    nc = uei.shape[0]
    contact_geometry(uei, uef, q1, unit, gap, wn, wt, pp, pq, dofs)
    any_pen = False
    for c in range(nc):
        sel[c] = gap[c] < -ptol
        any_pen = any_pen or sel[c]
    if not any_pen:
        return 0.0
    for i in range(n):
        qs[i] = q1[i]
    for it in range(iters + 1):
        if m > 0:
            core.eval_constraints(
                q1, q1, t1, ei, ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
            )
            _rows_dense(W[3], W[4], W[5], rows)
        if it > 0:
            contact_geometry(uei, uef, q1, unit, gap, wn, wt, pp, pq, dofs)
        k = m
        rmax = 0.0
        for j in range(m):
            r[j] = W[1][j]
            rmax = max(rmax, abs(r[j]))
        for c in range(nc):
            sel[c] = sel[c] or gap[c] < -ptol
            if sel[c]:
                for i in range(n):
                    rows[k, i] = wn[c, i]
                r[k] = gap[c]
                rmax = max(rmax, abs(r[k]))
                k += 1
        if rmax <= ptol:
            return rmax
        if it == iters:
            break
        for a in range(k):
            for i in range(n):
                y[a, i] = rows[a, i]
            core.lu_solve(mlu, mpiv, y[a])
        for a in range(k):
            for b in range(k):
                smat[a, b] = _dot(rows[a], y[b])
        if core.lu_factor(smat[:k, :k], spiv[:k]) <= 1e-14:
            break
        core.lu_solve(smat[:k, :k], spiv[:k], r[:k])
        for a in range(k):
            for i in range(n):
                q1[i] -= r[a] * y[a, i]
    for i in range(n):
        q1[i] = qs[i]
    return -1.0


#: status codes of :func:`mj_run`
MJ_OK, MJ_NONFINITE, MJ_SINGULAR, MJ_PROJECTION = 0, 1, 2, 3


@njit(cache=True, nogil=True, error_model="numpy")
def _tangent_dense(q, v, t, S, fst, c_v, ab, pp, pq, cols, vals, L, lam0, out):
    """``out = K + c_v C`` dense (the band of :func:`ancf_beam.mbs.core.system_tangent` and the
    low-rank pair blocks ``U B U^T`` of the force elements outside it)."""
    core.system_tangent(q, v, t, lam0, S, fst, c_v, ab, pp, pq, cols, vals, L)
    n = out.shape[0]
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0
    band_to_dense_into(ab, out)
    if L is not None:
        uc, uv, un, ub = L[1], L[2], L[3], L[4]
        for sl in range(ub.shape[0]):
            for c1 in range(2):
                for c2 in range(2):
                    b = ub[sl, 0] if c1 + c2 == 0 else (ub[sl, 2] if c1 + c2 == 2 else ub[sl, 1])
                    for a in range(un[sl, c1]):
                        for d in range(un[sl, c2]):
                            out[uc[sl, c1, a], uc[sl, c2, d]] += uv[sl, c1, a] * b * uv[sl, c2, d]


@njit(cache=True, nogil=True, error_model="numpy")
def mj_run(
    step0, step1, t, h0, n_steps, t_end, sample_every, k_sample, theta, S, W, mass, use_k,
    kmat, cmat, ab, L, lam0, gap_tol, tol, max_iter, pos_tol, proj_iter, U, X, P, q, v, lam,
    q_ref, has_compliant, has_damage, acc, rec, first_t, max_pen, pn_prev, gap1, iters,
    imp_n, imp_t, bq, bv, ba, bl, be, bmv, bs,
):  # fmt: skip
    """Steps ``step0 .. step1 - 1`` of a run (:func:`mj_step`, the position projection, the
    contact record, compliant contacts' state and dissipation, damage), recording every
    ``sample_every``-th step and the last of the run into the sample buffers. ``acc = [diss,
    drive work, largest |Phi| before projection, steps at the solver's cap]`` carries the
    sums. Returns ``(status, steps done, next sample index, time)``; status
    ``MJ_SINGULAR`` / ``MJ_PROJECTION`` / ``MJ_NONFINITE`` stop the run at that step."""
    fst = W[20]
    pp = W[13]
    pq = W[14]
    ei = S[5]
    ef = S[6]
    m = ei.shape[0]
    n = q.shape[0]
    uei = U[0]
    uef = U[1]
    nc = uei.shape[0]
    lb = X[10]
    phit = X[5]
    unit = X[11]
    wn = X[14]
    act = X[16]
    v1 = X[25]
    q1 = X[26]
    pn_step = X[27]
    pt_step = X[28]
    p_diss0 = 0.0
    if has_compliant:
        p_diss0 = core.contact_dissipation(q, v, S, fst, pp, pq)
    for step in range(step0, step1):
        t1 = t_end if step == n_steps - 1 else (step + 1) * h0
        h = t1 - t
        if use_k:
            _tangent_dense(q, v, t, S, fst, 0.0, ab, pp, pq, W[15], W[16], L, lam0, kmat)
            _tangent_dense(q, v, t, S, fst, 1.0, ab, pp, pq, W[15], W[16], L, lam0, cmat)
            for i in range(n):
                for j in range(n):
                    cmat[i, j] -= kmat[i, j]
        ratio, its, ok, k, d_imp = mj_step(
            q, v, t, t1, theta, S, W, mass, kmat, cmat, use_k, gap_tol, tol, max_iter, U, X, gap1
        )
        if not ratio > 1e-14:
            return MJ_SINGULAR, step, k_sample, t
        iters[step] = its
        if not ok:
            acc[3] += 1.0
        if m > 0:
            core.eval_constraints(
                q1, v1, t1, ei, ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
            )
            for r in range(m):
                acc[2] = max(acc[2], abs(W[1][r]))
            # coordinate round-off of the current state (a driven angle grows with time)
            qmax = 0.0
            for i in range(n):
                qmax = max(qmax, abs(q1[i]))
            ptol = max(pos_tol, 64.0 * 2.220446049250313e-16 * qmax)
            res = core.project_position(q1, t1, S, W, ptol, proj_iter)
            if not res <= ptol:
                return MJ_PROJECTION, step, k_sample, t
            pw = 0.0
            for r in range(m):
                lam[r] = -lb[r] / h
                pw += lam[r] * phit[r]
            acc[1] += pw * h
        if nc > 0:
            _book(t, h, v, wn, pn_step, pn_prev, act, k, ok, rec, first_t)
            if P is not None:
                qmax = 0.0
                for i in range(n):
                    qmax = max(qmax, abs(q1[i]))
                ptol = max(pos_tol, 64.0 * 2.220446049250313e-16 * qmax)
                mlu, mpiv, sel, prow, py, psm, pspiv, pr, qs = P
                if project_contacts(q1, t1, S, W, U, mlu, mpiv, unit, X[13], wn, X[15], pp, pq,
                                    X[12], ptol, proj_iter, sel, prow, py, psm, pspiv, pr,
                                    qs) < 0.0:  # fmt: skip
                    acc[4] += 1.0
            unilateral_gaps(uei, uef, q1, unit, gap1, pp, pq)
            for c in range(nc):
                max_pen[c] = max(max_pen[c], -gap1[c])
        acc[0] += d_imp
        if has_compliant:
            core.update_force_state(q1, v1, t1, S, fst)
            p_diss1 = core.contact_dissipation(q1, v1, S, fst, pp, pq)
            acc[0] += 0.5 * h * (p_diss0 + p_diss1)
            p_diss0 = p_diss1
        if has_damage:
            acc[0] += release_damage(q1, S)
        sample = (step + 1) % sample_every == 0 or step == n_steps - 1
        finite = True
        for i in range(n):
            if sample:
                X[2][i] = (v1[i] - v[i]) / h  # the step's mean acceleration (rhs: free now)
            q[i] = q1[i]
            v[i] = v1[i]
            if not (math.isfinite(q[i]) and math.isfinite(v[i])):
                finite = False
        t = t1
        if not finite:
            return MJ_NONFINITE, step, k_sample, t
        if sample:
            f = W[0]
            u, p = core.system_forces(q, v, t, S, fst, f, pp, pq, W[15], W[16])
            core.eval_constraints(
                q, v, t, ei, ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
            )
            record_sample(
                k_sample, q, v, X[2], lam, S, W, u, p, acc[0], acc[1], q_ref, bq, bv, ba, bl,
                be, bmv, bs,
            )  # fmt: skip
            for c in range(nc):
                imp_n[k_sample, c] = pn_step[c]
                imp_t[k_sample, c] = pt_step[c]
            k_sample += 1
    return MJ_OK, step1, k_sample, t


class _Tangent:
    """Work arrays of the dense tangent ``K + c_v C`` (:func:`_tangent_dense`); ``zero``: the
    system has no beams and no force elements (rigid bodies, gravity): the tangent vanishes."""

    def __init__(self, system: System):
        self.ab = np.zeros((2 * BANDWIDTH + 1, system.n))
        self.L = system.lowrank_work() if system.n_low_rank else None
        self.zero = not system.beams and not system.forces


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
    every ``sample_dt`` (see the module docstring; one step: :func:`mj_step`, then the position
    projection). Raises :class:`~ancf_beam.errors.ConstraintSingularityError` when the
    iteration matrix or the bilateral constraints become singular or the position projection
    fails."""
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
    pp, pq = W[13], W[14]
    mass = system.mass_dense()
    tangent = _Tangent(system)
    U = (system.uei, system.uef, system.u_e, system.u_mu)
    X = (
        np.zeros((n, n)),  # amat
        np.zeros(n, dtype=np.int64),  # piv
        np.zeros(n),  # rhs
        np.zeros(n),  # qm
        np.zeros((m, n)),  # gmat
        np.zeros(m),  # phit
        np.zeros(m, dtype=np.int64),  # spiv
        np.zeros((m, m)),  # smat
        np.zeros((m, n)),  # xg
        np.zeros(n),  # vf
        np.zeros(m),  # lb
        np.zeros(n),  # unit
        np.zeros(32, dtype=np.int64),  # dofs
        np.zeros(nc),  # gap
        np.zeros((nc, n)),  # wn
        np.zeros((nc, n)),  # wt
        np.zeros(nc, dtype=np.int64),  # act
        np.zeros((2 * nc, n)),  # hrows
        np.zeros((2 * nc, n)),  # xh
        np.zeros((2 * nc, m)),  # tg
        np.zeros((2 * nc, 2 * nc)),  # wk
        np.zeros(2 * nc),  # bvec
        np.zeros(2 * nc),  # um
        np.zeros(2 * nc),  # pk
        np.zeros(nc),  # mu_act
        np.zeros(n),  # v1
        np.zeros(n),  # q1
        np.zeros(nc),  # pn_step
        np.zeros(nc),  # pt_step
    )
    unit = X[11]
    gap1 = np.zeros(nc)
    q_ref = system.q0.copy()
    l_ref = max(1e-3, float(np.max(np.abs(q))))
    pos_tol = 64.0 * float(np.finfo(float).eps) * l_ref  # coordinate round-off (as index-3)
    gap_tol = pos_tol  # a contact within round-off of touching is active (resting contacts)
    has_compliant = bool(system.contact_indices)

    buf = SampleBuffers(plan.n_samples, n, m, fst.size)
    imp_n = np.zeros((plan.n_samples, nc))
    imp_t = np.zeros((plan.n_samples, nc))
    iters = np.zeros(plan.n_steps, dtype=np.int64)
    rec = np.zeros((nc, 4))  # impacts, largest impulse, steps with an impulse, steps at the cap
    first_t = np.full(nc, np.nan)
    max_pen = np.zeros(nc)
    pn_prev = np.zeros(nc)

    q = q.copy()
    v = v.copy()
    system.update_drivers(0.0, W)
    u, p = core.system_forces(q, v, 0.0, data, fst, W[0], pp, pq, W[15], W[16])
    core.eval_constraints(
        q, v, 0.0, system.ei, system.ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
    )
    record_sample(0, q, v, a, lam, data, W, u, p, 0.0, 0.0, q_ref, *buf.args())
    if nc:
        unilateral_gaps(system.uei, system.uef, q, unit, gap1, pp, pq)
        np.maximum(max_pen, -gap1, out=max_pen)
    acc = np.zeros(5)  # dissipated work, drive work, largest |Phi| before projection, caps,
    # steps whose contact projection failed (penetration left)
    P = None
    if nc and settings.contact_projection:
        mlu = mass.copy()
        mpiv = np.zeros(n, dtype=np.int64)
        core.lu_factor(mlu, mpiv)
        P = (
            mlu,
            mpiv,
            np.zeros(nc, dtype=np.bool_),
            np.zeros((m + nc, n)),
            np.zeros((m + nc, n)),
            np.zeros((m + nc, m + nc)),
            np.zeros(m + nc, dtype=np.int64),
            np.zeros(m + nc),
            np.zeros(n),
        )
    lam1 = lam.copy()
    lam0 = np.zeros(m)  # the constraint Hessian is left out of the iteration matrix
    use_k = not tangent.zero
    kmat = np.zeros((n, n))
    cmat = np.zeros((n, n))
    ab = tangent.ab
    lr = tangent.L
    # user-function drivers are evaluated in Python: one step per call then
    chunk = 1 if system.has_function_drivers else plan.n_steps
    k_sample = 1
    step = 0
    t = 0.0
    t_start = run_clock()  # the run time: without compiling (kernel_cache)
    c_start = time.process_time()
    while step < plan.n_steps:
        stop = min(plan.n_steps, step + chunk)
        if chunk == 1:
            system.update_drivers(step_end(step, h0, plan, settings.t_end), W)
        status, step, k_sample, t = mj_run(
            step, stop, t, h0, plan.n_steps, settings.t_end, plan.sample_every, k_sample,
            theta, data, W, mass, use_k, kmat, cmat, ab, lr, lam0, gap_tol, tol, max_iter,
            pos_tol, PROJECTION_ITER, U, X, P, q, v, lam1, q_ref, has_compliant,
            bool(system.damage_states), acc, rec, first_t, max_pen, pn_prev, gap1, iters,
            imp_n, imp_t, *buf.args(),
        )  # fmt: skip
        if status == MJ_SINGULAR:
            raise ConstraintSingularityError(
                f"system '{system.name}': iteration matrix or constraint Jacobian singular at "
                f"t = {t:.6g} s"
            )
        if status == MJ_PROJECTION:
            raise ConstraintSingularityError(
                f"system '{system.name}': position projection failed at t = {t:.6g} s "
                f"(max|Phi| above 64 eps of the largest coordinate after {PROJECTION_ITER} "
                "iterations)"
            )
        if status == MJ_NONFINITE:
            raise ConstraintSingularityError(
                f"system '{system.name}': non-finite state at t = {t:.6g} s (Moreau-Jean)"
            )
    drift_max, cap_total = float(acc[2]), int(acc[3])
    qmax_run = float(np.max(np.abs(buf.q[:k_sample]))) if n else 0.0
    buf_t = k_sample - 1
    wall = run_clock() - t_start
    cpu = time.process_time() - c_start
    k_tot = k_sample
    times = np.arange(k_tot) * plan.sample_every * h0
    times[buf_t] = settings.t_end
    summary = {
        name: {
            "impulses": int(rec[c, 0]),
            "max_impulse": float(rec[c, 1]),
            "first_contact_time": None if math.isnan(first_t[c]) else float(first_t[c]),
            "max_penetration": float(max(max_pen[c], 0.0)),
            "contact_fraction": float(rec[c, 2]) / plan.n_steps,
            "solver_max_iter_hit": int(rec[c, 3]),
        }
        for c, name in enumerate(names)
    }
    stats = {
        "dt": h0,
        "sample_every": plan.sample_every,
        "theta": theta,
        "phi_drift_max": drift_max,
        # the projection's tolerance at its largest (64 eps of the largest coordinate)
        "position_tol": max(pos_tol, 64.0 * float(np.finfo(float).eps) * qmax_run),
        "solver_max_iter_hit": cap_total,
        "contact_projection_failed": int(acc[4]),
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
