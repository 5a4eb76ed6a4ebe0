"""Reuse: a planned point whose result key already has a valid result is not run again.

A point's artifact is named after its result key (`point-<key>`, `point-<key>-failed` when the
launch failed), so finding a result is a lookup by name. A stored result counts only when it is
usable (not expired, young enough, from a trusted run) and valid (its launch record carries the
key and exit code 0, and every concurrency the point planned has a result file); the newest
usable valid one wins. Everything else is dispatched. Pure: candidates in, a decision out;
listing and downloading artifacts happen in ``api.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..points import point_id
from .report import row_gpu_hours

RESULT_ARTIFACT_PREFIX = "point-"
FAILED_SUFFIX = "-failed"
RESULT_KEY = re.compile(r"[0-9a-f]{64}")
RESULT_ARTIFACT = re.compile(rf"{RESULT_ARTIFACT_PREFIX}(?P<key>[0-9a-f]{{64}})")
LAUNCH_RECORD_GLOB = "*_launch.json"


def result_artifact_name(key: str, succeeded: bool = True) -> str:
    return f"{RESULT_ARTIFACT_PREFIX}{key}{'' if succeeded else FAILED_SUFFIX}"


def key_of_artifact(name: str) -> str | None:
    """The result key a successful point's artifact is named after (None for any other name)."""
    match = RESULT_ARTIFACT.fullmatch(name)
    return match["key"] if match else None


@dataclass(frozen=True)
class Stored:
    """One artifact that may hold a point's result."""

    key: str
    artifact: str
    source_run: int | None = None
    created_at: dt.datetime | None = None
    folder: Path | None = None  # its contents, once downloaded
    refusal: str = ""  # why it may not be used at all ("" = usable if valid)
    handle: object = None  # the API's artifact object, for downloading (opaque here)


@dataclass
class Decision:
    reused: list[dict] = field(default_factory=list)
    dispatch: list[dict] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # point id -> why it is dispatched

    @property
    def gpu_hours_saved(self) -> float:
        return round(sum(item["gpu-hours"] for item in self.reused), 1)

    def to_json(self) -> dict:
        return {"reused": self.reused, "dispatch": self.dispatch, "dispatch-reasons": self.reasons,
                "gpu-hours-saved": self.gpu_hours_saved}


def _conc_list(row: dict) -> list:
    conc = row.get("conc")
    return conc if isinstance(conc, list) else [conc]


def judge(folder: Path, key: str, row: dict) -> str | None:
    """None when ``folder`` holds a valid result of ``row`` under ``key``, else why not."""
    records = sorted(folder.glob(LAUNCH_RECORD_GLOB)) if folder.is_dir() else []
    if len(records) != 1:
        return f"{len(records)} launch records in the artifact (expected 1)"
    try:
        record = json.loads(records[0].read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return f"{records[0].name} is not readable JSON"
    if not isinstance(record, dict):
        return f"{records[0].name} is not a launch record"
    if record.get("result-key") != key:
        return f"its launch record is for result key {record.get('result-key')!r}, not {key}"
    if record.get("exit-code") != 0:
        return f"the launch did not succeed (exit code {record.get('exit-code')!r}: {str(record.get('message', ''))[:200]})"
    files = [name for name in record.get("results") or [] if isinstance(name, str) and (folder / Path(name).name).is_file()]
    for conc in _conc_list(row):
        marker = re.compile(rf"_conc{re.escape(str(conc))}(?:_|\.json$)")
        if not any(marker.search(name) for name in files):
            return f"no result file for concurrency {conc}"
    return None


def select(rows: list[dict], keys: dict[int, tuple[str | None, str]], stored: dict[str, list[Stored]],
           fetch: Callable[[Stored], Path | None] = lambda item: item.folder) -> Decision:
    """Reuse or dispatch, per planned row; ``fetch`` brings a candidate's folder (download)."""
    decision = Decision()
    for index, row in enumerate(rows):
        key, why = keys.get(index, (None, "no result key"))
        pid = point_id(row)
        if key is None:
            decision.dispatch.append(row)
            decision.reasons[pid] = f"no result key: {why}"
            continue
        reasons = []
        newest_first = sorted(stored.get(key, []), key=lambda s: (s.created_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc)),
                              reverse=True)
        for candidate in newest_first:
            if candidate.refusal:
                reasons.append(f"{candidate.artifact} of run {candidate.source_run}: {candidate.refusal}")
                continue
            folder = fetch(candidate)
            problem = judge(folder, key, row) if folder is not None else "its contents could not be read"
            if problem is None:
                decision.reused.append({"point-id": pid, "result-key": key, "source-run": candidate.source_run,
                                        "artifact": candidate.artifact, "folder": str(folder),
                                        "gpu-hours": round(row_gpu_hours(row), 1)})
                break
            reasons.append(f"{candidate.artifact} of run {candidate.source_run}: {problem}")
        else:
            decision.dispatch.append({**row, "result-key": key})
            decision.reasons[pid] = "; ".join(reasons) or "no stored result under its key"
    return decision


def stored_in_folder(root: Path, max_age_days: float | None = None, now: dt.datetime | None = None) -> dict[str, list[Stored]]:
    """Candidates from a folder of downloaded artifacts (``<root>/point-<key>/…``)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    found: dict[str, list[Stored]] = {}
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        key = key_of_artifact(folder.name)
        if key is None or not folder.is_dir():
            continue
        run, created = None, None
        for record_path in folder.glob(LAUNCH_RECORD_GLOB):
            try:
                record = json.loads(record_path.read_text(encoding="utf-8"))
                run = record.get("run-id") if isinstance(record.get("run-id"), int) else None
                created = dt.datetime.fromisoformat(record["timings"]["finished"])
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                pass
        found.setdefault(key, []).append(Stored(key, folder.name, run, created, folder,
                                                refusal_for_age(created, max_age_days, now)))
    return found


def refusal_for_age(created_at: dt.datetime | None, max_age_days: float | None, now: dt.datetime) -> str:
    if max_age_days is None or created_at is None:
        return ""
    age = (now - created_at).total_seconds() / 86400
    return f"{age:.1f} days old, older than --max-age {max_age_days:g}" if age > max_age_days else ""
