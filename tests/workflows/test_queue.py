"""The plan's queue check (infx/workflows/queue.py): GitHub cancels a self-hosted job that waits 24
hours for a runner, so a launching plan queues per lane only the points its runners start within
that, holds back the rest (still planned: a rerun runs them) and says how many runners would run
them all. Checked on the 68 bundled points and their 3-runner lane."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from infx.points import benchmark_hours, point_id
from infx.workflows import queue
from testing.artifacts import bundled_row
from testing.cli import run_cli
from testing.executor import PROJECT, Executor
from testing.runner_python import copy_source

OVERHEAD_MINUTES = 45  # with the bundled points' benchmark time, about 1.4 hours a point


@pytest.mark.parametrize("hours, runners", [(1.1, 3), (0.9, 3), (2.5, 2), (30.0, 3), (1.0, 1)])
def test_uniform_points_start_as_the_closed_form_says(hours: float, runners: int):
    """n points of h hours on R runners: each runner starts ⌈24/h⌉ of them before the 24-hour limit."""
    per_runner = math.ceil(queue.QUEUE_LIMIT_HOURS / hours)
    lane = queue.LaneQueue(
        labels=("gb300-nv",), runners=runners, points=tuple(str(i) for i in range(68)), hours=(hours,) * 68
    )
    assert len(lane.queued) == min(68, runners * per_runner) and lane.held == lane.points[len(lane.queued) :]
    assert lane.runners_needed == math.ceil(68 / per_runner)


def test_labels_that_share_a_runner_share_one_queue():
    lanes = queue.lanes_of(
        {"gb300": ["r0", "r1"], "gb300-nv": ["r1", "r2"], "cluster:gb300-nv": ["r2"], "h100": ["h0"]}
    )
    assert lanes["gb300"] == lanes["cluster:gb300-nv"] == ("cluster:gb300-nv", "gb300", "gb300-nv") and lanes[
        "h100"
    ] == ("h100",)


@pytest.mark.parametrize(
    "section, counted",
    [
        ("queue:\n  point-overhead-minutes: 90\n", 1.5),
        ("queue:\n  point-overhead-minutes: -90\n", 0.0),  # refused by `infx lane validate`: not counted
        ("queue:\n  point-overhead-minutes: 90\nslurm-typo: 1\n", 0.0),  # any refused profile counts none
        ("", 0.0),
    ],
)
def test_a_point_s_overhead_is_the_valid_lane_profile_s(tmp_path: Path, section: str, counted: float):
    for name in ("configs/runners.yaml", "runners/gb300-nv.yaml"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(PROJECT / name, tmp_path / name)
    profile = tmp_path / "runners" / "gb300-nv.yaml"
    profile.write_text(profile.read_text() + "\n" + section)
    row = bundled_row("dsv4-fp4-gb300-dynamo-vllm")
    [lane] = queue.repository_queues([row], tmp_path)
    assert lane.hours == (benchmark_hours(row) + counted,)


def repository(tmp_path: Path, overhead: int | None) -> Path:
    """This repository as its workflows see it, the lane profile with (or without) a point overhead."""
    repo = tmp_path / "repo"
    for name in ("configs", "runners", "benchmarks"):
        shutil.copytree(PROJECT / name, repo / name)
    shutil.copy(PROJECT / "perf-changelog.yaml", repo)
    shutil.copytree(PROJECT / ".github", repo / ".github")
    copy_source(repo)
    if overhead is not None:
        profile = repo / "runners" / "gb300-nv.yaml"
        profile.write_text(profile.read_text() + f"\nqueue:\n  point-overhead-minutes: {overhead}\n")
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "r"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def plan(repo: Path, *extra: str) -> tuple[dict, str]:
    rows = repo / "rows.json"
    env = {"PATH": "/usr/bin:/bin"}
    run_cli("matrix", "--format", "json", "--output", rows, cwd=repo, env=env, inherit=False, check=True)
    done = run_cli("plan", "--rows", rows, "--format", "json", *extra, cwd=repo, env=env, inherit=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_the_68_bundled_points_past_a_3_runner_lane_s_day_are_held_back(tmp_path: Path):
    repo = repository(tmp_path, OVERHEAD_MINUTES)
    found, stderr = plan(repo)
    rows = [row for bucket in found["buckets"].values() for row in bucket]
    [lane] = found["queue"]["lanes"]
    assert len(rows) == lane["points"] == 68 and lane["runners"] == 3  # gb300-nv_0..2 serve all three labels
    hours = [benchmark_hours(row) + OVERHEAD_MINUTES / 60 for row in rows]
    assert lane["runner-hours"] == round(sum(hours), 1) and sum(hours) / len(hours) > 1 and sum(hours) > 3 * 24
    # Replayed here: 3 runners take the points in plan order, each as soon as it is free.
    free, starts = [0.0, 0.0, 0.0], []
    for needed in hours:
        runner = free.index(min(free))
        starts.append(free[runner])
        free[runner] += needed
    expected_held = [point_id(row) for row, start in zip(rows, starts) if start >= 24]
    assert expected_held and lane["held"] == found["queue"]["held"] == expected_held == [
        point_id(r) for r in rows[-len(expected_held) :]
    ]
    assert lane["queued"] == 68 - len(expected_held) and lane["runners-needed"] == 4
    # Said where the runners are declared, with the fix.
    assert "configs/runners.yaml:" in stderr and "warning[plan-queue-limit]" in stderr
    assert f"{len(expected_held)} point(s) are held back" in stderr and "4 runners would start them all" in stderr
    assert "infx github rerun-failed" in stderr
    # A dry run launches on GitHub-hosted runners: no queue to check. Without the overhead the points fit.
    assert "queue" not in plan(repo, "--dry-run")[0]
    assert plan(repository(tmp_path / "plain", None))[0]["queue"]["held"] == []


def test_the_setup_job_fans_out_only_the_points_that_start_within_the_day(tmp_path: Path):
    repo = repository(tmp_path, OVERHEAD_MINUTES)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    run = Executor(
        repo, tmp_path / "run", "workflow_dispatch", {"ref": "refs/heads/main"}, sha=sha, repository="acme/bench"
    )
    results = run.run(inputs={"no-reuse": True}, only={"setup"})  # a launching manual sweep of every point
    setup = run.find("setup")[0]
    assert results["setup"] == "success", setup.log[-3000:]
    document = json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())
    held = document["queue"]["held"]
    assert held and document["point-count"] == 68  # still planned: a rerun of this run finds them without a result
    fanned_out = [
        point_id(row)
        for descriptor in json.loads(setup.outputs["shards"])
        for row in json.loads((run.artifacts / "sweep-plan" / "infx-shards" / descriptor["file"]).read_text())
    ]
    assert int(setup.outputs["point-count"]) == len(fanned_out) == 68 - len(held) and not set(fanned_out) & set(held)
    assert "::warning file=configs/runners.yaml" in setup.log and "title=plan-queue-limit" in setup.log
    assert "#### Queues" in setup.summary and f"{len(held)} of 68 points held back" in setup.summary
