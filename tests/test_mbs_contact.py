"""Circle contact force element (FE_CONTACT): forces, tangent, potential and carried state
against finite differences, power balance and an analytic equilibrium."""

import math

import numpy as np
import pytest

from ancf_beam.config.contact import contact_law, friction_law
from ancf_beam.mbs import core
from ancf_beam.mbs.bodies import PointMass, RigidBody, ground
from ancf_beam.mbs.forces import CircleContact
from ancf_beam.mbs.integrators import IntegratorSettings, integrate
from ancf_beam.mbs.system import System

LAWS = {
    "hertz": {"law": "hertz", "K": 1.0e9},
    "lankarani-nikravesh": {"law": "lankarani-nikravesh", "K": 1.0e9, "restitution": 0.7},
    "kelvin-voigt": {"law": "kelvin-voigt", "k": 1.0e7, "c": 200.0},
}


def _pair(inside, law, friction=None):
    """Two rigid bodies with off-centre circle markers, overlapping by about 1-3 mm."""
    s = System(g=0.0)
    a = s.add(RigidBody("a", mass=2.0, inertia=0.1, position=(0.0, 0.0)))
    pos = (0.0007, 0.0003) if inside else (0.017, 0.001)
    b = s.add(RigidBody("b", mass=3.0, inertia=0.2, position=pos, angle=0.3))
    c = s.add(
        CircleContact(
            "c",
            p=a.marker(0.001, 0.002),
            q=b.marker(0.003, -0.001),
            inside=inside,
            r_p=0.01,
            r_q=0.0095 if inside else 0.01,
            law=contact_law(law, "contact"),
            friction=friction,
        )
    )
    s.finalize()
    s.fst[0] = (0.5, 1.0, 1.0, 0.0)  # in contact, approach speed 0.5 m/s
    return s, c


EPS = float(np.finfo(float).eps)
SAFETY = 2.0  # on an error estimate from refinement (Richardson)


def _fd_bound(d_h, d_h2, scale, h):
    """A central difference's error: SAFETY x 4/3 |D(h) - D(h/2)| (its O(h^2) truncation by
    Richardson) + 4 eps scale / h (round-off; ``scale``: the magnitude of the differenced
    values' round-off)."""
    return SAFETY * 4.0 / 3.0 * float(np.max(np.abs(d_h - d_h2))) + 4.0 * EPS * scale / h


@pytest.mark.parametrize("inside", [False, True])
@pytest.mark.parametrize("name", list(LAWS))
def test_contact_tangent_and_potential_match_finite_differences(inside, name):
    s, c = _pair(inside, LAWS[name])
    q = s.q0.copy()
    v = np.array([0.1, 0.2, 1.0, -0.3, 0.1, -2.0])
    assert c.evaluate(q, v, s.fst[0])["delta"] > 5e-4
    zero = np.zeros(6)
    eye = np.eye(6)
    # central differences: the truncation estimated by Richardson from h and h / 2 (4/3 of the
    # difference, x SAFETY) plus the round-off 4 eps |term| / h, the terms being the forces (or
    # potential) computed from coordinates of 1e-2 m with overlaps of 1e-3 m: the overlap's
    # cancellation makes them 4 eps |F| (|x| / delta) / h

    def kfd(h):
        return np.column_stack(
            [
                -(s.forces_at(q + h * eye[j], zero)[0] - s.forces_at(q - h * eye[j], zero)[0])
                / (2 * h)
                for j in range(6)
            ]
        )

    k = s.tangent_dense(q, zero)
    f = s.forces_at(q, zero)[0]
    delta = c.evaluate(q, v, s.fst[0])["delta"]
    cancel = 0.02 / delta
    h = 1e-10
    # measured relative error 2e-8 (h = 1e-10 m on a 1 mm overlap)
    bound = _fd_bound(kfd(h), kfd(h / 2), np.max(np.abs(f)) * cancel, h)
    assert np.max(np.abs(k - kfd(h))) <= bound

    def cfd(hv):
        return np.column_stack(
            [
                -(s.forces_at(q, v + hv * eye[j])[0] - s.forces_at(q, v - hv * eye[j])[0])
                / (2 * hv)
                for j in range(6)
            ]
        )

    cv = s.tangent_dense(q, v, c_v=1.0) - s.tangent_dense(q, v, c_v=0.0)
    fv = s.forces_at(q, v)[0]
    # damping tangent (the law's dF/d delta_dot along n n^T): measured 1.3e-8 relative
    assert np.max(np.abs(cv - cfd(1e-6))) <= _fd_bound(
        cfd(1e-6), cfd(5e-7), np.max(np.abs(fv)), 1e-6
    )
    if name != "kelvin-voigt":
        assert (np.max(np.abs(cfd(1e-6))) > 0) == (name != "hertz")

    def grad(h):
        return np.array(
            [
                s.forces_at(q + h * eye[j], zero)[2] - s.forces_at(q - h * eye[j], zero)[2]
                for j in range(6)
            ]
        ) / (2 * h)

    pot = s.forces_at(q, zero)[2]
    # Q = -dV/dq for the elastic part: measured 2e-8 relative
    assert np.max(np.abs(grad(h) + f)) <= _fd_bound(grad(h), grad(h / 2), abs(pot) * cancel, h)


