# Cost against the mesh (ancf_beam.studies.scaling.run_scaling_study): wall time to simulate
# t_end for the explicit scheme (above full_max_elements projected from a measured window of K
# steps, labelled so) and for generalized-alpha at the T1/N that meets the tip-error target.
# Wall times are measured while other jobs may run on the other core.


rule scaling:
    input:
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/scaling.nc",
    log:
        f"{RES}/logs/scaling/scaling.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        case=SCALING_CASE,
        study_hash=(
            study_hash(SCALING_CASE, settings=scaling_settings()) if SCALING else ""
        ),
        package=PACKAGE,
        settings=scaling_settings(),
    script:
        "../scripts/scaling.py"
