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
:func:`ancf_beam.mbs.core.dissipation_power`) and the beams' damage as in the other
integrators.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np
from numba import njit

from ancf_beam.borrow import borrow
from ancf_beam.errors import ConstraintSingularityError
from ancf_beam.kernel_cache import run_clock
from ancf_beam.linalg import BANDWIDTH, band_to_dense_into
from ancf_beam.mbs import core
from ancf_beam.mbs.core import FE_LINE
from ancf_beam.mbs.settings import IntegratorSettings
from ancf_beam.mbs.system import System
from ancf_beam.mbs.timeloop import (
    SampleBuffers,
    record_sample,
    release_damage,
    report_progress,
    step_end,
)
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
# The small pieces of a step take single arrays, never the system's tuples (S, W, U, X);
# mj_step and project_contacts take the tuples but unpack what they use in their first lines,
# and mj_run unpacks its own once before the loop: numba counts a reference of every array of
# a tuple each time the tuple is bound to a new name (a function's argument, an unpacking, a
# slice, which builds a new tuple) or stays bound across a branch, and in the step loop that
# costs 10-20 % of a step of a small system.
@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _iteration_matrix(q, v, h, theta, f, mass, kmat, cmat, use_k, amat, rhs, qm):
    """``A = M + h theta C + h^2 theta^2 K``, ``rhs = h f - h^2 theta K v`` (the forces ``f``
    at ``(q, v, t)``) and the mid-step positions ``qm = q + h/2 v`` (module docstring, items 1
    and 2)."""
    n = q.shape[0]
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


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _copy_into(src, dst):
    """``dst[i] = src[i]`` for every entry of ``dst``."""
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _active_contacts(gap, gap_k, gap_tol, act):
    """Collect in ``act`` the contacts touching at the start of the step (a resting or
    just-projected contact, ``gap_k``) or by mid-step (``gap``); return their number."""
    k = 0
    for c in range(gap.shape[0]):
        if gap[c] <= gap_tol or gap_k[c] <= gap_tol:
            act[k] = c
            k += 1
    return k


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _contact_problem(v, vf, act, k, wn, wt, u_e, u_mu, hrows, mu_act, um, bvec, pk):
    """The rows ``H = [w_n, w_t]`` of the ``k`` active contacts, their friction coefficients,
    velocities before (``um``) and free after (``bvec``, shifted by the restitution) the step,
    and a zero start of the impulses ``pk``."""
    n = v.shape[0]
    for a in range(k):
        c = act[a]
        for i in range(n):
            hrows[2 * a, i] = wn[c, i]
            hrows[2 * a + 1, i] = wt[c, i]
        mu_act[a] = u_mu[c]
    for r in range(2 * k):
        um[r] = _dot(hrows[r], v)
        bvec[r] = _dot(hrows[r], vf)
        pk[r] = 0.0
    for a in range(k):
        # restitution on approach faster than the smooth forces change the normal velocity
        # in the step; slower: a resting contact (e = 0), which ends an accumulation of
        # impacts at the step's resolution
        un = um[2 * a]
        if un < 0.0 and -un > abs(bvec[2 * a] - un):
            bvec[2 * a] += u_e[act[a]] * un


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _apply_impulses(pk, k, act, xh, tg, hrows, um, v1, lb, pn_step, pt_step):
    """Add the velocity (``xh``) and bilateral-impulse (``tg``) responses of the contact
    impulses ``pk`` to ``v1`` and ``lb``, store the impulses per contact; return their work
    ``P . (u+ + u-)/2``."""
    n = v1.shape[0]
    m = lb.shape[0]
    k2 = 2 * k
    for r in range(k2):
        for i in range(n):
            v1[i] += pk[r] * xh[r, i]
        for s in range(m):
            lb[s] -= pk[r] * tg[r, s]
    d_imp = 0.0
    for r in range(k2):
        d_imp -= 0.5 * pk[r] * (_dot(hrows[r], v1) + um[r])
    for a in range(k):
        pn_step[act[a]] = pk[2 * a]
        pt_step[act[a]] = pk[2 * a + 1]
    return d_imp


