# The configuration as the library reads it (ancf_beam.config.load_config).
# Snakemake's own reader keeps the last of two equal keys (a repeated case block would silently
# replace the first), reads 1e-9 as a string and names neither file nor line on a syntax error.
# The strict reader names the file and line of any malformed YAML, unsafe tag, non-UTF-8 byte
# or duplicate key, accepts merge keys, and bounds the file size and alias expansion. The
# Snakefile reads config/config.yaml with it before Snakemake's reader sees the file; a file
# given with --configfile was parsed by Snakemake before the Snakefile runs (a file that is not
# YAML at all stops there, with Snakemake's message) and is read again here. The workflow then
# works on the strictly read data: the config files merged in order, then --config KEY=VALUE.
from pathlib import Path

from snakemake.utils import update_config

import ancf_beam.config as ancf_config

_STRICT = {}


def read_strictly(path):
    """The config file ``path`` read by the library (once per run); its errors stop the run."""
    key = str(Path(path).resolve())
    if key not in _STRICT:
        try:
            _STRICT[key] = ancf_config.load_config(path)
        except ancf_config.ConfigError as exc:
            raise WorkflowError(str(exc)) from None
    return _STRICT[key]


def use_strict_config():
    """Replace Snakemake's reading of the config files by the library's."""
    merged = {}
    for path in workflow.configfiles:
        update_config(merged, read_strictly(path))
    update_config(merged, dict(workflow.config_settings.config))
    config.clear()
    config.update(merged)
