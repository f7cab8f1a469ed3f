"""xarray Datasets with provenance, written atomically to NetCDF.

Every dataset carries as attributes: each resolved parameter (``param.<dotted.key>``), the case
name, the package version, the git commit (when the package runs from a git checkout), a hash of
the resolved configuration, the creation time, and whatever solver settings and wall time the
caller adds. Files are written to a temporary name in the target directory and renamed, so a
failed or interrupted run never leaves a half-written file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import subprocess
import tempfile
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ancf_beam import __version__
from ancf_beam.config import CaseSpec

__all__ = [
    "git_commit",
    "json_ready",
    "package_fingerprint",
    "provenance_attrs",
    "write_netcdf",
]


@lru_cache(maxsize=1)
def git_commit() -> str:
    """Commit hash of the checkout the package runs from, or ``'unknown'``."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        commit = out.stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "."],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _attr_value(v: Any) -> Any:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int | float | str):
        return v
    if isinstance(v, np.generic):
        return v.item()
    return str(v)


def json_ready(v: Any) -> Any:
    """Plain Python value for JSON: numpy arrays and scalars unwrapped, containers recursed,
    NaN and infinities -> None (JSON has no representation for them)."""
    if isinstance(v, np.ndarray):
        return [json_ready(x) for x in v.tolist()]
    if isinstance(v, Mapping):
        return {k: json_ready(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [json_ready(x) for x in v]
    if isinstance(v, bool | np.bool_):
        return bool(v)
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        v = float(v)
        return v if np.isfinite(v) else None
    return v


def provenance_attrs(case: CaseSpec, **extra: Any) -> dict[str, Any]:
    """Attributes recording everything needed to reproduce a result."""
    attrs: dict[str, Any] = {
        "case": case.name,
        "package": "ancf_beam",
        "package_version": __version__,
        "git_commit": git_commit(),
        "config_hash": case.config_hash,
        "created_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "units": "SI (m, kg, s, N, Pa, rad)",
    }
    for key, value in case.flat().items():
        attrs[f"param.{key}"] = _attr_value(value)
    for key, value in extra.items():
        attrs[key] = _attr_value(value)
    return attrs


def write_netcdf(ds: xr.Dataset, path: str | os.PathLike) -> Path:
    """Write ``ds`` to ``path`` atomically (temporary file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        ds.to_netcdf(tmp, engine="netcdf4")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def package_fingerprint() -> str:
    """``'<version>+<sha256[:12]>'`` of every ``*.py`` file of the installed package source."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return f"{__version__}+{h.hexdigest()[:12]}"
