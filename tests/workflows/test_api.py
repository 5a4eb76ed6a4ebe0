"""infx's GitHub commands over real HTTP: PyGithub pointed at a local REST server.

The server records every request, so each test asserts on what GitHub would have
received: one sticky comment (created once, then edited), rate limits waited out, exactly
one dispatch per launch id even when the dispatch request is retried.
"""

from __future__ import annotations

import json
import time

import pytest

from infx.diagnostics import InfxError
from infx.points import point_id
from infx.workflows.github.archives import json_in_archive
from infx.workflows.github.artifacts import download_artifact, run_artifacts
from infx.workflows.github.client import Settings, connect
from infx.workflows.github.comments import upsert_comment
from infx.workflows.github.retry import READ_RETRIES
from infx.workflows.github.runs import dispatch_once, get_run
from infx.workflows.markers import launch_marker
from infx.workflows.report import MARKER
from infx.workflows.rerun import artifact_name, launch_id
from testing.cli import run_cli
from testing.github_helpers import env_for, rows, write_plan
from testing.github_server import (
    ACTIONS_BOT,
    HTML_ERROR_PAGE,
    SLUG,
    Fault,
    LocalGitHub,
    rate_limit_fault,
    retry_after_fault,
    server_error_burst,
    truncated_fault,
)

COMMENTS = rf"/repos/{SLUG}/issues/7/comments"
DISPATCH = rf"/repos/{SLUG}/actions/workflows/run-sweep\.yml/dispatches"


@pytest.fixture
def github():
    with LocalGitHub() as server:
        server.state.add_pull(7)
        # The title run-sweep.yml's run-name gives a rerun (tests/workflows checks the real one).
        server.state.title_for_dispatch = lambda inputs: (
            f"Rerun of run {inputs['rerun-of']} {launch_marker(inputs['launch-id'])}"
            if inputs.get("launch-id")
            else "Manual sweep"
        )
        yield server


def client(server: LocalGitHub, max_wait: float = 30, token: str = "ghs_test"):
    return connect(Settings(token=token, base_url=server.url, max_wait=max_wait, pace=False))


