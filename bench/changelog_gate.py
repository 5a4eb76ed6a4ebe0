"""Benchmark: `infx changelog validate` and `infx plan` for one appended entry on the real
395 KB changelog and the corpus configs (target: each under 0.4 s wall, interpreter start
included; the reference's gate takes about 2.4 s).

    python3 bench/changelog_gate.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench.harness import REPO, report, time_command  # noqa: E402
from testing.corpus import CORPUS, patched_corpus  # noqa: E402

ENTRY = (
    b'\n- config-keys:\n    - dsr1-fp8-h200-sglang\n  description:\n    - "Synthetic append for gate timing"\n'
    b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n"
)
TARGET = 0.4


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=b@example.invalid", "-c", "user.name=bench", *args],
        check=True,
        capture_output=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        repo = patched_corpus(CORPUS, Path(folder) / "repo")
        shutil.copy(REPO / "configs" / "infx.yaml", repo / "configs" / "infx.yaml")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        with open(repo / "perf-changelog.yaml", "ab") as changelog:
            changelog.write(ENTRY)
        git(repo, "commit", "-qam", "append one entry")
        print(f"changelog: {(repo / 'perf-changelog.yaml').stat().st_size:,} bytes; configs: corpus (patched)")
        refs = ["--base-ref", "HEAD~1", "--head-ref", "HEAD", "--pr-number", "42"]
        python = [sys.executable, "-m", "infx"]
        for name, argv in (
            ("infx changelog validate", python + ["changelog", "validate", *refs]),
            ("infx plan --format json", python + ["plan", *refs, "--format", "json"]),
        ):
            print(report(name, time_command(argv, runs=runs, warmup=1, cwd=repo), TARGET))
        # The working tree's configs differ from the ref: they are materialised with `git archive`.
        (repo / "configs" / "local-edit.yaml").write_text("# an uncommitted file\n")
        print(
            report(
                "infx changelog validate (configs materialised from the ref)",
                time_command(python + ["changelog", "validate", *refs], runs=runs, warmup=1, cwd=repo),
            )
        )


if __name__ == "__main__":
    main()
