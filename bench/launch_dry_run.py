"""`infx launch --dry-run` for every gb300-nv point of configs/nvidia-master.yaml: whole process, per point,
the lane found from the point's runner label (no --lane), as a workflow without an override does.

Target (issue 5): under 0.5 s wall per point including interpreter start. Prints the median
over all points (each point timed several runs) and the slowest point's median.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gb300_points import write_points  # noqa: E402
from bench.harness import REPO, report, time_command  # noqa: E402

TARGET = 0.5


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_points(Path(tmp), REPO)
        medians = []
        for path in paths:
            stats = time_command([sys.executable, "-m", "infx", "launch", "--point", str(path),
                                  "--dry-run", "--format", "json"], runs=runs, warmup=0, cwd=REPO, env={"RUNNER_NAME": ""})
            medians.append(stats["median"])
    overall = {"runs": len(medians), "min": min(medians), "median": statistics.median(medians), "max": max(medians)}
    print(report(f"infx launch --dry-run, {len(paths)} gb300-nv points (median per point)", overall, TARGET))
    sys.exit(0 if overall["max"] < TARGET else 1)


if __name__ == "__main__":
    main()
