"""Modal analysis: ``(K_T - omega^2 M) phi = 0`` on the reduced (clamp-eliminated) system.

About the straight reference (``about='reference'``), where the tangent is the linear
Euler-Bernoulli plus bar stiffness, or about the static equilibrium under gravity
(``about='static'``, includes the geometric stiffening of the deformed state).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from .model import CLAMP, BeamModel
from .static import solve_static


@dataclass
class ModalResult:
    omega: np.ndarray  # rad/s, ascending
    frequency_hz: np.ndarray  # Hz
    shapes: np.ndarray  # (n_modes, n_free) mass-normalised mode shapes
    about: str
    q: np.ndarray  # full coordinates of the state linearised about
    axial_fraction: np.ndarray  # share of each mode's kinetic energy in x-translations


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
    k = model.tangent_dense(q)
    m = model.mass_dense()
    w2, v = sla.eigh(k, m, subset_by_index=(0, n_modes - 1))
    omega = np.sqrt(np.clip(w2, 0.0, None))
    shapes = v.T
    return ModalResult(
        omega=omega,
        frequency_hz=omega / (2 * np.pi),
        shapes=shapes,
        about=about,
        q=q,
        axial_fraction=axial_fraction(model, shapes, q),
    )


def omega_max(model: BeamModel, q: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Largest natural frequency (rad/s) of the reduced system and its mode shape."""
    q = model.reference() if q is None else q
    k = model.tangent_dense(q)
    m = model.mass_dense()
    n = model.n_free
    w2, v = sla.eigh(k, m, subset_by_index=(n - 1, n - 1))
    return float(np.sqrt(w2[0])), v[:, 0]
