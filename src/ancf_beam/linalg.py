"""Banded and small dense linear algebra shared by the beam solvers.

Storage conventions (``n`` unknowns, half-bandwidth ``BANDWIDTH = 7`` in node-major order):

* symmetric *lower band* ``lb[i - j, j] = A[i, j]`` (``lb.shape == (8, n)``), as from
  ``scipy.linalg.cholesky_banded(lower=True)``;
* *general band* ``ab[7 + i - j, j] = A[i, j]`` (``(15, n)``), as for
  ``scipy.linalg.solve_banded((7, 7), ...)``;
* the consistent mass has no x-y coupling (``M = m (x) I2``): it splits into two scalar
  half-bandwidth-3 systems (:func:`xy_cholesky`, :func:`row_factor`, :func:`solve_xy_rows`).

The numba routines are allocation-free (callers pass work arrays) and are what the time loops
call. Small dense generalized eigenproblems run on one BLAS thread (:func:`eigh_one_thread`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from threadpoolctl import ThreadpoolController

if TYPE_CHECKING:  # scipy is imported where it is used (start-up time of a static run)
    import scipy.sparse as sp

BANDWIDTH = 7  # half-bandwidth of the node-major global matrices
# Floating-point contraction and reassociation only: NaN/Inf semantics are kept, so the stability
# guards' isfinite checks stay meaningful.
FAST = {"contract", "reassoc", "nsz", "arcp"}

__all__ = [
    "BANDWIDTH",
    "FAST",
    "BandFactor",
    "band_cholesky",
    "band_factor_solve",
    "band_factorize",
    "band_lu",
    "band_to_dense",
    "band_to_dense_into",
    "cho_solve_xy_inplace",
    "eigh_one_thread",
    "padded_band",
    "padded_band_matvec",
    "row_factor",
    "solve_xy_rows",
    "sym_band_matvec",
    "sym_band_to_dense",
    "xy_cholesky",
]


# ------------------------------------------------------------------------------------------
# the mass: x/y-split banded Cholesky (explicit solver)
# ------------------------------------------------------------------------------------------
def xy_cholesky(lb: np.ndarray):
    """Factor a free-DOF symmetric band matrix (lower storage, half-bandwidth 7) that has no
    coupling between the x- and y-components (the consistent mass ``M = m (x) I2``, and the
    reference tangent, are of this kind) into two scalar factors of half-bandwidth 3.

    Returns ``(cbx, cby, invx, invy)`` for :func:`cho_solve_xy_inplace`.
    """
    coupling = np.abs(lb[1::2]).max(initial=0.0)
    if coupling > 1e-12 * np.abs(lb[0]).max():
        raise ValueError("matrix couples x- and y-components; use a full banded factorisation")
    import scipy.linalg as sla

    out = []
    for c in (0, 1):
        comp = np.ascontiguousarray(lb[0::2, c::2])  # offsets 0, 2, 4, 6 -> 0, 1, 2, 3
        out.append(np.ascontiguousarray(sla.cholesky_banded(comp, lower=True)))
    cbx, cby = out
    return cbx, cby, 1.0 / cbx[0], 1.0 / cby[0]


def aligned_zeros(shapes: list[tuple]) -> list[np.ndarray]:
    """Zero arrays of these shapes as views of one buffer, each starting on a 64-byte boundary
    (a cache line, one 8-wide vector): vectorised loops then never split a vector access
    across two lines, a row of 8 doubles is one line, and the arrays keep the same relative
    placement from run to run. (With numpy's own placement a 20-element 5/3 force took 476 to
    915 ns, depending on where its arrays happened to fall.)"""
    sizes = [int(np.prod(sh)) for sh in shapes]
    spans = [-(-n // 8) * 8 for n in sizes]
    buf = np.zeros(sum(spans) + 8)
    o = (-(buf.ctypes.data // 8)) % 8
    out = []
    for sh, n, span in zip(shapes, sizes, spans, strict=True):
        out.append(buf[o : o + n].reshape(sh))
        o += span
    return out


def aligned_copies(*arrays: np.ndarray) -> list[np.ndarray]:
    """C-contiguous float copies of ``arrays`` placed as by :func:`aligned_zeros`."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    out = aligned_zeros([a.shape for a in arrays])
    for o, a in zip(out, arrays, strict=True):
        o[...] = a
    return out


def band_to_dense(ab: np.ndarray) -> np.ndarray:
    """Dense matrix from ``solve_banded((7, 7))`` storage ``ab[7 + i - j, j] = A[i, j]``."""
    n = ab.shape[1]
    m = np.zeros((n, n))
    band_to_dense_into(ab, m)
    return m


