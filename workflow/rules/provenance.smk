# Workflow Run RO-Crate of the run (results/ro-crate-metadata.json, profile
# https://w3id.org/ro/wfrun/workflow/0.5): the last job, after every output of `rule all`.
# The crate's root is results/: the NetCDF results are described in place; the workflow
# definition, the config files, the resolved cases and mechanisms and the reports are copied
# under results/run/ (reports hard-linked where the file system allows) so that every file the
# crate names lies inside it. Its inputs are files and its params the resolved cases and
# mechanisms, so a second invocation finds it up to date (no timestamps among them). The crate
# builder (ancf_beam.provenance, outside the package fingerprint of the compute rules) is an
# input too.


rule ro_crate:
    input:
        outputs=all_outputs(),
        checks=check_tables(),
        configfiles=configfile_paths(),
        snakefile=f"{workflow.basedir}/Snakefile",
        sources=workflow_sources(),
        builder=CRATE_BUILDER,
    output:
        crate=f"{RES}/ro-crate-metadata.json",
        readme=f"{RES}/README.md",
        run=directory(f"{RES}/run"),
    log:
        f"{RES}/logs/ro_crate/ro_crate.log",
    conda:
        "../envs/ancf-beam.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        resolved=resolved_runs(),
    script:
        "../scripts/ro_crate.py"
