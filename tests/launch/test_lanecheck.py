"""The lane check (infx/launch/lanecheck.py): a point no lane profile serves is held at plan time.

On a scratch copy of the reference repository (its 1,820 points, with this repository's one lane
profile, gb300-nv), the plan holds the 1,631 points of labels no profile declares before any shard
is written, says so once per label at the label in configs/runners.yaml, and still exits 0.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from infx.changelog.plan import apply_mode
from infx.evalsuite import PointEval
from infx.launch.lanecheck import check_lanes
from infx.points import gpu_hours, point_id
from infx.results.evalgate import PlannedEvals
from infx.sweepplan import SweepPlan
from infx.workflows.labels import resolve_mode
from infx.workflows.report import build_comment
from testing.cli import run_cli, run_infx
from testing.corpus import CORPUS, patched_corpus
from testing.executor import Executor
from testing.github_helpers import env_for, parse_outputs
from testing.github_server import LocalGitHub
from testing.gitrepo import Repo
from testing.lanes import BUNDLED_PROFILE, write_lane_profile
from testing.reference_sweep import corpus_repository

GB300_LABELS = {"gb300", "gb300-nv", "cluster:gb300-nv"}  # runners/gb300-nv.yaml's runner-labels
REFERENCE_POINTS, REFERENCE_SERVED = 1820, 189
SLUG = "SemiAnalysisAI/InferenceX"


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The reference corpus as a git repository with this repository's settings and its one lane profile."""
    root = patched_corpus(CORPUS, tmp_path_factory.mktemp("reference"))
    (root / "configs" / "infx.yaml").write_text(f"repository: {SLUG}\n")
    (root / "runners").mkdir()
    shutil.copy(BUNDLED_PROFILE, root / "runners" / "gb300-nv.yaml")
    Repo.init(root)
    return root


@pytest.fixture
def repo(reference, tmp_path) -> Path:
    """A copy a test may change, with the reference's rows in rows.json."""
    copy = tmp_path / "repo"
    shutil.copytree(reference, copy, symlinks=True)
    done = run_infx(["matrix", "--format", "json", "--output", "rows.json"], copy)
    assert done.code == 0, done.stderr
    return copy


def plan_rows(repo: Path, *extra: str, env: dict | None = None):
    return run_infx(["plan", "--rows", "rows.json", "--event", "workflow_dispatch", *extra], repo, env=env)


