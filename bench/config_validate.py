"""Benchmark: `infx config validate` on the whole reference corpus, as a whole process.

Both master files and runners.yaml, with the component policy infx ships (the corpus has no
components.yaml); target < 0.3 s wall per run
(median), interpreter start included. The corpus has real defects (docs/config.md), so
exit code 1 is expected; pass --patched to time the patched, valid corpus instead.

    python3 bench/config_validate.py [--runs N] [--patched]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.harness import report, time_command  # noqa: E402

CORPUS = REPO / "tests" / "data" / "inferencex-2026-08"
TARGET_SECONDS = 0.3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--patched", action="store_true", help="time the corpus with its defects patched (exit 0)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.patched:
            sys.path.insert(0, str(REPO / "tests"))
            from testing.corpus import patched_corpus

            configs = patched_corpus(CORPUS, Path(tmp)) / "configs"
            codes = (0,)
        else:
            configs, codes = CORPUS / "configs", (1,)
        argv = [
            sys.executable,
            "-m",
            "infx",
            "config",
            "validate",
            str(configs / "nvidia-master.yaml"),
            str(configs / "amd-master.yaml"),
            "--runners",
            str(configs / "runners.yaml"),
        ]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        stats = time_command(argv, runs=args.runs, warmup=2, cwd=REPO, expect_codes=codes)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(report("infx config validate, whole corpus" + (" (patched)" if args.patched else ""), stats, TARGET_SECONDS))
    # CPU time is much less sensitive than wall time to other work on a shared machine.
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / (args.runs + 2)
    print(f"CPU (user+sys) per run: {cpu:.3f} s; load average now: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
