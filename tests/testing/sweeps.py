"""The seed change (the GB300 Mooncake ladder) as real git repositories, and the pull-request events
and runs of run-sweep.yml over them in the workflow executor (testing/executor.py) with the local GitHub
server (testing/github_server.py). Fixtures here are imported by name into the test modules that use them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from testing import github_server
from testing.executor import PROJECT, Executor
from testing.runner_python import copy_source

DISAGG = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
AGG = "dsv4-fp4-gb300-dynamo-sglang-agentic-agg"
RECIPE = (
    "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/agentic/"
    "disagg-gb300-dep8-dep16-mtp-mooncake-ladder.yaml"
)
DATA = ("configs", "runners", "benchmarks", "perf-changelog.yaml")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def entry_blocks(text: str) -> dict[str, str]:
    """Top-level entries of a master config as text, keyed by config key."""
    starts = [m.start() for m in re.finditer(r"^[A-Za-z0-9][^\s:]*:\s*$", text, flags=re.M)]
    blocks = {}
    for begin, end in zip(starts, starts[1:] + [len(text)]):
        block = text[begin:end].rstrip("\n") + "\n"
        blocks[block.split(":", 1)[0]] = block
    return blocks


def copy_data(source: Path, destination: Path) -> None:
    """The repository's data, and an AgentX harness where the agentic recipes run it: a benchmark
    repository has one; this one ships none (a stand-in: tests/testing/launchkit.py, HARNESS)."""
    from testing.launchkit import add_harness

    for name in DATA:
        path = source / name
        if path.is_dir():
            shutil.copytree(path, destination / name, dirs_exist_ok=True)
        else:
            shutil.copy(path, destination / name)
    add_harness(destination)


def write_base(repo: Path, project: Path, corpus: Path) -> None:
    """The repository before the change, rebuilt from the corpus."""
    master = repo / "configs" / "nvidia-master.yaml"
    head_text = master.read_text()
    reference = entry_blocks((corpus / "configs" / "nvidia-master.yaml").read_text())
    cut = head_text.index(f"{DISAGG}:\n")
    master.write_text(head_text[:cut] + reference[AGG] + "\n" + reference[DISAGG])
    (repo / RECIPE).unlink()
    agentic = "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/agentic"
    for recipe in (corpus / agentic).glob("*gb300*kvoffload.yaml"):
        shutil.copy(recipe, repo / agentic / recipe.name)
    changelog = repo / "perf-changelog.yaml"
    text = changelog.read_text()
    changelog.write_text(text[: text.rindex("\n\n- config-keys:") + 1])


SLUG = "SemiAnalysisAI/InferenceX"  # the bundled configs/infx.yaml names it; the pr-link policy checks it
PR = 3187
DRY_RUN = {"INFX_DRY_RUN": "true"}  # the repository variable: every launch planned on a GitHub-hosted runner


def copy_repository(destination: Path) -> None:
    """This repository as its workflows see it: the data, the workflows and infx's source, which
    the workflows' `pip install --no-deps .` installs (the session's wheel: executor.py)."""
    copy_data(PROJECT, destination)
    shutil.copytree(PROJECT / ".github", destination / ".github", dirs_exist_ok=True)
    copy_source(destination)


def repository_at_base(repo: Path, corpus: Path) -> Path:
    """A git repository on main holding one commit: the repository before the seed change."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.invalid")
    git(repo, "config", "user.name", "ci")
    copy_repository(repo)
    write_base(repo, PROJECT, corpus)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


def replace_with_head(repo: Path) -> None:
    """The working tree as this repository is now (the seed change applied), not yet committed."""
    for name in DATA:
        if (repo / name).is_dir():
            shutil.rmtree(repo / name)
    copy_repository(repo)


