"""Per-point artifact folders -> result rows in the reference's aggregate-row shape, plus a
verdict per point.

A folder is what run-point.yml uploads: the launch record `<name>_launch.json` (the point,
the lane, the srt-slurm pin, the Slurm job and how it ended) and the staged result files,
`<name>_<dir>_conc<C>_gpus_<G>[_ctx_<P>_gen_<D>].json` (sa-bench, fixed sequence lengths) or
`<name>_conc<C>.json` (AgentX aggregates), and for an eval point its `eval/` folder. Each folder
is read once as a PointArtifact and judged by its one validity rule (artifact.py); rows.py makes
the rows. Whatever one folder holds becomes that point's verdict: collecting never stops at a
point.

Eval rows (results.json's `evals`, infx/results/evals/) come from the eval points' artifacts
(their rows only when the point's verdict is ok; the folder's problems always) and from eval
folders on their own (`meta_env.json` and lm-eval's results, no launch record). A point collected
twice (a re-run of its job uploads another artifact of it) keeps the newest run's eval set, and no
point, concurrency and task gives two rows.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..diagnostics import Diagnostic, UsageError, error
from ..launch.record import SUFFIX as RECORD_SUFFIX
from .artifact import FAILED, INVALID, OK, PointArtifact, Verdict
from .evals.folder import META_ENV, read_eval_set
from .evals.rows import EvalCollection, EvalSet


@dataclass(frozen=True)
class PointVerdict:
    """What became of one point, as results.json lists it: ok, invalid (a result that is not
    one) or failed (no result), with the reasons. Its fields are results.schema.json's `verdict`."""

    artifact: str
    status: str
    reasons: list[str] = field(default_factory=list)
    point_id: str | None = None
    config_key: str | None = None
    conc: list[int] = field(default_factory=list)
    rows: int = 0

    @classmethod
    def of(cls, artifact: PointArtifact, verdict: Verdict) -> PointVerdict:
        record = artifact.record
        return cls(
            artifact.name,
            verdict.status,
            list(verdict.reasons),
            record.point_id if record else None,
            record.config_key if record else None,
            record.concurrencies if record else [],
            len(verdict.rows),
        )

    def to_json(self) -> dict:
        return {
            "artifact": self.artifact,
            "status": self.status,
            "reasons": self.reasons,
            "point-id": self.point_id,
            "config-key": self.config_key,
            "conc": self.conc,
            "rows": self.rows,
        }

    @classmethod
    def from_json(cls, data: dict) -> PointVerdict:
        """A verdict results.schema.json accepted."""
        return cls(
            data["artifact"],
            data["status"],
            list(data.get("reasons") or []),
            data.get("point-id"),
            data.get("config-key"),
            list(data.get("conc") or []),
            int(data.get("rows") or 0),
        )

    @property
    def reason(self) -> str:
        """One line: the reasons joined."""
        return "; ".join(self.reasons).replace("\n", " ")


@dataclass
class Collected:
    rows: list[dict] = field(default_factory=list)
    points: list[PointVerdict] = field(default_factory=list)
    evals: EvalCollection = field(default_factory=EvalCollection)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [
            error(
                p.artifact,
                None,
                f"result-{p.status}",
                f"point {p.point_id or '?'} ({p.config_key or 'unknown config key'}): {p.reason}",
                HINTS[p.status],
            )
            for p in self.points
            if p.status != OK
        ]

    def to_json(self) -> dict:
        return {"rows": self.rows, "points": [p.to_json() for p in self.points], "evals": self.evals.to_json()}


HINTS = {
    INVALID: "The point ran but its result cannot be used; rerun it (infx github rerun-failed) after reading its logs.",
    FAILED: "The launch did not produce a result; its launch record and multinode_server_logs.tar.gz say why.",
}


def _is_dir(path: Path) -> bool:
    """A folder, not a link to one (an artifact's folders are real folders)."""
    return path.is_dir() and not path.is_symlink()


def is_artifact_folder(folder: Path) -> bool:
    try:
        return _is_dir(folder) and any(name.endswith(RECORD_SUFFIX) for name in os.listdir(folder))
    except OSError:
        return False


