"""Snakemake adapter: critical explicit time step of one case on every mesh -> one NetCDF each."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.analyses import run_critical_dt
from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, write_netcdf

log_to_file(snakemake.log[0])  # the log also records an uncaught error
measure = {int(m) for m in snakemake.params.measure}
meshes = [int(m) for m in snakemake.params.meshes]
for ne, path in zip(meshes, snakemake.output, strict=True):
    if not str(path).endswith(f"/ne{ne}.nc"):
        raise ValueError(f"output {path} does not match mesh {ne}")
    case = resolve_case(snakemake.config, snakemake.wildcards.case, {"mesh.n_elements": ne})
    summary, ds = run_critical_dt(case, measure=ne in measure)
    ds.attrs["package_fingerprint"] = snakemake.params.package
    write_netcdf(ds, path)
    logging.info("critical_dt %s ne=%d: %s", case.name, ne, summary)
