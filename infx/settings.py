"""configs/infx.yaml, the repository's infx settings: where the file is, and reading it once, checked
against infx/schemas/infx-settings.schema.json. Each section is read by the module that uses it:
`repository` by infx.changelog.policy.resolve_slug, `sweep` by infx.launch.lanecheck.read_sweep_lanes.
Reads the one file; no network.
"""

from __future__ import annotations

from pathlib import Path

from .diagnostics import Diagnostic
from .schema import schema_diagnostics
from .yamldoc import Document
from .yamlio import load_yaml

SETTINGS_FILE = "configs/infx.yaml"
SETTINGS_SCHEMA = "infx-settings"  # infx/schemas/infx-settings.schema.json, as infx.schema loads it


def read_settings(root: Path, display: str = SETTINGS_FILE) -> tuple[Document | None, list[Diagnostic]]:
    """The repository's settings file, checked against its schema (``display``: the name its
    diagnostics give it): (its document, []), (None, []) when there is none, or (None, the problems)."""
    path = root / SETTINGS_FILE
    if not path.is_file():
        return None, []
    doc, problems = load_yaml(path, display=display)
    if doc is None or problems:
        return None, problems
    found = schema_diagnostics(SETTINGS_SCHEMA, doc, doc.data) if doc.data is not None else []
    return (None, found) if found else (doc, [])
