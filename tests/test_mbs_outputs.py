"""Outputs of general mechanisms (ancf_beam.mbs.outputs) and their animation
(ancf_beam.animation): marker and body positions against the body coordinates, a driven crank's
torque and a pendulum's pivot force against closed forms, two contacts reported by name
against the Hertz impact's closed form, the GIF's frames and size."""

import json
import math
import types

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from ancf_beam.animation import MAX_RATIO, animate_mechanism, hermite_curve, motion_figure, zigzag
from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.config.contact import contact_law
from ancf_beam.mbs.bodies import BeamBody, PointMass, RigidBody, ground
from ancf_beam.mbs.forces import CircleContact, SpringDamper
from ancf_beam.mbs.integrators import IntegratorSettings, integrate
from ancf_beam.mbs.joints import Driver, Revolute
from ancf_beam.mbs.outputs import contact_state, general_outputs, geometry
from ancf_beam.mbs.system import System

EPS = float(np.finfo(float).eps)
G = 9.81


def _mech(system, markers=None, bodies=None, drivers=None, contacts=None):
    """The duck-typed built mechanism the outputs read."""
    return types.SimpleNamespace(
        system=system,
        markers=markers or {},
        named_bodies=bodies or {},
        drivers=drivers or {},
        contacts=contacts or {},
        continuous_factor={name: 5.0 for name in contacts or {}},
    )


def _dataset(mech, res, case="test"):
    summary, data, coords = general_outputs(mech, res)
    ds = xr.Dataset(data, coords=coords)
    ds.attrs["geometry"] = json.dumps(geometry(mech))
    ds.attrs["case"] = case
    return summary, ds


def _kkt_cond(system, q, t=0.0):
    """Condition number of the index-1 system ``[[M, Phi_q^T], [Phi_q, 0]]`` at ``q``."""
    jac = system.jacobian(q, t)
    m = system.mass_dense()
    k = np.block([[m, jac.T], [jac, np.zeros((len(jac), len(jac)))]])
    return float(np.linalg.cond(k))


# ------------------------------------------------------------------------------------------
# positions
# ------------------------------------------------------------------------------------------
def _double_pendulum():
    """Two uniform rigid links (0.3 m, 0.2 m) pinned in a chain to the ground at the origin,
    released from rest at 30 and -20 degrees, and a point mass pinned to the second link's tip
    (a third body: point masses have no angle)."""
    s = System(g=G, name="double_pendulum")
    l1, l2 = 0.3, 0.2
    a1, a2 = math.radians(30.0), math.radians(-20.0)
    tip1 = (l1 * math.cos(a1), l1 * math.sin(a1))
    b1 = RigidBody(
        "upper", mass=1.0, inertia=l1**2 / 12, angle=a1, position=(0.5 * tip1[0], 0.5 * tip1[1])
    )
    b2 = RigidBody(
        "lower",
        mass=0.5,
        inertia=0.5 * l2**2 / 12,
        angle=a2,
        position=(tip1[0] + 0.5 * l2 * math.cos(a2), tip1[1] + 0.5 * l2 * math.sin(a2)),
    )
    bob = PointMass(
        "bob", mass=0.1, position=(tip1[0] + l2 * math.cos(a2), tip1[1] + l2 * math.sin(a2))
    )
    s.add(b1, b2, bob)
    markers = {
        "upper.pivot": b1.marker(-0.5 * l1, 0.0),
        "upper.tip": b1.marker(0.5 * l1, 0.0),
        "upper.side": b1.marker(0.05, 0.02),  # off the axis: exercises both components
        "lower.tip": b2.marker(0.5 * l2, 0.0),
    }
    s.add(
        Revolute("pivot", p=markers["upper.pivot"], q=ground(0.0, 0.0)),
        Revolute("elbow", p=markers["upper.tip"], q=b2.marker(-0.5 * l2, 0.0)),
        Revolute("hook", p=markers["lower.tip"], q=bob.point()),
    )
    s.finalize()
    return _mech(s, markers, {"upper": b1, "lower": b2, "bob": bob})


