# Response analysis per case (ancf_beam.studies.response.run_response): spectrum peak, beat
# detection, envelope decay of the explicit run; curvature distribution and concentration at
# the static equilibrium and at the largest dynamic displacement; damage fields and the
# frequencies of the damaged beam for damage cases.


rule response:
    input:
        static=lambda wc: case_file("static", wc.case),
        simulate=lambda wc: case_file("simulate", wc.case),
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/{{case}}/response.nc",
    log:
        f"{RES}/logs/response/{{case}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        case_hash=case_hash,
        package=PACKAGE,
    script:
        "../scripts/response.py"
