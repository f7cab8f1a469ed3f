"""Nonsmooth contacts in the configuration (``model: nonsmooth``, integrator ``moreau-jean``):
every bad combination is an error naming both keys (file, key, value, allowed), exit 2, and
nothing is written; the good ones resolve to the laws and settings the integrator reads."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

from ancf_beam.cli import EXIT_USAGE, main
from ancf_beam.config import ConfigError, NonsmoothLaw, load_config, resolve_mechanism

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = load_config(ROOT / "config" / "config.yaml")["mechanisms"]
NS = {"model": "nonsmooth", "restitution": 0.9, "mu": 0.01}


def _clearance(integrator: str = "moreau-jean", **clearance) -> dict:
    b = copy.deepcopy(SHIPPED["slider_crank_clearance"])
    b["clearance"].update({"contact": dict(NS), "friction": None, **clearance})
    b.update(integrator=integrator, solver={"dt": 1.0e-5})
    return b


def _guide(integrator: str = "moreau-jean") -> dict:
    b = copy.deepcopy(SHIPPED["slider_crank_guide_clearance"])
    guide = b["joints"]["slider_guide"]["guide"]
    guide.update(contact={"model": "nonsmooth", "restitution": 0.4, "mu": 0.01}, friction=None)
    b.update(integrator=integrator, solver={"dt": 1.0e-4})
    return b


def _ball(integrator: str = "moreau-jean", contact: dict | None = None) -> dict:
    """A point mass dropped on the ground line (a general mechanism's point-line contact)."""
    return {
        "kind": "general",
        "integrator": integrator,
        "t_end": 0.1,
        "solver": {"dt": 1.0e-4},
        "bodies": {"ball": {"type": "point-mass", "mass": 1.0, "position": [0.0, 0.01]}},
        "forces": {"gravity": {"type": "gravity"}},
        "contacts": {
            "ground": {"type": "point-line", "points": ["ball.cm"], "contact": contact or NS}
        },
    }


def _two_body(integrator: str = "adaptive") -> dict:
    b = copy.deepcopy(SHIPPED["impact_seed003"])
    b.update(integrator=integrator, contact={"model": "nonsmooth", "restitution": 0.5})
    b["solver"] = {"dt": 1.0e-6}
    return b


def _write(tmp_path: Path, name: str, block: dict) -> Path:
    path = tmp_path / "cfg" / "c.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump({"mechanisms": {name: block}}))
    return path


#: (case name, block, extra argv, texts the message must contain: both keys, value, allowed)
ROWS = [
    (
        "clearance_ns_genalpha",
        _clearance("generalized-alpha"),
        [],
        [
            "'mechanisms.clearance_ns_genalpha.integrator' = 'generalized-alpha'",
            "'mechanisms.clearance_ns_genalpha.clearance.contact.model' = 'nonsmooth'",
            "expected 'moreau-jean'",
        ],
    ),
    (
        "clearance_compliant_mj",
        {
            **copy.deepcopy(SHIPPED["slider_crank_clearance"]),
            "integrator": "moreau-jean",
        },
        [],
        [
            "'mechanisms.clearance_compliant_mj.integrator' = 'moreau-jean'",
            "'mechanisms.clearance_compliant_mj.clearance.contact.model' = 'compliant'",
            "generalized-alpha, newmark, adaptive",
        ],
    ),
    (
        "clearance_ns_cli_override",
        _clearance(),
        ["--integrator", "newmark"],
        [
            "the integrator of this run of mechanism 'clearance_ns_cli_override' = 'newmark'",
            "'mechanisms.clearance_ns_cli_override.clearance.contact.model' = 'nonsmooth'",
        ],
    ),
    (
        "clearance_compliant_cli_mj",
        copy.deepcopy(SHIPPED["slider_crank_clearance"]),
        ["--integrator", "moreau-jean"],
        [
            "the integrator of this run of mechanism 'clearance_compliant_cli_mj' = 'moreau-jean'",
            "'mechanisms.clearance_compliant_cli_mj.clearance.contact.model' = 'compliant'",
        ],
    ),
    (
        "guide_ns_genalpha",
        _guide("generalized-alpha"),
        [],
        [
            "'mechanisms.guide_ns_genalpha.integrator' = 'generalized-alpha'",
            "'mechanisms.guide_ns_genalpha.joints.slider_guide.guide.contact.model' = 'nonsmooth'",
        ],
    ),
    (
        "ball_ns_newmark",
        _ball("newmark"),
        [],
        [
            "'mechanisms.ball_ns_newmark.integrator' = 'newmark'",
            "'mechanisms.ball_ns_newmark.contacts.ground.contact.model' = 'nonsmooth'",
        ],
    ),
    (
        "ball_compliant_mj",
        _ball(contact={"law": "hertz", "K": 1.0e9}),
        [],
        [
            "'mechanisms.ball_compliant_mj.integrator' = 'moreau-jean'",
            "'mechanisms.ball_compliant_mj.contacts.ground.contact.model' = 'compliant'",
        ],
    ),
    (
        "two_body_ns_adaptive",
        _two_body("adaptive"),
        [],
        [
            "'mechanisms.two_body_ns_adaptive.integrator' = 'adaptive'",
            "'mechanisms.two_body_ns_adaptive.contact.model' = 'nonsmooth'",
        ],
    ),
    (
        "two_body_compliant_mj",
        {
            **copy.deepcopy(SHIPPED["impact_seed003"]),
            "integrator": "moreau-jean",
            "solver": {"dt": 1.0e-6},
        },
        [],
        [
            "'mechanisms.two_body_compliant_mj.integrator' = 'moreau-jean'",
            "'mechanisms.two_body_compliant_mj.contact.model' = 'compliant'",
            "central-difference",  # every integrator but moreau-jean takes a two-body law
        ],
    ),
    (
        "cli_mj_without_dt",
        {k: v for k, v in SHIPPED["slider_crank_rigid"].items() if k != "solver"},
        ["--integrator", "moreau-jean"],
        [
            "the integrator of this run of mechanism 'cli_mj_without_dt' = 'moreau-jean'",
            "'mechanisms.cli_mj_without_dt.solver.dt' = None",
        ],
    ),
    (
        "mj_without_dt",
        {**_clearance(), "solver": {"dt": None}},
        [],
        [
            "'mechanisms.mj_without_dt.solver.dt' = None",
            "'mechanisms.mj_without_dt.integrator' = 'moreau-jean'",
            "a number > 0 (s)",
        ],
    ),
    (
        "ns_with_friction_block",
        _clearance(friction={"law": "coulomb-tanh", "mu": 0.1}),
        [],
        [
            "'mechanisms.ns_with_friction_block.clearance.friction'",
            "'mechanisms.ns_with_friction_block.clearance.contact.mu'",
            "expected null",
        ],
    ),
    (
        "guide_ns_with_friction_block",
        {
            **_guide(),
            "joints": {
                **_guide()["joints"],
                "slider_guide": {
                    **_guide()["joints"]["slider_guide"],
                    "guide": {
                        **_guide()["joints"]["slider_guide"]["guide"],
                        "friction": {"law": "coulomb-tanh", "mu": 0.1},
                    },
                },
            },
        },
        [],
        [
            "'mechanisms.guide_ns_with_friction_block.joints.slider_guide.guide.friction'",
            "'mechanisms.guide_ns_with_friction_block.joints.slider_guide.guide.contact.mu'",
        ],
    ),
    (
        "ns_restitution_above_1",
        _clearance(contact={**NS, "restitution": 1.5}),
        [],
        ["'mechanisms.ns_restitution_above_1.clearance.contact.restitution' = 1.5", "[0, 1]"],
    ),
    (
        "ns_mu_negative",
        _ball(contact={**NS, "mu": -0.1}),
        [],
        ["'mechanisms.ns_mu_negative.contacts.ground.contact.mu' = -0.1", ">= 0"],
    ),
    (
        "ns_with_stiffness",
        _clearance(contact={**NS, "K": 1.0e10}),
        [],
        ["'mechanisms.ns_with_stiffness.clearance.contact.K'", "model, mu, restitution"],
    ),
    (
        "mj_theta_below_half",
        {**_clearance(), "solver": {"dt": 1.0e-5, "theta": 0.4}},
        [],
        ["'mechanisms.mj_theta_below_half.solver.theta' = 0.4", "[0.5, 1]"],
    ),
    (
        "mj_max_iter_zero",
        {**_clearance(), "solver": {"dt": 1.0e-5, "max_iter": 0}},
        [],
        ["'mechanisms.mj_max_iter_zero.solver.max_iter' = 0", "an integer >= 1"],
    ),
    (
        "mj_tol_zero",
        {**_clearance(), "solver": {"dt": 1.0e-5, "tol": 0.0}},
        [],
        ["'mechanisms.mj_tol_zero.solver.tol' = 0.0", "(0, 0.01]"],
    ),
    (
        "mj_dt_negative",
        {**_clearance(), "solver": {"dt": -1.0e-5}},
        [],
        ["'mechanisms.mj_dt_negative.solver.dt' = -1e-05", "> 0"],
    ),
]


@pytest.mark.parametrize(("name", "block", "extra", "texts"), ROWS, ids=[r[0] for r in ROWS])
def test_bad_nonsmooth_combination_exit_2_names_both_keys(
    capsys, tmp_path, monkeypatch, name, block, extra, texts
):
    config = _write(tmp_path, name, block)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results" / "m.nc"
    out.parent.mkdir()
    argv = ["mechanism", "--config", str(config), "--case", name, "--out", str(out), *extra]
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == EXIT_USAGE, err
    for text in texts:
        assert text in err, (text, err)
    assert not list(out.parent.iterdir())


def test_nonsmooth_settings_resolve():
    """A nonsmooth clearance with moreau-jean resolves: the law holds e and mu, no friction
    block, the solver holds dt, theta, tol and max_iter."""
    block = _clearance()
    block["solver"] = {"dt": 2.0e-5, "theta": 0.6, "tol": 1.0e-10, "max_iter": 300}
    spec = resolve_mechanism({"mechanisms": {"sc": block}}, "sc")
    assert spec.integrator == "moreau-jean"
    assert spec.clearance.contact == NonsmoothLaw(0.9, 0.01)
    assert spec.clearance.friction is None
    assert (spec.solver.dt, spec.solver.theta, spec.solver.tol, spec.solver.max_iter) == (
        2.0e-5,
        0.6,
        1.0e-10,
        300,
    )
    # the general kind: the law under the contact's name, its key for messages
    gen = resolve_mechanism({"mechanisms": {"g": _guide()}}, "g").general
    law = gen.laws["slider_guide"]
    assert law.nonsmooth and law.law == NonsmoothLaw(0.4, 0.01) and law.friction is None
    assert law.key == "joints.slider_guide.guide.contact"


def test_nonsmooth_clearance_needs_no_stiffness():
    """A compliant hertz-type law without K needs E and nu; a nonsmooth contact does not."""
    block = _clearance(E=None, nu=None)
    spec = resolve_mechanism({"mechanisms": {"sc": block}}, "sc")
    assert spec.clearance.contact.model == "nonsmooth"
    block = copy.deepcopy(SHIPPED["slider_crank_clearance"])
    block["clearance"].update(E=None)
    with pytest.raises(ConfigError, match=r"clearance\.E"):
        resolve_mechanism({"mechanisms": {"sc": block}}, "sc")


def test_builders_make_unilateral_contacts():
    """The builders hand a nonsmooth contact's model, restitution and mu to the contact
    elements, which the system keeps as unilateral constraints, not force elements."""
    from ancf_beam.mbs.mechanisms import build_mechanism

    spec = resolve_mechanism({"mechanisms": {"sc": _clearance()}}, "sc")
    system = build_mechanism(spec).system
    assert [c.name for c in system.unilateral] == ["wrist_pin"]
    (c,) = system.unilateral
    assert (c.model, c.restitution, c.mu, c.inside) == ("nonsmooth", 0.9, 0.01, True)
    assert c.r_p - c.r_q == pytest.approx(5e-4, rel=1e-12)  # the radial clearance, round-off
    assert not any(getattr(f, "nonsmooth", False) for f in system.forces)
    guide = resolve_mechanism({"mechanisms": {"g": _guide()}}, "g")
    system = build_mechanism(guide).system
    names = sorted(c.name for c in system.unilateral)
    assert names == [
        f"slider_guide.{s}" for s in ("lower_front", "lower_rear", "upper_front", "upper_rear")
    ]
    assert {(c.restitution, c.mu) for c in system.unilateral} == {(0.4, 0.01)}


def test_two_body_nonsmooth_json_is_newtons_law(capsys, tmp_path):
    """Two point masses, head on, a nonsmooth contact (e = 0.5): the JSON's restitution is e
    and its one impulse (1 + e) m1 m2 / (m1 + m2) v_rel (closed form); the --out histories hold
    that impulse. One contact is solved exactly by the first Gauss-Seidel sweep: round-off
    only (a few operations: 64 eps relative)."""
    import json

    import xarray as xr

    block = _two_body("moreau-jean")
    block.update(t_end=2.0e-4, sample_dt=1.0e-6, gap=1.0e-4)
    block["solver"] = {"dt": 1.0e-6, "tol": 1.0e-12, "max_iter": 50}
    config = _write(tmp_path, "tb", block)
    out = tmp_path / "tb.nc"
    code = main(
        ["mechanism", "--config", str(config), "--case", "tb", "--json", "--out", str(out), "-q"]
    )
    text, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(text)
    m1, m2 = block["bodies"]["m1"], block["bodies"]["m2"]
    p_exact = 1.5 * m1 * m2 / (m1 + m2) * block["v_rel"]
    eps = 2.0**-52
    assert d["impulses"] == d["impacts"] == 1
    assert d["max_impulse"] == pytest.approx(p_exact, rel=64 * eps)
    assert d["restitution"] == pytest.approx(0.5, rel=64 * eps)
    for key in ("max_penetration", "critical_dt", "critical_dt_mode"):
        assert key in d, key
    with xr.open_dataset(out) as ds:
        assert ds["impulse_normal"].attrs["units"] == "N s"
        p = ds["impulse_normal"].sel(contact="contact").values
        assert p.sum() == pytest.approx(p_exact, rel=64 * eps)
        assert set(np.unique(ds["contact_state"].values)) == {0, 1}
