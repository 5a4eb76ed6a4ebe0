"""Reuse by result key: the bundled points, stored results as run-point uploads them, and
PyGithub over real HTTP against the local GitHub server for the repository's artifacts.

A stored result is written as the launcher writes one (its launch record names the result key,
the exit code and the result files of every planned concurrency); the launch itself is tested
on the real local Slurm in tests/slurm.
"""

from __future__ import annotations

import io
import json
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from infx.diagnostics import InfxError
from infx.launch.lane import load_lane
from infx.launch.plan import plan_point
from infx.launch.pointfile import PointFile
from infx.points import point_id
from infx.sweepplan import SweepPlan
from infx.workflows.github.archives import extract_artifact
from infx.workflows.reuse import judge, result_artifact_name
from testing.cli import run_cli
from testing.github_helpers import REPO, env_for
from testing.github_helpers import result_artifact_files as artifact_files
from testing.github_server import DELETED_REPOSITORY, SLUG, Fault, LocalGitHub, server_error_burst, zip_of

LADDER_KEY = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
MAIN_SHA, PR_SHA, STRAY_SHA = "1" * 40, "2" * 40, "3" * 40


@pytest.fixture(scope="module")
def ladder() -> list[dict]:
    """The five points of the seed change (the Mooncake ladder), as the plan lists them."""
    from bench.gb300_points import gb300_points

    rows = [row for row in gb300_points(REPO) if row["config-key"] == LADDER_KEY]
    assert len(rows) == 5
    return rows


# The checkout the ladder's points are keyed in: this repository's data with an AgentX harness for
# their recipe to run (this repository ships none and refuses them: docs/launch.md, Agentic points).
ROOT: list[Path] = []


@pytest.fixture(autouse=True)
def _root(harness_repo):
    ROOT[:] = [harness_repo]


def key_for(row: dict, root: Path | None = None) -> str:
    root = root or ROOT[0]
    return plan_point(load_lane("gb300-nv", root), PointFile(data=row, file="<test>"), root, env={}).result_key()


