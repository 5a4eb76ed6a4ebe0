"""Eval folders for the tests: copies of the lm-eval fixtures (tests/data/results/evals/, written by the
real lm-eval against tests/testing/lm_eval_standin.py), edited where a test needs a fault, and point
artifacts holding one under `eval/`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from testing.artifacts import DATA, point_folder

EVALS = DATA / "evals"
FLAT, BATCHED, FAILED = "flat", "batched", "batched-failed"
# What the stand-in was told to answer in each run (tests/testing/lm_eval_standin.py FOLDERS): the scores lm-eval must
# report.
FLAT_NEWER = (1194 / 1319, 1240 / 1319)  # (strict, flexible): the reference's own example, 0.9052 / 0.9401
FLAT_OLDER = (1031 / 1319, 1100 / 1319)  # 0.7817, the re-run's first attempt
BATCHED_SCORES = {16: (0.91, 0.95), 32: (0.93, 0.96)}  # 16's first attempt read 0.85 / 0.89
FAILED_SCORES = {16: (0.94, 0.97), 32: (0.92, 0.95)}  # 64: lm-eval failed, no file


def copy_set(name: str, dest: Path) -> Path:
    """A copy of the fixture folder ``name`` at ``dest`` (file times as the copy makes them)."""
    shutil.copytree(EVALS / name, dest)
    return dest


def results_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("results_*.json"))


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def write(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1))


def edit_meta(folder: Path, **changes) -> None:
    meta = read(folder / "meta_env.json")
    for key, value in changes.items():
        if value is ...:
            meta.pop(key, None)
        else:
            meta[key] = value
    write(folder / "meta_env.json", meta)


def eval_point(root: Path, set_name: str, row: dict, run_id: int = 4242) -> Path:
    """A point artifact (launch record from ``row``) with the fixture folder ``set_name`` as its eval/."""
    folder = point_folder(root, row, {}, run_id=run_id, eval_results=False)
    copy_set(set_name, folder / "eval")
    return folder


def results_json(path: Path, evals: dict) -> Path:
    """results.json as collect writes it, with ``evals`` (EvalCollection.to_json())."""
    path.write_text(json.dumps({"format": "infx-results/1", "rows": [], "points": [], "evals": evals}, indent=1))
    return path