def test_points_and_bodies_are_the_body_coordinates():
    mech = _double_pendulum()
    res = integrate(
        mech.system, IntegratorSettings("generalized-alpha", t_end=0.3, dt=1e-3, sample_dt=1e-2)
    )
    summary, ds = _dataset(mech, res)
    q = res.q
    local = {
        "upper.pivot": (0, -0.15, 0.0),
        "upper.tip": (0, 0.15, 0.0),
        "upper.side": (0, 0.05, 0.02),
        "lower.tip": (3, 0.1, 0.0),
    }
    for name, (o, sx, sy) in local.items():
        # r = (x, y) + A(theta) s by hand; round-off: a few eps of |x| + |s| (< 0.5 m)
        c, s = np.cos(q[:, o + 2]), np.sin(q[:, o + 2])
        x = q[:, o] + c * sx - s * sy
        y = q[:, o + 1] + s * sx + c * sy
        bound = 4 * EPS * 0.5
        assert np.max(np.abs(ds["marker_x"].sel(marker=name).values - x)) <= bound
        assert np.max(np.abs(ds["marker_y"].sel(marker=name).values - y)) <= bound
        assert abs(summary["points"][name][0] - x[-1]) <= bound
        assert abs(summary["points"][name][1] - y[-1]) <= bound
    assert list(summary["points"]) == list(local)
    for name, o in (("upper", 0), ("lower", 3)):  # exactly the coordinates (copies)
        assert summary["bodies"][name] == {"x": q[-1, o], "y": q[-1, o + 1], "theta": q[-1, o + 2]}
    assert summary["bodies"]["bob"] == {"x": q[-1, 6], "y": q[-1, 7], "theta": None}
    assert np.all(np.isnan(ds["body_theta"].sel(body="bob").values))
    # the pendulum moved (the comparison is not of a resting state) and both joints that the
    # markers share hold: the tip of the lower link is the bob (to the constraint violation)
    assert np.ptp(ds["body_theta"].sel(body="upper").values) > 0.1
    bob = ds["body_x"].sel(body="bob").values - ds["marker_x"].sel(marker="lower.tip").values
    assert np.max(np.abs(bob)) <= np.max(res.phi_max) + 4 * EPS * 0.5
    assert set(summary["reaction_max"]) == {"pivot", "elbow", "hook"}
    assert summary["drive_torque"] == {} and "driver" not in ds.dims


