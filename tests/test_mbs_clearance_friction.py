"""Newton on a clearance joint with friction whose journal is light: the end node of an ANCF rod
(quick.yaml's ``slider_crank_flagship``, 4 elements, coulomb-transition friction).

The friction's viscous share of the iteration matrix (``c_v mu'(v_t) F_n t t^T``) is of the
order of the node's inertia ``c_a m`` at mu = 0.01 and ten times it at mu = 0.1. Left out of
the circle contact's tangent, Newton converged slowly or cycled at mu = 0.01 (465 halvings in
2689 steps over 6 ms, 7.9 iterations per step) and diverged at every step size at mu = 0.1
(``NewtonConvergenceError`` at t = 0.45 ms, after four halvings to 31 ns). With it, and with
half-length corrections after an iteration that stagnates on a fresh matrix (the friction
law's corners), the same runs take 6 and 61 halvings."""

from __future__ import annotations

from pathlib import Path

from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.mbs.analysis import settings_from_spec
from ancf_beam.mbs.integrators import integrate
from ancf_beam.mbs.mechanisms import build_mechanism

QUICK = Path(__file__).resolve().parents[1] / "config" / "quick.yaml"


def _run(t_end: float, mu: float):
    spec = resolve_mechanism(
        load_config(QUICK),
        "slider_crank_flagship",
        {"t_end": t_end, "clearance.friction.mu": mu},
    )
    mech = build_mechanism(spec)
    return integrate(mech.system, settings_from_spec(spec), v0=mech.v0)


def test_steep_friction_on_a_light_journal_runs():
    res = _run(3e-3, 0.1)  # diverged at t = 0.45 ms without the friction tangent
    assert res.t[-1] == 3e-3
    assert res.contact.episodes.shape[0] >= 1  # the journal struck the bearing


def test_newton_rarely_halves_on_the_flagship_clearance():
    """Halved steps are Newton failures (20 iterations wasted, then the step again at half
    size). Measured over 6 ms: 6 of 2539 steps (0.24 %) and 3.6 iterations per step; without
    the friction tangent 465 of 2689 (17 %) and 7.9. The bounds sit a factor 8 from both:
    another processor's round-off takes other steps through this chaotic motion."""
    res = _run(6e-3, 0.01)
    assert res.stats["halvings"] <= 0.02 * res.steps
    assert res.stats["mean_iterations"] <= 5.0
