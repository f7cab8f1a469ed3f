"""Numba kernels of the multibody system (allocation-free; the integrators' hot loops call them).

Data travel as two tuples built by :class:`ancf_beam.mbs.system.System`:

* ``S`` (constant data): ``(mlb, mfac, qg, beams, nonbeam, ei, ef, fei, fef, const_jac,
  n_beams)`` -- system mass in symmetric lower band storage ``(8, n)`` (half-bandwidth 7,
  bodies stacked on the diagonal), its banded Cholesky factor
  (:func:`ancf_beam.linalg.band_cholesky` layout), the constant gravity force, one tuple per
  beam body ``(offset, n_dof, kernel_args, layout, soa_args)`` padded with empty ones
  (:func:`ancf_beam.mbs.system.beam_entries`), the indices of the non-beam coordinates, the
  constraint row tables (:func:`ancf_beam.mbs.joints.encode_rows`), the force element tables
  (:mod:`ancf_beam.mbs.forces`), whether the constraint Jacobian is constant, the number of
  beams (the first ``n_beams`` entries) and one tuple ``(damage_on, damage_args)`` per
  entry;
* ``W`` (work arrays and per-run state): see :func:`ancf_beam.mbs.system.System.work`;
* ``L`` (the low-rank part of the iteration matrix: force elements outside the band): see
  :func:`lowrank_prepare` and :func:`ancf_beam.mbs.system.System.lowrank_work`.

Constraint Jacobians are stored by rows: ``jc[r, k]`` (column) and ``jv[r, k]`` (value) for
``k < jn[r]``; a column may repeat (the entries add up).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.borrow import borrow
from ancf_beam.linalg import BANDWIDTH, CHOLESKY, band_factor_solve
from ancf_beam.mbs.contact import (
    HERTZ,
    KELVIN_VOIGT,
    P_CHI,
    P_DAMP,
    P_EXP,
    P_STIFF,
    P_V0MIN,
    friction_coefficient,
    friction_slope,
    normal_force,
)
from ancf_beam.mbs.laws import ADMISSIBLE_OVERLAP_SHARE

__all__ = [
    "FE_CONTACT",
    "FE_FORCE",
    "FE_LINE",
    "FE_SPRING",
    "FE_TORQUE",
    "MAX_ROW_NNZ",
    "accel_index1",
    "constraint_hessian_band",
    "contact_breach",
    "dissipation_power",
    "contact_gaps",
    "contact_kinematics",
    "eval_constraints",
    "force_elements",
    "force_elements_tangent",
    "is_contact",
    "jac_mul",
    "jac_tmul_add",
    "line_kinematics",
    "lowrank_prepare",
    "lowrank_solve",
    "lu_factor",
    "lu_solve",
    "system_forces",
    "system_tangent",
    "update_force_state",
]

MAX_ROW_NNZ = 12  # Jacobian entries per constraint row (two beam points: 8; a line: 7)
LR_NNZ = 8  # entries of a row of a pair element's J_d (two points, at most 4 each)

_E_POS, _E_LINE, _E_ANGLE, _E_DRIVER = 0, 1, 2, 3
_PT_GROUND, _PT_LINEAR, _PT_RIGID = 0, 1, 2
FE_FORCE, FE_TORQUE, FE_SPRING, FE_CONTACT, FE_LINE = 0, 1, 2, 3, 4
# FE_CONTACT parameters in fef[e] (after the two points' weights 0:8) and carried state fst[e]
C_RP, C_RQ, C_INSIDE, C_LAW, C_FRIC, C_NPAR, C_FPAR = 8, 9, 10, 11, 12, 13, 18
C_FEND = 24  # end of the friction parameters 18:24
#: event mode (0 or 1): while set, a contact that has not recorded its onset (``fst[e, S_FLAG]``
#: 0) exerts no force even where it penetrates; the adaptive integrator sets it for its run, so
#: that each step before an onset is free flight and the onset is located on a smooth solution
C_EVENTS = 24
C_NFLT = 25  # floats used
# FE_LINE parameters: the radius of the disc at P, the line's unit direction in its body's frame
# (the line passes through Q); the law, friction and event slots are the circle's (11:25), so
# the laws' kernels read both kinds alike; then the segment along the direction (m, -inf and
# +inf for the whole line)
L_R, L_DX, L_DY = 8, 9, 10
L_SMIN, L_SMAX = 25, 26
FE_NFLT = 27  # floats of a force element row (the longest: the line contact's)
S_V0, S_FLAG, S_IMPACTS, S_T0 = 0, 1, 2, 3  # approach speed, in contact (0/1), count, onset t
_BW = BANDWIDTH


@njit(cache=True, nogil=True, error_model="numpy")
def is_contact(kind):
    """True for the contact kinds (``FE_CONTACT`` circle, ``FE_LINE`` point against a line):
    the elements with a gap, an approach speed carried in ``fst`` and a contact record."""
    return kind == FE_CONTACT or kind == FE_LINE


# ------------------------------------------------------------------------------------------
# points
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def point_eval_inline(kind, off, n, w, q, v, out):
    """``out[0:2]`` position, ``[2:4]`` velocity, ``[4:6]`` the velocity-quadratic part ``h`` of
    the acceleration (``r'' = J q'' + h``), ``[6:8]`` ``dr/dtheta`` (rigid markers)."""
    if kind == _PT_GROUND:
        out[0] = w[0]
        out[1] = w[1]
        for i in range(2, 8):
            out[i] = 0.0
    elif kind == _PT_RIGID:
        th = q[off + 2]
        om = v[off + 2]
        c = math.cos(th)
        s = math.sin(th)
        ax = c * w[0] - s * w[1]  # A s
        ay = s * w[0] + c * w[1]
        out[0] = q[off] + ax
        out[1] = q[off + 1] + ay
        out[6] = -ay  # A_theta s
        out[7] = ax
        out[2] = v[off] + om * out[6]
        out[3] = v[off + 1] + om * out[7]
        out[4] = -om * om * ax
        out[5] = -om * om * ay
    else:
        out[0], out[1], out[2], out[3] = _point_pv_inline(kind, off, n, w, q, v)
        for i in range(4, 8):
            out[i] = 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def point_eval(kind, off, n, w, q, v, out):
    """:func:`point_eval_inline` as a call. The constraint rows, evaluated in every Newton
    iteration, inline it (a call costs half of their time); other callers call this form,
    which keeps their compilation short."""
    point_eval_inline(kind, off, n, w, q, v, out)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def point_jac_inline(kind, off, n, w, pv, cx, cy, sign, cols, vals, k):
    """Append the gradient of ``sign * (cx P_x + cy P_y)`` to ``cols``/``vals`` from position
    ``k``; return the new count (``pv``: the point's :func:`point_eval` output)."""
    if kind == _PT_GROUND:
        return k
    if kind == _PT_RIGID:
        if cx != 0.0:
            cols[k] = off
            vals[k] = sign * cx
            k += 1
        if cy != 0.0:
            cols[k] = off + 1
            vals[k] = sign * cy
            k += 1
        cols[k] = off + 2
        vals[k] = sign * (cx * pv[6] + cy * pv[7])
        return k + 1
    for a in range(n):
        i = off + 2 * a
        if cx != 0.0:
            cols[k] = i
            vals[k] = sign * cx * w[a]
            k += 1
        if cy != 0.0:
            cols[k] = i + 1
            vals[k] = sign * cy * w[a]
            k += 1
    return k


@njit(cache=True, nogil=True, error_model="numpy")
def point_jac(kind, off, n, w, pv, cx, cy, sign, cols, vals, k):
    """:func:`point_jac_inline` as a call. The constraint rows, evaluated in every Newton
    iteration, inline it (a call costs half of their time); other callers call this form,
    which keeps their compilation short."""
    return point_jac_inline(kind, off, n, w, pv, cx, cy, sign, cols, vals, k)


# ------------------------------------------------------------------------------------------
# constraints
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def _line_normal(ei_r, ef_r, q, v):
    """Unit normal ``n`` of a line row, its rotation rate ``omega_L`` and the line body's
    angle index (-1: ground)."""
    lo = ei_r[8]
    nlx = ef_r[8]
    nly = ef_r[9]
    if lo >= 0:
        c = math.cos(q[lo])
        s = math.sin(q[lo])
        return c * nlx - s * nly, s * nlx + c * nly, v[lo], lo
    return nlx, nly, 0.0, lo


@njit(cache=True, nogil=True, error_model="numpy")
def eval_constraints(q, v, t, ei, ef, dext, phi, jc, jv, jn, gam, phit, pp, pq):
    """Rows ``Phi``, Jacobian (row storage), ``gamma`` and ``Phi_t`` at ``(q, v, t)``."""
    for r in range(ei.shape[0]):
        et = ei[r, 0]
        cols = jc[r]
        vals = jv[r]
        k = 0
        ft = 0.0
        if et == _E_POS or et == _E_LINE:
            point_eval_inline(ei[r, 2], ei[r, 3], ei[r, 4], ef[r, 0:4], q, v, pp)
            point_eval_inline(ei[r, 5], ei[r, 6], ei[r, 7], ef[r, 4:8], q, v, pq)
            if et == _E_POS:
                c = ei[r, 1]
                cx = 1.0 if c == 0 else 0.0
                cy = 1.0 - cx
                phi[r] = pp[c] - pq[c]
                gam[r] = -(pp[4 + c] - pq[4 + c])
            else:
                nx, ny, om, lo = _line_normal(ei[r], ef[r], q, v)
                dx = pp[0] - pq[0]
                dy = pp[1] - pq[1]
                ddx = pp[2] - pq[2]
                ddy = pp[3] - pq[3]
                phi[r] = nx * dx + ny * dy
                gam[r] = -(
                    nx * (pp[4] - pq[4])
                    + ny * (pp[5] - pq[5])
                    + 2.0 * om * (-ny * ddx + nx * ddy)
                    - om * om * phi[r]
                )
                cx = nx
                cy = ny
                if lo >= 0:
                    cols[k] = lo
                    vals[k] = -ny * dx + nx * dy  # (dn/dtheta) . d
                    k += 1
            k = point_jac_inline(
                ei[r, 2], ei[r, 3], ei[r, 4], ef[r, 0:4], pp, cx, cy, 1.0, cols, vals, k
            )
            k = point_jac_inline(
                ei[r, 5], ei[r, 6], ei[r, 7], ef[r, 4:8], pq, cx, cy, -1.0, cols, vals, k
            )
        elif et == _E_ANGLE:
            i = ei[r, 9]
            j = ei[r, 10]
            x = q[i] - ef[r, 10]
            cols[0] = i
            vals[0] = 1.0
            k = 1
            if j >= 0:
                x -= q[j]
                cols[1] = j
                vals[1] = -1.0
                k = 2
            phi[r] = x
            gam[r] = 0.0
        else:  # driver
            i = ei[r, 9]
            d = ei[r, 11]
            if d < 0:
                f0 = ef[r, 10] + ef[r, 11] * t
                f1 = ef[r, 11]
                f2 = 0.0
            else:
                f0 = dext[d, 0]
                f1 = dext[d, 1]
                f2 = dext[d, 2]
            phi[r] = q[i] - f0
            cols[0] = i
            vals[0] = 1.0
            k = 1
            ft = -f1
            gam[r] = f2
        jn[r] = k
        phit[r] = ft


@njit(cache=True, nogil=True, error_model="numpy")
def jac_mul(jc, jv, jn, x, y):
    """``y = J x``."""
    for r in range(jn.shape[0]):
        s = 0.0
        for k in range(jn[r]):
            s += jv[r, k] * x[jc[r, k]]
        y[r] = s


@njit(cache=True, nogil=True, error_model="numpy")
def jac_tmul_add(jc, jv, jn, lam, y, scale):
    """``y += scale J^T lam``."""
    for r in range(jn.shape[0]):
        c = scale * lam[r]
        for k in range(jn[r]):
            y[jc[r, k]] += jv[r, k] * c


@njit(cache=True, nogil=True, error_model="numpy")
def _band_add(ab, i, j, x):
    """``K[i, j] += x`` in general band storage (ignored outside the band)."""
    d = i - j
    if -_BW <= d <= _BW:
        ab[_BW + d, j] += x


@njit(cache=True, nogil=True, error_model="numpy")
def constraint_hessian_band(q, v, ei, ef, lam, ab, pp, pq):
    """Add ``sum_r lam_r d2 Phi_r / dq2`` (the in-band part: the rigid angles' diagonal terms;
    the line rows' cross terms between the line body's angle and the point's coordinates are
    left out) to the general band ``ab``."""
    for r in range(ei.shape[0]):
        et = ei[r, 0]
        if et != _E_POS and et != _E_LINE:
            continue
        lr = lam[r]
        point_eval_inline(ei[r, 2], ei[r, 3], ei[r, 4], ef[r, 0:4], q, v, pp)
        point_eval_inline(ei[r, 5], ei[r, 6], ei[r, 7], ef[r, 4:8], q, v, pq)
        if et == _E_POS:
            c = ei[r, 1]
            # d2 P_c / dtheta2 = -(A s)_c, and A s = (dP/dtheta rotated back) = (pv[7], -pv[6])
            if ei[r, 2] == _PT_RIGID:
                i = ei[r, 3] + 2
                asc = pp[7] if c == 0 else -pp[6]
                ab[_BW, i] -= lr * asc
            if ei[r, 5] == _PT_RIGID:
                i = ei[r, 6] + 2
                asc = pq[7] if c == 0 else -pq[6]
                ab[_BW, i] += lr * asc
        else:
            nx, ny, _, lo = _line_normal(ei[r], ef[r], q, v)
            if ei[r, 2] == _PT_RIGID:
                i = ei[r, 3] + 2
                ab[_BW, i] -= lr * (nx * pp[7] - ny * pp[6])
            if lo >= 0:
                dx = pp[0] - pq[0]
                dy = pp[1] - pq[1]
                h = -(nx * dx + ny * dy)
                if ei[r, 5] == _PT_RIGID:  # the line point moves with the line body
                    h -= 2.0 * (-ny * pq[6] + nx * pq[7])
                    h += nx * pq[7] - ny * pq[6]
                ab[_BW, lo] += lr * h


# ------------------------------------------------------------------------------------------
# force elements (pluggable: a new kind adds a branch here and in force_elements_tangent)
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def _spring_state(fei_r, fef_r, q, v, pp, pq):
    point_eval(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], q, v, pp)
    point_eval(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], q, v, pq)
    dx = pp[0] - pq[0]
    dy = pp[1] - pq[1]
    ln = math.sqrt(dx * dx + dy * dy)
    ux = dx / ln
    uy = dy / ln
    ldot = ux * (pp[2] - pq[2]) + uy * (pp[3] - pq[3])
    f = fef_r[8] * (ln - fef_r[10]) + fef_r[9] * ldot  # tension positive (N)
    return ux, uy, ln, ldot, f


