"""After the job: stage a point's outputs for upload (the result files under their workflow
names, the logs tarred, the output cleared of links and special files, the launch record).

Nothing here follows a symbolic link or opens a FIFO or device: the job's logs and output are
the job's, and the output folder is uploaded (actions/upload-artifact follows links). What is
left out is returned as lines for the launch record's `skipped`. Whether the staged files are
a valid result is decided by the one validity rule (infx/results/artifact.py), not here.
"""

from __future__ import annotations

import os
import re
import stat
import tarfile
from collections.abc import Mapping
from pathlib import Path

from .. import shapes
from ..fsio import Tree, atomic_write, copy_regular, copy_tree, open_regular, replacing, scan_tree
from ..results.evals.folder import EVAL_FOLDER
from .record import LaunchRecord

FIXED_RESULT = re.compile(
    r"^results_concurrency_(?P<conc>\d+)_gpus_(?P<gpus>\d+)(?:_ctx_(?P<ctx>\d+)_gen_(?P<gen>\d+))?\.json$"
)


def result_name(point: dict, point_id: str, env: Mapping[str, str] | None = None) -> str:
    """The workflow's RESULT_FILENAME when it set one, else a stable default from the point."""
    env = os.environ if env is None else env
    if env.get("RESULT_FILENAME"):
        return shapes.require("name", env["RESULT_FILENAME"], "$RESULT_FILENAME")
    # plan_point refused these already; checked again because every result path is built from it
    shapes.require("name", point.get("exp-name", "point"), "exp-name")
    return shapes.require("name", f"{point.get('exp-name', 'point')}_{point_id}", "the result name")


def _real_folder(path: Path) -> bool:
    """A folder that is not a symbolic link to one (a job's logs may hold links anywhere)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def stage_fixed_seq(logs_dir: Path, out: Path, name: str) -> tuple[list[Path], list[str]]:
    """``<logs>/<dir with isl and osl>/results_concurrency_N_gpus_G[_ctx_C_gen_D].json`` ->
    ``<out>/<name>_<dir>_concN_gpus_G[_ctx_C_gen_D].json``: the staged files, and a line for each
    one left out because it is a symbolic link, FIFO or device (never followed or opened) or
    could not be copied. Whether they are a valid result is the artifact's verdict, not said here."""
    staged: list[Path] = []
    skipped: list[str] = []
    if not _real_folder(logs_dir):
        return staged, skipped
    tree = scan_tree(logs_dir, max_depth=1)
    skipped += tree.problems
    folders = {entry.name for entry in tree.entries if entry.is_folder and "isl" in entry.name and "osl" in entry.name}
    for entry in tree.entries:
        folder, _, file_name = entry.name.rpartition("/")
        match = FIXED_RESULT.match(file_name)
        if folder not in folders or not match:
            continue
        suffix = f"conc{match['conc']}_gpus_{match['gpus']}" + (
            f"_ctx_{match['ctx']}_gen_{match['gen']}" if match["ctx"] else ""
        )
        target = out / f"{name}_{folder}_{suffix}.json"
        if not entry.is_file:
            skipped.append(f"{logs_dir.name}/{entry.name}: {entry.kind}, not followed or staged")
            continue
        try:
            copy_regular(logs_dir / entry.name, target)
        except OSError as exc:
            skipped.append(f"{logs_dir.name}/{entry.name}: not staged ({exc.strerror or exc})")
            continue
        staged.append(target)
    return staged, skipped


def check_agentic(out: Path, name: str, concs: list) -> list[Path]:
    """The AgentX aggregates the benchmark wrote for the point's concurrencies,
    ``<out>/<name>_conc<N>.json``, that are regular files (a link or FIFO in their place is left
    to the output sweep and the verdict). Whether they are a valid result is the verdict's."""
    found = []
    for conc in concs:
        path = out / f"{name}_conc{conc}.json"
        try:
            regular = stat.S_ISREG(os.lstat(path).st_mode)
        except OSError:
            regular = False
        if regular:
            found.append(path)
    return found


