"""Batch runs for parameter sweeps (identification grids, defect or clearance sweeps).

Many small models cost little each, and a sweep run one at a time from Python leaves all but
one core idle. :func:`run_batch` maps a task over the items in a pool of worker processes
(forked on Linux, so the numba kernels the parent has loaded are not compiled again), with BLAS
limited to one thread per worker (several workers with one BLAS thread each beat one worker
with many: the matrices here are small and BLAS threads spin-wait on a busy machine). The
ready-made tasks take a case (``ancf_beam.specs.CaseSpec``), build its model in the worker and
return a small summary, so that only specs and a few numbers cross process boundaries:

* :func:`modal_sweep`: the first natural frequencies of every case;
* :func:`static_sweep`: the static tip (x, y) of every case under its self-weight;
* :func:`explicit_sweep`: the tip history of a central-difference run of every case.

Results come back in the order of the items; the results are the same as one at a time
(every task is deterministic and runs with the same code).

:func:`explicit_batch` steps many beams of the same mesh size together in one process: one
structure-of-arrays time loop (:mod:`ancf_beam.solvers.explicit_batch`) whose innermost loops
run over the models, so that the processor's vector units work across models. It pays on one
core (``benchmarks/bench_batch.py``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

__all__ = [
    "default_workers",
    "explicit_batch",
    "explicit_sweep",
    "modal_sweep",
    "run_batch",
    "static_sweep",
]

_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def default_workers() -> int:
    """Worker processes of a batch: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _init_worker() -> None:
    for k in _BLAS_ENV:
        os.environ[k] = "1"
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # optional: the environment variables cover a fresh BLAS
        pass


def run_batch(
    task: Callable[[Any], Any],
    items: Iterable[Any],
    workers: int | None = None,
    chunksize: int | None = None,
) -> list[Any]:
    """``[task(item) for item in items]`` in ``workers`` processes (default
    :func:`default_workers`; 1: in this process, no pool). ``task`` must be picklable (a
    module-level function or a ``functools.partial`` of one); ``chunksize`` items go to a
    worker at a time (default: about four chunks per worker)."""
    items = list(items)
    workers = default_workers() if workers is None else int(workers)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    workers = min(workers, max(1, len(items)))
    if workers == 1:
        return [task(it) for it in items]
    if chunksize is None:
        chunksize = max(1, len(items) // (4 * workers))
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker) as pool:
        return list(pool.map(task, items, chunksize=chunksize))


# ------------------------------------------------------------------------------------------
# ready-made tasks (module level, so that they pickle)
# ------------------------------------------------------------------------------------------
def _modal_task(args) -> np.ndarray:
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis

    case, n_modes = args
    return modal_analysis(BeamModel(case), n_modes=n_modes, about="reference").omega


def _static_task(case) -> tuple[float, float]:
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.static import solve_static

    r = solve_static(BeamModel(case))
    return r.tip_x, r.tip_y


def _explicit_task(args) -> tuple[np.ndarray, np.ndarray]:
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.explicit import simulate_explicit
    from ancf_beam.solvers.modal import omega_max

    case, t_end, dt_safety, sample_dt = args
    model = BeamModel(case)
    dt_cr = 2.0 / omega_max(model)[0]
    res = simulate_explicit(
        model,
        t_end,
        dt_safety * dt_cr,
        dt_critical=dt_cr,
        sample_dt=sample_dt,
        snapshot_dt=t_end,
        progress=False,
    )
    return res.t, res.tip_y


def modal_sweep(cases: Sequence, n_modes: int = 3, workers: int | None = None) -> np.ndarray:
    """(n_cases, n_modes) natural frequencies (rad/s) about the straight reference."""
    out = run_batch(_modal_task, [(c, int(n_modes)) for c in cases], workers)
    return np.array(out)


def static_sweep(cases: Sequence, workers: int | None = None) -> np.ndarray:
    """(n_cases, 2) static tip position (m) under the self-weight."""
    return np.array(run_batch(_static_task, list(cases), workers))