def expand_folders(paths: list[Path]) -> list[Path]:
    """Each argument is a point's folder (or an eval folder on its own), or a folder of downloaded
    point folders (what actions/download-artifact writes: one subfolder per artifact, nothing
    else). A folder that cannot be listed is taken as a point's, whose verdict then says why."""
    folders = []
    for path in paths:
        if is_artifact_folder(path) or not _is_dir(path):
            folders.append(path)
            continue
        try:
            children = sorted(os.scandir(path), key=lambda entry: entry.name)
        except OSError:
            folders.append(path)
            continue
        subfolders = [Path(entry.path) for entry in children if entry.is_dir(follow_symlinks=False)]
        if subfolders and len(subfolders) == len(children):
            folders.extend(subfolders)
        elif children:  # files of its own: a point's folder without a launch record (failed), or an eval folder
            folders.append(path)
        # an empty folder (no artifact was downloaded) holds no point
    return folders


def is_eval_folder(folder: Path) -> bool:
    """An eval folder on its own: `meta_env.json` (a regular file) and no launch record."""
    try:
        return stat.S_ISREG(os.lstat(folder / META_ENV).st_mode) and not is_artifact_folder(folder)
    except OSError:
        return False


class PointCollected(NamedTuple):
    """One point folder, collected: its rows (only when ok), its verdict, an eval point's eval set
    (rows only when ok) and its launch's (run id, run attempt): the newest of two copies wins."""

    rows: list[dict]
    verdict: PointVerdict
    evals: EvalSet | None = None
    key: str | None = None  # the point's result key, else its point id
    run: tuple[int, int] = (0, 0)


def collect_point(folder: Path) -> PointCollected:
    """One folder's rows (only when its verdict is ok) and its verdict. Reading and judging never
    raise for what a folder holds; should infx itself fail on one, that point says so (a bug to
    report) and the others are still collected."""
    try:
        artifact = PointArtifact.read(folder)
        verdict = artifact.verdict()
    except Exception as exc:  # noqa: BLE001 - one point's bug must not lose the sweep's results.json
        return PointCollected(
            [],
            PointVerdict(
                folder.name,
                INVALID,
                [
                    f"internal error while judging this point ({type(exc).__name__}: {exc}); "
                    "this is a bug in infx, please report it"
                ],
            ),
        )
    evals = verdict.evals if verdict.evals is None or verdict.ok else verdict.evals.without_rows()
    record = artifact.record
    key, run = (
        (record.result_key or record.point_id, (record.run_id or 0, record.run_attempt or 0))
        if record
        else (None, (0, 0))
    )
    return PointCollected(list(verdict.rows), PointVerdict.of(artifact, verdict), evals, key, run)


@dataclass(frozen=True)
class CollectRequest:
    """`infx results collect`: the points' artifact folders, or folders of them."""

    artifacts: tuple[Path, ...]


def collect_artifacts(request: CollectRequest) -> Collected:
    """collect() of the named folders; a name that does not exist is a usage error (exit 2)."""
    missing = [str(p) for p in request.artifacts if not p.exists()]
    if missing:
        raise UsageError(
            f"no such folder: {', '.join(missing)}", "Pass the folders run-point.yml uploads (point-<id>/)."
        )
    return collect(list(request.artifacts))


def collect(paths: list[Path]) -> Collected:
    result = Collected()
    loose: list[EvalSet] = []
    newest: dict[str, tuple[tuple, EvalSet]] = {}  # point key -> (its launch's run, attempt; the set)
    for folder in expand_folders(paths):
        if is_eval_folder(folder):
            loose.append(read_eval_set(folder))
            continue
        point = collect_point(folder)
        result.rows.extend(point.rows)
        result.points.append(point.verdict)
        if point.evals is None:
            continue
        key = point.key or point.evals.folder
        order = (point.run, bool(point.evals.rows), -len(point.evals.problems))
        if key not in newest or order > newest[key][0]:
            newest[key] = (order, point.evals)
    result.evals = EvalCollection(tuple(found for _, found in newest.values()) + tuple(loose)).without_duplicate_rows()
    return result
