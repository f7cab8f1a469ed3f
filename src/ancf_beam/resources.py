"""Resource bounds of a run, checked before anything large is allocated (docs/design.md,
"Memory and time").

Every run's large arrays are estimated from its inputs with the memory model below and refused
(:class:`~ancf_beam.errors.ConfigError`, exit 2) above :data:`MEMORY_BUDGET`, naming the key
(and option), its value, the estimate and the allowed range; the time loops are refused above
a bound on their work (:data:`MAX_ELEMENT_STEPS`, :data:`MAX_MECHANISM_STEPS`). The numbers
come from ``tracemalloc`` peaks and CPU times measured on the development machine (2 cores,
OpenBLAS; numba kernels warm):

* beam model and solver arrays: :data:`BYTES_PER_ELEMENT` (static 2.9 kB, modal 4.0 kB,
  explicit 3.0 kB, implicit 5.0 kB per element, the same at 1000 and 10000 elements);
* dynamics records: :data:`BYTES_PER_SAMPLE` per sample (six numbers in the loop's buffers,
  eight after trimming and in the Dataset), ``24 n_dof`` per snapshot (buffer, trimmed copy,
  Dataset copy and node views) plus ``16`` per damage point, 8 per implicit step (the Newton
  iteration counts);
* mechanisms: ``16 (3 n + m + 6 + s)`` per sample (``n`` coordinates, ``m`` equations, ``s``
  carried force-element numbers; buffer and trimmed copy; the adaptive integrator keeps ``2 n +
  s`` more), 8 per index-3 step;
* the stepped transfer matrix: :data:`BYTES_PER_SEGMENT` per segment and a block of the
  frequency scan of about 40 MB (:data:`ancf_beam.references.transfer.COMPOUND_BLOCK`; it took
  250 kB per segment for three modes before, 25 GB at 100000 segments);
* modal analysis: the basis and its Lanczos vectors, ``8 n_free (5 s + 1)`` with ``s`` about
  twice the modes, the projected problems ``32 s^2``, and dense blocks ``40 n^2`` where the
  spectrum is nearly full.

Time: the explicit beam loop takes 50-80 ns per element and step, the implicit ones 140-300 ns
(measured at 20 and 200 elements), a rigid slider-crank 20 us (central differences) to 36 us
(generalized-alpha) per step and the adaptive integrator 0.4 ms, the stepped beam's frequency
scan 0.22 ms per segment and mode; the bounds keep a run below about 15 minutes (explicit) / an
hour (implicit), 6-7 minutes (mechanisms) and 4 minutes (stepped).
"""

from __future__ import annotations

import math

from ancf_beam.errors import ConfigError

__all__ = [
    "BYTES_PER_ELEMENT",
    "BYTES_PER_SAMPLE",
    "BYTES_PER_SEGMENT",
    "MAX_ADAPTIVE_STEPS",
    "MAX_ELEMENT_STEPS",
    "MAX_MECHANISM_STEPS",
    "MAX_SEGMENT_MODES",
    "MEMORY_BUDGET",
    "check_dynamics",
    "check_mechanism",
    "check_memory",
    "check_modal",
    "check_stepped",
    "fmt_bytes",
]

#: Largest memory (bytes) the arrays of one run may take: 2 GiB, a twelfth of the 24 GB
#: development machine, which runs two pipeline jobs and other work at once.
MEMORY_BUDGET = 2 * 2**30
BYTES_PER_ELEMENT = 5_000
BYTES_PER_SAMPLE = 120
BYTES_PER_SEGMENT = 600
_STEPPED_FIXED = 40e6
#: Largest ``segments x modes`` of the stepped beam's frequency scan (about 4 minutes).
MAX_SEGMENT_MODES = 1_000_000
#: Largest ``steps x elements`` of a beam run (explicit about 15 min, implicit up to an hour).
MAX_ELEMENT_STEPS = 1e10
#: Largest number of steps of a fixed-step mechanism run (about 6 minutes at 36 us per step).
MAX_MECHANISM_STEPS = 1e7
#: Largest number of steps of an adaptive mechanism run, counted as it runs (scipy's steppers
#: take about 0.4 ms per step: 7 minutes).
MAX_ADAPTIVE_STEPS = 1e6


def fmt_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def check_memory(nbytes: float, what: str, setting: str, allowed: str) -> None:
    """Raise :class:`ConfigError` when ``nbytes`` exceeds :data:`MEMORY_BUDGET`: ``what`` the
    run and how its size comes about, ``setting`` the key / option and its value, ``allowed``
    the range of it that fits."""
    if nbytes > MEMORY_BUDGET:
        raise ConfigError(
            f"{setting}: {what} needs about {fmt_bytes(nbytes)} of memory, more than the "
            f"{fmt_bytes(MEMORY_BUDGET)} a run may take (docs/design.md, 'Memory and time'); "
            f"allowed: {allowed}"
        )


