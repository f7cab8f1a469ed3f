"""Numba kernels of the 2D gradient-deficient ANCF beam element (allocation-free hot loops).

Element vector (node-major, 8 entries): ``e = [r1x, r1y, r1x', r1y', r2x, r2y, r2x', r2y']`` where
``'`` is d/dx along the *reference* (undeformed) axis. ``r(x) = sum_i S_i(xi) e_i`` with the four
cubic Hermite functions of ``xi = x / l_e`` acting on the four 2-blocks ``e_i``.

Strain measures (documented choice, the same as the extensible elastica reference):

* axial strain      ``eps   = |r'| - 1``                      (engineering / Biot strain)
* bending curvature ``kappa = (r' x r'') / |r'|^2 = d theta/dx`` (rotation of the tangent per
  unit *reference* length; equals the geometric curvature times the stretch ``|r'|``)

Strain energy ``U = 1/2 int (EA eps^2 + EI kappa^2) dx``; elastic force ``Q_e = -dU/de``; tangent
stiffness ``K_T = d^2U/de^2``. With ``linear=True`` the small-deflection (linear Euler-Bernoulli)
measures ``eps = r_x' - 1``, ``kappa = r_y''`` are used instead (comparison only).

Quadrature tables passed to the kernels: ``spa[g, i]`` = dS_i/dx at axial Gauss point ``g``;
``spb``/``sppb`` = dS_i/dx, d2S_i/dx2 at bending Gauss points; ``ea_w[el, g]`` = EA(x_g) * w_g * l_e
and ``ei_w[el, g]`` = EI(x_g) * w_g * l_e (quadrature weight and Jacobian folded in).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ancf_beam.beam.element import shape_tables
from ancf_beam.linalg import (
    BANDWIDTH,
    FAST,
    NO_FACTOR,
    aligned_zeros,
    band_factor_solve,
    band_factorize,
)

__all__ = [
    "SOA_MAX_GAUSS",
    "SOA_MIN_ELEMENTS",
    "SOA_VECTOR",
    "SoaArgs",
    "assemble_tangent_banded",
    "elastic_force",
    "elastic_force_soa",
    "element_tangent",
    "force",
    "scatter_mass_blocks",
    "shape_tables",
    "soa_args",
    "soa_force_arrays",
    "tangent_solve",
]


# ------------------------------------------------------------------------------------------
# elastic force (and strain energy, its return value)
# ------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _axial_element(q, o, spa, w_row, e0_row, linear, energy):
    """Axial Gauss points of the element at ``q[o:o+8]``: its 8 force accumulators ``dU/de``
    (a tuple) and ``energy`` plus its axial strain energy."""
    e0x, e0y, e1x, e1y = q[o], q[o + 1], q[o + 2], q[o + 3]
    e2x, e2y, e3x, e3y = q[o + 4], q[o + 5], q[o + 6], q[o + 7]
    g0x = g0y = g1x = g1y = g2x = g2y = g3x = g3y = 0.0
    for g in range(spa.shape[0]):
        s0, s1, s2, s3 = spa[g, 0], spa[g, 1], spa[g, 2], spa[g, 3]
        rx = s0 * e0x + s1 * e1x + s2 * e2x + s3 * e3x
        ry = s0 * e0y + s1 * e1y + s2 * e2y + s3 * e3y
        w = w_row[g]
        if linear:
            eps = rx - 1.0 - e0_row[g]
            cx = w * eps
            cy = 0.0
        else:
            nrm = np.sqrt(rx * rx + ry * ry)
            eps = nrm - 1.0 - e0_row[g]
            c = w * eps / nrm
            cx = c * rx
            cy = c * ry
        energy += 0.5 * w * eps * eps
        g0x += s0 * cx
        g0y += s0 * cy
        g1x += s1 * cx
        g1y += s1 * cy
        g2x += s2 * cx
        g2y += s2 * cy
        g3x += s3 * cx
        g3y += s3 * cy
    return (g0x, g0y, g1x, g1y, g2x, g2y, g3x, g3y), energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _bending_element(q, o, spb, sppb, w_row, k0_row, linear, acc, energy):
    """Bending Gauss points of the element at ``q[o:o+8]`` added to the accumulators ``acc``
    and to ``energy`` (see :func:`_axial_element`)."""
    e0x, e0y, e1x, e1y = q[o], q[o + 1], q[o + 2], q[o + 3]
    e2x, e2y, e3x, e3y = q[o + 4], q[o + 5], q[o + 6], q[o + 7]
    g0x, g0y, g1x, g1y, g2x, g2y, g3x, g3y = acc
    for g in range(spb.shape[0]):
        s0, s1, s2, s3 = spb[g, 0], spb[g, 1], spb[g, 2], spb[g, 3]
        t0, t1, t2, t3 = sppb[g, 0], sppb[g, 1], sppb[g, 2], sppb[g, 3]
        w = w_row[g]
        ddy = t0 * e0y + t1 * e1y + t2 * e2y + t3 * e3y
        if linear:
            kap = ddy - k0_row[g]
            c = w * kap
            ax = ay = bx = 0.0
            by = c
        else:
            rx = s0 * e0x + s1 * e1x + s2 * e2x + s3 * e3x
            ry = s0 * e0y + s1 * e1y + s2 * e2y + s3 * e3y
            ddx = t0 * e0x + t1 * e1x + t2 * e2x + t3 * e3x
            inv = 1.0 / (rx * rx + ry * ry)
            cr = rx * ddy - ry * ddx
            kabs = cr * inv
            kap = kabs - k0_row[g]
            c = w * kap * inv
            # dkappa/dr' = (J r'' - 2 kappa r') / g2 ; dkappa/dr'' = J^T r' / g2
            ax = c * (ddy - 2.0 * kabs * rx)
            ay = c * (-ddx - 2.0 * kabs * ry)
            bx = -c * ry
            by = c * rx
        g0x += s0 * ax + t0 * bx
        g0y += s0 * ay + t0 * by
        g1x += s1 * ax + t1 * bx
        g1y += s1 * ay + t1 * by
        g2x += s2 * ax + t2 * bx
        g2y += s2 * ay + t2 * by
        g3x += s3 * ax + t3 * bx
        g3y += s3 * ay + t3 * by
        energy += 0.5 * w * kap * kap
    return (g0x, g0y, g1x, g1y, g2x, g2y, g3x, g3y), energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def elastic_force(q, n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear, f):
    """Overwrite ``f`` (full DOF vector) with the elastic force ``-dU/dq``; return ``U`` (J).

    ``eps0[el, g]`` / ``kap0[el, g]``: strain measures of the stress-free reference at the axial
    / bending Gauss points (zero for the straight beam, non-zero for an imperfect one).
    Element-major: elements outside, Gauss points inside (scalar code, the faster kernel for
    short meshes; :func:`elastic_force_soa` vectorises over the elements)."""
    for k in range(f.shape[0]):
        f[k] = 0.0
    energy = 0.0
    for el in range(n_el):
        o = 4 * el
        acc, energy = _axial_element(q, o, spa, ea_w[el], eps0[el], linear, energy)
        acc, energy = _bending_element(q, o, spb, sppb, ei_w[el], kap0[el], linear, acc, energy)
        for k in range(8):
            f[o + k] -= acc[k]
    return energy


# ------------------------------------------------------------------------------------------
# tangent stiffness
# ------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, error_model="numpy")
def element_tangent(e, spa, spb, sppb, ea_row, ei_row, eps0_row, kap0_row, linear, ke, scratch):
    """Overwrite the 8x8 ``ke`` with d2U/de2 of one element (``scratch``: (3, 8) work array)."""
    for i in range(8):
        for j in range(8):
            ke[i, j] = 0.0
    _axial_tangent(e, spa, ea_row, eps0_row, linear, ke)
    _bending_tangent(e, spb, sppb, ei_row, kap0_row, linear, ke, scratch)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _axial_tangent(e, spa, ea_row, eps0_row, linear, ke):
    """Add the axial Gauss points' d2U/de2 to ``ke``."""
    for g in range(spa.shape[0]):
        w = ea_row[g]
        if linear:
            for a in range(4):
                for b in range(4):
                    ke[2 * a, 2 * b] += w * spa[g, a] * spa[g, b]
            continue
        rx = 0.0
        ry = 0.0
        for a in range(4):
            rx += spa[g, a] * e[2 * a]
            ry += spa[g, a] * e[2 * a + 1]
        nrm = np.sqrt(rx * rx + ry * ry)
        tx = rx / nrm
        ty = ry / nrm
        eps = nrm - 1.0 - eps0_row[g]
        # K = EA [ sp_a sp_b t t^T + eps sp_a sp_b (I - t t^T)/|r'| ]
        m00 = tx * tx + eps * (1.0 - tx * tx) / nrm
        m01 = tx * ty - eps * tx * ty / nrm
        m11 = ty * ty + eps * (1.0 - ty * ty) / nrm
        for a in range(4):
            for b in range(4):
                c = w * spa[g, a] * spa[g, b]
                ke[2 * a, 2 * b] += c * m00
                ke[2 * a, 2 * b + 1] += c * m01
                ke[2 * a + 1, 2 * b] += c * m01
                ke[2 * a + 1, 2 * b + 1] += c * m11


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _bending_tangent(e, spb, sppb, ei_row, kap0_row, linear, ke, scratch):
    """Add the bending Gauss points' d2U/de2 to ``ke`` (``scratch``: (3, 8) work array)."""
    dk = scratch[0]
    dc = scratch[1]
    dg2 = scratch[2]
    for g in range(spb.shape[0]):
        w = ei_row[g]
        if linear:
            for a in range(4):
                for b in range(4):
                    ke[2 * a + 1, 2 * b + 1] += w * sppb[g, a] * sppb[g, b]
            continue
        rx = 0.0
        ry = 0.0
        ddx = 0.0
        ddy = 0.0
        for a in range(4):
            rx += spb[g, a] * e[2 * a]
            ry += spb[g, a] * e[2 * a + 1]
            ddx += sppb[g, a] * e[2 * a]
            ddy += sppb[g, a] * e[2 * a + 1]
        g2 = rx * rx + ry * ry
        cr = rx * ddy - ry * ddx
        kap = cr / g2 - kap0_row[g]  # relative to the stress-free reference
        for a in range(4):
            sa = spb[g, a]
            ta = sppb[g, a]
            dc[2 * a] = sa * ddy - ta * ry
            dc[2 * a + 1] = -sa * ddx + ta * rx
            dg2[2 * a] = 2.0 * sa * rx
            dg2[2 * a + 1] = 2.0 * sa * ry
        for i in range(8):
            dk[i] = dc[i] / g2 - cr / (g2 * g2) * dg2[i]
        for a in range(4):
            sa = spb[g, a]
            ta = sppb[g, a]
            for b in range(4):
                sb = spb[g, b]
                tb = sppb[g, b]
                # d2c block (a,b) = sa tb J + ta sb J^T, J = [[0, 1], [-1, 0]]
                jc = sa * tb - ta * sb
                d2g2 = 2.0 * sa * sb
                for p in range(2):
                    for r in range(2):
                        i = 2 * a + p
                        j = 2 * b + r
                        d2c = 0.0
                        if p == 0 and r == 1:
                            d2c = jc
                        elif p == 1 and r == 0:
                            d2c = -jc
                        d2 = d2c / g2 - (dc[i] * dg2[j] + dg2[i] * dc[j]) / (g2 * g2)
                        d2 += 2.0 * cr / (g2 * g2 * g2) * dg2[i] * dg2[j]
                        if p == r:
                            d2 -= cr / (g2 * g2) * d2g2
                        ke[i, j] += w * (dk[i] * dk[j] + kap * d2)


