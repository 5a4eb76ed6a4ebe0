"""Master configs, runners.yaml and components.yaml: loading, validation, normalisation.

The rest of infx uses :func:`load_config_set`; it returns either a validated, normalised
:class:`ConfigSet` or the diagnostics that explain why there is none.

Effects: filesystem, subprocess (git, for the configs of a commit: atref.py); no network.
"""

from .load import (
    DEFAULT_COMPONENTS,
    DEFAULT_MASTER_GLOB,
    DEFAULT_RUNNERS,
    ConfigPaths,
    ConfigSet,
    existing_paths,
    load_config_set,
    resolve_paths,
)
from .request import ValidateRequest, validate_configs

__all__ = [
    "ConfigSet",
    "ConfigPaths",
    "ValidateRequest",
    "validate_configs",
    "load_config_set",
    "resolve_paths",
    "existing_paths",
    "DEFAULT_MASTER_GLOB",
    "DEFAULT_RUNNERS",
    "DEFAULT_COMPONENTS",
]
