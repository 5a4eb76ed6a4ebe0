"""Reuse: a planned point whose result key already has a valid result is not run again.

A point's artifact is named after its result key (`point-<key>`, `point-<key>-failed` when the
launch failed), so finding a result is a lookup by name. A stored result counts only when it is
usable (not expired, young enough, from a trusted run) and valid: exactly what `infx results
collect` accepts (the one validity rule, infx/results/artifact.py), from a launch record of the
key; the newest usable valid one wins. Everything else is dispatched. The decision itself is made
from candidates alone (`select`); a folder source reads them from disk, a GitHub source lists and
downloads them through the command's connection (infx/workflows/github/).

Effects: filesystem, network. Filesystem: the plan, the lane profiles, the artifacts read and
unpacked; network: a GitHub source's artifact list, trust facts and downloads.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..changelog.policy import resolve_slug
from ..diagnostics import InfxError
from ..launch.lane import find_lane, load_lane
from ..launch.plan import keys_for_rows
from ..launch.record import SUFFIX, LaunchRecord
from ..points import gpu_hours, point_id
from ..results.artifact import PointArtifact
from ..sweepplan import ReusedPoint, ReuseSummary, SweepPlan
from .actions import REUSED_DIR, runner_temp
from .github.artifacts import StoredArtifact, fetch_artifact, list_artifacts
from .github.client import Connection
from .github.repository import repository_id
from .github.runs import GitHubFacts
from .rerun import ARTIFACT_PREFIX, artifact_name

STOPPING_RULES = ("github-wait", "github-permission")  # failures no later candidate would escape
# The token's hourly API budget (the GITHUB_TOKEN: 1,000 requests per repository) is shared by the
# whole run and by the repository's other runs, so the lookup stops while a reserve is left: a
# share of the limit (at least BUDGET_RESERVE_MIN requests) and, on a sweep of main, the requests
# republishing each reused point will cost (republish.yml: its artifact listed and downloaded again).
BUDGET_RESERVE_SHARE, BUDGET_RESERVE_MIN, REPUBLISH_REQUESTS = 0.1, 20, 2


def budget_refusal(left: tuple[int, int] | None, downloads: int, republishing: bool) -> str:
    """Why the lookup may not make one more download, "" while it may. ``left``: (remaining, limit)
    as GitHub's last answer said (None: not said); ``downloads``: made so far."""
    if left is None:
        return ""
    remaining, limit = left
    reserve = max(BUDGET_RESERVE_MIN, int(limit * BUDGET_RESERVE_SHARE))
    republish = REPUBLISH_REQUESTS * (downloads + 1) if republishing else 0
    if remaining - 1 - republish >= reserve:
        return ""
    kept = f"{reserve} are kept for the rest of the run and the repository's other runs"
    if republish:
        kept += f", {republish} for republishing the reused points"
    return f"the token's hourly API budget is nearly spent ({remaining} of {limit} requests left; {kept})"


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
    handle: StoredArtifact | None = None  # the API's artifact object, for downloading (opaque here)


class Unusable(Exception):
    """A candidate found unusable only when fetched (``select``'s ``fetch`` raises it): the reason."""


@dataclass
class Decision:
    reused: list[ReusedPoint] = field(default_factory=list)
    dispatch: list[dict] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # point id -> why it is dispatched
    notice: str = ""  # why no stored result could be looked up at all

    @property
    def gpu_hours_saved(self) -> float:
        return round(sum(item.gpu_hours for item in self.reused), 1)

    def summary(self) -> ReuseSummary:
        """The decision as the plan keeps it (`reuse`): everything but the dispatched rows, which are its buckets."""
        return ReuseSummary.build(
            reused=tuple(self.reused),
            dispatch_reasons=self.reasons,
            gpu_hours_saved=self.gpu_hours_saved,
            **({"notice": self.notice} if self.notice else {}),
        )

    def to_json(self) -> dict:
        """`infx reuse select --output`: the plan's summary with the dispatched rows after the reused points."""
        summary = self.summary().to_json()
        return {"reused": summary.pop("reused"), "dispatch": self.dispatch, **summary}


def judge(folder: Path, key: str, row: dict) -> str | None:
    """None when ``folder`` holds a valid result under ``key``, else why not: exactly the
    validity rule `infx results collect` applies (PointArtifact.verdict), plus that the launch
    record is of this key. The key covers the point (its concurrencies included), so a record of
    ``key`` is a record of ``row``."""
    try:
        verdict = PointArtifact.read(folder).verdict(result_key=key)
    except Exception as exc:  # noqa: BLE001 - as in collect: one stored result never stops the plan; it is dispatched
        return (
            f"could not be checked (internal error: {type(exc).__name__}: {exc}); this is a bug in infx, please report "
            "it"
        )
    return None if verdict.ok else f"{verdict.status}: {verdict.reason}"


