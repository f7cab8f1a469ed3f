"""Nonsmooth contacts (unilateral constraints, Newton's impact law, Coulomb friction) under the
Moreau-Jean stepper (ancf_beam.mbs.moreau), against closed forms: a bouncing ball (apex ratio
e^2, accumulation in finite time, rest), two discs colliding head-on (momentum and
restitution), a block on an incline (stick below tan(alpha) = mu, slip with a = g (sin alpha -
mu cos alpha) above), a disc sliding with backspin until it rolls, a compliant impact
converging to the nonsmooth one as its stiffness grows, a pendulum hanging in a nonsmooth
clearance joint (bilateral constraints, energy balance); the contact solver against the
complementarity conditions; bad input.

Bounds. With theta = 1/2 and constant forces the Moreau-Jean step is exact in free flight
(positions and velocities of a uniformly accelerated motion, ``v+ = v + a h``, ``q+ = q + h (v
+ v+)/2``), so the errors below come from where the impacts fall in a step (mid-step detection:
at most h/2 from the touchdown) and from the contact solver's stopping test; each bound is
derived next to its test. Round-off: ``EPS`` times the magnitudes involved, times the number
of steps where it accumulates."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancf_beam.config.contact import contact_law
from ancf_beam.mbs.bodies import PointMass, RigidBody, ground
from ancf_beam.mbs.forces import CircleContact, LineContact
from ancf_beam.mbs.integrators import IntegratorSettings, integrate
from ancf_beam.mbs.joints import Revolute
from ancf_beam.mbs.moreau import pgs_residual, pgs_solve
from ancf_beam.mbs.system import System

EPS = float(np.finfo(float).eps)
G = 9.81
TOL = 1e-12  # contact solver tolerance of the runs below
MAX_ITER = 500


def _mj(system, dt, t_end, sample_dt=None, **kw):
    st_ = IntegratorSettings(
        integrator="moreau-jean",
        dt=dt,
        t_end=t_end,
        sample_dt=dt if sample_dt is None else sample_dt,
        tol=kw.pop("tol", TOL),
        max_iter=kw.pop("max_iter", MAX_ITER),
        **kw,
    )
    return integrate(system, st_)


# ------------------------------------------------------------------------------------------
# bouncing ball
# ------------------------------------------------------------------------------------------
def _ball(e, y0=1.0, r=0.0, g=G):
    s = System(g=g, name="ball")
    b = PointMass("ball", mass=1.0, position=(0.0, y0 + r))
    s.add(b)
    s.add(
        LineContact(
            "floor", p=b.point(), through=ground(0.0, 0.0), r=r, model="nonsmooth", restitution=e
        )
    )
    return s


def _apexes(res, r=0.0):
    """Largest height of the ball's contact point between successive impacts (the first:
    the start) and the steps of the impacts."""
    y = res.q[:, 1] - r
    hit = res.impulse_n[:, 0] > 0.0
    starts = np.flatnonzero(hit & ~np.r_[False, hit[:-1]])  # first step of each contact
    ends = np.flatnonzero(hit & ~np.r_[hit[1:], False])  # last step of each contact
    apex = [float(y[0])]
    for a, b in zip(ends[:-1], starts[1:], strict=True):
        apex.append(float(np.max(y[a : b + 1])))
    return np.array(apex), starts


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_bouncing_ball_apex_ratio(e):
    """Apex k+1 against e^2 times apex k (the ball's own previous apex: the closed-form map of
    one bounce). Bound of one bounce (derived for this scheme): free flight is exact, so from
    apex H the ball reaches the step of activation with speed v, v^2 = 2 g (H - y_k), where
    mid-step detection puts |y_k| <= h v / 2 (the previous mid-step gap was positive, this one
    is not); the impact step leaves v+ = e v at y+ = y_k - h v (1 - e)/2, so the next apex
    y+ + v+^2/(2g) differs from e^2 H by (1 - e^2) y_k - h v (1 - e)/2: at most h v (1 - e)(2 +
    e)/2 (or e^2 h v / 2 when the contact projection lifts y+ < 0 to 0). The sampled apexes
    (samples every step) lie within g h^2/8 below the true ones."""
    h = 1e-4
    res = _mj(_ball(e), h, 2.0)
    apex, starts = _apexes(res)
    assert len(apex) >= 3
    v_max = np.sqrt(2.0 * G * apex[:-1]) + G * h
    # the contact projection (default) lifts a ball that ends the impact step below the
    # ground (y+ < 0) back to y = 0: the apex then differs from e^2 H by -e^2 y_k, at most
    # e^2 h v / 2
    per_v = max((1.0 - e) * (2.0 + e) / 2.0, e * e / 2.0)
    bound = h * v_max * per_v + (1.0 + e * e) * G * h * h / 8.0
    err = np.abs(apex[1:] - e * e * apex[:-1])
    assert np.all(err <= bound), (err, bound)
    # the ratio itself, as the issue states it
    assert abs(apex[1] / apex[0] - e * e) <= bound[0] / apex[0]
    # the first touchdown at sqrt(2 y0 / g) within the step (mid-step detection: h/2, plus the
    # sample at the step's end h)
    t1 = math.sqrt(2.0 / G)
    assert abs(res.contact_summary["floor"]["first_contact_time"] - t1) <= h
    # impulses: (1 + e) times the impact speed, which differs from sqrt(2 g y0) by at most
    # g h/2 (the velocity at the start of the impact step, |t_k - t1| <= h/2)
    p1 = res.impulse_n[starts[0], 0]
    assert abs(p1 - (1.0 + e) * math.sqrt(2.0 * G)) <= (1.0 + e) * G * h / 2.0 + 8 * EPS


def _rest_time(res):
    """End of the last free-flight step (the ball stays in contact from then on)."""
    free = np.flatnonzero(res.impulse_n[:, 0] == 0.0)
    return float(res.t[free[-1]])


def test_bouncing_ball_accumulation_and_rest():
    """Impacts accumulate at t_inf = t1 + 2 e v1 / (g (1 - e)) (the flight times 2 e^k v1 / g
    summed); the ball then rests: zero normal velocity, gap within the penetration left by
    the impacts. Bound of the rest time: each impact's speed is off by at most e g h/2 from
    the exact map plus the previous error times e (so at most e g h / (2 (1 - e))), each
    flight time (2 v / g) then by e h / (1 - e), plus h for where the touchdown falls in the
    step: h / (1 - e) per impact over the N recorded impacts, plus the flights shorter than a
    step that the scheme merges into the rest (their total 2 g h / (g (1 - e)))."""
    e = 0.5
    v1 = math.sqrt(2.0 * G)
    t_inf = math.sqrt(2.0 / G) + 2.0 * e * v1 / (G * (1.0 - e))
    errs = []
    for h in (4e-4, 2e-4, 1e-4, 5e-5):
        res = _mj(_ball(e), h, 1.6)
        n_imp = res.contact_summary["floor"]["impulses"]
        t_rest = _rest_time(res)
        bound = (n_imp + 2) * h / (1.0 - e)
        assert abs(t_rest - t_inf) <= bound, (h, t_rest, t_inf, bound)
        errs.append(abs(t_rest - t_inf))
        after = res.t > t_rest + 1.5 * h  # the last impact's step ends at t_rest + h
        # rest: the single contact's solve leaves u_n+ = 0 to round-off of g h (the free
        # velocity it cancels) and the ball does not move
        assert np.max(np.abs(res.v[after, 1])) <= 8 * EPS * G * h
        y_rest = res.q[after, 1]
        assert np.ptp(y_rest) <= 8 * EPS
        # gap ~ 0: at most the penetration one impact step leaves, h v1 (|y_k| <= h v / 2 at
        # activation, then h v (1 - e)/2 more in the step)
        pen = res.contact_summary["floor"]["max_penetration"]
        assert pen <= h * v1
        assert np.all(-y_rest <= pen + 8 * EPS)
        # energy: kinetic + gravity + the booked work of the impulses is conserved (the
        # impulses' work P (u+ + u-)/2 is the kinetic energy they take exactly; gravity's work
        # is exact in free flight) but for the contact projection, which lifts the ball by
        # at most the penetration of an impact step, h v1, per impact: m g h v1 each
        assert np.max(np.abs(res.total - res.total[0])) <= n_imp * G * h * v1
    # convergence: the error falls with h (O(h): 6.2e-3, 3.4e-3, 1.1e-3, 8.8e-4 s measured
    # at h = 4e-4 ... 5e-5, 0.46 to 0.56 of the bound)
    assert errs[-1] < errs[0]
    print("rest-time errors", errs)


# ------------------------------------------------------------------------------------------
# two bodies head-on
# ------------------------------------------------------------------------------------------
def _two_discs(m1, m2, u1, u2, e, rigid=False, mu=0.0):
    s = System(g=0.0, name="two")
    r1, r2 = 0.05, 0.03
    if rigid:
        b1 = RigidBody("b1", mass=m1, inertia=0.5 * m1 * r1 * r1, velocity=(u1, 0.0))
        b2 = RigidBody(
            "b2", mass=m2, inertia=0.5 * m2 * r2 * r2, position=(0.3, 0.0), velocity=(u2, 0.0)
        )
        p1, p2 = b1.marker(), b2.marker()
    else:
        b1 = PointMass("b1", mass=m1, velocity=(u1, 0.0))
        b2 = PointMass("b2", mass=m2, position=(0.3, 0.0), velocity=(u2, 0.0))
        p1, p2 = b1.point(), b2.point()
    s.add(b1, b2)
    s.add(CircleContact("c", p=p1, q=p2, r_p=r1, r_q=r2, model="nonsmooth", restitution=e, mu=mu))
    return s


def _newton_two(m1, m2, u1, u2, e):
    """Post-impact speeds of a central impact (momentum and Newton's law)."""
    p = m1 * u1 + m2 * u2
    return (p - m2 * e * (u1 - u2)) / (m1 + m2), (p + m1 * e * (u1 - u2)) / (m1 + m2)


@pytest.mark.parametrize("rigid", [False, True])
def test_two_bodies_head_on(rigid):
    """Without gravity nothing but the impulse changes the velocities: the step's contact
    problem (one contact, P = -(1 + e) u_n- / W) gives the closed-form speeds to round-off
    (a few EPS of the speeds); the impact time (gap closes at (0.3 - 0.08) / (u1 - u2)) within
    a step (mid-step detection, h/2, plus the first contact time's own h/2 offset)."""
    m1, m2, u1, u2, e = 2.0, 0.5, 1.0, -0.5, 0.6
    h = 1e-4
    res = _mj(_two_discs(m1, m2, u1, u2, e, rigid), h, 0.3, sample_dt=1e-2)
    w1, w2 = _newton_two(m1, m2, u1, u2, e)
    i1 = 3 if rigid else 2
    scale = abs(u1) + abs(u2)
    assert abs(res.v[-1, 0] - w1) <= 16 * EPS * scale
    assert abs(res.v[-1, i1] - w2) <= 16 * EPS * scale
    summ = res.contact_summary["c"]
    assert summ["impulses"] == 1
    t_hit = (0.3 - 0.08) / (u1 - u2)
    assert abs(summ["first_contact_time"] - t_hit) <= h
    # the impulse: m1 (u1 - w1)
    assert abs(summ["max_impulse"] - m1 * (u1 - w1)) <= 16 * EPS * m1 * scale
    if rigid:  # a central impact without friction turns nothing
        assert np.max(np.abs(res.v[:, 2])) == 0.0 and np.max(np.abs(res.v[:, 5])) == 0.0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    e=st.floats(0.0, 1.0),
    mu=st.floats(0.0, 1.0),
    m1=st.floats(0.1, 10.0),
    m2=st.floats(0.1, 10.0),
)
def test_two_bodies_property(e, mu, m1, m2):
    """Any e, mu in [0, 1] and masses: the closed form (a head-on impact has no sliding, so
    mu changes nothing), momentum conserved, the kinetic energy lost (1 - e^2) m_r (u1 -
    u2)^2 / 2 booked as dissipation; round-off bounds as above."""
    u1, u2 = 1.0, -0.5
    res = _mj(_two_discs(m1, m2, u1, u2, e, mu=mu), 1e-3, 0.3, sample_dt=0.1)
    w1, w2 = _newton_two(m1, m2, u1, u2, e)
    scale = abs(u1) + abs(u2)
    assert abs(res.v[-1, 0] - w1) <= 16 * EPS * scale
    assert abs(res.v[-1, 2] - w2) <= 16 * EPS * scale
    assert abs(res.v[-1, 1]) <= 16 * EPS * scale
    mr = m1 * m2 / (m1 + m2)
    lost = 0.5 * (1.0 - e * e) * mr * (u1 - u2) ** 2
    e_scale = 0.5 * (m1 * u1 * u1 + m2 * u2 * u2)
    assert abs(res.dissipated[-1] - lost) <= 64 * EPS * e_scale