@njit(cache=True, nogil=True, error_model="numpy")
def mj_step(q, v, t, t1, run, S, W, mass, kmat, cmat, U, X, gap_k):
    """One Moreau-Jean step from ``(q, v, t)`` to ``t1`` (the module docstring, items 1-3 and
    the theta update of the positions, before the projection): ``X = (amat, piv, rhs, qm,
    gmat, phit, spiv, smat, xg, vf, lb, unit, dofs, gap, wn, wt, act, hrows, xh, tg, wk, bvec,
    um, pk, mu_act, v1, q1, pn_step, pt_step)`` work arrays and outputs (``v1``, ``q1``,
    ``lb`` the bilateral impulses, ``pn_step``, ``pt_step`` the contact impulses, ``act[:k]``
    the active contacts), ``U = (uei, uef, u_e, u_mu)`` the unilateral contacts, ``kmat``,
    ``cmat`` the dense tangent stiffness and damping when ``run.use_k`` (``run``:
    :class:`MJRun`), ``gap_k`` the gaps at ``q``. Returns ``(pivot ratio, solver sweeps,
    converged, k, work of the impulses)``; a ratio <= 1e-14 means a singular iteration matrix
    or constraint Jacobian (nothing else is computed)."""
    amat, piv, rhs, qm, gmat, phit = X[0], X[1], X[2], X[3], X[4], X[5]
    spiv, smat, xg, vf, lb, unit, dofs = X[6], X[7], X[8], X[9], X[10], X[11], X[12]
    gap, wn, wt, act, hrows, xh, tg = X[13], X[14], X[15], X[16], X[17], X[18], X[19]
    wk, bvec, um, pk, mu_act = X[20], X[21], X[22], X[23], X[24]
    v1, q1, pn_step, pt_step = X[25], X[26], X[27], X[28]
    uei, uef, u_e, u_mu = U
    f, pp, pq, cols, vals, fst = W[0], W[13], W[14], W[15], W[16], W[20]
    dext, phi, jc, jv, jn, gam, phit_w = W[19], W[1], W[3], W[4], W[5], W[6], W[7]
    ei, ef = S[5], S[6]
    theta = run.theta
    h = t1 - t
    core.system_forces(q, v, t, S, fst, f, pp, pq, cols, vals)
    _iteration_matrix(q, v, h, theta, f, mass, kmat, cmat, run.use_k, amat, rhs, qm)
    if ei.shape[0] > 0:
        core.eval_constraints(qm, v, t1, ei, ef, dext, phi, jc, jv, jn, gam, phit_w, pp, pq)
        _rows_dense(jc, jv, jn, gmat)
        _copy_into(phit_w, phit)
    ratio = condense(amat, piv, rhs, v, gmat, phit, spiv, smat, xg, vf, lb)
    if not ratio > 1e-14:
        return ratio, 0, True, 0, 0.0
    _copy_into(vf, v1)
    for c in range(pn_step.shape[0]):
        pn_step[c] = 0.0
        pt_step[c] = 0.0
    its, ok, k, d_imp = 0, True, 0, 0.0
    if uei.shape[0] > 0:
        contact_geometry(uei, uef, qm, unit, gap, wn, wt, pp, pq, dofs)
        k = _active_contacts(gap, gap_k, run.gap_tol, act)
        if k > 0:
            _contact_problem(v, vf, act, k, wn, wt, u_e, u_mu, hrows, mu_act, um, bvec, pk)
            delassus(amat, piv, gmat, smat, spiv, xg, hrows, 2 * k, xh, tg, wk)
            its, ok = pgs_solve(wk, bvec, mu_act, k, pk, run.tol, run.max_iter)
            d_imp = _apply_impulses(pk, k, act, xh, tg, hrows, um, v1, lb, pn_step, pt_step)
    for i in range(q.shape[0]):
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
def project_contacts(q1, t1, S, W, U, P, unit, gap, wn, wt, dofs, ptol, iters):
    """Direct projection of the positions out of penetration (after the bilateral projection):
    mass-orthogonal Gauss-Newton onto ``Phi(q, t1) = 0`` and ``g_c(q) = 0`` for every contact
    that penetrates (``g < -ptol``; once selected a contact stays in the set); ``P = (mlu,
    mpiv, sel, rows, y, smat, spiv, r, qs)`` its work arrays, ``mlu`` the LU factors of the
    mass. Velocities are left alone. Returns the largest residual; when the iteration does not
    reach ``ptol`` or the rows are singular, ``q1`` is restored and the penetration is left
    (returns -1)."""
    mlu, mpiv, sel, rows, y, smat, spiv, r, qs = P
    ei, ef, uei, uef, pp, pq = S[5], S[6], U[0], U[1], W[13], W[14]
    dext, phi, jc, jv, jn, gam, phit = W[19], W[1], W[3], W[4], W[5], W[6], W[7]
    m = ei.shape[0]
    n = q1.shape[0]
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
            core.eval_constraints(q1, q1, t1, ei, ef, dext, phi, jc, jv, jn, gam, phit, pp, pq)
            _rows_dense(jc, jv, jn, rows)
        if it > 0:
            contact_geometry(uei, uef, q1, unit, gap, wn, wt, pp, pq, dofs)
        k = m
        rmax = 0.0
        for j in range(m):
            r[j] = phi[j]
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


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _subtract(a, b):
    """``a -= b`` (matrices)."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] -= b[i, j]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _coordinate_tol(q1, pos_tol):
    """The projections' tolerance: ``pos_tol``, or 64 eps of the largest coordinate of the
    current state when larger (a driven angle grows with time)."""
    qmax = 0.0
    for i in range(q1.shape[0]):
        qmax = max(qmax, abs(q1[i]))
    return max(pos_tol, 64.0 * 2.220446049250313e-16 * qmax)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _largest_drift(phi, acc):
    """``acc[2] = max(acc[2], max |phi|)``: the largest constraint violation before a
    projection."""
    for r in range(phi.shape[0]):
        acc[2] = max(acc[2], abs(phi[r]))


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _drive_power(lb, phit, h, lam):
    """The multipliers ``lam = -lb / h`` of the step's bilateral impulses ``lb`` and their
    power on the drivers' explicit motion ``lam . Phi_t``."""
    pw = 0.0
    for r in range(lb.shape[0]):
        lam[r] = -lb[r] / h
        pw += lam[r] * phit[r]
    return pw


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _track_penetration(gap, max_pen):
    """``max_pen = max(max_pen, -gap)`` per contact."""
    for c in range(gap.shape[0]):
        max_pen[c] = max(max_pen[c], -gap[c])


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _advance(q, v, q1, v1, h, sample, a_mean):
    """``q, v <- q1, v1``, with ``sample`` the step's mean acceleration into ``a_mean``.
    Returns False when a coordinate or velocity is not finite."""
    finite = True
    for i in range(q.shape[0]):
        if sample:
            a_mean[i] = (v1[i] - v[i]) / h
        q[i] = q1[i]
        v[i] = v1[i]
        if not (math.isfinite(q[i]) and math.isfinite(v[i])):
            finite = False
    return finite


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _store_impulses(k_sample, pn_step, pt_step, imp_n, imp_t):
    """The step's contact impulses into row ``k_sample`` of the sampled impulses."""
    for c in range(pn_step.shape[0]):
        imp_n[k_sample, c] = pn_step[c]
        imp_t[k_sample, c] = pt_step[c]


