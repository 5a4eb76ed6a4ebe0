"""Per-point artifact folders -> result rows in the reference's aggregate-row shape, plus a
verdict per point.

A folder is what run-point.yml uploads: the launch record `<name>_launch.json` (the point,
the lane, the srt-slurm pin, the Slurm job and how it ended) and the staged result files,
`<name>_<dir>_conc<C>_gpus_<G>[_ctx_<P>_gen_<D>].json` (sa-bench, fixed sequence lengths) or
`<name>_conc<C>.json` (AgentX aggregates). Each folder is read once as a PointArtifact and
judged by its one validity rule (artifact.py); rows.py makes the rows. Whatever one folder
holds becomes that point's verdict: collecting never stops at a point.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, error
from ..launch.record import SUFFIX as RECORD_SUFFIX
from .artifact import FAILED, INVALID, OK, PointArtifact, Verdict


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
    def of(cls, artifact: PointArtifact, verdict: Verdict) -> "PointVerdict":
        record = artifact.record
        return cls(artifact.name, verdict.status, list(verdict.reasons), record.point_id if record else None,
                   record.config_key if record else None, record.concurrencies if record else [], len(verdict.rows))

    def to_json(self) -> dict:
        return {"artifact": self.artifact, "status": self.status, "reasons": self.reasons, "point-id": self.point_id,
                "config-key": self.config_key, "conc": self.conc, "rows": self.rows}

    @classmethod
    def from_json(cls, data: dict) -> "PointVerdict":
        """A verdict results.schema.json accepted."""
        return cls(data["artifact"], data["status"], list(data.get("reasons") or []), data.get("point-id"),
                   data.get("config-key"), list(data.get("conc") or []), int(data.get("rows") or 0))

    @property
    def reason(self) -> str:
        """One line: the reasons joined."""
        return "; ".join(self.reasons).replace("\n", " ")


@dataclass
class Collected:
    rows: list[dict] = field(default_factory=list)
    points: list[PointVerdict] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [error(p.artifact, None, f"result-{p.status}",
                      f"point {p.point_id or '?'} ({p.config_key or 'unknown config key'}): {p.reason}",
                      HINTS[p.status]) for p in self.points if p.status != OK]

    def to_json(self) -> dict:
        return {"rows": self.rows, "points": [p.to_json() for p in self.points]}


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
    """Each argument is a point's folder, or a folder of downloaded point folders (what
    actions/download-artifact writes: one subfolder per artifact). A folder that cannot be
    listed is taken as a point's, whose verdict then says why."""
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
        if subfolders:
            folders.extend(subfolders)
        elif children:  # a point's folder without a launch record: reported as failed
            folders.append(path)
        # an empty folder (no artifact was downloaded) holds no point
    return folders


def collect_point(folder: Path) -> tuple[list[dict], PointVerdict]:
    """One folder's rows (only when its verdict is ok) and its verdict. Reading and judging never
    raise for what a folder holds; should infx itself fail on one, that point says so (a bug to
    report) and the others are still collected."""
    try:
        artifact = PointArtifact.read(folder)
        verdict = artifact.verdict()
    except Exception as exc:  # noqa: BLE001 - one point's bug must not lose the sweep's results.json
        return [], PointVerdict(folder.name, INVALID, [f"internal error while judging this point ({type(exc).__name__}: {exc}); "
                                                       "this is a bug in infx, please report it"])
    return list(verdict.rows), PointVerdict.of(artifact, verdict)


def collect(paths: list[Path]) -> Collected:
    result = Collected()
    for folder in expand_folders(paths):
        rows, verdict = collect_point(folder)
        result.rows.extend(rows)
        result.points.append(verdict)
    return result
