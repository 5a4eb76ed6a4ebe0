"""Benchmark: the full matrix of the reference corpus, and a synthetic corpus 10× larger.

    python3 bench/matrix_expand.py [--runs N]

Targets (issue 3): `infx matrix --format json` on both corpus master files under 0.3 s
wall per run including interpreter start; the 10× corpus under 10× that time (linear).
Runs use a warm infx cache (parsed configs, recipe node counts) after one warm-up run; the
cold figure (INFX_NO_CACHE=1) is printed for reference. bench/reference_pair.py pairs the
same command with the reference's generator, cold and warm.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench.harness import report, time_command  # noqa: E402
from testing.corpus import CORPUS, patched_corpus  # noqa: E402

MASTERS = ("nvidia-master.yaml", "amd-master.yaml")
TARGET_S = 0.3
SCALE = 10


def scaled_copy(repo: Path, destination: Path, factor: int) -> Path:
    """The corpus with every master entry repeated ``factor`` times under new keys."""
    (destination / "configs").mkdir(parents=True)
    for name in ("runners.yaml", "components.yaml"):
        if (repo / "configs" / name).is_file():  # the corpus has no components.yaml: the shipped policy
            (destination / "configs" / name).write_bytes((repo / "configs" / name).read_bytes())
    (destination / "benchmarks").symlink_to(repo / "benchmarks")
    for master in MASTERS:
        entries = yaml.load((repo / "configs" / master).read_text(), Loader=yaml.CSafeLoader)
        scaled = {f"{key}-x{copy}": value for copy in range(factor) for key, value in entries.items()}
        (destination / "configs" / master).write_text(yaml.dump(scaled, Dumper=yaml.CSafeDumper, sort_keys=False))
    return destination


def cpu_seconds(argv: list[str], cwd: Path, env: dict, runs: int) -> float:
    """Median user+sys CPU time of the process: wall time minus what other load on the machine adds."""
    samples = []
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), **env}
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, cwd=cwd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        samples.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        repo = patched_corpus(CORPUS, tmp_path / "corpus")
        big = scaled_copy(repo, tmp_path / "corpus-x10", SCALE)
        env = {"INFX_CACHE_DIR": str(tmp_path / "cache")}
        argv = [sys.executable, "-m", "infx", "matrix", "--format", "json"] + [
            arg for master in MASTERS for arg in ("--config", f"configs/{master}")
        ]
        cold = time_command(argv, runs=3, warmup=0, cwd=repo, env={"INFX_NO_CACHE": "1"})
        base = time_command(argv, runs=args.runs, warmup=1, cwd=repo, env=env)
        scaled = time_command(argv, runs=max(3, args.runs // 3), warmup=1, cwd=big, env=env)
        cpu = cpu_seconds(argv, repo, env, args.runs)
    print(report("matrix, corpus (1820 rows), cold cache", cold))
    print(report("matrix, corpus (1820 rows)", base, TARGET_S))
    print(report(f"matrix, corpus x{SCALE} (18200 rows)", scaled, SCALE * base["median"]))
    print(f"ratio x{SCALE} / x1: {scaled['median'] / base['median']:.2f} (linear: < {SCALE})")
    print(
        f"matrix, corpus (1820 rows): median CPU time (user+sys) {cpu:.3f} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