def select(
    rows: list[dict],
    keys: dict[int, tuple[str | None, str]],
    stored: dict[str, list[Stored]],
    fetch: Callable[[Stored], Path | None] = lambda item: item.folder,
) -> Decision:
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
        newest_first = sorted(
            stored.get(key, []), key=lambda s: s.created_at or dt.datetime.min.replace(tzinfo=dt.UTC), reverse=True
        )
        for candidate in newest_first:
            if candidate.refusal:
                reasons.append(f"{candidate.artifact} of run {candidate.source_run}: {candidate.refusal}")
                continue
            try:
                folder = fetch(candidate)
            except Unusable as exc:  # untrusted, expired by now, not downloadable or not unpackable
                said = str(exc)  # a download's problem names the artifact and run already: said once, so the cause
                reasons.append(
                    said
                    if candidate.artifact in said
                    else f"{candidate.artifact} of run {candidate.source_run}: {said}"
                )
                continue
            problem = judge(folder, key, row) if folder is not None else "its contents could not be read"
            if problem is None:
                decision.reused.append(
                    ReusedPoint.build(
                        point_id=pid,
                        result_key=key,
                        source_run=candidate.source_run,
                        artifact=candidate.artifact,
                        folder=str(folder),
                        gpu_hours=round(gpu_hours(row), 1),
                    )
                )
                break
            reasons.append(f"{candidate.artifact} of run {candidate.source_run}: {problem}")
        else:
            decision.dispatch.append({**row, "result-key": key})
            decision.reasons[pid] = "; ".join(reasons) or "no stored result under its key"
    return decision


def stored_in_folder(
    root: Path, max_age_days: float | None = None, now: dt.datetime | None = None
) -> dict[str, list[Stored]]:
    """Candidates from a folder of downloaded artifacts (``<root>/point-<key>/…``); their run and
    age from the launch record when it reads (judge says why when it does not)."""
    now = now or dt.datetime.now(dt.UTC)
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
        found.setdefault(key, []).append(
            Stored(key, folder.name, run, created, folder, refusal_for_age(created, max_age_days, now))
        )
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
    """Stored results among the repository's artifacts, from trusted runs only (trust.result_refusal):
    a pull request's sweep (``pr_number``) trusts main's runs and its own commits; any other sweep
    main's runs and the final head commits of merged pull requests."""

    slug: str
    pr_number: int | None = None  # the PR being swept: its commits are trusted
    main_ref: str = "main"
    download_dir: Path = field(default_factory=lambda: runner_temp(REUSED_DIR))
    max_age_days: float | None = None
    github: Connection = field(default_factory=Connection)  # the command's one connection


def lane_resolver(root: Path):
    """Row -> its Lane, by the one lane-resolution rule; each profile loaded once."""
    lanes: dict = {}

    def lane_of(row: dict):
        path = find_lane(root, runner=row.get("runner"))
        if path not in lanes:
            lanes[path] = load_lane(str(path), root)
        return lanes[path]

    return lane_of


def decide(
    rows: list[dict],
    root: Path,
    source: FolderSource | GitHubSource,
    now: dt.datetime | None = None,
    lookup_may_fail: bool = False,
) -> Decision:
    """Reuse or dispatch for every planned row: the rows' keys from the launch planner, then the
    stored results under them (a GitHub source downloads only the candidates it judges).

    ``lookup_may_fail``: when the stored results cannot be listed at all (no token, GitHub
    down), every point is dispatched with its key and the decision says why, instead of failing:
    reuse saves GPU-hours, it must never stop a sweep."""
    now = now or dt.datetime.now(dt.UTC)
    keys = keys_for_rows(rows, root, lane_resolver(root))
    if isinstance(source, FolderSource):
        return select(rows, keys, stored_in_folder(source.folder, source.max_age_days, now))
    try:
        stored, fetch, stopped = _on_github(source, keys, now)
    except InfxError as exc:
        if not lookup_may_fail:
            raise
        decision = select(rows, keys, {})
        decision.notice = f"stored results could not be looked up, so every point runs: {exc.diagnostics[0].message}"
        return decision
    decision = select(rows, keys, stored, fetch)
    if stopped:  # a permission the token lacks, or a wait past the bound: said once, never only per point
        decision.notice = f"the lookup stopped, so the points it had not judged run: {stopped[0]}"
    _discard_unused(source.download_dir, decision)
    return decision


