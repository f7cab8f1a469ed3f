"""xarray Datasets with provenance, written atomically to NetCDF.

Every dataset carries as attributes: each resolved parameter (``param.<dotted.key>``), the case
name, the package version, the git commit (when the package runs from a git checkout), a hash of
the resolved configuration, the creation time, and whatever solver settings and wall time the
caller adds. Files are written to a temporary name in the target directory and renamed, so a
failed or interrupted run never leaves a half-written file.
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ancf_beam import __version__
from ancf_beam.errors import InputFileError, OutputFileError
from ancf_beam.kernel_cache import compile_seconds
from ancf_beam.specs import CaseSpec

if TYPE_CHECKING:  # xarray is imported where a file is read or written (start-up time)
    import xarray as xr

__all__ = [
    "InputFileError",
    "OutputFileError",
    "free_bytes",
    "git_commit",
    "log_to_file",
    "read_netcdf",
    "remove_stale_temporaries",
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


def check_finite(summary: Mapping[str, Any], ds: Any = None, optional: Iterable[str] = ()) -> None:
    """Raise :class:`~ancf_beam.results.NonFiniteResultError` naming the first quantity of
    ``summary`` (numbers, arrays, lists) or of the Dataset ``ds`` (float data variables and
    coordinates) that holds NaN or an infinity. ``optional``: names whose NaN means "not
    available" (e.g. ``dt_measured`` without ``--measure``), not a failure."""
    from ancf_beam.results import NonFiniteResultError

    skip = set(optional)

    def bad(v: Any) -> bool:
        if isinstance(v, bool | np.bool_ | str) or v is None:
            return False
        if isinstance(v, Mapping):
            return any(bad(x) for x in v.values())
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            return False
        return not bool(np.all(np.isfinite(a)))

    items = [(k, v) for k, v in summary.items()]
    if ds is not None:
        items += [(k, v.values) for k, v in ds.data_vars.items() if v.dtype.kind in "fc"]
        items += [(k, v.values) for k, v in ds.coords.items() if v.dtype.kind in "fc"]
    for name, value in items:
        if name not in skip and bad(value):
            raise NonFiniteResultError(
                f"the result {name!r} is not finite (NaN or infinite): the solver lost the "
                f"solution; nothing was written"
            )


