"""The work a spring-damper dissipates is booked by every integrator, so that a damped
mechanism's energy balance ``E + D - W = const`` closes.

Before, only the contacts' and the damage's work was booked: a general mechanism with a
spring-damper (``c > 0``) reported its energy balance FAIL by 0.70 of its largest kinetic
energy. The reference here is independent of the code: a point mass hanging from a
spring-damper, released from rest at the spring's free length, is the damped oscillator
``m s'' = m g - k s - c s'`` (``s`` the stretch) in closed form, whose dissipated work is
``D(t) = m g s - m s'^2 / 2 - k s^2 / 2``. Each bound is the run's own error estimate: the run
against one at half the step (Richardson, the integrator's order), or for the adaptive
integrator against a run at 1/1000 of its tolerances.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ancf_beam.config import resolve_mechanism
from ancf_beam.mbs.analysis import settings_from_spec
from ancf_beam.mbs.integrators import integrate
from ancf_beam.mbs.mechanisms import build_mechanism
from ancf_beam.studies.bounds import EPS

M, K, C, G, L0 = 2.0, 400.0, 2.0, 9.81, 0.5  # kg, N/m, N s/m, m/s^2, m
T_END = 1.0  # s: a little over two periods (omega = 14.1 rad/s, zeta = 0.035)


def _block(integrator: str, solver: dict) -> dict:
    return {
        "kind": "general",
        "integrator": integrator,
        "t_end": T_END,
        "sample_dt": 1.0e-2,
        "solver": solver,
        "bodies": {"disc": {"type": "point-mass", "mass": M, "position": [0.0, -L0]}},
        "forces": {
            "gravity": {"type": "gravity", "g": G},
            "spring": {"type": "spring-damper", "points": ["disc.cm", [0.0, 0.0]], "k": K, "c": C},
        },
    }


def _run(integrator: str, **solver):
    spec = resolve_mechanism({"mechanisms": {"osc": _block(integrator, solver)}}, "osc")
    mech = build_mechanism(spec)
    return integrate(mech.system, settings_from_spec(spec))


def _exact_dissipation(t: np.ndarray) -> np.ndarray:
    """``D(t)`` of the damped oscillator released at rest with the spring unstretched."""
    w = math.sqrt(K / M)
    z = C / (2.0 * math.sqrt(K * M))
    wd = w * math.sqrt(1.0 - z * z)
    s_eq = M * G / K
    e = np.exp(-z * w * t)
    s = s_eq * (1.0 - e * (np.cos(wd * t) + z * w / wd * np.sin(wd * t)))
    sd = s_eq * e * (w * w / wd) * np.sin(wd * t)
    return M * G * s - 0.5 * M * sd * sd - 0.5 * K * s * s


#: integrator, solver keys, order of its error in the step (None: adaptive)
RUNS = [
    ("generalized-alpha", {"dt": 1.0e-3}, 2),
    ("newmark", {"dt": 1.0e-3}, 2),
    ("central-difference", {"dt": 1.0e-3}, 2),
    ("moreau-jean", {"dt": 1.0e-3}, 1),
    ("adaptive", {"rtol": 1.0e-6, "atol": 1.0e-9}, None),
]


@pytest.mark.parametrize(("integrator", "solver", "order"), RUNS, ids=[r[0] for r in RUNS])
def test_damper_work_is_booked_by_every_integrator(integrator, solver, order):
    res = _run(integrator, **solver)
    exact = _exact_dissipation(res.t)
    if order is None:
        tight = {k: v * 1.0e-3 for k, v in solver.items()}
        est = np.max(np.abs(res.dissipated - _run(integrator, **tight).dissipated))
    else:
        half = _run(integrator, dt=0.5 * solver["dt"])
        assert np.allclose(half.t, res.t, rtol=0, atol=1e-12)
        est = np.max(np.abs(res.dissipated - half.dissipated)) * 2**order / (2**order - 1)
    error = np.max(np.abs(res.dissipated - exact))
    scale = float(np.max(exact))  # 0.57 J
    # bound: 2 x the run's error estimate (order of the integrator) + round-off of the summed
    # work, 8 eps per step
    bound = 2.0 * est + 8.0 * EPS * res.steps * scale
    assert exact[-1] > 0.5 * scale  # the damper does dissipate: a check that can fail
    assert error <= bound, (error, bound, est)
    assert error <= 1e-2 * scale  # and the booked work is the damper's, not a loose estimate
