"""Identity of one sweep point, shared by the launcher, the workflows and the GitHub API.

A row's ``recipe-fingerprint`` names its topology (everything but concurrency); the
point id adds the concurrency so every GitHub job, artifact and launch record of a sweep
has one stable, short name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .diagnostics import InfxError, UsageError, error


def point_id(row: dict) -> str:
    conc = row.get("conc")
    concs = conc if isinstance(conc, list) else [conc]
    fingerprint = str(row.get("recipe-fingerprint", "nofingerprint"))[:16]
    return f"{fingerprint}-c{'x'.join(str(c) for c in concs)}"


def read_point(path: str | None, env: dict | None = None) -> tuple[dict, str, str]:
    """(row, name, text) of the point in a JSON file, else in $POINT_JSON (what workflows set).

    No point at all, or a missing file, is a usage error (exit 2); text that is not one JSON
    object is a located error (exit 1).
    """
    env = os.environ if env is None else env
    if path:
        file = Path(path)
        if not file.is_file():
            raise UsageError(f"no point file at {path}", "Pass --point with a matrix row saved as JSON, or set POINT_JSON.", file=path)
        text, name = file.read_text(encoding="utf-8", errors="replace"), path
    elif env.get("POINT_JSON"):
        text, name = env["POINT_JSON"], "$POINT_JSON"
    else:
        raise UsageError("no point given", "Pass --point FILE or set POINT_JSON to one matrix row (JSON).")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InfxError(error(name, (exc.lineno, exc.colno), "point-json", f"the point is not valid JSON: {exc.msg}",
                              "A point is one matrix row as a JSON object."))
    if not isinstance(data, dict):
        raise InfxError(error(name, (1, 1), "point-json", "the point must be a JSON object", "A point is one matrix row."))
    return data, name, text
