"""A small on-disk cache for work that does not change between runs (parsed configs, recipe
node counts). Best effort: a cache that cannot be read or written only costs time.
``INFX_NO_CACHE=1`` turns it off, ``INFX_CACHE_DIR`` moves it; otherwise it is
``$XDG_CACHE_HOME/infx`` (``~/.cache/infx``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """infx's cache folder: $INFX_CACHE_DIR, else $XDG_CACHE_HOME/infx, else ~/.cache/infx.

    The one place that says where infx keeps things between runs: these caches, and the
    launcher's srt-slurm checkouts and srtctl venvs (needed whether or not INFX_NO_CACHE is
    set). ``env`` is the environment to read (the launcher passes its own), else os.environ.
    """
    env = os.environ if env is None else env
    base = env.get("INFX_CACHE_DIR") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "infx")
    return Path(base)


def cache_dir() -> Path | None:
    """Where cached results live, or None when ``INFX_NO_CACHE`` turns caching off."""
    if os.environ.get("INFX_NO_CACHE"):
        return None
    return cache_home()


def read_cached(name: str) -> bytes | None:
    directory = cache_dir()
    if directory is None:
        return None
    from .fsio import read_bytes

    try:
        return read_bytes(directory / name)  # a regular file only: a FIFO planted in the cache cannot hang a command
    except (OSError, ValueError):
        return None


def write_cached(name: str, content: bytes) -> None:
    directory = cache_dir()
    if directory is None:
        return
    from .fsio import atomic_write

    try:
        atomic_write(directory / name, content)
    except OSError:
        pass
