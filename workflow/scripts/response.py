"""Snakemake adapter: response analysis of one case (static + explicit run) -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

import xarray as xr

from ancf_beam.config import resolve_case
from ancf_beam.io import write_netcdf
from ancf_beam.studies.response import run_response

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, force=True,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")  # fmt: skip
case = resolve_case(snakemake.config, snakemake.wildcards.case)
st = xr.load_dataset(snakemake.input.static)
si = xr.load_dataset(snakemake.input.simulate)
ds = run_response(case, st, si, n_modes=case.modal.n_modes)
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info("response %s: peak %.5g rad/s, beat %s (%s)", case.name, float(ds["peak_omega"]),
             bool(ds["has_beat"]), ds.attrs["beat_reason"])  # fmt: skip