def one_located_line(done, rule: str) -> str:
    """The command ended with exit 1 and one line `<github>: error[rule]: …`, no traceback."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"error[{rule}]" in lines[0], lines[0]
    return lines[0]


# --- the sticky comment ------------------------------------------------------------------------


def test_report_creates_one_sticky_comment_then_edits_it(github, tmp_path):
    github.state.add_comment(7, "LGTM")
    plan = write_plan(tmp_path / "plan.json", rows(6))
    first = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
    assert first.returncode == 0, first.stderr
    assert "created" in first.stderr
    posts = github.state.requests_to("POST", COMMENTS)
    assert len(posts) == 1 and posts[0].body["body"].startswith(MARKER)
    assert posts[0].headers["Authorization"] == "token ghs_test"

    # The same plan again: nothing to write.
    again = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
    assert again.returncode == 0 and "unchanged" in again.stderr
    assert len(github.state.requests_to("POST", COMMENTS)) == 1
    assert not github.state.requests_to("PATCH", r".*")

    # After the sweep: outcomes from downloaded artifacts edit the same comment.
    results = tmp_path / "results"
    plan_rows = rows(6)
    (results / artifact_name(plan_rows[0])).mkdir(parents=True)
    (results / artifact_name(plan_rows[1], succeeded=False)).mkdir()
    after = run_cli(
        "github", "report", "--pr", "7", "--plan", str(plan), "--results", str(results), env=env_for(github)
    )
    assert after.returncode == 0, after.stderr
    patches = github.state.requests_to("PATCH", rf"/repos/{SLUG}/issues/comments/\d+")
    assert len(patches) == 1
    body = patches[0].body["body"]
    assert "✅ ok: **1**" in body and "❌ failed: **1**" in body and "⏳ no result: **4**" in body
    ours = [c for c in github.state.comments[7] if MARKER in c["body"]]
    assert len(ours) == 1 and ours[0]["body"] == body
    assert github.state.comments[7][0]["body"] == "LGTM"


def test_report_reads_outcomes_from_a_run(github, tmp_path):
    plan_rows = rows(3)
    github.state.add_run(555)
    github.state.add_artifact(555, artifact_name(plan_rows[0]))
    github.state.add_artifact(555, artifact_name(plan_rows[1]), expired=True)
    plan = write_plan(tmp_path / "plan.json", plan_rows)
    result = run_cli("github", "report", "--pr", "7", "--plan", str(plan), "--run-id", "555", env=env_for(github))
    assert result.returncode == 0, result.stderr
    body = github.state.requests_to("POST", COMMENTS)[0].body["body"]
    assert "✅ ok: **1**" in body and "⏳ no result: **2**" in body
    assert "actions/runs/555" in body


@pytest.mark.parametrize(
    "argv, env_extra, expected",
    [
        (["--pr", "99"], {}, ["HTTP 404", "#99"]),
        (["--pr", "7"], {"GITHUB_TOKEN": ""}, ["no GitHub token", "GITHUB_TOKEN"]),
    ],
)
def test_report_errors_are_one_line_with_status_and_what_to_check(github, tmp_path, argv, env_extra, expected):
    plan = write_plan(tmp_path / "plan.json", rows(2))
    result = run_cli("github", "report", *argv, "--plan", str(plan), env=env_for(github, **env_extra))
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert all(text in lines[0] for text in expected), lines[0]
    assert "Traceback" not in result.stderr
    assert not github.state.requests_to("POST", COMMENTS)


def test_server_errors_on_reads_are_retried(github):
    github.state.faults.append(Fault("GET", COMMENTS, 502, {"message": "Server Error"}))
    assert upsert_comment(client(github), SLUG, 7, MARKER + "\nplan") == "created"
    assert len(github.state.requests_to("GET", COMMENTS)) == 2


def test_a_server_that_keeps_failing_is_one_line_with_the_status(github, tmp_path):
    github.state.faults.extend(Fault("GET", COMMENTS, 503, {"message": "Unavailable"}) for _ in range(10))
    plan = write_plan(tmp_path / "plan.json", rows(1))
    result = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "HTTP 503" in result.stderr and "#7" in result.stderr
    assert len(github.state.requests_to("GET", COMMENTS)) == READ_RETRIES + 1


def test_a_rate_limited_write_is_waited_out_and_done_once(github):
    github.state.faults.append(rate_limit_fault("POST", COMMENTS, reset_in=1))
    assert upsert_comment(client(github), SLUG, 7, MARKER + "\nplan") == "created"
    assert len(github.state.requests_to("POST", COMMENTS)) == 2
    assert len(github.state.comments[7]) == 1


def test_a_primary_rate_limit_is_waited_out(github):
    github.state.faults.append(rate_limit_fault("GET", COMMENTS, reset_in=1))
    started = time.monotonic()
    assert upsert_comment(client(github), SLUG, 7, MARKER + "\nplan") == "created"
    elapsed = time.monotonic() - started
    gets = github.state.requests_to("GET", COMMENTS)
    assert len(gets) == 2 and elapsed >= 1.0, elapsed
    assert len(github.state.comments[7]) == 1


def test_a_rate_limit_beyond_the_bound_fails_fast_with_the_status(github, tmp_path):
    github.state.faults.append(rate_limit_fault("GET", rf"/repos/{SLUG}/pulls/7", reset_in=3600))
    plan = write_plan(tmp_path / "plan.json", rows(1))
    started = time.monotonic()
    result = run_cli(
        "github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github, INFX_GITHUB_MAX_WAIT="5")
    )
    assert time.monotonic() - started < 30
    assert result.returncode == 1
    assert (
        "HTTP 403" in result.stderr and "rate limit" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    )


def test_a_comment_write_that_failed_after_landing_is_not_repeated(github):
    # GitHub stored the comment but the answer was a 502: infx must read back, not post again.
    github.state.faults.append(Fault("POST", COMMENTS, 502, {"message": "Bad Gateway"}, apply=True))
    assert upsert_comment(client(github), SLUG, 7, MARKER + "\nplan") == "created"
    assert len(github.state.requests_to("POST", COMMENTS)) == 1
    assert len(github.state.comments[7]) == 1


# --- reruns --------------------------------------------------------------------------------------


def sweep_run(server: LocalGitHub, plan_rows: list[dict], run_id: int = 4242) -> dict:
    """A finished sweep: its plan artifact and one artifact per point that ran."""
    server.state.add_run(run_id, head_branch="main")
    server.state.add_artifact(
        run_id, "sweep-plan", files={"plan.json": json.dumps(plan_rows), "infx-shards/shard-0.json": "[]"}
    )
    return server.state.runs[run_id]


def test_rerun_dispatches_exactly_the_points_without_a_valid_result(github):
    plan_rows = rows(5)
    sweep_run(github, plan_rows)
    ok, failed, expired, empty, never_ran = plan_rows
    github.state.add_artifact(4242, artifact_name(ok))
    github.state.add_artifact(4242, artifact_name(failed, succeeded=False))
    github.state.add_artifact(4242, artifact_name(expired), expired=True)
    github.state.add_artifact(4242, artifact_name(empty), size=0)
    result = run_cli("github", "rerun-failed", "--run-id", "4242", env=env_for(github))
    assert result.returncode == 0, result.stderr
    expected = sorted(point_id(r) for r in (failed, expired, empty, never_ran))
    assert sorted(line.split("\t")[1] for line in result.stdout.splitlines()) == expected
    assert len(github.state.dispatches) == 1
    dispatch = github.state.dispatches[0]
    assert dispatch["ref"] == "main"
    assert dispatch["inputs"] == {
        "rerun-of": "4242",
        "points": " ".join(expected),
        "launch-id": launch_id(4242, expected),
    }
    post = github.state.requests_to("POST", DISPATCH)[0]
    assert post.body["return_run_details"] is True

    # The same request again (a retried job, a second click): no second sweep.
    again = run_cli("github", "rerun-failed", "--run-id", "4242", env=env_for(github))
    assert again.returncode == 0, again.stderr
    assert "already dispatched" in again.stderr
    assert len(github.state.dispatches) == 1 and len(github.state.requests_to("POST", DISPATCH)) == 1


def test_a_dispatch_retried_after_a_lost_answer_starts_one_sweep(github):
    plan_rows = rows(2)
    sweep_run(github, plan_rows)
    # The dispatch is carried out but the answer is a 502, as when a gateway times out.
    github.state.faults.append(Fault("POST", DISPATCH, 502, {"message": "Bad Gateway"}, apply=True))
    connection = client(github)
    repo, run = get_run(connection, SLUG, 4242)
    failed = [point_id(r) for r in plan_rows]
    launch = launch_id(4242, failed)
    from infx.workflows.rerun import dispatch_inputs

    new_run, created = dispatch_once(
        connection, repo, "run-sweep.yml", "main", dispatch_inputs(4242, failed, launch), launch
    )
    assert created and launch_marker(launch) in new_run.display_title
    assert len(github.state.requests_to("POST", DISPATCH)) == 1
    assert len(github.state.dispatches) == 1


def test_a_dispatch_refused_by_github_is_an_error_not_a_silent_false(github):
    sweep_run(github, rows(1))
    github.state.faults.append(Fault("POST", DISPATCH, 422, {"message": 'Unexpected inputs provided: ["launch-id"]'}))
    result = run_cli("github", "rerun-failed", "--run-id", "4242", env=env_for(github))
    assert result.returncode == 1
    assert "HTTP 422" in result.stderr and "launch-id" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_nothing_to_rerun_dispatches_nothing(github):
    plan_rows = rows(3)
    sweep_run(github, plan_rows)
    for r in plan_rows:
        github.state.add_artifact(4242, artifact_name(r))
    result = run_cli("github", "rerun-failed", "--run-id", "4242", env=env_for(github))
    assert result.returncode == 0 and "nothing to rerun" in result.stderr
    assert not github.state.dispatches


def test_unknown_run_and_run_without_plan(github):
    missing = run_cli("github", "rerun-failed", "--run-id", "999", env=env_for(github))
    assert missing.returncode == 1 and "HTTP 404" in missing.stderr and "run 999" in missing.stderr
    github.state.add_run(31)
    no_plan = run_cli("github", "rerun-failed", "--run-id", "31", env=env_for(github))
    assert no_plan.returncode == 1 and "sweep-plan" in no_plan.stderr
    assert not github.state.dispatches


@pytest.mark.parametrize(
    "files",
    [{"plan.json": b'[{"conc": "\xc3"}]'}, {"plan.json": "[{"}, {"other.json": "[]"}],
    ids=["not-utf8", "not-json", "no-plan-file"],
)
def test_a_plan_artifact_without_a_readable_plan_is_refused_without_a_traceback(github, files):
    github.state.add_run(32, head_branch="main")
    github.state.add_artifact(32, "sweep-plan", files=files)
    result = run_cli("github", "rerun-failed", "--run-id", "32", env=env_for(github))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "holds no readable plan.json" in result.stderr and not github.state.dispatches


# --- which runs a rerun may take its plan from ------------------------------------------------------


ARTIFACT_DOWNLOADS = rf"/repos/{SLUG}/actions/(runs/\d+/artifacts|artifacts/\d+/zip)"


@pytest.mark.parametrize(
    "run_fields, reason",
    [
        ({"path": ".github/workflows/pr-checks.yml"}, "not .github/workflows/run-sweep.yml"),
        ({"head_repository": "attacker/fork", "head_branch": "main"}, "its code came from attacker/fork"),
        ({"repository": "someone/else"}, "it belongs to someone/else"),
        ({"head_branch": "experiment", "event": "pull_request"}, "it ran on branch 'experiment', not on main"),
    ],
    ids=["other-workflow", "fork-pr", "other-repository", "other-branch"],
)
def test_a_rerun_refuses_a_plan_from_a_run_it_cannot_trust(github, run_fields, reason):
    github.state.add_run(4242, **{"head_branch": "main", **run_fields})
    github.state.add_artifact(4242, "sweep-plan", files={"plan.json": json.dumps(rows(2))})
    result = run_cli("github", "rerun-failed", "--run-id", "4242", env=env_for(github))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "error[github-untrusted-run]" in result.stderr and reason in result.stderr, result.stderr
    assert not github.state.requests_to("GET", ARTIFACT_DOWNLOADS)  # the plan was never read
    assert not github.state.dispatches


def test_a_rerun_of_a_pull_request_takes_the_plan_of_its_own_branch(github):
    github.state.add_pull(8, head_ref="dsv4-ladder")
    github.state.add_run(4242, head_branch="dsv4-ladder", event="pull_request")
    github.state.add_artifact(4242, "sweep-plan", files={"plan.json": json.dumps(rows(2))})
    refused = run_cli(
        "github", "rerun-failed", "--run-id", "4242", "--pr", "7", env=env_for(github)
    )  # PR 7 is on `feature`
    assert refused.returncode == 1 and "github-untrusted-run" in refused.stderr and not github.state.dispatches
    accepted = run_cli("github", "rerun-failed", "--run-id", "4242", "--pr", "8", env=env_for(github))
    assert accepted.returncode == 0, accepted.stderr
    assert [d["ref"] for d in github.state.dispatches] == ["dsv4-ladder"]


def test_a_fork_pull_request_has_nothing_to_rerun(github):
    github.state.add_pull(9, head_ref="main", head_repo="attacker/fork")
    sweep_run(github, rows(1))
    result = run_cli("github", "rerun-failed", "--run-id", "4242", "--pr", "9", env=env_for(github))
    assert result.returncode == 1 and "comes from attacker/fork" in result.stderr and not github.state.dispatches


def test_the_dispatched_rerun_checks_the_run_again_before_downloading(github):
    """run-sweep.yml calls `infx github check-rerun` before it downloads another run's plan."""
    github.state.add_run(50, head_branch="main")
    github.state.add_run(51, head_branch="feature", event="pull_request")
    github.state.add_run(52, head_branch="feature", head_repository="attacker/fork", event="pull_request")

    def check(run_id, ref):
        return run_cli("github", "check-rerun", "--run-id", str(run_id), "--ref", ref, env=env_for(github))

    assert check(50, "feature").returncode == 0  # main's plans are always trusted
    assert check(51, "feature").returncode == 0  # a rerun on the PR's own branch
    assert check(51, "main").returncode == 1
    refused = check(52, "feature")
    assert refused.returncode == 1 and "attacker/fork" in refused.stderr


