"""Line contact force element (FE_LINE: a point or disc against a line or segment): geometry,
forces, tangent, potential and power against finite differences and independent formulas; an
impact against the closed-form linear impact, a block sliding to rest against Coulomb's law, an
elastic bounce against energy conservation and a slider rattling in its guide against the
energy estimate of its corners' penetration (with a negative control)."""

import math

import numpy as np
import pytest

from ancf_beam.config.contact import contact_law, friction_law
from ancf_beam.mbs import core
from ancf_beam.mbs.bodies import PointMass, RigidBody, ground
from ancf_beam.mbs.contact import law_coefficient
from ancf_beam.mbs.events import time_tolerance
from ancf_beam.mbs.forces import CircleContact, Contact, LineContact
from ancf_beam.mbs.integrators import IntegratorSettings, integrate
from ancf_beam.mbs.settings import explicit_dt_bounds
from ancf_beam.mbs.system import System
from ancf_beam.references import impact as ref

EPS = float(np.finfo(float).eps)
#: safety factor on an error estimate from refinement (as the pipeline's estimate_factor)
SAFETY = 2.0

LAWS = {
    "hertz": {"law": "hertz", "K": 1.0e9},
    "lankarani-nikravesh": {"law": "lankarani-nikravesh", "K": 1.0e9, "restitution": 0.7},
    "kelvin-voigt": {"law": "kelvin-voigt", "k": 1.0e7, "c": 200.0},
}
TANH = {"law": "coulomb-tanh", "mu": 0.3, "v_ref": 0.01}


def _law(block):
    return contact_law(block, "contact")


def _rot(th):
    return np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])


def _cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def _fd_bound(d_h, d_h2, scale, h):
    """A central difference's error: SAFETY x 4/3 |D(h) - D(h/2)| (its O(h^2) truncation by
    Richardson) + 4 eps scale / h (round-off; ``scale``: the magnitude of the differenced
    values' round-off)."""
    return SAFETY * 4.0 / 3.0 * float(np.max(np.abs(d_h - d_h2))) + 4.0 * EPS * scale / h


def _estimate(x, fines, kappa, floor=0.0):
    """Error estimate of ``x`` from the same quantity of the refined runs ``fines`` (finest
    last; each refinement shrinks the error at least ``kappa`` times): ``kappa / (kappa - 1)``
    times the largest difference of successive levels (Richardson; with two refined runs the
    larger difference covers a rate not yet asymptotic) plus ``floor`` (an adaptive run: the
    error one step admits, which the difference may miss by coincidence). As the pipeline's
    mechanism checks (studies.mechanisms)."""
    levels = [np.asarray(x, float)] + [np.asarray(f, float) for f in fines]
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(levels[:-1], levels[1:], strict=True))
    return diff * kappa / (kappa - 1.0) + floor


# ------------------------------------------------------------------------------------------
# forces, tangent, potential, power
# ------------------------------------------------------------------------------------------
TH_L, A_Q, D0 = 0.2, np.array([0.01, 0.005]), np.array([1.0, 0.1]) / math.hypot(1.0, 0.1)
TH_B, A_P, R_DISC = 0.3, np.array([0.004, -0.003]), 0.01


def _pair(name, friction=TANH, delta=1.0e-3):
    """A rigid body's off-centre disc (radius 10 mm) against a line through an off-centre
    marker of a rotated rigid body, penetrating by ``delta``: the body is placed by the test's
    own geometry (n = R(theta_L) (d0 turned +90 deg), g = n . (x_P - x_Q) - r)."""
    n_l = _rot(TH_L) @ np.array([-D0[1], D0[0]])
    x_l = np.array([0.0, 0.0])
    x_q = x_l + _rot(TH_L) @ A_Q
    base = x_q + 0.05 * (_rot(TH_L) @ D0)  # the disc's marker 5 cm along the line
    x_p = base + (R_DISC - delta) * n_l
    x_b = x_p - _rot(TH_B) @ A_P
    s = System(g=0.0)
    line = s.add(RigidBody("line", mass=2.0, inertia=0.1, position=tuple(x_l), angle=TH_L))
    b = s.add(RigidBody("b", mass=3.0, inertia=0.2, position=tuple(x_b), angle=TH_B))
    c = s.add(
        LineContact(
            "c",
            p=b.marker(*A_P),
            through=line.marker(*A_Q),
            direction=tuple(D0),
            r=R_DISC,
            law=_law(LAWS[name]),
            friction=None if friction is None else friction_law(friction, "friction"),
        )
    )
    s.finalize()
    s.fst[0] = (0.5, 1.0, 1.0, 0.0)  # in contact, approach speed 0.5 m/s
    return s, c


def _contact_point_speed(s, q, v):
    """Independent sliding speed: the velocities of the two bodies' material points at the
    contact point x_c = x_P - r n, along d (rigid-body kinematics written out here)."""
    th_l, th_b = q[2], q[5]
    d = _rot(th_l) @ D0
    n = np.array([-d[1], d[0]])
    x_p = q[3:5] + _rot(th_b) @ A_P
    x_c = x_p - R_DISC * n

    def material(x0, v0, w):
        rel = x_c - x0
        return v0 + w * np.array([-rel[1], rel[0]])

    v_b = material(q[3:5], v[3:5], v[5])
    v_l = material(q[0:2], v[0:2], v[2])
    return float(d @ (v_b - v_l)), d, n


