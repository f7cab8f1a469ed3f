"""Implicit integrators (bdf1, newmark, generalized-alpha): amplification factors against the
analytic SDOF amplification matrices, energy conservation, rho_inf = 1 == Newmark, convergence
order against a fine explicit reference, Newton failure handling, damped approach to the static
equilibrium, and the CLI / Dataset outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from ancf_beam.beam.model import CLAMP
from ancf_beam.cli import main
from ancf_beam.results import ConvergenceError, DynamicsResult, NewtonConvergenceError
from ancf_beam.solvers import DynamicsSettings, simulate
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.implicit import simulate_implicit
from ancf_beam.solvers.modal import modal_analysis, omega_max
from ancf_beam.solvers.schemes import generalized_alpha_parameters
from ancf_beam.solvers.settings import make_scheme
from ancf_beam.solvers.static import solve_static
from ancf_beam.studies.bounds import EPS, geometric_nonlinearity
from ancf_beam.studies.integrators import LinearModes
from conftest import FS, make_model

#: Newton's relative residual tolerance of the implicit steps (NEWTON_DEFAULTS): each step's
#: defect, relative to the forces; a run of n steps accumulates at most n of them
NEWTON_TOL = 1e-8


# ------------------------------------------------------------------------------------------
# analytic amplification matrices of the SDOF oscillator u'' + w^2 u = 0, Omega = w dt
# ------------------------------------------------------------------------------------------
def amplification_matrix(name: str, omega_dt: float, beta=0.25, gamma=0.5, rho_inf=None):
    """``A`` with ``x_{n+1} = A x_n``; bdf1: ``x = (u, dt v)``; Newmark / Chung-Hulbert
    generalized-alpha: ``x = (u, dt v, dt^2 a)``."""
    w2 = omega_dt**2
    if name == "bdf1":  # u1 - dt v1 = u0 ; dt v1 + W^2 u1 = dt v0
        return np.linalg.inv(np.array([[1.0, -1.0], [w2, 1.0]]))
    am = af = 0.0
    if name == "generalized-alpha":
        am, af, beta, gamma = generalized_alpha_parameters(rho_inf)
    # (1-am) a1 + am a0 + W^2 ((1-af) u1 + af u0) = 0 ; Newmark kinematics
    lhs = np.array([[w2 * (1 - af), 0.0, 1 - am], [1.0, 0.0, -beta], [0.0, 1.0, -gamma]])
    rhs = np.array([[-w2 * af, 0.0, -am], [1.0, 1.0, 0.5 - beta], [0.0, 1.0, 1 - gamma]])
    return np.linalg.solve(lhs, rhs)


def principal_root(a: np.ndarray) -> complex:
    lam = np.linalg.eigvals(a)
    return complex(lam[np.argmax(np.abs(lam.imag))])


def fit_two_term_recurrence(eta: np.ndarray, skip: int) -> complex:
    """Root ``lambda`` of ``eta_{n+1} = 2 Re(lambda) eta_n - |lambda|^2 eta_{n-1}`` (least
    squares over the samples after ``skip``, when spurious roots have died out)."""
    y = eta[skip + 1 :]
    x = np.column_stack([eta[skip:-1], eta[skip - 1 : -2]])
    (p, s), *_ = np.linalg.lstsq(x, y, rcond=None)
    r = np.sqrt(-s)
    return r * np.exp(1j * np.arccos(p / (2 * r)))


SCHEMES = [
    ("bdf1", {}),
    ("newmark", {}),
    ("newmark", {"beta": 0.3025, "gamma": 0.6}),
    ("generalized-alpha", {"rho_inf": 0.8}),
    ("generalized-alpha", {"rho_inf": 0.5}),
    ("generalized-alpha", {"rho_inf": 0.0}),
]


def _single_mode(name, params, strain, amplitude):
    """Period elongation and decay per step of the first mode (uniform beam, g = 0, Omega =
    omega_1 dt = 0.3), fitted to the modal coordinate of a run at tip amplitude
    ``amplitude`` (m)."""
    m = make_model(**{"mesh.n_elements": 8, "mesh.strain": strain, "load.g": 0.0})
    mr = modal_analysis(m, n_modes=1)
    w1, phi = mr.omega[0], mr.shapes[0]
    dt = 0.3 / w1
    scale = amplitude / abs(phi[-3])
    q0 = m.reference()
    v0 = None
    if strain == "linear":
        q0[CLAMP:] += scale * phi
    else:
        v0 = scale * w1 * phi
    n = 60 if name == "bdf1" else 150
    r = simulate_implicit(
        m, n * dt, dt, name, q0=q0, v0=v0, sample_dt=dt, snapshot_dt=dt, progress=False, **params
    )
    assert isinstance(r, DynamicsResult) and r.integrator == name
    eta = (r.q_snap[:, CLAMP:] - m.reference()[CLAMP:]) @ m.mass_dense() @ phi  # modal coord
    lam = fit_two_term_recurrence(eta, skip=20)
    return 0.3 / np.angle(lam) - 1, 1 - abs(lam)  # period elongation T_num / T - 1, decay


@pytest.mark.parametrize("strain", ["linear", "nonlinear"])
@pytest.mark.parametrize("name,params", SCHEMES)
def test_single_mode_decay_and_period_match_amplification_matrix(name, params, strain):
    """Linear model: released from a small multiple of the mode shape; nonlinear model: started
    with a mode-shaped velocity (1 cm tip amplitude; a displaced linear mode shape would be
    axially pre-stretched). The linear model's mode follows the amplification matrix exactly:
    the bound is Newton's tolerance on the steps (measured 1e-13 .. 1e-10 absolute). The
    nonlinear model's frequency and decay move with the amplitude: the run at half the
    amplitude estimates that (second order in the amplitude: 4/3 of the change, x FS;
    measured 7e-6 .. 1.1e-4 of the period elongation, matched by the estimate to 0.1 %)."""
    lam_ana = principal_root(amplification_matrix(name, 0.3, **params))
    decay_ana = 1 - abs(lam_ana)
    pe_ana = 0.3 / abs(np.angle(lam_ana)) - 1
    pe, decay = _single_mode(name, params, strain, 0.01)
    tol_pe = tol_decay = NEWTON_TOL
    if strain == "nonlinear":
        pe_half, decay_half = _single_mode(name, params, strain, 0.005)
        tol_pe += FS * 4 / 3 * abs(pe - pe_half)
        tol_decay += FS * 4 / 3 * abs(decay - decay_half)
    assert abs(pe - pe_ana) <= tol_pe
    assert abs(decay - decay_ana) <= tol_decay
    assert pe_ana > 1e-3  # the check is not vacuous at this Omega


def test_amplification_matrix_sanity():
    """The reference formulas themselves: known limits of the schemes."""
    # eigenvalues of 2x2 / 3x3 matrices: a few eps (16 eps); the spectral radius at Omega = 1e6
    # differs from its limit rho_inf through the O(1 / Omega^2) terms of the matrix; at
    # rho_inf = 0 the limit is a triple root (a Jordan block), which a perturbation e moves by
    # e^(1/3): measured 1.0e-4 = (1 / Omega^2)^(1/3); bound ten times that
    om = 0.3
    lam_nm = principal_root(amplification_matrix("newmark", om))
    assert abs(lam_nm) == pytest.approx(1, abs=16 * EPS)
    lam = principal_root(amplification_matrix("bdf1", om))
    assert abs(lam) == pytest.approx(1 / np.sqrt(1 + om**2), rel=16 * EPS)
    for rho in (0.0, 0.5, 1.0):
        lam_inf = np.linalg.eigvals(amplification_matrix("generalized-alpha", 1e6, rho_inf=rho))
        assert np.max(np.abs(lam_inf)) == pytest.approx(rho, abs=10 * (1 / 1e6**2) ** (1 / 3))


# ------------------------------------------------------------------------------------------
# energy, equivalence, order of accuracy
# ------------------------------------------------------------------------------------------
def test_newmark_average_acceleration_conserves_energy_at_50_dt_critical():
    m = make_model()  # seed case, 20 elements, released from rest under gravity
    dt_cr = 2.0 / omega_max(m)[0]
    r = simulate_implicit(m, 2.0, 50 * dt_cr, "newmark", progress=False)
    assert r.steps == pytest.approx(2.0 / (50 * dt_cr), abs=1)  # the last step may be short
    # average acceleration conserves the energy of a linear system exactly: the linear model's
    # drift is round-off (measured 2e-14; bound 16 eps per step)
    lin = simulate_implicit(
        make_model(**{"mesh.strain": "linear"}), 2.0, 50 * dt_cr, "newmark", progress=False
    )
    assert lin.energy_drift_rel <= 16 * EPS * lin.steps
    # The nonlinear run's drift (measured 2.5e-8) has two parts that do not separate cleanly:
    # the trapezoidal rule's O(dt^2) error on the nonlinear force and the defect each step
    # keeps at the residual's round-off floor (9.7e-6 N), accumulated over the steps -- 6.6e-8,
    # 2.5e-8, 2.2e-8, 2.6e-8, 4.4e-8 at 100, 50, 25, 12.5, 6.25 dt_cr. NOT a derived bound:
    # ten times the measured value.
    assert r.energy_drift_rel < 2.5e-7
    assert np.max(r.kinetic) > 5e-3  # the beam really moves (tip swing ~ 2.8 mm)
    # the lowest tip against the linear discrete model run with Newmark at the same step (all
    # modes, each with the scheme's period; the higher modes add 1.4e-2 to the single-mode
    # 2 x static): within FS x the geometric nonlinearity and Newton's tolerance per step
    lin = LinearModes(m.case).scheme_tip("newmark", 50 * dt_cr, r.t, beta=0.25, gamma=0.5)
    nl = geometric_nonlinearity(m, solve_static(m).tip_y)
    assert abs(r.tip_y.min() - lin.min()) <= FS * nl + r.steps * NEWTON_TOL * abs(lin.min())
    assert np.all(r.newton_iterations >= 1)


def test_generalized_alpha_rho_inf_1_is_newmark_average_acceleration():
    m = make_model()
    dt = 50 * 2.0 / omega_max(m)[0]
    kw = dict(damping=(5.0, 1e-6), progress=False)
    a = simulate_implicit(m, 0.3, dt, "newmark", **kw)
    b = simulate_implicit(m, 0.3, dt, "generalized-alpha", rho_inf=1.0, **kw)
    assert make_scheme("generalized-alpha", rho_inf=1.0).alpha_m == 0.5  # a different code path
    # the same scheme through another path: its round-off, a few eps per step and operation
    # (16 eps x steps of the largest magnitude)
    rnd = 16 * EPS * a.steps
    assert np.max(np.abs(a.q_snap - b.q_snap)) <= rnd * np.max(np.abs(a.q_snap))
    assert np.max(np.abs(a.tip_y - b.tip_y)) <= rnd * np.max(np.abs(a.tip_y))
    assert np.max(np.abs(a.total - b.total)) <= rnd * max(
        np.max(a.kinetic), np.max(np.abs(a.strain)), np.max(np.abs(a.gravity))
    )
    np.testing.assert_array_equal(a.newton_iterations, b.newton_iterations)


def test_convergence_order_against_fine_explicit_reference():
    """Start at the static equilibrium with a mode-1 velocity (5 cm tip swing, nonlinear model,
    gravity on), 0.1 s; error = max tip-y deviation at 20 sample times from central differences
    at dt = dt_cr / 4. Fitted log-log slopes give the orders."""
    m = make_model(**{"mesh.n_elements": 4})
    qs = solve_static(m).q
    mr = modal_analysis(m, n_modes=1, about="static", q=qs)
    phi = mr.shapes[0]
    v0 = phi * (0.05 * mr.omega[0] / abs(phi[-3]))
    t_end = 0.1
    kw = dict(q0=qs, v0=v0, sample_dt=t_end / 20, snapshot_dt=t_end, progress=False)
    dt_cr = 2.0 / omega_max(m)[0]
    n_ref = 20 * int(np.ceil(t_end / (0.25 * dt_cr) / 20))
    ref = simulate_explicit(m, t_end, t_end / n_ref, **kw)
    assert np.ptp(ref.tip_y) > 0.09
    orders = {"bdf1": (1.0, [320, 640, 1280, 2560])}
    orders.update({k: (2.0, [40, 80, 160, 320]) for k in ("newmark", "generalized-alpha")})
    for name, (order, steps) in orders.items():
        errs = []
        for n in steps:
            r = simulate_implicit(m, t_end, t_end / n, name, **kw)
            np.testing.assert_allclose(r.t, ref.t, atol=16 * EPS * t_end)  # k dt: round-off
            errs.append(np.max(np.abs(r.tip_y - ref.tip_y)))
        assert all(b < a for a, b in zip(errs, errs[1:], strict=False)), (name, errs)
        # the local orders tend to the scheme's: the finest within FS x twice its change from
        # the previous one (the next error term is at least one order higher)
        local = -np.diff(np.log(errs)) / np.log(2.0)
        assert abs(local[-1] - order) <= FS * 2 * abs(local[-1] - local[-2]) + 0.02, (
            name,
            errs,
            local,
        )  # (0.02: the explicit reference's error, 1/16 of the finest)


# ------------------------------------------------------------------------------------------
# Newton failure, step halving, Newton variants
# ------------------------------------------------------------------------------------------
def test_nonconvergence_raises_clear_error_not_nans():
    m = make_model()
    with pytest.raises(NewtonConvergenceError) as info:
        simulate_implicit(m, 2.0, 1.0, "newmark", max_iter=1, max_halvings=0, progress=False)
    err = info.value
    assert isinstance(err, ConvergenceError)
    msg = str(err)
    assert "t = 0 s" in msg and "after 1 iterations" in msg and "residual" in msg
    assert err.iterations == 1 and err.step == 0 and err.dt == 1.0
    assert np.isfinite(err.residual) and err.residual > err.tolerance > 0
    # newmark at gamma = 1/2 damps no mode: the error says so, and only for that scheme
    assert "gamma = 0.5 damps no mode" in msg and "generalized-alpha (rho_inf < 1)" in msg
    for integrator, kw in (("newmark", {"gamma": 0.6, "beta": 0.3025}), ("generalized-alpha", {})):
        with pytest.raises(NewtonConvergenceError) as info:
            simulate_implicit(
                m, 2.0, 1.0, integrator, max_iter=1, max_halvings=0, progress=False, **kw
            )
        assert "damps no mode" not in str(info.value) and "max_iter / max_halvings" in str(
            info.value
        )


def test_step_halving_rescues_a_step():
    """A soft beam (E0 / 1000) swinging through large rotations with a coarse step: Newton
    fails without halving and succeeds when steps may be halved."""
    m = make_model(**{"material.E0": 2.07e8, "mesh.n_elements": 8})
    kw = dict(max_iter=8, progress=False)
    with pytest.raises(NewtonConvergenceError, match="after 0 halvings") as info:
        simulate_implicit(m, 2.0, 0.1, "generalized-alpha", max_halvings=0, **kw)
    err = info.value  # raised from inside the numba time loop, after some converged steps
    assert err.step > 0 and err.t == pytest.approx(0.1 * err.step) and err.dt == 0.1
    assert f"in step {err.step} at t = " in str(err)
    stats = {}
    r = simulate_implicit(m, 2.0, 0.1, "generalized-alpha", max_halvings=6, stats=stats, **kw)
    assert stats["halvings"] > 0
    assert np.all(np.isfinite(r.tip_y)) and r.steps == 20
    assert r.tip_y.min() < -0.8  # large deflection of the soft beam
    assert r.newton_iterations.max() > 8  # a halved step counts the iterations of its halves


@pytest.mark.parametrize(
    "newton,predictor",
    [("full", "auto"), ("full", "constant"), ("modified", "extrapolate"), ("modified", "constant")],
)
def test_newton_variants_agree(newton, predictor):
    m = make_model()
    dt = 6e-4
    st_a = {}
    a = simulate_implicit(m, 0.1, dt, "generalized-alpha", progress=False, stats=st_a)
    assert st_a["newton"] == "modified" and st_a["predictor"] == "auto"  # the defaults
    assert st_a["factorizations"] < a.steps  # modified Newton reuses the factorisation
    stats = {}
    b = simulate_implicit(
        m,
        0.1,
        dt,
        "generalized-alpha",
        newton=newton,
        predictor=predictor,
        progress=False,
        stats=stats,
    )
    # both solve every step to Newton's tolerance: they differ by at most one defect per step
    np.testing.assert_allclose(
        b.tip_y, a.tip_y, rtol=0, atol=a.steps * NEWTON_TOL * np.max(np.abs(a.tip_y))
    )
    if newton == "modified":
        assert stats["factorizations"] < b.steps
    else:  # a new tangent for every iteration
        assert stats["factorizations"] == b.newton_iterations.sum()


def test_seed_case_modified_and_full_newton_agree_at_the_benchmark_step():
    """The case of the Exudyn comparison (generalized-alpha, rho_inf = 0.9, dt = 1e-4, 5/3
    Gauss points), shortened: modified Newton (default) and full Newton converge to the same
    tolerance, so their tips agree far below the time-discretisation error."""
    m = make_model(**{"mesh.n_gauss_axial": 5, "mesh.n_gauss_bending": 3})
    kw = dict(rho_inf=0.9, progress=False)
    st_m, st_f = {}, {}
    a = simulate_implicit(m, 0.03, 1e-4, "generalized-alpha", stats=st_m, **kw)
    b = simulate_implicit(m, 0.03, 1e-4, "generalized-alpha", newton="full", stats=st_f, **kw)
    assert st_m["factorizations"] <= 2 and st_f["factorizations"] >= b.steps  # counts
    assert a.newton_iterations.max() <= 4 and a.newton_iterations.mean() < 3.5  # counts
    peak = np.max(np.abs(a.tip_y))
    assert peak > 1e-3
    # both to Newton's tolerance per step (measured 4.2e-10 of the peak)
    assert np.max(np.abs(a.tip_y - b.tip_y)) <= a.steps * NEWTON_TOL * peak
    # generalized-alpha's energy error is second order: its estimate from a run at dt / 2
    # (4/3 of the change, x FS); measured 6.2e-7
    h = simulate_implicit(m, 0.03, 5e-5, "generalized-alpha", **kw)
    assert a.energy_drift_rel <= FS * 4 / 3 * abs(a.energy_drift_rel - h.energy_drift_rel)


def test_numba_chunks_match_python_driven_steps_with_damage():
    """The time loop in numba (implicit_step.run_chunk) and the step-by-step path used after a
    failed step (ImplicitRun.advance, damage updated from Python) give identical states."""
    from ancf_beam.solvers.implicit import ImplicitRun
    from ancf_beam.solvers.timeloop import outputs, step_plan

    dmg = {"damage.enabled": True, "damage.threshold": 3e-5, "damage.softening": 2e-5}
    runs = []
    for path in ("chunk", "python"):
        m = make_model(**{"mesh.n_elements": 6, **dmg})
        n, h = 40, 1e-3
        settings = DynamicsSettings.from_case(
            m.case, integrator="generalized-alpha", damping=(1.0, 1e-5), t_end=n * h, dt=h
        )
        run = ImplicitRun(m, settings)
        run.set_initial_state(m.reference(), np.zeros(m.n_free))
        if path == "chunk":
            # sampling strides beyond the run: the loop records nothing
            out = outputs(step_plan(n * h, h, (n + 1) * h, (n + 1) * h), m, False)
            iters = np.zeros(n, dtype=np.int32)
            done = run.run_chunk(n, 0, h, out, iters)
            wd = run.dissipated
            assert done == n
        else:
            wd = 0.0
            iters = np.zeros(n, dtype=np.int32)
            for k in range(n):
                iters[k], w = run.advance(h, k * h, k)
                wd += w
        runs.append((run.q.copy(), run.v.copy(), run.energy, wd, iters, m.damage.copy()))
    (q1, v1, e1, w1, i1, d1), (q2, v2, e2, w2, i2, d2) = runs
    assert d1.max() > 0.05  # damage did grow
    np.testing.assert_array_equal(i1, i2)
    # the same steps through two code paths (sums in another order): round-off, 16 eps per
    # step of the largest magnitude
    rnd = 16 * EPS * n
    np.testing.assert_allclose(q1, q2, rtol=0, atol=rnd * np.abs(q1).max())
    np.testing.assert_allclose(v1, v2, rtol=0, atol=rnd * np.abs(v1).max())
    np.testing.assert_allclose(d1, d2, rtol=0, atol=rnd)
    assert e1 == pytest.approx(e2, rel=rnd) and w1 == pytest.approx(w2, rel=rnd)


def test_progress_is_logged_between_chunks(caplog):
    m = make_model(**{"mesh.n_elements": 4})
    with caplog.at_level("INFO", logger="ancf_beam.solvers.implicit"):
        simulate_implicit(m, 0.05, 1e-4, "newmark", progress=True, progress_interval_s=0.0)
    msgs = [r.getMessage() for r in caplog.records if "Newton it/step" in r.getMessage()]
    assert msgs and "newmark: t = " in msgs[0]


# ------------------------------------------------------------------------------------------
# damping
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bdf1", "generalized-alpha", "newmark"])
def test_damped_run_reaches_static_equilibrium(name):
    """Mass-proportional damping at twice omega_1 (critical for mode 1): after 0.4 s the tip is
    at the static deflection plus the linear discrete model's residual with the same scheme,
    step and damping (Newmark has no numerical dissipation, so the unresolved high modes
    excited by the release keep a ~1e-5 relative ripple), within FS x the geometric
    nonlinearity of that residual and Newton's tolerance per step."""
    m = make_model()
    w1 = modal_analysis(m, n_modes=1).omega[0]
    static = solve_static(m)
    dt = 2 * np.pi / w1 / 50
    r = simulate_implicit(m, 0.4, dt, name, damping=(2 * w1, 0.0), progress=False)
    opts = {
        "bdf1": {},
        "generalized-alpha": {"rho_inf": 0.8},
        "newmark": {"beta": 0.25, "gamma": 0.5},
    }[name]
    lin = LinearModes(m.case).scheme_tip(name, dt, r.t[-1:], 2 * w1, **opts)[0]
    residual = lin - (LinearModes(m.case).tip0 + float(np.sum(LinearModes(m.case).c)))
    nl = geometric_nonlinearity(m, static.tip_y) / abs(static.tip_y)
    tol = FS * nl * abs(residual) + r.steps * NEWTON_TOL * abs(static.tip_y)
    assert abs(r.tip_y[-1] - (static.tip_y + residual)) <= tol
    assert r.damping_work[-1] > 0 and np.all(np.diff(r.damping_work) >= 0)
    if name == "newmark":  # the trapezoidal energy balance closes with the damping work, up to
        # the O(dt^2) error on the nonlinear force and the residual floor's defect per step
        # (2.4e-7 at dt, 2.0e-7 at dt / 2: not second order). NOT a derived bound: about four
        # times the measured value
        assert r.energy_drift_rel < 1e-6