def test_beam_nodes_chord_angle_and_hermite_curve():
    """A pinned ANCF pendulum (3 elements, soft enough to bend): the node variables are its
    coordinates, the beam's angle the chord's, and the drawn Hermite curve is the element's
    interpolation (BeamBody.point through the library's shape functions)."""
    case = resolve_case(
        {},
        None,
        {
            "beam.length": 0.6,
            "beam.width": 0.01,
            "beam.height": 0.01,
            "material.E0": 2.0e8,
            "material.rho": 7800.0,
            "mesh.n_elements": 3,
        },
    )
    s = System(g=G, name="beam_pendulum")
    beam = s.add(BeamBody("arm", model=BeamModel(case)))
    s.add(Revolute("pivot", p=beam.node(0), q=ground()))
    s.finalize()
    markers = {"arm.start": beam.node(0), "arm.mid": beam.point(0.3), "arm.end": beam.node(-1)}
    mech = _mech(s, markers, {"arm": beam})
    res = integrate(s, IntegratorSettings("generalized-alpha", t_end=0.4, dt=1e-3, sample_dt=0.05))
    summary, ds = _dataset(mech, res)
    q = res.q.reshape(len(res.t), 4, 4)  # node-major r_x, r_y, r'_x, r'_y
    for j, key in enumerate(("node_x", "node_y", "node_slope_x", "node_slope_y")):
        assert np.array_equal(ds[key].values, q[:, :, j])
    assert list(ds["node_body"].values) == ["arm"] * 4
    assert list(ds["node_index"].values) == [0, 1, 2, 3]
    chord = np.arctan2(q[:, 3, 1] - q[:, 0, 1], q[:, 3, 0] - q[:, 0, 0])
    # the chord angle between -pi and pi needs no unwrapping here: it is the arctan2 itself
    assert np.array_equal(ds["body_theta"].values[:, 0], chord)
    assert summary["bodies"]["arm"]["theta"] == chord[-1]
    assert np.array_equal(summary["points"]["arm.mid"], beam.point(0.3).position(res.q[-1]))
    # the curve through the elements: at xi = k / 11 of each element (CURVE_POINTS = 12)
    curve = hermite_curve(q[-1], beam.model.le)
    xs = [(e + k / 11) * 0.2 for e in range(3) for k in range(11)] + [0.6]
    ref = np.array([beam.point(x).position(res.q[-1]) for x in xs])
    # two evaluations of the same cubic: round-off of |r| + le |r'| (< 1 m), a few eps
    assert np.max(np.abs(curve - ref)) <= 8 * EPS * 1.0
    u = (curve[-1] - curve[0]) / np.linalg.norm(curve[-1] - curve[0])
    rel = curve - curve[0]
    sag = np.max(np.abs(u[0] * rel[:, 1] - u[1] * rel[:, 0]))  # distance from the chord
    assert sag > 1e-3  # it bends: the curve is not the chord
    geo = json.loads(ds.attrs["geometry"])
    assert geo["bodies"]["arm"] == {
        "type": "beam",
        "markers": ["arm.start", "arm.mid", "arm.end"],
        "nodes": [0, 4],
        "element_length": beam.model.le,
    }
    assert geo["ground_pins"] == [[0.0, 0.0]]


# ------------------------------------------------------------------------------------------
# drive torque and joint reactions against closed forms
# ------------------------------------------------------------------------------------------
M, L = 0.5, 0.2  # uniform link: kg, m
J_C = M * L**2 / 12  # centroidal inertia
I_O = J_C + M * (L / 2) ** 2  # about the pivot at one end


def _crank(function=None, angle=0.0):
    """A uniform link pinned at one end to the ground at the origin (centre of mass at L/2
    along its axis), driven by ``function`` (or free)."""
    s = System(g=G, name="crank")
    c = s.add(
        RigidBody(
            "crank",
            mass=M,
            inertia=J_C,
            angle=angle,
            position=(0.5 * L * math.cos(angle), 0.5 * L * math.sin(angle)),
        )
    )
    s.add(Revolute("pivot", p=c.marker(-0.5 * L, 0.0), q=ground()))
    drivers = {}
    if function is not None:
        drivers["drive"] = s.add(Driver("drive", body=c, function=function))
    s.finalize()
    return _mech(s, {"crank.tip": c.marker(0.5 * L, 0.0)}, {"crank": c}, drivers)


def _pivot_force(theta, omega, alpha):
    """Force (N) of the pivot on the link: ``m a_c - m g``, ``a_c = (L/2) (alpha t - omega^2
    e)`` with ``e = (cos, sin)``, ``t = (-sin, cos)`` of ``theta``."""
    c, s = np.cos(theta), np.sin(theta)
    ax = 0.5 * L * (-alpha * s - omega**2 * c)
    ay = 0.5 * L * (alpha * c - omega**2 * s)
    return np.stack([M * ax, M * ay + M * G], -1)


