"""Issue 19's acceptance test, in the workflow executor (tests/testing/executor.py) on the real local
Slurm: a pull request's sweep where points' files are hostile, one stored result expires between the
reuse lookup's listing and its download, and the baseline lookup gets a 5xx burst longer than its
retries. Every other point is collected, compared and reported; results.json and the comment exist;
the results upload ran.

The sweep is the Mooncake ladder PR (tests/workflows/test_workflow_runs.py's `change`), label
`sweep-enabled`, reuse on, launching (not a dry run). Of its five AgentX points, two have valid results
a trusted run stored (this PR's own run on its head commit: reused, as are its five eval points), one
has a stored result whose download answers 410 Gone after the listing named it (dispatched), two have
none (dispatched). The
dispatched points launch through run-point.yml's own steps: `infx launch` with the lane profile pointed
at this machine's Slurm (its partition; the stand-in srtctl of tests/slurm/standin as the pinned
srt-slurm; no squash imports), and the AgentX harness of the checkout (the stand-in of
tests/slurm/standin-harness, as every test repository has it) writing each point's aggregate: a NaN
throughput for one point, a FIFO where the other's aggregate belongs. It lives here, not under
tests/workflows/, because it needs this folder's Slurm controller (as test_workflow_lane_check.py does).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from infx.points import point_id  # noqa: E402
from infx.workflows.rerun import artifact_name  # noqa: E402
from testing.cli import run_cli
from testing.comment_render import assert_readable, render_comment  # noqa: E402
from testing.executor import Executor  # noqa: E402
from testing.github_helpers import result_artifact_files  # noqa: E402
from testing.github_server import Fault, server_error_burst  # noqa: E402
from testing.launchkit import STANDIN, agentic_aggregate, git_repo  # noqa: E402
from testing.sweeps import PR, SLUG, _logs, change, point_jobs, pr_payload, server  # noqa: E402,F401

pytestmark = pytest.mark.slurm
STORED_RUN = 8000  # this PR's earlier run on its head commit: a trusted source of results
RUN = 9101


def launch_locally(repo: Path, tmp: Path, partition: str) -> None:
    """The lane profile as this machine can run it, committed: the local partition, the stand-in srtctl
    as the pinned srt-slurm of the ladder's route (a file:// repository), nothing to import."""
    sha = git_repo(tmp / "srt-slurm", copy_from=STANDIN)
    path = repo / "runners" / "gb300-nv.yaml"
    profile = yaml.safe_load(path.read_text())
    profile["slurm"].update({"partition": partition, "account": "", "default-time-limit": "10:00", "poll-seconds": 0.3})
    profile.pop("prepare")  # no squash files to import: the stand-in runs no container
    profile["git-protocols"] = ["https", "file"]
    profile["srt-slurm"]["pip-args"] = ["--no-build-isolation", "--no-index", "--no-deps"]
    profile["srt-slurm"]["pins"]["sa-schema2"].update({"repository": f"file://{tmp / 'srt-slurm'}", "commit": sha})
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    subprocess.run(["git", "commit", "-qam", "the lane on this machine's Slurm"], cwd=repo, check=True)