@njit(cache=True, nogil=True, error_model="numpy")
def force_elements(q, v, t, fei, fef, fst, f, pp, pq, cols, vals):
    """Add the generalized forces of the force elements to ``f``; return their potential
    energy (J; conservative parts only).

    Kinds: ``FE_FORCE`` constant force ``(F_x, F_y)`` (N, ``fef[8:10]``) at point P;
    ``FE_TORQUE`` constant torque (N m, ``fef[8]``) on the rigid body whose angle index is
    ``fei[7]``; ``FE_SPRING`` linear spring-damper between P and Q, stiffness ``k`` (N/m),
    damping ``c`` (N s/m), free length ``l0`` (m) in ``fef[8:11]``; ``FE_CONTACT`` circle
    contact between P and Q (:func:`contact_kinematics`; radii, side, law codes and parameters
    at ``fef[8:24]``; ``fef[C_EVENTS]`` the event mode), its potential the elastic part of the
    normal law; ``FE_LINE`` point P (a disc of radius ``fef[L_R]``) against the line through Q
    (:func:`line_kinematics`), likewise. ``fst`` holds
    per-element state an integrator carries from step to step (contacts: the approach speed at
    the onset, see :func:`update_force_state`)."""
    energy = 0.0
    for e in range(fei.shape[0]):
        kind = fei[e, 0]
        if kind == FE_FORCE:
            point_eval(fei[e, 1], fei[e, 2], fei[e, 3], fef[e, 0:4], q, v, pp)
            fx = fef[e, 8]
            fy = fef[e, 9]
            k = point_jac(
                fei[e, 1], fei[e, 2], fei[e, 3], fef[e, 0:4], pp, 1.0, 0.0, fx, cols, vals, 0
            )
            k = point_jac(
                fei[e, 1], fei[e, 2], fei[e, 3], fef[e, 0:4], pp, 0.0, 1.0, fy, cols, vals, k
            )
            for i in range(k):
                f[cols[i]] += vals[i]
            energy -= fx * pp[0] + fy * pp[1]
        elif kind == FE_TORQUE:
            i = fei[e, 7]
            f[i] += fef[e, 8]
            energy -= fef[e, 8] * q[i]
        elif kind == FE_SPRING:
            ux, uy, ln, _, fs = _spring_state(fei[e], fef[e], q, v, pp, pq)
            # force on P: -fs u, on Q: +fs u
            k = point_jac(
                fei[e, 1], fei[e, 2], fei[e, 3], fef[e, 0:4], pp, ux, uy, -fs, cols, vals, 0
            )
            k = point_jac(
                fei[e, 4], fei[e, 5], fei[e, 6], fef[e, 4:8], pq, ux, uy, fs, cols, vals, k
            )
            for i in range(k):
                f[cols[i]] += vals[i]
            stretch = ln - fef[e, 10]
            energy += 0.5 * fef[e, 8] * stretch * stretch
        elif kind == FE_CONTACT:
            delta, _, nx, ny, _, _, s, fn, ft = circle_forces(fei[e], fef[e], fst[e], q, v, pp, pq)
            if fn != 0.0 or ft != 0.0:
                _contact_apply(fei[e], fef[e], nx, ny, s, fn, ft, f, pp, pq, cols, vals)
            if fst[e, S_FLAG] != 0.0 or fef[e, C_EVENTS] == 0.0:  # not held off (C_EVENTS)
                energy += _contact_potential(fef[e], delta)
        elif kind == FE_LINE:
            delta, _, nx, ny, s, g, _, fn, ft, _ = line_forces(fei[e], fef[e], fst[e], q, v)
            if fn != 0.0 or ft != 0.0:
                _line_apply(fei[e], fef[e], nx, ny, s, g, fn, ft, q, v, f, pp, pq, cols, vals)
            if fst[e, S_FLAG] != 0.0 or fef[e, C_EVENTS] == 0.0:
                energy += _contact_potential(fef[e], delta)
    return energy


