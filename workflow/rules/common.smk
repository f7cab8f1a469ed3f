# Shared helpers: cases, meshes, rerun fingerprints and output paths.
# Physics lives in the ancf_beam package; rules only wire files together.
import sys

import yaml

from ancf_beam.config import ConfigError, resolve_case
from ancf_beam.studies import package_fingerprint

PY = (
    sys.executable
)  # run papermill / nbconvert with this interpreter, not whatever is on PATH
PIPE = config["pipeline"]
CASES = list(config.get("cases") or {})
if not CASES:
    raise WorkflowError("config has no cases: add at least one block under 'cases:'")

# Package version + hash of its source: in the params of every compute rule, so editing the
# library re-runs the affected jobs (Snakemake's params rerun trigger).
PACKAGE = package_fingerprint()


def _resolve_all():
    specs = {}
    for name in CASES:
        try:
            specs[name] = resolve_case(config, name)
        except ConfigError as exc:
            raise WorkflowError(f"case '{name}': {exc}") from exc
    return specs


SPECS = _resolve_all()  # library validation of every resolved case, before any job runs


wildcard_constraints:
    case=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    ne=r"\d+",


def case_hash(wildcards):
    """Hash of the resolved case (defaults + its block): changes only if that case changes."""
    return SPECS[wildcards.case].config_hash


def sim_mesh(case):
    ne = PIPE["simulate"].get("n_elements")
    return int(ne) if ne is not None else SPECS[case].mesh.n_elements


def sim_t_end(case):
    t = PIPE["simulate"].get("t_end")
    return float(t) if t is not None else SPECS[case].dynamics.t_end


def critical_meshes(case):
    cd = PIPE["critical_dt"]
    meshes = set(cd["meshes"]) | set(cd.get("measure_meshes") or []) | {sim_mesh(case)}
    return sorted(int(m) for m in meshes)


def measure_dt(ne):
    return int(ne) in {int(m) for m in PIPE["critical_dt"].get("measure_meshes") or []}


def validation_settings():
    v = PIPE.get("validation") or {}
    return {
        "segments": v.get("segments"),
        "tolerances": dict(v.get("tolerances") or {}),
    }


# ---- output paths -----------------------------------------------------------------------
RES = "results"
REP = "reports"
CASE_FIGURES = ["tip_history", "shapes", "curvature", "energy", "spectrum"]
AGG_FIGURES = {
    "comparison": ["overlay", "side_by_side", "vs_lam_n"],
    "convergence": ["convergence"],
    "critical_dt": ["critical_dt"],
    "validation": ["validation"],
}


def case_file(study, case):
    return f"{RES}/{case}/{study}.nc"


def critical_file(case, ne):
    return f"{RES}/{case}/critical_dt/ne{ne}.nc"


def per_case(study):
    return [case_file(study, c) for c in CASES]


def all_outputs():
    out = []
    for c in CASES:
        out += [critical_file(c, ne) for ne in critical_meshes(c)]
        out += [
            case_file(s, c)
            for s in ("static", "modal", "simulate", "convergence", "validation")
        ]
        out.append(f"{REP}/cases/{c}.html")
    out += [f"{RES}/summary.nc", f"{RES}/summary.csv"]
    out += [f"{REP}/{name}.html" for name in AGG_FIGURES]
    out.append(f"{REP}/index.html")
    return out


def nb_params(**kw):
    """Papermill parameters as one YAML string (shell-quoted with {params.nb:q})."""
    return yaml.safe_dump(kw, default_flow_style=True, width=10**9).strip()


# ---- report helpers -----------------------------------------------------------------------
def _figures(name, figs, case=None):
    sub = case if case is not None else name
    return {
        f: report(
            f"{REP}/figures/{sub}/{f}.png",
            category="Figures",
            subcategory=sub,
            labels={"report": name, "figure": f},
        )
        for f in figs
    }


def _fig_paths(output, figs):
    return {f: str(getattr(output, f"fig_{f}")) for f in figs}
