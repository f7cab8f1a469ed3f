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

import numpy as np
from numba import njit

from ancf_beam.linalg import BANDWIDTH, FAST

__all__ = ["assemble_tangent_banded", "elastic_force", "element_tangent", "shape_tables"]


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
@njit(cache=True, fastmath=FAST, nogil=True, error_model="numpy")
def elastic_force(q, n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear, f):
    """Overwrite ``f`` (full DOF vector) with the elastic force ``-dU/dq``; return ``U`` (J).

    ``eps0[el, g]`` / ``kap0[el, g]``: strain measures of the stress-free reference at the axial
    / bending Gauss points (zero for the straight beam, non-zero for an imperfect one)."""
    for k in range(f.shape[0]):
        f[k] = 0.0
    nga = spa.shape[0]
    ngb = spb.shape[0]
    energy = 0.0
    for el in range(n_el):
        o = 4 * el
        # element coordinates, 4 blocks of 2
        e0x = q[o]
        e0y = q[o + 1]
        e1x = q[o + 2]
        e1y = q[o + 3]
        e2x = q[o + 4]
        e2y = q[o + 5]
        e3x = q[o + 6]
        e3y = q[o + 7]
        g0x = 0.0
        g0y = 0.0
        g1x = 0.0
        g1y = 0.0
        g2x = 0.0
        g2y = 0.0
        g3x = 0.0
        g3y = 0.0
        # ---- axial term
        for g in range(nga):
            s0 = spa[g, 0]
            s1 = spa[g, 1]
            s2 = spa[g, 2]
            s3 = spa[g, 3]
            rx = s0 * e0x + s1 * e1x + s2 * e2x + s3 * e3x
            ry = s0 * e0y + s1 * e1y + s2 * e2y + s3 * e3y
            w = ea_w[el, g]
            if linear:
                eps = rx - 1.0 - eps0[el, g]
                cx = w * eps
                cy = 0.0
            else:
                nrm = np.sqrt(rx * rx + ry * ry)
                eps = nrm - 1.0 - eps0[el, g]
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
        # ---- bending term
        for g in range(ngb):
            s0 = spb[g, 0]
            s1 = spb[g, 1]
            s2 = spb[g, 2]
            s3 = spb[g, 3]
            t0 = sppb[g, 0]
            t1 = sppb[g, 1]
            t2 = sppb[g, 2]
            t3 = sppb[g, 3]
            w = ei_w[el, g]
            ddy = t0 * e0y + t1 * e1y + t2 * e2y + t3 * e3y
            if linear:
                kap = ddy - kap0[el, g]
                c = w * kap
                g0y += t0 * c
                g1y += t1 * c
                g2y += t2 * c
                g3y += t3 * c
            else:
                rx = s0 * e0x + s1 * e1x + s2 * e2x + s3 * e3x
                ry = s0 * e0y + s1 * e1y + s2 * e2y + s3 * e3y
                ddx = t0 * e0x + t1 * e1x + t2 * e2x + t3 * e3x
                inv = 1.0 / (rx * rx + ry * ry)
                cr = rx * ddy - ry * ddx
                kabs = cr * inv
                kap = kabs - kap0[el, g]
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
        f[o] -= g0x
        f[o + 1] -= g0y
        f[o + 2] -= g1x
        f[o + 3] -= g1y
        f[o + 4] -= g2x
        f[o + 5] -= g2y
        f[o + 6] -= g3x
        f[o + 7] -= g3y
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
    dk = scratch[0]
    dc = scratch[1]
    dg2 = scratch[2]
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


# ------------------------------------------------------------------------------------------
# banded Cholesky solve (factor from scipy.linalg.cholesky_banded(lower=True))
# ------------------------------------------------------------------------------------------