@njit(cache=True, nogil=True, error_model="numpy")
def band_to_dense_into(ab, m):
    """Fill the dense ``m`` (zeros outside the band) from band storage ``ab`` (compiled code)."""
    n = ab.shape[1]
    for j in range(n):
        for i in range(max(0, j - BANDWIDTH), min(n, j + BANDWIDTH + 1)):
            m[i, j] = ab[BANDWIDTH + i - j, j]


@njit(cache=True, nogil=True, fastmath=FAST, error_model="numpy")
def cho_solve_xy_inplace(cbx, cby, invx, invy, x):
    """Solve ``M z = b`` in place for a matrix that decouples into x- and y-components.

    The free vector interleaves the components (``x[2i]``: x-part, ``x[2i+1]``: y-part, both with
    half-bandwidth 3 in node-major order), so ``M = P^T diag(Mx, My) P`` and each part has its
    own lower banded Cholesky factor ``cb[i-j, j] = L[i, j]`` with reciprocal diagonal ``inv``.
    Both triangular sweeps process the two components in the same loop for instruction-level
    parallelism.
    """
    n = cbx.shape[1]
    p = cbx.shape[0] - 1
    for i in range(n):
        sx = x[2 * i]
        sy = x[2 * i + 1]
        j0 = i - p
        if j0 < 0:
            j0 = 0
        for j in range(j0, i):
            sx -= cbx[i - j, j] * x[2 * j]
            sy -= cby[i - j, j] * x[2 * j + 1]
        x[2 * i] = sx * invx[i]
        x[2 * i + 1] = sy * invy[i]
    for i in range(n - 1, -1, -1):
        sx = x[2 * i]
        sy = x[2 * i + 1]
        j1 = i + p
        if j1 > n - 1:
            j1 = n - 1
        for j in range(i + 1, j1 + 1):
            sx -= cbx[j - i, i] * x[2 * j]
            sy -= cby[j - i, i] * x[2 * j + 1]
        x[2 * i] = sx * invx[i]
        x[2 * i + 1] = sy * invy[i]


def row_factor(cb: np.ndarray) -> np.ndarray:
    """Row-wise, diagonal-scaled copy of a lower band factor ``cb[i-j, j] = L[i, j]`` with
    half-bandwidth 3, for :func:`solve_xy_rows`: ``R[i] = [1/L_ii, L_i,i-1/L_ii, L_i,i-2/L_ii,
    L_i,i-3/L_ii, L_i+1,i/L_ii, L_i+2,i/L_ii, L_i+3,i/L_ii, 0]`` (zeros outside the matrix)."""
    if cb.shape[0] != 4:
        raise ValueError("row_factor expects a half-bandwidth-3 factor (one mass component)")
    n = cb.shape[1]
    r = np.zeros((n, 8))
    d = 1.0 / cb[0]
    r[:, 0] = d
    for k in (1, 2, 3):
        r[k:, k] = cb[k, : n - k] * d[k:]  # L[i, i-k]
        r[: n - k, 3 + k] = cb[k, : n - k] * d[: n - k]  # L[i+k, i]
    return np.ascontiguousarray(r)


@njit(cache=True, nogil=True, fastmath=FAST, error_model="numpy")
def solve_xy_rows(rx, ry, x, zx, zy):
    """Solve ``M z = b`` in place on the interleaved free vector ``x`` (see
    :func:`cho_solve_xy_inplace`) with the row factors of :func:`row_factor`; ``zx``/``zy`` are
    scratch vectors of length n. The last three unknowns of each sweep are kept in scalars, so
    the loop-carried dependency is one multiply-add per row (about 3x faster than the column
    form, whose every row waits for a division and a chain of seven updates)."""
    n = rx.shape[0]
    x1 = x2 = x3 = 0.0  # y[i-1], y[i-2], y[i-3] of the x-component
    y1 = y2 = y3 = 0.0
    for i in range(n):
        ax = x[2 * i] * rx[i, 0] - rx[i, 3] * x3 - rx[i, 2] * x2
        ay = x[2 * i + 1] * ry[i, 0] - ry[i, 3] * y3 - ry[i, 2] * y2
        vx = ax - rx[i, 1] * x1
        vy = ay - ry[i, 1] * y1
        zx[i] = vx
        zy[i] = vy
        x3 = x2
        x2 = x1
        x1 = vx
        y3 = y2
        y2 = y1
        y1 = vy
    x1 = x2 = x3 = 0.0  # z[i+1], z[i+2], z[i+3]
    y1 = y2 = y3 = 0.0
    for i in range(n - 1, -1, -1):
        ax = zx[i] * rx[i, 0] - rx[i, 6] * x3 - rx[i, 5] * x2
        ay = zy[i] * ry[i, 0] - ry[i, 6] * y3 - ry[i, 5] * y2
        vx = ax - rx[i, 4] * x1
        vy = ay - ry[i, 4] * y1
        x[2 * i] = vx
        x[2 * i + 1] = vy
        x3 = x2
        x2 = x1
        x1 = vx
        y3 = y2
        y2 = y1
        y1 = vy