@pytest.mark.parametrize("name", list(LAWS))
def test_line_contact_tangent_potential_and_power_match_independent_computations(name):
    """An off-centre disc of a rotated rigid body against a line on a rotated, off-centre
    marker of another rigid body (every term of the kinematics present): the penetration
    against the test's geometry; the Newton tangent (stiffness at rest, damping and friction
    slope at a closing speed without sliding) and the potential's gradient against central
    differences of the forces (bounds: Richardson from h and h/2 x SAFETY plus round-off
    4 eps |F| / h, amplified by the overlap's cancellation 0.05 / 1e-3; measured relative errors
    1e-9 to 1e-11); the power of the generalized forces against that of the contact forces
    with v_t from the material points' kinematics written out here, and delta' against central
    differences."""
    s, c = _pair(name)
    q = s.q0.copy()
    zero = np.zeros(6)
    r0 = c.evaluate(q, zero, s.fst[0])
    # the penetration set by the test's geometry: round-off of coordinates of 5e-2 m
    assert r0["delta"] == pytest.approx(1.0e-3, abs=16 * EPS * 0.05)
    eye = np.eye(6)
    cancel = 0.05 / 1.0e-3  # forces computed from coordinates 50 times the overlap

    # stiffness at rest (friction zero at v_t = 0): central differences, Richardson + round-off
    def kfd(h):
        return np.column_stack(
            [
                -(s.forces_at(q + h * eye[j], zero)[0] - s.forces_at(q - h * eye[j], zero)[0])
                / (2 * h)
                for j in range(6)
            ]
        )

    f = s.forces_at(q, zero)[0]
    h = 1e-10
    k = s.tangent_dense(q, zero)
    assert np.max(np.abs(k - kfd(h))) <= _fd_bound(
        kfd(h), kfd(h / 2), np.max(np.abs(f)) * cancel, h
    )
    # symmetric (the iteration matrix is factorised as such), to the round-off of sums of
    # entries (repeated columns add up in another order)
    assert np.max(np.abs(k - k.T)) <= 8 * EPS * np.max(np.abs(k))

    # damping tangent at a velocity that closes the contact without sliding (v_t = 0 set by
    # the independent kinematics): the law's dF/d delta_dot and the friction's mu'(0) F_n
    v = np.array([0.1, 0.2, 1.0, -0.3, 0.1, -2.0])
    vt, d, _ = _contact_point_speed(s, q, v)
    v[3:5] -= vt * d
    r = c.evaluate(q, v, s.fst[0])
    assert abs(r["v_t"]) <= 16 * EPS * 2.0 and r["delta_dot"] > 0.01

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
    assert np.max(np.abs(cv - cfd(1e-7))) <= _fd_bound(
        cfd(1e-7), cfd(5e-8), np.max(np.abs(fv)), 1e-7
    )
    # the friction's viscous slope is in it: mu / v_ref F_n along J_t J_t^T
    assert np.max(np.abs(cv)) > 0.5 * TANH["mu"] / TANH["v_ref"] * r["F_n"]

    # Q = -dV/dq for the elastic part
    def grad(hh):
        return np.array(
            [
                s.forces_at(q + hh * eye[j], zero)[2] - s.forces_at(q - hh * eye[j], zero)[2]
                for j in range(6)
            ]
        ) / (2 * hh)

    pot = s.forces_at(q, zero)[2]
    assert np.max(np.abs(grad(h) + f)) <= _fd_bound(grad(h), grad(h / 2), abs(pot) * cancel, h)

    # sliding: Q . q' = -F_n delta' + F_t v_t (the generalized forces do the work of the
    # contact forces at the contact point on both bodies), v_t from the independent
    # kinematics, delta' by central differences along v
    v = np.array([0.1, 0.2, 1.0, -0.3, 0.1, -2.0])
    r = c.evaluate(q, v, s.fst[0])
    vt, _, _ = _contact_point_speed(s, q, v)
    assert abs(r["F_t"]) > 0.1 * r["F_n"]
    # one evaluation of the same kinematics: round-off of the speeds (2 m/s, lever arms 5 cm)
    assert r["v_t"] == pytest.approx(vt, abs=32 * EPS * 2.0)
    fv = s.forces_at(q, v)[0]
    power = -r["F_n"] * r["delta_dot"] + r["F_t"] * r["v_t"]
    # round-off: a 6-term product, each term below |F| |v|
    assert abs(fv @ v - power) <= 16 * EPS * np.max(np.abs(fv)) * np.max(np.abs(v)) * 6
    assert r["F_t"] * r["v_t"] < 0  # friction dissipates

    def dfd(hh):
        return (c.evaluate(q + hh * v, v)["delta"] - c.evaluate(q - hh * v, v)["delta"]) / (2 * hh)

    assert abs(r["delta_dot"] - dfd(1e-7)) <= _fd_bound(dfd(1e-7), dfd(5e-8), 0.05, 1e-7)


