"""Workflow Run RO-Crate of a pipeline run (https://w3id.org/ro/wfrun/workflow/0.5).

``build_run_crate`` writes ``ro-crate-metadata.json`` into a crate directory that already holds
every file it describes: the workflow definition (main entity, a ``ComputationalWorkflow``), the
run's inputs (config files, resolved cases) and its outputs (NetCDF results, reports). One
``CreateAction`` ties them together: the workflow and the software that ran it as ``instrument``,
the inputs as ``object``, the outputs as ``result``, start and end time. The crate follows
RO-Crate 1.1, the version the Workflow Run Crate 0.5 profile is defined on.

Plain paths and metadata in, one JSON file out: nothing here knows about Snakemake (the
pipeline's ``ro_crate`` rule gathers the files). ``rocrate`` is imported on use, so the rest of
the package does not need it.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import mimetypes
import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CRATE_PROFILES",
    "RunFile",
    "Software",
    "build_run_crate",
    "media_type",
    "software_versions",
]

#: Profiles the root dataset conforms to (the Workflow Run Crate and the two it builds on).
CRATE_PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": ("Process Run Crate", "0.5"),
    "https://w3id.org/ro/wfrun/workflow/0.5": ("Workflow Run Crate", "0.5"),
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0": ("Workflow RO-Crate", "1.0"),
}
RO_CRATE_VERSION = "1.1"

#: Distributions whose versions a run records (import name of ``ancf_beam``: ``ancf-beam``).
DEFAULT_DISTRIBUTIONS = ("numpy", "scipy", "numba", "xarray", "snakemake", "ancf-beam")

_URLS = {"python": "https://www.python.org/"}
#: Software not published on PyPI: a crate-local identifier instead of a release page.
LOCAL = ("ancf-beam",)


@dataclass(frozen=True)
class Software:
    """One piece of software that ran: name, version, home page (None: none known) and an
    identifier (None: its PyPI release page, or python.org's for Python itself)."""

    name: str
    version: str
    url: str | None = None
    identifier: str | None = None

    @property
    def id(self) -> str:
        if self.identifier:
            return self.identifier
        if self.name == "python":
            return (
                f"https://www.python.org/downloads/release/python-{self.version.replace('.', '')}/"
            )
        return f"https://pypi.org/project/{self.name}/{self.version}/"


@dataclass(frozen=True)
class RunFile:
    """A file of the crate: ``path`` relative to the crate directory, a name, a format, and the
    formal parameter (``param``) it is an example of."""

    path: str
    name: str
    param: str
    encoding_format: str | None = None
    description: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


def software_versions(distributions: Iterable[str] = DEFAULT_DISTRIBUTIONS) -> list[Software]:
    """Python and the installed versions of ``distributions`` ('not installed' if missing)."""
    out = [Software("python", platform.python_version(), _URLS["python"])]
    for dist in distributions:
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        if dist == "ancf-beam":  # the code that runs, installed or on the path
            from ancf_beam import __version__ as version
        if dist in LOCAL:
            out.append(Software(dist, version, None, f"#software-{dist}"))
        else:
            out.append(Software(dist, version, f"https://pypi.org/project/{dist}/"))
    return out


#: Media types of the pipeline's file kinds that ``mimetypes`` does not know.
MEDIA_TYPES = {
    ".nc": "application/x-netcdf",
    ".smk": "text/plain",
    ".ipynb": "application/x-ipynb+json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".rst": "text/x-rst",
}


def media_type(path: str | Path) -> str:
    """Media type of ``path`` by its suffix (``Snakefile``: text/plain)."""
    suffix = Path(path).suffix.lower()
    if suffix in MEDIA_TYPES:
        return MEDIA_TYPES[suffix]
    return mimetypes.guess_type(str(path))[0] or "text/plain"


def _iso(t: _dt.datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.UTC)
    return t.astimezone(_dt.UTC).isoformat(timespec="seconds")


def _inside(root: Path, rel: str) -> str:
    path = (root / rel).resolve()
    if not path.is_relative_to(root.resolve()):
        raise ValueError(f"crate file '{rel}' lies outside the crate directory {root}")
    if not path.exists():
        raise FileNotFoundError(f"crate file '{rel}' does not exist under {root}")
    return Path(rel).as_posix() + ("/" if path.is_dir() else "")


def build_run_crate(
    crate_dir: str | Path,
    *,
    workflow: str,
    workflow_parts: Sequence[str] = (),
    engine: Software,
    inputs: Sequence[RunFile],
    outputs: Sequence[RunFile],
    parameters: Mapping[str, tuple[str, str]],
    software: Sequence[Software],
    git_commit: str,
    start: _dt.datetime,
    end: _dt.datetime,
    name: str,
    description: str,
    license: str = "https://spdx.org/licenses/MIT",
    readme: str | None = None,
    workflow_name: str = "Snakemake workflow",
) -> Path:
    """Write ``crate_dir/ro-crate-metadata.json`` and return its path.

    ``workflow`` (the main workflow file) and ``workflow_parts`` (its rule files, scripts,
    ...) are paths relative to ``crate_dir``, like every ``RunFile``; all must exist there.
    ``parameters`` maps each formal parameter id (the ``RunFile.param`` values) to
    ``(name, additionalType)``, e.g. ``{"configfile": ("config file", "File")}``; the
    workflow's ``input`` are those of ``inputs``, its ``output`` those of ``outputs``.
    ``engine`` is the workflow language's implementation (its version goes on the
    ``ComputerLanguage``); ``software`` everything else that ran. ``git_commit`` is the version
    of the workflow and of the library. ``readme`` (Markdown), if given, is written to
    ``crate_dir/README.md`` and described as being about the crate (Workflow RO-Crate).
    ``name`` names the crate and its ``CreateAction``, ``workflow_name`` the workflow.
    """
    from rocrate.rocrate import ROCrate

    root = Path(crate_dir)
    crate = ROCrate(version=RO_CRATE_VERSION)
    crate.name = name
    crate.description = description
    crate.license = _context(crate, license, {"@type": "CreativeWork", "name": license})
    wf = _add_workflow(crate, root, workflow, engine, git_commit, workflow_name)
    for profile, (title, version) in CRATE_PROFILES.items():
        crate.root_dataset.append_to(
            "conformsTo",
            _context(crate, profile, {"@type": "CreativeWork", "name": title, "version": version}),
        )
    params = _add_parameters(crate, parameters)
    in_entities = _add_files(crate, root, params, inputs)
    out_entities = _add_files(crate, root, params, outputs)
    wf["input"] = [params[p] for p in dict.fromkeys(f.param for f in inputs)]
    wf["output"] = [params[p] for p in dict.fromkeys(f.param for f in outputs)]
    parts = [
        crate.add_file(
            dest_path=_inside(root, p), properties={"name": p, "encodingFormat": media_type(p)}
        )
        for p in workflow_parts
    ]
    if parts:
        wf["hasPart"] = parts
    apps = [_add_software(crate, s) for s in [engine, *software]]
    action = _add_action(
        crate, name, description, git_commit, start, end, [wf, *apps], in_entities, out_entities
    )
    crate.root_dataset.append_to("mentions", action)
    if readme is not None:
        _add_readme(crate, root, readme)
    _single_values(crate)
    crate.metadata.write(root)
    return root / "ro-crate-metadata.json"


def _context(crate, identifier: str, properties: dict):
    """Add a contextual entity ``identifier`` with ``properties`` to ``crate``; return it."""
    from rocrate.model.contextentity import ContextEntity

    return crate.add(ContextEntity(crate, identifier, properties=properties))


def _add_workflow(
    crate, root: Path, workflow: str, engine: Software, git_commit: str, workflow_name: str
):
    """The main workflow file as a ``ComputationalWorkflow`` in the engine's language."""
    return crate.add_workflow(
        dest_path=_inside(root, workflow),
        main=True,
        lang="snakemake",
        lang_version=engine.version,
        properties={
            "name": workflow_name,
            "version": git_commit,
            "encodingFormat": media_type(workflow),
            "conformsTo": {
                "@id": "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"
            },
        },
    )


def _add_parameters(crate, parameters: Mapping[str, tuple[str, str]]) -> dict:
    """One ``FormalParameter`` ``#param-<id>`` per entry of ``parameters``, by id."""
    return {
        pid: _context(
            crate,
            f"#param-{pid}",
            {
                "@type": "FormalParameter",
                "name": pname,
                "additionalType": ptype,
                "conformsTo": {
                    "@id": "https://bioschemas.org/profiles/FormalParameter/1.0-RELEASE"
                },
            },
        )
        for pid, (pname, ptype) in parameters.items()
    }


def _add_files(crate, root: Path, params: dict, files: Sequence[RunFile]) -> list:
    """The ``files`` as file entities, each an ``exampleOfWork`` of its parameter (and listed
    in that parameter's ``workExample``); a file naming an unknown parameter is a ValueError."""
    entities = []
    for f in files:
        if f.param not in params:
            raise ValueError(f"crate file '{f.path}' names unknown parameter '{f.param}'")
        props = {
            "name": f.name,
            "exampleOfWork": {"@id": params[f.param].id},
            "encodingFormat": f.encoding_format or media_type(f.path),
        }
        if f.description:
            props["description"] = f.description
        props.update(f.extra)
        entity = crate.add_file(dest_path=_inside(root, f.path), properties=props)
        params[f.param].append_to("workExample", entity)
        entities.append(entity)
    return entities


def _add_software(crate, s: Software):
    """``s`` as a ``SoftwareApplication`` (name, version, url if known)."""
    return _context(
        crate,
        s.id,
        {
            "@type": "SoftwareApplication",
            "name": s.name,
            "softwareVersion": s.version,
            **({"url": s.url} if s.url else {}),
        },
    )


def _add_action(crate, name, description, git_commit, start, end, instrument, objects, results):
    """The run itself, a ``CreateAction`` ``#run`` from the inputs to the outputs."""
    return _context(
        crate,
        "#run",
        {
            "@type": "CreateAction",
            "name": name,
            "description": (
                f"{description} Workflow at git commit {git_commit}; startTime and endTime "
                "are the first and the last modification time of the outputs."
            ),
            "startTime": _iso(start),
            "endTime": _iso(end),
            "actionStatus": "http://schema.org/CompletedActionStatus",
            "instrument": instrument,
            "object": objects,
            "result": results,
        },
    )


def _add_readme(crate, root: Path, readme: str) -> None:
    """Write ``root/README.md`` and describe it as being about the crate."""
    (root / "README.md").write_text(readme)
    crate.add_file(
        dest_path="README.md",
        properties={
            "name": "README.md",
            "about": {"@id": "./"},
            "encodingFormat": "text/markdown",
        },
    )


def _single_values(crate) -> None:
    """RO-Crate 1.1 writes a one-element list as its element (a SHOULD of the JSON-LD form)."""
    for entity in crate.get_entities():
        for key, value in list(entity.properties().items()):
            if isinstance(value, list) and len(value) == 1 and key not in ("@type",):
                entity._jsonld[key] = value[0]
