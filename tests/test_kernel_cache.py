"""The compiled kernels' cache is keyed by the package's source (ancf_beam.kernel_cache): a
change of any source file, not only of the file defining a kernel, selects a fresh cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ancf_beam.kernel_cache import (
    PACKAGE,
    cache_files,
    cache_root,
    source_digest,
    use_source_keyed_cache,
)
from ancf_beam.solvers.static import DENSE_MAX_ELEMENTS


def test_digest_changes_with_any_source_file(tmp_path):
    tree = tmp_path / "pkg"
    (tree / "mbs").mkdir(parents=True)
    (tree / "mbs" / "core.py").write_text("x = 1\n")
    (tree / "mbs" / "adaptive.py").write_text("from core import x\n")
    before = source_digest(tree)
    assert source_digest(tree) == before  # deterministic
    (tree / "mbs" / "core.py").write_text("x = 2\n")  # a callee, not the kernel's own file
    assert source_digest(tree) != before
    (tree / "mbs" / "core.py").write_text("x = 1\n")
    assert source_digest(tree) == before
    (tree / "mbs" / "core.py").rename(tree / "mbs" / "core2.py")  # paths count too
    assert source_digest(tree) != before


def test_a_set_numba_cache_dir_wins_and_the_default_is_keyed(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    assert use_source_keyed_cache(env) is None and env["NUMBA_CACHE_DIR"] == str(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    path = use_source_keyed_cache(env)
    assert path == env["NUMBA_CACHE_DIR"] == str(tmp_path / "ancf_beam" / "numba" / source_digest())
    assert cache_root(env) == tmp_path / "ancf_beam" / "numba"


def test_numba_uses_the_keyed_directory(tmp_path):
    """``import ancf_beam`` before numba: numba's cache directory is the keyed one."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    code = "import ancf_beam, numba; print(numba.config.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(tmp_path / "ancf_beam" / "numba" / source_digest(PACKAGE))
    shutil.rmtree(tmp_path, ignore_errors=True)


def _cli_static(cache: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    # above the static solve's dense bound: the compiled path (a smaller mesh loads no numba)
    big = f"mesh.n_elements={DENSE_MAX_ELEMENTS + 1}"
    cmd = [sys.executable, "-m", "ancf_beam.cli", "static", "--json", "--set", big]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_compile_time_is_reported_apart_from_the_run(tmp_path):
    """``compile_s`` holds the compilation, ``wall_s`` the run alone: with an empty cache the
    command compiles its kernels (cache files appear) and ``wall_s`` stays near the run time of
    the same command on the filled cache, which compiles nothing (no new cache file).

    Bound: compiling the static kernels costs seconds to minutes of CPU, the run itself about
    0.1 s; a ``wall_s`` that still held the compilation would exceed the warm run's by far more
    than the generous allowance of 10x plus 2 s (noise of a shared machine)."""
    cold = _cli_static(tmp_path)
    files_cold = cache_files(tmp_path)
    warm = _cli_static(tmp_path)
    assert cache_files(tmp_path) == files_cold  # the second process compiled nothing
    assert files_cold["nbc"] > 0
    for rec in (cold, warm):
        assert {"wall_s", "compile_s"} <= rec.keys()
        assert rec["wall_s"] > 0 and rec["compile_s"] > 0
    assert cold["tip_y"] == warm["tip_y"]
    assert cold["compile_s"] > warm["compile_s"]  # compiling vs loading the same kernels
    assert cold["wall_s"] <= 10 * warm["wall_s"] + 2.0, (cold, warm)
    assert cold["compile_s"] > cold["wall_s"]


def test_run_clock_stands_still_while_numba_compiles():
    """A kernel compiled inside a timed interval adds to compile_seconds, not to run_clock."""
    import numba

    from ancf_beam.kernel_cache import compile_seconds, install_compile_clock, run_clock

    install_compile_clock()

    @numba.njit(cache=False)
    def fresh(x):  # a new function object: always compiled here
        s = 0.0
        for i in range(x.size):
            s += np.sin(x[i]) ** 2
        return s

    c0, r0, t0 = compile_seconds(), run_clock(), time.perf_counter()
    fresh(np.ones(3))
    c, r, t = compile_seconds() - c0, run_clock() - r0, time.perf_counter() - t0
    assert c > 0
    assert r >= 0
    assert abs((c + r) - t) < 1e-3  # run + compile = elapsed (clock reads microseconds apart)
    c1 = compile_seconds()
    fresh(np.ones(3))  # compiled: nothing more
    assert compile_seconds() == c1