# --- the retry rule: Retry-After in seconds or as a date, rate-limit headers, 5xx bursts, one bound ---------


@pytest.mark.parametrize("as_date", [False, True], ids=["seconds", "http-date"])
@pytest.mark.parametrize("method", ["GET", "POST"], ids=["read", "write"])
def test_retry_after_in_seconds_or_as_an_http_date_is_waited_out(github, tmp_path, method, as_date):
    """RFC 9110 lets Retry-After be a number of seconds or an HTTP date; GitHub's secondary limits send it."""
    github.state.faults.append(retry_after_fault(method, COMMENTS, seconds=2, as_date=as_date))
    plan = write_plan(tmp_path / "plan.json", rows(2))
    started = time.monotonic()
    done = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started >= 1.0  # the date has one-second resolution
    assert len(github.state.requests_to(method, COMMENTS)) == 2 and len(github.state.comments[7]) == 1


@pytest.mark.parametrize("as_date", [False, True], ids=["seconds", "http-date"])
def test_a_retry_after_past_the_bound_ends_at_once_with_when_to_retry(github, tmp_path, as_date):
    github.state.faults.append(retry_after_fault("GET", rf"/repos/{SLUG}/pulls/7", seconds=3600, as_date=as_date))
    plan = write_plan(tmp_path / "plan.json", rows(1))
    started = time.monotonic()
    done = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github, INFX_GITHUB_MAX_WAIT="20"))
    assert time.monotonic() - started < 15
    line = one_located_line(done, "github-wait")
    assert "HTTP 429 with Retry-After" in line and "INFX_GITHUB_MAX_WAIT=20" in line


