# Mesh convergence per case: static tip deflection and first frequencies over a mesh list,
# observed order and Richardson-extrapolated values (ancf_beam.studies.convergence).


rule mesh_convergence:
    input:
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/{{case}}/convergence.nc",
    log:
        f"{RES}/logs/convergence/{{case}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        case_hash=case_hash,
        package=PACKAGE,
        meshes=PIPE["convergence"]["meshes"],
        n_modes=PIPE["convergence"].get("n_modes", 3),
    script:
        "../scripts/convergence.py"
