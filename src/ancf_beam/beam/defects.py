"""Gradient-defect section properties along the beam and their three mappings onto the mesh.

Gradient law (:func:`gradient_factor`, parameters in :class:`ancf_beam.specs.GradientSpec`):
``f(x) = (1 - lam (x/L)^n) * t(x/L)`` where ``t`` is the optional piecewise-linear measured
``table`` (1 if none). Point properties at reference position ``x`` (m), each its clamp value
times its gradient factor:

* ``E(x)   = E0  * (1 - lam   (x/L)^n)``    (Pa)
* ``rho(x) = rho0 * (1 - lam_r (x/L)^n_r)`` (kg/m^3)
* ``b(x)``, ``h(x)`` likewise (m); ``A = b h`` (m^2), ``I = b h^3 / 12`` (m^4)

Section quantities used by the element: ``EA(x)`` (N), ``EI(x)`` (N m^2), ``rhoA(x)`` (kg/m).

Mappings (how the continuous profile enters the element integrals):

* ``gauss``   (default): exact values at every Gauss point;
* ``element``: each element uses the value at its midpoint (piecewise constant: the "staircase");
* ``nodal``  : ``EA``, ``EI`` and ``rhoA`` are interpolated linearly between their nodal values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ancf_beam.specs import CaseSpec, GradientSpec

__all__ = ["SectionProfile", "gradient_factor", "mapped_values"]


def gradient_factor(g: GradientSpec, xi) -> np.ndarray:
    """Dimensionless gradient factor of ``g`` at normalised positions ``xi = x / L`` in [0, 1]."""
    xi = np.clip(np.asarray(xi, dtype=float), 0.0, 1.0)
    out = np.ones_like(xi)
    if g.lam != 0.0:
        out = 1.0 - g.lam * np.power(xi, g.n)
    if g.table is not None:
        tx, tf = np.array(g.table, dtype=float).T
        out = out * np.interp(xi, tx, tf)
    return out


@dataclass(frozen=True)
class SectionProfile:
    """Continuous section properties of one case (callables of x in metres)."""

    case: CaseSpec

    @property
    def length(self) -> float:
        return self.case.beam.length

    def _xi(self, x):
        return np.asarray(x, dtype=float) / self.length

    def E(self, x):
        """Young's modulus (Pa)."""
        return self.case.material.E0 * gradient_factor(self.case.defect.E, self._xi(x))

    def rho(self, x):
        """Density (kg/m^3)."""
        return self.case.material.rho * gradient_factor(self.case.defect.rho, self._xi(x))

    def width(self, x):
        return self.case.beam.width * gradient_factor(self.case.defect.width, self._xi(x))

    def height(self, x):
        return self.case.beam.height * gradient_factor(self.case.defect.height, self._xi(x))

    def A(self, x):
        """Cross-section area (m^2)."""
        return self.width(x) * self.height(x)

    def I(self, x):  # noqa: E743 - the customary symbol
        """Second moment of area about the bending axis (m^4)."""
        return self.width(x) * self.height(x) ** 3 / 12.0

    def EA(self, x):
        return self.E(x) * self.A(x)

    def EI(self, x):
        return self.E(x) * self.I(x)

    def rhoA(self, x):
        return self.rho(x) * self.A(x)

    def q(self, x):
        """Self-weight per unit reference length (N/m, magnitude, acting along -y)."""
        return self.rhoA(x) * self.case.load.g


def mapped_values(func, x_nodes: np.ndarray, xi: np.ndarray, mapping: str) -> np.ndarray:
    """Values of ``func`` at local points ``xi`` (in [0, 1]) of every element, shape (n_el, n_pts).

    ``x_nodes`` are the n_el + 1 node positions (m).
    """
    xa = x_nodes[:-1, None]
    xb = x_nodes[1:, None]
    xi = np.asarray(xi, dtype=float)[None, :]
    if mapping == "gauss":
        return func(xa + xi * (xb - xa))
    if mapping == "element":
        mid = func(0.5 * (xa + xb))
        return np.broadcast_to(mid, (x_nodes.size - 1, xi.size)).copy()
    if mapping == "nodal":
        fa = func(xa)
        fb = func(xb)
        return fa + xi * (fb - fa)
    raise ValueError(f"unknown defect mapping {mapping!r} (allowed: gauss, nodal, element)")
