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
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import MutableMapping
from pathlib import Path

__all__ = ["PACKAGE", "cache_root", "source_digest", "use_source_keyed_cache"]

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
