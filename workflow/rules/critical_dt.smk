# Critical explicit time step per case on every mesh of the study (one job per case writes one
# file per mesh; the fitted-formula constant is computed once per job): 2/omega_max, element
# bound, fitted formula, governing mode (axial/bending), and on pipeline.critical_dt.
# measure_meshes the measured stability limit (bisection on dt).


rule critical_dt:
    input:
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        expand(f"{RES}/{{{{case}}}}/critical_dt/ne{{ne}}.nc", ne=CRITICAL_MESHES),
    log:
        f"{RES}/logs/critical_dt/{{case}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        case_hash=case_hash,
        package=PACKAGE,
        meshes=CRITICAL_MESHES,
        measure=measure_meshes(),
    script:
        "../scripts/critical_dt.py"