def explicit_sweep(
    cases: Sequence,
    t_end: float,
    dt_safety: float = 0.8,
    sample_dt: float | None = None,
    workers: int | None = None,
    together: bool = False,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(t, tip_y) of a central-difference run of every case from rest, ``t_end`` (s) at
    ``dt = dt_safety x dt_cr`` (each case's own critical step). ``together``: in this process
    through :func:`explicit_batch`, one batch per mesh size (cases it cannot take, with
    damage or the linear strain measures, one at a time; ``workers`` is then ignored); equal
    to the one-at-a-time runs up to round-off (the order of summation)."""
    cases = list(cases)
    items = [(c, float(t_end), float(dt_safety), sample_dt) for c in cases]
    if not together:
        return run_batch(_explicit_task, items, workers)
    out: list[Any] = [None] * len(cases)
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(cases):
        if c.damage.enabled or c.mesh.strain == "linear":
            out[i] = _explicit_task(items[i])
        else:
            groups.setdefault(int(c.mesh.n_elements), []).append(i)
    for idx in groups.values():
        res = explicit_batch(
            [cases[i] for i in idx],
            t_end,
            dt_safety=dt_safety,
            sample_dt=sample_dt,
            snapshot_dt=t_end,
        )
        for i, r in zip(idx, res, strict=True):
            out[i] = (r.t, r.tip_y)
    return out


def explicit_batch(
    cases: Sequence,
    t_end: float | Sequence[float],
    dt: float | Sequence[float] | None = None,
    dt_safety: float = 0.8,
    damping=(0.0, 0.0),
    sample_dt=None,
    snapshot_dt=None,
    energy_growth_limit=None,
    q0=None,
    v0=None,
) -> list:
    """Central-difference runs of many beams of the same mesh size stepped together.

    ``cases``: :class:`~ancf_beam.specs.CaseSpec` or :class:`~ancf_beam.beam.model.BeamModel`
    items, all with the same ``mesh.n_elements``, element length and Gauss rules (material,
    density, section, their gradients, the defect profile and gravity may differ). Every other
    argument is one value for all runs or a sequence with one per run: ``t_end`` (s); ``dt``
    (s; default ``dt_safety`` times each model's own critical step ``2 / omega_max``, so the
    models may run at different steps: a model whose steps are done is held while the others
    go on); ``damping`` (Rayleigh ``(alpha, beta)``); ``sample_dt``, ``snapshot_dt``,
    ``energy_growth_limit`` (default: the case's ``dynamics`` section); ``q0``, ``v0`` (default:
    the reference, at rest).

    Returns one :class:`~ancf_beam.results.DynamicsResult` per case, in order, equal to
    :func:`~ancf_beam.solvers.explicit.simulate_explicit` of that case alone up to round-off
    (the order of summation differs; ``tests/test_batch_soa.py``); ``wall_s``/``cpu_s`` are
    the time of the batch's time loops (as for a single run: setup and the last step not
    included) divided by the number of runs. Raises ``ValueError`` naming the sizes
    for cases of different mesh sizes (and for damage, the linear measures, different element
    lengths or Gauss rules), :class:`~ancf_beam.results.InstabilityError` naming the run that
    became unstable."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.explicit_batch import run_explicit_batch
    from ancf_beam.solvers.modal import omega_max

    models = [c if isinstance(c, BeamModel) else BeamModel(c) for c in cases]
    sizes = sorted({m.n_el for m in models})
    if len(sizes) > 1:
        raise ValueError(
            f"explicit_batch: all cases need the same mesh.n_elements, got {sizes} "
            "(run one batch per mesh size)"
        )
    dt_cr = None  # only in the instability message: computed when the step needs it
    if dt is None:
        dt_cr = [2.0 / omega_max(m)[0] for m in models]
        dt = [float(dt_safety) * d for d in dt_cr]
    return run_explicit_batch(
        models,
        t_end,
        dt,
        damping=damping,
        sample_dt=sample_dt,
        snapshot_dt=snapshot_dt,
        energy_growth_limit=energy_growth_limit,
        q0=q0,
        v0=v0,
        dt_critical=dt_cr,
    )
