"""Assembly of a general mechanism with beams: a guessed position or angle moves the beams as
rigid bodies, so their given shapes are kept.

Before, the mass-weighted projection onto the joints deformed the beams: a four-bar whose
graded steel coupler was given 1.2 mm off the rocker's tip started with an element 7 %
shorter and a slope 48 % off unit length, and its first steps failed (Newton did not converge
after four halvings). The references are geometric: an undeformed beam has element chords
of the element length and unit slopes to round-off (the straight beam: exactly).
"""

from __future__ import annotations

import copy
import logging
import re
from pathlib import Path

import numpy as np
import pytest

from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.mbs.analysis import settings_from_spec
from ancf_beam.mbs.integrators import integrate
from ancf_beam.mbs.mechanisms import build_mechanism
from ancf_beam.studies.bounds import EPS

N_EL, L_COUPLER = 8, 0.2
SHIPPED = load_config(Path(__file__).resolve().parents[1] / "config" / "config.yaml")["mechanisms"][
    "four_bar"
]


def _four_bar(angle: float) -> dict:
    """The shipped four-bar (crank 0.05, rocker 0.15 m, ground 0.25 m; its rocker angle a
    guess) with a graded steel ANCF coupler given at ``angle`` (assembled: 0.76873 rad)."""
    block = copy.deepcopy(SHIPPED)
    block.pop("reference")  # the four-bar reference is that of a rigid coupler
    block.update(t_end=2.0e-3, sample_dt=1.0e-4)
    block["bodies"]["coupler"] = {
        "type": "beam",
        "origin": [0.05, 0.0],
        "angle": angle,
        "beam": {"length": L_COUPLER, "width": 0.01, "height": 0.01},
        "material": {"E0": 2.0e11, "rho": 7800.0},
        "mesh": {"n_elements": N_EL},
        "defect": {"lam": 0.45, "n": 1.5},
    }
    for joint, marker in (("B", "start"), ("C", "end")):
        points = block["joints"][joint]["points"]
        block["joints"][joint]["points"] = [
            f"coupler.{marker}" if p.startswith("coupler.") else p for p in points
        ]
    return block


def _beam_shape(mech, q):
    beam = next(b for b in mech.system.bodies if hasattr(b, "model"))
    nodes = q[beam.offset : beam.offset + beam.n_dof].reshape(-1, 4)
    chords = np.hypot(*np.diff(nodes[:, :2], axis=0).T) / (L_COUPLER / N_EL) - 1.0
    slopes = np.hypot(nodes[:, 2], nodes[:, 3]) - 1.0
    return chords, slopes


@pytest.mark.parametrize("angle", [0.76873, 0.77, 0.70, 0.85])
def test_a_guessed_coupler_is_assembled_unstrained(angle, caplog):
    spec = resolve_mechanism({"mechanisms": {"fb": _four_bar(angle)}}, "fb")
    with caplog.at_level(logging.WARNING, logger="ancf_beam.mbs.general"):
        mech = build_mechanism(spec)
    assert not [r for r in caplog.records if "starts strained" in r.getMessage()]
    chords, slopes = _beam_shape(mech, mech.q0)
    # a straight beam rotated and translated: chords and slopes exact to a few eps (the
    # rotation's round-off), against the 7 % of the projection
    assert np.max(np.abs(chords)) <= 16 * EPS, chords
    assert np.max(np.abs(slopes)) <= 16 * EPS, slopes
    phi = mech.system.constraints(mech.q0)["phi"]
    assert np.max(np.abs(phi)) <= 1e-12  # the assembly's tolerance (ASSEMBLY_TOL, m)
    # and it runs (it failed in step 27 with the deformed start)
    res = integrate(mech.system, settings_from_spec(spec), q0=mech.q0, v0=mech.v0)
    assert res.steps == 200 and res.phi_max.max() <= 1e-10


def test_a_beam_that_must_deform_is_still_assembled(caplog):
    """A coupler that no rigid motion fits (both ends on ground pins 1 mm farther apart than
    its length) falls back to the projection, which stretches it: about 1 mm / 0.2 m, and a
    warning says so (its largest chord change at least the mean, 1 mm / 0.2 m)."""
    block = _four_bar(0.0)
    block["bodies"]["coupler"]["origin"] = [0.0, 0.3]
    block["joints"] = {
        "A": {"type": "ground-pin", "point": "coupler.start", "at": [0.0, 0.3]},
        "B": {"type": "ground-pin", "point": "coupler.end", "at": [L_COUPLER + 1.0e-3, 0.3]},
        "pin": {"type": "ground-pin", "point": "crank.pivot", "at": [0.0, 0.0]},
        "pin2": {"type": "ground-pin", "point": "rocker.pivot", "at": [0.25, 0.0]},
    }
    spec = resolve_mechanism({"mechanisms": {"fb": block}}, "fb")
    with caplog.at_level(logging.WARNING, logger="ancf_beam.mbs.general"):
        mech = build_mechanism(spec)
    (warning,) = [r.getMessage() for r in caplog.records if "starts strained" in r.getMessage()]
    assert "mechanisms.fb" in warning and "beam 'coupler'" in warning
    change = float(re.search(r"changed by up to (\S+) of the element length", warning)[1])
    assert (1 - 1e-9) * 1.0e-3 / L_COUPLER <= change <= 1.0  # the mean: 1 mm over 8 chords
    chords, _ = _beam_shape(mech, mech.q0)
    assert np.max(np.abs(mech.system.constraints(mech.q0)["phi"])) <= 1e-12
    assert 0.0 < np.mean(chords) <= 2 * 1.0e-3 / L_COUPLER
