"""Inverse identification of the modulus gradient ``E(x) = E0 (1 - lam (x/L)^n)``.

Two data sources, one estimator (:func:`scipy.optimize.least_squares`, bounded, several starts):

* :func:`identify_from_frequencies` -- the first natural frequencies ``omega_i`` (rad/s);
* :func:`identify_from_tip_history` -- a measured tip deflection ``tip_y(t)`` (m) of the beam
  released from rest under gravity.

All other beam properties (length, section, density, their gradients, mesh, mapping) come from
the :class:`~ancf_beam.specs.CaseSpec` passed in; its own ``defect.lam``/``defect.n`` are only
used as one extra starting point. ``E0`` is the case's ``material.E0`` unless ``fit_E0``.

Forward models
--------------
*Frequencies.* ``omega_k(lam, n)`` are the lowest bending natural frequencies of the case's mesh
linearised about the stress-free reference: the generalized eigenproblem ``(K_T - w^2 M) phi =
0`` of :func:`~ancf_beam.solvers.modal.modal_analysis` (reference; the bending block alone for a
straight beam), with modes whose mass-norm lies mostly (> 1/2) in the x-DOFs (axial/bar modes)
skipped, since a measured transverse spectrum does not contain them. ``M`` does not depend on
``E``, and ``K_T`` is proportional to ``E0``, so ``omega ~ sqrt(E0)`` exactly and only
``(lam, n)`` need new eigen-solutions; those are cached per ``(lam, n)``. Each eigenvalue is
refined by the Rayleigh quotient of its mode in energy form (a dense eigensolver's absolute
error ``eps w_max^2`` is 1e-8 of ``w_1^2`` at 40 elements), and its sensitivities are analytic:
``d w^2 / dp = phi^T (dK/dp - w^2 dM/dp) phi`` for mass-normalised ``phi``, ``dM/dp = 0``,
with ``dK/dp`` the reference tangent of the weights' derivatives (:class:`_Eigen`). Finite
differences of the eigenvalues (as before) gave a wrong Jacobian and stalled the optimiser.

*Tip history.* The exact linear response of the same discrete model released from rest at the
reference under gravity, by modal superposition over all modes::

    u(t) = sum_k phi_k (phi_k^T Q_g) / w_k^2 (1 - cos(w_k t)),     tip_y(t) = u_tipy(t)

(mass-normalised ``phi_k``; undamped). It neglects the geometric nonlinearity, which is of
relative order (tip deflection / L)^2 -- 1e-5 for the seed beam -- and damping.

Residuals and uncertainty
-------------------------
Frequencies: relative residuals ``r_i = omega_i(p) / omega_i,meas - 1``. Tip history:
``r_j = (y(t_j; p) - y_j) / s`` with ``s = max |y_meas - y_ref|``, the largest tip displacement
from the reference. Parameters ``p = (lam, n)`` or ``(lam, n, E0 / E0_case)``. At the optimum
the Jacobian ``J`` (analytic for frequencies, central differences for a tip history) gives the
covariance ``C = sigma^2 (J^T J)^-1``,
where ``sigma`` is the noise level of the residuals:

* ``sigma_rel`` (frequencies: relative standard deviation of each measured frequency) or
  ``sigma_y`` (tip history: standard deviation of each sample, m) when given;
* otherwise the residual estimate ``sqrt(||r||^2 / (m - p))`` (``m`` residuals), but never less
  than ``sigma_floor`` (default 1e-4 relative): noise-free data fit to round-off would otherwise
  claim absurdly small uncertainties (and hide non-identifiability, e.g. ``n`` at ``lam ~ 0``).
  With ``m == p`` there is no residual estimate and ``sigma_floor`` is used (pass ``sigma_rel``).

The reported standard uncertainties are ``sqrt(diag C)`` (linearised; for the tip history they
treat samples as independent and are optimistic when the misfit is model error).

Identifiability rule (``identifiable`` True only if all hold; ``message`` names the failures):

1. at least as many residuals as parameters (one frequency cannot determine ``(lam, n)``);
2. ``J`` has full column rank: the condition number ``cond`` of ``J`` with unit-norm columns
   (scale-free, it measures how collinear the parameters' effects are) is <= ``cond_max``
   (default 1e6) and no column is zero (at ``lam = 0`` the data do not depend on ``n``);
3. no parameter sits on a bound (``lam = 0`` or ``0.99``, ``n = 0.05`` or ``10``), where the
   linearised uncertainty is meaningless;
4. each relative standard uncertainty ``std / |value|`` is <= ``rel_std_max`` (default 0.5).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize

from ancf_beam.beam.model import CLAMP as CLAMP_DOFS
from ancf_beam.beam.model import BeamModel
from ancf_beam.io import json_ready
from ancf_beam.kernel_cache import run_clock
from ancf_beam.linalg import eigh_one_thread
from ancf_beam.specs import CaseSpec

log = logging.getLogger(__name__)

__all__ = [
    "FrequencyModel",
    "IdentificationResult",
    "TipHistoryModel",
    "identify_from_frequencies",
    "identify_from_tip_history",
    "run_identify",
]

LAM_BOUNDS = (0.0, 0.99)
N_BOUNDS = (0.05, 10.0)
E0_FACTOR_BOUNDS = (0.1, 10.0)  # E0 / E0_case when fit_E0
SIGMA_FLOOR = 1e-4
COND_MAX = 1e6
REL_STD_MAX = 0.5
#: Pre-screen grid for the starting points (lam, n).
GRID_LAM = (0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95)
GRID_N = (0.2, 0.5, 1.0, 1.7, 2.8, 4.5, 7.5)


@dataclass
class IdentificationResult:
    """Estimate of ``(lam, n[, E0])`` with linearised standard uncertainties.

    ``lam`` (-), ``n`` (-), ``E0`` (Pa; the case's value when not fitted) and their standard
    uncertainties ``*_std`` (same units; ``E0_std`` NaN when E0 was not fitted, ``inf`` when
    the parameter is not determined); ``residual`` the 2-norm of the residual vector at the
    optimum (relative frequency residuals; for a tip history the RMS misfit relative to the
    largest tip displacement); ``identifiable`` per the module's rule; ``cond`` the condition
    number of the column-normalised Jacobian; ``message`` a one-line explanation.
    """

    lam: float
    n: float
    E0: float
    lam_std: float
    n_std: float
    E0_std: float
    residual: float
    identifiable: bool
    cond: float
    message: str
    method: str = "frequencies"
    params: tuple[str, ...] = ("lam", "n")
    covariance: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    sigma: float = float("nan")  # noise level used for the covariance (residual units)
    sigma_source: str = ""  # "given", "residual", "floor"
    omega_measured: np.ndarray | None = None  # rad/s
    omega_fit: np.ndarray | None = None  # rad/s
    n_data: int = 0
    n_starts: int = 0
    nfev: int = 0
    wall_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (NaN/inf -> None, arrays -> lists)."""
        keys = (
            "lam",
            "n",
            "E0",
            "lam_std",
            "n_std",
            "E0_std",
            "residual",
            "identifiable",
            "cond",
            "message",
            "method",
            "params",
            "sigma",
            "sigma_source",
            "omega_measured",
            "omega_fit",
            "n_data",
            "n_starts",
            "nfev",
            "wall_s",
        )
        out = {k: json_ready(getattr(self, k)) for k in keys}
        out["covariance"] = json_ready(np.asarray(self.covariance))
        return out


# --------------------------------------------------------------------------------------------
# forward models
# --------------------------------------------------------------------------------------------
class _Stiffness:
    """Stiffness weights of the case's mesh as functions of ``(lam, n)``, and their derivatives.

    ``EA(x) = EA_0(x) (1 - lam (x/L)^n)`` and likewise ``EI``, where ``EA_0``/``EI_0`` are the
    section stiffnesses with ``lam = 0`` (clamp modulus, measured ``table``, section
    gradients). The weights are those of :class:`~ancf_beam.beam.model.BeamModel`
    (``ea_w = EA(x_g) w_g l_e`` through the case's mapping); every mapping is linear in the
    mapped function, so ``d ea_w / dp`` is the mapping of ``dEA/dp``:
    ``d/dlam (1 - lam xi^n) = -xi^n`` and ``d/dn (1 - lam xi^n) = -lam xi^n ln xi``.
    """

    def __init__(self, case: CaseSpec, model: BeamModel):
        from ancf_beam.beam.defects import SectionProfile, mapped_values
        from ancf_beam.beam.model import gauss01

        self._map = mapped_values
        self.profile0 = SectionProfile(case.with_overrides({"defect.lam": 0.0}))
        self.length = case.beam.length
        self.x_nodes = model.x_nodes
        self.mapping = case.defect.mapping
        qa, qb = gauss01(case.mesh.n_gauss_axial), gauss01(case.mesh.n_gauss_bending)
        self.axial = (qa.xi, qa.w * model.le)
        self.bending = (qb.xi, qb.w * model.le)

    def _factor(self, lam: float, n: float, which: str):
        def h(x):
            xi = np.clip(np.asarray(x, float) / self.length, 0.0, 1.0)
            xin = np.power(xi, n)
            if which == "value":
                return 1.0 - lam * xin
            if which == "lam":
                return -xin
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(xi > 0.0, -lam * xin * np.log(xi), 0.0)

        return h

    def weights(self, lam: float, n: float, which: str = "value"):
        """``(ea_w, ei_w)`` (``which='value'``) or their derivatives with respect to ``lam``
        (``'lam'``) or ``n`` (``'n'``), arrays (n_el, n_gauss)."""
        h = self._factor(lam, n, which)
        p = self.profile0
        out = []
        for func, (xi, w) in ((p.EA, self.axial), (p.EI, self.bending)):
            vals = self._map(lambda x, f=func: f(x) * h(x), self.x_nodes, xi, self.mapping)
            out.append(np.ascontiguousarray(vals * w))
        return tuple(out)


def strain_operators(model: BeamModel) -> tuple[np.ndarray, np.ndarray]:
    """Linearised strain measures of the stress-free reference at the Gauss points.

    ``(b_a, b_b)``, arrays (n_el, n_gauss, 4, 2): the first-order changes of the axial strain
    ``eps = |r'| - 1`` and of the curvature ``kappa = (r' x r'') / |r'|^2`` (or of the linear
    measures ``r_x' - 1``, ``r_y''`` with ``mesh.strain: linear``) of element ``e`` at Gauss
    point ``g`` are ``sum_ic b[e, g, i, c] de[i, c]`` for a change ``de`` of the element's four
    2-blocks (position, slope, position, slope). The reference is stress-free, so the tangent
    stiffness there is ``K = sum ea_w b_a b_a^T + ei_w b_b b_b^T`` (no geometric term), the
    strain energy of a mode ``phi`` is ``1/2 phi^T K phi = 1/2 sum (ea_w eps^2 + ei_w kappa^2)``
    and, ``K`` being linear in the weights, ``dK/dp`` is the same sum with the weights'
    derivatives.
    """
    q = model.reference()
    blocks = np.stack([q[4 * el : 4 * el + 8].reshape(4, 2) for el in range(model.n_el)])
    spa, spb, sppb = model.spa, model.spb, model.sppb
    b_a = np.zeros((model.n_el, spa.shape[0], 4, 2))
    b_b = np.zeros((model.n_el, spb.shape[0], 4, 2))
    if model.linear:
        b_a[..., 0] = spa[None, :, :]
        b_b[..., 1] = sppb[None, :, :]
        return b_a, b_b
    rpa = np.einsum("ga,eac->egc", spa, blocks)
    t = rpa / np.linalg.norm(rpa, axis=2, keepdims=True)
    b_a[:] = spa[None, :, :, None] * t[:, :, None, :]
    rp = np.einsum("ga,eac->egc", spb, blocks)
    rpp = np.einsum("ga,eac->egc", sppb, blocks)
    g2 = np.sum(rp * rp, axis=2)
    cr = rp[..., 0] * rpp[..., 1] - rp[..., 1] * rpp[..., 0]
    # d kappa = d(cr) / g2 - cr d(g2) / g2^2, d(g2) = 2 r' . dr'
    cx = (rpp[..., 1] - 2.0 * cr * rp[..., 0] / g2) / g2  # coefficient of dr'_x
    cy = (-rpp[..., 0] - 2.0 * cr * rp[..., 1] / g2) / g2  # of dr'_y
    b_b[..., 0] = spb[None] * cx[..., None] - sppb[None] * (rp[..., 1] / g2)[..., None]
    b_b[..., 1] = spb[None] * cy[..., None] + sppb[None] * (rp[..., 0] / g2)[..., None]
    return b_a, b_b


class _Eigen:
    """Reference-state eigen-solutions ``(K_T, M)`` of the case for given ``(lam, n)`` at the
    case's ``E0``, with their analytic sensitivities; ``M`` is built once (it does not depend
    on E), ``K_T`` is assembled by the element kernels from the stiffness weights of
    :class:`_Stiffness`.

    For a straight reference the x- and y-DOFs decouple exactly (bar and bending), and only
    the y-block (bending) is solved -- half the size, and exactly the bending spectrum; for an
    initially curved reference the full reduced system is solved.

    Precision. A dense eigensolver returns the eigenvalue ``w^2`` with an absolute error of
    about ``eps w_max^2``: relative ``eps (w_max / w)^2`` for the low modes, 1e-8 for ``w_1``
    at 40 elements and 6e-5 at 320 (``w_max ~ l_e^-2``). Each eigenvalue is therefore refined
    by the Rayleigh quotient of its mode in energy form, ``w^2 = sum (ea_w eps^2 + ei_w
    kappa^2) / phi^T M phi`` with the strains of :func:`strain_operators` (no cancellation
    between large stiffness entries; the eigenvector error enters squared): about 1e-12. The
    sensitivities of the mass-normalised modes are ``d w^2 / dp = phi^T (dK/dp - w^2 dM/dp)
    phi`` with ``dM/dp = 0``, i.e. the same energy sum with the weights' derivatives.
    """

    def __init__(self, case: CaseSpec, max_cache: int = 4096):
        self.case = case
        base = BeamModel(case)
        self.base = base
        self.n_free = base.n_free
        self.m = base.mass_dense()
        self.gravity = base.gravity_free.copy()
        # x-DOFs of the free vector: r_x and r_x' of nodes 1..n (even positions)
        self.x_mask = np.zeros(self.n_free, dtype=bool)
        self.x_mask[0::2] = True
        ref = base.reference()
        self.q_ref = ref
        k0 = base.tangent_dense(ref)
        coupling = np.abs(k0[np.ix_(self.x_mask, ~self.x_mask)]).max(initial=0.0)
        self.decoupled = bool(np.all(ref[1::2] == 0.0) and coupling <= 1e-12 * np.abs(k0).max())
        self.dofs = np.flatnonzero(~self.x_mask) if self.decoupled else np.arange(self.n_free)
        self.m_sub = self.m[np.ix_(self.dofs, self.dofs)]
        self.i_tip_y = self.n_free - 3
        self.tip_y0 = float(ref[-3])  # m, tip height of the stress-free reference
        self.stiffness = _Stiffness(case, base)
        self.b_a, self.b_b = strain_operators(base)
        self.cache: dict[tuple[float, float, int | None], tuple] = {}
        self.max_cache = max_cache
        self.evaluations = 0

    def tangent(self, ea_w: np.ndarray, ei_w: np.ndarray) -> np.ndarray:
        """Reference tangent (free DOFs, dense) for the stiffness weights, by the kernels."""
        from ancf_beam.beam import kernels
        from ancf_beam.linalg import BANDWIDTH, band_to_dense

        b = self.base
        ab = np.empty((2 * BANDWIDTH + 1, b.n_dof))
        kernels.assemble_tangent_banded(
            self.q_ref, b.n_el, b.spa, b.spb, b.sppb, ea_w, ei_w, b.eps0, b.kap0, b.linear, ab
        )
        return band_to_dense(np.ascontiguousarray(ab[:, CLAMP_DOFS:]))

    def strains(self, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Axial strain and curvature (n_el, n_gauss, k) of the modes ``phi`` (n_free, k)."""
        full = np.zeros((self.n_free + CLAMP_DOFS, phi.shape[1]))
        full[CLAMP_DOFS:] = phi
        n_el = self.base.n_el
        idx = 4 * np.arange(n_el)[:, None] + np.arange(8)[None, :]
        el = full[idx].reshape(n_el, 4, 2, -1)  # (element, block, component, mode)
        eps = np.einsum("egic,eick->egk", self.b_a, el)
        kap = np.einsum("egic,eick->egk", self.b_b, el)
        return eps, kap

    def solve(self, lam: float, n: float, k: int | None):
        """``(w2, phi, dw2)``: the lowest ``k`` (all if None) eigenpairs, mass-normalised, with
        ``phi`` (n_free, k) on the full free vector (zero x-components when decoupled),
        ``w2`` refined by the Rayleigh quotient in energy form and ``dw2`` (2, k) their
        derivatives with respect to ``lam`` and ``n``."""
        key = (float(lam), float(n), k)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        st = self.stiffness
        ea_w, ei_w = st.weights(lam, n)
        kt = self.tangent(ea_w, ei_w)[np.ix_(self.dofs, self.dofs)]
        nd = self.dofs.size
        sub = None if k is None or k >= nd else (0, k - 1)
        _, v = eigh_one_thread(kt, self.m_sub, sub)  # one BLAS thread: small dense problem
        phi = np.zeros((self.n_free, v.shape[1]))
        phi[self.dofs] = v
        eps, kap = self.strains(phi)
        mass = np.einsum("ik,ik->k", phi, self.m @ phi)

        def energy(weights):
            wa, wb = weights
            return (np.einsum("eg,egk->k", wa, eps**2) + np.einsum("eg,egk->k", wb, kap**2)) / mass

        w2 = energy((ea_w, ei_w))
        dw2 = np.stack([energy(st.weights(lam, n, "lam")), energy(st.weights(lam, n, "n"))])
        order = np.argsort(w2)
        out = (w2[order], phi[:, order] / np.sqrt(mass[order]), dw2[:, order])
        self.evaluations += 1
        if len(self.cache) >= self.max_cache:
            self.cache.clear()
        self.cache[key] = out
        return out


class FrequencyModel:
    """Lowest ``n_modes`` bending natural frequencies (rad/s) as a function of ``(lam, n, E0)``,
    with their analytic Jacobian.

    See the module docstring; ``omega(lam, n, e0_factor)`` with ``e0_factor = E0 / E0_case``;
    ``jacobian`` gives ``d omega / d(lam, n, e0_factor)`` (rad/s per unit), from
    ``d omega = d(w^2) / (2 omega)`` and ``omega ~ sqrt(e0_factor)``.
    """

    def __init__(self, case: CaseSpec, n_modes: int, eigen: _Eigen | None = None):
        if n_modes < 1:
            raise ValueError(f"n_modes must be >= 1, got {n_modes}")
        self.eigen = eigen or _Eigen(case)
        self.n_modes = n_modes
        if n_modes > self.eigen.n_free // 2:
            raise ValueError(
                f"n_modes = {n_modes} exceeds the {self.eigen.n_free // 2} bending modes of the "
                f"{case.mesh.n_elements}-element mesh; refine mesh.n_elements"
            )

    def _bending(self, lam: float, n: float):
        """``(w2, dw2)`` of the lowest ``n_modes`` bending modes (axial modes skipped)."""
        k = self.n_modes
        extra = 2
        while True:
            kk = min(k + extra, self.eigen.n_free)
            w2, v, dw2 = self.eigen.solve(lam, n, kk)
            mv = self.eigen.m @ v
            xs = np.einsum("ij,ij->j", v[self.eigen.x_mask], mv[self.eigen.x_mask])
            bending = np.flatnonzero(xs < 0.5)
            if bending.size >= k or kk == self.eigen.n_free:
                break
            extra *= 4
        if bending.size < k:
            raise RuntimeError(f"only {bending.size} bending modes found, {k} requested")
        sel = bending[:k]
        return np.clip(w2[sel], 0.0, None), dw2[:, sel]

    def omega(self, lam: float, n: float, e0_factor: float = 1.0) -> np.ndarray:
        w2, _ = self._bending(lam, n)
        return np.sqrt(w2 * e0_factor)

    def jacobian(self, lam: float, n: float, e0_factor: float = 1.0) -> np.ndarray:
        """``d omega_k / d(lam, n, e0_factor)``, array (n_modes, 3) in rad/s per unit."""
        w2, dw2 = self._bending(lam, n)
        om = np.sqrt(w2 * e0_factor)
        jac = np.empty((w2.size, 3))
        jac[:, 0] = e0_factor * dw2[0] / (2.0 * om)
        jac[:, 1] = e0_factor * dw2[1] / (2.0 * om)
        jac[:, 2] = w2 / (2.0 * om)
        return jac


class TipHistoryModel:
    """Linear tip response ``tip_y(t)`` (m) released from rest under gravity (module docstring).

    ``n_modes`` limits the superposition to the lowest modes (default: all modes of the mesh,
    i.e. the exact linear response of the discrete model); modes whose static tip participation
    is below ``min_participation`` times the largest one are dropped (default 1e-6: below a
    micrometre per metre of deflection, unmeasurable, and the least accurate frequencies of
    the discrete model; for the seed beam this keeps about 11 modes).
    """

    def __init__(
        self,
        case: CaseSpec,
        n_modes: int | None = None,
        eigen: _Eigen | None = None,
        min_participation: float = 1e-6,
    ):
        self.eigen = eigen or _Eigen(case)
        self.n_modes = n_modes
        self.min_participation = min_participation

    def modal(self, lam: float, n: float, e0_factor: float = 1.0):
        """``(omega, c)``: modal frequencies (rad/s) and static tip participations (m)."""
        w2, v, _ = self.eigen.solve(lam, n, self.n_modes)
        w2 = np.clip(w2 * e0_factor, 1e-300, None)
        c = v[self.eigen.i_tip_y] * (v.T @ self.eigen.gravity) / w2
        # (axial modes do not move the tip in y: zero participation)
        keep = np.abs(c) >= max(self.min_participation, 1e-14) * np.max(np.abs(c))
        return np.sqrt(w2[keep]), c[keep]

    def tip_y(self, t: np.ndarray, lam: float, n: float, e0_factor: float = 1.0) -> np.ndarray:
        """Tip height (m) at times ``t`` (s) after the release (reference tip height included)."""
        omega, c = self.modal(lam, n, e0_factor)
        t = np.asarray(t, dtype=float)
        return self.eigen.tip_y0 + (1.0 - np.cos(np.outer(t, omega))) @ c


# --------------------------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------------------------
def _bounds(fit_E0: bool):
    lo = [LAM_BOUNDS[0], N_BOUNDS[0]]
    hi = [LAM_BOUNDS[1], N_BOUNDS[1]]
    if fit_E0:
        lo.append(E0_FACTOR_BOUNDS[0])
        hi.append(E0_FACTOR_BOUNDS[1])
    return np.array(lo), np.array(hi)


def _jacobian(fun, p: np.ndarray, lo: np.ndarray, hi: np.ndarray, rel: float = 1e-5):
    """Central-difference Jacobian (one-sided at a bound)."""
    f0 = fun(p)
    jac = np.empty((f0.size, p.size))
    for j in range(p.size):
        h = rel * max(abs(p[j]), 0.1)
        a = max(p[j] - h, lo[j])
        b = min(p[j] + h, hi[j])
        pa = p.copy()
        pb = p.copy()
        pa[j] = a
        pb[j] = b
        jac[:, j] = (fun(pb) - fun(pa)) / (b - a)
    return f0, jac


def _estimate(
    fun,
    fit_E0: bool,
    starts: Sequence[Sequence[float]],
    n_starts: int,
    sigma: float | None,
    sigma_floor: float,
    cond_max: float,
    rel_std_max: float,
    e0_case: float,
    e0_guess,
    pre_stages: Sequence = (),
    fixed_starts: bool = False,
    jac=None,
):
    """Shared least-squares estimation, covariance and identifiability decision.

    ``fun`` maps the parameter vector to the residual vector. ``pre_stages`` are cheaper or
    better-behaved residual functions (e.g. a tip history cut to its first part) fitted in turn
    before ``fun`` from every start (continuation); the grid pre-screen uses the first stage.
    ``fixed_starts``: with ``fit_E0``, also start from each given start at the nominal E0.
    ``jac``: the analytic Jacobian of ``fun`` (used by the optimiser and for the covariance);
    None: finite differences (only for ``fun`` and stages without one).
    """
    lo, hi = _bounds(fit_E0)
    stages = [*pre_stages, fun]

    def full(p2):
        """(lam, n) -> parameter vector, with the best closed-form E0 factor as a start."""
        p = list(p2)
        if fit_E0:
            p.append(float(np.clip(e0_guess(p2), *E0_FACTOR_BOUNDS)))
        return np.clip(np.array(p, dtype=float), lo, hi)

    # pre-screen: cost on the grid, keep the best n_starts, plus the given starts
    cands = [full((la, nn)) for la in GRID_LAM for nn in GRID_N]
    costs = []
    for p in cands:
        r = stages[0](p)
        costs.append(float(r @ r) if np.all(np.isfinite(r)) else np.inf)
    order = np.argsort(costs)
    chosen = [cands[i] for i in order[:n_starts]] + [full(s) for s in starts]
    if fixed_starts and fit_E0:  # the given starts at the nominal E0 as well
        chosen += [np.clip(np.array([*s[:2], 1.0]), lo, hi) for s in starts]
    jacs = [None] * len(pre_stages) + [jac]
    best, nfev = _best_fit(stages, chosen, lo, hi, fit_E0, jacs)
    est = _assess(
        fun, best.x.copy(), lo, hi, fit_E0, sigma, sigma_floor, cond_max, rel_std_max, e0_case, jac
    )
    est.update(n_starts=len(chosen), nfev=len(cands) + nfev + len(cands))
    return est


def _best_fit(stages, chosen, lo, hi, fit_E0: bool, jacs):
    """Least squares from every start through the ``stages`` in turn (``jacs``: their
    analytic Jacobians or None); the best final solution and the number of function
    evaluations. With an analytic Jacobian the optimiser runs to round-off (``xtol`` 1e-15);
    finite differences (relative step 1e-7) stop at ``xtol`` 1e-10."""
    x_scale = np.array([0.1, 0.5] + ([0.1] if fit_E0 else []))
    best = None
    nfev = 0
    for p0 in chosen:
        x = p0
        sol = None
        for f, jac in zip(stages, jacs, strict=True):
            opts = (
                dict(jac=jac, xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=200)
                if jac is not None
                else dict(xtol=1e-10, ftol=1e-12, gtol=1e-12, diff_step=1e-7, max_nfev=100)
            )
            try:
                sol = optimize.least_squares(
                    f, x, bounds=(lo, hi), x_scale=x_scale, method="trf", **opts
                )
            except (ValueError, np.linalg.LinAlgError) as exc:  # pragma: no cover
                log.debug("start %s failed: %s", p0, exc)
                sol = None
                break
            nfev += sol.nfev
            x = sol.x
        if sol is not None and (best is None or sol.cost < best.cost):
            best = sol
    if best is None:  # pragma: no cover - every start failed
        raise RuntimeError("identification failed from every starting point")
    return best, nfev


def _assess(
    fun, p, lo, hi, fit_E0, sigma, sigma_floor, cond_max, rel_std_max, e0_case, jac_fun=None
):
    """Covariance, noise level and identifiability decision at the optimum ``p``
    (``jac_fun``: analytic Jacobian of ``fun``; None: central differences)."""
    if jac_fun is not None:
        r, jac = fun(p), np.asarray(jac_fun(p), float)
    else:
        r, jac = _jacobian(fun, p, lo, hi)
    m, k = jac.shape
    rnorm = float(np.linalg.norm(r))
    if sigma is not None:
        sig, source = float(sigma), "given"
    elif m > k:
        sig = max(rnorm / math.sqrt(m - k), sigma_floor)
        source = "residual" if sig > sigma_floor else "floor"
    else:
        sig, source = sigma_floor, "floor"
    problems, cond = _conditioning(jac, cond_max)
    cov = np.full((k, k), np.inf)
    if math.isfinite(cond):
        jinv = np.linalg.pinv(jac.T @ jac)
        cov = sig**2 * jinv
    std = np.sqrt(np.abs(np.diag(cov)))
    names = ("lam", "n", "E0")[:k]
    problems += _bound_and_spread_problems(p, std, lo, hi, names, rel_std_max)
    identifiable = not problems
    e0 = e0_case * (p[2] if fit_E0 else 1.0)
    e0_std = e0_case * std[2] if fit_E0 else math.nan
    if fit_E0:
        scale = np.diag([1.0, 1.0, e0_case])
        cov = scale @ cov @ scale if np.all(np.isfinite(cov)) else cov
    msg = (
        f"identified: lam = {p[0]:.4g} +- {std[0]:.2g}, n = {p[1]:.4g} +- {std[1]:.2g}"
        if identifiable
        else "not identifiable: " + "; ".join(problems)
    )
    return {
        "p": p,
        "std": std,
        "e0": e0,
        "e0_std": e0_std,
        "r": r,
        "rnorm": rnorm,
        "cond": cond,
        "cov": cov,
        "sigma": sig,
        "source": source,
        "identifiable": identifiable,
        "message": msg,
        "names": names,
    }


def _conditioning(jac: np.ndarray, cond_max: float) -> tuple[list[str], float]:
    """Problems of the Jacobian (too few data, a parameter without effect, ill-conditioning)
    and the condition number of its column-normalised form."""
    m, k = jac.shape
    problems = []
    norms = np.linalg.norm(jac, axis=0)
    if m < k:
        problems.append(f"{m} data for {k} parameters (underdetermined)")
    if np.any(norms == 0.0):
        names = [("lam", "n", "E0")[j] for j in np.flatnonzero(norms == 0.0)]
        problems.append(f"data do not depend on {', '.join(names)} here")
        cond = math.inf
    else:
        s = np.linalg.svd(jac / norms, compute_uv=False)
        cond = float(s[0] / s[-1]) if m >= k and s[-1] > 0 else math.inf
    if cond > cond_max and not (m < k):
        problems.append(f"ill-conditioned Jacobian (cond {cond:.3g} > {cond_max:.3g})")
    return problems, cond


def _bound_and_spread_problems(p, std, lo, hi, names, rel_std_max) -> list[str]:
    problems = []
    span = hi - lo
    for j, nm in enumerate(names):
        if p[j] <= lo[j] + 1e-6 * span[j] or p[j] >= hi[j] - 1e-6 * span[j]:
            problems.append(f"{nm} = {p[j]:.4g} on its bound")
    for j, nm in enumerate(names):
        rel = std[j] / abs(p[j]) if p[j] != 0 else math.inf
        if not rel <= rel_std_max:
            problems.append(f"relative uncertainty of {nm} {rel:.3g} > {rel_std_max}")
    return problems


def _result(est: dict, fm: FrequencyModel, fit_E0: bool, t0: float, **fields):
    """The :class:`IdentificationResult` of an estimate (``fields``: what differs between the
    methods: ``residual``, ``method``, ``sigma``, ``omega_measured``, ``n_data``)."""
    p = est["p"]
    return IdentificationResult(
        lam=float(p[0]),
        n=float(p[1]),
        E0=float(est["e0"]),
        lam_std=float(est["std"][0]),
        n_std=float(est["std"][1]),
        E0_std=float(est["e0_std"]),
        identifiable=est["identifiable"],
        cond=est["cond"],
        message=est["message"],
        params=est["names"],
        covariance=est["cov"],
        sigma_source=est["source"],
        omega_fit=fm.omega(p[0], p[1], p[2] if fit_E0 else 1.0),
        n_starts=est["n_starts"],
        nfev=est["nfev"],
        wall_s=run_clock() - t0,
        **fields,
    )


def identify_from_frequencies(
    case: CaseSpec,
    omega_measured: Sequence[float],
    sigma_rel: float | None = None,
    fit_E0: bool = False,
    n_modes: int | None = None,
    *,
    n_starts: int = 4,
    sigma_floor: float = SIGMA_FLOOR,
    cond_max: float = COND_MAX,
    rel_std_max: float = REL_STD_MAX,
    model: FrequencyModel | None = None,
) -> IdentificationResult:
    """Estimate ``(lam, n)`` (and ``E0`` if ``fit_E0``) from measured natural frequencies.

    Parameters
    ----------
    case : CaseSpec
        Beam, material density, section, mesh and mapping of the forward model (its
        ``defect.lam``/``defect.n`` only serve as one extra starting point).
    omega_measured : sequence of float
        The lowest bending natural frequencies (rad/s), ascending, mode 1 first.
    sigma_rel : float, optional
        Relative standard deviation of each measured frequency (e.g. 0.005 for 0.5 %). If
        None, estimated from the residual (floored at ``sigma_floor``).
    fit_E0 : bool
        Also estimate ``E0`` (Pa); needs at least three frequencies to be identifiable.
    n_modes : int, optional
        Use only the first ``n_modes`` measured frequencies (default: all of them).
    n_starts : int
        Number of best grid points (7 x 7 in ``(lam, n)``) started from, besides the case's own.
    model : FrequencyModel, optional
        A prebuilt forward model (reuses its eigen-solution cache across calls).

    Returns
    -------
    IdentificationResult
        ``residual`` is ``||omega_fit / omega_measured - 1||_2``.
    """
    t0 = run_clock()
    om = _measured_frequencies(omega_measured, n_modes, sigma_rel)
    fm = model if model is not None and model.n_modes == om.size else None
    if fm is None:
        fm = FrequencyModel(case, om.size, eigen=model.eigen if model is not None else None)

    fun, jac, e0_guess = _frequency_residuals(fm, om, fit_E0)
    limits = {"sigma_floor": sigma_floor, "cond_max": cond_max, "rel_std_max": rel_std_max}
    est = _estimate(
        fun,
        fit_E0,
        [_case_start(case)],
        n_starts,
        sigma_rel,
        **limits,
        e0_case=case.material.E0,
        e0_guess=e0_guess,
        jac=jac,
    )
    return _result(
        est,
        fm,
        fit_E0,
        t0,
        residual=est["rnorm"],
        method="frequencies",
        sigma=est["sigma"],
        omega_measured=om,
        n_data=int(om.size),
    )


def _frequency_residuals(fm: FrequencyModel, om: np.ndarray, fit_E0: bool):
    """Residuals ``omega_fit / omega_measured - 1`` of the parameters ``(lam, n[, E0
    factor])``, their Jacobian and the best E0 factor for a fixed ``(lam, n)``."""

    def fun(p):
        return fm.omega(p[0], p[1], p[2] if fit_E0 else 1.0) / om - 1.0

    def jac(p):
        j = fm.jacobian(p[0], p[1], p[2] if fit_E0 else 1.0) / om[:, None]
        return j if fit_E0 else j[:, :2]

    def e0_guess(p2):
        # best E0 factor s for fixed (lam, n): minimise sum (sqrt(s) a_i - 1)^2
        a = fm.omega(p2[0], p2[1]) / om
        return (a.sum() / (a @ a)) ** 2

    return fun, jac, e0_guess


def _measured_frequencies(omega_measured, n_modes, sigma_rel) -> np.ndarray:
    """The measured frequencies to fit (the first ``n_modes``), checked."""
    om = np.asarray(omega_measured, dtype=float).ravel()
    if n_modes is not None:
        if not 1 <= n_modes <= om.size:
            raise ValueError(f"n_modes = {n_modes} must be in [1, {om.size}] (measured values)")
        om = om[:n_modes]
    if om.size == 0 or not np.all(np.isfinite(om)) or np.any(om <= 0):
        raise ValueError(f"omega_measured must be positive finite frequencies (rad/s), got {om}")
    if np.any(np.diff(om) <= 0):
        raise ValueError("omega_measured must be strictly ascending (mode 1 first)")
    if sigma_rel is not None and not sigma_rel > 0:
        raise ValueError(f"sigma_rel must be > 0, got {sigma_rel}")
    return om


def _tip_record(t, tip_y, t_max, sigma_y) -> tuple[np.ndarray, np.ndarray]:
    """The measured tip history up to ``t_max``, checked."""
    t = np.asarray(t, dtype=float).ravel()
    y = np.asarray(tip_y, dtype=float).ravel()
    if t.size != y.size or t.size < 4:
        raise ValueError(f"t and tip_y must have the same length >= 4, got {t.size}, {y.size}")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(y))):
        raise ValueError("t and tip_y must be finite")
    if t_max is not None:
        keep = t <= t_max
        t, y = t[keep], y[keep]
    if sigma_y is not None and not sigma_y > 0:
        raise ValueError(f"sigma_y must be > 0 m, got {sigma_y}")
    return t, y


def _case_start(case: CaseSpec) -> tuple[float, float]:
    """The case's own ``(lam, n)``, moved inside the bounds: one of the starting points."""
    d = case.defect.E
    return (min(max(d.lam, 0.01), 0.98), min(max(d.n, 0.06), 9.9))


def identify_from_tip_history(
    case: CaseSpec,
    t: Sequence[float],
    tip_y: Sequence[float],
    sigma_y: float | None = None,
    fit_E0: bool = False,
    n_modes: int | None = None,
    t_max: float | None = None,
    *,
    n_starts: int = 4,
    sigma_floor: float = SIGMA_FLOOR,
    cond_max: float = COND_MAX,
    rel_std_max: float = REL_STD_MAX,
) -> IdentificationResult:
    """Estimate ``(lam, n)`` (and ``E0`` if ``fit_E0``) from a tip deflection history.

    The measurement is ``tip_y(t)`` (m) of the beam released from rest in its reference shape
    under gravity at ``t = 0`` (undamped, as :func:`ancf_beam.analyses.run_simulate` produces).
    The forward model is the linear modal superposition of :class:`TipHistoryModel` on the
    case's mesh; residuals ``(y_model - y_meas) / s``, ``s = max |y_meas - y_ref|`` (m), at
    every sample with ``t <= t_max`` (s; default all). A few periods of the fundamental are
    enough: the record fixes ``omega_1`` and the static deflection (the mean), and the small
    higher-mode content separates ``lam`` from ``n``. The fit runs first on the first quarter
    of the record, then on all of it (continuation: the phases of the higher modes make the
    full-record cost rippled); with ``fit_E0`` the two-parameter estimate at the nominal E0
    is one of the starts of the three-parameter fit.

    ``sigma_y`` (m) is the standard deviation of the tip measurement noise (default: estimated
    from the residual, floored at ``sigma_floor * s``). ``n_modes`` limits the modal
    superposition (default: all modes). Returns an :class:`IdentificationResult` with
    ``method='tip_history'`` and ``residual`` the RMS misfit relative to ``s``;
    ``omega_fit`` holds the first three bending frequencies (rad/s) of the fitted beam.
    """
    t0 = run_clock()
    t, y = _tip_record(t, tip_y, t_max, sigma_y)
    eig = _Eigen(case)
    tm = TipHistoryModel(case, n_modes=n_modes, eigen=eig)
    # residual scale: the largest tip displacement from the reference (m)
    scale = float(np.max(np.abs(y - eig.tip_y0)))
    if not scale > 0:
        raise ValueError("tip_y never leaves the reference: nothing to fit (is gravity on?)")

    fun, pre = _tip_residuals(tm, t, y, scale, fit_E0)
    e0_guess = _tip_e0_guess(tm, t, y, fit_E0)
    start = _case_start(case)
    sig = None if sigma_y is None else sigma_y / scale
    limits = {"sigma_floor": sigma_floor, "cond_max": cond_max, "rel_std_max": rel_std_max}
    starts = [start]
    if fit_E0:
        # continuation in the parameter set: the fit at the nominal E0 is a start of the full
        # fit (the 3-parameter landscape has long valleys rippled by higher-mode phases)
        starts.append(
            _nominal_e0_fit(fun, pre, start, n_starts, sig, limits, case.material.E0, e0_guess)
        )
    est = _estimate(
        fun,
        fit_E0,
        starts,
        n_starts,
        sig,
        **limits,
        e0_case=case.material.E0,
        e0_guess=e0_guess,
        pre_stages=pre,
        fixed_starts=fit_E0,
    )
    fm = FrequencyModel(case, min(3, eig.n_free // 2), eigen=eig)
    return _result(
        est,
        fm,
        fit_E0,
        t0,
        residual=est["rnorm"] / math.sqrt(t.size),
        method="tip_history",
        sigma=est["sigma"] * scale,
        omega_measured=None,
        n_data=int(t.size),
    )


def _nominal_e0_fit(fun, pre, start, n_starts, sig, limits, e0_case, e0_guess):
    """``(lam, n)`` fitted with the E0 factor held at 1 (the residuals ``fun`` and the
    continuation stages ``pre`` of the three-parameter fit, restricted)."""
    e_fixed = _estimate(
        lambda p: fun([p[0], p[1], 1.0]),
        False,
        [start],
        n_starts,
        sig,
        **limits,
        e0_case=e0_case,
        e0_guess=e0_guess,
        pre_stages=[lambda p, f=f: f([p[0], p[1], 1.0]) for f in pre],
    )
    return tuple(e_fixed["p"][:2])


def _tip_residuals(tm: TipHistoryModel, t, y, scale: float, fit_E0: bool):
    """Residual of the whole record and the continuation's earlier stages: the first quarter
    of the record first (wider basins of the phases of the higher modes), when it holds at
    least 16 samples."""

    def fun(p):
        return (tm.tip_y(t, p[0], p[1], p[2] if fit_E0 else 1.0) - y) / scale

    short = t <= t[0] + 0.25 * (t[-1] - t[0])
    pre = []
    if np.count_nonzero(short) >= 16:
        ts, ys = t[short], y[short]

        def fun_short(p):
            return (tm.tip_y(ts, p[0], p[1], p[2] if fit_E0 else 1.0) - ys) / scale

        pre.append(fun_short)
    return fun, pre


def _tip_e0_guess(tm: TipHistoryModel, t, y, fit_E0: bool):
    """Start of the E0 factor for given ``(lam, n)``: ``omega ~ sqrt(E0)`` matched to the
    dominant (fundamental) frequency of the record, which keeps the start inside the basin of
    the phase; else (non-uniform sampling) the mean (static) deflection."""
    w1_meas = math.nan
    if fit_E0:
        from ancf_beam.response import tip_spectrum

        try:
            w1_meas = tip_spectrum(t, y).peak_omega
        except ValueError:  # non-uniform sampling: fall back to the mean deflection
            pass

    def e0_guess(p2):
        if math.isfinite(w1_meas):
            w = tm.modal(p2[0], p2[1])[0]
            return float((w1_meas / w[0]) ** 2)
        ym = tm.tip_y(t, p2[0], p2[1])
        return float(np.mean(ym) / np.mean(y)) if np.mean(y) != 0 else 1.0

    return e0_guess


def run_identify(
    case: CaseSpec,
    omega_measured: Sequence[float],
    sigma_rel: float | None = None,
    fit_E0: bool = False,
    n_modes: int | None = None,
):
    """CLI/workflow entry point: :func:`identify_from_frequencies` -> (summary dict, Dataset).

    The summary is :meth:`IdentificationResult.to_dict` plus ``case``; the Dataset holds the
    measured and fitted frequencies over ``mode`` and the estimate as scalars, with provenance
    attributes.
    """
    import xarray as xr

    from ancf_beam.io import provenance_attrs

    res = identify_from_frequencies(case, omega_measured, sigma_rel, fit_E0, n_modes)
    summary = {"case": case.name, **res.to_dict()}
    nm = res.omega_measured.size
    ds = xr.Dataset(
        {
            "omega_measured": ("mode", res.omega_measured, {"units": "rad/s"}),
            "omega_fit": ("mode", res.omega_fit, {"units": "rad/s"}),
            "lam": ((), res.lam, {"units": "1"}),
            "n": ((), res.n, {"units": "1"}),
            "E0": ((), res.E0, {"units": "Pa"}),
            "lam_std": ((), res.lam_std, {"units": "1"}),
            "n_std": ((), res.n_std, {"units": "1"}),
            "E0_std": ((), res.E0_std, {"units": "Pa"}),
        },
        coords={"mode": np.arange(1, nm + 1)},
    )
    ds.attrs.update(
        provenance_attrs(
            case,
            study="identify",
            method=res.method,
            residual=res.residual,
            identifiable=res.identifiable,
            cond=res.cond,
            sigma=res.sigma,
            sigma_source=res.sigma_source,
            fit_E0=fit_E0,
            message=res.message,
            wall_s=res.wall_s,
        )
    )
    return summary, ds
