"""Reuse by result key: the bundled points, stored results as run-point uploads them, and
PyGithub over real HTTP against the local GitHub server for the repository's artifacts.

A stored result is written as the launcher writes one (its launch record names the result key,
the exit code and the result files of every planned concurrency); the launch itself is tested
on the real local Slurm in tests/slurm.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from infx.launch.lane import load_lane
from infx.launch.plan import Point, build_plan
from infx.points import point_id
from infx.workflows.reuse import judge, result_artifact_name

from github_helpers import REPO, env_for, result_artifact_files as artifact_files, run_cli
from github_server import DELETED_REPOSITORY, LocalGitHub

LADDER_KEY = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
MAIN_SHA, PR_SHA, STRAY_SHA = "1" * 40, "2" * 40, "3" * 40


@pytest.fixture(scope="module")
def ladder() -> list[dict]:
    """The five points of the seed change (the Mooncake ladder), as the plan lists them."""
    from bench.gb300_points import gb300_points

    rows = [row for row in gb300_points(REPO) if row["config-key"] == LADDER_KEY]
    assert len(rows) == 5
    return rows


def key_for(row: dict, root: Path = REPO) -> str:
    return build_plan(load_lane("gb300-nv", root), Point(row, "<test>"), root, env={}).result_key()


def write_artifact(root: Path, files: dict[str, str], name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    for file_name, text in files.items():
        (folder / file_name).write_text(text)
    return folder


def write_plan(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps({"buckets": {"multi_node/agentic": rows}, "point-count": len(rows)}))
    return path


def select(tmp_path: Path, plan: Path, *extra: str, env: dict | None = None, cwd: Path = REPO) -> dict:
    out = tmp_path / "reduced.json"
    done = run_cli("reuse", "select", "--plan", str(plan), "--output", str(out), *extra, env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return {"decision": json.loads(done.stdout), "reduced": json.loads(out.read_text()), "stderr": done.stderr}


# --- the verdict on one stored result -------------------------------------------------------------


def test_a_stored_result_is_valid_only_with_its_key_exit_code_0_and_every_planned_concurrency(tmp_path, ladder):
    row, key = ladder[0], key_for(ladder[0])
    assert judge(write_artifact(tmp_path, artifact_files(row, key), "good"), key, row) is None
    assert "exit code 1" in judge(write_artifact(tmp_path, artifact_files(row, key, exit_code=1), "failed"), key, row)
    assert "concurrency" in judge(write_artifact(tmp_path, artifact_files(row, key, drop_conc=True), "short"), key, row)
    assert "result key" in judge(write_artifact(tmp_path, artifact_files(row, "f" * 64), "other-key"), key, row)
    assert "launch records" in judge(write_artifact(tmp_path, {"x.json": "{}"}, "no-record"), key, row)


# --- over a folder of downloaded artifacts --------------------------------------------------------


def test_reuse_select_over_a_folder_reuses_exactly_the_points_with_a_valid_result(tmp_path, ladder):
    artifacts = tmp_path / "artifacts"
    keys = [key_for(row) for row in ladder]
    write_artifact(artifacts, artifact_files(ladder[0], keys[0]), result_artifact_name(keys[0]))
    write_artifact(artifacts, artifact_files(ladder[1], keys[1]), result_artifact_name(keys[1]))
    write_artifact(artifacts, artifact_files(ladder[2], keys[2], exit_code=1), result_artifact_name(keys[2], succeeded=False))
    write_artifact(artifacts, artifact_files(ladder[3], keys[3], drop_conc=True), result_artifact_name(keys[3]))
    # ladder[4]: nothing stored.
    got = select(tmp_path, write_plan(tmp_path / "plan.json", ladder), "--artifacts", str(artifacts), "--format", "json")
    decision = got["decision"]
    assert [item["result-key"] for item in decision["reused"]] == keys[:2]
    assert [row["result-key"] for row in decision["dispatch"]] == keys[2:]
    assert "concurrency" in decision["dispatch-reasons"][point_id(ladder[3])]
    assert decision["gpu-hours-saved"] > 0
    reduced = got["reduced"]
    assert reduced["point-count"] == 3
    assert [point_id(r) for r in reduced["buckets"]["multi_node/agentic"]] == [point_id(r) for r in ladder[2:]]


def test_a_re_sweep_of_an_unchanged_plan_dispatches_nothing(tmp_path, ladder):
    artifacts = tmp_path / "artifacts"
    for row in ladder:
        key = key_for(row)
        write_artifact(artifacts, artifact_files(row, key), result_artifact_name(key))
    got = select(tmp_path, write_plan(tmp_path / "plan.json", ladder), "--artifacts", str(artifacts))
    assert got["decision"]["dispatch"] == [] and len(got["decision"]["reused"]) == 5
    assert got["reduced"]["point-count"] == 0 and got["reduced"]["buckets"] == {}


def test_max_age_refuses_old_results(tmp_path, ladder):
    artifacts = tmp_path / "artifacts"
    key = key_for(ladder[0])
    write_artifact(artifacts, artifact_files(ladder[0], key, finished="2020-01-01T00:00:00+00:00"), result_artifact_name(key))
    got = select(tmp_path, write_plan(tmp_path / "plan.json", ladder[:1]), "--artifacts", str(artifacts), "--max-age", "30")
    assert got["decision"]["reused"] == [] and "older than --max-age" in got["decision"]["dispatch-reasons"][point_id(ladder[0])]


@pytest.mark.parametrize("change", ["image bump", "recipe edit", "pin move"])
def test_a_changed_key_is_not_reused(tmp_path, ladder, change):
    """Results stored under the old key; the workspace changes; the point must run again."""
    workspace = tmp_path / "ws"
    for part in ("runners", "benchmarks", "configs"):
        shutil.copytree(REPO / part, workspace / part)
    row = dict(ladder[0])
    artifacts = tmp_path / "artifacts"
    old_key = key_for(row, workspace)
    write_artifact(artifacts, artifact_files(row, old_key), result_artifact_name(old_key))
    if change == "image bump":
        row["image"] = "lmsysorg/sglang:nightly-dev-cu13-20261101-1234567"
    elif change == "recipe edit":
        recipe = next((workspace / "benchmarks").rglob("disagg-gb300-dep8-dep16-mtp-mooncake-ladder.yaml"))
        recipe.write_text(recipe.read_text().replace("mem-fraction-static: 0.80", "mem-fraction-static: 0.78", 1))
    else:
        profile = workspace / "runners" / "gb300-nv.yaml"
        profile.write_text(profile.read_text().replace("32ef19f7d08297925b0978b4f1ef68bf30ce494d", "ab12" * 10))
    new_key = key_for(row, workspace)
    assert new_key != old_key
    got = select(tmp_path, write_plan(tmp_path / "plan.json", [row]), "--artifacts", str(artifacts),
                 env={"GITHUB_WORKSPACE": str(workspace)}, cwd=workspace)
    assert got["decision"]["reused"] == [] and got["decision"]["dispatch"][0]["result-key"] == new_key


def test_a_plan_row_that_cannot_plan_is_dispatched_with_the_reason(tmp_path, ladder):
    # A valid row (the row contract refuses a malformed one before reuse) whose recipe is not there.
    prefill = {**ladder[0]["prefill"], "additional-settings": ["CONFIG_FILE=recipes/sglang/no-such-recipe.yaml"]}
    broken = {**ladder[0], "prefill": prefill}
    got = select(tmp_path, write_plan(tmp_path / "plan.json", [broken]), "--artifacts", str(tmp_path))
    assert got["decision"]["reused"] == [] and "no result key" in got["decision"]["dispatch-reasons"][point_id(broken)]


def test_reuse_select_needs_exactly_one_source(tmp_path, ladder):
    done = run_cli("reuse", "select", "--plan", str(write_plan(tmp_path / "plan.json", ladder)))
    assert done.returncode == 2 and "exactly one of --artifacts" in done.stderr


# --- through the GitHub API ------------------------------------------------------------------------


@pytest.fixture
def github():
    with LocalGitHub() as server:
        server.state.on_main.add(MAIN_SHA)
        server.state.add_pull(9)
        server.state.pull_commits[9] = [PR_SHA]
        yield server


def store(server: LocalGitHub, run_id: int, row: dict, key: str, sha: str = MAIN_SHA, created_at: str = "2026-11-30T00:00:00Z",
          **run) -> None:
    if run_id not in server.state.runs:
        server.state.add_run(run_id, head_sha=sha, **run)
    server.state.add_artifact(run_id, result_artifact_name(key), files=artifact_files(row, key, run_id=run_id),
                              created_at=created_at)


def test_github_hit_miss_expired_and_failed(tmp_path, ladder, github):
    keys = [key_for(row) for row in ladder]
    store(github, 101, ladder[0], keys[0])  # a hit
    github.state.add_artifact(101, result_artifact_name(keys[1]), expired=True,
                              files=artifact_files(ladder[1], keys[1]))  # expired
    github.state.add_artifact(101, result_artifact_name(keys[2], succeeded=False),
                              files=artifact_files(ladder[2], keys[2], exit_code=1))  # a failed point
    github.state.add_artifact(101, result_artifact_name(keys[3]), files=artifact_files(ladder[3], keys[3], exit_code=1))
    got = select(tmp_path, write_plan(tmp_path / "plan.json", ladder), "--github", "--download", str(tmp_path / "dl"),
                 env=env_for(github))
    decision = got["decision"]
    assert [(item["result-key"], item["source-run"]) for item in decision["reused"]] == [(keys[0], 101)]
    assert "expired" in decision["dispatch-reasons"][point_id(ladder[1])]
    assert "did not succeed" in decision["dispatch-reasons"][point_id(ladder[3])]
    assert decision["dispatch-reasons"][point_id(ladder[2])] == "no stored result under its key"
    downloaded = tmp_path / "dl" / result_artifact_name(keys[0])
    assert sorted(p.name for p in downloaded.iterdir()) == sorted(artifact_files(ladder[0], keys[0]))


def test_github_newest_valid_result_wins(tmp_path, ladder, github):
    key = key_for(ladder[0])
    store(github, 201, ladder[0], key, created_at="2026-11-01T00:00:00Z")
    store(github, 202, ladder[0], key, created_at="2026-11-20T00:00:00Z")
    got = select(tmp_path, write_plan(tmp_path / "plan.json", ladder[:1]), "--github", "--download", str(tmp_path / "dl"),
                 env=env_for(github))
    assert got["decision"]["reused"][0]["source-run"] == 202


@pytest.mark.parametrize("run, why", [
    ({"path": ".github/workflows/other.yml"}, "not .github/workflows/run-sweep.yml"),
    ({"head_repository": "mallory/bench"}, "came from mallory/bench"),
    ({"repository": "mallory/bench"}, "belongs to mallory/bench"),
    ({"sha": STRAY_SHA}, "neither on main nor a commit of the trusted pull request"),
])
def test_github_untrusted_runs_are_not_reused(tmp_path, ladder, github, run, why):
    key = key_for(ladder[0])
    store(github, 301, ladder[0], key, **run)
    got = select(tmp_path, write_plan(tmp_path / "plan.json", ladder[:1]), "--github", "--pr", "9",
                 "--download", str(tmp_path / "dl"), env=env_for(github))
    assert got["decision"]["reused"] == [] and why in got["decision"]["dispatch-reasons"][point_id(ladder[0])]
    assert not (tmp_path / "dl").exists()  # nothing of an untrusted run is even downloaded


def test_github_a_merge_to_main_reuses_the_pr_s_results(tmp_path, ladder, github):
    """A squash merge leaves the PR's commits off main: the pushed commit's PR makes them trusted."""
    keys = [key_for(row) for row in ladder]
    for row, key in zip(ladder, keys):
        store(github, 401, row, key, sha=PR_SHA, head_branch="feature", event="pull_request")
    plan = write_plan(tmp_path / "plan.json", ladder)
    untrusted = select(tmp_path, plan, "--github", "--download", str(tmp_path / "dl0"), env=env_for(github))
    assert len(untrusted["decision"]["dispatch"]) == 5
    merge = "4" * 40
    github.state.commit_pulls[merge] = [9]
    got = select(tmp_path, plan, "--github", "--push-commit", merge, "--download", str(tmp_path / "dl"), env=env_for(github))
    assert got["decision"]["dispatch"] == [] and {item["source-run"] for item in got["decision"]["reused"]} == {401}


@pytest.mark.parametrize("head_repo", ["mallory/bench", DELETED_REPOSITORY])
def test_github_a_fork_pr_s_commits_are_never_trusted(tmp_path, ladder, github, head_repo):
    key = key_for(ladder[0])
    github.state.add_pull(9, head_repo=head_repo)
    store(github, 501, ladder[0], key, sha=PR_SHA)
    got = select(tmp_path, write_plan(tmp_path / "plan.json", ladder[:1]), "--github", "--pr", "9",
                 "--download", str(tmp_path / "dl"), env=env_for(github))
    assert got["decision"]["reused"] == []


def test_github_an_artifact_escaping_its_folder_is_refused(tmp_path, ladder, github):
    key = key_for(ladder[0])
    github.state.add_run(601, head_sha=MAIN_SHA)
    github.state.add_artifact(601, result_artifact_name(key), files={"../../escaped.json": "{}"})
    done = run_cli("reuse", "select", "--plan", str(write_plan(tmp_path / "plan.json", ladder[:1])), "--github",
                   "--download", str(tmp_path / "dl"), env=env_for(github))
    assert done.returncode == 1 and "outside its folder" in done.stderr
    assert not (tmp_path / "escaped.json").exists()