@njit(cache=True, nogil=True, error_model="numpy")
def _pair_block(fei_r, fef_r, pp, pq, b00, b01, b11, cols, vals, ab):
    """Add ``J_d^T B J_d`` to the band, ``J_d = J_P - J_Q`` the Jacobian of the separation of
    the element's two points and ``B = [[b00, b01], [b01, b11]]`` (its sign convention does not
    matter: ``B`` appears with ``J_d`` on both sides)."""
    kx = point_jac(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], pp, 1.0, 0.0, 1.0, cols, vals, 0)
    kx = point_jac(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], pq, 1.0, 0.0, -1.0, cols, vals, kx)
    ky = point_jac(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], pp, 0.0, 1.0, 1.0, cols, vals, kx)
    ky = point_jac(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], pq, 0.0, 1.0, -1.0, cols, vals, ky)
    for a in range(ky):
        ca = 0 if a < kx else 1
        for b in range(ky):
            cb = 0 if b < kx else 1
            bab = b00 if ca == 0 and cb == 0 else (b11 if ca == 1 and cb == 1 else b01)
            _band_add(ab, cols[a], cols[b], vals[a] * bab * vals[b])


@njit(cache=True, nogil=True, error_model="numpy")
def _pair_tangent(fei_r, fef_r, pp, pq, b00, b01, b11, cols, vals, ab, slot, L):
    """The pair block ``J_d^T B J_d`` of one force element: into the band (``slot < 0``,
    :func:`_pair_block`) or, for an element that couples coordinates further apart than the
    band, stored as low-rank slot ``slot`` of ``L``: the two rows of ``J_d`` and ``B``
    (:func:`lowrank_prepare` and :func:`lowrank_solve` apply it). A new kind whose tangent has
    this form calls this function and may then couple any bodies."""
    if slot < 0:
        _pair_block(fei_r, fef_r, pp, pq, b00, b01, b11, cols, vals, ab)
        return
    uc, uv, un, ub = L[1], L[2], L[3], L[4]
    for c in range(2):
        cx = 1.0 - c
        cy = float(c)
        ci = uc[slot, c]
        cv = uv[slot, c]
        k = point_jac(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], pp, cx, cy, 1.0, ci, cv, 0)
        k = point_jac(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], pq, cx, cy, -1.0, ci, cv, k)
        un[slot, c] = k
    ub[slot, 0] = b00
    ub[slot, 1] = b01
    ub[slot, 2] = b11


@njit(cache=True, nogil=True, error_model="numpy")
def force_elements_tangent(q, v, t, fei, fef, fst, c_v, ab, pp, pq, cols, vals, L):
    """Add ``-dQ/dq - c_v dQ/dv`` of the force elements (the symmetric part) to the general band
    ``ab``; the pair block ``J_d^T B J_d`` of an element whose slot ``L[0][e]`` is >= 0 (its
    points' coordinates further apart than the band) goes to the low-rank part ``L`` instead
    (:func:`_pair_tangent`; ``L`` None: every element in the band)."""
    for e in range(fei.shape[0]):
        kind = fei[e, 0]
        if kind == FE_FORCE:
            if fei[e, 1] == _PT_RIGID:  # Q_theta = F . dP/dtheta; d/dtheta = -F . (A s)
                point_eval(fei[e, 1], fei[e, 2], fei[e, 3], fef[e, 0:4], q, v, pp)
                i = fei[e, 2] + 2
                ab[_BW, i] += fef[e, 8] * pp[7] - fef[e, 9] * pp[6]
        elif kind == FE_SPRING:
            ux, uy, ln, _, fs = _spring_state(fei[e], fef[e], q, v, pp, pq)
            kk = fef[e, 8] + c_v * fef[e, 9]
            g = fs / ln  # f (I - u u^T) / l: the geometric part (the damping term's
            # non-symmetric share c u ddot^T (I - u u^T) / l is left out)
            b00 = kk * ux * ux + g * (1.0 - ux * ux)
            b01 = kk * ux * uy - g * ux * uy
            b11 = kk * uy * uy + g * (1.0 - uy * uy)
            if L is None:  # (pruned by numba at compile time)
                _pair_block(fei[e], fef[e], pp, pq, b00, b01, b11, cols, vals, ab)
            else:
                _pair_tangent(fei[e], fef[e], pp, pq, b00, b01, b11, cols, vals, ab, L[0][e], L)
            fx = fs * ux
            fy = fs * uy
            if fei[e, 1] == _PT_RIGID:
                i = fei[e, 2] + 2
                ab[_BW, i] -= fx * pp[7] - fy * pp[6]
            if fei[e, 4] == _PT_RIGID:
                i = fei[e, 5] + 2
                ab[_BW, i] += fx * pq[7] - fy * pq[6]
        elif kind == FE_CONTACT:
            delta, ddot, nx, ny, el, vt, s, fn, _ = circle_forces(
                fei[e], fef[e], fst[e], q, v, pp, pq
            )
            if fn <= 0.0:
                continue
            # normal: d(s F n)/de = -F_delta n n^T + s F (I - n n^T) / |e|, d/de' = -F_ddot n n^T
            kd, cd = _normal_derivatives(fef[e], delta, ddot, _contact_v0(fef[e], fst[e], ddot))
            kk = kd + c_v * cd
            g = -s * fn / el
            # friction: the regularised law's viscous stiffness c_v mu'(v_t) F_n t t^T along
            # t = (-n_y, n_x) (_friction_viscous; rigid markers' radius terms left out)
            kt = _friction_viscous(fef[e], vt, fn, c_v)
            b00 = kk * nx * nx + g * (1.0 - nx * nx) + kt * ny * ny
            b01 = kk * nx * ny - g * nx * ny - kt * nx * ny
            b11 = kk * ny * ny + g * (1.0 - ny * ny) + kt * nx * nx
            if L is None:  # (pruned by numba at compile time)
                _pair_block(fei[e], fef[e], pp, pq, b00, b01, b11, cols, vals, ab)
            else:
                _pair_tangent(fei[e], fef[e], pp, pq, b00, b01, b11, cols, vals, ab, L[0][e], L)
            fx = s * fn * nx  # on Q (P: the opposite)
            fy = s * fn * ny
            if fei[e, 1] == _PT_RIGID:
                i = fei[e, 2] + 2
                ab[_BW, i] -= fx * pp[7] - fy * pp[6]
            if fei[e, 4] == _PT_RIGID:
                i = fei[e, 5] + 2
                ab[_BW, i] += fx * pq[7] - fy * pq[6]
        elif kind == FE_LINE:
            _line_tangent(fei[e], fef[e], fst[e], q, v, c_v, ab, pp, pq, cols, vals)