def test_line_tangent_leaves_out_only_the_stated_friction_terms():
    """A point mass sliding on an inclined ground line with friction (gap gradient n and
    sliding gradient d constant): the exact -dQ/dq and -dQ/dv differ from the tangent by the
    non-symmetric terms the docstring names, -mu F_delta d n^T and -mu F_ddot d n^T (mu the
    friction coefficient at v_t, F_delta = k, F_ddot = c of kelvin-voigt), and by nothing else
    (central differences: Richardson + round-off)."""
    law = LAWS["kelvin-voigt"]
    phi = 0.4
    d = np.array([math.cos(phi), math.sin(phi)])
    n = np.array([-d[1], d[0]])
    s = System(g=0.0)
    p = s.add(PointMass("p", mass=1.0, position=tuple(0.05 * d - 1.0e-3 * n)))
    c = s.add(
        LineContact(
            "c",
            p=p.point(),
            through=ground(0.0, 0.0),
            direction=tuple(d),
            law=_law(law),
            friction=friction_law(TANH, "friction"),
        )
    )
    s.finalize()
    s.fst[0] = (0.5, 1.0, 1.0, 0.0)
    q = s.q0.copy()
    v = 0.004 * d - 0.2 * n
    r = c.evaluate(q, v, s.fst[0])
    mu = law_coefficient(c.friction, r["v_t"])
    eye = np.eye(2)

    def kfd(h):
        return np.column_stack(
            [
                -(s.forces_at(q + h * eye[j], v)[0] - s.forces_at(q - h * eye[j], v)[0]) / (2 * h)
                for j in range(2)
            ]
        )

    def cfd(h):
        return np.column_stack(
            [
                -(s.forces_at(q, v + h * eye[j])[0] - s.forces_at(q, v - h * eye[j])[0]) / (2 * h)
                for j in range(2)
            ]
        )

    k = s.tangent_dense(q, v)
    cv = s.tangent_dense(q, v, c_v=1.0) - k
    f = np.max(np.abs(s.forces_at(q, v)[0]))
    left_k = -mu * law["k"] * np.outer(d, n)
    left_c = -mu * law["c"] * np.outer(d, n)
    assert np.max(np.abs(k + left_k - kfd(1e-9))) <= _fd_bound(
        kfd(1e-9), kfd(5e-10), f * 0.05 / 1e-3, 1e-9
    )
    assert np.max(np.abs(cv + left_c - cfd(1e-7))) <= _fd_bound(cfd(1e-7), cfd(5e-8), f, 1e-7)
    assert np.max(np.abs(left_k)) > 1e-3 * law["k"]  # the term is there to leave out


def test_segment_gap_contact_point_offset_and_guide_geometry():
    """Within the segment the gap is n . w - r; beyond an end it is the distance from the
    contact point to that end and there is no force; the offset e of history is the contact
    point minus the nearest point of the segment. guide_corners puts the four corners of a
    centred slider at gap/2 from their lines, also on a rotated rigid guide body."""
    law = _law(LAWS["hertz"])
    s = System(g=0.0)
    p = s.add(PointMass("p", mass=1.0, position=(0.0, 0.0)))
    c = s.add(
        LineContact(
            "c",
            p=p.point(),
            through=ground(1.0, 2.0),
            direction=(0.0, 2.0),
            r=0.01,
            segment=(-0.1, 0.2),
            law=law,
        )
    )
    s.finalize()
    assert c.direction == (0.0, 1.0) and c.normal == (-1.0, 0.0)
    v = np.zeros(2)
    for (x, y), gap, e in (
        ((0.999, 2.05), 0.001 - 0.01, (0.001 - 0.01, 0.0) * np.array([-1.0, 0.0])),
        ((0.98, 2.2), 0.01, (-0.01, 0.0)),  # at the end: inside, e = g n
        ((0.98, 2.25), math.hypot(0.01, 0.05), (-0.01, 0.05)),  # beyond the end
        ((1.005, 1.85), math.hypot(0.015, 0.05), (0.015, -0.05)),  # beyond, wrong side
    ):
        q = np.array([x, y])
        r = c.evaluate(q, v)
        # coordinates of 2 m: round-off 8 eps 2
        assert s.contact_gaps(q)[0] == pytest.approx(gap, abs=8 * EPS * 2)
        assert r["delta"] == pytest.approx(-gap, abs=8 * EPS * 2)
        np.testing.assert_allclose([r["e_x"], r["e_y"]], e, rtol=0, atol=8 * EPS * 2)
        assert r["F_n"] == 0.0 or gap < 0
    assert np.all(s.forces_at(np.array([1.005, 1.85]), v)[0] == 0.0)  # no force off the segment
    # a rigid guide body rotated by 0.7 rad, the guide 3 cm from its centre, direction in its
    # frame at 0.2 rad; a slider of 50 x 25 mm centred in the guide and aligned with it
    g_ang, d0, gap = 0.7, np.array([math.cos(0.2), math.sin(0.2)]), 1.0e-3
    s = System(g=0.0)
    body = s.add(RigidBody("guide", mass=1.0, inertia=0.01, position=(0.1, 0.2), angle=g_ang))
    centre = np.array([0.1, 0.2]) + _rot(g_ang) @ np.array([0.03, 0.0])
    slider = s.add(
        RigidBody("slider", mass=0.1, inertia=1e-5, position=tuple(centre), angle=g_ang + 0.2)
    )
    corners = LineContact.guide_corners(
        "g", slider, 0.05, 0.025, gap, body.marker(0.03, 0.0), direction=tuple(d0), law=law
    )
    s.add(*corners)
    s.finalize()
    assert [fe.name for fe in corners] == [
        "g.upper_front",
        "g.upper_rear",
        "g.lower_front",
        "g.lower_rear",
    ]
    np.testing.assert_allclose(s.contact_gaps(s.q0), gap / 2, rtol=0, atol=16 * EPS * 0.3)
    assert isinstance(corners[0], Contact) and s.contact_indices == [0, 1, 2, 3]


