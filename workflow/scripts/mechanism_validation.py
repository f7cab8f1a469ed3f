"""Snakemake adapter: the checks of one mechanism case against the independent references
(ancf_beam.studies.mechanisms.run_mechanism_validation; a nonsmooth case against its
compliant counterpart as K grows) -> a check table (NetCDF)."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_mechanism
from ancf_beam.io import log_to_file, read_netcdf, write_netcdf
from ancf_beam.studies.mechanisms import run_mechanism_validation

log_to_file(snakemake.log[0])  # the log also records an uncaught error
spec = resolve_mechanism(snakemake.config, snakemake.wildcards.mcase)
compliant = snakemake.params.compliant  # a nonsmooth case's compliant counterpart, or ""
compliant = resolve_mechanism(snakemake.config, compliant) if compliant else None
with read_netcdf(snakemake.input[0]) as run:
    ds = run_mechanism_validation(
        spec,
        run.load(),
        tolerances=snakemake.params.tolerances,
        compliant=compliant,
        K_factors=snakemake.params.K_factors,
    )
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
for name, status in zip(ds["name"].values, ds["status"].values, strict=True):
    logging.info("%s %s: %s", spec.name, status, name)