# ------------------------------------------------------------------------------------------
# circle contact (FE_CONTACT)
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def contact_kinematics(fei_r, fef_r, q, v, pp, pq):
    """Geometry of a circle contact between the circle of radius ``r_p`` centred at point P and
    the circle of radius ``r_q`` centred at Q; ``e = x_Q - x_P``, ``n = e / |e|``, ``t = (-n_y,
    n_x)``. Returns ``(delta, delta_dot, nx, ny, |e|, v_t, s)``:

    * inside (journal Q inside bearing P): ``delta = |e| - (r_p - r_q)``, ``s = -1``;
    * outside (two discs): ``delta = r_p + r_q - |e|``, ``s = +1``;

    the force on Q is ``s F_n n`` (and ``-s F_n n`` on P), ``delta_dot = -s n . e'`` (> 0
    closing). ``v_t`` is the sliding speed of Q's material point at the contact relative to P's
    along ``t``: both contact points lie on the line of centres, at ``x_P + r_p n`` (P) and
    ``x_Q - s r_q n`` (Q), so for rigid markers (angular speeds ``w``) ``v_t = (v_Q - v_P) . t
    - s w_Q r_q - w_P r_p``; a beam point or point mass carries no rotation (``w = 0``)."""
    point_eval(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], q, v, pp)
    point_eval(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], q, v, pq)
    ex = pq[0] - pp[0]
    ey = pq[1] - pp[1]
    el = math.sqrt(ex * ex + ey * ey)
    if el > 0.0:
        nx = ex / el
        ny = ey / el
    else:  # concentric: any direction (no contact unless the discs overlap fully)
        nx = 1.0
        ny = 0.0
    r_p = fef_r[C_RP]
    r_q = fef_r[C_RQ]
    dvx = pq[2] - pp[2]
    dvy = pq[3] - pp[3]
    if fef_r[C_INSIDE] != 0.0:
        s = -1.0
        delta = el - (r_p - r_q)
    else:
        s = 1.0
        delta = r_p + r_q - el
    ddot = -s * (nx * dvx + ny * dvy)
    wp = v[fei_r[2] + 2] if fei_r[1] == _PT_RIGID else 0.0
    wq = v[fei_r[5] + 2] if fei_r[4] == _PT_RIGID else 0.0
    vt = -ny * dvx + nx * dvy - s * wq * r_q - wp * r_p
    return delta, ddot, nx, ny, el, vt, s


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _point_pv_inline(kind, off, n, w, q, v):
    """Position and velocity ``(x, y, vx, vy)`` of a point as scalars (no scratch arrays)."""
    if kind == _PT_GROUND:
        return w[0], w[1], 0.0, 0.0
    if kind == _PT_RIGID:
        c = math.cos(q[off + 2])
        s = math.sin(q[off + 2])
        ax = c * w[0] - s * w[1]
        ay = s * w[0] + c * w[1]
        om = v[off + 2]
        return q[off] + ax, q[off + 1] + ay, v[off] - om * ay, v[off + 1] + om * ax
    px = 0.0
    py = 0.0
    vx = 0.0
    vy = 0.0
    for a in range(n):
        i = off + 2 * a
        px += w[a] * q[i]
        py += w[a] * q[i + 1]
        vx += w[a] * v[i]
        vy += w[a] * v[i + 1]
    return px, py, vx, vy


@njit(cache=True, nogil=True, error_model="numpy")
def _point_pv(kind, off, n, w, q, v):
    """:func:`_point_pv_inline` as a call. The constraint rows, evaluated in every Newton
    iteration, inline it (a call costs half of their time); other callers call this form,
    which keeps their compilation short."""
    return _point_pv_inline(kind, off, n, w, q, v)


@njit(cache=True, nogil=True, error_model="numpy")
def contact_delta(fei_r, fef_r, q, v):
    """``(delta, delta_dot)`` of a contact element of either kind (:func:`circle_delta`,
    :func:`line_kinematics`), allocation free for the per-step state update and the gaps."""
    if fei_r[0] == FE_LINE:
        r = line_kinematics(fei_r, fef_r, q, v)
        return r[0], r[1]
    return circle_delta(fei_r, fef_r, q, v)


@njit(cache=True, nogil=True, error_model="numpy")
def circle_delta(fei_r, fef_r, q, v):
    """``(delta, delta_dot)`` of a circle contact (as :func:`contact_kinematics`, allocation
    free for the per-step state update and the gaps)."""
    xp, yp, vxp, vyp = _point_pv(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], q, v)
    xq, yq, vxq, vyq = _point_pv(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], q, v)
    ex = xq - xp
    ey = yq - yp
    el = math.sqrt(ex * ex + ey * ey)
    nx = ex / el if el > 0.0 else 1.0
    ny = ey / el if el > 0.0 else 0.0
    ddot_out = nx * (vxq - vxp) + ny * (vyq - vyp)  # d|e|/dt
    if fef_r[C_INSIDE] != 0.0:
        return el - (fef_r[C_RP] - fef_r[C_RQ]), ddot_out
    return fef_r[C_RP] + fef_r[C_RQ] - el, -ddot_out


@njit(cache=True, nogil=True, error_model="numpy")
def _contact_v0(fef_r, fst_r, ddot):
    """Approach speed of the current impact: the carried value once the onset has been
    recorded, otherwise (within the step that first penetrates) the current closing speed."""
    if fst_r[S_FLAG] != 0.0:
        return fst_r[S_V0]
    return max(ddot, fef_r[C_NPAR + P_V0MIN])


@njit(cache=True, nogil=True, error_model="numpy")
def contact_forces(fei_r, fef_r, fst_r, q, v, pp, pq):
    """``(delta, delta_dot, nx, ny, a, v_t, b, F_n, F_t)`` of a contact element of either kind:
    penetration (m), its rate (m/s, > 0 closing), the unit normal, the sliding speed (m/s), the
    normal force ``F_n >= 0`` and the friction force ``F_t = -mu_eff(v_t) F_n`` (N); ``a``,
    ``b`` are the kind's own (circle, :func:`circle_forces`: ``|e|`` and the side ``s``; line,
    :func:`line_forces`: the gap ``g`` and the coordinate ``s`` along the line)."""
    if fei_r[0] == FE_LINE:
        d, dd, nx, ny, s, g, vt, fn, ft, _ = line_forces(fei_r, fef_r, fst_r, q, v)
        return d, dd, nx, ny, g, vt, s, fn, ft
    return circle_forces(fei_r, fef_r, fst_r, q, v, pp, pq)


@njit(cache=True, nogil=True, error_model="numpy")
def circle_forces(fei_r, fef_r, fst_r, q, v, pp, pq):
    """``(delta, delta_dot, nx, ny, |e|, v_t, s, F_n, F_t)`` of one circle contact: ``F_n >= 0``
    the normal force, ``F_t = -mu_eff(v_t) F_n`` the friction force on Q along ``t`` (N)."""
    delta, ddot, nx, ny, el, vt, s = contact_kinematics(fei_r, fef_r, q, v, pp, pq)
    fn = 0.0
    ft = 0.0
    if delta >= 0.0 and (fst_r[S_FLAG] != 0.0 or fef_r[C_EVENTS] == 0.0):
        law = int(fef_r[C_LAW])
        par = fef_r[C_NPAR:C_FPAR]
        fn = normal_force(law, par, delta, ddot, _contact_v0(fef_r, fst_r, ddot))
        fl = int(fef_r[C_FRIC])
        if fl != 0 and fn > 0.0:
            ft = -friction_coefficient(fl, fef_r[C_FPAR:C_FEND], vt) * fn
    return delta, ddot, nx, ny, el, vt, s, fn, ft


@njit(cache=True, nogil=True, error_model="numpy")
def _contact_potential(fef_r, delta):
    """Elastic energy (J) of the normal law's spring part at penetration ``delta``."""
    if delta <= 0.0:
        return 0.0
    law = int(fef_r[C_LAW])
    k = fef_r[C_NPAR + P_STIFF]
    if law == KELVIN_VOIGT:
        return 0.5 * k * delta * delta
    n = fef_r[C_NPAR + P_EXP]
    return k * delta ** (n + 1.0) / (n + 1.0)


@njit(cache=True, nogil=True, error_model="numpy")
def _normal_derivatives(fef_r, delta, ddot, v0):
    """``(dF/d delta, dF/d delta_dot)`` of the normal law (0 where the force is clipped)."""
    law = int(fef_r[C_LAW])
    par = fef_r[C_NPAR:C_FPAR]
    if normal_force(law, par, delta, ddot, v0) <= 0.0:
        return 0.0, 0.0
    if law == KELVIN_VOIGT:
        return par[P_STIFF], par[P_DAMP]
    n = par[P_EXP]
    k = par[P_STIFF]
    if law == HERTZ:
        return n * k * delta ** (n - 1.0), 0.0
    w = par[P_CHI] / max(v0, par[P_V0MIN])
    return n * k * delta ** (n - 1.0) * (1.0 + w * ddot), k * delta**n * w


@njit(cache=True, nogil=True, error_model="numpy")
def _contact_apply(fei_r, fef_r, nx, ny, s, fn, ft, f, pp, pq, cols, vals):
    """Add the generalized forces of normal force ``fn`` and friction ``ft`` (on Q along t) to
    ``f``: forces at the circle centres, plus the friction moments about the centres of rigid
    markers (``-s r_q F_t`` on Q, ``r_p F_t`` on P ... with the contact points of
    :func:`contact_kinematics`)."""
    tx = -ny
    ty = nx
    fx = s * fn * nx + ft * tx  # on Q
    fy = s * fn * ny + ft * ty
    k = point_jac(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], pq, 1.0, 0.0, fx, cols, vals, 0)
    k = point_jac(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], pq, 0.0, 1.0, fy, cols, vals, k)
    k = point_jac(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], pp, 1.0, 0.0, -fx, cols, vals, k)
    k = point_jac(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], pp, 0.0, 1.0, -fy, cols, vals, k)
    for i in range(k):
        f[cols[i]] += vals[i]
    if ft != 0.0:
        # moment of the friction force about each circle centre: (contact point - centre) x F;
        # Q: (-s r_q n) x (ft t) = -s r_q ft; P: (r_p n) x (-ft t) = -r_p ft
        if fei_r[4] == _PT_RIGID:
            f[fei_r[5] + 2] -= s * fef_r[C_RQ] * ft
        if fei_r[1] == _PT_RIGID:
            f[fei_r[2] + 2] -= fef_r[C_RP] * ft


