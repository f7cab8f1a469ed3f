"""The warm-up compiles the variants the config runs: mesh size classes, implicit integrators."""

import copy
from pathlib import Path

import pytest

from ancf_beam.config import IMPLICIT_INTEGRATORS, load_config, resolve_case
from ancf_beam.warmup import DYNAMIC_MESHES, _size_class, _used_integrators, _used_meshes
from ancf_beam.warmup import main as warmup_main

QUICK = str(Path(__file__).resolve().parents[1] / "config" / "quick.yaml")


@pytest.mark.parametrize(
    ("n", "cls"),
    # the force kernel's argument types change at 8 elements (structure of arrays from
    # SOA_MIN_ELEMENTS) and above 64 (rows of SOA_ROW lanes): beam.kernels
    [(1, 0), (7, 0), (8, 1), (16, 1), (57, 1), (64, 1), (65, 2), (72, 2), (200, 2)],
)
def test_size_classes_split_at_the_kernels_thresholds(n, cls):
    assert _size_class(n) == DYNAMIC_MESHES[cls]


def _cases(cfg):
    return [resolve_case(cfg, name) for name in [None, *cfg["cases"]]]


def test_only_the_size_classes_and_integrators_the_config_runs():
    cfg = load_config(QUICK)
    # quick: meshes 2..32 (convergence, critical step up to 64, scaling, identification 20)
    assert _used_meshes(cfg, _cases(cfg)) == [4, 16]
    assert _used_integrators(cfg, _cases(cfg)) == list(IMPLICIT_INTEGRATORS)  # integrators study
    big = copy.deepcopy(cfg)
    big["pipeline"]["scaling"]["meshes"] = [8, 16, 128]
    assert _used_meshes(big, _cases(big)) == [4, 16, 72]
    off = copy.deepcopy(cfg)
    off["pipeline"]["integrators"]["enabled"] = False
    off["pipeline"]["scaling"]["enabled"] = False
    # the case ga_damped runs generalized-alpha, every other quick case central differences
    assert _used_integrators(off, _cases(off)) == ["generalized-alpha"]
    del off["cases"]["ga_damped"]
    assert _used_integrators(off, _cases(off)) == []
    off["pipeline"]["scaling"]["enabled"] = True
    assert _used_integrators(off, _cases(off)) == ["generalized-alpha"]


def test_unknown_group_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        warmup_main(["--config", QUICK, "--group", "nonsense"])
    assert exc.value.code == 2
    assert "--group" in capsys.readouterr().err


def test_a_case_that_cannot_be_solved_is_recorded_not_raised():
    """The warm-up runs every case's statics; a case whose static solve cannot converge must
    fail in its own pipeline job (naming the rule), not in the warm-up that every job waits for.
    """
    from ancf_beam.errors import ConvergenceError
    from ancf_beam.warmup import warm_kernels

    cfg = load_config(QUICK)
    # one Newton iteration, no cutbacks, a very soft beam: the static solve cannot converge
    cfg["cases"] = {
        "bad": {"material": {"E0": 2.07e6}, "static": {"max_iterations": 1, "max_cutbacks": 0}}
    }
    with pytest.raises(ConvergenceError):  # the case does fail when solved on its own
        from ancf_beam.analyses import run_static

        run_static(resolve_case(cfg, "bad"))
    record = warm_kernels(cfg, log=lambda m: None, groups=["beam_static"])
    failed = [f for f in record["failed_runs"] if f["run"] == "beam.static"]
    assert len(failed) == 1 and "Error" in failed[0]["error"], record["failed_runs"]
    assert "beam.modal" in record["groups"]  # and the warm-up went on after it


@pytest.mark.parametrize(("n", "entries"), [(0, 2), (1, 2), (2, 2), (3, 4), (4, 4), (5, 8)])
def test_beam_entries_are_padded_to_few_counts(n, entries):
    from ancf_beam.mbs.system import beam_entries

    assert beam_entries(n) == entries


def test_rigid_one_beam_and_two_beam_mechanisms_share_the_kernels_types():
    """The beam entries' count is part of every multibody kernel's signature (a numba tuple
    type): mechanisms with no, one and two beams must pass one type, so the warm-up compiles
    the multibody kernels once for all of them (a second count costs about a minute of CPU)."""
    import numba

    from ancf_beam.config import resolve_mechanism
    from ancf_beam.mbs.mechanisms import build_mechanism

    cfg = load_config(Path(QUICK).with_name("config.yaml"))
    types = {}
    for name in ("slider_crank_rigid", "pendulum_berzeri", "double_pendulum_ancf"):
        system = build_mechanism(resolve_mechanism(cfg, name)).system
        types[name] = (len(system.beams), numba.typeof(system.data))
    assert sorted(nb for nb, _ in types.values()) == [0, 1, 2]
    assert len({t for _, t in types.values()}) == 1, types