def test_drive_torque_of_an_accelerated_crank_is_the_closed_form():
    """theta = theta0 + w0 t + a t^2 / 2 under gravity: about the pivot I_O theta'' = tau -
    m g (L/2) cos(theta), so tau = I_O a + m g (L/2) cos(theta) (the driver's torque, ccw +);
    the pivot force m a_c - m g as well."""
    th0, w0, acc = 0.3, 5.0, 40.0
    mech = _crank(lambda t: (th0 + w0 * t + 0.5 * acc * t * t, w0 + acc * t, acc), angle=th0)
    res = integrate(
        mech.system,
        IntegratorSettings("adaptive", t_end=0.5, sample_dt=5e-3, rtol=1e-10, atol=1e-12),
    )
    summary, ds = _dataset(mech, res)
    theta, omega = res.q[:, 2], res.v[:, 2]
    tau = I_O * acc + M * G * 0.5 * L * np.cos(theta)
    f = _pivot_force(theta, omega, acc)
    # The index-1 solve at each sample gives the multipliers of that state: they depend on
    # (theta, omega) alone (the pivot's gamma and the driver's theta'' = a), so the closed
    # form at the sampled theta, omega leaves only the solve's round-off: a few eps times
    # the condition number of [[M, Phi_q^T], [Phi_q, 0]] times the largest term (N; times
    # L/2 for N m). Measured: see below (well inside).
    cond = max(_kkt_cond(mech.system, q) for q in res.q[::20])
    scale = M * G + M * 0.5 * L * (np.max(omega) ** 2 + acc)
    err_tau = np.max(np.abs(ds["drive_torque"].sel(driver="drive").values - tau))
    err_f = np.max(np.abs(ds["reaction_force"].sel(joint="pivot").values - np.hypot(*f.T)))
    assert err_tau <= 8 * EPS * cond * scale * L
    assert err_f <= 8 * EPS * cond * scale
    assert summary["drive_torque"]["drive"] == ds["drive_torque"].values[-1, 0]
    assert summary["drive_torque_max"]["drive"] == pytest.approx(
        np.max(np.abs(tau)), abs=8 * EPS * cond * scale * L
    )
    assert np.ptp(tau) > 0.5 * M * G * L  # theta turns through a good part of a revolution
    assert np.max(np.abs(ds["reaction_force_x"].values[:, 0] - f[:, 0])) <= 8 * EPS * cond * scale


def test_pinned_pendulum_reaction_is_the_closed_form():
    """A uniform rod released from rest horizontally: theta'' = -m g (L/2) cos(theta) / I_O;
    the pivot force m a_c - m g (in particular m g / 4 at release, textbook)."""
    mech = _crank()
    res = integrate(
        mech.system,
        IntegratorSettings("adaptive", t_end=0.4, sample_dt=2e-3, rtol=1e-10, atol=1e-12),
    )
    summary, ds = _dataset(mech, res)
    theta, omega = res.q[:, 2], res.v[:, 2]
    alpha = -M * G * 0.5 * L * np.cos(theta) / I_O
    f = np.hypot(*_pivot_force(theta, omega, alpha).T)
    # round-off of the index-1 solve at the sampled state, as for the driven crank
    cond = max(_kkt_cond(mech.system, q) for q in res.q[::20])
    scale = M * G + M * 0.5 * L * (np.max(omega) ** 2 + np.max(np.abs(alpha)))
    got = ds["reaction_force"].sel(joint="pivot").values
    assert np.max(np.abs(got - f)) <= 8 * EPS * cond * scale
    assert got[0] == pytest.approx(M * G / 4, abs=8 * EPS * cond * scale)
    assert summary["reaction_max"] == {"pivot": float(np.max(got))}
    assert np.min(theta) < -1.5  # it swung through the bottom (reaction near 5/2 m g there)
    assert np.max(got) > 2.4 * M * G


# ------------------------------------------------------------------------------------------
# contacts
# ------------------------------------------------------------------------------------------
K_HERTZ = 1.0e9  # N/m^1.5
#: two independent impacts: (m1, m2, approach speed, gap)
#: (onsets at 2.13 ms and 2.535 ms: between the samples of the central-difference run)
PAIRS = {"left": (1.0, 2.0, 1.0, 2.13e-3), "right": (0.5, 0.5, 2.0, 5.07e-3)}


