"""A second signal during a launch's cleanup (Ctrl-C, then the runner's SIGTERM) used to escape
as an internal error (exit 70) and cut the cancel short; now the first signal decides the exit
code, the job is cancelled and the launch record written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from launchkit import REPO, Workspace, git_repo, lane_profile, point, v1_recipe

pytestmark = pytest.mark.slurm


def jobs_named(name):
    return subprocess.run(["squeue", "-h", "-o", "%i", "--name", name], capture_output=True, text=True).stdout.split()


@pytest.mark.parametrize("first, second", [(signal.SIGINT, signal.SIGTERM), (signal.SIGTERM, signal.SIGINT)])
def test_a_second_signal_during_the_cancel_is_ignored(tmp_path, slurm_cluster, first, second):
    sha = git_repo(tmp_path / "srt-slurm", copy_from=REPO / "tests/slurm/standin")
    ws = Workspace(tmp_path / "ws", lane_profile(f"file://{tmp_path / 'srt-slurm'}", sha, partition=slurm_cluster["partition"]))
    ws.recipe("recipe.yaml", v1_recipe(command="echo started; sleep 120"))
    runner = f"testlane_sig{int(first)}"
    out = ws.root / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO), "GITHUB_WORKSPACE": str(ws.root), "INFX_CACHE_DIR": str(ws.root / ".cache"),
           "RUNNER_NAME": runner}
    process = subprocess.Popen([sys.executable, "-m", "infx", "launch", "--lane", "testlane", "--point", str(ws.point(point())),
                                "--output-dir", str(out)], cwd=ws.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not jobs_named(runner) and time.monotonic() < deadline:
        time.sleep(0.2)
    [job] = jobs_named(runner)
    time.sleep(1.0)
    process.send_signal(first)
    time.sleep(0.3)  # the launcher is now cancelling the job
    process.send_signal(second)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + first, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    record = json.loads(next(out.glob("*_launch.json")).read_text())
    assert record["job-id"] == job and record["terminal-state"] == "CANCELLED" and signal.Signals(first).name in record["message"]
    assert record["exit-code"] == 128 + first and jobs_named(runner) == []