class MJRun(NamedTuple):
    """The scalars of a Moreau-Jean run (an argument of :func:`mj_run`)."""

    h0: float  # the step (s); the last one ends at t_end
    n_steps: int
    t_end: float  # s
    sample_every: int  # a sample every this many steps, and after the last
    theta: float
    gap_tol: float  # a contact within this gap (m) of touching is active
    tol: float  # the contact solver's relative tolerance (pgs_solve)
    max_iter: int  # and its largest number of sweeps
    pos_tol: float  # the position projections' tolerance at least (m)
    proj_iter: int  # their largest number of iterations
    use_k: bool  # the tangent stiffness and damping enter the iteration matrix
    has_compliant: bool  # compliant contacts or dampers: their state and dissipation
    has_damage: bool  # damaging beams: the energy their damage releases


@njit(cache=True, nogil=True, error_model="numpy")
def mj_run(step0, step1, t, k_sample, run, S, W, T, U, X, P, R, B, q, v, lam, q_ref):
    """Steps ``step0 .. step1 - 1`` of a run (:func:`mj_step`, the position projection, the
    contact record and projection, compliant contacts' state and dissipation, damage),
    recording every ``run.sample_every``-th step and the last of the run into the sample
    buffers ``B``. ``run``: :class:`MJRun`; ``T = (mass, kmat, cmat, ab, L, lam0)`` the
    iteration matrix's parts (:class:`_Tangent`); ``R`` the records (:class:`_Records`), its
    ``acc = [diss, drive work, largest |Phi| before projection, steps at the solver's cap,
    failed contact projections, the dissipation power at the last step's end]`` the sums
    (the power carried, so that a run split into calls books what one call would). Returns
    ``(status, steps done, next sample index, time)``; status ``MJ_SINGULAR`` /
    ``MJ_PROJECTION`` / ``MJ_NONFINITE`` stop the run at that step. The tuples are unpacked
    once, before the loop."""
    # (not P: None without contact projection, a branch numba prunes on the argument alone)
    run, S, W, T, U, X, R, B, q, v, lam, q_ref = borrow(
        (run, S, W, T, U, X, R, B, q, v, lam, q_ref)
    )
    mass, kmat, cmat, ab, L, lam0 = T
    acc, rec, first_t, max_pen, pn_prev, gap1, iters, imp_n, imp_t = R
    ei, ef, fst, pp, pq, cols, vals = S[5], S[6], W[20], W[13], W[14], W[15], W[16]
    f, phi, jc, jv, jn, gam, phit_w, dext = W[0], W[1], W[3], W[4], W[5], W[6], W[7], W[19]
    a_mean, phit, lb, unit, dofs, gap = X[2], X[5], X[10], X[11], X[12], X[13]
    wn, wt, act, v1, q1, pn_step, pt_step = X[14], X[15], X[16], X[25], X[26], X[27], X[28]
    uei, uef = U[0], U[1]
    p_diss0 = acc[5]  # carried from the previous call's last step
    if step0 == 0 and run.has_compliant:
        p_diss0 = core.dissipation_power(q, v, S, fst, pp, pq)
    for step in range(step0, step1):
        t1 = run.t_end if step == run.n_steps - 1 else (step + 1) * run.h0
        h = t1 - t
        if run.use_k:
            _tangent_dense(q, v, t, S, fst, 0.0, ab, pp, pq, cols, vals, L, lam0, kmat)
            _tangent_dense(q, v, t, S, fst, 1.0, ab, pp, pq, cols, vals, L, lam0, cmat)
            _subtract(cmat, kmat)
        ratio, its, ok, k, d_imp = mj_step(q, v, t, t1, run, S, W, mass, kmat, cmat, U, X, gap1)
        if not ratio > 1e-14:
            return MJ_SINGULAR, step, k_sample, t
        iters[step] = its
        if not ok:
            acc[3] += 1.0
        if ei.shape[0] > 0:
            core.eval_constraints(q1, v1, t1, ei, ef, dext, phi, jc, jv, jn, gam, phit_w, pp, pq)
            _largest_drift(phi, acc)
            ptol = _coordinate_tol(q1, run.pos_tol)
            if not core.project_position(q1, t1, S, W, ptol, run.proj_iter) <= ptol:
                return MJ_PROJECTION, step, k_sample, t
            acc[1] += _drive_power(lb, phit, h, lam) * h
        if uei.shape[0] > 0:
            _book(t, h, v, wn, pn_step, pn_prev, act, k, ok, rec, first_t)
            if P is not None:
                ptol = _coordinate_tol(q1, run.pos_tol)
                res = project_contacts(
                    q1, t1, S, W, U, P, unit, gap, wn, wt, dofs, ptol, run.proj_iter
                )
                if res < 0.0:
                    acc[4] += 1.0
            unilateral_gaps(uei, uef, q1, unit, gap1, pp, pq)
            _track_penetration(gap1, max_pen)
        acc[0] += d_imp
        if run.has_compliant:
            core.update_force_state(q1, v1, t1, S, fst)
            p_diss1 = core.dissipation_power(q1, v1, S, fst, pp, pq)
            acc[0] += 0.5 * h * (p_diss0 + p_diss1)
            p_diss0 = p_diss1
            acc[5] = p_diss1
        if run.has_damage:
            acc[0] += release_damage(q1, S)
        sample = (step + 1) % run.sample_every == 0 or step == run.n_steps - 1
        finite = _advance(q, v, q1, v1, h, sample, a_mean)
        t = t1
        if not finite:
            return MJ_NONFINITE, step, k_sample, t
        if sample:
            u, p = core.system_forces(q, v, t, S, fst, f, pp, pq, cols, vals)
            core.eval_constraints(q, v, t, ei, ef, dext, phi, jc, jv, jn, gam, phit_w, pp, pq)
            record_sample(k_sample, q, v, a_mean, lam, S, W, u, p, acc[0], acc[1], q_ref, B)
            _store_impulses(k_sample, pn_step, pt_step, imp_n, imp_t)
            k_sample += 1
    return MJ_OK, step1, k_sample, t


