"""Progress of long mechanism runs: the contact stepping of generalized-alpha, the adaptive
integrator log the simulated time, the steps and an ETA every ``progress_interval_s`` (here 0:
at every chance), and a run that reports its progress steps exactly as one that does not (the
contact stepping then runs in calls of a few samples each: its state lives in its arrays)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest

from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.mbs.analysis import settings_from_spec
from ancf_beam.mbs.integrators import integrate
from ancf_beam.mbs.mechanisms import build_mechanism

QUICK = Path(__file__).resolve().parents[1] / "config" / "quick.yaml"


def _quiet_and_loud(spec, caplog):
    """The mechanism run twice, progress off and on (reported at every chance): per run the
    result and its logged progress lines."""
    runs = []
    for progress in (False, True):
        mech = build_mechanism(spec)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="ancf_beam"):
            res = integrate(
                mech.system,
                settings_from_spec(spec),
                q0=mech.q0,
                v0=mech.v0,
                progress=progress,
                progress_interval_s=0.0,
            )
        lines = [r.getMessage() for r in caplog.records if "ETA" in r.getMessage()]
        runs.append((res, lines))
    return runs


@pytest.mark.parametrize("integrator", ["generalized-alpha", "adaptive"])
def test_contact_runs_report_progress_and_step_alike(integrator, caplog):
    spec = resolve_mechanism(
        load_config(QUICK), "slider_crank_clearance", {"t_end": 0.01, "integrator": integrator}
    )
    (quiet, none), (loud, lines) = _quiet_and_loud(spec, caplog)
    assert not none and len(lines) >= 2, lines
    times = [float(re.search(r"t = (\S+) / 0.01 s", m)[1]) for m in lines]
    assert all(0.0 < t < 0.01 for t in times) and times == sorted(times)
    assert loud.steps == quiet.steps
    for name in ("t", "q", "v", "a", "lam", "kinetic", "dissipated", "force_state"):
        assert np.array_equal(getattr(quiet, name), getattr(loud, name), equal_nan=True), name


SPRING_MASS = {  # a disc on a guide, hanging from a spring-damper: a damper for moreau-jean
    "kind": "general",
    "integrator": "moreau-jean",
    "t_end": 0.3,
    "sample_dt": 1e-3,
    "solver": {"dt": 1e-4},
    "bodies": {"disc": {"type": "rigid", "mass": 2.0, "inertia": 0.01, "position": [0, -0.5]}},
    "joints": {
        "guide": {
            "type": "prismatic",
            "point": "disc.cm",
            "through": [0.0, 0.0],
            "direction": [0.0, 1.0],
        }
    },
    "forces": {
        "gravity": {"type": "gravity"},
        "spring": {
            "type": "spring-damper",
            "points": ["disc.cm", [0.0, 0.0]],
            "k": 400.0,
            "c": 2.0,
        },
    },
}


@pytest.mark.parametrize("case", ["slider_crank_clearance_nonsmooth", "spring_mass"])
def test_moreau_jean_reports_progress_and_steps_alike(case, caplog):
    """Moreau-Jean runs log progress too, and a run split into calls (progress on) books the
    same samples, impulses and dissipated work as one call: the dampers' power is carried
    from call to call (the spring-mass case dissipates through its damper)."""
    if case == "spring_mass":
        spec = resolve_mechanism({"mechanisms": {case: SPRING_MASS}}, case)
    else:
        spec = resolve_mechanism(load_config(QUICK), case, {"t_end": 0.01})
    (quiet, none), (loud, lines) = _quiet_and_loud(spec, caplog)
    t_end = quiet.t[-1]
    assert not none and len(lines) >= 1, lines
    assert all(m.startswith("moreau-jean: t = ") for m in lines), lines
    times = [float(re.search(r"t = (\S+) / ", m)[1]) for m in lines]
    assert all(0.0 < t < t_end for t in times) and times == sorted(times)
    if case == "spring_mass":
        assert quiet.dissipated[-1] > 0.0
    for name in ("t", "q", "v", "lam", "kinetic", "dissipated", "impulse_n", "impulse_t"):
        assert np.array_equal(getattr(quiet, name), getattr(loud, name), equal_nan=True), name
    assert np.array_equal(quiet.lcp_iterations, loud.lcp_iterations)
