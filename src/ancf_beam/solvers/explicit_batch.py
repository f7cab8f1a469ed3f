"""Many beams stepped together: the central-difference scheme of :mod:`.explicit` for ``B``
models of the same mesh size in one structure-of-arrays time loop per block of up to
:data:`LANES` models.

Every array of a block is flat with the model index as its last, contiguous axis (``q[i *
LANES + b]`` is coordinate ``i`` of model ``b``), and every inner loop runs over the models, so
that LLVM vectorises across models: the element force of element ``el`` is computed for all
models at once, the banded mass solve (a recurrence along the unknowns, latency-bound for one
model) becomes independent recurrences side by side, and the per-step bookkeeping is paid once
for the block.

What may differ per model: modulus, density, section, their gradients and the defect profile
(every Gauss-point weight and reference strain), the load (gravity), the Rayleigh damping, the
initial state, ``dt``, ``t_end`` and the sampling. What must be shared: the number of elements
(so the loop bounds), the element length and the Gauss rules (the shape-function tables are
scalars of the loop). Models with other step counts run in the same loop: a model whose
regular steps are done is held (its state is no longer updated) while the others go on.

The scheme, the start, the damping, the energy bookkeeping, the stability guard, the sampling
and the shortened last step are those of :func:`ancf_beam.solvers.explicit.run_explicit`
operation by operation; the end of every model's run (its last step and final record) is
taken by that module's own kernels. The element force is evaluated with the same expressions
as the single model's structure-of-arrays kernel (rules whose axial and bending points are the
same, up to three points per pass) or its loop-per-point kernel (other rules), so a model's
results equal its run alone up to the order of floating-point summation: differences of a few
units of round-off per step (``tests/test_batch_soa.py`` bounds them).

Not supported (``ValueError``): damage (it rescales the weights during a run), the linear
strain measures (comparison only) and models of different mesh sizes, element lengths or Gauss
rules.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.borrow import borrow
from ancf_beam.linalg import FAST, aligned_copies, aligned_zeros, row_factor
from ancf_beam.results import DynamicsResult
from ancf_beam.solvers.explicit import (
    STATUS_ENERGY,
    STATUS_NONFINITE,
    STATUS_OK,
    ExplicitWork,
    instability_error,
    last_step,
    run_chunk,
    setup_run,
)
from ancf_beam.solvers.settings import EXPLICIT_INTEGRATOR, DynamicsSettings
from ancf_beam.solvers.timeloop import (
    damage_args,
    final_outputs,
    outputs,
    result_from_outputs,
    step_plan,
)

__all__ = ["BatchData", "batch_chunk", "run_explicit_batch"]

#: Models per block: the kernels run ``LANES`` models side by side, every array of a block
#: flat with rows of ``LANES`` entries (a compile-time constant: LLVM then knows the distance
#: between rows, groups the accesses of an array into one, and needs a handful of runtime
#: overlap checks instead of one per pair of rows, which it refuses). A batch is padded to
#: whole blocks with copies of its last model, whose results are discarded.
LANES = 8
#: Gauss points per pass of the element force (as kernels._PASS_POINTS)
_PASS = 3
_L = np.uint64(LANES)
# row offsets j * LANES, unsigned (numba wraps negative signed indices around, and LLVM does
# not always see through the selects that do it)
_R = tuple(np.uint64(j * LANES) for j in range(10))


class BatchData(NamedTuple):
    """Constant data of a block of LANES models (a numba argument); flat arrays whose rows of
    LANES entries hold one value per model (``a[row * LANES + b]``)."""

    n_el: int
    nl: int  # lanes in use (a multiple of 4, <= LANES): the loops' trip count
    spa: np.ndarray  # (na, 4) shared shape-function tables
    spb: np.ndarray  # (nb, 4)
    sppb: np.ndarray  # (nb, 4)
    gb: tuple  # same axial and bending points: a tuple as long as the rule; else ()
    ng: int  # max(na, nb)
    tab: np.ndarray  # rows (el, k, kind): EA w l_e, EI w l_e, eps0, kap0 at point k
    g_free: np.ndarray  # rows i < nf: gravity force on the free DOFs
    q_ref: np.ndarray  # rows i < n_dof
    rf: np.ndarray  # rows (i, component, 8): row factors of M + dt/2 C (linalg.row_factor)
    shared_rf: bool  # one factor for all models: rf[16 i + 8 c + k] (_solve_shared)
    mlb: np.ndarray  # rows (d, i): mass, lower band, free DOFs
    clb: np.ndarray  # rows (d, i): damping C, lower band (zeros for undamped models)
    damped: bool  # any model damped
    dt: np.ndarray  # (LANES,)
    growth_limit: np.ndarray  # (LANES,)
    n_regular: np.ndarray  # (LANES,) int: full steps of the numba loop per model
    sample_every: np.ndarray  # (LANES,) int
    snap_every: np.ndarray  # (LANES,) int


class BatchState(NamedTuple):
    q: np.ndarray  # rows i < n_dof
    dlt: np.ndarray  # rows i < nf
    dissipated: np.ndarray  # (LANES,)
    energy0: np.ndarray  # (LANES,)
    kinetic_max: np.ndarray  # (LANES,)


class BatchWork(NamedTuple):
    f: np.ndarray  # rows n_dof
    r: np.ndarray  # rows nf
    v: np.ndarray  # rows nf
    acc: np.ndarray  # rows 9: element force accumulators, then the doubled strain energy
    z: np.ndarray  # rows (i + 3, component): forward sweep, three zero rows in front
    w: np.ndarray  # rows (i, component): backward sweep, three zero rows behind
    wacc: np.ndarray  # (LANES,) damping power
    sv: np.ndarray  # (nf,) one model's central velocity on a sampled step
    smv: np.ndarray  # (nf,) its mass times velocity


class BatchOut(NamedTuple):
    tip: np.ndarray  # rows (sample, 2)
    energy: np.ndarray  # rows (sample, 4)
    snap: np.ndarray  # rows (snapshot, n_dof)
    i_sample: np.ndarray  # (LANES,) int
    i_snap: np.ndarray  # (LANES,) int


# ------------------------------------------------------------------------------------------
# numba kernels (one block of LANES models)
# ------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _point(k, t0_, spb, sppb, tab, e, acc, en):
    """Gauss point ``k`` (axial and bending term at the same point) of one element of one
    model (``tab[t0_ + kind * LANES]``: its weights and reference strains): the expressions
    of ``kernels._soa_point``, in the same order."""
    e0x, e0y, e1x, e1y, e2x, e2y, e3x, e3y = e
    g0x, g0y, g1x, g1y, g2x, g2y, g3x, g3y = acc
    s0, s1, s2, s3 = spb[k, 0], spb[k, 1], spb[k, 2], spb[k, 3]
    t0, t1, t2, t3 = sppb[k, 0], sppb[k, 1], sppb[k, 2], sppb[k, 3]
    rx = s0 * e0x + s1 * e1x + s2 * e2x + s3 * e3x
    ry = s0 * e0y + s1 * e1y + s2 * e2y + s3 * e3y
    ddx = t0 * e0x + t1 * e1x + t2 * e2x + t3 * e3x
    ddy = t0 * e0y + t1 * e1y + t2 * e2y + t3 * e3y
    g2 = rx * rx + ry * ry
    inv = 1.0 / g2
    nrm = np.sqrt(g2)
    eps = nrm - 1.0 - tab[t0_ + _R[2]]
    wa = tab[t0_]
    kabs = (rx * ddy - ry * ddx) * inv
    kap = kabs - tab[t0_ + _R[3]]
    wb = tab[t0_ + _R[1]]
    c = wb * kap * inv
    k2 = 2.0 * kabs
    ca = wa * eps * nrm * inv
    ax = c * (ddy - k2 * rx) + ca * rx
    ay = ca * ry - c * (ddx + k2 * ry)
    bx = -c * ry
    by = c * rx
    acc = (
        g0x + s0 * ax + t0 * bx,
        g0y + s0 * ay + t0 * by,
        g1x + s1 * ax + t1 * bx,
        g1y + s1 * ay + t1 * by,
        g2x + s2 * ax + t2 * bx,
        g2y + s2 * ay + t2 * by,
        g3x + s3 * ax + t3 * bx,
        g3y + s3 * ay + t3 * by,
    )
    return acc, en + wa * eps * eps + wb * kap * kap


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _pass(k0, n, first, el, ng, spb, sppb, tab, q, acc, nl):
    """Points ``k0 .. k0 + n - 1`` (compile-time constants) of element ``el`` of every model
    into ``acc`` (rows 0-7; row 8 collects the doubled energy)."""
    qo = np.uint64(4 * el * LANES)
    to = np.uint64((el * ng + k0) * 4 * LANES)
    step = _R[4]  # the next point's rows
    for b in range(nl):
        i = qo + b
        e = (
            q[i],
            q[i + _R[1]],
            q[i + _R[2]],
            q[i + _R[3]],
            q[i + _R[4]],
            q[i + _R[5]],
            q[i + _R[6]],
            q[i + _R[7]],
        )
        if first:
            a = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        else:
            a = (
                acc[b],
                acc[_R[1] + b],
                acc[_R[2] + b],
                acc[_R[3] + b],
                acc[_R[4] + b],
                acc[_R[5] + b],
                acc[_R[6] + b],
                acc[_R[7] + b],
            )
        t = to + b
        a, s = _point(k0, t, spb, sppb, tab, e, a, 0.0)
        if n > 1:
            a, s = _point(k0 + 1, t + step, spb, sppb, tab, e, a, s)
        if n > 2:
            a, s = _point(k0 + 2, t + step + step, spb, sppb, tab, e, a, s)
        acc[b], acc[_R[1] + b], acc[_R[2] + b], acc[_R[3] + b] = a[0], a[1], a[2], a[3]
        acc[_R[4] + b], acc[_R[5] + b], acc[_R[6] + b], acc[_R[7] + b] = a[4], a[5], a[6], a[7]
        acc[_R[8] + b] += s


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _split_element(el, ng, spa, spb, sppb, tab, q, acc, nl):
    """Rules with different axial and bending points: one loop over the models per Gauss
    point (the expressions of ``kernels._axial_at`` and ``kernels._bending_at``)."""
    qo = np.uint64(4 * el * LANES)
    for j in range(8):
        for b in range(nl):
            acc[np.uint64(j * LANES) + b] = 0.0
    for k in range(spa.shape[0]):
        s0, s1, s2, s3 = spa[k, 0], spa[k, 1], spa[k, 2], spa[k, 3]
        to = np.uint64((el * ng + k) * 4 * LANES)
        for b in range(nl):
            i = qo + b
            rx = s0 * q[i] + s1 * q[i + _R[2]] + s2 * q[i + _R[4]] + s3 * q[i + _R[6]]
            ry = s0 * q[i + _R[1]] + s1 * q[i + _R[3]] + s2 * q[i + _R[5]] + s3 * q[i + _R[7]]
            w = tab[to + b]
            nrm = np.sqrt(rx * rx + ry * ry)
            eps = nrm - 1.0 - tab[to + _R[2] + b]
            c = w * eps / nrm
            cx = c * rx
            cy = c * ry
            acc[_R[8] + b] += w * eps * eps
            acc[b] += s0 * cx
            acc[_R[1] + b] += s0 * cy
            acc[_R[2] + b] += s1 * cx
            acc[_R[3] + b] += s1 * cy
            acc[_R[4] + b] += s2 * cx
            acc[_R[5] + b] += s2 * cy
            acc[_R[6] + b] += s3 * cx
            acc[_R[7] + b] += s3 * cy
    for k in range(spb.shape[0]):
        s0, s1, s2, s3 = spb[k, 0], spb[k, 1], spb[k, 2], spb[k, 3]
        t0, t1, t2, t3 = sppb[k, 0], sppb[k, 1], sppb[k, 2], sppb[k, 3]
        to = np.uint64((el * ng + k) * 4 * LANES)
        for b in range(nl):
            i = qo + b
            a0x, a0y, a1x, a1y = q[i], q[i + _R[1]], q[i + _R[2]], q[i + _R[3]]
            b0x, b0y, b1x, b1y = q[i + _R[4]], q[i + _R[5]], q[i + _R[6]], q[i + _R[7]]
            rx = s0 * a0x + s1 * a1x + s2 * b0x + s3 * b1x
            ry = s0 * a0y + s1 * a1y + s2 * b0y + s3 * b1y
            ddx = t0 * a0x + t1 * a1x + t2 * b0x + t3 * b1x
            ddy = t0 * a0y + t1 * a1y + t2 * b0y + t3 * b1y
            w = tab[to + _R[1] + b]
            inv = 1.0 / (rx * rx + ry * ry)
            kabs = (rx * ddy - ry * ddx) * inv
            kap = kabs - tab[to + _R[3] + b]
            c = w * kap * inv
            k2 = 2.0 * kabs
            ax = c * (ddy - k2 * rx)
            ay = -c * (ddx + k2 * ry)
            bx = -c * ry
            by = c * rx
            acc[_R[8] + b] += w * kap * kap
            acc[b] += s0 * ax + t0 * bx
            acc[_R[1] + b] += s0 * ay + t0 * by
            acc[_R[2] + b] += s1 * ax + t1 * bx
            acc[_R[3] + b] += s1 * ay + t1 * by
            acc[_R[4] + b] += s2 * ax + t2 * bx
            acc[_R[5] + b] += s2 * ay + t2 * by
            acc[_R[6] + b] += s3 * ax + t3 * bx
            acc[_R[7] + b] += s3 * ay + t3 * by


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def batch_force(q, bd, f, acc):
    """Elastic force of every model of the block into ``f`` (rows n_dof); the strain energy
    (doubled) left in row 8 of ``acc``."""
    spa, spb, sppb, gb, tab, ng = bd.spa, bd.spb, bd.sppb, bd.gb, bd.tab, bd.ng
    nl = np.uint64(bd.nl)
    n = len(gb)
    p = _PASS
    for b in range(nl):
        acc[_R[8] + b] = 0.0
    for j in range(4):
        for b in range(nl):
            f[np.uint64(j * LANES) + b] = 0.0
    for el in range(bd.n_el):
        if n > 0:
            _pass(0, min(n, p), True, el, ng, spb, sppb, tab, q, acc, nl)
            if n > p:
                _pass(p, min(n - p, p), False, el, ng, spb, sppb, tab, q, acc, nl)
            if n > 2 * p:
                _pass(2 * p, min(n - 2 * p, p), False, el, ng, spb, sppb, tab, q, acc, nl)
            if n > 3 * p:
                _pass(3 * p, min(n - 3 * p, p), False, el, ng, spb, sppb, tab, q, acc, nl)
        else:
            _split_element(el, ng, spa, spb, sppb, tab, q, acc, nl)
        o = np.uint64(4 * el * LANES)
        for b in range(nl):  # node el: its sum already holds element el - 1's second half
            i = o + b
            f[i] -= acc[b]
            f[i + _R[1]] -= acc[_R[1] + b]
            f[i + _R[2]] -= acc[_R[2] + b]
            f[i + _R[3]] -= acc[_R[3] + b]
            f[i + _R[4]] = -acc[_R[4] + b]
            f[i + _R[5]] = -acc[_R[5] + b]
            f[i + _R[6]] = -acc[_R[6] + b]
            f[i + _R[7]] = -acc[_R[7] + b]


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def _band_matvec(lb, nf, x, y, nl):
    """``y = A x`` for every model (``lb`` rows (d, i): symmetric lower band; the order of
    ``linalg.sym_band_matvec``)."""
    for j in range(nf):
        o = np.uint64(j * LANES)
        for b in range(nl):
            y[o + b] = lb[o + b] * x[o + b]
    for d in range(1, 8):
        off = np.uint64(d * LANES)
        for j in range(nf - d):
            o = np.uint64(j * LANES)
            ob = np.uint64((d * nf + j) * LANES)
            for b in range(nl):
                a = lb[ob + b]
                y[o + off + b] += a * x[o + b]
                y[o + b] += a * x[o + off + b]


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def _solve(rf, n, x, z, w, nl):
    """``linalg.solve_xy_rows`` for every model (the same operations in the same order): the
    recurrences' last three unknowns are read back from the padded sweeps ``z`` (forward,
    rows (i + 3, c)) and ``w`` (backward, rows (i, c)), whose rows outside the matrix stay 0."""
    y = _R[1]  # the y-component's rows follow the x-component's
    ry = _R[8]  # rf: the y-component's eight rows follow the x-component's
    for i in range(n):
        xo = np.uint64(2 * i * LANES)  # x rows (2 i + c); z rows (i + 3 - m, c)
        ro = np.uint64(16 * i * LANES)  # rf rows (i, c, k)
        for b in range(nl):
            c = xo + b
            r = ro + b
            ax = x[c] * rf[r] - rf[r + _R[3]] * z[c] - rf[r + _R[2]] * z[c + _R[2]]
            ay = (
                x[c + y] * rf[r + ry]
                - rf[r + ry + _R[3]] * z[c + y]
                - rf[r + ry + _R[2]] * z[c + y + _R[2]]
            )
            z[c + _R[6]] = ax - rf[r + _R[1]] * z[c + _R[4]]
            z[c + y + _R[6]] = ay - rf[r + ry + _R[1]] * z[c + y + _R[4]]
    for i in range(n - 1, -1, -1):
        xo = np.uint64(2 * i * LANES)
        ro = np.uint64(16 * i * LANES)
        for b in range(nl):
            c = xo + b
            r = ro + b
            ax = z[c + _R[6]] * rf[r] - rf[r + _R[6]] * w[c + _R[6]] - rf[r + _R[5]] * w[c + _R[4]]
            ay = (
                z[c + y + _R[6]] * rf[r + ry]
                - rf[r + ry + _R[6]] * w[c + y + _R[6]]
                - rf[r + ry + _R[5]] * w[c + y + _R[4]]
            )
            vx = ax - rf[r + _R[4]] * w[c + _R[2]]
            vy = ay - rf[r + ry + _R[4]] * w[c + y + _R[2]]
            w[c] = vx
            w[c + y] = vy
            x[c] = vx
            x[c + y] = vy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def _solve_shared(rf, n, x, z, w, nl):
    """:func:`_solve` for models that share one factor (the same mass, damping and ``dt``, as
    in a sweep over the modulus alone): ``rf[16 i + 8 c + k]``, read once per row and
    broadcast over the models (the per-model factors of a block do not fit in the L1 cache
    next to the weights, and their loads bound :func:`_solve`). The same operations."""
    y = _R[1]
    for i in range(n):
        xo = np.uint64(2 * i * LANES)
        k = 16 * i
        a0, a1, a2, a3 = rf[k], rf[k + 1], rf[k + 2], rf[k + 3]
        b0, b1, b2, b3 = rf[k + 8], rf[k + 9], rf[k + 10], rf[k + 11]
        for b in range(nl):
            c = xo + b
            ax = x[c] * a0 - a3 * z[c] - a2 * z[c + _R[2]]
            ay = x[c + y] * b0 - b3 * z[c + y] - b2 * z[c + y + _R[2]]
            z[c + _R[6]] = ax - a1 * z[c + _R[4]]
            z[c + y + _R[6]] = ay - b1 * z[c + y + _R[4]]
    for i in range(n - 1, -1, -1):
        xo = np.uint64(2 * i * LANES)
        k = 16 * i
        a0, a4, a5, a6 = rf[k], rf[k + 4], rf[k + 5], rf[k + 6]
        b0, b4, b5, b6 = rf[k + 8], rf[k + 12], rf[k + 13], rf[k + 14]
        for b in range(nl):
            c = xo + b
            ax = z[c + _R[6]] * a0 - a6 * w[c + _R[6]] - a5 * w[c + _R[4]]
            ay = z[c + y + _R[6]] * b0 - b6 * w[c + y + _R[6]] - b5 * w[c + y + _R[4]]
            vx = ax - a4 * w[c + _R[2]]
            vy = ay - b4 * w[c + y + _R[2]]
            w[c] = vx
            w[c + y] = vy
            x[c] = vx
            x[c + y] = vy


@njit(cache=True, nogil=True, error_model="numpy")
def _sample(b, bd, q, dlt, r, energy, wd, out, i_sample, v, mv):
    """``explicit._sample`` for model ``b`` (``v``, ``mv``: scratch vectors of the free
    DOFs): returns (kinetic, total) energy."""
    nf = dlt.shape[0] // LANES
    dt = bd.dt[b]
    mlb = bd.mlb
    for i in range(nf):
        v[i] = (2.0 * dlt[i * LANES + b] + r[i * LANES + b]) / (2.0 * dt)
    for i in range(nf):
        mv[i] = mlb[i * LANES + b] * v[i]
    for d in range(1, 8):
        for j in range(nf - d):
            a = mlb[(d * nf + j) * LANES + b]
            mv[j + d] += a * v[j]
            mv[j] += a * v[j + d]
    kin = 0.0
    pot = 0.0
    for i in range(nf):
        k = (CLAMP + i) * LANES + b
        kin += v[i] * mv[i]
        pot -= bd.g_free[i * LANES + b] * (q[k] - bd.q_ref[k])
    kin *= 0.5
    tot = kin + energy + pot + wd
    e = 4 * i_sample * LANES + b
    out.energy[e] = kin
    out.energy[e + LANES] = energy
    out.energy[e + 2 * LANES] = pot
    out.energy[e + 3 * LANES] = wd
    o_tip = (q.shape[0] // LANES - 4) * LANES + b
    out.tip[2 * i_sample * LANES + b] = q[o_tip]
    out.tip[(2 * i_sample + 1) * LANES + b] = q[o_tip + LANES]
    return kin, tot


@njit(cache=True, nogil=True, error_model="numpy")
def _load(step, bd, nl, f, dlt, r, v, wacc, wd):
    """The step's right-hand side ``r = dt^2 (f + g) - dt C dlt`` of every model (``f``: the
    elastic force); a damped model's dissipated work ``wd`` gains the step's damping power."""
    nf = dlt.shape[0] // LANES
    fou = np.uint64(CLAMP * LANES)
    g_free, dtv = bd.g_free, bd.dt
    for i in range(nf):
        o = np.uint64(i * LANES)
        for b in range(nl):
            r[o + b] = dtv[b] * dtv[b] * (f[fou + o + b] + g_free[o + b])
    if bd.damped:
        _band_matvec(bd.clb, nf, dlt, v, nl)
        for b in range(bd.nl):
            wacc[b] = 0.0
        for i in range(nf):
            o = np.uint64(i * LANES)
            for b in range(nl):
                wacc[b] += dlt[o + b] * v[o + b]
                r[o + b] -= dtv[b] * v[o + b]
        if step > 0:
            for b in range(bd.nl):
                if step < bd.n_regular[b]:
                    wd[b] += wacc[b] / dtv[b]


@njit(cache=True, nogil=True, error_model="numpy")
def _record(step, b, bd, st, out, wk, fail):
    """Model ``b``'s sample (energy guard included) and snapshot at ``step``, if due; returns
    the status (``fail``: the lane and the step on a failure)."""
    q, dlt, acc = st.q, st.dlt, wk.acc
    e0, tmax = st.energy0, st.kinetic_max
    if step % bd.sample_every[b] == 0:
        en = 0.5 * acc[8 * LANES + b]
        kin, tot = _sample(
            b, bd, q, dlt, wk.r, en, st.dissipated[b], out, out.i_sample[b], wk.sv, wk.smv
        )
        if step == 0:
            e0[b] = tot
        if kin > tmax[b]:
            tmax[b] = kin
        out.i_sample[b] += 1
        if not math.isfinite(tot):
            fail[0], fail[1] = b, step
            return STATUS_NONFINITE
        if tot - e0[b] > bd.growth_limit[b] * tmax[b] and tot - e0[b] > 1e-12 * (abs(e0[b]) + 1.0):
            fail[0], fail[1] = b, step
            return STATUS_ENERGY
    if step % bd.snap_every[b] == 0:
        n_dof = q.shape[0] // LANES
        k = out.i_snap[b]
        for i in range(n_dof):
            out.snap[(k * n_dof + i) * LANES + b] = q[i * LANES + b]
        out.i_snap[b] = k + 1
    return STATUS_OK


@njit(cache=True, nogil=True, error_model="numpy")
def _advance(step, least, bd, nl, q, dlt, r):
    """``dlt += r``, ``q += dlt`` on the free DOFs of every model not yet done (all of them
    while ``step < least``)."""
    nf = dlt.shape[0] // LANES
    fo = CLAMP * LANES
    fou = np.uint64(fo)
    if step < least:
        for i in range(nf):
            o = np.uint64(i * LANES)
            for b in range(nl):
                dlt[o + b] += r[o + b]
                q[fou + o + b] += dlt[o + b]
    else:
        for i in range(nf):
            o = i * LANES
            for b in range(bd.nl):
                if step < bd.n_regular[b]:
                    dlt[o + b] += r[o + b]
                    q[fo + o + b] += dlt[o + b]


@njit(cache=True, nogil=True, error_model="numpy")
def _nonfinite_tip(step, nl, q, fail) -> bool:
    """Whether a model's tip coordinate is not finite after ``step`` (``fail``: the first
    such lane and ``step + 1``)."""
    tip_y = (q.shape[0] // LANES - 3) * LANES
    nan = 0.0
    for b in range(nl):
        nan += q[tip_y + b] * 0.0  # NaN if any tip coordinate is not finite, else 0
    if math.isfinite(nan):
        return False
    for b in range(nl):
        if not math.isfinite(q[tip_y + b]):
            fail[0], fail[1] = b, step + 1
            return True
    return False


@njit(cache=True, nogil=True, error_model="numpy")
def batch_chunk(n_steps, step0, bd, st, out, wk, fail):
    """Advance the LANES models of a block ``n_steps`` steps from step ``step0`` in place (a
    model whose ``bd.n_regular`` steps are done is held). ``fail`` (2,): on a failure the
    model's lane and the step. Returns the status (``explicit.STATUS_*``)."""
    bd, st, out, wk, fail = borrow((bd, st, out, wk, fail))
    q, dlt, f, r, v, acc, wacc = st.q, st.dlt, wk.f, wk.r, wk.v, wk.acc, wk.wacc
    wd, rf, z, w = st.dissipated, bd.rf, wk.z, wk.w
    n = dlt.shape[0] // LANES // 2
    least = bd.n_regular[: bd.nl].min()
    nl = np.uint64(bd.nl)
    for s in range(n_steps):
        step = step0 + s
        batch_force(q, bd, f, acc)
        _load(step, bd, nl, f, dlt, r, v, wacc, wd)
        if bd.shared_rf:
            _solve_shared(rf, n, r, z, w, nl)
        else:
            _solve(rf, n, r, z, w, nl)
        for b in range(bd.nl):
            if step >= bd.n_regular[b]:
                continue
            if step % bd.sample_every[b] == 0 or step % bd.snap_every[b] == 0:
                status = _record(step, b, bd, st, out, wk, fail)
                if status != STATUS_OK:
                    return status
        _advance(step, least, bd, nl, q, dlt, r)
        if _nonfinite_tip(step, bd.nl, q, fail):
            return STATUS_NONFINITE
    return STATUS_OK


