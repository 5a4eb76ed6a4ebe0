"""run-sweep.yml executed end to end by tests/testing/executor.py (GitHub's own parser and
evaluator, every `run:` step in bash) on real-shaped events, in real git repositories built
from the bundled data, with the PR comment going to the local GitHub server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.points import point_id
from infx.workflows.rerun import artifact_name
from testing.cli import run_cli
from testing.executor import PROJECT, Engine, Executor, surviving_runs, triggers
from testing.sweeps import (  # noqa: F401  (fixtures)
    DRY_RUN,
    PR,
    SLUG,
    _logs,
    change,
    git,
    launched_points,
    main_repo,
    point_jobs,
    pr_payload,
    pr_run,
    replace_with_head,
    repository_at_base,
    server,
)


def test_pr_labelled_sweep_enabled_runs_the_trimmed_plan_and_reports(change: Path, tmp_path: Path, server):
    run = pr_run(change, tmp_path, server, ["sweep-enabled"])
    assert run.results == {
        "setup": "success",
        "republish": "skipped",
        "report-plan": "success",
        "lane-gate": "skipped",
        "canary": "skipped",
        "sweep": "success",
        "results": "skipped",
        "report-results": "success",
    }, _logs(run)
    plan = json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())
    assert plan["mode"]["primary-label"] == "sweep-enabled" and plan["mode"]["trim-conc"] is True
    planned = [row for rows in plan["buckets"].values() for row in rows]
    assert all(len(row["conc"]) == 1 for row in planned if isinstance(row["conc"], list))
    assert {row["config-key"] for row in planned} == {"dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"}
    # Every planned point went setup -> shard -> sweep-shard -> run-point and left its launch plan.
    launches = point_jobs(run)
    assert sorted(point_id(p) for p in launched_points(run)) == sorted(point_id(r) for r in planned)
    assert all(job.result == "success" and job.runs_on == "ubuntu-latest" for job in launches), _logs(run)
    for row in planned:  # each artifact named after the row's result key, which the plan gave it
        assert len(row["result-key"]) == 64
        launch_plan = json.loads((run.artifacts / artifact_name(row) / "launch-plan.json").read_text())
        assert launch_plan["result-key"] == row["result-key"]
        assert launch_plan["node-count"] == row["node-count"]
    # The sticky comment: one, with the mode and every point's outcome.
    comments = server.state.comments[PR]
    assert len(comments) == 1, [c["body"][:80] for c in comments]
    body = comments[0]["body"]
    assert "Launch: yes" in body and "`sweep-enabled`" in body and "trimmed" in body
    assert f"✅ ok: **{len(planned)}**" in body
    setup_summary = next(job.summary for job in run.jobs if job.path == "setup")
    assert "## infx plan" in setup_summary and "**Launch: yes** (label `sweep-enabled`)" in setup_summary
    assert run.concurrency == {"group": f"run-sweep-pr-{PR}", "cancel-in-progress": True}


def bundled_rows() -> list[dict]:
    done = run_cli("matrix", "--format", "json", cwd=PROJECT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "labels, survivor",
    [
        (["sweep-enabled"], "sweep-enabled"),
        # Two labels of the table and one outside it: the second labelled run cancels the first; the
        # unrelated label's run has a group of its own and plans nothing.
        (["sweep-enabled", "agentx-fast", "documentation"], "agentx-fast"),
    ],
)
def test_a_pr_created_with_sweep_labels_starts_exactly_one_sweep(
    labels, survivor, change: Path, tmp_path: Path, server
):
    """GitHub's events when a PR is created with labels: `opened`, then one `labeled` per label, a
    second apart at most. The PR types leave `opened`/`reopened` out (as the reference, for this
    reason): the `labeled` runs start the sweep, and concurrency keeps only the last of them."""
    engine = Engine()
    try:
        tree = engine.parse(change / ".github" / "workflows" / "run-sweep.yml")
        changed = git(change, "diff", "--name-only", "main", "HEAD").split()
        sequence = [("opened", None)] + [("labeled", label) for label in labels]
        started = []
        for offset, (action, label) in enumerate(sequence):
            payload = pr_payload(change, action, labels, label)
            if triggers(tree, "pull_request", payload, changed):
                started.append(
                    {
                        "github": {"event_name": "pull_request", "event": payload, "run_id": str(9300 + offset)},
                        "label": label,
                        "run_id": 9300 + offset,
                    }
                )
        assert [run["label"] for run in started] == labels  # `opened` starts no run
        assert not triggers(tree, "pull_request", pr_payload(change, "reopened", labels), changed)
        survivors = surviving_runs(engine, tree, started)
    finally:
        engine.close()
    assert survivor in [run["label"] for run in survivors]
    sweeps = []
    for run in survivors:
        done = pr_run(change, tmp_path / str(run["run_id"]), server, labels, label=run["label"], run_id=run["run_id"])
        if done.results["sweep"] == "success" and launched_points(done):
            sweeps.append(run["label"])
    assert sweeps == [survivor]


def test_manual_dispatch_of_every_bundled_row_runs_each_point_once(main_repo: Path, tmp_path: Path):
    run = Executor(
        main_repo,
        tmp_path / "run",
        "workflow_dispatch",
        {"inputs": {"dry-run": "true"}, "ref": "refs/heads/main"},
        sha=git(main_repo, "rev-parse", "HEAD"),
        repository=SLUG,
        run_id=9100,
    )
    run.results = run.run(inputs={"dry-run": True})
    assert run.results["setup"] == "success" and run.results["sweep"] == "success", _logs(run)
    assert run.results["lane-gate"] == "skipped" and run.results["report-plan"] == "skipped"
    rows = bundled_rows()
    assert len(rows) == 68
    launched = launched_points(run)
    assert sorted(map(point_id, launched)) == sorted(map(point_id, rows))  # each once, none lost
    assert all(job.result == "success" and job.runs_on == "ubuntu-latest" for job in point_jobs(run)), _logs(run)
    planned = {
        point_id(r): r
        for rows_ in json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())["buckets"].values()
        for r in rows_
    }
    for row in rows:  # the launch plan of each, routed by its own runner label
        launch_plan = json.loads(
            (run.artifacts / artifact_name(planned[point_id(row)]) / "launch-plan.json").read_text()
        )
        assert launch_plan["ok"] is True and launch_plan["point-id"] == point_id(row)
    assert {row["runner"] for row in rows} == set(json.loads(run.jobs[0].outputs["lanes"]))
    assert run.run_name == "Manual sweep "  # no config-key globs: every row


def test_push_to_main_gates_and_sweeps_the_merged_change(main_repo: Path, tmp_path: Path):
    before, after = git(main_repo, "rev-parse", "HEAD~1"), git(main_repo, "rev-parse", "HEAD")
    event = {"ref": "refs/heads/main", "before": before, "after": after, "head_commit": {"id": after, "message": "m"}}
    run = Executor(
        main_repo, tmp_path / "run", "push", event, sha=after, repository=SLUG, run_id=9200, variables=DRY_RUN
    )
    run.results = run.run()
    assert run.results == {
        "setup": "success",
        "republish": "skipped",
        "report-plan": "skipped",
        "lane-gate": "skipped",
        "canary": "skipped",
        "sweep": "success",
        "results": "skipped",
        "report-results": "skipped",
    }, _logs(run)
    plan = json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())
    assert plan["mode"]["dispatch"] is True and plan["mode"]["trim-conc"] is False
    assert sorted(map(point_id, launched_points(run))) == sorted(
        point_id(r) for rows in plan["buckets"].values() for r in rows
    )
    assert run.concurrency == {"group": "run-sweep-9200", "cancel-in-progress": False}


def self_hosted_jobs(run: Executor) -> list[str]:
    return [job.path for job in run.jobs if job.result != "skipped" and job.runs_on not in (None, "ubuntu-latest")]


def test_two_primary_labels_fail_the_plan_naming_both(change: Path, tmp_path: Path, server):
    run = pr_run(change, tmp_path, server, ["sweep-enabled", "full-sweep-fail-fast"], label="full-sweep-fail-fast")
    assert run.results["setup"] == "failure" and run.results["sweep"] == "skipped"
    log = run.jobs[0].log
    assert "plan-labels-conflict" in log and "'sweep-enabled'" in log and "'full-sweep-fail-fast'" in log
    assert not launched_points(run) and not server.state.comments.get(PR)


@pytest.mark.parametrize("case", ["no-label", "skip-sweep"])
def test_no_primary_label_or_skip_sweep_plans_and_reports_but_launches_nothing(
    case, change: Path, tmp_path: Path, server
):
    labels = ["evals-only"] if case == "no-label" else ["sweep-enabled"]
    if case == "skip-sweep":
        (change / "README.md").write_text("typo\n")
        git(change, "add", "README.md")
        git(change, "commit", "-qm", "Fix a typo [skip-sweep]")
    run = pr_run(change, tmp_path, server, labels, action="synchronize")
    assert run.results["setup"] == "success" and run.results["report-plan"] == "success", _logs(run)
    assert run.results["sweep"] == run.results["canary"] == run.results["report-results"] == "skipped"
    assert not launched_points(run) and not self_hosted_jobs(run)
    mode = json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())["mode"]
    assert mode["dispatch"] is False
    body = server.state.comments[PR][0]["body"]
    assert "Launch: no" in body and (
        "[skip-sweep]" in body if case == "skip-sweep" else "add one of the labels" in body
    )


@pytest.mark.parametrize("kind", ["fork", "draft"])
def test_a_fork_or_draft_pull_request_reaches_no_job(kind, change: Path, tmp_path: Path, server):
    run = pr_run(change, tmp_path, server, ["sweep-enabled"], fork=kind == "fork", draft=kind == "draft")
    assert set(run.results.values()) == {"skipped"} and not self_hosted_jobs(run)


def test_a_failing_canary_starts_no_other_point(change: Path, tmp_path: Path, server):
    # The canary (fewest GPU-hours) fails its launch: its recipe is broken in this commit.
    plan_now = json.loads(
        subprocess_infx(
            change,
            "plan",
            "--base-ref",
            "main",
            "--head-ref",
            "HEAD",
            "--pr-number",
            str(PR),
            "--label",
            "full-sweep-enabled",
            "--format",
            "json",
        )
    )
    canary_id = plan_now["canary"]["id"]
    # Its launch fails: in this commit the lane profile breaks its schema, which only the launch checks
    # (a profile that no longer declares the canary's label would hold its points at plan time instead).
    profile = change / "runners" / "gb300-nv.yaml"
    text = profile.read_text()
    assert text.count("gpus-per-node: 4\n") == 1
    profile.write_text(text.replace("gpus-per-node: 4\n", "gpus-per-node: four\n"))
    git(change, "commit", "-qam", "lane profile the launch refuses")
    run = pr_run(change, tmp_path, server, ["full-sweep-enabled"], label="full-sweep-enabled")
    assert run.results["canary"] == "failure", _logs(run)
    assert [job.inputs["shard-id"] for job in run.jobs if job.path == "canary"] == ["canary"]
    assert run.results["sweep"] == "skipped" and run.results["report-results"] == "success"
    assert [point_id(p) for p in launched_points(run)] == [canary_id]
    body = server.state.comments[PR][0]["body"]
    assert "a canary point first" in body and "❌ failed: **1**" in body


def subprocess_infx(repo: Path, *args: str) -> str:
    done = run_cli(*args, cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_shard_past_the_inline_outputs_is_loaded_from_the_plan_artifact(main_repo: Path, tmp_path: Path):
    """Level 2 of the fan-out for a shard that is only a file (too large for a job output, or
    past the 64 outputs the setup declares): the `load` job reads it from `sweep-plan`."""
    rows = bundled_rows()[:3]
    sha = git(main_repo, "rev-parse", "HEAD")
    run = Executor(
        main_repo,
        tmp_path / "run",
        "push",
        {"ref": "refs/heads/main", "before": sha, "after": sha},
        sha=sha,
        repository=SLUG,
        run_id=9300,
    )
    shards = run.artifacts / "sweep-plan" / "infx-shards"
    shards.mkdir(parents=True)
    (shards / "shard-70.json").write_text(json.dumps(rows))
    results = run.run_called(
        ".github/workflows/sweep-shard.yml",
        {"shard-id": "multi_node/8k1k#9", "rows": "", "shard-file": "shard-70.json", "dry-run": True},
    )
    assert results == {"load": "success", "points": "success"}, _logs(run)
    assert sorted(map(point_id, launched_points(run))) == sorted(map(point_id, rows))
    inline = Executor(main_repo, tmp_path / "inline", "push", {"before": sha}, sha=sha, repository=SLUG, run_id=9301)
    assert inline.run_called(
        ".github/workflows/sweep-shard.yml",
        {"shard-id": "x#0", "rows": json.dumps(rows[:1]), "shard-file": "shard-0.json", "dry-run": True},
    ) == {"load": "skipped", "points": "success"}


def test_a_second_sweep_of_an_unchanged_plan_dispatches_nothing_and_no_reuse_runs_everything(
    change: Path, tmp_path: Path, server
):
    """Reuse through the whole workflow: the first PR sweep plans keyed points; once valid results
    are stored under those keys by a trusted run (this repository's sweep on the PR's own commit),
    the next sweep of the same plan launches nothing, says so, and hands the stored results on;
    the `no-reuse` label runs every point again."""
    from testing.github_helpers import result_artifact_files

    first = pr_run(change, tmp_path / "first", server, ["sweep-enabled"], run_id=9001)
    assert first.results["sweep"] == "success", _logs(first)
    planned = [
        r
        for rows in json.loads((first.artifacts / "sweep-plan" / "plan.json").read_text())["buckets"].values()
        for r in rows
    ]
    assert planned and all(len(row["result-key"]) == 64 for row in planned)
    head = git(change, "rev-parse", "HEAD")
    server.state.add_pull(PR)
    server.state.pull_commits[PR] = [head]
    server.state.add_run(8000, head_branch="pr", event="pull_request", head_sha=head)
    for row in planned:  # what the launches of an earlier, real sweep of these points uploaded
        server.state.add_artifact(
            8000, artifact_name(row), files=result_artifact_files(row, row["result-key"], run_id=8000)
        )

    second = pr_run(change, tmp_path / "second", server, ["sweep-enabled"], run_id=9002)
    assert second.results["setup"] == "success" and second.results["sweep"] == "skipped", _logs(second)
    assert not launched_points(second) and not point_jobs(second)
    plan = json.loads((second.artifacts / "sweep-plan" / "plan.json").read_text())
    assert plan["point-count"] == 0 and sorted(item["result-key"] for item in plan["reuse"]["reused"]) == sorted(
        row["result-key"] for row in planned
    )
    assert {item["source-run"] for item in plan["reuse"]["reused"]} == {8000}
    assert sorted(p.name for p in (second.artifacts / "sweep-reused").iterdir()) == sorted(
        artifact_name(r) for r in planned
    )
    summary = next(job.summary for job in second.jobs if job.path == "setup")
    assert f"{len(planned)} points reused" in summary and "GPU-hours saved" in summary and "(from run 8000)" in summary
    body = server.state.comments[PR][0]["body"]
    assert f"{len(planned)} points reused" in body
    for item in plan["reuse"]["reused"]:  # each once: in the reused table, or after the sweep as a reused point
        assert body.count(item["point-id"]) == 1, (item["point-id"], body)
    assert "Reused points (not run again)" in body or "| ♻️ reused |" in body, body

    forced = pr_run(change, tmp_path / "forced", server, ["sweep-enabled", "no-reuse"], run_id=9003)
    assert forced.results["sweep"] == "success", _logs(forced)
    assert sorted(map(point_id, launched_points(forced))) == sorted(map(point_id, planned))
    assert "no reuse of earlier results" in next(job.summary for job in forced.jobs if job.path == "setup")


# --- reuse across pull requests: exact trust, the squash merge, republishing under the key ------------------


PR_B = 3190
LADDER_KEY = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"


def _store_sweep(gh, run_id: int, sha: str, branch: str, rows: list[dict]) -> None:
    """What the launches of a real sweep of ``rows`` at ``sha`` uploaded (the launch itself runs on
    the real local Slurm in tests/slurm): one valid `point-<key>` artifact per point."""
    from testing.github_helpers import result_artifact_files

    gh.state.add_run(run_id, head_branch=branch, event="pull_request", head_sha=sha)
    for row in rows:
        gh.state.add_artifact(
            run_id, artifact_name(row), files=result_artifact_files(row, row["result-key"], run_id=run_id)
        )


def _push(repo: Path, tmp: Path, gh, before: str, after: str, run_id: int) -> Executor:
    event = {"ref": "refs/heads/main", "before": before, "after": after, "head_commit": {"id": after, "message": "m"}}
    gh.state.add_run(run_id, head_branch="main", event="push", head_sha=after)
    run = Executor(repo, tmp, "push", event, sha=after, repository=SLUG, run_id=run_id, github=gh, variables=DRY_RUN)
    run.results = run.run()
    return run


def _plan_of(run: Executor) -> dict:
    return json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())


def test_a_squash_merged_pr_s_final_results_are_reused_by_main_and_then_by_the_next_pr(
    tmp_path: Path, corpus: Path, server
):
    """PR A sweeps and is squash-merged; the push run reuses A's points, but only those of A's
    final head commit (never of an intermediate commit it later reverted), and republishes them
    under their keys; PR B, which changes nothing of those points, dispatches none of them."""
    repo = repository_at_base(tmp_path / "repo", corpus)
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "pr")
    replace_with_head(repo)
    (repo / "NOTES.md").write_text("a stray file, reverted before the merge\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Mooncake ladder, with a stray file")
    intermediate = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", "NOTES.md")
    git(repo, "commit", "-qm", "Revert the stray file")
    final = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--squash", "pr")
    changelog = repo / "perf-changelog.yaml"  # merged: the link names the PR
    before_text, _, after_text = changelog.read_text().rpartition(f"{SLUG}/pull/XXX\n")
    changelog.write_text(before_text + f"{SLUG}/pull/{PR}\n" + after_text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"Mooncake ladder (#{PR})")
    merged = git(repo, "rev-parse", "HEAD")
    server.state.git = repo  # compare and the PR's commits come from the real history
    server.state.add_pull(PR, head_ref="pr")
    server.state.merge_pull(PR, merged, head_sha=final)
    assert server.state.pull(PR)["head"]["sha"] == final and intermediate in server.state._commits_of(PR)

    # The intermediate commit's sweep is all there is: the push run reuses nothing of it.
    first = _push(repo, tmp_path / "push-1", server, base, merged, run_id=7101)
    assert first.results["setup"] == "success" and first.results["republish"] == "skipped", _logs(first)
    rows = [r for rows in _plan_of(first)["buckets"].values() for r in rows]
    assert rows and all(len(r["result-key"]) == 64 for r in rows)
    _store_sweep(server, 7001, intermediate, "pr", rows)
    again = _push(repo, tmp_path / "push-2", server, base, merged, run_id=7102)
    plan = _plan_of(again)
    assert plan["point-count"] == len(rows) and plan["reuse"]["reused"] == [], _logs(again)
    why = f"not the final head commit of the merged pull request (#{PR} at {final[:12]})"
    assert all(why in reason for reason in plan["reuse"]["dispatch-reasons"].values())
    summary = next(job.summary for job in again.jobs if job.path == "setup")
    assert "Points that run, and why no stored result was reused" in summary and why in summary

    # A's final head swept: the push run reuses every point and republishes each under its key.
    _store_sweep(server, 7002, final, "pr", rows)
    push = _push(repo, tmp_path / "push-3", server, base, merged, run_id=7103)
    plan = _plan_of(push)
    assert plan["point-count"] == 0 and {item["source-run"] for item in plan["reuse"]["reused"]} == {7002}, _logs(push)
    assert push.results["republish"] == "success" and push.results["sweep"] == "skipped", _logs(push)
    republished = {a["name"]: a for a in server.state.artifacts[7103] if a["name"].startswith("point-")}
    assert sorted(republished) == sorted(artifact_name(r) for r in rows)
    source = {a["name"]: a for a in server.state.artifacts[7002]}
    for name, artifact in republished.items():
        assert _files(server.state.blobs[artifact["id"]]) == _files(server.state.blobs[source[name]["id"]])

    # PR B, from main, re-lists the same config key and changes nothing of its points.
    git(repo, "checkout", "-q", "-b", "b")
    entry = (
        f"\n- config-keys:\n    - {LADDER_KEY}\n  scenario-type:\n    - agentic-coding\n"
        '  description:\n    - "Sweep the ladder again; nothing of its points changes."\n'
        f"  pr-link: https://github.com/{SLUG}/pull/XXX\n"
    )
    changelog.write_text(changelog.read_text() + entry)
    git(repo, "commit", "-qam", "Sweep the ladder again")
    server.state.add_pull(PR_B, head_ref="b")
    server.state.add_run(7201, head_branch="b", event="pull_request", head_sha=git(repo, "rev-parse", "HEAD"))
    event = pr_payload(
        repo, "labeled", ["non-canary-full-sweep-enabled"], "non-canary-full-sweep-enabled", number=PR_B, head_ref="b"
    )
    run_b = Executor(
        repo,
        tmp_path / "pr-b",
        "pull_request",
        event,
        sha=event["pull_request"]["head"]["sha"],
        ref=f"refs/pull/{PR_B}/merge",
        repository=SLUG,
        run_id=7201,
        github=server,
        variables=DRY_RUN,
    )
    run_b.results = run_b.run()
    plan_b = _plan_of(run_b)
    reused_b = plan_b["reuse"]["reused"]
    assert sorted(item["result-key"] for item in reused_b) == sorted(
        r["result-key"] for r in rows if r["config-key"] == LADDER_KEY
    ), _logs(run_b)
    assert reused_b and plan_b["point-count"] == 0 and not launched_points(run_b), _logs(run_b)
    assert {item["source-run"] for item in reused_b} == {7103}  # main's own run, not PR A's
    assert run_b.results["republish"] == "skipped"  # a pull request never republishes


def _files(blob: bytes) -> dict[str, bytes]:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}
