"""Item 6 of the workflows issue on the real local Slurm controller: the lane check runs
before the fan-out of a run that launches, and a lane with no node up has its points
skipped before they queue; the step summary and the PR comment say so.

The workflow runs through tests/workflows/executor.py (GitHub's own evaluator); the lane
check's `sinfo` asks the session's Slurm controller.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflows"))
from test_workflow_runs import PR, change, launched_points, point_jobs, pr_run, server  # noqa: E402,F401

from executor import PROJECT  # noqa: E402


def set_partition(repo: Path, partition: str) -> None:
    profile = repo / "runners" / "gb300-nv.yaml"
    text = profile.read_text()
    profile.write_text(text.replace("  partition: batch_1\n", f"  partition: {partition}\n", 1))


def test_a_lane_with_no_node_up_starts_none_of_its_points(change: Path, tmp_path: Path, server, slurm_cluster):
    set_partition(change, "partition-with-no-nodes")  # the lane's partition has no node on this cluster
    subprocess.run(["git", "commit", "-qam", "lane on an empty partition"], cwd=change, check=True)
    run = pr_run(change, tmp_path, server, ["sweep-enabled"], variables={})  # a launching run, not a dry run
    assert run.results["lanes"] == "success" and run.results["lane-gate"] == "success"
    checked = [job for job in run.jobs if job.path.startswith("lanes[")]
    assert [job.runs_on for job in checked] == ["cluster:gb300-nv"]  # on the lane's own runner
    gate = next(job for job in run.jobs if job.path == "lane-gate")
    assert json.loads(gate.outputs["down"]) == ["cluster:gb300-nv"]
    assert "lane `cluster:gb300-nv` has no node up" in gate.summary and "0 of 0 nodes usable" in gate.summary
    # No point reached a runner: each run-point job was skipped by its `if`.
    assert not launched_points(run)
    skipped = point_jobs(run, "skipped")
    assert len(skipped) == json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())["point-count"]
    body = server.state.comments[PR][0]["body"]
    assert "#### Lane check" in body and "lane `cluster:gb300-nv` has no node up" in body
    assert f"its {len(skipped)} point(s) were not started" in body


def test_a_lane_with_a_node_up_passes_the_gate(tmp_path: Path, slurm_cluster):
    workspace = tmp_path / "ws"
    (workspace / "runners").mkdir(parents=True)
    (workspace / "runners" / "gb300-nv.yaml").write_text((PROJECT / "runners" / "gb300-nv.yaml").read_text())
    set_partition(workspace, slurm_cluster["partition"])
    checks = tmp_path / "checks" / "lane-check-0"
    checks.mkdir(parents=True)
    env = {**slurm_cluster["env"], "PYTHONPATH": str(PROJECT), "GITHUB_WORKSPACE": str(workspace)}
    check = subprocess.run([sys.executable, "-m", "infx", "lane", "check", "cluster:gb300-nv", "--format", "json"],
                           capture_output=True, text=True, env=env, cwd=workspace)
    assert check.returncode == 0, check.stdout + check.stderr
    (checks / "check.json").write_text(check.stdout)
    (checks / "label").write_text("cluster:gb300-nv")
    outputs = tmp_path / "outputs"
    outputs.write_text("")
    gate = subprocess.run([sys.executable, "-m", "infx", "github", "lane-gate", "--checks", str(tmp_path / "checks"),
                           "--lanes", '["cluster:gb300-nv", "gb300"]', "--format", "github"],
                          capture_output=True, text=True, env={**env, "GITHUB_OUTPUT": str(outputs)})
    assert gate.returncode == 0, gate.stderr
    # The checked lane is up; the lane without a check result is stopped, never assumed up.
    assert '["gb300"]' in outputs.read_text()
    assert "lane `gb300` has no node up (no lane check result" in gate.stdout
