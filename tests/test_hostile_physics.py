"""Hostile but valid inputs to the physics paths (issue 26, rows A, B, C, D, F, G): runs that end
at the wrong time, equilibria that are not the answer, ratios of round-off, allocations beyond
the machine and crashes on a valid mesh. One test per row; each failed before its fix."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla

from ancf_beam.cli import EXIT_FAILURE, EXIT_USAGE, main
from ancf_beam.config import load_config, resolve_mechanism
from conftest import EI, L, Q, make_model

ROOT = Path(__file__).resolve().parents[1]
EPS = np.finfo(float).eps


def run_cli(capsys, *args: str) -> tuple[int, dict | None, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and "--json" in args else None), err


# --------------------------------------------------------------------------------------------
# A. mechanism runs end exactly at t_end
# --------------------------------------------------------------------------------------------
MECH_INTEGRATORS = ("adaptive", "generalized-alpha", "newmark", "central-difference")


def _slider_closed_form(t: float) -> float:
    """Slider position (m) of the rigid benchmark (crank r = 0.05 m, rod l = 0.12 m, 5000 rpm
    from angle 0): ``x = r cos(w t) + sqrt(l^2 - r^2 sin^2(w t))``."""
    r, rod, w = 0.05, 0.12, 5000.0 * 2.0 * math.pi / 60.0
    return r * math.cos(w * t) + math.sqrt(rod * rod - (r * math.sin(w * t)) ** 2)


@pytest.mark.parametrize("integrator", MECH_INTEGRATORS)
def test_A_mechanism_runs_end_at_t_end(capsys, integrator):
    """Issue 26 A: ``--t-end 0.0125`` with ``sample_dt = 1e-3`` reported ``t_end`` 0.012 and
    the slider there (0.170000 against 0.167596 at 0.0125 s); the two-body case at 1e-9 s
    reported ``t_end`` 0 and restitution -1 (null while in contact)."""
    t_end = 0.0125  # s, not a multiple of sample_dt
    exact = _slider_closed_form(t_end)
    base = [
        "mechanism",
        "--case",
        "slider_crank_rigid",
        "--set",
        "sample_dt=1e-3",
        "--t-end",
        str(t_end),
        "--integrator",
        integrator,
        "--json",
        "-q",
    ]

    def slider(*sets: str) -> dict:
        code, d, err = run_cli(capsys, *base, *[a for s in sets for a in ("--set", s)])
        assert code == 0, err
        assert d["t_end"] == t_end
        return d

    if integrator in ("generalized-alpha", "newmark"):
        # index 3: the driven slider-crank's positions are fixed by Phi(q, t_end) = 0. With the
        # Newton tolerance at 1e-12 the position residual reaches its round-off floor 64 eps
        # L_ref (L_ref = 0.17 m); the slider error is a combination of the nine residuals with
        # gains below 1/cos(phi) + r <= 1.2 each (r/l = 0.42): at most 10 x the floor.
        d = slider("solver.tol=1e-12")
        assert abs(d["slider_x"] - exact) <= 10 * 64 * EPS * 0.17  # measured 1.4e-15 m
    elif integrator == "adaptive":
        # the case's DOP853 at rtol 1e-10: at most rtol |x| per accepted step (the Baumgarte-
        # stabilised constraint manifold is contractive), measured 6e-15 m
        d = slider()
        assert abs(d["slider_x"] - exact) <= d["steps"] * 1e-10 * 0.17
    else:
        # central differences converge to the closed form at order 2 (measured 2.003)
        errs = [slider(f"solver.dt={dt}")["slider_x"] - exact for dt in (1e-5, 5e-6)]
        order = math.log2(abs(errs[0] / errs[1]))
        assert abs(order - 2.0) <= 0.1, (errs, order)

    # the --out histories: samples every sample_dt, the last one the state at t_end
    from ancf_beam.mbs.analysis import run_mechanism

    config = load_config(None)
    spec = resolve_mechanism(config, "slider_crank_rigid", {"sample_dt": 1e-3, "solver.dt": 1e-5})
    summary, ds = run_mechanism(spec, t_end=t_end, integrator=integrator)
    t = ds["time"].values
    np.testing.assert_allclose(t[:-1], np.arange(13) * 1e-3, rtol=0, atol=1e-15)
    assert t[-1] == t_end == summary["t_end"]
    assert ds["slider_x"].values[-1] == summary["slider_x"]

    # two-body in free flight (gap 1 mm closes at 1 ms): uniform motion, which every scheme
    # integrates exactly, so body 1 is at v_rel t_end up to round-off (a few eps per step)
    t_ff = 0.5005e-3  # s, not a multiple of sample_dt = 1 us
    spec = resolve_mechanism(config, "impact_seed003", {"gap": 1e-3})
    summary, ds = run_mechanism(spec, t_end=t_ff, integrator=integrator)
    assert summary["t_end"] == t_ff == ds["time"].values[-1]
    assert abs(ds["x1"].values[-1] - 1.0 * t_ff) <= 1e-12 * t_ff
    assert summary["impacts"] == 0 and summary["restitution"] is None  # no impact yet

    # in contact at t_end: restitution is null (CLI reference, JSON fields), the end time asked
    code, d, err = run_cli(
        capsys,
        "mechanism",
        "--case",
        "impact_seed003",
        "--t-end",
        "1e-9",
        "--integrator",
        integrator,
        "--json",
        "-q",
    )
    assert code == 0, err
    assert d["t_end"] == 1e-9
    assert d["restitution"] is None


# --------------------------------------------------------------------------------------------
# G. one element is a valid mesh
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    ["critical-dt", "simulate", "simulate-generalized-alpha", "static-linear", "modal"],
)
def test_G_one_element(capsys, command):
    """Issue 26 G: ``simulate`` / ``critical-dt --set mesh.n_elements=1`` failed with ``Offset -7
    (index 0) out of bounds`` (a band of half-width 7 on a matrix of 4 free DOFs)."""
    one = ("--set", "mesh.n_elements=1", "--json", "-q")
    model = make_model(**{"mesh.n_elements": 1})
    k = model.tangent_dense(model.reference())
    m = model.mass_dense()
    omega = np.sqrt(sla.eigh(k, m, eigvals_only=True))  # dense 4 x 4, independent of the band
    if command == "critical-dt":
        code, d, err = run_cli(capsys, "critical-dt", *one)
        assert code == 0, err
        # round-off of a 4 x 4 generalised eigenproblem: eps times its condition (~1e5)
        assert d["omega_max"] == pytest.approx(omega[-1], rel=1e-9)
        assert d["dt_critical"] == pytest.approx(2.0 / omega[-1], rel=1e-9)
    elif command.startswith("simulate"):
        extra = ("--integrator", "generalized-alpha") if command.endswith("alpha") else ()
        code, d, err = run_cli(capsys, "simulate", "--t-end", "0.0123", *extra, *one)
        assert code == 0, err
        assert d["t_end"] == 0.0123 and math.isfinite(d["tip_y_final"])
        assert d["tip_y_min"] < 0.0
    elif command == "static-linear":
        # cubic Hermite nodal values are exact for the linear cantilever under a uniform load
        # with the consistent load vector: w_tip = -q L^4 / (8 EI), to round-off
        code, d, err = run_cli(capsys, "static", "--set", "mesh.strain=linear", *one)
        assert code == 0, err
        assert d["tip_y"] == pytest.approx(-Q * L**4 / (8 * EI), rel=1e-12)
    else:
        code, d, err = run_cli(capsys, "modal", "--modes", "4", *one)
        assert code == 0, err
        np.testing.assert_allclose(d["omega"], omega, rtol=1e-9)


# --------------------------------------------------------------------------------------------
# B. a static answer is a stable equilibrium within the model's strains
# --------------------------------------------------------------------------------------------
STATIC_ROWS = [
    # (overrides, exit code, text the message must hold): the folded beam on 20 and 400
    # elements (unstable); a rubber-soft beam its own weight strains by 77 (input); a coarse
    # mesh whose strain (1.8 %) no equilibrium has (the weight allows 0.37 %)
    (("beam.length=1000", "beam.height=1e-6"), EXIT_FAILURE, "unstable"),
    (("beam.length=1000", "beam.height=1e-6", "mesh.n_elements=400"), EXIT_FAILURE, "unstable"),
    (("material.E0=1e3",), EXIT_USAGE, "material.E0"),
    (("material.E0=2.07e7", "mesh.n_elements=2"), EXIT_FAILURE, "mesh.n_elements"),
]


@pytest.mark.parametrize(
    "sets, code, text", STATIC_ROWS, ids=["folded-20", "folded-400", "soft-E0", "coarse-2-elements"]
)
def test_B_static_refuses_unstable_or_implausible(capsys, monkeypatch, sets, code, text):
    """Issue 26 B: ``static --set beam.length=1000 --set beam.height=1e-6`` (in bounds) gave a
    folded shape with 89 % axial strain, tip (26.8, -169.7) m (400 elements: -689 m), exit 0."""
    args = [a for s in sets for a in ("--set", s)]
    got, _, err = run_cli(capsys, "static", *args, "--json", "-q")
    assert got == code, err
    assert text in err and "Traceback" not in err

    # the refusals are right, checked without the library's band Cholesky: the state Newton
    # converged to, taken with the checks switched off
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.config import case_from_file
    from ancf_beam.solvers import static

    monkeypatch.setattr(static, "check_stability", lambda model, q, dense=False: None)
    model = BeamModel(case_from_file(None, None, list(sets)))
    q = static.solve_static(model).q
    lam = sla.eigvalsh(model.tangent_dense(q))  # dense LAPACK, on the free DOFs
    eps = float(np.max(np.abs(static.axial_strains(model, q))))
    if text == "unstable":
        # a negative eigenvalue far beyond its round-off (eps ||K||) and the strain the issue saw
        assert lam[0] < -1e6 * EPS * abs(lam[-1])
        assert eps > 0.89
    else:
        assert lam[0] > 0.0  # stable, but strained beyond the small-strain law's 1 %
        rho, g, e0 = 7850.0, 9.81, float(sets[0].split("=")[1])
        bound = rho * g * L / e0  # the axial force is at most the weight beyond x: rho g A L
        assert eps > 0.01
        assert (bound > 0.01) == (code == EXIT_USAGE)


@pytest.mark.parametrize("case", ["uniform", "large_E2.07e7", "curved_kappa0.2", "damage_clamp"])
def test_B_shipped_static_cases_pass_the_checks(case):
    """The control of row B: the shipped cases are stable (dense eigenvalues of the tangent all
    positive) and within the strain limit, and are returned as before."""
    from ancf_beam.analyses import run_static
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.config import resolve_case
    from ancf_beam.solvers import static

    c = resolve_case(load_config(None), case)
    summary, ds = run_static(c)
    model = BeamModel(c)
    q = ds["q"].values
    if not c.damage.enabled:  # the damaged model's stiffness is the run's, not a fresh one's
        assert sla.eigvalsh(model.tangent_dense(q))[0] > 0.0
        assert np.max(np.abs(static.axial_strains(model, q))) <= static.MAX_AXIAL_STRAIN


# --------------------------------------------------------------------------------------------
# C. ratios of round-off are not reported
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("run", ["explicit", "generalized-alpha", "pendulum"])
def test_C_energy_drift_of_a_run_without_load_is_not_available(capsys, run):
    """Issue 26 C: ``simulate --t-end 0.001 --set load.g=0``: nothing moves, yet
    ``energy_drift_rel`` was 1.60 (round-off over round-off); the pendulum at g = 0: 1.42."""
    if run == "pendulum":
        base = ["mechanism", "--case", "pendulum_berzeri", "--t-end", "0.05", "--json", "-q"]
        zero, loaded = ("--set", "g=0"), ()
    else:
        base = ["simulate", "--t-end", "0.001", "--json", "-q"]
        if run != "explicit":
            base += ["--integrator", run]
        zero, loaded = ("--set", "load.g=0"), ()
    code, d, err = run_cli(capsys, *base, *zero)
    assert code == 0, err
    assert d["energy_drift_rel"] is None
    # nothing but round-off moved: the tip stays exactly where it was released
    tip = d["tip_y"] if run == "pendulum" else d["tip_y_min"]
    assert tip == 0.0
    # under gravity the ratio is reported: a real run's drift, far below 1
    code, d, err = run_cli(capsys, *base, *loaded)
    assert code == 0, err
    assert d["energy_drift_rel"] is not None and 0.0 < d["energy_drift_rel"] < 1e-2


# --------------------------------------------------------------------------------------------
# D. memory bounded and checked before allocating
# --------------------------------------------------------------------------------------------
D_ROWS = [
    # (argv, text): each needed more than the machine had, or a traceback, before
    (("stepped", "--segments", "100001"), "[1, 100000]"),
    (("simulate", "--t-end", "10", "--set", "dynamics.snapshot_dt=1e-6"), "snapshot_dt >="),
    (("modal", "--set", "mesh.n_elements=10000", "--modes", "40000"), "n_modes <="),
    (("mechanism", "--case", "slider_crank_rigid", "--set", "sample_dt=1e-12"), "sample_dt >="),
]


def test_D_stepped_memory_stays_bounded():
    """Issue 26 D: ``stepped`` needed ~250 kB per segment (the whole frequency scan's compound
    matrices at once): 500 MB at 2000 segments, 25 GB at the documented 100000. Now the scan
    works in blocks: the peak stays at the block (about 40 MB) plus 600 B per segment."""
    import tracemalloc

    from ancf_beam.analyses import run_stepped
    from ancf_beam.config import resolve_case

    case = resolve_case({}, None, {})
    run_stepped(case, segments=20)  # imports, caches
    tracemalloc.start()
    summary, _ = run_stepped(case, segments=2000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 40e6 + 600 * 2000 + 20e6, peak  # the memory model, 20 MB of slack
    # the stepped uniform beam is exact: its tip against the closed form q L^4 / (8 EI)
    assert summary["tip_deflection"] == pytest.approx(-Q * L**4 / (8 * EI), rel=1e-10)


@pytest.mark.parametrize(
    "argv, text",
    D_ROWS,
    ids=["stepped-segments", "simulate-snapshots", "modal-modes", "mechanism-samples"],
)
def test_D_runs_beyond_memory_are_refused_before_allocating(capsys, argv, text):
    """Each of these was accepted and allocated far beyond the machine (or died in a
    MemoryError, exit 1): now exit 2 naming the key, the value, the estimate and the range."""
    code, _, err = run_cli(capsys, *argv, "--json", "-q")
    assert code == EXIT_USAGE, err
    assert text in err and ("of memory" in err or "is invalid" in err)


# --------------------------------------------------------------------------------------------
# F. mechanism inputs within physical bounds, runs within their step bound
# --------------------------------------------------------------------------------------------
F_ROWS = [
    (("--set", "drive.omega=1e300"), "drive.omega"),
    (("--set", "crank.mass=1e-300"), "crank.mass"),
    (("--integrator", "generalized-alpha", "--set", "solver.dt=1e-12"), "steps"),
    (("--t-end", "1e6"), "t_end"),
]


@pytest.mark.parametrize("extra, key", F_ROWS, ids=["omega", "mass", "steps", "t_end"])
def test_F_mechanism_inputs_and_steps_are_bounded(capsys, extra, key):
    """Issue 26 F: ``mechanism --set drive.omega=1e300`` was accepted and ran for minutes with
    overflow warnings: the inputs have physical bounds, and a run whose step count exceeds
    its bound is refused before it starts (exit 2, the key named)."""
    code, _, err = run_cli(
        capsys, "mechanism", "--case", "slider_crank_rigid", *extra, "--json", "-q"
    )
    assert code == EXIT_USAGE, err
    assert key in err
