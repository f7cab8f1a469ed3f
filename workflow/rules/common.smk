# Shared helpers: cases, meshes, rerun fingerprints and output paths.
# Physics lives in the ancf_beam package; rules only wire files together.
import sys

import yaml

from ancf_beam.config import ConfigError, resolve_case
from ancf_beam.studies.core import package_fingerprint

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


def critical_meshes(case=None):
    """Meshes of the critical-step study: the same for every case (one job per case writes
    them all): the study's meshes, the measured ones and every case's simulation mesh.
    """
    cd = PIPE["critical_dt"]
    meshes = set(cd["meshes"]) | set(cd.get("measure_meshes") or [])
    meshes |= {sim_mesh(c) for c in CASES}
    return sorted(int(m) for m in meshes)


CRITICAL_MESHES = critical_meshes()


def measure_meshes():
    return sorted(int(m) for m in PIPE["critical_dt"].get("measure_meshes") or [])


# ---- optional studies (pipeline.<study>.enabled) ------------------------------------------
def study_settings(name):
    """``pipeline.<name>`` when present and enabled, else None."""
    s = PIPE.get(name)
    return s if s and s.get("enabled", True) else None


INTEGRATORS = study_settings("integrators")
DEFECTS = study_settings("defects")
IDENTIFICATION = study_settings("identification")
SCALING = study_settings("scaling")


def _seed_case():
    """The first case without any defect family (the seed case), else the first case."""
    from ancf_beam.studies.families import families

    plain = [c for c in CASES if not families(SPECS[c])]
    return plain[0] if plain else CASES[0]


def _strongest_case():
    """The straight elastic case with the largest defect.lam (ties: the smallest n)."""
    from ancf_beam.studies.families import straight_elastic

    cands = [
        c for c in CASES if straight_elastic(SPECS[c]) and SPECS[c].defect.E.lam > 0
    ]
    if not cands:
        return None
    return max(cands, key=lambda c: (SPECS[c].defect.E.lam, -SPECS[c].defect.E.n))


def _study_cases(settings, name):
    cases = settings.get("cases")
    if cases is None:
        return None
    bad = [c for c in cases if c not in CASES]
    if bad:
        raise WorkflowError(
            f"pipeline.{name}.cases names unknown cases {bad}; cases: {CASES}"
        )
    return list(dict.fromkeys(cases))


def integrator_cases():
    if not INTEGRATORS:
        return []
    chosen = _study_cases(INTEGRATORS, "integrators")
    if chosen is None:
        chosen = [_seed_case(), _strongest_case()]
    return list(dict.fromkeys(c for c in chosen if c is not None))


def defect_cases():
    if not DEFECTS:
        return []
    chosen = _study_cases(DEFECTS, "defects")
    return CASES if chosen is None else chosen


def _one_case(settings, name):
    c = settings.get("case")
    if c is None:
        return _seed_case()
    if c not in CASES:
        raise WorkflowError(f"pipeline.{name}.case '{c}' is not a case; cases: {CASES}")
    return c


def _families():
    from ancf_beam.studies.families import families

    return {c: families(SPECS[c]) for c in CASES}


FAMILIES = _families()  # active defect families per case (report parameters)
INTEGRATOR_CASES = integrator_cases()
DEFECT_CASES = defect_cases()
IDENTIFICATION_CASE = (
    _one_case(IDENTIFICATION, "identification") if IDENTIFICATION else None
)
SCALING_CASE = _one_case(SCALING, "scaling") if SCALING else None


def study_hash(*cases, settings=None):
    """Hash of the resolved cases and the study settings (rerun trigger of aggregate studies)."""
    import hashlib
    import json

    text = json.dumps(
        {"cases": [SPECS[c].config_hash for c in cases], "settings": settings},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def validation_settings():
    v = PIPE.get("validation") or {}
    return {
        "segments": v.get("segments"),
        "tolerances": dict(v.get("tolerances") or {}),
    }


# ---- settings of the optional studies (defaults as in config/config.yaml) -----------------
def integrators_settings():
    s = INTEGRATORS or {}
    return {
        "t_end": float(s.get("t_end", 2.0)),
        "explicit_safety": s.get("explicit_safety"),
        "per_period": [float(n) for n in s.get("per_period", [100, 20])],
        "damping_ratio": float(s.get("damping_ratio", 0.05)),
        "damped_per_period": float(s.get("damped_per_period", 20)),
    }


def identification_settings():
    s = IDENTIFICATION or {}
    return {
        "lam": [float(v) for v in s.get("lam", [0.2, 0.45, 0.7])],
        "n": [float(v) for v in s.get("n", [1.0, 1.5, 2.5])],
        "draws": int(s.get("draws", 3)),
        "sigma_rel": float(s.get("sigma_rel", 0.005)),
        "n_modes": int(s.get("n_modes", 3)),
        "seed": int(s.get("seed", 12345)),
        "truth_mesh": s.get("truth_mesh"),
        "controls": bool(s.get("controls", True)),
    }


def scaling_settings():
    s = SCALING or {}
    return {
        "meshes": [int(m) for m in s.get("meshes", [2, 5, 10, 20, 40, 80, 160])],
        "t_end": float(s.get("t_end", 2.0)),
        "explicit_safety": s.get("explicit_safety"),
        "full_max_elements": int(s.get("full_max_elements", 40)),
        "window_wall_s": float(s.get("window_wall_s", 1.5)),
        "min_window_steps": int(s.get("min_window_steps", 2000)),
        "per_period": [
            float(n)
            for n in s.get("per_period", [50, 100, 200, 300, 400, 500, 600, 800])
        ],
        "tip_error": float(s.get("tip_error", 0.01)),
        "calibration_mesh": s.get("calibration_mesh"),
        "fit_min_elements": s.get("fit_min_elements"),
    }


# ---- output paths -----------------------------------------------------------------------
RES = "results"
REP = "reports"
CASE_FIGURES = ["tip_history", "shapes", "curvature", "energy", "spectrum"]
CASE_FIGURES += ["response"]
AGG_FIGURES = {
    "comparison": ["overlay", "side_by_side", "vs_lam_n"],
    "convergence": ["convergence"],
    "critical_dt": ["critical_dt"],
    "validation": ["validation"],
}
if INTEGRATORS:
    AGG_FIGURES["integrators"] = ["tip_histories", "accuracy", "cost", "damped"]
if DEFECTS:
    AGG_FIGURES["defects"] = ["shapes", "curvature", "frequencies", "spectra", "damage"]
if IDENTIFICATION:
    AGG_FIGURES["identification"] = ["truth_vs_estimate", "standardized_errors"]
if SCALING:
    AGG_FIGURES["scaling"] = ["cost", "calibration"]


def case_file(study, case):
    return f"{RES}/{case}/{study}.nc"


def critical_file(case, ne):
    return f"{RES}/{case}/critical_dt/ne{ne}.nc"


def per_case(study, cases=None):
    return [case_file(study, c) for c in (CASES if cases is None else cases)]


def critical_files(case):
    return [critical_file(case, ne) for ne in CRITICAL_MESHES]


def all_outputs():
    out = []
    for c in CASES:
        out += critical_files(c)
        out += [
            case_file(s, c)
            for s in (
                "static",
                "modal",
                "simulate",
                "convergence",
                "validation",
                "response",
            )
        ]
        out.append(f"{REP}/cases/{c}.html")
    out += per_case("integrators", INTEGRATOR_CASES)
    if IDENTIFICATION:
        out.append(f"{RES}/identification.nc")
    if SCALING:
        out.append(f"{RES}/scaling.nc")
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
