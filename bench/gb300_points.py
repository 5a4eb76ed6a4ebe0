"""Hand-built matrix rows for the gb300-nv lane (reference/matrix.md §3.3 shapes).

Until the matrix API (branch ``matrix``) is merged, the launcher's tests and benchmark
build their points here from ``configs/nvidia-master.yaml``: one row per multinode search
entry (fixed-seq: whole conc list; agentic: one row per concurrency).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

LANE_LABELS = ("gb300-nv", "gb300", "cluster:gb300-nv")


def _fingerprint(row: dict) -> str:
    body = {k: v for k, v in row.items() if k not in ("conc", "exp-name", "recipe-fingerprint")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()).hexdigest()


def _worker(block: dict) -> dict:
    return {"pp": 1, "dcp-size": 1, "pcp-size": 1, **block}


def gb300_points(root: Path | None = None) -> list[dict]:
    from infx.config import load_config_set

    config_set, report = load_config_set(root=root)
    assert config_set is not None, report.sorted()
    rows = []
    for key, entry in config_set.entries.items():
        if not entry.get("multinode") or entry.get("runner") not in LANE_LABELS:
            continue
        common = {k: entry[k] for k in ("image", "model", "model-prefix", "precision", "framework", "runner") if k in entry}
        for optional in ("router", "kv-p2p-transfer"):
            if optional in entry:
                common[optional] = entry[optional]
        common.update({"disagg": bool(entry.get("disagg")), "config-key": key, "run-eval": False})
        for scenario, groups in (entry.get("scenarios") or {}).items():
            for group in groups:
                for search in group.get("search-space", []):
                    row = dict(common, **{"spec-decoding": search.get("spec-decoding", "none")})
                    if "worker" in search:
                        row["prefill"] = _worker(search["worker"])
                        row["decode"] = {k: v for k, v in _worker(search["worker"]).items() if k != "additional-settings"}
                        row["decode"]["num-worker"] = 0
                    else:
                        row["prefill"], row["decode"] = _worker(search["prefill"]), _worker(search["decode"])
                    if scenario == "agentic-coding":
                        row.update({"scenario-type": "agentic-coding", "duration": 3600,
                                    "kv-offloading": search.get("kv-offloading", "none"), "total-cpu-dram-gb": 600})
                        concs = [[c] for c in search["conc-list"]]
                    else:
                        row.update({"isl": group["isl"], "osl": group["osl"], "max-model-len": group["isl"] + group["osl"] + 256})
                        concs = [list(search["conc-list"])]
                    for conc in concs:
                        point = dict(row, conc=conc, **{"exp-name": f"{entry['model-prefix']}_{key}"})
                        point["recipe-fingerprint"] = _fingerprint(point)
                        rows.append(point)
    return rows


def write_points(directory: Path, root: Path | None = None) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, row in enumerate(gb300_points(root)):
        path = directory / f"point-{index:03d}.json"
        path.write_text(json.dumps(row, indent=1))
        paths.append(path)
    return paths
