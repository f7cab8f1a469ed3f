"""The examples run and print the analytic values of the seed case."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BETA_L, EI, RHOA, L, Q

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_hello_beam_prints_the_euler_bernoulli_values():
    r = subprocess.run(
        [sys.executable, str(EXAMPLES / "hello_beam.py")], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    numbers = {
        key: float(re.search(pattern, r.stdout).group(1))
        for key, pattern in {
            "static_mm": r"static tip deflection: ([\d.]+) mm",
            "omega_1": r"first natural frequency: ([\d.]+) rad/s",
            "dynamic_mm": r"largest deflection ([\d.]+) mm",
        }.items()
    }
    static_mm = Q * L**4 / (8 * EI) * 1e3  # 1.395 mm
    omega_1 = BETA_L[0] ** 2 / L**2 * (EI / RHOA) ** 0.5  # 104.24 rad/s
    assert numbers["static_mm"] == pytest.approx(static_mm, rel=1e-3)
    assert numbers["omega_1"] == pytest.approx(omega_1, rel=1e-3)
    # released from rest: the first swing reaches about twice the static deflection
    assert numbers["dynamic_mm"] == pytest.approx(2 * static_mm, rel=0.03)
