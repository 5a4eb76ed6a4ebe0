"""Reuse: a planned point whose result key already has a valid result is not run again.

A point's artifact is named after its result key (`point-<key>`, `point-<key>-failed` when the
launch failed), so finding a result is a lookup by name. A stored result counts only when it is
usable (not expired, young enough, from a trusted run) and valid: exactly what `infx results
collect` accepts (the one validity rule, infx/results/artifact.py), from a launch record of the
key; the newest usable valid one wins. Everything else is dispatched. Pure: candidates in, a decision out;
listing and downloading artifacts happen in ``api.py``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..points import point_id
from .actions import REUSED_DIR, row_gpu_hours, runner_temp
from .rerun import ARTIFACT_PREFIX, artifact_name

RESULT_ARTIFACT = re.compile(rf"{re.escape(ARTIFACT_PREFIX)}(?P<key>[0-9a-f]{{64}})")


def result_artifact_name(key: str, succeeded: bool = True) -> str:
    return artifact_name({"result-key": key}, succeeded)


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
    notice: str = ""  # why no stored result could be looked up at all

    @property
    def gpu_hours_saved(self) -> float:
        return round(sum(item["gpu-hours"] for item in self.reused), 1)

    def to_json(self) -> dict:
        return {"reused": self.reused, "dispatch": self.dispatch, "dispatch-reasons": self.reasons,
                "gpu-hours-saved": self.gpu_hours_saved, **({"notice": self.notice} if self.notice else {})}


def judge(folder: Path, key: str, row: dict) -> str | None:
    """None when ``folder`` holds a valid result under ``key``, else why not: exactly the
    validity rule `infx results collect` applies (PointArtifact.verdict), plus that the launch
    record is of this key. The key covers the point (its concurrencies included), so a record of
    ``key`` is a record of ``row``."""
    from ..results.artifact import PointArtifact

    try:
        verdict = PointArtifact.read(folder).verdict(result_key=key)
    except Exception as exc:  # noqa: BLE001 - as in collect: one stored result never stops the plan; it is dispatched
        return f"could not be checked (internal error: {type(exc).__name__}: {exc}); this is a bug in infx, please report it"
    return None if verdict.ok else f"{verdict.status}: {verdict.reason}"


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
    """Candidates from a folder of downloaded artifacts (``<root>/point-<key>/…``); their run and
    age from the launch record when it reads (judge says why when it does not)."""
    from ..launch.record import SUFFIX, LaunchRecord

    now = now or dt.datetime.now(dt.timezone.utc)
    found: dict[str, list[Stored]] = {}
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        key = key_of_artifact(folder.name)
        if key is None or not folder.is_dir() or folder.is_symlink():
            continue
        run, created = None, None
        records = [path for path in folder.glob(f"*{SUFFIX}")]
        if len(records) == 1:
            try:
                record = LaunchRecord.read(records[0])
                run, created = record.run_id, record.finished_at
            except (OSError, ValueError):  # unreadable: judged (and refused) later, with the reason
                pass
        found.setdefault(key, []).append(Stored(key, folder.name, run, created, folder,
                                                refusal_for_age(created, max_age_days, now)))
    return found


def refusal_for_age(created_at: dt.datetime | None, max_age_days: float | None, now: dt.datetime) -> str:
    if max_age_days is None or created_at is None:
        return ""
    age = (now - created_at).total_seconds() / 86400
    return f"{age:.1f} days old, older than --max-age {max_age_days:g}" if age > max_age_days else ""


# --- the whole decision for a plan: keys, stored results, reuse or dispatch ------------------------


@dataclass(frozen=True)
class FolderSource:
    """Stored results in a folder of downloaded artifacts."""

    folder: Path
    max_age_days: float | None = None


@dataclass(frozen=True)
class GitHubSource:
    """Stored results among the repository's artifacts, from trusted runs only (api.RunTrust)."""

    slug: str
    pr_number: int | None = None  # the PR being swept: its commits are trusted
    push_commit: str | None = None  # a commit pushed to main: the commits of the PR it merged are trusted
    main_ref: str = "main"
    download_dir: Path = field(default_factory=lambda: runner_temp(REUSED_DIR))
    max_age_days: float | None = None


def lane_resolver(root: Path):
    """Row -> its Lane, by the one lane-resolution rule; each profile loaded once."""
    from ..launch.lane import find_lane, load_lane

    lanes: dict = {}

    def lane_of(row: dict):
        path = find_lane(root, runner=row.get("runner"))
        if path not in lanes:
            lanes[path] = load_lane(str(path), root)
        return lanes[path]

    return lane_of


def decide(rows: list[dict], root: Path, source: FolderSource | GitHubSource, now: dt.datetime | None = None,
           lookup_may_fail: bool = False) -> Decision:
    """Reuse or dispatch for every planned row: the rows' keys from the launch planner, then the
    stored results under them (a GitHub source downloads only the candidates it judges).

    ``lookup_may_fail``: when the stored results cannot be listed at all (no token, GitHub
    down), every point is dispatched with its key and the decision says why, instead of failing:
    reuse saves GPU-hours, it must never stop a sweep."""
    from ..diagnostics import InfxError
    from ..launch.resultkey import keys_for_rows

    now = now or dt.datetime.now(dt.timezone.utc)
    keys = keys_for_rows(rows, root, lane_resolver(root))
    if isinstance(source, FolderSource):
        return select(rows, keys, stored_in_folder(source.folder, source.max_age_days, now))
    try:
        stored, fetch = _on_github(source, keys, now)
    except InfxError as exc:
        if not lookup_may_fail:
            raise
        decision = select(rows, keys, {})
        decision.notice = f"stored results could not be looked up, so every point runs: {exc.diagnostics[0].message}"
        return decision
    return select(rows, keys, stored, fetch)


def _on_github(source: GitHubSource, keys: dict, now: dt.datetime):
    from . import api

    gh = api.connect(api.settings_from_env())
    with api.calling(f"reading repository {source.slug}"):
        repository = gh.get_repo(source.slug)
    trust = api.RunTrust(repository, source.slug, source.main_ref,
                         api.trusted_pr_shas(repository, source.pr_number, source.push_commit))
    names = {key: result_artifact_name(key) for key, _ in keys.values() if key}
    stored = api.stored_results(repository, names, trust, source.max_age_days, now)

    def fetch(item: Stored) -> Path:
        folder = source.download_dir / item.artifact
        if not folder.is_dir():
            api.extract_artifact(api.download_artifact(item.handle), folder, f"artifact {item.artifact} of run {item.source_run}")
        return folder

    return stored, fetch


def reduced_plan(plan: dict, decision: Decision) -> dict:
    """The plan without the reused points (buckets kept), every dispatched row with its result
    key, and the decision itself under `reuse` for the summary and the PR comment."""
    reused = {item["point-id"] for item in decision.reused}
    keyed = {point_id(row): row["result-key"] for row in decision.dispatch if row.get("result-key")}
    buckets = {}
    for name, rows in plan["buckets"].items():
        kept = [{**row, "result-key": keyed[point_id(row)]} if point_id(row) in keyed else row
                for row in rows if point_id(row) not in reused]
        if kept:
            buckets[name] = kept
    summary = {key: value for key, value in decision.to_json().items() if key != "dispatch"}
    return {**plan, "buckets": buckets, "point-count": sum(map(len, buckets.values())), "reuse": summary}