@njit(cache=True, nogil=True, error_model="numpy")
def sym_band_matvec(lb, x, y):
    """``y = A x`` for a symmetric matrix in lower band storage ``lb[i-j, j] = A[i, j]``."""
    n = x.shape[0]
    p = lb.shape[0] - 1
    for i in range(n):
        y[i] = lb[0, i] * x[i]
    for d in range(1, p + 1):
        for j in range(n - d):
            a = lb[d, j]
            y[j + d] += a * x[j]
            y[j] += a * x[j + d]


# ------------------------------------------------------------------------------------------
# general symmetric band matrices (implicit Newton): Cholesky with an LU fallback
# ------------------------------------------------------------------------------------------
# The Cholesky factor ``K = L L^T`` is kept in two row layouts of one cache line per row, both
# pre-scaled by the reciprocal diagonal: ``fac[0, i, k] = L[i, i-7+k] / L[i, i]`` (k < 7; zero
# outside the matrix) for the forward sweep, ``fac[1, i, k] = L[i+1+k, i] / L[i, i]`` for the
# backward sweep, and ``fac[:, i, 7] = 1 / L[i, i]``. The sweeps run on a copy of the right-hand
# side padded with 7 zeros at both ends (fixed-length inner loops without branches) and keep the
# three most recent unknowns in registers, so that each row adds one multiply-add to the
# dependency chain. When ``K`` is not positive definite a banded LU with partial pivoting is
# used instead (LAPACK ``dgbtf2`` algorithm and layout ``lu[2 bw + i - j, j] = A[i, j]``).
NO_FACTOR = 0  # band_factorize results
CHOLESKY = 1
LU = 2


@njit(cache=True, nogil=True, error_model="numpy")
def band_cholesky(lb, fac):
    """Banded Cholesky of ``lb[i-j, j] = A[i, j]`` (half-bandwidth 7) into ``fac`` (layout
    above); False when the matrix is not (numerically) positive definite."""
    n = lb.shape[1]
    lo = fac[0]  # first unscaled: lo[i, k] = L[i, i-7+k], lo[i, 7] = L[i, i]
    up = fac[1]
    for i in range(n):
        for k in range(BANDWIDTH + 1):
            j = i - BANDWIDTH + k  # column
            if j < 0:
                lo[i, k] = 0.0
                continue
            s = lb[i - j, j]
            # sum over the columns c < j of L[i, c] L[j, c]; L[i, c] = lo[i, c - i + 7]
            for c in range(max(0, i - BANDWIDTH), j):
                s -= lo[i, c - i + BANDWIDTH] * lo[j, c - j + BANDWIDTH]
            if j < i:
                lo[i, k] = s * up[j, BANDWIDTH]
            elif s > 0.0:
                d = np.sqrt(s)
                lo[i, BANDWIDTH] = d
                up[i, BANDWIDTH] = 1.0 / d
            else:  # not positive definite (or NaN)
                return False
    for i in range(n):
        inv = up[i, BANDWIDTH]
        for k in range(BANDWIDTH):
            r = i + 1 + k
            up[i, k] = lo[r, BANDWIDTH - 1 - k] * inv if r < n else 0.0  # L[i+1+k, i] / L[i, i]
    for i in range(n):
        inv = up[i, BANDWIDTH]
        for k in range(BANDWIDTH):
            lo[i, k] *= inv
        lo[i, BANDWIDTH] = inv
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def band_lu(lb, lu, piv):
    """Banded LU with partial pivoting of the symmetric matrix ``lb`` (lower band storage);
    False when it is singular."""
    bw = lb.shape[0] - 1
    n = lb.shape[1]
    kv = 2 * bw
    for r in range(lu.shape[0]):
        for j in range(n):
            lu[r, j] = 0.0
    for d in range(bw + 1):
        for j in range(n - d):
            lu[kv + d, j] = lb[d, j]  # A[j + d, j]
            lu[kv - d, j + d] = lb[d, j]  # A[j, j + d]
    ju = 0
    for j in range(n):
        km = min(bw, n - 1 - j)
        jp = 0
        amax = abs(lu[kv, j])
        for t in range(1, km + 1):
            x = abs(lu[kv + t, j])
            if x > amax:
                amax = x
                jp = t
        piv[j] = j + jp
        if not (amax > 0.0 and np.isfinite(amax)):
            return False
        ju = max(ju, min(j + bw + jp, n - 1))
        if jp != 0:  # swap rows j and j + jp in columns j..ju
            for c in range(j, ju + 1):
                r1 = kv + j - c
                r2 = r1 + jp
                x = lu[r1, c]
                lu[r1, c] = lu[r2, c]
                lu[r2, c] = x
        inv = 1.0 / lu[kv, j]
        for t in range(1, km + 1):
            lu[kv + t, j] *= inv
        for c in range(j + 1, ju + 1):
            u = lu[kv + j - c, c]  # A[j, c]
            if u != 0.0:
                for t in range(1, km + 1):
                    lu[kv + j + t - c, c] -= lu[kv + t, j] * u
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def band_factorize(lb, fac, lu, piv):
    """Factorise the symmetric band matrix ``lb``: returns ``CHOLESKY`` (``fac`` filled),
    ``LU`` (not positive definite: ``lu``/``piv`` filled) or ``NO_FACTOR`` (singular)."""
    if band_cholesky(lb, fac):
        return CHOLESKY
    if band_lu(lb, lu, piv):
        return LU
    return NO_FACTOR


