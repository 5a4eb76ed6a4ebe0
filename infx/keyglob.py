"""Config-key patterns, one rule for the changelog and `infx matrix --config-key`: `*` is the
only wildcard (any run of characters, across `-` too); every other character is literal; the
whole key must match."""

from __future__ import annotations

import re


def key_regex(pattern: str) -> re.Pattern:
    return re.compile("^" + ".*".join(re.escape(part) for part in pattern.split("*")) + "$", re.DOTALL)


def matching_keys(pattern: str, keys: list[str]) -> list[str]:
    """The keys ``pattern`` names, in the order of ``keys`` (a literal names itself, if present)."""
    if "*" not in pattern:
        return [pattern] if pattern in keys else []
    regex = key_regex(pattern)
    return [key for key in keys if regex.match(key)]
