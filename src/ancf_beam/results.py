"""Result types of the solvers and the errors they raise.

All quantities are SI. Coordinates ``q`` are full node-major vectors ``[r_x, r_y, r_x', r_y']``
per node (m, m, -, -); ``shapes`` and the free-DOF arrays exclude the clamped node 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ancf_beam.errors import (  # defined at the ground floor, re-exported here
    ConstraintSingularityError,
    ConvergenceError,
    InstabilityError,
    NewtonConvergenceError,
    NonFiniteResultError,
    RedundantConstraintError,
    StaticSolutionError,
)

__all__ = [
    "ConvergenceError",
    "CriticalDt",
    "DynamicsResult",
    "InstabilityError",
    "energy_drift_rel",
    "NonFiniteResultError",
    "ModalResult",
    "NewtonConvergenceError",
    "NewtonStats",
    "StaticResult",
    "StaticSolutionError",
]


# ------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------
def energy_drift_rel(kinetic, potential, gravity, total, roundoff: float) -> float:
    """``max |E(t) - E(0)| / max T`` of a run's samples, or NaN (not available) when its
    denominator is round-off: when the energy put into the run -- the initial kinetic and
    potential energy and the largest work of gravity, ``T(0) + |U(0)| + max |V|`` -- is at
    most ``roundoff`` (J, the round-off level of the computed strain energy), nothing but
    round-off moves it and both ``max T`` and the drift are round-off (a beam released from
    rest with ``g = 0`` reported 1.6)."""
    if not np.size(kinetic):
        return math.nan
    e_in = float(kinetic[0]) + abs(float(potential[0])) + float(np.max(np.abs(gravity)))
    tmax = float(np.max(kinetic))
    if e_in <= roundoff or tmax <= 0.0:
        return math.nan
    return float(np.max(np.abs(total - total[0])) / tmax)


@dataclass
class StaticResult:
    """Static equilibrium under gravity (:func:`ancf_beam.solvers.solve_static`): the full
    coordinates ``q``, the deformed tip position and angle, and the Newton and load-stepping
    statistics (units next to each field)."""

    q: np.ndarray  # full coordinates at equilibrium (m, -)
    tip_x: float  # m
    tip_y: float  # m (negative downward)
    tip_angle_deg: float  # angle of the tip tangent from +x (negative downward)
    newton_iterations: int  # total over all load steps
    load_steps: int  # accepted load increments
    cutbacks: int  # rejected (halved) increments
    residual_norm: float  # N, at the end
    residual_tol: float  # N, the tolerance used for the final step
    load_factors: np.ndarray | None = None  # accepted load factors (damage runs)
    damage_history: np.ndarray | None = None  # (n_steps, n_el, n_gauss) damage after each step


@dataclass
class ModalResult:
    """Natural frequencies and mass-normalised mode shapes of the clamped beam, linearised about
    the state ``q`` (:func:`ancf_beam.solvers.modal_analysis`)."""

    omega: np.ndarray  # rad/s, ascending
    frequency_hz: np.ndarray  # Hz
    shapes: np.ndarray  # (n_modes, n_free) mass-normalised mode shapes
    about: str
    q: np.ndarray  # full coordinates of the state linearised about
    axial_fraction: np.ndarray  # share of each mode's kinetic energy in x-translations


@dataclass
class CriticalDt:
    """Critical time step of the explicit integrator (:func:`ancf_beam.solvers.critical_dt`):
    ``2 / omega_max`` with the element bound, the fitted ``l_e^2 / C`` formula, the axial and
    bending parts and, when measured, the stability limit found by bisection."""

    omega_max: float  # rad/s
    dt_critical: float  # s
    dt_element_bound: float  # s
    dt_formula: float  # s
    formula_C: float  # -
    governing_mode: str  # "axial" | "bending"
    axial_fraction: float  # share of the top mode along the axis
    dt_bending: float  # s, 2/omega_max of the bending (transverse) part alone
    dt_axial: float  # s, 2/omega_max of the axial part alone
    dt_measured: float | None = None  # s
    omega_max_variation: float | None = None  # max |omega_max(q(t)) / omega_max - 1| at it


@dataclass(frozen=True)
class NewtonStats:
    """Newton statistics of an implicit run (the per-step iterations are in the result)."""

    factorizations: int  # factorisations of the effective stiffness
    halvings: int  # step halvings after a failed step
    increment_converged: int  # steps accepted on the increment criterion
    residual_floor: float  # N, round-off floor of the residual tolerance


@dataclass
class DynamicsResult:
    """Sampled record of a dynamic run (:func:`ancf_beam.solvers.simulate`): tip position and
    energies every ``sample_dt`` from ``t = 0`` to ``t_end`` (the last sample at ``t_end``),
    full-coordinate snapshots, the step, the step count and the timings; ``total`` is the
    energy balance whose drift :meth:`energy_drift_rel` reports."""

    t: np.ndarray  # s, sample times
    tip_x: np.ndarray  # m
    tip_y: np.ndarray  # m
    kinetic: np.ndarray  # J
    strain: np.ndarray  # J
    gravity: np.ndarray  # J
    damping_work: np.ndarray  # J
    t_snap: np.ndarray  # s
    q_snap: np.ndarray  # (n_snap, n_dof) full coordinates
    dt: float
    steps: int
    wall_s: float
    integrator: str = "central-difference"
    newton_iterations: np.ndarray | None = None  # per step, implicit integrators only
    damage_snap: np.ndarray | None = None  # (n_snap, n_el, n_gauss) damage at the snapshots
    cpu_s: float = math.nan  # process CPU time of the time loop (robust to other load)
    newton_stats: NewtonStats | None = None  # implicit integrators only
    energy_roundoff: float = 0.0  # J, round-off level of the energies (BeamModel.energy_roundoff)

    @property
    def total(self) -> np.ndarray:
        return self.kinetic + self.strain + self.gravity + self.damping_work

    @classmethod
    def from_buffers(
        cls,
        tip_out,
        en_out,
        snap_out,
        dsnap_out,
        i_sample,
        i_snap,
        sample_every,
        snap_every,
        dt,
        t_end=None,
        **fields,
    ) -> DynamicsResult:
        """Trim the preallocated output buffers of a time loop (``tip_out`` (n, 2): x, y;
        ``en_out`` (n, 4): T, U, V, W_d; full-coordinate and damage snapshots) into a result.
        With ``t_end`` the last sample and snapshot hold the final state at ``t_end``."""
        t = np.arange(i_sample) * sample_every * dt
        t_snap = np.arange(i_snap) * snap_every * dt
        if t_end is not None:
            t[-1] = t_snap[-1] = t_end
        return cls(
            t=t,
            tip_x=tip_out[:i_sample, 0].copy(),
            tip_y=tip_out[:i_sample, 1].copy(),
            kinetic=en_out[:i_sample, 0].copy(),
            strain=en_out[:i_sample, 1].copy(),
            gravity=en_out[:i_sample, 2].copy(),
            damping_work=en_out[:i_sample, 3].copy(),
            t_snap=t_snap,
            q_snap=snap_out[:i_snap].copy(),
            damage_snap=None if dsnap_out is None else dsnap_out[:i_snap].copy(),
            dt=dt,
            **fields,
        )

    @property
    def energy_drift_rel(self) -> float:
        """``max |E(t) - E(0)| / max T`` (with the damping work included in E); NaN (not
        available) when nothing but round-off moves the beam (:func:`energy_drift_rel`)."""
        return energy_drift_rel(
            self.kinetic, self.strain, self.gravity, self.total, self.energy_roundoff
        )


# ------------------------------------------------------------------------------------------
# planar multibody (ancf_beam.mbs)
# ------------------------------------------------------------------------------------------
__all__ += ["ConstraintSingularityError", "MechanismResult", "RedundantConstraintError"]


@dataclass
class MechanismResult:
    """Sampled trajectory of a multibody run (``ancf_beam.mbs.integrators``).

    ``q``, ``v``, ``a``: (n_samples, n) coordinates (m, rad, -), velocities and accelerations;
    ``lam``: (n_samples, m) Lagrange multipliers (N or N m, sign convention of
    :mod:`ancf_beam.mbs.joints`); ``phi_max``/``dphi_max``: largest position- and
    velocity-level constraint violation at each sample; energies in J (``strain`` includes the
    force-element potential, ``dissipated`` the work released by damage and dissipated by the
    contacts, ``drive_work`` the work the driving constraints fed in: ``lam . Phi_t``
    integrated step by step), so that ``total - drive_work`` is conserved."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    lam: np.ndarray
    phi_max: np.ndarray
    dphi_max: np.ndarray
    kinetic: np.ndarray
    strain: np.ndarray
    gravity: np.ndarray
    dissipated: np.ndarray
    integrator: str
    dt: float  # s; nan for the adaptive integrator
    steps: int  # accepted steps
    wall_s: float
    cpu_s: float = math.nan
    newton_iterations: np.ndarray | None = None  # per step, index-3 integrators
    stats: dict | None = None
    contact: Any = None  # ancf_beam.mbs.stepping.ContactRecord of runs with contact elements
    force_state: np.ndarray | None = None  # (n_samples, n_force_elements, 4) carried state
    drive_work: np.ndarray | None = None  # J, work the drives fed in since t = 0 (booked)
    energy_roundoff: float = 0.0  # J, round-off level of the beams' strain energy
    # Moreau-Jean runs (ancf_beam.mbs.moreau): per sample and nonsmooth contact the normal and
    # tangential impulse (N s) of the step ending at the sample, a summary per contact and the
    # contact solver's iterations per step
    impulse_n: np.ndarray | None = None
    impulse_t: np.ndarray | None = None
    contact_summary: dict | None = None
    lcp_iterations: np.ndarray | None = None

    @property
    def total(self) -> np.ndarray:
        return self.kinetic + self.strain + self.gravity + self.dissipated

    def energy_drift_rel(self) -> float:
        """``max |E - E0| / max T`` (damage work included in E); NaN (not available) when
        nothing but round-off moves the system (:func:`energy_drift_rel`)."""
        return energy_drift_rel(
            self.kinetic, self.strain, self.gravity, self.total, self.energy_roundoff
        )