# ------------------------------------------------------------------------------------------
# point against a line (FE_LINE)
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def line_kinematics(fei_r, fef_r, q, v):
    """Geometry of a line contact: point P (the centre of a disc of radius ``r``, 0 for a bare
    point) against the line through Q with unit direction ``d = R(theta_L) d_0`` (``d_0``
    in the frame of the line's body, angle ``theta_L = q[fei[7]]``; the ground: ``fei[7] =
    -1``, ``theta_L = 0``) and normal ``n = (-d_y, d_x)`` (``d`` turned by +90 deg, towards the
    allowed side). With ``w = x_P - x_Q``: the coordinate along the line ``s = d . w``, the gap
    ``g = n . w - r`` (> 0 apart) and, within the segment ``s_min <= s <= s_max``, the
    penetration ``delta = -g``. Outside the segment there is no contact: ``delta = -|e|``, the
    distance from the contact point ``x_c = x_P - r n`` to the segment's nearer end (``e = g n +
    ex d``, ``ex`` the excess of ``s`` over the segment), continuous with ``-g`` at the ends on
    the allowed side.

    Returns ``(delta, delta_dot, nx, ny, s, g, v_t, ex)``: ``delta_dot`` > 0 closing; ``v_t``
    the sliding speed along ``d`` of P's material point at ``x_c`` relative to the line body's
    material point there, ``v_t = d . (v_P - v_Q) + r omega_P + g omega_L`` (``omega_P``: a
    rigid marker's angular speed, 0 for a beam point or point mass; ``omega_L``: the line's);
    ``ex = 0`` within the segment. The normal force acts on P along ``n``, the friction along
    ``d``, both at ``x_c``, and the opposite forces on the line's body at the same point."""
    xp, yp, vxp, vyp = _point_pv(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], q, v)
    xq, yq, vxq, vyq = _point_pv(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], q, v)
    lo = fei_r[7]
    d0x = fef_r[L_DX]
    d0y = fef_r[L_DY]
    if lo >= 0:
        c = math.cos(q[lo])
        sn = math.sin(q[lo])
        dx = c * d0x - sn * d0y
        dy = sn * d0x + c * d0y
        om = v[lo]
    else:
        dx = d0x
        dy = d0y
        om = 0.0
    nx = -dy
    ny = dx
    wx = xp - xq
    wy = yp - yq
    dvx = vxp - vxq
    dvy = vyp - vyq
    r = fef_r[L_R]
    hn = nx * wx + ny * wy  # height of P above the line
    s = dx * wx + dy * wy
    g = hn - r
    gdot = nx * dvx + ny * dvy - om * s  # dn/dt = -omega_L d
    wp = v[fei_r[2] + 2] if fei_r[1] == _PT_RIGID else 0.0
    vt = dx * dvx + dy * dvy + r * wp + g * om
    ex = 0.0
    if s > fef_r[L_SMAX]:
        ex = s - fef_r[L_SMAX]
    elif s < fef_r[L_SMIN]:
        ex = s - fef_r[L_SMIN]
    if ex == 0.0:
        return -g, -gdot, nx, ny, s, g, vt, 0.0
    el = math.sqrt(g * g + ex * ex)
    sdot = dx * dvx + dy * dvy + om * hn  # dd/dt = omega_L n
    return -el, -(g * gdot + ex * sdot) / el, nx, ny, s, g, vt, ex


@njit(cache=True, nogil=True, error_model="numpy")
def line_forces(fei_r, fef_r, fst_r, q, v):
    """``(delta, delta_dot, nx, ny, s, g, v_t, F_n, F_t, ex)`` of one line contact
    (:func:`line_kinematics`): ``F_n >= 0`` the normal force on P along ``n`` (the law of
    ``fef[C_LAW]`` with the carried approach speed, as the circle contact), ``F_t =
    -mu_eff(v_t) F_n`` the friction force on P along ``d`` (N)."""
    delta, ddot, nx, ny, s, g, vt, ex = line_kinematics(fei_r, fef_r, q, v)
    fn = 0.0
    ft = 0.0
    if delta >= 0.0 and (fst_r[S_FLAG] != 0.0 or fef_r[C_EVENTS] == 0.0):
        law = int(fef_r[C_LAW])
        par = fef_r[C_NPAR:C_FPAR]
        fn = normal_force(law, par, delta, ddot, _contact_v0(fef_r, fst_r, ddot))
        fl = int(fef_r[C_FRIC])
        if fl != 0 and fn > 0.0:
            ft = -friction_coefficient(fl, fef_r[C_FPAR:C_FEND], vt) * fn
    return delta, ddot, nx, ny, s, g, vt, fn, ft, ex


@njit(cache=True, nogil=True, error_model="numpy")
def _line_grad(fei_r, fef_r, cx, cy, pp, pq, cols, vals, k, a_p, a_l):
    """Append to ``cols``/``vals`` from ``k`` the gradient of ``c . (x_P - x_Q)`` (``c`` fixed)
    plus ``a_p`` on P's angle (a rigid marker) and ``a_l`` on the line body's angle; return the
    new count. With ``c = n``, ``a_p = 0``, ``a_l = -s``: the gradient of the gap ``g``; with
    ``c = d``, ``a_p = r``, ``a_l = g``: that of the sliding speed, ``v_t = J_t v``."""
    k = point_jac(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], pp, cx, cy, 1.0, cols, vals, k)
    k = point_jac(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], pq, cx, cy, -1.0, cols, vals, k)
    if fei_r[1] == _PT_RIGID and a_p != 0.0:
        cols[k] = fei_r[2] + 2
        vals[k] = a_p
        k += 1
    if fei_r[7] >= 0:
        cols[k] = fei_r[7]
        vals[k] = a_l
        k += 1
    return k


@njit(cache=True, nogil=True, error_model="numpy")
def _line_apply(fei_r, fef_r, nx, ny, s, g, fn, ft, q, v, f, pp, pq, cols, vals):
    """Add the generalized forces ``F_n grad g + F_t J_t`` of a line contact to ``f``: the force
    ``F_n n + F_t d`` at the contact point on P (a rigid marker: the friction moment ``r F_t``
    about it), the opposite force on the line's body at the same point (moment ``-s F_n + g
    F_t`` about Q)."""
    point_eval(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], q, v, pp)
    point_eval(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], q, v, pq)
    dx = ny
    dy = -nx
    fx = fn * nx + ft * dx
    fy = fn * ny + ft * dy
    k = _line_grad(fei_r, fef_r, fx, fy, pp, pq, cols, vals, 0, fef_r[L_R] * ft, g * ft - s * fn)
    for i in range(k):
        f[cols[i]] += vals[i]


@njit(cache=True, nogil=True, error_model="numpy")
def _outer_band(ab, cols, vals, k0, k1, w):
    """``K += w u u^T`` for the vector ``u`` stored in ``cols``/``vals`` entries ``k0:k1``."""
    for a in range(k0, k1):
        x = w * vals[a]
        for b in range(k0, k1):
            _band_add(ab, cols[a], cols[b], x * vals[b])


@njit(cache=True, nogil=True, error_model="numpy")
def _friction_viscous(fef_r, vt, fn, c_v):
    """``c_v mu'(v_t) F_n``: the iteration matrix's share of a contact's regularised friction
    along its sliding direction (``-c_v dF_t/dv_t``; 0 without friction or where the law is
    flat). Left out of the circle contact's tangent, a steep law (coulomb-transition at mu 0.1,
    coulomb-tanh at v_ref 1 mm/s) on a journal of small mass (an ANCF rod's end node) made
    Newton diverge at any step size: this term outweighs the node's inertia ``c_a m``."""
    fl = int(fef_r[C_FRIC])
    if fl == 0 or c_v == 0.0:
        return 0.0
    return c_v * friction_slope(fl, fef_r[C_FPAR:C_FEND], vt) * fn