@pytest.mark.parametrize("inside", [False, True])
def test_contact_power_equals_normal_and_friction_power(inside):
    """Q . q' = -F_n delta' + F_t v_t: the generalized forces (translations and the friction
    moments on the angles) do the work of the contact forces at the contact points."""
    fr = friction_law({"law": "coulomb-tanh", "mu": 0.3, "v_ref": 0.01}, "friction")
    s, c = _pair(inside, LAWS["lankarani-nikravesh"], fr)
    q = s.q0.copy()
    v = np.array([0.1, 0.2, 1.0, -0.3, 0.1, -2.0])
    r = c.evaluate(q, v, s.fst[0])
    assert r["F_n"] > 0 and abs(r["F_t"]) > 0.05 * r["F_n"]
    f = s.forces_at(q, v)[0]
    power = -r["F_n"] * r["delta_dot"] + r["F_t"] * r["v_t"]
    # round-off only: a 6-term product of forces and speeds, each term below |F| |v| (measured
    # 2e-16 relative)
    scale = np.max(np.abs(f)) * np.max(np.abs(v)) * 6
    assert abs(f @ v - power) <= 16 * EPS * scale
    assert r["F_t"] * r["v_t"] < 0  # friction dissipates
    # v_t by finite differences of the contact points' material positions
    n = np.array([r["e_x"], r["e_y"]]) / math.hypot(r["e_x"], r["e_y"])
    t = np.array([-n[1], n[0]])
    s_ = -1.0 if inside else 1.0

    def material(qq, body, marker, radius, sign):
        """Position of the body-fixed point that sits at the contact at q."""
        o = body.offset
        th = qq[o + 2]
        rot = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
        th0 = q[o + 2]
        rot0 = np.array([[math.cos(th0), -math.sin(th0)], [math.sin(th0), math.cos(th0)]])
        centre0 = marker.position(q)
        local = rot0.T @ (centre0 + sign * radius * n - q[o : o + 2])
        return qq[o : o + 2] + rot @ local

    a, b = s.bodies

    def vt_fd(h):
        rel = [
            material(q + k * h * v, b, c.q, c.r_q, -s_)
            - material(q + k * h * v, a, c.p, c.r_p, 1.0)
            for k in (-1, 1)
        ]
        return t @ (rel[1] - rel[0]) / (2 * h)

    # central difference of material positions (0.02 m): Richardson truncation + round-off;
    # measured 1e-9 relative
    assert abs(r["v_t"] - vt_fd(1e-7)) <= _fd_bound(vt_fd(1e-7), vt_fd(5e-8), 0.02, 1e-7)


