"""Which points `infx github rerun-failed` reruns: collect's verdicts first (the run's
`sweep-results` results.json), the artifact names only when the run has no readable one.

A point whose artifact is named as a success but whose result collect refused (truncated,
nothing completed) has no valid result: it is rerun. PyGithub over real HTTP against the
local GitHub server.
"""

from __future__ import annotations

import json

import pytest

from infx.points import point_id
from infx.workflows.markers import launch_marker
from infx.workflows.rerun import artifact_name
from testing.cli import run_cli
from testing.github_helpers import env_for, rows
from testing.github_server import LocalGitHub


@pytest.fixture
def github():
    with LocalGitHub() as server:
        server.state.title_for_dispatch = lambda inputs: (
            f"Rerun of run {inputs['rerun-of']} {launch_marker(inputs['launch-id'])}"
            if inputs.get("launch-id")
            else "Manual sweep"
        )
        yield server


def sweep(server: LocalGitHub, plan_rows: list[dict], results: str | None, run_id: int = 4242) -> None:
    """A finished sweep: its plan, one artifact per point named as a success, and the report
    job's `sweep-results` artifact holding ``results`` as results.json (None: not uploaded)."""
    server.state.add_run(run_id, head_branch="main")
    server.state.add_artifact(
        run_id, "sweep-plan", files={"plan.json": json.dumps(plan_rows), "infx-shards/shard-0.json": "[]"}
    )
    for row in plan_rows:
        server.state.add_artifact(run_id, artifact_name(row))
    if results is not None:
        server.state.add_artifact(run_id, "sweep-results", files={"results.json": results, "charts.md": ""})


def verdict(row: dict, status: str, reasons: list[str] = ()) -> dict:
    return {
        "artifact": artifact_name(row),
        "status": status,
        "reasons": list(reasons),
        "point-id": point_id(row),
        "config-key": row["config-key"],
        "conc": [],
        "rows": 1 if status == "ok" else 0,
    }


def rerun(server: LocalGitHub) -> tuple[list[str], str]:
    done = run_cli("github", "rerun-failed", "--run-id", "4242", "--dry-run", env=env_for(server))
    assert done.returncode == 0, done.stderr
    return sorted(line.split("\t")[1] for line in done.stdout.splitlines()), done.stderr


def test_collects_verdicts_decide_which_points_are_rerun(github):
    plan_rows = rows(4)
    ok, truncated, empty, unlisted = plan_rows
    document = {
        "format": "infx-results/1",
        "rows": [],
        "points": [
            verdict(ok, "ok"),
            verdict(truncated, "invalid", ["x_conc64.json is not strict JSON: not valid JSON"]),
            verdict(empty, "invalid", ["concurrency 64: no request completed"]),
        ],
    }
    sweep(github, plan_rows, json.dumps(document))
    failed, stderr = rerun(github)
    # Every artifact is named as a success: only the verdicts tell the truncated and empty points apart.
    assert failed == sorted(point_id(r) for r in (truncated, empty)), stderr
    assert "notice" not in stderr


@pytest.mark.parametrize(
    "results, why",
    [
        (None, ""),  # none uploaded: the names decide, silently
        ('{"rows": [], "points": [{"artifact": "x", "st', "is not readable"),
        ('{"rows": [{"tput_per_gpu": NaN}], "points": []}', "is not readable"),
        ('{"rows": [], "points": [{"artifact": "x", "status": "great"}]}', "is not readable"),
    ],
)
def test_without_readable_verdicts_the_artifact_names_decide(github, results, why):
    plan_rows = rows(2)
    sweep(github, plan_rows, results)
    github.state.artifacts[4242] = [a for a in github.state.artifacts[4242] if a["name"] != artifact_name(plan_rows[1])]
    failed, stderr = rerun(github)
    assert failed == [point_id(plan_rows[1])], stderr
    assert ("results.json is not used" in stderr) == bool(why) and why in stderr


def test_the_comment_shows_collects_verdicts_too(github, tmp_path):
    """`github report --run-id` takes each point's outcome by the same rule as the rerun."""
    plan_rows = rows(2)
    ok, truncated = plan_rows
    document = {"rows": [], "points": [verdict(ok, "ok"), verdict(truncated, "invalid", ["x.json is not strict JSON"])]}
    sweep(github, plan_rows, json.dumps(document))
    github.state.add_pull(7)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_rows))
    done = run_cli("github", "report", "--pr", "7", "--plan", str(plan), "--run-id", "4242", env=env_for(github))
    assert done.returncode == 0, done.stderr
    [comment] = github.state.comments[7]
    body = comment["body"]
    assert "❌ failed: **1**" in body and "✅ ok: **1**" in body, body
    assert "❌ failed" in next(line for line in body.splitlines() if point_id(truncated) in line)
    assert "✅ ok" in next(line for line in body.splitlines() if point_id(ok) in line)
