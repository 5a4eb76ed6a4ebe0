"""The reference corpus with its few real defects patched, as a temporary repository.

The defects (see docs/config.md) are patched here in one place so every test that needs a
clean corpus (validation, the 1820-row expansion, the changelog gate) uses the same data.
"""

from __future__ import annotations

import shutil
from pathlib import Path

# Third-party data the suite reads, kept in the repository (sources and licences: data/NOTICE.md).
DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "inferencex-2026-08"
HISTORY_BUNDLE = DATA / "inferencex-2026-08-changelog-history.bundle"
SRT_SLURM_BUNDLE = DATA / "srt-slurm" / "nvidia-srt-slurm.bundle"

# Runner labels the corpus master configs use but its runners.yaml does not declare.
MISSING_RUNNER_LABELS = {
    "gb300-nv": ["gb300-nv_0", "gb300-nv_1", "gb300-nv_2"],
    "h200-dgxc": ["h200-dgxc-slurm_0", "h200-dgxc-slurm_1"],
    "cluster:mi325x-tw": ["mi325x-tw_0"],
}


# disagg: true entries whose first point is an aggregated recipe (prefill + decode num-worker 0):
# the point moves to its own `<key>-agg` entry with disagg: false, placed just before the
# original so the expanded rows keep their order.
AGGREGATED_POINT_IN_DISAGG = ["dsv4-fp4-gb200-dynamo-vllm-mtp2", "dsv4-fp4-gb200-dynamo-vllm-mtp2-nosynthetic"]
_AGG_POINT_MARK = "      # Aggregate low latency: TP=8, max-num-seqs=4.\n"


def _split_aggregated_point(text: str, key: str) -> str:
    start = text.index(f"\n{key}:\n") + 1
    point_start = text.index(_AGG_POINT_MARK, start)
    end = text.index("\n\n", point_start)  # the point ends at the blank line before the next one
    header = text[start : text.index("      search-space:\n", start) + len("      search-space:\n")]
    header = header.replace(f"{key}:\n", f"{key}-agg:\n", 1).replace("  disagg: true\n", "  disagg: false\n", 1)
    point = text[point_start : end + 1]
    return text[:start] + header + point + "\n" + text[start:point_start] + text[end + 2 :]


def patched_corpus(corpus: Path, destination: Path) -> Path:
    """Copy configs, recipes and changelog of the corpus to ``destination`` and patch them."""
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
    master = destination / "configs" / "nvidia-master.yaml"
    text = master.read_text()
    for key in AGGREGATED_POINT_IN_DISAGG:
        text = _split_aggregated_point(text, key)
    master.write_text(text)
    components = Path(__file__).resolve().parent.parent / "configs" / "components.yaml"
    shutil.copy(components, destination / "configs" / "components.yaml")
    return destination