def test_the_wait_bound_is_for_all_requests_together(github):
    """Two rate limits of 2 s each under a bound of 3 s: the second wait would pass it."""
    github.state.faults.append(rate_limit_fault("GET", rf"/repos/{SLUG}/pulls/7", reset_in=1, status=429))
    github.state.faults.append(retry_after_fault("GET", COMMENTS, seconds=2))
    started = time.monotonic()
    with pytest.raises(InfxError) as raised:
        upsert_comment(client(github, max_wait=3), SLUG, 7, MARKER + "\nplan")
    assert raised.value.diagnostics[0].rule == "github-wait"
    assert time.monotonic() - started < 3.5 and not github.state.requests_to("POST", COMMENTS)


@pytest.mark.parametrize("html", [False, True], ids=["json", "html-page"])
def test_a_5xx_burst_within_the_retries_is_ridden_out(github, html):
    github.state.faults.extend(server_error_burst("GET", COMMENTS, 2, status=502, html=html))
    assert upsert_comment(client(github), SLUG, 7, MARKER + "\nplan") == "created"
    assert len(github.state.requests_to("GET", COMMENTS)) == 3


def test_a_secondary_limit_without_a_time_waits_the_documented_minute_or_fails_within_the_bound(github, tmp_path):
    github.state.faults.append(
        Fault(
            "GET",
            COMMENTS,
            403,
            {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."},
        )
    )
    plan = write_plan(tmp_path / "plan.json", rows(1))
    done = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github, INFX_GITHUB_MAX_WAIT="30"))
    assert "secondary rate limit" in one_located_line(done, "github-wait") and "waiting 60 s" in done.stderr


