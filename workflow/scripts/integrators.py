"""Snakemake adapter: integrator accuracy/cost study of one case -> NetCDF.

dt_critical comes from the case's critical_dt result at the run's mesh, omega_1 from its modal
result and the static tip from its static result."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, read_netcdf, write_netcdf
from ancf_beam.studies.integrators import run_integrator_study

log_to_file(snakemake.log[0])  # the log also records an uncaught error
inp = snakemake.input
s = snakemake.params.settings
ne = int(snakemake.params.n_elements)
case = resolve_case(snakemake.config, snakemake.wildcards.case, {"mesh.n_elements": ne})
with read_netcdf(inp.critical) as cr:
    dt_critical = float(cr["dt_critical"])
    if int(cr.attrs["param.mesh.n_elements"]) != ne:
        raise ValueError(f"{inp.critical} is not for {ne} elements")
with read_netcdf(inp.modal) as mo:
    omega_1 = float(mo["omega"][0])
with read_netcdf(inp.static) as st:
    static_tip = float(st["tip_y"])
ds = run_integrator_study(
    case,
    dt_critical,
    omega_1,
    static_tip,
    t_end=s["t_end"],
    explicit_safety=s["explicit_safety"],
    per_period=s["per_period"],
    damping_ratio=s["damping_ratio"],
    damped_per_period=s["damped_per_period"],
)
ds.attrs.update(
    package_fingerprint=snakemake.params.package,
    dt_critical_source=str(inp.critical),
    omega_1_source=str(inp.modal),
    static_tip_source=str(inp.static),
)
write_netcdf(ds, snakemake.output[0])
for run, pe, dec, err, wall in zip(
    ds["run"].values,
    ds["period_error"].values,
    ds["decay_per_period_rel"].values,
    ds["tip_error"].values,
    ds["wall_s"].values,
    strict=True,
):
    logging.info(
        "%s: period error %.3e, decay/period %.3e, tip error %.3e, wall %.3g s",
        run,
        pe,
        dec,
        err,
        wall,
    )
