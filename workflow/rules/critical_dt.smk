# Critical explicit time step per case and mesh: 2/omega_max, element bound, fitted formula,
# governing mode (axial/bending), optionally the measured stability limit (bisection on dt).


rule critical_dt:
    output:
        f"{RES}/{{case}}/critical_dt/ne{{ne}}.nc",
    log:
        f"{RES}/logs/critical_dt/{{case}}_ne{{ne}}.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        case_hash=case_hash,
        package=PACKAGE,
        measure=lambda wc: measure_dt(wc.ne),
    script:
        "../scripts/critical_dt.py"
