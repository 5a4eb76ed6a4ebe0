"""`infx repo check` over real HTTP against the local GitHub server: the fork-PR approval policy,
the default token, the lanes' runner groups and whether their runners are ephemeral."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from infx.workflows import repocheck
from testing.cli import run_cli
from testing.github_helpers import env_for
from testing.github_server import SLUG, LocalGitHub, repository_settings, runner, runner_group

ADMIN = "ghs_admin"
LANE_LABELS = ("gb300-nv", "gb300", "cluster:gb300-nv")  # runners/gb300-nv.yaml, the lane the command finds


@pytest.fixture
def server():
    with LocalGitHub() as gh:
        yield gh


def check(server, token: str = ADMIN, *more: str):
    return run_cli("repo", "check", "--format", "json", *more, env=env_for(server, GITHUB_TOKEN=token))


def statuses(done) -> dict[str, str]:
    return {c["check"]: c["status"] for c in json.loads(done.stdout)["checks"]}


def safe(server) -> None:
    settings = repository_settings(server.state)
    settings.approval_policy = "all_external_contributors"
    settings.runner_groups = [
        runner_group(server.state, 1, "Default", "all", [runner(1, "build-box", ["linux-build"], False)]),
        runner_group(
            server.state,
            7,
            "gb300",
            "selected",
            [runner(2, "gb300-a", ["gb300-nv"], True), runner(3, "gb300-b", ["gb300"], True)],
            [SLUG],
        ),
    ]


def test_a_repository_set_up_as_the_docs_say_passes_every_check(server):
    safe(server)
    done = check(server)
    assert done.returncode == 0, done.stdout + done.stderr
    assert statuses(done) == {
        "fork-pr-approval": "ok",
        "default-token": "ok",
        "runner-group:gb300-nv": "ok",
        "ephemeral:gb300-nv": "ok",
    }
    text = run_cli("repo", "check", env=env_for(server, GITHUB_TOKEN=ADMIN))
    assert text.returncode == 0 and "every check is ok" in text.stderr
    # Only GETs, and the group's own runners and repositories were read.
    assert {r.method for r in server.state.requests} == {"GET"}
    assert server.state.requests_to("GET", r"/orgs/acme/actions/runner-groups/7/repositories")
    groups = server.state.requests_to("GET", r"/orgs/acme/actions/runner-groups")
    assert groups[0].query["visible_to_repository"] == ["bench"]


def test_the_defaults_are_at_risk_each_with_its_fix(server):
    settings = repository_settings(server.state)  # first-time contributors only, as GitHub starts
    settings.default_workflow_permissions = "write"
    settings.runner_groups = [
        runner_group(server.state, 1, "Default", "all", [runner(2, "gb300-a", ["gb300-nv"], False)])
    ]
    done = check(server)
    assert done.returncode == 1
    found = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
    assert all(c["status"] == "at-risk" and c["fix"] for c in found.values()), found
    assert "all_external_contributors" in found["fork-pr-approval"]["fix"]
    assert "Read repository contents" in found["default-token"]["fix"]
    assert "every repository of the organization" in found["runner-group:gb300-nv"]["detail"]
    assert "gb300-a" in found["ephemeral:gb300-nv"]["detail"] and "--ephemeral" in found["ephemeral:gb300-nv"]["fix"]
    text = run_cli("repo", "check", env=env_for(server, GITHUB_TOKEN=ADMIN))
    assert text.stdout.count("AT RISK") == 4 and text.stdout.count("fix: ") == 4


def test_a_group_shared_with_another_repository_is_at_risk(server):
    safe(server)
    repository_settings(server.state).runner_groups[1]["repositories"] = [SLUG, "acme/other"]
    done = check(server)
    assert done.returncode == 1 and statuses(done)["runner-group:gb300-nv"] == "at-risk"
    assert "acme/other" in done.stdout


def test_the_repository_own_runners_count_as_limited_to_it(server):
    safe(server)
    settings = repository_settings(server.state)
    settings.runner_groups = []
    settings.runners = [runner(9, "gb300-own", ["cluster:gb300-nv"], True)]
    done = check(server)
    assert done.returncode == 0 and statuses(done)["runner-group:gb300-nv"] == "ok", done.stdout


def test_a_token_without_admin_rights_cannot_check_and_says_what_it_needs(server):
    safe(server)
    done = check(server, "ghs_test")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    found = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
    assert {c["status"] for c in found.values()} == {"cannot-check"}
    assert "403" in found["fork-pr-approval"]["detail"] and "Administration: read" in found["fork-pr-approval"]["fix"]
    # A repository admin who may not read the organization's runner groups: the lane cannot be checked.
    repository_settings(server.state).org_runner_readers = set()
    partial = check(server)
    assert statuses(partial) == {
        "fork-pr-approval": "ok",
        "default-token": "ok",
        "runner-group:gb300-nv": "cannot-check",
        "ephemeral:gb300-nv": "cannot-check",
    }
    assert "Self-hosted runners: read" in partial.stdout


def test_no_runner_with_the_lane_labels_cannot_be_checked(server):
    safe(server)
    repository_settings(server.state).runner_groups.pop()
    done = check(server)
    assert done.returncode == 1 and statuses(done)["runner-group:gb300-nv"] == "cannot-check"
    assert "no self-hosted runner this repository can use" in done.stdout


def test_every_page_of_a_large_runner_group_is_read(server):
    safe(server)
    group = repository_settings(server.state).runner_groups[1]
    group["runners"] = [runner(1000 + i, f"gb300-{i}", ["gb300-nv"], True) for i in range(150)] + [
        runner(2000, "gb300-last", ["gb300-nv"], False)
    ]
    done = check(server)
    assert done.returncode == 1 and "gb300-last" in json.loads(done.stdout)["checks"][3]["detail"]
    pages = [
        r.query.get("page") for r in server.state.requests_to("GET", r"/orgs/acme/actions/runner-groups/7/runners")
    ]
    assert pages == [["1"], ["2"]]


def test_an_unusable_token_or_repository_is_one_line_not_a_traceback(server):
    done = run_cli("repo", "check", "--repo", "acme/missing", env=env_for(server, GITHUB_TOKEN=ADMIN))
    assert done.returncode == 1 and "Traceback" not in done.stderr and "acme/missing" in done.stderr
    no_token = run_cli("repo", "check", env={"GITHUB_API_URL": server.url, "GITHUB_REPOSITORY": SLUG})
    assert no_token.returncode == 1 and "no GitHub token" in no_token.stderr
    # it names the token the check needs, a repository admin's, not the workflow's own or INFX_RUNNERS_TOKEN
    assert "a token of a repository admin" in no_token.stderr and "${{ github.token }}" not in no_token.stderr


# --- the rules over facts the server cannot show (a private repository, a user's repository) -----


def facts(**changes) -> repocheck.Facts:
    base = repocheck.Facts(
        slug=SLUG,
        private=False,
        organization=True,
        approval_policy="all_external_contributors",
        private_fork_settings=None,
        workflow_permissions={"default_workflow_permissions": "read", "can_approve_pull_request_reviews": False},
        repository_runners=(),
        runner_groups=(),
    )
    return replace(base, **changes)


def test_a_private_repository_is_judged_by_its_fork_settings():
    private = dict(private=True, approval_policy=None)
    unsafe = facts(
        **private,
        private_fork_settings={
            "run_workflows_from_fork_pull_requests": True,
            "require_approval_for_fork_pr_workflows": False,
        },
    )
    assert repocheck.fork_approval(unsafe).status == "at-risk"
    leaking = facts(
        **private,
        private_fork_settings={
            "run_workflows_from_fork_pull_requests": True,
            "require_approval_for_fork_pr_workflows": True,
            "send_secrets_and_variables": True,
        },
    )
    assert (
        repocheck.fork_approval(leaking).status == "at-risk"
        and "send_secrets_and_variables" in repocheck.fork_approval(leaking).detail
    )
    assert (
        repocheck.fork_approval(
            facts(**private, private_fork_settings={"run_workflows_from_fork_pull_requests": False})
        ).status
        == "ok"
    )


def test_a_user_repository_has_only_its_own_runners():
    own = (repocheck.Runner("box", ("gb300-nv",), True, "repository"),)
    found = repocheck.judge(
        facts(organization=False, runner_groups=None, repository_runners=own), {"gb300-nv": LANE_LABELS}
    )
    assert [f.status for f in found] == ["ok"] * 4
    approving = repocheck.default_token(
        facts(workflow_permissions={"default_workflow_permissions": "read", "can_approve_pull_request_reviews": True})
    )
    assert approving.status == "at-risk"