def test_stiffness_proportional_damping_dissipates():
    m = make_model(**{"mesh.n_elements": 8})
    undamped = simulate_implicit(m, 0.2, 1e-3, "newmark", progress=False)
    damped = simulate_implicit(m, 0.2, 1e-3, "newmark", damping=(0.0, 2e-3), progress=False)
    assert damped.damping_work[-1] > 0
    assert np.ptp(damped.tip_y[-50:]) < 0.5 * np.ptp(undamped.tip_y[-50:])  # it dissipates
    # the damping work is exact for average acceleration; what remains is the O(dt^2)
    # trapezoidal error of the nonlinear elastic force (3e-5 here, 3e-7 at dt = 1e-4): its
    # estimate from a run at dt / 2 (4/3 of the change, x FS)
    half = simulate_implicit(m, 0.2, 5e-4, "newmark", damping=(0.0, 2e-3), progress=False)
    assert damped.energy_drift_rel <= FS * 4 / 3 * abs(
        damped.energy_drift_rel - half.energy_drift_rel
    )


# ------------------------------------------------------------------------------------------
# interface, outputs, validation
# ------------------------------------------------------------------------------------------
def test_sampling_snapshots_and_dispatcher():
    m = make_model(**{"mesh.n_elements": 4})
    bdf1 = DynamicsSettings.from_case(
        m.case, integrator="bdf1", t_end=0.05, dt=1e-3, sample_dt=5e-3, snapshot_dt=1e-2
    )
    r = simulate(m, bdf1, progress=False)
    # sample times k dt: a few eps of t
    np.testing.assert_allclose(r.t, np.arange(11) * 5e-3, atol=8 * EPS * 0.05)
    np.testing.assert_allclose(r.t_snap, np.arange(6) * 1e-2, atol=8 * EPS * 0.05)
    assert r.q_snap.shape == (6, m.n_dof) and r.newton_iterations.shape == (50,)
    # at the stress-free start: zero up to the square of round-off (EA eps^2 L ~ 1e-23 J)
    assert r.kinetic[0] == 0 and abs(r.strain[0]) < 1e-20 and abs(r.gravity[0]) < 1e-20
    # the same functions at the same state: equal up to the order of the sums (16 eps)
    assert r.strain[-1] == pytest.approx(m.strain_energy(r.q_snap[-1]), rel=16 * EPS)
    assert r.gravity[-1] == pytest.approx(m.gravity_potential(r.q_snap[-1]), rel=16 * EPS)
    e = simulate(m, DynamicsSettings.from_case(m.case, t_end=0.002, dt=1e-6), progress=False)
    assert e.integrator == "central-difference" and e.newton_iterations is None


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"integrator": "rk4"}, "unknown implicit integrator"),
        ({"integrator": "bdf1", "rho_inf": 0.5}, "rho_inf"),
        ({"integrator": "newmark", "rho_inf": 0.5}, "rho_inf"),
        ({"integrator": "generalized-alpha", "beta": 0.3}, "beta"),
        ({"integrator": "generalized-alpha", "rho_inf": 1.5}, "rho_inf"),
        ({"integrator": "newmark", "beta": 0.0}, "beta"),
        ({"integrator": "newmark", "max_iter": 0}, "max_iter"),
        ({"integrator": "newmark", "tol": 0.0}, "tol"),
        ({"integrator": "newmark", "newton": "quasi"}, "newton"),
    ],
)
def test_bad_parameters_raise_value_error(kwargs, needle):
    m = make_model(**{"mesh.n_elements": 2})
    with pytest.raises(ValueError, match=needle):
        simulate_implicit(m, 0.01, 1e-3, progress=False, **kwargs)


