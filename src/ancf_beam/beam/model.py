"""The discretised cantilever: mesh, quadrature data, constant mass matrix and gravity force.

Global coordinates are node-major: node ``k`` owns DOFs ``4k .. 4k+3`` = ``[r_x, r_y, r_x', r_y']``
(m, m, -, -). The full vector has ``4 (n_el + 1)`` entries; the clamp fixes node 0 at
``[0, 0, 1, 0]`` and is eliminated, so the *reduced* (free) system is ``q[4:]`` with
``4 n_el`` unknowns. All global matrices are banded with half-bandwidth 7.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ancf_beam.beam import element
from ancf_beam.beam.defects import SectionProfile, mapped_values
from ancf_beam.beam.element import shape_tables
from ancf_beam.specs import CaseSpec

__all__ = ["CLAMP", "N_GAUSS_MASS", "BeamModel", "Quadrature", "gauss01"]

N_GAUSS_MASS = 6  # mass and gravity: exact for uniform sections, accurate for graded ones
CLAMP = 4  # number of clamped DOFs (node 0)


@dataclass(frozen=True)
class Quadrature:
    xi: np.ndarray  # local points in [0, 1]
    w: np.ndarray  # weights summing to 1


def gauss01(n: int) -> Quadrature:
    """Gauss-Legendre rule with ``n`` points on [0, 1]."""
    x, w = np.polynomial.legendre.leggauss(n)
    return Quadrature(0.5 * (x + 1.0), 0.5 * w)


class BeamModel:
    """Discretised graded cantilever built from a :class:`~ancf_beam.specs.CaseSpec`."""

    def __init__(self, case: CaseSpec):
        self.case = case
        self.profile = SectionProfile(case)
        m = case.mesh
        self.n_el = m.n_elements
        self.n_nodes = self.n_el + 1
        self.n_dof = 4 * self.n_nodes
        self.n_free = self.n_dof - CLAMP
        self.length = case.beam.length
        self.le = self.length / self.n_el
        self.x_nodes = np.linspace(0.0, self.length, self.n_nodes)
        self.linear = m.strain == "linear"
        self.g = case.load.g
        mapping = case.defect.mapping

        qa = gauss01(m.n_gauss_axial)
        qb = gauss01(m.n_gauss_bending)
        qm = gauss01(N_GAUSS_MASS)
        _, self.spa, _ = shape_tables(qa.xi, self.le)
        _, self.spb, self.sppb = shape_tables(qb.xi, self.le)
        self.s_mass, _, _ = shape_tables(qm.xi, self.le)
        p = self.profile
        xn = self.x_nodes
        self.ea_w = np.ascontiguousarray(mapped_values(p.EA, xn, qa.xi, mapping) * qa.w * self.le)
        self.ei_w = np.ascontiguousarray(mapped_values(p.EI, xn, qb.xi, mapping) * qb.w * self.le)
        self.rhoa_w = mapped_values(p.rhoA, xn, qm.xi, mapping) * qm.w * self.le
        # undamaged stiffness weights (damage scales ea_w / ei_w from these, see set_damage)
        self.ea_w0 = self.ea_w.copy()
        self.ei_w0 = self.ei_w.copy()
        self.damage = np.zeros_like(self.ei_w)
        self._work = np.empty(self.n_dof)
        self._q_ref = self._reference_geometry()
        # strain measures of the stress-free reference at the Gauss points (0 when straight)
        self.eps0 = np.zeros_like(self.ea_w)
        self.kap0 = np.zeros_like(self.ei_w)
        if case.imperfection.active:
            self.eps0, self.kap0 = self._reference_strains(qa.xi, qb.xi)

    # --------------------------------------------------------------------------------------
    # configurations
    # --------------------------------------------------------------------------------------
    def reference(self) -> np.ndarray:
        """Full coordinate vector of the stress-free reference: straight along +x, or the
        initially curved shape of an imperfect beam."""
        return self._q_ref.copy()

    def straight(self) -> np.ndarray:
        """Full coordinates of the straight configuration along +x."""
        q = np.zeros(self.n_dof)
        q[0::4] = self.x_nodes
        q[2::4] = 1.0
        return q

    def _reference_geometry(self) -> np.ndarray:
        imp = self.case.imperfection
        if not imp.active:
            return self.straight()
        from ancf_beam.beam.imperfection import (
            reference_coordinates,  # scipy.optimize only when needed
        )

        return reference_coordinates(imp, self.x_nodes)

    def _reference_strains(self, xi_a: np.ndarray, xi_b: np.ndarray):
        """Axial strain and curvature of the interpolated reference at the Gauss points, so
        that the reference is exactly stress-free in the discrete model."""
        blocks = np.stack(
            [self._q_ref[4 * el : 4 * el + 8].reshape(4, 2) for el in range(self.n_el)]
        )
        rpa = np.einsum("ga,eac->egc", self.spa, blocks)
        eps0 = np.linalg.norm(rpa, axis=2) - 1.0
        rp = np.einsum("ga,eac->egc", self.spb, blocks)
        rpp = np.einsum("ga,eac->egc", self.sppb, blocks)
        cr = rp[..., 0] * rpp[..., 1] - rp[..., 1] * rpp[..., 0]
        kap0 = cr / np.sum(rp * rp, axis=2)
        if self.linear:
            eps0 = rpa[..., 0] - 1.0
            kap0 = rpp[..., 1]
        return np.ascontiguousarray(eps0), np.ascontiguousarray(kap0)

    def set_damage(self, d: np.ndarray) -> None:
        """Apply a damage field ``d`` (n_el, n_gauss; requires equal axial/bending rules):
        ``EA_eff = EA (1 - d)``, ``EI_eff = EI (1 - d)`` at every integration point."""
        d = np.asarray(d, dtype=float)
        if d.shape != self.ei_w.shape or self.ea_w.shape != self.ei_w.shape:
            raise ValueError("damage needs mesh.n_gauss_axial == mesh.n_gauss_bending")
        self.damage = d.copy()
        self.ea_w[:] = self.ea_w0 * (1.0 - d)
        self.ei_w[:] = self.ei_w0 * (1.0 - d)

    def full(self, u_free: np.ndarray) -> np.ndarray:
        """Full coordinates from reduced coordinates (clamp values inserted)."""
        q = self.reference()
        q[CLAMP:] = u_free
        return q

    def tip(self, q: np.ndarray) -> tuple[float, float, float]:
        """Tip position (m, m) and tangent angle from +x (rad) of a full coordinate vector."""
        o = self.n_dof - 4
        return float(q[o]), float(q[o + 1]), float(np.arctan2(q[o + 3], q[o + 2]))

    # --------------------------------------------------------------------------------------
    # constant matrices
    # --------------------------------------------------------------------------------------
    @cached_property
    def mass_lower_band(self) -> np.ndarray:
        """Full mass matrix in symmetric lower band storage ``lb[i-j, j]`` (kg, kg m, kg m^2)."""
        lb = np.zeros((_linalg().BANDWIDTH + 1, self.n_dof))
        s = self.s_mass  # (ng, 4)
        mb = np.einsum("eg,ga,gb->eab", self.rhoa_w, s, s)  # scalar 4x4 block of every element
        _kernels().scatter_mass_blocks(np.ascontiguousarray(mb), lb)
        return lb

    @cached_property
    def mass_free_lower_band(self) -> np.ndarray:
        return np.ascontiguousarray(self.mass_lower_band[:, CLAMP:])

    @cached_property
    def mass_cholesky(self) -> np.ndarray:
        """Lower banded Cholesky factor of the reduced mass matrix (``cb[i-j, j] = L[i, j]``)."""
        import scipy.linalg as sla  # here, not at import: a static run does not need scipy

        return np.ascontiguousarray(sla.cholesky_banded(self.mass_free_lower_band, lower=True))

    @cached_property
    def mass_cholesky_xy(self):
        """Component-wise banded Cholesky factors of the reduced mass (see :func:`xy_cholesky`)."""
        return _linalg().xy_cholesky(self.mass_free_lower_band)

    def mass_dense(self, free: bool = True) -> np.ndarray:
        lb = self.mass_lower_band
        n = self.n_dof
        m = np.zeros((n, n))
        for d in range(lb.shape[0]):
            idx = np.arange(n - d)
            m[idx + d, idx] = lb[d, : n - d]
            m[idx, idx + d] = lb[d, : n - d]
        return m[CLAMP:, CLAMP:] if free else m

    @cached_property
    def gravity_full(self) -> np.ndarray:
        """Consistent gravity force on the full DOF vector (N, N m); gravity along -y."""
        f = np.zeros(self.n_dof)
        s = self.s_mass
        for el in range(self.n_el):
            fb = -self.g * (self.rhoa_w[el] @ s)  # (4,) y-components of the 4 blocks
            o = 4 * el
            f[o + 1 : o + 9 : 2] += fb
        return f

    @property
    def gravity_free(self) -> np.ndarray:
        return self.gravity_full[CLAMP:]

    @cached_property
    def total_mass(self) -> float:
        return float(self.rhoa_w.sum())

    # --------------------------------------------------------------------------------------
    # nonlinear terms
    # --------------------------------------------------------------------------------------
    def kernel_args(self):
        """Arguments of the numba element kernels after ``q`` (:mod:`ancf_beam.beam.kernels`)."""
        return (
            self.n_el,
            self.spa,
            self.spb,
            self.sppb,
            self.ea_w,
            self.ei_w,
            self.eps0,
            self.kap0,
            self.linear,
        )

    def roundoff_floor(self, factor: float = 10.0, dense: bool = False) -> float:
        """Round-off level of the elastic force (N): ``factor`` x the largest ``||Q_e||`` over
        strain-free states (the reference, a rigidly translated and a rotated copy), where the
        exact value is zero. Newton residual tolerances must not go below it: the axial stiffness
        (``EA ~ 1e8 N`` for the seed beam) makes an absolute tolerance like 1e-10 N unreachable.
        The shifted copies matter: with power-of-two element lengths the reference coordinates
        are exact binary numbers and underestimate the round-off of a general state 10-100x.
        ``dense``: of the plain-numpy element (:mod:`ancf_beam.beam.element`) instead of the
        numba kernel (each path's own round-off)."""
        worst = 0.0
        for state in self._strain_free_states():
            if dense:
                f = element.elastic_force(state, *self.kernel_args())
            else:
                f = self.elastic_force(state)
            worst = max(worst, float(np.linalg.norm(f[CLAMP:])))
        return factor * worst + 1e-300

    def energy_roundoff(self, factor: float = 10.0) -> float:
        """Round-off level of the strain energy (J): ``factor`` x the largest computed ``U``
        over the strain-free states of :meth:`roundoff_floor` (exactly zero there). A run whose
        energy input (initial kinetic and strain energy, largest gravity work) is below it
        has nothing to move it but round-off (``DynamicsResult.energy_drift_rel`` is then not
        available)."""
        worst = 0.0
        for state in self._strain_free_states():
            worst = max(
                worst, abs(float(_kernels().elastic_force(state, *self.kernel_args(), self._work)))
            )
        return factor * worst

    def _strain_free_states(self) -> list[np.ndarray]:
        """The reference, a rigidly translated and (nonlinear strain) a rotated copy of it."""
        q = self.reference()
        states = [q]
        qt = q.copy()
        qt[0::4] += 0.3183098861837907 * self.length
        qt[1::4] -= 0.2718281828459045 * self.length
        states.append(qt)
        if not self.linear:
            c, s = np.cos(0.3), np.sin(0.3)
            states.append(np.ascontiguousarray((q.reshape(-1, 2) @ [[c, s], [-s, c]]).ravel()))
        return states

    def rayleigh_lower_band(self, alpha: float, beta: float) -> np.ndarray:
        """Rayleigh damping ``C = alpha M + beta K0`` on the free DOFs (symmetric lower band
        storage), ``alpha`` in 1/s, ``beta`` in s. ``K0`` is the stiffness of the straight,
        undamaged beam (so ``C`` has no x-y coupling). Note that ``beta K0`` is not objective:
        it also resists large rigid rotations, so keep ``beta`` for small-rotation runs."""
        mlb = self.mass_free_lower_band
        c = alpha * mlb
        if beta != 0.0:
            k0 = self.linear_stiffness_band()  # general band storage (15, n)
            u = _linalg().BANDWIDTH
            klb = np.zeros_like(mlb)
            for d in range(u + 1):
                klb[d, : k0.shape[1] - d] = k0[u + d, : k0.shape[1] - d]
            c = c + beta * klb
        return np.ascontiguousarray(c)

    def linear_stiffness_band(self) -> np.ndarray:
        """Stiffness of the straight, undamaged beam (free DOFs, ``solve_banded((7, 7))``
        storage): the ``K0`` of Rayleigh damping. It has no x-y coupling."""
        ab = np.empty((2 * _linalg().BANDWIDTH + 1, self.n_dof))
        z_a = np.zeros_like(self.ea_w0)
        z_b = np.zeros_like(self.ei_w0)
        _kernels().assemble_tangent_banded(
            self.straight(),
            self.n_el,
            self.spa,
            self.spb,
            self.sppb,
            self.ea_w0,
            self.ei_w0,
            z_a,
            z_b,
            self.linear,
            ab,
        )
        return np.ascontiguousarray(ab[:, CLAMP:])

    def elastic_force(self, q: np.ndarray) -> np.ndarray:
        """Elastic force ``-dU/dq`` on the full DOF vector."""
        f = np.empty(self.n_dof)
        _kernels().elastic_force(np.ascontiguousarray(q, dtype=float), *self.kernel_args(), f)
        return f

    def strain_energy(self, q: np.ndarray) -> float:
        """Nonlinear strain energy ``U`` (J)."""
        q = np.ascontiguousarray(q, float)
        return float(_kernels().elastic_force(q, *self.kernel_args(), self._work))

    def gravity_potential(self, q: np.ndarray) -> float:
        """Gravity potential relative to the reference configuration (J)."""
        return float(-self.gravity_full @ (q - self.reference()))

    def tangent_band(self, q: np.ndarray, free: bool = True) -> np.ndarray:
        """Tangent stiffness ``d2U/dq2`` in ``solve_banded((7, 7))`` storage (15, n)."""
        ab = np.empty((2 * _linalg().BANDWIDTH + 1, self.n_dof))
        _kernels().assemble_tangent_banded(np.ascontiguousarray(q, float), *self.kernel_args(), ab)
        if free:
            return np.ascontiguousarray(ab[:, CLAMP:])
        return ab

    def tangent_solve(self, q: np.ndarray, r: np.ndarray) -> np.ndarray:
        """``K_T(q)^-1 r`` on the free DOFs (assembly, banded factorisation and solve in numba;
        work arrays kept on the model). Raises ``numpy.linalg.LinAlgError`` when singular."""
        x = np.array(r, dtype=float)
        if self._tangent_factor_solve(q, x) == _linalg().NO_FACTOR:
            raise np.linalg.LinAlgError("singular tangent stiffness")
        return x

    def tangent_factor(self, q: np.ndarray) -> int:
        """Kind of the banded factorisation of ``K_T(q)`` on the free DOFs
        (:func:`ancf_beam.linalg.band_factorize`): ``CHOLESKY`` exactly when it is (numerically)
        positive definite, else ``LU`` or ``NO_FACTOR`` (singular)."""
        return self._tangent_factor_solve(q, np.zeros(self.n_free))

    def tangent_work(self) -> tuple[np.ndarray, ...]:
        """Work arrays of :func:`ancf_beam.beam.kernels.tangent_solve` after its ``off``
        (``ab``, ``lb``, ``fac``, ``lu``, ``piv``, ``xp``), made once and kept on the model."""
        w = self.__dict__.get("_tangent_work")
        if w is None:
            nf, bw = self.n_free, _linalg().BANDWIDTH
            w = (
                np.empty((2 * bw + 1, self.n_dof)),
                np.empty((bw + 1, nf)),
                np.empty((2, nf, bw + 1)),
                np.empty((3 * bw + 1, nf)),
                np.zeros(nf, dtype=np.int64),
                np.zeros(nf + 2 * bw),
            )
            self._tangent_work = w
        return w

    def _tangent_factor_solve(self, q: np.ndarray, x: np.ndarray) -> int:
        q = np.ascontiguousarray(q, dtype=float)
        return int(_kernels().tangent_solve(q, self.kernel_args(), CLAMP, *self.tangent_work(), x))

    def tangent_dense(self, q: np.ndarray, free: bool = True) -> np.ndarray:
        ab = self.tangent_band(q, free=free)
        return _linalg().band_to_dense(ab)

    def sample(self, q: np.ndarray, per_element: int = 4) -> dict[str, np.ndarray]:
        """Position, axial strain and curvature at ``per_element`` points of every element.

        Returns ``X`` (reference position, m), ``x``, ``y`` (m), ``eps`` (-) and ``kappa``
        (rad/m, the element's curvature measure ``(r' x r'') / |r'|^2``).
        """
        xi = np.linspace(0.0, 1.0, per_element, endpoint=False)
        s, sp, spp = shape_tables(xi, self.le)
        e = np.asarray(q, float)[: self.n_dof].copy()
        blocks = np.stack([e[4 * el : 4 * el + 8].reshape(4, 2) for el in range(self.n_el)])
        r = np.einsum("pa,eac->epc", s, blocks).reshape(-1, 2)
        rp = np.einsum("pa,eac->epc", sp, blocks).reshape(-1, 2)
        rpp = np.einsum("pa,eac->epc", spp, blocks).reshape(-1, 2)
        X = (self.x_nodes[:-1, None] + xi[None, :] * self.le).ravel()
        X = np.append(X, self.length)
        tip = self.tip(q)
        r = np.vstack([r, [tip[0], tip[1]]])
        _, rp_end, rpp_end = shape_tables(np.array([1.0]), self.le)
        last = blocks[-1]
        rpe = rp_end @ last
        rppe = rpp_end @ last
        rp = np.vstack([rp, rpe])
        rpp = np.vstack([rpp, rppe])
        g2 = np.sum(rp * rp, axis=1)
        if self.linear:
            eps = rp[:, 0] - 1.0
            kappa = rpp[:, 1]
        else:
            eps = np.sqrt(g2) - 1.0
            kappa = (rp[:, 0] * rpp[:, 1] - rp[:, 1] * rpp[:, 0]) / g2
        return {"X": X, "x": r[:, 0], "y": r[:, 1], "eps": eps, "kappa": kappa}

    def residual_free(self, q: np.ndarray, load_factor: float = 1.0) -> np.ndarray:
        """Out-of-balance force ``Q_e + lambda Q_g`` on the free DOFs (N)."""
        return self.elastic_force(q)[CLAMP:] + load_factor * self.gravity_free


def _kernels():
    """The numba kernels, imported on first use: a run that needs none of them (a small
    static solve, :mod:`ancf_beam.beam.element`) starts without loading numba."""
    from ancf_beam.beam import kernels

    return kernels


def _linalg():
    """:mod:`ancf_beam.linalg` (numba kernels), imported on first use (see :func:`_kernels`)."""
    from ancf_beam import linalg

    return linalg
