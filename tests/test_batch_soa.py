"""Many beams stepped together (``ancf_beam.solvers.batch.explicit_batch``) against the
single-model central-difference solver (``simulate_explicit``) run on each model alone.

Round-off bound. Both solvers evaluate the same scheme with the same expressions at the same
``dt``; they differ only in the order of floating-point summation (the strain energy over the
elements, the element force over the Gauss points for meshes below 8 elements, where the single
solver takes its element-major kernel, the damping product) and in which products the
compiler fuses into multiply-adds. So every step's increment differs by a few units of
round-off (``eps``) relative to the quantities it is made of, and the central-difference scheme,
stable at ``dt < dt_cr`` (no growth of a perturbation), adds those differences up at most
linearly over the ``N`` steps::

    |x_batch - x_single| <= C eps N S

with ``S`` the scale of the compared quantity (coordinates: the largest displacement from the
reference plus the largest coordinate; energies: the largest energy component) and
``C = 64``: a few eps per reordered sum (at most 4) times the terms that cancel in a node's
force (two elements, two terms each for the axial and the bending part, and the gravity:
at most 16 of comparable size). Measured on the drawn cases: the largest ratio of the
difference to this bound is below 1e-2 (benchmarks/README.md, "Many beams stepped together").
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case
from ancf_beam.solvers import batch
from ancf_beam.solvers.explicit import simulate_explicit
from ancf_beam.solvers.modal import omega_max

EPS = np.finfo(float).eps
C_ROUNDOFF = 64.0  # see the module docstring

SETTINGS = settings(
    derandomize=True,
    max_examples=8,
    deadline=None,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _case(n_el: int, lam: float, n: float, **over):
    return resolve_case(
        {}, None, {"mesh.n_elements": n_el, "defect.lam": float(lam), "defect.n": float(n), **over}
    )


def _dt(model: BeamModel, safety: float = 0.8) -> float:
    return safety * 2.0 / omega_max(model)[0]


def _assert_same(a, b, steps: int) -> dict[str, float]:
    """Every record of two runs of one model agrees within the round-off bound; returns the
    ratio of the largest difference to the bound per record."""
    assert a.t.shape == b.t.shape and np.array_equal(a.t, b.t)
    assert a.steps == b.steps and a.dt == b.dt
    assert np.array_equal(a.t_snap, b.t_snap)
    disp = max(np.max(np.abs(a.q_snap - a.q_snap[0])), np.max(np.abs(a.tip_y - a.tip_y[0])))
    s_q = disp + float(np.max(np.abs(a.q_snap)))
    s_e = max(float(np.max(np.abs(x))) for x in (a.kinetic, a.strain, a.gravity, a.damping_work))
    ratios = {}
    for name, scale in (
        ("tip_x", s_q),
        ("tip_y", s_q),
        ("q_snap", s_q),
        ("kinetic", s_e),
        ("strain", s_e),
        ("gravity", s_e),
        ("damping_work", s_e),
    ):
        bound = C_ROUNDOFF * EPS * steps * scale
        diff = float(np.max(np.abs(getattr(a, name) - getattr(b, name))))
        assert diff <= bound, f"{name}: {diff:.3e} > {bound:.3e}"
        ratios[name] = diff / bound
    return ratios


@SETTINGS
@given(
    n_el=st.sampled_from([2, 3, 5, 8, 11]),
    params=st.lists(st.tuples(st.floats(0.0, 0.6), st.floats(0.5, 3.0)), min_size=1, max_size=10),
    common_dt=st.booleans(),
    damped=st.booleans(),
)
def test_batch_equals_single_model_runs(n_el, params, common_dt, damped):
    """Drawn defects (lam in [0, 0.6], n in [0.5, 3]), mesh sizes, batch sizes (one to two
    blocks of lanes), a common or per-model step (models then finish at different steps) and
    per-model Rayleigh damping: every model's records equal its run alone to round-off."""
    models = [BeamModel(_case(n_el, lam, n)) for lam, n in params]
    dts = [_dt(m) for m in models]
    if common_dt:
        dts = [min(dts)] * len(dts)
    damping = [
        (3.0 * (i % 3), 1e-6 * (i % 2)) if damped else (0.0, 0.0) for i in range(len(models))
    ]
    t_end = 300 * max(dts) + 0.37 * min(dts)  # a shortened last step for some
    together = batch.explicit_batch(models, t_end, dts, damping=damping, sample_dt=20 * min(dts))
    for m, dt, dmp, r in zip(models, dts, damping, together, strict=True):
        alone = simulate_explicit(
            BeamModel(m.case), t_end, dt, damping=dmp, sample_dt=20 * min(dts), progress=False
        )
        _assert_same(alone, r, alone.steps)


