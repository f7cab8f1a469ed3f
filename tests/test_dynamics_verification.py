"""Quantitative checks of dynamics not covered elsewhere, each against an independent reference:
large-rotation motion of a soft beam against a fine-step run of a different integrator,
Rayleigh damping against the modal damping ratios, the defect mappings in modal analysis and
dynamics, density/height gradients and a curved reference in dynamics, and the damage law.

Every tolerance is a bound with its source (stated at each assertion): an error estimate from
a second run at a finer step or mesh (times FS), the linear discrete model's exact behaviour
under the scheme (its prediction of an estimator's error), the geometric nonlinearity, or
round-off."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ancf_beam.beam.damage import DamageState, half_heights
from ancf_beam.beam.defects import SectionProfile
from ancf_beam.beam.kernels import shape_tables
from ancf_beam.beam.model import BeamModel
from ancf_beam.references import transfer
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.implicit import simulate_implicit
from ancf_beam.solvers.modal import modal_analysis, omega_max
from ancf_beam.solvers.static import solve_static
from ancf_beam.studies.bounds import EPS, geometric_nonlinearity, refinement_estimate
from ancf_beam.studies.integrators import amplification_matrix
from ancf_beam.studies.validation import whole_period_mean
from conftest import FS, L, case_with, linear_tip, make_model


def _tip_error(run, ref, scale):
    """Largest distance between the tips of ``run`` and ``ref`` (interpolated at the run's
    samples, within the common time span) over ``scale``."""
    s = run.t <= ref.t[-1]
    rx = np.interp(run.t[s], ref.t, ref.tip_x)
    ry = np.interp(run.t[s], ref.t, ref.tip_y)
    return float(np.hypot(run.tip_x[s] - rx, run.tip_y[s] - ry).max()) / scale


def test_large_rotation_explicit_matches_fine_step_newmark():
    """Soft beam (E0 = 2.07e8 Pa, 8 elements) released under gravity: in 1 s the tip swings
    past the vertical (-97 deg). Explicit central differences at 0.8 dt_cr against Newmark
    (average acceleration, Newton) at dt/8 sampled every step. Measured: tip error 2.7e-6 of
    the largest tip displacement (1.37 m) at dt, 7.0e-7 at dt/2 (ratio 3.89: second order);
    the reference's own error (dt/8 vs dt/16) 8.1e-8. Bound: the explicit run's error
    estimate from the run at dt/2 (second order: 4/3 of their difference) plus the
    reference's from the Newmark run at dt/16, times FS; and the observed order between dt
    and dt/2 within 2 +- FS x twice its change to dt/4 (the next term one order higher)."""
    m = make_model(**{"material.E0": 2.07e8, "mesh.n_elements": 8})
    dtc = 2.0 / omega_max(m)[0]
    dt = 0.8 * dtc
    ref = simulate_implicit(m, 1.0, dt / 8, "newmark", sample_dt=dt / 8, progress=False)
    scale = float(np.hypot(ref.tip_x - L, ref.tip_y).max())
    assert np.degrees(np.arctan2(ref.tip_y, ref.tip_x)).min() < -90.0  # large rotation
    runs = [
        simulate_explicit(m, 1.0, dt / k, dtc, sample_dt=2e-3, progress=False) for k in (1, 2, 4)
    ]
    e1, e2, e3 = (_tip_error(r, ref, scale) for r in runs)
    ref2 = simulate_implicit(m, 1.0, dt / 16, "newmark", sample_dt=dt / 8, progress=False)
    est_run = 4 / 3 * _tip_error(runs[0], runs[1], scale)
    est_ref = 4 / 3 * _tip_error(ref2, ref, scale)
    assert e1 <= FS * (est_run + est_ref), (e1, est_run, est_ref)
    p12, p23 = math.log2(e1 / e2), math.log2(e2 / e3)
    assert abs(p12 - 2.0) <= FS * 2 * abs(p12 - p23) + math.log2(1 + est_ref / e2), (p12, p23)


def _decay_rate(t, y):
    """Exponential decay rate (1/s) of the positive peaks of ``y`` (parabolic interpolation of
    each sampled peak, least-squares line through their logarithms)."""
    i = np.flatnonzero((y[1:-1] > y[:-2]) & (y[1:-1] >= y[2:]) & (y[1:-1] > 0)) + 1
    a, b, c = y[i - 1], y[i], y[i + 1]
    den = a - 2 * b + c
    peak = b - 0.125 * (a - c) ** 2 / den
    tp = t[i] + 0.5 * (a - c) / den * (t[1] - t[0])
    return -float(np.polyfit(tp, np.log(peak), 1)[0]), i.size


@pytest.fixture(scope="module")
def free_modes():
    """8-element seed beam without gravity, its first two modes and a small initial shape of
    each (tip amplitude 0.1 mm: linear)."""
    m = make_model(**{"mesh.n_elements": 8, "load.g": 0.0})
    mo = modal_analysis(m, n_modes=2)
    starts = []
    for k in range(2):
        q0 = m.reference()
        q0[4:] += 1e-4 / abs(mo.shapes[k][-3]) * mo.shapes[k]
        starts.append(q0)
    return m, mo.omega, starts


ALPHA, BETA = 2.0, 1e-5  # Rayleigh C = alpha M + beta K0 (1/s, s)


def _discrete_mode(integrator, w, dt, zeta, t, **options):
    """Tip history (unit amplitude) of one damped mode run by the scheme: its amplification
    matrix at ``w dt`` with damping ratio ``zeta``, from rest at displacement 1, at the
    samples ``t`` (whole steps)."""
    a = amplification_matrix(integrator, w * dt, zeta, **options)
    wdt = w * dt
    x0 = {"central-difference": [1.0, 1.0 - 0.5 * wdt**2], "bdf1": [1.0, 0.0]}.get(
        integrator, [1.0, 0.0, -(wdt**2)]
    )
    lam, vec = np.linalg.eig(a)
    coef = np.linalg.solve(vec, np.asarray(x0, complex))
    n = np.rint(np.asarray(t) / dt)
    return (vec[0][None, :] * coef[None, :] * lam[None, :] ** n[:, None]).sum(axis=1).real


def _linear_run(m, q0, integrator, dt, t, **options):
    """Tip history of the linear discrete model (every mode of the reference tangent and the
    mass) started at rest from ``q0`` with Rayleigh damping (ALPHA, BETA), each mode run by the
    scheme (:func:`_discrete_mode`): the run's linear prediction, whatever the start holds
    besides its intended mode."""
    import scipy.linalg as sla

    k_mat, m_mat = m.tangent_dense(m.reference()), m.mass_dense()
    w2, phi = sla.eigh(k_mat, m_mat)
    amp = phi.T @ m_mat @ (q0 - m.reference())[4:]
    y = np.full(np.shape(t), float(m.reference()[-3]))
    for w2k, a, tip in zip(w2, amp, phi[-3], strict=True):
        w = np.sqrt(max(w2k, 0.0))
        y = y + a * tip * _discrete_mode(
            integrator, w, dt, (ALPHA / w + BETA * w) / 2, t, **options
        )
    return y


@pytest.mark.parametrize(("k", "rtol"), [(0, 1e-5), (1, 2e-4)])
def test_rayleigh_damping_explicit_decays_at_the_modal_rate(free_modes, k, rtol):
    """Free vibration in mode k decays as exp(-zeta_k omega_k t) with zeta_k = alpha / (2
    omega_k) + beta omega_k / 2 (Rayleigh damping is proportional: the modes stay decoupled).
    Explicit run at 0.8 dt_cr: measured relative error of the rate 1.1e-6 (mode 1, 12
    periods), 1.9e-5 (mode 2, 40 periods). NOT a derived bound (ten times the measured value):
    the linear discrete model of the same start run by the central differences' amplification
    matrix (:func:`_linear_run`) gives the rate to 1e-9, and the run departs from it by 7e-7 of
    the amplitude over the 12 periods, which neither the geometric nonlinearity of the 0.1 mm
    mode ((A / L)^2 = 1e-8) nor round-off explains -- left for investigation."""
    m, omega, starts = free_modes
    dtc = 2.0 / omega_max(m)[0]
    periods = 12 if k == 0 else 40
    run = simulate_explicit(
        m,
        periods * 2 * math.pi / omega[k],
        0.8 * dtc,
        dtc,
        damping=(ALPHA, BETA),
        q0=starts[k],
        progress=False,
    )
    rate, n_peaks = _decay_rate(run.t, run.tip_y)
    assert n_peaks >= periods - 1
    expected = ALPHA / 2 + BETA * omega[k] ** 2 / 2
    assert rate == pytest.approx(expected, rel=rtol)


@pytest.mark.parametrize("k", [0, 1])
def test_rayleigh_damping_newmark_decays_at_the_modal_rate(free_modes, k):
    """The same with Newmark (average acceleration, no numerical damping) at T_k / 400: the
    rate error is the scheme's O((omega dt)^2); measured 6.1e-5 (mode 1) and 4.3e-5 (mode 2);
    at T_k / 100 1.5e-3 and 9.1e-4. Bound: the estimator on the linear discrete model of the
    run by Newmark (:func:`_linear_run`), plus Newton's tolerance per step (1e-8)."""
    m, omega, starts = free_modes
    periods = 12 if k == 0 else 40
    period = 2 * math.pi / omega[k]
    run = simulate_implicit(
        m,
        periods * period,
        period / 400,
        "newmark",
        damping=(ALPHA, BETA),
        q0=starts[k],
        progress=False,
    )
    rate, _ = _decay_rate(run.t, run.tip_y)
    expected = ALPHA / 2 + BETA * omega[k] ** 2 / 2
    syn = _linear_run(m, starts[k], "newmark", period / 400, run.t, beta=0.25, gamma=0.5)
    tol = abs(_decay_rate(run.t, syn)[0] / expected - 1) + 1e-8 * run.steps
    assert rate == pytest.approx(expected, rel=tol)


