"""The nonsmooth studies read a run's contact summary from its Dataset's attributes
(:func:`ancf_beam.studies.nonsmooth.first_impulse`, ``_summary_contact``): a field stored as
``'null'`` means the run had no contact there (None, or NaN for an impulse); a Dataset that does
not hold the field (an older file, a Dataset without ``summary_attrs``) is an error naming the
missing attribute, not a silent "no contact" (before: NaN / None, or a TypeError further on)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import xarray as xr

from ancf_beam.studies.mechanisms import summary_attrs
from ancf_beam.studies.nonsmooth import _summary_contact, first_impulse, limit_table

T = np.arange(7.0)  # s


def _nonsmooth(attrs: dict, contacts=("clearance",)) -> xr.Dataset:
    p = np.zeros((len(T), len(contacts)))
    ds = xr.Dataset(
        {"impulse_normal": (("time", "contact"), p)},
        coords={"time": T, "contact": list(contacts)},
    )
    ds.attrs.update(attrs)
    return ds


FIELDS = {
    "first_contact_time": 0.5,
    "max_penetration": 1e-6,
    "impulses": 3,
    "first_impact_impulse": 0.25,
}


def test_built_in_kind_fields_and_null_as_no_contact():
    ds = _nonsmooth(summary_attrs(FIELDS))
    assert first_impulse(ds, "clearance") == 0.25
    assert _summary_contact(ds, "clearance") == FIELDS
    none = {**FIELDS, "first_contact_time": None, "first_impact_impulse": None, "impulses": 0}
    ds = _nonsmooth(summary_attrs(none))
    assert math.isnan(first_impulse(ds, "clearance"))  # documented: NaN without contact
    assert _summary_contact(ds, "clearance")["first_contact_time"] is None


@pytest.mark.parametrize("key", sorted(FIELDS))
def test_a_missing_summary_attribute_is_named(key):
    attrs = summary_attrs({k: v for k, v in FIELDS.items() if k != key})
    ds = _nonsmooth(attrs)
    with pytest.raises(ValueError, match=f"no attribute 'summary.{key}'"):
        _summary_contact(ds, "clearance")
    if key == "first_impact_impulse":
        with pytest.raises(ValueError, match="summary.first_impact_impulse"):
            first_impulse(ds, "clearance")
    else:  # the impulse needs only its own field
        assert first_impulse(ds, "clearance") == 0.25


def test_no_summary_at_all():
    with pytest.raises(ValueError, match="summary.first_impact_impulse.*rerun the case"):
        first_impulse(_nonsmooth({}), "clearance")


def test_general_mechanism_contacts_entry():
    contacts = {"upper": FIELDS, "lower": {**FIELDS, "first_impact_impulse": None}}
    ds = _nonsmooth({"summary.contacts": json.dumps(contacts)}, ("upper", "lower"))
    assert first_impulse(ds, "upper") == 0.25
    assert math.isnan(first_impulse(ds, "lower"))
    with pytest.raises(ValueError, match=r"'summary.contacts' has no contact 'side'"):
        first_impulse(ds, "side")
    partial = {"upper": {k: v for k, v in FIELDS.items() if k != "max_penetration"}}
    ds = _nonsmooth({"summary.contacts": json.dumps(partial)}, ("upper",))
    with pytest.raises(ValueError, match=r"'summary.contacts' entry 'upper' 'max_penetration'"):
        _summary_contact(ds, "upper")


def test_compliant_run_impulse_and_missing_variables():
    """The force integrated over the first episode, the zero crossings at both ends included:
    a triangle of base 4 s and height 2 N is 4 N s (the trapezoidal rule is exact on it)."""
    f = np.array([0.0, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0])[:, None]
    ds = xr.Dataset(
        {"contact_force_normal": (("time", "contact"), f)},
        coords={"time": T, "contact": ["c"]},
    )
    assert first_impulse(ds, "c") == 4.0
    assert math.isnan(first_impulse(ds.copy(data={"contact_force_normal": 0.0 * f}), "c"))
    with pytest.raises(ValueError, match="no contact 'd'"):
        first_impulse(ds, "d")
    with pytest.raises(ValueError, match="'contact_force_normal'"):
        first_impulse(ds.drop_vars("contact_force_normal"), "c")


def test_limit_table_without_any_impact_says_so():
    none = {**FIELDS, "first_contact_time": None, "first_impact_impulse": None}
    run = _nonsmooth(summary_attrs(none))
    validation = xr.Dataset(coords={"limit_contact": ["clearance"]})
    with pytest.raises(ValueError, match=r"no contact of the run \(clearance\) had an impact"):
        limit_table(run, validation)
