"""Parsed YAML remembered across runs, for files read on every command (the master configs,
runners.yaml, components.yaml).

The data of a file that loaded without a problem is kept in infx's cache (infx/diskcache.py)
under the SHA-256 of its bytes and of the loader's code: the same bytes read by the same
loader give the same data, so a hit skips parsing entirely. Positions are kept beside it and
read only on the first ``where()`` (a command that locates a diagnostic, e.g. a warning). A
file with a problem is never cached, so its diagnostics always come from the strict loader.
A hit does not import the loader (nor PyYAML): only a miss or a first ``where()`` parses.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .diagnostics import Diagnostic
from .diskcache import read_cached, write_cached
from .fsio import read_bytes
from .yamldoc import Document

LOADER = Path(__file__).with_name("yamlio.py")  # the code whose output is cached


@dataclass
class LazyDocument(Document):
    """A cached document: its positions come from one re-parse, on the first ``where()``."""

    raw: bytes = field(default=b"", repr=False)
    marks_entry: str = ""
    located: bool = False

    def where(self, path):
        if not self.located:
            self.marks = _cached(self.marks_entry)
            if self.marks is None:  # not kept: positions from one re-parse
                from .yamlio import parse_yaml

                doc, _ = parse_yaml(self.raw, self.file)
                self.marks = doc.marks if doc is not None else {}
            self.located = True
        return super().where(path)


def _cached(entry: str):
    cached = read_cached(entry)
    if cached is None:
        return None
    try:
        return marshal.loads(cached)
    except (ValueError, EOFError, TypeError):
        return None  # a damaged entry: parse afresh and overwrite it


@lru_cache(maxsize=1)
def _loader_digest() -> bytes:
    return hashlib.sha256(LOADER.read_bytes()).digest()


def load_yaml_cached(path: Path, display: str | None = None) -> tuple[Document | None, list[Diagnostic]]:
    """``yamlio.load_yaml``, answered from the cache when the same bytes were loaded before."""
    name = display or str(path)
    try:
        raw = read_bytes(path)  # a regular file only, as load_yaml reads it: a FIFO is refused, not waited on
    except (OSError, ValueError):
        from .yamlio import load_yaml

        return load_yaml(path, display)  # it reports the missing or unreadable file
    key = hashlib.sha256(_loader_digest() + raw).hexdigest()[:32]
    entry = f"yaml-{key}-{sys.implementation.cache_tag}"  # marshal's format is the interpreter's
    data = _cached(entry + ".data")
    if data is not None:  # only a file that loaded without a problem (so within the size limit) is kept
        return LazyDocument(name, data, raw=raw, marks_entry=entry + ".marks"), []
    from .yamlio import parse_yaml

    doc, problems = parse_yaml(raw, name)  # a file past the size limit: its real size, as load_yaml says it
    if doc is not None and not problems and doc.data is not None:
        try:
            write_cached(entry + ".marks", marshal.dumps(doc.marks))
            write_cached(entry + ".data", marshal.dumps(doc.data))  # last: data present means marks are too
        except ValueError:  # data marshal cannot hold (none today): only costs time
            pass
    return doc, problems
