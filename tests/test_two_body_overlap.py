"""The deepest overlap the two-body impact admits.

Two discs whose contact normal is their line of centres can be described only while the centres
stay apart: the configuration refuses an impact whose closed-form largest penetration
(:meth:`ancf_beam.mbs.laws.ContactLaw.max_penetration`) exceeds half the sum of the radii
(:func:`ancf_beam.mbs.laws.admissible_overlap`), with a message naming the keys, the values and
the largest admissible approach speed (exit 2); a run that gets there anyway (a spec built
without the config, a general mechanism) stops with :class:`ContactOverlapError` (exit 1), for
every integrator that takes a compliant contact. Before, the bodies passed through each other
and the run reported a restitution of -1."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from ancf_beam.cli import main
from ancf_beam.config import ConfigError, resolve_mechanism
from ancf_beam.errors import ContactOverlapError
from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.mbs.laws import ContactLaw, admissible_overlap
from ancf_beam.references.impact import hertz, integrate_impact

EPS = float(np.finfo(float).eps)
M1, M2 = 2.0, 3.0
M_EFF = M1 * M2 / (M1 + M2)
R1 = R2 = 0.01
K = 1.0e7  # N/m^1.5: v* = 8.2 m/s reaches half the radii sum


def _hertz_speed_limit(depth: float) -> float:
    """Approach speed whose elastic Hertz impact (n = 3/2) reaches ``depth``: the energy balance
    ``m v^2 / 2 = 2/5 K depth^(5/2)`` solved for ``v`` (written out here, independently of the
    code under test)."""
    return math.sqrt(4.0 * K * depth**2.5 / (5.0 * M_EFF))


def _two_body(v_rel: float, integrator: str = "adaptive", rtol: float = 1e-10):
    """The elastic Hertz impact at ``v_rel``, run to 1.5 impact durations after the flight over
    the 0.1 mm gap."""
    gap = 1e-4
    t_end = gap / v_rel + 1.5 * hertz(M_EFF, K, v_rel)["duration"]
    block = {
        "kind": "two-body",
        "t_end": t_end,
        "integrator": integrator,
        "sample_dt": t_end / 400,
        "bodies": {"m1": M1, "m2": M2, "radius1": R1, "radius2": R2},
        "v_rel": v_rel,
        "gap": gap,
        "contact": {"law": "hertz", "K": K, "exponent": 1.5},
    }
    if integrator == "adaptive":
        block["solver"] = {"method": "DOP853", "rtol": rtol, "atol": 1e-6 * rtol}
    return resolve_mechanism({"mechanisms": {"impact": block}}, "impact")


LAWS = [
    ("hertz", {"K": 1e9, "n": 1.5}),
    ("hertz", {"K": 1e6, "n": 2.55}),
    ("hunt-crossley", {"K": 1e9, "n": 1.5, "restitution": 0.4}),
    ("lankarani-nikravesh", {"K": 1e8, "n": 1.0, "restitution": 0.7}),
    ("flores", {"K": 1e10, "n": 3.0, "restitution": 0.05}),
    ("flores", {"K": 1e10, "n": 1.5, "restitution": 0.9999}),  # chi 1.6e-4: the series
    ("kelvin-voigt", {"k": 1e7, "zeta": 0.0}),
    ("kelvin-voigt", {"k": 1e7, "zeta": 0.3}),
    ("kelvin-voigt", {"k": 1e7, "zeta": 1.0}),
    ("kelvin-voigt", {"k": 1e7, "zeta": 2.5}),
]


@pytest.mark.parametrize(("law", "p"), LAWS, ids=[f"{a}-{b}" for a, b in LAWS])
@pytest.mark.parametrize("v0", [0.3, 7.0])
def test_closed_form_largest_penetration_matches_an_independent_integration(law, p, v0):
    """The closed form against the 1-DOF impact integrated by scipy (DOP853 at rtol 1e-12,
    :func:`ancf_beam.references.impact.integrate_impact`), within that integration's own error
    bound plus the closed form's round-off (a power, a log1p or atan and an exp: 16 eps)."""
    if law == "kelvin-voigt":
        c = 2.0 * p["zeta"] * math.sqrt(p["k"] * M_EFF)
        closed = ContactLaw(law, p["k"], 1.0, c, None, 1e-4).max_penetration(M_EFF, v0)
        ref = integrate_impact(law, M_EFF, v0, k=p["k"], c=c, error=True)
    else:
        ce = p.get("restitution")
        closed = ContactLaw(law, p["K"], p["n"], 0.0, ce, 1e-4).max_penetration(M_EFF, v0)
        ref = integrate_impact(law, M_EFF, v0, K=p["K"], n=p["n"], restitution=ce, error=True)
    tol = ref["error"]["max_penetration"] + 16.0 * EPS * closed
    assert abs(closed - ref["max_penetration"]) <= tol, (closed, ref["max_penetration"], tol)


def test_hertz_largest_penetration_is_the_classic_closed_form():
    """``delta_max = (5 m v^2 / (4 K))^(2/5)`` for ``F = K delta^1.5`` (Goldsmith), to
    round-off (two powers: 8 eps); damping only lowers it (the hysteresis laws add force in
    compression)."""
    v = 3.0
    classic = (5.0 * M_EFF * v * v / (4.0 * K)) ** 0.4
    got = ContactLaw("hertz", K, 1.5, 0.0, None, 1e-4).max_penetration(M_EFF, v)
    assert abs(got - classic) <= 8.0 * EPS * classic
    for law in ("hunt-crossley", "lankarani-nikravesh", "flores"):
        assert ContactLaw(law, K, 1.5, 0.0, 0.5, 1e-4).max_penetration(M_EFF, v) < classic


