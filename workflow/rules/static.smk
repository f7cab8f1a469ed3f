# Static equilibrium under gravity per case (Newton with load stepping).


rule static:
    input:
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/{{case}}/static.nc",
    log:
        f"{RES}/logs/static/{{case}}.log",
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
        "../scripts/static.py"
