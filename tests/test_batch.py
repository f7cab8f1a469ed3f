"""Batch mode: a process pool returns what one-at-a-time runs return."""

from __future__ import annotations

import numpy as np
import pytest

from ancf_beam.config import resolve_case
from ancf_beam.solvers import batch


def _cases():
    return [
        resolve_case({}, None, {"mesh.n_elements": 4, "defect.lam": lam, "defect.n": 2.0})
        for lam in (0.0, 0.3, 0.6)
    ]


def test_pool_equals_one_at_a_time():
    cases = _cases()
    w1 = batch.modal_sweep(cases, 2, workers=1)
    w2 = batch.modal_sweep(cases, 2, workers=2)
    assert np.array_equal(w1, w2)
    assert np.all(np.diff(w1[:, 0]) < 0)  # E falls with lam, and so does omega_1
    s1 = batch.static_sweep(cases, workers=1)
    s2 = batch.static_sweep(cases, workers=2)
    assert np.array_equal(s1, s2)
    e1 = batch.explicit_sweep(cases[:2], 2e-4, workers=1)
    e2 = batch.explicit_sweep(cases[:2], 2e-4, workers=2)
    for (t1, y1), (t2, y2) in zip(e1, e2, strict=True):
        assert np.array_equal(t1, t2) and np.array_equal(y1, y2)


def test_run_batch_keeps_order_and_rejects_bad_workers():
    assert batch.run_batch(abs, [-3, 2, -1], workers=2) == [3, 2, 1]
    assert batch.run_batch(abs, [], workers=2) == []
    with pytest.raises(ValueError, match="workers"):
        batch.run_batch(abs, [1], workers=0)
