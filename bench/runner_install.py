"""Benchmark: what the workflow executor pays per test session to install infx for real
(tests/testing/runner_python.py: the wheel built from this source, a virtual environment with
requirements.lock's packages and the wheel). Each run builds it in a fresh folder, as the first
pytest-xdist worker of a session does (the package caches of uv stay warm, as on a developer's
machine or a CI machine after the first session). Target: under 15 s wall, so the suite stays
well inside CI's 10 minutes on 2 cores.

    python3 bench/runner_install.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import REPO, report  # noqa: E402

TARGET = 15.0
BUILD = "import sys; sys.path.insert(0, {tests!r}); from testing.runner_python import runtime_file; runtime_file()"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    script = BUILD.format(tests=str(REPO / "tests"))
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as folder:
        for run in range(runs):
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["INFX_TEST_RUNNER_ROOT"] = str(Path(folder) / f"session-{run}")  # a fresh session each time
            before, start = os.times(), time.perf_counter()
            subprocess.run([sys.executable, "-c", script], env=env, check=True)
            walls.append(time.perf_counter() - start)
            after = os.times()
            cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
    stats = {"runs": runs, "min": min(walls), "median": statistics.median(walls), "max": max(walls)}
    print(
        report("session runtime (wheel + locked environment)", stats, TARGET)
        + f"; CPU median {statistics.median(cpus):.2f} s"
    )


if __name__ == "__main__":
    main()