def test_journal_resting_in_bearing_is_in_equilibrium():
    """A journal (point mass, radius 9.5 mm) inside a ground bearing (10 mm) under gravity at
    the Hertz penetration delta = (m g / K)^(1/1.5): zero net force, and it stays there."""
    m, g, k_h = 0.5, 9.81, 2.0e9
    law = contact_law({"law": "lankarani-nikravesh", "K": k_h, "restitution": 0.8}, "contact")
    delta = (m * g / k_h) ** (1 / 1.5)
    s = System(g=g)
    j = s.add(PointMass("journal", mass=m, position=(0.0, -(0.0005 + delta))))
    s.add(
        CircleContact(
            "bearing", p=ground(0.0, 0.0), q=j.point(), inside=True, r_p=0.010, r_q=0.0095, law=law
        )
    )
    s.finalize()
    f = s.forces_at(s.q0, np.zeros(2))[0]
    # round-off: the penetration |y| - c computed from y ~ 5e-4 m carries 4 eps |y| of it, the
    # force n K delta^(n-1) times that (measured 0)
    pen_err = 4 * EPS * (0.0005 + delta)
    assert np.max(np.abs(f)) <= 1.5 * k_h * delta**0.5 * pen_err + 4 * EPS * m * g
    assert s.contact_gaps(s.q0)[0] == pytest.approx(-delta, abs=pen_err)
    res = integrate(s, IntegratorSettings("generalized-alpha", t_end=0.02, sample_dt=1e-3, dt=1e-4))
    drift = np.max(np.abs(res.q[:, 1] - s.q0[1]))
    # at rest in a stable equilibrium: each step's Newton stops within its tolerance (1e-8 of
    # the forces, m g) of it, a load that moves the journal by at most twice its static
    # deflection on the contact stiffness 1.5 K delta^0.5 (a step load), plus the force's
    # round-off above; measured 6.7e-16 m (0.05 of the bound)
    k_c = 1.5 * k_h * delta**0.5
    assert drift <= 2 * (1e-8 * m * g + 4 * EPS * m * g) / k_c + pen_err
    assert np.all(res.force_state[:, 0, core.S_FLAG] == 1.0)  # in contact from t = 0
    assert np.all(res.force_state[:, 0, core.S_IMPACTS] == 1.0)


def test_contact_state_records_onset_and_separation():
    """The carried state: v0 = closing speed at the first penetrating step, flag cleared after
    separation; contact_gaps is minus the penetration."""
    law = contact_law({"law": "hertz", "K": 1.0e9}, "contact")
    s = System(g=0.0)
    a = s.add(PointMass("a", mass=1.0, position=(0.0, 0.0)))
    b = s.add(PointMass("b", mass=1.0, position=(0.03, 0.0)))
    s.add(CircleContact("c", p=a.point(), q=b.point(), r_p=0.01, r_q=0.01, law=law))
    s.finalize()
    gaps = np.zeros(1)
    q = np.array([0.0, 0.0, 0.0199, 0.0])
    v = np.array([0.0, 0.0, -0.7, 0.0])  # closing at 0.7 m/s
    core.contact_gaps(q, s.data, gaps)
    # 0.0199 - 0.02: the round-off of the coordinates (4 eps 0.02)
    assert gaps[0] == pytest.approx(-1e-4, abs=4 * EPS * 0.02)
    core.update_force_state(q, v, 0.1, s.data, s.fst)
    assert tuple(s.fst[0]) == (0.7, 1.0, 1.0, 0.1)  # copied, not computed
    core.update_force_state(q, -v, 0.2, s.data, s.fst)  # opening but overlapping: still in
    assert s.fst[0, core.S_FLAG] == 1.0
    q[2] = 0.0201
    core.update_force_state(q, -v, 0.3, s.data, s.fst)  # apart and opening: cleared
    assert s.fst[0, core.S_FLAG] == 0.0 and s.fst[0, core.S_IMPACTS] == 1.0


def test_allocation_free_gap_matches_the_force_kernel_geometry():
    """core.contact_delta (used every step) against contact_kinematics (used by the forces)
    for rigid markers, inside and outside."""
    for inside in (False, True):
        s, c = _pair(inside, LAWS["hertz"])
        v = np.array([0.1, 0.2, 1.0, -0.3, 0.1, -2.0])
        d, dd = core.contact_delta(s.fei[0], s.fef[0], s.q0, v)
        r = c.evaluate(s.q0, v)
        # two evaluations of the same geometry: round-off of the coordinates (0.02 m) and the
        # speeds (2 m/s, with the lever arms: 4 eps x 2.1 m/s)
        assert d == pytest.approx(r["delta"], abs=8 * EPS * 0.02)
        assert dd == pytest.approx(r["delta_dot"], abs=8 * EPS * 2.1)


