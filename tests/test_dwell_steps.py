"""Dwell steps of the index-3 step control (``solver.dwell_dt``, ``dwell_after``; fixed step
rule, :mod:`ancf_beam.mbs.stepping`): inside a contact that has lasted ``dwell_after`` the step
is ``dwell_dt`` instead of ``dt_contact``.

References: the run without dwell steps (everything before the first dwell step must be the
same to the bit: the rule only changes steps inside sustained contacts) and the Hertz
equilibrium ``delta = (m g / K)^(1/n)`` of a journal resting in its bearing."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ancf_beam.config import resolve_mechanism
from ancf_beam.config.contact import contact_law
from ancf_beam.errors import ConfigError
from ancf_beam.mbs.bodies import PointMass, ground
from ancf_beam.mbs.forces import CircleContact
from ancf_beam.mbs.integrators import IntegratorSettings, integrate
from ancf_beam.mbs.system import System

sys.path.insert(0, str(Path(__file__).parent))
from test_mbs_clearance import _block, _run  # noqa: E402

EPS = float(np.finfo(float).eps)
FIXED = {"dt": 1e-5, "dt_contact": 1e-6, "step_control": True}


def _dropped_journal(m=0.5, g=9.81, k_h=2.0e9, e=0.8):
    """A journal (point mass, radius 9.5 mm) released at rest from the centre of a 10 mm ground
    bearing under gravity: it falls 0.5 mm, bounces (Lankarani-Nikravesh, restitution ``e``)
    and comes to rest on the bearing's wall."""
    law = contact_law({"law": "lankarani-nikravesh", "K": k_h, "restitution": e}, "contact")
    s = System(g=g)
    j = s.add(PointMass("journal", mass=m, position=(0.0, 0.0)))
    s.add(
        CircleContact(
            "bearing", p=ground(0.0, 0.0), q=j.point(), inside=True, r_p=0.010, r_q=0.0095, law=law
        )
    )
    return s.finalize()


def test_dropped_journal_comes_to_rest_at_the_hertz_penetration_with_dwell_steps():
    """The first impact lasts about 0.75 ms (Hertz, m = 0.5 kg, K = 2e9, v0 = 0.1 m/s); a
    contact older than 3 ms is sustained and stepped at 1e-4 s. The run with dwell steps takes
    them (a fifth of the steps dt_contact takes, or fewer), agrees with the run without them up to
    its first dwell step, and ends at rest at the Hertz penetration: within the journal's
    remaining motion over the last 20 ms (its range of positions there) plus the Newton
    tolerance's share (1e-8 of m g on the contact stiffness 1.5 K delta^0.5) and the gap's
    round-off (4 eps of the 0.5 mm offset)."""
    m, g, k_h = 0.5, 9.81, 2.0e9
    common = dict(t_end=0.4, sample_dt=1e-3, dt=1e-4, dt_contact=2e-6, step_control=True)
    runs = {}
    for name, extra in (("off", {}), ("dwell", {"dwell_dt": 1e-4, "dwell_after": 3e-3})):
        st = IntegratorSettings("generalized-alpha", **common, **extra)
        runs[name] = integrate(_dropped_journal(m, g, k_h), st)
    off, dw = runs["off"], runs["dwell"]
    assert dw.stats["steps_dwell"] > 0 and "steps_dwell" not in off.stats
    assert dw.steps < off.steps / 5  # measured 11769 against 153566
    # no dwell step before the first contact that has lasted dwell_after: up to then the runs
    # are the same
    ep_off, ep_dw = off.contact.episodes, dw.contact.episodes
    dur = np.nan_to_num(ep_dw[:, 2], nan=dw.t[-1]) - ep_dw[:, 1]
    k = int(np.nonzero(dur >= 3e-3)[0][0])
    same = off.t < ep_dw[k, 1] + 3e-3
    assert np.count_nonzero(same) > 10
    assert np.array_equal(off.q[same], dw.q[same])
    np.testing.assert_array_equal(ep_off[: k + 1, :2], ep_dw[: k + 1, :2])
    delta = (m * g / k_h) ** (1 / 1.5)
    k_c = 1.5 * k_h * delta**0.5
    last = dw.t >= dw.t[-1] - 0.02
    y = dw.q[last, 1]
    bound = (y.max() - y.min()) + 2 * 1e-8 * m * g / k_c + 4 * EPS * 0.0005
    assert abs(dw.q[-1, 1] + 0.0005 + delta) <= bound
    # at rest, so the bound above is tight (measured: range 2.8e-8, error 6.9e-9 of delta)
    assert y.max() - y.min() < 1e-6 * delta


def test_clearance_crank_matches_the_fixed_rule_until_its_first_sustained_contact():
    """The rigid-rod clearance slider-crank (5000 rpm, c = 0.5 mm, as config.yaml's
    slider_crank_clearance) over one revolution (12 ms; the journal comes to rest on the
    bearing in its second half): its impacts up to the first sustained contact are the fixed
    rule's to the bit, and the dwell steps (5 us, a ninth of the 22 kHz ringing period of the
    resting journal) cut the steps of the revolution by more than 30 %."""
    block = _block(mu=0.01)
    t_end = 0.012
    _, off, _, _ = _run(block, t_end=t_end, **FIXED)
    _, dw, _, _ = _run(block, t_end=t_end, **FIXED, dwell_dt=5e-6, dwell_after=2e-4)
    assert dw.stats["steps_dwell"] > 0
    assert dw.steps < 0.7 * off.steps  # measured 3993 against 6600
    ep_off, ep_dw = off.contact.episodes, dw.contact.episodes
    long = np.nonzero(np.nan_to_num(ep_off[:, 2], nan=t_end) - ep_off[:, 1] > 2e-4)[0]
    k = int(long[0])  # the first sustained contact: the same onset in both runs
    np.testing.assert_array_equal(ep_off[: k + 1, [1, 3, 4]], ep_dw[: k + 1, [1, 3, 4]])


def test_dwell_settings_are_checked():
    with pytest.raises(ValueError, match="dwell_after \\(s\\) is required with dwell_dt"):
        IntegratorSettings(dwell_dt=1e-5).validate()
    with pytest.raises(ValueError, match="dwell_dt needs step_rule 'fixed'"):
        IntegratorSettings(dwell_dt=1e-5, dwell_after=1e-4, step_rule="error").validate()
    with pytest.raises(ValueError, match="dwell_dt needs step_rule 'fixed' with step_control"):
        IntegratorSettings(dwell_dt=1e-5, dwell_after=1e-4).validate()  # no step control
    with pytest.raises(ValueError, match="dwell_dt must be > 0, got -1"):
        IntegratorSettings(dwell_dt=-1.0, dwell_after=1e-4).validate()
    block = {**_block(), "solver": {**FIXED, "dwell_dt": 1e-5}}
    with pytest.raises(ConfigError, match=r"'mechanisms\.m\.solver\.dwell_after' = None"):
        resolve_mechanism({"mechanisms": {"m": block}}, "m")
    block["solver"] = {**FIXED, "step_control": False, "dwell_dt": 1e-5, "dwell_after": 1e-4}
    with pytest.raises(ConfigError, match=r"solver\.step_control' = true"):
        resolve_mechanism({"mechanisms": {"m": block}}, "m")
