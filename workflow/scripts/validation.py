"""Snakemake adapter: validation checks of one case (from its static/modal/simulate results).

``run_family_validation`` is ``run_validation`` (ancf_beam.studies.validation) with the dynamic
checks of a damaged case replaced by the ones that apply to it."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, read_netcdf, write_netcdf
from ancf_beam.studies.validation import run_family_validation

log_to_file(snakemake.log[0])  # the log also records an uncaught error
case = resolve_case(snakemake.config, snakemake.wildcards.case)
settings = snakemake.params.settings
st = read_netcdf(snakemake.input.static)
mo = read_netcdf(snakemake.input.modal)
si = read_netcdf(snakemake.input.simulate)
ds = run_family_validation(
    case, st, mo, si, tolerances=settings["tolerances"], segments=settings["segments"]
)
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
for name, status in zip(ds["name"].values, ds["status"].values, strict=True):
    logging.info("%s %s: %s", case.name, status, name)
