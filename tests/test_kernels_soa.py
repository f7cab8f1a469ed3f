"""The structure-of-arrays force kernel against the element-major one (same physics)."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam import kernels
from ancf_beam.studies.bounds import EPS
from conftest import make_model


def _bent(model):
    q = model.reference()
    q[1::4] += -0.05 * model.x_nodes**2 + 0.01 * np.sin(7 * model.x_nodes)
    q[3::4] += -0.1 * model.x_nodes
    q[0::4] *= 1.0 + 1e-3 * model.x_nodes
    return q


def _gauss(na, nb):
    return {"mesh.n_gauss_axial": na, "mesh.n_gauss_bending": nb}


_FIVE = {"mesh.n_gauss_axial": 5}  # Exudyn's 5/3


@pytest.mark.parametrize(
    ("ne", "overrides", "layout"),
    [
        (3, {}, "same"),  # padded to SOA_VECTOR elements
        (12, {"defect.lam": 0.5, "defect.n": 2.0}, "same"),
        (40, {"imperfection.kappa0": 0.2}, "same"),  # non-zero reference strains
        (20, _gauss(4, 4), "same"),  # two passes of the shared points
        (9, _gauss(10, 10), "same"),  # the most points the config allows: four passes
        (65, {**_FIVE, "defect.lam": 0.5}, "split"),  # just above SOA_ROW: run-time rows
        (64, {**_FIVE, "imperfection.kappa0": 0.2}, "fixed"),  # the longest fixed rows
        (20, _FIVE, "fixed"),  # 24 lanes, 4 of them padding
        (3, _FIVE, "fixed"),
        (16, _gauss(2, 7), "fixed"),
        (21, _gauss(3, 2), "fixed"),
    ],
)
def test_soa_force_and_energy_match_element_major(ne, overrides, layout):
    """The structure-of-arrays kernels (rules with the same points: passes of up to three
    points, the axial term from the bending term's tangent; other rules: a loop per point, on
    rows of fixed length up to SOA_ROW elements) against the element-major one: the same
    formulas in another order of operations. Measured: force up to 3.6e-14 of its largest
    entry (the graded 12-element case; the element forces cancel between neighbours), energy
    up to 3.0e-15 relative; tolerances 1e-13 and 3e-14: NOT derived bounds. Two orders of the
    same sums differ by at most 2 gamma_k sum|terms| (the element contributions' absolute
    values, which the kernels do not expose); the sampled round-off of the force (16 x, the
    static bounds') is 1e3 times looser than these differences, and the energy's also holds
    the strains' cancellation (eps |r'|^2 / |eps| relative) of two formulas."""
    m = make_model(**{"mesh.n_elements": ne, **overrides})
    q = _bent(m)
    kargs = m.kernel_args()
    sa = kernels.soa_args(kargs, m.le, False, force=True)
    assert (len(sa.gb) > 0) == (layout == "same")  # the pass kernel for the same points
    assert (sa.x.shape[0] == 1) == (layout == "fixed")
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
    assert kernels.soa_args(
        make_model(**{"mesh.n_elements": kernels.SOA_MIN_ELEMENTS}).kernel_args(), small.le, False
    ).on
    split = {"mesh.n_gauss_axial": 5, "mesh.n_elements": kernels.SOA_MIN_ELEMENTS_SPLIT - 1}
    m5 = make_model(**split)
    assert not kernels.soa_args(m5.kernel_args(), m5.le, False).on
    lin = make_model(**{"mesh.n_elements": 40, "mesh.strain": "linear"})
    assert not kernels.soa_args(lin.kernel_args(), lin.le, False).on


@pytest.mark.parametrize("rule", [{}, _FIVE], ids=["3/3", "5/3"])
def test_one_kernel_type_for_every_mesh_of_a_rule(rule):
    """The kernels' argument types depend on the Gauss rule alone: element-major (small
    meshes, damage, the linear model) or structure-of-arrays, fixed or run-time rows. Each
    type compiles every dynamic kernel anew (the pipeline compiled them twice for the
    element-major runs of the default rule), so the layouts differ only in values."""
    import numba

    types = set()
    for ne, damage, extra in [
        (kernels.SOA_MIN_ELEMENTS // 2, False, {}),
        (2 * kernels.SOA_MIN_ELEMENTS, False, {}),
        (2 * kernels.SOA_MIN_ELEMENTS, True, {}),
        (2 * kernels.SOA_MIN_ELEMENTS, False, {"mesh.strain": "linear"}),
        (kernels.SOA_ROW + kernels.SOA_VECTOR, False, {}),
    ]:
        m = make_model(**{"mesh.n_elements": ne, **rule, **extra})
        types.add(numba.typeof(kernels.soa_args(m.kernel_args(), m.le, damage)))
    assert len(types) == 1, types


def test_config_gauss_range_is_covered_by_the_unrolled_passes():
    """The element loop is written out for at most SOA_MAX_GAUSS points per rule (four passes
    of three): the config's range must stay inside it."""
    from ancf_beam.config import N_GAUSS_RANGE

    assert N_GAUSS_RANGE[1] <= kernels.SOA_MAX_GAUSS


