"""The lane check on the real local Slurm controller: each point asks, on its own lane's runner
right before its launch, whether the lane's partition has a node up. A point of a lane with none
launches nothing, keeps the lane check in its artifact (`-failed`) and says so; a lane with a node
up passes. No other lane waits for it (tests/workflows/test_lanes_and_queues.py).

The workflow runs through tests/testing/executor.py (GitHub's own evaluator); the lane
check's `sinfo` asks the session's Slurm controller.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml  # noqa: E402

from infx.workflows.rerun import artifact_name  # noqa: E402
from testing.executor import PROJECT, read_command_file, run_as_runner  # noqa: E402
from testing.sweeps import PR, change, launched_points, point_jobs, pr_run, server  # noqa: E402,F401


def set_partition(repo: Path, partition: str) -> None:
    profile = repo / "runners" / "gb300-nv.yaml"
    text = profile.read_text()
    profile.write_text(text.replace("  partition: batch_1\n", f"  partition: {partition}\n", 1))


def test_a_lane_with_no_node_up_launches_none_of_its_points(change: Path, tmp_path: Path, server, slurm_cluster):
    import subprocess

    set_partition(change, "partition-with-no-nodes")  # the lane's partition has no node on this cluster
    subprocess.run(["git", "commit", "-qam", "lane on an empty partition"], cwd=change, check=True)
    run = pr_run(change, tmp_path, server, ["sweep-enabled"], variables={})  # a launching run, not a dry run
    jobs = point_jobs(run)
    plan = json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())
    assert len(jobs) == plan["point-count"] > 0
    # Each point reached its own lane's runner, asked, and launched nothing: its job stays green (a
    # fail-fast sweep is not cancelled by another lane), its artifact says why.
    for job in jobs:
        assert job.runs_on == ["self-hosted", "cluster:gb300-nv"] and job.result == "success", job.log
        assert "--- Check the lane (exit 0)" in job.log and "--- Launch" not in job.log
        assert "lane cluster:gb300-nv has no node up" in job.log
        point = json.loads(job.inputs["point"])
        check = json.loads((run.artifacts / artifact_name(point, succeeded=False) / "lane-check.json").read_text())
        assert check["ok"] is False and check["partition"] == "partition-with-no-nodes" and check["usable"] == 0
    assert not (run.artifacts / artifact_name(json.loads(jobs[0].inputs["point"]))).exists()
    body = server.state.comments[PR][0]["body"]
    assert f"❌ failed: **{len(jobs)}**" in body


def test_a_lane_with_a_node_up_passes_its_check(tmp_path: Path, slurm_cluster):
    script = next(
        step
        for step in yaml.safe_load((PROJECT / ".github" / "workflows" / "run-point.yml").read_text())["jobs"]["launch"][
            "steps"
        ]
        if step.get("id") == "lane"
    )["run"]
    workspace = tmp_path / "ws"
    (workspace / "runners").mkdir(parents=True)
    (workspace / "runners" / "gb300-nv.yaml").write_text((PROJECT / "runners" / "gb300-nv.yaml").read_text())
    (workspace / "configs").mkdir()
    (workspace / "configs" / "runners.yaml").write_text((PROJECT / "configs" / "runners.yaml").read_text())
    for partition, up in ((slurm_cluster["partition"], "true"), ("partition-with-no-nodes", "false")):
        (workspace / "runners" / "gb300-nv.yaml").write_text((PROJECT / "runners" / "gb300-nv.yaml").read_text())
        set_partition(workspace, partition)
        temp = tmp_path / f"runner-{up}"
        temp.mkdir()
        (temp / "outputs").write_text("")
        done = run_as_runner(
            script,
            temp,
            {
                **slurm_cluster["env"],
                "LANE": "cluster:gb300-nv",
                "GITHUB_WORKSPACE": str(workspace),
                "GITHUB_OUTPUT": str(temp / "outputs"),
            },
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert read_command_file((temp / "outputs").read_text())["up"] == up
        assert (temp / "point" / "lane-check.json").exists() == (up == "false")
