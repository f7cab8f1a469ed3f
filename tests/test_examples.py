"""The gallery (``examples/``): every script is imported, its ``main()`` run once, and its
numbers checked against references that do not use the code they check: closed forms, the
transfer-matrix and quadrature references of ``ancf_beam.references``, scipy integrations, the
known truth of an identification. Each tolerance is a bound whose source is stated next to it."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

import ancf_beam as ab
from ancf_beam.references import impact, transfer
from conftest import E0, EI, I_SEC, RHOA, L, Q

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.py"))
EPS = np.finfo(float).eps


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run():
    """``main()`` of each example, run once per test module."""
    cache: dict = {}

    def get(name: str) -> dict:
        if name not in cache:
            cache[name] = load(name).main()
        return cache[name]

    return get


def test_every_example_is_short_documented_and_tested():
    tested = {n.removeprefix("test_") for n in globals() if n.startswith("test_")}
    for name in NAMES:
        module = load(name)
        text = (EXAMPLES / f"{name}.py").read_text()
        assert len(text.splitlines()) <= 80, name
        assert module.__doc__ and len(module.__doc__) > 200, name
        assert callable(module.main) and 'if __name__ == "__main__":' in text, name
        assert name in tested, f"examples/{name}.py has no test_{name}"


# ---- closed-form cantilever: Euler-Bernoulli modes (Blevins: phi_k(L) = 2 (-1)^(k+1),
# int_0^L phi_k = 2 sigma_k / beta_k, int_0^L phi_k^2 = L) ------------------------------------
def beta_l(k: int) -> np.ndarray:
    """Roots of 1 + cos(b) cosh(b) = 0; beyond the fifth, (k - 1/2) pi to within e^-b."""

    def f(b):
        return 1 + math.cos(b) * math.cosh(b)

    mid = [(i - 0.5) * math.pi for i in range(1, k + 1)]
    roots = [brentq(f, max(1.0, m - 0.6), m + 0.6, xtol=1e-15) for m in mid[:5]]
    return np.array(roots + mid[5:])


def modal_tip_shares(k: int = 40):
    """Static tip deflection shares ``c_k`` (m) and ``omega_k`` (rad/s) of the seed beam under
    its weight, released from rest: ``w(L, t) = sum_k c_k (1 - cos omega_k t)``."""
    b = beta_l(k)
    bb = np.minimum(b, 30.0)  # sigma_k = 1 to within e^-30 beyond
    sigma = np.where(b < 30, (np.cosh(bb) + np.cos(b)) / (np.sinh(bb) + np.sin(b)), 1.0)
    omega = b**2 / L**2 * math.sqrt(EI / RHOA)
    sign = (-1.0) ** np.arange(k)
    return Q * (2 * sigma * L / b) * 2 * sign / (RHOA * L * omega**2), omega


def test_modal_shares_sum_to_the_static_deflection():
    c, _ = modal_tip_shares(200)
    assert c.sum() == pytest.approx(Q * L**4 / (8 * EI), rel=1e-6)  # series tail ~ 1/k^4 sum


def test_hello_beam(run):
    nums = run("hello_beam")
    w_static = Q * L**4 / (8 * EI)  # 1.395 mm
    # cubic Hermite elements are nodally exact for the linear Euler-Bernoulli beam under a
    # uniform load: what is left is the geometric nonlinearity, of order (w/L)^2 = 1.9e-6
    # (measured -1.6e-6); bound 2.5 (w/L)^2 for its unknown prefactor
    assert nums["static_tip_deflection"] == pytest.approx(w_static, rel=2.5 * (w_static / L) ** 2)
    # frequencies: the mesh error converges at order 4 (measured ratios 16.0, 15.9 for
    # 10/20/40 elements): the 20-element error is (16/15) |omega_20 - omega_40|; bound 1.5x that
    fine = ab.modal_analysis(ab.BeamModel(ab.resolve_case(overrides={"mesh.n_elements": 40})), 3)
    for k, exact in enumerate(beta_l(3) ** 2 / L**2 * math.sqrt(EI / RHOA)):
        coarse = nums[f"omega_{k + 1}"]
        assert abs(coarse - exact) <= 1.5 * 16 / 15 * abs(coarse - fine.omega[k]) + 64 * EPS * exact
    # released from rest: the analytic modal series sum_k c_k (1 - cos omega_k t). The 20-element
    # mesh resolves the first five modes (omega_5 to 2e-4); each unresolved mode can be off by at
    # most 2 |c_k|, plus the nonlinearity 2.5 (w/L)^2 of the largest deflection (measured 1.9e-5)
    c, omega = modal_tip_shares()
    t = np.linspace(0.0, 0.1, 20001)
    series_max = (c[None, :] * (1 - np.cos(np.outer(t, omega)))).sum(axis=1).max()
    bound = 2 * np.abs(c[5:]).sum() + 2.5 * (2 * w_static / L) ** 2 * series_max
    assert abs(nums["dynamic_tip_deflection_max"] - series_max) <= bound
    # central differences conserve a modified energy: drift O((omega_max dt)^2) of T_max, at
    # 0.8 of the critical step bounded by 1e-6 (measured 1.1e-8)
    assert nums["energy_drift_rel"] < 1e-6


def ga_response(c, omega, h, n_steps, rho_inf=0.8):
    """Generalized-alpha (Chung and Hulbert 1993) applied to each mode q'' + w^2 q = w^2 c from
    rest: the linear-theory tip history at t = 0, h, ..., n_steps h (three-term recurrence)."""
    am, af = (2 * rho_inf - 1) / (rho_inf + 1), rho_inf / (rho_inf + 1)
    gamma, beta = 0.5 - am + af, 0.25 * (1 - am + af) ** 2
    out = np.zeros(n_steps + 1)
    for ck, wk in zip(c, omega, strict=True):
        o2 = (wk * h) ** 2  # state (y, h v, h^2 a) of y = q - c
        lhs = np.array([[1, 0, -beta], [0, 1, -gamma], [o2 * (1 - af), 0, 1 - am]])
        rhs = np.array([[1, 1, 0.5 - beta], [0, 1, 1 - gamma], [-o2 * af, 0, -am]])
        amp = np.linalg.solve(lhs, rhs)
        state = np.array([-ck, 0.0, o2 * ck])
        for n in range(n_steps + 1):
            out[n] += ck + state[0]
            state = amp @ state
    return out


def test_implicit_run(run):
    nums = run("implicit_run")
    c, omega = modal_tip_shares(12)
    n = nums["steps"] - 1  # the last step is shortened to end at t_end: compare before it
    t = np.arange(n + 1) * nums["dt"]
    predicted = ga_response(c, omega, nums["dt"], n)
    module = load("implicit_run")
    # the run itself against the linear theory of the scheme, on the same mesh tolerance as
    # test_hello_beam: unresolved modes 2 |c_k| (k > 5), nonlinearity 2.5 (w/L)^2
    case = ab.resolve_case(overrides={"mesh.n_elements": 20})
    settings = ab.DynamicsSettings.from_case(case, integrator="generalized-alpha", t_end=0.5)
    res = ab.simulate(ab.BeamModel(case), settings, progress=False)
    bound = 2 * np.abs(c[5:]).sum() + 2.5 * (2 * c.sum() / L) ** 2 * predicted.max()
    assert np.abs(-res.tip_y[: n + 1] - predicted).max() <= bound
    # the fitted frequency: the same fit of the predicted history differs from the run's by at
    # most 3 max|dy| / (b T) (least-squares sensitivity of omega to a perturbation dy)
    _, b_pred, omega_pred = module.fit_oscillation(t, predicted, omega[0])
    assert abs(nums["omega_fit"] - omega_pred) <= 3 * bound / (b_pred * t[-1])
    # the fitted mean moves by at most 2 max|dy| (the constant and the cosine are correlated
    # over a record that is not whole periods); the fit of the linear theory gives the static
    # deflection to 5e-5 (the higher modes' share of the record)
    mean_pred, _, _ = module.fit_oscillation(t, predicted, omega[0])
    assert abs(nums["mean_tip_deflection"] - mean_pred) <= 2 * bound


def uniform(value: float):
    return lambda x: value + 0.0 * np.asarray(x)


def test_defect_family(run):
    nums = run("defect_family")
    for n in (1.0, 2.0):
        tips, omegas = nums[f"tip_deflection_n{n:g}"], nums[f"omega_1_n{n:g}"]
        for lam, tip, om in zip(nums["lam"], tips, omegas, strict=True):
            ei = lambda x, lam=lam, n=n: E0 * I_SEC * (1 - lam * (np.asarray(x) / L) ** n)  # noqa: E731
            exact = -transfer.exact_graded_static(L, ei, uniform(Q))["tip_deflection"]
            overrides = {"defect.lam": lam, "defect.n": n, "mesh.n_elements": 40}
            fine = ab.BeamModel(ab.resolve_case(overrides=overrides))
            # statics: nonlinearity 2.5 (w/L)^2 + the mesh error by refinement (order 4)
            mesh = 1.5 * 16 / 15 * abs(tip + ab.solve_static(fine).tip_y)
            assert abs(tip - exact) <= 2.5 * (tip / L) ** 2 * tip + mesh
            # omega_1: stepped beam at 200 / 400 segments, Richardson (order 2); its remaining
            # error is below its correction; the ANCF mesh error by refinement as above
            s1, s2 = (
                transfer.stepped_frequencies(L, ei, uniform(RHOA), m, 1)[0] for m in (200, 400)
            )
            stepped = (4 * s2 - s1) / 3
            om_fine = ab.modal_analysis(fine, 1).omega[0]
            assert abs(om - stepped) <= abs(stepped - s2) + 1.5 * 16 / 15 * abs(om - om_fine)


def test_flexible_pendulum(run):
    nums = run("flexible_pendulum")
    module = load("flexible_pendulum")
    config = ab.load_config(module.CONFIG)
    # index 3: Phi = 0 (the pinned node at the origin, linear in q) solved in every Newton step
    assert nums["max_constraint_violation"] <= 64 * EPS * 1.2
    # the soft beam departs visibly from the rigid rod; the stiff one does not
    rigid = (nums["rigid_rod_tip_x"], nums["rigid_rod_tip_y"])
    flex = math.dist((nums["tip_x"], nums["tip_y"]), rigid)
    assert flex > 0.1
    # rigid limit vs the rod's ODE (scipy, rtol 1e-12): time error of the second-order scheme
    # by refinement, (4/3) |x(dt) - x(dt/2)|, plus the elastic sag under at most 2.5 rho A g
    # (gravity and the rod's angular acceleration 1.5 g / L), q L^4 / (8 E I) at E0 = 1e15
    half = ab.resolve_mechanism(
        config, "pendulum_berzeri", {"material.E0": 1e15, "solver.dt": 5e-4}
    )
    s_half, _ = ab.run_mechanism(half)
    stiff_tip = (nums["stiff_tip_x"], nums["stiff_tip_y"])
    time_err = 4 / 3 * math.dist(stiff_tip, (s_half["tip_x"], s_half["tip_y"]))
    beam = half.beam
    area, inertia = beam.beam.width * beam.beam.height, beam.beam.width * beam.beam.height**3 / 12
    sag = 2.5 * beam.material.rho * area * 9.81 * beam.beam.length**4 / (8 * 1e15 * inertia)
    assert math.dist(stiff_tip, rigid) <= time_err + sag


def test_clearance_slider_crank(run):
    nums = run("clearance_slider_crank")
    c = nums["clearance"]
    assert nums["impacts"] >= 1 and 0 < nums["first_contact_time"] < 2 * math.pi / 523.6
    # the journal offset in its bearing is at most c + the largest penetration
    e_max = c + nums["max_penetration"]
    assert nums["max_eccentricity_ratio"] <= e_max / c * (1 + 1e-12)
    # the slider against the closed-form ideal mechanism: within the geometric bound of the
    # journal offset (first and second order in e_max; r = 0.05 m, l = 0.12 m)
    r, l = 0.05, 0.12
    root = math.sqrt(l * l - r * r)
    assert nums["slider_deviation_max"] <= e_max * l / root + e_max**2 / root
    assert nums["slider_a_max_over_ideal"] > 1  # the impacts show in the acceleration


def test_two_body_impact(run):
    nums = run("two_body_impact")
    m = 2.0 * 3.0 / 5.0
    kv = impact.kelvin_voigt(m, 1e7, 200.0, 1.0)["clipped"]
    hz = impact.hertz(m, 1e10, 1.0)
    # DOP853 at rtol 1e-11 over fewer than 100 steps, events located to round-off: the global
    # relative error stays below 100 x 1e-11 = 1e-9 (measured 7e-11 on the restitution)
    for key, ref in (
        ("restitution", kv["restitution"]),
        ("contact_duration", kv["duration"]),
        ("max_penetration", kv["max_penetration"]),
    ):
        assert nums[f"kelvin_voigt_{key}"] == pytest.approx(ref, rel=1e-9)
    assert nums["hertz_restitution"] == pytest.approx(1.0, rel=1e-9)  # elastic
    assert nums["hertz_max_penetration"] == pytest.approx(hz["max_penetration"], rel=1e-9)
    # the duration is located between samples of 1 us: events at round-off, same 1e-9
    assert nums["hertz_contact_duration"] == pytest.approx(hz["duration"], rel=1e-9)


def test_identification(run):
    nums = run("identification")
    assert nums["identifiable"] and not nums["identifiable_one_frequency"]
    truth = np.array([nums["lam_true"], nums["n_true"]])

    def omega(p, mesh):
        overrides = {"defect.lam": p[0], "defect.n": p[1], "mesh.n_elements": mesh}
        case = ab.resolve_case(overrides=overrides)
        return ab.modal_analysis(ab.BeamModel(case), 4).omega

    # linearised: the estimate moves by J^+ delta, delta = the relative frequency error of the
    # 40-element model at the truth (against 320 elements), J the relative sensitivities of the
    # 40-element frequencies (central differences, step 1e-4: truncation 1e-8); bound 2x for
    # the linearisation
    w_data, w_model = omega(truth, 320), omega(truth, 40)
    delta = w_model / w_data - 1
    h = 1e-4
    columns = [(omega(truth + h * e, 40) - omega(truth - h * e, 40)) / (2 * h) for e in np.eye(2)]
    jac = np.column_stack(columns) / w_data[:, None]
    bound = 2 * np.linalg.norm(np.linalg.pinv(jac), 2) * np.linalg.norm(delta)
    err = np.hypot(nums["lam"] - truth[0], nums["n"] - truth[1])
    assert err <= bound