@pytest.mark.parametrize(
    "friction",
    [{"law": "coulomb-tanh", "mu": 0.3, "v_ref": 1e-4}, {"law": "coulomb-transition", "mu": 0.3}],
    ids=["tanh", "transition"],
)
def test_spinning_disc_on_the_ground_ends_rolling(friction):
    """A uniform disc (J = m r^2 / 2) set down spinning at w0 without translation: friction
    conserves its angular momentum about the contact point, J w - m r v_x = J w0, so with the
    final slip s = v_x + w r it ends at v_x = (s - w0 r) / 3 (rolling: s = 0). The check covers
    the friction moments and the rotation's share of the sliding speed."""
    m, r, g, k_h, big = 1.0, 0.05, 9.81, 1.0e8, 1.0e4
    w0 = 20.0
    law = contact_law({"law": "lankarani-nikravesh", "K": k_h, "restitution": 0.5}, "contact")
    s = System(g=g)
    disc = s.add(
        RigidBody(
            "disc",
            mass=m,
            inertia=0.5 * m * r * r,
            position=(0.0, r - (m * g / k_h) ** (2 / 3)),
            angular_velocity=w0,
        )
    )
    s.add(
        CircleContact(
            "ground",
            p=ground(0.0, -big),
            q=disc.marker(),
            r_p=big,
            r_q=r,
            law=law,
            friction=friction_law(friction, "friction"),
        )
    )
    s.finalize()
    res = integrate(s, IntegratorSettings("generalized-alpha", t_end=0.2, sample_dt=1e-3, dt=1e-5))
    vx, w = res.v[-1, 0], res.v[-1, 2]
    slip = vx + w * r
    # the "ground" is a circle of radius 1e4 m: its normal tilts by x / R over the distance the
    # disc rolls, so angular momentum about the contact changes by that share (measured 2.2e-6;
    # x / R = 2.2e-6 at x = 2.2 cm), plus the integrator's error from the run at dt / 2 (kappa 2:
    # the friction law's transitions) x SAFETY
    half = integrate(s, IntegratorSettings("generalized-alpha", t_end=0.2, sample_dt=1e-3, dt=5e-6))
    tilt = abs(res.q[-1, 0] - res.q[0, 0]) / big
    est = 2 * abs(vx - half.v[-1, 0])
    assert abs(vx - (slip - w0 * r) / 3.0) <= 2 * tilt * abs(w0 * r / 3) + SAFETY * est
    if friction["law"] == "coulomb-tanh":
        assert abs(slip) < 1e-8  # rolling (measured 5e-10 m/s)
    else:  # no friction below v_static: the disc keeps slipping just below it
        assert 0.5e-3 < slip <= 1.0e-3


@pytest.mark.parametrize("integrator", ["adaptive", "generalized-alpha"])
def test_contact_episode_ends_at_the_separation(integrator):
    """An undamped Hertz impact of two discs followed by free flight: the contact record's
    episode ends at the gap's zero also when the step after the separation is long (the
    adaptive integrator ends a step on the separation, where delta = 0 keeps the contact flag
    until the next step: the end used to be booked at the end of that step, t_end here, and
    the episode counted as continuous contact). Its duration is the closed form's."""
    from ancf_beam.references.impact import hertz_duration_integral

    k_h, m, v, gap = 1.0e9, 0.5, 2.0, 1.0e-3
    law = contact_law({"law": "hertz", "K": k_h}, "contact")
    s = System(g=0.0)
    a = s.add(PointMass("a", mass=m, velocity=(v, 0.0)))
    b = s.add(PointMass("b", mass=m, position=(0.02 + gap, 0.0)))
    s.add(CircleContact("c", p=a.point(), q=b.point(), r_p=0.01, r_q=0.01, law=law))
    s.finalize()
    st = {
        "adaptive": IntegratorSettings(
            "adaptive", t_end=3e-3, sample_dt=1e-3, method="DOP853", rtol=1e-10, atol=1e-14
        ),
        "generalized-alpha": IntegratorSettings(
            "generalized-alpha",
            t_end=3e-3,
            sample_dt=1e-3,
            dt=1e-3,
            dt_contact=1e-6,
            step_control=True,
            onset_tol=1e-9,
        ),
    }[integrator]
    res = integrate(s, st)
    m_eff = 0.5 * m
    d_max = (2.5 * m_eff * v * v / (2.0 * k_h)) ** 0.4
    duration = 2.0 * d_max / v * hertz_duration_integral(1.5)
    (ep,) = res.contact.episodes
    assert ep[1] == pytest.approx(gap / v, abs=1e-9)  # free flight: the onset is the gap / v
    # adaptive: rtol 1e-10 over < 1e3 steps (1e-7 of the duration; measured 1.2e-11);
    # generalized-alpha: the end interpolated inside one step of dt_contact = 1e-6 s, the
    # onset located to onset_tol / v = 5e-10 s and the impact's O((pi dt / duration)^2) =
    # 6e-5 relative error: 2e-6 s (measured 2.7e-9 s)
    tol = 1e-7 * duration if integrator == "adaptive" else 2e-6
    assert ep[2] - ep[1] == pytest.approx(duration, abs=tol)
    assert res.steps < 1000 or integrator != "adaptive"  # the count the bound assumes


