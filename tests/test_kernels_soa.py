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


def _gauss(na, nb):
    return {"mesh.n_gauss_axial": na, "mesh.n_gauss_bending": nb}


@pytest.mark.parametrize(
    ("ne", "overrides", "same"),
    [
        (3, {}, True),  # padded to SOA_VECTOR elements
        (12, {"defect.lam": 0.5, "defect.n": 2.0}, True),
        (33, {"mesh.n_gauss_axial": 5}, False),  # two axial passes, one bending pass
        (40, {"imperfection.kappa0": 0.2}, True),  # non-zero reference strains
        (20, _gauss(4, 4), True),  # two passes of the shared points
        (9, _gauss(10, 10), True),  # the most points the config allows: four passes
        (16, _gauss(2, 7), False),
        (21, _gauss(3, 2), False),
    ],
)
def test_soa_force_and_energy_match_element_major(ne, overrides, same):
    """The structure-of-arrays kernels (rules with the same points: passes of up to three
    points, the axial term from the bending term's tangent; other rules: a loop per point)
    against the element-major one: the same formulas in another order of operations.
    Measured: force up to 3.6e-14 of its largest entry (the graded 12-element case; the element
    forces cancel between neighbours), energy up to 3.0e-15 relative; tolerances 1e-13 and
    3e-14."""
    m = make_model(**{"mesh.n_elements": ne, **overrides})
    q = _bent(m)
    kargs = m.kernel_args()
    sa = kernels.soa_args(kargs, m.le, False, force=True)
    assert (len(sa.gb) > 0) == same  # the pass kernel for rules with the same points
    f_ref = np.empty(m.n_dof)
    u_ref = kernels.elastic_force(q, *kargs, f_ref)
    f = np.full(m.n_dof, np.nan)
    u = kernels.force(q, kargs, sa, f)
    assert np.allclose(f, f_ref, rtol=0, atol=1e-13 * np.abs(f_ref).max())
    assert u == pytest.approx(u_ref, rel=3e-14)


def test_soa_is_off_where_the_element_major_kernel_is_used():
    m = make_model(**{"mesh.n_elements": 40})
    assert kernels.soa_args(m.kernel_args(), m.le, False).on
    assert not kernels.soa_args(m.kernel_args(), m.le, True).on  # damage rescales the weights
    small = make_model(**{"mesh.n_elements": kernels.SOA_MIN_ELEMENTS - 1})
    assert not kernels.soa_args(small.kernel_args(), small.le, False).on
    assert kernels.soa_args(make_model(**{"mesh.n_elements": kernels.SOA_MIN_ELEMENTS})
                            .kernel_args(), small.le, False).on  # fmt: skip
    split = {"mesh.n_gauss_axial": 5, "mesh.n_elements": kernels.SOA_MIN_ELEMENTS_SPLIT - 1}
    m5 = make_model(**split)
    assert not kernels.soa_args(m5.kernel_args(), m5.le, False).on
    lin = make_model(**{"mesh.n_elements": 40, "mesh.strain": "linear"})
    assert not kernels.soa_args(lin.kernel_args(), lin.le, False).on


def test_config_gauss_range_is_covered_by_the_unrolled_passes():
    """The element loop is written out for at most SOA_MAX_GAUSS points per rule (four passes
    of three): the config's range must stay inside it."""
    from ancf_beam.config import N_GAUSS_RANGE

    assert N_GAUSS_RANGE[1] <= kernels.SOA_MAX_GAUSS