GRADED = {"defect.lam": 0.6, "defect.n": 2.0}


@pytest.mark.parametrize("mapping", ["nodal", "element"])
def test_mappings_converge_to_gauss_in_modal_analysis(mapping):
    """omega_1..3 of the nodal / element mappings approach the exact (gauss) mapping at second
    order: measured differences at 32 elements up to 7.3e-5 and successive ratios 3.80-4.03.
    Bound: the local order between 16 and 32 elements within 2 +- FS x its change from 8/16
    over 1 - 1/4 (the next term is (L/n)^4), and the difference at 32 within the order-2 bound
    from 16 elements (a quarter of it, widened by that deviation)."""
    diffs = []
    for ne in (4, 8, 16, 32):
        g = modal_analysis(make_model(**GRADED, **{"mesh.n_elements": ne}), 3).omega
        o = modal_analysis(
            make_model(**GRADED, **{"mesh.n_elements": ne, "defect.mapping": mapping}), 3
        ).omega
        diffs.append(np.abs(o / g - 1))
    diffs = np.array(diffs)
    orders = np.log2(diffs[1:-1] / diffs[2:])  # 8/16 and 16/32 (4 elements: pre-asymptotic)
    dev = FS * np.abs(orders[1] - orders[0]) / (1 - 0.25)
    assert np.all(np.abs(orders[1] - 2.0) <= dev), orders
    assert np.all(diffs[-1] <= diffs[-2] * 2.0 ** -(2.0 - dev)), diffs


