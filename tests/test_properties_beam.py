"""Property-based validation of the beam: cases drawn from the documented input ranges
(the ranges of the configuration schema, ``src/ancf_beam/schema/config.schema.yaml``; "Plausibility
bounds") pass every static and modal validation check of the pipeline
(:func:`ancf_beam.studies.validation.run_validation`: ANCF against the exact graded
quadrature, the stepped transfer-matrix beam, the extensible elastica and the closed forms of
the uniform counterpart), whose tolerances are error bounds computed
for each case (:mod:`ancf_beam.studies.bounds`).

Drawn: the modulus law ``lam`` in [0, 0.95] and ``n`` in [0.1, 5] (integers, non-integers,
``n < 1`` with ``E'`` singular at the clamp), measured tables with breakpoints anywhere, density,
width and height gradients, initially curved references (both profiles), meshes of 1 to 24
elements, 2 to 6 Gauss points, every mapping, both strain measures, 8 to 64 stepped segments,
and the geometry and load through the dimensionless numbers that govern the response:
slenderness ``L / h`` in [10, 1000], section aspect ``b / h`` in [0.2, 5], and the load
parameter ``q L^3 / EI`` in [1e-6, 3] (tip deflection up to about 0.4 L, tip angle about 60 deg).

Ranges left out, and why (documented bounds that cannot be validated by these references):
a single curved element with two axial Gauss points (the static Newton solve fails there: a
solver defect, reported separately; two elements are drawn for curved references);
``L / h`` above 1000 with a load parameter near 3 folds the beam (an equilibrium that needs
load stepping and stability checks of its own), and a load parameter above 3 leaves the regime
where the elastica continuation and the ANCF Newton solve are certain to find the same branch.

A coarse mesh under a large load whose static answer the solver refuses as not resolved (axial
strain above the model's 1 % where the weight bounds every equilibrium's strain far below) is
validated on the mesh four times finer instead; the refusal itself is asserted to be that one.

Seeded (``derandomize=True``), bounded in time (about 2 min of CPU), run in CI. The module
prints the number of draws and the worst share of its bound each check used
(``pytest -s tests/test_properties_beam.py``).
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from ancf_beam.analyses import run_modal, run_static
from ancf_beam.config import resolve_case
from ancf_beam.results import StaticSolutionError
from ancf_beam.studies.checks import checks_frame
from ancf_beam.studies.validation import run_validation

DRAWS = 50
PROPERTY_SETTINGS = settings(
    derandomize=True,
    max_examples=DRAWS,
    deadline=None,
    database=None,
    phases=(Phase.explicit, Phase.generate),  # no shrinking: bounded time, the case as drawn
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: worst err/tol per check name over the draws, and the number of draws (printed at the end)
WORST: dict[str, float] = defaultdict(float)
WORST_CASE: dict[str, dict] = {}
COUNTS: dict[str, int] = defaultdict(int)
DRAWN: list[int] = [0]


def _log_uniform(lo: float, hi: float):
    return st.floats(math.log(lo), math.log(hi)).map(math.exp)


@st.composite
def tables(draw):
    """A measured profile ``[[x/L, factor], ...]``: 0 to 3 breakpoints anywhere in (0, 1)."""
    inner = draw(st.lists(st.floats(0.05, 0.95), min_size=0, max_size=3, unique=True))
    xs = [0.0, *sorted(round(x, 3) for x in inner), 1.0]
    xs = sorted(set(xs))
    return [[x, draw(st.floats(0.4, 1.5))] for x in xs]


@st.composite
def gradients(draw, lam_max: float):
    """``{lam, n}`` of a power law (lam 0 half of the time)."""
    if draw(st.booleans()):
        return {"lam": 0.0, "n": 1.0}
    n = draw(st.one_of(st.sampled_from([1.0, 2.0, 3.0]), st.floats(0.1, 5.0)))
    return {"lam": draw(st.floats(0.05, lam_max)), "n": n}


@st.composite
def beam_cases(draw) -> dict:
    """Dotted-key overrides of the seed case (``ancf_beam.config.DEFAULTS``)."""
    over: dict = {}
    slender = draw(_log_uniform(10.0, 1000.0))
    aspect = draw(_log_uniform(0.2, 5.0))
    load = draw(_log_uniform(1e-6, 3.0))  # q L^3 / EI at the clamp
    L = draw(_log_uniform(0.1, 10.0))
    h = L / slender
    rho = draw(_log_uniform(1e3, 2e4))
    g = 9.81
    # E0 from the load parameter: q L^3 / EI = rho g b h L^3 / (E0 b h^3 / 12)
    e0 = min(max(12.0 * rho * g * L**3 / (load * h * h), 1e3), 1e15)  # the schema's bounds of E0
    over.update(
        {
            "beam.length": L,
            "beam.height": h,
            "beam.width": aspect * h,
            "material.rho": rho,
            "material.E0": e0,
        }
    )
    e = draw(gradients(0.95))
    over.update({"defect.lam": e["lam"], "defect.n": e["n"]})
    if draw(st.integers(0, 3)) == 0:
        over["defect.table"] = draw(tables())
    for fam in ("rho", "width", "height"):
        if draw(st.integers(0, 3)) == 0:
            gr = draw(gradients(0.6))
            over.update({f"defect.{fam}.lam": gr["lam"], f"defect.{fam}.n": gr["n"]})
        if draw(st.integers(0, 7)) == 0:
            over[f"defect.{fam}.table"] = draw(tables())
    curved = draw(st.integers(0, 3)) == 0
    if curved:
        profile = draw(st.sampled_from(["uniform", "linear"]))
        over.update(
            {"imperfection.profile": profile, "imperfection.kappa0": draw(st.floats(-1.5, 1.5)) / L}
        )
    over.update(
        {
            "defect.mapping": draw(st.sampled_from(["gauss", "gauss", "element", "nodal"])),
            # a single curved element with 2 axial Gauss points: the static Newton solve fails
            # (under-integrated axial energy of the arc; a solver defect, reported, not validated)
            "mesh.n_elements": draw(st.integers(2 if curved else 1, 24)),
            "mesh.n_gauss_axial": draw(st.integers(2, 6)),
            "mesh.n_gauss_bending": draw(st.integers(2, 6)),
            "mesh.strain": draw(st.sampled_from(["nonlinear", "nonlinear", "linear"])),
            "stepped.segments": draw(st.integers(8, 64)),
            "modal.n_modes": draw(st.integers(1, 3)),
        }
    )
    return over


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if not COUNTS:
        return
    print(f"\n{DRAWN[0]} draws; worst err/tol per check (number of rows):")
    for name in sorted(WORST, key=lambda k: -WORST[k]):
        print(f"  {WORST[name]:8.3f}  ({COUNTS[name]:3d})  {name}")


def _family(name: str) -> str:
    """Check names without the mesh / segment counts (one line per kind of check)."""
    return name.split(" (Richardson")[0].split(" (N=")[0]


def validate_drawn_case(over: dict):
    """The validation table (DataFrame) of the seed case with ``over``; records the worst
    err/tol of every kind of check in :data:`WORST`."""
    case = resolve_case({}, None, over)
    try:
        _, static_ds = run_static(case)
    except StaticSolutionError as err:
        # a coarse mesh under a large load: the static answer is refused when its axial strain
        # exceeds the model's 1 % while no equilibrium of the beam strains it that much (the
        # weight over the axial stiffness): the strain comes from the discretisation. The
        # refusal must be that one; the same case on a mesh four times finer is validated.
        assert "not resolved by the mesh" in str(err), str(err)
        over = {**over, "mesh.n_elements": 4 * case.mesh.n_elements}
        case = resolve_case({}, None, over)
        _, static_ds = run_static(case)
    _, modal_ds = run_modal(case)
    df = checks_frame(run_validation(case, static_ds, modal_ds))
    DRAWN[0] += 1
    for name, ratio in zip(df["check"], df["err/tol"], strict=True):
        key = _family(name)
        if float(ratio) > WORST[key]:
            WORST[key], WORST_CASE[key] = float(ratio), over
        COUNTS[key] += 1
    return df


@PROPERTY_SETTINGS
@given(beam_cases())
@example({"defect.lam": 0.45, "defect.n": 1.5, "mesh.n_elements": 8, "stepped.segments": 40})
@example(
    {
        "beam.length": 1.3130980722196564,
        "beam.height": 0.008847585215217346,
        "beam.width": 0.0337690455393501,
        "material.rho": 2167.514585777486,
        "material.E0": 17992135438.580162,
        "defect.lam": 0.055793102820120205,
        "defect.n": 0.9066378009313244,
        "defect.width.lam": 0.24431469936611988,
        "defect.width.n": 1.8477950443851727,
        "mesh.n_elements": 4,
        "mesh.n_gauss_axial": 5,
        "mesh.n_gauss_bending": 2,
        "mesh.strain": "linear",
        "stepped.segments": 26,
    }
)
def test_static_and_modal_validation_passes_on_drawn_cases(over):
    df = validate_drawn_case(over)
    failed = df[df["status"] != "PASS"]
    assert failed.empty, (over, failed[["check", "rel. error", "tolerance", "note"]].to_string())
    assert len(df) >= 1