@pytest.fixture
def change(tmp_path: Path, corpus: Path) -> Path:
    """Commits `base` (before the seed change) and `head` (the repository as it is)."""
    repo = repository_at_base(tmp_path / "repo", corpus)
    git(repo, "checkout", "-q", "-b", "pr")
    replace_with_head(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Mooncake ladder")
    return repo


@pytest.fixture
def server(monkeypatch):
    owner, name = SLUG.split("/")
    monkeypatch.setattr(github_server, "SLUG", SLUG)
    monkeypatch.setattr(github_server, "OWNER", owner)
    monkeypatch.setattr(github_server, "NAME", name)
    with github_server.LocalGitHub() as gh:
        gh.state.add_pull(PR)
        yield gh


def pr_payload(
    repo: Path,
    action: str,
    labels: list[str],
    label: str | None = None,
    fork: bool = False,
    draft: bool = False,
    number: int = PR,
    head_ref: str = "pr",
) -> dict:
    """The fields of a pull_request event GitHub sends, as its documentation shapes them."""
    head, base = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "main")
    owner = "stranger" if fork else SLUG.split("/")[0]
    repository = {"id": 1, "full_name": SLUG, "name": SLUG.split("/")[1], "owner": {"login": SLUG.split("/")[0]}}
    payload = {
        "action": action,
        "number": number,
        "pull_request": {
            "number": number,
            "state": "open",
            "draft": draft,
            "title": "GB300 ladder on Mooncake",
            "labels": [{"id": 100 + i, "name": n, "color": "ededed", "default": False} for i, n in enumerate(labels)],
            "head": {"ref": head_ref, "sha": head, "repo": {**repository, "full_name": f"{owner}/InferenceX"}},
            "base": {"ref": "main", "sha": base, "repo": repository},
            "user": {"login": "author"},
        },
        "repository": repository,
        "sender": {"login": "author"},
    }
    if label:
        payload["label"] = {"id": 200, "name": label, "color": "ededed"}
    return payload


def pr_run(
    repo: Path,
    tmp: Path,
    gh,
    labels: list[str],
    action: str = "labeled",
    label: str | None = "sweep-enabled",
    fork: bool = False,
    run_id: int = 9001,
    variables: dict = DRY_RUN,
    draft: bool = False,
    durations: dict | None = None,
) -> Executor:
    event = pr_payload(repo, action, labels, label if action in ("labeled", "unlabeled") else None, fork, draft)
    gh.state.add_run(run_id, head_branch="pr", event="pull_request")
    run = Executor(
        repo,
        tmp / "run",
        "pull_request",
        event,
        sha=event["pull_request"]["head"]["sha"],
        ref=f"refs/pull/{PR}/merge",
        repository=SLUG,
        run_id=run_id,
        github=gh,
        variables=variables,
        durations=durations,
    )
    run.results = run.run()
    return run


def point_jobs(run: Executor, result: str | None = None):
    """The run-point jobs (`…/points[k]/launch`) that ran, or that ended with ``result``."""
    return [job for job in run.jobs if job.path.endswith("/launch") and job.result == (result or job.result)]


def launched_points(run: Executor) -> list[dict]:
    return [json.loads(job.inputs["point"]) for job in point_jobs(run) if job.result != "skipped"]


def _logs(run: Executor) -> str:
    return "\n".join(f"== {job.path}: {job.result}\n{job.log[-3000:]}" for job in run.jobs if job.result == "failure")


@pytest.fixture
def main_repo(tmp_path: Path, corpus: Path) -> Path:
    """main before (`base`) and after (HEAD) the seed change was merged."""
    repo = repository_at_base(tmp_path / "main", corpus)
    replace_with_head(repo)
    changelog = repo / "perf-changelog.yaml"  # merged: the link names the PR
    before, found, after = changelog.read_text().rpartition(f"{SLUG}/pull/XXX\n")
    changelog.write_text(before + f"{SLUG}/pull/{PR}\n" + after)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"Mooncake ladder (#{PR})")
    return repo