def test_damage_is_staggered_like_the_explicit_solver():
    dmg = {"damage.enabled": True, "damage.threshold": 3e-5, "damage.softening": 2e-5}
    m = make_model(**{"mesh.n_elements": 10, **dmg})
    r = simulate_implicit(m, 0.1, 5e-4, "generalized-alpha", progress=False)
    assert r.damage_snap is not None and r.damage_snap.shape[0] == r.q_snap.shape[0]
    assert np.all(np.diff(r.damage_snap, axis=0) >= 0.0) and r.damage_snap[-1].max() > 0.1
    assert r.damping_work[-1] > 0.0  # released energy is booked as dissipation


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_implicit_json_and_netcdf_match_explicit_fields(capsys, tmp_path):
    base = ["simulate", "--json", "-q", "--set", "mesh.n_elements=4", "--t-end", "0.02"]
    code, out, _ = run_cli(capsys, *base, "--out", str(tmp_path / "cd.nc"))
    assert code == 0
    explicit = json.loads(out)
    code, out, _ = run_cli(
        capsys,
        *base,
        "--integrator",
        "generalized-alpha",
        "--rho-inf",
        "0.6",
        "--out",
        str(tmp_path / "ga.nc"),
    )
    assert code == 0
    d = json.loads(out)
    assert set(explicit) <= set(d)
    assert d["integrator"] == "generalized-alpha" and d["rho_inf"] == 0.6
    w1 = modal_analysis(make_model(**{"mesh.n_elements": 4}), n_modes=1).omega[0]
    assert d["dt"] == pytest.approx(2 * np.pi / w1 / 100, rel=8 * EPS)  # default T1/100
    assert d["dt"] > 50 * d["dt_critical"]  # no refusal above the critical step
    assert d["newton_iterations_total"] >= d["steps"] and d["newton_iterations_max"] >= 1
    ds_e = xr.open_dataset(tmp_path / "cd.nc")
    ds_i = xr.open_dataset(tmp_path / "ga.nc")
    assert set(ds_e.data_vars) <= set(ds_i.data_vars)
    assert ds_i["newton_iterations"].sizes["step"] == d["steps"]
    assert ds_i.attrs["integrator"] == "generalized-alpha" and ds_i.attrs["rho_inf"] == 0.6
    ds_e.close()
    ds_i.close()