def provenance_attrs(case: CaseSpec, **extra: Any) -> dict[str, Any]:
    """Attributes recording everything needed to reproduce a result; ``compile_s`` is the time
    this process spent compiling or loading numba kernels so far (``wall_s``, when given, is
    the run alone: :func:`ancf_beam.kernel_cache.run_clock`)."""
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
    attrs["compile_s"] = compile_seconds()
    for key, value in extra.items():
        attrs[key] = _attr_value(value)
    return attrs


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Delete the temporary files that interrupted writes of ``path`` left behind.

    A temporary is ``.<name>.<pid>.<random>.tmp`` next to ``path``; it is stale when the process
    ``<pid>`` no longer exists (a killed run), so a concurrent writer's file is left alone.
    Temporaries of the older ``.<name>.<random>.tmp`` form carry no pid and are always stale."""
    path = Path(path)
    removed = []
    prefix = f".{path.name}."
    if not path.parent.is_dir():
        return removed
    for tmp in path.parent.iterdir():
        name = tmp.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix) :].split(".", 1)[0]
        if pid_text.isdigit() and "." in name[len(prefix) : -4] and _pid_alive(int(pid_text)):
            continue
        try:
            tmp.unlink()
            removed.append(tmp)
        except FileNotFoundError:  # removed by someone else meanwhile
            pass
    return removed


def free_bytes(directory: str | os.PathLike) -> int | None:
    """Bytes this process may still write on the file system of ``directory`` (root may also
    use the blocks reserved for it), or None when the file system does not say."""
    try:
        st = os.statvfs(directory)
    except OSError:
        return None
    blocks = st.f_bfree if os.geteuid() == 0 else st.f_bavail
    return blocks * st.f_frsize


def _write_failure(path: Path, ds: xr.Dataset, exc: BaseException) -> OutputFileError:
    """The error of a failed write of ``ds`` to ``path``: the file, the cause and, from the file
    system itself rather than the library's error code, whether the disk is full (less free
    space than the data, or than 1 MiB, at the moment of the failure)."""
    cause = str(exc) if isinstance(exc, OSError) else f"{exc.__class__.__name__}: {exc}"
    free = free_bytes(path.parent)
    full = isinstance(exc, OSError) and exc.errno == errno.ENOSPC
    if full or free is not None and free < max(ds.nbytes, 2**20):
        left = "no space left" if free is None else f"{free:,} bytes free"
        cause = (
            f"the file system of '{path.parent}' is full ({left}; the data alone are "
            f"{ds.nbytes:,} bytes). The library reported: {cause}"
        )
    return OutputFileError(f"cannot write NetCDF file '{path}': {cause}")


def _new_temporary(path: Path) -> Path:
    """An empty new file ``.<name>.<pid>.<random>.tmp`` next to ``path``, created with mode
    ``0o666`` less the umask (as ``open`` creates files; :func:`tempfile.mkstemp` would make it
    0600, and the rename would keep that)."""
    for _ in range(100):  # a name collision needs the same pid and 32 random bits: never twice
        tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(errno.EEXIST, f"no free temporary name next to '{path}'")


def write_netcdf(ds: xr.Dataset, path: str | os.PathLike) -> Path:
    """Write ``ds`` to ``path`` atomically (temporary file + rename); first remove the stale
    temporaries of earlier, killed writes of the same file (:func:`remove_stale_temporaries`).
    The file gets the permissions of any new file (``0o666`` less the umask). A failure raises
    :class:`OutputFileError` naming the file (a full disk named as such) and leaves no file."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path)
        tmp = _new_temporary(path)
    except OSError as exc:
        raise _write_failure(path, ds, exc) from exc
    try:
        ds.to_netcdf(tmp, engine="netcdf4")
        os.replace(tmp, path)
    except BaseException as exc:
        # netCDF4 raises RuntimeError ("HDF error"), OSError, ...: diagnosed before the partial
        # temporary is removed, while a full disk is still full
        failure = _write_failure(path, ds, exc) if isinstance(exc, Exception) else None
        if os.path.exists(tmp):
            os.unlink(tmp)
        if failure is None:
            raise
        raise failure from exc
    return path


def read_netcdf(path: str | os.PathLike) -> xr.Dataset:
    """Load a NetCDF file into memory; a missing, truncated or foreign file raises
    :class:`InputFileError` naming it (not a bare HDF5 error)."""
    import xarray as xr

    try:
        return xr.load_dataset(path, engine="netcdf4")
    except Exception as exc:  # netCDF4/HDF5 raise OSError, ValueError or RuntimeError
        raise InputFileError(
            f"cannot read NetCDF file '{path}': {exc.__class__.__name__}: {exc} (missing, "
            "truncated or not NetCDF; delete it and rerun the job that writes it)"
        ) from exc


def log_to_file(path: str | os.PathLike, level: int = logging.INFO) -> None:
    """Send this process's log records to ``path`` and record an uncaught exception there too
    (its traceback still goes to stderr): a script that fails leaves its error in its log."""
    logging.basicConfig(
        filename=os.fspath(path),
        level=level,
        force=True,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    previous = sys.excepthook

    def _hook(kind, value, tb):
        if not issubclass(kind, KeyboardInterrupt):
            logging.getLogger("ancf_beam").critical(
                "uncaught %s: %s", kind.__name__, value, exc_info=(kind, value, tb)
            )
            logging.shutdown()
        previous(kind, value, tb)

    sys.excepthook = _hook


#: Modules that describe a run but compute nothing in it: left out of the fingerprint, so that
#: editing them does not re-run every compute job (the pipeline's ro_crate rule takes
#: provenance.py as an input file instead).
NOT_FINGERPRINTED = ("provenance.py",)


def package_fingerprint() -> str:
    """``'<version>+<sha256[:12]>'`` of every ``*.py`` file of the installed package source
    (but ``NOT_FINGERPRINTED``)."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).as_posix() in NOT_FINGERPRINTED:
            continue
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return f"{__version__}+{h.hexdigest()[:12]}"
