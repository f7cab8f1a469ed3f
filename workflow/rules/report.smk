# Reports: a notebook template (cell tagged `parameters`) is run with this rule's inputs by
# papermill and rendered to HTML by nbconvert, both in one process (ancf_beam.studies.render)
# with the interpreter running Snakemake (params.py = sys.executable) and the `python3` kernel
# (jupyter_client starts it with that same interpreter), so nothing depends on what is first on
# PATH or on a registered kernel.
# Every notebook also writes its table of checks (CSV) for reports/index.html: the check
# builders of ancf_beam.studies.checks with the thresholds pipeline.<report>.tolerances.

NB_CMD = (
    "{params.py} -m ancf_beam.studies.render {input.nb:q} {output.nb:q} {output.html:q}"
    " {params.nb:q} > {log:q} 2>&1"
)


rule report_case:
    input:
        nb=workflow.source_path("../notebooks/case.ipynb"),
        static=lambda wc: case_file("static", wc.case),
        modal=lambda wc: case_file("modal", wc.case),
        simulate=lambda wc: case_file("simulate", wc.case),
        validation=lambda wc: case_file("validation", wc.case),
        critical=lambda wc: critical_file(wc.case, sim_mesh(wc.case)),
        response=lambda wc: case_file("response", wc.case),
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("case", CASE_FIGURES, case="{case}").items()
        },
        nb=f"{REP}/notebooks/case_{{case}}.ipynb",
        html=report(
            f"{REP}/cases/{{case}}.html",
            category="Reports",
            subcategory="Per case",
            labels={"report": "case {case}"},
            caption="../report/captions/reports/case.rst",
        ),
        checks=report(
            f"{REP}/checks/case_{{case}}.csv",
            category="Checks",
            subcategory="Per case",
            labels={"table": "checks: case {case}"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/case_{{case}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            case=wc.case,
            static_nc=input.static,
            modal_nc=input.modal,
            simulate_nc=input.simulate,
            validation_nc=input.validation,
            critical_nc=input.critical,
            response_nc=input.response,
            tolerances=tolerances("case_report"),
            checks_csv=output.checks,
            figures=_fig_paths(output, CASE_FIGURES),
        ),
    shell:
        NB_CMD


rule report_comparison:
    input:
        nb=workflow.source_path("../notebooks/comparison.ipynb"),
        summary=f"{RES}/summary.csv",
        static=per_case("static"),
        modal=per_case("modal"),
        simulate=per_case("simulate"),
        validation=per_case("validation"),
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("comparison", AGG_FIGURES["comparison"]).items()
        },
        nb=f"{REP}/notebooks/comparison.ipynb",
        html=report(
            f"{REP}/comparison.html",
            category="Reports",
            subcategory="Across cases",
            labels={"report": "comparison"},
            caption="../report/captions/reports/comparison.rst",
        ),
        checks=report(
            f"{REP}/checks/comparison.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: comparison"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/comparison.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            cases=CASES,
            families=FAMILIES,
            summary_csv=input.summary,
            static_nc=dict(zip(CASES, input.static)),
            modal_nc=dict(zip(CASES, input.modal)),
            simulate_nc=dict(zip(CASES, input.simulate)),
            validation_nc=dict(zip(CASES, input.validation)),
            tolerances=tolerances("comparison"),
            checks_csv=output.checks,
            figures=_fig_paths(output, AGG_FIGURES["comparison"]),
        ),
    shell:
        NB_CMD


rule report_convergence:
    input:
        nb=workflow.source_path("../notebooks/convergence.ipynb"),
        convergence=per_case("convergence"),
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("convergence", AGG_FIGURES["convergence"]).items()
        },
        nb=f"{REP}/notebooks/convergence.ipynb",
        html=report(
            f"{REP}/convergence.html",
            category="Reports",
            subcategory="Across cases",
            labels={"report": "mesh convergence"},
            caption="../report/captions/reports/convergence.rst",
        ),
        checks=report(
            f"{REP}/checks/convergence.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: convergence"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/convergence.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            cases=CASES,
            families=FAMILIES,
            convergence_nc=dict(zip(CASES, input.convergence)),
            tolerances=tolerances("convergence"),
            checks_csv=output.checks,
            figures=_fig_paths(output, AGG_FIGURES["convergence"]),
        ),
    shell:
        NB_CMD