@njit(cache=True, nogil=True, error_model="numpy")
def assemble_tangent_banded(q, n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear, ab):
    """Assemble d2U/dq2 of the *full* system into general band storage ``ab`` (15, ndof):
    ``ab[7 + i - j, j] = K[i, j]`` (the layout of ``scipy.linalg.solve_banded((7, 7), ...)``)."""
    for i in range(ab.shape[0]):
        for j in range(ab.shape[1]):
            ab[i, j] = 0.0
    ke = np.empty((8, 8))
    e = np.empty(8)
    scratch = np.empty((3, 8))
    for el in range(n_el):
        o = 4 * el
        for i in range(8):
            e[i] = q[o + i]
        element_tangent(
            e, spa, spb, sppb, ea_w[el], ei_w[el], eps0[el], kap0[el], linear, ke, scratch
        )
        for i in range(8):
            for j in range(8):
                ab[BANDWIDTH + i - j, o + j] += ke[i, j]


@njit(cache=True, nogil=True, error_model="numpy")
def tangent_solve(q, kargs, off, ab, lb, fac, lu, piv, xp, x):
    """Overwrite ``x`` with ``K_T(q)^-1 x`` on the DOFs from ``off`` on (the free ones) in
    numba: assembly into ``ab`` (15, n_dof), its lower band copied into ``lb`` (8, n), banded
    Cholesky (LU with pivoting when not positive definite; work arrays as
    :func:`ancf_beam.linalg.band_factorize`). Returns the factor kind (``NO_FACTOR``: singular,
    ``x`` untouched)."""
    assemble_tangent_banded(q, *kargs, ab)
    for k in range(lb.shape[0]):
        for j in range(lb.shape[1]):
            lb[k, j] = ab[BANDWIDTH + k, off + j]
    kind = band_factorize(lb, fac, lu, piv)
    if kind != NO_FACTOR:
        band_factor_solve(kind, fac, lu, piv, xp, x)
    return kind


