"""The suite's stability under a concurrent CPU load: run the README's test command RUNS times in a
row while LOAD busy processes compete for the cores, and report each run's outcome and wall time.

    python3 bench/suite_under_load.py [--runs 5] [--load 2] [-- PYTEST_ARGS...]

Issue 22 asks the suite to pass five times in a row on a 2-core machine under a concurrent CPU load.
A test that waits with ``sleep`` or a deadline too tight for a loaded machine fails here first. Stops at
the first failing run (its tail is printed) and exits 1; exits 0 when every run passed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _burn(stop: multiprocessing.synchronize.Event) -> None:
    # Pure-Python arithmetic: holds one core without touching the disk the tests use.
    value = 0
    while not stop.is_set():
        for step in range(100_000):
            value ^= step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--load", type=int, default=2, help="busy processes running beside the suite")
    parser.add_argument("pytest_args", nargs="*", default=["-q"])
    options = parser.parse_args()
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(options.load)]
    for burner in burners:
        burner.start()
    try:
        for run in range(1, options.runs + 1):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "pytest", *options.pytest_args], cwd=REPO, capture_output=True, text=True
            )
            wall = time.perf_counter() - start
            summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
            print(
                f"run {run}/{options.runs}: exit {done.returncode}, {wall:.0f} s wall, load {options.load}: {summary}",
                flush=True,
            )
            if done.returncode != 0:
                print(done.stdout[-6000:], done.stderr[-2000:], sep="\n")
                return 1
    finally:
        stop.set()
        for burner in burners:
            burner.join(timeout=10)
    print(f"{options.runs} runs in a row passed under a load of {options.load} busy process(es)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