def planned(repo: Path, tmp: Path) -> list[dict]:
    """The points the setup job plans (before reuse), with their result keys: `infx plan` at the head."""
    base = subprocess.run(
        ["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {"INFX_CACHE_DIR": str(tmp / "plan-cache"), "GITHUB_WORKSPACE": str(repo)}
    (tmp / "nothing-stored").mkdir()  # reuse against an empty store: every point planned, each with its key
    done = run_cli(
        "plan",
        "--base-ref",
        base,
        "--head-ref",
        "HEAD",
        "--pr-number",
        str(PR),
        "--labels-json",
        '["sweep-enabled"]',
        "--reuse-artifacts",
        tmp / "nothing-stored",
        "--format",
        "json",
        cwd=repo,
        env=env,
        check=True,
    )
    return [row for rows in json.loads(done.stdout)["buckets"].values() for row in rows]


def test_hostile_files_an_expired_stored_result_and_a_failing_baseline_lookup_lose_no_other_point(
    change: Path, tmp_path: Path, server, slurm_cluster
):
    launch_locally(change, tmp_path, slurm_cluster["partition"])
    every = planned(change, tmp_path)
    assert all(len(r["result-key"]) == 64 for r in every)
    evals = [row for row in every if row.get("eval-only")]
    rows = sorted((row for row in every if not row.get("eval-only")), key=lambda r: r["conc"][0])
    assert [row["conc"] for row in rows] == [[120], [480], [960], [1440], [2400]] and len(evals) == 5
    reused, expired = rows[:2] + evals, rows[2]

    # What this PR's earlier run stored: valid results of three points, one of which expires after the listing.
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=change, capture_output=True, text=True, check=True
    ).stdout.strip()
    server.state.pull_commits[PR] = [head]
    server.state.add_run(STORED_RUN, head_branch="pr", event="pull_request", head_sha=head)
    # Their eval scores clear the floor (the accuracy gate has its own tests: test_eval_sweep.py), so the
    # results job's outcome here is the isolation's.
    for row in [*reused, expired]:  # the expiring one last: its artifact is `stored`
        files = result_artifact_files(row, row["result-key"], run_id=STORED_RUN, eval_score=0.95)
        stored = server.state.add_artifact(STORED_RUN, artifact_name(row), files=files)
    server.state.faults.append(
        Fault(
            "GET",
            rf"/repos/{SLUG}/actions/artifacts/{stored['id']}/zip",
            410,
            {
                "message": "Artifact has expired",
                "documentation_url": "https://docs.github.com/rest/actions/artifacts#download-an-artifact",
            },
        )
    )
    # The baseline lookup (`infx results compare`) reads the sweep workflow first: 5xx on every try, and more.
    burst = server_error_burst("GET", rf"/repos/{SLUG}/actions/workflows/[^/]+", 12, status=502)
    server.state.faults.extend(burst)

    # What the dispatched points' jobs write where the harness puts its aggregates (the stand-in reads these).
    aggregates = tmp_path / "aggregates"
    aggregates.mkdir()
    (aggregates / "default.json").write_text(agentic_aggregate(0, 2000))
    nan = json.loads(agentic_aggregate(1440, 2000))
    nan["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = float("nan")
    (aggregates / "conc1440.json").write_text(json.dumps(nan))  # Python writes NaN, which strict JSON refuses
    os.mkfifo(aggregates / "conc2400.json")

    event = pr_payload(change, "labeled", ["sweep-enabled"], "sweep-enabled")
    server.state.add_run(RUN, head_branch="pr", event="pull_request")
    run = Executor(
        change,
        tmp_path / "run",
        "pull_request",
        event,
        sha=event["pull_request"]["head"]["sha"],
        ref=f"refs/pull/{PR}/merge",
        repository=SLUG,
        run_id=RUN,
        github=server,
        variables={},
        env={"AGENTX_STANDIN_AGGREGATES": str(aggregates), "INFX_CACHE_DIR": str(tmp_path / "cache")},
    )
    run.results = run.run()
    assert run.results["setup"] == "success" and run.results["lane-gate"] == "success", _logs(run)

    # The expired result's point is dispatched, with the reason, and nothing else is lost to it.
    plan = json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())
    assert sorted(item["result-key"] for item in plan["reuse"]["reused"]) == sorted(r["result-key"] for r in reused)
    assert plan["point-count"] == 3
    reasons = plan["reuse"]["dispatch-reasons"]
    reason = reasons[point_id(expired)]
    assert "HTTP 410" in reason and "expired" in reason and expired["result-key"] in reason, reason
    assert reasons[point_id(rows[3])] == reasons[point_id(rows[4])] == "no stored result under its key"
    summary = next(job.summary for job in run.jobs if job.path == "setup")
    assert "Points that run, and why no stored result was reused" in summary, summary
    [line] = [line for line in summary.splitlines() if point_id(expired) in line]
    assert "HTTP 410 Artifact has expired" in line, line

    # The three dispatched points ran on the local Slurm: the expired one's launch succeeded; the hostile
    # ones failed their jobs (their results are not valid) and uploaded what they had.
    outcomes = {
        json.loads(job.inputs["point"])["conc"][0]: job.result for job in point_jobs(run) if job.result != "skipped"
    }
    assert outcomes == {960: "success", 1440: "failure", 2400: "failure"}, _logs(run)
    assert run.results["sweep"] == "failure"

    # results.json: every verdict, the hostile points with their reasons. Their launches judged their
    # output by the one validity rule and failed, so the verdict is `failed`, with the launch's reason.
    assert run.results["results"] == "success", _logs(run)
    results = json.loads((run.artifacts / "sweep-results" / "results.json").read_text())
    verdicts = {v["point-id"]: v for v in results["points"]}
    assert sorted(verdicts) == sorted(point_id(row) for row in every), results["points"]
    hostile = {point_id(rows[3]), point_id(rows[4])}
    assert {v["status"] for pid, v in verdicts.items() if pid not in hostile} == {"ok"}, results["points"]
    nan_verdict, fifo_verdict = verdicts[point_id(rows[3])], verdicts[point_id(rows[4])]
    assert (
        nan_verdict["status"] == fifo_verdict["status"] == "failed" and nan_verdict["rows"] == fifo_verdict["rows"] == 0
    )
    [why] = nan_verdict["reasons"]
    assert (
        "is not strict JSON: NaN is not a JSON number at $.request_metrics.throughput.per_gpu.total_tput_tps" in why
    ), why
    [why] = fifo_verdict["reasons"]
    assert "planned concurrency 2400 produced no result file" in why, why
    throughput = {point_id(row) for row in rows}
    assert sorted(row["conc"] for row in results["rows"] if row["point-id"] in throughput) == [120, 480, 960]
    fifo_artifact = run.artifacts / fifo_verdict["artifact"]  # the FIFO never reached the artifact
    assert not [p for p in fifo_artifact.rglob("*") if not (p.is_file() or p.is_dir()) or p.is_symlink()]
    [record] = fifo_artifact.glob("*_launch.json")
    assert any("not a regular file in the workspace" in line for line in json.loads(record.read_text())["skipped"])

    # Compared: every valid point is new (there is no baseline, and the comparison says why), the two
    # hostile points are counted without a valid result.
    comparison = json.loads((run.artifacts / "sweep-results" / "comparison.json").read_text())
    assert comparison["baseline"] == {"kind": "none"} and comparison["counts"]["without a valid result"] == 2, (
        comparison["counts"]
    )
    # (an AgentX row keeps the topology its aggregate reports: here the one shipped aggregate, 1P1D, at each point)
    assert {item["conc"] for item in comparison["new"]} == {120, 480, 960}, comparison["new"]
    [notice] = [n for n in comparison["notices"] if n.startswith("no baseline: ")]
    assert "reading workflow run-sweep.yml" in notice and "HTTP 502 on every one of 5 tries" in notice, notice
    assert (
        len(server.state.requests_to("GET", rf"/repos/{SLUG}/actions/workflows/[^/]+")) == 5
    )  # retried, then given up

    # The results upload ran (registered with the server as this run's artifact) and the comment has every point.
    assert "sweep-results" in {a["name"] for a in server.state.artifacts[RUN]}
    assert run.results["report-results"] == "success", _logs(run)
    [comment] = server.state.comments[PR]
    body = comment["body"]
    for row in every:
        assert point_id(row) in body, (point_id(row), body)
    for line in (line for line in body.splitlines() if point_id(rows[3]) in line or point_id(rows[4]) in line):
        assert "fail" in line.lower() or "❌" in line, line
    assert "no baseline" in body and "HTTP 502" in body, body

    # The comment as a reviewer sees it, rendered in headless Chromium (comment.png kept in tmp_path/comment):
    # charts with numeric axes and a legend, no 0.0 for a missing value, each point in one row, with its state.
    rendered = render_comment(body, tmp_path / "comment")
    assert_readable(rendered, [point_id(row) for row in every])
    states = {pid: next(row for row in rendered.rows if pid in row) for pid in map(point_id, every)}
    assert all("failed" in states[pid] for pid in hostile) and "ok" in states[point_id(expired)], states
    assert all("reused" in states[point_id(row)] for row in reused), states
    assert "site-packages" not in body and "the floors infx ships" in body
    # The PNG charts are in the run's results artifact, and the comment links that artifact.
    assert list((run.artifacts / "sweep-results" / "charts").glob("*.png"))
    [uploaded] = [a for a in server.state.artifacts[RUN] if a["name"] == "sweep-results"]
    assert f"[sweep-results](https://github.com/{SLUG}/actions/runs/{RUN}/artifacts/{uploaded['id']})" in body, body