def test_a_403_that_names_no_limit_is_not_asked_again(github, tmp_path):
    github.state.faults.append(Fault("GET", COMMENTS, 403, {"message": "Resource not accessible by integration"}))
    plan = write_plan(tmp_path / "plan.json", rows(1))
    done = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
    assert "HTTP 403 Resource not accessible by integration" in one_located_line(done, "github-api")
    assert len(github.state.requests_to("GET", COMMENTS)) == 1


# --- malformed answers: located errors, never exit 70 ------------------------------------------------------


def test_a_cut_off_answer_is_asked_again(github):
    github.state.faults.append(truncated_fault("GET", COMMENTS, b'[{"id": 1, "body": "LGTM", "us'))
    github.state.faults.append(
        Fault("GET", COMMENTS, 200, b'[{"id": 1, "body": "LGTM", "us')
    )  # whole length, broken JSON
    assert upsert_comment(client(github), SLUG, 7, MARKER + "\nplan") == "created"
    assert len(github.state.requests_to("GET", COMMENTS)) == 3


PULL = rf"/repos/{SLUG}/pulls/7"
MALFORMED = {  # what comes back in place of a documented answer, and what the one line says of it
    "cut-off-every-time": (
        [truncated_fault("GET", COMMENTS, b'[{"id": 1, "bo') for _ in range(6)],
        "the answer was cut off",
    ),
    "broken-json-every-time": (
        [Fault("GET", COMMENTS, 200, b'[{"id": 1, "bo') for _ in range(6)],
        "the answer is not JSON",
    ),
    "html-200": ([Fault("GET", PULL, 200, HTML_ERROR_PAGE, {"Content-Type": "text/html"})], "github-malformed"),
    "html-404": ([Fault("GET", PULL, 404, HTML_ERROR_PAGE, {"Content-Type": "text/html"})], "an HTML page (Unicorn!"),
    "object-for-a-list": ([Fault("GET", COMMENTS, 200, {"message": "a list was expected"})], "github-malformed"),
    "list-for-an-object": ([Fault("GET", PULL, 200, [1, 2, 3])], "github-malformed"),
    "wrong-types": ([Fault("GET", COMMENTS, 200, [{"id": "one", "body": 5, "user": "x"}])], "github-malformed"),
    "no-body": ([Fault("GET", PULL, 200, b"")], "github-malformed"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_answer_is_one_located_line(github, tmp_path, case):
    faults, said = MALFORMED[case]
    github.state.faults.extend(faults)
    plan = write_plan(tmp_path / "plan.json", rows(1))
    done = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
    assert done.returncode == 1 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, (
        done.stderr
    )
    assert said in done.stderr and ("#7" in done.stderr or "comments" in done.stderr)
    assert not github.state.requests_to("POST", COMMENTS)


@pytest.mark.parametrize(
    "field, value", [("id", "4242"), ("path", 7), ("head_branch", ["main"]), ("repository", "acme/bench")]
)
def test_a_run_of_the_wrong_shape_is_one_located_line(github, field, value):
    sweep_run(github, rows(1))
    github.state.runs[4242][field] = value
    done = run_cli("github", "rerun-failed", "--run-id", "4242", env=env_for(github))
    assert "run 4242" in one_located_line(done, "github-malformed")
    assert not github.state.dispatches


# --- the sticky comment: marker and author ------------------------------------------------------------------


def test_a_marked_comment_by_someone_else_is_never_edited(github, tmp_path):
    planted = github.state.add_comment(7, MARKER + "\nplanted by a stranger", login="mallory")
    plan = write_plan(tmp_path / "plan.json", rows(2))
    first = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
    assert first.returncode == 0 and "created" in first.stderr, first.stderr
    again = run_cli(
        "github", "report", "--pr", "7", "--plan", str(write_plan(tmp_path / "p2.json", rows(3))), env=env_for(github)
    )
    assert again.returncode == 0 and "updated" in again.stderr, again.stderr
    assert planted["body"] == MARKER + "\nplanted by a stranger"
    [patch] = github.state.requests_to("PATCH", rf"/repos/{SLUG}/issues/comments/\d+")
    ours = [c for c in github.state.comments[7] if c["user"]["login"] == ACTIONS_BOT]
    assert len(ours) == 1 and patch.path.endswith(str(ours[0]["id"]))


def test_the_token_s_identity_installation_token_and_personal_token(github, tmp_path):
    """GITHUB_TOKEN (an installation token): GET /user is refused, GraphQL's viewer answers
    github-actions[bot]. A personal access token: GET /user answers its login. Each edits only
    the comment it wrote."""
    github.state.token_logins["ghp_alice"] = "alice"
    plan = write_plan(tmp_path / "plan.json", rows(2))
    bot = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
    assert bot.returncode == 0, bot.stderr
    assert len(github.state.requests_to("GET", "/user")) == 1 and len(github.state.requests_to("POST", "/graphql")) == 1
    alice = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github, GITHUB_TOKEN="ghp_alice"))
    assert alice.returncode == 0 and "created" in alice.stderr, alice.stderr  # the bot's comment is not hers
    assert len(github.state.requests_to("POST", "/graphql")) == 1  # her identity came from GET /user
    assert sorted(c["user"]["login"] for c in github.state.comments[7]) == ["alice", ACTIONS_BOT]
    again = run_cli(
        "github",
        "report",
        "--pr",
        "7",
        "--plan",
        str(write_plan(tmp_path / "p2.json", rows(3))),
        env=env_for(github, GITHUB_TOKEN="ghp_alice"),
    )
    assert again.returncode == 0 and "updated" in again.stderr
    assert [c["user"]["login"] for c in github.state.comments[7] if "**3 points**" in c["body"]] == ["alice"]


