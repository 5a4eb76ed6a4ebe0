"""The sweep plan's one reader and one writer (infx/sweepplan.py): what the writer writes the reader
reads back equal and byte for byte, and a malformed plan is refused at the place it breaks (that
the dataclasses name exactly the schema's fields, tests/test_records.py checks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from infx.changelog.plan import PlanOptions, apply_mode
from infx.changelog.worktree import plan_newest_entry
from infx.diagnostics import InfxError, UsageError
from infx.points import point_id
from infx.runmode import Mode
from infx.sweepplan import (
    Canary,
    ChangelogMetadata,
    QueueCheck,
    QueueLane,
    ReusedPoint,
    ReuseSummary,
    SweepPlan,
)
from infx.workflows.labels import resolve_mode

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bundled_plan() -> SweepPlan:
    """The plan of the bundled changelog's newest entry, as a full sweep with its canary."""
    plan, report = plan_newest_entry(REPO, "perf-changelog.yaml", PlanOptions())
    assert plan is not None and report.ok, report.diagnostics
    mode, problems = resolve_mode("pull_request", ["full-sweep-enabled"])
    assert not problems
    return apply_mode(plan, mode)


def full(plan: SweepPlan) -> SweepPlan:
    """The plan with every field a sweep plan can carry, the changelog's as the PR gate writes them."""
    first = plan.rows[0]
    change = ChangelogMetadata.build(
        base_ref="main",
        head_ref="HEAD",
        base="a" * 40,
        head="b" * 40,
        pr_number=7,
        change_kind="pr",
        pr_link="https://github.com/acme/bench/pull/7",
        removed=[{"position": 3, "entry": {"config-keys": ["x"]}}],
        deleted_keys=["gone-key"],
    )
    assert plan.changelog_metadata is not None
    metadata = change.completed(
        entries=plan.changelog_metadata.entries, resolved_keys=plan.changelog_metadata.resolved_keys
    )
    reuse = ReuseSummary.build(
        reused=(
            ReusedPoint.build(
                point_id=point_id(first),
                result_key="c" * 64,
                source_run=5,
                artifact="point-" + "c" * 64,
                folder="/tmp/x",
                gpu_hours=1.5,
            ),
        ),
        dispatch_reasons={"p": "no stored result under its key"},
        gpu_hours_saved=1.5,
        notice="the lookup stopped",
    )
    lane = QueueLane.build(
        labels=("gb300",), runners=1, points=2, runner_hours=30.0, queued=1, held=(point_id(first),), runners_needed=2
    )
    queue = QueueCheck.build(limit_hours=24.0, lanes=(lane,), held=(point_id(first),))
    return replace(plan, changelog_metadata=metadata, reuse=reuse, queue=queue)


def test_what_the_writer_writes_the_reader_reads_back_equal_and_byte_for_byte(bundled_plan, tmp_path):
    for plan in (bundled_plan, full(bundled_plan), SweepPlan(bundled_plan.buckets)):
        for indent in (None, 1, 2):
            path = tmp_path / "plan.json"
            path.write_text(plan.text(indent=indent))
            again = SweepPlan.read(path)
            assert again == plan
            assert again.text(indent=indent) == plan.text(indent=indent)
    assert bundled_plan.point_count == len(bundled_plan.rows) > 0
    assert bundled_plan.canary is not None and bundled_plan.canary.id in {point_id(row) for row in bundled_plan.rows}


def test_the_two_modes_are_two_fields(bundled_plan):
    # `mode` of the plan is the run mode; the changelog's `mode` (pr or push) is change_kind.
    plan = full(bundled_plan)
    data = json.loads(plan.text())
    assert data["changelog_metadata"]["mode"] == "pr" and isinstance(data["mode"], dict)
    again = SweepPlan.from_json(data)
    assert again.changelog_metadata is not None and again.changelog_metadata.change_kind == "pr"
    assert isinstance(again.mode, Mode) and again.mode.dispatch and again.mode.canary
    # The metadata keeps the order it was written in: the gate's pr-link before its entries.
    assert list(data["changelog_metadata"])[:7] == [
        "base_ref",
        "head_ref",
        "base",
        "head",
        "pr-number",
        "mode",
        "pr-link",
    ]


def test_the_shapes_a_plan_is_made_from_are_read_into_buckets(bundled_plan):
    rows = bundled_plan.rows
    from_rows = SweepPlan.from_json(rows)
    assert from_rows.rows and sorted(map(point_id, from_rows.rows)) == sorted(map(point_id, rows))
    assert from_rows.mode is None and from_rows.canary is None and "mode" not in from_rows.to_json()
    assert SweepPlan.from_json({"gb300": {"8k1k": rows[:1]}}).buckets == {"gb300/8k1k": rows[:1]}