@njit(cache=True, nogil=True, error_model="numpy")
def _line_tangent(fei_r, fef_r, fst_r, q, v, c_v, ab, pp, pq, cols, vals):
    """``-dQ/dq - c_v dQ/dv`` of a line contact (symmetric, as the iteration matrix):

    * normal: ``(F_delta + c_v F_ddot) grad g grad g^T - F_n d2g/dq2`` (the law's stiffness and
      damping, and the geometric stiffness of the gap's curvature: a rigid marker's angle, the
      line body's angle and its coupling to the line body's position and to P);
    * friction: ``c_v mu'(v_t) F_n J_t J_t^T`` (the regularised law's viscous stiffness).

    Left out (not symmetric, or of the order of the speeds): ``mu (F_delta + c_v F_ddot) J_t
    grad g^T``, the damping force's geometric share ``F_ddot grad g (d2g/dq2 v)^T`` and the
    friction's ``F_t dJ_t/dq``, ``mu' F_n J_t (dv_t/dq)^T``; all vanish at ``v = 0`` (and
    for a point mass on a ground line all but the first)."""
    delta, ddot, nx, ny, s, g, vt, fn, _, _ = line_forces(fei_r, fef_r, fst_r, q, v)
    if fn <= 0.0:
        return
    point_eval(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], q, v, pp)
    point_eval(fei_r[4], fei_r[5], fei_r[6], fef_r[4:8], q, v, pq)
    dx = ny
    dy = -nx
    kd, cd = _normal_derivatives(fef_r, delta, ddot, _contact_v0(fef_r, fst_r, ddot))
    k1 = _line_grad(fei_r, fef_r, nx, ny, pp, pq, cols, vals, 0, 0.0, -s)
    _outer_band(ab, cols, vals, 0, k1, kd + c_v * cd)
    kt = _friction_viscous(fef_r, vt, fn, c_v)
    if kt != 0.0:
        k2 = _line_grad(fei_r, fef_r, dx, dy, pp, pq, cols, vals, k1, fef_r[L_R], g)
        _outer_band(ab, cols, vals, k1, k2, kt)
    # -F_n d2g/dq2: g = n(theta_L) . (x_P - x_L) - n_0 . a_Q - r
    if fei_r[1] == _PT_RIGID:  # d2g/dtheta_P^2 = -n . (A_P a_P), A a = (pv[7], -pv[6])
        i = fei_r[2] + 2
        ab[_BW, i] += fn * (nx * pp[7] - ny * pp[6])
    lo = fei_r[7]
    if lo >= 0:
        # d2g/dtheta_L^2 = -n . (x_P - x_L) = -(g + r) - n . (A_L a_Q)
        ab[_BW, lo] += fn * (g + fef_r[L_R] + nx * pq[7] - ny * pq[6])
        # d2g/dtheta_L dx_L = d (x_L: the line body's position, Q's coordinates 0 and 1)
        o = fei_r[5]
        _band_add(ab, lo, o, -fn * dx)
        _band_add(ab, o, lo, -fn * dx)
        _band_add(ab, lo, o + 1, -fn * dy)
        _band_add(ab, o + 1, lo, -fn * dy)
        # d2g/dtheta_L dq_P = -d . dx_P/dq_P
        k3 = point_jac(fei_r[1], fei_r[2], fei_r[3], fef_r[0:4], pp, dx, dy, fn, cols, vals, 0)
        for a in range(k3):
            _band_add(ab, lo, cols[a], vals[a])
            _band_add(ab, cols[a], lo, vals[a])


@njit(cache=True, nogil=True, error_model="numpy")
def contact_samples(fei_r, fef_r, qs, vs, states, out):
    """Post-processing of one contact element over samples ``qs``, ``vs`` (k, n) with the
    carried state of each sample ``states`` (k, STATE_SIZE): ``out[i] = (delta, delta_dot,
    e_x, e_y, v_t, F_n, F_t, state)``; ``e``: a circle's eccentricity ``x_Q - x_P``, a line
    contact's offset of its contact point from the nearest point of the line (segment),
    ``g n`` within the segment (:func:`line_kinematics`)."""
    pp = np.empty(8)
    pq = np.empty(8)
    line = fei_r[0] == FE_LINE
    for i in range(qs.shape[0]):
        if line:
            d, dd, nx, ny, _, g, vt, fn, ft, ex = line_forces(fei_r, fef_r, states[i], qs[i], vs[i])
            out[i, 2] = g * nx + ex * ny  # g n + ex d, d = (n_y, -n_x)
            out[i, 3] = g * ny - ex * nx
        else:
            d, dd, nx, ny, el, vt, _, fn, ft = circle_forces(
                fei_r, fef_r, states[i], qs[i], vs[i], pp, pq
            )
            out[i, 2] = nx * el
            out[i, 3] = ny * el
        out[i, 0] = d
        out[i, 1] = dd
        out[i, 4] = vt
        out[i, 5] = fn
        out[i, 6] = ft
        out[i, 7] = 1.0 if fn > 0.0 else 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def contact_gaps(q, S, out):
    """Signed gap ``-delta`` (m; > 0 apart, < 0 overlapping) of every force element into ``out``
    (one entry per element, ``+inf`` for elements that are not contacts)."""
    fei = S[7]
    fef = S[8]
    for e in range(fei.shape[0]):
        if is_contact(fei[e, 0]):
            out[e] = -contact_delta(fei[e], fef[e], q, q)[0]
        else:
            out[e] = np.inf


@njit(cache=True, nogil=True, error_model="numpy")
def contact_breach(q, S):
    """Index of the first circle contact between two discs (from outside) whose penetration at
    ``q`` exceeds the depth its geometry describes, ``ADMISSIBLE_OVERLAP_SHARE (r_p + r_q)``
    (:func:`ancf_beam.mbs.laws.admissible_overlap`), or -1: a status for the integrators,
    which stop the run there (a journal in its bearing and a line contact keep their normal at
    any depth and are not checked)."""
    fei = S[7]
    fef = S[8]
    for e in range(fei.shape[0]):
        if fei[e, 0] == FE_CONTACT and fef[e, C_INSIDE] == 0.0:
            limit = ADMISSIBLE_OVERLAP_SHARE * (fef[e, C_RP] + fef[e, C_RQ])
            if circle_delta(fei[e], fef[e], q, q)[0] > limit:
                return e
    return -1


@njit(cache=True, nogil=True, error_model="numpy")
def dissipation_power(q, v, S, fst, pp, pq):
    """Power (W, >= 0) the force elements dissipate at ``(q, v)``: for the contacts
    ``(F_n - F_el) delta_dot - F_t v_t``, with ``F_el`` the elastic part of the normal law
    (``K delta^n``, ``k delta``) whose work is the contact's potential energy and ``F_t v_t``
    the power of friction (force on Q along ``t`` times the sliding speed); for the
    spring-dampers ``c l_dot^2``. The energy balance is then ``E + D - W_drive = const`` with
    ``D`` its time integral."""
    fei = S[7]
    fef = S[8]
    power = 0.0
    for e in range(fei.shape[0]):
        if fei[e, 0] == FE_SPRING:
            if fef[e, 9] != 0.0:
                ldot = _spring_state(fei[e], fef[e], q, v, pp, pq)[3]
                power += fef[e, 9] * ldot * ldot
            continue
        if not is_contact(fei[e, 0]):
            continue
        delta, ddot, _, _, _, vt, _, fn, ft = contact_forces(fei[e], fef[e], fst[e], q, v, pp, pq)
        if delta <= 0.0 or not (fst[e, S_FLAG] != 0.0 or fef[e, C_EVENTS] == 0.0):
            continue
        k = fef[e, C_NPAR + P_STIFF]
        if int(fef[e, C_LAW]) == KELVIN_VOIGT:
            f_el = k * delta
        else:
            f_el = k * delta ** fef[e, C_NPAR + P_EXP]
        power += (fn - f_el) * ddot - ft * vt
    return power


@njit(cache=True, nogil=True, error_model="numpy")
def update_force_state(q, v, t, S, fst):
    """Update the carried state of the force elements after an accepted step at ``(q, v, t)``:
    a contact that penetrates (``delta > 0``, or touches and closes) and was not in contact
    records the onset (approach
    speed ``v0 = delta_dot``, floored at the law's ``v0_min``, time, impact count); a contact in
    contact that has separated (``delta < 0`` and opening) clears its flag. Returns what
    :func:`contact_breach` returns at ``q`` (from the same penetrations, at no extra cost)."""
    fei = S[7]
    fef = S[8]
    breach = -1
    for e in range(fei.shape[0]):
        if not is_contact(fei[e, 0]):
            continue
        delta, ddot = contact_delta(fei[e], fef[e], q, v)
        if fst[e, S_FLAG] == 0.0:
            if delta > 0.0 or (delta == 0.0 and ddot > 0.0):  # touching and closing: onset
                contact_onset(e, ddot, t, fef, fst)
        elif delta < 0.0 and ddot < 0.0:
            fst[e, S_FLAG] = 0.0
        if breach < 0 and fei[e, 0] == FE_CONTACT and fef[e, C_INSIDE] == 0.0:
            if delta > ADMISSIBLE_OVERLAP_SHARE * (fef[e, C_RP] + fef[e, C_RQ]):
                breach = e
    return breach