@pytest.mark.parametrize(("ne", "gauss"), [(20, (5, 3)), (61, (5, 3)), (9, (2, 7))])
def test_fixed_rows_give_the_run_time_rows_force_to_the_bit(ne, gauss):
    """Rows of fixed length run the same operations in the same order per element as rows of
    run-time length (only the addressing differs), so the forces agree to the bit; the energy
    is a vectorised sum whose order may differ: at most 2 (N - 1) eps relative for N positive
    terms (N = elements x Gauss points; measured: equal or 1 ulp)."""
    m = make_model(**{"mesh.n_elements": ne, **_gauss(*gauss)})
    q = _bent(m)
    kargs = m.kernel_args()
    out = []
    for fixed in (True, False):
        sa = kernels.soa_args(kargs, m.le, False, force=True, fixed_rows=fixed)
        assert (sa.x.shape[0] == 1) == fixed
        f = np.full(m.n_dof, np.nan)
        out.append((f, kernels.force(q, kargs, sa, f)))
    (f1, u1), (f2, u2) = out
    assert np.array_equal(f1, f2)
    n_terms = ne * sum(gauss)
    assert u1 == pytest.approx(u2, rel=2 * (n_terms - 1) * EPS)


def test_fixed_rows_only_where_they_fit():
    m = make_model(**{"mesh.n_elements": kernels.SOA_ROW + 1, **_FIVE})
    assert kernels.soa_args(m.kernel_args(), m.le, False).x.shape[0] == 4  # run-time rows
    with pytest.raises(ValueError, match="fixed rows"):
        kernels.soa_args(m.kernel_args(), m.le, False, fixed_rows=True)
    same = make_model(**{"mesh.n_elements": 20})  # the same points: the pass kernel
    with pytest.raises(ValueError, match="fixed rows"):
        kernels.soa_args(same.kernel_args(), same.le, False, fixed_rows=True)


@pytest.mark.parametrize(("ne", "overrides"), [(20, _FIVE), (40, _FIVE), (80, _FIVE), (20, {})])
def test_soa_arrays_start_on_cache_lines_and_padding_is_zero(ne, overrides):
    """Every array of SoaArgs starts on a 64-byte boundary (an unaligned layout measured up to
    1.9x slower), and the padding lanes of the weight tables are zero (they add nothing)."""
    m = make_model(**{"mesh.n_elements": ne, **overrides})
    sa = kernels.soa_args(m.kernel_args(), m.le, False)
    arrays = (sa.ea_t, sa.ei_t, sa.eps0_t, sa.kap0_t, sa.x, sa.g)
    assert all(a.ctypes.data % 64 == 0 and a.flags.c_contiguous for a in arrays)
    n_row = sa.g.shape[0] // 8
    for a, w in zip((sa.ea_t, sa.ei_t), m.kernel_args()[4:6], strict=True):
        rows = a.reshape(-1, n_row)
        assert np.array_equal(rows[:, :ne], w.T)
        assert not rows[:, ne:].any()
