"""The static solve's two paths (``ancf_beam.solvers.static``, "Two paths"): the element in
plain numpy (:mod:`ancf_beam.beam.element`) against the numba kernels, and the dense Newton
solve against the compiled banded one, over cases drawn from the documented ranges (the
strategy of ``test_properties_beam.py``); and that a small static run never loads numba.

Bounds and their sources:

* force and tangent: round-off. The same exact value is computed from three rigidly
  translated copies of the state (a translation changes no strain, so the exact force and
  tangent are the same, only their binary inputs differ); the spread of each implementation's
  values over the copies samples its round-off, and the two must agree within :data:`SAMPLES`
  times the larger spread (the factor of ``test_element.py``). The round-off is dominated by
  ``|r'| - 1`` (cancellation) times ``EA``, which both implementations share.
* the static answers: the Newton tolerance. Each path stops at a residual ``R_i`` no larger
  than its tolerance; to first order the two states differ by ``K^-1 (R_1 - R_2)``, so
  ``|u_1 - u_2| <= (|R_1| + |R_2|) / lambda_min(K)`` with ``K`` the free tangent at the
  solution, times 2 for the neglected second-order terms (the Newton iterates converge
  quadratically, so they are far smaller), plus the round-off of the coordinates.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from test_properties_beam import beam_cases

from ancf_beam.beam import element, kernels
from ancf_beam.beam.model import CLAMP, BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.results import ConvergenceError, StaticSolutionError
from ancf_beam.solvers import static, static_kernel
from ancf_beam.solvers.static import DENSE_MAX_ELEMENTS, solve_static, uses_dense_path
from conftest import HYPOTHESIS_SETTINGS

#: factor on the largest sampled round-off (test_element.SAMPLES)
SAMPLES = 16.0
#: translations of the state, as fractions of the beam length (irrational: inexact in binary)
SHIFTS = ((0.3183098861837907, -0.2718281828459045), (-0.1414213562373095, 0.5772156649))


def _shifted(model: BeamModel, q: np.ndarray):
    out = [q]
    for ax, ay in SHIFTS:
        s = q.copy()
        s[0::4] += ax * model.length
        s[1::4] += ay * model.length
        out.append(s)
    return out


def _values(model: BeamModel, q: np.ndarray):
    """Force and full tangent of the state ``q`` by the kernels and by the numpy element."""
    args = model.kernel_args()
    return (
        (model.elastic_force(q), model.tangent_dense(q, free=False)),
        (element.elastic_force(q, *args), element.tangent_dense(q, *args)),
    )


def _spread(values, base) -> float:
    return max(float(np.max(np.abs(v - base))) for v in values)


def _state(model: BeamModel, rng: np.random.Generator) -> np.ndarray:
    """A bent and stretched state: the reference with random node displacements and slope
    changes of about 1 % of the element length (strains up to a few %)."""
    q = model.reference()
    q += 0.01 * rng.standard_normal(q.size) * np.tile([model.le, model.le, 1.0, 1.0], model.n_nodes)
    return q


@settings(**{**HYPOTHESIS_SETTINGS, "max_examples": 40})
@given(beam_cases())
@example({"mesh.n_elements": DENSE_MAX_ELEMENTS, "defect.lam": 0.45, "defect.n": 1.5})
def test_numpy_element_equals_the_kernels_to_roundoff(over):
    model = BeamModel(resolve_case({}, None, over))
    rng = np.random.default_rng(7)
    eps = np.finfo(float).eps
    for q in (model.reference(), _state(model, rng)):
        (f0, k0), (f1, k1) = _values(model, q)
        copies = [_values(model, s) for s in _shifted(model, q)[1:]]
        # round-off sampled from both implementations' values at the translated copies
        spread_f = max(
            _spread([c[0][0] for c in copies], f0), _spread([c[1][0] for c in copies], f1)
        )
        spread_k = max(
            _spread([c[0][1] for c in copies], k0), _spread([c[1][1] for c in copies], k1)
        )
        # plus a few eps of each quantity's scale, for a sampled spread of 0
        assert np.max(np.abs(f1 - f0)) <= SAMPLES * spread_f + 8 * eps * np.max(np.abs(f0))
        assert np.max(np.abs(k1 - k0)) <= SAMPLES * spread_k + 8 * eps * np.max(np.abs(k0))


def _answer_bound(model: BeamModel, a, b) -> float:
    """Bound on ``|u_a - u_b|`` of two converged static answers (module docstring)."""
    k = element.tangent_dense(a.q, *model.kernel_args())[CLAMP:, CLAMP:]
    lam_min = float(np.linalg.eigvalsh(k)[0])
    eps = np.finfo(float).eps
    coords = 64 * eps * (model.length + float(np.max(np.abs(a.q))))
    return 2.0 * (a.residual_norm + b.residual_norm) / lam_min + coords


@settings(**{**HYPOTHESIS_SETTINGS, "max_examples": 40})
@given(beam_cases())
@example({"mesh.n_elements": DENSE_MAX_ELEMENTS, "material.E0": 2.07e8})
@example({"mesh.n_elements": 20, "material.E0": 2.07e7})  # tip angle about 60 degrees
def test_dense_and_banded_static_answers_agree_within_the_newton_tolerance(over):
    case = resolve_case({}, None, over)
    a = solve_static(BeamModel(case), dense=True)
    b = solve_static(BeamModel(case), dense=False)
    bound = _answer_bound(BeamModel(case), a, b)
    assert np.max(np.abs(a.q - b.q)) <= bound
    assert abs(a.tip_y - b.tip_y) <= bound


def test_a_solve_the_dense_path_cannot_finish_is_the_compiled_paths():
    """The folded beam of the module docstring (L = 1000 m, h = 1e-6 m: a tangent of condition
    about 1 / eps): the dense path stalls; by default the compiled path's refusal is reported
    (it converges to the unstable fold, which the stability check refuses)."""
    case = resolve_case({}, None, {"beam.length": 1000.0, "beam.height": 1e-6})
    with pytest.raises(ConvergenceError):
        solve_static(BeamModel(case), dense=True)
    with pytest.raises(StaticSolutionError, match="unstable"):
        solve_static(BeamModel(case), dense=False)
    # by default, in a process without numba: the dense attempt, then the compiled refusal
    code = (
        "import sys\n"
        "from ancf_beam.beam.model import BeamModel\n"
        "from ancf_beam.config import resolve_case\n"
        "from ancf_beam.results import StaticSolutionError\n"
        "from ancf_beam.solvers.static import solve_static, uses_dense_path\n"
        "m = BeamModel(resolve_case({}, None, {'beam.length': 1000.0, 'beam.height': 1e-6}))\n"
        "assert uses_dense_path(m)\n"
        "try:\n"
        "    solve_static(m)\n"
        "except StaticSolutionError as err:\n"
        "    print('unstable' in str(err), 'numba' in sys.modules)\n"
    )
    assert _run(code) == "True True"


def test_the_default_path_follows_the_mesh_size_damage_and_numba():
    small = BeamModel(resolve_case({}, None, {"mesh.n_elements": DENSE_MAX_ELEMENTS}))
    large = BeamModel(resolve_case({}, None, {"mesh.n_elements": DENSE_MAX_ELEMENTS + 1}))
    damaged = BeamModel(resolve_case({}, None, {"damage.enabled": True}))
    assert uses_dense_path(small, numba_loaded=False)
    assert not uses_dense_path(small, numba_loaded=True)  # then the compiled path is cheaper
    assert not uses_dense_path(large, numba_loaded=False)
    assert not uses_dense_path(damaged, numba_loaded=False)
    with pytest.raises(ValueError, match="no damage model"):
        solve_static(damaged, dense=True)


def test_newton_outcome_codes_are_the_kernels():
    assert (static.CONVERGED, static.NOT_CONVERGED, static.SINGULAR) == (
        static_kernel.CONVERGED,
        static_kernel.NOT_CONVERGED,
        static_kernel.SINGULAR,
    )
    assert kernels.shape_tables is element.shape_tables


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    return out.stdout.strip()


def test_a_small_static_run_does_not_load_numba():
    """``ancf-beam static`` of the seed beam (20 elements) ends without importing numba, and
    reports no compile time; a mesh above the dense bound loads it and counts its loading
    apart from the run (``compile_s``)."""
    code = (
        "import contextlib, io, json, sys\n"
        "from ancf_beam.cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    main(['static', '--json', '-q'{extra}])\n"
        "out = json.loads(buf.getvalue())\n"
        "print('numba' in sys.modules, out['compile_s'] == 0.0)\n"
    )
    assert _run(code.format(extra="")) == "False True"
    big = f", '--set', 'mesh.n_elements={DENSE_MAX_ELEMENTS + 1}'"
    assert _run(code.format(extra=big)) == "True False"
