# The dynamic run from rest under gravity per case, with the case's integrator (explicit
# central differences by default). The explicit time step is dynamics.dt_safety * dt_critical,
# with dt_critical read from this case's critical_dt result at the run's mesh (a real DAG
# dependency); an implicit integrator takes T1 / 100.


rule simulate:
    input:
        critical=lambda wc: critical_file(wc.case, sim_mesh(wc.case)),
        kernels=KERNELS_BEAM,  # the beam kernels, compiled first (kernels.smk)
    output:
        f"{RES}/{{case}}/simulate.nc",
    log:
        f"{RES}/logs/simulate/{{case}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        case_hash=case_hash,
        package=PACKAGE,
        n_elements=lambda wc: sim_mesh(wc.case),
        t_end=lambda wc: sim_t_end(wc.case),
    script:
        "../scripts/simulate.py"
