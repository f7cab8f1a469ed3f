"""Force elements between bodies that are not neighbours in the coordinate vector: their tangent
leaves the band of the iteration matrix and is applied as a low-rank correction
(:func:`ancf_beam.mbs.core.lowrank_prepare`, push-through / Woodbury identity).

References: the same physics with the bodies reordered so that the coupling is within the band
(the band path, independent of the low-rank code), dense numpy solves, the adaptive integrator
(mass and forces only, no tangent) and energy conservation of a looped structure."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.config.contact import contact_law
from ancf_beam.linalg import BANDWIDTH, CHOLESKY, band_factor_solve, band_factorize
from ancf_beam.mbs import core
from ancf_beam.mbs.bodies import BeamBody, RigidBody, ground
from ancf_beam.mbs.forces import CircleContact, ForceElement, SpringDamper
from ancf_beam.mbs.index3 import P_FLOOR, P_PHIFLOOR, Index3Run
from ancf_beam.mbs.integrators import IntegratorSettings, integrate
from ancf_beam.mbs.joints import Revolute
from ancf_beam.mbs.statics import _floor as statics_floor
from ancf_beam.mbs.statics import solve_static
from ancf_beam.mbs.system import System, _lowrank_dense

EPS = float(np.finfo(float).eps)
SAFETY = 2.0  # on an error estimate from refinement (Richardson), as the pipeline's


def _beam(length: float, n_el: int = 2) -> BeamModel:
    over = {"mesh.n_elements": n_el, "beam.length": length, "beam.width": 0.01}
    over |= {"beam.height": 0.01, "material.E0": 2e9, "material.rho": 7800.0}
    return BeamModel(resolve_case({}, None, over))


def chain(order, c: float = 0.0, n_el: int = 2) -> System:
    """Rigid link ``r1`` pinned to the ground, a beam (``n_el`` elements) pinned to its end,
    rigid ``r3`` pinned to the beam's end, and a spring-damper from ``r1`` to ``r3`` (k = 2000
    N/m, l0 = 0.5 m against 0.55 m: preloaded), released from rest along +x under gravity. In
    the order (r1, beam, r3) the spring couples coordinates 0..2 with those of r3 (15..17 with
    two elements: outside the band); in (r1, r3, beam) it is within the band."""
    r1 = RigidBody("r1", mass=0.5, inertia=2e-3, position=(0.1, 0.0))
    beam = BeamBody("beam", model=_beam(0.4, n_el), origin=(0.2, 0.0))
    r3 = RigidBody("r3", mass=0.3, inertia=1e-3, position=(0.65, 0.0))
    bodies = {"r1": r1, "beam": beam, "r3": r3}
    s = System(g=9.81, name="chain")
    s.add(*[bodies[b] for b in order])
    s.add(
        Revolute("pin0", p=r1.marker(-0.1, 0.0), q=ground(0.0, 0.0)),
        Revolute("pin1", p=r1.marker(0.1, 0.0), q=beam.node(0)),
        Revolute("pin2", p=beam.node(-1), q=r3.marker(-0.05, 0.0)),
        SpringDamper(
            "spring", p=r1.marker(0.0, 0.02), q=r3.marker(0.05, 0.0), k=2000.0, c=c, l0=0.5
        ),
    )
    return s.finalize()


def striker(order) -> System:
    """A two-element beam pinned to the ground at node 0, a ball (rigid, radius 0.02 m) pinned
    to its end, falling from +x onto an anvil (rigid disc, radius 0.02 m, pinned at its centre
    at 60 degrees below the pivot): Hertz contact (K = 1e9 N/m^1.5, no friction) between the
    anvil and the ball, outside the band in the order (anvil, beam, ball), within it in
    (anvil, ball, beam). The ball strikes twice within 0.4 s."""
    a = -math.radians(60.0)
    anvil = RigidBody(
        "anvil", mass=1.0, inertia=1e-3, position=(0.45 * math.cos(a) + 0.045, 0.45 * math.sin(a))
    )
    beam = BeamBody("beam", model=_beam(0.4))
    ball = RigidBody("ball", mass=0.3, inertia=1e-4, position=(0.45, 0.0))
    bodies = {"anvil": anvil, "beam": beam, "ball": ball}
    s = System(g=9.81, name="striker")
    s.add(*[bodies[b] for b in order])
    law = contact_law({"law": "hertz", "K": 1.0e9}, "contact")
    s.add(
        Revolute("pivot", p=beam.node(0), q=ground(0.0, 0.0)),
        Revolute("anvil_pin", p=anvil.marker(), q=ground(*anvil.position)),
        Revolute("ball_pin", p=beam.node(-1), q=ball.marker(-0.05, 0.0)),
        CircleContact("hit", p=anvil.marker(), q=ball.marker(), r_p=0.02, r_q=0.02, law=law),
    )
    return s.finalize()


def hub(n_el: int = 2) -> System:
    """A rigid hub pinned to the ground at its centre, three beams (0.3 m) pinned to it at
    0.05 m and 90, 210, 330 degrees, pointing outwards, and a spring (k = 500 N/m, l0 = 0.5 m
    against the tips' 0.606 m) between each pair of tips: a closed loop, every spring outside
    the band whatever the order of the bodies."""
    s = System(g=9.81, name="hub")
    h = s.add(RigidBody("hub", mass=1.0, inertia=1e-2))
    s.add(Revolute("axle", p=h.marker(), q=ground()))
    arms = []
    for i, deg in enumerate((90.0, 210.0, 330.0)):
        c, sn = math.cos(math.radians(deg)), math.sin(math.radians(deg))
        arm = s.add(
            BeamBody(
                f"arm{i}",
                model=_beam(0.3, n_el),
                origin=(0.05 * c, 0.05 * sn),
                angle=math.radians(deg),
            )
        )
        s.add(Revolute(f"pin{i}", p=arm.node(0), q=h.marker(0.05 * c, 0.05 * sn)))
        arms.append(arm)
    for i in range(3):
        j = (i + 1) % 3
        s.add(SpringDamper(f"tie{i}{j}", p=arms[i].node(-1), q=arms[j].node(-1), k=500.0, l0=0.5))
    return s.finalize()


OUT_CHAIN, IN_CHAIN = ("r1", "beam", "r3"), ("r1", "r3", "beam")
OUT_STRIKER, IN_STRIKER = ("anvil", "beam", "ball"), ("anvil", "ball", "beam")


def _map(sa: System, sb: System) -> np.ndarray:
    """Index ``idx`` with ``x_a = x_b[idx]`` for coordinate vectors of the same bodies."""
    idx = np.zeros(sa.n, dtype=int)
    for b in sa.bodies:
        ob = sb.body(b.name).offset
        idx[b.offset : b.offset + b.n_dof] = np.arange(ob, ob + b.n_dof)
    return idx


# ------------------------------------------------------------------------------------------
# assembly and the low-rank solve
# ------------------------------------------------------------------------------------------
def test_only_elements_outside_the_band_take_the_low_rank_path():
    out, inb = chain(OUT_CHAIN), chain(IN_CHAIN)
    assert out.describe()["low_rank_forces"] == ["spring"] and out.n_low_rank == 1
    assert inb.describe()["low_rank_forces"] == [] and inb.n_low_rank == 0
    assert hub().describe()["low_rank_forces"] == ["tie01", "tie12", "tie20"]
    assert striker(OUT_STRIKER).n_low_rank == 1 and striker(IN_STRIKER).n_low_rank == 0


def test_an_element_outside_the_band_without_a_pair_tangent_is_refused():
    class Wide(ForceElement):  # a kind whose tangent the low-rank part cannot represent
        def dofs(self):
            return [0, BANDWIDTH + 1]

        def encode(self):
            return self._rows(core.FE_TORQUE)

    s = System(name="wide")
    s.add(RigidBody("a"), RigidBody("b"), RigidBody("c"), Wide("wide"))
    with pytest.raises(
        ValueError,
        match=r"force element 'wide' \(Wide\) couples coordinates 0 "
        r"and 8, further apart than the band",
    ):
        s.finalize()


def test_tangent_and_statics_equal_those_of_the_in_band_ordering():
    """The dense iteration matrix (band + U B U^T) of the out-of-band ordering is the in-band
    one, permuted, to round-off; so is the static equilibrium (dense Newton on it)."""
    out, inb = chain(OUT_CHAIN), chain(IN_CHAIN)
    idx = _map(out, inb)
    rng = np.random.default_rng(7)
    qb = inb.q0 + 0.02 * rng.standard_normal(inb.n)
    vb = rng.standard_normal(inb.n)
    lamb = rng.standard_normal(inb.m)
    qa, va = qb[idx], vb[idx]
    ka = out.tangent_dense(qa, va, 0.0, lamb, c_v=30.0)
    kb = inb.tangent_dense(qb, vb, 0.0, lamb, c_v=30.0)[np.ix_(idx, idx)]
    # each entry is the same few products summed in another order: 8 eps of the largest
    # entry (measured 8.9e-16 against a bound of 4.2e-9: the spring's entries are 1e-3 of the
    # beam's)
    assert np.abs(ka - kb).max() <= 8 * EPS * np.abs(kb).max()
    # static equilibrium (Newton on the dense tangent): both runs stop at |G| <= rtol |Q_g| (or
    # the round-off floor) and max|Phi| <= 1e-12 max|q|, so their positions differ by at most
    # the inverse of the constrained tangent times twice those residuals; the same Newton
    # path (measured: 21 iterations each, positions equal to 2.8e-15 m)
    rtol = 1e-10
    ea, eb = solve_static(out, rtol=rtol), solve_static(inb, rtol=rtol)
    assert ea.iterations == eb.iterations
    jac = inb.jacobian(eb.q)
    m = inb.m
    big = np.block([[inb.tangent_dense(eb.q, None, 0.0, eb.lam), jac.T], [jac, np.zeros((m, m))]])
    inv = np.linalg.inv(big)
    res = max(rtol * float(np.linalg.norm(inb.qg)), statics_floor(inb))
    phi = 1e-12 * max(1e-3, float(np.max(np.abs(inb.q0)))) * math.sqrt(m)
    bound = np.linalg.norm(inv[: inb.n, : inb.n], 2) * 2 * res
    bound += np.linalg.norm(inv[: inb.n, inb.n :], 2) * 2 * phi
    assert np.linalg.norm(ea.q - eb.q[idx]) <= bound


def _random_lowrank(n: int, p: int, rng) -> tuple:
    """A low-rank tuple of ``p`` slots on ``n`` coordinates with random sparse ``J_d`` rows
    (4 + 4 entries, columns anywhere)."""
    s = System(name="lr")
    s.n, s.n_low_rank, s.fslot = n, p, np.arange(p)
    lr = s.lowrank_work()
    for k in range(p):
        for c in range(2):
            lr[1][k, c] = rng.choice(n, core.LR_NNZ, replace=False)
            lr[2][k, c] = rng.standard_normal(core.LR_NNZ)
            lr[3][k, c] = core.LR_NNZ
    return lr


def _band_spd(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """A random symmetric positive definite band matrix: lower band storage and dense."""
    lb = np.zeros((BANDWIDTH + 1, n))
    lb[1:] = 0.3 * rng.standard_normal((BANDWIDTH, n))
    lb[0] = 2.0 * BANDWIDTH + rng.random(n)  # diagonally dominant
    for d in range(1, BANDWIDTH + 1):
        lb[d, n - d :] = 0.0
    dense = np.diag(lb[0])
    for d in range(1, BANDWIDTH + 1):
        dense += np.diag(lb[d, : n - d], -d) + np.diag(lb[d, : n - d], d)
    return lb, dense


@pytest.mark.parametrize("kind", ["spd", "indefinite", "rank-one", "zero", "mixed"])
def test_lowrank_solve_matches_a_dense_solve(kind):
    """``(K_band + U B U^T)^-1 r`` by the push-through identity for every kind of ``B`` a pair
    element produces (a spring in tension: positive definite; in compression: indefinite; a
    contact: rank one; an open contact: zero) against numpy's dense LU."""
    rng = np.random.default_rng(11)
    n, p = 40, 3
    lb, dense = _band_spd(n, rng)
    lr = _random_lowrank(n, p, rng)
    bs = {
        "spd": (3.0, 1.0, 2.0),
        "indefinite": (3.0, 1.0, -2.0),
        "rank-one": (4.0, 2.0, 1.0),
        "zero": (0.0, 0.0, 0.0),
    }
    for k in range(p):
        lr[4][k] = bs[kind] if kind != "mixed" else list(bs.values())[k + 1]
    fac, lu = np.zeros((2, n, BANDWIDTH + 1)), np.zeros((3 * BANDWIDTH + 1, n))
    piv, xp = np.zeros(n, dtype=np.int64), np.zeros(n + 2 * BANDWIDTH)
    assert band_factorize(lb, fac, lu, piv) == CHOLESKY
    ratio = core.lowrank_prepare(CHOLESKY, fac, lu, piv, xp, lr)
    k_full = dense + _lowrank_dense(lr, n)
    active = {"zero": 0, "mixed": 2}.get(kind, p)
    assert lr[10][0] == active and ratio > 0.0
    r = rng.standard_normal(n)
    x = r.copy()
    band_factor_solve(CHOLESKY, fac, lu, piv, xp, x)
    core.lowrank_solve(lr, x)
    ref = np.linalg.solve(k_full, r)
    # backward-stable solves (band Cholesky, the (2k)^2 capacitance LU): relative forward error
    # below n eps cond(K) for each (measured 2e-16 to 1e-15 relative, cond 2 to 1e3)
    cond = np.linalg.cond(k_full)
    assert np.abs(x - ref).max() <= 2 * n * EPS * cond * np.abs(ref).max()


def test_singular_iteration_matrix_is_reported_by_the_capacitance():
    """``K_band + U B U^T`` singular (``B`` cancels the band on a two-dimensional subspace):
    the capacitance ``I + B U^T K_band^-1 U`` is singular with it (``det K = det K_band det
    C``) and :func:`lowrank_prepare` returns 0."""
    n = 10
    lb = np.zeros((BANDWIDTH + 1, n))
    lb[0] = 1.0  # K_band = I
    s = System(name="lr")
    s.n, s.n_low_rank, s.fslot = n, 1, np.zeros(1, dtype=np.int64)
    lr = s.lowrank_work()
    lr[1][0, 0, 0], lr[1][0, 1, 0] = 2, 9  # U = [e_2, e_9]: far apart
    lr[2][0, :, 0] = 1.0
    lr[3][0] = 1
    lr[4][0] = (-1.0, 0.0, 0.5)  # K = I - e_2 e_2^T + e_9 e_9^T / 2: singular
    fac, lu = np.zeros((2, n, BANDWIDTH + 1)), np.zeros((3 * BANDWIDTH + 1, n))
    piv, xp = np.zeros(n, dtype=np.int64), np.zeros(n + 2 * BANDWIDTH)
    band_factorize(lb, fac, lu, piv)
    assert core.lowrank_prepare(CHOLESKY, fac, lu, piv, xp, lr) == 0.0
    lr[4][0] = (-0.5, 0.0, 0.5)  # regular again
    assert core.lowrank_prepare(CHOLESKY, fac, lu, piv, xp, lr) > 0.0


# ------------------------------------------------------------------------------------------
# generalized-alpha: the out-of-band ordering against the in-band one
# ------------------------------------------------------------------------------------------
def _one_step(system: System, st: IntegratorSettings, state, h: float, t: float):
    q, v, a, lam, fs = (np.array(x, dtype=float) for x in state)
    system.fst[:] = fs
    run = Index3Run(system, st, system.work(), q, v, a, lam)
    it = run.advance(h, t, 0)
    assert run.halvings == 0
    return run, it


def _step_bound(system: System, st: IntegratorSettings, runs, h: float, t1: float) -> float:
    """Largest 2-norm difference of the positions after one Newton-solved step from the same
    state: both iterates meet ``|r| <= tol_r`` and ``max|Phi| <= phi_tol`` (ancf_beam.mbs.index3:
    ``tol_r = max(tol f_ref, floor)``, ``phi_tol = max(tol f_ref / (c_a m_ref), floor)``,
    ``f_ref`` the largest of ``|Q_g|``, ``|Q|``, ``|M a|``, ``|Phi_q^T lam|`` at the iterate), so
    they differ by at most the inverse of the constrained iteration matrix (exact tangent) times
    twice those residuals."""
    beta, gamma, am, af = st.scheme()
    c_a = (1.0 - am) / ((1.0 - af) * beta * h * h)
    c_v = gamma / (beta * h)
    f_ref = float(np.linalg.norm(system.qg))
    for run in runs:
        s = run.system
        f = s.forces_at(run.q, run.v, t1)[0]
        jl = s.jacobian(run.q, t1).T @ run.lam
        f_ref = max(f_ref, *(float(np.linalg.norm(x)) for x in (f, s.mass_matvec(run.a), jl)))
    run = runs[0]
    tol_r = max(st.tol * f_ref, run.par[P_FLOOR])
    phi_tol = max(st.tol * f_ref / (c_a * float(np.max(system.mlb[0]))), run.par[P_PHIFLOOR])
    kt = system.tangent_dense(run.q, run.v, t1, run.lam, c_v) + c_a * system.mass_dense()
    jac = system.jacobian(run.q, t1)
    m = system.m
    inv = np.linalg.inv(np.block([[kt, jac.T], [jac, np.zeros((m, m))]]))
    n = system.n
    x11 = np.linalg.norm(inv[:n, :n], 2)
    x12 = np.linalg.norm(inv[:n, n:], 2)
    return x11 * 2 * tol_r + x12 * 2 * math.sqrt(m) * phi_tol


@pytest.mark.parametrize("case", ["chain", "striker"])
def test_one_step_equals_the_in_band_ordering_with_the_same_newton_iterations(case):
    """From the same states (sampled along an in-band run: free flight and, for the striker,
    both impacts), one generalized-alpha step of the out-of-band ordering ends where the in-band
    ordering's does, within the Newton tolerance (:func:`_step_bound`), after as many Newton
    iterations: the low-rank tangent is the exact tangent."""
    build, out_o, in_o = {
        "chain": (chain, OUT_CHAIN, IN_CHAIN),
        "striker": (striker, OUT_STRIKER, IN_STRIKER),
    }[case]
    t_end, sample_dt = (0.4, 1e-4) if case == "striker" else (0.2, 1e-3)
    st = IntegratorSettings(
        "generalized-alpha",
        t_end=t_end,
        sample_dt=sample_dt,
        dt=1e-4,
        dt_contact=1e-5,
        step_control=True,
        newton="full",
        tol=1e-10,
    )
    inb, out = build(in_o), build(out_o)
    idx = _map(out, inb)
    ref = integrate(inb, st)
    samples = range(0, len(ref.t) - 1, round(7e-3 / sample_dt))
    if case == "striker":  # every sample in contact (two impacts of about 0.5 ms), and free
        touching = np.flatnonzero(ref.force_state[:, 0, core.S_FLAG] != 0.0)
        assert len(touching) >= 6
        samples = sorted(set(samples) | set(touching.tolist()))
    h = 1e-5 if case == "striker" else 1e-4
    for k in samples:
        t = float(ref.t[k])
        fs = ref.force_state[k] if ref.force_state is not None else inb.fst
        state_b = (ref.q[k], ref.v[k], ref.a[k], ref.lam[k], fs)
        state_a = (ref.q[k][idx], ref.v[k][idx], ref.a[k][idx], ref.lam[k], fs)
        rb, it_b = _one_step(inb, st, state_b, h, t)
        ra, it_a = _one_step(out, st, state_a, h, t)
        assert it_a == it_b
        diff = float(np.linalg.norm(ra.q - rb.q[idx]))
        bound = _step_bound(inb, st, (rb,), h, t + h)
        assert diff <= bound
    # measured: differences at most 3e-24 m (chain) and 6e-32 m (striker), bounds 2e-12 to
    # 2e-11 m; Newton iterations 2 (chain), 1 or 2 (striker) in both orderings


def test_trajectories_equal_those_of_the_in_band_ordering():
    """Whole generalized-alpha runs of the two orderings (chain: 0.2 s, 2000 steps; striker:
    0.4 s with step control and two located impacts): equal Newton iterations in every step,
    the same impacts, and positions equal within the steps' Newton tolerance accumulated over
    the run: ``N`` steps times the larger one-step bound (:func:`_step_bound` at the end state,
    for the free and the contact step); premise: the scheme does not amplify a difference over
    this fraction of a swing. Measured 6.6e-14 m (chain, bound 1.5e-8 m), 6.0e-13 m (striker,
    bound 1.4e-7 m)."""
    st = IntegratorSettings(
        "generalized-alpha", t_end=0.2, sample_dt=1e-3, dt=1e-4, newton="full", tol=1e-10
    )
    cases = (
        (chain, OUT_CHAIN, IN_CHAIN, {}),
        (
            striker,
            OUT_STRIKER,
            IN_STRIKER,
            {"t_end": 0.4, "dt_contact": 1e-5, "step_control": True},
        ),
    )
    for build, out_o, in_o, extra in cases:
        sti = dataclasses.replace(st, **extra)
        inb, out = build(in_o), build(out_o)
        idx = _map(out, inb)
        rb, ra = integrate(inb, sti), integrate(out, sti)
        assert np.array_equal(ra.newton_iterations, rb.newton_iterations)
        assert ra.steps == rb.steps
        if rb.contact is not None:
            assert len(ra.contact.episodes) == len(rb.contact.episodes) == 2
        fs = rb.force_state[-1] if rb.force_state is not None else inb.fst
        state = (rb.q[-1], rb.v[-1], rb.a[-1], rb.lam[-1], fs)
        bound = 0.0
        for h in {sti.dt, sti.dt_contact or sti.dt}:
            end, _ = _one_step(inb, sti, state, h, sti.t_end)
            bound = max(bound, _step_bound(inb, sti, (end,), h, sti.t_end + h))
        assert np.abs(ra.q - rb.q[:, idx]).max() <= rb.steps * bound


# ------------------------------------------------------------------------------------------
# the other integrators, and a closed loop
# ------------------------------------------------------------------------------------------
def test_generalized_alpha_and_explicit_agree_with_the_adaptive_integrator():
    """The out-of-band chain over 0.1 s with generalized-alpha (low-rank tangent) and central
    differences (mass only) against the adaptive integrator (DOP853, index 1: mass and forces,
    no tangent). Bound on each comparison: the fixed-step run's error estimated from the same
    run at twice its step (second order: ``|x_h - x_h/2| / 3``) plus the adaptive run's,
    estimated by the run at rtol 100 times looser, times SAFETY. Measured (largest over the
    samples and coordinates): generalized-alpha 1.1e-3 m against a bound of 2.4e-3 m, central
    differences 3.6e-4 m against 6.8e-4 m; the adaptive runs differ by 1.3e-9 m."""
    base = {"t_end": 0.1, "sample_dt": 1e-3}
    runs = {
        "ga": [
            {"integrator": "generalized-alpha", "dt": dt, "newton": "full", "tol": 1e-10}
            for dt in (5e-5, 2.5e-5)
        ],
        "cd": [{"integrator": "central-difference", "dt": dt} for dt in (4e-5, 2e-5)],
        "ad": [{"integrator": "adaptive", "rtol": r, "atol": 1e-2 * r} for r in (1e-8, 1e-10)],
    }
    q = {}
    for key, settings in runs.items():
        q[key] = [
            integrate(chain(OUT_CHAIN), IntegratorSettings(**base, **kw)).q for kw in settings
        ]
    err_ad = np.abs(q["ad"][0] - q["ad"][1]).max()
    for key in ("ga", "cd"):
        coarse, fine = q[key]
        bound = SAFETY * (np.abs(coarse - fine).max() / 3.0 + err_ad)
        assert np.abs(fine - q["ad"][1]).max() <= bound


def test_hub_with_three_beams_tied_at_the_tips_conserves_energy():
    """A closed loop (hub, three pinned beams, springs between their tips: every spring outside
    the band) under generalized-alpha with rho_inf = 1 (beta = 1/4, gamma = 1/2: energy
    conserving for linear systems) over 0.5 s: the energy error is the scheme's O(dt^2)
    discretisation error, ``d(dt/2) <= SAFETY (d(dt) - d(dt/2)) / 3`` (Richardson), at three
    steps. Measured ``max|E - E0| / max T``: 2.74e-5, 7.14e-6, 1.69e-6 (observed orders 1.94,
    2.08; max T = 0.026 J)."""
    drift = []
    for dt in (2e-4, 1e-4, 5e-5):
        s = hub()
        assert s.n_low_rank == 3
        st = IntegratorSettings(
            "generalized-alpha",
            t_end=0.5,
            sample_dt=1e-3,
            dt=dt,
            rho_inf=1.0,
            newton="full",
            tol=1e-11,
        )
        res = integrate(s, st)
        assert res.stats["halvings"] == 0
        drift.append(res.energy_drift_rel())
    for coarse, fine in zip(drift, drift[1:], strict=False):
        assert fine <= SAFETY * (coarse - fine) / 3.0
