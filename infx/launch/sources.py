"""Pinned git checkouts: fetch one commit into a fresh directory and prove HEAD is that commit.

Used for srt-slurm itself (through a cache keyed by commit) and for the external sources a
route or recipe declares. Every failure names the source, its URL and the pin.

The repositories fetched here are not ours, and on a self-hosted runner the cache is shared
with other jobs, so git runs as a library would call it: urls and dests are shape-checked
first (:mod:`infx.shapes`), positional arguments follow ``--``, only the lane's protocols
are allowed, no system/global config is read, and no config-driven program (fsmonitor,
hooks, filters, pagers) runs. A cache entry is trusted only when its content hashes to the
pinned commit's tree; anything else is rebuilt. Two launches (or a launch and a seed) that
share the cache take turns on an entry through its lock file (:func:`entry_lock`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import shapes
from ..git import NO_HELPERS


class FetchError(RuntimeError):
    pass


# The .git/config every checkout made here gets; a cache entry with any other is rebuilt.
CANONICAL_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
# How long a launch waits for another process to finish filling a cache entry: a fetch of
# srt-slurm takes seconds to a minute, a srtctl venv install a few minutes.
LOCK_SECONDS = 900.0
LOCK_POLL_SECONDS = 0.1


@contextmanager
def entry_lock(entry: Path, seconds: float = LOCK_SECONDS, error: type[Exception] = FetchError) -> Iterator[Path]:
    """Hold the exclusive lock of a cache entry: ``flock`` on ``<entry>.lock`` beside it.

    The lock goes with the process holding it (a killed launch leaves nothing to clean up), so
    the lock file itself stays; it is opened without following a symlink (the cache may be
    shared). Raises ``error`` after ``seconds`` of waiting.
    """
    lock_path = entry.with_name(f"{entry.name}.lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        reason = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise error(f"cannot open the cache lock {lock_path}: {reason}") from None
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise error(
                        f"waited {seconds:g} s for the cache lock {lock_path}: another infx process is still "
                        f"filling {entry}; rerun when it has finished (its lock ends with it, nothing to delete)"
                    ) from None
                time.sleep(LOCK_POLL_SECONDS)
        yield lock_path
    finally:
        os.close(fd)


def _protocol_options(protocols: tuple[str, ...]) -> list[str]:
    options = ["-c", "protocol.allow=never"]
    for protocol in protocols:
        options += ["-c", f"protocol.{protocol}.allow=always"]
    return options


def _env(protocols: tuple[str, ...], **extra: str) -> dict:
    return {
        "GIT_TERMINAL_PROMPT": "0",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/nonexistent",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_ALLOW_PROTOCOL": ":".join(protocols),
        "GIT_PROTOCOL_FROM_USER": "0",
        **extra,
    }


def _git(
    *argv: str,
    cwd: Path | None = None,
    protocols: tuple[str, ...] = shapes.DEFAULT_GIT_PROTOCOLS,
    env: dict | None = None,
    text: bool = True,
    timeout: float | None = None,
) -> subprocess.CompletedProcess:
    """git as every remote-facing call of infx runs it (see the module docstring); ``timeout`` raises TimeoutExpired."""
    return subprocess.run(
        ["git", *NO_HELPERS, "-c", "core.untrackedCache=false", *_protocol_options(protocols), *argv],
        cwd=cwd,
        capture_output=True,
        text=text,
        env=_env(protocols, **(env or {})),
        timeout=timeout,
    )


def head_of(directory: Path) -> str | None:
    done = _git("rev-parse", "--verify", "--quiet", "HEAD", cwd=directory)
    return done.stdout.strip() if done.returncode == 0 else None


def _seal(directory: Path) -> None:
    """Leave only what git init and the fetch need: our config, no hooks, no info/ attributes."""
    git_dir = directory / ".git"
    (git_dir / "config").write_text(CANONICAL_CONFIG)
    shutil.rmtree(git_dir / "hooks", ignore_errors=True)
    shutil.rmtree(git_dir / "info", ignore_errors=True)


def fetch_pinned(
    name: str,
    url: str,
    commit: str,
    dest: Path,
    root: Path | None = None,
    protocols: tuple[str, ...] = shapes.DEFAULT_GIT_PROTOCOLS,
) -> str:
    """Fetch ``commit`` of ``url`` into the new directory ``dest``; returns HEAD (== commit).

    With ``root``, ``dest`` is the relative path it must stay inside (refused before anything
    is deleted); without, ``dest`` is infx's own directory."""
    problem = shapes.url_problem(url, protocols, f"source {name}: url") or shapes.problem(
        "commit", commit, f"source {name}: commit"
    )
    if problem:
        raise FetchError(problem)
    if root is not None:
        try:
            dest = shapes.inside(root, str(dest), f"source {name}: dest")
        except shapes.Escape as exc:
            raise FetchError(str(exc)) from exc
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    steps = (
        ("init", "-q", "--template=", "."),
        ("fetch", "-q", "--no-tags", "--no-recurse-submodules", "--depth", "1", "--", url, commit),
        ("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", "FETCH_HEAD", "--"),
    )
    for step in steps:
        done = _git(*step, cwd=dest, protocols=protocols)
        if done.returncode != 0:
            output = (done.stderr or done.stdout).strip()
            raise FetchError(
                f"source {name}: cannot fetch {url} at {commit}: git {step[0]} failed: "
                f"{output.splitlines()[-1] if output else done.returncode}"
            )
    _seal(dest)
    head = head_of(dest)
    if head != commit:
        raise FetchError(f"source {name}: {url} checked out {head}, not the pinned {commit}")
    return head


