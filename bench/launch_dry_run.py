"""`infx launch --dry-run` for every gb300-nv point of configs/nvidia-master.yaml: whole process, per point,
the lane found from the point's runner label (no --lane), as a workflow without an override does.

Target (issues 5 and 10): under 0.5 s wall per point including interpreter start, with infx's
srt-slurm cache seeded (checkouts of every pinned commit of the bundle, so the 26 recipes that
ship with srt-slurm are read, resolved and checked from it) and no srtctl venv (the dry run
without srtctl). Prints the median over all points (each timed several runs) and the slowest, for
the throughput points and for the eval points (bench.gb300_points.gb300_eval_points), which also
read and hash the eval suite.

    python3 bench/launch_dry_run.py [runs] [--srtctl CACHE_DIR]

`--srtctl CACHE_DIR` times against an existing cache that also has the srtctl venvs
(`infx lane cache-seed gb300-nv --from BUNDLE --srtctl`), i.e. with the real `srtctl dry-run`;
that figure is reported for information, the target applies to the dry run without srtctl.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gb300_points import gb300_eval_points, write_points  # noqa: E402
from bench.harness import REPO, report, time_command  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))
from testing.launchkit import repository_with_harness  # noqa: E402

TARGET = 0.5
BUNDLE = REPO / "tests" / "data" / "srt-slurm" / "nvidia-srt-slurm.bundle"


def seed(cache: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "infx", "lane", "cache-seed", "gb300-nv", "--from", str(BUNDLE)],
        cwd=REPO,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(REPO), "INFX_CACHE_DIR": str(cache)},
        check=True,
        stdout=subprocess.DEVNULL,
    )


def main() -> None:
    args = sys.argv[1:]
    srtctl_cache = Path(args[args.index("--srtctl") + 1]) if "--srtctl" in args else None
    positional = [a for i, a in enumerate(args) if a != "--srtctl" and (i == 0 or args[i - 1] != "--srtctl")]
    runs = int(positional[0]) if positional else 3
    with tempfile.TemporaryDirectory() as tmp:
        cache = srtctl_cache or Path(tmp) / "cache"
        if srtctl_cache is None:
            seed(cache)
        label = "with srtctl dry-run" if srtctl_cache else "cache seeded, no srtctl"
        # This repository ships no AgentX harness, so it refuses its agentic points; a benchmark
        # repository has one (docs/launch.md, "Agentic points"): time them in such a checkout.
        root = repository_with_harness(Path(tmp) / "repo")
        slowest = 0.0
        for kind, rows in (
            ("", None),
            ("eval ", gb300_eval_points(REPO)),
        ):  # eval points also load and hash the eval suite
            paths = write_points(Path(tmp) / f"{kind}points", REPO, rows)
            medians = []
            for path in paths:
                stats = time_command(
                    [
                        sys.executable,
                        "-m",
                        "infx",
                        "launch",
                        "--point",
                        str(path),
                        "--dry-run",
                        "--format",
                        "json",
                        "--output-dir",
                        str(Path(tmp) / "out"),
                    ],
                    runs=runs,
                    warmup=0,
                    cwd=root,
                    env={"RUNNER_NAME": "", "INFX_CACHE_DIR": str(cache), "GITHUB_WORKSPACE": str(root)},
                )
                medians.append(stats["median"])
            overall = {
                "runs": len(medians),
                "min": min(medians),
                "median": statistics.median(medians),
                "max": max(medians),
            }
            slowest = max(slowest, overall["max"])
            print(
                report(
                    f"infx launch --dry-run, {len(paths)} gb300-nv {kind}points ({label}; median per point)",
                    overall,
                    None if srtctl_cache else TARGET,
                )
            )
    sys.exit(0 if srtctl_cache or slowest < TARGET else 1)


if __name__ == "__main__":
    main()
