"""Configuration: YAML -> validated, frozen case specifications.

A configuration file holds *defaults* in the sections ``beam``, ``material``, ``defect``, ``mesh``,
``load``, ``static``, ``modal``, ``stepped`` and ``dynamics``, an optional ``cases`` mapping of
named cases that override any of those keys, and an optional ``pipeline`` section that only the
Snakemake workflow reads. Every key is checked against :data:`RULES`: an unknown key, a value of
the wrong type or outside its allowed range raises :class:`ConfigError` naming the key, the value
and the allowed range. Missing keys take the documented defaults of :data:`DEFAULTS`; misspelled
keys are never silently ignored.

This module is the one home of defaults: :data:`DEFAULTS` for the case sections and
:data:`PIPELINE_DEFAULTS` for the workflow's ``pipeline`` section (the JSON schema of the
workflow carries the same values as ``default:`` annotations; a test keeps them equal). The spec
dataclasses have no defaults of their own: :func:`build_case` fills every field.

All quantities are SI: metres, kilograms, seconds, pascals.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
import math
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ancf_beam.errors import ConfigError

MAPPINGS = ("gauss", "nodal", "element")
STRAIN_MODELS = ("nonlinear", "linear")
MODAL_STATES = ("reference", "static")
#: The time integrators (the one list: the solvers' settings and the CLI import it from here).
EXPLICIT_INTEGRATOR = "central-difference"
IMPLICIT_INTEGRATORS = ("bdf1", "newmark", "generalized-alpha")
INTEGRATORS = (EXPLICIT_INTEGRATOR, *IMPLICIT_INTEGRATORS)
NEWTON_VARIANTS = ("full", "modified")
NEWTON_PREDICTORS = ("auto", "constant", "extrapolate")
#: Newton controls of the implicit integrators: per-run solver settings (CLI options, keyword
#: arguments of ancf_beam.solvers.settings.DynamicsSettings.from_case), not case keys.
NEWTON_DEFAULTS: dict[str, Any] = {
    "max_iter": 20,
    "tol": 1e-8,
    "increment_tol": 1e-10,
    "max_halvings": 4,
    "newton": "modified",
    "predictor": "auto",
}
IMPLICIT_STEPS_PER_PERIOD = 100.0  # default implicit step: T1 / this

#: Built-in defaults (the seed case: uniform steel cantilever, 1 m x 20 mm x 20 mm).
DEFAULTS: dict[str, dict[str, Any]] = {
    "beam": {"length": 1.0, "width": 0.02, "height": 0.02},
    "material": {"E0": 2.07e11, "rho": 7850.0},
    "defect": {
        "lam": 0.0,
        "n": 1.0,
        "table": None,
        "mapping": "gauss",
        "rho": {"lam": 0.0, "n": 1.0, "table": None},
        "width": {"lam": 0.0, "n": 1.0, "table": None},
        "height": {"lam": 0.0, "n": 1.0, "table": None},
    },
    "imperfection": {"kappa0": 0.0, "profile": "uniform", "tip_offset": None},
    "damage": {"enabled": False, "threshold": 1.0e-3, "softening": 1.0e-3, "d_max": 0.9},
    "mesh": {
        "n_elements": 20,
        "n_gauss_axial": 3,
        "n_gauss_bending": 3,
        "strain": "nonlinear",
    },
    "load": {"g": 9.81},
    "static": {"load_steps": 1, "max_iterations": 30, "rtol": 1e-9, "max_cutbacks": 12},
    "modal": {"n_modes": 3, "about": "reference"},
    "stepped": {"segments": 80},
    "dynamics": {
        "t_end": 0.5,
        "dt": None,
        "dt_safety": 0.8,
        "damping_alpha": 0.0,
        "damping_beta": 0.0,
        "sample_dt": 1.0e-4,
        "snapshot_dt": 1.0e-2,
        "energy_growth_limit": 0.5,
        "integrator": "central-difference",
        "newmark_beta": 0.25,
        "newmark_gamma": 0.5,
        "rho_inf": 0.8,
    },
}

SECTIONS = tuple(DEFAULTS)
TOP_LEVEL_EXTRA = ("cases", "pipeline", "mechanisms")

#: Defaults of the workflow's ``pipeline`` section (read by the Snakefile through
#: :func:`pipeline_settings`; the library's analyses never read it). ``null`` entries mean "the
#: study's own choice" (documented in ``config/config.yaml``). Every report's acceptance
#: thresholds are ``pipeline.<report>.tolerances`` (the check builders of
#: :mod:`ancf_beam.studies.checks` read them; the reports of the cross-case comparison, the
#: defect families and each case also use the validation tolerances of the same comparisons).
PIPELINE_DEFAULTS: dict[str, dict[str, Any]] = {
    "critical_dt": {
        "meshes": [2, 4, 8, 16, 32, 64, 128, 256],
        "measure_meshes": [4, 16, 64],
        "tolerances": {  # see ancf_beam.studies.checks.critical_dt_checks
            # slopes of dt_axial (1), dt_bending (2) and dt_cr (where each regime governs)
            # against l_e: their pre-asymptotic deviation, estimated from the two coarsest
            # local slopes (geometric in the mesh ratio), times this factor of safety; the
            # measured stability limit: ancf_beam.solvers.critical.measured_limit_bound
            # (bisection bracket 2e-3 + detection within the run, 2.02e-3; measured 8.8e-4)
            "estimate_factor": 2.0,
            # element-by-element bound above dt_cr by at most this: the inequality is a
            # theorem, the tolerance the round-off of two eigenvalues at the top of the
            # spectrum (a few eps each)
            "element_bound_rel": 1.0e-13,
        },
    },
    "simulate": {"n_elements": None, "t_end": None},
    "convergence": {
        "meshes": [2, 4, 8, 16, 32],
        "n_modes": 3,
        "tolerances": {  # see ancf_beam.studies.checks.convergence_checks
            # observed order at least the case's leading order (4; 2 for the element and
            # nodal mappings) less its pre-asymptotic deviation, estimated as twice the change
            # of the triplet order from the previous triplet (the next error term is at least
            # an order higher), times this factor of safety
            "estimate_factor": 2.0,
        },
    },
    "validation": {
        "segments": None,
        "tolerances": {  # see ancf_beam.studies.validation.run_validation
            # Every tolerance is the sum of the error bounds of the compared values, computed
            # for each check and case (ancf_beam.studies.bounds; the terms are in each row's
            # note): the ANCF quantity's discretisation error from the mesh four times finer,
            # the stepped beam's from N, 2N and 4N segments, the elastica's from a ten times
            # looser solver tolerance, the explicit run's energy error from the central
            # differences' dt^2/8 Q_g M^-1 Q_g (or dt/2), the geometric nonlinearity of the
            # dynamic checks from the static tip (nonlinear vs linear), and round-off (a few
            # eps times a condition estimate). This factor of safety multiplies the estimates:
            # it covers a second error term of the opposite sign before the asymptotic range.
            # Largest err/tol measured: 0.52 on config/quick.yaml, 0.45 over the
            # property-based draws of tests/test_properties_beam.py.
            "estimate_factor": 2.0,
        },
    },
    "case_report": {  # the per-case report (explicit run, response analysis)
        "tolerances": {  # see ancf_beam.studies.checks.case_checks
            # FFT tip peak vs omega_1: the estimator's error on a pure tone of the run's length
            # and sampling plus the run's frequency shift (static state, geometric
            # nonlinearity, central differences); the RMS static curvature error and the
            # uniform beam's concentration metrics: their change to the mesh four times finer
            # (x 4/3) plus the static geometric nonlinearity. This factor of safety multiplies
            # the estimates.
            "estimate_factor": 2.0,
        },
    },
    "comparison": {  # the cross-case report: display only (its comparisons are validation's)
        "tolerances": {},
    },
    "integrators": {
        "enabled": True,
        "cases": None,
        "t_end": 2.0,
        "explicit_safety": None,
        "per_period": [100.0, 20.0],
        "damping_ratio": 0.05,
        "damped_per_period": 20.0,
        "tolerances": {  # see ancf_beam.studies.checks.integrators_checks
            # references: the case's linear discrete model (all modes) with each run's scheme,
            # step and damping; this factor of safety multiplies the geometric-nonlinearity
            # estimate (ancf_beam.studies.bounds.geometric_nonlinearity), which the linear
            # model leaves out
            "estimate_factor": 2.0,
            "fit_sigmas": 3.0,  # period error and decay: this many standard errors of the fit
            "theory_abs": 1.0e-12,  # ... plus the fit's convergence (least squares at 1e-13)
            "step_halvings": 0.0,  # Newton step halvings allowed (all implicit runs of a case)
        },
    },
    "defects": {
        "enabled": True,
        "cases": None,
        "tolerances": {  # see ancf_beam.studies.checks.defects_checks
            # largest static damage: elements away from the clamp-side integration point.
            # Exact: the bending strain is largest there; points saturated at d_max tie
            # exactly (d_max (1 - exp(-x)) rounds to d_max) and argmax takes the first
            "damage_peak_elements": 0.0,
            # beat detector on the synthetic two-tone control (BEAT_CONTROL of
            # ancf_beam.studies.presentation): beat period and modulation depth, relative.
            # A fixed input: the detector's error on it is deterministic (1.3e-5 and 1.7e-3;
            # machines differ by FFT round-off, ~1e-13), so these are the accuracy the control
            # demands of the detector (a detector ten times worse fails), not error bounds of
            # a computation; the record-length refinement does not estimate it (the depth
            # error is -1.7e-3, -1.8e-3, -1.9e-4 over 2, 4, 8 s: whole beat cycles in the
            # window decide it)
            "beat_period_rel": 1.0e-4,
            "beat_depth_rel": 2.0e-2,
        },
    },
    "identification": {
        "enabled": True,
        "case": None,
        "lam": [0.2, 0.45, 0.7],
        "n": [1.0, 1.5, 2.5],
        "draws": 3,
        "sigma_rel": 0.005,
        "n_modes": 3,
        "seed": 20240531,
        "truth_mesh": None,
        "forward_mesh": None,
        "controls": True,
        "tolerances": {  # see ancf_beam.studies.checks.identification_checks
            # noise-free estimates vs truth: this factor of safety times the first-order bias
            # of the forward model's discretisation error (std_p x |omega_model / omega_data
            # - 1| / sigma_rel; measured on the quick config err/tol below 0.5)
            "estimate_factor": 2.0,
            "coverage_alpha": 1.0e-3,  # binomial level of the coverage shortfall allowance
            "strongest_identifiable": 0.0,  # largest lam: share of draws allowed unidentifiable
            "control_identifiable": 0.0,  # negative controls: identifiable draws allowed
        },
    },
    "scaling": {
        "enabled": True,
        "case": None,
        "meshes": [2, 5, 10, 20, 40, 80, 160],
        "t_end": 2.0,
        "explicit_safety": None,
        "full_max_elements": 40,
        "window_wall_s": 1.5,
        "min_window_steps": 2000,
        "per_period": [50.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 800.0],
        "tip_error": 0.01,
        "calibration_mesh": None,
        "fit_min_elements": None,
        "tolerances": {  # see ancf_beam.studies.checks.scaling_checks
            # measured times against the cost model: rows of status INFO, shown with these
            # margins but not counted (the same code gave err/tol 1.018 and below 1 with the
            # machine's load)
            "explicit_exponent_rel": 0.25,  # explicit cost exponent at least (1 + p_dt)(1 - this)
            "implicit_exponent_rel": 0.3,  # implicit cost exponent at most 1 + this
            "projection_rel": 0.3,  # window projection vs measured full run
            "projection_min_s": 0.5,  # s; only full runs at least this long are compared
            # GA tip error above the target by at most this fraction: the target is the
            # requirement, the runs deterministic (a margin of round-off is 1e-10 of it)
            "tip_error_rel": 0.0,
        },
    },
    # mechanism studies (ancf_beam.studies.mechanisms). Every check is a bound with its source:
    # a comparison with a reference, or a balance that is zero for the exact solution, is
    # bounded by estimate_factor x (the run's error estimated from the run refined, Richardson
    # with the refinement's kappa, ancf_beam.mbs.analysis.refinement, + the reference's own
    # error) + the run's round-off (8 eps per step); the geometric bounds by kinematics (the
    # constraint violation's effect). estimate_factor covers the estimate's own uncertainty
    # (the refined run's error, a rate not yet asymptotic); measured error / bound on the
    # default config: 0.02-0.5 (docs/validation.md, "Mechanism checks").
    "mechanisms": {  # mechanism_validation: the checks of every mechanism case
        "tolerances": {
            "estimate_factor": 2.0,
        },
    },
    "clearance_sweep": {
        "enabled": True,
        "case": None,
        "clearances": [1.0e-4, 2.5e-4, 5.0e-4, 1.0e-3],
        "tolerances": {},  # the geometric bound: kinematics (no tolerance to choose)
    },
    "contact_laws": {
        "enabled": True,
        "case": None,
        "laws": ["hertz", "hunt-crossley", "lankarani-nikravesh", "flores"],
        "restitution": [0.3, 0.5, 0.7, 0.9],
        "K": 1.0e10,
        "exponent": 1.5,
        "tolerances": {
            "estimate_factor": 2.0,
        },
    },
    "flagship": {
        "enabled": True,
        "case": None,
        "lam": [0.0, 0.3, 0.6],
        "damage": {
            "enabled": True,
            "lam": 0.3,
            "threshold": 2.0e-3,
            "softening": 1.0e-3,
            "d_max": 0.5,
        },
        "tolerances": {
            "estimate_factor": 2.0,
        },
    },
}


# --------------------------------------------------------------------------------------------
# validation rules: dotted key -> (description of allowed values, predicate)
# --------------------------------------------------------------------------------------------
def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _positive(v: Any) -> bool:
    return _is_number(v) and v > 0


def _nonnegative(v: Any) -> bool:
    return _is_number(v) and v >= 0


def _lam(v: Any) -> bool:
    return _is_number(v) and 0 <= v < 1


def _int_at_least(k: int):
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= k


def _int_between(lo: int, hi: int):
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _one_of(options: Iterable[str]):
    opts = tuple(options)
    return lambda v: v in opts


def _positive_or_none(v: Any) -> bool:
    return v is None or _positive(v)


def _number_or_none(v: Any) -> bool:
    return v is None or _is_number(v)


def _table(v: Any) -> bool:
    """None, or [[x/L, factor], ...]: >= 2 rows, x/L strictly increasing from 0 to 1, factor > 0."""
    if v is None:
        return True
    if not isinstance(v, list | tuple) or len(v) < 2:
        return False
    rows = []
    for row in v:
        if not isinstance(row, list | tuple) or len(row) != 2:
            return False
        if not (_is_number(row[0]) and _positive(row[1])):
            return False
        rows.append((float(row[0]), float(row[1])))
    xs = [r[0] for r in rows]
    return xs[0] == 0.0 and xs[-1] == 1.0 and all(b > a for a, b in zip(xs, xs[1:], strict=False))


TABLE_DESC = "null or a list [[x/L, factor], ...] with x/L rising strictly from 0 to 1, factor > 0"


def _between(lo: float, hi: float):
    return lambda v: _is_number(v) and lo <= v <= hi


#: Plausibility bounds (inclusive) of the beam's sizes and material, SI. Outside them the model
#: leaves the range it was verified on (or round-off swamps it: a 1e-300 m beam gives NaN fields);
#: the JSON schema of the workflow carries the same minimum/maximum.
BOUNDS: dict[str, tuple[float, float]] = {
    "beam.length": (1e-3, 1e3),
    "beam.width": (1e-6, 10.0),
    "beam.height": (1e-6, 10.0),
    "material.E0": (1e3, 1e15),  # up to 5000 x steel: near-rigid limits
    "material.rho": (1.0, 1e5),
    "load.g": (0.0, 1e3),
}
#: Gauss points per element and term: 1 point makes the stiffness singular; 10 is exact far
#: beyond the cubic element's needs.
N_GAUSS_RANGE = (2, 10)
#: Largest mesh, segments and load steps accepted (a plausibility bound, not a solver limit).
MAX_ELEMENTS = 10_000
MAX_SEGMENTS = 100_000
#: Bound of ``|kappa0| * beam.length`` per imperfection profile: reference tip angles up to 2 rad
#: (uniform) and 1.5 rad (linear), the range over which the reference tip height grows with
#: kappa0, so a ``tip_offset`` maps onto exactly one kappa0 inside the same bound.
MAX_KAPPA0_L = {"uniform": 2.0, "linear": 3.0}


def _bounded(key: str, unit: str) -> tuple[str, Any]:
    lo, hi = BOUNDS[key]
    return (f"a number in [{lo:g}, {hi:g}] ({unit})", _between(lo, hi))


RULES: dict[str, tuple[str, Any]] = {
    "beam.length": _bounded("beam.length", "m"),
    "beam.width": _bounded("beam.width", "m"),
    "beam.height": _bounded("beam.height", "m"),
    "material.E0": _bounded("material.E0", "Pa"),
    "material.rho": _bounded("material.rho", "kg/m^3"),
    "defect.lam": ("a number in [0, 1)", _lam),
    "defect.n": ("a number > 0", _positive),
    "defect.table": (TABLE_DESC, _table),
    "defect.rho.table": (TABLE_DESC, _table),
    "defect.width.table": (TABLE_DESC, _table),
    "defect.height.table": (TABLE_DESC, _table),
    "defect.mapping": (f"one of {', '.join(MAPPINGS)}", _one_of(MAPPINGS)),
    "imperfection.kappa0": ("a number (1/m, initial curvature at the clamp)", _is_number),
    "imperfection.profile": ("one of uniform, linear", _one_of(("uniform", "linear"))),
    "imperfection.tip_offset": ("null or a number (m)", _number_or_none),
    "damage.enabled": ("true or false", lambda v: isinstance(v, bool)),
    "damage.threshold": ("a number > 0 (strain)", _positive),
    "damage.softening": ("a number > 0 (strain)", _positive),
    "damage.d_max": ("a number in [0, 1)", _lam),
    "defect.rho.lam": ("a number in [0, 1)", _lam),
    "defect.rho.n": ("a number > 0", _positive),
    "defect.width.lam": ("a number in [0, 1)", _lam),
    "defect.width.n": ("a number > 0", _positive),
    "defect.height.lam": ("a number in [0, 1)", _lam),
    "defect.height.n": ("a number > 0", _positive),
    "mesh.n_elements": (f"an integer in [1, {MAX_ELEMENTS}]", _int_between(1, MAX_ELEMENTS)),
    "mesh.n_gauss_axial": ("an integer in [2, 10]", _int_between(*N_GAUSS_RANGE)),
    "mesh.n_gauss_bending": ("an integer in [2, 10]", _int_between(*N_GAUSS_RANGE)),
    "mesh.strain": (f"one of {', '.join(STRAIN_MODELS)}", _one_of(STRAIN_MODELS)),
    "load.g": _bounded("load.g", "m/s^2"),
    "static.load_steps": ("an integer >= 1", _int_at_least(1)),
    "static.max_iterations": ("an integer >= 1", _int_at_least(1)),
    "static.rtol": ("a number in (0, 1e-2]", lambda v: _positive(v) and v <= 1e-2),
    "static.max_cutbacks": ("an integer >= 0", _int_at_least(0)),
    "modal.n_modes": ("an integer >= 1", _int_at_least(1)),
    "modal.about": (f"one of {', '.join(MODAL_STATES)}", _one_of(MODAL_STATES)),
    "stepped.segments": (f"an integer in [1, {MAX_SEGMENTS}]", _int_between(1, MAX_SEGMENTS)),
    "dynamics.t_end": ("a number > 0 (s)", _positive),
    "dynamics.dt": ("null or a number > 0 (s)", _positive_or_none),
    "dynamics.dt_safety": ("a number in (0, 1]", lambda v: _positive(v) and v <= 1),
    "dynamics.damping_alpha": ("a number >= 0 (1/s)", _nonnegative),
    "dynamics.damping_beta": ("a number >= 0 (s)", _nonnegative),
    "dynamics.sample_dt": ("a number > 0 (s)", _positive),
    "dynamics.snapshot_dt": ("a number > 0 (s)", _positive),
    "dynamics.energy_growth_limit": ("a number > 0", _positive),
    "dynamics.integrator": (f"one of {', '.join(INTEGRATORS)}", _one_of(INTEGRATORS)),
    "dynamics.newmark_beta": ("a number in (0, 0.5]", lambda v: _positive(v) and v <= 0.5),
    "dynamics.newmark_gamma": ("a number in [0.5, 1]", lambda v: _is_number(v) and 0.5 <= v <= 1),
    "dynamics.rho_inf": ("a number in [0, 1]", lambda v: _is_number(v) and 0 <= v <= 1),
}


# --------------------------------------------------------------------------------------------
# frozen specifications
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GradientSpec:
    """Parameters of one gradient law: power law ``lam``, ``n`` and the optional measured
    ``table`` ``((x/L, factor), ...)``. The law itself is
    :func:`ancf_beam.beam.defects.gradient_factor`."""

    lam: float
    n: float
    table: tuple[tuple[float, float], ...] | None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GradientSpec:
        table = d.get("table")
        if table is not None:
            table = tuple((float(a), float(b)) for a, b in table)
        return cls(float(d["lam"]), float(d["n"]), table)


@dataclass(frozen=True)
class BeamSpec:
    length: float  # m
    width: float  # m
    height: float  # m


@dataclass(frozen=True)
class MaterialSpec:
    E0: float  # Pa, modulus at the clamp
    rho: float  # kg/m^3, density at the clamp


@dataclass(frozen=True)
class DefectSpec:
    E: GradientSpec
    rho: GradientSpec
    width: GradientSpec
    height: GradientSpec
    mapping: str  # gauss | nodal | element


@dataclass(frozen=True)
class ImperfectionSpec:
    """Stress-free initially curved reference: curvature ``kappa0 * p(x)`` (1/m) with profile
    ``p = 1`` (uniform) or ``p = 1 - x/L`` (linear); ``tip_offset`` (m), when given, sets
    ``kappa0`` so that the reference tip lies that far from the x axis (positive up)."""

    kappa0: float
    profile: str
    tip_offset: float | None

    @property
    def active(self) -> bool:
        return self.kappa0 != 0.0 or bool(self.tip_offset)


@dataclass(frozen=True)
class DamageSpec:
    """Strain-driven irreversible damage per integration point (:mod:`ancf_beam.beam.damage`)."""

    enabled: bool
    threshold: float  # equivalent strain at which damage starts
    softening: float  # strain scale of the exponential growth
    d_max: float  # saturation value, < 1


@dataclass(frozen=True)
class MeshSpec:
    n_elements: int
    n_gauss_axial: int
    n_gauss_bending: int
    strain: str  # nonlinear | linear


@dataclass(frozen=True)
class LoadSpec:
    g: float  # m/s^2, gravity acts along -y


@dataclass(frozen=True)
class StaticSpec:
    load_steps: int
    max_iterations: int
    rtol: float
    max_cutbacks: int


@dataclass(frozen=True)
class ModalSpec:
    n_modes: int
    about: str  # reference | static


@dataclass(frozen=True)
class SteppedSpec:
    segments: int


@dataclass(frozen=True)
class DynamicsSpec:
    t_end: float  # s
    dt: float | None  # s
    dt_safety: float
    damping_alpha: float  # 1/s
    damping_beta: float  # s
    sample_dt: float  # s
    snapshot_dt: float  # s
    energy_growth_limit: float
    integrator: str
    newmark_beta: float
    newmark_gamma: float
    rho_inf: float


@dataclass(frozen=True)
class CaseSpec:
    """One fully resolved case: everything the library needs, plus its provenance."""

    name: str
    beam: BeamSpec
    material: MaterialSpec
    defect: DefectSpec
    mesh: MeshSpec
    load: LoadSpec
    static: StaticSpec
    modal: ModalSpec
    stepped: SteppedSpec
    dynamics: DynamicsSpec
    imperfection: ImperfectionSpec
    damage: DamageSpec
    resolved: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def config_hash(self) -> str:
        return config_hash(self.resolved)

    def flat(self) -> dict[str, Any]:
        """Resolved parameters as a flat ``{dotted.key: value}`` dict (None -> 'none')."""
        return flatten(self.resolved)

    def with_overrides(self, overrides: Mapping[str, Any]) -> CaseSpec:
        """A copy of this case with dotted-key overrides applied and validated."""
        merged = copy.deepcopy(dict(self.resolved))
        for key, value in overrides.items():
            _set_dotted(merged, key, value)
        return build_case(merged, self.name)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def config_hash(resolved: Mapping[str, Any]) -> str:
    """SHA-256 (first 16 hex digits) of the canonical JSON of a resolved configuration."""
    text = json.dumps(resolved, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _deep_merge(base: dict, over: Mapping, where: str) -> dict:
    for k, v in over.items():
        path = f"{where}.{k}" if where else str(k)
        if k not in base:
            raise ConfigError(_unknown_key_message(path, base))
        if isinstance(base[k], dict):
            if not isinstance(v, Mapping):
                raise ConfigError(f"config key '{path}' must be a mapping, got {v!r}")
            _deep_merge(base[k], v, path)
        else:
            base[k] = v
    return base


def _unknown_key_message(path: str, siblings: Mapping) -> str:
    if not siblings:
        return f"unknown config key '{path}' (this block takes no keys)"
    allowed = ", ".join(sorted(map(str, siblings)))
    return f"unknown config key '{path}' (allowed here: {allowed})"


def _set_dotted(d: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    node = d
    for i, p in enumerate(parts):
        path = ".".join(parts[: i + 1])
        if not isinstance(node, dict):
            parent = ".".join(parts[:i])
            raise ConfigError(
                f"unknown config key '{path}': '{parent}' is a value ({node!r}), not a block "
                "of keys"
            )
        if p not in node:
            raise ConfigError(_unknown_key_message(path, node))
        if i == len(parts) - 1:
            if isinstance(node[p], dict):
                raise ConfigError(f"config key '{path}' is a section; set one of its keys")
            node[p] = value
        else:
            node = node[p]


def _coerce(key: str, value: Any) -> Any:
    """Integers given where floats are expected are fine; floats with integral values for ints."""
    desc, _ = RULES[key]
    if desc.startswith("an integer") and isinstance(value, float) and value.is_integer():
        return int(value)
    if desc.startswith(("a number", "null or a number")) and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def validate(resolved: dict[str, Any]) -> dict[str, Any]:
    """Validate a fully merged configuration in place; raise :class:`ConfigError` on a bad value."""
    flat = flatten(resolved)
    for key, value in flat.items():
        if key not in RULES:
            raise ConfigError(f"unknown config key '{key}'")
        value = _coerce(key, value)
        desc, ok = RULES[key]
        if not ok(value):
            raise ConfigError(f"config key '{key}' = {value!r} is invalid: expected {desc}")
        _set_dotted(resolved, key, value)
    return resolved


# --------------------------------------------------------------------------------------------
# public entry points
# --------------------------------------------------------------------------------------------
def default_config_path() -> Path | None:
    """The repository's ``config/config.yaml`` when the package runs from a checkout, else None
    (the built-in :data:`DEFAULTS` then apply)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "config" / "config.yaml"
        if candidate.is_file() and (parent / "src" / "ancf_beam").is_dir():
            return candidate
    return None


