"""Mechanism checks of the pipeline (ancf_beam.studies.mechanisms): they pass on the runs and
fail when the reference describes a slightly different mechanism (the checks can fail)."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.mbs.analysis import refined_run, run_mechanism
from ancf_beam.references.mechanism import slider_crank_inverse_dynamics
from ancf_beam.studies.error_estimates import EPS
from ancf_beam.studies.mechanisms import mechanism_checks, summary_attrs
from test_pipeline import QUICK


@pytest.fixture(scope="module")
def quick_config():
    return load_config(QUICK)


def _run(spec):
    summary, ds = run_mechanism(spec)
    ds.attrs.update(summary_attrs(summary))
    return ds


def test_inverse_dynamics_static_limit():
    """At omega = 0 the drive holds the crank against gravity: tau = g r (m_c / 2 + m_r / 2)
    at theta = 0 (the rod's weight shared equally by its pins, the slider's on the guide)."""
    r, l, mc, mr, ms, g = 0.05, 0.12, 0.3, 0.21, 0.14, 9.81
    out = slider_crank_inverse_dynamics(
        np.zeros(1), r, l, 0.0, m_crank=mc, m_rod=mr, j_rod=2.5e-4, m_slider=ms, g=g
    )
    assert out["torque"][0] == pytest.approx(g * r * (0.5 * mc + 0.5 * mr), rel=1e-14)
    assert out["slider_guide"][0] == pytest.approx(g * (ms + 0.5 * mr), rel=1e-14)
    assert out["pivot"][0] == pytest.approx(g * (mc + 0.5 * mr), rel=1e-14)


def test_slider_crank_checks_pass_and_fail_on_a_different_slider(quick_config):
    """Every check passes within its bound (estimate_factor x the error estimated from the run
    refined, + round-off) and the torque check fails against the inverse dynamics of a slider
    0.1 % heavier (the refined run stays that of the real mechanism)."""
    spec = resolve_mechanism(quick_config, "slider_crank_rigid", {"t_end": 0.006})
    ds = _run(spec)
    fine, kappa = refined_run(spec, ds)
    assert kappa == 10.0
    rows = mechanism_checks(spec, ds, fine=fine)
    assert rows and all(r["status"] == "PASS" for r in rows), rows
    heavier = spec.with_overrides({"slider.mass": spec.slider.mass * 1.001})
    rows = {r["check"]: r["status"] for r in mechanism_checks(heavier, ds, fine=fine)}
    assert rows["drive torque vs Newton-Euler inverse dynamics"] == "FAIL"
    assert rows["slider a vs closed-form kinematics (max error / max |ref|)"] == "PASS"


def test_impact_checks_fail_on_a_different_stiffness(quick_config):
    spec = resolve_mechanism(quick_config, "impact_seed003")
    ds = _run(spec)
    fine, _ = refined_run(spec, ds)
    assert all(r["status"] == "PASS" for r in mechanism_checks(spec, ds, fine=fine))
    stiffer = spec.with_overrides({"contact.k": 1.0001e7})
    rows = mechanism_checks(stiffer, ds, fine=fine)
    assert any(r["status"] == "FAIL" for r in rows if "impact" in r["check"])


def test_clearance_sweep_over_21_revolutions(quick_config):
    """The sweep's long runs (the quick config's rigid clearance case over 21 revolutions, as
    in the default config, here none left out): 21 revolutions of statistics, a Poincare
    point per phase and revolution; each revolution's peak contact force, from samples every
    contact step, matches the integrator's own largest force (booked every step) where it
    occurs, and lies below it elsewhere. A sampled peak of steps of h misses at most
    (omega h)^2 / 8 of a force ~ sin(omega t) (omega the contact frequency, 0.2 % here)."""
    from ancf_beam.mbs.mechanisms import build_mechanism
    from ancf_beam.studies.mechanisms import run_clearance_sweep

    spec = resolve_mechanism(quick_config, "slider_crank_clearance")
    c = spec.clearance.radial_clearance
    ds = run_clearance_sweep(spec, [c], revolutions=21, skip_revolutions=0)
    assert ds.sizes["revolution"] == 21 and list(ds["revolution"].values) == list(range(21))
    assert ds["poincare_ecc_x"].shape == (1, ds.sizes["phase"], 21)
    assert float(ds.attrs["t_end"]) == pytest.approx(21 * 2 * np.pi / spec.omega, rel=1e-15)
    mech = build_mechanism(spec)
    omega_c = float(mech.contact.omega(m_eff=mech.contact_m_eff))
    h = float(spec.solver.dt_contact)
    allow = (omega_c * h) ** 2 / 8
    peaks = ds["rev_peak_force"].values[0]
    f_max = float(ds["max_contact_force"].values[0])
    assert peaks.max() <= f_max * (1 + 8 * EPS)
    assert peaks.max() >= f_max * (1 - allow), (peaks.max(), f_max, allow)
    # the offsets of the section lie within the clearance plus the largest penetration
    ecc = np.hypot(ds["poincare_ecc_x"].values, ds["poincare_ecc_y"].values)
    assert ecc.max() <= c * float(ds["max_eccentricity_ratio"].values[0]) * (1 + 8 * EPS)