# ------------------------------------------------------------------------------------------
# impact against the closed form
# ------------------------------------------------------------------------------------------
M, K_KV, C_KV, V0, G = 1.0, 1.0e7, 200.0, 1.0, 9.81
GAP0 = 1.0e-4


def _wall(integrator, **solver):
    """A point mass thrown at a vertical wall (a ground line, normal +x) from 0.1 mm away at
    1 m/s, gravity along the wall: without friction the normal motion is the free 1-DOF impact
    of the closed form (the wall has infinite mass, m_eff = m); its restitution from the speed
    after separation, its duration from the onset to the end of the force."""
    s = System(g=G)
    p = s.add(PointMass("ball", mass=M, position=(GAP0, 0.0), velocity=(-V0, 0.2)))
    c = s.add(
        LineContact(
            "wall",
            p=p.point(),
            through=ground(0.0, 0.3),
            direction=(0.0, -1.0),
            law=_law({"law": "kelvin-voigt", "k": K_KV, "c": C_KV}),
        )
    )
    s.finalize()
    assert c.estimated_mass() == M
    res = integrate(s, IntegratorSettings(integrator, t_end=1.5e-3, **solver))
    restitution = res.v[-1, 0] / V0
    if integrator == "adaptive":  # onset and force end located on the dense output
        duration = sum(t1 - t0 for _, t0, t1 in res.stats["contact_intervals"])
    else:  # the force's end interpolated on the samples (every step)
        h = s.contact_history(res.q, res.v, res.force_state)["wall"]
        force = K_KV * h["delta"] + C_KV * h["delta_dot"]  # the law before clipping
        if res.contact is not None:  # index 3: onset located by the step control
            t_on = res.contact.episodes[0, 1]
        else:  # central differences: the gap's zero interpolated on the samples
            gap = -h["delta"]
            i = int(np.flatnonzero((gap[:-1] > 0) & (gap[1:] <= 0))[0])
            t_on = res.t[i] + gap[i] / (gap[i] - gap[i + 1]) * (res.t[i + 1] - res.t[i])
        i = int(np.flatnonzero((force[:-1] > 0) & (force[1:] <= 0) & (res.t[:-1] > t_on))[0])
        x = force[i] / (force[i] - force[i + 1])
        duration = res.t[i] + x * (res.t[i + 1] - res.t[i]) - t_on
    assert int(res.force_state[-1, 0, core.S_IMPACTS]) == 1
    return restitution, duration, res


@pytest.mark.parametrize("integrator", ["generalized-alpha", "adaptive", "central-difference"])
def test_point_mass_impact_on_a_line_matches_the_closed_form(integrator):
    """Restitution and duration against references.impact.kelvin_voigt (the never-tensile
    law; closed form, round-off 16 eps). Bounds: SAFETY x the run's error estimated by
    refinement (generalized-alpha with step control: dt = dt_contact = sample_dt = 5 us, onset
    to 1e-10 m, halved twice with onset_tol and the Newton tol / 4 per level, kappa = 2 as the
    pipeline for contacts; adaptive DOP853 at rtol 1e-10, refined to 1e-12, kappa = 10, plus
    rtol times the value, and the two located event times, events.time_tolerance each;
    central differences at fixed steps dt = sample_dt = 5 us, halved twice, kappa = 2) plus
    the round-off of the run (8 eps per step). Measured error / bound: generalized-alpha
    0.41 (restitution), 0.33 (duration); adaptive 0.30, 0.08; central differences 0.17,
    0.33."""
    kv = ref.kelvin_voigt(M, K_KV, C_KV, V0)["clipped"]
    if integrator == "adaptive":
        runs = [_wall("adaptive", rtol=r, atol=1e-3 * r, sample_dt=1e-5) for r in (1e-10, 1e-12)]
        kappa, floor = 10.0, 1e-10
        events = 2 * time_tolerance(0.0, 1.5e-3)
    elif integrator == "generalized-alpha":
        runs = [
            _wall(
                "generalized-alpha",
                dt=h,
                dt_contact=h,
                sample_dt=h,
                step_control=True,
                onset_tol=1e-10 * f**-2,
                tol=1e-8 * f**-2,
            )
            for f, h in ((1, 5e-6), (2, 2.5e-6), (4, 1.25e-6))
        ]
        kappa, floor, events = 2.0, 0.0, 0.0
    else:  # central differences
        runs = [_wall(integrator, dt=h, sample_dt=h) for h in (5e-6, 2.5e-6, 1.25e-6)]
        kappa, floor, events = 2.0, 0.0, 0.0
    steps = runs[0][2].steps
    for j, key, extra in ((0, "restitution", 0.0), (1, "duration", events)):
        x = runs[0][j]
        est = _estimate(x, [r[j] for r in runs[1:]], kappa, floor * abs(x))
        bound = SAFETY * est + extra + 8 * EPS * steps * abs(x) + 16 * EPS * abs(kv[key])
        err = abs(x - kv[key])
        print(
            f"\n{integrator} {key}: {x:.12g} vs {kv[key]:.12g}, error {err:.2e}, bound "
            f"{bound:.2e} ({err / bound:.2f})"
        )
        assert err <= bound


