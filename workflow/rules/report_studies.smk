# Reports of the optional studies (pipeline.<study>.enabled): integrators, defect families,
# identification, scaling. Same papermill + nbconvert command as report.smk (NB_CMD).


rule report_integrators:
    input:
        nb=workflow.source_path("../notebooks/integrators.ipynb"),
        integrators=per_case("integrators", INTEGRATOR_CASES),
        scaling=[f"{RES}/scaling.nc"] if SCALING else [],
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures(
                "integrators", AGG_FIGURES.get("integrators", [])
            ).items()
        },
        nb=f"{REP}/notebooks/integrators.ipynb",
        html=report(
            f"{REP}/integrators.html",
            category="Reports",
            subcategory="Studies",
            labels={"report": "integrators"},
            caption="../report/captions/reports/integrators.rst",
        ),
        checks=report(
            f"{REP}/checks/integrators.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: integrators"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/integrators.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            cases=INTEGRATOR_CASES,
            integrators_nc=dict(zip(INTEGRATOR_CASES, input.integrators)),
            scaling_nc=input.scaling[0] if input.scaling else "",
            tolerances=tolerances("integrators"),
            checks_csv=output.checks,
            figures=_fig_paths(output, AGG_FIGURES.get("integrators", [])),
        ),
    shell:
        NB_CMD


rule report_defects:
    input:
        nb=workflow.source_path("../notebooks/defects.ipynb"),
        response=per_case("response", DEFECT_CASES),
        static=per_case("static", DEFECT_CASES),
        modal=per_case("modal", DEFECT_CASES),
        simulate=per_case("simulate", DEFECT_CASES),
        validation=per_case("validation", DEFECT_CASES),
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("defects", AGG_FIGURES.get("defects", [])).items()
        },
        nb=f"{REP}/notebooks/defects.ipynb",
        html=report(
            f"{REP}/defects.html",
            category="Reports",
            subcategory="Studies",
            labels={"report": "defect families"},
            caption="../report/captions/reports/defects.rst",
        ),
        checks=report(
            f"{REP}/checks/defects.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: defects"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/defects.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            cases=DEFECT_CASES,
            families={c: FAMILIES[c] for c in DEFECT_CASES},
            response_nc=dict(zip(DEFECT_CASES, input.response)),
            static_nc=dict(zip(DEFECT_CASES, input.static)),
            modal_nc=dict(zip(DEFECT_CASES, input.modal)),
            simulate_nc=dict(zip(DEFECT_CASES, input.simulate)),
            validation_nc=dict(zip(DEFECT_CASES, input.validation)),
            tolerances=tolerances("defects"),
            checks_csv=output.checks,
            figures=_fig_paths(output, AGG_FIGURES.get("defects", [])),
        ),
    shell:
        NB_CMD


rule report_identification:
    input:
        nb=workflow.source_path("../notebooks/identification.ipynb"),
        identification=f"{RES}/identification.nc",
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures(
                "identification", AGG_FIGURES.get("identification", [])
            ).items()
        },
        nb=f"{REP}/notebooks/identification.ipynb",
        html=report(
            f"{REP}/identification.html",
            category="Reports",
            subcategory="Studies",
            labels={"report": "identification"},
            caption="../report/captions/reports/identification.rst",
        ),
        checks=report(
            f"{REP}/checks/identification.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: identification"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/identification.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            identification_nc=input.identification,
            tolerances=tolerances("identification"),
            checks_csv=output.checks,
            figures=_fig_paths(output, AGG_FIGURES.get("identification", [])),
        ),
    shell:
        NB_CMD


rule report_scaling:
    input:
        nb=workflow.source_path("../notebooks/scaling.ipynb"),
        scaling=f"{RES}/scaling.nc",
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("scaling", AGG_FIGURES.get("scaling", [])).items()
        },
        nb=f"{REP}/notebooks/scaling.ipynb",
        html=report(
            f"{REP}/scaling.html",
            category="Reports",
            subcategory="Studies",
            labels={"report": "scaling"},
            caption="../report/captions/reports/scaling.rst",
        ),
        checks=report(
            f"{REP}/checks/scaling.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: scaling"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/scaling.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            scaling_nc=input.scaling,
            tolerances=tolerances("scaling"),
            checks_csv=output.checks,
            figures=_fig_paths(output, AGG_FIGURES.get("scaling", [])),
        ),
    shell:
        NB_CMD