# ------------------------------------------------------------------------------------------
# block on an incline
# ------------------------------------------------------------------------------------------
A_BLK, B_BLK, M_BLK = 0.2, 0.1, 1.5


def _incline(alpha, mu, e=0.0):
    """A rectangular block (A_BLK long, B_BLK high) resting with its two lower corners on a
    ground line inclined by alpha, at rest."""
    s = System(g=G, name="incline")
    d = np.array([math.cos(alpha), math.sin(alpha)])
    n = np.array([-d[1], d[0]])
    c = 0.5 * d + 0.5 * B_BLK * n
    blk = RigidBody(
        "block",
        mass=M_BLK,
        inertia=M_BLK * (A_BLK**2 + B_BLK**2) / 12.0,
        position=tuple(c),
        angle=alpha,
    )
    s.add(blk)
    for name, sx in (("front", 0.5 * A_BLK), ("rear", -0.5 * A_BLK)):
        s.add(
            LineContact(
                name,
                p=blk.marker(sx, -0.5 * B_BLK),
                through=ground(0.0, 0.0),
                direction=tuple(d),
                model="nonsmooth",
                restitution=e,
                mu=mu,
            )
        )
    return s, d


def _w_inf_bound():
    """||W||_inf of the two corners' four rows (unit directions; each entry |w_i M^-1 w_j| <=
    1/m + |a|^2 / J by Cauchy-Schwarz, |a| the corner's distance from the centre)."""
    a2 = (0.5 * A_BLK) ** 2 + (0.5 * B_BLK) ** 2
    return 4.0 * (1.0 / M_BLK + a2 / (M_BLK * (A_BLK**2 + B_BLK**2) / 12.0))


