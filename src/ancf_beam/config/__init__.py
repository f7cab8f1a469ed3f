"""Configuration: YAML -> validated, frozen case and mechanism specifications.

The schema (package data ``ancf_beam/schema/config.schema.yaml``, read by
:mod:`ancf_beam.schema`) holds every key, type, range, default and description; the
submodules resolve beam cases (:mod:`~ancf_beam.config.cases`), mechanisms
(:mod:`~ancf_beam.config.mechanisms`, :mod:`~ancf_beam.config.general`) and contact blocks
(:mod:`~ancf_beam.config.contact`). Bad values raise :class:`~ancf_beam.errors.ConfigError`.
"""

from ancf_beam import specs, yamlio
from ancf_beam.config import cases, contact, mechanisms
from ancf_beam.config.cases import *  # noqa: F403
from ancf_beam.config.contact import *  # noqa: F403
from ancf_beam.config.mechanisms import *  # noqa: F403
from ancf_beam.errors import ConfigError
from ancf_beam.schema import SCHEMA_PATH
from ancf_beam.specs import *  # noqa: F403
from ancf_beam.yamlio import *  # noqa: F403

__all__ = [
    *cases.__all__,
    *contact.__all__,
    *mechanisms.__all__,
    *specs.__all__,
    *yamlio.__all__,
    "ConfigError",
    "SCHEMA_PATH",
]
