# One summary Dataset (dimension case) and the parameter record table (CSV, one row per case).


rule collect:
    input:
        static=per_case("static"),
        modal=per_case("modal"),
        simulate=per_case("simulate"),
        validation=per_case("validation"),
        convergence=per_case("convergence"),
        critical=[critical_file(c, sim_mesh(c)) for c in CASES],
    output:
        nc=f"{RES}/summary.nc",
        csv=report(
            f"{RES}/summary.csv",
            category="Tables",
            labels={"table": "parameter record (one row per case)"},
            caption="../report/captions/summary.rst",
        ),
        units=f"{RES}/summary_units.csv",
    log:
        f"{RES}/logs/collect/collect.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        cases=CASES,
        package=PACKAGE,
    script:
        "../scripts/collect.py"
