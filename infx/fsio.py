"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def replacing(path: Path | str) -> Iterator[Path]:
    """A temporary path in ``path``'s folder (created if missing) to write; on success it
    replaces ``path`` (keeping an existing file's permissions, else 0644), on error it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        yield Path(temporary)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write(path: Path | str, content: str | bytes) -> None:
    """Write all of ``content`` (text as UTF-8, newlines untouched) to ``path`` or nothing."""
    with replacing(path) as temporary:
        temporary.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