def _check_incline(alpha, mu, h, t_end):
    res = _mj(_incline(alpha, mu)[0], h, t_end, sample_dt=t_end / 10)
    _, d = _incline(alpha, mu)
    x = res.q[:, :2] - res.q[0, :2]
    s_along = x @ d
    v_along = res.v[:, :2] @ d
    n_steps = res.steps
    # stopping test of the solver: after a converged sweep a contact velocity is off by at most
    # ||W||_inf tol max|P| (the later updates of the sweep, each <= tol max|P|); max|P| <= the
    # weight's impulse m g h (1 + mu) per step; accumulated over the steps (a sliding block
    # integrates the error); round-off 16 EPS of the speed per step
    a = G * (math.sin(alpha) - mu * math.cos(alpha))
    v_scale = max(abs(a) * t_end, G * h)
    dv = n_steps * (_w_inf_bound() * TOL * M_BLK * G * h * (1.0 + mu) + 16 * EPS * v_scale)
    assert sum(s["solver_max_iter_hit"] for s in res.contact_summary.values()) == 0
    if math.tan(alpha) < mu:  # sticks
        assert np.max(np.abs(v_along)) <= dv
        assert np.max(np.abs(s_along)) <= dv * t_end
    else:  # slides down (-d) with a: exact for the midpoint rule with constant forces
        t = res.t
        assert np.max(np.abs(v_along + a * t)) <= dv
        assert np.max(np.abs(s_along + 0.5 * a * t * t)) <= dv * t_end
    # no rotation, no lift-off: both corners carry load every step
    assert np.max(np.abs(res.q[:, 2] - alpha)) <= dv * t_end / A_BLK
    for s in res.contact_summary.values():
        assert s["contact_fraction"] == 1.0
    return res


