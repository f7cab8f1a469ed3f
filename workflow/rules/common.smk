# Shared helpers: cases, meshes, rerun fingerprints and output paths.
# Physics lives in the ancf_beam package; rules only wire files together.
import sys
from pathlib import Path

import yaml

import ancf_beam.provenance
from ancf_beam.config import ConfigError, pipeline_settings, resolve_case
from ancf_beam.io import package_fingerprint
from ancf_beam.kernel_cache import source_digest

PY = (
    sys.executable
)  # run papermill / nbconvert with this interpreter, not whatever is on PATH
try:  # the pipeline section over its defaults (ancf_beam.config.PIPELINE_DEFAULTS)
    PIPE = pipeline_settings(config)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from exc
CASES = list(config.get("cases") or {})
if not CASES:
    raise WorkflowError("config has no cases: add at least one block under 'cases:'")
# Largest parameter matrix the pipeline takes in one run. The DAG is the limit: before any job
# runs, each case is resolved, classed small or large deflection (a quadrature) and given 8
# jobs; `snakemake -n` of 1000 cases took 155 s of CPU (8030 jobs; 7 to 12 min of wall time on
# 2 cores shared with other work; benchmarks/bench_config_load.py --bound-run), and the run
# itself costs about 30 s of CPU per case (config/config.yaml, 12 cases with the studies:
# 3.5 min on 2 idle cores), 8 h for 1000. A larger study is split into several config files,
# each its own run (and results directory).
MAX_CASES = 1000
if len(CASES) > MAX_CASES:
    raise WorkflowError(
        f"config file(s) {', '.join(map(str, workflow.configfiles))}: {len(CASES)} cases; the "
        f"pipeline takes at most {MAX_CASES} per run (its DAG alone costs about 0.15 s of "
        "CPU per case): split the cases into several config files and run each"
    )

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


def _large_deflection_cases():
    """Cases beyond the small-deflection references (ancf_beam.studies.defects.LARGE_DEFLECTION)."""
    from ancf_beam.studies.defects import large_deflection

    return [c for c in CASES if large_deflection(SPECS[c])]


LARGE = _large_deflection_cases()


wildcard_constraints:
    case=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    mcase=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    ne=r"\d+",


def case_hash(wildcards):
    """Hash of the resolved case (defaults + its block): changes only if that case changes."""
    return SPECS[wildcards.case].config_hash


def sim_mesh(case):
    ne = PIPE["simulate"]["n_elements"]
    return int(ne) if ne is not None else SPECS[case].mesh.n_elements


def sim_t_end(case):
    t = PIPE["simulate"]["t_end"]
    return float(t) if t is not None else SPECS[case].dynamics.t_end


def critical_meshes(case=None):
    """Meshes of the critical-step study: the same for every case (one job per case writes
    them all): the study's meshes, the measured ones and every case's simulation mesh.
    """
    cd = PIPE["critical_dt"]
    meshes = set(cd["meshes"]) | set(cd["measure_meshes"] or [])
    meshes |= {sim_mesh(c) for c in CASES}
    return sorted(int(m) for m in meshes)


CRITICAL_MESHES = critical_meshes()


def measure_meshes():
    return sorted(int(m) for m in PIPE["critical_dt"]["measure_meshes"] or [])


# ---- optional studies (pipeline.<study>.enabled) ------------------------------------------
def study_settings(name):
    """``pipeline.<name>`` (merged over its defaults) when enabled, else None."""
    s = PIPE[name]
    return s if s["enabled"] else None


INTEGRATORS = study_settings("integrators")
DEFECTS = study_settings("defects")
IDENTIFICATION = study_settings("identification")
SCALING = study_settings("scaling")


def _seed_case():
    """The first small-deflection case without any defect family (the seed case), else the
    first case."""
    from ancf_beam.studies.defects import families

    plain = [c for c in CASES if not families(SPECS[c]) and c not in LARGE]
    return plain[0] if plain else CASES[0]


def _strongest_case():
    """The straight elastic case with the largest defect.lam (ties: the smallest n)."""
    from ancf_beam.studies.defects import straight_elastic

    cands = [
        c
        for c in CASES
        if straight_elastic(SPECS[c]) and SPECS[c].defect.E.lam > 0 and c not in LARGE
    ]
    if not cands:
        return None
    return max(cands, key=lambda c: (SPECS[c].defect.E.lam, -SPECS[c].defect.E.n))


