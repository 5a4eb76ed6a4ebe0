"""srt-slurm on the launch side: checkout, overlays, cluster config, a private srtctl, submission."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..fsio import atomic_write
from ..recipes import RECIPES_DIR

JOB_ID = re.compile(r"Job (\d+)")


class SrtctlError(RuntimeError):
    def __init__(self, message: str, output: str = ""):
        super().__init__(message)
        self.output = output


def apply_overlays(overlays, workspace: Path, checkout: Path) -> None:
    """Copy in-repo recipe folders over the checkout, as the route says (cp -rT semantics)."""
    for source, target in overlays:
        src = workspace / RECIPES_DIR / source
        if not src.is_dir():
            raise SrtctlError(f"overlay {source} does not exist in {workspace / RECIPES_DIR}")
        shutil.copytree(src, checkout / target, dirs_exist_ok=True)


def write_yaml(path: Path, data: dict) -> None:
    atomic_write(path, yaml.safe_dump(data, sort_keys=False))


def install_srtctl(checkout: Path, venv: Path, pip_args: list[str]) -> Path:
    """A per-launch venv with srtctl installed from the checkout; returns the srtctl path."""
    steps = [
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *pip_args, str(checkout)],
    ]
    for argv in steps:
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise SrtctlError(f"failed to install srtctl from {checkout}: {' '.join(argv[:4])}… exited {done.returncode}",
                              done.stdout + done.stderr)
    srtctl = venv / "bin" / "srtctl"
    if not srtctl.exists():
        raise SrtctlError(f"failed to install srtctl: {srtctl} does not exist after installing {checkout}")
    return srtctl


@dataclass
class Submission:
    job_id: str
    output: str


def submit(srtctl: Path, argv: list[str], checkout: Path, env: dict) -> Submission:
    """Run ``srtctl apply …`` (argv, no shell) in the checkout; the captured output is never lost."""
    env = {**env, "PATH": f"{srtctl.parent}{os.pathsep}{env.get('PATH', '')}"}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run([str(srtctl), *argv[1:]], cwd=checkout, capture_output=True, text=True, env=env)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise SrtctlError(f"srtctl apply exited {done.returncode}", output)
    match = JOB_ID.search(output)
    if not match:
        raise SrtctlError("srtctl apply succeeded but printed no job id ('Job <id>')", output)
    return Submission(match.group(1), output)
