"""Shared pieces of the benchmark scripts: the seed case, model builders for this project and
for Exudyn, and a best-of-N timer.

The seed case (issue 8): L = 1 m, b = h = 0.02 m, rho = 7850 kg/m^3, E0 = 2.07e11 Pa,
g = 9.81 m/s^2 along -y, clamped at x = 0 (r = 0, r' = (1, 0)), released from rest straight and
horizontal.

Exudyn is imported lazily (:func:`import_exudyn`) so that the scripts that do not need it run
without it, and so that the choice of its compiled module (``sys.exudynFast``) can be made on the
command line before the first import.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SEED = {
    "length": 1.0,  # m
    "width": 0.02,  # m
    "height": 0.02,  # m
    "rho": 7850.0,  # kg/m^3
    "E0": 2.07e11,  # Pa
    "g": 9.81,  # m/s^2
}
E_LARGE_DEFLECTION = 2.07e7  # Pa: static large-deflection case (tip ~ 0.94 m below the clamp)

# Exudyn's ObjectANCFCable2D integrates the axial term with 5 Gauss points (order 9) and the
# bending term with 3 (order 5) unless useReducedOrderIntegration is set (its documentation,
# "Numerical integration of elastic forces"). The comparison runs use the same rule here.
EXUDYN_GAUSS = (5, 3)

# Clamp of the Exudyn model in the explicit runs: a point mass on node 0's four coordinates (see
# README: its explicit solvers mishandle coordinate constraints). The clamp error of the tip is
# proportional to 1 / CLAMP_MASS: ~6e-7 relative at 1e8, ~7e-11 at 1e12 (measured at t = 0.05 s).
CLAMP_MASS = 1e12


# ------------------------------------------------------------------------------------------
# environment
# ------------------------------------------------------------------------------------------
def blas_threads_note() -> str:
    v = os.environ.get("OPENBLAS_NUM_THREADS")
    return f"OPENBLAS_NUM_THREADS={v}" if v else "BLAS threads: library default"


def machine_note() -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{model}, {os.cpu_count()} logical CPUs, load average {load:.2f}"


# ------------------------------------------------------------------------------------------
# timing
# ------------------------------------------------------------------------------------------
@dataclass
class Timing:
    wall: float  # s, best (smallest) wall time over the repetitions
    cpu: float  # s, best process CPU time over the repetitions
    result: object  # return value of the last repetition


def best_of(
    fn: Callable,
    repeat: int = 3,
    setup: Callable | None = None,
    min_time: float = 0.0,
    max_repeat: int = 2000,
) -> Timing:
    """Run ``fn`` ``repeat`` times, and on until the timed calls add up to ``min_time`` seconds
    of process CPU (at most ``max_repeat`` calls); smallest wall and smallest process-CPU time.

    ``setup`` (untimed) is called before every repetition and its result passed to ``fn``.
    On a shared machine the wall time includes waiting for a core; the process CPU time does
    not (both codes run single-threaded here), so it is the steadier of the two figures.
    ``min_time`` is for calls of a millisecond or less (static, modal), whose best of three
    moved by up to 1.6x between runs on this machine; the benchmarks give both codes the same
    ``min_time``."""
    walls, cpus = [], []
    res = None
    while len(cpus) < repeat or (sum(cpus) < min_time and len(cpus) < max_repeat):
        arg = setup() if setup is not None else None
        c0 = time.process_time()
        w0 = time.perf_counter()
        res = fn(arg) if setup is not None else fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return Timing(min(walls), min(cpus), res)


def rel(a: float, b: float) -> float:
    """Relative difference ``|a - b| / |b|``."""
    return abs(a - b) / abs(b) if b != 0 else abs(a - b)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# ------------------------------------------------------------------------------------------
# this project
# ------------------------------------------------------------------------------------------
def our_case(n_el: int, gauss: tuple[int, int] = EXUDYN_GAUSS, E0: float | None = None):
    from ancf_beam.config import resolve_case

    over = {
        "mesh.n_elements": int(n_el),
        "mesh.n_gauss_axial": int(gauss[0]),
        "mesh.n_gauss_bending": int(gauss[1]),
        "beam.length": SEED["length"],
        "beam.width": SEED["width"],
        "beam.height": SEED["height"],
        "material.rho": SEED["rho"],
        "material.E0": SEED["E0"] if E0 is None else E0,
        "load.g": SEED["g"],
    }
    return resolve_case({}, None, over)


def our_model(n_el: int, gauss: tuple[int, int] = EXUDYN_GAUSS, E0: float | None = None):
    from ancf_beam.beam.model import BeamModel

    return BeamModel(our_case(n_el, gauss, E0))


def warm_up_numba() -> None:
    """Load (or compile) every numba kernel the benchmarks call, outside the timed regions."""
    from ancf_beam.solvers.explicit import simulate_explicit
    from ancf_beam.solvers.implicit import simulate_implicit
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    m = our_model(4)
    simulate_explicit(m, 2e-5, 1e-6, progress=False)
    for newton in ("full", "modified"):
        simulate_implicit(m, 3e-4, 1e-4, "generalized-alpha", progress=False, newton=newton)
    solve_static(our_model(4, E0=E_LARGE_DEFLECTION))
    modal_analysis(m, n_modes=3, about="reference")


# ------------------------------------------------------------------------------------------
# Exudyn
# ------------------------------------------------------------------------------------------
_EXU = None


def import_exudyn(module: str = "fast"):
    """Import Exudyn once. ``module='fast'`` asks for ``exudynCPPfast`` (no range checks, AVX2:
    Exudyn's fastest build), ``'regular'`` for the default module. Returns the module or raises
    ``SystemExit`` with an installation hint."""
    global _EXU
    if _EXU is not None:
        return _EXU
    if module == "fast":
        sys.exudynFast = True
    try:
        import exudyn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SystemExit(
            "Exudyn is not installed: pip install -e '.[bench]' (the optional 'bench' extra)"
        ) from exc
    exudyn.SetWriteToConsole(False)  # silence per-solve banners and 'under development' notes
    _EXU = exudyn
    return exudyn


def exudyn_module_name() -> str:
    exu = import_exudyn()
    name = getattr(exu, "_compiledModuleName", None)
    if name is None:
        name = "exudynCPPfast" if getattr(sys, "exudynFast", False) else "exudynCPP"
    return f"exudyn {exu.config.Version() if hasattr(exu, 'config') else exu.__version__} ({name})"


@dataclass
class ExudynBeam:
    sc: object  # SystemContainer (kept alive)
    mbs: object
    nodes: list
    n_el: int


def exudyn_beam(
    n_el: int, clamp: str, E0: float | None = None, params: dict | None = None
) -> ExudynBeam:
    """The seed cantilever in Exudyn: ``n_el`` ObjectANCFCable2D on NodePoint2DSlope1 nodes,
    gravity as LoadMassProportional on every element (``params``: another beam with the keys
    of :data:`SEED`).

    ``clamp``: ``'constraint'`` (CoordinateConstraint of node 0's four coordinates to ground),
    ``'pin'`` (the same for node 0's position only: the slope stays free), ``'mass'`` (an
    ObjectGenericODE2 adding ``CLAMP_MASS`` to node 0's four coordinates: the form its explicit
    solvers handle correctly) or ``'none'`` (free; for the eigenvalue call, which removes the
    clamped coordinates itself)."""
    exu = import_exudyn()
    from exudyn import itemInterface as ii

    p = SEED if params is None else params
    area = p["width"] * p["height"]
    inertia = p["width"] * p["height"] ** 3 / 12.0
    E = p["E0"] if E0 is None else E0
    le = p["length"] / n_el
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    nodes = [
        mbs.AddNode(ii.NodePoint2DSlope1(referenceCoordinates=[k * le, 0.0, 1.0, 0.0]))
        for k in range(n_el + 1)
    ]
    for e in range(n_el):
        obj = mbs.AddObject(
            ii.ObjectANCFCable2D(
                length=le,
                massPerLength=p["rho"] * area,
                bendingStiffness=E * inertia,
                axialStiffness=E * area,
                nodeNumbers=[nodes[e], nodes[e + 1]],
            )
        )
        mk = mbs.AddMarker(ii.MarkerBodyMass(bodyNumber=obj))
        mbs.AddLoad(ii.LoadMassProportional(markerNumber=mk, loadVector=[0.0, -p["g"], 0.0]))
    if clamp in ("constraint", "pin"):
        ground = mbs.AddNode(ii.NodePointGround())
        mg = mbs.AddMarker(ii.MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
        for c in range(4 if clamp == "constraint" else 2):
            mc = mbs.AddMarker(ii.MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=c))
            mbs.AddObject(ii.CoordinateConstraint(markerNumbers=[mg, mc]))
    elif clamp == "mass":
        z = np.zeros((4, 4))
        mbs.AddObject(
            ii.ObjectGenericODE2(
                nodeNumbers=[nodes[0]],
                massMatrix=CLAMP_MASS * np.eye(4),
                stiffnessMatrix=z,
                dampingMatrix=z,
                forceVector=[0.0] * 4,
            )
        )
    elif clamp != "none":
        raise ValueError(f"clamp must be 'constraint', 'pin', 'mass' or 'none', got {clamp!r}")
    mbs.Assemble()
    return ExudynBeam(sc, mbs, nodes, n_el)


def exudyn_settings(linear_solver: str = "EigenSparse"):
    """Quiet simulation settings without solution files; ``linear_solver`` is an
    ``exudyn.LinearSolverType`` name (EXUdense, EigenSparse, EigenSparseSymmetric)."""
    exu = import_exudyn()
    s = exu.SimulationSettings()
    s.solutionSettings.writeSolutionToFile = False
    s.solutionSettings.sensorsWritePeriod = 1e30
    s.timeIntegration.verboseMode = 0
    s.staticSolver.verboseMode = 0
    s.displayStatistics = False
    s.displayComputationTime = False
    s.parallel.numberOfThreads = 1
    s.linearSolver.solverType = getattr(exu.LinearSolverType, linear_solver)
    return s


def exudyn_tip(beam: ExudynBeam) -> tuple[float, float]:
    """Current tip position (x, y) in m."""
    exu = import_exudyn()
    p = beam.mbs.GetNodeOutput(beam.nodes[-1], exu.OutputVariableType.Position)
    return float(p[0]), float(p[1])