@pytest.mark.parametrize(
    "alpha_deg, mu", [(20.0, 0.5), (30.0, 0.3), (30.0, 0.0), (10.0, 0.2), (45.0, 0.9)]
)
def test_block_on_incline(alpha_deg, mu):
    """Stick for tan(alpha) < mu, else slip with a = g (sin alpha - mu cos alpha): distance
    a t^2/2 and speed a t (closed form; exact for the scheme with constant forces, so the
    bound is the solver's stopping test and round-off, derived in _check_incline)."""
    _check_incline(math.radians(alpha_deg), mu, 1e-3, 0.5)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alpha=st.floats(math.radians(3.0), math.radians(60.0)), mu=st.floats(0.0, 1.0))
def test_block_on_incline_property(alpha, mu):
    """The stick/slip law over mu in [0, 1] (away from the threshold tan(alpha) = mu by 1 %,
    where sticking and slipping differ by less than the solver tolerance)."""
    if abs(math.tan(alpha) - mu) <= 0.01 * max(mu, 0.01):
        return
    _check_incline(alpha, mu, 2e-3, 0.2)


# ------------------------------------------------------------------------------------------
# disc sliding with backspin until it rolls
# ------------------------------------------------------------------------------------------
def _disc(v0, w0, mu, r=0.1, m=2.0):
    s = System(g=G, name="disc")
    d = RigidBody(
        "disc",
        mass=m,
        inertia=0.5 * m * r * r,
        position=(0.0, r),
        velocity=(v0, 0.0),
        angular_velocity=w0,
    )
    s.add(d)
    s.add(
        LineContact("floor", p=d.marker(), through=ground(0.0, 0.0), r=r, model="nonsmooth", mu=mu)
    )
    return s