def _study_cases(settings, name):
    cases = settings["cases"]
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
    return [c for c in CASES if c not in LARGE] if chosen is None else chosen


def _one_case(settings, name):
    c = settings["case"]
    if c is None:
        return _seed_case()
    if c not in CASES:
        raise WorkflowError(f"pipeline.{name}.case '{c}' is not a case; cases: {CASES}")
    return c


def _families():
    from ancf_beam.studies.defects import families

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
    return PIPE["validation"]


# ---- settings of the optional studies: PIPE[<study>] (defaults in ancf_beam.config) ----------
# The compute rules get a study's settings without its report's tolerances (a tolerance change
# re-renders the report, it does not re-run the study).
def _study_params(name, *drop):
    return {
        k: v for k, v in PIPE[name].items() if k not in ("enabled", "tolerances", *drop)
    }


def integrators_settings():
    return _study_params("integrators", "cases")


def identification_settings():
    return _study_params("identification", "case")


def scaling_settings():
    return _study_params("scaling", "case")


def tolerances(report):
    """Acceptance thresholds of a report: ``pipeline.<report>.tolerances``."""
    return PIPE[report]["tolerances"]


# ---- output paths -----------------------------------------------------------------------
RES = "results"
REP = "reports"
# The compile_kernels records (kernels.smk), one per group of kernels (ancf_beam.warmup.GROUPS):
# input of every rule that runs numba kernels, each taking the groups it uses.
KERNEL_DIGEST = source_digest()
KERNEL_RECORD = f"{RES}/kernels/{KERNEL_DIGEST}/{{group}}.json"
KERNELS_BEAM = [KERNEL_RECORD.format(group=g) for g in ("beam_static", "beam_dynamics")]
KERNELS_MBS = [KERNEL_RECORD.format(group=g) for g in ("beam_static", "mbs")]
KERNELS = sorted(set(KERNELS_BEAM + KERNELS_MBS))  # every group


def kernel_group_inputs(wildcards):
    """The groups compiled before this one (beam_static before the others)."""
    if wildcards.group == "beam_static":
        return []
    return [KERNEL_RECORD.format(group="beam_static")]


CASE_FIGURES = ["tip_history", "shapes", "curvature", "energy", "spectrum"]
CASE_FIGURES += ["response"]
AGG_FIGURES = {
    "comparison": ["overlay", "tip_all", "profiles", "side_by_side", "vs_lam_n"],
    "convergence": ["convergence"],
    "critical_dt": ["critical_dt"],
    "validation": ["validation"] + (["validation_large"] if LARGE else []),
}
if INTEGRATORS:
    AGG_FIGURES["integrators"] = ["tip_histories", "accuracy", "cost", "damped"]
if DEFECTS:
    AGG_FIGURES["defects"] = [
        "shapes",
        "curvature",
        "frequencies",
        "spectra",
        "beat_control",
        "damage",
    ]
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
    out.append(f"{REP}/seed_audit.html")
    out += mechanism_outputs()
    out.append(f"{REP}/index.html")
    return out


def nb_params(**kw):
    """Papermill parameters as one YAML string (shell-quoted with {params.nb:q})."""
    return yaml.safe_dump(kw, default_flow_style=True, width=10**9).strip()


# ---- report helpers -----------------------------------------------------------------------
def figure_caption(name, fig):
    """workflow/report/captions/figures/NAME/FIG.rst, or a generic caption naming the report
    (so that a figure without its own caption does not stop `snakemake --report`; the report
    test fails on the generic text)."""
    base = Path(workflow.basedir) / "workflow"
    # per-case figures (CASE_motion, CASE_impact, ...) share the caption of their suffix
    for f in (fig, fig.rsplit("_", 1)[-1]):
        own = f"report/captions/figures/{name}/{f}.rst"
        if (base / own).is_file():
            return f"../{own}"
    return "../report/captions/figures/generic.rst"


def _figures(name, figs, case=None):
    sub = case if case is not None else name
    return {
        f: report(
            f"{REP}/figures/{sub}/{f}.png",
            category="Figures",
            subcategory=sub,
            labels={"report": name, "figure": f},
            caption=figure_caption(name, f),
        )
        for f in figs
    }


