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

# What srtctl apply prints once sbatch accepted the job (srt-slurm v1.0.25 … v1.0.50 and the
# sa-submission/aflowers branches all print exactly this line: "✅ Job <id> submitted!").
JOB_ID = re.compile(r"^\W*Job (\d+) submitted!", re.MULTILINE)
# `srtctl dry-run` prints the sbatch script as a rich panel titled like this, one numbered row
# per script line ("│   12 #SBATCH --nodes=2 … │"); a wide COLUMNS keeps rows unwrapped.
SCRIPT_PANEL_TITLE = "Generated sbatch Script"
SCRIPT_ROW = re.compile(r"^ *(\d+)(?: (.*))?$")
DRY_RUN_ENV = {
    "HF_HUB_OFFLINE": "1",
    "COLUMNS": "10000",
    "TERM": "dumb",
    "NO_COLOR": "1",
}  # no hub lookups, no wrapping


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


def stage_checkout(plan, workspace: Path, checkout: Path) -> Path:
    """Overlays, the resolved recipe and srtslurm.yaml, written into ``checkout`` as a launch does.

    Returns the resolved recipe's path. The same staging serves the launch and the dry run's
    ``srtctl dry-run``, so what srtctl checks in a dry run is what it gets at submission.
    """
    apply_overlays(plan.route.overlays, workspace, checkout)
    resolved = checkout / plan.resolved_path
    write_yaml(resolved, plan.recipe)
    write_yaml(checkout / "srtslurm.yaml", plan.cluster_config(str(checkout), plan.squash_file()))
    return resolved


def install_srtctl(checkout: Path, venv: Path, pip_args: list[str]) -> Path:
    """A per-launch venv with srtctl installed from the checkout; returns the srtctl path."""
    steps = [
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *pip_args, str(checkout)],
    ]
    for argv in steps:
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            raise SrtctlError(
                f"failed to install srtctl from {checkout}: {' '.join(argv[:4])}… exited {done.returncode}",
                done.stdout + done.stderr,
            )
    srtctl = venv / "bin" / "srtctl"
    if not srtctl.exists():
        raise SrtctlError(f"failed to install srtctl: {srtctl} does not exist after installing {checkout}")
    return srtctl


@dataclass
class Submission:
    job_id: str
    output: str


def _private_env(srtctl: Path, env: dict) -> dict:
    env = {**env, "PATH": f"{srtctl.parent}{os.pathsep}{env.get('PATH', '')}"}
    env.pop("VIRTUAL_ENV", None)
    return env


def job_id_of(output: str) -> str:
    """The job id in srtctl apply's output; exactly one submission is expected."""
    ids = list(dict.fromkeys(JOB_ID.findall(output)))
    if len(ids) != 1:
        found = f"{len(ids)} ({', '.join(ids)})" if ids else "none"
        raise SrtctlError(
            f"srtctl apply succeeded but printed {found} 'Job <id> submitted!' lines; expected one", output
        )
    return ids[0]


def script_from_dry_run(output: str) -> str | None:
    """The sbatch script of ``srtctl dry-run``'s output (its numbered panel), or None if absent."""
    lines = output.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if SCRIPT_PANEL_TITLE in line and line.lstrip().startswith("╭")), None
    )
    if start is None:
        return None
    script: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith("╰"):
            break
        row = SCRIPT_ROW.match(line.strip().removeprefix("│").removesuffix("│").rstrip())
        if row is None or int(row.group(1)) != len(script) + 1:
            return None  # not the numbered layout this parser knows: better no script than a wrong one
        script.append(row.group(2) or "")
    return "\n".join(script) + "\n" if script else None


@dataclass
class DryRun:
    exit_code: int
    output: str
    script: str | None


def dry_run(srtctl: Path, resolved: Path, checkout: Path, env: dict) -> DryRun:
    """``srtctl dry-run -f <resolved recipe>`` in the staged checkout (argv, no shell)."""
    done = subprocess.run(
        [str(srtctl), "dry-run", "-f", str(resolved.relative_to(checkout))],
        cwd=checkout,
        capture_output=True,
        text=True,
        env=_private_env(srtctl, {**env, **DRY_RUN_ENV}),
    )
    output = done.stdout + done.stderr
    return DryRun(done.returncode, output, script_from_dry_run(done.stdout) if done.returncode == 0 else None)


def submit(srtctl: Path, argv: list[str], checkout: Path, env: dict) -> Submission:
    """Run ``srtctl apply …`` (argv, no shell) in the checkout; the captured output is never lost."""
    done = subprocess.run(
        [str(srtctl), *argv[1:]], cwd=checkout, capture_output=True, text=True, env=_private_env(srtctl, env)
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise SrtctlError(f"srtctl apply exited {done.returncode}", output)
    return Submission(job_id_of(output), output)