# ------------------------------------------------------------------------------------------
# driver
# ------------------------------------------------------------------------------------------
def _per_model(value, n: int, name: str) -> list:
    """``value`` once per model: a sequence of ``n`` values, or one value for all (a pair for
    ``damping``, a 1-D array for ``q0``/``v0``)."""
    one = not isinstance(value, (list, tuple, np.ndarray))
    if name == "damping":
        one = one or (len(value) == 2 and np.isscalar(value[0]))
    if name in ("q0", "v0") and isinstance(value, np.ndarray):
        one = value.ndim == 1
    if one:
        return [value] * n
    if len(value) != n:
        raise ValueError(f"{name}: {len(value)} values for {n} models")
    return list(value)


def _check_models(models: Sequence[BeamModel]) -> None:
    sizes = sorted({m.n_el for m in models})
    if len(sizes) > 1:
        raise ValueError(
            f"models of a batch must have the same mesh size: n_elements {sizes} "
            "(group the models by mesh.n_elements)"
        )
    m0 = models[0]
    for i, m in enumerate(models):
        if m.case.damage.enabled:
            raise ValueError(f"model {i}: damage.enabled is not supported by the batch")
        if m.linear:
            raise ValueError(f"model {i}: the linear strain measures are not supported")
        same = (
            m.spa.shape == m0.spa.shape
            and m.spb.shape == m0.spb.shape
            and np.array_equal(m.spa, m0.spa)
            and np.array_equal(m.spb, m0.spb)
            and np.array_equal(m.sppb, m0.sppb)
        )
        if not same:
            raise ValueError(
                f"model {i}: element length {m.le:.6g} m and Gauss rules "
                f"({m.spa.shape[0]}/{m.spb.shape[0]}) must equal model 0's "
                f"({m0.le:.6g} m, {m0.spa.shape[0]}/{m0.spb.shape[0]})"
            )


