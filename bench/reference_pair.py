"""Benchmark: infx against the reference project's own code on the same corpus, paired.

    python3 bench/reference_pair.py --reference DIR [--runs N]
    INFX_REFERENCE=DIR python3 bench/reference_pair.py

DIR is a checkout of the reference repository's ``utils/`` (e.g. ``git -C <mirror> archive
HEAD utils | tar -x -C DIR``); nothing of it is part of infx. The corpus is
tests/data/inferencex-2026-08 with its runner labels declared (tests/testing/corpus.py), read by both.

Each round runs every command once, in the same order, so load on the shared machine hits
both sides alike; the figures are medians over the rounds of CPU time (user + sys, which other
load barely moves) and of wall time.

- cold: empty caches. infx gets a fresh, empty cache folder (a new CI runner has no
  ~/.cache/infx); the reference gets a fresh copy of its code with no __pycache__ (a fresh
  checkout compiles its scripts on every run of a job).
- warm: infx's cache filled by the run before; the reference with its bytecode compiled.
- infx's own bytecode is compiled in both (pip compiles an installed package), so the
  benchmark unsets PYTHONDONTWRITEBYTECODE for infx's runs.

Targets (issue 14): `infx matrix` ≤ 0.33× the reference generator cold, ≤ 0.2× warm;
`infx config validate` ≤ 0.25× the reference's load-and-validate (its load_config_files
and load_runner_file, which validate with pydantic).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from testing.corpus import CORPUS, patched_corpus  # noqa: E402

MASTERS = ("configs/nvidia-master.yaml", "configs/amd-master.yaml")
TARGETS = {"matrix cold": 0.33, "matrix warm": 0.20, "validate": 0.25}
REFERENCE_VALIDATE = (
    "import sys; sys.path.insert(0, sys.argv[1]);"
    "from validation import load_config_files, load_runner_file;"
    "load_config_files(sys.argv[2:4]); load_runner_file(sys.argv[4])"
)


def measure(argv: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{argv} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reference",
        default=os.environ.get("INFX_REFERENCE"),
        help="folder holding the reference's utils/ (or $INFX_REFERENCE)",
    )
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if not args.reference or not (Path(args.reference) / "utils" / "matrix_logic").is_dir():
        sys.exit("pass --reference DIR (or INFX_REFERENCE) holding the reference repository's utils/")
    reference = Path(args.reference) / "utils" / "matrix_logic"
    base_env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in ("INFX_NO_CACHE", "PYTHONDONTWRITEBYTECODE"):
        base_env.pop(name, None)
    samples: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        repo = patched_corpus(CORPUS, tmp_path / "corpus")
        warm_cache = tmp_path / "warm-cache"
        infx_matrix = [sys.executable, "-m", "infx", "matrix", "--format", "json"] + [
            arg for master in MASTERS for arg in ("--config", master)
        ]
        infx_validate = [sys.executable, "-m", "infx", "config", "validate", *MASTERS]

        def reference_matrix(code: Path) -> list[str]:
            return [
                sys.executable,
                str(code / "generate_sweep_configs.py"),
                "full-sweep",
                "--config-files",
                *MASTERS,
                "--runner-config",
                "configs/runners.yaml",
            ]

        reference_validate = [
            sys.executable,
            "-c",
            REFERENCE_VALIDATE,
            str(reference),
            *MASTERS,
            "configs/runners.yaml",
        ]
        measure(infx_matrix, repo, {**base_env, "INFX_CACHE_DIR": str(warm_cache)})  # fills the warm cache
        measure(reference_matrix(reference), repo, base_env)  # compiles the reference's bytecode
        for round_ in range(args.runs):
            cold_code = tmp_path / f"reference-cold-{round_}"
            shutil.copytree(reference, cold_code, ignore=shutil.ignore_patterns("__pycache__"))
            cold_cache = tmp_path / f"cold-cache-{round_}"
            runs = {
                "infx matrix cold": (infx_matrix, {"INFX_CACHE_DIR": str(cold_cache)}),
                "reference matrix cold": (reference_matrix(cold_code), {"PYTHONDONTWRITEBYTECODE": "1"}),
                "infx matrix warm": (infx_matrix, {"INFX_CACHE_DIR": str(warm_cache)}),
                "reference matrix warm": (reference_matrix(reference), {}),
                "infx validate cold": (infx_validate, {"INFX_CACHE_DIR": str(tmp_path / f"validate-cache-{round_}")}),
                "infx validate warm": (infx_validate, {"INFX_CACHE_DIR": str(warm_cache)}),
                "reference validate": (reference_validate, {}),
            }
            for name, (argv, env) in runs.items():
                samples.setdefault(name, []).append(measure(argv, repo, {**base_env, **env}))
    cpu = {name: statistics.median(s[0] for s in runs) for name, runs in samples.items()}
    wall = {name: statistics.median(s[1] for s in runs) for name, runs in samples.items()}
    for name in samples:
        print(f"{name:24s} CPU {cpu[name]:.3f} s  wall {wall[name]:.3f} s  (median of {args.runs})")
    ratios = {
        "matrix cold": ("infx matrix cold", "reference matrix cold"),
        "matrix warm": ("infx matrix warm", "reference matrix warm"),
        "validate": ("infx validate cold", "reference validate"),
    }
    for label, (ours, theirs) in ratios.items():
        by_cpu, by_wall = cpu[ours] / cpu[theirs], wall[ours] / wall[theirs]
        verdict = "met" if by_cpu <= TARGETS[label] else "NOT met"
        print(
            f"{label}: {by_cpu:.2f}x the reference by CPU, {by_wall:.2f}x by wall; target <= {TARGETS[label]}x: "
            f"{verdict}"
        )
    print(f"validate warm: {cpu['infx validate warm'] / cpu['reference validate']:.2f}x by CPU")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
