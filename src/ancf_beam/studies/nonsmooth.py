"""Nonsmooth vs compliant contact: a mechanism case with nonsmooth contacts (``model:
nonsmooth``, integrator ``moreau-jean``) against its compliant counterpart (a case of the same
mechanism with a compliant law of the same restitution and friction) as the contact stiffness
``K`` grows.

As ``K -> oo`` a compliant impact shrinks to an instant (a Hertz-type impact lasts ``tau ~
K^(-1/(n+1))``): its onset is the nonsmooth onset (both are the instant the gap closes: before
it the two runs integrate the same smooth motion) and the force it integrates over the impact,
``I = int F_n dt``, tends to the nonsmooth impulse ``P_n`` (the impact's change of momentum;
the smooth forces acting during the impact add ``O(F tau)``). The compliant sequence at ``K_0
f_i`` (``K_0``: the counterpart's stiffness, ``f_i``: ``K_factors``) shows that convergence;
its error at the largest ``K`` is estimated by Richardson on the sequence with the ratio
``kappa = f^(1/(n+1))`` by which ``tau`` and the ``O(F tau)`` term shrink per factor ``f``
(:func:`ancf_beam.studies.error_estimates.estimate`: the largest successive difference times
``kappa / (kappa - 1)``, which covers a rate not yet asymptotic).

Checks (:func:`nonsmooth_rows`), each bounded by ``estimate_factor`` times (the nonsmooth run's
error estimated from its refined runs, ``dt`` halved, first order: ``kappa = 2``, plus the
compliant limit's estimate above) plus round-off:

* the first contact's onset time against the compliant one at the largest ``K``;
* its first impulse against the compliant force integrated over the first episode;
* the largest penetration of every nonsmooth contact (the journal's eccentricity beyond the
  clearance, a corner beyond its guide line) against 0: a unilateral constraint at velocity
  level drifts by ``O(dt)`` per step in contact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam.errors import ConfigError
from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.specs import MechanismSpec
from ancf_beam.studies.error_estimates import EPS, est_check, estimate, roundoff

__all__ = [
    "IMPACT_SAMPLES",
    "LIMIT_PREFIX",
    "is_nonsmooth_row",
    "compliant_limit",
    "contact_laws_of",
    "first_impulse",
    "first_episode",
    "limit_table",
    "nonsmooth_rows",
]

#: the name prefix of the rows of :func:`nonsmooth_rows` (the nonsmooth report shows them, the
#: mechanisms report the others: every check once)
LIMIT_PREFIX = "nonsmooth: "


def is_nonsmooth_row(row: dict[str, Any]) -> bool:
    """A row of :func:`nonsmooth_rows` (by its name)."""
    return str(row["check"]).startswith(LIMIT_PREFIX)


#: samples per compliant impact duration at the largest K (the trapezoidal integral of the
#: force over the impact: relative error ~ 1 / IMPACT_SAMPLES^2 for a smooth pulse)
IMPACT_SAMPLES = 200


def contact_laws_of(spec: MechanismSpec) -> dict[str, Any]:
    """Contact name -> :class:`~ancf_beam.mbs.laws.ContactSpec` of a mechanism (the
    preset's expansion for the built-in kinds)."""
    from ancf_beam.mbs.presets import expand

    return dict(expand(spec).laws)


def _check_counterpart(ns: MechanismSpec, comp: MechanismSpec) -> dict[str, tuple]:
    """Contact name -> (nonsmooth law, compliant ContactSpec); the counterpart must have the
    same contacts, compliant, with the same restitution and friction coefficient."""
    ns_laws, c_laws = contact_laws_of(ns), contact_laws_of(comp)
    out = {}
    for name, law in ns_laws.items():
        if not law.nonsmooth:
            continue
        c = c_laws.get(name)
        where = f"mechanisms.{comp.name}.{law.key}"
        if c is None or c.nonsmooth:
            raise ConfigError(
                f"config key '{where}' is not a compliant contact: the compliant counterpart of "
                f"'mechanisms.{ns.name}' needs one for each of its nonsmooth contacts"
            )
        mu = 0.0 if c.friction is None else c.friction.mu
        e_c = 1.0 if c.law.restitution is None else c.law.restitution
        if not (math.isclose(e_c, law.law.restitution) and math.isclose(mu, law.law.mu)):
            raise ConfigError(
                f"config key '{where}' (restitution {e_c!r}, mu {mu!r}) does not match "
                f"'mechanisms.{ns.name}.{law.key}' (restitution {law.law.restitution!r}, mu "
                f"{law.law.mu!r}): the compliant counterpart needs the same impact law"
            )
        out[name] = (law, c)
    return out


def first_episode(t: np.ndarray, active: np.ndarray) -> slice | None:
    """The samples of the first run of ``active`` samples (None when there is none)."""
    idx = np.flatnonzero(active)
    if not len(idx):
        return None
    start = idx[0]
    gaps = np.flatnonzero(~active[start:])
    stop = start + (gaps[0] if len(gaps) else len(active) - start)
    return slice(start, stop)


def first_impulse(ds: xr.Dataset, contact: str) -> float:
    """The normal impulse of a run's first impact at ``contact`` (N s): a nonsmooth run's
    ``first_impact_impulse`` (its summary: the impulses summed over the first run of samples
    with a positive one, every step's when ``sample_dt`` equals ``dt``), a compliant run's
    normal force integrated over its first episode (trapezoidal rule on the samples, the
    zero crossings at both ends included); NaN when the run had no impact there. A Dataset
    without what it needs (the summary attribute of a nonsmooth run, :func:`_summary_contact`;
    the variable ``contact_force_normal`` or the contact itself) raises :class:`ValueError`
    naming it."""
    t = ds["time"].values
    if "impulse_normal" in ds:  # from all its samples (a refined run's Dataset is thinned)
        p = _contact_field(ds, contact, "first_impact_impulse")
        return math.nan if p is None else float(p)
    if "contact_force_normal" not in ds:
        raise ValueError(
            "the run's Dataset has neither 'impulse_normal' (a nonsmooth run) nor "
            "'contact_force_normal' (a compliant one): it holds no contact forces"
        )
    if contact not in _nonsmooth_names(ds):
        raise ValueError(
            f"the run's Dataset has no contact {contact!r} (coordinate 'contact': "
            f"{_nonsmooth_names(ds)})"
        )
    f = ds["contact_force_normal"].sel(contact=contact).values
    sl = first_episode(t, f > 0.0)
    if sl is None:
        return math.nan
    lo, hi = max(sl.start - 1, 0), min(sl.stop + 1, len(t))
    return float(np.trapezoid(np.clip(f[lo:hi], 0.0, None), t[lo:hi]))


def _impact_duration(comp: MechanismSpec) -> float | None:
    """``pi / omega`` (s) of the stiffest contact of ``comp`` (a linear contact's duration at
    the frequency estimate of :meth:`~ancf_beam.mbs.forces.Contact.omega`); None when it cannot
    be estimated."""
    from ancf_beam.mbs.mechanisms import build_mechanism

    mech = build_mechanism(comp)
    omegas = [w for fe in mech.system.contact_forces.values() if (w := fe.omega()) is not None]
    return math.pi / max(omegas) if omegas else None


def _compliant_run(comp: MechanismSpec, law, K: float, t_end: float):
    """The compliant counterpart at stiffness ``K`` up to ``t_end``, sampled (and stepped)
    finely enough to integrate its first impact: IMPACT_SAMPLES samples per impact duration
    estimate. Returns the summary, the Dataset and the duration estimate."""
    stiff = comp.with_overrides({f"{law.key}.K": K})
    tau = _impact_duration(stiff)
    if tau is None:
        raise ConfigError(
            f"mechanisms.{comp.name}: the duration of its impacts cannot be estimated (no "
            "reduced mass or impact speed), so its force cannot be sampled over an impact"
        )
    sample = min(comp.sample_dt, tau / IMPACT_SAMPLES)
    over = {f"{law.key}.K": K, "sample_dt": sample, "solver.dt": sample}
    summary, ds = run_mechanism(comp.with_overrides(over), t_end=t_end)
    return summary, ds, tau


def compliant_limit(
    ns: MechanismSpec,
    ns_ds: xr.Dataset,
    comp: MechanismSpec,
    K_factors: list[float],
) -> xr.Dataset:
    """The compliant counterpart ``comp`` of the nonsmooth case ``ns`` (run ``ns_ds``) at ``K =
    K_0 f`` for each factor ``f`` of ``K_factors`` (rising), each run up to a little past the
    nonsmooth run's first impact. Per factor (dimension ``K``) and nonsmooth contact (dimension
    ``contact``): ``K`` (the stiffness), ``first_contact_time`` (s), ``first_impulse`` (N s),
    ``impact_duration`` (s, the first episode's length) and the force history of the first
    impact (``force``, ``force_time``: the samples of the run at the largest K around the first
    impact); attributes: the Richardson ratio ``kappa`` and the contacts' law."""
    pairs = _check_counterpart(ns, comp)
    if sorted(K_factors) != list(K_factors) or len(K_factors) < 2:
        raise ConfigError(
            f"config key 'pipeline.nonsmooth.K_factors' = {K_factors!r} is invalid: expected "
            "at least two rising factors"
        )
    contacts = _nonsmooth_names(ns_ds)
    onsets = [_contact_field(ns_ds, c, "first_contact_time") for c in contacts]
    onsets = [t for t in onsets if t is not None]
    t_first = min(onsets) if onsets else float(ns_ds["time"].values[-1])
    law0, c0 = next(iter(pairs.values()))
    cols: dict[str, list] = {"K": [], "first_contact_time": [], "first_impulse": []}
    cols["impact_duration"] = []
    hist = None
    tau0 = _impact_duration(comp) or 0.0
    dt_ns = float(ns_ds.attrs["dt"])
    # past the first impact: its onset (the compliant one within a step or two of the
    # nonsmooth one), then ten impact durations at the smallest K
    t_end = min(float(ns_ds["time"].values[-1]), t_first + 10.0 * (tau0 + dt_ns))
    for f in K_factors:
        K = c0.law.stiffness * f
        summary, ds, _ = _compliant_run(comp, law0, K, t_end)
        cols["K"].append(K)
        row_t, row_i, row_d, h = _limit_row(summary, ds, contacts, f == K_factors[-1])
        hist = h if hist is None else hist
        cols["first_contact_time"].append(row_t)
        cols["first_impulse"].append(row_i)
        cols["impact_duration"].append(row_d)
    return _limit_dataset(cols, K_factors, contacts, hist, comp, c0)


def _limit_row(summary: dict, ds: xr.Dataset, contacts: list[str], last: bool) -> tuple:
    """Per contact of one compliant run (``summary``, ``ds``): the first contact time, the
    first impulse and the first episode's duration (NaN without contact), and, on the ``last``
    run, the force history around the first impact of the first contact that has one (None
    otherwise)."""
    row_t, row_i, row_d = [], [], []
    hist = None
    for c in contacts:
        cs = _contact_summary(summary, c)
        row_t.append(np.nan if cs.get("first_contact_time") is None else cs["first_contact_time"])
        row_i.append(first_impulse(ds, c) if c in ds["contact"].values else np.nan)
        f_n = (
            ds["contact_force_normal"].sel(contact=c).values if c in ds["contact"].values else None
        )
        sl = None if f_n is None else first_episode(ds["time"].values, f_n > 0.0)
        t = ds["time"].values
        row_d.append(np.nan if sl is None else float(t[sl.stop - 1] - t[sl.start]))
        if last and sl is not None and hist is None:
            lo, hi = max(sl.start - 5, 0), min(sl.stop + 5, len(t))
            hist = (t[lo:hi], f_n[lo:hi], c)
    return row_t, row_i, row_d, hist


def _limit_dataset(cols: dict, K_factors: list[float], contacts: list[str], hist, comp, c0):
    """The Dataset of :func:`compliant_limit` from its columns (``cols``), the force history
    ``hist`` (or None), the counterpart ``comp`` and its contact law ``c0``."""
    out = xr.Dataset(
        {
            "K_value": ("K", np.array(cols["K"]), {"units": "N/m^n", "long_name": "stiffness"}),
            "first_contact_time": (("K", "contact"), np.array(cols["first_contact_time"], float)),
            "first_impulse": (("K", "contact"), np.array(cols["first_impulse"], float)),
            "impact_duration": (("K", "contact"), np.array(cols["impact_duration"], float)),
        },
        coords={"K": ("K", np.asarray(K_factors, float)), "contact": ("contact", contacts)},
    )
    out["first_contact_time"].attrs["units"] = "s"
    out["first_impulse"].attrs.update(units="N s", long_name="force integrated over the impact")
    out["impact_duration"].attrs["units"] = "s"
    if hist is not None:
        out = out.assign_coords(force_time=("force_time", hist[0], {"units": "s"}))
        out["force"] = ("force_time", hist[1], {"units": "N", "long_name": f"F_n at {hist[2]}"})
    n_exp = c0.law.exponent
    ratio = K_factors[-1] / K_factors[-2]
    out.attrs.update(
        kappa=float(ratio ** (1.0 / (n_exp + 1.0))),
        compliant_case=comp.name,
        compliant_law=c0.law.law,
        exponent=float(n_exp),
        K0=float(c0.law.stiffness),
    )
    return out


def _nonsmooth_names(ds: xr.Dataset) -> list[str]:
    return [str(c) for c in ds["contact"].values] if "contact" in ds.coords else []


#: the summary fields of a nonsmooth contact the checks read (:func:`_summary_contact`)
_CONTACT_FIELDS = ("first_contact_time", "max_penetration", "impulses", "first_impact_impulse")


def _summary_contact(
    ds: xr.Dataset, contact: str, keys: tuple[str, ...] = _CONTACT_FIELDS
) -> dict[str, Any]:
    """The summary fields ``keys`` of nonsmooth contact ``contact`` stored with its run's
    Dataset (:func:`ancf_beam.studies.mechanisms.summary_attrs`): a general mechanism's
    attribute ``summary.contacts`` (JSON, one entry per contact), a built-in kind's top-level
    ``summary.KEY`` (its one contact). A field is None where the run had no contact there
    (``first_contact_time``, ``first_impact_impulse``: ``'null'``). A Dataset that does not
    hold a field (a file written before the summary was stored with the run, a Dataset straight
    from :func:`~ancf_beam.mbs.analysis.run_mechanism`) or whose ``summary.contacts`` lacks the
    contact raises :class:`ValueError` naming the missing attribute."""
    from ancf_beam.studies.checks import run_summary

    missing = object()
    contacts = run_summary(ds, "contacts")
    if isinstance(contacts, dict):
        if contact not in contacts:
            raise ValueError(
                f"the run's Dataset attribute 'summary.contacts' has no contact {contact!r} "
                f"(it has {sorted(contacts)})"
            )
        cs, where = contacts[contact], f"'summary.contacts' entry {contact!r}"
    else:
        cs = {k: run_summary(ds, k, missing) for k in keys}
        where = "attribute"
    for k in keys:
        if cs.get(k, missing) is missing:
            name = k if isinstance(contacts, dict) else f"summary.{k}"
            raise ValueError(
                f"the run's Dataset has no {where} '{name}' (the summary of contact "
                f"{contact!r}): it was not written with the run's summary (an older file, or a "
                "Dataset without summary_attrs); rerun the case"
            )
    return {k: cs[k] for k in keys}


def _contact_field(ds: xr.Dataset, contact: str, key: str) -> Any:
    """Summary field ``key`` of ``contact`` (:func:`_summary_contact`: None without contact,
    an error naming the attribute when the Dataset does not hold it)."""
    return _summary_contact(ds, contact, (key,))[key]


def _contact_summary(summary: dict[str, Any], contact: str) -> dict[str, Any]:
    contacts = summary.get("contacts")
    if isinstance(contacts, dict) and contact in contacts:
        return contacts[contact]
    return summary


def nonsmooth_rows(
    spec: MechanismSpec,
    ds: xr.Dataset,
    fine: list[xr.Dataset],
    limit: xr.Dataset,
    S: float,
) -> list[dict[str, Any]]:
    """The checks of a nonsmooth case against its compliant limit (module docstring): ``ds``
    the run, ``fine`` its refined runs (finest last), ``limit`` :func:`compliant_limit`."""
    kappa = float(fine[0].attrs["kappa"])
    k_lim = float(limit.attrs["kappa"])
    floor = roundoff(ds)
    rows = []
    contacts = _nonsmooth_names(ds)
    first = [(c, _contact_field(ds, c, "first_contact_time")) for c in contacts]
    first = [(c, t) for c, t in first if t is not None]
    if first:
        c, t_ns = min(first, key=lambda x: x[1])
        t_fine = [_contact_field(f, c, "first_contact_time") for f in fine]
        est_ns = estimate(t_ns, t_fine, kappa)
        seq = limit["first_contact_time"].sel(contact=c).values
        name = f"first contact time vs compliant at K = {limit['K_value'].values[-1]:.3g} (s)"
        rows.append(_limit_check(spec, c, name, seq, float(t_ns), est_ns, kappa, k_lim, S, floor))
        p_ns = first_impulse(ds, c)
        p_fine = [first_impulse(f, c) for f in fine]
        est_p = estimate(p_ns, p_fine, kappa)
        iseq = limit["first_impulse"].sel(contact=c).values
        name = "first impulse vs compliant force integrated over the impact (N s)"
        rows.append(
            _limit_check(spec, c, name, iseq, p_ns, est_p, kappa, k_lim, S, floor, " over K")
        )
    for c in contacts:
        d = float(_contact_field(ds, c, "max_penetration"))
        d_fine = [float(_contact_field(f, c, "max_penetration")) for f in fine]
        est = estimate(d, d_fine, kappa)
        rows.append(
            est_check(
                f"{LIMIT_PREFIX}{c} largest penetration (drift of the unilateral constraint, m)",
                0.0,
                d,
                est,
                _penetration_floor(ds),
                S,
                spec.name,
                f"0 for the exact solution; bound {S:g} x estimate from the refined runs (kappa "
                f"{kappa:g}: first order) + the contact projection's acceptance tolerance "
                "(64 eps of the largest coordinate, a driven angle included) + the gap's "
                "round-off",
            )
        )
    return rows


def _limit_check(spec, c, name, seq, x_ns, est_ns, kappa, k_lim, S, floor, over=""):
    """The check of a nonsmooth value ``x_ns`` at contact ``c`` (its estimate ``est_ns`` from
    the refined runs) against the last of the compliant sequence ``seq`` (its Richardson
    estimate over the stiffness, ratio ``k_lim``), plus round-off ``floor * |x_ns|``."""
    est_c = _richardson(seq, k_lim)
    return est_check(
        f"{LIMIT_PREFIX}{c} {name}",
        float(seq[-1]),
        x_ns,
        est_ns + est_c,
        floor * abs(x_ns),
        S,
        spec.name,
        f"bound {S:g} x (estimate from the refined runs, kappa {kappa:g}: {est_ns:.2g} "
        f"+ the compliant sequence's Richardson estimate{over}, kappa {k_lim:.3g}: "
        f"{est_c:.2g}) + round-off",
    )


def _richardson(seq: np.ndarray, kappa: float) -> float:
    """Richardson estimate of the last value of a sequence converging with ratio ``kappa``
    per level: ``kappa / (kappa - 1)`` times the largest successive difference."""
    seq = np.asarray(seq, float)
    if len(seq) < 2 or not np.all(np.isfinite(seq)):
        return math.inf
    return estimate(seq[-1], list(seq[-2::-1]), kappa)


def _penetration_floor(ds: xr.Dataset) -> float:
    """What the Moreau-Jean stepper leaves by construction: its contact projection accepts a
    penetration up to ``solver.position_tol`` (64 eps of the largest coordinate of the run,
    a driven crank angle included), plus the round-off of evaluating a gap (64 eps of the
    positions' scale)."""
    return float(ds.attrs.get("solver.position_tol", 0.0)) + 64.0 * EPS * _length(ds)


def _length(ds: xr.Dataset) -> float:
    if "marker_x" in ds:
        return max(1e-3, float(np.max(np.abs(ds["marker_x"].values[0]))))
    return 1.0


def limit_table(run: xr.Dataset, validation: xr.Dataset) -> dict[str, np.ndarray]:
    """For the report: per K of a nonsmooth case's compliant sequence (the ``limit_``
    variables of its validation, :func:`compliant_limit`), at the first impacting contact:
    ``K`` (N/m^n), ``factor``, ``impulse`` (N s, the compliant force integrated over the first
    impact), ``impulse_error`` (its difference from the nonsmooth first impulse), ``onset``
    (s), ``duration`` (s); and ``nonsmooth_impulse``, ``nonsmooth_onset``, ``contact``."""
    contacts = [str(c) for c in validation["limit_contact"].values]
    onsets = {c: _contact_field(run, c, "first_contact_time") for c in contacts}
    hit = [c for c in contacts if onsets[c] is not None]
    if not hit:
        raise ValueError(f"no contact of the run ({', '.join(contacts)}) had an impact")
    c = min(hit, key=lambda c: onsets[c])
    imp = validation["limit_first_impulse"].sel(limit_contact=c).values
    p_ns = first_impulse(run, c)
    return {
        "contact": c,
        "K": validation["limit_K_value"].values,
        "factor": validation["limit_K"].values,
        "impulse": imp,
        "impulse_error": imp - p_ns,
        "onset": validation["limit_first_contact_time"].sel(limit_contact=c).values,
        "duration": validation["limit_impact_duration"].sel(limit_contact=c).values,
        "nonsmooth_impulse": p_ns,
        "nonsmooth_onset": float(onsets[c]),
    }