def check_dynamics(model, settings, plan, dt: float, implicit: bool) -> None:
    """A beam run of ``plan`` (:func:`ancf_beam.solvers.timeloop.step_plan`) with step ``dt``
    (s): its work and its records (module docstring)."""
    n_el = model.n_el
    steps = plan.n_steps
    t_end = settings.t_end
    if steps * n_el > MAX_ELEMENT_STEPS:
        raise ConfigError(
            f"dynamics.t_end (--t-end) = {t_end:g} s: {steps:.3g} steps of dt = {dt:.3g} s on "
            f"{n_el} elements are {steps * n_el:.3g} element-steps, more than the "
            f"{MAX_ELEMENT_STEPS:.0e} a run may take (about 15 min explicit; docs/design.md, "
            f"'Memory and time'); allowed: t_end <= {MAX_ELEMENT_STEPS / n_el * dt:.3g} s at "
            "this dt and mesh (or a larger dt: an implicit integrator, or fewer elements)"
        )
    damage = model.damage.size if model.case.damage.enabled else 0
    per_snap = 24 * model.n_dof + 16 * damage
    parts = {
        "model": BYTES_PER_ELEMENT * n_el,
        "samples": BYTES_PER_SAMPLE * plan.n_samples,
        "snapshots": per_snap * plan.n_snaps,
        "steps": 8 * steps if implicit else 0,
    }
    total = sum(parts.values())
    if total <= MEMORY_BUDGET:
        return
    room = MEMORY_BUDGET - parts["model"]
    worst = max(("samples", "snapshots", "steps"), key=parts.get)
    what = (
        f"a run of {steps:.3g} steps with {plan.n_samples:.3g} samples and "
        f"{plan.n_snaps:.3g} snapshots of {fmt_bytes(per_snap)}"
    )
    if worst == "samples":
        lo = BYTES_PER_SAMPLE * t_end / max(room - parts["snapshots"] - parts["steps"], 1.0)
        check_memory(
            total,
            what,
            f"dynamics.sample_dt = {settings.sample_dt:g} s",
            f"sample_dt >= {lo:.3g} s for t_end = {t_end:g} s",
        )
    if worst == "snapshots":
        lo = per_snap * t_end / max(room - parts["samples"] - parts["steps"], 1.0)
        check_memory(
            total,
            what,
            f"dynamics.snapshot_dt = {settings.snapshot_dt:g} s",
            f"snapshot_dt >= {lo:.3g} s for t_end = {t_end:g} s",
        )
    hi = max(room - parts["samples"] - parts["snapshots"], 0.0) / 8.0 * dt
    check_memory(
        total,
        what,
        f"dynamics.t_end (--t-end) = {t_end:g} s",
        f"t_end <= {hi:.3g} s at dt = {dt:.3g} s",
    )


def check_mechanism(system, settings, n_samples: int, steps: int | None) -> None:
    """A mechanism run with ``n_samples`` records and (fixed-step integrators; None: the
    adaptive one, whose steps are counted as it runs) at least ``steps`` steps."""
    st = settings
    if steps is not None and steps > MAX_MECHANISM_STEPS:
        dt = st.t_end / steps
        raise ConfigError(
            f"t_end (--t-end) = {st.t_end:g} s: {steps:.3g} steps of dt = {dt:.3g} s, more than "
            f"the {MAX_MECHANISM_STEPS:.0e} a mechanism run may take (about 6 minutes; "
            "docs/design.md, 'Memory and time'); "
            f"allowed: t_end <= {MAX_MECHANISM_STEPS * dt:.3g} s at this step (solver.dt, or "
            "the contact step the contact stiffness sets)"
        )
    n, m, s = system.n, system.m, system.fst.size
    per = 16 * (3 * n + m + 6 + s) + (8 * (2 * n + s) if steps is None else 0)
    total = per * n_samples + 8 * (steps or 0)
    room = MEMORY_BUDGET - 8 * (steps or 0)
    check_memory(
        total,
        f"a run with {n_samples:.3g} samples of {fmt_bytes(per)}",
        f"sample_dt = {st.sample_dt:g} s",
        f"sample_dt >= {per * st.t_end / max(room, 1.0):.3g} s for t_end = {st.t_end:g} s",
    )


def check_stepped(segments: int, n_modes: int) -> None:
    """The stepped transfer-matrix beam with ``segments`` segments and ``n_modes``
    frequencies: its frequency scan's work (segments x modes) and memory."""
    if segments * n_modes > MAX_SEGMENT_MODES:
        raise ConfigError(
            f"stepped.segments (--segments) = {segments} with {n_modes} modes (--modes, "
            f"modal.n_modes): the frequency scan of segments x modes = {segments * n_modes:.3g} "
            f"takes more than the {MAX_SEGMENT_MODES:.0e} (about 4 minutes, 0.22 ms each; "
            "docs/design.md, 'Memory and time') a run may take; allowed: "
            f"segments <= {MAX_SEGMENT_MODES // n_modes:.0f} for {n_modes} modes"
        )
    most = (MEMORY_BUDGET - _STEPPED_FIXED) // BYTES_PER_SEGMENT
    check_memory(
        _STEPPED_FIXED + BYTES_PER_SEGMENT * segments,
        f"the stepped beam of {segments} segments",
        f"stepped.segments (--segments) = {segments}",
        f"segments <= {most:.0f}",
    )


def modal_bytes(n_free: int, n_modes: int) -> float:
    """Memory model of :func:`ancf_beam.solvers.modal.modal_analysis` (module docstring),
    assuming one coupled block (a deformed beam)."""
    s = min(n_free, max(2 * n_modes, n_modes + 10))
    dense = 40.0 * n_free**2 if (n_free <= 400 or s >= n_free // 2) else 0.0
    return 8.0 * n_free * (5 * s + 1) + 32.0 * s * s + dense


def check_modal(n_free: int, n_modes: int, n_elements: int) -> None:
    """Modal analysis of ``n_modes`` modes of ``n_free`` DOFs."""
    need = modal_bytes(n_free, n_modes) + BYTES_PER_ELEMENT * n_elements
    if need <= MEMORY_BUDGET:
        return
    k = n_modes
    while k > 1 and modal_bytes(n_free, k) + BYTES_PER_ELEMENT * n_elements > MEMORY_BUDGET:
        k = max(1, math.floor(k * 0.9))
    check_memory(
        need,
        f"modal analysis of {n_modes} modes of {n_free} DOFs",
        f"modal.n_modes (--modes) = {n_modes}",
        f"n_modes <= {k} at mesh.n_elements = {n_elements}",
    )
