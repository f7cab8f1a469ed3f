"""Nonsmooth clearance and guide contacts in mechanisms against their compliant counterparts.

The clearance slider-crank of config.yaml (5000 rpm, c = 0.5 mm at the wrist pin, e = 0.9, mu
= 0.01) with a steel ANCF rod (the rigid rod's length and mass, 4 elements): the nonsmooth
clearance under Moreau-Jean against the compliant Lankarani-Nikravesh clearance (its Hertz K
from E, nu) as K grows. Independent computations: the compliant runs integrate a different
model (a force law, generalized-alpha at steps of 1/200 of an impact) whose K -> oo limit is
the nonsmooth one.

Bounds.
* Onset: both runs integrate the same smooth motion until the gap closes. The nonsmooth run
  reports the mid-time ``t + h/2`` of the first step whose mid-step gap is closed, so its onset
  lies in ``[t_gap, t_gap + h]``; the compliant onset is the gap closure itself (independent of
  K, within its step of at most 1/200 of an impact). Bound: ``h`` + the compliant step + the
  pre-contact trajectory error of the theta-method (second order; below h at the steps used:
  they resolve the rod's highest mode, h < its explicit stability limit 8.9e-7 s. At h >=
  1.25e-6 s that mode is not resolved and the wrist pin's onset moves by a further 0.6 us).
* First impulse: the nonsmooth first impulse (the impulses of the first run of steps with a
  positive one) is first order in h (Richardson with kappa = 2 over the refined step); the
  compliant force integrated over its first episode converges to it as K grows with ratio
  kappa = f^(1/(n+1)) (n = 1.5: the impact duration shrinks as K^(-1/(n+1)); Richardson over
  the K sequence). Bound: the sum of both estimates (``ancf_beam.studies.error_estimates
  .estimate``: the largest successive difference times kappa / (kappa - 1)).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ancf_beam.config import load_config, resolve_mechanism
from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.studies.error_estimates import estimate
from ancf_beam.studies.mechanisms import summary_attrs
from ancf_beam.studies.nonsmooth import compliant_limit

ROOT = Path(__file__).resolve().parents[1]

#: a steel ANCF rod of the rigid rod's length (0.12 m) and mass (0.21 kg: the square section
#: 14.931 mm, rho 7850)
STEEL_ROD = {
    "model": "ancf",
    "beam": {"length": 0.12, "width": 0.014931, "height": 0.014931},
    "material": {"E0": 2.07e11, "rho": 7850.0},
    "mesh": {"n_elements": 4},
}


@pytest.fixture(scope="module")
def cfg():
    return load_config(ROOT / "config" / "config.yaml")


def _spec(cfg, name, **block):
    b = dict(cfg["mechanisms"][name])
    b.update(block)
    return resolve_mechanism({"mechanisms": {name: b}}, name)


def test_ancf_rod_clearance_nonsmooth_vs_compliant_limit(cfg):
    """Onset and first impulse of the ANCF-rod clearance slider-crank (module docstring)."""
    ns = _spec(cfg, "slider_crank_clearance_nonsmooth", rod=STEEL_ROD)
    comp = _spec(cfg, "slider_crank_clearance", rod=STEEL_ROD)
    assert abs(STEEL_ROD["beam"]["width"] ** 2 * 0.12 * 7850.0 - 0.21) < 1e-4  # the rod's mass
    t_end = 2.5e-4  # past the first impact (at 0.23 ms) and its compliant episode
    hs = (2e-7, 1e-7)
    onset, impulse = [], []
    for h in hs:
        s, ds = run_mechanism(ns.with_overrides({"solver.dt": h, "sample_dt": h}), t_end=t_end)
        # the contact projection's acceptance tolerance + the gap's round-off (64 eps of the
        # positions' scale, the slider's 0.17 m)
        floor = float(ds.attrs["solver.position_tol"]) + 64 * np.finfo(float).eps * 0.17
        assert s["impulses"] >= 1 and s["max_penetration"] <= floor
        onset.append(s["first_contact_time"])
        impulse.append(s["first_impact_impulse"])
    factors = [1e3, 1e4, 1e5]
    ds.attrs.update(summary_attrs(s))  # the run's summary, as its file holds it
    lim = compliant_limit(ns, ds, comp, factors)
    t_c = lim["first_contact_time"].values[:, 0]
    i_c = lim["first_impulse"].values[:, 0]
    dur = lim["impact_duration"].values[:, 0]
    # the compliant onset's resolution: its sample spacing, below its shortest first episode
    # (sampled at 1/200 of the impact duration estimate, so several samples per episode)
    step_c = float(np.min(dur))
    # onset: the mid-step detection bound, shrinking with h
    d_on = [abs(t - t_c[-1]) for t in onset]
    for h, d in zip(hs, d_on, strict=True):
        assert d <= h + step_c, (h, d)
    assert d_on[1] < d_on[0]
    assert np.ptp(t_c) <= step_c  # the compliant onset is the gap closure, whatever K
    # first impulse: compliant -> nonsmooth as K grows, within both Richardson estimates
    kappa_k = (factors[-1] / factors[-2]) ** (1.0 / (1.0 + lim.attrs["exponent"]))
    est_ns = estimate(impulse[0], [impulse[1]], 2.0)
    est_c = estimate(i_c[-1], list(i_c[-2::-1]), kappa_k)
    d_i = np.abs(i_c - impulse[-1])
    assert np.all(np.diff(d_i) < 0), d_i
    assert d_i[-1] <= est_ns + est_c, (d_i, est_ns, est_c)
    print(
        f"onset ns {onset} vs compliant {t_c[-1]:.6e}; first impulse ns {impulse} vs compliant "
        f"{i_c} (|diff| {d_i}, bound {est_ns + est_c:.3g})"
    )


def _guide_nonsmooth(cfg, h):
    """config.yaml's slider_crank_guide_clearance with its guide nonsmooth (e = 0.4, mu = 0.01)
    under Moreau-Jean at fixed steps h, every step a sample."""
    import copy

    b = copy.deepcopy(dict(cfg["mechanisms"]["slider_crank_guide_clearance"]))
    guide = b["joints"]["slider_guide"]["guide"]
    guide["contact"] = {"model": "nonsmooth", "restitution": 0.4, "mu": 0.01}
    guide.pop("friction")
    b["integrator"] = "moreau-jean"
    b["solver"] = {"dt": h, "theta": 0.5, "tol": 1e-10, "max_iter": 500}
    b["sample_dt"] = h
    return resolve_mechanism({"mechanisms": {"g": b}}, "g")


UPPER = ("slider_guide.upper_front", "slider_guide.upper_rear")


def test_guide_clearance_nonsmooth_runs_and_holds(cfg):
    """slider_crank_guide_clearance (a free crank and rod at dead centre, the slider 50 x 25 mm
    in a guide 1 mm wider, its rotation locked) with the guide nonsmooth, dt = 1e-4 s and 5e-5
    s, to its t_end (0.2 s). Bounds:
    * joints, positions: the stepper projects onto Phi = 0 each step; left: its acceptance
      tolerance ``solver.position_tol`` (64 eps of the largest coordinate);
    * joints, velocities: met at the step's mid configuration, so the residual at its end is
      about (h/2) d(Phi_q v)/dt: h/2 times the markers' centripetal accelerations omega^2 r
      summed over the two bodies of a joint, bounded by h times the largest omega^2 r_max of
      a body (r_max: its farthest marker); first order: halves with h (measured 0.50);
    * the slider stays in the guide: |y| <= clearance / 2 + the projection tolerance (the
      contact projection accepts the same penetration) + the gap's round-off."""
    viol = []
    for h in (1e-4, 5e-5):
        spec = _guide_nonsmooth(cfg, h)
        s, ds = run_mechanism(spec)
        assert abs(float(ds["time"].values[-1]) - spec.t_end) <= 1e-12
        tol_q = float(ds.attrs["solver.position_tol"])
        assert s["max_constraint_violation"] <= tol_q, (s["max_constraint_violation"], tol_q)
        t = ds["time"].values
        theta = ds["body_theta"].values  # (time, body)
        omega = np.max(np.abs(np.diff(theta, axis=0)) / np.diff(t)[:, None], axis=0)
        bodies = [str(x) for x in ds["body"].values]
        r_max = {"crank": 0.0765, "rod": 0.153, "slider": 0.0}  # farthest markers (config)
        acc = max(omega[bodies.index(n)] ** 2 * r for n, r in r_max.items())
        assert s["max_velocity_violation"] <= h * acc, (s["max_velocity_violation"], h * acc)
        viol.append(s["max_velocity_violation"])
        y = ds["body_y"].sel(body="slider").values
        half = 0.001 / 2.0
        assert np.max(np.abs(y)) <= half + tol_q + 64 * np.finfo(float).eps * 0.5
        for c, cs in s["contacts"].items():
            assert cs["max_penetration"] <= tol_q, c
            assert cs["solver_max_iter_hit"] == 0, c
        assert all(s["contacts"][c]["impulses"] >= 1 for c in UPPER)
    assert viol[1] <= 0.6 * viol[0], viol  # first order in h
    print("velocity violation at h = 1e-4, 5e-5:", viol)


