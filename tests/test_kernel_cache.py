"""The compiled kernels' cache is keyed by the package's source (ancf_beam.kernel_cache): a
change of any source file, not only of the file defining a kernel, selects a fresh cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from ancf_beam.kernel_cache import PACKAGE, cache_root, source_digest, use_source_keyed_cache


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
