"""A small on-disk cache for work that does not change between runs (parsed configs, recipe
node counts). Best effort: a cache that cannot be read or written only costs time.
``INFX_NO_CACHE=1`` turns it off, ``INFX_CACHE_DIR`` moves it; otherwise it is
``$XDG_CACHE_HOME/infx`` (``~/.cache/infx``).

Entries are disposable, so they are written without fsync (a cold run writes about ten; the
syncs cost more than the rest of the writing): each is still renamed into place whole, and
each carries the SHA-256 of its content, so one a crash left empty, cut short or filled with
other bytes is read as a miss, recomputed and written again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from .fsio import atomic_write, read_bytes

ENTRY_HEADER = b"infx-cache-entry 1\n"  # then the SHA-256 digest of the content, then the content
DIGEST_BYTES = hashlib.sha256().digest_size


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """infx's cache folder: $INFX_CACHE_DIR, else $XDG_CACHE_HOME/infx, else ~/.cache/infx.

    The one place that says where infx keeps things between runs: these caches, and the
    launcher's srt-slurm checkouts and srtctl venvs (needed whether or not INFX_NO_CACHE is
    set). ``env`` is the environment to read (the launcher passes its own), else os.environ.
    """
    env = os.environ if env is None else env
    base = env.get("INFX_CACHE_DIR") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "infx"
    )
    return Path(base)


def cache_dir() -> Path | None:
    """Where cached results live, or None when ``INFX_NO_CACHE`` turns caching off."""
    if os.environ.get("INFX_NO_CACHE"):
        return None
    return cache_home()


def entry_bytes(content: bytes) -> bytes:
    """What an entry's file holds: the header, the content's digest, the content."""
    return ENTRY_HEADER + hashlib.sha256(content).digest() + content


def entry_content(stored: bytes) -> bytes | None:
    """The content of an entry's file, or None when it is not one whole entry."""
    start = len(ENTRY_HEADER) + DIGEST_BYTES
    if not stored.startswith(ENTRY_HEADER) or len(stored) < start:
        return None
    content = stored[start:]
    return content if hashlib.sha256(content).digest() == stored[len(ENTRY_HEADER) : start] else None


def read_cached(name: str) -> bytes | None:
    """The content ``write_cached`` kept under ``name``; None for a miss (absent, unreadable,
    or damaged)."""
    directory = cache_dir()
    if directory is None:
        return None

    try:
        stored = read_bytes(directory / name)  # a regular file only: a FIFO planted in the cache cannot hang a command
    except (OSError, ValueError):
        return None
    return entry_content(stored)


def write_cached(name: str, content: bytes) -> None:
    directory = cache_dir()
    if directory is None:
        return

    try:
        atomic_write(directory / name, entry_bytes(content), durable=False)
    except OSError:
        pass
