"""The static Newton iterations in one compiled call (:func:`newton_kernel`), the numba path
of :func:`ancf_beam.solvers.static.solve_static` (meshes above its ``DENSE_MAX_ELEMENTS``, or
with damage). Imported only when that path runs: importing it loads numba."""

from __future__ import annotations

import numpy as np
from numba import njit

from ancf_beam.beam import kernels
from ancf_beam.linalg import NO_FACTOR

__all__ = ["CONVERGED", "NOT_CONVERGED", "SINGULAR", "newton_kernel"]

#: outcomes of :func:`newton_kernel` (``static`` repeats them for its dense iterations without
#: importing this module; a test holds the two equal)
CONVERGED, NOT_CONVERGED, SINGULAR = 1, 0, -1


@njit(cache=True, nogil=True, error_model="numpy")
def _norm(x):
    """``||x||``, summed in index order."""
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return np.sqrt(s)


@njit(cache=True, nogil=True, error_model="numpy")
def _distance(x, y):
    """``||x - y||``, summed in index order."""
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        s += d * d
    return np.sqrt(s)


@njit(cache=True, nogil=True, error_model="numpy")
def _all_finite(x):
    """Whether every entry of ``x`` is finite (no temporary array, unlike np.isfinite)."""
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def newton_kernel(q, lam, g_free, strict, tol, rtol, max_it, u_ref, length, kargs, f, w, r):
    """The iterations of ``static._newton`` on ``q`` (full DOF vector, updated in place):
    residual ``R = Q_e(q) + lam Q_g`` on the free DOFs (``g_free``), tangent solve in ``r``
    (``w``: :meth:`BeamModel.tangent_work`, ``f``: a full-DOF work vector). Returns
    (CONVERGED / NOT_CONVERGED / SINGULAR, iterations, ||R||)."""
    ab, lb, fac, lu, piv, xp = w
    n = r.shape[0]
    off = q.shape[0] - n
    u = q[off:]
    du1 = 0.0
    small = False
    rnorm = np.inf
    for it in range(max_it + 1):
        kernels.elastic_force(q, *kargs, f)
        for i in range(n):
            r[i] = f[off + i] + lam * g_free[i]
        rnorm = _norm(r)
        if not np.isfinite(rnorm):
            return NOT_CONVERGED, it, rnorm
        if rnorm <= strict or (small and rnorm <= tol):
            return CONVERGED, it, rnorm
        if it == max_it:
            break
        if kernels.tangent_solve(q, kargs, off, ab, lb, fac, lu, piv, xp, r) == NO_FACTOR:
            return SINGULAR, it, rnorm
        if not _all_finite(r):
            return NOT_CONVERGED, it, rnorm
        for i in range(n):
            u[i] += r[i]
        dnorm = _norm(r)
        if it == 0:
            du1 = dnorm
        scale = _distance(u, u_ref) + du1
        roundoff = 1e-13 * (length + _norm(u))
        small = dnorm <= rtol * scale + roundoff
    return NOT_CONVERGED, max_it, rnorm
