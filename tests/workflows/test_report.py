"""The comment body and the rerun selection: pure functions over plan data."""

from __future__ import annotations

import json

import pytest

from infx.diagnostics import InfxError
from infx.points import point_id
from infx.sweepplan import ReusedPoint, SweepPlan
from infx.workflows.report import COMMENT_LIMIT, MARKER, build_comment
from infx.workflows.rerun import ArtifactInfo, artifact_name, dispatch_inputs, launch_id, outcomes, select_rows
from testing.cli import run_cli
from testing.github_helpers import row, rows, write_plan


def test_plan_shapes_are_read_into_the_same_buckets():
    plan_rows = rows(4)
    from_list = SweepPlan.from_json(plan_rows).buckets
    assert sum(len(r) for r in from_list.values()) == 4
    nested = {
        "multi_node": {"8k1k": plan_rows[:2]},
        "single_node": {"8k1k": plan_rows[2:]},
        "changelog_metadata": {"entries": []},
    }
    assert SweepPlan.from_json(nested).buckets == {"multi_node/8k1k": plan_rows[:2], "single_node/8k1k": plan_rows[2:]}
    assert SweepPlan.from_json({"rows": plan_rows, "base-ref": "abc"}).buckets == from_list
    # `infx plan --format json`: buckets by name, plus the change they come from (no rows); a field
    # the plan's schema does not name is refused (tests/test_sweepplan.py).
    planned = {
        "buckets": from_list,
        "point-count": 4,
        "changelog_metadata": {"entries": [{"config-keys": ["k"], "position": 1, "resolved-keys": ["k"]}]},
    }
    assert SweepPlan.from_json(planned).buckets == from_list
    assert SweepPlan.from_json([]).buckets == {}


def test_comment_shows_buckets_gpu_hours_and_every_point():
    plan_rows = rows(4)
    body = build_comment(SweepPlan.from_json(plan_rows).buckets)
    assert body.startswith(MARKER)
    assert "**4 points**" in body and "GPU-hours" in body
    for r in plan_rows:
        assert point_id(r) in body


def test_failed_points_come_first_in_the_outcomes():
    plan_rows = rows(3)
    status = {point_id(plan_rows[0]): "ok", point_id(plan_rows[2]): "failed"}
    body = build_comment(SweepPlan.from_json(plan_rows).buckets, status, "https://github.com/acme/bench/actions/runs/1")
    failed_at = body.index(point_id(plan_rows[2]))
    assert (
        failed_at < body.index(point_id(plan_rows[1])) < body.index(point_id(plan_rows[0]), body.index("#### Points\n"))
    )
    assert "rerun-failed" in body


@pytest.mark.parametrize("with_outcomes", [False, True])
def test_a_huge_plan_stays_under_the_comment_limit_with_a_count_of_what_was_cut(with_outcomes):
    plan_rows = [row(n, conc=list(range(1, 25)), multinode=True) for n in range(6000)]
    buckets = SweepPlan.from_json(plan_rows).buckets
    status = {point_id(r): "failed" for r in plan_rows} if with_outcomes else None
    body = build_comment(buckets, status)
    assert len(body) < COMMENT_LIMIT
    shown = sum(1 for r in plan_rows if point_id(r) in body)
    assert 0 < shown < len(plan_rows)
    assert f"and {len(plan_rows) - shown} more rows not shown" in body
    assert "**6000 points**" in body  # the totals are never cut


def test_outcomes_are_decided_per_point_from_artifacts():
    plan_rows = rows(7)
    plan_rows[5]["result-key"] = "f" * 64  # a planned row with a result key: its artifact is named after it
    plan_rows[6]["result-key"] = "e" * 64  # ... so an artifact named after its point id does not count
    a, b, c, d, e, f, g = (point_id(r) for r in plan_rows)
    infos = [
        ArtifactInfo(f"point-{a}", 10, False),
        ArtifactInfo(f"point-{b}-failed", 10, False),
        ArtifactInfo(f"point-{c}", 10, True),
        ArtifactInfo(f"point-{d}", 0, False),
        ArtifactInfo("sweep-plan", 10, False),
        ArtifactInfo(f"point-{'f' * 64}", 10, False),
        ArtifactInfo(f"point-{f}-failed", 10, False),
        ArtifactInfo(f"point-{g}", 10, False),
    ]
    assert outcomes(plan_rows, infos) == {
        a: "ok",
        b: "failed",
        c: "missing",
        d: "missing",
        e: "missing",
        f: "ok",
        g: "missing",
    }
    assert (
        artifact_name(plan_rows[5]) == f"point-{'f' * 64}"
        and artifact_name(plan_rows[5], False) == f"point-{'f' * 64}-failed"
    )


def test_launch_id_is_deterministic_and_depends_on_run_and_set():
    assert launch_id(1, ["b", "a"]) == launch_id(1, ["a", "b"])
    assert launch_id(1, ["a"]) != launch_id(2, ["a"]) != launch_id(1, ["a", "b"])
    assert dispatch_inputs(1, ["b", "a"], "x") == {"rerun-of": "1", "points": "a b", "launch-id": "x"}