def _fig_paths(output, figs):
    return {f: str(getattr(output, f"fig_{f}")) for f in figs}


# ---- provenance (workflow/rules/provenance.smk) ----------------------------------------------
CRATE_BUILDER = str(Path(ancf_beam.provenance.__file__).resolve())  # rule ro_crate


def configfile_paths():
    """The config files of this run (--configfile, else config/config.yaml), absolute."""
    return [str(Path(c).resolve()) for c in workflow.configfiles]


def workflow_sources():
    """The workflow definition besides the Snakefile: every file under workflow/ and the
    default profile under profiles/ (no caches)."""
    base = Path(workflow.basedir)
    files = sorted(
        p
        for d in ("workflow", "profiles")
        for p in (base / d).rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and ".ipynb_checkpoints" not in p.parts
    )
    return [str(p) for p in files]


def resolved_runs():
    """Every case and mechanism of the config, resolved (defaults merged, validated) with its
    config hash: the record of what this run was asked to compute."""
    from ancf_beam.config import mechanism_names, resolve_mechanism

    out = {
        "cases": {
            c: {"config_hash": SPECS[c].config_hash, "resolved": SPECS[c].resolved}
            for c in CASES
        },
        "mechanisms": {},
    }
    for m in mechanism_names(config):
        try:
            spec = resolve_mechanism(config, m)
        except ConfigError as exc:
            raise WorkflowError(f"mechanism '{m}': {exc}") from exc
        out["mechanisms"][m] = {
            "config_hash": spec.config_hash,
            "resolved": spec.resolved,
        }
    return out


def check_tables():
    """The table of checks of every report page of ``all_outputs()`` (reports/NAME.html ->
    reports/checks/NAME.csv, reports/cases/CASE.html -> reports/checks/case_CASE.csv; a mechanism's page,
    reports/mechanisms/M.html, shows its rows of reports/checks/mechanisms.csv; the
    index has none, the seed audit its own table)."""
    out = []
    for path in all_outputs():
        p = Path(path)
        if p.suffix != ".html" or p.parts[0] != REP:
            continue
        if p.parent.name == "cases":
            out.append(f"{REP}/checks/case_{p.stem}.csv")
        elif p.parent.name == "mechanisms":
            continue  # displays the case's rows of the mechanisms report's table
        elif p.stem == "seed_audit":
            out.append(f"{REP}/seed_audit.csv")
        elif p.stem != "index":
            out.append(f"{REP}/checks/{p.stem}.csv")
    return out


# ---- mechanisms (the config's mechanisms: section; ancf_beam.studies.mechanisms) -----------
def _resolve_mechanisms():
    from ancf_beam.config import mechanism_names, resolve_mechanism

    specs = {}
    for name in mechanism_names(config):
        try:
            specs[name] = resolve_mechanism(config, name)
        except ConfigError as exc:
            raise WorkflowError(f"mechanism '{name}': {exc}") from exc
    return specs


MSPECS = _resolve_mechanisms()
MECHANISMS = list(MSPECS)


def mechanism_hash(wildcards):
    """Hash of the resolved mechanism case: changes only if that case changes."""
    return MSPECS[wildcards.mcase].config_hash


def _mechanism_study_case(name, want):
    """pipeline.<name>.case, or the first mechanism case for which ``want(spec)`` holds; None
    (the study is left out) when the config has no such case."""
    s = study_settings(name)
    if not s:
        return None
    c = s["case"]
    if c is None:
        return next((m for m, sp in MSPECS.items() if want(sp)), None)
    if c not in MSPECS or not want(MSPECS[c]):
        raise WorkflowError(
            f"pipeline.{name}.case '{c}' is not a suitable mechanism case; cases: {MECHANISMS}"
        )
    return c


MECH_STUDY_CASES = {
    "clearance_sweep": _mechanism_study_case(
        "clearance_sweep",
        lambda sp: sp.kind == "slider-crank"
        and sp.clearance is not None
        and sp.beam is None,
    ),
    "contact_laws": _mechanism_study_case(
        "contact_laws", lambda sp: sp.kind == "two-body"
    ),
    "flagship": _mechanism_study_case(
        "flagship",
        lambda sp: sp.kind == "slider-crank"
        and sp.clearance is not None
        and sp.beam is not None,
    ),
}
MECH_STUDY_CASES = {k: v for k, v in MECH_STUDY_CASES.items() if v is not None}


