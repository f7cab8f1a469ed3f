"""Snakemake adapter: response analysis of one case (static + explicit run) -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, read_netcdf, write_netcdf
from ancf_beam.studies.response import run_response

log_to_file(snakemake.log[0])  # the log also records an uncaught error
case = resolve_case(snakemake.config, snakemake.wildcards.case)
st = read_netcdf(snakemake.input.static)
si = read_netcdf(snakemake.input.simulate)
ds = run_response(case, st, si, n_modes=case.modal.n_modes)
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info(
    "response %s: peak %.5g rad/s, beat %s (%s)",
    case.name,
    float(ds["peak_omega"]),
    bool(ds["has_beat"]),
    ds.attrs["beat_reason"],
)
