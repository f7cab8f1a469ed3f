"""Snakemake adapter: static equilibrium of one case -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.analyses import run_static
from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, write_netcdf

log_to_file(snakemake.log[0])  # the log also records an uncaught error
case = resolve_case(snakemake.config, snakemake.wildcards.case)
summary, ds = run_static(case)
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info("static %s: %s", case.name, summary)
