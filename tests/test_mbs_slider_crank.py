"""Slider-crank: rigid mechanism against the closed-form kinematics and an independent
Newton-Euler inverse dynamics; Baumgarte stabilisation; the flexible (ANCF) connecting rod."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from ancf_beam.config import resolve_mechanism
from ancf_beam.mbs.analysis import midspan_deflection, settings_from_spec
from ancf_beam.mbs.integrators import integrate
from ancf_beam.mbs.mechanisms import build_mechanism
from ancf_beam.references.mechanism import slider_crank_kinematics

# rigid benchmark: crank 0.05 m / 0.30 kg / 1e-5 kg m^2, rod 0.12 m / 0.21 kg / 2.5e-4 kg m^2,
# slider 0.14 kg, 5000 rpm, gravity 9.81 m/s^2 along -y (centres of mass at mid-length)
R, L, MC, JC, MR, JR, MS, G = 0.05, 0.12, 0.30, 1e-5, 0.21, 2.5e-4, 0.14, 9.81
OMEGA = 5000 * 2 * math.pi / 60
PERIOD = 2 * math.pi / OMEGA
RIGID = {
    "kind": "slider-crank",
    "t_end": 2 * PERIOD,
    "sample_dt": 1e-5,
    "g": G,
    "crank": {"length": R, "mass": MC, "inertia": JC},
    "rod": {"model": "rigid", "length": L, "mass": MR, "inertia": JR},
    "slider": {"mass": MS, "inertia": 1e-5},
    "drive": {"omega": OMEGA},
}

# flexible benchmark: rigid crank 0.153 m / 0.038 kg / 7.4e-5, aluminium ANCF rod 0.306 m
# (rho = 2770, A = 4.49e-5 m^2 square, E = 70 GPa, 8 elements), slider 0.076 kg, 150 rad/s
RC, LF, OMF = 0.153, 0.306, 150.0
SIDE = math.sqrt(4.49e-5)
FLEX = {
    "kind": "slider-crank",
    "t_end": 0.1,
    "sample_dt": 1e-4,
    "crank": {"length": RC, "mass": 0.038, "inertia": 7.4e-5},
    "rod": {
        "model": "ancf",
        "beam": {"length": LF, "width": SIDE, "height": SIDE},
        "material": {"E0": 7.0e10, "rho": 2770.0},
        "mesh": {"n_elements": 8},
    },
    "slider": {"mass": 0.076, "inertia": 1e-6},
    "drive": {"omega": OMF},
}


def _run(block, overrides=None, **settings):
    spec = resolve_mechanism({"mechanisms": {"m": block}}, "m", overrides or {})
    mech = build_mechanism(spec)
    st = dataclasses.replace(settings_from_spec(spec), **settings)
    return mech, integrate(mech.system, st)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


EPS = float(np.finfo(float).eps)
#: safety factor on an error estimate from refinement (as the pipeline's estimate_factor)
SAFETY = 2.0


@pytest.fixture(scope="module")
def rigid_adaptive():
    """DOP853 at rtol 1e-10, and the same at rtol 1e-12 for the error estimates (its error at
    least kappa = 10 times smaller: Richardson |x - x_fine| 10 / 9)."""
    return (
        *_run(RIGID, {"integrator": "adaptive"}, rtol=1e-10, atol=1e-12),
        _run(RIGID, {"integrator": "adaptive"}, rtol=1e-12, atol=1e-14)[1],
    )


def _bound(x, x_fine, ref, steps, kappa=10.0, rtol=1e-10):
    """SAFETY x (the Richardson estimate of the relative error of ``x`` from ``x_fine`` + the
    error one step admits, rtol) + the round-off of the run (8 eps per step)."""
    return (
        SAFETY
        * (
            _rel(x, x_fine) * kappa / (kappa - 1) * np.max(np.abs(x_fine)) / np.max(np.abs(ref))
            + rtol
        )
        + 8 * EPS * steps
    )


def test_rigid_slider_matches_the_closed_form(rigid_adaptive):
    mech, res, fine = rigid_adaptive
    ref = slider_crank_kinematics(res.t, R, L, OMEGA)
    o = mech.slider.offset
    assert res.t[-1] <= 2 * PERIOD and 2 * PERIOD - res.t[-1] < 1e-5  # the last sample
    # relative to the largest value over two revolutions (the issue asks 1e-6), within SAFETY
    # x the estimate from the run at rtol 1e-12; measured 3.5e-10, 6.5e-10, 2.5e-10, 6.1e-10
    for x, xf, r in ((res.q[:, o], fine.q[:, o], ref["x"]), (res.v[:, o], fine.v[:, o], ref["v"]),
                     (res.a[:, o], fine.a[:, o], ref["a"]),
                     (res.q[:, mech.rod.angle_index], fine.q[:, mech.rod.angle_index],
                      ref["phi"])):  # fmt: skip
        assert _rel(x, r) <= _bound(x, xf, r, res.steps)


def test_rigid_slider_index3_positions_are_exact_and_rates_converge():
    """Generalized-alpha, index 3: positions on the constraint manifold at every step, rates
    second order in dt."""
    errs = []
    for dt in (2e-5, 1e-5, 5e-6):
        mech, res = _run(RIGID, {}, dt=dt)
        ref = slider_crank_kinematics(res.t, R, L, OMEGA)
        o = mech.slider.offset
        errs.append((_rel(res.q[:, o], ref["x"]), _rel(res.v[:, o], ref["v"])))
        # positions on the constraint manifold at every step: Newton's floor 64 eps max|q|
        # (0.17 m) over the largest x; measured 1.0e-14 and 2.1e-14
        assert errs[-1][0] <= 64 * EPS * 0.17 / np.max(np.abs(ref["x"])) * 2
    # velocities: second order, the observed order from three steps within 2 +- 0.25 (the next
    # term, O(dt^4), shrinks 4x faster); measured 1.5e-5 -> 3.7e-6 (ratio 4.0)
    order = math.log2((errs[0][1] - errs[1][1]) / (errs[1][1] - errs[2][1]))
    assert abs(order - 2.0) <= 0.25
    # and the error of the dt = 1e-5 run within its Richardson estimate x SAFETY
    assert errs[1][1] <= SAFETY * abs(errs[1][1] - errs[2][1]) * 4 / 3


def test_drive_torque_and_pin_reactions_match_newton_euler(rigid_adaptive):
    """Inverse dynamics written here from the closed-form kinematics, body by body (slider,
    rod, crank), against the multipliers of the forward run."""
    mech, res, fine = rigid_adaptive
    k = slider_crank_kinematics(res.t, R, L, OMEGA)
    th, ph = k["theta"], k["phi"]
    uc = np.stack([np.cos(th), np.sin(th)], -1)  # crank axis
    ur = np.stack([np.cos(ph), np.sin(ph)], -1)  # rod axis, crank pin -> slider pin
    nr = np.stack([-ur[:, 1], ur[:, 0]], -1)
    gvec = np.array([0.0, -G])

    def cross(a, b):
        return a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]

    a_crank = -0.5 * R * OMEGA**2 * uc  # centre of the crank, constant speed
    a_pin = -R * OMEGA**2 * uc
    a_rod = a_pin + 0.5 * L * (k["phi_ddot"][:, None] * nr - k["phi_dot"][:, None] ** 2 * ur)
    # slider: MS a_s = F2 + (0, N) + MS g, with F2 the rod's force on the slider (x: known)
    f2x = MS * k["a"]
    # rod: MR a_rod = F1 - F2 + MR g; JR phi'' = rA x F1 - rB x F2 (F1: the crank's force on
    # the rod); unknowns F1x, F1y, F2y
    ra, rb = -0.5 * L * ur, 0.5 * L * ur
    b = MR * a_rod - MR * gvec
    b[:, 0] += f2x  # F1 = b + (0, F2y)
    f2y = (JR * k["phi_ddot"] - cross(ra, b) - rb[:, 1] * f2x) / (ra[:, 0] - rb[:, 0])
    f1 = b + np.stack([0 * f2y, f2y], -1)
    f2 = np.stack([f2x, f2y], -1)
    normal = -f2y + MS * G  # slider y: 0 = F2y + N - MS g
    # crank: MC a_crank = F0 - F1 + MC g; 0 = T + rO x F0 - rP x F1 (F0: ground on crank)
    f0 = MC * a_crank + f1 - MC * gvec
    torque = -(cross(-0.5 * R * uc, f0) - cross(0.5 * R * uc, f1))

    sys_ = mech.system

    def force(name):
        j = sys_.joint(name)
        return j.reaction_force(res.lam[:, j.first_row : j.first_row + len(j.rows)], res.q)

    def fine_force(name):
        j = sys_.joint(name)
        return j.reaction_force(fine.lam[:, j.first_row : j.first_row + len(j.rows)], fine.q)

    drive = -res.lam[:, sys_.joint("drive").first_row]
    drive_f = -fine.lam[:, sys_.joint("drive").first_row]
    # relative to each quantity's largest magnitude (torque 139 N m, pivot 8.3 kN, crank pin
    # 6.2 kN, wrist pin 2.7 kN, guide 1.1 kN), within SAFETY x the estimate from the run at
    # rtol 1e-12 (the issue asks 1e-6); measured 2.6e-10, 1.4e-10, 1.9e-10, 2.5e-10, 5.6e-10
    n = res.steps
    assert _rel(drive, torque) <= _bound(drive, drive_f, torque, n)
    for name, sign, ref in (("pivot", 1, f0), ("crank_pin", -1, f1), ("wrist_pin", -1, f2)):
        got, got_f = sign * force(name), sign * fine_force(name)
        assert _rel(got, ref) <= _bound(got, got_f, ref, n), name
    guide = force("slider_guide")
    assert np.abs(guide[:, 0]).max() == 0.0
    assert _rel(guide[:, 1], normal) <= _bound(
        guide[:, 1], fine_force("slider_guide")[:, 1], normal, n
    )
    assert np.max(np.abs(torque)) > 100.0


def test_baumgarte_bounds_the_constraint_drift_that_grows_without_it():
    """Explicit central differences, dt = 2e-6 s, four revolutions: without stabilisation the
    position-level violation grows about quadratically; with alpha = beta = 1000/s it settles."""

    def per_revolution(alpha):
        _, res = _run(
            dict(RIGID, t_end=4 * PERIOD),
            {"integrator": "central-difference"},
            dt=2e-6,
            alpha=alpha,
            beta=alpha,
        )
        return [
            res.phi_max[(res.t > k * PERIOD) & (res.t <= (k + 1) * PERIOD)].max() for k in range(4)
        ]

    free = per_revolution(0.0)
    stab = per_revolution(1000.0)
    # without: the drift grows about quadratically in time (16x at the fourth revolution);
    # measured 8.6e-8, 3.5e-7, 7.8e-7, 1.4e-6 m (x16 from the first revolution); the claims
    # (growth, 8x) hold with margin 2
    assert all(b > 1.5 * a for a, b in zip(free, free[1:], strict=False))
    assert free[3] > 8 * free[0]
    # with: bounded (Baumgarte relaxes it within 1 / alpha = 1 ms, a tenth of a revolution):
    # flat to 10 %, 100x below the free drift; measured 1.1e-8 m in every revolution
    assert stab[3] <= 1.1 * stab[1]
    assert stab[3] <= free[3] / 100


# ------------------------------------------------------------------------------------------
# flexible connecting rod
# ------------------------------------------------------------------------------------------
def test_stiff_ancf_rod_matches_the_rigid_rod():
    """E raised 1000x: the ANCF run approaches the rigid-rod mechanism (same mass, inertia
    m L^2 / 12, the rigid motion the consistent mass represents exactly). At t = 0 the
    undeformed rod must suddenly carry the inertial loads and starts a vibration whose
    acceleration amplitude does not shrink with E (deflection ~ 1/E times omega^2 ~ E);
    generalized-alpha with rho_inf = 0 annihilates it (omega dt >> 1), what remains is the
    quasi-static deformation ~ 1/E. So accelerations and the torque are compared after 10 ms."""
    m_rod = 2770.0 * SIDE * SIDE * LF
    stiff = {**FLEX, "rod": {**FLEX["rod"], "material": {"E0": 7.0e13, "rho": 2770.0}}}
    rigid = {
        **FLEX,
        "rod": {"model": "rigid", "length": LF, "mass": m_rod, "inertia": m_rod * LF**2 / 12},
    }
    mf, rf = _run(stiff, {}, dt=1e-5, rho_inf=0.0)
    mr, rr = _run(rigid, {}, dt=1e-5, rho_inf=0.0)
    _, rf2 = _run(stiff, {}, dt=5e-6, rho_inf=0.0, sample_dt=1e-4)
    _, rr2 = _run(rigid, {}, dt=5e-6, rho_inf=0.0, sample_dt=1e-4)
    o1, o2 = mf.slider.offset, mr.slider.offset
    late = rf.t > 0.01
    tf = -rf.lam[:, mf.drive.first_row]
    tr = -rr.lam[:, mr.drive.first_row]
    tf2 = -rf2.lam[:, mf.drive.first_row]
    tr2 = -rr2.lam[:, mr.drive.first_row]
    # bounds: each run's discretisation error from the run at dt / 2 (second order, Richardson
    # kappa 4) times SAFETY, plus the rod's stretch under the largest drive load, F / (E A) l /
    # r with F = tau_max / r (relative to the slider's stroke), plus round-off; measured 1.0e-7
    # (x), 1.7e-6 (v), 6.5e-7 (a, t > 10 ms), 1.2e-5 (torque, t > 10 ms); the issue asks 1e-4
    area = SIDE * SIDE
    stretch = float(np.max(np.abs(tr))) / RC / (7.0e13 * area) * LF / RC
    floor = 8 * EPS * rf.steps
    rows = ((rf.q[:, o1], rr.q[:, o2], rf2.q[:, o1], rr2.q[:, o2], slice(None)),
            (rf.v[:, o1], rr.v[:, o2], rf2.v[:, o1], rr2.v[:, o2], slice(None)),
            (rf.a[:, o1], rr.a[:, o2], rf2.a[:, o1], rr2.a[:, o2], late),
            (tf, tr, tf2, tr2, late))  # fmt: skip
    for name, (a, b, a2, b2, keep) in zip("x v a torque".split(), rows, strict=True):
        sc = np.max(np.abs(b))
        est = (np.max(np.abs(a - a2)[keep]) + np.max(np.abs(b - b2)[keep])) * 4 / 3 / sc
        err = np.max(np.abs(a - b)[keep]) / sc
        print(f"  {name}: {err:.2e} <= {SAFETY * est + stretch + floor:.2e}")
        assert err <= SAFETY * est + stretch + floor, name
    # and the rigid-rod run itself follows the closed form (x to round-off: on the constraint
    # manifold at every step, Newton's floor 64 eps max|q| with max|q| ~ 0.46 m)
    ref = slider_crank_kinematics(rr.t, RC, LF, OMF)
    assert _rel(rr.q[:, o2], ref["x"]) <= 64 * EPS * 0.46 / np.max(np.abs(ref["x"])) * 2


def test_flexible_rod_midspan_deflection_converges_in_step_and_mesh():
    """True E = 70 GPa: mid-span deflection history over 0.1 s (2.4 revolutions)."""
    step = {}
    for dt in (2.5e-5, 1.25e-5, 6.25e-6, 3.125e-6):
        mech, res = _run(FLEX, {}, dt=dt)
        step[dt] = midspan_deflection(mech, res.q)
    ds = [np.abs(step[a] - step[b]).max() for a, b in zip(list(step), list(step)[1:], strict=False)]
    # measured 1.9e-4, 6.1e-5, 1.5e-5 m: second order (ratios 3.1, 4.0) once the startup
    # vibration (1 kHz bending mode) is resolved: the last ratio is 4 up to the next term
    # (omega dt)^2 of that mode, 0.04 at dt = 6.25e-6 s: within 3.5
    assert ds[1] / ds[2] > 3.5 and ds[0] > ds[1]
    assert ds[2] <= 1.5e-4  # the 5 % of the 3.06 mm peak
    mesh = {}
    for ne in (4, 8, 16, 32):
        mech, res = _run(FLEX, {"rod.mesh.n_elements": ne}, dt=6.25e-6)
        mesh[ne] = midspan_deflection(mech, res.q)
    dm = [np.abs(mesh[a] - mesh[b]).max() for a, b in ((4, 8), (8, 16), (16, 32))]
    # measured 1.4e-4, 3.5e-5, 2.3e-6 m (ratios 3.9, 15): at least the order 1.3 of a
    # pre-asymptotic mesh sequence (2.5x per halving)
    assert dm[0] > 2.5 * dm[1] > 2.5 * 4 * dm[2]
    assert dm[1] <= 3.5e-4  # the issue's: 8 elements within 1.2 % of the 3.06 mm peak
    peak = np.abs(mesh[32]).max()
    # the reported peak mid-span deflection, 3.05 mm (three digits: 5e-6 m), against the 32
    # elements' peak within the mesh error estimated from 32 vs 64 elements (Richardson with
    # the observed rate > 2.5: 1 / (2.5 - 1)) x SAFETY; measured 3.051 mm
    est32 = SAFETY * dm[2] / 1.5
    assert abs(peak - 3.05e-3) <= 5e-6 + est32
    # 8 elements: within its own mesh error, the sum of the successive differences from 8 on
    assert abs(np.abs(mesh[8]).max() - peak) <= dm[0] + dm[1] + est32