@pytest.mark.parametrize(
    "args,code_expected,needle",
    [
        (["--integrator", "bdf1", "--rho-inf", "0.5"], 2, "--rho-inf"),
        (["--integrator", "generalized-alpha", "--rho-inf", "1.5"], 2, "--rho-inf"),
        (["--integrator", "newmark", "--max-iter", "0"], 2, "--max-iter"),
        (["--beta", "0.3"], 2, "--beta"),
        (
            ["--integrator", "newmark", "--dt", "1", "--max-iter", "1", "--max-halvings", "0"],
            1,
            "did not converge",
        ),
    ],
)
def test_cli_implicit_bad_input_and_failure(capsys, tmp_path, args, code_expected, needle):
    out = tmp_path / "x.nc"
    code, stdout, err = run_cli(
        capsys, "simulate", "--json", "-q", "--set", "mesh.n_elements=4", "--out", str(out), *args
    )
    assert code == code_expected
    assert needle in err and stdout == ""
    assert not out.exists()


def test_cli_implicit_dt_safety_above_one(capsys):
    code, out, _ = run_cli(
        capsys,
        "simulate",
        "--json",
        "-q",
        "--set",
        "mesh.n_elements=4",
        "--t-end",
        "0.01",
        "--integrator",
        "bdf1",
        "--dt-safety",
        "20",
    )
    assert code == 0
    d = json.loads(out)
    assert d["dt"] == pytest.approx(20 * d["dt_critical"], rel=4 * EPS)  # one product


