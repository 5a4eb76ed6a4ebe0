"""Each job's GITHUB_TOKEN carries exactly its evaluated `permissions:`, and the local GitHub server
holds it to them (tests/testing/github_server.py, ENDPOINT_PERMISSIONS): what the workflows ask
for is what they need, on a private repository too, and a permission they lack is said, never
silently turned into "run every point again".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from infx.workflows.rerun import artifact_name  # noqa: E402
from testing import github_server  # noqa: E402
from testing.executor import Executor  # noqa: E402
from testing.github_helpers import result_artifact_files  # noqa: E402
from testing.sweeps import PR, _logs, change, launched_points, pr_run, server  # noqa: F401

ASK = """\
import json, os, urllib.error, urllib.request
api, slug, token = os.environ["GITHUB_API_URL"], os.environ["GITHUB_REPOSITORY"], os.environ["TOKEN"]
def ask(method, path, body=None):
    request = urllib.request.Request(api + path, method=method, data=json.dumps(body).encode() if body else None,
                                     headers={"Authorization": "token " + token})
    try:
        return urllib.request.urlopen(request).status
    except urllib.error.HTTPError as refused:
        return refused.code
print("read", ask("GET", f"/repos/{slug}/pulls"),
      "write", ask("POST", f"/repos/{slug}/issues/7/comments", {"body": "x"}))
"""
STEP = "    steps:\n      - env:\n          TOKEN: ${{ github.token }}\n        run: python3 ask.py\n"


def job(name: str, permissions: str | None) -> str:
    declared = f"    permissions: {permissions}\n" if permissions is not None else ""
    return f"  {name}:\n    runs-on: ubuntu-latest\n{declared}{STEP}"


def write_workflows(repo: Path) -> None:
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (repo / "ask.py").write_text(ASK)
    (workflows / "caller.yml").write_text(
        "name: caller\non:\n  workflow_dispatch:\npermissions: {}\njobs:\n"
        + job("nothing", None)
        + job("empty", "{}")
        + job("reader", "{pull-requests: read}")
        + job("all", "read-all")
        + "  called:\n    permissions: {pull-requests: read}\n    uses: ./.github/workflows/called.yml\n"
    )
    # No top-level permissions here: a job that says none inherits its caller's.
    (workflows / "called.yml").write_text(
        "name: called\non:\n  workflow_call:\njobs:\n"
        + job("asks-more", "{pull-requests: write, actions: read}")
        + job("inherits", None)
    )
    (workflows / "plain.yml").write_text("name: plain\non:\n  workflow_dispatch:\njobs:\n" + job("default", None))


def test_each_job_s_token_carries_exactly_its_evaluated_permissions(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    write_workflows(repo)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "w"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    with github_server.LocalGitHub() as gh:
        gh.state.private = True
        gh.state.add_pull(7)
        runs = {}
        for workflow in ("caller.yml", "plain.yml"):
            run = Executor(
                repo, tmp_path / workflow, "workflow_dispatch", {}, sha=sha, repository=github_server.SLUG, github=gh
            )
            assert set(run.run(f".github/workflows/{workflow}").values()) == {"success"}
            runs.update({job_.path: job_ for job_ in run.jobs})
        tokens = dict(gh.state.tokens)
    expected = {
        "nothing": ({}, "read 403 write 403"),  # the workflow's `permissions: {}`
        "empty": ({}, "read 403 write 403"),
        "reader": ({"pull-requests": "read"}, "read 200 write 403"),
        "all": (None, "read 200 write 403"),  # read-all: every scope read, none write
        "called/asks-more": (
            {"pull-requests": "read"},
            "read 200 write 403",
        ),  # capped by its caller: write and actions dropped
        "called/inherits": ({"pull-requests": "read"}, "read 200 write 403"),
        "default": ({"contents": "read", "packages": "read"}, "read 403 write 403"),  # GitHub's restricted default
    }
    for path, (permissions, answers) in expected.items():
        ran = runs[path]
        if permissions is not None:
            assert ran.permissions == permissions, path
        assert tokens[ran.token] == ran.permissions, path  # the token the server knows is the job's
        assert answers in ran.log, (path, ran.log)
    assert set(runs["all"].permissions.values()) == {"read"} and "id-token" not in runs["all"].permissions
    assert len({ran.token for ran in runs.values() if ran.token}) == len(expected)  # one token per job


def _store_first_sweep(gh, first: Executor, repo: Path) -> list[dict]:
    """What an earlier, trusted sweep of the PR's head commit uploaded for every planned point."""
    planned = [
        r
        for rows in json.loads((first.artifacts / "sweep-plan" / "plan.json").read_text())["buckets"].values()
        for r in rows
    ]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    gh.state.pull_commits[PR] = [head]
    gh.state.add_run(8000, head_branch="pr", event="pull_request", head_sha=head)
    for row in planned:
        gh.state.add_artifact(
            8000, artifact_name(row), files=result_artifact_files(row, row["result-key"], run_id=8000)
        )
    return planned


def test_reuse_on_a_private_repository_works_under_enforced_permissions(change: Path, tmp_path: Path, server):
    server.state.private = True
    first = pr_run(change, tmp_path / "first", server, ["sweep-enabled"], run_id=9001)
    assert first.results["sweep"] == "success" and first.results["report-results"] == "success", _logs(first)
    planned = _store_first_sweep(server, first, change)
    second = pr_run(change, tmp_path / "second", server, ["sweep-enabled"], run_id=9002)
    plan = json.loads((second.artifacts / "sweep-plan" / "plan.json").read_text())
    assert sorted(item["result-key"] for item in plan["reuse"]["reused"]) == sorted(r["result-key"] for r in planned), (
        plan["reuse"].get("notice") or _logs(second)
    )
    assert "notice" not in plan["reuse"] and not launched_points(second)
    setup = next(job for job in second.jobs if job.path == "setup")
    assert setup.permissions == {"contents": "read", "actions": "read", "pull-requests": "read"}
    body = server.state.comments[PR][0]["body"]
    assert f"{len(planned)} points reused" in body