def _nonsmooth_pairs():
    """pipeline.mechanisms.compliant: nonsmooth case -> compliant counterpart, both cases of
    the config (the nonsmooth one with nonsmooth contacts)."""
    from ancf_beam.specs import contact_models

    pairs = PIPE["mechanisms"]["compliant"] or {}
    for ns, comp in pairs.items():
        for name in (ns, comp):
            if name not in MSPECS:
                raise WorkflowError(
                    f"config key 'pipeline.mechanisms.compliant': '{name}' is not a mechanism "
                    f"case; cases: {MECHANISMS}"
                )
        if "nonsmooth" not in contact_models(MSPECS[ns]).values():
            raise WorkflowError(
                f"config key 'pipeline.mechanisms.compliant.{ns}': mechanism '{ns}' has no "
                "nonsmooth contact (model: nonsmooth)"
            )
    return dict(pairs)


NONSMOOTH = _nonsmooth_pairs()


def compliant_case(wildcards):
    """The compliant counterpart of a nonsmooth case ("" for any other case)."""
    return NONSMOOTH.get(wildcards.mcase, "")


def mechanism_study_settings(name):
    return _study_params(name, "case")


def mechanism_file(case):
    return f"{RES}/mechanisms/{case}.nc"


def mechanism_validation_file(case):
    return f"{RES}/mechanisms/validation/{case}.nc"


def mechanism_study_file(name):
    return f"{RES}/mechanisms/studies/{name}.nc"


MECH_REPORTS = []
if MECHANISMS:
    MECH_REPORTS.append("mechanisms")
if "contact_laws" in MECH_STUDY_CASES or any(
    MSPECS[m].kind == "two-body" for m in MECHANISMS
):
    MECH_REPORTS.append("contact")
if "flagship" in MECH_STUDY_CASES:
    MECH_REPORTS.append("flagship")
if NONSMOOTH:
    MECH_REPORTS.append("nonsmooth")


def mechanism_outputs():
    out = [mechanism_file(m) for m in MECHANISMS]
    out += [mechanism_validation_file(m) for m in MECHANISMS]
    out += [mechanism_study_file(s) for s in MECH_STUDY_CASES]
    out += [f"{REP}/{r}.html" for r in MECH_REPORTS]
    out += [f"{REP}/mechanisms/{m}.html" for m in MECHANISMS]  # each with its animation
    return out


def mechanism_figures(report):
    """Figure names of a mechanism report (its notebook saves each under reports/figures/)."""
    if report == "mechanisms":
        figs = []
        for m, sp in MSPECS.items():
            if sp.kind != "two-body":
                figs.append(f"{m}_motion")
            if sp.clearance is not None:
                figs.append(f"{m}_clearance")
        sweep = ["sweep", "sweep_revolutions"]
        return figs + (sweep if "clearance_sweep" in MECH_STUDY_CASES else [])
    if report == "contact":
        figs = ["laws", "loops"] if "contact_laws" in MECH_STUDY_CASES else []
        return figs + [
            f"{m}_impact" for m, sp in MSPECS.items() if sp.kind == "two-body"
        ]
    if report == "nonsmooth":
        return [f"{m}_{f}" for m in NONSMOOTH for f in ("impulse", "limit", "orbits")]
    figs = ["histories", "statistics", "poincare", "orbits"]
    return figs + (["damage"] if PIPE["flagship"]["damage"]["enabled"] else [])


TWO_BODY = [m for m, sp in MSPECS.items() if sp.kind == "two-body"]


def study_threads(study):
    """The flagship's variants run side by side (a process each, ancf_beam.studies.mechanisms)
    on 2 threads, but on 1 under --cores 2 or fewer: there a 2-thread job waits until no other
    job runs (the flagship started at 375 s of a 502 s pipeline), while on 1 it runs beside the
    short jobs from the start. A cluster run (no --cores) takes 2."""
    if study != "flagship":
        return 1
    try:
        cores = workflow.cores
    except WorkflowError:
        return 2
    return 1 if isinstance(cores, int) and cores <= 2 else 2
