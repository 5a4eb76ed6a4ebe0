"""Whole-process timing for the benchmarks in bench/: run a command N times, report wall time.

Each benchmark imports :func:`time_command` and prints min / median / max; the figures
include interpreter start-up, as the targets in the issues do.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def time_command(
    argv: list[str],
    runs: int = 10,
    warmup: int = 1,
    cwd: Path | None = None,
    env: dict | None = None,
    expect_codes: tuple[int, ...] = (0,),
) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    walls = []
    for attempt in range(warmup + runs):
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.perf_counter() - start
        if done.returncode not in expect_codes:
            sys.exit(f"{argv} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
        if attempt >= warmup:
            walls.append(wall)
    return {"runs": runs, "min": min(walls), "median": statistics.median(walls), "max": max(walls)}


def timed_process(
    argv: list[str],
    codes: tuple[int, ...] = (0,),
    keep: tuple[str, ...] = ("HOME", "XDG_CACHE_HOME", "INFX_CACHE_DIR"),
) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one Python process ``python3 ARGV...`` in the repository, with only
    the environment variables ``keep`` passed through. CPU time is reported too because the machine
    may be shared: wall time then includes waiting for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    kept = {k: v for k, v in os.environ.items() if k in keep}
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**kept, "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    wall = time.perf_counter() - start
    if done.returncode not in codes:
        sys.exit(f"{' '.join(argv[:4])} exited {done.returncode}: {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def report(name: str, stats: dict, target: float | None = None) -> str:
    line = (
        f"{name}: median {stats['median']:.3f} s (min {stats['min']:.3f}, max {stats['max']:.3f}, {stats['runs']} runs)"
    )
    if target is not None:
        line += f"; target < {target:.2f} s: {'met' if stats['median'] < target else 'NOT met'}"
    return line
