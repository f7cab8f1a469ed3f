# Mechanisms (the config's mechanisms: section): one run per case, its checks against the
# independent references, and the mechanism studies (clearance sweep, contact laws, flagship).
# Physics and checks live in ancf_beam.mbs and ancf_beam.studies.mechanisms.


rule mechanism:
    input:
        kernels=KERNELS_MBS,  # the beam and multibody kernels, compiled first (kernels.smk)
    output:
        mechanism_file("{mcase}"),
    log:
        f"{RES}/logs/mechanism/{{mcase}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        mechanism_hash=mechanism_hash,
        package=PACKAGE,
    script:
        "../scripts/mechanism.py"


rule mechanism_validation:
    input:
        mechanism_file("{mcase}"),
        kernels=KERNELS_MBS,  # the beam and multibody kernels, compiled first (kernels.smk)
    output:
        mechanism_validation_file("{mcase}"),
    log:
        f"{RES}/logs/mechanism_validation/{{mcase}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        mechanism_hash=mechanism_hash,
        package=PACKAGE,
        tolerances=tolerances("mechanisms"),
        compliant=compliant_case,
        K_factors=PIPE["mechanisms"]["K_factors"],
    script:
        "../scripts/mechanism_validation.py"


rule mechanism_study:
    input:
        kernels=KERNELS_MBS,  # the beam and multibody kernels, compiled first (kernels.smk)
    output:
        mechanism_study_file("{study}"),
    log:
        f"{RES}/logs/mechanism_study/{{study}}.log",
    wildcard_constraints:
        study="clearance_sweep|contact_laws|flagship",
    # the longest jobs (the flagship: 200 CPU-s of the default pipeline's 980) start as soon
    # as their kernels are compiled, so that the many short jobs fill the cores at the end
    priority: 50
    conda:
        "../envs/ancf-beam.yaml"
    threads: lambda wc: study_threads(wc.study)
    resources:
        mem_mb=lambda wc: 4000 if wc.study == "flagship" else 1500,
        runtime=30,
    params:
        case=lambda wc: MECH_STUDY_CASES[wc.study],
        case_hash=lambda wc: MSPECS[MECH_STUDY_CASES[wc.study]].config_hash,
        settings=lambda wc: mechanism_study_settings(wc.study),
        package=PACKAGE,
    script:
        "../scripts/mechanism_study.py"


rule mechanism_animation:
    input:
        mechanism_file("{mcase}"),
        kernels=KERNELS_MBS,  # the beam and multibody kernels, compiled first (kernels.smk)
    output:
        f"{REP}/animations/{{mcase}}.gif",
    log:
        f"{RES}/logs/mechanism_animation/{{mcase}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        settings=PIPE["animation"],
    script:
        "../scripts/animation.py"