def _two_impacts():
    """Two pairs of discs (radius 10 mm) on parallel lines, each closing at its speed: two
    contacts in one system, no gravity, no dissipation (Hertz)."""
    law = contact_law({"law": "hertz", "K": K_HERTZ}, "contact")
    s = System(g=0.0, name="two_impacts")
    contacts, bodies = {}, {}
    for k, (name, (m1, m2, v, gap)) in enumerate(PAIRS.items()):
        y = 0.1 * k
        a = s.add(PointMass(f"{name}_a", mass=m1, position=(0.0, y), velocity=(v, 0.0)))
        b = s.add(PointMass(f"{name}_b", mass=m2, position=(0.02 + gap, y)))
        bodies.update({a.name: a, b.name: b})
        contacts[name] = s.add(
            CircleContact(name, p=a.point(), q=b.point(), r_p=0.01, r_q=0.01, law=law)
        )
    s.finalize()
    return _mech(s, bodies=bodies, contacts=contacts)


def _hertz_impact(m1, m2, v):
    """Closed form of an undamped Hertz impact ``m x'' = -K x^1.5``: peak penetration, peak
    force and duration ``2 d/v int_0^1 (1 - u^2.5)^(-1/2) du``."""
    m = m1 * m2 / (m1 + m2)
    d = (2.5 * m * v * v / (2.0 * K_HERTZ)) ** 0.4
    integral = quad(lambda u: (1.0 - u**2.5) ** -0.5, 0.0, 1.0, epsabs=1e-13)[0]
    return d, K_HERTZ * d**1.5, 2.0 * d / v * integral


def test_two_contacts_are_reported_separately_by_name():
    mech = _two_impacts()
    t_end = 6e-3
    st = IntegratorSettings(
        "adaptive", t_end=t_end, sample_dt=1e-5, method="DOP853", rtol=1e-10, atol=1e-14
    )
    res = integrate(mech.system, st)
    summary, ds = _dataset(mech, res)
    assert list(ds["contact"].values) == ["left", "right"]
    assert list(summary["contacts"]) == ["left", "right"]
    for name, (m1, m2, v, gap) in PAIRS.items():
        c = summary["contacts"][name]
        d, f, dur = _hertz_impact(m1, m2, v)
        # free flight is exact (a Runge-Kutta step reproduces uniform motion), the onset is
        # located on it to the event tolerance (1e-10 of a step, ulps of t): 1e-12 s bounds it
        assert c["first_contact_time"] == pytest.approx(gap / v, abs=1e-12)
        assert c["impacts"] == 1 and c["continuous_contacts"] == 0
        assert c["max_eccentricity_ratio"] is None  # two discs, not a journal
        # the impact integrated at rtol 1e-10 with DOP853 (order 8): the global error of the
        # peak sums the local errors over the impact's steps (< 1e3 of them), each at most rtol
        # of the state: 1e-7 relative; measured 1e-11
        assert c["max_penetration"] == pytest.approx(d, rel=1e-7)
        assert c["max_contact_force"] == pytest.approx(f, rel=1.5e-7)  # 1.5 x: F ~ d^1.5
        assert c["first_impact_force"] == pytest.approx(f, rel=1.5e-7)
        assert c["contact_fraction"] == pytest.approx(dur / t_end, rel=1e-7)
        pen = ds["penetration"].sel(contact=name).values
        inside = ds["time"].values[pen > 0.0]
        # the samples in contact lie inside this contact's own interval (not the other's)
        assert inside.min() >= gap / v and inside.max() <= gap / v + dur
        # the record's episode ends at the separation (the gap's zero), also when the step
        # that follows it is long (free flight to t_end): its duration the closed form's
        ep = res.contact.episodes[list(PAIRS).index(name)]
        assert ep[2] - ep[1] == pytest.approx(dur, rel=1e-7)
        state = ds["contact_state"].sel(contact=name).values
        assert set(np.unique(state)) == {0, 1} and np.array_equal(state == 1, pen > 0.0)
    assert res.steps < 1000  # the count the error bound above assumes


