"""Snakemake adapter: per-case results -> summary NetCDF + parameter record table (CSV)."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.io import log_to_file, read_netcdf, write_netcdf
from ancf_beam.studies.collect import collect, data_dictionary

log_to_file(snakemake.log[0])  # the log also records an uncaught error
inp = snakemake.input
studies = {
    "static": inp.static,
    "modal": inp.modal,
    "simulate": inp.simulate,
    "validation": inp.validation,
    "convergence": inp.convergence,
    "critical_dt": inp.critical,
}
per_case = {
    case: {study: read_netcdf(files[i]) for study, files in studies.items()}
    for i, case in enumerate(snakemake.params.cases)
}
ds, table = collect(per_case)
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output.nc)
table.to_csv(snakemake.output.csv, index=False)  # full precision (repr) round trip
data_dictionary(table.columns).to_csv(snakemake.output.units, index=False)
logging.info(
    "collected %d cases; validation %d/%d PASS",
    len(table),
    ds.attrs["validation_pass"],
    ds.attrs["validation_checks"],
)
