# Identification of synthetic defects from noisy frequencies
# (ancf_beam.studies.identification.run_identification_study): truth vs estimate over the grid
# pipeline.identification.lam x n, seeded noise draws, coverage, negative controls.


rule identification:
    input:
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/identification.nc",
    log:
        f"{RES}/logs/identification/identification.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    params:
        case=IDENTIFICATION_CASE,
        study_hash=(
            study_hash(IDENTIFICATION_CASE, settings=identification_settings())
            if IDENTIFICATION
            else ""
        ),
        package=PACKAGE,
        settings=identification_settings(),
    script:
        "../scripts/identification.py"