def test_contacts_from_samples_without_a_contact_record():
    """Central differences keep no contact record: the episodes come from the samples (onset at
    the zero of the interpolated penetration: within one sample interval of the exact one)."""
    mech = _two_impacts()
    t_end, h = 6e-3, 2e-5
    res = integrate(
        mech.system, IntegratorSettings("central-difference", t_end=t_end, dt=1e-7, sample_dt=h)
    )
    assert res.contact is None
    summary, _ = _dataset(mech, res)
    for name, (m1, m2, v, gap) in PAIRS.items():
        c = summary["contacts"][name]
        d, f, dur = _hertz_impact(m1, m2, v)
        assert abs(c["first_contact_time"] - gap / v) <= h
        assert c["impacts"] == 1 and c["continuous_contacts"] == 0
        # the peak from samples h apart: the largest sample is within h^2 |F''| / 8 of it,
        # |F''| about 1.5 (pi / dur)^2 F at the peak of the half-sine-like F ~ delta^1.5
        # (the parabola's refinement only improves on it): twice that bounds it (3e-3
        # relative here; measured 4e-6). The duration's ends by linear interpolation of the
        # penetration across a sample interval: within h each
        rel = 2 * h**2 / 8 * 1.5 * (math.pi / dur) ** 2
        assert c["max_contact_force"] == pytest.approx(f, rel=rel)
        assert c["contact_fraction"] * t_end == pytest.approx(dur, abs=2 * h)


# ------------------------------------------------------------------------------------------
# animation
# ------------------------------------------------------------------------------------------
def _journal_scene():
    """A triangular plate swinging from a ground pin, and a journal (point mass, 9.5 mm)
    rattling in a ground bearing (10 mm) under gravity: every kind of item the animation
    draws except beams (tested above) and guides."""
    law = contact_law({"law": "lankarani-nikravesh", "K": 5.0e9, "restitution": 0.8}, "contact")
    s = System(g=G, name="journal_scene")
    plate = s.add(RigidBody("plate", mass=1.0, inertia=2e-3, position=(0.1, 0.0)))
    journal = s.add(PointMass("journal", mass=0.2, position=(0.3, 0.0), velocity=(0.05, 0.08)))
    markers = {
        "plate.a": plate.marker(-0.1, 0.0),
        "plate.b": plate.marker(0.05, 0.06),
        "plate.c": plate.marker(0.05, -0.06),
    }
    s.add(Revolute("pin", p=markers["plate.a"], q=ground(0.0, 0.0)))
    bearing = s.add(
        CircleContact(
            "bearing",
            p=ground(0.3, 0.0),
            q=journal.point(),
            inside=True,
            r_p=0.010,
            r_q=0.0095,
            law=law,
        )
    )
    s.finalize()
    return _mech(s, markers, {"plate": plate, "journal": journal}, contacts={"bearing": bearing})