@pytest.mark.parametrize("mapping", ["nodal", "element"])
def test_mappings_converge_to_gauss_in_dynamics(mapping):
    """Tip history over the first 0.07 s (about one period) of the explicit run: the nodal /
    element mapping against gauss on the same mesh, relative to the largest tip displacement.
    Measured: 8 -> 16 -> 32 elements, ratios 3.98-4.02 (orders 2.0056, 2.0059), difference
    at 32 elements 1.9e-4. NOT a derived bound: the local order does not approach 2 as the
    pre-asymptotic model says (its change, 3e-4, is twenty times smaller than its deviation,
    6e-3: the two runs' different steps, or the max-over-time metric, add a term of their
    own); the tolerances of the test as written are kept (ratios 3.6-4.4, difference below
    2e-3)."""
    diffs = []
    for ne in (8, 16, 32):
        runs = []
        for mp in ("gauss", mapping):
            m = make_model(**GRADED, **{"mesh.n_elements": ne, "defect.mapping": mp})
            dtc = 2.0 / omega_max(m)[0]
            runs.append(simulate_explicit(m, 0.07, 0.8 * dtc, dtc, sample_dt=1e-4, progress=False))
        g, o = runs
        scale = float(np.abs(g.tip_y).max())
        diffs.append(_tip_error(o, g, scale))
    diffs = np.array(diffs)
    assert diffs[-1] < 2e-3, diffs
    ratios = diffs[:-1] / diffs[1:]
    assert np.all((ratios > 3.6) & (ratios < 4.4)), ratios


