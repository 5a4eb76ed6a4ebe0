"""Git, read-only, through argument lists (never a shell string).

Every function takes the repository directory; a ref or path that does not exist is a
usage problem (exit 2), reported as :class:`~infx.diagnostics.UsageError`.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from .diagnostics import UsageError


class GitError(UsageError):
    pass


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True)
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
    if not ref or ref.startswith("-"):
        raise GitError(f"{ref!r} is not a usable git ref", "Pass a branch, tag or commit id.")
    done = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if done.returncode != 0:
        raise GitError(f"the git ref {ref!r} does not exist in {repo}",
                       "Fetch it first (actions/checkout with fetch-depth: 0) or pass an existing branch or commit.")
    return done.stdout.decode().strip()


def merge_base(repo: Path, a: str, b: str) -> str:
    done = _git(repo, "merge-base", a, b, check=False)
    if done.returncode != 0:
        raise GitError(f"{a} and {b} have no common ancestor", "Fetch the full history (fetch-depth: 0).")
    return done.stdout.decode().strip()


def read_file(repo: Path, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``commit``, or None when the file does not exist there."""
    done = _git(repo, "cat-file", "blob", f"{commit}:{path}", check=False)
    return done.stdout if done.returncode == 0 else None


def blob_ids(repo: Path, commit: str, paths: list[str]) -> dict[str, str]:
    """path -> blob id for every file under ``paths`` at ``commit`` (recursively)."""
    done = _git(repo, "ls-tree", "-r", "-z", commit, "--", *paths)
    result = {}
    for record in done.stdout.split(b"\0"):
        if record:
            meta, name = record.split(b"\t", 1)
            result[name.decode()] = meta.split()[2].decode()
    return result


def materialize(repo: Path, commit: str, paths: list[str], destination: Path) -> None:
    """Write the files under ``paths`` as they are at ``commit`` into ``destination``."""
    present = [p for p in paths if blob_ids(repo, commit, [p])]
    if not present:
        return
    done = _git(repo, "archive", "--format=tar", commit, "--", *present)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(destination, filter="data")


def head_commit(repo: Path) -> str | None:
    done = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else None


def worktree_matches(repo: Path, commit: str, paths: list[str]) -> bool:
    """True when the working tree holds ``paths`` exactly as ``commit`` does (so it can be read in place)."""
    specs = [f"{rev}:{path}" for path in paths for rev in ("HEAD", commit)]
    done = _git(repo, "rev-parse", *specs, check=False)
    trees = done.stdout.decode().split()
    if done.returncode != 0 or len(trees) != len(specs) or any(a != b for a, b in zip(trees[::2], trees[1::2])):
        return False
    done = _git(repo, "status", "--porcelain", "--untracked-files=all", "--", *paths, check=False)
    return done.returncode == 0 and not done.stdout.strip()
