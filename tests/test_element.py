"""Element kernels: reference state, rigid-body invariance, tangent vs finite differences,
small-deflection limit equal to linear Euler-Bernoulli."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from conftest import EI, L, Q, make_model


def _rigid(model, angle, shift):
    c, s = np.cos(angle), np.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    q = model.reference().reshape(-1, 2) @ rot.T  # positions and slopes rotate alike
    q = q.reshape(-1, 4)
    q[:, :2] += shift  # only positions translate
    return q.ravel()


def _force_scale(model):
    # magnitude of the elastic force under a modest deformation: sets "round-off level"
    q = model.reference()
    q[1::4] += 1e-3 * np.linspace(0, 1, model.n_nodes) ** 2
    return np.abs(model.elastic_force(q)).max()


@pytest.mark.parametrize("ne", [1, 5, 20])
def test_reference_state_is_force_free(ne):
    m = make_model(**{"mesh.n_elements": ne})
    f = m.elastic_force(m.reference())
    # round-off of EA (|r'| - 1), EA ~ 8e7 N: measured 4.7e-11 of the force of a 1 mm bend
    # (5 elements), 0 (1 element); tolerance 5e-10. Energy: measured 7.6e-23 J; tol. 1e-21
    assert np.abs(f).max() < 5e-10 * _force_scale(m)
    assert m.strain_energy(m.reference()) < 1e-21


@pytest.mark.parametrize("angle", [0.3, -1.2, 2.5, np.pi])
def test_rigid_motion_gives_no_force(angle):
    m = make_model(**{"mesh.n_elements": 10, "defect.lam": 0.5, "defect.n": 2.0})
    q = _rigid(m, angle, np.array([0.37, -1.4]))
    f = m.elastic_force(q)
    # round-off level: the reference state's own residual force
    floor = np.abs(m.elastic_force(m.reference())).max()
    assert np.abs(f).max() < 20 * floor + 1e-9  # measured 3.2 x the floor
    assert m.strain_energy(q) < 1e-21  # measured 1.4e-22 J


def test_tangent_matches_finite_differences_at_large_deformation():
    m = make_model(**{"mesh.n_elements": 6, "defect.lam": 0.4, "material.E0": 2.07e8})
    rng = np.random.default_rng(42)
    q = _rigid(m, 0.9, np.array([0.1, 0.2]))
    q += rng.normal(0.0, 0.08, q.size)  # large, random, stretched and bent state
    k = m.tangent_dense(q, free=False)
    h = 1e-6
    kfd = np.empty_like(k)
    for j in range(q.size):
        e = np.zeros(q.size)
        e[j] = h
        kfd[:, j] = -(m.elastic_force(q + e) - m.elastic_force(q - e)) / (2 * h)
    # central differences, h = 1e-6: measured 3.7e-11 of the largest entry; tolerance 4e-10
    assert np.abs(k - kfd).max() / np.abs(k).max() < 4e-10
    assert np.abs(k - k.T).max() <= 1e-16 * np.abs(k).max()  # measured 2.2e-18


def test_force_is_minus_energy_gradient():
    m = make_model(**{"mesh.n_elements": 4})
    rng = np.random.default_rng(1)
    q = m.reference() + rng.normal(0, 0.05, m.n_dof)
    f = m.elastic_force(q)
    d = rng.normal(size=q.size) * 1e-6
    du = m.strain_energy(q + d) - m.strain_energy(q - d)
    assert du == pytest.approx(-2 * f @ d, rel=3e-9)  # central difference: measured 2.4e-10


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
    # measured 1.1e-16 (bending) and 1.5e-16 (axial) of the largest entry; tolerance 1e-14
    assert np.abs(k[np.ix_(yb, yb)] - kb).max() <= 1e-14 * np.abs(kb).max()
    # axial: cubic bar with the same Hermite functions (x-components), integrated exactly
    # with 3 Gauss points: K_ab = EA int S_a' S_b' dx
    xg, wg = np.polynomial.legendre.leggauss(5)
    xi = 0.5 * (xg + 1)
    from ancf_beam.beam.kernels import shape_tables

    _, sp, _ = shape_tables(xi, le)
    ka = ea * np.einsum("g,ga,gb->ab", 0.5 * wg * le, sp, sp)
    xb = [0, 2, 4, 6]
    assert np.abs(k[np.ix_(xb, xb)] - ka).max() <= 1e-14 * np.abs(ka).max()


def test_small_load_matches_linear_static_solution():
    m = make_model(**{"mesh.n_elements": 10})
    u = sla.solve_banded((7, 7), m.tangent_band(m.reference()), m.gravity_free)
    assert u[-3] == pytest.approx(-Q * L**4 / (8 * EI), rel=1e-10)  # measured 1.3e-12