# ------------------------------------------------------------------------------------------
# Coulomb friction: a block sliding to rest
# ------------------------------------------------------------------------------------------
BM, BA, BB, MU, V_REF, BV0, BK = 1.0, 0.1, 0.05, 0.3, 1.0e-3, 1.0, 1.0e6
BJ = BM * (BA**2 + BB**2) / 12


def _sliding_equilibrium():
    """Tilt, height and corner forces of the block sliding at saturated friction (the test's
    own statics: vertical balance F_f + F_r = m g and no moment about the centre of mass,
    sum F_i (r_ix + mu r_iy) = 0 with the corner arms r_i = R(theta) s_i, forces k delta_i;
    fixed point in theta, 8 iterations, each shrinking the change by ~ |theta| < 1e-4)."""
    th = 0.0
    for _ in range(8):
        rf = _rot(th) @ np.array([BA / 2, -BB / 2])
        rr = _rot(th) @ np.array([-BA / 2, -BB / 2])
        af, ar = rf[0] + MU * rf[1], rr[0] + MU * rr[1]
        ff = -ar * BM * G / (af - ar)
        fr = BM * G - ff
        th = math.asin((fr - ff) / BK / BA)
    rf = _rot(th) @ np.array([BA / 2, -BB / 2])
    return th, -ff / BK - rf[1], ff, fr


def _block(dt):
    th, y, _, _ = _sliding_equilibrium()
    s = System(g=G)
    blk = s.add(
        RigidBody("block", mass=BM, inertia=BJ, position=(0.0, y), angle=th, velocity=(BV0, 0.0))
    )
    law = _law({"law": "kelvin-voigt", "k": BK, "c": 2 * 0.5 * math.sqrt(BK * BM / 2)})
    fr = friction_law({"law": "coulomb-tanh", "mu": MU, "v_ref": V_REF}, "friction")
    for name, sx in (("front", BA / 2), ("rear", -BA / 2)):
        s.add(
            LineContact(
                name, p=blk.marker(sx, -BB / 2), through=ground(0.0, 0.0), law=law, friction=fr
            )
        )
    s.finalize()
    res = integrate(
        s,
        IntegratorSettings(
            "generalized-alpha", t_end=0.4, dt=dt, sample_dt=1e-3, tol=1e-8 * (dt / 5e-5) ** 2
        ),
    )
    return s, res


def test_block_sliding_on_a_line_decelerates_at_mu_g_and_stops_at_v0_squared_over_2_mu_g():
    """A 100 x 50 mm block (1 kg) on its two lower corners, sliding at 1 m/s on a ground line
    (kelvin-voigt k = 1e6, zeta 0.5; coulomb-tanh mu = 0.3, v_ref = 1 mm/s), started at its
    sliding equilibrium (front corner loaded by m g/2 (1 + mu b/a), from the test's statics).
    While v >> v_ref: v = v0 - mu g t and the corner forces at their static values (the
    penetration F/k); it stops after v0^2 / (2 mu g).

    Bounds: SAFETY x the run's error by refinement (dt 50, 25, 12.5 us, Newton tol / 4 per
    level, kappa = 2) + the Newton tolerance's force error (tol m g (1 + mu), over t) + round-off
    8 eps per step; the stopping distance adds the regularisation (m v' = -mu m g tanh(v /
    v_ref) slides pi^2 v_ref^2 / (12 mu g) further), the creep left at t_end (v v_ref / (mu
    g)), and the sliding tilt theta_s that relaxes when friction lets go (the corners hold, the
    centre of mass moves by (b/2) |theta_s|). Measured error / bound: speed below 1e-3 (the
    motion is linear in t: exact for the integrator), corner forces 0.27, distance 0.11."""
    th_s, _, ff, fr = _sliding_equilibrium()
    runs = [_block(dt) for dt in (5e-5, 2.5e-5, 1.25e-5)]
    s, res = runs[0]
    t = res.t
    sliding = BV0 - MU * G * t > 0.05  # tanh(50) = 1 in double precision
    newton = 1e-8 * G * (1 + MU) * t[sliding]
    v_err = np.abs(res.v[sliding, 0] - (BV0 - MU * G * t[sliding]))
    est = _estimate(res.v[sliding, 0], [r.v[sliding, 0] for _, r in runs[1:]], 2.0)
    bound = SAFETY * est + newton + 8 * EPS * res.steps * BV0
    print(
        f"\nspeed error {np.max(v_err):.2e}, bound {np.min(bound):.2e}..{np.max(bound):.2e} "
        f"(largest ratio {np.max(v_err / bound):.2f})"
    )
    assert np.all(v_err <= bound)
    hist = s.contact_history(res.q, res.v, res.force_state)
    for name, f_static in (("front", ff), ("rear", fr)):
        fn = hist[name]["F_n"][sliding]
        est = _estimate(
            fn,
            [
                r2.contact_history(r.q, r.v, r.force_state)[name]["F_n"][sliding]
                for r2, r in runs[1:]
            ],
            2.0,
        )
        bound = SAFETY * est + 1e-8 * BM * G * (1 + MU) + 8 * EPS * res.steps * f_static
        err = np.max(np.abs(fn - f_static))
        print(f"{name} corner force error {err:.2e} N, bound {bound:.2e}")
        assert err <= bound
        # the penetration: the static estimate F/k, to the same bound (the law's damping term
        # c delta' adds at most c max|delta'|)
        c_dd = 2 * 0.5 * math.sqrt(BK * BM / 2) * np.max(np.abs(hist[name]["delta_dot"][sliding]))
        err = np.max(np.abs(hist[name]["delta"][sliding] - f_static / BK))
        assert err <= (bound + c_dd) / BK
    x_stop = BV0**2 / (2 * MU * G)
    dist = res.q[-1, 0] - res.q[0, 0]
    est = _estimate(dist, [r.q[-1, 0] - r.q[0, 0] for _, r in runs[1:]], 2.0)
    regularisation = math.pi**2 * V_REF**2 / (12 * MU * G)
    creep = abs(res.v[-1, 0]) * V_REF / (MU * G)
    bound = regularisation + creep + BB / 2 * abs(th_s) + SAFETY * est + 8 * EPS * res.steps
    print(
        f"stopping distance {dist:.9f} m vs {x_stop:.9f}: error {dist - x_stop:.2e}, bound "
        f"{bound:.2e}"
    )
    assert abs(dist - x_stop) <= bound
    assert abs(res.v[-1, 0]) < 1e-6  # at rest


