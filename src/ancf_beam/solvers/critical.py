"""Critical time step of the explicit central-difference scheme.

* ``dt_critical = 2 / omega_max``: largest generalized eigenvalue of ``(K_T, M)`` of the reduced
  system at the straight reference (undamped stability limit of central differences).
* ``dt_element_bound = 2 / max_e omega_max,e`` from each *unconstrained* element's own
  eigenproblem. By the element eigenvalue inequality ``omega_max <= max_e omega_max,e``, so this
  bound is conservative (``<= dt_critical``).
* ``dt_formula = l_e^2 / C * sqrt(rhoA / EI)``: the empirical bending-governed law, with ``C``
  fitted (least squares in log space, slope fixed at 2) to the bending part of ``dt_critical`` over
  a mesh sequence, using the most restrictive section along the beam (max ``EI / rhoA``).
* ``dt_measured``: stability limit found by bisection on ``dt`` over short undamped runs;
  ``omega_max_variation``: the relative change of the tangent's top frequency along the run at
  that limit (a large motion modulates it, and the limit moves by up to as much).
* ``governing_mode``: ``axial`` or ``bending``, from the mass-weighted share of the top mode's
  motion along the beam axis. Coarse meshes are governed by the axial (bar) mode
  (``dt ~ l_e``), fine meshes by bending (``dt ~ l_e^2``).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import scipy.linalg as sla

from ancf_beam.beam import kernels
from ancf_beam.beam.model import BeamModel
from ancf_beam.linalg import band_to_sparse, sym_band_to_sparse
from ancf_beam.results import CriticalDt, InstabilityError
from ancf_beam.solvers.dynamics import simulate
from ancf_beam.solvers.modal import axial_fraction, omega_max, top_eigenpair
from ancf_beam.solvers.settings import EXPLICIT_INTEGRATOR, DynamicsSettings

__all__ = [
    "FIT_MESHES",
    "bending_scale",
    "critical_dt",
    "element_omega_max",
    "fit_formula_C",
    "measure_dt_limit",
    "measured_limit_bound",
    "top_frequency_variation",
]

log = logging.getLogger(__name__)

FIT_MESHES = (20, 40, 80, 160)


def element_omega_max(model: BeamModel) -> float:
    """Largest eigenfrequency over the unconstrained single elements (rad/s)."""
    q = model.reference()
    out = 0.0
    s = model.s_mass
    ke = np.empty((8, 8))
    scratch = np.empty((3, 8))
    for el in range(model.n_el):
        e = np.ascontiguousarray(q[4 * el : 4 * el + 8])
        kernels.element_tangent(
            e,
            model.spa,
            model.spb,
            model.sppb,
            model.ea_w[el],
            model.ei_w[el],
            model.eps0[el],
            model.kap0[el],
            model.linear,
            ke,
            scratch,
        )
        mb = np.einsum("g,ga,gb->ab", model.rhoa_w[el], s, s)
        me = np.kron(mb, np.eye(2))
        w2 = sla.eigh(ke, me, eigvals_only=True, subset_by_index=(7, 7))[0]
        out = max(out, float(np.sqrt(max(w2, 0.0))))
    return out


def _split_omega_max(model: BeamModel) -> tuple[float, float]:
    """Largest frequency of the axial (x-DOF) and bending (y-DOF) subsystems at the reference."""
    k = band_to_sparse(model.tangent_band(model.reference()))
    m = sym_band_to_sparse(model.mass_free_lower_band)
    res = []
    for comp in (0, 1):
        idx = np.arange(comp, model.n_free, 2)  # x: r_x, r_x' ; y: r_y, r_y'
        w2, _ = top_eigenpair(k[idx][:, idx].tocsc(), m[idx][:, idx].tocsc())
        res.append(float(np.sqrt(w2)))
    return res[0], res[1]


def bending_scale(model: BeamModel) -> float:
    """``min_x sqrt(rhoA / EI)`` over the beam (s/m^2): the most restrictive section."""
    x = np.linspace(0.0, model.length, 401)
    p = model.profile
    return float(np.min(np.sqrt(p.rhoA(x) / p.EI(x))))


_C_CACHE: dict[tuple[str, tuple[int, ...]], float] = {}


def fit_formula_C(model: BeamModel, meshes=FIT_MESHES) -> float:
    """Fit ``C`` in ``dt = l_e^2 / C sqrt(rhoA/EI)`` to the bending-part dt over ``meshes``.

    ``C`` does not depend on the model's own mesh, so it is cached per case (its resolved
    configuration without ``mesh.n_elements``) and mesh list within a process."""
    key_case = model.case.with_overrides({"mesh.n_elements": 1})
    key = (key_case.config_hash, tuple(int(m) for m in meshes))
    if key in _C_CACHE:
        return _C_CACHE[key]
    vals = []
    for ne in meshes:
        mm = BeamModel(model.case.with_overrides({"mesh.n_elements": int(ne)}))
        _, wb = _split_omega_max(mm)
        dtb = 2.0 / wb
        vals.append(mm.le**2 * bending_scale(mm) / dtb)
    # slope fixed at 2 in log space: least squares on log C
    c = float(np.exp(np.mean(np.log(vals))))
    _C_CACHE[key] = c
    return c


#: Steps of each trial run and relative bracket width of :func:`measure_dt_limit`.
MEASURE_STEPS = 3000
MEASURE_REL_TOL = 2e-3


def measured_limit_bound(
    steps: int = MEASURE_STEPS, rel_tol: float = MEASURE_REL_TOL, omega_variation: float = 0.0
) -> float:
    """Bound of ``|dt_measured / dt_critical - 1|`` of :func:`measure_dt_limit`: the bisection's
    bracket ``rel_tol`` (it returns the stable end) plus the steps a run needs to show an
    instability plus the run's top-frequency modulation ``omega_variation``.

    Detection: at ``omega dt = 2 (1 + e)`` the central differences amplify the top mode by
    ``1 + 2 sqrt(2 e)`` per step; seeded at round-off (``eps`` of the motion) it reaches the
    energy guard within ``steps`` unless ``2 steps sqrt(2 e) < ln(1 / eps)``, so a run can look
    stable up to ``e = ln(1/eps)^2 / (8 steps^2)`` (1.8e-5 at 3000 steps).

    Modulation (:func:`top_frequency_variation`): ``2 / omega_max`` is the limit of the
    linearisation about the reference. Along a run of large motion the tangent's top
    frequency moves by the relative amount ``omega_variation``: a rise would lower the
    frozen-state limit by as much, and a modulation of that depth makes the top mode's slow
    envelope (``omega dt = 2 (1 - e)``: stiffness ``8 e / dt^2``, modulated by ``8 delta /
    dt^2``) a Mathieu oscillator: where ``e < delta`` the modulation is not small against the
    stiffness and the parametric instability is broad (beyond, its tongues narrow like
    ``delta / e``). Measured on the very soft ``large_E2.07e7`` (4 elements, ``delta`` 0.040
    along the run at the measured limit, 0.045 along one at 0.99 ``dt_critical``; the top
    frequency never exceeds the reference's): 3000-step runs unstable from 0.998
    ``dt_critical``, 20000-step runs unstable at 0.99 and 0.996 and stable at 0.95 and 0.98."""
    eps = float(np.finfo(float).eps)
    return rel_tol + math.log(1.0 / eps) ** 2 / (8.0 * steps**2) + float(omega_variation)


def _limit_run_settings(model: BeamModel, dt: float, steps: int, snapshots: int = 1):
    """Settings of one trial run of :func:`measure_dt_limit` (``snapshots`` snapshots after
    the start; the snapshots do not change the run)."""
    return DynamicsSettings.from_case(
        model.case,
        integrator=EXPLICIT_INTEGRATOR,
        t_end=steps * dt,
        dt=dt,
        damping=(0.0, 0.0),
        sample_dt=dt,
        snapshot_dt=steps * dt / snapshots,
        energy_growth_limit=0.5,
        force=True,
    )


def measure_dt_limit(
    model: BeamModel, dt_guess: float, steps: int = MEASURE_STEPS, rel_tol: float = MEASURE_REL_TOL
) -> float:
    """Largest stable dt found by bisection over short undamped runs from rest under gravity
    (within :func:`measured_limit_bound` of the true limit)."""

    def stable(dt: float) -> bool:
        try:
            simulate(
                model, _limit_run_settings(model, dt, steps), dt_critical=dt_guess, progress=False
            )
        except InstabilityError:
            return False
        return True

    # an off-centre bracket, so no bisection point falls on the prediction itself
    lo, hi = 0.55 * dt_guess, 1.6 * dt_guess
    if not stable(lo):
        raise RuntimeError(f"run at dt = {lo:.3e} s (0.55x the predicted limit) is unstable")
    if stable(hi):
        raise RuntimeError(f"run at dt = {hi:.3e} s (1.6x the predicted limit) stays stable")
    # terminates by construction: the bracket halves every pass (at most log2(1.05 / rel_tol)
    # passes; a rel_tol below round-off ends when the midpoint is an end of the bracket)
    while (hi - lo) > rel_tol * lo:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if stable(mid):
            lo = mid
        else:
            hi = mid
    return lo


#: States along the measured run at which :func:`top_frequency_variation` evaluates the tangent.
MODULATION_SNAPSHOTS = 100


def top_frequency_variation(
    model: BeamModel, dt: float, steps: int = MEASURE_STEPS, snapshots: int = MODULATION_SNAPSHOTS
) -> float:
    """Largest ``|omega_max(q(t)) / omega_max(q_ref) - 1|`` over ``snapshots`` states of the
    trial run of :func:`measure_dt_limit` at ``dt`` (the measured limit: a stable run): the
    modulation of the top frequency that :func:`measured_limit_bound` adds (0.040 for the
    ``large_E2.07e7`` case on 4 elements, tip angle -90 deg; 7.9e-4 for
    ``large_E2.07e8``, -63 deg; at most 3e-6 for the default cases of small deflection)."""
    w0, _ = omega_max(model)
    res = simulate(
        model,
        _limit_run_settings(model, dt, steps, snapshots),
        dt_critical=2.0 / w0,
        progress=False,
    )
    return max(abs(omega_max(model, q)[0] / w0 - 1.0) for q in res.q_snap)


def critical_dt(model: BeamModel, measure: bool = False, fit_meshes=FIT_MESHES) -> CriticalDt:
    """All critical-step estimates for one model (see module docstring)."""
    wmax, phi = omega_max(model)
    dtc = 2.0 / wmax
    frac = float(axial_fraction(model, phi[None, :], model.reference())[0])
    wa, wb = _split_omega_max(model)
    c = fit_formula_C(model, fit_meshes)
    dt_formula = model.le**2 / c * bending_scale(model)
    res = CriticalDt(
        omega_max=wmax,
        dt_critical=dtc,
        dt_element_bound=2.0 / element_omega_max(model),
        dt_formula=dt_formula,
        formula_C=c,
        governing_mode="axial" if frac > 0.5 else "bending",
        axial_fraction=frac,
        dt_bending=2.0 / wb,
        dt_axial=2.0 / wa,
    )
    if measure:
        res.dt_measured = measure_dt_limit(model, dtc)
        res.omega_max_variation = top_frequency_variation(model, res.dt_measured)
    return res