EVAL_RESULTS = "eval_results"  # srt-slurm's lm-eval stage copies its outputs to the job's /logs/eval_results/


def stage_eval(job_logs: Path, out: Path) -> tuple[list[str], list[str]]:
    """An eval point's outputs, as srt-slurm's lm-eval stage leaves them in the job's logs
    (``<job logs>/eval_results/``: meta_env.json, lm-eval's results*.json and samples*.jsonl) ->
    ``<out>/eval/``, where the artifact's verdict and `infx results collect` read them. Regular
    files and folders only; returns the staged files (``eval/<name>``) and a line for each thing
    left out (a link, FIFO or device is never followed or opened)."""
    source = job_logs / EVAL_RESULTS
    if not (_real_folder(job_logs) and _real_folder(source)):
        return [], []
    target = out / EVAL_FOLDER
    skipped = copy_tree(source, target)
    staged = [f"{EVAL_FOLDER}/{entry.name}" for entry in scan_tree(target).entries if entry.is_file]
    return staged, skipped


LOGS_TARBALL, LOGS_COPY = "multinode_server_logs.tar.gz", "LOGS"


def tar_logs(logs: Path, out: Path) -> tuple[Path, list[str]]:
    """``<out>/multinode_server_logs.tar.gz`` (written atomically) and a ``LOGS/`` copy of the
    folders and regular files under ``logs``; a symbolic link, FIFO, device or socket is in
    neither (upload-artifact would follow a link out of the runner's files). Returns the tarball
    and a line per thing left out."""
    target = out / LOGS_TARBALL
    tree = scan_tree(logs) if _real_folder(logs) else Tree(())
    others = tree.others()
    skipped = list(tree.problems) + [
        f"{entry.name}: {entry.kind}, not followed, archived or copied" for entry in others
    ]
    with replacing(target) as tmp, tarfile.open(tmp, "w:gz") as tar:
        tar.addfile(_folder_info(".", logs))
        for entry in tree.entries:
            arcname = f"./{entry.name}"
            if entry.is_folder:
                tar.addfile(_folder_info(arcname, logs / entry.name))
            elif entry.is_file:
                try:
                    handle, _ = open_regular(logs / entry.name, follow_symlinks=False)
                except OSError as exc:
                    skipped.append(f"{entry.name}: not in the tarball ({exc.strerror or exc})")
                    continue
                with handle:
                    tar.addfile(tar.gettarinfo(arcname=arcname, fileobj=handle), handle)
    if _real_folder(logs):
        said = {f"{entry.name}: {entry.kind}, not copied" for entry in others} | set(tree.problems)
        skipped += [line for line in copy_tree(logs, out / LOGS_COPY) if line not in said]
    return target, skipped


def _folder_info(arcname: str, path: Path) -> tarfile.TarInfo:
    info = tarfile.TarInfo(arcname)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    try:
        info.mtime = int(os.lstat(path).st_mtime)
    except OSError:
        pass
    return info


WORK_FOLDER = ".infx-launch"  # the launch's own checkout and venv when there is no $RUNNER_TEMP: not swept


def clear_output(out: Path) -> list[str]:
    """Remove every symbolic link, FIFO, device and socket under the output folder (what the job
    wrote there next to its results), so the uploaded artifact holds folders and regular files
    only; a line per thing removed (a link is removed, never what it points to)."""
    removed = []
    tree = scan_tree(out)
    for entry in tree.others():
        if entry.name == WORK_FOLDER or entry.name.startswith(WORK_FOLDER + "/"):
            continue
        try:
            os.unlink(out / entry.name)
            removed.append(f"{entry.name}: {entry.kind}, removed from the output (never followed or uploaded)")
        except OSError as exc:
            removed.append(f"{entry.name}: {entry.kind}, could not be removed ({exc.strerror or exc})")
    return removed


def write_record(path: Path, record: dict) -> None:
    """The launch record, written through its type (LaunchRecord: the schema's field names)."""
    atomic_write(path, LaunchRecord.from_json(record).text())