# ------------------------------------------------------------------------------------------
# elastic bounce: energy
# ------------------------------------------------------------------------------------------
DM, DR, DK, DH = 0.5, 0.02, 1.0e9, 0.01
DJ = 0.5 * DM * DR**2
DPHI = math.radians(10.0)
DD = np.array([math.cos(DPHI), math.sin(DPHI)])
DN = np.array([-DD[1], DD[0]])


def _disc(integrator, **solver):
    s = System(g=G)
    disc = s.add(
        RigidBody(
            "disc",
            mass=DM,
            inertia=DJ,
            position=tuple((DR + DH) * DN),
            velocity=(0.1, 0.0),
            angular_velocity=30.0,
        )
    )
    s.add(
        LineContact(
            "floor",
            p=disc.marker(),
            through=ground(0.0, 0.0),
            direction=tuple(DD),
            r=DR,
            law=_law({"law": "hertz", "K": DK}),
        )
    )
    s.finalize()
    res = integrate(s, IntegratorSettings(integrator, t_end=0.2, sample_dt=1e-4, **solver))
    q, v = res.q, res.v
    kinetic = 0.5 * DM * (v[:, 0] ** 2 + v[:, 1] ** 2) + 0.5 * DJ * v[:, 2] ** 2
    delta = np.maximum(DR - q[:, :2] @ DN, 0.0)
    energy = kinetic + DM * G * q[:, 1] + DK * delta**2.5 / 2.5
    assert int(res.force_state[-1, 0, core.S_IMPACTS]) == 2
    assert np.all(v[:, 2] == 30.0)  # frictionless: the spin is untouched
    return (energy - energy[0]) / np.max(kinetic), res


@pytest.mark.parametrize("integrator", ["adaptive", "generalized-alpha"])
def test_elastic_hertz_bounce_of_a_disc_conserves_energy(integrator):
    """A spinning disc (r = 20 mm) dropped 10 mm onto a line inclined at 10 deg, Hertz K =
    1e9, no friction, two impacts: kinetic + gravity + K delta^2.5 / 2.5, computed here from the
    states, is constant to the integrator's error: SAFETY x its estimate by refinement
    (adaptive: rtol 1e-8 -> 1e-10, kappa 10, plus rtol; generalized-alpha with rho_inf = 1, no
    numerical dissipation: dt 10, 5, 2.5 us, kappa 2) + round-off. Measured error / bound:
    adaptive 0.45, generalized-alpha 0.34."""
    if integrator == "adaptive":
        runs = [_disc("adaptive", rtol=r, atol=1e-3 * r) for r in (1e-8, 1e-10)]
        kappa, floor = 10.0, 1e-8
    else:
        runs = [
            _disc("generalized-alpha", dt=h, rho_inf=1.0, tol=1e-8 * (h / 1e-5) ** 2)
            for h in (1e-5, 5e-6, 2.5e-6)
        ]
        kappa, floor = 2.0, 0.0
    drift, res = runs[0]
    err = float(np.max(np.abs(drift)))
    bound = (
        SAFETY * _estimate(err, [float(np.max(np.abs(d))) for d, _ in runs[1:]], kappa, floor)
        + 8 * EPS * res.steps
    )
    print(
        f"\n{integrator}: max |E - E0| / max T = {err:.2e}, bound {bound:.2e} ({err / bound:.2f})"
    )
    assert err <= bound