def test_rule_with_different_points_and_damping():
    """Exudyn's 5/3 rule (axial and bending points differ: the loop-per-point kernel) with
    damping, at a mesh size where the single solver takes its structure-of-arrays kernel."""
    over = {"mesh.n_gauss_axial": 5, "mesh.n_gauss_bending": 3}
    models = [BeamModel(_case(12, lam, n, **over)) for lam, n in ((0.0, 1.0), (0.5, 2.5))]
    dt = min(_dt(m) for m in models)
    together = batch.explicit_batch(models, 400 * dt, dt, damping=[(0.0, 0.0), (10.0, 2e-6)])
    for m, dmp, r in zip(models, [(0.0, 0.0), (10.0, 2e-6)], together, strict=True):
        alone = simulate_explicit(BeamModel(m.case), 400 * dt, dt, damping=dmp, progress=False)
        _assert_same(alone, r, alone.steps)
        assert np.ptp(r.tip_y) > 1e-6  # the beam moved: the comparison is not of a rest state


def test_model_order_does_not_matter():
    """The same models in reverse order (other lanes, another block) give the same records."""
    models = [BeamModel(_case(6, 0.06 * i, 0.5 + 0.25 * i)) for i in range(9)]
    dt = min(_dt(m) for m in models)
    fwd = batch.explicit_batch(models, 250 * dt, dt)
    back = batch.explicit_batch(models[::-1], 250 * dt, dt)[::-1]
    for a, b in zip(fwd, back, strict=True):
        _assert_same(a, b, a.steps)


def test_batch_of_one():
    model = BeamModel(_case(4, 0.4, 1.5))
    dt = _dt(model)
    (r,) = batch.explicit_batch([model], 500 * dt, dt)
    alone = simulate_explicit(BeamModel(model.case), 500 * dt, dt, progress=False)
    _assert_same(alone, r, alone.steps)
    assert batch.explicit_batch([], 1.0, 1e-3) == []


def test_default_step_is_each_models_own():
    """Without ``dt`` every model runs at ``dt_safety`` times its own critical step."""
    cases = [_case(4, 0.0, 1.0), _case(4, 0.6, 3.0)]
    res = batch.explicit_batch(cases, 2e-3, dt_safety=0.5)
    for c, r in zip(cases, res, strict=True):
        assert r.dt == pytest.approx(0.5 * 2.0 / omega_max(BeamModel(c))[0], rel=1e-14)


def test_different_mesh_sizes_are_refused():
    cases = [_case(4, 0.0, 1.0), _case(6, 0.3, 2.0), _case(4, 0.6, 1.0)]
    with pytest.raises(ValueError, match=r"same mesh\.n_elements, got \[4, 6\]"):
        batch.explicit_batch(cases, 1e-3, 1e-6)


def test_unsupported_models_are_refused():
    from ancf_beam.solvers.explicit_batch import run_explicit_batch

    ok = BeamModel(_case(4, 0.0, 1.0))
    other_length = BeamModel(_case(4, 0.0, 1.0, **{"beam.length": 0.5}))
    with pytest.raises(ValueError, match="element length"):
        run_explicit_batch([ok, other_length], 1e-4, 1e-7)
    damaged = BeamModel(_case(4, 0.0, 1.0, **{"damage.enabled": True, "damage.threshold": 1e-3}))
    with pytest.raises(ValueError, match="damage"):
        run_explicit_batch([ok, damaged], 1e-4, 1e-7)
    with pytest.raises(ValueError, match="dt: 3 values for 2 models"):
        run_explicit_batch([ok, ok], 1e-4, [1e-7] * 3)


def test_unstable_model_is_named():
    from ancf_beam.results import InstabilityError

    models = [BeamModel(_case(4, 0.0, 1.0)), BeamModel(_case(4, 0.3, 1.0))]
    dts = [_dt(models[0]), 3.0 * _dt(models[1], 1.0)]
    with pytest.raises(InstabilityError, match="batch model 1"):
        batch.explicit_batch(models, 2000 * dts[0], dts)