@njit(cache=True, nogil=True, error_model="numpy")
def contact_onset(e, ddot, t, fef, fst):
    """Record the onset of an impact of contact element ``e`` at time ``t`` with closing speed
    ``ddot`` (an event locator calls it at ``delta = 0``)."""
    fst[e, S_V0] = max(ddot, fef[e, C_NPAR + P_V0MIN])
    fst[e, S_FLAG] = 1.0
    fst[e, S_IMPACTS] += 1.0
    fst[e, S_T0] = t


# ------------------------------------------------------------------------------------------
# system forces and tangent
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _beam_force_soa(q, kargs, layout, sargs, f):
    """Elastic force of one beam by the structure-of-arrays kernel of its ``layout`` (1: flat
    rows of fixed length, 2: split; :func:`ancf_beam.mbs.system._soa_entry`); returns U."""
    n_el, spa, spb, sppb = kargs[0], kargs[1], kargs[2], kargs[3]
    le, ea_t, ei_t, eps0_t, kap0_t, x, g = sargs
    if layout == 1:
        return kernels.soa_force_fixed(
            q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g, f
        )
    return kernels.soa_force_split(q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g, f)


@njit(cache=True, nogil=True, error_model="numpy")
def system_forces(q, v, t, S, fst, f, pp, pq, cols, vals):
    """``f = Q_g + Q_e(q) + Q_fe(q, v, t)`` (elastic forces of every beam, constant gravity,
    force elements). Returns (strain energy U, force-element potential) in J."""
    qg = S[2]
    beams = S[3]
    nonbeam = S[4]
    fei = S[7]
    fef = S[8]
    energy = 0.0
    # the beams by index: binding a beam's tuple to a name counts a reference of each of its
    # arrays, about 0.2 us per iteration (the same below and in timeloop.release_damage)
    for k in range(S[10]):  # the real beams
        o = beams[k][0]
        nd = beams[k][1]
        if beams[k][3] == 0:
            energy += kernels.elastic_force(q[o : o + nd], *beams[k][2], f[o : o + nd])
        else:
            energy += _beam_force_soa(
                q[o : o + nd], beams[k][2], beams[k][3], beams[k][4], f[o : o + nd]
            )
    for i in nonbeam:
        f[i] = 0.0
    for i in range(f.shape[0]):
        f[i] += qg[i]
    pot = 0.0
    if fei.shape[0] > 0:  # (a call passes every array: skipped when there is none)
        pot = force_elements(q, v, t, fei, fef, fst, f, pp, pq, cols, vals)
    return energy, pot


@njit(cache=True, nogil=True, error_model="numpy")
def system_tangent(q, v, t, lam, S, fst, c_v, ab, pp, pq, cols, vals, L):
    """``K_T + c_v C_fe + sum lam_r Phi_r,qq`` (beam tangent stiffness, force elements,
    constraint Hessian) as the general band ``ab`` (15, n) plus the low-rank part ``L``
    (:func:`_pair_tangent`: the force elements that leave the band, None when there are none;
    all of them cleared first, so that an element that adds nothing, an open contact, is
    inactive)."""
    for i in range(ab.shape[0]):
        for j in range(ab.shape[1]):
            ab[i, j] = 0.0
    if L is not None:
        ub = L[4]
        for p in range(ub.shape[0]):
            ub[p, 0] = 0.0
            ub[p, 1] = 0.0
            ub[p, 2] = 0.0
    beams = S[3]
    for k in range(S[10]):  # the real beams
        o = beams[k][0]
        nd = beams[k][1]
        kernels.assemble_tangent_banded(q[o : o + nd], *beams[k][2], ab[:, o : o + nd])
    force_elements_tangent(q, v, t, S[7], S[8], fst, c_v, ab, pp, pq, cols, vals, L)
    constraint_hessian_band(q, v, S[5], S[6], lam, ab, pp, pq)


# ------------------------------------------------------------------------------------------
# small dense LU (the constraint Schur complement, m x m)
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def lu_factor(a, piv):
    """In-place LU with partial pivoting; returns the smallest |pivot| / largest |entry| (0 when
    exactly singular)."""
    n = a.shape[0]
    amax = 0.0
    for i in range(n):
        for j in range(n):
            amax = max(amax, abs(a[i, j]))
    pmin = np.inf
    for k in range(n):
        p = k
        big = abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > big:
                big = abs(a[i, k])
                p = i
        piv[k] = p
        if p != k:
            for j in range(n):
                x = a[k, j]
                a[k, j] = a[p, j]
                a[p, j] = x
        pmin = min(pmin, big)
        if big == 0.0:
            return 0.0
        inv = 1.0 / a[k, k]
        for i in range(k + 1, n):
            a[i, k] *= inv
            lik = a[i, k]
            if lik != 0.0:
                for j in range(k + 1, n):
                    a[i, j] -= lik * a[k, j]
    if n == 0:
        return 1.0
    return pmin / amax if amax > 0 else 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def lu_solve(a, piv, b):
    """Solve in place with the factors of :func:`lu_factor`."""
    n = a.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            x = b[k]
            b[k] = b[p]
            b[p] = x
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= a[i, j] * b[j]
        b[i] = s
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= a[i, j] * b[j]
        b[i] = s / a[i, i]


@njit(cache=True, nogil=True, error_model="numpy")
def _solve_rows(kind, fac, lu, piv, xp, jc, jv, jn, y):
    """``y[r] = K^-1 J_r^T`` for every row ``r`` of ``J`` (row storage) with the band factors of
    ``K``."""
    for r in range(jn.shape[0]):
        yr = y[r]
        for i in range(yr.shape[0]):
            yr[i] = 0.0
        for k in range(jn[r]):
            yr[jc[r, k]] += jv[r, k]
        band_factor_solve(kind, fac, lu, piv, xp, yr)


@njit(cache=True, nogil=True, error_model="numpy")
def schur_prepare(kind, fac, lu, piv, xp, jc, jv, jn, y, smat, spiv):
    """``Y = K^-1 J^T`` (rows ``y[r]``) and the LU factors of ``S = J Y^T`` for a factorised
    band matrix ``K`` (:func:`ancf_beam.linalg.band_factor_solve`). Returns the pivot ratio of
    ``S`` (0: singular)."""
    _solve_rows(kind, fac, lu, piv, xp, jc, jv, jn, y)
    return _schur_factor(jc, jv, jn, y, smat, spiv)


@njit(cache=True, nogil=True, error_model="numpy")
def schur_prepare_lr(kind, fac, lu, piv, xp, L, jc, jv, jn, y, smat, spiv):
    """:func:`schur_prepare` for ``K = K_band + U B U^T``: the band factors of ``K_band`` and the
    low-rank part ``L`` prepared by :func:`lowrank_prepare`."""
    _solve_rows(kind, fac, lu, piv, xp, jc, jv, jn, y)
    slot, uc, uv, un, ub, yu, cap, cpiv, act, z, nact = L
    for r in range(jn.shape[0]):
        _lowrank_apply(uc, uv, un, ub, yu, cap, cpiv, act, z, nact[0], y[r])
    return _schur_factor(jc, jv, jn, y, smat, spiv)


@njit(cache=True, nogil=True, error_model="numpy")
def _schur_factor(jc, jv, jn, y, smat, spiv):
    """LU factors of ``S = J Y^T`` (``Y = K^-1 J^T`` by rows); returns its pivot ratio."""
    m = jn.shape[0]
    for r in range(m):
        for s in range(m):
            x = 0.0
            for k in range(jn[r]):
                x += jv[r, k] * y[s, jc[r, k]]
            smat[r, s] = x
    return lu_factor(smat, spiv)


# ------------------------------------------------------------------------------------------
# force elements outside the band: K = K_band + U B U^T by the push-through (Woodbury) identity
# ------------------------------------------------------------------------------------------
# ``L = (slot, uc, uv, un, ub, yu, cap, cpiv, act, z, nact)`` (System.lowrank_work): ``slot[e]``
# the low-rank slot of force element ``e`` (-1: in the band); per slot ``s`` the two rows of
# ``J_d`` (``uc[s, c, :un[s, c]]`` columns, ``uv`` values; ``c`` = x, y) and ``B`` (``ub[s] =
# (b00, b01, b11)``), written by :func:`_pair_tangent`; then, for the ``k = nact[0]`` active
# slots ``act[:k]`` (``B != 0``), ``yu[2a + c] = K_band^-1 U`` (``U`` the columns ``J_d^T``), the
# LU factors of the capacitance ``C = I + B U^T K_band^-1 U`` (``cap[:2k, :2k]``, ``cpiv``) and
# a work vector ``z``. With ``x = K_band^-1 r``:
#
#     (K_band + U B U^T)^-1 r = x - Y C^-1 B U^T x,      Y = K_band^-1 U,
#
# exact for any symmetric ``B``: singular (a contact's rank-one stiffness), indefinite (a spring
# in compression, the geometric terms) or zero (an open contact: the slot is skipped). ``B`` is
# never inverted, and ``det(K) = det(K_band) det(C)``, so ``C`` is singular only when ``K`` is.
@njit(cache=True, nogil=True, error_model="numpy")
def _u_dot(uc, uv, un, s, c, x):
    """Row ``c`` of slot ``s``'s ``J_d`` times ``x``."""
    acc = 0.0
    for k in range(un[s, c]):
        acc += uv[s, c, k] * x[uc[s, c, k]]
    return acc