@njit(cache=True, nogil=True, error_model="numpy")
def band_factor_solve(kind, fac, lu, piv, xp, x):
    """Overwrite ``x`` with the solution of ``K y = x`` for a factorisation from
    :func:`band_factorize` (``xp``: work vector of ``n + 14`` entries whose ends stay zero)."""
    n = x.shape[0]
    if kind == CHOLESKY:
        for i in range(n):
            xp[BANDWIDTH + i] = x[i]
        lo = fac[0]
        x1 = x2 = x3 = 0.0  # the three previous unknowns
        for i in range(n):  # L y = b
            row = lo[i]
            s = xp[i + BANDWIDTH] * row[BANDWIDTH] - (
                (row[0] * xp[i] + row[1] * xp[i + 1]) + (row[2] * xp[i + 2] + row[3] * xp[i + 3])
            )
            s -= row[4] * x3
            s -= row[5] * x2
            s -= row[6] * x1
            x3 = x2
            x2 = x1
            x1 = s
            xp[i + BANDWIDTH] = s
        up = fac[1]
        x1 = x2 = x3 = 0.0
        for i in range(n - 1, -1, -1):  # L^T x = y
            row = up[i]
            j = i + BANDWIDTH + 1  # xp index of x[i + 1]
            s = xp[i + BANDWIDTH] * row[BANDWIDTH] - (
                (row[6] * xp[j + 6] + row[5] * xp[j + 5])
                + (row[4] * xp[j + 4] + row[3] * xp[j + 3])
            )
            s -= row[2] * x3
            s -= row[1] * x2
            s -= row[0] * x1
            x3 = x2
            x2 = x1
            x1 = s
            xp[i + BANDWIDTH] = s
            x[i] = s
        return
    kv = 2 * BANDWIDTH
    for j in range(n - 1):
        p = piv[j]
        if p != j:
            t = x[p]
            x[p] = x[j]
            x[j] = t
        xj = x[j]
        for t in range(1, min(BANDWIDTH, n - 1 - j) + 1):
            x[j + t] -= lu[kv + t, j] * xj
    for j in range(n - 1, -1, -1):
        xj = x[j] / lu[kv, j]
        x[j] = xj
        for i in range(max(0, j - kv), j):
            x[i] -= lu[kv + i - j, j] * xj


class BandFactor:
    """Factorisation of a symmetric banded matrix (``lb``: lower band storage, half-bandwidth
    7): banded Cholesky, or banded LU when it is not positive definite (as in the time loop)."""

    def __init__(self, lb: np.ndarray):
        lb = np.ascontiguousarray(lb, dtype=float)
        n = lb.shape[1]
        self.fac = np.zeros((2, n, BANDWIDTH + 1))
        self.lu = np.zeros((3 * BANDWIDTH + 1, n))
        self.piv = np.zeros(n, dtype=np.int64)
        self.xp = np.zeros(n + 2 * BANDWIDTH)
        code = band_factorize(lb, self.fac, self.lu, self.piv)
        if code == NO_FACTOR:
            raise np.linalg.LinAlgError("effective stiffness is singular")
        self.code = code
        self.kind = "cholesky" if code == CHOLESKY else "lu"

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """Solution of ``K x = rhs`` (``rhs`` is overwritten and returned)."""
        band_factor_solve(self.code, self.fac, self.lu, self.piv, self.xp, rhs)
        return rhs