#: Bounds of a configuration file (:func:`read_yaml`). The file size bounds the parse, whose
#: node graph costs about 0.5 kB per value while it is built (the 70,000-case configuration of
#: benchmarks/bench_config_load.py: 9.3 MB, 1.26 million values, 0.59 GB allocated at the peak
#: of its parse, 0.1 GB once built; a file of nothing but one-character values: about 4 GB at the
#: bound). The expanded size (values of the document once every alias is expanded: what
#: validation, hashing and Snakemake's schema check walk) and the nesting depth are counted on
#: the composed node graph, with memoisation, before any Python object is built, so an alias
#: bomb ("billion laughs") is refused in milliseconds instead of exhausting the memory later.
#: The node bound is three times the 70,000-case file.
MAX_CONFIG_BYTES = 16 * 2**20
MAX_CONFIG_NODES = 4_000_000
#: Deepest nesting accepted (the deepest key of a valid configuration,
#: mechanisms.NAME.rod.defect.rho.table[i][j], sits at depth 8; the object construction recurses
#: about three Python frames per level).
MAX_CONFIG_DEPTH = 64

#: libyaml (the C parser) when PyYAML was built with it, else the pure-Python one: same results.
_YAML_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
#: Numbers the YAML 1.1 resolver of PyYAML leaves as strings: an exponent without a dot or
#: without a sign (``1e-9``, ``2.07e11``, ``1E5``). YAML 1.2 reads them as floats, and so does
#: this loader (integers and dotted floats keep PyYAML's resolvers, which are tried first).
_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")


