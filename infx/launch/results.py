"""After the job: stage result files under their workflow names, tar the logs, write the launch record."""

from __future__ import annotations

import json
import os
import re
import shutil
import tarfile
from pathlib import Path

from .. import shapes
from ..fsio import atomic_write, replacing

FIXED_RESULT = re.compile(r"^results_concurrency_(?P<conc>\d+)_gpus_(?P<gpus>\d+)(?:_ctx_(?P<ctx>\d+)_gen_(?P<gen>\d+))?\.json$")


class ResultError(RuntimeError):
    pass


def result_name(point: dict, point_id: str, env: dict | None = None) -> str:
    """The workflow's RESULT_FILENAME when it set one, else a stable default from the point."""
    env = os.environ if env is None else env
    if env.get("RESULT_FILENAME"):
        return shapes.require("name", env["RESULT_FILENAME"], "$RESULT_FILENAME")
    # build_plan refused these already; checked again because every result path is built from it
    shapes.require("name", point.get("exp-name", "point"), "exp-name")
    return shapes.require("name", f"{point.get('exp-name', 'point')}_{point_id}", "the result name")


def stage_fixed_seq(logs_dir: Path, out: Path, name: str) -> list[Path]:
    """``<logs>/<dir with isl and osl>/results_concurrency_N_gpus_G[_ctx_C_gen_D].json`` ->
    ``<out>/<name>_<dir>_concN_gpus_G[_ctx_C_gen_D].json``."""
    staged = []
    for subdir in sorted(p for p in logs_dir.iterdir() if p.is_dir() and "isl" in p.name and "osl" in p.name) if logs_dir.is_dir() else []:
        for result in sorted(subdir.glob("results_concurrency_*.json")):
            match = FIXED_RESULT.match(result.name)
            if not match:
                continue
            suffix = f"conc{match['conc']}_gpus_{match['gpus']}" + (f"_ctx_{match['ctx']}_gen_{match['gen']}" if match["ctx"] else "")
            target = out / f"{name}_{subdir.name}_{suffix}.json"
            shutil.copyfile(result, target)
            staged.append(target)
    if not staged:
        raise ResultError(f"no results_concurrency_*.json found under {logs_dir}/*isl*osl*/")
    return staged


def check_agentic(out: Path, name: str, concs: list) -> list[Path]:
    """Every concurrency of the point has ``<name>_conc<N>.json`` with num_requests_successful > 0."""
    found = []
    for conc in concs:
        path = out / f"{name}_conc{conc}.json"
        if not path.is_file():
            raise ResultError(f"no {path.name} in {out}: the agentic benchmark wrote no aggregate for concurrency {conc}")
        try:
            successful = json.loads(path.read_text()).get("num_requests_successful")
        except (ValueError, AttributeError):
            raise ResultError(f"{path.name} is not a JSON object")
        if not isinstance(successful, (int, float)) or successful <= 0:
            raise ResultError(f"{path.name} has num_requests_successful={successful!r}; no request succeeded")
        found.append(path)
    return found


def tar_logs(logs: Path, out: Path) -> Path:
    """``<out>/multinode_server_logs.tar.gz`` and a ``LOGS/`` copy, written atomically."""
    target = out / "multinode_server_logs.tar.gz"
    with replacing(target) as tmp, tarfile.open(tmp, "w:gz") as tar:
        if logs.is_dir():
            tar.add(logs, arcname=".")
    if logs.is_dir():
        shutil.copytree(logs, out / "LOGS", dirs_exist_ok=True)
    return target


def write_record(path: Path, record: dict) -> None:
    atomic_write(path, json.dumps(record, indent=2, default=str) + "\n")