def _on_github(source: GitHubSource, keys: dict, now: dt.datetime):
    """The stored candidates per key (one listing, list_artifacts) with the refusals the
    listing already tells, and the fetch that judges trust (facts fetched once per run, commit
    and branch) and downloads, only for the candidates ``select`` tries: newest first, stopping
    at the first valid one. A failure while fetching is that candidate's reason; once GitHub
    asks for a wait past the bound, or refuses the token a permission (which no later candidate
    would get either), or the token's hourly budget is down to its reserve (budget_refusal), every
    later candidate is refused without asking, and ``stopped`` says why."""
    client = source.github.client()
    repo_id = repository_id(client, source.slug)
    names = {result_artifact_name(key): key for key, _ in keys.values() if key}
    listed, _ = list_artifacts(client, source.slug, set(names))
    facts = GitHubFacts(client, source.slug, source.main_ref, source.pr_number)
    stored = {
        names[name]: [
            Stored(
                names[name],
                name,
                artifact.run_id,
                artifact.created_at,
                None,
                _listed_refusal(artifact, repo_id, source.max_age_days, now),
                artifact,
            )
            for artifact in artifacts
        ]
        for name, artifacts in listed.items()
    }
    holder: dict[Path, int] = {}  # folder -> the artifact now unpacked in it
    stopped: list[str] = []
    downloads = 0
    republishing = source.pr_number is None  # a sweep of main publishes each reused point again

    def fetch(item: Stored) -> Path:
        nonlocal downloads
        if not stopped:
            spent = budget_refusal(client.budget_left(), downloads, republishing)
            if spent:
                stopped.append(spent)
        if stopped:
            raise Unusable(f"not looked at: {stopped[0]}")
        artifact = item.handle
        # listed from GitHub: each carries its artifact; one without a run was refused (_listed_refusal), never fetched
        assert artifact is not None and artifact.run_id is not None
        try:
            refusal = facts.refusal(artifact.run_id)
            if refusal:
                raise Unusable(refusal)
            folder = source.download_dir / item.artifact
            if holder.get(folder) != artifact.id:
                holder.pop(folder, None)
                downloads += 1
                fetch_artifact(client, artifact, folder)
                holder[folder] = artifact.id
            return folder
        except InfxError as exc:
            message = exc.diagnostics[0].message
            if exc.diagnostics[0].rule in STOPPING_RULES:
                stopped.append(message)
            raise Unusable(message) from None

    return stored, fetch, stopped


def _listed_refusal(artifact, repo_id: int, max_age_days: float | None, now: dt.datetime) -> str:
    """Why a listed artifact cannot be used, from what the listing says (no request)."""
    checks = (
        (artifact.expired, "expired"),
        (artifact.run_id is None, "no workflow run recorded"),
        (artifact.run_repository_id not in (None, repo_id), "its run belongs to another repository"),
        (artifact.run_head_repository_id not in (None, repo_id), "its code came from another repository (a fork)"),
    )
    return next((why for bad, why in checks if bad), "") or refusal_for_age(artifact.created_at, max_age_days, now)


def _discard_unused(folder: Path, decision: Decision) -> None:
    """Remove downloaded candidates that were not reused, so only reused results are handed on."""
    kept = {Path(item.folder).name for item in decision.reused}
    for path in folder.iterdir() if folder.is_dir() else []:
        if key_of_artifact(path.name) is not None and path.name not in kept:
            shutil.rmtree(path, ignore_errors=True)


def reduced_plan(plan: SweepPlan, decision: Decision) -> SweepPlan:
    """The plan without the reused points (buckets kept), every dispatched row with its result
    key, and the decision itself under `reuse` for the summary and the PR comment."""
    reused = {item.point_id for item in decision.reused}
    keyed = {point_id(row): row["result-key"] for row in decision.dispatch if row.get("result-key")}
    buckets = {}
    for name, rows in plan.buckets.items():
        kept = [
            {**row, "result-key": keyed[point_id(row)]} if point_id(row) in keyed else row
            for row in rows
            if point_id(row) not in reused
        ]
        if kept:
            buckets[name] = kept
    return replace(plan, buckets=buckets, reuse=decision.summary())


# --- `infx reuse select`: a plan file in, the decision and the reduced plan out ----------------------


@dataclass(frozen=True)
class ReuseRequest:
    """Which stored results may stand in for the points of the plan in ``plan``: those in the folder
    ``artifacts`` of downloaded artifacts, or (without one) those among the repository's artifacts."""

    plan: Path
    root: Path  # the repository the lane profiles are read from
    artifacts: Path | None = None
    repo_slug: str | None = None  # --github: the repository (else $GITHUB_REPOSITORY, configs/infx.yaml)
    pr_number: int | None = None
    main_ref: str = "main"
    max_age_days: float | None = None
    download_dir: Path | None = None  # --github: default $RUNNER_TEMP/infx-reused
    github: Connection = field(default_factory=Connection)  # --github: the command's one connection


def select_reuse(request: ReuseRequest) -> tuple[Decision, SweepPlan]:
    """The decision for every planned point, and the plan reduced to the points to dispatch."""
    plan = SweepPlan(SweepPlan.read(request.plan).buckets)
    source: FolderSource | GitHubSource
    if request.artifacts is not None:
        source = FolderSource(request.artifacts, request.max_age_days)
    else:
        source = GitHubSource(
            resolve_slug(request.repo_slug, request.root)[0],
            request.pr_number,
            request.main_ref,
            request.download_dir or runner_temp(REUSED_DIR),
            request.max_age_days,
            request.github,
        )
    decision = decide(plan.rows, request.root, source)
    return decision, reduced_plan(plan, decision)
