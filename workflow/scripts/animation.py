"""Snakemake adapter: a mechanism run (results/mechanisms/{case}.nc) -> its animated GIF
(ancf_beam.animation.animate_mechanism)."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import logging

from ancf_beam.animation import animate_mechanism
from ancf_beam.io import log_to_file, read_netcdf

log_to_file(snakemake.log[0])  # the log also records an uncaught error
with read_netcdf(snakemake.input[0]) as run:
    path = animate_mechanism(run.load(), snakemake.output[0], **snakemake.params.settings)
logging.info("animation %s: %d bytes", path, path.stat().st_size)
