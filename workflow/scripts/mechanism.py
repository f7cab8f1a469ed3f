"""Snakemake adapter: one mechanism case -> results/mechanisms/{case}.nc (histories with units,
provenance and the run's summary as ``summary.*`` attributes)."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_mechanism
from ancf_beam.io import log_to_file, write_netcdf
from ancf_beam.mbs.analysis import run_mechanism
from ancf_beam.studies.mechanisms import summary_attrs

log_to_file(snakemake.log[0])  # the log also records an uncaught error
spec = resolve_mechanism(snakemake.config, snakemake.wildcards.mcase)
summary, ds = run_mechanism(spec, progress=True)
ds.attrs.update(summary_attrs(summary))
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info("mechanism %s: %s", spec.name, summary)
