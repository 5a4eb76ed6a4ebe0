"""Fixtures for the exit-code tests: the bundled repository, a point, odd files, a full disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from testing.cli import bundled_repository, run_infx


@pytest.fixture(scope="session")
def bundled_template(tmp_path_factory) -> Path:
    return bundled_repository(tmp_path_factory.mktemp("bundled"))


@pytest.fixture
def work(bundled_template, tmp_path) -> Path:
    """A clone of the bundled repository a test may change (origin/main is its base)."""
    clone = tmp_path / "work"
    subprocess.run(
        ["git", "clone", "-q", str(bundled_template / ".." / "origin"), str(clone)], check=True, capture_output=True
    )
    return clone


@pytest.fixture(scope="session")
def bundled_point(bundled_template) -> dict:
    """A real gb300-nv row of the bundled configs, as `infx matrix` prints it."""
    done = run_infx(["matrix", "--runner-type", "gb300-nv"], bundled_template)
    assert done.code == 0, done.stderr
    return json.loads(done.stdout)[0]


@pytest.fixture
def full_folder(tmp_path):
    """A folder on a file system with no space left: a small tmpfs filled up (root may mount
    one); elsewhere the caller falls back to injecting ENOSPC at the write."""
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(folder: Path) -> None:
    """Write into ``folder`` until its file system is full."""
    for size in (65536, 4096, 1):  # big blocks, then the last few bytes
        try:
            with open(folder / f"filler-{uuid.uuid4().hex}", "wb", buffering=0) as handle:
                while True:
                    handle.write(b"\0" * size)
        except OSError:
            pass


def unprivileged_prefix() -> list[str]:
    """An argv prefix under which permissions apply even to root (no CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    assert setpriv, "running as root needs setpriv (util-linux) to test unreadable files"
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
