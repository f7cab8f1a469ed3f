"""Snakemake adapter: identification of synthetic defects from noisy frequencies -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, write_netcdf
from ancf_beam.studies.identification import run_identification_study

log_to_file(snakemake.log[0])  # the log also records an uncaught error
s = snakemake.params.settings
case = resolve_case(snakemake.config, snakemake.params.case)
ds = run_identification_study(
    case,
    s["lam"],
    s["n"],
    draws=s["draws"],
    sigma_rel=s["sigma_rel"],
    n_modes=s["n_modes"],
    seed=s["seed"],
    truth_mesh=s["truth_mesh"],
    controls=s["controls"],
    forward_mesh=s["forward_mesh"],
)
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info(
    "identification: %d/%d identifiable, 2-sigma coverage lam %.3g n %.3g",
    ds.attrs["n_identifiable"],
    ds.attrs["n_estimates"],
    ds.attrs["coverage_2sigma_lam"],
    ds.attrs["coverage_2sigma_n"],
)