@pytest.mark.parametrize("v0, w0", [(2.0, 10.0), (2.0, 30.0), (1.0, -40.0)])
def test_disc_rolls_after_sliding(v0, w0):
    """A uniform disc (I = m r^2/2) thrown at v0 with angular velocity w0 (counter-clockwise:
    backspin for v0 > 0; negative: topspin beyond rolling). Sliding speed of the contact point
    v_t = v + r w; friction -mu m g sign(v_t) gives dv/dt = -mu g s, dw/dt = -2 mu g s / r
    (s = sign(v_t0)), so v_t = v_t0 - 3 mu g s t vanishes at t_s = |v0 + r w0| / (3 mu g) and
    the disc rolls on at v = v0 - mu g s t_s = (2 v0 - r w0)/3 (the angular momentum about the
    contact point, I w - m r v, is conserved: its derivation). The scheme conserves that
    momentum exactly (the contact impulses act at the contact point, vertically below the
    centre), so the rolling speed is exact to round-off (16 EPS of the speeds per step); the
    sliding phase is exact at step ends (constant forces), so rolling starts in the step that
    contains t_s (bound h)."""
    mu, r, h = 0.3, 0.1, 1e-3
    t_end = 1.5
    res = _mj(_disc(v0, w0, mu, r), h, t_end)
    v_roll = (2.0 * v0 - r * w0) / 3.0
    scale = abs(v0) + r * abs(w0)
    n = res.steps
    rolling_bound = n * 16 * EPS * scale
    vt = res.v[:, 0] + r * res.v[:, 2]
    t_s = abs(v0 + r * w0) / (3.0 * mu * G)
    assert t_s + 0.1 < t_end
    after = res.t >= t_s + h
    assert abs(res.v[-1, 0] - v_roll) <= rolling_bound
    assert np.max(np.abs(vt[after])) <= rolling_bound
    assert np.max(np.abs(res.v[after, 0] - v_roll)) <= rolling_bound
    t_roll = float(res.t[np.flatnonzero(np.abs(vt) > rolling_bound)[-1] + 1])
    assert abs(t_roll - t_s) <= h
    # sliding phase: v = v0 - mu g s t exactly (to round-off)
    before = res.t <= t_s - h
    sgn = math.copysign(1.0, v0 + r * w0)
    assert np.max(np.abs(res.v[before, 0] - (v0 - mu * G * sgn * res.t[before]))) <= (rolling_bound)
    # the energy lost to friction is booked: total conserved to round-off
    assert np.max(np.abs(res.total - res.total[0])) <= n * 64 * EPS * (res.kinetic[0] + 1.0)


# ------------------------------------------------------------------------------------------
# compliant -> nonsmooth as the stiffness grows
# ------------------------------------------------------------------------------------------
Y0, V_IN = 0.01, 2.0  # m above the ground, m/s downwards


def _drop(law=None):
    s = System(g=G, name="drop")
    b = PointMass("ball", mass=1.0, position=(0.0, Y0), velocity=(0.0, -V_IN))
    s.add(b)
    if law is None:
        s.add(
            LineContact("floor", p=b.point(), through=ground(), model="nonsmooth", restitution=1.0)
        )
    else:
        s.add(LineContact("floor", p=b.point(), through=ground(), law=law))
    return s


def _impulse_and_centre(res, m=1.0):
    """Total contact impulse and its time centre from the end states alone (momentum:
    int F dt = m (v_T - v_0) + m g T; first moment: int t F dt = m T v_T - m (y_T - y_0) + m g
    T^2/2)."""
    t_end = res.t[-1]
    p = m * (res.v[-1, 1] - res.v[0, 1]) + m * G * t_end
    tp = m * t_end * res.v[-1, 1] - m * (res.q[-1, 1] - res.q[0, 1]) + m * G * t_end**2 / 2
    return p, tp / p


def _touchdown():
    """Time and speed at which the ball reaches the ground (free fall from Y0 at V_IN)."""
    v = math.sqrt(V_IN**2 + 2.0 * G * Y0)
    return (v - V_IN) / G, v


def _linear_contact_time(k, v, m=1.0):
    """Duration of the contact of a linear spring k under gravity, entered at speed v: the
    oscillation about the static deflection m g / k with amplitude A leaves the spring where
    it entered, after (pi + 2 asin(m g / (k A))) / omega."""
    w = math.sqrt(k / m)
    x_s = m * G / k
    amp = math.hypot(x_s, v / w)
    return (math.pi + 2.0 * math.asin(x_s / amp)) / w


def test_compliant_converges_to_nonsmooth():
    """An elastic linear contact (kelvin-voigt, c = 0) of stiffness K = 1e5, 1e7, 1e9 N/m
    under the adaptive integrator: its impulse exceeds the nonsmooth one (2 m v, e = 1) by m g
    T_c (gravity acts during the contact, T_c its duration, closed form) and its time centre
    lies T_c/2 after the touchdown; both differences shrink as K^-1/2 to the nonsmooth values.
    Checked: the compliant runs against these closed forms within the integrator's error
    (estimated by refinement, rtol 1e-9 vs 1e-11, x SAFETY 2 as the other contact tests); the
    Moreau-Jean run against the nonsmooth values (impulse within (1 + e) m g h/2: the impact
    step's pre-step speed, time centre within h)."""
    t_end = 0.02
    t_hit, v_hit = _touchdown()
    p_ns = 2.0 * v_hit
    h = 1e-5
    res = _mj(_drop(), h, t_end, sample_dt=1e-3)
    p_mj, tc_mj = _impulse_and_centre(res)
    assert abs(p_mj - p_ns) <= 2.0 * G * h / 2.0 + 64 * EPS * p_ns
    assert abs(tc_mj - t_hit) <= h
    rows = []
    for k in (1e5, 1e7, 1e9):
        law = contact_law({"law": "kelvin-voigt", "k": k, "c": 0.0}, "contact")
        out = []
        for rtol in (1e-9, 1e-11):
            st_ = IntegratorSettings(
                integrator="adaptive", t_end=t_end, sample_dt=1e-3, rtol=rtol, atol=rtol * 1e-2
            )
            out.append(_impulse_and_centre(integrate(_drop(law), st_)))
        (p1, c1), (p2, c2) = out
        t_c = _linear_contact_time(k, v_hit)
        err_p = 2.0 * abs(p1 - p2) + 64 * EPS * p_ns
        err_c = 2.0 * abs(c1 - c2) + 64 * EPS * t_end
        assert abs((p2 - p_ns) - G * t_c) <= err_p, (k, p2 - p_ns, G * t_c, err_p)
        assert abs((c2 - t_hit) - 0.5 * t_c) <= err_c, (k, c2 - t_hit, 0.5 * t_c, err_c)
        rows.append((k, p2 - p_ns, c2 - t_hit))
    dp = [abs(r[1]) for r in rows]
    dc = [abs(r[2]) for r in rows]
    # shrinking as K^-1/2: a factor 10 per factor 100 in K (the closed forms above, checked)
    assert dp[0] > dp[1] > dp[2] and dc[0] > dc[1] > dc[2]
    print("K, impulse - nonsmooth, time centre - touchdown:", rows)


