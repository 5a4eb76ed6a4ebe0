"""`infx config validate` as a library call: which files, and the base the findings are judged against."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import Report
from .atref import judged_against_base
from .load import existing_paths, load_config_set


@dataclass(frozen=True, kw_only=True)
class ValidateRequest:
    """`infx config validate`: the master configs (none: configs/*-master.yaml), runners.yaml and
    components.yaml (None: their default paths); ``base_ref``: a finding already there is a warning."""

    masters: tuple[Path, ...] = ()
    runners: Path | None = None
    components: Path | None = None
    base_ref: str | None = None


def validate_configs(request: ValidateRequest) -> Report:
    """Every problem of the named files at once, located; a file to read that is missing is a usage error (exit 2)."""
    paths = existing_paths(list(request.masters) or None, request.runners, request.components)
    report = load_config_set(paths=paths)[1]
    return report if request.base_ref is None else judged_against_base(report, paths, request.base_ref)
