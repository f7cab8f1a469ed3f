"""Validation study of one case: ANCF results against independent references (exact graded
quadrature, stepped transfer matrix, extensible elastica, closed forms, linear modal
superposition, energy balance), and the damage-aware dynamic checks of damaged cases.

Which references apply depends on the case (see :func:`run_validation`): the straight linear
references only to straight undamaged beams, the elastica to every undamaged beam (straight or
initially curved, any deflection), the small-deflection dynamic references (vibration about the
static state, linear modal superposition) only below
:data:`ancf_beam.studies.defects.LARGE_DEFLECTION`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.config import EXPLICIT_INTEGRATOR, PIPELINE_DEFAULTS
from ancf_beam.io import provenance_attrs
from ancf_beam.kernel_cache import run_clock
from ancf_beam.solvers.schemes import rayleigh_zeta, scheme_options
from ancf_beam.specs import CaseSpec
from ancf_beam.studies.bounds import (
    EPS,
    QUADRATURE_REL,
    Bound,
    central_difference_energy_bound,
    clamp_exponent,
    geometric_nonlinearity,
    log_ratio,
    modal_roundoff,
    profile_breaks,
    refinement_estimate,
    static_solution_error,
    stepped_exponents,
    stepped_richardson,
    stepped_roundoff,
    tip_gradients,
)
from ancf_beam.studies.checks import check, checks_dataset, extend_checks, run_label
from ancf_beam.studies.defects import (
    families,
    frozen_damage_model,
    large_deflection,
    reference_curvature,
    straight_elastic,
    uniform_counterpart,
)

__all__ = [
    "DAMAGE_TOLERANCES",
    "DEFAULT_TOLERANCES",
    "ELASTICA_TOL",
    "assert_dt_safety",
    "damage_dynamics_checks",
    "elastica_reference",
    "run_family_validation",
    "run_validation",
    "whole_period_mean",
]

#: Settings of the validation tolerances (see :func:`run_validation`), from the one home of
#: defaults, ``ancf_beam.config.PIPELINE_DEFAULTS['validation']``: ``estimate_factor``, the
#: factor of safety on every error estimate. The tolerances themselves are error bounds
#: computed for each check (:mod:`ancf_beam.studies.bounds`).
DEFAULT_TOLERANCES: dict[str, float] = dict(PIPELINE_DEFAULTS["validation"]["tolerances"])

#: Solver tolerance of the elastica reference (``solve_bvp``); its error is estimated from a
#: solve at ten times this tolerance.
ELASTICA_TOL = 1.0e-10
#: Relative accuracy of the stepped beam's frequency roots (``brentq``, ``xtol`` 1e-14 of the
#: bracket).
ROOT_REL = 1.0e-14


def whole_period_mean(
    t: np.ndarray, y: np.ndarray, period: float, start_fraction: float = 0.5
) -> tuple[float, int]:
    """Mean of ``y`` over the largest whole number of ``period`` s ending at ``t[-1]`` and lying
    in ``t >= start_fraction * t[-1]``. Returns ``(mean, n_periods)``; with less than one period
    available, the plain mean over that window and ``0``."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    t_end = t[-1]
    window = t_end - start_fraction * t_end
    n = int(window // period) if period > 0 else 0
    start = t_end - n * period if n >= 1 else start_fraction * t_end
    sel = t > start
    if sel.sum() < 1:
        return float(y[-1]), 0
    # trapezoidal mean from the (interpolated) window start (samples may be non-uniform)
    ts = np.concatenate([[start], t[sel]])
    ys = np.concatenate([[np.interp(start, t, y)], y[sel]])
    area = float(np.sum(0.5 * (ys[1:] + ys[:-1]) * np.diff(ts)))
    return area / float(ts[-1] - ts[0]), n


def assert_dt_safety(case: CaseSpec, attrs: Mapping[str, Any], rel: float = 1e-12) -> None:
    """The explicit run's ``dt`` is ``dynamics.dt_safety x dt_critical`` (the critical_dt ->
    simulate chain imposes it; an assertion, not a validation check). Raises ValueError. An
    implicit run's step comes from the first period (:mod:`ancf_beam.solvers.settings`), not
    from the critical step: nothing to assert."""
    if case.dynamics.dt is not None or _integrator(attrs) != EXPLICIT_INTEGRATOR:
        return
    ratio = float(attrs["dt"]) / float(attrs["dt_critical"])
    if not abs(ratio / case.dynamics.dt_safety - 1.0) <= rel:
        raise ValueError(
            f"case '{case.name}': the run's dt / dt_critical = {ratio!r} is not "
            f"dynamics.dt_safety = {case.dynamics.dt_safety!r}: dt was not derived from the "
            "critical step"
        )


def elastica_reference(case: CaseSpec, n_el: int, tol: float = ELASTICA_TOL) -> dict:
    """The extensible elastica of ``case`` (graded EI, EA, rhoA; initial curvature of an
    imperfect reference) on ``10 n_el + 1`` points, so that every ANCF node of an ``n_el``
    mesh is an output point, and the same rod without load (its reference tip); ``tol``: the
    solver tolerance."""
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.references.elastica import solve_elastica

    p = SectionProfile(case)
    L = case.beam.length
    k0 = reference_curvature(case)
    kw = {
        "n_nodes": 10 * n_el + 1,
        "kappa0": k0,
        "tol": tol,
        "clamp_exponent": clamp_exponent(case),
        "breaks": profile_breaks(case),
    }
    el = solve_elastica(L, p.EI, p.EA, p.rhoA, case.load.g, **kw)
    el0 = solve_elastica(L, p.EI, p.EA, p.rhoA, 0.0, **kw) if k0 is not None else None
    el["ref_tip_x"] = el0["tip_x"] if el0 else L
    el["ref_tip_y"] = el0["tip_y"] if el0 else 0.0
    el["ref_tip_angle_deg"] = el0["tip_angle_deg"] if el0 else 0.0
    el["node_x"] = el["x"][::10]
    el["node_y"] = el["y"][::10]
    return el


def _integrator(attrs: Mapping[str, Any]) -> str:
    """The integrator of a run (its ``integrator`` attribute; runs before it was recorded were
    explicit)."""
    return str(attrs.get("integrator", EXPLICIT_INTEGRATOR))


def _run_label(attrs: Mapping[str, Any]) -> str:
    """The run in the checks' names: ``explicit run``, ``generalized-alpha run``, ..."""
    return run_label(_integrator(attrs))


def run_validation(
    case: CaseSpec,
    static_ds: xr.Dataset,
    modal_ds: xr.Dataset,
    simulate_ds: xr.Dataset | None = None,
    tolerances: Mapping[str, float] | None = None,
    segments: int | None = None,
) -> xr.Dataset:
    """Validation checks of one case (a check Dataset with provenance attributes).

    ``static_ds`` and ``modal_ds`` are the outputs of :func:`ancf_beam.analyses.run_static` /
    :func:`~ancf_beam.analyses.run_modal` for ``case``, ``simulate_ds`` the explicit run.
    References (all independent of the ANCF code); every tolerance is the sum of the error
    bounds of the compared values (:mod:`ancf_beam.studies.bounds`; the terms are in each
    row's note), estimates multiplied by ``estimate_factor`` (:data:`DEFAULT_TOLERANCES`):

    * straight undamaged beams: the ANCF small-deflection model (``mesh.strain: linear``) tip
      deflection and tip slope vs the exact graded quadrature (ANCF error from the mesh four
      times finer, quadrature from two panel counts, Newton and round-off from the residual);
      the stepped transfer-matrix beam (segment boundaries on the table breakpoints),
      Richardson-extrapolated from ``segments`` and twice as many with its leading order
      (:func:`~ancf_beam.studies.bounds.stepped_exponents`: 2, or ``1 + n`` for a power law
      with ``n < 1``), vs the exact quadrature (its error from ``4 segments``) and its observed
      order between N and 2N vs that order (pre-asymptotic term from the order between 2N and
      4N); the ANCF bending frequencies vs the stepped frequencies extrapolated from 2N and 4N
      (ANCF error from the finer mesh, the reference's from N);
    * every undamaged beam (also an initially curved one, at any deflection): the nonlinear
      ANCF static tip displacement, tip rotation and shape (largest nodal distance) vs the
      extensible elastica with the same strain measures (ANCF error from the finer mesh,
      elastica error from a ten times looser solver tolerance). With large deflection the
      small-deflection (linear) model's errors against the elastica are *reported*
      (``numbers``, not checks);
    * with defects: the same beam with its defects removed, linear tip vs ``-q L^4 / 8 EI``
      (the cubic element is nodally exact there: Newton and round-off only) and ``omega_k``
      vs the closed forms;
    * explicit run: energy drift ``max |E - E0| / max T`` below the central differences' bound
      ``dt^2 / 8 Q_g^T M^-1 Q_g / max T`` of the linearised beam (large deflection or damping:
      the drift's estimate from a run at ``dt / 2``); below large deflection the mean tip over
      the whole first-mode periods of the second half vs the static tip plus the linear
      discrete-time prediction of the window's residual oscillation and, for straight beams,
      the tip history over the first period vs the linear modal superposition of the same mesh
      (all modes), both within the geometric nonlinearity estimated from the static tip
      (nonlinear vs linear). ``dt = dt_safety x dt_critical`` is asserted
      (:func:`assert_dt_safety`), not checked.
    """
    tol = dict(DEFAULT_TOLERANCES)
    tol.update(tolerances or {})
    fs = float(tol["estimate_factor"])
    segments = case.stepped.segments if segments is None else int(segments)
    t0 = run_clock()
    numbers: list[dict[str, Any]] = []
    shapes: dict[str, Any] = {}
    large = large_deflection(case)
    ref = _references(case, modal_ds, segments)
    rows = _static_modal_checks(case, static_ds, ref, fs, large, numbers, shapes)
    info: dict[str, float] = {}
    if simulate_ds is not None:
        assert_dt_safety(case, simulate_ds.attrs)
        if case.load.g > 0.0:  # released from rest without load, nothing moves
            straight = straight_elastic(case)
            rows.extend(_dynamics_checks(case, static_ds, simulate_ds, fs, large, straight, info))
    ds = _validation_dataset(case, rows, numbers, ref, tol, t0, large)
    ds.attrs.update(info)
    return ds.assign(shapes)


@dataclass(frozen=True)
class _References:
    """The references of a case's statics and modes: its section profile ``p``, the exact
    graded linear statics, the stepped transfer-matrix beam, the ANCF bending frequencies
    ``om`` and the stepped beam's ``om_tm`` with their error ``om_tm_err``."""

    p: Any
    exact: dict[str, Any]
    stepped: _SteppedReference
    om: np.ndarray
    om_tm: np.ndarray
    om_tm_err: np.ndarray


def _references(case, modal_ds, segments) -> _References:
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.references import transfer

    p = SectionProfile(case)
    exact = transfer.exact_graded_static(case.beam.length, p.EI, p.q)
    stepped = _SteppedReference(case, p, segments)
    om_all, frac = _ancf_frequencies(case, modal_ds)
    om = om_all[frac < 0.5]  # the bending modes (the stepped beam has no axial ones)
    om_tm, om_tm_err = stepped.frequencies(om.size)
    return _References(p, exact, stepped, om, om_tm, om_tm_err)


def _static_modal_checks(case, static_ds, ref, fs, large, numbers, shapes) -> list[dict]:
    """The static and modal checks that apply to ``case`` (see :func:`run_validation`); the
    elastica's shapes and reported numbers go into ``shapes`` / ``numbers``."""
    rows: list[dict[str, Any]] = []
    straight = straight_elastic(case)
    loaded = case.load.g > 0.0  # without load the static state is the reference: no checks
    if straight and loaded:
        quad = _quadrature_error(case.beam.length, ref.p, ref.exact)
        rows.extend(_linear_static_checks(case, ref.exact, quad, fs))
        rows.extend(_stepped_checks(case, ref.stepped, ref.exact, quad, fs))
    if straight:
        rows.extend(_frequency_checks(case, ref.om, ref.om_tm, ref.om_tm_err, ref.stepped, fs))
    # the elastica has the element's nonlinear strain measures; the small-deflection model
    # (mesh.strain: linear) is validated by the linear quadrature above
    if not case.damage.enabled and loaded and case.mesh.strain == "nonlinear":
        rows.extend(_elastica_part(case, static_ds, large, fs, numbers, shapes))
    if families(case):
        rows.extend(_uniform_checks(case, ref.om.size, fs, loaded))
    return rows


def _elastica_part(case, static_ds, large, fs, numbers, shapes) -> list[dict[str, Any]]:
    """Checks of the nonlinear static shape vs the extensible elastica; the shapes (and, with
    large deflection, the linear model's reported errors) go into ``shapes`` / ``numbers``."""
    n_el = int(static_ds.sizes["dof"]) // 4 - 1
    el = elastica_reference(case, n_el)
    el_loose = elastica_reference(case, n_el, tol=ELASTICA_TOL * 10.0)
    rows = _elastica_checks(case, static_ds, el, el_loose, large, fs)
    q = static_ds["q"].values
    shapes.update(
        elastica_X=("s_elastica", el["X"], {"units": "m"}),
        elastica_x=("s_elastica", el["x"], {"units": "m", "long_name": "extensible elastica"}),
        elastica_y=("s_elastica", el["y"], {"units": "m", "long_name": "extensible elastica"}),
        ancf_node_x=("node", q[0::4], {"units": "m", "long_name": "ANCF static, nodes"}),
        ancf_node_y=("node", q[1::4], {"units": "m", "long_name": "ANCF static, nodes"}),
    )
    if large:
        lin_numbers, lin_q = _linear_model_numbers(case, el)
        numbers.extend(lin_numbers)
        shapes.update(
            linear_node_x=("node", lin_q[0::4], {"units": "m", "long_name": "linear model"}),
            linear_node_y=("node", lin_q[1::4], {"units": "m", "long_name": "linear model"}),
        )
    return rows


def _quadrature_error(L, p, exact) -> dict[str, float]:
    """Error bound of the exact quadrature's tip deflection and slope: its stated accuracy
    (:data:`~ancf_beam.studies.bounds.QUADRATURE_REL`) or, if larger, the change from half
    the panels."""
    from ancf_beam.references import transfer

    coarse = transfer.exact_graded_static(L, p.EI, p.q, n_points=(len(exact["x"]) + 1) // 2)
    return {
        k: max(QUADRATURE_REL * abs(exact[k]), abs(exact[k] - coarse[k]))
        for k in ("tip_deflection", "tip_slope")
    }


class _SteppedReference:
    """The stepped transfer-matrix beam of a case on ``N``, ``2N`` and ``4N`` segments (nested,
    boundaries on every table breakpoint), with its error expansion's exponents
    (:func:`~ancf_beam.studies.bounds.stepped_exponents`)."""

    def __init__(self, case, p, segments):
        from ancf_beam.references import transfer

        self.case, self.p, self.L = case, p, case.beam.length
        breaks = profile_breaks(case)
        self.nodes = [transfer.segment_nodes(self.L, segments, breaks, 2**k) for k in range(4)]
        self.counts = [nd.size - 1 for nd in self.nodes]
        self.exponents = stepped_exponents(case)
        self.order = self.exponents[0]
        self._tips: np.ndarray | None = None

    @property
    def label(self) -> str:
        return f"N={self.counts[0]}, {self.counts[1]}"

    def tips(self) -> np.ndarray:
        from ancf_beam.references import transfer

        if self._tips is None:
            self._tips = np.array(
                [
                    transfer.stepped_static(self.L, self.p.EI, self.p.q, c, nodes=nd)[
                        "tip_deflection"
                    ]
                    for c, nd in zip(self.counts, self.nodes, strict=True)
                ]
            )
        return self._tips

    def frequencies(self, n_modes: int) -> tuple[np.ndarray, np.ndarray]:
        """The frequencies extrapolated from 2N and 4N (leading order) and their error bound
        ``|R(N, 2N) - R(2N, 4N)| + round-off`` (the residual after the extrapolation is of an
        order above 1, so the finer extrapolation errs by less than its change)."""
        from ancf_beam.references import transfer

        if n_modes < 1:
            return np.zeros(0), np.zeros(0)
        f = np.array(
            [
                transfer.stepped_frequencies(self.L, self.p.EI, self.p.rhoA, c, n_modes, nodes=nd)
                for c, nd in zip(self.counts[:3], self.nodes[:3], strict=True)
            ]
        )
        r = stepped_richardson(f, self.order)
        err = np.abs(r[0] - r[1]) + (stepped_roundoff(self.counts[2]) + ROOT_REL) * np.abs(r[1])
        return r[1], err


def _ancf_frequencies(case, modal_ds) -> tuple[np.ndarray, np.ndarray]:
    """The modal study's frequencies about the straight reference (recomputed when it was run
    about the static state) and their axial fractions."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis

    om = np.asarray(modal_ds["omega"].values, float)
    frac = (
        np.asarray(modal_ds["axial_fraction"].values, float)
        if "axial_fraction" in modal_ds
        else np.zeros(om.size)
    )
    if str(modal_ds.attrs.get("about", "reference")) != "reference":
        res = modal_analysis(BeamModel(case), n_modes=om.size, about="reference")
        om, frac = res.omega, res.axial_fraction
    return om, frac


def _bending_frequencies(case, n_modes: int) -> np.ndarray:
    """The lowest ``n_modes`` bending frequencies (axial fraction below 1/2) about the
    reference of ``case``."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis

    model = BeamModel(case)
    want = n_modes
    while True:
        res = modal_analysis(model, n_modes=min(want, model.n_free), about="reference")
        om = res.omega[res.axial_fraction < 0.5]
        if om.size >= n_modes or want >= model.n_free:
            return om[:n_modes]
        want = min(2 * want + 2, model.n_free)


def _frequency_checks(case, om, om_tm, om_tm_err, stepped, fs):
    """ANCF bending frequencies vs the stepped frequencies (Richardson 2N, 4N)."""
    n_el = case.mesh.n_elements
    om_2, om_4 = (
        _bending_frequencies(case.with_overrides({"mesh.n_elements": m * n_el}), om.size)
        for m in (2, 4)
    )
    rows = []
    label = f"N={stepped.counts[1]}, {stepped.counts[2]}"
    for k in range(om.size):
        b = Bound().add(
            f"{fs:g} x ANCF estimate ({n_el}, {2 * n_el}, {4 * n_el} el.)",
            fs * refinement_estimate(om[k], om_2[k], om_4[k]) / om_tm[k],
        )
        b.add("stepped reference |R(N, 2N) - R(2N, 4N)| + round-off", om_tm_err[k] / om_tm[k])
        b.add(
            f"Ritz round-off 32 eps n^2 ({n_el}, {4 * n_el} el.)",
            modal_roundoff(n_el) + modal_roundoff(4 * n_el),
        )
        rows.append(
            check(
                f"omega_{k + 1}: ANCF vs stepped TM (Richardson {label})",
                om_tm[k],
                om[k],
                b.total,
                note="rad/s; " + b.note(),
                case=case.name,
            )
        )
    return rows


def _linear_static(case, n_el=None):
    """Model and static solution of the small-deflection model of ``case`` (on ``n_el``): by
    the static solver on the case's own mesh; on another mesh (the refinement estimate's) by
    one solve with the tangent at the reference, the exact solution of this linear model. (The
    static solver's Newton tolerance does not grow with the displacement: the linear model of
    a very soft beam on 160 elements, displacements of metres, stalled at a residual of 1.4e-8 N
    against its tolerance 7.9e-9 N -- reported as a solver defect.)"""
    from types import SimpleNamespace

    from ancf_beam.beam.model import CLAMP, BeamModel
    from ancf_beam.solvers.static import solve_static

    over = {"mesh.strain": "linear"}
    if n_el is not None:
        over["mesh.n_elements"] = int(n_el)
    model = BeamModel(case.with_overrides(over))
    if n_el is None:
        return model, solve_static(model)
    ref = model.reference()
    q = model.full(ref[CLAMP:] + model.tangent_solve(ref, model.gravity_free))
    return model, SimpleNamespace(q=q, tip_x=float(q[-4]), tip_y=float(q[-3]))


def _linear_static_checks(case, exact, quad, fs):
    """ANCF small-deflection model vs the exact linear quadrature: tip deflection and slope
    (``y'/x'`` at the tip: the linear model's tangent is ``(1, w')``)."""
    n_el = case.mesh.n_elements
    model, lin = _linear_static(case)
    finer = [_linear_static(case, m * n_el)[1] for m in (2, 4)]
    grads = tip_gradients(model, lin.q)
    solver = static_solution_error(model, lin.q, [grads["tip_y"], grads["tip_slope"]])
    rows = []
    for what, key, vals, k, unit in (
        ("deflection", "tip_deflection", [r.tip_y for r in (lin, *finer)], 0, "m"),
        ("slope", "tip_slope", [r.q[-1] / r.q[-2] for r in (lin, *finer)], 1, "rad"),
    ):
        ref, val = exact[key], vals[0]
        b = Bound().add(
            f"{fs:g} x ANCF estimate ({n_el}, {2 * n_el}, {4 * n_el} el.)",
            fs * refinement_estimate(*vals) / abs(ref),
        )
        b.add("quadrature", quad[key] / abs(ref))
        b.add("Newton + round-off (adjoint)", solver[k] / abs(ref))
        rows.append(
            check(
                f"static tip {what}: ANCF linear vs exact quadrature",
                ref,
                val,
                b.total,
                note=f"{unit}; " + b.note(),
                case=case.name,
            )
        )
    return rows


def _elastica_checks(case, static_ds, el, el_loose, large, fs):
    """Nonlinear ANCF statics vs the extensible elastica: tip displacement (vector error
    relative to the elastica's tip displacement), tip rotation and the largest nodal
    distance (same normalisation)."""
    q = static_ds["q"].values
    n_el = q.size // 4 - 1
    m_an, m_el, est = _elastica_estimates(case, q, n_el, el, el_loose)
    scale = float(np.linalg.norm(m_el["u"]))
    what = "elastica (large deflection)" if large else "elastica"
    note = f"|u_tip| = {scale:.4g} m, tip angle {el['tip_angle_deg']:.4g} deg"
    rows = []
    for key, name, ref, val, norm, unit in (
        (
            "u",
            "tip displacement",
            0.0,
            float(np.linalg.norm(m_an["u"] - m_el["u"])) / scale,
            scale,
            "|r_ANCF - r_elastica| / |u_tip|",
        ),
        ("rot", "tip rotation", m_el["rot"], m_an["rot"], abs(m_el["rot"]), "deg"),
        (
            "shape",
            "shape",
            0.0,
            float(np.max(np.hypot(q[0::4] - el["node_x"], q[1::4] - el["node_y"]))) / scale,
            scale,
            "max nodal distance / |u_tip|",
        ),
    ):
        ancf, ela, solver = est[key]
        b = Bound().add(
            f"{fs:g} x ANCF estimate ({n_el}, {2 * n_el}, {4 * n_el} el.)", fs * ancf / norm
        )
        b.add(f"elastica |tol {ELASTICA_TOL:g} - {10 * ELASTICA_TOL:g}|", ela / norm)
        b.add("Newton + round-off (adjoint)", solver / norm)
        label = "nodes" if key == "shape" else ""
        rows.append(
            check(
                f"static {name}: ANCF {label + ' ' if label else ''}vs extensible {what}",
                ref,
                val,
                b.total,
                mode="rel" if key == "rot" else "abs",
                note=f"{unit}; {note}; " + b.note(),
                case=case.name,
            )
        )
    return rows


def _elastica_estimates(case, q, n_el, el, el_loose):
    """The ANCF and elastica measures (:func:`_static_measures`, :func:`_elastica_measures`)
    and, per compared quantity (``u``, ``rot``, ``shape``), the ANCF error estimated from the
    meshes twice and four times finer, the elastica's from its looser solve and the Newton
    and round-off error from the adjoint."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.static import solve_static

    model = BeamModel(case.with_overrides({"mesh.n_elements": n_el}))
    models = [BeamModel(case.with_overrides({"mesh.n_elements": m * n_el})) for m in (2, 4)]
    q2, q4 = (solve_static(m).q for m in models)
    m_an = _static_measures(model, q)
    m2, m4 = _static_measures(models[0], q2), _static_measures(models[1], q4)
    m_el, m_loose = _elastica_measures(el), _elastica_measures(el_loose)
    grads = tip_gradients(model, q)
    sx, sy, sa = static_solution_error(
        model, q, [grads["tip_x"], grads["tip_y"], grads["tip_angle"]]
    )
    # the finer meshes' nodes 0, 2, 4, ... and 0, 4, 8, ... are this mesh's nodes
    shape_est = float(
        np.max(
            refinement_estimate(
                0.0,
                np.hypot(q[0::4] - q2[0::8], q[1::4] - q2[1::8]),
                np.hypot(q[0::4] - q4[0::16], q[1::4] - q4[1::16]),
            )
        )
    )
    shape_el = float(
        np.max(np.hypot(el["node_x"] - el_loose["node_x"], el["node_y"] - el_loose["node_y"]))
    )
    est = {
        "u": (
            refinement_estimate(
                0.0, np.linalg.norm(m_an["u"] - m2["u"]), np.linalg.norm(m_an["u"] - m4["u"])
            ),
            float(np.linalg.norm(m_el["u"] - m_loose["u"])),
            math.hypot(sx, sy),
        ),
        "rot": (
            refinement_estimate(m_an["rot"], m2["rot"], m4["rot"]),
            abs(m_el["rot"] - m_loose["rot"]),
            math.degrees(sa),
        ),
        "shape": (shape_est, shape_el, math.hypot(sx, sy)),
    }
    return m_an, m_el, est


def _static_measures(model, q) -> dict[str, Any]:
    """Tip displacement from the reference (m, vector) and tip rotation (deg) of ``q``."""
    ref = model.reference()
    return {
        "u": np.array([q[-4] - ref[-4], q[-3] - ref[-3]]),
        "rot": math.degrees(math.atan2(q[-1], q[-2]) - math.atan2(ref[-1], ref[-2])),
    }


def _elastica_measures(el) -> dict[str, Any]:
    return {
        "u": np.array([el["tip_x"] - el["ref_tip_x"], el["tip_y"] - el["ref_tip_y"]]),
        "rot": el["tip_angle_deg"] - el["ref_tip_angle_deg"],
    }


def _linear_model_numbers(case, el):
    """What the small-deflection model gets wrong at large deflection (reported numbers), and
    its static coordinates."""
    L = case.beam.length
    _, lin = _linear_static(case)
    u_el = np.array([el["tip_x"] - L, el["tip_y"]])
    u_lin = np.array([lin.tip_x - L, lin.tip_y])
    err = float(np.linalg.norm(u_lin - u_el) / np.linalg.norm(u_el))
    return [
        _number(case, "elastica tip angle", el["tip_angle_deg"], "deg"),
        _number(case, "elastica tip deflection (downward)", -el["tip_y"], "m"),
        _number(case, "linear model tip deflection (downward)", -lin.tip_y, "m"),
        _number(
            case,
            "linear model: tip deflection / elastica - 1",
            lin.tip_y / el["tip_y"] - 1,
            "1",
            "small-deflection model, mesh.strain: linear",
        ),
        _number(
            case,
            "linear model: tip position error / |u_tip|",
            err,
            "1",
            "|r_lin - r_elastica| / |r_elastica - r_reference|",
        ),
    ], lin.q


def _number(case, name, value, unit, note=""):
    return {"case": case.name, "quantity": name, "value": float(value), "unit": unit, "note": note}


def _stepped_checks(case, stepped, exact, quad, fs):
    """The stepped transfer-matrix beam (midpoint properties) against the exact quadrature:
    its Richardson extrapolation from N and 2N segments (leading order ``p``), and its observed
    order between N and 2N (uniform sections: exact for any N, no order)."""
    name = case.name
    w_ex = exact["tip_deflection"]
    tips = stepped.tips()
    p = stepped.order
    r = stepped_richardson(tips, p)
    # residual after the extrapolation ~ (L/N)^q, q > 1: the extrapolations from N..8N are a
    # sequence converging at an order above 1 (refinement_estimate: max(2 |R0 - R1|,
    # 4/3 |R0 - R2|), robust to two residual terms of opposite signs, e.g. orders 3.15 and 4)
    b = Bound().add(
        f"{fs:g} x stepped estimate from R(N, 2N), R(2N, 4N), R(4N, 8N)",
        fs * refinement_estimate(*r[:3]) / abs(w_ex),
    )
    b.add("quadrature", quad["tip_deflection"] / abs(w_ex))
    b.add(
        f"transfer-matrix round-off 4 eps x {stepped.counts[1]}",
        stepped_roundoff(stepped.counts[1]),
    )
    rows = [
        check(
            f"static tip deflection: stepped TM (Richardson {stepped.label}) vs exact quadrature",
            w_ex,
            r[0],
            b.total,
            note=f"m; leading order {p:g}; " + b.note(),
            case=name,
        )
    ]
    order = _stepped_order_check(case, stepped, tips - w_ex, abs(w_ex), quad, fs)
    return rows + ([order] if order else [])


def _stepped_order_check(case, stepped, err, w_abs, quad, fs):
    """Observed order of the stepped beam between N and 2N segments.

    Its error expands in powers ``(L/N)^p`` (:func:`~ancf_beam.studies.bounds.
    stepped_exponents`): the regular 2, 4, ... and, for a power law ``x^a`` with ``a`` not an
    integer, ``1 + a, 2 + a, ...``. Terms of the same sign with exponents up to 2 give an
    observed order between the smallest exponent and 2 (which one dominates depends on their
    coefficients: a small ``lam`` of a law with ``n < 1`` leaves order 2 visible for any
    practical N); the terms above 2 make it deviate by an amount that shrinks geometrically
    with N, estimated from the orders between 2N, 4N and 8N (ratio of the deviations: the
    larger of the observed one, capped at 0.9, and the theoretical ``2^-(q - 2)``, ``q`` the
    smallest exponent above 2). Checked: the order between N and 2N lies in ``[p, 2]``
    widened by that estimate (with the factor of safety) and the round-off of the errors."""
    noise = np.array([stepped_roundoff(c) for c in stepped.counts]) * w_abs + quad["tip_deflection"]
    if not np.all(np.abs(err) > 10.0 * noise):  # uniform sections: no order to measure
        return None
    orders = [log_ratio(err[k], err[k + 1]) for k in range(err.size - 1)]
    p_lo = stepped.order
    p_hi = max(p_lo, 2.0)
    q_above = min(x for x in stepped.exponents if x > 2.0 + 1e-9)
    d01, d12 = orders[0] - orders[1], orders[1] - orders[2]
    rho_obs = abs(d12 / d01) if d01 != 0.0 else 0.0
    rho = max(2.0 ** (2.0 - q_above), min(rho_obs, 0.9))
    b = Bound().add(f"exponents up to 2: half of [{p_lo:.4g}, {p_hi:.4g}]", 0.5 * (p_hi - p_lo))
    b.add(
        f"{fs:g} x pre-asymptotic |p(N,2N) - p(2N,4N)| / (1 - {rho:.3g})",
        fs * abs(d01) / (1.0 - rho),
    )
    b.add(
        "round-off of the errors", (noise[0] / abs(err[0]) + noise[1] / abs(err[1])) / math.log(2.0)
    )
    return check(
        f"stepped TM observed order ({stepped.label})",
        0.5 * (p_lo + p_hi),
        orders[0],
        b.total,
        mode="abs",
        note=f"midpoint-property stepped beam: error terms O(1/N^p), p in "
        f"{', '.join(f'{x:.4g}' for x in stepped.exponents[:5])}, ...; orders "
        f"{', '.join(f'{x:.4f}' for x in orders)} (N to 8N); " + b.note(),
        case=case.name,
    )


def _uniform_checks(case, n_modes, fs, loaded=True):
    """The case with its defects removed against the closed forms (the same for every case
    of a beam: the validation report counts them once)."""
    from ancf_beam.beam.defects import SectionProfile
    from ancf_beam.references import transfer

    name = case.name
    L = case.beam.length
    n_el = case.mesh.n_elements
    uc = uniform_counterpart(case)
    pu = SectionProfile(uc)
    EI0, rhoA0 = float(pu.EI(0.0)), float(pu.rhoA(0.0))
    rows = []
    if loaded:
        w_u, _ = transfer.uniform_static_tip(rhoA0 * case.load.g, L, EI0)
        model, lin = _linear_static(uc)
        (solver,) = static_solution_error(model, lin.q, [tip_gradients(model, lin.q)["tip_y"]])
        # the cubic Hermite element is nodally exact for a uniform beam (Tong 1969): the
        # closed form's few operations and the solve's Newton and round-off bound are all
        b = (
            Bound()
            .add("closed form 8 eps", 8.0 * EPS)
            .add("Newton + round-off (adjoint)", solver / abs(w_u))
        )
        rows.append(
            check(
                "uniform counterpart: linear tip deflection vs -q L^4 / (8 EI)",
                w_u,
                lin.tip_y,
                b.total,
                note="m; defects removed; nodally exact element; " + b.note(),
                case=name,
            )
        )
    nmu = min(3, n_modes)
    if nmu < 1:
        return rows
    om_u = transfer.uniform_frequencies(L, EI0, rhoA0, nmu)
    om_anc = _bending_frequencies(uc, nmu)
    om_2, om_4 = (
        _bending_frequencies(uc.with_overrides({"mesh.n_elements": m * n_el}), nmu) for m in (2, 4)
    )
    for k in range(min(nmu, om_anc.size)):
        b = Bound().add(
            f"{fs:g} x ANCF estimate ({n_el}, {2 * n_el}, {4 * n_el} el.)",
            fs * refinement_estimate(om_anc[k], om_2[k], om_4[k]) / om_u[k],
        )
        b.add(
            f"Ritz round-off 32 eps n^2 ({n_el}, {4 * n_el} el.)",
            modal_roundoff(n_el) + modal_roundoff(4 * n_el),
        )
        b.add("closed form (beta L root) 16 eps", 16.0 * EPS)
        rows.append(
            check(
                f"uniform counterpart: omega_{k + 1} vs (beta_k L)^2 sqrt(EI / rhoA) / L^2",
                om_u[k],
                om_anc[k],
                b.total,
                note="rad/s; defects removed; " + b.note(),
                case=name,
            )
        )
    return rows


def _dynamics_checks(case, static_ds, simulate_ds, fs, large, straight, info):
    """The checks of the dynamic run, with any integrator and Rayleigh damping; ``info``
    receives the run mesh's ``omega_1`` about the static state (``omega_1_static``), the
    geometric-nonlinearity estimate relative to the static tip (``nonlinearity_rel``) and the
    static tip's nonlinear part (``static_nonlinearity_rel``): the per-case report's spectral
    and curvature bounds. The linear references are the run's own scheme, step and damping on
    the linear discrete model (:class:`_LinearRelease`). A BDF1 run has no energy row: at its
    steps it dissipates the vibration within a few periods (drift near 1, far from its
    asymptotic first order); the tip history checks its dissipation mode by mode. A
    large-deflection BDF1 run therefore has no dynamic check."""
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    name = case.name
    ne_sim = int(simulate_ds.sizes["node"]) - 1
    sim_case = (
        case if ne_sim == case.mesh.n_elements else case.with_overrides({"mesh.n_elements": ne_sim})
    )
    integrator = _integrator(simulate_ds.attrs)
    label = _run_label(simulate_ds.attrs)
    rows = []
    if integrator != "bdf1":
        rows.append(_energy_drift_check(sim_case, simulate_ds, fs, large, label))
    if large:  # no vibration about the static state, no linear superposition
        return rows
    if sim_case is case:
        tip_static = float(static_ds["tip_y"])
    else:
        tip_static = solve_static(BeamModel(sim_case)).tip_y
    nonlinear = geometric_nonlinearity(BeamModel(sim_case), tip_static)
    w1 = float(modal_analysis(BeamModel(sim_case), n_modes=1, about="static").omega[0])
    info.update(
        omega_1_static=w1,
        nonlinearity_rel=nonlinear / abs(tip_static),
        static_nonlinearity_rel=nonlinear / 8.0 / abs(tip_static),
    )
    t = simulate_ds["time"].values
    y = simulate_ds["tip_y"].values
    dt = float(simulate_ds.attrs["dt"])
    response = _LinearRelease(sim_case, dt, simulate_ds.attrs)
    half = _half_load_run(sim_case, simulate_ds.attrs)
    mean, nper = whole_period_mean(t, y, 2 * math.pi / w1)
    y_lin = response.discrete(t)
    mean_lin, _ = whole_period_mean(t, y_lin, 2 * math.pi / w1)
    residual = mean_lin - response.static_tip
    b = Bound().add(
        f"{fs:g} x geometric nonlinearity 8 |tip - tip_linear|", fs * nonlinear / abs(tip_static)
    )
    if half is not None:
        yh = half["tip_y"].values
        mean_h, _ = whole_period_mean(half["time"].values, yh, 2 * math.pi / w1)
        nl_half = 2.0 * abs((mean - y[0]) - 2.0 * (mean_h - yh[0]))
        b.add(
            f"{fs:g} x nonlinear part from half load 2 |m - 2 m_half| (beta K0 damping)",
            fs * nl_half / abs(tip_static),
        )
    steps = float(simulate_ds.attrs["t_end"]) / dt
    b.add("time-stepping round-off eps x steps", EPS * steps)
    response.add_newton(b, steps)
    rows.append(
        check(
            f"{label}: mean tip over whole periods (2nd half) vs static tip + linear residual "
            "oscillation",
            tip_static + residual,
            mean,
            b.total,
            note=f"m; {nper} periods of omega_1 = {w1:.4g} rad/s; residual oscillation of the "
            f"linear discrete run {residual:.3g} m; " + b.note(),
            case=name,
        )
    )
    if straight:
        rows.append(
            _first_period_check(sim_case, t, y, response, nonlinear, fs, steps, label, half)
        )
    return rows


def _energy_drift_check(sim_case, simulate_ds, fs, large, label="explicit run"):
    """Energy drift of the run (damping work counted) against the central differences' bound
    on the linearised beam (:func:`~ancf_beam.studies.bounds.central_difference_energy_bound`);
    with large deflection, damping or an implicit (second-order) integrator the linear bound
    does not apply, and the drift's estimate from a second run at ``dt / 2`` is used."""
    from ancf_beam.beam.model import BeamModel

    a = simulate_ds.attrs
    drift = float(a["energy_drift_rel"])
    t_max = float(simulate_ds["kinetic"].max())
    dt = float(a["dt"])
    energies = [
        simulate_ds[k].values
        for k in ("kinetic", "strain", "gravity", "damping_work")
        if k in simulate_ds
    ]
    scale = float(sum(np.max(np.abs(e)) for e in energies))
    b = Bound().add("energy sums 16 eps", 16.0 * EPS * scale / t_max)
    damped = sim_case.dynamics.damping_alpha > 0.0 or sim_case.dynamics.damping_beta > 0.0
    explicit = _integrator(a) == EXPLICIT_INTEGRATOR
    if large or damped or not explicit:
        half = _rerun(sim_case, a, 0.5 * dt)
        d_half = float(half["energy_drift_rel"])
        b.add(
            f"{fs:g} x estimate 4/3 |drift(dt) - drift(dt/2)| (second order; dt/2: {d_half:.3g})",
            fs * 4.0 / 3.0 * abs(drift - d_half),
        )
        why = "large deflection" if large else "damped run" if damped else "implicit run"
        if not explicit:
            b.add(
                "Newton: residual test newton_tol x steps (relative work per step)",
                float(a["newton_tol"]) * float(a["t_end"]) / dt,
            )
    else:
        bound = central_difference_energy_bound(BeamModel(sim_case), dt)
        b.add(f"{fs:g} x central differences dt^2/8 Q_g M^-1 Q_g / max T", fs * bound / t_max)
        why = "linearised beam"
    scheme = "central differences" if explicit else _integrator(a)
    return check(
        f"{label}: energy drift max|E - E0| / max T",
        0.0,
        drift,
        b.total,
        mode="abs",
        note=f"{scheme}; bound of the {why}; " + b.note(),
        case=sim_case.name,
    )


def _rerun(sim_case, attrs, dt, t_end=None, dataset=False):
    """The run of ``sim_case`` again at step ``dt`` (same integrator and ``dt_critical``): its
    summary, or its Dataset (``dataset``)."""
    from ancf_beam.analyses import run_simulate

    s, ds = run_simulate(
        sim_case,
        dt=dt,
        dt_critical=float(attrs["dt_critical"]),
        t_end=float(attrs["t_end"]) if t_end is None else t_end,
        progress=False,
    )
    return ds if dataset else s


class _LinearRelease:
    """Tip response of the linear discrete model released from rest under gravity (all modes):
    continuous in time and undamped, as the undamped central differences at step ``dt``
    produce it (mode ``k`` a discrete cosine of frequency ``2 / dt asin(w_k dt / 2)``), or as
    the run's scheme produces it (:meth:`discrete`: integrator and parameters from the run's
    ``attrs``, Rayleigh damping ``zeta_k = alpha / (2 w_k) + beta w_k / 2``)."""

    def __init__(self, sim_case, dt, attrs=None):
        from ancf_beam.identify import TipHistoryModel

        tm = TipHistoryModel(sim_case, min_participation=0.0)
        self.omega, self.c = tm.modal(sim_case.defect.E.lam, sim_case.defect.E.n)
        self.tip0 = tm.eigen.tip_y0
        self.static_tip = self.tip0 + float(np.sum(self.c))
        self.omega_dt = 2.0 / dt * np.arcsin(np.clip(0.5 * self.omega * dt, 0.0, 1.0))
        attrs = attrs or {}
        self.dt = dt
        self.integrator = _integrator(attrs)
        self.options = scheme_options(attrs)
        d = sim_case.dynamics
        self.zeta = rayleigh_zeta(self.omega, d.damping_alpha, d.damping_beta)
        self.cosines = self.integrator == EXPLICIT_INTEGRATOR and not np.any(self.zeta)
        self.newton_tol = float(attrs.get("newton_tol", 0.0))

    def tip(self, t, discrete=False):
        w = self.omega_dt if discrete else self.omega
        return self.tip0 + (1.0 - np.cos(np.outer(np.asarray(t, float), w))) @ self.c

    def discrete(self, t):
        """Tip history of the linear model under the run's scheme, step and damping, at the
        times ``t`` (whole steps; :func:`ancf_beam.studies.integrators.mode_history`)."""
        if self.cosines:
            return self.tip(t, discrete=True)
        from ancf_beam.studies.integrators import modes_history

        modes = modes_history(
            self.integrator, self.dt, t, self.omega, self.c, self.zeta, self.options
        )
        return self.static_tip + modes

    def add_newton(self, b: Bound, steps: float, scale: float = 1.0) -> None:
        """An implicit run's Newton error: each step's residual test admits ``newton_tol`` of
        the force scale, a displacement error of that order relative to the static deflection
        (``K_eff >= K``), added up over ``steps`` (the scheme is stable); ``scale`` converts
        to the quantity's normalisation."""
        if self.newton_tol > 0.0:
            b.add("Newton: newton_tol x steps", self.newton_tol * steps * scale)


def _half_load_run(sim_case, attrs):
    """With stiffness-proportional damping, the run repeated at half the load (same step):
    ``beta K0`` also damps the axial velocities of the beam's geometric shortening (it is not
    objective), a nonlinear effect the static estimate does not see; the linear part of the
    response halves, so ``2 |d - 2 d_half|`` estimates the nonlinear part of a deflection
    ``d``. None without it."""
    if sim_case.dynamics.damping_beta == 0.0:
        return None
    half_case = sim_case.with_overrides({"load.g": 0.5 * sim_case.load.g})
    return _rerun(half_case, attrs, float(attrs["dt"]), dataset=True)


def _first_period_check(
    sim_case, t, y, response, nonlinear, fs, steps, label="explicit run", half=None
):
    """Tip history over the first period of omega_1 vs the linear modal superposition of the
    same discrete model released from rest (all modes). Undamped central differences: against
    the continuous superposition, its effect on the linear model (exact: the discrete cosines)
    in the bound; otherwise against the run's scheme, step and damping on the linear model
    (:meth:`_LinearRelease.discrete`). Plus the geometric nonlinearity, and with
    stiffness-proportional damping the nonlinear part from the half-load run ``half``
    (:func:`_half_load_run`)."""
    sel = t <= 2 * math.pi / response.omega[0]
    disp = float(np.max(np.abs(y[sel] - y[0])))
    b = Bound()
    if half is not None:
        y_half = half["tip_y"].values[: int(sel.sum())]
        nl_half = 2.0 * float(np.max(np.abs((y[sel] - y[0]) - 2.0 * (y_half - y_half[0]))))
        b.add(f"{fs:g} x nonlinear part from half load 2 |d - 2 d_half|", fs * nl_half / disp)
    if response.cosines:
        y_lin = response.tip(t[sel])
        cd = float(np.max(np.abs(response.tip(t[sel], discrete=True) - y_lin))) / disp
        b.add("central differences on the linear model", cd)
        what = "linear modal superposition"
    else:
        y_lin = response.discrete(t[sel])
        what = f"the linear discrete model ({response.integrator}, same dt and damping)"
    b.add(f"{fs:g} x geometric nonlinearity 8 |tip - tip_linear|", fs * nonlinear / disp)
    b.add("time-stepping round-off eps x steps", EPS * steps)
    newton_steps = float(t[sel][-1]) / response.dt  # the Newton errors before the window's end
    response.add_newton(b, newton_steps, abs(response.static_tip - response.tip0) / disp)
    return check(
        f"{label}: tip history over the first period vs {what}",
        0.0,
        float(np.max(np.abs(y[sel] - y_lin))) / disp,
        b.total,
        mode="abs",
        note=f"max |y - y_lin| / max |y - y0|; {response.omega.size} modes, {int(sel.sum())} "
        "samples; " + b.note(),
        case=sim_case.name,
    )


def _validation_dataset(case, rows, numbers, ref, tol, t0, large):
    ds = checks_dataset(rows)
    wall = run_clock() - t0
    ds = ds.assign(
        exact_x=("x_exact", ref.exact["x"], {"units": "m"}),
        exact_w=(
            "x_exact",
            ref.exact["w"],
            {"units": "m", "long_name": "exact linear deflection"},
        ),
        exact_curvature=(
            "x_exact",
            -ref.exact["moment"] / ref.p.EI(ref.exact["x"]),
            {"units": "rad/m", "long_name": "exact linear curvature -M/EI"},
        ),
        stepped_omega=(
            "mode",
            ref.om_tm,
            {"units": "rad/s", "long_name": "stepped TM, Richardson 2N, 4N"},
        ),
        ancf_omega=("mode", ref.om, {"units": "rad/s", "long_name": "ANCF bending modes"}),
    )
    ds = ds.assign_coords(mode=np.arange(1, ref.om.size + 1))
    ds = ds.assign(numbers_dataset(numbers))
    ds.attrs.update(
        provenance_attrs(
            case,
            study="validation",
            segments=ref.stepped.counts[0],
            stepped_order=ref.stepped.order,
            n_checks=len(rows),
            n_pass=sum(r["status"] == "PASS" for r in rows),
            n_fail=sum(r["status"] == "FAIL" for r in rows),
            straight_elastic_references=straight_elastic(case),
            large_deflection=int(large),
            wall_s=wall,
            **{f"tolerance.{k}": v for k, v in tol.items()},
        )
    )
    return ds


def numbers_dataset(numbers) -> xr.Dataset:
    """Reported numbers (not checks) along dimension ``number``: ``number_case``,
    ``number_name``, ``number_value``, ``number_unit``, ``number_note``."""

    def col(k, dtype):
        return (
            np.array([r[k] for r in numbers], dtype=dtype) if numbers else np.array([], dtype=dtype)
        )

    return xr.Dataset(
        {
            "number_case": ("number", col("case", object)),
            "number_name": ("number", col("quantity", object)),
            "number_value": ("number", col("value", float)),
            "number_unit": ("number", col("unit", object)),
            "number_note": ("number", col("note", object)),
        }
    )


#: Tolerances of the damage-aware dynamic checks (see :func:`damage_dynamics_checks`): the same
#: factor of safety on the error estimates as every validation check.
DAMAGE_TOLERANCES: dict[str, float] = dict(DEFAULT_TOLERANCES)


def damage_dynamics_checks(
    case: CaseSpec,
    simulate_ds: xr.Dataset,
    tolerances: Mapping[str, float] | None = None,
    order_t_end: float | None = None,
    info: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Checks of the explicit run of a case with damage (rows of
    :func:`~ancf_beam.studies.checks.check`).

    The straight-beam checks of the explicit run do not carry over: the damage grows during the
    first swing, where the fibre strain overshoots the static one (about twice for a suddenly
    applied load), so the run ends with *more* damage than the static study and vibrates about
    a different equilibrium; and the staggered damage update (damage grown after each step)
    makes the energy balance first order in ``dt``. What applies, over the first
    ``order_t_end`` s of the run (default: all of it), with the run repeated at ``dt / 2`` and
    ``dt / 4``:

    * energy balance ``max|E - E0| / max T`` (released energy counted as dissipated) within
      its first-order estimate ``2 |drift(dt) - drift(dt/2)|`` (times ``estimate_factor``),
      and its observed order between ``dt`` and ``dt/2`` equal to 1 within the pre-asymptotic
      term estimated from the order between ``dt/2`` and ``dt/4`` (next term ``O(dt^2)``);
    * the tip's equilibrium over the whole periods of the second half (the mean, less the
      window mean of the fitted oscillation of the damaged beam's modes) equal to the static tip
      of the beam with the run's final damage frozen (:func:`frozen_damage_model`), within the
      geometric nonlinearity and the change of that equilibrium between the window's halves;
    * irreversibility: no integration point's damage decreases between snapshots (absolute
      0).

    ``dt = dynamics.dt_safety x dt_critical`` is asserted (:func:`assert_dt_safety`). ``info``
    (if given) receives the frozen beam's ``omega_1`` about its static state
    (``omega_1_static``) and its geometric-nonlinearity estimate (``nonlinearity_rel``).
    """
    tol = dict(DAMAGE_TOLERANCES)
    tol.update({k: v for k, v in (tolerances or {}).items() if k in DAMAGE_TOLERANCES})
    fs = float(tol["estimate_factor"])
    name = case.name
    a = simulate_ds.attrs
    assert_dt_safety(case, a)
    sim_case = case.with_overrides({"mesh.n_elements": int(simulate_ds.sizes["node"]) - 1})
    t_end = float(a["t_end"])
    window = t_end if order_t_end is None else min(float(order_t_end), t_end)
    drifts = [_window_drift(simulate_ds, window)]
    dt = float(a["dt"])
    for h in (0.5 * dt, 0.25 * dt):
        drifts.append(float(_rerun(sim_case, a, h, window)["energy_drift_rel"]))
    return [
        _damage_drift_check(name, simulate_ds, window, drifts, fs),
        _damage_drift_order_check(name, window, drifts, fs),
        _frozen_damage_mean_tip_check(sim_case, simulate_ds, fs, {} if info is None else info),
        _damage_irreversible_check(name, simulate_ds),
    ]


def _window_drift(simulate_ds, window) -> float:
    """``max|E - E0| / max T`` of the run over ``t <= window`` (the run's ``energy_drift_rel``
    when the window is the whole run)."""
    t = simulate_ds["time"].values
    sel = t <= window * (1.0 + 1e-12)
    if sel.all():
        return float(simulate_ds.attrs["energy_drift_rel"])
    e = simulate_ds["total_energy"].values[sel]
    return float(np.max(np.abs(e - e[0])) / np.max(simulate_ds["kinetic"].values[sel]))


def _damage_drift_check(name, simulate_ds, window, drifts, fs):
    energies = [
        simulate_ds[k].values
        for k in ("kinetic", "strain", "gravity", "damping_work")
        if k in simulate_ds
    ]
    scale = float(sum(np.max(np.abs(e)) for e in energies)) / float(simulate_ds["kinetic"].max())
    b = Bound().add(
        f"{fs:g} x first-order estimate 2 |drift(dt) - drift(dt/2)|",
        fs * 2.0 * abs(drifts[0] - drifts[1]),
    )
    b.add("energy sums 16 eps", 16.0 * EPS * scale)
    return check(
        f"{_run_label(simulate_ds.attrs)} with damage: energy drift max|E - E0| / max T "
        f"(first {window:g} s)",
        0.0,
        drifts[0],
        b.total,
        mode="abs",
        note=f"released energy counted as dissipated; staggered update: O(dt); drift "
        f"{drifts[1]:.3g} at dt/2; " + b.note(),
        case=name,
    )


def _damage_drift_order_check(name, window, drifts, fs):
    """Observed order of the damage energy drift under ``dt -> dt/2``, with the pre-asymptotic
    term from the order under ``dt/2 -> dt/4`` (the next term is ``O(dt^2)``: the deviation
    from 1 halves per halving of ``dt``)."""
    p01, p12 = log_ratio(drifts[0], drifts[1]), log_ratio(drifts[1], drifts[2])
    b = Bound().add(
        f"{fs:g} x pre-asymptotic |p(dt, dt/2) - p(dt/2, dt/4)| / (1 - 2^-1)",
        fs * 2.0 * abs(p01 - p12),
    )
    return check(
        f"damage energy drift: observed order under dt -> dt/2 (first {window:g} s)",
        1.0,
        p01,
        b.total,
        mode="abs",
        note=f"drift {drifts[0]:.3g}, {drifts[1]:.3g}, {drifts[2]:.3g} at dt, dt/2, dt/4; "
        + b.note(),
        case=name,
    )


def _frozen_damage_mean_tip_check(sim_case, simulate_ds, fs, info):
    """The equilibrium of the damaged run over whole periods of its second half vs the static
    tip of the beam with the final damage frozen.

    Over the window the run vibrates about that equilibrium in the frozen beam's modes; their
    residual over the window (not whole periods of the higher modes) is removed by a least-
    squares fit of those modes (central-difference frequencies) and a constant to the tip: the
    constant is the equilibrium. Bound: the geometric nonlinearity (the frozen beam's static
    tip, nonlinear vs linear, at twice the displacement) and the change of the fitted
    equilibrium between the two halves of the window (damage still growing, frequencies
    shifted by the large deflection of the damaged beam), with the factor of safety."""
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static

    d_final = np.asarray(simulate_ds["damage"].values[-1], float)
    frozen = frozen_damage_model(sim_case, d_final)
    tip_frozen = solve_static(frozen).tip_y
    nonlinear = geometric_nonlinearity(frozen, tip_frozen)
    res = modal_analysis(frozen, n_modes=min(6, frozen.n_free), about="static")
    omega = res.omega[res.axial_fraction < 0.5]
    info.update(omega_1_static=float(omega[0]), nonlinearity_rel=nonlinear / abs(tip_frozen))
    dt = float(simulate_ds.attrs["dt"])
    omega_dt = 2.0 / dt * np.arcsin(np.clip(0.5 * omega * dt, 0.0, 1.0))
    t = simulate_ds["time"].values
    y = simulate_ds["tip_y"].values
    mean, nper = whole_period_mean(t, y, 2 * math.pi / omega[0])
    start = t[-1] - nper * 2 * math.pi / omega[0] if nper else 0.5 * t[-1]
    sel = t >= start
    c0 = _fitted_equilibrium(t[sel], y[sel], omega_dt)
    half = t[sel][0] + 0.5 * (t[sel][-1] - t[sel][0])
    c_a = _fitted_equilibrium(t[sel & (t <= half)], y[sel & (t <= half)], omega_dt)
    c_b = _fitted_equilibrium(t[sel & (t >= half)], y[sel & (t >= half)], omega_dt)
    b = Bound().add(
        f"{fs:g} x geometric nonlinearity 8 |tip - tip_linear|", fs * nonlinear / abs(tip_frozen)
    )
    b.add(f"{fs:g} x change between the window's halves", fs * abs(c_a - c_b) / abs(tip_frozen))
    b.add("least squares + round-off 64 eps", 64.0 * EPS)
    return check(
        f"{_run_label(simulate_ds.attrs)} with damage: equilibrium over whole periods (2nd "
        "half) vs static tip with the final damage frozen",
        tip_frozen,
        c0,
        b.total,
        note=f"m; {nper} periods of the damaged omega_1 = {omega[0]:.4g} rad/s; plain mean "
        f"{mean:.6g} m; {omega.size} modes fitted; " + b.note(),
        case=sim_case.name,
    )


def _fitted_equilibrium(t, y, omega) -> float:
    """Constant of the least-squares fit ``y ~ c + sum_k a_k cos(w_k t) + b_k sin(w_k t)``
    (only the frequencies with at least a quarter period in the record)."""
    span = float(t[-1] - t[0])
    w = np.asarray(omega)[np.asarray(omega) * span >= 0.5 * math.pi]
    tt = t - t[0]
    cols = [np.ones_like(tt)] + [f(wk * tt) for wk in w for f in (np.cos, np.sin)]
    a = np.column_stack(cols)
    scale = float(np.max(np.abs(y)))
    coef, *_ = np.linalg.lstsq(a, y / scale, rcond=None)
    return float(coef[0]) * scale


def _damage_irreversible_check(name, simulate_ds):
    dmg = np.asarray(simulate_ds["damage"].values, float)
    decrease = float(np.max(dmg[:-1] - dmg[1:])) if dmg.shape[0] > 1 else 0.0
    return check(
        "damage irreversible: largest decrease between snapshots",
        0.0,
        max(decrease, 0.0),
        0.0,
        mode="abs",
        note=f"max damage {dmg.max():.3g}",
        case=name,
    )


def run_family_validation(
    case: CaseSpec,
    static_ds: xr.Dataset,
    modal_ds: xr.Dataset,
    simulate_ds: xr.Dataset | None = None,
    tolerances: Mapping[str, float] | None = None,
    segments: int | None = None,
) -> xr.Dataset:
    """:func:`run_validation`, with the dynamic checks of a damaged case
    replaced by :func:`damage_dynamics_checks` (attribute ``dynamics_checks``: ``'elastic'`` or
    ``'damage'``). Cases without damage get exactly ``run_validation``'s table."""

    if not case.damage.enabled or simulate_ds is None:
        ds = run_validation(case, static_ds, modal_ds, simulate_ds, tolerances, segments)
        ds.attrs["dynamics_checks"] = "elastic"
        return ds
    t0 = run_clock()
    ds = run_validation(case, static_ds, modal_ds, None, tolerances, segments)
    info: dict[str, float] = {}
    rows = damage_dynamics_checks(case, simulate_ds, tolerances, info=info)
    wall = float(ds.attrs.get("wall_s", 0.0)) + run_clock() - t0
    return extend_checks(ds, rows, dynamics_checks="damage", wall_s=wall, **info)
