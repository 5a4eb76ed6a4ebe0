"""Pinned git checkouts: fetch one commit into a fresh directory and prove HEAD is that commit.

Used for srt-slurm itself (through a cache keyed by commit) and for the external sources a
route or recipe declares. Every failure names the source, its URL and the pin.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


class FetchError(RuntimeError):
    pass


def _git(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True,
                          env={"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent"})


def head_of(directory: Path) -> str | None:
    done = _git("rev-parse", "HEAD", cwd=directory)
    return done.stdout.strip() if done.returncode == 0 else None


def fetch_pinned(name: str, url: str, commit: str, dest: Path) -> str:
    """Fetch ``commit`` of ``url`` into the new directory ``dest``; returns HEAD (== commit)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    steps = (("init", "-q", "."), ("fetch", "-q", "--depth", "1", url, commit), ("checkout", "-q", "--detach", "FETCH_HEAD"))
    for step in steps:
        done = _git(*step, cwd=dest)
        if done.returncode != 0:
            raise FetchError(f"source {name}: cannot fetch {url} at {commit}: git {step[0]} failed: "
                             f"{(done.stderr or done.stdout).strip().splitlines()[-1] if (done.stderr or done.stdout).strip() else done.returncode}")
    head = head_of(dest)
    if head != commit:
        raise FetchError(f"source {name}: {url} checked out {head}, not the pinned {commit}")
    return head


def cached_checkout(name: str, url: str, commit: str, cache_root: Path, dest: Path) -> str:
    """A per-launch checkout of ``commit``, copied from a verified cache entry keyed by commit."""
    cached = cache_root / commit
    if not (cached.is_dir() and head_of(cached) == commit and _git("status", "--porcelain", cwd=cached).stdout == ""):
        tmp = cache_root / f".{commit}.partial"
        fetch_pinned(name, url, commit, tmp)
        if cached.exists():
            shutil.rmtree(cached)
        tmp.rename(cached)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(cached, dest, symlinks=True)
    head = head_of(dest)
    if head != commit:
        raise FetchError(f"source {name}: the cached checkout of {url} is at {head}, not the pinned {commit}")
    return head
