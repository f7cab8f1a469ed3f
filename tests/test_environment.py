"""The versions that were tested are the versions a fresh machine gets: constraints.txt pins every
direct dependency within pyproject.toml's range, and the conda files are generated from it."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;#]+)", line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return [Requirement(r) for r in reqs]


@pytest.mark.parametrize("req", _requirements(), ids=str)
def test_every_dependency_is_pinned_within_its_range(req):
    pins = _pins()
    key = re.sub(r"[-_.]+", "-", req.name).lower()
    assert key in pins, f"{req.name} is not pinned in constraints.txt (run bash .ci/lock)"
    assert req.specifier.contains(pins[key], prereleases=True), (req, pins[key])


@pytest.mark.parametrize(
    "path, args", [("environment.yml", []), ("workflow/envs/ancf-beam.yaml", ["--workflow"])]
)
def test_conda_files_are_generated_from_the_constraints(path, args):
    out = subprocess.run(
        [sys.executable, str(ROOT / ".ci/environment_yml.py"), *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert (ROOT / path).read_text() == out, f"{path} is stale: run bash .ci/lock"


def test_readme_and_ci_install_with_the_constraints():
    readme = (ROOT / "README.md").read_text()
    installs = re.findall(r"pip install [^\n`]*", readme)
    assert installs and all("-c constraints.txt" in c for c in installs), installs
    assert "-c constraints.txt" in (ROOT / ".ci/run").read_text()
