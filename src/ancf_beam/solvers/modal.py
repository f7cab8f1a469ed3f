"""Modal analysis: ``(K_T - omega^2 M) phi = 0`` on the reduced (clamp-eliminated) system.

About the straight reference (``about='reference'``), where the tangent is the linear
Euler-Bernoulli plus bar stiffness, or about the static equilibrium under gravity
(``about='static'``, includes the geometric stiffening of the deformed state).

Precision on fine meshes. The assembled tangent carries round-off of relative size ``eps`` in
entries of size ``EI / l_e^3``: it no longer has the rigid-body null space of every element
exactly, which shifts ``omega_1^2`` by about ``eps (omega_max / omega_1)^2 ~ eps n^4``. Any
eigensolver working on that matrix inherits it (dense ``eigh``: omega_1 105.48 / 98.49 rad/s
at 1000 / 2000 elements instead of 104.2415; shift-invert Lanczos: 1e-5 / 7e-5 / 9e-3 at
1000 / 2000 / 5000; scaling the slope DOFs by ``l_e`` does not help). The modes are therefore
refined by Rayleigh-Ritz on the computed subspace with the projected stiffness evaluated in
*energy form* (:func:`projected_tangent`: the strain derivatives of the basis vectors at the
Gauss points, where the rigid-body cancellation is exact and the round-off only ``eps n^2``).
Measured on the uniform seed beam (omega_1..3 vs Euler-Bernoulli): 2e-11 at 2000 elements,
5e-10 at 5000, 4e-8 at 10000. The subspace comes from dense ``eigh`` on small blocks and from
shift-invert Lanczos (``scipy.sparse.linalg.eigsh``, ``sigma = 0``) on large ones, with
extra vectors (``_subspace_size``), which the Ritz step needs at the finest meshes. The Ritz
step's projection is compiled (numba) and small problems never build sparse matrices: 3 modes
of the 20-element beam take 0.4 ms (2.7 ms with the projection in numpy einsums); the axial
block is skipped when a Cholesky factorisation proves it holds none of the wanted modes.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numba import njit

from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.linalg import (
    BANDWIDTH,
    band_to_dense,
    band_to_sparse,
    eigh_one_thread,
    sym_band_to_dense,
    sym_band_to_sparse,
)
from ancf_beam.resources import check_modal
from ancf_beam.results import ModalResult
from ancf_beam.solvers.static import solve_static

__all__ = ["axial_fraction", "modal_analysis", "omega_max", "projected_tangent", "top_eigenpair"]

# blocks up to this many DOFs are solved dense; larger ones by shift-invert Lanczos
DENSE_MAX = 400


def axial_fraction(model: BeamModel, shapes: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Fraction of each mode's mass-weighted norm carried by the local axial direction.

    For a straight reference the axial direction is x; for a deformed state it is the local
    tangent at each node. Values near 1: axial (bar) mode; near 0: bending mode.
    """
    m = sym_band_to_sparse(model.mass_lower_band)
    out = np.empty(shapes.shape[0])
    t = q.reshape(-1, 4)[:, 2:4]
    t = t / np.linalg.norm(t, axis=1, keepdims=True)
    tt = np.repeat(t, 2, axis=0)
    for k, phi in enumerate(shapes):
        full = np.zeros(model.n_dof)
        full[CLAMP:] = phi
        blocks = full.reshape(-1, 2)  # (position, slope) 2-vectors alternating per node
        a = ((np.sum(blocks * tt, axis=1))[:, None] * tt).ravel()
        num = a @ (m @ a)
        den = full @ (m @ full)
        out[k] = num / den if den > 0 else 0.0
    return out


def modal_analysis(
    model: BeamModel,
    n_modes: int | None = None,
    about: str | None = None,
    q: np.ndarray | None = None,
) -> ModalResult:
    """First ``n_modes`` natural frequencies and mass-normalised mode shapes."""
    n_modes = model.case.modal.n_modes if n_modes is None else n_modes
    about = model.case.modal.about if about is None else about
    if about not in ("reference", "static"):
        raise ValueError(f"modal 'about' must be 'reference' or 'static', got {about!r}")
    if q is None:
        q = model.reference() if about == "reference" else solve_static(model).q
    n_modes = min(n_modes, model.n_free)
    check_modal(model.n_free, n_modes, model.n_el)  # memory, before any eigensolver runs
    w2, v, block = _lowest_eigenpairs(model, q, n_modes)
    omega = np.sqrt(np.clip(w2, 0.0, None))
    shapes = v.T
    straight_x = np.all(q[3::4] == 0.0) and np.all(q[2::4] > 0.0)
    if block is not None and straight_x:
        frac = (block == 0).astype(float)  # x-block modes are purely axial on a straight beam
    else:
        frac = axial_fraction(model, shapes, q)
    return ModalResult(
        omega=omega,
        frequency_hz=omega / (2 * np.pi),
        shapes=shapes,
        about=about,
        q=q,
        axial_fraction=frac,
    )


