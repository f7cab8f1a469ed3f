"""Contact force laws and friction: formulas at hand-computed states, never tensile, config
errors naming the key (the impact physics is tested with the two-body and clearance cases)."""

import math

import numpy as np
import pytest

from ancf_beam.config import ConfigError
from ancf_beam.config.contact import contact_law, friction_law
from ancf_beam.mbs.contact import (
    hertz_conformal_stiffness,
    law_coefficient,
    law_force,
)

#: the laws are a few operations: their round-off against the same formula written here
EPS = float(np.finfo(float).eps)


def test_hertz_conformal_stiffness_by_hand():
    # steel journal 9.5 mm in a steel bearing 10.0 mm: R = 0.01*0.0095/0.0005 = 0.19 m,
    # E* = 207e9 / (2 (1 - 0.09)); K = 4/3 E* sqrt(R)
    e_star = 207e9 / (2 * 0.91)
    expected = 4.0 / 3.0 * e_star * math.sqrt(0.19)
    K = hertz_conformal_stiffness(207e9, 0.3, 207e9, 0.3, 0.010, 0.0095)
    assert K == pytest.approx(expected, rel=16 * EPS)
    with pytest.raises(ValueError):
        hertz_conformal_stiffness(207e9, 0.3, 207e9, 0.3, 0.009, 0.0095)


@pytest.mark.parametrize(
    ("block", "chi"),
    [
        ({"law": "hunt-crossley", "K": 1e9, "restitution": 0.6}, 1.5 * 0.4),
        ({"law": "lankarani-nikravesh", "K": 1e9, "restitution": 0.6}, 0.75 * (1 - 0.36)),
        ({"law": "flores", "K": 1e9, "restitution": 0.6}, 8 * 0.4 / (5 * 0.6)),
    ],
)
def test_hysteresis_laws_at_a_state(block, chi):
    law = contact_law(block, "c")
    delta, ddot, v0 = 2e-5, 0.3, 0.5
    expected = 1e9 * delta**1.5 * (1 + chi * ddot / v0)
    assert law_force(law, delta, ddot, v0) == pytest.approx(expected, rel=16 * EPS)
    assert law_force(law, -1e-9, 0.3, v0) == 0.0
    # fast separation: the bracket turns negative for these chi, the force is clipped at zero
    assert law_force(law, delta, -v0 / chi * 1.5, v0) == 0.0


def test_kelvin_voigt_zeta_and_clipping():
    law = contact_law({"law": "kelvin-voigt", "k": 1e7, "zeta": 0.1}, "c", m_eff=1.2)
    c = 2 * 0.1 * math.sqrt(1e7 * 1.2)
    assert law.damping == pytest.approx(c, rel=8 * EPS)
    assert law_force(law, 1e-4, 0.2, 1.0) == pytest.approx(1e7 * 1e-4 + c * 0.2, rel=8 * EPS)
    assert law_force(law, 1e-6, -1.0, 1.0) == 0.0  # unclipped: 10 - 1386 N < 0


def test_coulomb_transition_is_seed_004s_cd():
    f = friction_law({"law": "coulomb-transition", "mu": 0.01}, "f")
    speeds = np.array([0.0, 5e-4, 1e-3, 5.5e-3, 1e-2, 0.5, -5.5e-3])
    got = [law_coefficient(f, v) for v in speeds]
    # (s - v_s) / (v_d - v_s) mu: a few operations on numbers of 1e-2
    assert got == pytest.approx([0.0, 0.0, 0.0, 0.005, 0.01, 0.01, -0.005], abs=8 * EPS * 0.01)


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ({"law": "hertzian", "K": 1.0}, "c.law"),
        ({"law": "hertz"}, "c.K"),
        ({"law": "hertz", "K": -1.0}, "c.K"),
        ({"law": "hertz", "K": 1.0, "restitution": 0.5}, "c.restitution"),
        ({"law": "flores", "K": 1.0, "restitution": 0.0}, "c.restitution"),
        ({"law": "lankarani-nikravesh", "K": 1.0}, "c.restitution"),
        ({"law": "kelvin-voigt", "k": 1.0, "c": 1.0, "zeta": 0.1}, "c.c"),
        ({"law": "kelvin-voigt", "k": float("nan")}, "c.k"),
        ({"law": "kelvin-voigt", "k": 1.0, "zeta": 0.1}, "c.zeta"),
        ({"law": "hertz", "K": 1.0, "stiffness": 2}, "c.stiffness"),
    ],
)
def test_contact_config_errors_name_the_key(block, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        contact_law(block, "c")


def test_friction_config_errors_name_the_key():
    with pytest.raises(ConfigError, match=r"f\.v_dynamic"):
        friction_law({"law": "coulomb-transition", "mu": 0.1, "v_dynamic": 1e-4}, "f")
    with pytest.raises(ConfigError, match=r"f\.mu"):
        friction_law({"law": "coulomb-tanh"}, "f")
