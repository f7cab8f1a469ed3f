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

from ancf_beam.linalg import BANDWIDTH, FAST, NO_FACTOR, band_factor_solve, band_factorize

__all__ = [
    "SOA_LANES",
    "SOA_MIN_ELEMENTS",
    "SOA_VECTOR",
    "SoaArgs",
    "assemble_tangent_banded",
    "elastic_force",
    "elastic_force_soa",
    "element_tangent",
    "force",
    "shape_tables",
    "soa_args",
    "soa_force_arrays",
    "tangent_solve",
]


# ------------------------------------------------------------------------------------------
# shape functions
# ------------------------------------------------------------------------------------------
def shape_tables(xi: np.ndarray, le: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S, dS/dx, d2S/dx2 of the four cubic Hermite functions at points ``xi`` (arrays (n, 4))."""
    xi = np.asarray(xi, dtype=float)
    s = np.stack(
        [
            1 - 3 * xi**2 + 2 * xi**3,
            le * (xi - 2 * xi**2 + xi**3),
            3 * xi**2 - 2 * xi**3,
            le * (-(xi**2) + xi**3),
        ],
        axis=-1,
    )
    sp = np.stack(
        [
            (-6 * xi + 6 * xi**2) / le,
            1 - 4 * xi + 3 * xi**2,
            (6 * xi - 6 * xi**2) / le,
            -2 * xi + 3 * xi**2,
        ],
        axis=-1,
    )
    spp = np.stack(
        [
            (-6 + 12 * xi) / le**2,
            (-4 + 6 * xi) / le,
            (6 - 12 * xi) / le**2,
            (-2 + 6 * xi) / le,
        ],
        axis=-1,
    )
    return s, sp, spp


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
#: Below this many elements the element-major :func:`elastic_force` is used (see SoaArgs).
SOA_MIN_ELEMENTS = 12
#: The element loops run over at least SOA_LANES elements, a multiple of SOA_VECTOR (SoaArgs).
SOA_LANES = 32
SOA_VECTOR = 8


class SoaArgs(NamedTuple):
    """Data of :func:`elastic_force_soa` (built by :func:`soa_args`, constant over a run).

    The weights and reference strains are stored transposed, ``[g, el]``, so that the element
    loop reads them with unit stride; ``x`` (4, n_pad + 1) receives the node coordinates
    component by component and ``g`` (8, n_pad) the element forces. The element loops run over
    ``n_pad = max(SOA_LANES, n_el rounded up to SOA_VECTOR)`` elements: LLVM vectorises them 8
    wide with an interleave of 4, so a loop of fewer than 32 never reaches its vector body. The
    padding elements continue the beam straight from its tip (along the tip tangent, element
    length ``le``): they are finite, carry zero weights, and their forces are never gathered."""

    on: bool  # use elastic_force_soa (else the element-major elastic_force)
    le: float  # element length (m)
    ea_t: np.ndarray
    ei_t: np.ndarray
    eps0_t: np.ndarray
    kap0_t: np.ndarray
    x: np.ndarray
    g: np.ndarray


def soa_args(kargs: tuple, le: float, damage_on: bool, force: bool | None = None) -> SoaArgs:
    """SoaArgs of a model's ``kernel_args()``. Off for the linear model, with damage (which
    rescales ``ea_w``/``ei_w`` during a run) and below :data:`SOA_MIN_ELEMENTS` elements unless
    ``force`` says otherwise."""
    n_el, _, _, _, ea_w, ei_w, eps0, kap0, linear = kargs
    on = n_el >= SOA_MIN_ELEMENTS if force is None else bool(force)
    on = on and not linear and not damage_on
    if not on:
        z = np.zeros((1, 1))
        return SoaArgs(False, float(le), z, z, z, z, z, z)
    n_pad = max(SOA_LANES, -(-n_el // SOA_VECTOR) * SOA_VECTOR)

    def padded(a):
        out = np.zeros((a.shape[1], n_pad))
        out[:, :n_el] = a.T
        return out

    x = np.zeros((4, n_pad + 1))
    g = np.zeros((8, n_pad))
    return SoaArgs(True, float(le), padded(ea_w), padded(ei_w), padded(eps0), padded(kap0), x, g)


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def _soa_axial(spa, ea_t, eps0_t, x, g):
    """Axial term of all (padded) elements into ``g``; returns its strain energy."""
    energy = 0.0
    x0, y0, x1, y1 = x[0], x[1], x[2], x[3]
    for gp in range(spa.shape[0]):
        s0, s1, s2, s3 = spa[gp, 0], spa[gp, 1], spa[gp, 2], spa[gp, 3]
        w_row = ea_t[gp]
        e_row = eps0_t[gp]
        for el in range(g.shape[1]):
            rx = s0 * x0[el] + s1 * x1[el] + s2 * x0[el + 1] + s3 * x1[el + 1]
            ry = s0 * y0[el] + s1 * y1[el] + s2 * y0[el + 1] + s3 * y1[el + 1]
            nrm = np.sqrt(rx * rx + ry * ry)
            eps = nrm - 1.0 - e_row[el]
            w = w_row[el]
            energy += w * eps * eps
            c = w * eps / nrm
            cx = c * rx
            cy = c * ry
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
def _soa_bending(spb, sppb, ei_t, kap0_t, x, g):
    """Bending term of all (padded) elements into ``g``; returns its strain energy."""
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
            inv = 1.0 / (rx * rx + ry * ry)
            kabs = (rx * ddy - ry * ddx) * inv
            kap = kabs - k_row[el]
            w = w_row[el]
            energy += w * kap * kap
            c = w * kap * inv
            k2 = 2.0 * kabs
            ax = c * (ddy - k2 * rx)  # dkappa/dr' and dkappa/dr'' as in elastic_force
            ay = -c * (ddx + k2 * ry)
            bx = -c * ry
            by = c * rx
            g[0, el] += s0 * ax + t0 * bx
            g[1, el] += s0 * ay + t0 * by
            g[2, el] += s1 * ax + t1 * bx
            g[3, el] += s1 * ay + t1 * by
            g[4, el] += s2 * ax + t2 * bx
            g[5, el] += s2 * ay + t2 * by
            g[6, el] += s3 * ax + t3 * bx
            g[7, el] += s3 * ay + t3 * by
    return 0.5 * energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def _soa_load(q, n_el, le, x, g):
    """Node coordinates into ``x`` by component (padding: straight on along the tip tangent),
    ``g`` zeroed."""
    for k in range(4):
        for nd in range(n_el + 1):
            x[k, nd] = q[4 * nd + k]
    o = 4 * n_el
    for nd in range(n_el + 1, x.shape[1]):
        s = (nd - n_el) * le
        x[0, nd] = q[o] + s * q[o + 2]
        x[1, nd] = q[o + 1] + s * q[o + 3]
        x[2, nd] = q[o + 2]
        x[3, nd] = q[o + 3]
    for k in range(8):
        for el in range(g.shape[1]):
            g[k, el] = 0.0


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def soa_force_arrays(q, n_el, spa, spb, sppb, le, ea_t, ei_t, eps0_t, kap0_t, x, g, f):
    """:func:`elastic_force_soa` with the fields of :class:`SoaArgs` as arrays: the form for
    time loops, which unpack their tuples once per chunk (unpacking a tuple of arrays on every
    call costs a reference count per array, about 5 ns per element at 40 elements)."""
    _soa_load(q, n_el, le, x, g)
    energy = _soa_axial(spa, ea_t, eps0_t, x, g)
    energy += _soa_bending(spb, sppb, ei_t, kap0_t, x, g)
    # node nd collects the first half of element nd and the second half of element nd - 1
    for k in range(4):
        f[k] = -g[k, 0]
        f[4 * n_el + k] = -g[4 + k, n_el - 1]
    for nd in range(1, n_el):
        for k in range(4):
            f[4 * nd + k] = -(g[k, nd] + g[4 + k, nd - 1])
    return energy


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def elastic_force_soa(q, n_el, spa, spb, sppb, sa, f):
    """:func:`elastic_force` (nonlinear measures) restructured as structure of arrays: the
    same force and strain energy up to the order of summation. ``sa``: :class:`SoaArgs`."""
    return soa_force_arrays(q, n_el, spa, spb, sppb, sa.le, sa.ea_t, sa.ei_t, sa.eps0_t,
                            sa.kap0_t, sa.x, sa.g, f)  # fmt: skip


@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def force(q, kargs, sa, f):
    """Elastic force into ``f`` and strain energy, by :func:`elastic_force_soa` when ``sa.on``
    and by :func:`elastic_force` otherwise (``kargs``: ``BeamModel.kernel_args()``)."""
    if sa.on:
        return elastic_force_soa(q, kargs[0], kargs[1], kargs[2], kargs[3], sa, f)
    return elastic_force(q, *kargs, f)
