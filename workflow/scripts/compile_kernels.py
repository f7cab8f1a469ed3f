"""Snakemake adapter: compile (or load) one group of the pipeline's numba kernels -> JSON record."""

# ruff: noqa: F821  (``snakemake`` is injected by the script directive)
import json
import logging

from ancf_beam.io import log_to_file
from ancf_beam.warmup import warm_kernels, write_record

log_to_file(snakemake.log[0])  # the log also records an uncaught error
record = warm_kernels(snakemake.config, log=logging.info, groups=[snakemake.wildcards.group])
record["package_fingerprint"] = snakemake.params.package
write_record(record, snakemake.output[0])
logging.info("compiled kernels: %s", json.dumps(record))
