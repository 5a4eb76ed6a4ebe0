"""Master configs, runners.yaml and components.yaml: loading, validation, normalisation.

The rest of infx uses :func:`load_config_set`; it returns either a validated, normalised
:class:`ConfigSet` or the diagnostics that explain why there is none.
"""

from .load import DEFAULT_COMPONENTS, DEFAULT_MASTER_GLOB, DEFAULT_RUNNERS, ConfigSet, load_config_set

__all__ = ["ConfigSet", "load_config_set", "DEFAULT_MASTER_GLOB", "DEFAULT_RUNNERS", "DEFAULT_COMPONENTS"]
