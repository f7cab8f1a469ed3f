"""The validation checks are sharp enough to see a small defect: a 0.1 % error in the element's
bending stiffness makes the validation table FAIL, while the unperturbed element passes.

The error is injected into the ANCF model only (every ``BeamModel`` gets its ``EI`` weights
scaled by 1.001); the references (exact quadrature, stepped transfer matrix, elastica, closed
forms) use the section properties and are not touched."""

from __future__ import annotations

import pytest

from ancf_beam.analyses import run_modal, run_static
from ancf_beam.beam import model as model_module
from ancf_beam.studies.checks import checks_frame
from ancf_beam.studies.validation import run_validation
from conftest import case_with

CASE = {"defect.lam": 0.6, "defect.n": 2.0}  # graded, default mesh (20 elements)


def _validate():
    case = case_with(**CASE)
    _, st = run_static(case)
    _, mo = run_modal(case)
    return checks_frame(run_validation(case, st, mo))


@pytest.fixture
def stiffer_bending(monkeypatch):
    """Every BeamModel built from now on has EI 0.1 % too high in its element stiffness."""
    original = model_module.BeamModel.__init__

    def init(self, case):
        original(self, case)
        self.ei_w *= 1.001
        self.ei_w0 *= 1.001

    monkeypatch.setattr(model_module.BeamModel, "__init__", init)


def test_unperturbed_element_passes():
    df = _validate()
    assert (df["status"] == "PASS").all(), df.to_string()
    # how much of their tolerance the static and frequency checks use (the margin the 0.1 %
    # error has to overcome): measured at most 0.25 (the linear tip slope)
    sel = df["check"].str.contains("ANCF linear|elastica|omega_")
    assert df.loc[sel, "err/tol"].max() < 1.0


def test_a_tenth_of_a_percent_bending_error_fails_validation(stiffer_bending):
    df = _validate()
    failed = set(df.loc[df["status"] == "FAIL", "check"])
    # statics: the tip moves 0.1 % (tolerances 1e-6 linear, 5e-6 elastica)
    for name in ("static tip deflection: ANCF linear vs exact quadrature",
                 "static tip slope: ANCF linear vs exact quadrature",
                 "static tip displacement: ANCF vs extensible elastica",
                 "static shape: ANCF nodes vs extensible elastica",
                 "uniform counterpart: linear tip deflection vs -q L^4 / (8 EI)"):  # fmt: skip
        assert name in failed, (name, df.to_string())
    # frequencies: omega ~ sqrt(EI) moves 0.05 %, above the 2e-4 tolerance
    assert sum("omega_" in n for n in failed) >= 6, df.to_string()
    err = df.loc[df["check"] == "static tip deflection: ANCF linear vs exact quadrature",
                 "rel. error"].item()  # fmt: skip
    assert err == pytest.approx(1e-3, rel=0.01)  # the injected error, seen by the check
