"""Non-finite results are never written: an error naming the quantity, exit 1, no file.

The plausibility bounds of the config now refuse the inputs that used to give NaN fields
(``beam.length=1e-300``), and the time loops stop on a non-finite state themselves, so these
tests inject the NaN into what a solver returns: the guard must hold whatever the cause."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import xarray as xr

import ancf_beam.analyses as analyses
from ancf_beam.cli import EXIT_FAILURE, main
from ancf_beam.io import check_finite
from ancf_beam.results import NonFiniteResultError

SMALL = ["--set", "mesh.n_elements=4"]


def test_check_finite_names_the_quantity_and_skips_optional_ones():
    ds = xr.Dataset({"tip": ("t", [0.0, 1.0]), "omega": ("mode", [1.0, np.inf])})
    check_finite({"a": 1.0, "b": [1, 2], "c": "text", "d": None, "e": True})
    with pytest.raises(NonFiniteResultError, match="'b'"):
        check_finite({"a": 1.0, "b": [1.0, np.nan]})
    with pytest.raises(NonFiniteResultError, match="'omega'"):
        check_finite({"a": 1.0}, ds)
    check_finite({"dt_measured": np.nan}, ds.drop_vars("omega"), optional=["dt_measured"])


def test_static_nan_tip_exits_1_and_writes_nothing(monkeypatch, tmp_path, capsys):
    real = analyses.solve_static

    def broken(model, *a, **k):
        res = real(model, *a, **k)
        res.q = res.q.copy()
        res.q[-3] = np.nan
        return dataclasses.replace(res, tip_y=float("nan"))

    monkeypatch.setattr(analyses, "solve_static", broken)
    out = tmp_path / "s.nc"
    code = main(["static", "--json", "--out", str(out), *SMALL])
    err = capsys.readouterr().err
    assert code == EXIT_FAILURE
    assert "'tip_y'" in err and "not finite" in err
    assert list(tmp_path.iterdir()) == []


def test_simulate_nan_history_exits_1_and_writes_nothing(monkeypatch, tmp_path, capsys):
    from ancf_beam.solvers import dynamics  # run_simulate imports simulate from here per call

    real = dynamics.simulate

    def broken(*a, **k):
        res = real(*a, **k)
        res.tip_y[-1] = -np.inf
        return res

    monkeypatch.setattr(dynamics, "simulate", broken)
    out = tmp_path / "d.nc"
    code = main(["simulate", "--t-end", "1e-3", "-q", "--out", str(out), *SMALL])
    err = capsys.readouterr().err
    assert code == EXIT_FAILURE
    assert "not finite" in err and "'tip_y_min'" in err  # the first quantity it spoils
    assert list(tmp_path.iterdir()) == []
