# Integrator study (ancf_beam.studies.integrators.run_integrator_study) on the cases of
# pipeline.integrators.cases (null: the seed case and the straight elastic case with the largest
# defect.lam): every integrator over t_end, explicit at explicit_safety * dt_critical (read from
# the case's critical_dt result at the run's mesh), implicit at T1 / N (T1 from the case's modal
# result), one Rayleigh-damped run per integrator against the static tip (static result).


rule integrators:
    input:
        critical=lambda wc: critical_file(wc.case, sim_mesh(wc.case)),
        modal=lambda wc: case_file("modal", wc.case),
        static=lambda wc: case_file("static", wc.case),
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/{{case}}/integrators.nc",
    log:
        f"{RES}/logs/integrators/{{case}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        case_hash=case_hash,
        package=PACKAGE,
        n_elements=lambda wc: sim_mesh(wc.case),
        settings=integrators_settings(),
    script:
        "../scripts/integrators.py"