def _stack(arrays: list[np.ndarray]) -> np.ndarray:
    out = aligned_zeros([(*arrays[0].shape, len(arrays))])[0]
    for b, a in enumerate(arrays):
        out[..., b] = a
    return out


def run_explicit_batch(
    models: Sequence[BeamModel],
    t_end,
    dt,
    damping=(0.0, 0.0),
    sample_dt=None,
    snapshot_dt=None,
    energy_growth_limit=None,
    q0=None,
    v0=None,
    dt_critical=None,
) -> list[DynamicsResult]:
    """Central-difference runs of ``models`` (all with the same number of elements, element
    length and Gauss rules) in one structure-of-arrays loop; returns one
    :class:`~ancf_beam.results.DynamicsResult` per model, in order, each equal to
    ``simulate_explicit(model, t_end, dt, ...)`` up to round-off. Every argument after
    ``models`` is one value for all models or a sequence of one per model (``damping``: an
    ``(alpha, beta)`` pair or a sequence of pairs). ``wall_s``/``cpu_s`` of a result: the
    batch's time divided by the number of models. Raises ``ValueError`` for models the batch
    cannot take (see the module) and :class:`~ancf_beam.results.InstabilityError` (naming the
    model) when a run becomes unstable."""
    models = list(models)
    if not models:
        return []
    _check_models(models)
    nb = len(models)
    given = dict(
        t_end=t_end,
        dt=dt,
        damping=damping,
        sample_dt=sample_dt,
        snapshot_dt=snapshot_dt,
        energy_growth_limit=energy_growth_limit,
        q0=q0,
        v0=v0,
        dt_critical=dt_critical,
    )
    per = {k: _per_model(v, nb, k) for k, v in given.items()}
    runs = [_setup(m, {k: v[b] for k, v in per.items()}) for b, m in enumerate(models)]
    regular = [p.n_steps if p.last_dt == cd.dt else p.n_steps - 1 for _, p, cd, _ in runs]
    loop = np.zeros(2)  # wall and CPU time of the time loops
    results = []
    for start in range(0, nb, LANES):
        lanes = list(range(start, min(start + LANES, nb)))
        real = len(lanes)
        lanes += [lanes[-1]] * (-real % 4)  # padding to whole vectors: copies, discarded
        block = _run_block(
            models[0], [runs[b] for b in lanes], [regular[b] for b in lanes], real, loop
        )
        for j, (status, step, _, _) in enumerate(block):
            if status != STATUS_OK:
                b = lanes[j]
                err = instability_error(status, step, float(per["dt"][b]), per["dt_critical"][b])
                raise type(err)(f"batch model {b}: {err}")
        for j, b in enumerate(lanes[:real]):
            _, _, st1, out1 = block[j]
            settings, plan, cd, _ = runs[b]
            dt_cr = per["dt_critical"][b]
            results.append(_finish(models[b], settings.t_end, plan, cd, st1, out1, dt_cr))
    for r in results:
        r.wall_s, r.cpu_s = loop[0] / nb, loop[1] / nb
    return results


