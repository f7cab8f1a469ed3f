# Gradient-defect ANCF cantilever pipeline (see docs/pipeline.md).
#   snakemake --cores 2                                   # default config/config.yaml
#   snakemake --cores 2 --configfile config/quick.yaml    # coarse, short: tests and CI
# A --configfile given on the command line replaces config/config.yaml (it is not merged).
from snakemake.utils import min_version, validate

min_version("9.0")


# Landing page of `snakemake --report report.html` (captions: workflow/report/captions/).
report: "workflow/report/workflow.rst"


# The configuration is read by the library's strict reader (workflow/rules/configfiles.smk):
# config/config.yaml before Snakemake's own reader sees it, then every config file of the run,
# whose merged data (then --config KEY=VALUE) replace Snakemake's reading of them.
include: "workflow/rules/configfiles.smk"


if not workflow.overwrite_configfiles:
    read_strictly("config/config.yaml")

    configfile: "config/config.yaml"


use_strict_config()


# The library's schema (package data), the one home of every key, range and default.
# set_default=False: the schema's default: annotations would otherwise be copied into every
# partial case block and override the top-level sections; the library fills the defaults.
validate(config, str(ancf_config.SCHEMA_PATH), set_default=False)


include: "workflow/rules/common.smk"
include: "workflow/rules/kernels.smk"
include: "workflow/rules/critical_dt.smk"
include: "workflow/rules/static.smk"
include: "workflow/rules/modal.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/convergence.smk"
include: "workflow/rules/validation.smk"
include: "workflow/rules/response.smk"
include: "workflow/rules/integrators.smk"
include: "workflow/rules/identification.smk"
include: "workflow/rules/scaling.smk"
include: "workflow/rules/mechanisms.smk"
include: "workflow/rules/collect.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/report_studies.smk"
include: "workflow/rules/report_mechanisms.smk"
include: "workflow/rules/provenance.smk"


# Aggregation and report rendering run on the submitting host under a cluster executor.
localrules:
    all,
    collect,
    report_case,
    report_comparison,
    report_convergence,
    report_critical_dt,
    report_validation,
    report_integrators,
    report_defects,
    report_identification,
    report_scaling,
    report_seed_audit,
    report_mechanisms,
    report_contact,
    report_flagship,
    report_nonsmooth,
    report_index,
    ro_crate,


rule all:
    default_target: True
    input:
        all_outputs(),
        f"{RES}/ro-crate-metadata.json",  # rule ro_crate, after all the others
