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
    rows = build_matrix(
        config_set, selection=Selection(runner_types=labels, node_types=("multi-node",)), evals=EvalMode.NONE
    )
    return [row for row in rows if "prefill" in row]


def write_points(directory: Path, root: Path | None = None, rows: list[dict] | None = None) -> list[Path]:
    """One JSON file per row (default: :func:`gb300_points`)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, row in enumerate(gb300_points(root) if rows is None else rows):
        path = directory / f"point-{index:03d}.json"
        path.write_text(json.dumps(row, indent=1))
        paths.append(path)
    return paths


def gb300_eval_points(root: Path | None = None) -> list[dict]:
    """The gb300-nv eval rows of ``configs/nvidia-master.yaml``: those the default matrix marks
    ``run-eval`` (an eval after the benchmark), then the eval-only rows of ``--evals-only`` and of
    ``--all-evals`` (what the sweep dispatches for evals), each distinct launch once."""
    from infx.config import load_config_set
    from infx.launch.lane import read_entry
    from infx.matrix import EvalMode, Selection, build_matrix
    from infx.points import point_id

    config_set, report = load_config_set(root=root)
    assert config_set is not None, report.sorted()
    selection = Selection(
        runner_types=read_entry(Path(root or ".") / "runners" / f"{LANE}.yaml").labels, node_types=("multi-node",)
    )
    rows = [row for row in build_matrix(config_set, selection=selection) if row.get("run-eval")]
    seen = set()
    for mode in (EvalMode.ONLY, EvalMode.ONLY | EvalMode.ALL):
        for row in build_matrix(config_set, selection=selection, evals=mode):
            key = (point_id(row), row.get("eval-conc"), bool(row.get("eval-all-concs")))
            if key not in seen:
                seen.add(key)
                rows.append(row)
    return rows