def _setup(model: BeamModel, a: dict) -> tuple:
    """One model's settings, step plan, constant data and start state (``a``: its values of
    :func:`run_explicit_batch`'s arguments), as ``explicit.run_explicit`` sets them up."""
    dt = float(a["dt"])
    settings = DynamicsSettings.from_case(
        model.case,
        integrator=EXPLICIT_INTEGRATOR,
        t_end=float(a["t_end"]),
        dt=dt,
        damping=tuple(a["damping"]),
        sample_dt=a["sample_dt"],
        snapshot_dt=a["snapshot_dt"],
        energy_growth_limit=a["energy_growth_limit"],
        force=True,
    )
    plan = step_plan(settings.t_end, dt, settings.sample_dt, settings.snapshot_dt)
    cd, st = setup_run(model, settings, dt, a["q0"], a["v0"])
    return settings, plan, cd, st


def _rows(arrays: list[np.ndarray]) -> np.ndarray:
    """One flat array whose rows of LANES entries hold the models' values element by element
    (``out[i * LANES + b] = arrays[b].flat[i]``; unused lanes zero), on a cache line."""
    out = aligned_zeros([(arrays[0].size * LANES,)])[0]
    out.reshape(-1, LANES)[:, : len(arrays)] = np.stack([np.ravel(a) for a in arrays], axis=-1)
    return out


