"""The local GitHub server holds a job's GITHUB_TOKEN to GitHub's rules, and infx says so.

- permissions: every endpoint infx calls needs what GitHub's "Permissions required for GitHub
  Apps" lists (github_server.ENDPOINT_PERMISSIONS); a token without it gets GitHub's 403
  "Resource not accessible by integration" with `X-Accepted-GitHub-Permissions`; a read of a
  public repository passes without it, a write never; `administration` no GITHUB_TOKEN has;
- the hourly budget: every answer carries `x-ratelimit-*`; the repository's GITHUB_TOKENs share
  1,000 requests an hour, and past it the answer is GitHub's 403 with remaining 0;
- infx turns the permission refusal into one located line naming the permission to grant.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from testing.cli import run_cli
from testing.github_helpers import env_for, rows, write_plan
from testing.github_server import SLUG, LocalGitHub


@pytest.fixture
def github():
    with LocalGitHub() as server:
        server.state.add_pull(7)
        server.state.add_run(41)
        yield server


def ask(server: LocalGitHub, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        server.url + path,
        data=data,
        method=method,
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), json.loads(refused.read() or b"null")


PULLS = f"/repos/{SLUG}/pulls"
COMMITS = f"/repos/{SLUG}/pulls/7/commits"
COMMENTS = f"/repos/{SLUG}/issues/7/comments"
ARTIFACTS = f"/repos/{SLUG}/actions/runs/41/artifacts"


def test_a_private_repository_refuses_a_token_without_the_permission(github):
    github.state.private = True
    bare = github.state.grant_token({"contents": "read"})
    status, headers, body = ask(github, "GET", PULLS, bare)
    assert status == 403 and body["message"] == "Resource not accessible by integration"
    assert headers["X-Accepted-GitHub-Permissions"] == "pull_requests=read"
    assert ask(github, "GET", ARTIFACTS, bare)[0] == 403
    assert ask(github, "GET", f"/repos/{SLUG}", bare)[0] == 200  # metadata: every GITHUB_TOKEN reads it
    # Either permission of an endpoint GitHub lists under two will do.
    assert ask(github, "GET", COMMENTS, github.state.grant_token({"issues": "read"}))[0] == 200
    assert ask(github, "GET", COMMENTS, github.state.grant_token({"pull-requests": "read"}))[0] == 200
    reader = github.state.grant_token({"pull-requests": "read", "actions": "read"})
    assert [ask(github, "GET", path, reader)[0] for path in (PULLS, COMMITS, ARTIFACTS)] == [200, 200, 200]
    # read is not write; `write` includes `read`.
    assert ask(github, "POST", COMMENTS, reader, {"body": "x"})[0] == 403
    writer = github.state.grant_token({"pull-requests": "write"})
    assert (
        ask(github, "POST", COMMENTS, writer, {"body": "x"})[0] == 201 and ask(github, "GET", PULLS, writer)[0] == 200
    )


def test_a_public_repository_serves_reads_without_the_permission_but_never_writes(github):
    nothing = github.state.grant_token({})
    assert ask(github, "GET", PULLS, nothing)[0] == 200 and ask(github, "GET", ARTIFACTS, nothing)[0] == 200
    status, headers, _ = ask(github, "POST", COMMENTS, nothing, {"body": "x"})
    assert status == 403 and headers["X-Accepted-GitHub-Permissions"] == "issues=write; pull_requests=write"
    # No GITHUB_TOKEN may list the repository's runners, whatever its job asked for.
    assert (
        ask(github, "GET", f"/repos/{SLUG}/actions/runners", github.state.grant_token({"actions": "write"}))[0] == 403
    )


def test_every_answer_carries_the_budget_and_the_repository_s_tokens_share_it(github):
    github.state.hourly_limits["GITHUB_TOKEN"] = 3
    first, second = (
        github.state.grant_token({"pull-requests": "read"}),
        github.state.grant_token({"pull-requests": "read"}),
    )
    answers = [ask(github, "GET", PULLS, token) for token in (first, second, first)]
    assert [a[0] for a in answers] == [200, 200, 200]
    assert [a[1]["X-RateLimit-Remaining"] for a in answers] == ["2", "1", "0"]
    assert {a[1]["X-RateLimit-Limit"] for a in answers} == {"3"} and {
        a[1]["X-RateLimit-Resource"] for a in answers
    } == {"core"}
    status, headers, body = ask(github, "GET", PULLS, second)
    assert (
        status == 403
        and headers["X-RateLimit-Remaining"] == "0"
        and body["message"].startswith("API rate limit exceeded")
    )
    # A refusal counts too; a personal token has its own 5,000.
    assert ask(github, "GET", PULLS, "ghp_personal")[1]["X-RateLimit-Remaining"] == "4999"
    assert github.state.count_by_token()[second] == 2


def test_infx_names_the_permission_the_job_must_grant(github, tmp_path):
    github.state.private = True
    token = github.state.grant_token({"contents": "read"})  # what report-plan had without pull-requests
    plan = write_plan(tmp_path / "plan.json", rows(2))
    done = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github, GITHUB_TOKEN=token))
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "error[github-permission]" in lines[0] and "HTTP 403 Resource not accessible by integration" in lines[0]
    # The pull request itself is readable with contents: read; its comments are not.
    assert "listing the comments of #7" in lines[0] and "`issues: read` or `pull-requests: read`" in lines[0]
    assert "permissions:" in lines[0]


def test_infx_stops_at_the_exhausted_budget_within_its_bound(github, tmp_path):
    """Past the budget GitHub asks for a wait until the hour's reset: longer than infx's bound, so
    the command ends at once with one line instead of waiting an hour."""
    github.state.hourly_limits["GITHUB_TOKEN"] = 2
    token = github.state.grant_token({"pull-requests": "write"})
    plan = write_plan(tmp_path / "plan.json", rows(2))
    done = run_cli(
        "github",
        "report",
        "--pr",
        "7",
        "--plan",
        str(plan),
        env=env_for(github, GITHUB_TOKEN=token, INFX_GITHUB_MAX_WAIT="30"),
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and len(lines) == 1 and "error[github-wait]" in lines[0], done.stderr
    assert github.state.count_by_token()[token] == 3  # two answered, the third refused, none repeated
