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


@pytest.fixture(scope="module")
def rigid_adaptive():
    return _run(RIGID, {"integrator": "adaptive"}, rtol=1e-10, atol=1e-12)


def test_rigid_slider_matches_the_closed_form(rigid_adaptive):
    mech, res = rigid_adaptive
    ref = slider_crank_kinematics(res.t, R, L, OMEGA)
    o = mech.slider.offset
    assert res.t[-1] == pytest.approx(2 * PERIOD, rel=1e-3)
    # relative to the largest value over two revolutions (the issue asks 1e-6);
    # measured 3.5e-10, 6.5e-10, 2.5e-10 (DOP853, rtol 1e-10); tol 3e-9, 6e-9, 3e-9
    assert _rel(res.q[:, o], ref["x"]) <= 3e-9
    assert _rel(res.v[:, o], ref["v"]) <= 6e-9
    assert _rel(res.a[:, o], ref["a"]) <= 3e-9
    # the rod angle too: measured 6.1e-10; tol 3e-9 (of its largest value)
    assert _rel(res.q[:, mech.rod.angle_index], ref["phi"]) <= 3e-9


def test_rigid_slider_index3_positions_are_exact_and_rates_converge():
    """Generalized-alpha, index 3: positions on the constraint manifold at every step, rates
    second order in dt."""
    errs = []
    for dt in (2e-5, 1e-5):
        mech, res = _run(RIGID, {}, dt=dt)
        ref = slider_crank_kinematics(res.t, R, L, OMEGA)
        o = mech.slider.offset
        errs.append((_rel(res.q[:, o], ref["x"]), _rel(res.v[:, o], ref["v"])))
    # positions: measured 1.0e-14 and 2.1e-14 (round-off); tol 2e-13
    assert max(e[0] for e in errs) <= 2e-13
    # velocities: measured 1.5e-5 -> 3.7e-6 (ratio 4.0: second order); tol ratio > 3.5
    assert errs[0][1] / errs[1][1] > 3.5
    assert errs[1][1] <= 3.7e-5


def test_drive_torque_and_pin_reactions_match_newton_euler(rigid_adaptive):
    """Inverse dynamics written here from the closed-form kinematics, body by body (slider,
    rod, crank), against the multipliers of the forward run."""
    mech, res = rigid_adaptive
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

    drive = -res.lam[:, sys_.joint("drive").first_row]
    # relative to each quantity's largest magnitude (torque 139 N m, pivot 8.3 kN, crank pin
    # 6.2 kN, wrist pin 2.7 kN, guide 1.1 kN); measured 2.6e-10, 1.4e-10, 1.9e-10, 2.5e-10,
    # 5.6e-10; tol 3e-9, 2e-9, 2e-9, 3e-9, 6e-9 (the issue asks 1e-6)
    assert _rel(drive, torque) <= 3e-9
    assert _rel(force("pivot"), f0) <= 2e-9  # force on the crank (first body)
    assert _rel(-force("crank_pin"), f1) <= 2e-9  # on the crank: -F1
    assert _rel(-force("wrist_pin"), f2) <= 3e-9  # on the rod: -F2
    guide = force("slider_guide")
    assert np.abs(guide[:, 0]).max() == 0.0
    assert _rel(guide[:, 1], normal) <= 6e-9
    assert np.max(np.abs(torque)) > 100.0