rule report_critical_dt:
    input:
        nb=workflow.source_path("../notebooks/critical_dt.ipynb"),
        critical=[f for c in CASES for f in critical_files(c)],
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("critical_dt", AGG_FIGURES["critical_dt"]).items()
        },
        nb=f"{REP}/notebooks/critical_dt.ipynb",
        html=report(
            f"{REP}/critical_dt.html",
            category="Reports",
            subcategory="Across cases",
            labels={"report": "critical time step"},
            caption="../report/captions/reports/critical_dt.rst",
        ),
        checks=report(
            f"{REP}/checks/critical_dt.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: critical dt"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/critical_dt.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            cases=CASES,
            families=FAMILIES,
            critical_nc={c: critical_files(c) for c in CASES},
            sim_mesh={c: sim_mesh(c) for c in CASES},
            tolerances=tolerances("critical_dt"),
            checks_csv=output.checks,
            figures=_fig_paths(output, AGG_FIGURES["critical_dt"]),
        ),
    shell:
        NB_CMD


rule report_validation:
    input:
        nb=workflow.source_path("../notebooks/validation.ipynb"),
        validation=per_case("validation"),
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("validation", AGG_FIGURES["validation"]).items()
        },
        nb=f"{REP}/notebooks/validation.ipynb",
        html=report(
            f"{REP}/validation.html",
            category="Reports",
            subcategory="Across cases",
            labels={"report": "validation"},
            caption="../report/captions/reports/validation.rst",
        ),
        checks=report(
            f"{REP}/checks/validation.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: validation"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/validation.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            cases=CASES,
            validation_nc=dict(zip(CASES, input.validation)),
            checks_csv=output.checks,
            figures=_fig_paths(output, AGG_FIGURES["validation"]),
        ),
    shell:
        NB_CMD


rule report_seed_audit:
    input:
        nb=workflow.source_path("../notebooks/seed_audit.ipynb"),
        kernels=KERNELS,  # every group of kernels, compiled first (kernels.smk)
    output:
        **{f"fig_{k}": v for k, v in _figures("seed_audit", ["seed_audit"]).items()},
        nb=f"{REP}/notebooks/seed_audit.ipynb",
        html=report(
            f"{REP}/seed_audit.html",
            category="Reports",
            subcategory="Across cases",
            labels={"report": "seed audit"},
            caption="../report/captions/reports/seed_audit.rst",
        ),
        table=report(
            f"{REP}/seed_audit.csv",
            category="Tables",
            labels={"table": "seed audit"},
            caption="../report/captions/seed_audit_table.rst",
        ),
    log:
        f"{RES}/logs/report/seed_audit.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        py=PY,
        package=PACKAGE,  # recomputed when the library changes
        nb=lambda wc, input, output: nb_params(
            table_csv=output.table,
            figures=_fig_paths(output, ["seed_audit"]),
        ),
    shell:
        NB_CMD


rule report_index:
    input:
        case_html=expand(f"{REP}/cases/{{case}}.html", case=CASES),
        case_checks=expand(f"{REP}/checks/case_{{case}}.csv", case=CASES),
        agg_html=[f"{REP}/{name}.html" for name in [*AGG_FIGURES, *MECH_REPORTS]],
        agg_checks=[
            f"{REP}/checks/{name}.csv" for name in [*AGG_FIGURES, *MECH_REPORTS]
        ],
        summary=f"{RES}/summary.csv",
        summary_units=f"{RES}/summary_units.csv",
        seed_audit=f"{REP}/seed_audit.html",
        mech_html=[f"{REP}/mechanisms/{m}.html" for m in MECHANISMS],
    output:
        report(
            f"{REP}/index.html",
            category="Reports",
            subcategory="Index",
            labels={"report": "index"},
            caption="../report/captions/reports/index.rst",
        ),
    log:
        f"{RES}/logs/report/index.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        cases=CASES,
        reports=[*AGG_FIGURES, *MECH_REPORTS],
        mechanisms=MECHANISMS,
    script:
        "../scripts/index.py"