def write_artifact(root: Path, files: dict[str, str], name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    for file_name, text in files.items():
        (folder / file_name).parent.mkdir(parents=True, exist_ok=True)
        (folder / file_name).write_text(text)
    return folder


def write_plan(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps({"buckets": {"multi_node/agentic": rows}, "point-count": len(rows)}))
    return path


def select(tmp_path: Path, plan: Path, *extra: str, env: dict | None = None, cwd: Path | None = None) -> dict:
    out = tmp_path / "reduced.json"
    done = run_cli("reuse", "select", "--plan", str(plan), "--output", str(out), *extra, env=env, cwd=cwd or ROOT[0])
    assert done.returncode == 0, done.stderr
    return {"decision": json.loads(done.stdout), "reduced": json.loads(out.read_text()), "stderr": done.stderr}


def select_from_github(tmp_path: Path, github, rows: list[dict], pr: int | None = None) -> dict:
    """`infx reuse select --github` on a plan of ``rows`` (for pull request ``pr``), against the local GitHub server,
    downloading into ``tmp_path / "dl"``."""
    plan = write_plan(tmp_path / "plan.json", rows)
    for_pr = ("--pr", str(pr)) if pr is not None else ()
    return select(tmp_path, plan, "--github", *for_pr, "--download", str(tmp_path / "dl"), env=env_for(github))


# --- the verdict on one stored result -------------------------------------------------------------


def test_a_stored_result_is_valid_only_with_its_key_exit_code_0_and_every_planned_concurrency(tmp_path, ladder):
    row, key = ladder[0], key_for(ladder[0])
    assert judge(write_artifact(tmp_path, artifact_files(row, key), "good"), key, row) is None
    assert judge(write_artifact(tmp_path, artifact_files(row, key, exit_code=1), "failed"), key, row).startswith(
        "failed: "
    )
    assert "concurrency" in judge(write_artifact(tmp_path, artifact_files(row, key, drop_conc=True), "short"), key, row)
    assert "result key" in judge(write_artifact(tmp_path, artifact_files(row, "f" * 64), "other-key"), key, row)
    assert "no launch record" in judge(write_artifact(tmp_path, {"x.json": "{}"}, "no-record"), key, row)


# --- over a folder of downloaded artifacts --------------------------------------------------------


def test_reuse_select_over_a_folder_reuses_exactly_the_points_with_a_valid_result(tmp_path, ladder):
    artifacts = tmp_path / "artifacts"
    keys = [key_for(row) for row in ladder]
    write_artifact(artifacts, artifact_files(ladder[0], keys[0]), result_artifact_name(keys[0]))
    write_artifact(artifacts, artifact_files(ladder[1], keys[1]), result_artifact_name(keys[1]))
    write_artifact(
        artifacts, artifact_files(ladder[2], keys[2], exit_code=1), result_artifact_name(keys[2], succeeded=False)
    )
    write_artifact(artifacts, artifact_files(ladder[3], keys[3], drop_conc=True), result_artifact_name(keys[3]))
    # ladder[4]: nothing stored.
    got = select(
        tmp_path, write_plan(tmp_path / "plan.json", ladder), "--artifacts", str(artifacts), "--format", "json"
    )
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
    write_artifact(
        artifacts, artifact_files(ladder[0], key, finished="2020-01-01T00:00:00+00:00"), result_artifact_name(key)
    )
    got = select(
        tmp_path, write_plan(tmp_path / "plan.json", ladder[:1]), "--artifacts", str(artifacts), "--max-age", "30"
    )
    assert (
        got["decision"]["reused"] == []
        and "older than --max-age" in got["decision"]["dispatch-reasons"][point_id(ladder[0])]
    )


@pytest.mark.parametrize("change", ["image bump", "recipe edit", "pin move"])
def test_a_changed_key_is_not_reused(tmp_path, ladder, change):
    """Results stored under the old key; the workspace changes; the point must run again."""
    workspace = tmp_path / "ws"
    for part in ("runners", "benchmarks", "configs"):
        shutil.copytree(ROOT[0] / part, workspace / part)
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
    got = select(
        tmp_path,
        write_plan(tmp_path / "plan.json", [row]),
        "--artifacts",
        str(artifacts),
        env={"GITHUB_WORKSPACE": str(workspace)},
        cwd=workspace,
    )
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


def store(
    server: LocalGitHub,
    run_id: int,
    row: dict,
    key: str,
    sha: str = MAIN_SHA,
    created_at: str = "2026-11-30T00:00:00Z",
    **run,
) -> None:
    if run_id not in server.state.runs:
        server.state.add_run(run_id, head_sha=sha, **run)
    server.state.add_artifact(
        run_id, result_artifact_name(key), files=artifact_files(row, key, run_id=run_id), created_at=created_at
    )


def test_github_hit_miss_expired_and_failed(tmp_path, ladder, github):
    keys = [key_for(row) for row in ladder]
    store(github, 101, ladder[0], keys[0])  # a hit
    github.state.add_artifact(
        101, result_artifact_name(keys[1]), expired=True, files=artifact_files(ladder[1], keys[1])
    )  # expired
    github.state.add_artifact(
        101, result_artifact_name(keys[2], succeeded=False), files=artifact_files(ladder[2], keys[2], exit_code=1)
    )  # a failed point
    github.state.add_artifact(101, result_artifact_name(keys[3]), files=artifact_files(ladder[3], keys[3], exit_code=1))
    got = select_from_github(tmp_path, github, ladder)
    decision = got["decision"]
    assert [(item["result-key"], item["source-run"]) for item in decision["reused"]] == [(keys[0], 101)]
    assert "expired" in decision["dispatch-reasons"][point_id(ladder[1])]
    assert "failed: " in decision["dispatch-reasons"][point_id(ladder[3])]
    assert decision["dispatch-reasons"][point_id(ladder[2])] == "no stored result under its key"
    downloaded = tmp_path / "dl" / result_artifact_name(keys[0])
    assert sorted(p.name for p in downloaded.iterdir()) == sorted(artifact_files(ladder[0], keys[0]))


def test_github_newest_valid_result_wins(tmp_path, ladder, github):
    key = key_for(ladder[0])
    store(github, 201, ladder[0], key, created_at="2026-11-01T00:00:00Z")
    store(github, 202, ladder[0], key, created_at="2026-11-20T00:00:00Z")
    got = select_from_github(tmp_path, github, ladder[:1])
    assert got["decision"]["reused"][0]["source-run"] == 202


@pytest.mark.parametrize(
    "run, why",
    [
        ({"path": ".github/workflows/other.yml"}, "not .github/workflows/run-sweep.yml"),
        ({"head_repository": "mallory/bench"}, "its code came from another repository (a fork)"),
        ({"repository": "mallory/bench"}, "its run belongs to another repository"),
        (
            {"sha": STRAY_SHA, "head_branch": "stray", "event": "pull_request"},
            "stray@333333333333, which is neither a run of main nor a commit of pull request #9",
        ),
        ({"sha": STRAY_SHA}, "its commit 333333333333 is no longer on main"),
    ],
    ids=["other-workflow", "fork", "other-repository", "stray-branch", "main-rewritten"],
)
def test_github_untrusted_runs_are_not_reused(tmp_path, ladder, github, run, why):
    key = key_for(ladder[0])
    store(github, 301, ladder[0], key, **run)
    got = select_from_github(tmp_path, github, ladder[:1], pr=9)
    assert got["decision"]["reused"] == [] and why in got["decision"]["dispatch-reasons"][point_id(ladder[0])]
    assert not github.state.requests_to("GET", r"/blob-storage/.*")  # nothing of an untrusted run is even downloaded


def test_github_a_pr_sweep_trusts_its_own_commits_and_main_only(tmp_path, ladder, github):
    keys = [key_for(row) for row in ladder[:3]]
    store(github, 310, ladder[0], keys[0], sha=PR_SHA, head_branch="feature", event="pull_request")  # PR 9's own
    store(github, 311, ladder[1], keys[1])  # main's own push sweep
    github.state.add_pull(12, head_ref="other")  # another PR, merged: trusted for main, not for PR 9
    github.state.pull_commits[12] = ["5" * 40]
    github.state.merge_pull(12, "6" * 40)
    store(github, 312, ladder[2], keys[2], sha="5" * 40, head_branch="other", event="pull_request")
    got = select_from_github(tmp_path, github, ladder[:3], pr=9)
    assert sorted(item["source-run"] for item in got["decision"]["reused"]) == [310, 311]
    assert (
        "neither a run of main nor a commit of pull request #9"
        in got["decision"]["dispatch-reasons"][point_id(ladder[2])]
    )


def test_github_a_sweep_of_main_trusts_only_the_final_head_of_a_merged_pr(tmp_path, ladder, github):
    """A squash merge leaves the PR's commits off main: the PR API's `merged_at` and `head.sha`
    make its final head's results trusted; an intermediate (here: reverted) commit's never."""
    keys = [key_for(row) for row in ladder]
    intermediate, final = "7" * 40, PR_SHA
    github.state.pull_commits[9] = [intermediate, final]
    for row, key in zip(ladder[:3], keys):
        store(github, 401, row, key, sha=final, head_branch="feature", event="pull_request")
    for row, key in zip(ladder[3:], keys[3:]):
        store(
            github,
            400,
            row,
            key,
            sha=intermediate,
            head_branch="feature",
            event="pull_request",
            created_at="2026-11-29T00:00:00Z",
        )
    plan = write_plan(tmp_path / "plan.json", ladder)
    open_pr = select(tmp_path, plan, "--github", "--download", str(tmp_path / "dl0"), env=env_for(github))
    assert open_pr["decision"]["reused"] == []  # not merged (yet): nothing of it counts for main
    github.state.merge_pull(9, "4" * 40)
    got = select(tmp_path, plan, "--github", "--download", str(tmp_path / "dl"), env=env_for(github))
    assert sorted(item["result-key"] for item in got["decision"]["reused"]) == sorted(keys[:3])
    assert {item["source-run"] for item in got["decision"]["reused"]} == {401}
    for row in ladder[3:]:
        assert (
            "not the final head commit of the merged pull request (#9 at 222222222222)"
            in got["decision"]["dispatch-reasons"][point_id(row)]
        )
    # one listing of the merged pull requests of the branch, one read per run, whatever the candidates
    assert len(github.state.requests_to("GET", rf"/repos/{SLUG}/pulls")) == 2
    assert len(github.state.requests_to("GET", rf"/repos/{SLUG}/actions/runs/40[01]")) == 4


@pytest.mark.parametrize("head_repo", ["mallory/bench", DELETED_REPOSITORY])
def test_github_a_fork_pr_s_commits_are_never_trusted(tmp_path, ladder, github, head_repo):
    key = key_for(ladder[0])
    github.state.add_pull(9, head_repo=head_repo)
    store(github, 501, ladder[0], key, sha=PR_SHA, head_branch="feature", event="pull_request")
    got = select_from_github(tmp_path, github, ladder[:1], pr=9)
    assert got["decision"]["reused"] == []


# --- a candidate that cannot be had is that key's reason, never the plan's failure --------------------


def zip_with(members: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in members:
            archive.writestr(info, data)
    return buffer.getvalue()


def symlink_member(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def bomb_member(name: str, size: int) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info, b"\0" * size


HOSTILE_ARCHIVES = {
    "escaping": (
        lambda files: zip_with([(zipfile.ZipInfo("../../escaped.json"), b"{}")]),
        "reaches outside its folder",
    ),
    "symlink": (lambda files: zip_with([symlink_member("link.json", "/etc/passwd")]), "is a symbolic link"),
    "bomb": (lambda files: zip_with([bomb_member("big.log", 256 << 20)]), "(more than 100:1, a zip bomb)"),
    "not-a-zip": (lambda files: b"<html>blob storage hiccup</html>", "not a zip archive"),
    "cut-zip": (lambda files: zip_of(files)[:-30], "not a zip archive"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_ARCHIVES))
def test_github_a_hostile_archive_is_refused_and_the_next_candidate_tried(tmp_path, ladder, github, kind):
    make, why = HOSTILE_ARCHIVES[kind]
    key = key_for(ladder[0])
    store(github, 601, ladder[0], key, created_at="2026-11-01T00:00:00Z")  # older, valid
    github.state.add_run(602, head_sha=MAIN_SHA)
    archive = make(artifact_files(ladder[0], key, run_id=602))
    github.state.add_artifact(602, result_artifact_name(key), blob=archive, created_at="2026-11-20T00:00:00Z")
    download = tmp_path / "dl"
    got = select_from_github(tmp_path, github, ladder[:1])
    assert [item["source-run"] for item in got["decision"]["reused"]] == [601]
    assert not (tmp_path / "escaped.json").exists() and not list(tmp_path.rglob("big.log"))
    assert sorted(p.name for p in download.iterdir()) == [result_artifact_name(key)]  # no partial folder left
    github.state.runs.pop(601)  # now only the hostile one: dispatched with the reason, the plan still made
    github.state.artifacts.pop(601)
    again = select_from_github(tmp_path, github, ladder[:1])
    assert again["decision"]["reused"] == [] and why in again["decision"]["dispatch-reasons"][point_id(ladder[0])]
    assert not download.exists() or not list(download.iterdir())


@pytest.mark.parametrize("kind", sorted(HOSTILE_ARCHIVES))
def test_unpacking_a_hostile_archive_is_github_artifact_and_leaves_nothing(tmp_path, kind):
    # The function every download goes through (api.fetch_artifact): one located line, the folder absent.
    make, why = HOSTILE_ARCHIVES[kind]
    dest = tmp_path / "store" / "point-x"
    with pytest.raises(InfxError) as caught:
        extract_artifact(make({"results.json": b"{}"}), dest, "artifact point-x of run 602")
    (problem,) = caught.value.diagnostics
    assert problem.rule == "github-artifact" and problem.file == "<github>"
    assert problem.message.startswith("artifact point-x of run 602: refused, ") and why in problem.message
    assert list((tmp_path / "store").iterdir()) == [] and not list(tmp_path.rglob("escaped.json"))


def test_github_an_artifact_expired_by_its_download_and_a_failing_blob_store_are_that_key_s_reasons(
    tmp_path, ladder, github
):
    keys = [key_for(row) for row in ladder[:2]]
    store(github, 701, ladder[0], keys[0])
    store(github, 702, ladder[1], keys[1])
    expired, failing = (github.state.artifacts[run][0]["id"] for run in (701, 702))
    github.state.faults.append(
        Fault("GET", rf"/repos/{SLUG}/actions/artifacts/{expired}/zip", 410, {"message": "Artifact has expired"})
    )
    github.state.faults.extend(server_error_burst("GET", rf"/blob-storage/{failing}\.zip", 5, status=503))
    done = run_cli(
        "plan",
        "--rows",
        str(write_plan(tmp_path / "plan.json", ladder[:2])),
        "--reuse-github",
        "--format",
        "json",
        cwd=ROOT[0],
        env=env_for(github, INFX_GITHUB_MAX_WAIT="60"),
    )
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    reasons = plan["reuse"]["dispatch-reasons"]
    assert "HTTP 410 Artifact has expired" in reasons[point_id(ladder[0])]
    assert "HTTP 503 on every one of 5 tries" in reasons[point_id(ladder[1])]
    assert plan["point-count"] == 2
    # The step summary's table cuts a cell at 200 characters: each reason names its artifact once, so
    # the cause is still there (found by the sweep of tests/slurm/test_workflow_sweep_faults.py).
    from infx.workflows.report import dispatch_reasons_table

    summary = SweepPlan.from_json(plan).reuse
    assert summary is not None
    table = dispatch_reasons_table(summary).render().splitlines()
    for row, key, cause in (
        (ladder[0], keys[0], "HTTP 410 Artifact has expired"),
        (ladder[1], keys[1], "HTTP 503 on every"),
    ):
        assert reasons[point_id(row)].count(result_artifact_name(key)) == 1
        assert cause in next(line for line in table if point_id(row) in line)


def test_github_a_stale_or_partial_folder_in_the_download_folder_is_never_reused(tmp_path, ladder, github):
    key = key_for(ladder[0])
    download = tmp_path / "dl"
    stale = write_artifact(download, artifact_files(ladder[0], key, run_id=1), result_artifact_name(key))
    (stale / "planted.json").write_text("{}")
    partial = download / f".{result_artifact_name(key)}.partial-deadbeef"
    partial.mkdir()
    store(github, 801, ladder[0], key)
    got = select_from_github(tmp_path, github, ladder[:1])
    assert got["decision"]["reused"][0]["source-run"] == 801
    assert not (stale / "planted.json").exists() and not partial.exists()
    assert len(github.state.requests_to("GET", r"/blob-storage/\d+\.zip")) == 1


def test_github_lookup_cost_is_pages_plus_runs_not_candidates(tmp_path, ladder, github):
    """5 points with 60 stored results each (the issue's case: 141 requests before): the whole
    list (3 pages of 100) beats 5 listings by name, one run read and one compare for the
    newest candidates' run, and one download (API + blob) per point."""
    keys = [key_for(row) for row in ladder]
    for n in range(60):
        github.state.add_run(900 + n, head_sha=MAIN_SHA)
        for row, key in zip(ladder, keys):
            github.state.add_artifact(
                900 + n, result_artifact_name(key), files=artifact_files(row, key, run_id=900 + n)
            )
    before = len(github.state.requests)
    got = select_from_github(tmp_path, github, ladder)
    assert {item["source-run"] for item in got["decision"]["reused"]} == {959}  # the newest
    made = github.state.requests[before:]
    listing = [r for r in made if r.path == f"/repos/{SLUG}/actions/artifacts"]
    assert len(listing) == 3 and all(r.query["per_page"] == ["100"] for r in listing)
    counts = {"repo": 1, "listing": 3, "run facts": 1, "compare": 1, "downloads": 2 * len(ladder)}
    assert len(made) == sum(counts.values()), [(r.method, r.path) for r in made]


def test_github_a_listing_by_name_when_it_costs_fewer_requests(tmp_path, ladder, github):
    key = key_for(ladder[0])
    github.state.add_run(950, head_sha=MAIN_SHA)
    for n in range(250):  # 3 pages of other artifacts; one key: 1 listing by name is cheaper than 2 more pages
        github.state.add_artifact(950, f"lane-check-{n}")
    store(github, 951, ladder[0], key)
    got = select_from_github(tmp_path, github, ladder[:1])
    assert got["decision"]["reused"][0]["source-run"] == 951
    listings = github.state.requests_to("GET", rf"/repos/{SLUG}/actions/artifacts")
    assert [r.query.get("name") for r in listings] == [None, [result_artifact_name(key)]]


def test_github_the_lookup_keeps_within_the_token_s_hourly_budget(tmp_path, ladder, github):
    """The repository's GITHUB_TOKENs share one hourly budget: the lookup stops while a reserve is
    left (here 20 of 34), counting the two requests a sweep of main spends republishing each reused
    point, instead of draining it; the points it did not look at run, and the decision says why."""
    keys = [key_for(row) for row in ladder]
    github.state.add_run(970, head_sha=MAIN_SHA)
    for row, key in zip(ladder, keys):
        github.state.add_artifact(970, result_artifact_name(key), files=artifact_files(row, key, run_id=970))
    github.state.hourly_limits["GITHUB_TOKEN"] = 34
    token = github.state.grant_token({"actions": "read", "contents": "read", "pull-requests": "read"})
    got = select(
        tmp_path,
        write_plan(tmp_path / "plan.json", ladder),
        "--github",
        "--download",
        str(tmp_path / "dl"),
        env=env_for(github, GITHUB_TOKEN=token),
    )
    decision = got["decision"]
    # 2 requests before any candidate (the repository, the listing), 3 for the first (its run, main's
    # reach, the download) and 1 for each next: at 27 left, 1 more download and 8 for republishing
    # would pass the reserve.
    assert [item["result-key"] for item in decision["reused"]] == keys[:3]
    for row in ladder[3:]:
        assert (
            "of run 970: not looked at: the token's hourly API budget is nearly spent"
            in decision["dispatch-reasons"][point_id(row)]
        )
    assert "27 of 34 requests left; 20 are kept" in decision["notice"] and "8 for republishing" in decision["notice"]
    assert github.state.count_by_token()[token] == 7  # never near GitHub's refusal