# ------------------------------------------------------------------------------------------
# elastic force, structure of arrays (elements in the inner, vectorised loop)
# ------------------------------------------------------------------------------------------
#: Below this many elements the element-major :func:`elastic_force` is used (see SoaArgs):
#: rules with the same axial and bending points / rules with different points.
SOA_MIN_ELEMENTS = 8
SOA_MIN_ELEMENTS_SPLIT = 8
#: The element loops run over a multiple of SOA_VECTOR elements (SoaArgs).
SOA_VECTOR = 8
#: Rules with different points, up to SOA_ROW elements: the tables are rows of this many
#: lanes, a compile-time constant (SoaArgs); x has rows of _X_ROW (> SOA_ROW) entries.
SOA_ROW = 64
_X_ROW = SOA_ROW + 8
#: Most Gauss points per pass of the element loop (see _soa_elements).
_PASS_POINTS = 3
#: Most Gauss points of a rule the structure-of-arrays kernel takes (four passes are written
#: out; the config allows 2 to 10); more fall back to the element-major kernel.
SOA_MAX_GAUSS = 4 * _PASS_POINTS


class SoaArgs(NamedTuple):
    """Data of :func:`elastic_force_soa` (built by :func:`soa_args`, constant over a run).

    The weights and reference strains are stored transposed, ``[g, el]``, so that the element
    loops read them with unit stride; ``x`` (4, n_pad + 1) receives the node coordinates
    component by component and ``g`` (8 n_pad) the element forces. The padding elements
    continue the beam straight from its tip (along the tip tangent, element length ``le``):
    they are finite, carry zero weights, and their forces are never gathered.

    Two kernels (LLVM vectorises both 8 wide):

    * rules with the same axial and bending points (the default 3/3): one element loop per
      pass of up to three Gauss points, the axial term from the bending term's tangent ``r'``,
      the force accumulators in registers and ``g`` element by element (``g[8 el + j]``).
      ``n_pad`` is n_el rounded up to a multiple of SOA_VECTOR (no element falls into a scalar
      remainder loop). ``gb`` is a tuple as long as the rule: its length makes the number of
      points a compile-time constant of the kernel, whose Gauss-point loop is written out;
    * rules with different points (Exudyn's 5/3): one element loop per Gauss point adding to
      the 8 rows of ``g``; ``gb`` is empty. (A pass kernel is slower here: 27.5 against 23.2
      ns per element at 40 elements, 5/3.) Up to SOA_ROW (padded) elements the tables, ``x``
      and ``g`` are flat rows of the compile-time lengths SOA_ROW and _X_ROW (the tables and
      ``x`` as (1, N) arrays, ``x`` with 4 rows of _X_ROW in its one row; see
      :func:`_split_fixed`): LLVM then knows the distance between the rows of ``g``, needs
      runtime overlap checks only between arrays, and enters the vector body from 8
      elements on. With rows of run-time length it checks every pair of rows, and the cost
      of those checks makes it enter the vector loop only from 32 iterations (axial term)
      or 24 (bending term) on: a 20-element mesh ran scalar unless padded to 32 lanes.

    Every array starts on a 64-byte boundary (:func:`ancf_beam.linalg.aligned_zeros`)."""

    on: bool  # use elastic_force_soa (else the element-major elastic_force)
    le: float  # element length (m)
    ea_t: np.ndarray
    ei_t: np.ndarray
    eps0_t: np.ndarray
    kap0_t: np.ndarray
    x: np.ndarray
    g: np.ndarray
    gb: tuple