# ------------------------------------------------------------------------------------------
# a slider in its guide: four corner contacts
# ------------------------------------------------------------------------------------------
SM, SA, SB, SGAP, SK = 0.076, 0.05, 0.025, 0.001, 1.0e10
SJ = SM * (SA**2 + SB**2) / 12
SW0, SV = 5.0, 1.0
GUIDE = np.array([0.1, 0.05])


def _slider(integrator, upper=True, **solver):
    """The slider of the slider_crank_guide_clearance case (50 x 25 mm, 0.076 kg) centred in a
    vertical guide 1 mm wider than it, moving up at 1 m/s and turning at 5 rad/s; Flores ce
    0.4, K = 1e10. Gravity acts along the guide: frictionless, it does no work on the motion
    across the guide. Returns the largest penetration of a guide line by a corner (the test's
    own geometry on the samples, and the contact record's located peaks) and the run."""
    s = System(g=G)
    sl = s.add(
        RigidBody(
            "slider",
            mass=SM,
            inertia=SJ,
            position=tuple(GUIDE),
            angle=math.pi / 2,
            velocity=(0.0, SV),
            angular_velocity=SW0,
        )
    )
    law = _law({"law": "flores", "K": SK, "restitution": 0.4})
    corners = LineContact.guide_corners(
        "guide",
        sl,
        SA,
        SB,
        SGAP,
        ground(*GUIDE),
        direction=(0.0, 1.0),
        law=law,
        v_impact=SW0 * math.hypot(SA, SB) / 2,
    )
    s.add(*(c for c in corners if upper or "lower" in c.name))
    s.finalize()
    res = integrate(s, IntegratorSettings(integrator, t_end=0.1, sample_dt=1e-4, **solver))
    q = res.q
    worst = -np.inf
    for sx in (-SA / 2, SA / 2):
        for sy in (-SB / 2, SB / 2):
            c, sn = np.cos(q[:, 2]), np.sin(q[:, 2])
            across = -(q[:, 0] + c * sx - sn * sy - GUIDE[0])  # along the guide's normal (-1, 0)
            worst = max(worst, np.max(across - (SB + SGAP) / 2), np.max(-(SB + SGAP) / 2 - across))
    if len(res.contact.episodes):
        worst = max(worst, float(np.nanmax(res.contact.episodes[:, 5])))
    return worst, res


def _stays_in_guide(runs, kappa, floor):
    """The check: every corner's penetration below the energy estimate from K (the motion
    across the guide, rotation and sideways translation, carries E = J w0^2 / 2 and loses
    energy at every impact, so no corner's elastic energy K delta^2.5 / 2.5 exceeds it) plus
    SAFETY x the run's error estimated by refinement. Returns (penetration, bound)."""
    pen = runs[0][0]
    delta_e = (2.5 * 0.5 * SJ * SW0**2 / SK) ** 0.4
    est = _estimate(pen, [r[0] for r in runs[1:]], kappa, floor * abs(pen))
    return pen, delta_e + SAFETY * est


@pytest.mark.parametrize("integrator", ["adaptive", "generalized-alpha"])
def test_slider_rattling_in_its_guide_stays_within_it(integrator):
    """guide_corners: the slider rattles between the guide lines (every corner strikes) and no
    corner penetrates deeper than the energy estimate (5.2 um, 0.5 % of the clearance);
    measured 2.8 um (0.53 of the bound). Negative control: without the upper line's two
    contacts the same check fails (the slider turns through the upper line by millimetres).
    Refinement: adaptive rtol 1e-8 -> 1e-10 (kappa 10, plus rtol); generalized-alpha with step
    control (dt 0.1 ms, dt_contact 0.05 of the contact bound, halved twice, kappa 2)."""
    if integrator == "adaptive":
        levels = [{"rtol": r, "atol": 1e-3 * r} for r in (1e-8, 1e-10)]
        kappa, floor = 10.0, 1e-8
    else:
        levels = [
            {
                "step_control": True,
                "dt": 1e-4,
                "dt_contact": h,
                "onset_tol": 1e-8 * f**-2,
                "tol": 1e-8 * f**-2,
            }
            for f, h in ((1, None), (2, 1.2e-6), (4, 6e-7))
        ]
        kappa, floor = 2.0, 0.0
    runs = [_slider(integrator, **lv) for lv in levels]
    impacts = runs[0][1].force_state[-1, :, core.S_IMPACTS]
    assert np.all(impacts >= 1)  # all four corners struck their lines
    pen, bound = _stays_in_guide(runs, kappa, floor)
    print(
        f"\n{integrator}: largest corner penetration {pen:.3e} m, bound {bound:.3e} m "
        f"({pen / bound:.2f})"
    )
    assert 0.0 < pen <= bound
    loose = [_slider(integrator, upper=False, **lv) for lv in levels]
    pen_l, bound_l = _stays_in_guide(loose, kappa, floor)
    print(f"negative control (no upper line): {pen_l:.3e} m > {bound_l:.3e} m")
    assert pen_l > bound_l


