"""Benchmark: what infx's imports cost at start-up, and what each command's start-up costs.

    python3 bench/startup.py [--runs N] [--before DIR]

1. Each late import in infx/deferred.py: the CPU milliseconds importing the module adds to a
   fresh process that already imported infx.cli and the modules that import it late (the
   saving the deferral buys a command that does not need it); median of N processes. These are
   the figures the table records.
2. Whole commands on the bundled configs, as processes (interpreter start included), with a
   warm cache: `infx --help`, `infx config validate`, `infx matrix --format json`,
   `infx lane validate`. With --before DIR (a folder holding another version's infx/, e.g.
   `git archive <commit> infx | tar -x -C DIR`), each round runs both versions one after the
   other, so load on a shared machine hits both alike; medians of CPU (user + sys) and wall.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness import timed_process  # noqa: E402
from infx.deferred import DEFERRED  # noqa: E402

MARGINAL = """
import sys, time
for name in sys.argv[2:]:
    __import__(name)
start = time.process_time()
__import__(sys.argv[1])
print(time.process_time() - start)
"""
COMMANDS = {
    "--help": ["--help"],
    "config validate": ["config", "validate"],
    "matrix": ["matrix", "--format", "json"],
    "lane validate": ["lane", "validate"],
}


def marginal_ms(module: str, loaded: tuple[str, ...], runs: int) -> float:
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", MARGINAL, module, "infx.cli", *loaded],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        samples.append(float(done.stdout) * 1000)
    return statistics.median(samples)


def command_figures(versions: dict[str, Path], runs: int) -> None:
    with tempfile.TemporaryDirectory() as caches:
        env_keep = ("HOME", "INFX_CACHE_DIR")
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(runs + 1):  # round 0 fills the caches and compiles the bytecode
            for name, argv in COMMANDS.items():
                for version, root in versions.items():
                    os.environ["INFX_CACHE_DIR"] = str(Path(caches) / version)  # one cache per version: keys may differ
                    figures = timed_command(root, argv, env_keep)
                    if round_:
                        samples.setdefault((name, version), []).append(figures)
    for (name, version), figures in samples.items():
        wall = statistics.median(f[0] for f in figures) * 1000
        cpu = statistics.median(f[1] for f in figures) * 1000
        print(f"  infx {name:16s} {version:7s} CPU {cpu:6.1f} ms  wall {wall:6.1f} ms  (median of {runs})")


def timed_command(root: Path, argv: list[str], keep: tuple[str, ...]) -> tuple[float, float]:
    """One `python3 -m infx ARGV` with ``root``'s infx first on the path (timed_process runs in REPO,
    whose bundled configs every command reads)."""
    code = f"import sys; sys.path.insert(0, {str(root)!r}); sys.argv[0] = 'infx'; from infx.cli import main; main()"
    return timed_process(["-c", code, *argv], codes=(0, 1), keep=keep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--before", type=Path, help="a folder holding another version's infx/ to pair with")
    args = parser.parse_args()
    print("Late imports (infx/deferred.py): CPU added to a process that already holds their importers")
    for entry in DEFERRED:
        cost = marginal_ms(entry.probe or entry.module, entry.importers, args.runs)
        print(
            f"  {entry.module:14s} {cost:6.1f} ms  (recorded: {entry.cost_ms} ms; imported late by "
            f"{', '.join(entry.importers)})"
        )
    print("Commands, warm cache")
    versions = {"this": REPO} | ({"before": args.before.resolve()} if args.before else {})
    command_figures(versions, args.runs)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
