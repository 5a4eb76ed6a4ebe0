"""The session's Slurm controller runs a plain job to completion (the fixture itself works)."""

import subprocess
import time

import pytest

pytestmark = pytest.mark.slurm


def test_sbatch_runs_a_job(slurm_cluster):
    job = subprocess.run(
        ["sbatch", "--parsable", "-o", "/dev/null", "-t", "1", "--wrap", "true"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    for _ in range(100):
        out = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True).stdout
        if "JobState=COMPLETED" in out:
            break
        time.sleep(0.2)
    assert "JobState=COMPLETED" in out and "ExitCode=0:0" in out
