# Reports of the mechanisms: every mechanism case with its checks and the clearance sweep
# (mechanisms.html), the contact laws (contact.html), the flagship study (flagship.html),
# nonsmooth vs compliant contact (nonsmooth.html).
# Same papermill + nbconvert command as report.smk (NB_CMD).


rule report_mechanisms:
    input:
        nb=workflow.source_path("../notebooks/mechanisms.ipynb"),
        runs=[mechanism_file(m) for m in MECHANISMS],
        validation=[mechanism_validation_file(m) for m in MECHANISMS],
        sweep=(
            [mechanism_study_file("clearance_sweep")]
            if "clearance_sweep" in MECH_STUDY_CASES
            else []
        ),
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("mechanisms", mechanism_figures("mechanisms")).items()
        },
        nb=f"{REP}/notebooks/mechanisms.ipynb",
        html=report(
            f"{REP}/mechanisms.html",
            category="Reports",
            subcategory="Mechanisms",
            labels={"report": "mechanisms"},
            caption="../report/captions/reports/mechanisms.rst",
        ),
        checks=report(
            f"{REP}/checks/mechanisms.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: mechanisms"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/mechanisms.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            cases=MECHANISMS,
            kinds={m: MSPECS[m].kind for m in MECHANISMS},
            mechanism_nc=dict(zip(MECHANISMS, input.runs)),
            validation_nc=dict(zip(MECHANISMS, input.validation)),
            sweep_nc=input.sweep[0] if input.sweep else "",
            sweep_tolerances=tolerances("clearance_sweep"),
            checks_csv=output.checks,
            figures=_fig_paths(output, mechanism_figures("mechanisms")),
        ),
    shell:
        NB_CMD


rule report_contact:
    input:
        nb=workflow.source_path("../notebooks/contact.ipynb"),
        laws=(
            [mechanism_study_file("contact_laws")]
            if "contact_laws" in MECH_STUDY_CASES
            else []
        ),
        runs=[mechanism_file(m) for m in TWO_BODY],
        validation=[mechanism_validation_file(m) for m in TWO_BODY],
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("contact", mechanism_figures("contact")).items()
        },
        nb=f"{REP}/notebooks/contact.ipynb",
        html=report(
            f"{REP}/contact.html",
            category="Reports",
            subcategory="Mechanisms",
            labels={"report": "contact laws"},
            caption="../report/captions/reports/contact.rst",
        ),
        checks=report(
            f"{REP}/checks/contact.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: contact"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/contact.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            laws_nc=input.laws[0] if input.laws else "",
            two_body_nc=dict(zip(TWO_BODY, input.runs)),
            two_body_validation_nc=dict(zip(TWO_BODY, input.validation)),
            tolerances=tolerances("contact_laws"),
            checks_csv=output.checks,
            figures=_fig_paths(output, mechanism_figures("contact")),
        ),
    shell:
        NB_CMD


rule report_flagship:
    input:
        nb=workflow.source_path("../notebooks/flagship.ipynb"),
        flagship=mechanism_study_file("flagship"),
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("flagship", mechanism_figures("flagship")).items()
        },
        nb=f"{REP}/notebooks/flagship.ipynb",
        html=report(
            f"{REP}/flagship.html",
            category="Reports",
            subcategory="Mechanisms",
            labels={"report": "flagship"},
            caption="../report/captions/reports/flagship.rst",
        ),
        checks=report(
            f"{REP}/checks/flagship.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: flagship"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/flagship.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            flagship_nc=input.flagship,
            tolerances=tolerances("flagship"),
            checks_csv=output.checks,
            figures=_fig_paths(output, mechanism_figures("flagship")),
        ),
    shell:
        NB_CMD


rule report_mechanism_case:
    input:
        nb=workflow.source_path("../notebooks/mechanism_case.ipynb"),
        run=mechanism_file("{mcase}"),
        validation=mechanism_validation_file("{mcase}"),
        gif=f"{REP}/animations/{{mcase}}.gif",
    output:
        fig_snapshots=f"{REP}/figures/mechanisms/{{mcase}}/snapshots.png",
        fig_energy=f"{REP}/figures/mechanisms/{{mcase}}/energy.png",
        nb=f"{REP}/notebooks/mechanisms/{{mcase}}.ipynb",
        html=report(
            f"{REP}/mechanisms/{{mcase}}.html",
            category="Reports",
            subcategory="Mechanisms",
            labels={"report": "mechanism {mcase}"},
            caption="../report/captions/reports/mechanism_case.rst",
        ),
    log:
        f"{RES}/logs/report/mechanisms/{{mcase}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            case=wc.mcase,
            kind=MSPECS[wc.mcase].kind,
            reference=MSPECS[wc.mcase].resolved.get("reference"),
            mechanism_nc=input.run,
            validation_nc=input.validation,
            animation_gif=input.gif,
            figures={"snapshots": output.fig_snapshots, "energy": output.fig_energy},
        ),
    shell:
        NB_CMD


rule report_nonsmooth:
    input:
        nb=workflow.source_path("../notebooks/nonsmooth.ipynb"),
        runs=[mechanism_file(m) for m in NONSMOOTH],
        validation=[mechanism_validation_file(m) for m in NONSMOOTH],
        compliant=[mechanism_file(c) for c in NONSMOOTH.values()],
    output:
        **{
            f"fig_{k}": v
            for k, v in _figures("nonsmooth", mechanism_figures("nonsmooth")).items()
        },
        nb=f"{REP}/notebooks/nonsmooth.ipynb",
        html=report(
            f"{REP}/nonsmooth.html",
            category="Reports",
            subcategory="Mechanisms",
            labels={"report": "nonsmooth vs compliant"},
            caption="../report/captions/reports/nonsmooth.rst",
        ),
        checks=report(
            f"{REP}/checks/nonsmooth.csv",
            category="Checks",
            subcategory="Across cases",
            labels={"table": "checks: nonsmooth"},
            caption="../report/captions/checks.rst",
        ),
    log:
        f"{RES}/logs/report/nonsmooth.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=10,
    params:
        py=PY,
        nb=lambda wc, input, output: nb_params(
            cases=list(NONSMOOTH),
            compliant=NONSMOOTH,
            run_nc=dict(zip(NONSMOOTH, input.runs)),
            validation_nc=dict(zip(NONSMOOTH, input.validation)),
            compliant_nc=dict(zip(NONSMOOTH, input.compliant)),
            checks_csv=output.checks,
            figures=_fig_paths(output, mechanism_figures("nonsmooth")),
        ),
    shell:
        NB_CMD