def _lanes(values: list, dtype=float) -> np.ndarray:
    """(LANES,) array of per-lane values (unused lanes zero)."""
    out = np.zeros(LANES, dtype=dtype)
    out[: len(values)] = values
    return out


def _block_data(m0: BeamModel, runs: list, regular: list[int]) -> BatchData:
    """The constant data of a block (``runs``: the lanes' (settings, plan, data, state))."""
    nf = m0.n_free
    plans = [r[1] for r in runs]
    cds = [r[2] for r in runs]
    same = m0.spa.shape == m0.spb.shape and np.array_equal(m0.spa, m0.spb)
    gb = tuple(range(m0.spb.shape[0])) if same and m0.spb.shape[0] <= 4 * _PASS else ()
    na, nbg = m0.spa.shape[0], m0.spb.shape[0]
    ng = max(na, nbg)
    tabs = []
    for cd in cds:
        _, _, _, _, ea_w, ei_w, eps0, kap0, _ = cd.kargs
        t = np.zeros((m0.n_el, ng, 4))
        t[:, :na, 0], t[:, :nbg, 1], t[:, :na, 2], t[:, :nbg, 3] = ea_w, ei_w, eps0, kap0
        tabs.append(t)
    clbs = [np.vstack([c.clb, np.zeros((8 - c.clb.shape[0], nf))]) for c in cds]
    rfs = [np.stack([c.rfx, c.rfy], axis=1) for c in cds]  # (n, 2, 8)
    shared = all(np.array_equal(rfs[0], a) for a in rfs[1:])
    return BatchData(
        m0.n_el,
        len(runs),
        np.ascontiguousarray(m0.spa),
        np.ascontiguousarray(m0.spb),
        np.ascontiguousarray(m0.sppb),
        gb,
        ng,
        _rows(tabs),
        _rows([c.g_free for c in cds]),
        _rows([c.q_ref for c in cds]),
        aligned_copies(rfs[0].ravel())[0] if shared else _rows(rfs),
        shared,
        _rows([c.mlb for c in cds]),
        _rows(clbs),
        any(c.damped for c in cds),
        _lanes([c.dt for c in cds]),
        _lanes([c.growth_limit for c in cds]),
        _lanes(regular, np.int64),
        _lanes([p.sample_every for p in plans], np.int64),
        _lanes([p.snap_every for p in plans], np.int64),
    )


