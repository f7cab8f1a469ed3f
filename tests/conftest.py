"""Shared fixtures: the seed case and its analytic reference quantities."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case

# Seed case, the built-in defaults (ancf_beam.config.DEFAULTS): L = 1 m, b = h = 0.02 m,
# rho = 7850 kg/m^3, E0 = 2.07e11 Pa, g = 9.81 m/s^2
L, B, H, RHO, E0, G = 1.0, 0.02, 0.02, 7850.0, 2.07e11, 9.81
A = B * H
I_SEC = B * H**3 / 12
EI = E0 * I_SEC  # 2760 N m^2
RHOA = RHO * A
Q = RHOA * G  # 30.80 N/m
BETA_L = np.array([1.875104, 4.694091, 7.854757])  # roots of 1 + cos(b) cosh(b) = 0


def make_model(**overrides) -> BeamModel:
    """Seed-case model with dotted-key overrides, e.g. make_model(**{"mesh.n_elements": 40})."""
    return BeamModel(resolve_case({}, None, overrides))


def case_with(**overrides):
    return resolve_case({}, None, overrides)


@pytest.fixture
def seed_model():
    return make_model()
