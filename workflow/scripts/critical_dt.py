"""Snakemake adapter: critical explicit time step of one case on one mesh -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.analyses import run_critical_dt
from ancf_beam.config import resolve_case
from ancf_beam.io import write_netcdf

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, force=True,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")  # fmt: skip
ne = int(snakemake.wildcards.ne)
case = resolve_case(snakemake.config, snakemake.wildcards.case, {"mesh.n_elements": ne})
summary, ds = run_critical_dt(case, measure=bool(snakemake.params.measure))
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info("critical_dt %s ne=%d: %s", case.name, ne, summary)