def _block_buffers(m0: BeamModel, runs: list) -> tuple[BatchState, BatchWork, BatchOut]:
    """The start state, the work arrays and the records of a block."""
    nf, n_dof = m0.n_free, m0.n_dof
    plans = [r[1] for r in runs]
    sts = [r[3] for r in runs]
    st = BatchState(
        _rows([s.q for s in sts]),
        _rows([s.dlt for s in sts]),
        np.zeros(LANES),
        np.zeros(LANES),
        np.zeros(LANES),
    )
    n = nf // 2
    rows = [n_dof, nf, nf, 9, 2 * (n + 3), 2 * (n + 3), 1]
    wk = BatchWork(*aligned_zeros([(k * LANES,) for k in rows] + [(nf,), (nf,)]))
    ns = max(p.n_samples for p in plans)
    nsn = max(p.n_snaps for p in plans)
    out = BatchOut(
        np.zeros(ns * 2 * LANES),
        np.zeros(ns * 4 * LANES),
        np.zeros(nsn * n_dof * LANES),
        np.zeros(LANES, dtype=np.int64),
        np.zeros(LANES, dtype=np.int64),
    )
    return st, wk, out


def _run_block(m0: BeamModel, runs: list, regular: list[int], real: int, loop) -> list:
    """The regular steps of up to LANES runs (the first ``real`` wanted, the others padding)
    in one :func:`batch_chunk` call (its wall and CPU time added to ``loop``); per wanted
    lane (status, failing step, the single-model state and outputs holding the lane's state
    and records)."""
    nf, n_dof = m0.n_free, m0.n_dof
    bd = _block_data(m0, runs, regular)
    st, wk, out = _block_buffers(m0, runs)
    fail = np.full(2, -1, dtype=np.int64)
    w0, c0 = time.perf_counter(), time.process_time()
    status = batch_chunk(max(regular), 0, bd, st, out, wk, fail)
    loop += (time.perf_counter() - w0, time.process_time() - c0)
    if status != STATUS_OK:  # lanes are checked in order: a padding lane copies a real one
        block = [(STATUS_OK, 0, None, None)] * real
        block[min(int(fail[0]), real - 1)] = (status, int(fail[1]), None, None)
        return block
    q = st.q.reshape(n_dof, LANES)
    dlt = st.dlt.reshape(nf, LANES)
    tip = out.tip.reshape(-1, 2, LANES)
    energy = out.energy.reshape(-1, 4, LANES)
    snap = out.snap.reshape(-1, n_dof, LANES)
    block = []
    for b, (_, plan, _, s1) in enumerate(runs[:real]):
        s1.q[:] = q[:, b]
        s1.dlt[:] = dlt[:, b]
        s1.dissipated[0], s1.energy0[0] = st.dissipated[b], st.energy0[b]
        s1.kinetic_max[0] = st.kinetic_max[b]
        o1 = outputs(plan, m0, False)
        o1.tip[:] = tip[: plan.n_samples, :, b]
        o1.energy[:] = energy[: plan.n_samples, :, b]
        o1.snap[:] = snap[: plan.n_snaps, :, b]
        o1.i_sample[0], o1.i_snap[0] = out.i_sample[b], out.i_snap[b]
        block.append((STATUS_OK, 0, s1, o1))
    return block


def _finish(model, t_end, plan, cd, st, out, dt_critical) -> DynamicsResult:
    """The end of one model's run after its regular steps, as ``explicit.run_explicit``."""
    nf = model.n_free
    wk = ExplicitWork(*aligned_zeros([(model.n_dof,), (nf,), (nf,), (nf,), (nf // 2,), (nf // 2,)]))
    dargs, _ = damage_args(model)
    n, last, dt = plan.n_steps, plan.last_dt, cd.dt
    if last == dt:
        status, _ = run_chunk(1, n, cd, st, final_outputs(out, n, False, False), wk, dargs)
    else:
        mfx, mfy = (row_factor(c) for c in model.mass_cholesky_xy[:2])
        status = last_step(last, n - 1, cd, st, out, wk, dargs, mfx, mfy, np.empty(nf))
    if status != STATUS_OK:
        raise instability_error(status, n, dt, dt_critical)
    return result_from_outputs(
        out,
        dt,
        t_end,
        steps=n,
        wall_s=0.0,
        cpu_s=0.0,
        energy_roundoff=model.energy_roundoff(),
    )