def _sym_band_dense(lb: np.ndarray) -> np.ndarray:
    """Dense symmetric matrix from lower band storage ``lb[i-j, j] = A[i, j]``."""
    n = lb.shape[1]
    a = np.zeros((n, n))
    for d in range(lb.shape[0]):
        idx = np.arange(n - d)
        a[idx + d, idx] = lb[d, : n - d]
        a[idx, idx + d] = lb[d, : n - d]
    return a


def test_banded_factor_falls_back_to_lu_when_not_positive_definite():
    """The numba banded Cholesky / LU of the time loop against dense solves."""
    from ancf_beam.linalg import BandFactor as _Factor

    rng = np.random.default_rng(0)
    n = 24
    lb = rng.normal(size=(8, n))
    lb[0] += 4.0
    lb[0, 5] = -30.0  # symmetric indefinite
    dense = _sym_band_dense(lb)
    b = rng.normal(size=n)
    f = _Factor(lb)
    assert f.kind == "lu"
    # backward stable solves: residual within n eps |A| |x| (the standard bound, n = 24)
    x = f.solve(b.copy())
    np.testing.assert_array_less(np.abs(dense @ x - b), n * EPS * np.abs(dense) @ np.abs(x))
    lb_spd = lb.copy()
    lb_spd[0] = 80.0  # diagonally dominant: positive definite
    f = _Factor(lb_spd)
    assert f.kind == "cholesky"
    x = f.solve(b.copy())
    # two backward-stable solves of a well-conditioned matrix: within 2 n eps cond(A) |x|
    a_spd = _sym_band_dense(lb_spd)
    bound = 2 * n * EPS * np.linalg.cond(a_spd) * np.abs(x).max()
    np.testing.assert_allclose(x, np.linalg.solve(a_spd, b), rtol=0, atol=bound)
    with pytest.raises(np.linalg.LinAlgError):
        _Factor(np.zeros((8, n)))


