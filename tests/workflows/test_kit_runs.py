"""A benchmark repository adopting infx through `infx init` (no infx source in it) sweeps with
the kit's workflows: every job installs the released infx, pinned, with the kit's lock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from executor import PROJECT, Executor
from runner_python import Runtime, runtime_file

from infx.points import point_id

SLUG = "SemiAnalysisAI/InferenceX"  # the bundled changelog's pr-link repository


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout.strip()


def test_a_benchmark_repository_with_the_kit_runs_a_manual_sweep(tmp_path: Path):
    runtime = Runtime.read(runtime_file())
    repo = tmp_path / "bench"
    repo.mkdir()
    for name in ("configs", "runners", "benchmarks"):
        shutil.copytree(PROJECT / name, repo / name)
    shutil.copy(PROJECT / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    git(repo, "init", "-q", "-b", "main")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_"))}
    # The session's wheel stands for the released infx the repository pins.
    done = subprocess.run([sys.executable, "-m", "infx", "init", "--pin", runtime.version], cwd=repo, capture_output=True,
                          text=True, env={**env, "PYTHONPATH": str(PROJECT)})
    assert done.returncode == 0, done.stderr
    assert not (repo / "infx").exists() and not (repo / "pyproject.toml").exists()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Adopt infx")
    run = Executor(repo, tmp_path / "run", "workflow_dispatch", {"ref": "refs/heads/main"}, sha=git(repo, "rev-parse", "HEAD"),
                   repository=SLUG, run_id=9500)
    results = run.run(inputs={"dry-run": True, "no-reuse": True, "config-keys": "dsv4-fp4-gb300-dynamo-sglang"})
    failed = "\n".join(f"== {job.path}\n{job.log[-2000:]}" for job in run.jobs if job.result == "failure")
    assert results["setup"] == "success" and results["sweep"] == "success", failed
    points = [job for job in run.jobs if job.path.endswith("/launch")]
    assert len(points) == 7 and all(job.result == "success" for job in points), failed
    launched = sorted(point_id(point_of(job)) for job in points)
    assert len(set(launched)) == 7
    # Each point job installed infx itself (its own venv): the pinned release and the kit's lock.
    run_point = (repo / ".github" / "workflows" / "run-point.yml").read_text()
    assert f'--no-deps "infx=={runtime.version}"' in run_point and "-r .github/infx/requirements.lock" in run_point


def point_of(job) -> dict:
    import json

    return json.loads(job.inputs["point"])
