"""Git, read-only, through argument lists (never a shell string).

Every function takes the repository directory; a ref or path that does not exist is a
usage problem (exit 2), reported as :class:`~infx.diagnostics.UsageError`.

Every call carries :data:`NO_HELPERS`: a repository's (or the runner's) config cannot make
git run a program (an fsmonitor, a hook, a pager, an external diff). Refs and paths come
after ``--end-of-options`` or ``--`` wherever git accepts one, and a ref starting with ``-``
is refused before git sees it (``rev-parse`` in git 2.39 prints ``--end-of-options`` back).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .diagnostics import UsageError
from .shapes import accepted, problem


class GitError(UsageError):
    pass


# Config-driven programs git would otherwise run for a repository it reads.
NO_HELPERS = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.external=",
    "-c",
    "core.sshCommand=false",
    "-c",
    "credential.helper=",
    "-c",
    "core.askPass=",
)


def git_argv(repo: Path, *args: str) -> list[str]:
    return ["git", *NO_HELPERS, "-C", str(repo), *args]


def _no_option(*values: str) -> None:
    for value in values:
        if value.startswith("-"):
            raise GitError(f"{value!r} is not a usable git ref or path", "Pass a branch, tag, commit id or a path.")


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(git_argv(repo, *args), capture_output=True)
    except FileNotFoundError as exc:  # git itself is missing
        raise GitError("git is not installed or not on PATH", "Install git; infx reads refs with it.") from exc
    if check and done.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace').strip()}")
    return done


def toplevel(path: Path) -> Path:
    done = _git(path, "rev-parse", "--show-toplevel", check=False)
    if done.returncode != 0:
        raise GitError(f"{path} is not inside a git repository", "Run infx from a clone of the benchmark repository.")
    return Path(done.stdout.decode().strip())


def resolve(repo: Path, ref: str) -> str:
    """The commit id ``ref`` names; exit 2 if it names nothing."""
    if problem("git-ref", ref, "the git ref"):
        raise GitError(f"{str(ref)[:200]!r} is not a usable git ref", f"Pass {accepted('git-ref')}.")
    done = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if done.returncode != 0:
        raise GitError(
            f"the git ref {ref!r} does not exist in {repo}",
            "Fetch it first (actions/checkout with fetch-depth: 0) or pass an existing branch or commit.",
        )
    return done.stdout.decode().strip()


def merge_base(repo: Path, a: str, b: str) -> str:
    _no_option(a, b)
    done = _git(repo, "merge-base", "--end-of-options", a, b, check=False)
    if done.returncode != 0:
        raise GitError(f"{a} and {b} have no common ancestor", "Fetch the full history (fetch-depth: 0).")
    return done.stdout.decode().strip()


def read_file(repo: Path, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``commit``, or None when the file does not exist there."""
    _no_option(commit)
    done = _git(repo, "cat-file", "--end-of-options", "blob", f"{commit}:{path}", check=False)
    return done.stdout if done.returncode == 0 else None


def object_ids(repo: Path, specs: list[str]) -> list[str] | None:
    """Object ids of ``commit:path`` specs in one call; None if any does not exist."""
    _no_option(*specs)
    done = _git(repo, "rev-parse", *specs, check=False)
    ids = done.stdout.decode().split()
    return ids if done.returncode == 0 and len(ids) == len(specs) else None


def blob_ids(repo: Path, commit: str, paths: list[str]) -> dict[str, str]:
    """path -> blob id for every file under ``paths`` at ``commit`` (recursively)."""
    _no_option(commit)
    done = _git(repo, "ls-tree", "-r", "-z", "--end-of-options", commit, "--", *paths)
    result = {}
    for record in done.stdout.split(b"\0"):
        if record:
            meta, name = record.split(b"\t", 1)
            result[name.decode()] = meta.split()[2].decode()
    return result


def materialize(repo: Path, commit: str, paths: list[str], destination: Path) -> None:
    """Write the files under ``paths`` as they are at ``commit`` into ``destination``.

    `git archive` piped into `tar` (two argv processes, no shell): git trees cannot hold
    absolute or `..` paths, and tar's C extraction is several times faster than tarfile's.
    """
    _no_option(commit)
    present = (
        _git(repo, "ls-tree", "--name-only", "-z", "--end-of-options", commit, "--", *paths).stdout.decode().split("\0")
    )
    present = [p for p in present if p]
    if not present:
        return
    archive = subprocess.Popen(
        git_argv(repo, "archive", "--format=tar", commit, "--", *present),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    extract = subprocess.run(
        ["tar", "-x", "-f", "-", "-C", str(destination)], stdin=archive.stdout, capture_output=True
    )
    assert archive.stdout is not None and archive.stderr is not None  # both are pipes
    archive.stdout.close()
    archive_error = archive.stderr.read()
    if archive.wait() != 0 or extract.returncode != 0:
        message = (archive_error or extract.stderr).decode(errors="replace").strip()
        raise GitError(f"cannot materialise {', '.join(present)} at {commit[:12]}: {message}")


def head_commit(repo: Path) -> str | None:
    done = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else None


def worktree_matches(repo: Path, commit: str, paths: list[str]) -> bool:
    """True when the working tree holds ``paths`` exactly as ``commit`` does (so it can be read in place)."""
    trees = object_ids(repo, [f"{rev}:{path}" for path in paths for rev in ("HEAD", commit)])
    if trees is None or any(a != b for a, b in zip(trees[::2], trees[1::2])):
        return False
    done = _git(repo, "status", "--porcelain", "--untracked-files=all", "--", *paths, check=False)
    return done.returncode == 0 and not done.stdout.strip()


def commit_message(repo: Path, commit: str) -> str:
    """The full message of ``commit`` (already resolved)."""
    return _git(repo, "log", "-1", "--format=%B", commit).stdout.decode(errors="replace")


def remote_url(repo: Path, name: str = "origin") -> str | None:
    """The URL of the remote ``name``; None when ``repo`` is not a git repository or has no such remote."""
    _no_option(name)
    done = _git(repo, "remote", "get-url", name, check=False)
    return done.stdout.decode(errors="replace").strip() or None if done.returncode == 0 else None
