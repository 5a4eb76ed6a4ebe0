"""The reference corpus with its one real defect patched, as a temporary repository.

The defect (undeclared runner labels, see docs/config.md) is patched here in one place so
every test that needs a valid corpus (validation, the 1820-row expansion, the changelog
gate) uses the same data. Nothing else changes: no components.yaml (infx uses the policy
it ships), the aggregated points inside disagg entries stay where they are.
"""

from __future__ import annotations

import shutil
from pathlib import Path

# Third-party data the suite reads, kept in the repository (sources and licences: data/NOTICE.md).
DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "inferencex-2026-08"
HISTORY_BUNDLE = DATA / "inferencex-2026-08-changelog-history.bundle"
SRT_SLURM_BUNDLE = DATA / "srt-slurm" / "nvidia-srt-slurm.bundle"
# The reference generator's rows for the corpus with the runner labels declared (data/NOTICE.md).
REFERENCE_ROWS = DATA / "inferencex-2026-08-reference-rows.json.gz"

# Runner labels the corpus master configs use but its runners.yaml does not declare.
MISSING_RUNNER_LABELS = {
    "gb300-nv": ["gb300-nv_0", "gb300-nv_1", "gb300-nv_2"],
    "h200-dgxc": ["h200-dgxc-slurm_0", "h200-dgxc-slurm_1"],
    "cluster:mi325x-tw": ["mi325x-tw_0"],
}

def patched_corpus(corpus: Path, destination: Path) -> Path:
    """Copy configs, recipes and changelog of the corpus to ``destination`` and declare the runner labels."""
    shutil.copytree(corpus / "configs", destination / "configs")
    shutil.copytree(corpus / "benchmarks", destination / "benchmarks")
    shutil.copy(corpus / "perf-changelog.yaml", destination / "perf-changelog.yaml")
    for path in destination.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    runners = destination / "configs" / "runners.yaml"
    text = runners.read_text()
    extra = "".join(
        f"  {label}:\n" + "".join(f"    - {node}\n" for node in nodes) for label, nodes in MISSING_RUNNER_LABELS.items()
    )
    runners.write_text(text.replace("labels:\n", "labels:\n" + extra, 1))
    return destination
