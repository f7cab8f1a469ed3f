"""Configuration: merging, validation messages naming key, value and allowed range."""

from __future__ import annotations

import pytest

from ancf_beam.config import ConfigError, load_config, parse_set, resolve_case


@pytest.mark.parametrize(
    "key,value,words",
    [
        ("defect.lam", 1.0, ["defect.lam", "1.0", "[0, 1)"]),
        ("defect.lam", -0.1, ["defect.lam", "-0.1", "[0, 1)"]),
        ("defect.n", 0.0, ["defect.n", "> 0"]),
        ("defect.n", -2, ["defect.n", "-2", "> 0"]),
        ("beam.length", 0.0, ["beam.length", "[0.001, 1000]"]),
        ("beam.width", -0.02, ["beam.width", "[1e-06, 10]"]),
        ("beam.height", 0, ["beam.height", "[1e-06, 10]"]),
        ("material.E0", -1.0, ["material.E0", "[1000, 1e+15]"]),
        ("material.rho", 0.0, ["material.rho", "[1, 100000]"]),
        ("mesh.n_elements", 0, ["mesh.n_elements", "0", "[1, 10000]"]),
        ("mesh.n_elements", 2.5, ["mesh.n_elements", "2.5", "integer"]),
        ("defect.mapping", "linear", ["defect.mapping", "linear", "gauss", "nodal", "element"]),
        ("defect.rho.lam", 1.2, ["defect.rho.lam", "[0, 1)"]),
    ],
)
def test_bad_values_name_key_value_and_range(key, value, words):
    with pytest.raises(ConfigError) as err:
        resolve_case({}, None, {key: value})
    msg = str(err.value)
    for w in words:
        assert w in msg, msg


def test_unknown_keys_are_errors_everywhere():
    with pytest.raises(ConfigError, match="mesh.n_elemnts"):
        resolve_case({}, None, {"mesh.n_elemnts": 3})
    with pytest.raises(ConfigError, match="materal"):
        resolve_case({"materal": {"E0": 1.0}})
    with pytest.raises(ConfigError, match="cases.c1.defect.lamda"):
        resolve_case({"cases": {"c1": {"defect": {"lamda": 0.2}}}}, "c1")


def test_unknown_case_lists_available():
    with pytest.raises(ConfigError, match="unknown case 'nope'.*a, b"):
        resolve_case({"cases": {"a": {}, "b": {}}}, "nope")


def test_merge_order_defaults_config_case_set():
    cfg = {"mesh": {"n_elements": 8}, "cases": {"c": {"defect": {"lam": 0.3}}}}
    c = resolve_case(cfg, "c", {"defect.n": 2})
    assert c.mesh.n_elements == 8
    assert c.defect.E.lam == 0.3 and c.defect.E.n == 2.0
    assert c.name == "c"
    assert c.material.E0 == 2.07e11  # built-in default


def test_config_hash_changes_with_parameters():
    a = resolve_case({}, None, {"defect.lam": 0.3})
    b = resolve_case({}, None, {"defect.lam": 0.3})
    c = resolve_case({}, None, {"defect.lam": 0.31})
    assert a.config_hash == b.config_hash != c.config_hash


def test_parse_set_yaml_values():
    assert parse_set(["a.b=3", "c=0.5", "d=gauss", "e=null"]) == {
        "a.b": 3,
        "c": 0.5,
        "d": "gauss",
        "e": None,
    }
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_set(["novalue"])


def test_repository_config_is_valid_and_has_the_matrix():
    cfg = load_config()
    names = list(cfg["cases"])
    for required in ["uniform", "lam0.3_n1", "lam0.6_n1", "lam0.6_n2", "lam0.5_n2"]:
        assert required in names
    for name in names:
        resolve_case(cfg, name)