def test_guide_clearance_first_contact_vs_compliant(cfg):
    """The first contact of the guide's upper corners against the configured compliant case
    (flores, K = 1e10 N/m^1.5, e = 0.4, mu = 0.01) and its K x 10, x 100 (studies.nonsmooth
    .compliant_limit: generalized-alpha at 1/200 of an impact). Onset: within h of the gap
    closure (mid-step detection, module docstring), shrinking with h. The two upper corners
    land together (rotation locked: their impulses' split is not unique), so the impulse is
    compared as their sum: the nonsmooth one within its Richardson estimate over h = 1e-4,
    5e-5, 2.5e-5 (first order, kappa = 2) plus the compliant sequence's over K (kappa =
    10^(1/2.5)) of the compliant sum at K x 100."""
    comp = resolve_mechanism(
        {"mechanisms": {"c": dict(cfg["mechanisms"]["slider_crank_guide_clearance"])}}, "c"
    )
    hs = (1e-4, 5e-5, 2.5e-5)
    onset, impulse = [], []
    for h in hs:
        s, ds = run_mechanism(_guide_nonsmooth(cfg, h), t_end=0.004)  # first contact: 2 ms
        cs = s["contacts"]
        t_on = [cs[c]["first_contact_time"] for c in UPPER]
        assert t_on[0] == t_on[1]
        onset.append(t_on[0])
        impulse.append(sum(cs[c]["first_impact_impulse"] for c in UPPER))
    factors = [1.0, 10.0, 100.0]
    ds.attrs.update(summary_attrs(s))  # the run's summary, as its file holds it
    lim = compliant_limit(_guide_nonsmooth(cfg, hs[-1]), ds, comp, factors)
    t_c = lim["first_contact_time"].sel(contact=list(UPPER)).values
    dur = lim["impact_duration"].sel(contact=list(UPPER)).values
    assert np.ptp(t_c) <= np.min(dur)  # the gap closure, whatever K (sampled below dur)
    d_on = [abs(t - t_c[-1, 0]) for t in onset]
    for h, d in zip(hs, d_on, strict=True):
        assert d <= h + np.min(dur), (h, d)
    assert d_on[2] < d_on[1] < d_on[0]
    i_c = lim["first_impulse"].sel(contact=list(UPPER)).values.sum(axis=1)
    kappa_k = (factors[-1] / factors[-2]) ** (1.0 / (1.0 + lim.attrs["exponent"]))
    est_ns = estimate(impulse[-1], list(impulse[-2::-1]), 2.0)
    est_c = estimate(i_c[-1], list(i_c[-2::-1]), kappa_k)
    assert abs(i_c[-1] - impulse[-1]) <= est_ns + est_c, (i_c, impulse, est_ns, est_c)
    print(
        f"onset ns {onset} vs compliant {t_c[-1, 0]:.6e}; upper impulse sum ns {impulse} vs "
        f"compliant {i_c} (bound {est_ns + est_c:.3g})"
    )