def test_elastic_two_body_largest_overlap_matches_the_closed_form():
    """The adaptive run's largest overlap (its peak searched on the dense output) against
    ``(5 m v^2 / (4 K))^(2/5)``. Bound: the run's error, estimated by the run at 100 times
    smaller rtol (DOP853, order 8: that run's error is at least 100^(7/8) = 56 times smaller,
    so the difference exceeds 0.98 times this run's error; doubled for the pre-asymptotic
    regime), plus the error one step admits (rtol of the coordinates, 0.02 m: a difference can
    vanish by coincidence), plus the round-off of ``r1 + r2 - |x2 - x1|`` (4 eps 0.02 m)."""
    v = 3.0
    classic = (5.0 * M_EFF * v * v / (4.0 * K)) ** 0.4
    coarse = run_mechanism(_two_body(v, rtol=1e-9))[0]["max_penetration"]
    fine = run_mechanism(_two_body(v, rtol=1e-11))[0]["max_penetration"]
    scale = R1 + R2
    tol = 2.0 * abs(coarse - fine) + 1e-9 * scale + 4.0 * EPS * scale
    print(
        f"\nlargest overlap {coarse:.12e} m, closed form {classic:.12e} m: error "
        f"{abs(coarse - classic):.3e} m, bound {tol:.3e} m"
    )
    assert abs(coarse - classic) <= tol


def test_a_speed_just_inside_the_bound_runs_and_one_beyond_is_refused():
    """Half the radii sum (0.01 m) is reached at ``v* = sqrt(4 K d^(5/2) / (5 m))``, 8.16 m/s:
    at 0.99 v* the impact runs (largest overlap 0.992 d, its error below 1e-8 m by the test
    above) and rebounds elastically; at 1.01 v* the configuration is refused, naming the keys,
    the values and the largest admissible speed (v*, to the bisection's 6 digits)."""
    limit = admissible_overlap(R1, R2)
    v_star = _hertz_speed_limit(limit)
    summary = run_mechanism(_two_body(0.99 * v_star))[0]
    assert summary["impacts"] == 1 and summary["max_penetration"] < limit
    assert abs(summary["restitution"] - 1.0) < 1e-6  # elastic (DOP853 at rtol 1e-10)
    with pytest.raises(ConfigError) as info:
        _two_body(1.01 * v_star)
    msg = str(info.value)
    for text in ("mechanisms.impact.v_rel", "bodies.m1", "bodies.m2", "radius1", "'hertz'"):
        assert text in msg, msg
    assert f"{1.01 * v_star!r}" in msg and f"v_rel <= {v_star:.6g} m/s" in msg, msg
    assert f"{limit:.6g} m" in msg


@pytest.mark.parametrize("integrator", ["adaptive", "generalized-alpha", "central-difference"])
def test_a_run_overlapping_beyond_the_geometry_stops_with_an_error(integrator):
    """A spec that bypasses the configuration's check (as a study's variant does) at twice v*:
    the elastic overlap would reach 2^(4/5) = 1.74 times the admissible depth; the run stops
    at the first accepted step beyond it, the message naming the contact, the time and both
    depths. (Before: every integrator ran on.)"""
    limit = admissible_overlap(R1, R2)
    spec = _two_body(1.0, integrator=integrator)
    spec = dataclasses.replace(spec, v_rel=2.0 * _hertz_speed_limit(limit))
    with pytest.raises(ContactOverlapError) as info:
        run_mechanism(spec)
    msg = str(info.value)
    assert "contact 'contact' overlaps by" in msg and f"deeper than the {limit:g} m" in msg, msg
    depth = float(msg.split("overlaps by ")[1].split(" m")[0])
    t = float(msg.split(" at t = ")[1].split(" s")[0])
    assert limit < depth < R1 + R2  # beyond the limit, before the centres meet
    assert t > 1e-4 / spec.v_rel  # after the flight over the gap


def test_cli_general_discs_overlapping_too_deep_exit_1(capsys, tmp_path):
    """A general mechanism (no closed form is checked there) whose discs overlap too deeply:
    exit 1 with the message, no file written."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "mechanisms:\n"
        "  discs:\n"
        "    kind: general\n"
        "    t_end: 2.0e-3\n"
        "    integrator: adaptive\n"
        "    sample_dt: 1.0e-5\n"
        "    solver: {method: DOP853, rtol: 1.0e-9, atol: 1.0e-15}\n"
        "    bodies:\n"
        f"      b1: {{type: point-mass, mass: {M1}, position: [0.0, 0.0], velocity: [20.0, 0.0]}}\n"
        f"      b2: {{type: point-mass, mass: {M2}, position: [0.0201, 0.0]}}\n"
        "    contacts:\n"
        "      c: {type: circle-circle, points: [b1.cm, b2.cm], radii: [0.01, 0.01],\n"
        f"          contact: {{law: hertz, K: {K}, exponent: 1.5}}}}\n"
    )
    out = tmp_path / "r.nc"
    code = main(["mechanism", "--config", str(cfg), "--case", "discs", "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "contact 'c' overlaps by" in err and "deeper than the 0.01 m" in err, err
    assert not out.exists()
