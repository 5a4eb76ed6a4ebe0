"""The point a launch is given, with where each of its keys was written.

``load_point`` reads one point file (or ``$POINT_JSON``); a ``PointFile`` carries its row, the
name diagnostics cite, and the position of every key. Reads one file; no other effect.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..points import read_point
from ..yamlio import Document, parse_yaml


@dataclass(frozen=True, kw_only=True)
class PointFile:
    """One point as the launch reads it: its row, the file it came from, and that file's document
    (None when the row did not come from a file, or its text could not be located)."""

    data: dict
    file: str
    doc: Document | None = None

    def where(self, path: tuple) -> tuple[int, int] | None:
        return self.doc.where(path) if self.doc else None


def load_point(path: str | None, env: dict | None = None) -> PointFile:
    """The point from a JSON file, else from $POINT_JSON, with the position of every key."""
    data, name, text = read_point(path, env)
    doc, problems = parse_yaml(text, name)  # JSON is YAML: reuse the loader for line/column of every key
    return PointFile(data=data, file=name, doc=doc if not problems else None)
