"""Modal analysis: ``(K_T - omega^2 M) phi = 0`` on the reduced (clamp-eliminated) system.

About the straight reference (``about='reference'``), where the tangent is the linear
Euler-Bernoulli plus bar stiffness, or about the static equilibrium under gravity
(``about='static'``, includes the geometric stiffening of the deformed state).
"""

from __future__ import annotations

import numpy as np

from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.linalg import eigh_one_thread
from ancf_beam.results import ModalResult
from ancf_beam.solvers.static import solve_static

__all__ = ["axial_fraction", "modal_analysis", "omega_max"]


def axial_fraction(model: BeamModel, shapes: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Fraction of each mode's mass-weighted norm carried by the local axial direction.

    For a straight reference the axial direction is x; for a deformed state it is the local
    tangent at each node. Values near 1: axial (bar) mode; near 0: bending mode.
    """
    m = model.mass_dense(free=False)
    out = np.empty(shapes.shape[0])
    t = q.reshape(-1, 4)[:, 2:4]
    t = t / np.linalg.norm(t, axis=1, keepdims=True)
    for k, phi in enumerate(shapes):
        full = np.zeros(model.n_dof)
        full[CLAMP:] = phi
        blocks = full.reshape(-1, 2)  # (position, slope) 2-vectors alternating per node
        tt = np.repeat(t, 2, axis=0)
        ax = np.zeros_like(blocks)
        ax[:] = (np.sum(blocks * tt, axis=1))[:, None] * tt
        a = ax.ravel()
        num = a @ m @ a
        den = full @ m @ full
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
    w2, v, block = _lowest_eigenpairs(model.tangent_dense(q), model.mass_dense(), n_modes)
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
    """Largest natural frequency (rad/s) of the reduced system and its mode shape."""
    q = model.reference() if q is None else q
    k = model.tangent_dense(q)
    m = model.mass_dense()
    best = (-np.inf, None)
    for idx in _blocks(k):
        n = idx.size
        w2, v = eigh_one_thread(k[np.ix_(idx, idx)], m[np.ix_(idx, idx)], (n - 1, n - 1))
        if w2[0] > best[0]:
            phi = np.zeros(k.shape[0])
            phi[idx] = v[:, 0]
            best = (w2[0], phi)
    return float(np.sqrt(best[0])), best[1]


def _blocks(k: np.ndarray) -> list[np.ndarray]:
    """Index sets of independent sub-problems: the x- and y-components when the tangent has no
    x-y coupling (straight reference: axial and bending decouple; the mass never couples)."""
    n = k.shape[0]
    ix, iy = np.arange(0, n, 2), np.arange(1, n, 2)
    if np.abs(k[np.ix_(ix, iy)]).max(initial=0.0) <= 1e-13 * np.abs(k).max():
        return [ix, iy]
    return [np.arange(n)]


def _lowest_eigenpairs(k: np.ndarray, m: np.ndarray, n_modes: int):
    """Lowest ``n_modes`` eigenpairs of ``(k, m)``, solving decoupled blocks separately.

    Returns ``(w2, v, block)``: ``block[i]`` is 0 (x) or 1 (y) for each mode when the problem
    split into components, else None."""
    vals, vecs, labels = [], [], []
    blocks = _blocks(k)
    for b, idx in enumerate(blocks):
        nb = min(n_modes, idx.size)
        w2, v = eigh_one_thread(k[np.ix_(idx, idx)], m[np.ix_(idx, idx)], (0, nb - 1))
        full = np.zeros((k.shape[0], nb))
        full[idx] = v
        vals.append(w2)
        vecs.append(full)
        labels.append(np.full(nb, b))
    w2 = np.concatenate(vals)
    v = np.concatenate(vecs, axis=1)
    order = np.argsort(w2)[:n_modes]
    block = np.concatenate(labels)[order] if len(blocks) == 2 else None
    return w2[order], v[:, order], block
