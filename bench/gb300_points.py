"""The gb300-nv points of ``configs/nvidia-master.yaml``, built with the matrix API.

Shared by the launcher's tests and ``bench/launch_dry_run.py``: exactly the rows the sweep
would hand to the lane (every multinode row whose runner label the lane's profile declares).
"""

from __future__ import annotations

import json
from pathlib import Path

LANE = "gb300-nv"


def gb300_points(root: Path | None = None) -> list[dict]:
    from infx.config import load_config_set
    from infx.launch.lane import read_entry
    from infx.matrix import EvalMode, Selection, build_matrix

    config_set, report = load_config_set(root=root)
    assert config_set is not None, report.sorted()
    labels = read_entry(Path(root or ".") / "runners" / f"{LANE}.yaml").labels  # the labels the lane's profile declares
    rows = build_matrix(config_set, selection=Selection(runner_types=labels, node_types=("multi-node",)), evals=EvalMode.NONE)
    return [row for row in rows if "prefill" in row]


def write_points(directory: Path, root: Path | None = None) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, row in enumerate(gb300_points(root)):
        path = directory / f"point-{index:03d}.json"
        path.write_text(json.dumps(row, indent=1))
        paths.append(path)
    return paths