def test_explicit_sweep_together_groups_by_mesh_size():
    """``explicit_sweep(together=True)``: one batch per mesh size, a damaged case alone; the
    tip histories equal the one-at-a-time sweep's to round-off (the bound above)."""
    cases = [
        _case(4, 0.0, 1.0),
        _case(6, 0.3, 2.0),
        _case(4, 0.6, 0.5),
        _case(4, 0.2, 1.0, **{"damage.enabled": True, "damage.threshold": 1e-3}),
    ]
    t_end = 3e-4
    alone = batch.explicit_sweep(cases, t_end, workers=1)
    together = batch.explicit_sweep(cases, t_end, together=True)
    for c, (t1, y1), (t2, y2) in zip(cases, alone, together, strict=True):
        assert np.array_equal(t1, t2)
        steps = round(t_end / (0.8 * 2.0 / omega_max(BeamModel(c))[0])) + 1
        scale = float(np.max(np.abs(y1 - y1[0]))) + float(np.max(np.abs(y1)))
        assert np.max(np.abs(y1 - y2)) <= C_ROUNDOFF * EPS * steps * scale


def test_run_simulate_batch_equals_run_simulate():
    """``analyses.run_simulate_batch``: each case's summary and Dataset equal its
    ``run_simulate`` alone within the round-off bound above (per variable, scaled by the
    variable's largest magnitude); the step counts, times and sample counts exactly."""
    from ancf_beam.analyses import run_simulate, run_simulate_batch
    from ancf_beam.solvers.settings import critical_step

    cases = [_case(6, 0.0, 1.0), _case(6, 0.5, 2.0), _case(6, 0.3, 0.7, **{"material.rho": 5e3})]
    dcr = [critical_step(BeamModel(c)) for c in cases]
    t_end = [2e-3, 3e-3, 2.5e-3]
    together = run_simulate_batch(cases, dcr, t_end)
    for c, d, t, (s2, d2) in zip(cases, dcr, t_end, together, strict=True):
        s1, d1 = run_simulate(c, dt_critical=d, t_end=t, progress=False)
        assert s1["steps"] == s2["steps"] and s1["dt"] == s2["dt"] and s1["case"] == s2["case"]
        assert set(d1.data_vars) == set(d2.data_vars)
        assert np.array_equal(d1["time"].values, d2["time"].values)
        bound = C_ROUNDOFF * EPS * s1["steps"]
        scales = {}  # per unit: the largest magnitude of its variables (twice: S above)
        for k in d1.data_vars:
            if d1[k].dtype.kind == "f":
                u = d1[k].attrs.get("units")
                scales[u] = max(scales.get(u, 0.0), 2.0 * float(np.max(np.abs(d1[k].values))))
        for k in d1.data_vars:
            a, b = d1[k].values, d2[k].values
            if a.dtype.kind != "f":
                assert np.array_equal(a, b), k
                continue
            diff = float(np.max(np.abs(a - b)))
            assert diff <= bound * scales[d1[k].attrs.get("units")], (k, diff)
        for k in ("tip_y_min", "tip_y_final", "tip_y_mean"):
            assert abs(s1[k] - s2[k]) <= bound * 2.0 * float(np.max(np.abs(d1["tip_y"].values)))


def test_simulate_batch_key_refuses_what_the_batch_cannot_take():
    from ancf_beam.analyses import run_simulate_batch, simulate_batch_key

    ok = _case(6, 0.0, 1.0)
    assert simulate_batch_key(ok) == simulate_batch_key(_case(6, 0.6, 3.0))
    assert simulate_batch_key(ok) != simulate_batch_key(_case(8, 0.0, 1.0))
    assert simulate_batch_key(_case(6, 0.0, 1.0, **{"dynamics.integrator": "newmark"})) is None
    damaged = _case(6, 0.0, 1.0, **{"damage.enabled": True, "damage.threshold": 1e-3})
    assert simulate_batch_key(damaged) is None
    with pytest.raises(ValueError, match="cannot be run together"):
        run_simulate_batch([ok, _case(8, 0.0, 1.0)], [1e-6, 1e-6])