# ------------------------------------------------------------------------------------------
# pendulum hanging in a nonsmooth clearance joint
# ------------------------------------------------------------------------------------------
def _pendulum_clearance(e=0.5, mu=0.1, clearance=1e-3):
    """A crank pinned to the ground (revolute), a link hanging from its tip through a
    journal-in-bearing clearance (bearing on the crank, journal on the link), released from
    the horizontal crank with the journal centred."""
    s = System(g=G, name="pendulum")
    crank = RigidBody("crank", mass=1.0, inertia=1.0 / 12.0 * 0.3**2, position=(0.15, 0.0))
    link = RigidBody("link", mass=0.5, inertia=0.5 / 12.0 * 0.2**2, position=(0.3, -0.1))
    s.add(crank, link)
    s.add(Revolute("pin", p=ground(0.0, 0.0), q=crank.marker(-0.15, 0.0)))
    r_b = 0.01
    s.add(
        CircleContact(
            "clearance",
            p=crank.marker(0.15, 0.0),
            q=link.marker(0.0, 0.1),
            inside=True,
            r_p=r_b,
            r_q=r_b - clearance,
            model="nonsmooth",
            restitution=e,
            mu=mu,
        )
    )
    return s


def test_pendulum_with_nonsmooth_clearance():
    """The bilateral revolute stays satisfied to the position projection's tolerance (64 EPS
    of the largest coordinate, at least 1 mm) at every sample, and the drift the projection
    removes falls as O(h^2) (the velocity constraint holds at the mid-step Jacobian: a factor
    >= 2 per halving, i.e. at least first order, checked). The journal slides along the
    bearing for most of the run: the velocity-level law (u_n+ >= 0 at the mid-step normal)
    lets a sliding contact on the curved bearing drift outwards by about (v_t h / 2)^2 / (2
    c) per half step (the chord leaves the clearance circle of radius c), so the penetration
    after T seconds is at most (2 v)^2 h T / (4 c) with v = sqrt(2 g 0.45) bounding every
    body's speed (the centres of mass drop less than 0.45 m); it is O(h): it must fall with h.
    The energy balance (kinetic + gravity + booked impulse work) holds to O(h) of the
    theta-method with the forces linearised (measured at two steps: the error falls with h).
    Those runs leave the contact projection off; with it (the default) the penetration stays
    within the projection's tolerance."""
    drift, pen, ebal = [], [], []
    c, t_end = 1e-3, 0.5
    v_max = math.sqrt(2.0 * G * 0.45)
    for h in (2e-4, 1e-4):
        res = _mj(
            _pendulum_clearance(clearance=c), h, t_end, sample_dt=1e-3, contact_projection=False
        )
        summ = res.contact_summary["clearance"]
        assert np.max(res.phi_max) <= res.stats["position_tol"]
        assert summ["impulses"] >= 1
        assert summ["max_penetration"] <= (2.0 * v_max) ** 2 * h * t_end / (4.0 * c)
        assert summ["solver_max_iter_hit"] == 0
        assert np.all(np.diff(res.dissipated) >= -64 * EPS)
        drift.append(res.stats["phi_drift_max"])
        pen.append(summ["max_penetration"])
        ebal.append(float(np.max(np.abs(res.total - res.total[0]))))
    assert drift[0] >= 2.0 * drift[1] > 0.0
    assert pen[1] < pen[0]
    assert ebal[1] < ebal[0]
    # with the contact projection (default) the journal stays in its bearing to the
    # projection's tolerance
    res = _mj(_pendulum_clearance(clearance=c), 1e-4, t_end, sample_dt=1e-3)
    assert res.stats["contact_projection_failed"] == 0
    assert res.contact_summary["clearance"]["max_penetration"] <= res.stats["position_tol"]
    assert np.max(res.phi_max) <= res.stats["position_tol"]
    print("drift removed by the projection, penetration, energy error:", drift, pen, ebal)


