"""run-sweep.yml executed end to end by tests/workflows/executor.py (GitHub's own parser and
evaluator, every `run:` step in bash) on real-shaped events, in real git repositories built
from the bundled data, with the PR comment going to the local GitHub server.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "github"))
import github_server  # noqa: E402
from e2e.test_mooncake_ladder import DATA, copy_data, git, write_base  # noqa: E402
from executor import PROJECT, Executor  # noqa: E402

from infx.points import point_id  # noqa: E402

SLUG = "SemiAnalysisAI/InferenceX"  # the bundled configs/infx.yaml names it; the pr-link policy checks it
PR = 3187
DRY_RUN = {"INFX_DRY_RUN": "true"}  # the repository variable: every launch planned on a GitHub-hosted runner


def copy_repository(destination: Path) -> None:
    copy_data(PROJECT, destination)
    shutil.copytree(PROJECT / ".github", destination / ".github", dirs_exist_ok=True)


@pytest.fixture
def change(tmp_path: Path, corpus: Path) -> Path:
    """Commits `base` (before the seed change) and `head` (the repository as it is)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.invalid")
    git(repo, "config", "user.name", "ci")
    copy_repository(repo)
    write_base(repo, PROJECT, corpus)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "pr")
    for name in DATA:
        if (repo / name).is_dir():
            shutil.rmtree(repo / name)
    copy_repository(repo)
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


def pr_payload(repo: Path, action: str, labels: list[str], label: str | None = None, fork: bool = False) -> dict:
    """The fields of a pull_request event GitHub sends, as its documentation shapes them."""
    head, base = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "main")
    owner = "stranger" if fork else SLUG.split("/")[0]
    repository = {"id": 1, "full_name": SLUG, "name": SLUG.split("/")[1], "owner": {"login": SLUG.split("/")[0]}}
    payload = {
        "action": action, "number": PR,
        "pull_request": {
            "number": PR, "state": "open", "draft": False, "title": "GB300 ladder on Mooncake",
            "labels": [{"id": 100 + i, "name": n, "color": "ededed", "default": False} for i, n in enumerate(labels)],
            "head": {"ref": "pr", "sha": head, "repo": {**repository, "full_name": f"{owner}/InferenceX"}},
            "base": {"ref": "main", "sha": base, "repo": repository},
            "user": {"login": "author"},
        },
        "repository": repository, "sender": {"login": "author"},
    }
    if label:
        payload["label"] = {"id": 200, "name": label, "color": "ededed"}
    return payload


def pr_run(repo: Path, tmp: Path, gh, labels: list[str], action: str = "labeled", label: str | None = "sweep-enabled",
           fork: bool = False, run_id: int = 9001) -> Executor:
    event = pr_payload(repo, action, labels, label if action in ("labeled", "unlabeled") else None, fork)
    gh.state.add_run(run_id, head_branch="pr", event="pull_request")
    run = Executor(repo, tmp / "run", "pull_request", event, sha=event["pull_request"]["head"]["sha"],
                   ref=f"refs/pull/{PR}/merge", repository=SLUG, run_id=run_id, github=gh, variables=DRY_RUN)
    run.results = run.run()
    return run


def point_jobs(run: Executor, result: str | None = None):
    """The run-point jobs (`…/points[k]/launch`) that ran, or that ended with ``result``."""
    return [job for job in run.jobs if job.path.endswith("/launch") and job.result == (result or job.result)]


def launched_points(run: Executor) -> list[dict]:
    return [json.loads(job.inputs["point"]) for job in point_jobs(run) if job.result != "skipped"]


def test_pr_labelled_sweep_enabled_runs_the_trimmed_plan_and_reports(change: Path, tmp_path: Path, server):
    run = pr_run(change, tmp_path, server, ["sweep-enabled"])
    assert run.results == {"setup": "success", "report-plan": "success", "lanes": "skipped", "lane-gate": "skipped",
                           "canary": "skipped", "sweep": "success", "report-results": "success"}, _logs(run)
    plan = json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())
    assert plan["mode"]["primary-label"] == "sweep-enabled" and plan["mode"]["trim-conc"] is True
    planned = [row for rows in plan["buckets"].values() for row in rows]
    assert all(len(row["conc"]) == 1 for row in planned if isinstance(row["conc"], list))
    assert {row["config-key"] for row in planned} == {"dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"}
    # Every planned point went setup -> shard -> sweep-shard -> run-point and left its launch plan.
    launches = point_jobs(run)
    assert sorted(point_id(p) for p in launched_points(run)) == sorted(point_id(r) for r in planned)
    assert all(job.result == "success" and job.runs_on == "ubuntu-latest" for job in launches), _logs(run)
    for row in planned:
        launch_plan = json.loads((run.artifacts / f"point-{point_id(row)}" / "launch-plan.json").read_text())
        assert launch_plan["node-count"] == row["node-count"]
    # The sticky comment: one, with the mode and every point's outcome.
    comments = server.state.comments[PR]
    assert len(comments) == 1, [c["body"][:80] for c in comments]
    body = comments[0]["body"]
    assert "Launch: yes" in body and "`sweep-enabled`" in body and "trimmed" in body
    assert f"✅ ok: **{len(planned)}**" in body
    assert run.concurrency == {"group": f"run-sweep-pr-{PR}", "cancel-in-progress": True}


def _logs(run: Executor) -> str:
    return "\n".join(f"== {job.path}: {job.result}\n{job.log[-3000:]}" for job in run.jobs if job.result == "failure")