def test_band_matvec_general_and_even_offsets():
    """The padded band products of the time loop (mass, damping) against dense products."""
    from ancf_beam.linalg import padded_band as _padded_band
    from ancf_beam.linalg import padded_band_matvec as _band_matvec

    m = make_model(**{"mesh.n_elements": 5})
    x = np.random.default_rng(2).normal(size=m.n_free)
    xp = np.zeros(m.n_free + 14)
    y = np.empty(m.n_free)
    mlb = m.mass_free_lower_band
    bp, even = _padded_band(mlb)
    assert even  # the consistent mass does not couple x and y
    _band_matvec(bp, even, x, xp, y)
    # a band product vs a dense one: the dot products' round-off, 15 eps |M| |x| (band width)
    np.testing.assert_array_less(
        np.abs(y - m.mass_dense() @ x), 15 * EPS * np.abs(m.mass_dense()) @ np.abs(x) + 1e-300
    )
    lb = np.random.default_rng(3).normal(size=mlb.shape)
    bp, even = _padded_band(lb)
    assert not even
    _band_matvec(bp, even, x, xp, y)
    dl = _sym_band_dense(lb)
    np.testing.assert_array_less(np.abs(y - dl @ x), 15 * EPS * np.abs(dl) @ np.abs(x) + 1e-300)