@pytest.mark.parametrize("inside", [False, True])
@pytest.mark.parametrize(
    "friction",
    [
        {"law": "coulomb-tanh", "mu": 0.1, "v_ref": 1e-3},
        {"law": "coulomb-transition", "mu": 0.1, "v_static": 1e-3, "v_dynamic": 1e-2},
        {"law": "stribeck", "mu": 0.1, "mu_static": 0.15, "v_stribeck": 5e-3, "v_ref": 1e-3},
    ],
)
def test_circle_contact_friction_velocity_tangent_matches_finite_differences(inside, friction):
    """The circle contact's iteration matrix carries the friction's viscous share
    ``c_v mu'(v_t) F_n t t^T`` (core._friction_viscous). Between two point masses with a Hertz
    law (no damping: F_n does not depend on the speeds) it is all of ``-dQ/dv``, so it must
    equal the finite differences of the generalized force in the velocities. (Left out, a
    steep law made Newton diverge on a light journal: the flagship's ANCF rod at mu 0.1.)"""
    law = contact_law({"law": "hertz", "K": 1.0e9}, "contact")
    s = System(g=0.0)
    a = s.add(PointMass("a", mass=1.0, position=(0.0, 0.0)))
    pos = (0.0006, 0.0006) if inside else (0.0195, 0.0012)  # 0.35 mm / 0.46 mm overlap
    b = s.add(PointMass("b", mass=1.0, position=pos))
    c = s.add(
        CircleContact(
            "c",
            p=a.point(),
            q=b.point(),
            inside=inside,
            r_p=0.01,
            r_q=0.0095 if inside else 0.01,
            law=law,
            friction=friction_law(friction, "friction"),
        )
    )
    s.finalize()
    s.fst[0] = (0.5, 1.0, 1.0, 0.0)
    q = s.q0.copy()
    eye = np.eye(4)
    for v_t in (4e-3, -2e-3, 7e-4):  # on the law's slopes (and flat: transition below v_static)
        r0 = c.evaluate(q, np.zeros(4), s.fst[0])
        t = np.array([-r0["e_y"], r0["e_x"]]) / math.hypot(r0["e_x"], r0["e_y"])
        v = np.concatenate([[0.0, 0.0], t * v_t])  # Q slides along t, no normal speed
        r = c.evaluate(q, v, s.fst[0])
        assert r["F_n"] > 0 and r["v_t"] == pytest.approx(v_t, rel=1e-12)
        cv = s.tangent_dense(q, v, c_v=1.0) - s.tangent_dense(q, v, c_v=0.0)

        def cfd(hv, v=v):
            return np.column_stack(
                [
                    -(s.forces_at(q, v + hv * eye[j])[0] - s.forces_at(q, v - hv * eye[j])[0])
                    / (2 * hv)
                    for j in range(4)
                ]
            )

        hv = 1e-6  # well inside every slope's range (v_ref, the ramp: 1 mm/s and more)
        fd = cfd(hv)
        bound = _fd_bound(fd, cfd(hv / 2), abs(r["F_n"]) * 0.1, hv)
        assert np.max(np.abs(cv - fd)) <= bound
        flat = friction["law"] == "coulomb-transition" and abs(v_t) < 1e-3
        assert (np.max(np.abs(fd)) > 1e3 * bound) == (not flat)
