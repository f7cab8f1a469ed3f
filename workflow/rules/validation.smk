# Validation per case: ANCF vs exact graded quadrature, stepped transfer matrix and closed forms;
# energy balance and mean tip of the explicit run. A table of checks with PASS/FAIL.


rule validation:
    input:
        static=lambda wc: case_file("static", wc.case),
        modal=lambda wc: case_file("modal", wc.case),
        simulate=lambda wc: case_file("simulate", wc.case),
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/{{case}}/validation.nc",
    log:
        f"{RES}/logs/validation/{{case}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        case_hash=case_hash,
        package=PACKAGE,
        settings=validation_settings(),
    script:
        "../scripts/validation.py"
