"""Where numba keeps the compiled kernels: a directory keyed by the package's source.

numba's on-disk cache (``cache=True``) checks only the source file that defines a kernel, not
the kernels it calls in other modules. After an edit or an upgrade of, say,
``ancf_beam/mbs/core.py``, the cached kernels of ``ancf_beam/mbs/adaptive.py`` that inline
core's functions would keep running the old code, silently (a contact element added to
``core.py`` exerted no force in the adaptive integrator until the cache was cleared by hand).
So the cache lives in a directory named after a digest of every source file of the package:
any change of the source starts from an empty cache, an unchanged source reuses its kernels.

The directory is ``$XDG_CACHE_HOME/ancf_beam/numba/<digest>`` (``~/.cache`` without
``XDG_CACHE_HOME``); a ``NUMBA_CACHE_DIR`` already set in the environment wins. Directories of
older sources are left in place (delete them freely: a few tens of MB each).

Compile time is kept apart from run time: :func:`compile_seconds` is the time this process has
spent compiling kernels or loading them from the cache (numba's ``numba:compiler_lock`` events,
which enclose both), and :func:`run_clock` is a clock that stands still meanwhile, so a run's
``wall_s`` measured with it is the run alone; run records carry both (``compile_s``, ``wall_s``).
``python -m ancf_beam.warmup`` compiles (or loads) every kernel the pipeline uses
once, ahead of the jobs (:mod:`ancf_beam.warmup`).
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import MutableMapping
from pathlib import Path

__all__ = [
    "PACKAGE",
    "cache_dir",
    "cache_files",
    "cache_root",
    "compile_seconds",
    "install_compile_clock",
    "run_clock",
    "source_digest",
    "use_source_keyed_cache",
]

PACKAGE = Path(__file__).resolve().parent


def source_digest(root: Path = PACKAGE) -> str:
    """First 16 hex digits of the SHA-256 of every ``*.py`` file under ``root`` (relative path
    and content, in sorted order)."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_root(environ: MutableMapping[str, str] = os.environ) -> Path:
    """``$XDG_CACHE_HOME/ancf_beam/numba`` (``~/.cache`` by default)."""
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ancf_beam" / "numba"


def use_source_keyed_cache(environ: MutableMapping[str, str] = os.environ) -> str | None:
    """Point ``NUMBA_CACHE_DIR`` at the directory of this source (module docstring), unless it
    is set already; returns the directory set, or None. Call it before numba is imported."""
    if environ.get("NUMBA_CACHE_DIR"):
        return None
    path = str(cache_root(environ) / source_digest())
    environ["NUMBA_CACHE_DIR"] = path
    return path


def cache_dir(environ: MutableMapping[str, str] = os.environ) -> Path:
    """The directory numba caches this source's kernels in (``NUMBA_CACHE_DIR`` if set)."""
    return Path(environ.get("NUMBA_CACHE_DIR") or cache_root(environ) / source_digest())


def cache_files(directory: Path | None = None) -> dict[str, int]:
    """Number of cached kernel index (``.nbi``) and data (``.nbc``) files under ``directory``
    (default :func:`cache_dir`): a job that compiled nothing leaves both unchanged."""
    d = cache_dir() if directory is None else Path(directory)
    return {ext: sum(1 for _ in d.rglob(f"*.{ext}")) for ext in ("nbi", "nbc")}


class _CompileClock:
    """Total wall time inside numba's compiler lock: compiling a kernel and loading one from
    the on-disk cache both happen under it (``Dispatcher.compile``). The lock is re-entrant
    (a kernel compiles the kernels it calls), so only the outermost hold is counted."""

    def __init__(self) -> None:
        self.total = 0.0
        self._depth = 0
        self._t0 = 0.0
        self._lock = threading.Lock()

    def on_start(self, event) -> None:
        with self._lock:
            if self._depth == 0:
                self._t0 = time.perf_counter()
            self._depth += 1

    def on_end(self, event) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self.total += time.perf_counter() - self._t0

    def elapsed(self) -> float:
        """Seconds so far, including a hold still in progress."""
        with self._lock:
            now = time.perf_counter() - self._t0 if self._depth else 0.0
            return self.total + now


_CLOCK: _CompileClock | None = None


def install_compile_clock() -> None:
    """Start counting compile/load time in this process (imports numba; idempotent). Call it
    before the first kernel runs: what was compiled earlier is not counted."""
    global _CLOCK
    if _CLOCK is not None:
        return
    from numba.core import event

    clock = _CompileClock()

    class _Listener(event.Listener):
        def on_start(self, ev) -> None:
            clock.on_start(ev)

        def on_end(self, ev) -> None:
            clock.on_end(ev)

    event.register("numba:compiler_lock", _Listener())
    _CLOCK = clock


def compile_seconds() -> float:
    """Seconds this process spent compiling numba kernels or loading them from the cache since
    :func:`install_compile_clock` (0.0 before it, and in a process that never loads numba)."""
    if _CLOCK is None:
        if "numba" in sys.modules:
            install_compile_clock()
        return 0.0
    return _CLOCK.elapsed()


def run_clock() -> float:
    """``time.perf_counter()`` minus :func:`compile_seconds`: differences of it are run time
    without compiling (the ``wall_s`` of run records). Installs the compile clock when numba is
    loaded; a run that loads numba later installs it before its first kernel (the static
    solve's compiled path does), so that a process which never loads numba never imports it."""
    return time.perf_counter() - compile_seconds()