class StrictLoader(_YAML_BASE):
    """Safe YAML loader of configuration files: PyYAML's C parser (libyaml) when available,
    only the safe tags, numbers such as ``1e-9`` read as floats, a key given twice in one
    mapping refused with its line (plain YAML keeps the last one silently, so a repeated case
    block would replace the first without a word), and merge keys (``<<: *base``) allowed with
    explicit keys overriding the merged ones. Use it through :func:`read_yaml` or
    :func:`parse_yaml_text`, which also bound the size of the document."""

    def __init__(self, stream, name: str = "YAML text"):
        super().__init__(stream)
        self.source_name = name
        self._resolved: dict[tuple[str, bool, bool], str] = {}

    def resolve(self, kind, value, implicit):
        """PyYAML's tag resolution, memoised for plain scalars (a large configuration repeats
        the same keys and values; the regex scan per scalar dominated its load time)."""
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)
        key = (value, *implicit)
        tag = self._resolved.get(key)
        if tag is None:
            tag = self._resolved[key] = super().resolve(kind, value, implicit)
        return tag


StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+0123456789.")
)


def _construct_unique_mapping(loader: StrictLoader, node: yaml.MappingNode, deep=False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:  # merged keys may be overridden by explicit ones
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: the base constructor reports it
            continue
        if first is not None:
            raise ConfigError(
                f"{loader.source_name}: duplicate key {key!r} at line {line} "
                f"(first given at line {first}); each key may appear once per block"
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if node.__class__ is yaml.MappingNode:
        return [n for pair in node.value for n in pair]
    return node.value  # a sequence


def _check_expansion(root: yaml.Node, name: str) -> None:
    """Refuse a composed document whose expansion (every alias replaced by its target) has more
    than :data:`MAX_CONFIG_NODES` nodes or nests deeper than :data:`MAX_CONFIG_DEPTH`, or that
    holds a recursive alias. Each node is counted once (memoised by identity): linear in the
    size of the file, whatever the expansion."""
    scalar = yaml.ScalarNode
    if root.__class__ is scalar:
        return
    size: dict[int, int] = {}  # expanded size and height of every collection node counted
    height: dict[int, int] = {}
    open_: set[int] = set()  # collections whose subtree is being counted: a path from the root
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            total, tallest = 1, 0
            for kid in _children(node):
                if kid.__class__ is scalar:
                    total += 1
                    tallest = tallest or 1
                else:
                    total += size[id(kid)]
                    tallest = max(tallest, height[id(kid)])
            size[nid], height[nid] = total, tallest + 1
            open_.discard(nid)
            line = node.start_mark.line + 1
            if total > MAX_CONFIG_NODES:
                raise ConfigError(
                    f"{name}: the block at line {line} expands (with its aliases) to more than "
                    f"{MAX_CONFIG_NODES:,} values (at most {MAX_CONFIG_NODES:,} per file, "
                    "ancf_beam.config.MAX_CONFIG_NODES)"
                )
            if tallest + 1 > MAX_CONFIG_DEPTH:
                raise ConfigError(
                    f"{name}: the block at line {line} nests deeper than {MAX_CONFIG_DEPTH} "
                    "levels (ancf_beam.config.MAX_CONFIG_DEPTH)"
                )
            continue
        if nid in size:
            continue
        if nid in open_:
            raise ConfigError(
                f"{name}: the alias at line {node.start_mark.line + 1} refers to a block that "
                "contains it (a recursive alias)"
            )
        open_.add(nid)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if k.__class__ is not scalar)


def _yaml_error(name: str, exc: yaml.YAMLError, text: str) -> ConfigError:
    """A YAML error as one line naming the file, line and column (the parser's own marks name
    the text it was given, not the file)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    what = "; ".join(p for p in parts if p) or str(exc)
    if mark is not None and text[mark.index : mark.index + 1] == "\t":
        what += " (a tab: YAML indents with spaces)"
    return ConfigError(f"{name} is not valid YAML{where}: {what}")


def parse_yaml_text(text: str, name: str = "YAML text") -> Any:
    """Parse YAML text with :class:`StrictLoader`: a syntax error, an unsafe tag (``!!python``),
    a duplicate key, an alias bomb or a too deep nesting raise :class:`ConfigError` whose
    message starts with ``name`` (e.g. ``config file 'x.yaml'``) and gives the line."""
    loader = StrictLoader(text, name)
    # The parse allocates millions of objects at once and frees none: the cyclic garbage
    # collector, run every 700 allocations over an ever larger heap, took half of the time of a
    # 70,000-case file (19 s of CPU with it, 8.5 s without; benchmarks/bench_config_load.py).
    collecting = gc.isenabled()
    gc.disable()
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, name)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise _yaml_error(name, exc, text) from None
    finally:
        loader.dispose()
        if collecting:
            gc.enable()


def _not_a_regular_file(p: Path) -> str | None:
    """Why ``p`` cannot be a configuration file (None: it is a regular file)."""
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket", stat.S_ISCHR: "a device",
             stat.S_ISBLK: "a device"}  # fmt: skip
    kind = next((k for test, k in kinds.items() if test(mode)), "a special file")
    return f"is {kind}, not a regular file"


def read_yaml(path: str | Path) -> Any:
    """Parse a configuration file: a regular file of at most :data:`MAX_CONFIG_BYTES` bytes,
    UTF-8 text, read with :class:`StrictLoader` (:func:`parse_yaml_text`). Anything else raises
    :class:`ConfigError` naming the file (and the line)."""
    p = Path(path)
    why = _not_a_regular_file(p)
    if why is not None:
        raise ConfigError(f"config file '{p}' {why}")
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"config file '{p}' cannot be read: {exc.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"config file '{p}' is larger than {MAX_CONFIG_BYTES // 2**20} MiB "
            "(ancf_beam.config.MAX_CONFIG_BYTES)"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"config file '{p}' is not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line}, "
            f"column {column} ({exc.reason}); save it as UTF-8"
        ) from None
    return parse_yaml_text(text, f"config file '{p}'")


def check_names(config: Mapping[str, Any]) -> None:
    """The keys of ``cases`` and ``mechanisms`` are names (strings): a number given as a case
    name would pass the schema and fail later with a bare ``KeyError``."""
    for section in ("cases", "mechanisms"):
        block = config.get(section)
        if block is None:
            continue
        if not isinstance(block, Mapping):
            raise ConfigError(f"config key '{section}' must be a mapping of named blocks")
        for name in block:
            if not isinstance(name, str) or not name:
                raise ConfigError(
                    f"config key '{section}.{name}': the name {name!r} is a "
                    f"{type(name).__name__}; names must be non-empty strings (quote it: "
                    f"'\"{name}\"')"
                )


def load_config(path: str | Path | None = None) -> dict[str, Any]:
    """Read a configuration YAML file: duplicate keys, malformed YAML, unknown top-level keys
    and non-string case names are errors (values are validated by :func:`resolve_case`)."""
    p = Path(path) if path is not None else default_config_path()
    if p is None:
        return {}
    data = read_yaml(p) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file '{p}' must hold a mapping at the top level")
    for k in data:
        if k not in SECTIONS and k not in TOP_LEVEL_EXTRA:
            allowed = {**DEFAULTS, **dict.fromkeys(TOP_LEVEL_EXTRA, 0)}
            raise ConfigError(_unknown_key_message(str(k), allowed))
    check_names(data)
    return data


def parse_set(items: Iterable[str]) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` strings (VALUE is YAML, read like the config files: numbers,
    strings, null, lists)."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        key, raw = item.split("=", 1)
        key = key.strip()
        out[key] = parse_yaml_text(raw, f"--set {key}")  # the config files' reading of values
    return out


def resolve_case(
    config: Mapping[str, Any] | None = None,
    case: str | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> CaseSpec:
    """Merge built-in defaults <- config sections <- case block <- dotted overrides, validate.

    ``case=None`` selects the config's defaults (named ``"default"``).
    """
    config = dict(config or {})
    check_names(config)
    merged = copy.deepcopy(DEFAULTS)
    sections = {k: v for k, v in config.items() if k in SECTIONS}
    for k in config:
        if k not in SECTIONS and k not in TOP_LEVEL_EXTRA:
            allowed = {**DEFAULTS, **dict.fromkeys(TOP_LEVEL_EXTRA, 0)}
            raise ConfigError(_unknown_key_message(str(k), allowed))
    _deep_merge(merged, sections, "")
    name = "default"
    if case is not None:
        cases = config.get("cases") or {}
        if case not in cases:
            avail = ", ".join(cases) or "(none defined)"
            raise ConfigError(f"unknown case '{case}' (available cases: {avail})")
        block = cases[case] or {}
        if not isinstance(block, Mapping):
            raise ConfigError(f"case '{case}' must be a mapping of overrides")
        _deep_merge(merged, block, f"cases.{case}")
        name = case
    for key, value in (overrides or {}).items():
        _set_dotted(merged, key, value)
    return build_case(merged, name)


def build_case(merged: dict[str, Any], name: str) -> CaseSpec:
    resolved = validate(copy.deepcopy(merged))
    imp = resolved["imperfection"]
    if imp["tip_offset"] not in (None, 0, 0.0) and imp["kappa0"] != 0:
        raise ConfigError(
            "config keys 'imperfection.kappa0' and 'imperfection.tip_offset' are exclusive: "
            "set one of them (the other to 0 / null)"
        )
    _check_reference_shape(resolved)
    mesh = resolved["mesh"]
    if resolved["modal"]["n_modes"] > 4 * mesh["n_elements"]:
        raise ConfigError(
            f"config key 'modal.n_modes' = {resolved['modal']['n_modes']} is invalid: expected "
            f"an integer in [1, {4 * mesh['n_elements']}] (4 x mesh.n_elements, the free DOFs)"
        )
    if resolved["damage"]["enabled"] and mesh["n_gauss_axial"] != mesh["n_gauss_bending"]:
        raise ConfigError(
            "config key 'damage.enabled' = true needs mesh.n_gauss_axial == mesh.n_gauss_bending "
            f"(got {mesh['n_gauss_axial']} and {mesh['n_gauss_bending']}): damage lives at "
            "shared integration points"
        )
    d = resolved["defect"]
    defect = DefectSpec(
        E=GradientSpec.from_dict(d),
        rho=GradientSpec.from_dict(d["rho"]),
        width=GradientSpec.from_dict(d["width"]),
        height=GradientSpec.from_dict(d["height"]),
        mapping=d["mapping"],
    )
    dyn = dict(resolved["dynamics"])
    return CaseSpec(
        name=name,
        beam=BeamSpec(**{k: float(v) for k, v in resolved["beam"].items()}),
        material=MaterialSpec(**{k: float(v) for k, v in resolved["material"].items()}),
        defect=defect,
        mesh=MeshSpec(**resolved["mesh"]),
        load=LoadSpec(g=float(resolved["load"]["g"])),
        static=StaticSpec(**resolved["static"]),
        modal=ModalSpec(**resolved["modal"]),
        stepped=SteppedSpec(**resolved["stepped"]),
        dynamics=DynamicsSpec(**dyn),
        imperfection=ImperfectionSpec(**resolved["imperfection"]),
        damage=DamageSpec(**resolved["damage"]),
        resolved=resolved,
    )


def _check_reference_shape(resolved: Mapping[str, Any]) -> None:
    """Plausibility of the initially curved reference: ``|kappa0| L <=`` :data:`MAX_KAPPA0_L`,
    and a ``tip_offset`` that a kappa0 inside that bound reaches."""
    imp, length = resolved["imperfection"], float(resolved["beam"]["length"])
    kmax = MAX_KAPPA0_L[imp["profile"]] / length
    where = f"beam.length = {length:g} m, imperfection.profile = {imp['profile']}"
    if abs(imp["kappa0"]) > kmax:
        raise ConfigError(
            f"config key 'imperfection.kappa0' = {imp['kappa0']!r} is invalid: expected |kappa0| "
            f"<= {kmax:.6g} 1/m (|kappa0| L <= {MAX_KAPPA0_L[imp['profile']]:g} for {where})"
        )
    offset = imp["tip_offset"]
    if offset not in (None, 0, 0.0):
        n = 4000  # midpoint rule for the tip height of the reference curved to the bound
        s = (np.arange(n) + 0.5) / n * length
        th = kmax * (s if imp["profile"] == "uniform" else s - 0.5 * s**2 / length)
        reach = float(np.sum(np.sin(th)) * length / n)
        if not abs(offset) < reach:
            raise ConfigError(
                f"config key 'imperfection.tip_offset' = {offset!r} is invalid: expected "
                f"|tip_offset| < {reach:.6g} m (the tip height at |kappa0| L = "
                f"{MAX_KAPPA0_L[imp['profile']]:g} for {where})"
            )


def case_from_file(
    path: str | Path | None = None,
    case: str | None = None,
    sets: Iterable[str] = (),
) -> CaseSpec:
    """Convenience for the CLI: file + case name + ``KEY=VALUE`` strings -> CaseSpec."""
    return resolve_case(load_config(path), case, parse_set(sets))


def pipeline_settings(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The workflow's ``pipeline`` section merged over :data:`PIPELINE_DEFAULTS`.

    Unknown keys raise :class:`ConfigError` naming them (the JSON schema checks the ranges before
    any job runs). Numbers whose default is a float (or a list of floats) come back as floats."""
    merged = copy.deepcopy(PIPELINE_DEFAULTS)
    given = (config or {}).get("pipeline") or {}
    if not isinstance(given, Mapping):
        raise ConfigError(f"config key 'pipeline' must be a mapping, got {given!r}")
    _deep_merge(merged, given, "pipeline")
    _float_like_defaults(merged, PIPELINE_DEFAULTS)
    return merged


def _float_like_defaults(merged: dict, defaults: Mapping) -> None:
    for k, d in defaults.items():
        v = merged[k]
        if isinstance(d, Mapping):
            _float_like_defaults(v, d)
        elif isinstance(d, float) and isinstance(v, int | float) and not isinstance(v, bool):
            merged[k] = float(v)
        elif isinstance(d, list) and d and isinstance(d[0], float) and isinstance(v, list):
            merged[k] = [float(x) for x in v]


# ============================================================================================
# Mechanisms (planar multibody, ancf_beam.mbs): the `mechanisms:` section
# ============================================================================================
# One block per mechanism case, ``kind`` selecting its keys. Mechanism-level keys are checked
# against MECHANISM_RULES (dotted keys relative to the block); an ANCF beam inside a mechanism
# (the pendulum, a slider-crank's ``rod: {model: ancf}``) is a beam case: its sections
# (BEAM_CASE_SECTIONS) start from the built-in DEFAULTS, not from the config's top-level
# cantilever defaults, and are validated by build_case with RULES (gradients, imperfection and
# damage included). Gravity is the mechanism's ``g`` (the beam case's ``load.g`` follows it).
MECHANISM_KINDS = ("pendulum", "slider-crank", "two-body")
MECHANISM_INTEGRATORS = ("generalized-alpha", "newmark", "central-difference", "adaptive")
ROD_MODELS = ("rigid", "ancf")
IVP_METHODS = ("RK45", "DOP853", "Radau", "BDF", "LSODA")
BEAM_CASE_SECTIONS = ("beam", "material", "defect", "imperfection", "damage", "mesh")


def _beam_sections() -> dict[str, Any]:
    return {k: copy.deepcopy(DEFAULTS[k]) for k in BEAM_CASE_SECTIONS}


_MECHANISM_COMMON: dict[str, Any] = {
    "kind": None,
    "t_end": 1.0,
    "integrator": "generalized-alpha",
    "sample_dt": 1.0e-3,
    "g": 9.81,
    "baumgarte": {"alpha": 0.0, "beta": 0.0},
    "solver": {
        "dt": None,
        "rho_inf": 0.8,
        "newmark_beta": 0.25,
        "newmark_gamma": 0.5,
        "max_iter": 20,
        "tol": 1.0e-8,
        "max_halvings": 4,
        "newton": "modified",
        "projection": False,
        "method": "DOP853",
        "rtol": 1.0e-8,
        "atol": 1.0e-10,
        "step_control": False,
        "dt_contact": None,
        "contact_margin": 0.0,
        "onset_tol": 1.0e-8,
    },
}

#: Built-in defaults of every mechanism kind (slider-crank: the rigid benchmark, 5000 rpm).
MECHANISM_DEFAULTS: dict[str, dict[str, Any]] = {
    "pendulum": {**copy.deepcopy(_MECHANISM_COMMON), **_beam_sections()},
    "slider-crank": {
        **copy.deepcopy(_MECHANISM_COMMON),
        "t_end": 0.024,
        "sample_dt": 1.0e-5,
        "crank": {"length": 0.05, "mass": 0.30, "inertia": 1.0e-5},
        "rod": None,  # filled from ROD_DEFAULTS[rod.model]
        "slider": {"mass": 0.14, "inertia": 1.0e-5},
        "drive": {"omega": 5000.0 * 2.0 * math.pi / 60.0},
        "clearance": None,
    },
    # seed 003's example; the contact block is validated by ancf_beam.mbs.contact.ContactLaw
    "two-body": {
        **copy.deepcopy(_MECHANISM_COMMON),
        "t_end": 2.0e-3,
        "sample_dt": 1.0e-6,
        "g": 0.0,
        "integrator": "adaptive",
        "bodies": {"m1": 2.0, "m2": 3.0, "radius1": 0.01, "radius2": 0.01},
        "v_rel": 1.0,
        "gap": 0.0,
        "contact": {"law": "kelvin-voigt", "k": 1.0e7, "c": 200.0},
    },
}
ROD_DEFAULTS: dict[str, dict[str, Any]] = {
    "rigid": {"model": "rigid", "length": 0.12, "mass": 0.21, "inertia": 2.5e-4},
    "ancf": {"model": "ancf", **_beam_sections()},
}


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


#: Plausibility bounds (inclusive; SI) of the mechanism inputs: the range of real planar
#: mechanisms, so that the time scales they set (crank period, contact and beam frequencies)
#: keep a run within its step bound (ancf_beam.resources.MAX_MECHANISM_STEPS). A crank speed of
#: 1e300 rad/s ran for minutes with overflow warnings.
MECHANISM_BOUNDS: dict[str, tuple[float, float]] = {
    "g": (0.0, 1e3),  # as load.g
    "length": (1e-3, 1e2),  # m: crank, rigid rod
    "mass": (1e-6, 1e6),  # kg: links, slider, bodies
    "inertia": (1e-12, 1e6),  # kg m^2, centroidal
    "drive.omega": (-1e4, 1e4),  # rad/s: 95 000 rpm, above the fastest crank mechanisms
    "bodies.radius": (1e-4, 10.0),  # m
    "v_rel": (1e-6, 1e3),  # m/s: impacts of solids without shock physics
    "gap": (0.0, 10.0),  # m
}


def _mbound(kind: str, unit: str) -> tuple[str, Any]:
    lo, hi = MECHANISM_BOUNDS[kind]
    return (f"a number in [{lo:g}, {hi:g}] ({unit})", _between(lo, hi))


MECHANISM_RULES: dict[str, tuple[str, Any]] = {
    "kind": (f"one of {', '.join(MECHANISM_KINDS)}", _one_of(MECHANISM_KINDS)),
    "t_end": ("a number > 0 (s)", _positive),
    "integrator": (
        f"one of {', '.join(MECHANISM_INTEGRATORS)}",
        _one_of(MECHANISM_INTEGRATORS),
    ),  # fmt: skip
    "sample_dt": ("a number > 0 (s)", _positive),
    "g": _mbound("g", "m/s^2, along -y"),
    "baumgarte.alpha": ("a number >= 0 (1/s)", _nonnegative),
    "baumgarte.beta": ("a number >= 0 (1/s)", _nonnegative),
    "solver.dt": ("null or a number > 0 (s)", _positive_or_none),
    "solver.rho_inf": ("a number in [0, 1]", lambda v: _is_number(v) and 0 <= v <= 1),
    "solver.newmark_beta": ("a number in (0, 0.5]", lambda v: _positive(v) and v <= 0.5),
    "solver.newmark_gamma": ("a number in [0.5, 1]", lambda v: _is_number(v) and 0.5 <= v <= 1),
    "solver.max_iter": ("an integer >= 1", _int_at_least(1)),
    "solver.tol": ("a number in (0, 1e-2]", lambda v: _positive(v) and v <= 1e-2),
    "solver.max_halvings": ("an integer >= 0", _int_at_least(0)),
    "solver.newton": ("one of modified, full", _one_of(("modified", "full"))),
    "solver.projection": ("true or false", _bool),
    "solver.method": (f"one of {', '.join(IVP_METHODS)}", _one_of(IVP_METHODS)),
    "solver.rtol": ("a number in (0, 1e-2]", lambda v: _positive(v) and v <= 1e-2),
    "solver.atol": ("a number > 0", _positive),
    "solver.step_control": ("true or false", _bool),
    "solver.dt_contact": ("null or a number > 0 (s)", _positive_or_none),
    "solver.contact_margin": ("a number >= 0 (m)", _nonnegative),
    "solver.onset_tol": ("a number > 0 (m)", _positive),
    "crank.length": _mbound("length", "m"),
    "crank.mass": _mbound("mass", "kg"),
    "crank.inertia": _mbound("inertia", "kg m^2, about the centre of mass"),
    "rod.model": (f"one of {', '.join(ROD_MODELS)}", _one_of(ROD_MODELS)),
    "rod.length": ("a number in [0.001, 100] (m, above crank.length)",
                   _between(*MECHANISM_BOUNDS["length"])),  # fmt: skip
    "rod.mass": _mbound("mass", "kg"),
    "rod.inertia": _mbound("inertia", "kg m^2, about the centre of mass"),
    "slider.mass": _mbound("mass", "kg"),
    "slider.inertia": _mbound("inertia", "kg m^2"),
    "drive.omega": _mbound("drive.omega", "rad/s, constant crank speed"),
    "clearance": (
        "null or a mapping {joint, bearing_radius, journal_radius, E, nu, contact, friction}",
        lambda v: v is None or isinstance(v, Mapping),
    ),
    "bodies.m1": _mbound("mass", "kg"),
    "bodies.m2": _mbound("mass", "kg"),
    "bodies.radius1": _mbound("bodies.radius", "m"),
    "bodies.radius2": _mbound("bodies.radius", "m"),
    "v_rel": _mbound("v_rel", "m/s, approach speed"),
    "gap": _mbound("gap", "m, initial distance between the surfaces"),
}

#: joints of a slider-crank that may carry a clearance (ancf_beam.mbs.mechanisms)
CLEARANCE_JOINTS = ("crank_pin", "wrist_pin")
CLEARANCE_KEYS = ("joint", "bearing_radius", "journal_radius", "E", "nu", "contact", "friction",
                  "continuous_factor")  # fmt: skip


@dataclass(frozen=True)
class RigidLinkSpec:
    """Rigid link: length (m, between its two joints), mass (kg), centroidal inertia (kg m^2);
    the centre of mass is at mid-length."""

    length: float
    mass: float
    inertia: float


@dataclass(frozen=True)
class RigidPartSpec:
    mass: float  # kg
    inertia: float  # kg m^2


@dataclass(frozen=True)
class BaumgarteSpec:
    """Baumgarte stabilisation ``Phi'' + 2 alpha Phi' + beta^2 Phi = 0`` (1/s) of the index-1
    integrators (central-difference, adaptive)."""

    alpha: float = 0.0
    beta: float = 0.0


@dataclass(frozen=True)
class MechanismSolverSpec:
    dt: float | None = None  # s; null: ancf_beam.mbs.integrators.default_dt
    rho_inf: float = 0.8
    newmark_beta: float = 0.25
    newmark_gamma: float = 0.5
    max_iter: int = 20
    tol: float = 1e-8
    max_halvings: int = 4
    newton: str = "modified"
    projection: bool = False
    method: str = "DOP853"  # adaptive integrator
    rtol: float = 1e-8
    atol: float = 1e-10
    step_control: bool = False  # index-3: dt in free flight, dt_contact near and in contact
    dt_contact: float | None = None  # s; null: default_dt (0.05 x the contact bound)
    contact_margin: float = 0.0  # m; small steps once a gap is below it (or closes in a step)
    onset_tol: float = 1e-8  # m; largest penetration accepted at the end of an onset step


@dataclass(frozen=True)
class ClearanceSpec:
    """A revolute clearance joint (docs/design.md section 7): the journal (radius
    ``journal_radius``, m) of joint ``joint`` moves inside its bearing (``bearing_radius``, m);
    ``E`` (Pa), ``nu`` of both parts give the conformal Hertz stiffness when ``contact`` (an
    :class:`ancf_beam.mbs.contact.ContactLaw`) has no ``K``; ``friction`` an
    :class:`ancf_beam.mbs.contact.FrictionLaw`. ``continuous_factor``: a contact episode longer
    than this many free Hertz impact durations (at its onset speed) is continuous contact."""

    joint: str
    bearing_radius: float
    journal_radius: float
    E: float | None
    nu: float | None
    contact: Any
    friction: Any
    continuous_factor: float = 5.0

    @property
    def radial_clearance(self) -> float:
        """``c = R_b - R_j`` (m)."""
        return self.bearing_radius - self.journal_radius


@dataclass(frozen=True)
class MechanismSpec:
    """One resolved mechanism case. ``beam`` is the pendulum's beam case or the slider-crank's
    ANCF rod (None for a rigid rod, then ``rod`` holds it)."""

    name: str
    kind: str
    t_end: float
    integrator: str
    sample_dt: float
    g: float
    baumgarte: BaumgarteSpec
    solver: MechanismSolverSpec
    beam: CaseSpec | None = None
    crank: RigidLinkSpec | None = None
    rod: RigidLinkSpec | None = None
    slider: RigidPartSpec | None = None
    omega: float | None = None
    clearance: ClearanceSpec | None = None
    masses: tuple[float, float] | None = None  # two-body: m1, m2 (kg)
    radii: tuple[float, float] | None = None  # two-body: contact radii (m)
    v_rel: float | None = None  # two-body: approach speed (m/s)
    gap: float | None = None  # two-body: initial gap (m)
    contact: Any = None  # two-body: ancf_beam.mbs.contact.ContactLaw
    resolved: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def m_eff(self) -> float | None:
        """Effective mass ``m1 m2 / (m1 + m2)`` (kg) of the two-body impact."""
        if self.masses is None:
            return None
        m1, m2 = self.masses
        return m1 * m2 / (m1 + m2)

    @property
    def rod_model(self) -> str | None:
        if self.kind != "slider-crank":
            return None
        return "ancf" if self.beam is not None else "rigid"

    @property
    def config_hash(self) -> str:
        return config_hash(self.resolved)

    def flat(self) -> dict[str, Any]:
        """Resolved parameters as a flat ``{dotted.key: value}`` dict."""
        return flatten(self.resolved)

    def with_overrides(self, overrides: Mapping[str, Any]) -> MechanismSpec:
        """A copy with dotted-key overrides (relative to the block) applied and validated."""
        return resolve_mechanism({"mechanisms": {self.name: dict(self.resolved)}}, self.name,
                                 overrides)  # fmt: skip


def mechanism_names(config: Mapping[str, Any]) -> list[str]:
    return list(config.get("mechanisms") or {})


def _mechanism_key_error(name: str, key: str, value: Any, desc: str) -> ConfigError:
    return ConfigError(
        f"config key 'mechanisms.{name}.{key}' = {value!r} is invalid: expected {desc}"
    )


def _validate_mechanism(name: str, merged: dict[str, Any], skip: tuple[str, ...]) -> None:
    """Check every mechanism-level key of ``merged`` (sections in ``skip`` are beam cases; the
    ``clearance`` block is checked by :func:`_clearance_spec`)."""
    cl = merged.get("clearance")
    if not MECHANISM_RULES["clearance"][1](cl):
        raise _mechanism_key_error(name, "clearance", cl, MECHANISM_RULES["clearance"][0])
    skip = (*skip, "clearance")
    for key, value in flatten({k: v for k, v in merged.items() if k not in skip}).items():
        if key.startswith("rod.") and key.split(".")[1] in BEAM_CASE_SECTIONS:
            continue
        if key not in MECHANISM_RULES:
            raise ConfigError(f"unknown config key 'mechanisms.{name}.{key}'")
        desc, ok = MECHANISM_RULES[key]
        if desc.startswith("an integer") and isinstance(value, float) and value.is_integer():
            value = int(value)
        elif desc.startswith(("a number", "null or a number")) and isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        if not ok(value):
            raise _mechanism_key_error(name, key, value, desc)
        _set_dotted(merged, key, value)


def _clearance_spec(name: str, block: dict[str, Any]) -> ClearanceSpec:
    """Validate a slider-crank's ``clearance:`` block (coerced in place) into a
    :class:`ClearanceSpec`; errors name ``mechanisms.NAME.clearance.KEY``."""
    from ancf_beam.mbs.contact import ContactLaw, FrictionLaw, hertz_conformal_stiffness

    where = f"mechanisms.{name}.clearance"
    for key in block:
        if key not in CLEARANCE_KEYS:
            raise ConfigError(f"unknown config key '{where}.{key}' (allowed here: "
                              f"{', '.join(CLEARANCE_KEYS)})")  # fmt: skip

    def number(key, desc, ok, required=True, default=None):
        v = block.get(key, default)
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                pass
        if v is None and not required:
            return None
        if not (_is_number(v) and ok(v)):
            raise ConfigError(f"config key '{where}.{key}' = {v!r} is invalid: expected {desc}")
        block[key] = float(v)
        return float(v)

    joint = block.get("joint")
    if joint not in CLEARANCE_JOINTS:
        raise ConfigError(f"config key '{where}.joint' = {joint!r} is invalid: expected one of "
                          f"{', '.join(CLEARANCE_JOINTS)}")  # fmt: skip
    r_b = number("bearing_radius", "a number > 0 (m)", lambda v: v > 0)
    r_j = number("journal_radius", f"a number in (0, bearing_radius = {r_b}) (m)",
                 lambda v: 0 < v < r_b)  # fmt: skip
    contact = block.get("contact")
    if not isinstance(contact, Mapping):
        raise ConfigError(f"config key '{where}.contact' = {contact!r} is invalid: expected a "
                          "mapping {law, ...} (ancf_beam.mbs.contact.ContactLaw)")  # fmt: skip
    needs_k = contact.get("law") != "kelvin-voigt" and contact.get("K") is None
    e_mod = number("E", "a number > 0 (Pa, Young's modulus of bearing and journal)",
                   lambda v: v > 0, required=needs_k)  # fmt: skip
    nu = number("nu", "a number in [0, 0.5) (Poisson's ratio of bearing and journal)",
                lambda v: 0 <= v < 0.5, required=needs_k)  # fmt: skip
    factor = number("continuous_factor", "a number >= 1", lambda v: v >= 1, default=5.0)
    k_hertz = None
    if e_mod is not None and nu is not None:
        k_hertz = hertz_conformal_stiffness(e_mod, nu, e_mod, nu, r_b, r_j)
    law = ContactLaw.from_config(contact, f"{where}.contact", K_default=k_hertz)
    friction = FrictionLaw.from_config(block.get("friction"), f"{where}.friction")
    return ClearanceSpec(joint, r_b, r_j, e_mod, nu, law, friction, factor)


def _mechanism_beam_case(name: str, where: str, sections: Mapping[str, Any], g: float):
    """A beam case from the mechanism block's beam sections (over the built-in DEFAULTS)."""
    full = copy.deepcopy(DEFAULTS)
    try:
        _deep_merge(full, {k: sections[k] for k in BEAM_CASE_SECTIONS}, "")
        full["load"]["g"] = g
        return build_case(full, f"{name}{where}")
    except ConfigError as exc:
        prefix = f"mechanisms.{name}{where}"
        raise ConfigError(f"{prefix}: {exc}") from exc


def resolve_mechanism(
    config: Mapping[str, Any] | None,
    name: str,
    overrides: Mapping[str, Any] | None = None,
) -> MechanismSpec:
    """Mechanism ``name`` of ``config['mechanisms']``: kind defaults <- block <- dotted
    overrides (relative to the block, e.g. ``rod.mesh.n_elements``), validated."""
    mechs = (config or {}).get("mechanisms") or {}
    if not isinstance(mechs, Mapping):
        raise ConfigError("config key 'mechanisms' must be a mapping of named mechanisms")
    if name not in mechs:
        avail = ", ".join(mechs) or "(none defined)"
        raise ConfigError(f"unknown mechanism '{name}' (available mechanisms: {avail})")
    block = mechs[name] or {}
    if not isinstance(block, Mapping):
        raise ConfigError(f"mechanism '{name}' must be a mapping")
    overrides = dict(overrides or {})
    kind = overrides.get("kind", block.get("kind"))
    if kind not in MECHANISM_KINDS:
        raise _mechanism_key_error(name, "kind", kind, MECHANISM_RULES["kind"][0])
    merged = copy.deepcopy(MECHANISM_DEFAULTS[kind])
    if kind == "slider-crank":
        rod_block = block.get("rod") or {}
        if not isinstance(rod_block, Mapping):
            raise ConfigError(f"config key 'mechanisms.{name}.rod' must be a mapping")
        model = overrides.get("rod.model", rod_block.get("model", "rigid"))
        if model not in ROD_MODELS:
            raise _mechanism_key_error(name, "rod.model", model, MECHANISM_RULES["rod.model"][0])
        merged["rod"] = copy.deepcopy(ROD_DEFAULTS[model])
    if kind == "two-body":
        # the contact block replaces the default one as a whole (its keys depend on the law;
        # ContactLaw validates them); --set contact.KEY=VALUE adds or replaces one key, null
        # removes it (to switch laws: contact.law=hertz contact.K=1e9 contact.k=null ...)
        contact = block.get("contact", merged["contact"])
        merged["contact"] = dict(contact) if isinstance(contact, Mapping) else contact
        block = {k: v for k, v in block.items() if k != "contact"}
        for key in [k for k in overrides if k.startswith("contact.")]:
            if not isinstance(merged["contact"], dict):
                break
            value = overrides.pop(key)
            if value is None:
                merged["contact"].pop(key.split(".", 1)[1], None)
            else:
                merged["contact"][key.split(".", 1)[1]] = value
    _deep_merge(merged, block, f"mechanisms.{name}")
    if isinstance(merged.get("clearance"), Mapping):  # a copy: overrides must not edit the config
        merged["clearance"] = copy.deepcopy(dict(merged["clearance"]))
    if kind == "slider-crank":
        _set_clearance_overrides(name, merged, overrides)
    for key, value in overrides.items():
        try:
            _set_dotted(merged, key, value)
        except ConfigError as exc:
            raise ConfigError(f"mechanism '{name}': {exc}") from exc
    skip = BEAM_CASE_SECTIONS if kind == "pendulum" else ("contact",) if kind == "two-body" else ()
    _validate_mechanism(name, merged, skip)
    common = {
        "name": name,
        "kind": kind,
        "t_end": float(merged["t_end"]),
        "integrator": merged["integrator"],
        "sample_dt": float(merged["sample_dt"]),
        "g": float(merged["g"]),
        "baumgarte": BaumgarteSpec(**{k: float(v) for k, v in merged["baumgarte"].items()}),
        "solver": MechanismSolverSpec(**merged["solver"]),
    }
    if kind == "pendulum":
        beam = _mechanism_beam_case(name, "", merged, common["g"])
        resolved = {k: merged[k] for k in merged if k not in BEAM_CASE_SECTIONS}
        resolved.update({k: beam.resolved[k] for k in BEAM_CASE_SECTIONS})
        return MechanismSpec(**common, beam=beam, resolved=resolved)
    if kind == "two-body":
        return _two_body_spec(name, merged, common)
    crank = RigidLinkSpec(**{k: float(v) for k, v in merged["crank"].items()})
    rod = merged["rod"]
    beam = rigid = None
    if rod["model"] == "ancf":
        beam = _mechanism_beam_case(name, ".rod", rod, common["g"])
        chord = beam.beam.length
        merged["rod"] = {"model": "ancf", **{k: beam.resolved[k] for k in BEAM_CASE_SECTIONS}}
        rod_key = "rod.beam.length"
    else:
        rigid = RigidLinkSpec(**{k: float(v) for k, v in rod.items() if k != "model"})
        chord = rigid.length
        rod_key = "rod.length"
    if not chord > crank.length:
        raise _mechanism_key_error(
            name, rod_key, chord, f"a rod longer than the crank (crank.length = {crank.length} m)"
        )
    clearance = None
    if merged["clearance"] is not None:
        clearance = _clearance_spec(name, merged["clearance"])
    return MechanismSpec(
        **common,
        beam=beam,
        crank=crank,
        rod=rigid,
        slider=RigidPartSpec(**{k: float(v) for k, v in merged["slider"].items()}),
        omega=float(merged["drive"]["omega"]),
        clearance=clearance,
        resolved=merged,
    )


def _set_clearance_overrides(name: str, merged: dict[str, Any], overrides: dict) -> None:
    """Apply (and remove from ``overrides``) the ``clearance.KEY`` overrides of a slider-crank.
    The clearance block is checked as a whole by :func:`_clearance_spec` (unknown keys named
    there), so an override may set any of its keys, including the optional ones the config
    leaves out (``clearance.continuous_factor=3``), and nested ones
    (``clearance.contact.restitution=0.5``); null removes a key (its default applies)."""
    for key in [k for k in overrides if k.startswith("clearance.")]:
        value = overrides.pop(key)
        if merged.get("clearance") is None:
            merged["clearance"] = {}
        node = merged["clearance"]
        parts = key.split(".")
        for i, part in enumerate(parts[1:-1], start=1):
            sub = node.get(part)
            if sub is None:
                sub = node[part] = {}
            elif isinstance(sub, Mapping):
                sub = node[part] = dict(sub)
            else:
                raise ConfigError(
                    f"unknown config key 'mechanisms.{name}.{key}': "
                    f"'{'.'.join(parts[: i + 1])}' is a value ({sub!r}), not a block of keys"
                )
            node = sub
        if value is None:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value


def _two_body_spec(name: str, merged: dict[str, Any], common: dict[str, Any]) -> MechanismSpec:
    from ancf_beam.mbs.contact import ContactLaw  # numba: imported when a mechanism is read

    b = merged["bodies"]
    masses = (float(b["m1"]), float(b["m2"]))
    m_eff = masses[0] * masses[1] / (masses[0] + masses[1])
    contact = merged["contact"]
    if not isinstance(contact, Mapping):
        raise _mechanism_key_error(name, "contact", contact, "a contact law block")
    for key, value in contact.items():  # YAML 1.1 reads 1.0e7 as a string
        if key != "law" and isinstance(value, str):
            try:
                contact[key] = float(value)
            except ValueError:
                pass
    law = ContactLaw.from_config(contact, f"mechanisms.{name}.contact", m_eff=m_eff)
    return MechanismSpec(
        **common,
        masses=masses,
        radii=(float(b["radius1"]), float(b["radius2"])),
        v_rel=float(merged["v_rel"]),
        gap=float(merged["gap"]),
        contact=law,
        resolved=merged,
    )


def mechanism_from_file(
    path: str | Path | None, name: str, sets: Iterable[str] = ()
) -> MechanismSpec:
    """Convenience for the CLI: file + mechanism name + ``KEY=VALUE`` strings."""
    return resolve_mechanism(load_config(path), name, parse_set(sets))