def test_effective_stiffness_factor_of_the_seed_beam():
    """Cholesky of K_T + c_a M at a deflected state (the matrix of the time loop): solves to
    round-off, and matches LAPACK's banded Cholesky solve."""
    import scipy.linalg as sla

    from ancf_beam.linalg import BandFactor as _Factor

    m = make_model(**{"mesh.n_elements": 12})
    q = m.reference()
    q[1::4] -= 2e-3 * np.linspace(0, 1, m.n_nodes) ** 2
    kt = m.tangent_band(q)[7:]  # lower band (8, n_free) of the general band storage
    lb = kt + 1e8 * m.mass_free_lower_band
    b = np.random.default_rng(1).normal(size=m.n_free)
    f = _Factor(lb)
    assert f.kind == "cholesky"
    x = f.solve(b.copy())
    ref = sla.solveh_banded(lb, b, lower=True)
    # two backward-stable Cholesky solves: within 2 n eps cond(A) |x|
    cond = np.linalg.cond(_sym_band_dense(lb))
    np.testing.assert_allclose(x, ref, rtol=0, atol=2 * m.n_free * EPS * cond * np.abs(ref).max())


def test_degenerate_initial_state_is_refused():
    m = make_model(**{"mesh.n_elements": 2})
    q0 = m.reference()
    q0[CLAMP:] = 0.0  # all free nodes at the origin with zero slope vectors
    with pytest.raises(ValueError, match="non-finite forces"):
        simulate_implicit(m, 0.01, 1e-3, "bdf1", q0=q0, progress=False)
