"""Snakemake adapter: mesh convergence study of one case -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, write_netcdf
from ancf_beam.studies.convergence import run_mesh_convergence

log_to_file(snakemake.log[0])  # the log also records an uncaught error
case = resolve_case(snakemake.config, snakemake.wildcards.case)
ds = run_mesh_convergence(case, snakemake.params.meshes, n_modes=int(snakemake.params.n_modes))
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info(
    "convergence %s: orders %s, status %s",
    case.name,
    ds["observed_order"].values,
    ds["status"].values,
)