def omega_max(model: BeamModel, q: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Largest natural frequency (rad/s) of the reduced system and its mode shape (dense on
    small blocks, Lanczos on large ones: no dense matrix of a fine mesh is built)."""
    q = model.reference() if q is None else q
    ab = model.tangent_band(q)
    k_sp = band_to_sparse(ab)
    m_sp = sym_band_to_sparse(model.mass_free_lower_band)
    best = (-np.inf, None)
    for idx in _band_blocks(ab):
        w2, v = top_eigenpair(k_sp[idx][:, idx].tocsc(), m_sp[idx][:, idx].tocsc())
        if w2 > best[0]:
            phi = np.zeros(model.n_free)
            phi[idx] = v
            best = (w2, phi)
    return float(np.sqrt(best[0])), best[1]


def top_eigenpair(k: sp.csc_matrix, m: sp.csc_matrix) -> tuple[float, np.ndarray]:
    """Largest eigenpair of ``(k, m)`` (sparse, symmetric, ``m`` positive definite): dense
    ``eigh`` up to :data:`DENSE_MAX` DOFs, Lanczos (``eigsh``, mode 2) above. The top of the
    spectrum has no cancellation problem: both agree to 1e-15 relative."""
    n = k.shape[0]
    if n > DENSE_MAX:
        try:
            w2, v = spla.eigsh(k, k=1, M=m, which="LA")
            return float(w2[0]), v[:, 0]
        except (RuntimeError, spla.ArpackError):  # no convergence: go dense
            pass
    w2, v = eigh_one_thread(k.toarray(), m.toarray(), (n - 1, n - 1))
    return float(w2[0]), v[:, 0]


def _blocks(k: np.ndarray) -> list[np.ndarray]:
    """Index sets of independent sub-problems: the x- and y-components when the tangent has no
    x-y coupling (straight reference: axial and bending decouple; the mass never couples)."""
    n = k.shape[0]
    ix, iy = np.arange(0, n, 2), np.arange(1, n, 2)
    if np.abs(k[np.ix_(ix, iy)]).max(initial=0.0) <= 1e-13 * np.abs(k).max():
        return [ix, iy]
    return [np.arange(n)]


def _band_blocks(ab: np.ndarray) -> list[np.ndarray]:
    """:func:`_blocks` from the tangent in ``solve_banded((7, 7))`` storage: free DOFs
    alternate x, y, so the x-y coupling sits on the odd diagonals."""
    n = ab.shape[1]
    odd = ab[[BANDWIDTH + d for d in range(-BANDWIDTH, BANDWIDTH + 1) if d % 2]]
    if np.abs(odd).max(initial=0.0) <= 1e-13 * np.abs(ab).max():
        return [np.arange(0, n, 2), np.arange(1, n, 2)]
    return [np.arange(n)]


def _as_slice(idx: np.ndarray) -> slice:
    """The block indices of :func:`_band_blocks` (all DOFs, or every second) as a slice."""
    step = int(idx[1] - idx[0]) if idx.size > 1 else 1
    return slice(int(idx[0]), int(idx[-1]) + 1, step)


def _subspace_size(nb: int, size: int) -> int:
    """Basis vectors for ``nb`` wanted modes of a block of ``size`` DOFs. Lanczos blocks (more
    than DENSE_MAX DOFs) get extra vectors that let the Ritz step remove what the round-off of
    the assembled tangent mixed into the low modes (measured at 10000 elements: omega_1 to 6e-7
    with 3 vectors, 4e-8 with 12). Dense blocks need none: omega_1..3 with 3 and with 13
    vectors differ by at most 1e-11 relative at 20 to 100 elements, uniform and graded."""
    if size <= DENSE_MAX:
        return nb
    return min(size, max(2 * nb, nb + 10))


def projected_tangent(model: BeamModel, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``V^T K_T(q) V`` (free DOFs; ``v``: (n_free, k)) in energy form: the first and second
    derivatives of the axial strain and the curvature along the basis vectors at the Gauss
    points, weighted as in the element kernels. Equal to the assembled tangent projected
    (relative 2e-16 on a random state) but free of its rigid-body cancellation."""
    full = np.zeros((model.n_dof, v.shape[1]))
    full[CLAMP:] = v
    n_el, spa, spb, sppb, ea_w, ei_w, eps0, kap0, linear = model.kernel_args()
    q = np.asarray(q, dtype=float)
    out = np.zeros((v.shape[1], v.shape[1]))
    _axial_projected(q, full, n_el, spa, ea_w, eps0, linear, out)
    _bending_projected(q, full, n_el, spb, sppb, ei_w, kap0, linear, out)
    return out


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _along(q, v, o, srow, a):
    """``S q`` of the element at DOF offset ``o`` for the shape row ``srow`` (returned, x and
    y), and ``S v`` for every column of ``v`` into ``a`` (2, k)."""
    rx = ry = 0.0
    a[:] = 0.0
    for nb in range(4):
        s = srow[nb]
        rx += s * q[o + 2 * nb]
        ry += s * q[o + 2 * nb + 1]
        for j in range(v.shape[1]):
            a[0, j] += s * v[o + 2 * nb, j]
            a[1, j] += s * v[o + 2 * nb + 1, j]
    return rx, ry


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _add_rank1(out, w, u):
    """``out += w u u^T`` (the linear measures' projected tangent at one Gauss point)."""
    for i in range(u.shape[0]):
        for j in range(u.shape[0]):
            out[i, j] += w * u[i] * u[j]


@njit(cache=True, nogil=True, error_model="numpy")
def _axial_projected(q, v, n_el, spa, ea_w, eps0, linear, out):
    """Axial part of :func:`projected_tangent` into ``out``: eps = |r'| - 1 - eps0 (linear: x
    component of r' - 1), ``a`` = r' along each vector, ``de`` its first derivative."""
    k = v.shape[1]
    a = np.empty((2, k))
    de = np.empty(k)
    for e in range(n_el):
        o = 4 * e
        for gp in range(spa.shape[0]):
            rx, ry = _along(q, v, o, spa[gp], a)
            w = ea_w[e, gp]
            if linear:
                _add_rank1(out, w, a[0])
                continue
            nrm = np.sqrt(rx * rx + ry * ry)
            eps = nrm - 1.0 - eps0[e, gp]
            for j in range(k):
                de[j] = (rx * a[0, j] + ry * a[1, j]) / nrm
            for i in range(k):
                for j in range(k):
                    d2e = (a[0, i] * a[0, j] + a[1, i] * a[1, j] - de[i] * de[j]) / nrm
                    out[i, j] += w * (de[i] * de[j] + eps * d2e)


@njit(cache=True, nogil=True, error_model="numpy")
def _bending_projected(q, v, n_el, spb, sppb, ei_w, kap0, linear, out):
    """Bending part of :func:`projected_tangent` into ``out``: kappa = c / g with c = r' x r'',
    g = |r'|^2 (linear: the y component of r''), along a = S' v and b = S'' v."""
    k = v.shape[1]
    a = np.empty((2, k))
    b = np.empty((2, k))
    dc = np.empty(k)
    dg = np.empty(k)
    dk = np.empty(k)
    for e in range(n_el):
        o = 4 * e
        for gp in range(spb.shape[0]):
            px, py = _along(q, v, o, spb[gp], a)
            ppx, ppy = _along(q, v, o, sppb[gp], b)
            w = ei_w[e, gp]
            if linear:
                _add_rank1(out, w, b[1])
                continue
            g = px * px + py * py
            c = px * ppy - py * ppx
            kap = c / g - kap0[e, gp]
            for j in range(k):
                dc[j] = a[0, j] * ppy - a[1, j] * ppx + px * b[1, j] - py * b[0, j]
                dg[j] = 2.0 * (px * a[0, j] + py * a[1, j])
                dk[j] = dc[j] / g - c * dg[j] / (g * g)
            for i in range(k):
                for j in range(k):
                    d2c = a[0, i] * b[1, j] - a[1, i] * b[0, j]
                    d2c += a[0, j] * b[1, i] - a[1, j] * b[0, i]
                    d2g = 2.0 * (a[0, i] * a[0, j] + a[1, i] * a[1, j])
                    d2k = (d2c - (dc[i] * dg[j] + dc[j] * dg[i]) / g - c * d2g / g) / g
                    d2k += 2.0 * c * dg[i] * dg[j] / (g * g * g)
                    out[i, j] += w * (dk[i] * dk[j] + kap * d2k)


def _block_basis(k_mat, m_mat, idx: np.ndarray, nv: int) -> np.ndarray:
    """``nv`` lowest eigenvectors of the block ``idx`` of ``(K, M)`` (dense arrays when every
    block is small, sparse matrices otherwise): dense for small blocks or nearly full spectra,
    shift-invert Lanczos about 0 otherwise."""
    n = idx.size
    if sp.issparse(k_mat):
        kb = k_mat[idx][:, idx].tocsc()
        mb = m_mat[idx][:, idx].tocsc()
        if n > DENSE_MAX and nv < n // 2:
            try:
                # a fixed start vector: ARPACK's random one makes the digits below the Ritz
                # step's precision (1e-8 on 5000 coupled elements) differ from run to run
                v0 = np.random.default_rng(0).standard_normal(n)
                w2, v = spla.eigsh(kb, k=nv, M=mb, sigma=0.0, which="LM", v0=v0)
                return v[:, np.argsort(w2)]
            except (RuntimeError, spla.ArpackError):  # singular K or no convergence: go dense
                pass
        kb, mb = kb.toarray(), mb.toarray()
    else:
        sl = _as_slice(idx)
        kb, mb = k_mat[sl, sl], m_mat[sl, sl]
    _, v = eigh_one_thread(kb, mb, (0, nv - 1))
    return v


def _none_below(k_mat, m_mat, idx: np.ndarray, w2: float) -> bool:
    """True when the block ``idx`` provably has no eigenvalue below ``w2``: ``K - w2 M`` is
    positive definite (Sylvester's law of inertia; a Cholesky factorisation exists). Checked
    on dense problems only; False means "solve the block"."""
    if sp.issparse(k_mat):
        return False
    try:
        sl = _as_slice(idx)
        np.linalg.cholesky(k_mat[sl, sl] - w2 * m_mat[sl, sl])
    except np.linalg.LinAlgError:
        return False
    return True


def _lowest_eigenpairs(model: BeamModel, q: np.ndarray, n_modes: int):
    """Lowest ``n_modes`` eigenpairs of ``(K_T(q), M)``, solving decoupled blocks separately
    and refining each block's modes by Rayleigh-Ritz with :func:`projected_tangent`.

    Returns ``(w2, v, block)``: ``block[i]`` is 0 (x) or 1 (y) for each mode when the problem
    split into components, else None."""
    ab = model.tangent_band(q)
    blocks = _band_blocks(ab)
    if max(idx.size for idx in blocks) > DENSE_MAX:
        k_mat, m_mat = band_to_sparse(ab), sym_band_to_sparse(model.mass_free_lower_band)
    else:  # small problems: dense arrays (slicing sparse matrices costs more than the solve)
        k_mat, m_mat = band_to_dense(ab), sym_band_to_dense(model.mass_free_lower_band)
    vals, vecs, labels = [], [], []
    bound = None  # the n_modes-th eigenvalue of a solved block: nothing above it is wanted
    # the y block first: a beam bent in its plane usually has its lowest modes there
    for b in reversed(range(len(blocks))):
        idx = blocks[b]
        nb = min(n_modes, idx.size)
        if bound is not None and _none_below(k_mat, m_mat, idx, bound):
            continue
        basis = np.zeros((model.n_free, _subspace_size(nb, idx.size)))
        basis[idx] = _block_basis(k_mat, m_mat, idx, basis.shape[1])
        kr = projected_tangent(model, q, basis)
        mr = basis.T @ (m_mat @ basis)
        w2, y = sla.eigh(0.5 * (kr + kr.T), 0.5 * (mr + mr.T), subset_by_index=(0, nb - 1))
        y *= np.where(np.diagonal(y) < 0.0, -1.0, 1.0)  # the signs of the basis vectors
        vals.append(w2)
        vecs.append(basis @ y)
        labels.append(np.full(nb, b))
        if nb == n_modes:
            bound = w2[-1] if bound is None else min(bound, w2[-1])
    w2 = np.concatenate(vals)
    v = np.concatenate(vecs, axis=1)
    order = np.argsort(w2)[:n_modes]
    block = np.concatenate(labels)[order] if len(blocks) == 2 else None
    return w2[order], v[:, order], block