def _run_frequency(t, y, mean):
    """Circular frequency (rad/s) of ``y`` from its upward crossings of ``mean`` (linear
    interpolation), over whole periods."""
    s = y - mean
    i = np.flatnonzero((s[:-1] < 0) & (s[1:] >= 0))
    tc = t[i] - s[i] * (t[i + 1] - t[i]) / (s[i + 1] - s[i])
    return 2 * math.pi * (tc.size - 1) / (tc[-1] - tc[0])


SECTION_FAMILIES = {
    "density": {"defect.rho.lam": 0.5, "defect.rho.n": 1.0},
    "height": {"defect.height.lam": 0.4, "defect.height.n": 2.0},
}


def _dynamics_bounds(m, run, w_ref, w_ref_err):
    """The mean tip over whole periods of the second half and the frequency of the upward mean
    crossings of ``run`` with their references and bounds: the references carry the linear
    discrete model's prediction of each estimator's error (the same estimator on its central-
    difference history at the run's samples: the higher modes, the window, the sampling, the
    scheme), the tolerances the geometric nonlinearity (8 |tip - tip_linearised|; for the
    frequency relative to the static tip, plus the shift to the static state) times FS, the
    element's frequency error (FS x the estimate from n, 2n, 4n elements) and the reference
    frequency's own error ``w_ref_err``."""
    static = solve_static(m).tip_y
    y_lin, lin_static = linear_tip(m.case, run.t, run.dt)
    mean, n_per = whole_period_mean(run.t, run.tip_y, 2 * math.pi / w_ref)
    mean_lin, _ = whole_period_mean(run.t, y_lin, 2 * math.pi / w_ref)
    nl = geometric_nonlinearity(m, static)
    mean_ref, mean_tol = static + mean_lin - lin_static, FS * nl + EPS * run.steps * abs(static)
    w_run = _run_frequency(run.t, run.tip_y, mean)
    w_lin = 2.0 / run.dt * np.arcsin(0.5 * modal_analysis(m, 1).omega[0] * run.dt)
    est_lin = _run_frequency(run.t, y_lin, mean_lin) - w_lin  # the estimator's error
    ne = m.n_el
    w = [
        modal_analysis(BeamModel(m.case.with_overrides({"mesh.n_elements": k * ne})), 1).omega[0]
        for k in (1, 2, 4)
    ]
    shift = abs(modal_analysis(m, 1, about="static").omega[0] / w[0] - 1) + nl / abs(static)
    w_tol = abs(est_lin) + abs(w_lin - w[0]) + FS * (refinement_estimate(*w) + shift * w[0])
    return (mean, n_per, mean_ref, mean_tol), (w_run, w_tol + w_ref_err)


@pytest.mark.parametrize("family", ["density", "height"])
def test_section_gradients_in_dynamics(family):
    """Density and height gradients (10 elements, 1 s explicit run): the mean tip over the
    whole first-mode periods of the second half against the static tip, and the run's
    frequency (upward mean crossings) against the stepped transfer matrix (Richardson 80/160
    segments; it sees rhoA(x) and EI(x) only through the section functions). Measured: mean
    1.0e-5 (density), 1.0e-4 (height); frequency 6.3e-5 (density), 4.5e-4 (height: the upward
    crossings see more of the higher modes). Bounds: :func:`_dynamics_bounds`; the stepped
    reference's error: its change from the extrapolation of 40/80 segments."""
    over = {**SECTION_FAMILIES[family], "mesh.n_elements": 10}
    m = make_model(**over)
    dtc = 2.0 / omega_max(m)[0]
    run = simulate_explicit(m, 1.0, 0.8 * dtc, dtc, sample_dt=2e-5, progress=False)
    p = SectionProfile(case_with(**over))
    f0, f1, f2 = (transfer.stepped_frequencies(L, p.EI, p.rhoA, n, 1)[0] for n in (40, 80, 160))
    w_tm = (4 * f2 - f1) / 3
    w_tm_err = abs(w_tm - (4 * f1 - f0) / 3)
    (mean, n_per, mean_ref, mean_tol), (w_run, w_tol) = _dynamics_bounds(m, run, w_tm, w_tm_err)
    assert n_per >= 7
    assert abs(mean - mean_ref) <= mean_tol
    assert abs(w_run - w_tm) <= w_tol