# ------------------------------------------------------------------------------------------
# contact solver and bad input
# ------------------------------------------------------------------------------------------
def test_pgs_solves_a_frictional_problem_to_its_tolerance():
    """Projected Gauss-Seidel on a random symmetric positive definite Delassus matrix of four
    contacts: after it reports convergence the laws hold to the stopping test's bound
    (||W||_inf tol max|P| on each velocity, divided by the diagonal to give an impulse); with
    max_iter too small it reports the cap instead."""
    rng = np.random.default_rng(3)
    k = 4
    a = rng.standard_normal((2 * k, 2 * k + 3))
    w = a @ a.T / (2 * k) + 0.1 * np.eye(2 * k)
    b = rng.standard_normal(2 * k)
    mu = np.array([0.0, 0.3, 0.8, 1.0])
    p = np.zeros(2 * k)
    its, ok = pgs_solve(w, b, mu, k, p, 1e-12, 10000)
    assert ok and its < 10000
    bound = np.max(np.sum(np.abs(w), axis=1)) * 1e-12 * np.max(np.abs(p)) / np.min(np.diag(w))
    assert pgs_residual(w, b, mu, k, p) <= bound + 64 * EPS * np.max(np.abs(p))
    assert np.all(p[0::2] >= 0.0)
    q = np.zeros(2 * k)
    its, ok = pgs_solve(w, b, mu, k, q, 1e-15, 2)
    assert its == 2 and not ok


def test_nonsmooth_needs_moreau_jean_and_valid_laws():
    s = _ball(0.5)
    with pytest.raises(ValueError, match="'floor'.*generalized-alpha"):
        integrate(s, IntegratorSettings(t_end=0.01))
    b = PointMass("b")
    with pytest.raises(ValueError, match="restitution = 1.5"):
        LineContact("c", p=b.point(), through=ground(), model="nonsmooth", restitution=1.5)
    with pytest.raises(ValueError, match="mu = -0.1"):
        LineContact("c", p=b.point(), through=ground(), model="nonsmooth", mu=-0.1)
    with pytest.raises(ValueError, match="model = 'rigid'"):
        LineContact("c", p=b.point(), through=ground(), model="rigid")
    with pytest.raises(ValueError, match="theta"):
        IntegratorSettings(integrator="moreau-jean", dt=1e-3, theta=0.4).validate()
    with pytest.raises(ValueError, match="dt is required"):
        IntegratorSettings(integrator="moreau-jean").validate()
    # a nonsmooth contact is kept out of the force tables
    s.finalize()
    assert [c.name for c in s.unilateral] == ["floor"] and s.forces == []


# ------------------------------------------------------------------------------------------
# a stiff ANCF beam: linearised-implicit steps far above the explicit bound
# ------------------------------------------------------------------------------------------
def _beam_pendulum():
    from ancf_beam.beam.model import BeamModel
    from ancf_beam.config import resolve_case
    from ancf_beam.mbs.bodies import BeamBody

    model = BeamModel(resolve_case({}, None, {"mesh.n_elements": 4}))
    s = System(g=G, name="beam-pendulum")
    beam = BeamBody("beam", model=model)
    s.add(beam)
    s.add(Revolute("pin", p=ground(0.0, 0.0), q=beam.node(0)))
    s.add(LineContact("floor", p=beam.node(-1), through=ground(0.0, -0.3), model="nonsmooth"))
    return s


def test_beam_pendulum_hits_the_floor():
    """A pinned ANCF beam (the default graded cantilever's section, 4 elements) falls from the
    horizontal onto a floor 0.3 m below its pin (e = 0). At steps 13 to 54 times its explicit
    stability bound the linearised-implicit theta-method stays stable; before the impact the
    energy balance error falls with h at least as O(h) (the theta-method's order, 2 for theta =
    1/2, measured), the pin holds to the projection tolerance, and the tip's penetration stays
    below h times its largest approach speed (mid-step detection and the (1 - theta) share of
    the pre-impact velocity in the position update: h/2 + h/2)."""
    from ancf_beam.mbs.settings import explicit_dt_bounds

    s = _beam_pendulum()
    s.finalize()
    dt_explicit = explicit_dt_bounds(s)["beam"]
    drifts = []
    for h in (4e-4, 2e-4, 1e-4):
        assert h >= 10.0 * dt_explicit  # 7.5e-6 s: central differences would need that
        res = _mj(_beam_pendulum(), h, 0.3)
        summ = res.contact_summary["floor"]
        assert np.all(np.isfinite(res.q))
        assert np.max(res.phi_max) <= res.stats["position_tol"]
        t_hit = summ["first_contact_time"]
        assert t_hit is not None and 0.15 < t_hit < 0.3
        before = res.t < t_hit - h
        drifts.append(float(np.max(np.abs(res.total[before] - res.total[0]))))
        v_tip = np.max(np.abs(res.v[:, -3]))  # the last node's y velocity
        assert summ["max_penetration"] <= h * v_tip
    assert drifts[0] >= 2.0 * drifts[1] >= 4.0 * drifts[2]
    print("energy error before the impact at h = 4e-4, 2e-4, 1e-4:", drifts)


