"""General mechanisms (``kind: general``): validation of the block (errors naming the block and
key, exit 2), the presets as general descriptions, the clearance journal's side."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ancf_beam.cli import main
from ancf_beam.config import ConfigError, load_config, resolve_mechanism
from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.mbs.mechanisms import build_mechanism
from ancf_beam.mbs.presets import expand
from conftest import HYPOTHESIS_SETTINGS

ROOT = Path(__file__).resolve().parents[1]
EPS = float(np.finfo(float).eps)
CFG = load_config(ROOT / "config" / "config.yaml")


def _four_bar() -> dict:
    return copy.deepcopy(dict(CFG["mechanisms"]["four_bar"]))


def _resolve(block: dict, name: str = "m"):
    return resolve_mechanism({"mechanisms": {name: block}}, name)


def _edit(block: dict, dotted: str, value) -> dict:
    node = block
    *path, last = dotted.split(".")
    for p in path:
        node = node[p]
    if value is None:
        node.pop(last)
    else:
        node[last] = value
    return block


BAD = [
    # (dotted key in the block, value, words the message must contain)
    (
        "joints.B.points",
        ["crank.tip", "couplr.a"],
        ["mechanisms.m.joints.B.points.1", "couplr.a", "crank, coupler, rocker"],
    ),
    (
        "joints.B.points",
        ["crank.tip", "coupler.z"],
        ["mechanisms.m.joints.B.points.1", "coupler.z", "a, mid, b"],
    ),
    ("joints.drive.body", "nobody", ["mechanisms.m.joints.drive.body", "nobody", "crank"]),
    ("joints.A.point", [0.0, 0.0], ["mechanisms.m.joints.A.point"]),
    ("joints.C.type", "hinge", ["mechanisms.m.joints.C.type", "ground-pin, revolute"]),
    ("bodies.crank.mass", -1.0, ["mechanisms.m.bodies.crank.mass", "-1.0", "[1e-06, 1e+06] (kg)"]),
    ("bodies.crank.markers.tip", [0.025], ["mechanisms.m.bodies.crank.markers.tip"]),
    ("bodies.crank.colour", "red", ["mechanisms.m.bodies.crank.colour", "allowed here"]),
    ("forces.gravity.g", 1.0e9, ["mechanisms.m.forces.gravity.g", "[0, 1000]"]),
    ("forces.g2", {"type": "gravity"}, ["mechanisms.m.forces.g2", "at most one gravity"]),
]


@pytest.mark.parametrize("key, value, words", BAD, ids=[b[0] + "=" + str(b[1]) for b in BAD])
def test_bad_general_block_names_block_and_key(key, value, words):
    block = _edit(_four_bar(), key, value)
    with pytest.raises(ConfigError) as exc:
        _resolve(block)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


def test_clearance_journal_must_be_on_the_joint():
    block = copy.deepcopy(dict(CFG["mechanisms"]["slider_crank_two_clearances"]))
    block["joints"]["crank_pin"]["clearance"]["journal"] = "slider"
    with pytest.raises(ConfigError, match=r"joints\.crank_pin\.clearance\.journal.*crank, rod"):
        _resolve(block)
    block["joints"]["crank_pin"]["clearance"]["journal"] = "crank"
    block["joints"]["crank_pin"]["clearance"]["journal_radius"] = 0.011
    with pytest.raises(ConfigError, match=r"crank_pin\.clearance\.journal_radius.*bearing_radius"):
        _resolve(block)


def test_redundant_joint_is_named_at_build():
    block = _four_bar()
    block["joints"]["A2"] = {"type": "ground-pin", "point": "crank.pivot", "at": [0.0, 0.0]}
    with pytest.raises(ConfigError, match=r"mechanisms\.m\.joints\.A2.*redundant"):
        build_mechanism(_resolve(block))


def test_unassemblable_geometry_is_named_at_build():
    block = _four_bar()
    block["joints"]["D"]["at"] = [0.6, 0.0]  # coupler + rocker cannot reach D
    with pytest.raises(ConfigError, match=r"mechanisms\.m\.joints.*cannot be assembled"):
        build_mechanism(_resolve(block))


def test_cli_exit_2_on_a_bad_general_block(capsys, tmp_path):
    cfg = {"mechanisms": {"m": _edit(_four_bar(), "joints.C.points", ["coupler.b", "rockr.tip"])}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    code = main(["mechanism", "--config", str(path), "--case", "m", "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "mechanisms.m.joints.C.points.1" in err and "rockr.tip" in err


def _beam_wall(through: list, direction: list) -> dict:
    """An ANCF pendulum (0.5 m, held horizontal) whose tip disc (r = 0.01 m) may strike a wall:
    the line through ``through`` along ``direction`` (normal: the direction turned +90 deg)."""
    return {
        "kind": "general",
        "t_end": 0.01,
        "sample_dt": 1.0e-3,
        "solver": {"dt": 1.0e-4, "dt_contact": 1.0e-5, "step_control": True},
        "bodies": {
            "arm": {
                "type": "beam",
                "origin": [0.0, 0.0],
                "beam": {"length": 0.5, "width": 0.01, "height": 0.01},
                "material": {"E0": 2.0e9, "rho": 7800.0},
                "mesh": {"n_elements": 4},
            }
        },
        "joints": {"pin": {"type": "ground-pin", "point": "arm.start", "at": [0.0, 0.0]}},
        "forces": {"gravity": {"type": "gravity"}},
        "contacts": {
            "wall": {
                "type": "point-line",
                "points": ["arm.end"],
                "radius": 0.01,
                "through": through,
                "direction": direction,
                "contact": {"law": "hunt-crossley", "K": 1.0e8, "restitution": 0.8},
            }
        },
    }


def test_a_contact_that_penetrates_at_the_start_is_named(capsys, tmp_path):
    """A wall placed through the beam (the tip disc 0.21 m on its wrong side) is refused, naming
    the contact and the depth, CLI exit 2 with nothing written; a disc that touches the wall
    (gap 0 up to round-off) is a valid start."""
    bad = _beam_wall([0.3, 0.0], [0.0, 1.0])
    with pytest.raises(ConfigError, match=r"mechanisms\.m\.contacts\.wall.*penetrates 0\.21 m"):
        build_mechanism(_resolve(bad))
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"mechanisms": {"m": bad}}))
    out = tmp_path / "out.nc"
    code = main(["mechanism", "--config", str(path), "--case", "m", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "contacts.wall" in err and not out.exists()
    touching = build_mechanism(_resolve(_beam_wall([0.51, 0.0], [0.0, 1.0])))
    gap = touching.system.contact_gaps(touching.q0)[0]
    assert abs(gap) < 64 * np.finfo(float).eps


def _disc_over(kind: str, r: float, gap: float) -> dict:
    """A free rigid disc (radius ``r``) ``gap`` above the ground line y = 0 (``point-line``)
    or above a ground disc of radius 0.1 m at the origin (``circle-circle``)."""
    if kind == "point-line":
        y = r + gap
        contact = {"type": kind, "points": ["ball.cm"], "radius": r, "through": [0.0, 0.0]}
        contact["direction"] = [1.0, 0.0]  # normal (0, 1): the ball's side is y > 0
    else:
        y = r + 0.1 + gap
        contact = {"type": kind, "points": ["ball.cm", [0.0, 0.0]], "radii": [r, 0.1]}
    contact["contact"] = {"law": "hunt-crossley", "K": 1.0e8, "restitution": 0.7}
    return {
        "kind": "general",
        "t_end": 0.01,
        "sample_dt": 1.0e-3,
        "solver": {"dt": 1.0e-4, "dt_contact": 1.0e-6, "step_control": True},
        "bodies": {"ball": {"type": "rigid", "mass": 0.1, "inertia": 1.0e-5, "position": [0.0, y]}},
        "forces": {"gravity": {"type": "gravity"}},
        "contacts": {"c": contact},
    }


@settings(max_examples=40, **HYPOTHESIS_SETTINGS)
@given(
    kind=st.sampled_from(["point-line", "circle-circle"]),
    r=st.floats(1.0e-3, 0.1),
    share=st.floats(-1.0, 1.0).filter(lambda s: abs(s) >= 1.0e-6),
)
def test_a_start_is_refused_exactly_when_a_contact_overlaps(kind, r, share):
    """Over the contacts' documented range: a start is refused iff the disc overlaps (gap < 0;
    gaps of at least 1e-6 r = 1e-9 m, far above the assembly's round-off of ~1e-14 m), and
    the message gives the depth to its six digits."""
    gap = share * r
    spec = _resolve(_disc_over(kind, r, gap))
    if gap > 0:
        mech = build_mechanism(spec)
        # the round-off of y = r (+ 0.1) + gap and of the gap back from it: a few eps |y| < 0.3 m
        assert mech.system.contact_gaps(mech.q0)[0] == pytest.approx(gap, rel=0, abs=8 * EPS * 0.3)
        return
    with pytest.raises(
        ConfigError, match=r"mechanisms\.m\.contacts\.c': the contact 'c' penetr"
    ) as e:
        build_mechanism(spec)
    depth = float(re.search(r"penetrates (\S+) m", str(e.value))[1])
    assert depth == pytest.approx(-gap, rel=1e-5)


def test_guess_is_assembled_onto_the_joints():
    """Rough guesses (the shipped ones, a few mm and 0.01 rad off) end on the joints: the
    distances between pinned markers vanish to round-off (a few eps times the 0.25 m size)."""
    mech = build_mechanism(resolve_mechanism(CFG, "four_bar"))
    q = mech.q0
    pos = {k: p.position(q) for k, p in mech.markers.items()}
    for a, b in (("crank.tip", "coupler.a"), ("coupler.b", "rocker.tip")):
        assert np.linalg.norm(pos[a] - pos[b]) < 16 * np.finfo(float).eps * 0.25
    assert np.linalg.norm(pos["rocker.pivot"] - (0.25, 0.0)) < 16 * np.finfo(float).eps * 0.25
    assert pos["rocker.tip"][1] > 0.0  # C above the x axis, as guessed


def _general_slider_crank(journal: str) -> dict:
    """slider_crank_clearance written by hand as a general block."""
    sc = resolve_mechanism(CFG, "slider_crank_clearance")
    cl = dict(sc.resolved["clearance"])
    return {
        "kind": "general",
        "t_end": 0.002,
        "integrator": "generalized-alpha",
        "sample_dt": 1.0e-5,
        "solver": dict(sc.resolved["solver"]),
        "bodies": {
            "crank": {
                "type": "rigid",
                "mass": 0.30,
                "inertia": 1.0e-5,
                "position": [0.025, 0.0],
                "angular_velocity": sc.omega,
                "markers": {"pivot": [-0.025, 0.0], "tip": [0.025, 0.0]},
            },
            "rod": {
                "type": "rigid",
                "mass": 0.21,
                "inertia": 2.5e-4,
                "position": [0.11, 0.0],
                "markers": {"a": [-0.06, 0.0], "b": [0.06, 0.0]},
            },
            "slider": {"type": "rigid", "mass": 0.14, "inertia": 1.0e-5, "position": [0.17, 0.0]},
        },
        "joints": {
            "pivot": {"type": "ground-pin", "point": "crank.pivot", "at": [0.0, 0.0]},
            "drive": {"type": "driver", "body": "crank", "omega": sc.omega},
            "crank_pin": {"type": "revolute", "points": ["crank.tip", "rod.a"]},
            "wrist_pin": {
                "type": "revolute",
                "points": ["rod.b", "slider.cm"],
                "clearance": {
                    "journal": journal,
                    **{
                        k: cl[k]
                        for k in (
                            "bearing_radius",
                            "journal_radius",
                            "E",
                            "nu",
                            "contact",
                            "friction",
                        )
                    },
                },
            },
            "slider_guide": {"type": "prismatic", "point": "slider.cm"},
        },
        "forces": {"gravity": {"type": "gravity"}},
    }


def test_preset_equals_its_general_description():
    """The slider-crank preset with a clearance and the same mechanism written as a general
    block build the same system (bodies, rows, force tables) and start from the same state."""
    preset = build_mechanism(resolve_mechanism(CFG, "slider_crank_clearance"))
    general = build_mechanism(_resolve(_general_slider_crank("slider")))
    sp, sg = preset.system, general.system
    assert sp.n == sg.n and sp.row_labels == sg.row_labels
    np.testing.assert_array_equal(sp.ei, sg.ei)
    np.testing.assert_array_equal(sp.ef, sg.ef)
    np.testing.assert_array_equal(sp.fei, sg.fei)
    np.testing.assert_array_equal(sp.mlb, sg.mlb)
    np.testing.assert_allclose(preset.q0, general.q0, rtol=0, atol=4 * np.finfo(float).eps * 0.17)
    np.testing.assert_allclose(preset.v0, general.v0, rtol=0, atol=1e-12 * 26.2)
    # the laws' parameters: the same but for the impact speed estimate (the preset's crank
    # pin speed |omega| r; the general one the fastest marker's: the same point, to round-off)
    np.testing.assert_allclose(sp.fef, sg.fef, rtol=1e-14)


def test_clearance_journal_side_is_the_users_choice():
    """journal: rod swaps the circles: the bearing (first point, larger radius) is then on the
    slider and the journal on the rod; the preset's default keeps the journal on the slider."""
    on_rod = build_mechanism(_resolve(_general_slider_crank("rod"))).contacts["wrist_pin"]
    on_slider = build_mechanism(_resolve(_general_slider_crank("slider"))).contacts["wrist_pin"]
    assert (on_rod.p.body.name, on_rod.q.body.name) == ("slider", "rod")
    assert (on_slider.p.body.name, on_slider.q.body.name) == ("rod", "slider")
    sc = resolve_mechanism(CFG, "slider_crank_clearance").with_overrides(
        {"clearance.journal": "rod"}
    )
    preset = build_mechanism(sc).contact
    assert (preset.p.body.name, preset.q.body.name) == ("slider", "rod")
    gen = expand(sc)
    assert gen.joints["wrist_pin"]["clearance"]["journal"] == "rod"


