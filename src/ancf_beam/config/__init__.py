"""Configuration: YAML -> validated, frozen case and mechanism specifications.

One schema (package data ``ancf_beam/schema/config.schema.yaml``) holds every key, its type,
range, default and description: :mod:`~ancf_beam.config.schema` validates with it and reads the
defaults from it. :mod:`~ancf_beam.config.cases` resolves beam cases and the workflow's
``pipeline`` section, :mod:`~ancf_beam.config.mechanisms` mechanism cases,
:mod:`~ancf_beam.config.contact` their contact and friction blocks, and
:mod:`ancf_beam.yamlio` (the strict YAML reader) reads the files. Any bad value raises
:class:`~ancf_beam.errors.ConfigError` naming the key, the value and the allowed range.
"""

from ancf_beam import yamlio
from ancf_beam.config import cases, contact, mechanisms
from ancf_beam.config.cases import *  # noqa: F403
from ancf_beam.config.contact import *  # noqa: F403
from ancf_beam.config.mechanisms import *  # noqa: F403
from ancf_beam.config.schema import SCHEMA_PATH
from ancf_beam.errors import ConfigError
from ancf_beam.yamlio import *  # noqa: F403

__all__ = [
    *cases.__all__,
    *contact.__all__,
    *mechanisms.__all__,
    *yamlio.__all__,
    "ConfigError",
    "SCHEMA_PATH",
]