# ------------------------------------------------------------------------------------------
# explicit bound, effective mass, input checks
# ------------------------------------------------------------------------------------------
def test_explicit_dt_bound_and_effective_mass():
    """The contact frequency of a line contact: m_eff of a point mass on the ground is its mass;
    a rigid body's marker at offset a counts 1 / (1/m + |a|^2 / J) (a slider's corner: m / 4);
    a moving line's body enters the reduced mass; a Hertz law is linearised at the undamped
    peak penetration for v_impact. The same formulas evaluated here: round-off."""
    kv = _law({"law": "kelvin-voigt", "k": 1.0e7, "c": 0.0})
    hz = _law({"law": "hertz", "K": 1.0e10})
    s = System(g=0.0)
    p = s.add(PointMass("p", mass=2.0, position=(0.0, 0.1)))
    sl = s.add(RigidBody("s", mass=SM, inertia=SJ, position=(0.0, 0.5)))
    arm = s.add(RigidBody("arm", mass=3.0, inertia=0.1, position=(1.0, 0.0)))
    pm = s.add(PointMass("pm", mass=1.0, position=(1.0, 0.1)))
    c1 = s.add(LineContact("c1", p=p.point(), through=ground(), law=kv))
    corners = LineContact.guide_corners(
        "g", sl, SA, SB, SGAP, ground(0.0, 0.5), law=hz, v_impact=0.5
    )
    s.add(*corners)
    c3 = s.add(LineContact("c3", p=pm.point(), through=arm.marker(0.0, 0.05), law=kv))
    s.finalize()
    assert c1.estimated_mass() == 2.0
    m_corner = 1.0 / (1.0 / SM + ((SA / 2) ** 2 + (SB / 2) ** 2) / SJ)
    assert m_corner == pytest.approx(SM / 4, rel=8 * EPS)
    assert corners[0].estimated_mass() == pytest.approx(m_corner, rel=8 * EPS)
    assert c3.estimated_mass() == pytest.approx(3.0 / 4.0, rel=8 * EPS)
    dmax = (2.5 * m_corner * 0.25 / (2 * 1.0e10)) ** 0.4
    w_corner = math.sqrt(1.5 * 1.0e10 * math.sqrt(dmax) / m_corner)
    assert corners[0].omega() == pytest.approx(w_corner, rel=16 * EPS)
    w_max = max(w_corner, math.sqrt(1.0e7 / 2.0), math.sqrt(1.0e7 / 0.75))
    assert explicit_dt_bounds(s)["contact"] == pytest.approx(2.0 / w_max, rel=16 * EPS)
    assert [s.forces[i].name for i in s.contact_indices] == [fe.name for fe in s.forces]
    # energy bookkeeping as the circle contact: elastic laws without friction are
    # conservative; a damped or frictional one is not, its dissipation booked either way
    assert c1.conservative and corners[0].conservative and c1.energy_booked
    damped = LineContact("d", p=p.point(), through=ground(), law=_law(LAWS["lankarani-nikravesh"]))
    rough = LineContact(
        "f",
        p=p.point(),
        through=ground(),
        law=kv,
        friction=friction_law(TANH, "friction"),
    )
    assert not damped.conservative and not rough.conservative
    assert damped.energy_booked and rough.energy_booked


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"direction": (0.0, 0.0)}, "direction"),
        ({"r": -0.1}, "r = -0.1"),
        ({"segment": (0.2, 0.1)}, "s_min < s_max"),
        ({"law": None}, "normal law"),
    ],
)
def test_line_contact_refuses_bad_input(kwargs, match):
    p = PointMass("p", mass=1.0)
    base = {"p": p.point(), "through": ground(), "law": _law(LAWS["hertz"])}
    with pytest.raises(ValueError, match=match):
        LineContact("c", **{**base, **kwargs})


def test_line_contact_refuses_a_line_on_a_beam_point_or_on_the_point_body():
    b = RigidBody("b", mass=1.0, inertia=1.0)
    p = PointMass("p", mass=1.0)
    law = _law(LAWS["hertz"])
    with pytest.raises(ValueError, match="ground point or a rigid body's marker"):
        LineContact("c", p=b.marker(), through=p.point(), law=law)
    with pytest.raises(ValueError, match="same body"):
        LineContact("c", p=b.marker(0.1, 0.0), through=b.marker(), law=law)


def test_circle_and_line_contacts_share_the_contact_interface():
    """Both kinds are contacts for the system and the kernels (is_contact); a circle contact
    keeps its code and its row layout."""
    law = _law(LAWS["hertz"])
    s = System(g=0.0)
    a = s.add(PointMass("a", mass=1.0, position=(0.0, 0.0)))
    b = s.add(PointMass("b", mass=1.0, position=(0.03, 0.0)))
    s.add(CircleContact("circle", p=a.point(), q=b.point(), r_p=0.01, r_q=0.01, law=law))
    s.add(LineContact("line", p=b.point(), through=ground(0.0, -0.01), law=law))
    s.finalize()
    assert s.fei[0, 0] == core.FE_CONTACT and s.fei[1, 0] == core.FE_LINE
    assert all(core.is_contact(k) for k in s.fei[:, 0])
    assert not core.is_contact(core.FE_SPRING)
    hist = s.contact_history(s.q0[None], np.zeros((1, 4)))
    assert set(hist) == {"circle", "line"}
    assert set(hist["circle"]) == set(hist["line"])
    assert hist["line"]["e_y"][0] == pytest.approx(0.01, abs=8 * EPS * 0.03)
