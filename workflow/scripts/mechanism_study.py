"""Snakemake adapter: one mechanism study (clearance_sweep, contact_laws, flagship) of
ancf_beam.studies.mechanisms on its base case -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_mechanism
from ancf_beam.io import log_to_file, write_netcdf
from ancf_beam.studies import mechanisms as studies

log_to_file(snakemake.log[0])  # the log also records an uncaught error
study = snakemake.wildcards.study
spec = resolve_mechanism(snakemake.config, snakemake.params.case)
s = snakemake.params.settings
long = {
    k: s[k] for k in ("revolutions", "skip_revolutions") if k in s
}  # long runs: statistics per crank revolution
if "phases" in s:
    long["phases_deg"] = s["phases"]
if study == "clearance_sweep":
    ds = studies.run_clearance_sweep(spec, s["clearances"], **long)
elif study == "contact_laws":
    ds = studies.run_contact_laws(spec, s["laws"], s["restitution"], s["K"], s["exponent"])
else:
    ds = studies.run_flagship(
        spec,
        s["lam"],
        s["damage"],
        check_revolutions=s["check_revolutions"],
        workers=snakemake.threads,
        **long,
    )
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
logging.info("%s on %s: %s", study, spec.name, dict(ds.sizes))