def test_failed_points_that_do_not_fit_one_dispatch_are_github_dispatch_too_large():
    # GitHub caps a dispatch's inputs at 65,535 characters: a point id and its separator take 20.
    fits = [f"{n:016x}-c4" for n in range(3200)]
    assert len(dispatch_inputs(1, fits, "x")["points"].split()) == 3200
    with pytest.raises(InfxError) as caught:
        dispatch_inputs(1, [f"{n:016x}-c4" for n in range(3300)], "x")
    (problem,) = caught.value.diagnostics
    assert problem.rule == "github-dispatch-too-large" and problem.file == "<github>"
    assert (
        problem.message.startswith("3300 failed points do not fit in one dispatch (")
        and "> 65535 characters" in problem.message
    )
    assert "Rerun the whole sweep" in problem.hint


def test_select_rows_keeps_buckets_and_only_the_listed_points():
    plan_rows = rows(6)
    buckets = SweepPlan.from_json(plan_rows).buckets
    wanted = {point_id(plan_rows[1]), point_id(plan_rows[4])}
    selected = select_rows(buckets, wanted)
    assert {point_id(r) for rs in selected.values() for r in rs} == wanted
    assert artifact_name(plan_rows[1]) == f"point-{point_id(plan_rows[1])}"


def test_select_points_writes_shards_of_exactly_the_listed_points(tmp_path):
    plan_rows = rows(5)
    plan = write_plan(tmp_path / "plan.json", plan_rows)
    wanted = [point_id(plan_rows[0]), point_id(plan_rows[3])]
    env = {"GITHUB_OUTPUT": str(tmp_path / "outputs"), "RUNNER_TEMP": str(tmp_path)}
    result = run_cli(
        "github",
        "select-points",
        "--plan",
        str(plan),
        "--points",
        " ".join(wanted),
        "--output",
        str(tmp_path / "selected.json"),
        "--format",
        "github",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    selected = json.loads((tmp_path / "selected.json").read_text())
    assert sorted(point_id(r) for r in selected) == sorted(wanted)
    shard_rows = [r for f in sorted((tmp_path / "infx-shards").glob("shard-*.json")) for r in json.loads(f.read_text())]
    assert sorted(point_id(r) for r in shard_rows) == sorted(wanted)
    assert "point-count<<" in (tmp_path / "outputs").read_text()

    unknown = run_cli("github", "select-points", "--plan", str(plan), "--points", "0000000000000000-c1", env=env)
    assert unknown.returncode == 1 and "Traceback" not in unknown.stderr
    assert f"{plan}: error[unknown-point]: 1 point id(s) are not in this plan: 0000000000000000-c1" in unknown.stderr
    assert "the plan of the run the ids came from" in unknown.stderr


def test_a_plan_with_more_bad_rows_than_are_shown_ends_with_plan_row_count(tmp_path):
    plan_rows = rows(23)
    for bad in plan_rows:
        bad["conc"] = 0 if "prefill" not in bad else [0]
    plan = write_plan(tmp_path / "plan.json", plan_rows)
    done = run_cli("github", "select-points", "--plan", str(plan), "--points", point_id(rows(1)[0]))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if ": error[" in line]
    assert len(errors) == 21 and all(f"error[out-of-range]: row {n} " in line for n, line in enumerate(errors[:20])), (
        done.stderr
    )
    assert errors[-1] == f"{plan}: error[plan-row-count]: 3 more row problem(s) not shown", done.stderr
    assert "Fix the ones above and run again." in done.stderr


def test_a_plan_row_without_tp_still_gets_a_gpu_hour_estimate():
    """Found by the property tests (exit 70, KeyError 'tp'): a plan is input, a row may lack a field."""
    multinode = rows(2)[0]
    del multinode["prefill"]["tp"]
    single = rows(2)[1]
    del single["tp"]
    body = build_comment({"all": [multinode, single]})  # rows as given: the plan reader would refuse them
    assert body.startswith(MARKER) and "GPU-hours" in body


def test_the_points_a_sweep_of_main_republishes_stay_within_github_s_limits():
    """Shards of at most 256 (a matrix's jobs, at both levels), within the output budget; a
    point reused from a folder (no source run) has nothing to download again."""
    from infx.jsonfast import dumps
    from infx.workflows.actions import republish_shards

    def reused_point(key: str, run: int | None) -> ReusedPoint:
        return ReusedPoint.build(
            point_id=key[:12], result_key=key, source_run=run, artifact=f"point-{key}", folder="", gpu_hours=1.0
        )

    reused = [reused_point(f"{n:064x}", 7000 + n) for n in range(600)]
    shards, left_out = republish_shards(reused + [reused_point("f" * 64, None)])
    assert [len(s) for s in shards] == [256, 256, 88] and left_out == 0
    assert shards[0][0] == {"name": reused[0].artifact, "run": 7000}
    shards, left_out = republish_shards(reused, budget=10_000)
    assert sum(map(len, shards)) + left_out == 600 and left_out > 0 and len(dumps(shards)) <= 10_000
