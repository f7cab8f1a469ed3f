"""Offline validation of RO-Crates with roc-validator (test helper, not a test module).

roc-validator fetches the RO-Crate JSON-LD context (https://w3id.org/ro/crate/1.1/context) over
HTTP to parse a crate into RDF, and has no copy of it; offline it can only serve it from an HTTP
cache filled online. Here every HTTP request of the validating process is answered locally: the
context URL with the RO-Crate context that the ``rocrate`` package ships (``data/ro-crate.jsonld``,
version 1.3, whose terms include every term of 1.1 with the same IRIs), anything else with 404,
so a validation never waits on the network and never depends on it.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

CONTEXT_URLS = ("https://w3id.org/ro/crate/1.1/context",)
PROFILE = "workflow-run-crate"
#: The RO-Crate 1.1 IRIs of the Bioschemas terms (the 1.3 context maps them elsewhere).
RO_CRATE_1_1_BIOSCHEMAS = {
    "ComputationalWorkflow": "https://bioschemas.org/ComputationalWorkflow",
    "FormalParameter": "https://bioschemas.org/FormalParameter",
    "input": "https://bioschemas.org/ComputationalWorkflow#input",
    "output": "https://bioschemas.org/ComputationalWorkflow#output",
}
SAME_IN_BOTH = ("http://schema.org/", "http://purl.org/dc/terms/")


def _bundled_context() -> dict:
    import rocrate

    doc = json.loads((Path(rocrate.__file__).parent / "data" / "ro-crate.jsonld").read_text())
    return {"@context": {**doc["@context"], **RO_CRATE_1_1_BIOSCHEMAS}}


def unmapped_terms(metadata: dict) -> set[str]:
    """Keys and types of ``metadata`` whose stand-in IRI is neither one of
    ``RO_CRATE_1_1_BIOSCHEMAS`` nor in a namespace both context versions share."""
    context = _bundled_context()["@context"]
    used: set[str] = set()
    for entity in metadata["@graph"]:
        used |= {k for k in entity if not k.startswith("@")}
        types = entity.get("@type", [])
        used |= set([types] if isinstance(types, str) else types)
    return {
        t
        for t in used
        if t not in RO_CRATE_1_1_BIOSCHEMAS and not str(context.get(t, "")).startswith(SAME_IN_BOTH)
    }


@contextmanager
def local_http():
    """Answer every ``requests`` call in this process locally (see the module docstring)."""
    import requests
    from requests.adapters import HTTPAdapter

    body = json.dumps(_bundled_context()).encode()
    seen: list[str] = []

    def send(self, request, **kwargs):
        seen.append(request.url)
        r = requests.Response()
        r.url = request.url
        r.request = request
        if request.url.rstrip("/") in CONTEXT_URLS:
            r.status_code = 200
            r._content = body
            r.headers["Content-Type"] = "application/ld+json"
        else:
            r.status_code = 404
            r._content = b""
        return r

    original = HTTPAdapter.send
    HTTPAdapter.send = send
    try:
        yield seen
    finally:
        HTTPAdapter.send = original


def validate_crate(crate_dir: str | Path, severity: str = "REQUIRED"):
    """roc-validator's result for ``crate_dir`` against the Workflow Run Crate profile at
    ``severity`` (``REQUIRED`` or ``RECOMMENDED``): ``(passed, [issue messages])``."""
    from rocrate_validator import models, services

    settings = models.ValidationSettings(
        rocrate_uri=str(Path(crate_dir).resolve()),
        profile_identifier=PROFILE,
        requirement_severity=getattr(models.Severity, severity),
        no_cache=True,  # a plain requests session: the local answers reach the validator
    )
    with local_http():
        result = services.validate(settings)
    issues = [
        f"{i.severity.name} {i.check.identifier if i.check else ''}: {i.message}"
        for i in result.get_issues()
    ]
    return result.passed(), issues