@njit(cache=True, nogil=True, error_model="numpy")
def lowrank_prepare(kind, fac, lu, piv, xp, L):
    """Select the active slots of ``L`` (``B != 0``), solve ``yu = K_band^-1 U`` with the band
    factors of ``K_band`` and factorise the capacitance ``C`` (see above). Returns the pivot
    ratio of ``C`` (1 when no slot is active; 0 when ``K`` is singular)."""
    slot, uc, uv, un, ub, yu, cap, cpiv, act, z, nact = L
    k = 0
    for s in range(ub.shape[0]):
        if ub[s, 0] != 0.0 or ub[s, 1] != 0.0 or ub[s, 2] != 0.0:
            act[k] = s
            k += 1
    nact[0] = k
    if k == 0:
        return 1.0
    for a in range(k):
        s = act[a]
        for c in range(2):
            y = yu[2 * a + c]
            for i in range(y.shape[0]):
                y[i] = 0.0
            for j in range(un[s, c]):
                y[uc[s, c, j]] += uv[s, c, j]
            band_factor_solve(kind, fac, lu, piv, xp, y)
    for a in range(k):
        s = act[a]
        for col in range(2 * k):
            t0 = _u_dot(uc, uv, un, s, 0, yu[col])
            t1 = _u_dot(uc, uv, un, s, 1, yu[col])
            cap[2 * a, col] = ub[s, 0] * t0 + ub[s, 1] * t1
            cap[2 * a + 1, col] = ub[s, 1] * t0 + ub[s, 2] * t1
        cap[2 * a, 2 * a] += 1.0
        cap[2 * a + 1, 2 * a + 1] += 1.0
    return lu_factor(cap[: 2 * k, : 2 * k], cpiv[: 2 * k])


@njit(cache=True, nogil=True, error_model="numpy")
def lowrank_solve(L, x):
    """Overwrite ``x = K_band^-1 r`` with ``K^-1 r`` (factors of :func:`lowrank_prepare`)."""
    slot, uc, uv, un, ub, yu, cap, cpiv, act, z, nact = L
    _lowrank_apply(uc, uv, un, ub, yu, cap, cpiv, act, z, nact[0], x)


@njit(cache=True, nogil=True, error_model="numpy")
def _lowrank_apply(uc, uv, un, ub, yu, cap, cpiv, act, z, k, x):
    """:func:`lowrank_solve` on the unpacked arrays of ``L`` (``k`` active slots)."""
    if k == 0:
        return
    for a in range(k):
        s = act[a]
        t0 = _u_dot(uc, uv, un, s, 0, x)
        t1 = _u_dot(uc, uv, un, s, 1, x)
        z[2 * a] = ub[s, 0] * t0 + ub[s, 1] * t1
        z[2 * a + 1] = ub[s, 1] * t0 + ub[s, 2] * t1
    lu_solve(cap[: 2 * k, : 2 * k], cpiv[: 2 * k], z[: 2 * k])
    for col in range(2 * k):
        zc = z[col]
        y = yu[col]
        for i in range(x.shape[0]):
            x[i] -= zc * y[i]


# ------------------------------------------------------------------------------------------
# index-1 accelerations and multipliers
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def accel_index1(q, v, t, S, W, alpha, beta, a, lam):
    """Accelerations ``a`` and multipliers ``lam`` of ``[M J^T; J 0][a; lam] = [Q; gamma -
    2 alpha Phi' - beta^2 Phi]`` (Baumgarte ``alpha``, ``beta`` in 1/s) by the Schur complement
    with the constant mass factor. Returns (U, V_fe, max|Phi|, max|Phi'|, pivot ratio of the
    Schur complement; 0 when the constraints are singular)."""
    q, v, S, W, a, lam = borrow((q, v, S, W, a, lam))  # also called from Python, per RHS
    mfac = S[1]
    ei = S[5]
    ef = S[6]
    const_jac = S[9]
    (
        f,
        phi,
        dphi,
        jc,
        jv,
        jn,
        gam,
        phit,
        y,
        smat,
        spiv,
        bm,
        xp,
        pp,
        pq,
        cols,
        vals,
        lu_d,
        piv_d,
        dext,
        fst,
        flags,
    ) = W
    energy, pot = system_forces(q, v, t, S, fst, f, pp, pq, cols, vals)
    for i in range(a.shape[0]):
        a[i] = f[i]
    band_factor_solve(CHOLESKY, mfac, lu_d, piv_d, xp, a)
    m = ei.shape[0]
    if m == 0:
        return energy, pot, 0.0, 0.0, 1.0
    eval_constraints(q, v, t, ei, ef, dext, phi, jc, jv, jn, gam, phit, pp, pq)
    jac_mul(jc, jv, jn, v, dphi)
    pmax = 0.0
    vmax = 0.0
    for r in range(m):
        dphi[r] += phit[r]
        pmax = max(pmax, abs(phi[r]))
        vmax = max(vmax, abs(dphi[r]))
    ratio = 1.0
    if not (const_jac and flags[0] == 1):
        ratio = schur_prepare(CHOLESKY, mfac, lu_d, piv_d, xp, jc, jv, jn, y, smat, spiv)
        if ratio == 0.0:
            return energy, pot, pmax, vmax, 0.0
        flags[0] = 1
    jac_mul(jc, jv, jn, a, bm)
    for r in range(m):
        bm[r] -= gam[r] - 2.0 * alpha * dphi[r] - beta * beta * phi[r]
    lu_solve(smat, spiv, bm)
    for r in range(m):
        lam[r] = bm[r]
        yr = y[r]
        lr = bm[r]
        for i in range(a.shape[0]):
            a[i] -= lr * yr[i]
    return energy, pot, pmax, vmax, ratio


@njit(cache=True, nogil=True, error_model="numpy")
def project_velocity(q, v, t, S, W):
    """Mass-orthogonal projection of ``v`` onto ``Phi_q v + Phi_t = 0`` (Jacobian and Schur
    factors from the last :func:`accel_index1` / :func:`eval_constraints` at ``q``)."""
    ei = S[5]
    (
        f,
        phi,
        dphi,
        jc,
        jv,
        jn,
        gam,
        phit,
        y,
        smat,
        spiv,
        bm,
        xp,
        pp,
        pq,
        cols,
        vals,
        lu_d,
        piv_d,
        dext,
        fst,
        flags,
    ) = W
    m = ei.shape[0]
    if m == 0:
        return
    jac_mul(jc, jv, jn, v, bm)
    for r in range(m):
        bm[r] += phit[r]
    lu_solve(smat, spiv, bm)
    for r in range(m):
        yr = y[r]
        lr = bm[r]
        for i in range(v.shape[0]):
            v[i] -= lr * yr[i]


@njit(cache=True, nogil=True, error_model="numpy")
def project_position(q, t, S, W, tol, max_iter):
    """Mass-orthogonal Gauss-Newton projection of ``q`` onto ``Phi(q, t) = 0`` (``max|Phi|
    <= tol``). Returns the final ``max|Phi|``; leaves the Jacobian and Schur factors of the
    projected ``q`` in ``W``."""
    mfac = S[1]
    ei = S[5]
    ef = S[6]
    (
        f,
        phi,
        dphi,
        jc,
        jv,
        jn,
        gam,
        phit,
        y,
        smat,
        spiv,
        bm,
        xp,
        pp,
        pq,
        cols,
        vals,
        lu_d,
        piv_d,
        dext,
        fst,
        flags,
    ) = W
    m = ei.shape[0]
    if m == 0:
        return 0.0
    pmax = 0.0
    for it in range(max_iter + 1):
        eval_constraints(q, q, t, ei, ef, dext, phi, jc, jv, jn, gam, phit, pp, pq)  # v unused
        pmax = 0.0
        for r in range(m):
            pmax = max(pmax, abs(phi[r]))
            if phi[r] != phi[r]:  # NaN: a singular step; reported, not passed as converged
                return phi[r]
        if not (S[9] and flags[0] == 1):
            schur_prepare(CHOLESKY, mfac, lu_d, piv_d, xp, jc, jv, jn, y, smat, spiv)
            flags[0] = 1
        if pmax <= tol or it == max_iter:
            break
        for r in range(m):
            bm[r] = phi[r]
        lu_solve(smat, spiv, bm)
        for r in range(m):
            yr = y[r]
            lr = bm[r]
            for i in range(q.shape[0]):
                q[i] -= lr * yr[i]
    return pmax
