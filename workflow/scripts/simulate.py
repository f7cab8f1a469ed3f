"""Snakemake adapter: explicit run of one case with dt from its critical_dt result -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.analyses import run_simulate
from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, read_netcdf, write_netcdf

log_to_file(snakemake.log[0])  # the log also records an uncaught error
ne = int(snakemake.params.n_elements)
case = resolve_case(snakemake.config, snakemake.wildcards.case, {"mesh.n_elements": ne})
with read_netcdf(snakemake.input.critical) as cr:
    dt_critical = float(cr["dt_critical"])
    ne_cr = int(cr.attrs["param.mesh.n_elements"])
    case_cr = str(cr.attrs["case"])
if ne_cr != ne or case_cr != case.name:
    raise ValueError(
        f"{snakemake.input.critical} is for case {case_cr!r} with {ne_cr} elements, "
        f"but the run is case {case.name!r} with {ne} elements"
    )
summary, ds = run_simulate(
    case, dt_critical=dt_critical, t_end=float(snakemake.params.t_end), progress=True
)
ds.attrs["dt_critical_source"] = str(snakemake.input.critical)
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info("simulate %s: %s", case.name, summary)
