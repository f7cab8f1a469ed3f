"""Multibody core: constraint rows, force elements, redundancy detection, consistent states and
the cantilever as a special case of the multibody path (against the beam solvers)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.mbs.bodies import BeamBody, PointMass, RigidBody, ground
from ancf_beam.mbs.forces import PointForce, SpringDamper, Torque
from ancf_beam.mbs.integrators import IntegratorSettings, integrate
from ancf_beam.mbs.joints import Driver, Prismatic, Revolute, Weld
from ancf_beam.mbs.statics import constrained_modes, solve_static
from ancf_beam.mbs.system import System
from ancf_beam.results import RedundantConstraintError


def _beam(n_el=4, **over):
    return BeamModel(resolve_case({}, None, {"mesh.n_elements": n_el, **over}))


def _mixed_system() -> System:
    """Every row kind: rigid-rigid revolute, a beam interior point on a rigid marker, a weld of
    a beam node to a rigid body (tangent row), a prismatic joint on a line carried by a rotating
    body, a relative-angle row, a driver. Not meant to be consistent: rows are tested one by
    one at arbitrary states."""
    s = System(g=9.81, name="mixed")
    a = RigidBody("a", mass=1.0, inertia=0.1, position=(0.2, 0.1), angle=0.3)
    beam = BeamBody("beam", model=_beam(3, **{"beam.length": 0.6}), origin=(0.4, 0.0), angle=0.2)
    b = RigidBody("b", mass=2.0, inertia=0.2, position=(1.1, 0.2), angle=-0.4)
    c = RigidBody("c", mass=0.5, inertia=0.05, position=(1.3, -0.1), angle=0.7)
    s.add(a, beam, b, c)
    s.add(
        Revolute("ra", p=a.marker(0.1, -0.05), q=beam.point(0.25)),
        Weld("wb", a=beam.node(-1), b=b.marker(-0.1, 0.02)),
        Prismatic(
            "pc", p=c.marker(0.03, 0.01), through=b.marker(0.05, -0.02), direction=(0.8, 0.6)
        ),
        Driver("da", body=a, omega=3.0, theta0=0.1),
    )
    return s.finalize(check=False)


EPS = float(np.finfo(float).eps)
#: safety factor on an error estimate from refinement (Richardson)
SAFETY = 2.0


def _fd_bound(d_h, d_h2, scale, h, power=1):
    """Bound of a central-difference derivative's error (elementwise largest): its truncation,
    O(h^2), estimated by Richardson from the same difference at h / 2 (``4/3 |D(h) - D(h/2)|``)
    times SAFETY, plus the round-off of the difference: ``4 eps scale / h^power`` (``scale`` the
    magnitude of the differenced values' terms)."""
    trunc = 4.0 / 3.0 * float(np.max(np.abs(np.asarray(d_h) - np.asarray(d_h2))))
    return SAFETY * trunc + 4.0 * EPS * scale / h**power


def _phi(s, q, t=0.0):
    return s.constraints(q, None, t)["phi"]


def test_constraint_jacobian_gamma_and_phi_t_match_finite_differences():
    s = _mixed_system()
    rng = np.random.default_rng(3)
    q = s.q0 + 0.05 * rng.standard_normal(s.n)
    v = rng.standard_normal(s.n)
    acc = rng.standard_normal(s.n)
    t = 0.37
    c = s.constraints(q, v, t)
    scale = float(np.max(np.abs(q))) + 1.0  # the constraints' terms: coordinates, lever arms

    def jac_fd(h):
        return np.array(
            [(_phi(s, q + h * e, t) - _phi(s, q - h * e, t)) / (2 * h) for e in np.eye(s.n)]
        ).T

    h = 1e-6
    # measured 8.2e-11 (central differences, h = 1e-6): the round-off term dominates the bound
    assert np.abs(c["jacobian"] - jac_fd(h)).max() <= _fd_bound(jac_fd(h), jac_fd(h / 2), scale, h)
    # gamma = J a - d2/dt2 Phi(q(t), t) along q(t) = q + v t + a t^2 / 2
    h = 1e-4

    def along(tau):
        return _phi(s, q + v * tau + 0.5 * acc * tau * tau, t + tau)

    def gamma_fd(h):
        return c["jacobian"] @ acc - (along(h) - 2 * along(0.0) + along(-h)) / (h * h)

    # measured 5.8e-8 (second difference, h = 1e-4, O(h^2) truncation)
    assert np.abs(c["gamma"] - gamma_fd(h)).max() <= _fd_bound(
        gamma_fd(h), gamma_fd(h / 2), scale, h, 2
    )

    def phit_fd(h):
        return (_phi(s, q, t + h) - _phi(s, q, t - h)) / (2 * h)

    # measured 1.4e-10
    assert np.abs(c["phi_t"] - phit_fd(1e-6)).max() <= _fd_bound(
        phit_fd(1e-6), phit_fd(5e-7), scale, 1e-6
    )
    # the driver row has Phi_t = -omega exactly
    assert c["phi_t"][s.joint("da").first_row] == -3.0
    # the velocity-level residual is J v + Phi_t: round-off of the n-term products
    tol = 4 * EPS * s.n * float(np.max(np.abs(c["jacobian"]))) * float(np.max(np.abs(v)))
    assert np.allclose(c["dphi"], c["jacobian"] @ v + c["phi_t"], rtol=0, atol=tol + 4 * EPS * 3)


def test_constraint_hessian_rigid_angle_terms_match_finite_differences():
    """The tangent holds the in-band diagonal terms lam_r d2 Phi_r / dtheta^2 of the rigid angles
    (the line rows' cross terms are left out by design)."""
    s = _mixed_system()
    rng = np.random.default_rng(5)
    q = s.q0 + 0.05 * rng.standard_normal(s.n)
    lam = rng.standard_normal(s.m)
    k = s.tangent_dense(q, None, 0.0, lam) - s.tangent_dense(q, None, 0.0, np.zeros(s.m))
    scale = float(np.max(np.abs(lam))) * (float(np.max(np.abs(q))) + 1.0) * s.m

    def fd(i, h):
        e = np.zeros(s.n)
        e[i] = h
        return ((s.jacobian(q + e).T @ lam)[i] - (s.jacobian(q - e).T @ lam)[i]) / (2 * h)

    for body in ("a", "b", "c"):
        i = s.body(body).angle_index
        # measured <= 5e-11
        assert abs(k[i, i] - fd(i, 1e-6)) <= _fd_bound(fd(i, 1e-6), fd(i, 5e-7), scale, 1e-6)


def test_force_elements_forces_and_tangent_match_the_potential():
    s = System(g=0.0)
    a = RigidBody("a", mass=1.0, inertia=0.1, position=(0.0, 0.0), angle=0.2)
    p = PointMass("p", mass=0.5, position=(0.5, 0.3))
    b = RigidBody("b", mass=1.0, inertia=0.1, position=(1.0, 0.1), angle=-0.3)
    s.add(a, p, b)
    s.add(
        SpringDamper("s1", p=a.marker(0.1, 0.05), q=p.point(), k=300.0, l0=0.4),
        SpringDamper("s2", p=p.point(), q=b.marker(-0.1, 0.0), k=150.0),
        PointForce("f", point=b.marker(0.2, 0.1), force=(3.0, -2.0)),
        Torque("t", body=a, torque=1.5),
    )
    s.finalize()
    rng = np.random.default_rng(2)
    q = s.q0 + 0.05 * rng.standard_normal(s.n)
    v = np.zeros(s.n)
    f, _, pot = s.forces_at(q, v)

    def grad(h):
        return np.array(
            [
                (s.forces_at(q + h * e, v)[2] - s.forces_at(q - h * e, v)[2]) / (2 * h)
                for e in np.eye(s.n)
            ]
        )

    def kfd(h):
        return -np.array(
            [
                (s.forces_at(q + h * e, v)[0] - s.forces_at(q - h * e, v)[0]) / (2 * h)
                for e in np.eye(s.n)
            ]
        ).T

    h = 1e-6
    # Q = -dV/dq (the potential's terms: k (l - l0)^2 / 2, up to ~ 300 x 1 J; measured 2.5e-9 N)
    assert np.abs(f + grad(h)).max() <= _fd_bound(grad(h), grad(h / 2), abs(pot) + 300.0, h)
    kt = s.tangent_dense(q)
    # K = -dQ/dq (undamped springs: symmetric and complete; the forces' terms up to ~ 300 N);
    # measured 9.7e-9
    assert np.abs(kt - kfd(h)).max() <= _fd_bound(kfd(h), kfd(h / 2), 300.0 + 5.0, h)
    assert np.abs(f).max() > 1.0  # not a vacuous comparison


def test_spring_mass_oscillator_matches_the_closed_form():
    """A point mass on a spring to a fixed point (in line, no gravity): x(t) = A cos(w t)."""
    m, k, amp = 0.5, 200.0, 0.01
    s = System(g=0.0)
    p = s.add(PointMass("p", mass=m, position=(1.0 + amp, 0.0)))
    s.add(SpringDamper("spring", p=p.point(), q=ground(0.0, 0.0), k=k, l0=1.0))
    s.add(Prismatic("guide", p=p.point(), through=ground(0.0, 0.0), direction=(1.0, 0.0)))
    w = math.sqrt(k / m)
    st = IntegratorSettings("newmark", t_end=1.0, dt=1e-4, sample_dt=1e-3)
    res = integrate(s, st)
    x = res.q[:, 0] - 1.0
    ref = amp * np.cos(w * res.t)
    # average acceleration: relative period error (w h)^2 / 12 (+ O((w h)^4)), so the phase lags
    # by psi = w t (w h)^2 / 12 = 6.7e-6 rad at t = 1 s and |x - ref| <= A psi, plus Newton's
    # relative tolerance (1e-8) on the amplitude; measured 6.1e-8 m = 0.91 of the bound (the
    # lag is the leading term: the bound is sharp)
    psi = w * 1.0 * (w * 1e-4) ** 2 / 12 * (1 + (w * 1e-4) ** 2)
    assert np.abs(x - ref).max() <= amp * (psi + 1e-8)
    # linear: the trapezoidal rule conserves energy; Newton solves each (linear) step to
    # round-off: 16 eps of the energy per step; measured 1.4e-12
    assert res.energy_drift_rel() <= 16 * EPS * res.steps


def test_rigid_physical_pendulum_small_amplitude_period():
    """Rigid rod pinned at one end, small swing: T = 2 pi sqrt(I_O / (m g d))."""
    m, length, g = 2.0, 0.8, 9.81
    j = m * length**2 / 12.0
    th0 = -math.pi / 2 + 1e-3  # hanging, 1 mrad off
    s = System(g=g)
    rod = s.add(
        RigidBody(
            "rod",
            mass=m,
            inertia=j,
            angle=th0,
            position=(0.5 * length * math.cos(th0), 0.5 * length * math.sin(th0)),
        )
    )
    s.add(Revolute("pin", p=rod.marker(-0.5 * length, 0.0), q=ground()))
    period = 2 * math.pi * math.sqrt((j + m * (0.5 * length) ** 2) / (m * g * 0.5 * length))
    st = IntegratorSettings(
        "adaptive", t_end=2 * period, sample_dt=period / 400, rtol=1e-11, atol=1e-13
    )
    res = integrate(s, st)
    theta = res.q[:, 2] + math.pi / 2
    ref = 1e-3 * np.cos(2 * math.pi * res.t / period)
    # the small-amplitude solution's own error: the period is longer by th^2 / 16 (phase lag
    # 2 pi (t / T) th^2 / 16 times th) and the third harmonic th^3 / 192; the integration's
    # error from the run at rtol / 100 (kappa 10) times SAFETY; measured 6.9e-10 rad
    th = 1e-3
    theory = th * (2 * math.pi * 2 * th**2 / 16 + th**2 / 192)
    fine = integrate(
        s,
        IntegratorSettings(
            "adaptive", t_end=2 * period, sample_dt=period / 400, rtol=1e-13, atol=1e-15
        ),
    )
    est = float(np.max(np.abs(res.q[:, 2] - fine.q[:, 2]))) * 10 / 9 + 1e-11 * th
    assert np.abs(theta - ref).max() <= theory * (1 + 1e-3) + SAFETY * est


def test_redundant_constraints_are_detected_and_named():
    s = System()
    beam = s.add(BeamBody("beam", model=_beam(2)))
    s.add(Revolute("pin", p=beam.node(0), q=ground()))
    s.add(Revolute("pin_again", p=beam.node(0), q=ground()))
    with pytest.raises(RedundantConstraintError) as info:
        s.finalize()
    msg = str(info.value)
    assert "'pin_again.x' (joint 'pin_again') depends on 'pin.x'" in msg
    assert "'pin_again.y'" in msg and "rank of Phi_q = 2 for 4 equations" in msg
    assert info.value.joints == ["pin_again"]
    # a clamp plus a pin on the same node: the pin is redundant
    s = System()
    beam = s.add(BeamBody("beam", model=_beam(2)))
    s.add(Weld("clamp", a=beam.node(0), b=ground()), Revolute("pin", p=beam.node(0), q=ground()))
    with pytest.raises(RedundantConstraintError, match="'pin.x' .* depends on 'clamp.x'"):
        s.finalize()
    # a rigid slider locked twice in rotation
    s = System()
    sl = s.add(RigidBody("slider", mass=1.0, inertia=0.1, position=(0.3, 0.0)))
    s.add(Prismatic("guide", p=sl.marker(), through=ground(), direction=(1.0, 0.0)))
    s.add(Weld("fix", a=sl.marker(), b=ground(0.3, 0.0)))
    with pytest.raises(RedundantConstraintError) as info:
        s.finalize()
    assert info.value.rows == ["fix.y", "fix.angle"]


def test_consistent_velocities_satisfy_the_velocity_constraints():
    s = _mixed_system()
    q = s.project_positions(s.q0, 0.0)
    c = s.constraints(q, None, 0.0)
    assert np.abs(c["phi"]).max() <= 1e-12  # the projection's stopping tolerance (its default)
    v = s.consistent_velocities(q, 0.0)
    c = s.constraints(q, v, 0.0)
    # round-off of the mass-weighted solve: 8 eps x cond(J M^-1 J^T) x the largest velocity
    jac = c["jacobian"]
    cond = float(np.linalg.cond(jac @ np.linalg.solve(s.mass_dense(), jac.T)))
    vtol = 8 * EPS * cond * float(np.max(np.abs(v)))
    assert np.abs(c["dphi"]).max() <= vtol * float(np.max(np.abs(jac))) * s.n
    assert v[s.body("a").angle_index] == pytest.approx(3.0, abs=vtol)  # the driver's rate


# ------------------------------------------------------------------------------------------
# the cantilever through the multibody path (a weld to ground at node 0)
# ------------------------------------------------------------------------------------------
def _welded_cantilever(model):
    s = System(g=model.g)
    beam = s.add(BeamBody("beam", model=model))
    s.add(Weld("clamp", a=beam.node(0), b=ground(0.0, 0.0)))
    return s.finalize(), beam


def test_welded_cantilever_reproduces_the_static_tip_and_frequencies():
    from ancf_beam.solvers.modal import modal_analysis
    from ancf_beam.solvers.static import solve_static as beam_static

    case = resolve_case({}, None, {"mesh.n_elements": 10, "defect.lam": 0.4})
    s, beam = _welded_cantilever(BeamModel(case))
    eq = solve_static(s)
    ref = beam_static(BeamModel(case))
    tip = beam.node(-1).position(eq.q)
    # both solvers converge their Newton increment to round-off and agree to it: 8 eps times
    # the tangent's condition number (measured 0; 2.2e-9 while this solver stopped at the
    # residual floor)
    cond = float(np.linalg.cond(s.tangent_dense(eq.q)[4:, 4:]))  # without the clamped node
    assert tip[1] == pytest.approx(ref.tip_y, rel=8 * EPS * cond)
    assert tip[0] == pytest.approx(ref.tip_x, rel=8 * EPS * cond)
    modes = constrained_modes(s, n_modes=3)
    om = modal_analysis(BeamModel(case), n_modes=3).omega
    # null-space basis vs eliminated DOFs: eigenvalue round-off, eps ||K|| / lambda_k, so
    # omega_k to 4 eps (omega_max / omega_k)^2 / 2 (omega_max: the stiffest element mode);
    # measured 5e-10 relative
    from ancf_beam.solvers.critical import element_omega_max

    wmax = element_omega_max(BeamModel(case))
    np.testing.assert_allclose(
        modes.omega, om, rtol=0, atol=float(np.max(2 * EPS * (wmax / om) ** 2 * om))
    )


def test_welded_cantilever_explicit_and_implicit_runs_match_the_beam_solvers():
    from ancf_beam.solvers.explicit import simulate_explicit
    from ancf_beam.solvers.implicit import simulate_implicit

    case = resolve_case({}, None, {"mesh.n_elements": 8})
    s, beam = _welded_cantilever(BeamModel(case))
    res = integrate(
        s, IntegratorSettings("central-difference", t_end=0.01, dt=2e-6, sample_dt=1e-4)
    )
    ex = simulate_explicit(BeamModel(case), 0.01, 2e-6, sample_dt=1e-4, progress=False)
    tip = beam.node(-1).position(res.q)
    # the same central-difference positions (constant Jacobian, clamp rows exactly satisfied):
    # the two loops differ by round-off only, at most 8 eps of the deflection per step;
    # measured 6.6e-18 m against a 7e-4 m deflection
    assert res.t.shape == ex.t.shape
    assert np.abs(tip[:, 1] - ex.tip_y).max() <= 8 * EPS * res.steps * np.abs(ex.tip_y).max()
    assert np.abs(ex.tip_y).max() > 5e-4
    # energy balance of the run (end-of-step velocities): second order in dt, estimated from
    # the run at dt / 2 (Richardson, kappa 4) times SAFETY; measured 1.5e-8
    half = integrate(
        s, IntegratorSettings("central-difference", t_end=0.01, dt=1e-6, sample_dt=1e-4)
    )
    drift = res.energy_drift_rel()
    assert drift <= SAFETY * abs(drift - half.energy_drift_rel()) * 4 / 3
    res = integrate(
        s,
        IntegratorSettings(
            "generalized-alpha", t_end=0.02, dt=1e-4, sample_dt=1e-4, rho_inf=0.8, tol=1e-10
        ),
    )
    im = simulate_implicit(
        BeamModel(case),
        0.02,
        1e-4,
        "generalized-alpha",
        rho_inf=0.8,
        progress=False,
        newton="full",
        tol=1e-10,
    )
    # the same scheme, Newton tolerances apart: each step's increments stop within tol of the
    # displacement, at most tol |tip| per step summed over the steps; measured 3.0e-13 m
    bound = 1e-10 * res.steps * np.abs(im.tip_y).max()
    assert np.abs(beam.node(-1).position(res.q)[:, 1] - im.tip_y).max() <= bound


def test_two_welded_cantilevers_equal_one_of_twice_the_elements():
    """10 + 10 elements welded end to end (positions and slopes shared) = 20 elements."""
    half = resolve_case({}, None, {"mesh.n_elements": 10, "beam.length": 0.5})
    full = resolve_case({}, None, {"mesh.n_elements": 20, "beam.length": 1.0})
    s = System(g=9.81)
    b1 = s.add(BeamBody("b1", model=BeamModel(half)))
    b2 = s.add(BeamBody("b2", model=BeamModel(half), origin=(0.5, 0.0)))
    s.add(Weld("clamp", a=b1.node(0), b=ground()), Weld("joint", a=b1.node(-1), b=b2.node(0)))
    s.finalize()
    eq = solve_static(s, rtol=1e-12)
    tip = b2.node(-1).position(eq.q)
    one, beam = _welded_cantilever(BeamModel(full))
    ref = beam.node(-1).position(solve_static(one, rtol=1e-12).q)
    # the two discretisations are identical, so only the solves' round-off separates them: 8
    # eps times the tangent's condition number; measured 2.5e-16 m (1.8e-13 relative)
    cond = float(np.linalg.cond(one.tangent_dense(solve_static(one, rtol=1e-12).q)[4:, 4:]))
    assert abs(tip[1] - ref[1]) <= 8 * EPS * cond * abs(ref[1])
    assert abs(tip[0] - ref[0]) <= 8 * EPS * cond * 1.0
    assert tip[1] < -1e-3  # a real deflection (1.395 mm linear theory)


def test_user_function_driver_equals_the_constant_speed_driver():
    """theta(t) given as a Python function (evaluated by the integrators every step) against
    the built-in theta0 + omega t, on a rigid slider-crank."""

    def build(function):
        s = System(g=9.81)
        crank = RigidBody(
            "crank", mass=0.3, inertia=1e-5, position=(0.025, 0.0), angular_velocity=100.0
        )
        rod = RigidBody("rod", mass=0.2, inertia=2e-4, position=(0.11, 0.0))
        sl = RigidBody("slider", mass=0.1, inertia=1e-5, position=(0.17, 0.0))
        s.add(crank, rod, sl)
        drive = (
            Driver("drive", body=crank, function=function)
            if function
            else Driver("drive", body=crank, omega=100.0)
        )
        s.add(
            Revolute("pivot", p=crank.marker(-0.025, 0.0), q=ground()),
            drive,
            Revolute("pin", p=crank.marker(0.025, 0.0), q=rod.marker(-0.06, 0.0)),
            Revolute("wrist", p=rod.marker(0.06, 0.0), q=sl.marker()),
            Prismatic("guide", p=sl.marker(), through=ground(), direction=(1.0, 0.0)),
        )
        return s

    for integ in ("generalized-alpha", "central-difference"):
        st = IntegratorSettings(integ, t_end=0.02, dt=2e-5, sample_dt=1e-4)
        a = integrate(build(None), st)
        b = integrate(build(lambda t: (100.0 * t, 100.0, 0.0)), st)
        # the same arithmetic (theta0 + omega t evaluated in Python or in numba): a different
        # rounding of omega t moves each step by a few ulps of the coordinates (0.2 m), summed
        # over the steps; measured 0.0 for both integrators
        assert np.abs(a.q - b.q).max() <= 8 * EPS * a.steps * 0.2, integ
        assert np.ptp(a.q[:, 6]) > 0.01  # the slider (coordinates 6..8) moves