def band_to_sparse(ab: np.ndarray) -> sp.csc_matrix:
    """General band storage ``ab[7 + i - j, j] = A[i, j]`` (``solve_banded((7, 7))``) as a
    sparse matrix (diagonals beyond a matrix smaller than the band are left out: one element
    has 4 free DOFs)."""
    import scipy.sparse as sp

    n = ab.shape[1]
    offs = list(range(-min(BANDWIDTH, n - 1), min(BANDWIDTH, n - 1) + 1))
    diags = [ab[BANDWIDTH - d, d:] if d >= 0 else ab[BANDWIDTH - d, : n + d] for d in offs]
    return sp.diags(diags, offs, shape=(n, n), format="csc")


def sym_band_to_sparse(lb: np.ndarray) -> sp.csc_matrix:
    """Symmetric lower band storage ``lb[i - j, j] = A[i, j]`` as a sparse matrix (diagonals
    beyond a matrix smaller than the band left out)."""
    import scipy.sparse as sp

    n = lb.shape[1]
    nd = min(lb.shape[0], n)
    lower = [lb[d, : n - d] for d in range(nd)]
    offs = [-d for d in range(nd)] + list(range(1, nd))
    return sp.diags(lower + lower[1:], offs, shape=(n, n), format="csc")


def sym_band_to_dense(lb: np.ndarray) -> np.ndarray:
    """Symmetric lower band storage ``lb[i - j, j] = A[i, j]`` as a dense matrix."""
    n = lb.shape[1]
    m = np.zeros((n, n))
    _sym_band_to_dense(lb, m)
    return m


@njit(cache=True, nogil=True, error_model="numpy")
def _sym_band_to_dense(lb, m):
    n = lb.shape[1]
    for j in range(n):
        for d in range(min(lb.shape[0], n - j)):
            m[j + d, j] = lb[d, j]
            m[j, j + d] = lb[d, j]


def padded_band(lb: np.ndarray) -> tuple[np.ndarray, bool]:
    """Symmetric lower band ``lb`` (8, n) as padded diagonals ``bp[d, 7 + j] = A[j + d, j]``
    (zero outside the matrix) for :func:`padded_band_matvec`, and whether only the even offsets are
    non-zero (no x-y coupling, as for the consistent mass and the Rayleigh damping matrix)."""
    n = lb.shape[1]
    bp = np.zeros((BANDWIDTH + 1, n + 2 * BANDWIDTH))
    for d in range(min(BANDWIDTH + 1, n)):  # a matrix smaller than the band: the rest is zero
        bp[d, BANDWIDTH : BANDWIDTH + n - d] = lb[d, : n - d]
    return bp, not np.any(lb[1::2])


@njit(cache=True, nogil=True, error_model="numpy")
def padded_band_matvec(bp, even, x, xp, y):
    """``y = A x`` for a symmetric band matrix from :func:`padded_band` (``xp``: work vector of
    ``n + 14`` entries whose ends stay zero). Row by row, so the loop vectorises."""
    n = x.shape[0]
    for i in range(n):
        xp[BANDWIDTH + i] = x[i]
    if even:
        for i in range(n):
            c = BANDWIDTH + i
            y[i] = (bp[0, c] * xp[c] + (bp[2, c - 2] * xp[c - 2] + bp[2, c] * xp[c + 2])) + (
                (bp[4, c - 4] * xp[c - 4] + bp[4, c] * xp[c + 4])
                + (bp[6, c - 6] * xp[c - 6] + bp[6, c] * xp[c + 6])
            )
        return
    for i in range(n):
        c = BANDWIDTH + i
        s = bp[0, c] * xp[c]
        for d in range(1, BANDWIDTH + 1):
            s += bp[d, c - d] * xp[c - d] + bp[d, c] * xp[c + d]
        y[i] = s


# ------------------------------------------------------------------------------------------
# small dense eigenproblems
# ------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()  # discovering the BLAS libraries costs ~ms: do it once


def eigh_one_thread(k, m, subset):
    """Dense generalized symmetric eigenproblem on one BLAS thread: for the matrix sizes here
    (a few hundred) threading only adds overhead, and on a busy machine a lot of it."""
    import scipy.linalg as sla

    with _blas_controller().limit(limits=1, user_api="blas"):
        return sla.eigh(k, m, subset_by_index=subset, check_finite=False)
