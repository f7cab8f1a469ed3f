"""The three defect mappings (gauss, nodal, element): the staircase effect on coarse meshes,
agreement (second order) as the mesh is refined."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam.defects import SectionProfile, mapped_values
from ancf_beam.solvers.modal import modal_analysis
from ancf_beam.solvers.static import solve_static
from conftest import case_with, make_model

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
    # the definitions, evaluated the same way: measured 0; tolerance 1e-14
    np.testing.assert_allclose(g[1], p.E(0.25 + 0.25 * xi), rtol=1e-14)
    np.testing.assert_allclose(e[1], p.E(0.375), rtol=1e-14)
    np.testing.assert_allclose(n[1], p.E(0.25) + xi * (p.E(0.5) - p.E(0.25)), rtol=1e-14)
    with pytest.raises(ValueError, match="mapping"):
        mapped_values(p.E, xn, xi, "spline")


def test_mappings_differ_on_coarse_mesh_and_agree_when_refined():
    ns = [4, 8, 16, 32]
    diffs = {"nodal": [], "element": []}
    for ne in ns:
        ref = _tip(ne, "gauss")
        for mp in diffs:
            diffs[mp].append(abs(_tip(ne, mp) / ref - 1))
    for mp, d in diffs.items():
        assert d[0] > 2e-3, (mp, d)  # visible staircase at 4 elements: measured 4.3e-3, 6.6e-3
        assert d[-1] < 2e-4, (mp, d)  # agree when refined: measured 1.0e-4, 6.4e-5 at 32
        assert all(b < a for a, b in zip(d, d[1:], strict=False)), (mp, d)
        slope = np.polyfit(np.log(ns), np.log(d), 1)[0]
        assert -2.2 < slope < -1.8, (mp, d, slope)  # second order: measured -2.00, -2.03


def test_uniform_beam_is_mapping_independent():
    for mp in ["nodal", "element"]:
        m = make_model(**{"mesh.n_elements": 3, "defect.mapping": mp})
        g = make_model(**{"mesh.n_elements": 3})
        assert solve_static(m).tip_y == pytest.approx(solve_static(g).tip_y, rel=1e-12)
        assert modal_analysis(m, 2).omega == pytest.approx(modal_analysis(g, 2).omega, rel=1e-12)
