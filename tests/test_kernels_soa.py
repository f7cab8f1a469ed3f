"""The structure-of-arrays force kernel against the element-major one (same physics)."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam import kernels
from conftest import make_model


def _bent(model):
    q = model.reference()
    q[1::4] += -0.05 * model.x_nodes**2 + 0.01 * np.sin(7 * model.x_nodes)
    q[3::4] += -0.1 * model.x_nodes
    q[0::4] *= 1.0 + 1e-3 * model.x_nodes
    return q


@pytest.mark.parametrize(
    ("ne", "overrides"),
    [
        (3, {}),  # padded to SOA_LANES elements
        (12, {"defect.lam": 0.5, "defect.n": 2.0}),
        (33, {"mesh.n_gauss_axial": 5}),
        (40, {"imperfection.kappa0": 0.2}),  # non-zero reference strains
    ],
)
def test_soa_force_and_energy_match_element_major(ne, overrides):
    m = make_model(**{"mesh.n_elements": ne, **overrides})
    q = _bent(m)
    kargs = m.kernel_args()
    sa = kernels.soa_args(kargs, m.le, False, force=True)
    f_ref = np.empty(m.n_dof)
    u_ref = kernels.elastic_force(q, *kargs, f_ref)
    f = np.full(m.n_dof, np.nan)
    u = kernels.force(q, kargs, sa, f)
    assert np.allclose(f, f_ref, rtol=0, atol=1e-13 * np.abs(f_ref).max())
    assert u == pytest.approx(u_ref, rel=1e-13)


def test_soa_is_off_where_the_element_major_kernel_is_used():
    m = make_model(**{"mesh.n_elements": 40})
    assert kernels.soa_args(m.kernel_args(), m.le, False).on
    assert not kernels.soa_args(m.kernel_args(), m.le, True).on  # damage rescales the weights
    small = make_model(**{"mesh.n_elements": kernels.SOA_MIN_ELEMENTS - 1})
    assert not kernels.soa_args(small.kernel_args(), small.le, False).on
    lin = make_model(**{"mesh.n_elements": 40, "mesh.strain": "linear"})
    assert not kernels.soa_args(lin.kernel_args(), lin.le, False).on
