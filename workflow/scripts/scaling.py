"""Snakemake adapter: wall time against the mesh, explicit vs generalized-alpha -> NetCDF."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.config import resolve_case
from ancf_beam.io import log_to_file, write_netcdf
from ancf_beam.studies.scaling import run_scaling_study

log_to_file(snakemake.log[0])  # the log also records an uncaught error
s = snakemake.params.settings
case = resolve_case(snakemake.config, snakemake.params.case)
ds = run_scaling_study(
    case,
    s["meshes"],
    t_end=s["t_end"],
    explicit_safety=s["explicit_safety"],
    full_max_elements=s["full_max_elements"],
    window_wall_s=s["window_wall_s"],
    min_window_steps=s["min_window_steps"],
    per_period_candidates=s["per_period"],
    tip_error_target=s["tip_error"],
    calibration_mesh=s["calibration_mesh"],
    fit_min_elements=s["fit_min_elements"],
)
ds.attrs["package_fingerprint"] = snakemake.params.package
write_netcdf(ds, snakemake.output[0])
a = ds.attrs
logging.info(
    "scaling: explicit ~ n^%.2f, implicit ~ n^%.2f (T1/%g), crossover %.3g elements (%s)",
    a["explicit_exponent"],
    a["implicit_exponent"],
    a["per_period"],
    a["crossover_elements"],
    a["crossover_kind"],
)