# --- artifact downloads: the redirect to blob storage, on the same rule -------------------------------------


def stored_plan(github) -> dict:
    sweep_run(github, rows(2))
    return github.state.artifacts[4242][0]


def test_a_download_follows_the_redirect_without_the_token(github):
    artifact = stored_plan(github)
    connection = client(github)
    _, run = get_run(connection, SLUG, 4242)
    archive = download_artifact(connection, run_artifacts(connection, run)[0])
    assert json_in_archive(archive, "plan.json") == rows(2)
    [hop] = github.state.requests_to("GET", rf"/repos/{SLUG}/actions/artifacts/{artifact['id']}/zip")
    [blob] = github.state.requests_to("GET", rf"/blob-storage/{artifact['id']}\.zip")
    assert (
        hop.headers["Authorization"] == "token ghs_test" and "Authorization" not in blob.headers and blob.host == "blob"
    )


@pytest.mark.parametrize(
    "fault, tries",
    [
        (lambda aid: server_error_burst("GET", rf"/blob-storage/{aid}\.zip", 2, status=500), 3),
        (lambda aid: [truncated_fault("GET", rf"/blob-storage/{aid}\.zip", b"PK\x03\x04 cut")], 2),
    ],
    ids=["5xx-burst", "cut-off"],
)
def test_a_failing_blob_store_is_asked_again(github, fault, tries):
    artifact = stored_plan(github)
    github.state.faults.extend(fault(artifact["id"]))
    connection = client(github)
    _, run = get_run(connection, SLUG, 4242)
    assert json_in_archive(download_artifact(connection, run_artifacts(connection, run)[0]), "plan.json") == rows(2)
    assert len(github.state.requests_to("GET", rf"/blob-storage/{artifact['id']}\.zip")) == tries


@pytest.mark.parametrize("status, said", [(410, "HTTP 410 Artifact has expired"), (404, "HTTP 404 Not Found")])
def test_an_artifact_gone_by_its_download_is_one_located_line(github, status, said):
    artifact = stored_plan(github)
    github.state.faults.append(
        Fault(
            "GET", rf"/repos/{SLUG}/actions/artifacts/{artifact['id']}/zip", status, {"message": said.split(" ", 2)[2]}
        )
    )
    done = run_cli("github", "rerun-failed", "--run-id", "4242", env=env_for(github))
    assert said in one_located_line(done, "github-api") and "sweep-plan of run 4242" in done.stderr