def test_baumgarte_bounds_the_constraint_drift_that_grows_without_it():
    """Explicit central differences, dt = 2e-6 s, four revolutions: without stabilisation the
    position-level violation grows about quadratically; with alpha = beta = 1000/s it settles."""

    def per_revolution(alpha):
        _, res = _run(dict(RIGID, t_end=4 * PERIOD), {"integrator": "central-difference"},
                      dt=2e-6, alpha=alpha, beta=alpha)  # fmt: skip
        return [res.phi_max[(res.t > k * PERIOD) & (res.t <= (k + 1) * PERIOD)].max()
                for k in range(4)]  # fmt: skip

    free = per_revolution(0.0)
    stab = per_revolution(1000.0)
    # without: measured 8.6e-8, 3.5e-7, 7.8e-7, 1.4e-6 m (x16 from the first revolution)
    assert all(b > 1.5 * a for a, b in zip(free, free[1:], strict=False))
    assert free[3] > 8 * free[0]
    # with: measured 1.1e-8 m in every revolution; tol: flat to 10 %, 100x below the free drift
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
    rigid = {**FLEX, "rod": {"model": "rigid", "length": LF, "mass": m_rod,
                             "inertia": m_rod * LF**2 / 12}}  # fmt: skip
    mf, rf = _run(stiff, {}, dt=1e-5, rho_inf=0.0)
    mr, rr = _run(rigid, {}, dt=1e-5, rho_inf=0.0)
    o1, o2 = mf.slider.offset, mr.slider.offset
    late = rf.t > 0.01
    tf = -rf.lam[:, mf.drive.first_row]
    tr = -rr.lam[:, mr.drive.first_row]
    # measured 1.0e-7 (x), 1.7e-6 (v), 6.5e-7 (a, t > 10 ms), 1.2e-5 (torque, t > 10 ms);
    # tol 1e-6, 1.7e-5, 6.5e-6, 1e-4 (the 1e-4)
    assert _rel(rf.q[:, o1], rr.q[:, o2]) <= 1e-6
    assert _rel(rf.v[:, o1], rr.v[:, o2]) <= 1.7e-5
    assert np.max(np.abs(rf.a[late, o1] - rr.a[late, o2])) <= 6.5e-6 * np.max(np.abs(rr.a[:, o2]))
    assert np.max(np.abs(tf[late] - tr[late])) <= 1e-4 * np.max(np.abs(tr))
    # and the rigid-rod run itself follows the closed form (x to round-off)
    ref = slider_crank_kinematics(rr.t, RC, LF, OMF)
    assert _rel(rr.q[:, o2], ref["x"]) <= 1e-12  # measured 2.5e-14


def test_flexible_rod_midspan_deflection_converges_in_step_and_mesh():
    """True E = 70 GPa: mid-span deflection history over 0.1 s (2.4 revolutions)."""
    step = {}
    for dt in (2.5e-5, 1.25e-5, 6.25e-6, 3.125e-6):
        mech, res = _run(FLEX, {}, dt=dt)
        step[dt] = midspan_deflection(mech, res.q)
    ds = [np.abs(step[a] - step[b]).max() for a, b in zip(list(step), list(step)[1:],
                                                           strict=False)]  # fmt: skip
    # measured 1.9e-4, 6.1e-5, 1.5e-5 m: second order (ratios 3.1, 4.0) once the startup
    # vibration (1 kHz bending mode) is resolved
    assert ds[1] / ds[2] > 3.5 and ds[0] > ds[1]
    assert ds[2] <= 1.5e-4  # 5 % of the 3.06 mm peak
    mesh = {}
    for ne in (4, 8, 16, 32):
        mech, res = _run(FLEX, {"rod.mesh.n_elements": ne}, dt=6.25e-6)
        mesh[ne] = midspan_deflection(mech, res.q)
    dm = [np.abs(mesh[a] - mesh[b]).max() for a, b in ((4, 8), (8, 16), (16, 32))]
    # measured 1.4e-4, 3.5e-5, 2.3e-6 m (ratios 3.9, 15)
    assert dm[0] > 2.5 * dm[1] > 2.5 * 4 * dm[2]
    assert dm[1] <= 3.5e-4  # 8 elements: within 1.2 % of the 3.06 mm peak
    peak = np.abs(mesh[32]).max()
    # the reported peak mid-span deflection: measured 3.051 mm (32 el) vs 3.065 mm (8 el)
    assert peak == pytest.approx(3.05e-3, rel=5e-3)
    assert np.abs(mesh[8]).max() == pytest.approx(peak, rel=5e-3)