class _Tangent:
    """The iteration matrix's parts ``T = (mass, kmat, cmat, ab, L, lam0)`` of :func:`mj_run`:
    the dense mass, the tangent stiffness ``kmat = K`` and damping ``cmat = C``, the work of
    the dense tangent ``K + c_v C`` (:func:`_tangent_dense`: its band ``ab``, the low-rank
    work ``L``) and zero multipliers (the constraint Hessian is left out of the iteration
    matrix); ``zero``: the system has no beams and no force elements (rigid bodies, gravity):
    the tangent vanishes."""

    def __init__(self, system: System):
        n = system.n
        self.zero = not system.beams and not system.forces
        self.mass = system.mass_dense()
        self.T = (
            self.mass,
            np.zeros((n, n)),
            np.zeros((n, n)),
            np.zeros((2 * BANDWIDTH + 1, n)),
            system.lowrank_work() if system.n_low_rank else None,
            np.zeros(system.m),
        )


def _work_arrays(n: int, m: int, nc: int) -> tuple:
    """The work arrays ``X`` of :func:`mj_step` (named in its docstring) for ``n``
    coordinates, ``m`` constraint rows and ``nc`` unilateral contacts."""
    return (
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


def _projection_work(mass: np.ndarray, m: int, nc: int) -> tuple:
    """The work arrays ``P`` of :func:`project_contacts`, the LU factors of the mass first."""
    n = mass.shape[0]
    mlu = mass.copy()
    mpiv = np.zeros(n, dtype=np.int64)
    core.lu_factor(mlu, mpiv)
    return (
        mlu,
        mpiv,
        np.zeros(nc, dtype=np.bool_),  # sel
        np.zeros((m + nc, n)),  # rows
        np.zeros((m + nc, n)),  # y
        np.zeros((m + nc, m + nc)),  # smat
        np.zeros(m + nc, dtype=np.int64),  # spiv
        np.zeros(m + nc),  # r
        np.zeros(n),  # qs
    )


class _Records:
    """What a run records besides the samples: ``R`` of :func:`mj_run` (``acc`` = dissipated
    work, drive work, largest |Phi| before projection, steps at the solver's cap, steps whose
    contact projection failed (penetration left), the dissipation power carried between
    calls; per contact ``rec`` = impacts, largest
    impulse, steps with an impulse, steps at the cap; ``first_t``, ``max_pen``, ``pn_prev``,
    ``gap1``), the solver's sweeps per step and the impulses at the samples."""

    def __init__(self, nc: int, n_samples: int, n_steps: int):
        self.acc = np.zeros(6)
        self.rec = np.zeros((nc, 4))
        self.first_t = np.full(nc, np.nan)
        self.max_pen = np.zeros(nc)
        self.pn_prev = np.zeros(nc)
        self.gap1 = np.zeros(nc)
        self.iters = np.zeros(n_steps, dtype=np.int64)
        self.imp_n = np.zeros((n_samples, nc))
        self.imp_t = np.zeros((n_samples, nc))

    def R(self) -> tuple:
        return (
            self.acc,
            self.rec,
            self.first_t,
            self.max_pen,
            self.pn_prev,
            self.gap1,
            self.iters,
            self.imp_n,
            self.imp_t,
        )

    def summary(self, names: list[str], n_steps: int) -> dict:
        """Contact name -> its record (``MechanismResult.contact_summary``)."""
        rec, first_t = self.rec, self.first_t
        return {
            name: {
                "impulses": int(rec[c, 0]),
                "max_impulse": float(rec[c, 1]),
                "first_contact_time": None if math.isnan(first_t[c]) else float(first_t[c]),
                "max_penetration": float(max(self.max_pen[c], 0.0)),
                "contact_fraction": float(rec[c, 2]) / n_steps,
                "solver_max_iter_hit": int(rec[c, 3]),
            }
            for c, name in enumerate(names)
        }


def _record_start(system, W, q, v, a, lam, q_ref, buf, recs, unit) -> None:
    """Sample 0 at ``t = 0`` and the contacts' initial gaps (``recs.gap1``, ``max_pen``)."""
    pp, pq = W[13], W[14]
    system.update_drivers(0.0, W)
    u, p = core.system_forces(q, v, 0.0, system.data, system.fst, W[0], pp, pq, W[15], W[16])
    core.eval_constraints(
        q, v, 0.0, system.ei, system.ef, W[19], W[1], W[3], W[4], W[5], W[6], W[7], pp, pq
    )
    record_sample(0, q, v, a, lam, system.data, W, u, p, 0.0, 0.0, q_ref, buf.args())
    if len(system.unilateral):
        unilateral_gaps(system.uei, system.uef, q, unit, recs.gap1, pp, pq)
        np.maximum(recs.max_pen, -recs.gap1, out=recs.max_pen)


def _raise_on(system: System, status: int, t: float) -> None:
    """The error of a run :func:`mj_run` stopped with ``status`` at ``t`` (none for MJ_OK)."""
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


def _run_scalars(system, settings, plan, tangent, pos_tol) -> MJRun:
    """The scalars of a run (:class:`MJRun`); the projections' tolerance at least ``pos_tol``,
    and a contact within it of touching is active (resting contacts)."""
    return MJRun(
        h0=float(settings.dt),
        n_steps=plan.n_steps,
        t_end=settings.t_end,
        sample_every=plan.sample_every,
        theta=float(settings.theta),
        gap_tol=pos_tol,
        tol=float(settings.tol),
        max_iter=int(settings.max_iter),
        pos_tol=pos_tol,
        proj_iter=PROJECTION_ITER,
        use_k=not tangent.zero,
        has_compliant=bool(system.contact_indices or system.damper_indices),
        has_damage=bool(system.damage_states),
    )


def run_moreau_jean(
    system: System,
    settings: IntegratorSettings,
    q: np.ndarray,
    v: np.ndarray,
    a: np.ndarray,
    lam: np.ndarray,
    progress: bool = False,
    progress_interval_s: float = 5.0,
) -> MechanismResult:
    """Integrate from ``t = 0`` (consistent ``q``, ``v``; ``a``, ``lam`` the index-1 start) to
    ``settings.t_end`` by Moreau-Jean steps of ``settings.dt`` (the last one shortened), sampled
    every ``sample_dt`` (see the module docstring; one step: :func:`mj_step`, then the position
    projection). ``progress``: the simulated time, steps/s and an ETA logged every
    ``progress_interval_s`` (the run then steps in calls of about a second's steps).
    Raises :class:`~ancf_beam.errors.ConstraintSingularityError` when the iteration matrix or
    the bilateral constraints become singular or the position projection fails."""
    h0 = float(settings.dt)
    plan = step_plan(settings.t_end, h0, settings.sample_dt, settings.sample_dt)
    check_mechanism(system, settings, plan.n_samples, plan.n_steps)
    n, m, nc = system.n, system.m, len(system.unilateral)
    W = system.work()
    tangent = _Tangent(system)
    X = _work_arrays(n, m, nc)
    U = (system.uei, system.uef, system.u_e, system.u_mu)
    l_ref = max(1e-3, float(np.max(np.abs(q))))
    pos_tol = 64.0 * float(np.finfo(float).eps) * l_ref  # coordinate round-off (as index-3)
    run = _run_scalars(system, settings, plan, tangent, pos_tol)
    q_ref = system.q0.copy()
    buf = SampleBuffers(plan.n_samples, n, m, system.fst.size)
    recs = _Records(nc, plan.n_samples, plan.n_steps)
    q = q.copy()
    v = v.copy()
    _record_start(system, W, q, v, a, lam, q_ref, buf, recs, X[11])
    P = _projection_work(tangent.mass, m, nc) if nc and settings.contact_projection else None
    lam1 = lam.copy()
    # user-function drivers are evaluated in Python: one step per call then; with progress,
    # calls of about a second's steps
    one = system.has_function_drivers
    chunk = 1 if one else (min(plan.n_steps, 200) if progress else plan.n_steps)
    t_prog = time.perf_counter()
    state = [t_prog, progress_interval_s if progress else math.inf]
    k_sample, step, t = 1, 0, 0.0
    S, T, R, B = system.data, tangent.T, recs.R(), buf.args()
    t_start = run_clock()  # the run time: without compiling (kernel_cache)
    c_start = time.process_time()
    while step < plan.n_steps:
        stop = min(plan.n_steps, step + chunk)
        if one:
            system.update_drivers(step_end(step, h0, plan, settings.t_end), W)
        status, step, k_sample, t = mj_run(
            step, stop, t, k_sample, run, S, W, T, U, X, P, R, B, q, v, lam1, q_ref
        )
        _raise_on(system, status, t)
        if progress and not one:
            n_next = report_progress("moreau-jean", step, plan.n_steps, h0, t_prog, state)
            chunk = min(max(100, n_next), 100000)
    wall = run_clock() - t_start
    cpu = time.process_time() - c_start
    return _mj_result(system, settings, plan, buf, recs, k_sample, pos_tol, wall, cpu)


def _mj_result(system, settings, plan, buf, recs, k_sample, pos_tol, wall, cpu):
    """The :class:`MechanismResult` of a finished run (:func:`run_moreau_jean`): the samples,
    the step statistics, the impulses at the samples and the contact summary."""
    h0 = float(settings.dt)
    qmax_run = float(np.max(np.abs(buf.q[:k_sample]))) if system.n else 0.0
    times = np.arange(k_sample) * plan.sample_every * h0
    times[k_sample - 1] = settings.t_end
    acc = recs.acc
    stats = {
        "dt": h0,
        "sample_every": plan.sample_every,
        "theta": float(settings.theta),
        "phi_drift_max": float(acc[2]),
        # the projection's tolerance at its largest (64 eps of the largest coordinate)
        "position_tol": max(pos_tol, 64.0 * float(np.finfo(float).eps) * qmax_run),
        "solver_max_iter_hit": int(acc[3]),
        "contact_projection_failed": int(acc[4]),
        "cost_per_step_s": cpu / plan.n_steps,
    }
    res = buf.result(
        times,
        k_sample,
        integrator="moreau-jean",
        dt=h0,
        steps=plan.n_steps,
        wall_s=wall,
        cpu_s=cpu,
        stats=stats,
    )
    res.impulse_n = recs.imp_n[:k_sample].copy()
    res.impulse_t = recs.imp_t[:k_sample].copy()
    res.contact_summary = recs.summary([c.name for c in system.unilateral], plan.n_steps)
    res.lcp_iterations = recs.iters
    return res
