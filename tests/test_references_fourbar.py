"""The four-bar reference (:mod:`ancf_beam.references.fourbar`) against independent checks:
loop closure at round-off (also for random Grashof crank-rockers, hypothesis), the closed-form
rates and accelerations against central differences of the closed-form angles, and the
Newton-Euler drive torque and pin forces against the bodies' power and momentum balances
(energies and momenta differenced in time; the pins do no net work).

Bounds: round-off from the operation count (stated at each), finite differences from the
Richardson estimate of two step sizes ``h``, ``h/2`` (the central scheme's error of ``D(h/2)``
is ``|D(h) - D(h/2)| / 3 + O(h^4)``) times the project's factor of safety ``FS``, plus the
rounding of the differenced values divided by the step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ancf_beam.references.fourbar import FourBar
from conftest import FS, HYPOTHESIS_SETTINGS

EPS = np.finfo(float).eps
SETTINGS = HYPOTHESIS_SETTINGS  # conftest: seeded, no database, no shrinking
#: (initial crank rate rad/s, crank acceleration rad/s^2) of the test motions: the issue's
#: constant 100 rad/s, a start-up dominated by a1, a decelerating reversed crank
MOTIONS = [(100.0, 0.0), (10.0, 1.0e3), (-50.0, -2.0e3)]


def _e(t):
    return np.stack([np.cos(t), np.sin(t)], axis=-1)


def _n(t):
    return np.stack([-np.sin(t), np.cos(t)], axis=-1)


def _wrap(a):
    return np.angle(np.exp(1j * a))


def closure_bound(fb: FourBar) -> float:
    """Round-off bound of ``|B + l2 e2 - C|`` (C = D + l3 e3): the circle intersection keeps
    ``|C - B| = l2`` to a few ulps of ``l2``, and ``|C - D| = l3`` to ``delta err(a) / l3``
    with ``err(a)`` a few ulps of ``(l2^2 + l3^2 + delta^2) / (2 delta)`` (``delta <= l1 +
    d``); cos, sin, atan2 and the sums add a few ulps of each length. 4 ulps per term."""
    lengths = fb.l1 + fb.l2 + fb.l3 + fb.d
    return 4 * EPS * ((fb.l2**2 + fb.l3**2 + (fb.l1 + fb.d) ** 2) / fb.l3 + lengths)


def closure_residual(fb: FourBar, theta1) -> np.ndarray:
    th2, _ = fb.angles(theta1)
    p = fb.points(theta1)
    gap = p["crank.tip"] + fb.l2 * _e(th2) - p["rocker.tip"]
    return np.hypot(gap[..., 0], gap[..., 1])


def richardson(fun, t, h, order):
    """Central differences of ``fun`` (values ``(len(t), ...)``) at ``t`` with steps ``h`` and
    ``h/2``: first (``order`` 1) or second derivative. Returns ``(D(h/2), estimate of its
    truncation error = max_t |D(h) - D(h/2)| / 3)``, the latter per component."""

    def diff(k):
        fp, f0, fm = fun(t + k), fun(t), fun(t - k)
        return (fp - fm) / (2 * k) if order == 1 else (fp - 2 * f0 + fm) / k**2

    coarse, fine = diff(h), diff(h / 2)
    return fine, np.max(np.abs(coarse - fine), axis=0) / 3


def motion(w0, a1):
    """Crank motion ``theta1 = w0 t + a1 t^2 / 2`` over a bit more than one turn at the
    sample times, and the time step that turns the crank by about 0.01 rad."""
    t_end = 2.5 * math.pi / max(abs(w0), math.sqrt(abs(a1)))
    t = np.linspace(0.0, t_end, 401)
    return t, 1e-2 / (abs(w0) + abs(a1) * t_end), lambda s: w0 * s + 0.5 * a1 * s * s


def test_defaults_and_branch():
    fb = FourBar()
    assert (fb.l1, fb.l2, fb.l3, fb.d) == (0.05, 0.2, 0.15, 0.25)
    th = np.linspace(0, 2 * np.pi, 721)
    c = fb.points(th)["rocker.tip"]
    assert np.all(c[:, 1] > 0)  # C above the x axis on the whole turn
    theta2, theta3 = fb.angles(np.zeros((3, 4)))
    assert theta2.shape == theta3.shape == (3, 4)
    assert fb.points(0.3)["coupler.mid"].shape == (2,)
    # at theta1 = 0 the triangle B C D has sides 0.2, 0.15, 0.2: C from the law of cosines
    cos_b = (0.2**2 + 0.2**2 - 0.15**2) / (2 * 0.2 * 0.2)
    assert theta2 == pytest.approx(math.acos(cos_b), abs=8 * EPS)


def test_bad_geometry_is_refused():
    with pytest.raises(ValueError, match="FourBar.l2 = -1"):
        FourBar(l2=-1)
    with pytest.raises(ValueError, match="cannot be assembled at theta1"):
        FourBar(l3=0.01).angles([0.0, 1.0])


def test_loop_closure_at_round_off():
    fb = FourBar()
    th = np.linspace(-4 * np.pi, 4 * np.pi, 4001)
    res = closure_residual(fb, th)
    bound = closure_bound(fb)
    print(f"\nclosure: max residual {res.max():.3e} m, bound {bound:.3e} m")
    assert res.max() <= bound


_grashof = st.tuples(
    st.floats(-2.0, 1.0),  # log10 of the ground length d (m)
    st.floats(0.05, 0.45),  # crank l1 / d
    st.floats(0.02, 1.0),  # where l2 + l3 sits in [(d + l1)(1.02), 3 d]
    st.floats(-0.98, 0.98),  # (l2 - l3) / (d - l1)
    st.sampled_from([1, -1]),  # assembly branch
)


@settings(max_examples=60, **SETTINGS)
@given(_grashof)
def test_loop_closure_grashof_crank_rockers(draw):
    """Crank-rockers: with l1 < d and ``l2 + l3 > d + l1``, ``|l2 - l3| < d - l1`` every
    crank angle assembles (the crank is then the shortest link, s + l < p + q)."""
    log_d, f1, f_sum, f_diff, branch = draw
    d = 10.0**log_d
    l1 = f1 * d
    lo = 1.02 * (d + l1)
    total = lo + f_sum * max(3 * d - lo, 0.0)
    diff = f_diff * (d - l1)
    fb = FourBar(l1=l1, l2=0.5 * (total + diff), l3=0.5 * (total - diff), d=d, branch=branch)
    th = np.linspace(0, 2 * np.pi, 361)
    assert closure_residual(fb, th).max() <= closure_bound(fb)
    b, c = fb.points(th)["crank.tip"], fb.points(th)["rocker.tip"]
    bd, bc = np.array([d, 0.0]) - b, c - b  # C on the chosen side of B -> D
    side = bd[:, 0] * bc[:, 1] - bd[:, 1] * bc[:, 0]
    assert np.all(np.sign(side) == branch)


@pytest.mark.parametrize("w0, a1", MOTIONS)
def test_rates_and_accelerations_against_differences(w0, a1):
    fb = FourBar()
    t, h, theta = motion(w0, a1)
    th1, w1 = theta(t), w0 + a1 * t
    th2, th3 = fb.angles(th1)

    def angles(s):  # unwrapped about the angles at t (the differences stay below pi)
        a2, a3 = fb.angles(theta(s))
        return np.stack([th2 + _wrap(a2 - th2), th3 + _wrap(a3 - th3)], axis=-1)

    # rounding of an angle: ~10 roundings of the intersection times its condition number,
    # 1 / |sin(theta2 - theta3)| (the transmission angle), on values up to pi
    d_theta = 16 * EPS * math.pi / np.abs(np.sin(th2 - th3)).min()
    for order, exact in (
        (1, np.stack(fb.rates(th1, w1), axis=-1)),
        (2, np.stack(fb.accelerations(th1, w1, a1), axis=-1)),
    ):
        fd, trunc = richardson(angles, t, h, order)
        rnd = (1.0 if order == 1 else 4.0) * d_theta / (h / 2) ** order
        err = np.max(np.abs(fd - exact), axis=0)
        print(f"\norder {order}: err {err}, estimate {trunc}, round-off {rnd:.1e}")
        assert np.all(err <= FS * trunc + rnd)


def body_states(fb: FourBar, th1, w1):
    """Per body: centre of mass (..., 2), its velocity and the angular velocity, from the
    closed-form angles, points and rates (no accelerations, no dynamics)."""
    th2, th3 = fb.angles(th1)
    w2, w3 = fb.rates(th1, w1)
    p = fb.points(th1)
    vb = fb.l1 * w1[..., None] * _n(th1)
    return [
        (0.5 * p["crank.tip"], 0.5 * vb, w1),
        (p["coupler.mid"], vb + 0.5 * fb.l2 * w2[..., None] * _n(th2), w2),
        (
            0.5 * (p["rocker.tip"] + np.array([fb.d, 0.0])),
            0.5 * fb.l3 * w3[..., None] * _n(th3),
            w3,
        ),
    ]


@pytest.mark.parametrize("w0, a1", MOTIONS)
def test_inverse_dynamics_against_power_and_momentum(w0, a1):
    """Per body: ``dE_k/dt`` = power of its pin forces and torque (``E_k = m v^2/2 + j w^2/2 +
    m g y``; a pin force does work only at a moving pin: ``tau w1 - F_B.v_B`` on the crank,
    ``F_B.v_B - F_C.v_C`` on the coupler, ``F_C.v_C`` on the rocker; their sum ``tau w1 =
    d(T + V)/dt``) and ``d(m v_G)/dt`` = resultant force (crank ``F_A - F_B``, coupler
    ``F_B - F_C``, rocker ``F_C + F_D``, each ``- m g e_y``): nine equations that fix the
    nine unknowns, energies and momenta differenced in time."""
    fb = FourBar()
    t, h, theta = motion(w0, a1)
    th1, w1 = theta(t), w0 + a1 * t
    sol = fb.inverse_dynamics(th1, w1, a1)
    f_b, f_c = sol["F_B"], sol["F_C"]
    v_b = fb.l1 * w1[..., None] * _n(th1)
    v_c = fb.l3 * np.stack(fb.rates(th1, w1), axis=-1)[:, 1:] * _n(fb.angles(th1)[1])
    power = [
        sol["torque"] * w1 - np.sum(f_b * v_b, axis=-1),
        np.sum(f_b * v_b, axis=-1) - np.sum(f_c * v_c, axis=-1),
        np.sum(f_c * v_c, axis=-1),
    ]
    forces = [sol["F_A"] - f_b, f_b - f_c, f_c + sol["F_D"]]
    masses, inertias = (fb.m1, fb.m2, fb.m3), (fb.j1, fb.j2, fb.j3)

    def balances(s):
        out = []
        states = body_states(fb, theta(s), w0 + a1 * s)
        for m, j, (g_pt, v_g, w) in zip(masses, inertias, states, strict=True):
            energy = 0.5 * m * np.sum(v_g**2, axis=-1) + 0.5 * j * w**2 + m * fb.g * g_pt[..., 1]
            out.append(np.column_stack([energy, m * v_g]))
        return np.stack(out, axis=1)  # (time, body, [E, p_x, p_y])

    rates, trunc = richardson(balances, t, h, 1)
    # rounding of the differenced energies and momenta: a few ulps of their largest values
    bound = FS * trunc + 8 * EPS * np.max(np.abs(balances(t)), axis=0) / (h / 2)
    for k in range(3):
        expected = np.column_stack([power[k], forces[k] - masses[k] * fb.g * np.array([0, 1])])
        err = np.max(np.abs(rates[:, k] - expected), axis=0)
        print(f"\nbody {k} [E, p_x, p_y]: err/bound {err / bound[k]}, bound {bound[k]}")
        assert np.all(err <= bound[k])
    total = np.sum(rates[:, :, 0], axis=1)  # tau w1 = d(T + V)/dt
    err = np.max(np.abs(total - sol["torque"] * w1))
    print(f"tau w1 = d(T + V)/dt: err {err:.3e}, bound {np.sum(bound[:, 0]):.3e}")
    assert err <= np.sum(bound[:, 0])
