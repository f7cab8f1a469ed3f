# Natural frequencies and mode shapes per case.


rule modal:
    input:
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/{{case}}/modal.nc",
    log:
        f"{RES}/logs/modal/{{case}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        case_hash=case_hash,
        package=PACKAGE,
    script:
        "../scripts/modal.py"
