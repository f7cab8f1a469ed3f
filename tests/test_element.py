"""Element kernels: reference state, rigid-body invariance, tangent vs finite differences,
small-deflection limit equal to linear Euler-Bernoulli."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from ancf_beam.studies.bounds import EPS
from conftest import EI, FS, L, Q, make_model

#: Factor on the largest of three sampled round-off values (the static bounds' factor,
#: :data:`ancf_beam.studies.bounds.ROUNDOFF_SAMPLES_FACTOR`)
SAMPLES = 16.0


def _rigid(model, angle, shift):
    c, s = np.cos(angle), np.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    q = model.reference().reshape(-1, 2) @ rot.T  # positions and slopes rotate alike
    q = q.reshape(-1, 4)
    q[:, :2] += shift  # only positions translate
    return q.ravel()


def _roundoff_samples(model, q, fn):
    """Three samples of the round-off of ``fn`` (the elastic force or the strain energy) at a
    strain-free ``q``: its values at rigid translations of ``q`` by irrational fractions of
    ``L``, exactly zero without round-off (as :func:`ancf_beam.studies.bounds.
    residual_roundoff_samples`, all DOFs)."""
    out = []
    for ax, ay in (
        (0.3183098861837907, -0.2718281828459045),
        (-0.1414213562373095, 0.5772156649),
        (0.6931471805599453, 0.1732050807568877),
    ):
        shifted = q.copy()
        shifted[0::4] += ax * model.length
        shifted[1::4] += ay * model.length
        out.append(np.abs(fn(shifted)).max())
    return max(out)


@pytest.mark.parametrize("ne", [1, 5, 20])
def test_reference_state_is_force_free(ne):
    m = make_model(**{"mesh.n_elements": ne})
    q = m.reference()
    f = m.elastic_force(q)
    # round-off of EA (|r'| - 1), EA ~ 8e7 N: within 16 x its largest sample (translated
    # copies of the reference): measured 0, 7.0e-8, 3.5e-7 N against 2.0e-7, 3.8e-6, 1.3e-5 N
    # (1, 5, 20 elements); the energy likewise: 0, 3.0e-24, 7.6e-23 J against 1.5e-23,
    # 6.0e-22, 4.6e-21 J
    assert np.abs(f).max() <= SAMPLES * _roundoff_samples(m, q, m.elastic_force)
    assert m.strain_energy(q) <= SAMPLES * _roundoff_samples(m, q, m.strain_energy)


@pytest.mark.parametrize("angle", [0.3, -1.2, 2.5, np.pi])
def test_rigid_motion_gives_no_force(angle):
    m = make_model(**{"mesh.n_elements": 10, "defect.lam": 0.5, "defect.n": 2.0})
    q = _rigid(m, angle, np.array([0.37, -1.4]))
    f = m.elastic_force(q)
    # round-off: within 16 x its largest sample (translated copies of the rigid state)
    assert np.abs(f).max() <= SAMPLES * _roundoff_samples(m, q, m.elastic_force)
    assert m.strain_energy(q) <= SAMPLES * _roundoff_samples(m, q, m.strain_energy)


def test_tangent_matches_finite_differences_at_large_deformation():
    m = make_model(**{"mesh.n_elements": 6, "defect.lam": 0.4, "material.E0": 2.07e8})
    rng = np.random.default_rng(42)
    q = _rigid(m, 0.9, np.array([0.1, 0.2]))
    q += rng.normal(0.0, 0.08, q.size)  # large, random, stretched and bent state
    k = m.tangent_dense(q, free=False)

    def fd(h):
        out = np.empty_like(k)
        for j in range(q.size):
            e = np.zeros(q.size)
            e[j] = h
            out[:, j] = -(m.elastic_force(q + e) - m.elastic_force(q - e)) / (2 * h)
        return out

    h = 1e-6
    kfd, kfd2 = fd(h), fd(2 * h)
    # central differences, h = 1e-6: their truncation (order 2) estimated as FS x the change
    # from h = 2e-6 over 3, plus the force's round-off (16 x its sampled size, the forces at
    # translated copies of the rigid part of q) over 2h: measured 3.7e-11 of the largest entry
    # against 1.8e-9 (err/bound 0.022: the round-off term dominates)
    roundoff = SAMPLES * _roundoff_samples(m, _rigid(m, 0.9, np.array([0.1, 0.2])), m.elastic_force)
    assert np.abs(k - kfd).max() <= FS * np.abs(kfd2 - kfd).max() / 3 + 2 * roundoff / (2 * h)
    # the two triangles hold sums of the same Gauss-point products, added in other orders: a
    # few eps of the largest entry (16 eps; measured 2.2e-18, 0.01 eps)
    assert np.abs(k - k.T).max() <= 16 * EPS * np.abs(k).max()


def test_force_is_minus_energy_gradient():
    m = make_model(**{"mesh.n_elements": 4})
    rng = np.random.default_rng(1)
    q = m.reference() + rng.normal(0, 0.05, m.n_dof)
    f = m.elastic_force(q)
    d = rng.normal(size=q.size) * 1e-6
    du = m.strain_energy(q + d) - m.strain_energy(q - d)
    du2 = m.strain_energy(q + 2 * d) - m.strain_energy(q - 2 * d)
    # central difference: the third-order term U^(3)[d, d, d] / 3 (from the difference at 2d:
    # |du2 / 2 - du| / 3, x FS) plus the energies' round-off (sums of positive Gauss-point
    # terms: at most 64 eps of each): measured 2.4e-10 of du, err/bound 0.29
    u = m.strain_energy(q)
    bound = FS * abs(du2 / 2 - du) / 3 + 2 * 64 * EPS * u
    assert abs(du + 2 * f @ d) <= bound


def test_linear_limit_equals_euler_bernoulli_stiffness():
    """At the reference state the tangent equals the classical Hermite beam + bar matrices."""
    m = make_model(**{"mesh.n_elements": 1})
    k = m.tangent_dense(m.reference(), free=False)
    le = m.le
    ea = m.ea_w.sum() / le
    ei = m.ei_w.sum() / le
    kb = (
        ei
        / le**3
        * np.array(
            [
                [12, 6 * le, -12, 6 * le],
                [6 * le, 4 * le**2, -6 * le, 2 * le**2],
                [-12, -6 * le, 12, -6 * le],
                [6 * le, 2 * le**2, -6 * le, 4 * le**2],
            ]
        )
    )
    yb = [1, 3, 5, 7]
    # sums of Gauss-point products against the closed form's products: a few eps of the
    # largest entry, 16 eps; measured 1.1e-16 (bending) and 1.5e-16 (axial)
    assert np.abs(k[np.ix_(yb, yb)] - kb).max() <= 16 * EPS * np.abs(kb).max()
    # axial: cubic bar with the same Hermite functions (x-components), integrated exactly
    # with 3 Gauss points: K_ab = EA int S_a' S_b' dx
    xg, wg = np.polynomial.legendre.leggauss(5)
    xi = 0.5 * (xg + 1)
    from ancf_beam.beam.kernels import shape_tables

    _, sp, _ = shape_tables(xi, le)
    ka = ea * np.einsum("g,ga,gb->ab", 0.5 * wg * le, sp, sp)
    xb = [0, 2, 4, 6]
    assert np.abs(k[np.ix_(xb, xb)] - ka).max() <= 16 * EPS * np.abs(ka).max()


def test_small_load_matches_linear_static_solution():
    m = make_model(**{"mesh.n_elements": 10})
    kb = m.tangent_band(m.reference())
    u = sla.solve_banded((7, 7), kb, m.gravity_free)
    # cubic Hermite elements are nodally exact for a uniform load: the error is the band
    # solve's round-off, the componentwise backward-error bound through the tip's adjoint
    # z = K^-1 e_tip: 2 w eps |z| . (|K| |u| + |f|) (w = 15 the band width; 2.9e-10 of the tip;
    # measured 1.1e-12)
    k = m.tangent_dense(m.reference())
    e_tip = np.zeros(m.n_free)
    e_tip[-3] = 1.0
    z = np.linalg.solve(k, e_tip)
    bound = 30 * EPS * np.abs(z) @ (np.abs(k) @ np.abs(u) + np.abs(m.gravity_free))
    assert abs(u[-3] + Q * L**4 / (8 * EI)) <= bound
