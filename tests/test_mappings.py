"""The three defect mappings (gauss, nodal, element): the staircase effect on coarse meshes,
agreement (second order) as the mesh is refined."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam.defects import SectionProfile, mapped_values
from ancf_beam.solvers.modal import modal_analysis
from ancf_beam.solvers.static import solve_static
from ancf_beam.studies.bounds import EPS, refinement_estimate
from conftest import FS, case_with, make_model

GRADED = {"defect.lam": 0.6, "defect.n": 2.0}


def _tip(ne, mapping):
    m = make_model(**GRADED, **{"mesh.n_elements": ne, "defect.mapping": mapping})
    return solve_static(m).tip_y


def test_mapped_values_definitions():
    case = case_with(**GRADED)
    p = SectionProfile(case)
    xn = np.linspace(0, 1, 5)
    xi = np.array([0.0, 0.25, 1.0])
    g = mapped_values(p.E, xn, xi, "gauss")
    e = mapped_values(p.E, xn, xi, "element")
    n = mapped_values(p.E, xn, xi, "nodal")
    # the definitions, evaluated the same way: a few roundings of the position and of the
    # interpolation each side, 16 eps (measured 0)
    np.testing.assert_allclose(g[1], p.E(0.25 + 0.25 * xi), rtol=16 * EPS)
    np.testing.assert_allclose(e[1], p.E(0.375), rtol=16 * EPS)
    np.testing.assert_allclose(n[1], p.E(0.25) + xi * (p.E(0.5) - p.E(0.25)), rtol=16 * EPS)
    with pytest.raises(ValueError, match="mapping"):
        mapped_values(p.E, xn, xi, "spline")


def test_mappings_differ_on_coarse_mesh_and_agree_when_refined():
    """The nodal and element mappings (piecewise linear / constant properties) differ from the
    Gauss-point one at second order. On 4 elements the staircase is visible: larger than the
    Gauss model's own discretisation error there (FS x its estimate from 4, 8, 16 elements:
    4.9e-5 of the tip; the differences are 6.6e-3, 4.3e-3). Refined, the differences fall at
    order 2: the local order of the two finest pairs within its pre-asymptotic deviation of 2,
    FS x twice its change from the previous local order (as the convergence checks; measured
    2.00000 and 2.0038 against 1.0e-4 and 0.049; the tips' round-off, 1e-12 of a difference of
    1e-4, moves a local order by 1e-8)."""
    ns = [4, 8, 16, 32]
    gauss = [_tip(ne, "gauss") for ne in ns]
    visible = FS * refinement_estimate(*gauss[:3]) / abs(gauss[0])
    diffs = {"nodal": [], "element": []}
    for ne, ref in zip(ns, gauss, strict=True):
        for mp in diffs:
            diffs[mp].append(abs(_tip(ne, mp) / ref - 1))
    for mp, d in diffs.items():
        assert d[0] > visible, (mp, d, visible)  # visible staircase at 4 elements
        assert all(b < a for a, b in zip(d, d[1:], strict=False)), (mp, d)
        local = -np.diff(np.log2(d))
        assert abs(local[-1] - 2.0) <= FS * 2.0 * abs(local[-1] - local[-2]), (mp, d, local)


def test_uniform_beam_is_mapping_independent():
    """Constant properties map to the same numbers bit for bit (the midpoint value, E_a + xi
    x 0): the runs are identical (measured 0)."""
    for mp in ["nodal", "element"]:
        m = make_model(**{"mesh.n_elements": 3, "defect.mapping": mp})
        g = make_model(**{"mesh.n_elements": 3})
        assert solve_static(m).tip_y == solve_static(g).tip_y
        np.testing.assert_array_equal(modal_analysis(m, 2).omega, modal_analysis(g, 2).omega)
