"""The beam element in plain numpy, vectorised over elements and Gauss points (no numba).

The same physics as the numba kernels of :mod:`ancf_beam.beam.kernels` (their docstring states
the element, the strain measures and the tables ``spa``, ``spb``, ``sppb``, ``ea_w``, ``ei_w``,
``eps0``, ``kap0``), written as array expressions: the elastic force ``-dU/dq`` and the
tangent stiffness ``d2U/dq2`` as a dense matrix (the strain energy is the kernels' alone).

It serves the static solve of small meshes (:func:`ancf_beam.solvers.static.solve_static`):
there the computation takes milliseconds while loading numba and its cached kernels takes
about a second, so a run that never imports numba answers sooner. Being a second, independent
statement of the element, it is also held equal to the kernels in the tests (to round-off).
Importing this module does not import numba.
"""

from __future__ import annotations

import numpy as np

__all__ = ["element_blocks", "elastic_force", "shape_tables", "tangent_dense"]


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


def element_blocks(q: np.ndarray, n_el: int) -> np.ndarray:
    """The element vectors of the full coordinates ``q`` as (n_el, 4, 2): element, Hermite
    function (r and r' of the first node, then of the second), component (x, y)."""
    nodes = np.asarray(q, dtype=float)[: 4 * (n_el + 1)].reshape(-1, 2, 2)
    return np.concatenate([nodes[:-1], nodes[1:]], axis=1)


def _axial(e, spa, ea_w, eps0, linear):
    """Axial strain at the axial Gauss points, its gradient in ``r'`` (n_el, g, 2) and the
    matrix ``d2(eps^2/2)/dr'^2 = deps deps^T + eps d2eps`` (n_el, g, 2, 2)."""
    rp = np.einsum("ga,eap->egp", spa, e)
    if linear:
        eps = rp[..., 0] - 1.0 - eps0
        deps = np.zeros_like(rp)
        deps[..., 0] = 1.0
        hess = np.einsum("egp,egr->egpr", deps, deps)
        return eps, deps, hess
    nrm = np.sqrt(rp[..., 0] ** 2 + rp[..., 1] ** 2)
    eps = nrm - 1.0 - eps0
    t = rp / nrm[..., None]
    tt = np.einsum("egp,egr->egpr", t, t)
    hess = tt + (eps / nrm)[..., None, None] * (np.eye(2) - tt)
    return eps, t, hess


def _bending(e, spb, sppb, kap0, linear):
    """Curvature at the bending Gauss points relative to the reference, its gradient in
    ``z = (r'_x, r'_y, r''_x, r''_y)`` (n_el, g, 4) and its Hessian in ``z`` (n_el, g, 4, 4)."""
    rp = np.einsum("ga,eap->egp", spb, e)
    rpp = np.einsum("ga,eap->egp", sppb, e)
    shape = rp.shape[:2]
    dk = np.zeros(shape + (4,))
    d2k = np.zeros(shape + (4, 4))
    if linear:
        dk[..., 3] = 1.0
        return rpp[..., 1] - kap0, dk, d2k
    g2 = rp[..., 0] ** 2 + rp[..., 1] ** 2
    cr = rp[..., 0] * rpp[..., 1] - rp[..., 1] * rpp[..., 0]
    kabs = cr / g2
    dc = np.stack([rpp[..., 1], -rpp[..., 0], -rp[..., 1], rp[..., 0]], axis=-1)
    dg2 = np.zeros(shape + (4,))
    dg2[..., :2] = 2.0 * rp
    d2c = np.zeros((4, 4))
    d2c[0, 3] = d2c[3, 0] = 1.0  # c = r'_x r''_y - r'_y r''_x
    d2c[1, 2] = d2c[2, 1] = -1.0
    d2g2 = np.zeros((4, 4))
    d2g2[0, 0] = d2g2[1, 1] = 2.0
    g2_ = g2[..., None, None]
    cr_ = cr[..., None, None]
    dk[...] = dc / g2[..., None] - (cr / g2**2)[..., None] * dg2
    d2k[...] = (
        d2c / g2_
        - (np.einsum("egi,egj->egij", dc, dg2) + np.einsum("egi,egj->egij", dg2, dc)) / g2_**2
        + 2.0 * cr_ / g2_**3 * np.einsum("egi,egj->egij", dg2, dg2)
        - cr_ / g2_**2 * d2g2
    )
    return kabs - kap0, dk, d2k


def _bending_map(spb, sppb):
    """``dz/de``: (g, 4 functions, 2 components, 4 entries of ``z``)."""
    ng = spb.shape[0]
    b = np.zeros((ng, 4, 2, 4))
    for p in range(2):
        b[:, :, p, p] = spb
        b[:, :, p, 2 + p] = sppb
    return b


def elastic_force(q, n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear):
    """Elastic force ``-dU/dq`` (full DOF vector) of the state ``q``; the arguments after
    ``q`` are :meth:`BeamModel.kernel_args`."""
    e = element_blocks(q, n_el)
    eps, deps, _ = _axial(e, spa, ea_w, eps0, linear)
    kap, dk, _ = _bending(e, spb, sppb, kap0, linear)
    grad = np.einsum("ga,egp->eap", spa, (ea_w * eps)[..., None] * deps)
    grad += np.einsum("gapz,egz->eap", _bending_map(spb, sppb), (ei_w * kap)[..., None] * dk)
    f = np.zeros(4 * (n_el + 1))
    nodes = f.reshape(-1, 2, 2)
    nodes[:-1] -= grad[:, :2]
    nodes[1:] -= grad[:, 2:]
    return f


def tangent_dense(q, n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear):
    """Tangent stiffness ``d2U/dq2`` of the full DOF vector as a dense matrix."""
    e = element_blocks(q, n_el)
    _, _, ha = _axial(e, spa, ea_w, eps0, linear)
    kap, dk, d2k = _bending(e, spb, sppb, kap0, linear)
    ke = np.einsum("ga,gb,eg,egpr->eapbr", spa, spa, ea_w, ha)
    hb = np.einsum("egi,egj->egij", dk, dk) + kap[..., None, None] * d2k
    bm = _bending_map(spb, sppb)
    ke += np.einsum("gapi,gbrj,eg,egij->eapbr", bm, bm, ei_w, hb, optimize=True)
    ke = ke.reshape(n_el, 8, 8)
    n = 4 * (n_el + 1)
    k = np.zeros((n, n))
    for el in range(n_el):
        k[4 * el : 4 * el + 8, 4 * el : 4 * el + 8] += ke[el]
    return k