def test_tabulated_driver_of_a_linear_angle_equals_the_constant_speed_driver():
    """``profile: table`` (a cubic spline through the rows) with theta = theta0 + omega t
    against ``profile: constant`` on the four-bar: the spline reproduces a linear function, so
    the runs differ by round-off only. Bound: the spline's values, slopes and curvatures are
    those of the line to a few ulps of theta (at most 1 rad) over h^0, h^1, h^2 (h the rows'
    spacing, 1 ms: about 2e-10 rad/s^2), which moves each step by a few ulps of the
    coordinates (positions and angles), summed over the steps: 8 eps x steps x the largest
    coordinate, as for a Python driver (test_mbs_system)."""
    const = {**_four_bar(), "t_end": 0.006}
    const["joints"]["drive"]["theta0"] = 0.3
    table = copy.deepcopy(const)
    t = np.linspace(0.0, 0.007, 8)
    omega = const["joints"]["drive"]["omega"]
    drive = {"profile": "table", "table": {"t": t.tolist(), "theta": (0.3 + omega * t).tolist()}}
    table["joints"]["drive"].update(drive)
    del table["joints"]["drive"]["omega"]
    _, a = run_mechanism(_resolve(const, "const"))
    _, b = run_mechanism(_resolve(table, "table"))
    qa, qb = ([d[k].values for k in ("body_x", "body_y", "body_theta")] for d in (a, b))
    scale = max(np.abs(v).max() for v in qa)
    steps = round(0.006 / const["solver"]["dt"])
    assert np.ptp(a["body_theta"].sel(body="crank").values) > 0.5  # the crank turns (0.6 rad)
    err = max(np.abs(x - y).max() for x, y in zip(qa, qb, strict=True))
    assert err <= 8 * np.finfo(float).eps * steps * scale, err