def soa_args(
    kargs: tuple,
    le: float,
    damage_on: bool,
    force: bool | None = None,
    fixed_rows: bool | None = None,
) -> SoaArgs:
    """SoaArgs of a model's ``kernel_args()``. Off for the linear model, with damage (which
    rescales ``ea_w``/``ei_w`` during a run), for rules of more than :data:`SOA_MAX_GAUSS`
    points and below :data:`SOA_MIN_ELEMENTS` (:data:`SOA_MIN_ELEMENTS_SPLIT`) elements unless
    ``force`` says otherwise. ``fixed_rows`` (rules with different points): rows of fixed
    length (default: up to SOA_ROW padded elements; ``False`` forces run-time lengths, for
    tests and benchmarks)."""
    n_el, spa, spb, _, ea_w, ei_w, eps0, kap0, linear = kargs
    na, nb = spa.shape[0], spb.shape[0]
    same = na == nb and np.array_equal(spa, spb)
    least = SOA_MIN_ELEMENTS if same else SOA_MIN_ELEMENTS_SPLIT
    on = n_el >= least if force is None else bool(force)
    on = on and not linear and not damage_on and max(na, nb) <= SOA_MAX_GAUSS
    # the rule's points when the kernels can take them, also when off: gb's length is part of
    # the kernels' numba type, and one type for every run of a rule is one compiled set
    gb = tuple(range(nb)) if same and nb <= SOA_MAX_GAUSS else ()
    if not on:
        z = np.zeros((1, 1))
        return SoaArgs(False, float(le), z, z, z, z, z, np.zeros(8), gb)
    n_pad = -(-n_el // SOA_VECTOR) * SOA_VECTOR
    rows = not same and n_pad <= SOA_ROW  # fixed-length rows (_split_fixed)
    if fixed_rows is not None:
        if fixed_rows and not rows:
            raise ValueError(f"fixed rows need different points and at most {SOA_ROW} elements")
        rows = fixed_rows
    n_row = SOA_ROW if rows else n_pad

    tables = (ea_w, ei_w, eps0, kap0)
    shapes = [(1, a.shape[1] * n_row) if rows else (a.shape[1], n_row) for a in tables]
    shapes += [(1, 4 * _X_ROW) if rows else (4, n_pad + 1), (8 * n_row,)]
    *tabs, x, g = aligned_zeros(shapes)
    for t, a in zip(tabs, tables, strict=True):
        t.reshape(a.shape[1], n_row)[:, :n_el] = a.T
    return SoaArgs(True, float(le), *tabs, x, g, gb)


# Unsigned index arithmetic in the vectorised loops: numba wraps negative signed indices
# around, and from four Gauss points on LLVM no longer sees through the selects that do it.
_U1, _U2, _U3, _U4, _U5, _U6, _U7, _U8 = (np.uint64(i) for i in range(1, 9))


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _soa_point(k, t, el, e, acc, en):
    """Gauss point ``k`` (axial and bending term, the same point) of element ``el`` with
    coordinates ``e``: the force accumulators ``acc`` and the doubled energy ``en`` with the
    point's contribution. ``t`` = (spb, sppb, ea_t, ei_t, eps0_t, kap0_t)."""
    spb, sppb, ea_t, ei_t, eps0_t, kap0_t = t
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
    eps = nrm - 1.0 - eps0_t[k, el]
    wa = ea_t[k, el]
    kabs = (rx * ddy - ry * ddx) * inv
    kap = kabs - kap0_t[k, el]
    wb = ei_t[k, el]
    c = wb * kap * inv
    k2 = 2.0 * kabs
    ca = wa * eps * nrm * inv  # EA eps / |r'|
    ax = c * (ddy - k2 * rx) + ca * rx  # dkappa/dr' and dkappa/dr'' as in elastic_force
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
def _soa_pass(k0, n, first, t, x, g):
    """Gauss points ``k0`` to ``k0 + n - 1`` (``n`` <= _PASS_POINTS) of all (padded) elements
    into ``g`` (``g[8 el + j]``, added to it unless ``first``); returns their doubled strain
    energy. ``k0``, ``n`` and ``first`` are constants at every call site. The arrays come in
    unpacked (a tuple of arrays built inside the loop costs reference counts, and LLVM leaves
    such a loop scalar)."""
    energy = 0.0
    for el in range(np.uint64(x.shape[1] - 1)):
        e1 = el + _U1
        e = (x[0, el], x[1, el], x[2, el], x[3, el], x[0, e1], x[1, e1], x[2, e1], x[3, e1])
        o = _U8 * el
        if first:
            acc = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        else:
            acc = (
                g[o],
                g[o + _U1],
                g[o + _U2],
                g[o + _U3],
                g[o + _U4],
                g[o + _U5],
                g[o + _U6],
                g[o + _U7],
            )
        acc, en = _soa_point(k0, t, el, e, acc, 0.0)
        if n > 1:
            acc, en = _soa_point(k0 + 1, t, el, e, acc, en)
        if n > 2:
            acc, en = _soa_point(k0 + 2, t, el, e, acc, en)
        energy += en
        g[o], g[o + _U1], g[o + _U2], g[o + _U3] = acc[0], acc[1], acc[2], acc[3]
        g[o + _U4], g[o + _U5], g[o + _U6], g[o + _U7] = acc[4], acc[5], acc[6], acc[7]
    return energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def _soa_elements(spb, sppb, gb, ea_t, ei_t, eps0_t, kap0_t, x, g):
    """Forces of all (padded) elements into ``g`` (``g[8 el + j]``) for a rule whose axial and
    bending points are the same; returns the strain energy.

    The element loop is the inner loop, with the Gauss points of a pass inside it and the 8
    force accumulators in registers. LLVM vectorises it only when nothing but the element
    index varies in it, so the Gauss-point loop is written out, up to _PASS_POINTS points per
    pass (the rule length ``len(gb)`` is a compile-time constant, so every test on it below is
    decided by the compiler). A fourth point per pass would need more runtime overlap checks
    (each point reads its own rows of the four weight tables) than LLVM accepts: it leaves
    such a loop scalar. Index arithmetic in the loop is unsigned: numba wraps negative signed
    indices around, and LLVM does not always see through the selects that do it."""
    n = len(gb)
    p = _PASS_POINTS
    t = (spb, sppb, ea_t, ei_t, eps0_t, kap0_t)
    energy = _soa_pass(0, min(n, p), True, t, x, g)
    if n > p:
        energy += _soa_pass(p, min(n - p, p), False, t, x, g)
    if n > 2 * p:
        energy += _soa_pass(2 * p, min(n - 2 * p, p), False, t, x, g)
    if n > 3 * p:
        energy += _soa_pass(3 * p, min(n - 3 * p, p), False, t, x, g)
    return 0.5 * energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _axial_at(rx, ry, eps0, w):
    """Axial term at one Gauss point from ``r'``: ``(cx, cy, w eps^2)`` with ``(cx, cy)`` the
    coefficient of ``S'`` in the element force (shared by the loop-per-point kernels)."""
    nrm = np.sqrt(rx * rx + ry * ry)
    eps = nrm - 1.0 - eps0
    c = w * eps / nrm
    return c * rx, c * ry, w * eps * eps


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _bending_at(rx, ry, ddx, ddy, kap0, w):
    """Bending term at one Gauss point from ``r'`` and ``r''``: ``(ax, ay, bx, by, w kap^2)``,
    the coefficients of ``S'`` and ``S''`` (dkappa/dr' and dkappa/dr'' as in elastic_force)."""
    inv = 1.0 / (rx * rx + ry * ry)
    kabs = (rx * ddy - ry * ddx) * inv
    kap = kabs - kap0
    c = w * kap * inv
    k2 = 2.0 * kabs
    return c * (ddy - k2 * rx), -c * (ddx + k2 * ry), -c * ry, c * rx, w * kap * kap


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def _split_axial(spa, ea_t, eps0_t, x, g):
    """Axial term of all (padded) elements added to the rows of ``g`` (8, n_pad); returns its
    strain energy (rules with different points: one loop per Gauss point)."""
    energy = 0.0
    x0, y0, x1, y1 = x[0], x[1], x[2], x[3]
    for gp in range(spa.shape[0]):
        s0, s1, s2, s3 = spa[gp, 0], spa[gp, 1], spa[gp, 2], spa[gp, 3]
        w_row = ea_t[gp]
        e_row = eps0_t[gp]
        for el in range(g.shape[1]):
            rx = s0 * x0[el] + s1 * x1[el] + s2 * x0[el + 1] + s3 * x1[el + 1]
            ry = s0 * y0[el] + s1 * y1[el] + s2 * y0[el + 1] + s3 * y1[el + 1]
            cx, cy, en = _axial_at(rx, ry, e_row[el], w_row[el])
            energy += en
            g[0, el] += s0 * cx
            g[1, el] += s0 * cy
            g[2, el] += s1 * cx
            g[3, el] += s1 * cy
            g[4, el] += s2 * cx
            g[5, el] += s2 * cy
            g[6, el] += s3 * cx
            g[7, el] += s3 * cy
    return 0.5 * energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def _split_bending(spb, sppb, ei_t, kap0_t, x, g):
    """Bending term of all (padded) elements added to the rows of ``g``; returns its strain
    energy (see :func:`_split_axial`)."""
    energy = 0.0
    x0, y0, x1, y1 = x[0], x[1], x[2], x[3]
    for gp in range(spb.shape[0]):
        s0, s1, s2, s3 = spb[gp, 0], spb[gp, 1], spb[gp, 2], spb[gp, 3]
        t0, t1, t2, t3 = sppb[gp, 0], sppb[gp, 1], sppb[gp, 2], sppb[gp, 3]
        w_row = ei_t[gp]
        k_row = kap0_t[gp]
        for el in range(g.shape[1]):
            rx = s0 * x0[el] + s1 * x1[el] + s2 * x0[el + 1] + s3 * x1[el + 1]
            ry = s0 * y0[el] + s1 * y1[el] + s2 * y0[el + 1] + s3 * y1[el + 1]
            ddx = t0 * x0[el] + t1 * x1[el] + t2 * x0[el + 1] + t3 * x1[el + 1]
            ddy = t0 * y0[el] + t1 * y1[el] + t2 * y0[el + 1] + t3 * y1[el + 1]
            ax, ay, bx, by, en = _bending_at(rx, ry, ddx, ddy, k_row[el], w_row[el])
            energy += en
            g[0, el] += s0 * ax + t0 * bx
            g[1, el] += s0 * ay + t0 * by
            g[2, el] += s1 * ax + t1 * bx
            g[3, el] += s1 * ay + t1 * by
            g[4, el] += s2 * ax + t2 * bx
            g[5, el] += s2 * ay + t2 * by
            g[6, el] += s3 * ax + t3 * bx
            g[7, el] += s3 * ay + t3 * by
    return 0.5 * energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _split_fixed(n, spa, spb, sppb, ea, ei, eps0, kap0, x, g):
    """:func:`_split_axial` and :func:`_split_bending` for at most SOA_ROW (padded) elements,
    ``n`` of them, on flat arrays in rows of compile-time length: SOA_ROW for ``g`` (8 rows,
    set here) and the tables ``ea``..``kap0`` (a row per Gauss point), _X_ROW for ``x`` (4
    rows); the tables and ``x`` are (1, N) arrays indexed ``[0, i]`` (a 1-D view made per
    call costs two reference-count updates, about 10 ns). Returns the strain energy. The same
    operations in the same order as the two kernels, so the same force to the bit."""
    r, xr = SOA_ROW, _X_ROW
    for j in range(8):
        for el in range(n):
            g[j * r + el] = 0.0
    energy = 0.0
    for gp in range(spa.shape[0]):
        s0, s1, s2, s3 = spa[gp, 0], spa[gp, 1], spa[gp, 2], spa[gp, 3]
        o = r * gp
        for el in range(n):
            e1 = el + 1
            rx = s0 * x[0, el] + s1 * x[0, 2 * xr + el] + s2 * x[0, e1] + s3 * x[0, 2 * xr + e1]
            ry = (
                s0 * x[0, xr + el]
                + s1 * x[0, 3 * xr + el]
                + s2 * x[0, xr + e1]
                + s3 * x[0, 3 * xr + e1]
            )
            cx, cy, en = _axial_at(rx, ry, eps0[0, o + el], ea[0, o + el])
            energy += en
            g[el] += s0 * cx
            g[r + el] += s0 * cy
            g[2 * r + el] += s1 * cx
            g[3 * r + el] += s1 * cy
            g[4 * r + el] += s2 * cx
            g[5 * r + el] += s2 * cy
            g[6 * r + el] += s3 * cx
            g[7 * r + el] += s3 * cy
    energy_b = 0.0
    for gp in range(spb.shape[0]):
        s0, s1, s2, s3 = spb[gp, 0], spb[gp, 1], spb[gp, 2], spb[gp, 3]
        t0, t1, t2, t3 = sppb[gp, 0], sppb[gp, 1], sppb[gp, 2], sppb[gp, 3]
        o = r * gp
        for el in range(n):
            e1 = el + 1
            a0x, a0y, a1x, a1y = x[0, el], x[0, xr + el], x[0, 2 * xr + el], x[0, 3 * xr + el]
            b0x, b0y, b1x, b1y = x[0, e1], x[0, xr + e1], x[0, 2 * xr + e1], x[0, 3 * xr + e1]
            rx = s0 * a0x + s1 * a1x + s2 * b0x + s3 * b1x
            ry = s0 * a0y + s1 * a1y + s2 * b0y + s3 * b1y
            ddx = t0 * a0x + t1 * a1x + t2 * b0x + t3 * b1x
            ddy = t0 * a0y + t1 * a1y + t2 * b0y + t3 * b1y
            ax, ay, bx, by, en = _bending_at(rx, ry, ddx, ddy, kap0[0, o + el], ei[0, o + el])
            energy_b += en
            g[el] += s0 * ax + t0 * bx
            g[r + el] += s0 * ay + t0 * by
            g[2 * r + el] += s1 * ax + t1 * bx
            g[3 * r + el] += s1 * ay + t1 * by
            g[4 * r + el] += s2 * ax + t2 * bx
            g[5 * r + el] += s2 * ay + t2 * by
            g[6 * r + el] += s3 * ax + t3 * bx
            g[7 * r + el] += s3 * ay + t3 * by
    return 0.5 * energy + 0.5 * energy_b


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _soa_load(q, n_el, le, x, n_nodes):
    """Node coordinates into the first ``n_nodes`` columns of ``x`` by component (padding:
    straight on along the tip tangent). ``x``: (4, columns), or (1, 4 _X_ROW): rows of _X_ROW
    in its one row (node by node, the four components in one iteration: half the time of a
    loop per component)."""
    o = 4 * n_el
    if x.shape[0] == 1:
        xr = _X_ROW
        for nd in range(n_el + 1):
            x[0, nd] = q[4 * nd]
            x[0, xr + nd] = q[4 * nd + 1]
            x[0, 2 * xr + nd] = q[4 * nd + 2]
            x[0, 3 * xr + nd] = q[4 * nd + 3]
        for nd in range(n_el + 1, n_nodes):
            s = (nd - n_el) * le
            x[0, nd] = q[o] + s * q[o + 2]
            x[0, xr + nd] = q[o + 1] + s * q[o + 3]
            x[0, 2 * xr + nd] = q[o + 2]
            x[0, 3 * xr + nd] = q[o + 3]
    else:
        for nd in range(n_el + 1):
            x[0, nd] = q[4 * nd]
            x[1, nd] = q[4 * nd + 1]
            x[2, nd] = q[4 * nd + 2]
            x[3, nd] = q[4 * nd + 3]
        for nd in range(n_el + 1, n_nodes):
            s = (nd - n_el) * le
            x[0, nd] = q[o] + s * q[o + 2]
            x[1, nd] = q[o + 1] + s * q[o + 3]
            x[2, nd] = q[o + 2]
            x[3, nd] = q[o + 3]


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _gather(ge, n_el, f):
    """``f`` = minus the element forces ``ge[el, j]`` summed at the nodes: node nd collects
    the first half of element nd and the second half of element nd - 1."""
    for k in range(4):
        f[k] = -ge[0, k]
        f[4 * n_el + k] = -ge[n_el - 1, 4 + k]
    for nd in range(1, n_el):
        for k in range(4):
            f[4 * nd + k] = -(ge[nd, k] + ge[nd - 1, 4 + k])


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy", inline="always")
def _gather_rows(g, n_el, f):
    """:func:`_gather` from the flat rows of SOA_ROW entries of :func:`_split_fixed`."""
    r = SOA_ROW
    for k in range(4):
        f[k] = -g[k * r]
        f[4 * n_el + k] = -g[(4 + k) * r + n_el - 1]
    for nd in range(1, n_el):
        f[4 * nd] = -(g[nd] + g[4 * r + nd - 1])
        f[4 * nd + 1] = -(g[r + nd] + g[5 * r + nd - 1])
        f[4 * nd + 2] = -(g[2 * r + nd] + g[6 * r + nd - 1])
        f[4 * nd + 3] = -(g[3 * r + nd] + g[7 * r + nd - 1])


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def soa_force_fixed(q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g, f):
    """Rules with different points, up to SOA_ROW elements (flat rows of fixed length)."""
    n = -(-n_el // SOA_VECTOR) * SOA_VECTOR
    _soa_load(q, n_el, le, x, n + 1)
    energy = _split_fixed(n, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g)
    _gather_rows(g, n_el, f)
    return energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def soa_force_same(q, n_el, le, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g, gb, f):
    """Rules with the same axial and bending points: passes, ``g`` element by element."""
    _soa_load(q, n_el, le, x, x.shape[1])
    energy = _soa_elements(spb, sppb, gb, ea_t, ei_t, eps0_t, kap0_t, x, g)
    _gather(g.reshape((g.shape[0] // 8, 8)), n_el, f)
    return energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def soa_force_split(q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g, f):
    """Rules with different points, more than SOA_ROW elements: ``g`` row by row."""
    _soa_load(q, n_el, le, x, x.shape[1])
    rows = g.reshape((8, g.shape[0] // 8))
    rows[:] = 0.0
    energy = _split_axial(spa, ea_t, eps0_t, x, rows)
    energy += _split_bending(spb, sppb, ei_t, kap0_t, x, rows)
    _gather(rows.T, n_el, f)
    return energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def soa_force_arrays(q, n_el, spa, spb, sppb, le, ea_t, ei_t, eps0_t, kap0_t, x, g, gb, f):
    """:func:`elastic_force_soa` with the fields of :class:`SoaArgs` as arguments (unpacking a
    tuple of arrays on every call costs a reference count per array, about 5 ns per element at
    40 elements). Time loops unpack their tuples once per chunk and call the function of the
    layout, :func:`soa_force_fixed`, :func:`soa_force_same` or :func:`soa_force_split`,
    directly, as this one does: going through this function costs about 60 ns more per call
    (3 ns per element-step at 20 elements), and so does numba's inlining of it."""
    if x.shape[0] == 1:  # different points, flat rows of fixed length (SoaArgs)
        return soa_force_fixed(q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g, f)
    if len(gb) > 0:
        return soa_force_same(q, n_el, le, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g, gb, f)
    return soa_force_split(q, n_el, le, spa, spb, sppb, ea_t, ei_t, eps0_t, kap0_t, x, g, f)


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def elastic_force_soa(q, n_el, spa, spb, sppb, sa, f):
    """:func:`elastic_force` (nonlinear measures) restructured as structure of arrays: the
    same force and strain energy up to the order of summation. ``sa``: :class:`SoaArgs`."""
    return soa_force_arrays(
        q, n_el, spa, spb, sppb, sa.le, sa.ea_t, sa.ei_t, sa.eps0_t, sa.kap0_t, sa.x, sa.g, sa.gb, f
    )


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def force(q, kargs, sa, f):
    """Elastic force into ``f`` and strain energy, by :func:`elastic_force_soa` when ``sa.on``
    and by :func:`elastic_force` otherwise (``kargs``: ``BeamModel.kernel_args()``)."""
    if sa.on:
        return elastic_force_soa(q, kargs[0], kargs[1], kargs[2], kargs[3], sa, f)
    return elastic_force(q, *kargs, f)


@njit(cache=True, nogil=True, error_model="numpy")
def scatter_mass_blocks(mb, lb):
    """Element mass blocks ``mb`` (n_el, 4, 4), node blocks (position, slope) of a scalar
    component, into the lower band ``lb``; the same block acts on x and on y (M = m (x) I2).
    Every band entry receives at most two terms, so the order of the additions is immaterial."""
    for e in range(mb.shape[0]):
        o = 4 * e
        for a in range(4):
            for b in range(a + 1):  # lower triangle: row block a >= column block b
                for d in range(2):
                    lb[2 * (a - b), o + 2 * b + d] += mb[e, a, b]