def plan_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(text)
    return path


def refusal(path: Path) -> tuple:
    with pytest.raises(InfxError) as caught:
        SweepPlan.read(path)
    (found, *_) = caught.value.diagnostics
    return found.rule, found.line, found.column, found.message


def test_a_malformed_plan_is_refused_where_it_breaks(bundled_plan, tmp_path):
    lines = bundled_plan.text(indent=2).splitlines()
    at = next(n for n, line in enumerate(lines, 1) if line.startswith('  "point-count"'))
    broken = "\n".join(
        line.replace('"point-count": ', '"point-count": "many", "was": ') if n == at else line
        for n, line in enumerate(lines, 1)
    )
    rule, line, _, message = refusal(plan_file(tmp_path, broken))
    assert (rule, line) == ("plan-json", at) and "point-count" in message

    rule, line, _, message = refusal(plan_file(tmp_path, '{"buckets": {},\n "metadata": {"entries": []}}'))
    assert (rule, line) == ("plan-json", 2) and "metadata" in message  # an unknown field, named where it is
    rule, _, _, message = refusal(plan_file(tmp_path, '{"buckets": {}, "canary": null}'))
    assert rule == "plan-json" and "mode" in message  # a canary is written with the run mode
    mode = json.dumps(Mode().to_json())
    rule, line, _, message = refusal(
        plan_file(
            tmp_path,
            '{"buckets": {},\n "canary": {"id": "p", "bucket": "b"},\n "mode": '
            + mode.replace('"reuse": true', '"reuse": "yes"')
            + "}",
        )
    )
    assert (rule, line) == ("plan-json", 3) and "reuse" in message
    # The reuse and queue sections are records too: a reused point without its folder, a lane's count as text.
    rule, line, _, message = refusal(
        plan_file(
            tmp_path,
            '{"buckets": {},\n "reuse": {"reused": [{"point-id": "p", "result-key": "k", "source-run": 1, '
            '"artifact": "a", "gpu-hours": 1}], "dispatch-reasons": {}, "gpu-hours-saved": 1}}',
        )
    )
    assert (rule, line) == ("plan-json", 2) and "folder" in message
    lane = json.dumps(
        {
            "labels": ["l"],
            "runners": 1,
            "points": "two",
            "runner-hours": 1,
            "queued": 1,
            "held": [],
            "runners-needed": 1,
        }
    )
    rule, line, _, message = refusal(
        plan_file(tmp_path, '{"buckets": {},\n "queue": {"limit-hours": 24, "held": [],\n "lanes": [' + lane + "]}}")
    )
    assert (rule, line) == ("plan-json", 3) and "points" in message
    rule, line, _, message = refusal(
        plan_file(tmp_path, '{"buckets": {"a": [\n  {"config-key": "k", "tp": "eight"}]}}')
    )
    assert (
        rule != "plan-json" and line == 2 and "row 0 (at $.buckets.a[0])" in message
    )  # the row contract, at the row's field
    rule, line, column, _ = refusal(plan_file(tmp_path, '{"buckets": {\n  "a": [}'))
    assert (rule, line) == ("plan-json", 2)
    with pytest.raises(UsageError):
        SweepPlan.read(tmp_path / "missing.json")


def test_every_plan_reading_command_refuses_a_malformed_plan_with_its_place(tmp_path):
    path = plan_file(tmp_path, '{"buckets": {},\n "point-count": -1}')
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    for argv in (["github", "select-points", "--points", "x"], ["reuse", "select", "--artifacts", str(tmp_path)]):
        done = subprocess.run(
            [sys.executable, "-m", "infx", *argv, "--plan", str(path)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr
        assert (
            f"{path.name}:2:" in done.stderr and "plan-json" in done.stderr
        )  # relative to the root: cwd and "Traceback" not in done.stderr
        missing = subprocess.run(
            [sys.executable, "-m", "infx", *argv, "--plan", str(tmp_path / "none.json")],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_the_fan_out_leaves_the_canary_and_the_held_points_out(bundled_plan):
    plan = full(bundled_plan)
    buckets, canary = plan.fan_out()
    assert plan.canary is not None and [point_id(row) for row in canary] == [plan.canary.id]
    fanned = {point_id(row) for rows in buckets.values() for row in rows}
    assert fanned == {point_id(row) for row in plan.rows} - plan.held - {plan.canary.id}
    assert SweepPlan(plan.buckets, canary=Canary("nope", "none")).fan_out() == (plan.buckets, [])
