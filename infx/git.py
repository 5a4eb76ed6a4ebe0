"""Git, read-only, through argument lists (never a shell string).

Every function takes the repository directory; a ref or path that does not exist is a
usage problem (exit 2), reported as :class:`~infx.diagnostics.UsageError`.
"""

from __future__ import annotations

import os
import subprocess
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


def object_ids(repo: Path, specs: list[str]) -> list[str] | None:
    """Object ids of ``commit:path`` specs in one call; None if any does not exist."""
    done = _git(repo, "rev-parse", *specs, check=False)
    ids = done.stdout.decode().split()
    return ids if done.returncode == 0 and len(ids) == len(specs) else None


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
    """Write the files under ``paths`` as they are at ``commit`` into ``destination``.

    `git archive` piped into `tar` (two argv processes, no shell): git trees cannot hold
    absolute or `..` paths, and tar's C extraction is several times faster than tarfile's.
    """
    present = _git(repo, "ls-tree", "--name-only", "-z", commit, "--", *paths).stdout.decode().split("\0")
    present = [p for p in present if p]
    if not present:
        return
    archive = subprocess.Popen(["git", "-C", str(repo), "archive", "--format=tar", commit, "--", *present],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    extract = subprocess.run(["tar", "-x", "-f", "-", "-C", str(destination)], stdin=archive.stdout, capture_output=True)
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


# Remote git (ls-remote, fetch) runs with this environment: no prompt can block a job, no
# system or user configuration (credential helpers, url rewrites, hooks) applies, and only
# these transports are allowed (never ext::, which runs a command).
REMOTE_PROTOCOLS = "https:ssh:git:file"
_PASSED_THROUGH = ("PATH", "LANG", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY",
                   "SSL_CERT_FILE", "SSL_CERT_DIR")


def remote_env(home: Path) -> dict[str, str]:
    """The environment for git talking to a remote; ``home`` is an empty private directory."""
    env = {key: os.environ[key] for key in _PASSED_THROUGH if key in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
        "GIT_ALLOW_PROTOCOL": REMOTE_PROTOCOLS, "GIT_PROTOCOL_FROM_USER": "0", "LC_ALL": "C",
    })
    return env
