"""Real git repositories for the changelog tests, built in temporary folders.

Commits are made with plumbing (a private index, ``commit-tree``) so a test can create
many head commits on one base without touching the working tree.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": os.environ.get("HOME", "/tmp"),
}


def git(repo: Path, *args: str) -> str:
    """``git ARGS`` in ``repo`` with a fixed identity; its output, stripped (a failure raises)."""
    return subprocess.run(
        ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


class Repo:
    def __init__(self, path: Path):
        self.path = Path(path)

    def git(self, *args: str, input: bytes | None = None, env: dict | None = None) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.path), *args], input=input, capture_output=True, env={**ENV, **(env or {})}
        )
        if done.returncode != 0:
            raise AssertionError(f"git {args} failed: {done.stderr.decode()}")
        return done.stdout.decode().strip()

    @classmethod
    def init(cls, path: Path) -> Repo:
        path.mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.git("init", "-q", "-b", "main")
        repo.git("add", "-A")
        repo.git("commit", "-q", "--allow-empty", "-m", "base")
        return repo

    def commit(self, parent: str, files: dict[str, bytes | None], message: str = "change") -> str:
        """A new commit on ``parent`` with ``files`` replaced (None deletes); the working tree is untouched."""
        index = self.path / ".git" / f"index-{os.getpid()}-{abs(hash(message)) % 10**8}"
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            self.git("read-tree", parent, env=env)
            for name, data in files.items():
                if data is None:
                    self.git("update-index", "--force-remove", "--", name, env=env)
                else:
                    blob = self.git("hash-object", "-w", "--stdin", input=data)
                    self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{name}", env=env)
            tree = self.git("write-tree", env=env)
        finally:
            index.unlink(missing_ok=True)
        return self.git("commit-tree", tree, "-p", parent, "-m", message)

    def read(self, commit: str, name: str) -> bytes:
        return subprocess.run(
            ["git", "-C", str(self.path), "cat-file", "blob", f"{commit}:{name}"], capture_output=True, check=True
        ).stdout