def entry_problem(directory: Path, commit: str) -> str | None:
    """Why a cache entry is not exactly ``commit`` (None when it is), judged by content.

    The entry's own config, index and hooks are not trusted: the config must be ours, the
    commit object must hash to its id, and the worktree, hashed into a fresh index (no
    skip-worktree or assume-unchanged bits), must be the commit's tree."""
    git_dir = directory / ".git"
    if not git_dir.is_dir() or git_dir.is_symlink():
        return "no .git directory"
    try:
        if (git_dir / "config").read_text() != CANONICAL_CONFIG:
            return ".git/config was changed"
    except (OSError, UnicodeDecodeError):
        return ".git/config is unreadable"
    if any((git_dir / extra).exists() for extra in ("hooks", "info", "objects/info/alternates", "commondir")):
        return ".git holds hooks, info/ or alternates"
    if (git_dir / "HEAD").read_text(errors="replace").strip() != commit:
        return "HEAD is not the pinned commit"
    body = _git("cat-file", "commit", commit, cwd=directory, text=False)
    hashed = subprocess.run(
        ["git", "hash-object", "-t", "commit", "--stdin"],
        input=body.stdout,
        capture_output=True,
        env=_env(shapes.DEFAULT_GIT_PROTOCOLS),
    )
    if body.returncode != 0 or hashed.stdout.decode().strip() != commit:
        return "the commit object does not hash to the pinned commit"
    tree = body.stdout.split(b"\n", 1)[0].removeprefix(b"tree ").decode()
    with tempfile.TemporaryDirectory(prefix="infx-index-") as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        added = _git("add", "--all", "--force", "--", ".", cwd=directory, env=index)
        written = _git("write-tree", cwd=directory, env=index)
    if added.returncode != 0 or written.returncode != 0:
        return f"cannot hash the worktree: {(added.stderr or written.stderr).strip()[-300:]}"
    if written.stdout.strip() != tree:
        return "the worktree does not match the pinned commit's tree"
    return None


def cached_checkout(
    name: str,
    url: str,
    commit: str,
    cache_root: Path,
    dest: Path,
    protocols: tuple[str, ...] = shapes.DEFAULT_GIT_PROTOCOLS,
    lock_seconds: float = LOCK_SECONDS,
) -> str:
    """A per-launch checkout of ``commit``, copied from a cache entry keyed by commit and
    verified by content (:func:`entry_problem`); an entry that does not verify is rebuilt.

    Check, rebuild and copy happen under the entry's lock: a second launch waits for the
    first to finish the entry and then copies the verified one."""
    problem = shapes.problem("commit", commit, f"{name} pin commit")
    if problem:
        raise FetchError(problem)
    cache_root.mkdir(parents=True, exist_ok=True)
    cached = cache_root / commit
    with entry_lock(cached, lock_seconds):
        if not cached.is_dir() or entry_problem(cached, commit) is not None:
            tmp = Path(tempfile.mkdtemp(prefix=f".{commit}.", suffix=".partial", dir=cache_root))
            try:
                fetch_pinned(name, url, commit, tmp, protocols=protocols)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            if cached.is_symlink() or cached.is_file():
                cached.unlink()
            elif cached.exists():
                shutil.rmtree(cached)
            os.replace(tmp, cached)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(cached, dest, symlinks=True)
    problem = entry_problem(dest, commit)
    if problem:  # changed between the check and the copy
        raise FetchError(f"source {name}: the cached checkout of {url} is not the pinned {commit}: {problem}")
    return commit
