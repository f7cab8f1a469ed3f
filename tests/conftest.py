"""Shared fixtures: the seed case and its analytic reference quantities."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings

from ancf_beam.beam.model import BeamModel
from ancf_beam.config import resolve_case

# Every property-based test draws the same examples on every run and machine (seeded from the
# test function's source): a draw that fails is found here, before it lands, not by the next
# machine's run. Tests with their own @settings keep these unless they set them.
settings.register_profile("ancf_beam", derandomize=True, database=None)
settings.load_profile("ancf_beam")

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


# --------------------------------------------------------------------------------------------
# error bounds of the tests' comparisons (the validation study's, ancf_beam.studies.bounds)
# --------------------------------------------------------------------------------------------
#: Factor of safety on every error estimate from refinement (the validation default).
FS = 2.0
#: hypothesis settings of the property-based tests: seeded draws (derandomised from each test
#: function's source), no example database and no shrinking (a failure reports its draw as
#: drawn, so the run time stays bounded: a few seconds per draw)
HYPOTHESIS_SETTINGS = dict(
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)


def static_tips(case, meshes=(1, 2, 4)):
    """Static solutions of ``case`` on ``n``, ``2n``, ``4n`` elements (``n`` the case's mesh;
    ``meshes`` the multipliers): ``(model, result)`` pairs."""
    from ancf_beam.solvers.static import solve_static

    out = []
    for m in meshes:
        model = BeamModel(case.with_overrides({"mesh.n_elements": m * case.mesh.n_elements}))
        out.append((model, solve_static(model)))
    return out


def ancf_tip_bound(case, keys=("tip_y",)):
    """Bound of the static tip quantities of ``case`` on its mesh (``tip_x``, ``tip_y``,
    ``tip_angle`` in rad): ``FS`` x the refinement estimate from ``n``, ``2n``, ``4n`` elements
    plus the Newton and round-off bound of the solution (adjoint of the residual). Returns
    ``(values on n elements, bounds)`` as dicts."""
    import math

    from ancf_beam.studies.bounds import refinement_estimate, static_solution_error, tip_gradients

    runs = static_tips(case)

    def measure(res):
        q = res.q
        return {
            "tip_x": res.tip_x,
            "tip_y": res.tip_y,
            "tip_angle": math.atan2(q[-1], q[-2]),
            "tip_slope": q[-1] / q[-2],
        }

    vals = [measure(r) for _, r in runs]
    model, res = runs[0]
    grads = tip_gradients(model, res.q)
    solver = static_solution_error(model, res.q, [grads[k] for k in keys])
    bounds = {
        k: FS * refinement_estimate(*(v[k] for v in vals)) + s
        for k, s in zip(keys, solver, strict=True)
    }
    return vals[0], bounds


def elastica_bound(p, g=9.81, **kw):
    """The extensible elastica of the profile ``p`` (a SectionProfile) at ``tol = 1e-10`` and
    its error bound per tip quantity: the change from ``tol = 1e-9`` (the error falls with the
    tolerance)."""
    import math

    from ancf_beam.references.elastica import solve_elastica

    fine = solve_elastica(p.length, p.EI, p.EA, p.rhoA, g, tol=1e-10, **kw)
    loose = solve_elastica(p.length, p.EI, p.EA, p.rhoA, g, tol=1e-9, **kw)
    err = {k: abs(fine[k] - loose[k]) for k in ("tip_x", "tip_y")}
    err["tip_angle"] = math.radians(abs(fine["tip_angle_deg"] - loose["tip_angle_deg"]))
    return fine, err


def linear_tip(case, t, dt=None):
    """The linear discrete model's tip history released from rest under gravity (all modes):
    continuous in time, or as central differences at step ``dt`` produce it (mode ``k`` a
    discrete cosine of frequency ``2 / dt asin(w_k dt / 2)``). Returns ``(history, static
    tip of the linear model)``."""
    from ancf_beam.identify import TipHistoryModel

    tm = TipHistoryModel(case, min_participation=0.0)
    w, c = tm.modal(case.defect.E.lam, case.defect.E.n)
    if dt is not None:
        w = 2.0 / dt * np.arcsin(np.clip(0.5 * w * dt, 0.0, 1.0))
    y = tm.eigen.tip_y0 + (1.0 - np.cos(np.outer(np.asarray(t, float), w))) @ c
    return y, tm.eigen.tip_y0 + float(np.sum(c))


# --------------------------------------------------------------------------------------------
# the quick pipeline, once per session
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def quick_run(tmp_path_factory):
    """A copy of the workflow after ``snakemake --cores 2 --configfile config/quick.yaml``: the
    end-to-end tests of test_pipeline read it, test_slurm compares the cluster run with it (one
    local run serves both: it takes minutes)."""
    from test_pipeline import copy_workflow, output_tail, snakemake

    work = copy_workflow(tmp_path_factory.mktemp("pipeline"))
    res = snakemake(work, "--cores", "2", "--configfile", "config/quick.yaml", timeout=1500)
    assert res.returncode == 0, output_tail(res)
    return work
