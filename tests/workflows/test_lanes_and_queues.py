"""Lanes and queues through the executor's simulated clock (tests/testing/executor.py): a lane
whose self-hosted runners are all offline never delays another lane's points, and the two jobs
that write the sticky PR comment never race.

The launching runs here have no Slurm (SLURM_CONF names no file): each point's own lane check on
its runner finds no node up and launches nothing, which is all these tests need of a point.
"""

from __future__ import annotations

import json
from pathlib import Path

from testing import github_server  # noqa: E402
from testing.executor import QUEUE_LIMIT_HOURS, QUEUE_TIMEOUT, Executor  # noqa: E402
from testing.sweeps import PR, SLUG, _logs, change, git, main_repo, pr_run, server  # noqa: F401

# Two lanes: 6 points on gb300-nv, 7 on gb300 (the bundled configs).
KEYS = "dsv4-fp4-gb300-dynamo-vllm dsv4-fp4-gb300-dynamo-sglang"
OFFLINE, ONLINE = "gb300", "gb300-nv"
TIMES = {"setup": 0.1, "lane-gate": 0.05}  # hours; every other job takes none


def launching_dispatch(repo: Path, tmp: Path, gh, secrets: dict | None = None) -> Executor:
    sha = git(repo, "rev-parse", "HEAD")
    gh.state.add_run(9400, head_branch="main", event="workflow_dispatch", head_sha=sha)
    run = Executor(
        repo,
        tmp,
        "workflow_dispatch",
        {"ref": "refs/heads/main"},
        sha=sha,
        repository=SLUG,
        run_id=9400,
        github=gh,
        env={"SLURM_CONF": str(tmp / "no-slurm.conf")},
        secrets=secrets,
        offline={OFFLINE},
        durations=TIMES,
    )
    run.results = run.run(inputs={"config-keys": KEYS, "no-reuse": True})
    return run


def points_on(run: Executor, label: str) -> list:
    return [
        job for job in run.jobs if job.path.endswith("/launch") and json.loads(job.inputs["point"])["runner"] == label
    ]


def test_an_offline_lane_does_not_delay_another_lane_s_points(main_repo: Path, tmp_path: Path, server):
    """No runner token: nothing knows the gb300 runners are offline. Its points wait out GitHub's
    24-hour queue and fail; gb300-nv's points start as soon as the plan and the gate are done."""
    run = launching_dispatch(main_repo, tmp_path / "run", server)
    assert run.results["setup"] == "success" and run.results["lane-gate"] == "success", _logs(run)
    gate = next(job for job in run.jobs if job.path == "lane-gate")
    assert json.loads(gate.outputs["down"]) == [] and "runner availability not checked" in gate.summary
    assert gate.runs_on == "ubuntu-latest"  # the gate never waits for a lane's runner
    online, offline = points_on(run, ONLINE), points_on(run, OFFLINE)
    assert len(online) == 6 and len(offline) == 7
    start = TIMES["setup"] + TIMES["lane-gate"]
    assert {job.started_at for job in online} == {start}, [(job.path, job.started_at) for job in online]
    assert all(job.runs_on == ["self-hosted", ONLINE] and job.result == "success" for job in online), _logs(run)
    # Each checked its own lane on its own runner (no Slurm here: no node up) and launched nothing.
    assert all("lane gb300-nv has no node up" in job.log for job in online)
    assert all(
        job.result == "failure" and QUEUE_TIMEOUT in job.log and job.finished_at == start + QUEUE_LIMIT_HOURS
        for job in offline
    )


def test_with_a_runner_token_an_offline_lane_s_points_never_queue(main_repo: Path, tmp_path: Path, server):
    settings = github_server.repository_settings(server.state)
    settings.runners = [
        github_server.runner(1, "gb300-nv_0", [ONLINE], True),
        github_server.runner(2, "gb300_0", [OFFLINE], True, status="offline"),
    ]
    run = launching_dispatch(main_repo, tmp_path / "run", server, secrets={"INFX_RUNNERS_TOKEN": "ghs_admin"})
    gate = next(job for job in run.jobs if job.path == "lane-gate")
    assert json.loads(gate.outputs["down"]) == [OFFLINE], _logs(run)
    assert "lane `gb300`: no runner online: all 1 runner(s) with the label are offline" in gate.summary
    assert {job.result for job in points_on(run, OFFLINE)} == {"skipped"}  # never queued
    online = points_on(run, ONLINE)
    assert len(online) == 6 and {job.started_at for job in online} == {TIMES["setup"] + TIMES["lane-gate"]}
    # The gate's token is the secret, never a job's GITHUB_TOKEN (which may not list runners).
    assert any(
        request.token == "ghs_admin" and request.path.endswith("/actions/runners") for request in server.state.requests
    )


def test_the_results_comment_is_written_after_the_plan_comment(change: Path, tmp_path: Path, server):
    """report-plan and report-results both write the one sticky comment: report-results `needs`
    report-plan, so even a plan comment slower than the whole sweep is never written last."""
    slow = {"report-plan": 2.0}
    run = pr_run(change, tmp_path, server, ["sweep-enabled"], durations=slow)
    plan_job = next(job for job in run.jobs if job.path == "report-plan")
    results_job = next(job for job in run.jobs if job.path == "report-results")
    assert plan_job.result == results_job.result == "success", _logs(run)
    sweep_done = max(job.finished_at for job in run.jobs if job.path.startswith("sweep"))
    assert sweep_done < plan_job.finished_at <= results_job.started_at
    body = server.state.comments[PR][0]["body"]
    assert len(server.state.comments[PR]) == 1 and "✅ ok:" in body  # the outcomes, not the plan, are what remains