def declared_at(path: Path, key: str) -> tuple[int, int]:
    """(line, column) of the mapping key ``key:`` in a YAML file, found in its text."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip().startswith(f"{key}:") or line.strip().startswith(f"- {key}"):
            return number, len(line) - len(line.lstrip()) + 1
    raise AssertionError(f"{key} is not in {path}")


def test_the_reference_plan_holds_every_point_without_a_lane_before_any_dispatch(repo, tmp_path):
    output, summary, shards = tmp_path / "output", tmp_path / "summary", tmp_path / "shards"
    done = plan_rows(
        repo,
        "--dry-run",  # no queue check: every served point is fanned out
        "--format",
        "github",
        "--shard-dir",
        str(shards),
        env={"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.code == 0, done.stderr
    plan = SweepPlan.read(shards / "plan.json")
    assert plan.point_count == REFERENCE_POINTS and plan.lanes is not None
    assert len(plan.lanes.held) == REFERENCE_POINTS - REFERENCE_SERVED == 1631
    served = {item.label: item.lane for item in plan.lanes.labels if not item.held}
    assert served == {label: "gb300-nv" for label in GB300_LABELS}
    # The shards (what the workflows fan out) hold exactly the points a lane serves.
    fanned = [row for path in sorted(shards.glob("shard-*.json")) for row in json.loads(path.read_text())]
    assert len(fanned) == REFERENCE_SERVED and {row["runner"] for row in fanned} == GB300_LABELS
    assert not {point_id(row) for row in fanned} & set(plan.lanes.held)
    # The lane gate checks only the labels that are dispatched.
    assert json.loads(parse_outputs(output.read_text())["lanes"]) == sorted(GB300_LABELS)
    # One located warning per held label, at its declaration in configs/runners.yaml, with the fix.
    line, column = declared_at(repo / "configs" / "runners.yaml", "b200")
    b200 = next(item for item in plan.lanes.labels if item.label == "b200")
    assert b200.lane is None and b200.status == "no-lane" and b200.points == 120
    annotation = f"::warning file=configs/runners.yaml,line={line},col={column},title=plan-lane-missing::"
    assert annotation + "runner label 'b200' has no lane" in done.stdout
    assert f"{REFERENCE_SERVED} point(s) in 2 shard(s), 1631 held; plan written to " in done.stderr
    text = summary.read_text()
    assert "⏸ 1631 point(s) held, not dispatched: " in text and "`b200` 120 (no lane)" in text


def test_the_diagnostic_names_the_label_and_the_fix_and_the_plan_still_exits_0(repo):
    done = plan_rows(repo, "--dry-run", "--format", "json")
    assert done.code == 0, done.stderr
    line, column = declared_at(repo / "configs" / "runners.yaml", "b200")
    head = f"configs/runners.yaml:{line}:{column}: warning[plan-lane-missing]: runner label 'b200' has no lane: "
    assert head + "no runners/*.yaml declares it in runner-labels" in done.stderr
    assert "runners/<lane>.yaml with 'b200' in its runner-labels" in done.stderr
    assert "`sweep: {lanes: profiled}` in configs/infx.yaml" in done.stderr
    assert done.stderr.count("warning[plan-lane-missing]") == 27  # one per label without a lane
    assert "gb300" not in "".join(line for line in done.stderr.splitlines() if "plan-lane-missing" in line)


def test_sweep_lanes_profiled_holds_the_same_points_as_notices(repo):
    (repo / "configs" / "infx.yaml").write_text(f"repository: {SLUG}\nsweep:\n  lanes: profiled\n")
    done = plan_rows(repo, "--dry-run", "--format", "json")
    assert done.code == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["lanes"]["sweep-lanes"] == "profiled" and len(plan["lanes"]["held"]) == 1631
    assert "warning[plan-lane-missing]" not in done.stderr
    assert done.stderr.count("notice[plan-lane-missing]") == 27


def test_a_list_of_lanes_leaves_the_other_profiled_lanes_out(repo):
    write_lane_profile(repo, "b200-lab", ["b200"])
    settings = repo / "configs" / "infx.yaml"
    settings.write_text(f"repository: {SLUG}\nsweep:\n  lanes:\n    - gb300-nv\n")
    done = plan_rows(repo, "--dry-run", "--format", "json")
    assert done.code == 0, done.stderr
    plan = json.loads(done.stdout)
    b200 = next(item for item in plan["lanes"]["labels"] if item["label"] == "b200")
    assert (b200["lane"], b200["status"], b200["points"]) == ("b200-lab", "excluded", 120)
    assert plan["lanes"]["sweep-lanes"] == ["gb300-nv"] and len(plan["lanes"]["held"]) == 1631
    line, column = declared_at(settings, "lanes")  # sweep.lanes, where the lane would be added
    assert (
        f"configs/infx.yaml:{line}:{column}: notice[plan-lane-excluded]: runner label 'b200' is served by lane "
        "b200-lab, which sweep.lanes leaves out" in done.stderr
    ), done.stderr
    # Listing the lane runs its points.
    settings.write_text(f"repository: {SLUG}\nsweep:\n  lanes: [gb300-nv, b200-lab]\n")
    plan = json.loads(plan_rows(repo, "--dry-run", "--format", "json").stdout)
    assert len(plan["lanes"]["held"]) == 1631 - 120


def test_a_listed_lane_without_a_profile_is_a_located_error(repo):
    settings = repo / "configs" / "infx.yaml"
    settings.write_text(f"repository: {SLUG}\nsweep:\n  lanes:\n    - gb300-nv\n    - b200-lab\n")
    done = plan_rows(repo, "--format", "json")
    assert done.code == 1 and done.stdout == "" and "Traceback" not in done.stderr
    line, column = declared_at(settings, "b200-lab")
    assert (
        f"configs/infx.yaml:{line}:{column + 2}: error[settings-lane-unknown]: sweep.lanes names lane 'b200-lab', "
        "which has no profile: there is no runners/b200-lab.yaml" in done.stderr
    ), done.stderr
    assert "Name lanes of runners/ (gb300-nv)" in done.stderr


@pytest.mark.parametrize("value", ["everything", "[]", "[../etc]", "{profiled: true}"])
def test_a_sweep_lanes_of_the_wrong_shape_is_a_located_error(repo, value):
    (repo / "configs" / "infx.yaml").write_text(f"repository: {SLUG}\nsweep:\n  lanes: {value}\n")
    done = plan_rows(repo, "--format", "json")
    assert done.code == 1 and "Traceback" not in done.stderr
    assert "configs/infx.yaml:3:" in done.stderr and "error[" in done.stderr, done.stderr


def test_lane_runs_every_point_on_the_lane_it_names(repo):
    done = plan_rows(repo, "--dry-run", "--lane", "gb300-nv", "--format", "json")
    assert done.code == 0, done.stderr
    lanes = json.loads(done.stdout)["lanes"]
    assert lanes["held"] == [] and {item["lane"] for item in lanes["labels"]} == {"gb300-nv"}
    assert "plan-lane-missing" not in done.stderr


def test_lane_needs_rows_and_a_lane_that_exists(repo):
    done = run_infx(["plan", "--lane", "gb300-nv"], repo)
    assert done.code == 2 and "error[usage]: --lane goes with --rows" in done.stderr
    done = plan_rows(repo, "--lane", "b200", "--format", "json")
    assert done.code == 2 and "error[lane-unknown-label]: --lane 'b200' names no lane" in done.stderr
    for path in ("runners/gb300-nv.yaml", "gb300-nv.yaml", "../gb300-nv", "gb300-nv\n", "-gb300"):
        done = plan_rows(repo, "--lane", path, "--format", "json")
        assert done.code == 2 and "is not a lane name or runner label" in done.stderr, (path, done.stderr)


def test_the_canary_is_a_point_that_can_launch(repo):
    plan = SweepPlan(SweepPlan.read(repo / "rows.json").buckets)
    cheapest = min(plan.rows, key=gpu_hours)
    assert cheapest["runner"] not in GB300_LABELS  # without the lane check, it would be the canary
    checked, _ = check_lanes(plan, repo)
    mode, problems = resolve_mode("pull_request", ["full-sweep-enabled"])
    assert not problems and mode.canary
    canary = apply_mode(checked, mode).canary
    assert canary is not None and canary.id not in checked.lane_held
    assert checked.lane_of(next(row for row in checked.rows if point_id(row) == canary.id)).lane == "gb300-nv"


def test_changelog_validate_and_plan_report_the_held_label_alike(repo):
    git = Repo(repo)
    changelog = repo / "perf-changelog.yaml"
    entry = f'\n- config-keys:\n    - dsr1-fp8-b200-sglang\n  description:\n    - "b200"\n  pr-link: https://github.com/{SLUG}/pull/42\n'
    changelog.write_bytes(changelog.read_bytes() + entry.encode())
    git.git("commit", "-q", "-am", "append a b200 entry")
    refs = ["--base-ref", "HEAD~1", "--head-ref", "HEAD", "--pr-number", "42"]
    validated = run_infx(["changelog", "validate", *refs], repo, env={"GITHUB_REPOSITORY": SLUG})
    planned = run_infx(["plan", *refs, "--format", "json"], repo, env={"GITHUB_REPOSITORY": SLUG})
    assert validated.code == 0 and planned.code == 0, validated.stderr + planned.stderr
    line, column = declared_at(repo / "configs" / "runners.yaml", "b200")
    held = f"configs/runners.yaml:{line}:{column}: warning[plan-lane-missing]: runner label 'b200' has no lane"
    assert held in validated.stderr and held in planned.stderr
    plan = json.loads(planned.stdout)
    rows = [row for rows in plan["buckets"].values() for row in rows]
    assert plan["lanes"]["labels"] == [
        {
            "label": "b200",
            "lane": None,
            "status": "no-lane",
            "points": len(rows),
            "gpu-hours": round(sum(map(gpu_hours, rows)), 1),
        }
    ]
    assert len(plan["lanes"]["held"]) == plan["point-count"]


def test_the_text_plan_shows_each_point_s_lane_gpu_hours_and_the_run_mode(repo):
    changelog = repo / "perf-changelog.yaml"
    entry = '\n- config-keys:\n    - dsr1-fp8-b200-sglang\n  description:\n    - "b200"\n  pr-link: XXX\n'
    changelog.write_bytes(changelog.read_bytes() + entry.encode())
    done = run_infx(["plan"], repo)
    assert done.code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "run mode: Launch: no — add one of the labels sweep-enabled" in done.stdout
    assert "10 point(s) in 2 bucket(s), about 26.0 GPU-hours (estimate)" in lines
    assert "held, no lane to launch on: 10 point(s) (b200 10)" in lines
    header = next(line for line in lines if line.strip().startswith("config-key"))
    assert header.split() == [
        "config-key",
        "runner",
        "lane",
        "seq",
        "topology",
        "node-count",
        "conc",
        "gpu-hours",
        "run-eval",
        "exp-name",
    ]
    first = lines[lines.index(header) + 1]
    assert first.split()[1:4] == ["b200", "none", "(held)"]
    assert first.split()[-3] == "4.0"  # tp8, one fixed-seq-len concurrency: 8 GPUs × 0.5 h


def test_the_pr_comment_counts_the_held_points_by_label(repo, tmp_path):
    plan = tmp_path / "plan.json"
    done = plan_rows(repo, "--dry-run", "--format", "json", "--output", str(plan))
    assert done.code == 0, done.stderr
    with LocalGitHub() as github:
        github.state.add_pull(7)
        posted = run_cli("github", "report", "--pr", "7", "--plan", str(plan), env=env_for(github))
        assert posted.returncode == 0, posted.stderr
        body = github.state.requests_to("POST", r".*/issues/7/comments")[0].body["body"]
    line = next(line for line in body.splitlines() if "held, not dispatched" in line)
    assert line.startswith("- ⏸ 1631 point(s) held, not dispatched: ")
    assert "`b200` 120 (no lane)" in line and "`gb300`" not in line and "`cluster:gb300-nv`" not in line
    assert build_comment(SweepPlan.read(plan).buckets).count("⏸") == 0  # a plan without a lane check: no line


def test_a_sweep_of_the_reference_calls_run_point_only_for_the_points_a_lane_serves(tmp_path):
    # The workflows themselves: setup plans, the fan-out calls run-point once per point it was given.
    repo, sha = corpus_repository(tmp_path, non_ascii=False, every_label_served=False)
    run = Executor(repo, tmp_path / "run", "workflow_dispatch", {}, sha=sha, repository="acme/bench")
    results = run.run(
        inputs={"config-keys": "", "no-reuse": True, "dry-run": True},
        only={"setup", "sweep", "sweep[*]/load", "sweep[*]/points"},
    )
    assert results["setup"] == "success" and results["sweep"] == "success", run.find("setup")[0].log[-3000:]
    called = [
        json.loads(job.inputs["point"]) for job in run.jobs if re.fullmatch(r"sweep\[\d+\]/points\[\d+\]", job.path)
    ]
    assert len(called) == REFERENCE_SERVED and {row["runner"] for row in called} == GB300_LABELS
    plan = SweepPlan.read(run.artifacts / "sweep-plan" / "plan.json")
    assert plan.point_count == REFERENCE_POINTS and plan.lanes is not None and len(plan.lanes.held) == 1631
    assert "plan-lane-missing" in run.find("setup")[0].log


def test_a_launch_of_a_held_point_names_the_missing_lane_not_a_near_label(repo, tmp_path):
    row = next(row for row in json.loads((repo / "rows.json").read_text()) if row["runner"] == "b200")
    point = tmp_path / "point.json"
    point.write_text(json.dumps(row))
    done = run_infx(["launch", "--point", str(point), "--dry-run"], repo)
    assert done.code == 2 and "error[lane-unknown-label]" in done.stderr
    assert "'b200' is a label of configs/runners.yaml, but no lane profile serves it" in done.stderr
    assert "runners/<lane>.yaml with 'b200' in its runner-labels" in done.stderr
    assert "did you mean" not in done.stderr  # b200 is no typo of gb300


def test_the_accuracy_gate_expects_no_score_of_a_point_held_for_want_of_a_lane(repo, tmp_path):
    plan = tmp_path / "plan.json"
    done = plan_rows(repo, "--dry-run", "--format", "json", "--output", str(plan))
    assert done.code == 0, done.stderr
    read = SweepPlan.read(plan)
    evals = [row for row in read.rows if PointEval.of_point(row).runs]
    served = {point_id(row) for row in evals if row["runner"] in GB300_LABELS}
    assert served and len(served) < len({point_id(row) for row in evals})
    assert {point.point_id for point in PlannedEvals.read(plan).points} == served
