"""Strain-driven, irreversible damage at the integration points.

Law (documented, parameters in the config section ``damage``):

* equivalent strain at an integration point: the largest fibre strain of the section,
  ``e_eq = |eps - eps0| + h(x)/2 |kappa - kappa0|`` (axial strain plus bending strain at the
  outer fibre, both measured from the stress-free reference);
* history variable ``k = max over the loading history of e_eq`` (so damage never heals);
* damage ``d = 0`` for ``k <= threshold``, else
  ``d = d_max (1 - exp(-(k - threshold) / softening))``;
* effective stiffness ``EA_eff = EA (1 - d)``, ``EI_eff = EI (1 - d)`` at that point.

The energy released when ``d`` grows at a fixed configuration (``U(q; d_old) - U(q; d_new)``) is
returned as dissipated work, so the energy balance of a dynamic run still closes. With
``damage.enabled: false`` nothing here runs and results are bit-identical to an undamaged run.
Damage needs the axial and bending terms integrated at the same points
(``mesh.n_gauss_axial == mesh.n_gauss_bending``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ancf_beam.beam.defects import mapped_values
from ancf_beam.beam.model import BeamModel, gauss01

__all__ = [
    "DamageState",
    "half_heights",
    "update_damage",
]


def half_heights(model: BeamModel) -> np.ndarray:
    """``h(x_g) / 2`` (m) at the integration points, shape (n_el, n_gauss), mapped like EI."""
    qb = gauss01(model.case.mesh.n_gauss_bending)
    h = mapped_values(model.profile.height, model.x_nodes, qb.xi, model.case.defect.mapping)
    return np.ascontiguousarray(0.5 * h)


@njit(cache=True, nogil=True, error_model="numpy")
def update_damage(
    q,
    n_el,
    spb,
    sppb,
    eps0,
    kap0,
    linear,
    half_h,
    threshold,
    softening,
    d_max,
    hist,
    dmg,
    ea_w0,
    ei_w0,
    ea_w,
    ei_w,
):
    """Update history, damage and effective stiffness weights in place; return the energy
    released by the damage growth (J)."""
    released = 0.0
    ng = spb.shape[0]
    for el in range(n_el):
        o = 4 * el
        for g in range(ng):
            rx = 0.0
            ry = 0.0
            ddx = 0.0
            ddy = 0.0
            for a in range(4):
                rx += spb[g, a] * q[o + 2 * a]
                ry += spb[g, a] * q[o + 2 * a + 1]
                ddx += sppb[g, a] * q[o + 2 * a]
                ddy += sppb[g, a] * q[o + 2 * a + 1]
            if linear:
                eps = rx - 1.0 - eps0[el, g]
                kap = ddy - kap0[el, g]
            else:
                g2 = rx * rx + ry * ry
                eps = math.sqrt(g2) - 1.0 - eps0[el, g]
                kap = (rx * ddy - ry * ddx) / g2 - kap0[el, g]
            e_eq = abs(eps) + half_h[el, g] * abs(kap)
            if e_eq > hist[el, g]:
                hist[el, g] = e_eq
            k = hist[el, g]
            if k > threshold:
                d_new = d_max * (1.0 - math.exp(-(k - threshold) / softening))
                if d_new > dmg[el, g]:
                    dd = d_new - dmg[el, g]
                    released += 0.5 * dd * (ea_w0[el, g] * eps * eps + ei_w0[el, g] * kap * kap)
                    dmg[el, g] = d_new
                    ea_w[el, g] = ea_w0[el, g] * (1.0 - d_new)
                    ei_w[el, g] = ei_w0[el, g] * (1.0 - d_new)
    return released


class DamageState:
    """History and damage arrays of one model, updated in place (model weights included)."""

    def __init__(self, model: BeamModel):
        spec = model.case.damage
        if model.ea_w.shape != model.ei_w.shape:
            raise ValueError("damage needs mesh.n_gauss_axial == mesh.n_gauss_bending")
        self.model = model
        self.spec = spec
        self.half_h = half_heights(model)
        self.hist = np.zeros_like(model.ei_w)

    @property
    def d(self) -> np.ndarray:
        return self.model.damage

    def args(self):
        """Arguments of :func:`update_damage` after ``q``."""
        m = self.model
        s = self.spec
        return (
            m.n_el,
            m.spb,
            m.sppb,
            m.eps0,
            m.kap0,
            m.linear,
            self.half_h,
            s.threshold,
            s.softening,
            s.d_max,
            self.hist,
            m.damage,
            m.ea_w0,
            m.ei_w0,
            m.ea_w,
            m.ei_w,
        )

    def save(self) -> tuple[np.ndarray, np.ndarray]:
        return self.hist.copy(), self.model.damage.copy()

    def restore(self, saved: tuple[np.ndarray, np.ndarray]) -> None:
        hist, d = saved
        self.hist[:] = hist
        self.model.damage[:] = d
        self.model.ea_w[:] = self.model.ea_w0 * (1.0 - d)
        self.model.ei_w[:] = self.model.ei_w0 * (1.0 - d)

    def update(self, q: np.ndarray) -> float:
        return float(update_damage(np.ascontiguousarray(q, float), *self.args()))