def test_pendulum_clearance_first_impact_against_compliant():
    """The first impact of the journal in its bearing (e = 1, no friction) against the same
    mechanism with an elastic compliant clearance (kelvin-voigt, c = 0, K = 1e8 and 1e9 N/m,
    adaptive integrator): the compliant impulse (the trapezoidal integral of F_n over its first
    contact, samples 0.5 us apart) approaches the nonsmooth one as K grows (the difference
    shrinks; the other forces act over a contact of duration T_c ~ K^-1/2), and its time centre
    lies inside its contact, which starts within a step (h = 1 us, mid-step detection) of the
    nonsmooth impact: |t_centre - t_ns| <= T_c + h + one sample."""
    import dataclasses

    h = 1e-6
    res = _mj(_pendulum_clearance(e=1.0, mu=0.0), h, 0.03, sample_dt=1e-4)
    summ = res.contact_summary["clearance"]
    t_ns, p_ns = summ["first_contact_time"], summ["max_impulse"]
    assert summ["impulses"] >= 1
    diffs = []
    for k in (1e8, 1e9):
        s = _pendulum_clearance(e=1.0, mu=0.0)
        law = contact_law({"law": "kelvin-voigt", "k": k, "c": 0.0}, "contact")
        s.forces[0] = dataclasses.replace(s.forces[0], model="compliant", law=law)
        ds = 5e-7
        st_ = IntegratorSettings(
            integrator="adaptive", t_end=t_ns + 4e-4, sample_dt=ds, rtol=1e-10, atol=1e-12
        )
        rc = integrate(s, st_)
        f_n = s.contact_history(rc.q, rc.v, rc.force_state)["clearance"]["F_n"]
        on = np.flatnonzero(f_n > 0.0)
        j0 = on[0]
        j1 = j0
        while j1 + 1 < len(f_n) and f_n[j1 + 1] > 0.0:
            j1 += 1
        assert j1 + 1 < len(f_n)  # the first contact ended inside the window
        sl = slice(j0 - 1, j1 + 2)
        p_c = float(np.trapezoid(f_n[sl], rc.t[sl]))
        t_c = float(np.trapezoid(f_n[sl] * rc.t[sl], rc.t[sl])) / p_c
        dur = rc.t[j1 + 1] - rc.t[j0 - 1]
        assert abs(t_c - t_ns) <= dur + h + ds
        diffs.append(abs(p_c - p_ns) / p_ns)
    assert diffs[1] < diffs[0]
    print("relative impulse difference at K = 1e8, 1e9:", diffs)


def test_guide_corners_nonsmooth():
    """A slider (a = 0.1 m, b = 0.05 m) released centred in a guide 10 mm wider falls 5 mm
    onto the lower line (e = 0): it lands flat on its two lower corners at t = sqrt(2 0.005 /
    g) within a step (mid-step detection) and rests there (gap within the projection's
    tolerance, zero velocity to the solver's tolerance); the upper corners never touch."""
    s = System(g=G, name="guide")
    sl = RigidBody("slider", mass=0.5, inertia=0.5 * (0.1**2 + 0.05**2) / 12.0)
    s.add(sl)
    corners = LineContact.guide_corners(
        "g", sl, 0.1, 0.05, 0.01, ground(0.0, 0.0), model="nonsmooth", mu=0.2
    )
    s.add(*corners)
    h = 1e-4
    res = _mj(s, h, 0.2)
    assert [c.name for c in s.unilateral] == [c.name for c in corners]
    summ = res.contact_summary
    for name in ("g.upper_front", "g.upper_rear"):
        assert summ[name]["impulses"] == 0 and summ[name]["first_contact_time"] is None
    t_land = math.sqrt(2.0 * 0.005 / G)
    for name in ("g.lower_front", "g.lower_rear"):
        assert abs(summ[name]["first_contact_time"] - t_land) <= h
        assert summ[name]["max_penetration"] <= res.stats["position_tol"]
    assert abs(res.q[-1, 1] + 0.005) <= res.stats["position_tol"]
    # the solver's stopping test (as _check_incline): corner velocities within ||W||_inf tol
    # max|P| (max|P| <= m g h (1 + mu)), the angular velocity their difference over a
    m, j, a2 = 0.5, 0.5 * (0.1**2 + 0.05**2) / 12.0, 0.05**2 + 0.025**2
    du = 4.0 * (1.0 / m + a2 / j) * TOL * m * G * h * 1.2 + 8 * EPS * G * h
    assert np.max(np.abs(res.v[-1, :2])) <= du
    assert abs(res.v[-1, 2]) <= 2.0 * du / 0.1
