"""A benchmark repository adopting infx through `infx init` (no infx source in it) sweeps with
the kit's workflows: every job installs the released infx, pinned, with the kit's lock."""

from __future__ import annotations

import json
import os
import re
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


def kit_repository(tmp_path: Path, runtime: Runtime, origin: str | None = None) -> Path:
    """A benchmark repository (the bundled configs, lanes, recipes and changelog; no infx source)
    after `infx init` pinned to the session's wheel, which stands for the released infx; committed."""
    repo = tmp_path / "bench"
    repo.mkdir()
    for name in ("configs", "runners", "benchmarks"):
        shutil.copytree(PROJECT / name, repo / name)
    shutil.copy(PROJECT / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    git(repo, "init", "-q", "-b", "main")
    if origin:
        (repo / "configs" / "infx.yaml").unlink()  # init writes it from the remote
        git(repo, "remote", "add", "origin", origin)
    done = subprocess.run([sys.executable, "-m", "infx", "init", "--pin", runtime.version], cwd=repo, capture_output=True,
                          text=True, env={**clean_env(), "PYTHONPATH": str(PROJECT)})
    assert done.returncode == 0, done.stderr
    assert not (repo / "infx").exists() and not (repo / "pyproject.toml").exists()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Adopt infx")
    return repo


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_", "PYTHONPATH"))}


def test_a_benchmark_repository_with_the_kit_runs_a_manual_sweep(tmp_path: Path):
    runtime = Runtime.read(runtime_file())
    repo = kit_repository(tmp_path, runtime)
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
    return json.loads(job.inputs["point"])


def test_the_kits_pre_commit_configuration_runs_infx_from_the_pinned_package(tmp_path: Path):
    """`.pre-commit-config.yaml` as `infx init` writes it (the README shows it): pre-commit installs
    the pinned infx (the session's wheel stands for the release) and runs both hooks, the gate at
    pre-push against the branch's upstream."""
    runtime = Runtime.read(runtime_file())
    repo = kit_repository(tmp_path, runtime, origin="git@github.com:acme/bench.git")
    env = clean_env()
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(repo, "remote", "add", "local", str(bare))
    git(repo, "push", "-q", "-u", "local", "main")
    hooks_env = {**env, "PRE_COMMIT_HOME": str(Path(os.environ["INFX_TEST_RUNNER_ROOT"]) / "pre-commit"),
                 "PIP_FIND_LINKS": str(Path(runtime.wheel).parent)}

    def pre_commit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, capture_output=True, text=True,
                              env=hooks_env, timeout=600)

    assert pre_commit("validate-config").returncode == 0
    ran = pre_commit("run", "--all-files")
    assert ran.returncode == 0 and re.search(r"infx config validate\.+Passed", ran.stdout), ran.stdout + ran.stderr
    (repo / "configs" / "runners.yaml").write_text((repo / "configs" / "runners.yaml").read_text() + "# a comment\n")
    git(repo, "commit", "-qam", "A comment")
    pushed = pre_commit("run", "--hook-stage", "pre-push", "--all-files")
    assert pushed.returncode == 0 and re.search(r"infx changelog gate.*\.+Passed", pushed.stdout), pushed.stdout
    (repo / "perf-changelog.yaml").write_text((repo / "perf-changelog.yaml").read_text() + "- not: [an entry\n")
    git(repo, "commit", "-qam", "A broken changelog")
    broken = pre_commit("run", "--hook-stage", "pre-push", "--all-files")
    assert broken.returncode == 1 and re.search(r"infx changelog gate.*\.+Failed", broken.stdout), broken.stdout
