"""Two-body impact (seed 003, issue 14): the mechanism JSON against the independent references
of ancf_beam.references.impact (closed forms, quadrature, a separate DOP853 integration)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
import scipy.special as sp
import xarray as xr
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ancf_beam.cli import main
from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.config.contact import contact_law
from ancf_beam.mbs import core
from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.mbs.bodies import PointMass, ground
from ancf_beam.mbs.forces import CircleContact
from ancf_beam.mbs.integrators import CONTACT_STEP_FRACTION, IntegratorSettings, integrate
from ancf_beam.mbs.system import System
from ancf_beam.references import impact as ref

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"
M_EFF = 2.0 * 3.0 / 5.0  # seed 003: m1 = 2 kg, m2 = 3 kg
KEYS = {
    "restitution": "restitution",
    "contact_duration": "duration",
    "max_penetration": "max_penetration",
    "max_contact_force": "max_force",
}
EPS = float(np.finfo(float).eps)
#: safety factor on an error estimate from refinement (as the pipeline's estimate_factor)
SAFETY = 2.0


def _spec(contact, **block):
    blk = {"kind": "two-body", "contact": contact, "solver": {"rtol": 1e-11, "atol": 1e-14}}
    blk.update(block)
    return resolve_mechanism({"mechanisms": {"impact": blk}}, "impact")


def _run(contact, integrator=None, **block):
    return run_mechanism(_spec(contact, **block), integrator=integrator)


def _checked(spec, integrator=None):
    """Run ``spec`` and check it with the pipeline's bounds (studies.mechanisms: the impact's
    restitution, duration, largest penetration and force against references.impact within
    estimate_factor (2) x (the error estimated from the run refined + the reference's own error)
    + round-off); returns the summary, the Dataset and the check rows (all PASS)."""
    from ancf_beam.mbs.analysis import refined_runs
    from ancf_beam.studies.mechanisms import mechanism_checks, summary_attrs

    summary, ds = run_mechanism(spec, integrator=integrator)
    ds.attrs.update(summary_attrs(summary))
    rows = mechanism_checks(spec, ds, fine=refined_runs(spec, ds))
    for r in rows:
        print(
            f"  {r['status']} {r['check']}: {r['rel_error']:.2e} <= {r['tolerance']:.2e} "
            f"({r['err_over_tol']:.2f})"
        )
    assert all(r["status"] == "PASS" for r in rows), rows
    return summary, ds, rows


def test_seed003_example_matches_the_closed_form_and_the_integration():
    """m1 = 2, m2 = 3 kg, 1 m/s, k = 1e7 N/m, c = 200 N s/m (config.yaml: impact_seed003):
    the JSON against the closed form within the pipeline's bounds (measured error / bound
    0.44-0.47), and the two references against each other within their own error bounds (the
    integration's: its difference from a run 10 times looser; the closed form's 16 eps)."""
    spec = resolve_mechanism(load_config(CONFIG), "impact_seed003")
    summary, ds, _ = _checked(spec)
    kv = ref.kelvin_voigt(M_EFF, 1.0e7, 200.0, 1.0)
    num = ref.integrate_impact("kelvin-voigt", M_EFF, 1.0, k=1.0e7, c=200.0, error=True)
    for rk in KEYS.values():
        bound = num["error"][rk] + 16 * EPS * abs(kv["clipped"][rk])
        assert abs(num[rk] - kv["clipped"][rk]) <= bound, rk
    # the unclipped law (contact until the overlap closes, tensile at the end) differs: its
    # restitution is lower by 1.52e-3 (0.913266 vs 0.914791) and it lasts 20.0 us (1.9 %)
    # longer (closed forms, to the 4 digits printed); peak penetration and force are the same
    un, cl = kv["unclipped"], kv["clipped"]
    assert cl["restitution"] - un["restitution"] == pytest.approx(1.524e-3, abs=5e-7)
    assert un["duration"] - cl["duration"] == pytest.approx(2.001e-5, abs=5e-9)
    assert summary["restitution"] - un["restitution"] > 1e-3
    # explicit bound 2 / omega_n = 0.6928 ms with omega_n = sqrt(k / m_eff): the same formula,
    # a few operations of round-off
    assert summary["critical_dt_mode"] == "contact"
    assert summary["critical_dt"] == pytest.approx(2.0 / math.sqrt(1.0e7 / M_EFF), rel=8 * EPS)
    # seed 003's c = 200 N s/m is zeta = 0.0289, outside its own 0.1-0.3 advice
    assert kv["clipped"]["zeta"] == pytest.approx(0.028868, abs=5e-7)
    assert summary["impacts"] == 1
    # the samples' largest force lies below the searched peak, by at most the sampled
    # interpolant's curvature: F_max (omega_n h)^2 / 8 with the sample step h = 1 us
    fmax = float(ds.contact_force_normal.max())
    wn = math.sqrt(1.0e7 / M_EFF)
    assert 0.0 <= cl["max_force"] - fmax <= cl["max_force"] * (wn * 1e-6) ** 2 / 8


def _kelvin_voigt_mp(m, k, c, v0):
    """The clipped Kelvin-Voigt impact at 50 digits, written from the characteristic roots ``r =
    -sigma +- sqrt(sigma^2 - omega_n^2)`` (complex when underdamped): ``delta(t) = v0 (e^(r1 t)
    - e^(r2 t)) / (r1 - r2)``. The largest penetration is where ``r1 e^(r1 t) = r2 e^(r2 t)``,
    the contact ends where the force ``-m delta''`` vanishes, ``r1^2 e^(r1 t) = r2^2 e^(r2 t)``,
    and the force is largest at its start or where ``r1^3 e^(r1 t) = r2^3 e^(r2 t)``: roots
    ``t = (j ln(r2 / r1) + 2 pi i n) / (r1 - r2)`` (j = 1, 2, 3), the first positive real one
    of each. Near critical damping the roots nearly coincide; 50 digits keep 30 of them. When
    ``sigma^2 = omega_n^2`` exactly they coincide: ``delta = v0 t e^(-sigma t)``, the limit."""
    mp = mpmath.mp
    with mpmath.workdps(50):
        m, k, c, v0 = (mpmath.mpf(x) for x in (m, k, c, v0))
        sig = c / (2 * m)
        s = mpmath.sqrt(mpmath.mpc(sig * sig - k / m))
        r1, r2 = -sig + s, -sig - s

        def first_root(j):
            if s == 0:  # exactly critical (the double root): delta^(j) = 0 at t = j / sigma
                return j / sig
            ts = [(j * mpmath.log(r2 / r1) + 2j * mp.pi * n) / (r1 - r2) for n in range(-3, 4)]
            real = [t.real for t in ts if abs(t.imag) < mpmath.mpf(10) ** -30 * abs(t)]
            return min(t for t in real if t > 0)

        def d(t, p):  # p-th derivative of delta
            if s == 0:  # delta = v0 t e^(-sigma t): the limit of the roots' form
                return v0 * mpmath.exp(-sig * t) * ((-sig) ** p * t + p * (-sig) ** (p - 1))
            return (v0 * (r1**p * mpmath.exp(r1 * t) - r2**p * mpmath.exp(r2 * t)) / (r1 - r2)).real

        t_pen, t_end = first_root(1), first_root(2)
        force = [c * v0] + [-m * d(t, 2) for t in (first_root(3),) if t < t_end]
        return {
            "restitution": float(-d(t_end, 1) / v0),
            "duration": float(t_end),
            "max_penetration": float(d(t_pen, 0)),
            "max_force": float(max(force)),
        }


@settings(max_examples=60, deadline=None)
@example(zeta=1.0, m=2.5, k=1000.0, v0=1.0)  # c = 100 exactly: sigma^2 = k / m to the bit
@given(
    zeta=st.one_of(
        st.sampled_from([0.0, 0.5, 1.0 - 1e-9, 1.0, 1.0 + 1e-12, 1.0 + 1e-9]),
        st.floats(0.0, 50.0),
    ),
    m=st.floats(0.01, 100.0),
    k=st.floats(1e3, 1e10),
    v0=st.floats(1e-3, 10.0),
)
def test_kelvin_voigt_closed_form_holds_for_any_damping(zeta, m, k, v0):
    """references.impact.kelvin_voigt (acos / acosh of zeta) against the roots' form at 50
    digits over the configuration's range (zeta >= 0: under-, critically and overdamped; a
    YAML case with zeta = 2.9 used to stop the validation with 'not an impact oscillation').
    Bound: the closed form's few operations, 16 eps each, times 1 + |ln restitution| (exp
    carries its exponent's rounding times the exponent); the old underdamped form lost 2e3 eps
    of the duration at zeta = 1 - 1e-9."""
    c = 2.0 * zeta * math.sqrt(k * m)
    kv = ref.kelvin_voigt(m, k, c, v0)["clipped"]
    exact = _kelvin_voigt_mp(m, k, c, v0)
    amp = 1.0 + abs(math.log(exact["restitution"]))
    for key, x in exact.items():
        assert abs(kv[key] - x) <= 16 * EPS * amp * abs(x), (key, kv[key], x)
    un = ref.kelvin_voigt(m, k, c, v0)["unclipped"]
    if zeta >= 1.0:  # the overlap never closes: no end, no rebound
        assert un["duration"] == math.inf and un["restitution"] == 0.0
    else:  # half a damped period
        assert un["duration"] == pytest.approx(math.pi / math.sqrt(k / m - (c / (2 * m)) ** 2))


@pytest.mark.parametrize(
    ("c", "integrator", "gap"),
    [(2.0e4, None, 1e-4), (1.0e5, None, 1e-4), (2.0e4, "generalized-alpha", 1.0037e-4)],
)
def test_an_overdamped_impact_passes_the_pipeline_checks(c, integrator, gap):
    """Kelvin-Voigt with zeta = 2.9 and 14.4 at seed 003's k and masses, by the event-located
    adaptive default and a fixed step. Three things used to fail here: the reference raised for
    zeta >= 1; the bodies separate still overlapped under zero force (at 1e5 N s/m they reach
    -delta' = 1.2e-3 m/s from an overlap of 1.2e-5 m), which left restitution null; and the
    fixed step's largest force, c v0 at the onset's jump, was 'refined' by a parabola through
    the sample before the onset (0 N) to 2.24e4 N, 12 % high. The onset here falls 0.63 us
    before a sample: that sample sees c v0 less 1.1 %, within one interval's fall (1.7 %)."""
    spec = _spec({"law": "kelvin-voigt", "k": 1.0e7, "c": c}, gap=gap, t_end=1e-3)
    summary, ds, rows = _checked(spec, integrator)
    kv = ref.kelvin_voigt(M_EFF, 1.0e7, c, 1.0)["clipped"]
    assert kv["zeta"] > 2.5 and summary["restitution"] is not None
    assert ds.penetration.values[-1].max() > 0.0  # separating, still overlapped
    if integrator is not None:
        fmax = float(ds.contact_force_normal.max())
        assert summary["max_contact_force"] == fmax  # the sample at the jump, as it is
        assert 0.005 < 1.0 - fmax / kv["max_force"] < 0.017


@pytest.mark.parametrize("rtol", [1e-11, 1e-13])
def test_onset_is_located_by_an_event_after_a_gap(rtol):
    """With a 0.1 mm gap the adaptive run stops at delta = 0 (t = gap / v_rel) and restarts
    there: the impact is the same as from touching (the pipeline's bounds). At rtol 1e-13 the
    restart used to fail ('required step size is less than spacing between numbers'): the
    Kelvin-Voigt force at delta = 0 was clipped to zero, a jump between the first stage and the
    others."""
    spec = _spec(
        {"law": "kelvin-voigt", "k": 1.0e7, "c": 200.0},
        gap=1.0e-4,
        t_end=2.2e-3,
        solver={"rtol": rtol, "atol": 1e-3 * rtol},
    )
    _, ds, _ = _checked(spec)
    state = ds.contact_state.isel(contact=0)
    t_on = float(ds.time[state > 0][0])
    # the first sample in contact: the one at the onset (100 x 1 us rounds 1 ulp below 1e-4;
    # touching and closing, the Kelvin-Voigt force c delta' is already positive) or the next
    assert 1.0e-4 * (1 - 4 * EPS) <= t_on <= 1.0e-4 + 1.0e-6


def test_undamped_hertz_impact_matches_the_quadrature():
    K = 1.0e9
    spec = _spec({"law": "hertz", "K": K})
    summary, _, _ = _checked(spec)  # vs the independent integration, the pipeline's bounds
    h = ref.hertz(M_EFF, K, 1.0)
    # energy balance (closed form) against its formula: a few operations of round-off
    assert h["max_penetration"] == pytest.approx((5 * M_EFF / (4 * K)) ** 0.4, rel=8 * EPS)
    # against the quadrature of the closed form: the pipeline's bound from the run refined
    from ancf_beam.mbs.analysis import refined_run
    from ancf_beam.studies.mechanisms import summary_attrs

    _, ds = run_mechanism(spec)
    ds.attrs.update(summary_attrs(summary))
    fine, kappa = refined_run(spec, ds)
    for key, rk in (
        ("max_penetration", "max_penetration"),
        ("contact_duration", "duration"),
        ("max_contact_force", "max_force"),
    ):
        # Richardson from rtol / 100, plus the error one step admits (rtol 1e-11)
        est = abs(summary[key] - fine.attrs[f"summary.{key}"]) * kappa / (kappa - 1) + 1e-11 * abs(
            summary[key]
        )
        quad = 1e-14 * abs(h[rk])  # quad's epsrel (the duration integral)
        assert abs(summary[key] - h[rk]) <= SAFETY * (est + quad) + 8 * EPS * summary[
            "steps"
        ] * abs(h[rk]) * (0.02 / h["max_penetration"]), key
    # energy returned: e^2 - 1 within the same estimate; conservative run: energy balance
    e_est = (
        abs(summary["restitution"] - fine.attrs["summary.restitution"]) * kappa / (kappa - 1)
        + 1e-11
    )
    assert abs(summary["restitution"] ** 2 - 1.0) <= 2 * SAFETY * e_est + 8 * EPS * summary["steps"]
    d_est = abs(summary["energy_drift_rel"] - fine.attrs["summary.energy_drift_rel"]) + 1e-11
    assert (
        summary["energy_drift_rel"]
        <= SAFETY * d_est * kappa / (kappa - 1) + 8 * EPS * summary["steps"]
    )
    # contact bound from the tangent stiffness 1.5 K delta_max^0.5 at the estimated peak
    k_lin = 1.5 * K * math.sqrt(h["max_penetration"])
    assert summary["critical_dt"] == pytest.approx(2.0 / math.sqrt(k_lin / M_EFF), rel=16 * EPS)


def test_hertz_duration_constant_from_quadrature():
    """The quadrature against the Beta function: I = 0.4 B(0.4, 0.5) (quad's epsrel 1e-14 plus
    the Beta function's round-off), and the classic constants, printed with 5 digits (half a
    unit of their last digit): t = 2 I delta_max / v0 = 2.9433 delta_max / v0 = 3.2181 (m^2 /
    (K^2 v0))^(1/5)."""
    i_beta = 0.4 * sp.beta(0.4, 0.5)
    assert ref.hertz_duration_integral(1.5) == pytest.approx(i_beta, rel=1e-14 + 16 * EPS)
    assert 2 * ref.hertz_duration_integral(1.5) == pytest.approx(2.9433, abs=5e-5)
    assert ref.hertz_duration_constant(1.5) == pytest.approx(3.2181, abs=5e-5)
    assert ref.hertz_duration_integral(1.0) == pytest.approx(math.pi / 2, rel=1e-14 + 16 * EPS)


def _zeta_for(ce):
    """Kelvin-Voigt damping ratio whose unclipped restitution is ``ce``."""
    lg = math.log(ce)
    return -lg / math.sqrt(math.pi**2 + lg * lg)


LAWS = ("hunt-crossley", "lankarani-nikravesh", "flores", "kelvin-voigt")
CES = (0.3, 0.5, 0.7, 0.9)


def test_restitution_recovered_by_each_dissipative_law():
    """Every law and ce: the run against the independent integration within the pipeline's
    bounds (measured error / bound at most 0.5), and the laws' character."""
    rows = {}
    worst = 0.0
    for law in LAWS:
        for ce in CES:
            if law == "kelvin-voigt":
                contact = {"law": law, "k": 1.0e7, "zeta": _zeta_for(ce)}
            else:
                contact = {"law": law, "K": 1.0e9, "restitution": ce}
            s, _, checks = _checked(_spec(contact))
            worst = max(worst, max(r["err_over_tol"] for r in checks))
            r = (
                ref.integrate_impact(law, M_EFF, 1.0, K=1.0e9, restitution=ce)
                if law != "kelvin-voigt"
                else ref.integrate_impact(
                    law, M_EFF, 1.0, k=1.0e7, c=2 * _zeta_for(ce) * math.sqrt(1.0e7 * M_EFF)
                )
            )
            rows[law, ce] = s["restitution"], r["restitution"]
    print(f"\nworst error / bound {worst:.2f}")
    print("restitution recovered (mechanism run / independent integration) for the law's ce")
    print("law                   " + "".join(f"   ce = {ce:.1f}          " for ce in CES))
    for law in LAWS:
        print(
            f"{law:20s}  "
            + "".join(f"{rows[law, ce][0]:.6f}/{rows[law, ce][1]:.6f}  " for ce in CES)
        )
    # the laws' character (from the independent integration): Flores recovers ce over the
    # whole range (within 0.044), Lankarani-Nikravesh only near 1 (0.913 for 0.9, 0.684 for
    # 0.3), Hunt-Crossley 0.581 for 0.3; the never-tensile Kelvin-Voigt returns more than the
    # unclipped formula it was tuned with (0.397 for 0.3)
    assert max(abs(rows["flores", ce][1] - ce) for ce in CES) < 0.05
    assert abs(rows["lankarani-nikravesh", 0.9][1] - 0.9) < 0.015
    assert rows["lankarani-nikravesh", 0.3][1] - 0.3 > 0.35
    assert all(rows["kelvin-voigt", ce][1] > ce for ce in CES)


@pytest.mark.parametrize("integrator", ["generalized-alpha", "newmark", "central-difference"])
def test_fixed_step_integrators_resolve_the_impact(integrator):
    """Without event location the fixed step (default: sample_dt = 1 us here, below
    CONTACT_STEP_FRACTION of the contact bound) misplaces the onset and the force's end by
    part of a step; the pipeline's bounds (error estimated from the runs at dt / 2 and dt / 4,
    first order) hold. Measured relative errors 8.4e-5 (restitution, penetration, force) and
    2.6e-4 (duration, from the sampled force)."""
    spec = _spec({"law": "kelvin-voigt", "k": 1.0e7, "c": 200.0})
    summary, _, _ = _checked(spec, integrator)
    assert summary["dt"] <= CONTACT_STEP_FRACTION * summary["critical_dt"]


def test_central_differences_default_step_divides_the_sample_interval(caplog):
    """With a contact the default step is capped at CONTACT_STEP_FRACTION of the contact
    bound (3.46e-5 s for seed 003 at sample_dt 1e-4 s). Before, the run stepped at the cap and
    sampled every third step, every 1.04e-4 s instead of 1e-4 s, with a warning; now the step
    is the largest divisor of sample_dt below the cap, 1e-4 / 3 s, and the samples fall on
    sample_dt's multiples to round-off."""
    spec = resolve_mechanism(
        load_config(CONFIG),
        "impact_seed003",
        {"integrator": "central-difference", "sample_dt": 1.0e-4},
    )
    with caplog.at_level("WARNING", logger="ancf_beam.mbs.integrators"):
        summary, ds = run_mechanism(spec)
    assert not [r for r in caplog.records if "not a multiple" in r.getMessage()]
    assert summary["dt"] <= CONTACT_STEP_FRACTION * summary["critical_dt"]
    assert summary["dt"] == pytest.approx(1.0e-4 / 3, rel=4 * EPS)
    t = ds["time"].values
    assert np.max(np.abs(t - 1.0e-4 * np.arange(len(t)))) <= 8 * EPS * t[-1] * len(t)


def test_cli_two_body_json_and_netcdf(tmp_path, capsys):
    out = tmp_path / "impact.nc"
    code = main(
        [
            "mechanism",
            "--case",
            "impact_seed003",
            "--config",
            str(CONFIG),
            "--json",
            "-q",
            "--out",
            str(out),
        ]
    )
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    for key in ("restitution", "contact_duration", "max_penetration", "max_contact_force"):
        assert printed[key] > 0
    with xr.open_dataset(out) as ds:
        for var in (
            "contact_force_normal",
            "contact_force_tangential",
            "penetration",
            "contact_state",
            "eccentricity_x",
            "eccentricity_y",
        ):
            assert ds[var].dims == ("time", "contact")
        assert list(ds.contact.values) == ["contact"]
        fn = ds.contact_force_normal.isel(contact=0)
        # the samples (every 1 us) lie below the peak searched on the dense output by at most
        # F (omega_n h)^2 / 8 (a force ~ sin(omega_n t) sampled every h)
        peak = printed["max_contact_force"]
        wn = math.sqrt(1.0e7 / M_EFF)
        assert 0.0 <= peak - float(fn.max()) <= peak * (wn * 1e-6) ** 2 / 8
        assert float(abs(ds.contact_force_tangential).max()) == 0.0  # no friction
        # e_x = x2 - x1 and penetration = r1 + r2 - e_x
        ex = ds.eccentricity_x.isel(contact=0)
        assert float(abs(ex - (ds.x2 - ds.x1)).max()) == 0.0
        pen = ds.penetration.isel(contact=0)
        assert float(abs(pen - (0.02 - ex)).max()) <= 2 * EPS * 0.02  # one subtraction


def test_critical_dt_of_mechanisms_names_the_governing_mode(tmp_path, capsys):
    """``critical-dt --mechanism``: seed 003's contact bound 2 / omega_n = 0.6928 ms (governing
    mode contact, zeta reported); a Hertz law switched in by --set is linearised at the
    undamped peak penetration; the flexible slider-crank is bounded by its beam elements."""
    base = ["critical-dt", "--config", str(CONFIG), "--json", "-q"]
    assert main([*base, "--mechanism", "impact_seed003", "--out", str(tmp_path / "c.nc")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["governing_mode"] == "contact"
    # the same formulas evaluated here: a few operations of round-off
    assert out["dt_critical"] == pytest.approx(2.0 / math.sqrt(1.0e7 / M_EFF), rel=8 * EPS)
    assert out["contact_zeta"]["contact"] == pytest.approx(
        200.0 / (2 * math.sqrt(1e7 * M_EFF)), rel=8 * EPS
    )
    sets = [
        "--set",
        "contact.law=hertz",
        "--set",
        "contact.K=1e9",
        "--set",
        "contact.k=null",
        "--set",
        "contact.c=null",
    ]
    assert main([*base, "--mechanism", "impact_seed003", *sets]) == 0
    out = json.loads(capsys.readouterr().out)
    k_lin = 1.5 * 1e9 * math.sqrt(ref.hertz(M_EFF, 1e9, 1.0)["max_penetration"])
    assert out["dt_critical"] == pytest.approx(2.0 / math.sqrt(k_lin / M_EFF), rel=16 * EPS)
    assert main([*base, "--mechanism", "slider_crank_flexible"]) == 0
    assert json.loads(capsys.readouterr().out)["governing_mode"] == "beam"
    assert main([*base, "--mechanism", "impact_seed003", "--measure"]) == 2


def _bouncing_ball(law, integrator, rtol=1e-11, dt=1e-6):
    """A ball (1 kg, radius 10 mm) dropped from 50 mm onto a ground disc under gravity (g =
    9.81, K = 1e9, ce = 0.8): the approach speeds recorded at its first four onsets and the
    run."""
    m, g, k_h, ce, h = 1.0, 9.81, 1.0e9, 0.8, 0.05
    s = System(g=g)
    ball = s.add(PointMass("ball", mass=m, position=(0.0, 0.01 + h)))
    s.add(
        CircleContact(
            "floor",
            p=ground(0.0, -1.0),
            q=ball.point(),
            r_p=1.0,
            r_q=0.01,
            law=contact_law({"law": law, "K": k_h, "restitution": ce}, "contact"),
        )
    )
    s.finalize()
    res = integrate(
        s,
        IntegratorSettings(
            integrator, t_end=0.55, sample_dt=1e-4, dt=dt, rtol=rtol, atol=1e-3 * rtol
        ),
    )
    fs = res.force_state[:, 0]
    onsets = np.flatnonzero(np.diff(fs[:, core.S_IMPACTS])) + 1
    return fs[onsets, core.S_V0], res


@pytest.mark.parametrize(
    "law, integrator",
    [
        ("lankarani-nikravesh", "adaptive"),
        ("flores", "adaptive"),
        ("hunt-crossley", "adaptive"),
        ("lankarani-nikravesh", "generalized-alpha"),
    ],
)
def test_ball_bouncing_on_the_ground_restarts_each_impact(law, integrator):
    """Each impact records its own approach speed v0, and the ratio of successive approach
    speeds (the separation speed of the previous impact: the flight conserves energy) equals the
    restitution of the independent integration with that v0 and the weight pressing during the
    contact. Also checks the free flight's long adaptive steps do not jump into a contact.

    First approach speed vs sqrt(2 g h), bounds by source:
    adaptive: the free fall is a quadratic in t, which DOP853 and its dense output reproduce
    exactly, so only round-off enters (8 eps per step on the speed) plus the located onset time
    (within events.time_tolerance of the step: its speed error is g times that, and the gap's
    round-off 4 eps y / v shifts the root). Measured 2.0e-15 relative (3.1e-9 before contacts
    were events: the stages past the onset felt the contact force).
    generalized-alpha (dt = 1 us, no onset location): v0 is booked at the end of the first step
    that penetrates, up to one step late: g dt, plus the contact impulse in that step, at most
    K (v dt)^n dt / m. Measured 4.8e-6 (bound 1.0e-5).

    Ratios: the run's error estimated from a refined run (adaptive: rtol / 100, kappa = 10;
    generalized-alpha: dt / 2, kappa = 4, second order in the contact) plus the reference's own
    (references.impact error), times SAFETY; generalized-alpha adds the booking of both speeds up
    to a step late (the first speed's bound for each, relative to the ratio: it is not
    systematic in dt, so the refined run does not estimate it). Measured error / bound: adaptive
    0.29-0.43, generalized-alpha below 0.1."""
    from ancf_beam.mbs.events import time_tolerance

    m, g, k_h, ce, h = 1.0, 9.81, 1.0e9, 0.8, 0.05
    v0, res = _bouncing_ball(law, integrator)
    assert len(v0) == 4
    v_exact = math.sqrt(2 * g * h)
    if integrator == "adaptive":
        t_fall = v_exact / g
        bound = (
            8 * EPS * res.steps * v_exact
            + g * time_tolerance(0.0, t_fall)
            + g * 4 * EPS * (0.01 + h) / v_exact
        )
        fine, _ = _bouncing_ball(law, integrator, rtol=1e-13)
        kappa, late, step_tol = 10.0, 0.0, 1e-11  # rtol: the error one step admits
    else:
        dt = 1e-6
        bound = g * dt + k_h * (v_exact * dt) ** 1.5 * dt / m
        fine, _ = _bouncing_ball(law, integrator, dt=dt / 2)
        kappa, late, step_tol = 4.0, bound, 0.0
    err = abs(v0[0] - v_exact)
    print(
        f"\n{law}, {integrator}: first v0 error {err:.2e} m/s, bound {bound:.2e} "
        f"({err / bound:.2f})"
    )
    assert err <= bound
    for k in range(3):
        e = ref.integrate_impact(law, m, v0[k], K=k_h, restitution=ce, push=m * g, error=True)
        ratio, ratio_fine = v0[k + 1] / v0[k], fine[k + 1] / fine[k]
        est = abs(ratio - ratio_fine) * kappa / (kappa - 1.0) + step_tol * ratio
        bound = (
            SAFETY * (est + e["error"]["restitution"])
            + 8 * EPS * res.steps
            + late * (1.0 / v0[k] + 1.0 / v0[k + 1]) * ratio
        )
        err = abs(ratio - e["restitution"])
        print(f"  ratio {k + 1}: error {err:.2e}, bound {bound:.2e} ({err / bound:.2f})")
        assert err <= bound


# the DOP853 step in which the normal force ends in the contact_laws study's hunt-crossley,
# ce = 0.9 run (impact_seed003's masses and approach speed, K = 1e10), recorded from the run
# that stopped there: brentq(xtol=1e-300, rtol=1e-15) on the force's sign did not converge in
# 100 iterations. Dense output of scipy's DOP853: t_old, t, y_old, F (its 7 x 8 coefficients)
END_STEP = (
    0.0003494353268106686,
    0.0003498135637611495,
    [
        0.00013995223042453112,
        0.0,
        0.02013965539759077,
        0.0,
        -0.1454093535956195,
        0.0,
        0.7636062357304138,
        0.0,
    ],
    [
        [
            -5.499921646473396e-08,
            0.0,
            2.8882411129763086e-07,
            0.0,
            -9.101907472164328e-08,
            0.0,
            6.067938318476962e-08,
            0.0,
        ],
        [
            2.5989324130752313e-14,
            0.0,
            -1.7326739844697187e-14,
            0.0,
            -1.731235362812645e-07,
            0.0,
            1.15415690817169e-07,
            0.0,
        ],
        [
            -1.7551871011212234e-14,
            0.0,
            1.1702294855866113e-14,
            0.0,
            8.210446155962123e-08,
            0.0,
            -5.4736307632399374e-08,
            0.0,
        ],
        [
            -6.640242814430276e-15,
            0.0,
            4.426828411729261e-15,
            0.0,
            -2.8290650119346247e-08,
            0.0,
            1.886043341289718e-08,
            0.0,
        ],
        [
            -1.1521577630688488e-15,
            0.0,
            7.68080568504418e-16,
            0.0,
            -5.437961313552748e-09,
            0.0,
            3.625307542371628e-09,
            0.0,
        ],
        [
            1.6449163966796016e-15,
            0.0,
            -1.0966060342870372e-15,
            0.0,
            1.9078518864525475e-08,
            0.0,
            -1.2719012576347527e-08,
            0.0,
        ],
        [
            -4.8904436916660024e-15,
            0.0,
            3.260308068543413e-15,
            0.0,
            -8.202594879312988e-08,
            0.0,
            5.4683965862092426e-08,
            0.0,
        ],
    ],
)
HC_09 = {
    "contact.law": "hunt-crossley",
    "contact.K": 1e10,
    "contact.exponent": 1.5,
    "contact.k": None,
    "contact.c": None,
    "contact.zeta": None,
    "contact.restitution": 0.9,
}


def test_force_end_located_where_brentq_did_not_converge():
    """The located end of the force: positive just before, not after, the two within the
    time tolerance of the step (events.time_tolerance: 1e-12 of the step plus 4 ulps of t)."""
    from scipy.integrate._ivp.rk import Dop853DenseOutput

    from ancf_beam.mbs.adaptive import contact_fn, locate_force_end
    from ancf_beam.mbs.events import time_tolerance
    from ancf_beam.mbs.mechanisms import build_mechanism

    spec = resolve_mechanism(load_config(CONFIG), "impact_seed003").with_overrides(HC_09)
    system = build_mechanism(spec).system
    system.fst[0] = (1.0, 1.0, 1.0, 0.0)  # in contact since t = 0 at v0 = 1 m/s
    t0, t1, y_old, coef = END_STEP
    dense = Dop853DenseOutput(t0, t1, np.array(y_old), np.array(coef))
    n = system.n
    t_end = locate_force_end(system, dense, t0, t1, 0, n)
    tol = time_tolerance(t0, t1)
    assert t0 < t_end < t1
    assert contact_fn(system, dense(t_end), n, 0) <= 0.0
    assert contact_fn(system, dense(t_end - tol), n, 0) > 0.0


def test_contact_laws_study_runs_hunt_crossley_ce_09():
    """The contact_laws study's run that crashed (README's main command, config.yaml): it ends
    and its checks pass."""
    from ancf_beam.studies.mechanisms import contact_laws_checks, run_contact_laws

    spec = resolve_mechanism(load_config(CONFIG), "impact_seed003")
    ds = run_contact_laws(spec, ["hunt-crossley"], [0.9], K=1e10, exponent=1.5)
    rows = contact_laws_checks(ds)
    assert rows and all(r["status"] == "PASS" for r in rows), rows


@pytest.mark.parametrize("integrator", ["generalized-alpha", "newmark"])
def test_implicit_steps_converge_in_free_flight_without_gravity(integrator):
    """After the bodies separate (g = 0) every force is zero, and a residual test relative to
    the step's forces alone asked Newton for less than round-off: the generalized-alpha run
    at 10 us steps stopped at t = 1.08 ms, residual 8.9e-16 N. The residual floor is now a few
    eps x the largest force scale of the step (the predictor's inertial force).

    The run completes within the pipeline's bounds, and total momentum is conserved: the
    contact force and its tangent act equal and opposite, so each Newton correction leaves
    the sum of the residual's components at round-off whatever the tolerance. Bound: 8 eps
    per step x the momentum scale sum m_i |v_i| (measured about 2e-15 N s of 2 N s)."""
    spec = _spec({"law": "kelvin-voigt", "k": 1.0e7, "c": 200.0}, sample_dt=1.0e-5, g=0.0)
    summary, ds, _ = _checked(spec, integrator)
    assert summary["dt"] == pytest.approx(1.0e-5)
    assert summary["impacts"] == 1 and summary["restitution"] is not None
    m1, m2 = spec.masses
    v1, v2 = ds["v1"].values, ds["v2"].values
    p = m1 * v1 + m2 * v2
    scale = float(np.max(m1 * np.abs(v1) + m2 * np.abs(v2)))
    bound = 8.0 * EPS * summary["steps"] * scale
    err = float(np.max(np.abs(p - p[0])))
    print(f"{integrator}: momentum error {err:.2e} N s, bound {bound:.2e}")
    assert err <= bound


def test_adaptive_run_starting_in_contact_takes_a_contact_step_first():
    """Touching at t = 0, a 1 g body on a 3 kg one through Hertz K = 1e10 N/m^1.5 (a 20 us
    contact): scipy chose its first step from the forces at the start, zero at delta = 0, and
    took 1.28 ms. Every stage of that step that enters DOP853's solution and error estimate
    lay where the bodies had passed through each other (no force), so the step was accepted
    as free flight: 1.3 mm of penetration at its end, restitution 685, exit 0. The first
    step of a run that starts in contact is now at most the step after a located onset.

    Within the pipeline's bounds: estimate_factor 2 x (the run refined + the reference's
    error) + round-off, against references.impact (for this elastic law the closed-form
    largest penetration (5 m v^2 / 4 K)^(2/5) and force, the quadrature's duration, and the
    independent integration's restitution; measured err/bound 0.25-0.38)."""
    m1, m2, K = 1.0e-3, 3.0, 1.0e10
    spec = _spec({"law": "hertz", "K": K}, bodies={"m1": m1, "m2": m2})
    assert spec.gap == 0.0 and spec.t_end == pytest.approx(2e-3)  # the failing run's
    summary, _, _ = _checked(spec)
    assert summary["impacts"] == 1


def test_onset_search_goes_on_past_a_trial_step_without_a_solution():
    """Kelvin-Voigt's force jumps by c v0 at the onset, so a trial step of the onset search
    that ends just past the onset can have no Newton solution: the iterates cycle across the
    jump (residual 2.8e2 N here, the jump on both bodies). The search failed the run there; it
    now bisects between that trial and the shortest converged step past the onset. Seed 003's
    impact from a 0.1 mm gap at 30 us steps with onset_tol = 1e-12 m: 3 trials fail (the same
    under NUMBA_CPU_NAME=generic), the onset is still located within onset_tol, and the run
    meets the pipeline's bounds (measured error / bound 0.27-0.31, as at the default onset_tol,
    where no trial fails)."""
    spec = _spec(
        {"law": "kelvin-voigt", "k": 1.0e7, "c": 200.0},
        gap=1e-4,
        integrator="generalized-alpha",
        sample_dt=3e-5,
        t_end=4e-3,
        solver={"step_control": True, "dt": 3e-5, "onset_tol": 1e-12},
    )
    summary, ds, _ = _checked(spec)
    assert summary["impacts"] == 1
    assert ds.attrs["solver.onset_trials_failed"] >= 1  # the path is taken
    assert ds.attrs["solver.onsets_at_roundoff"] == 0  # located within onset_tol