def test_curved_reference_in_dynamics():
    """Initially curved reference (kappa0 = 0.2 1/m, 10 elements, 1 s): the mean tip over whole
    periods against the static tip, and the run's frequency against omega_1 of the modal
    analysis about the static equilibrium (the beam vibrates about its deformed state).
    Measured: mean 1.3e-6, frequency 1.4e-4. Bounds: :func:`_dynamics_bounds` (the
    reference is the element's own frequency about the static state: no error of its own
    beyond the Ritz round-off)."""
    m = make_model(**{"imperfection.kappa0": 0.2, "mesh.n_elements": 10})
    dtc = 2.0 / omega_max(m)[0]
    run = simulate_explicit(m, 1.0, 0.8 * dtc, dtc, sample_dt=2e-5, progress=False)
    w1 = modal_analysis(m, n_modes=1, about="static").omega[0]
    (mean, n_per, mean_ref, mean_tol), (w_run, w_tol) = _dynamics_bounds(m, run, w1, 0.0)
    assert n_per >= 7
    assert abs(mean - mean_ref) <= mean_tol
    assert abs(w_run - w1) <= w_tol


def test_damage_law_and_released_energy():
    """One damage update from an undamaged state: d at every integration point equals the law
    d = d_max (1 - exp(-(e - threshold) / softening)) evaluated here from the strains of the
    element's shape functions (e = |eps| + h/2 |kappa|), and the released energy equals
    U(q; undamaged) - U(q; damaged) from the kernels' strain energy. Measured: 0 (d), 2.9e-16
    relative (energy); tolerances at round-off."""
    case = case_with(
        **{
            "damage.enabled": True,
            "damage.threshold": 3e-5,
            "damage.softening": 2e-5,
            "mesh.n_elements": 10,
        }
    )
    m = BeamModel(case)
    q = solve_static(BeamModel(case.with_overrides({"damage.enabled": False}))).q
    u_before = m.strain_energy(q)
    state = DamageState(m)
    released = state.update(q)
    u_after = m.strain_energy(q)
    # independent evaluation of the law at the bending Gauss points
    xg, _ = np.polynomial.legendre.leggauss(case.mesh.n_gauss_bending)
    _, sp, spp = shape_tables(0.5 * (xg + 1.0), m.le)
    blocks = np.stack([q[4 * el : 4 * el + 8].reshape(4, 2) for el in range(m.n_el)])
    rp = np.einsum("ga,eac->egc", sp, blocks)
    rpp = np.einsum("ga,eac->egc", spp, blocks)
    g2 = np.sum(rp**2, axis=2)
    eps = np.sqrt(g2) - 1.0
    kap = (rp[..., 0] * rpp[..., 1] - rp[..., 1] * rpp[..., 0]) / g2
    e_eq = np.abs(eps) + 0.5 * case.beam.height * np.abs(kap)
    dmg = case.damage
    expected = np.where(
        e_eq > dmg.threshold, dmg.d_max * (1 - np.exp(-(e_eq - dmg.threshold) / dmg.softening)), 0.0
    )
    assert np.all(half_heights(m) == 0.5 * case.beam.height)
    assert np.count_nonzero(expected) >= 3  # the test exercises the law
    # the same law evaluated two ways: a few eps of d_max (8 eps); the released energy, a
    # difference of two strain energies, to 16 eps of their size
    np.testing.assert_allclose(state.d, expected, rtol=0, atol=8 * EPS * dmg.d_max)
    assert abs(released - (u_before - u_after)) <= 16 * EPS * (abs(u_before) + abs(u_after))
    assert released > 0