def _state_by_masks(t, delta, eps, kinds):
    """The definition of the per-sample contact state: every episode's closed interval (open
    when t_off is NaN) where the penetration is positive, later episodes over earlier ones."""
    state = np.zeros(len(t), dtype=np.int8)
    for (t_on, t_off), kind in zip(eps[:, 1:3], kinds, strict=True):
        t_off = np.inf if np.isnan(t_off) else t_off
        state[(t >= t_on) & (t <= t_off) & (delta > 0.0)] = kind
    return state


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 60),
    seed=st.integers(0, 2**32 - 1),
    n_eps=st.integers(0, 6),
    on_sample=st.booleans(),
)
def test_contact_state_is_the_episode_masks(n, seed, n_eps, on_sample):
    """contact_state (index ranges by bisection) equals the masks of its definition, also
    when onsets and ends fall on sample times, episodes overlap, one is still open (NaN end)
    or lies outside the run, and where the penetration is 0, negative or NaN."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.0, 1.0, n) * (rng.uniform(size=n) > 0.2))  # repeats too
    delta = rng.choice([-1.0, 0.0, 1e-9, 1.0, np.nan], size=n)
    lo, hi = t[0] - 1.0, t[-1] + 1.0
    ends = t[rng.integers(0, n, (n_eps, 2))] if on_sample else rng.uniform(lo, hi, (n_eps, 2))
    ends.sort(axis=1)
    eps = np.zeros((n_eps, 6))
    eps[:, 1:3] = ends
    if n_eps:
        eps[rng.integers(0, n_eps), 2] = np.nan
    kinds = rng.integers(1, 3, n_eps).astype(np.int8)
    np.testing.assert_array_equal(
        contact_state(t, delta, eps, kinds), _state_by_masks(t, delta, eps, kinds)
    )


def test_contact_state_refuses_falling_sample_times():
    eps = np.array([[0, 0.5, 1.5, 0, 0, 0]], float)
    with pytest.raises(ValueError, match="must not decrease"):
        contact_state(np.array([0.0, 2.0, 1.0]), np.ones(3), eps, np.array([1], np.int8))


def _frames_match_full_drawings(ds, tmp_path, frames=12):
    """The blitted GIF (still parts drawn once) against the same scene drawn whole for every
    frame by matplotlib's PillowWriter: the same frames, up to edge pixels where a still part
    and a moving one overlap."""
    from matplotlib.animation import PillowWriter
    from PIL import Image, ImageSequence

    from ancf_beam import animation as an

    m = an._Motion(ds)
    fig, ax, insets = an._layout(m, True)
    ups = an._static(ax, m) + an._body_artists(ax, m, 1.0, 5.0) + an._joint_artists(ax, m, 1.0)
    ups += an._contact_artists(ax, m, 1.0) + an._spring_artists(ax, m, 1.0)
    inset_ups = [an._inset(a, m, name) for name, a in insets]
    title = ax.set_title("", fontsize=9)
    digits = an._decimals(float(m.t[-1] - m.t[0]), frames)
    full = tmp_path / "full.gif"
    writer = PillowWriter(fps=15)
    with writer.saving(fig, str(full), 72):
        for t in np.linspace(m.t[0], m.t[-1], frames):
            an._show_time(m, float(t), ups, inset_ups, title, digits)
            writer.grab_frame()  # the whole figure drawn
    blit = animate_mechanism(ds, tmp_path / "blit.gif", frames=frames)

    def decoded(path):
        with Image.open(path) as im:
            return [np.asarray(f.convert("RGB"), int) for f in ImageSequence.Iterator(im)]

    a, b = decoded(full), decoded(blit)
    assert len(a) == len(b) == frames
    moved = np.abs(b[0] - b[-1]).max(axis=2) > 60
    assert moved.mean() > 1e-3  # the scene moves between the first and the last frame
    for fa, fb in zip(a, b, strict=True):
        assert fa.shape == fb.shape
        # measured: no pixel differs in this scene; the ground pin drawn under the plate
        # instead of over it (a full drawing's order) differs in 2.7e-3 of them
        assert (np.abs(fa - fb).max(axis=2) > 0).mean() < 1e-3


def test_animation_gif_frames_and_size(tmp_path):
    mech = _journal_scene()
    res = integrate(
        mech.system,
        IntegratorSettings(
            "generalized-alpha",
            t_end=0.05,
            dt=1e-4,
            dt_contact=2e-6,
            step_control=True,
            sample_dt=5e-4,
        ),
    )
    summary, ds = _dataset(mech, res, "journal_scene")
    assert summary["contacts"]["bearing"]["impacts"] >= 2
    assert summary["contacts"]["bearing"]["max_eccentricity_ratio"] > 1.0
    nc = tmp_path / "run.nc"
    ds.to_netcdf(nc, engine="netcdf4")  # as --out writes it
    ds = xr.load_dataset(nc, engine="netcdf4")
    geo = json.loads(ds.attrs["geometry"])
    assert geo["contacts"]["bearing"]["type"] == "journal-bearing"
    assert geo["bodies"]["plate"]["closed"]  # three markers and the centre: a polygon
    from PIL import Image

    for frames in (60, 7):
        path = animate_mechanism(ds, tmp_path / f"scene{frames}.gif", frames=frames)
        with Image.open(path) as im:
            assert im.format == "GIF"
            assert im.n_frames == frames  # distinct frames (the time in the title differs)
        size = path.stat().st_size
        assert 0 < size <= 3_000_000  # the cap at the defaults (60 frames, 72 dpi)
    _frames_match_full_drawings(ds, tmp_path)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 4))
    ax = motion_figure(ds, fig.add_subplot(), snapshots=4)
    assert ax.get_xlim()[0] < 0.0 < 0.31 < ax.get_xlim()[1]  # the whole scene in view
    fig.savefig(tmp_path / "snapshots.png")


def test_zigzag_runs_from_end_to_end_within_its_width():
    a, b = np.array([0.2, -0.1]), np.array([0.5, 0.3])  # 0.5 m apart
    pts = zigzag(a, b, 6, 0.01)
    assert len(pts) == 16
    assert np.array_equal(pts[0], a) and np.allclose(pts[-1], b, rtol=0, atol=4 * EPS)
    u = (b - a) / 0.5
    along = (pts - a) @ u
    across = (pts - a) @ np.array([-u[1], u[0]])
    assert np.all(np.diff(along) > 0)  # it never turns back
    assert np.allclose(np.abs(across[2:-2]), 0.01, rtol=0, atol=4 * EPS)
    assert np.allclose(across[[0, 1, -2, -1]], 0.0, rtol=0, atol=4 * EPS)  # straight leads


def test_a_spring_is_drawn_and_a_vertical_motion_gets_a_readable_box(tmp_path):
    """A bob bouncing on a vertical spring below a ground anchor: the spring is part of the
    geometry and drawn from the anchor to the bob in every frame; the scene moves along one
    line, and its box is widened to at most MAX_RATIO of height per width (before, the x axis
    was a few mm wide, and its tick labels ran into each other)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    s = System(g=G, name="bob")
    bob = PointMass("bob", mass=0.2, position=(0.0, -0.5))
    s.add(bob)
    s.add(SpringDamper("spring", p=bob.point(), q=ground(0.0, 0.0), k=40.0, c=0.1, l0=0.45))
    s.finalize()
    mech = _mech(s, {"bob.cm": bob.point()}, {"bob": bob})
    res = integrate(s, IntegratorSettings("generalized-alpha", t_end=0.5, dt=1e-3, sample_dt=1e-2))
    _, ds = _dataset(mech, res, "bob")
    geo = json.loads(ds.attrs["geometry"])
    ends = geo["springs"]["spring"]["points"]
    assert ends[0]["body"] == "bob" and ends[1]["kind"] == "ground"
    fig = Figure(figsize=(8, 5.5))
    ax = motion_figure(ds, fig.add_subplot(), snapshots=3)
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert y1 - y0 <= MAX_RATIO * (x1 - x0) * (1 + 1e-12)
    assert y1 > 0.0 > -0.5 > y0  # the anchor and the bob in view
    springs = [a for a in ax.get_children() if isinstance(a, Line2D) and len(a.get_xdata()) == 16]
    assert len(springs) == 3  # one per snapshot
    y_bob = ds["marker_y"].values[-1, 0]
    last = np.column_stack(springs[-1].get_data())
    assert np.allclose(last[[0, -1], 1], [y_bob, 0.0], rtol=0, atol=1e-12)
    fig.savefig(tmp_path / "bob.png")
    path = animate_mechanism(ds, tmp_path / "bob.gif", frames=5)
    assert path.stat().st_size > 0
