"""Artifacts: a run's artifact list, one artifact's archive downloaded (bounded, spooled), the
sweep plan out of a run, and the repository's stored artifacts by name (`list_artifacts`, for
reuse) fetched into a folder.

Effects: network (the GitHub API and the blob storage it redirects downloads to, through
client.py); filesystem (a download is spooled to a temporary file past 32 MiB; `fetch_artifact`
unpacks into a folder, archives.py).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlparse

from ..markers import PLAN_ARTIFACT, PLAN_FILE
from .archives import extract_artifact, json_in_archive
from .client import PER_PAGE, TIMEOUT, Client, read
from .failures import MalformedAnswer, answer_field, calling, github_error
from .retry import finite_number, json_or_text

DOWNLOAD_LIMIT = 2 << 30  # bytes of one artifact's archive


def run_artifacts(client: Client, run) -> list:
    def fetch():
        artifacts = list(run.get_artifacts())
        artifact_infos(artifacts)  # every field now
        return artifacts

    return read(client, f"listing the artifacts of run {run.id}", fetch)


@dataclass(frozen=True)
class ArtifactInfo:
    """What a run's artifact list says of one artifact (decides a point's outcome, rerun.py)."""

    name: str
    size_in_bytes: int
    expired: bool


def artifact_infos(artifacts: list) -> list[ArtifactInfo]:
    infos = [ArtifactInfo(a.name, a.size_in_bytes, a.expired) for a in artifacts]
    for artifact, info in zip(artifacts, infos):
        if (
            not isinstance(info.name, str)
            or not isinstance(info.size_in_bytes, int)
            or not isinstance(info.expired, bool)
            or not isinstance(artifact.id, int)
            or isinstance(artifact.id, bool)
        ):
            raise MalformedAnswer(f"an artifact is listed as {info!r}")
    return infos


def download_artifact(client: Client, artifact) -> IO[bytes]:
    """The artifact's zip archive, as a file (rewound). The API answers 302 to short-lived blob
    storage on another host, which gets no token; an expired artifact answers 410. A body cut
    off is fetched again (both hops: the blob URL is short-lived), within the retry rule."""
    from github import GithubException

    url = artifact.archive_download_url
    run = _artifact_run(artifact)
    what = f"downloading artifact {artifact.name} of run {run}"
    api = urlparse(client.settings.base_url)

    def fetch() -> IO[bytes]:
        headers = {"Authorization": f"token {client.settings.token}", "Accept": "application/vnd.github+json"}
        answer = client.session.get(url, headers=headers, allow_redirects=False, stream=True, timeout=TIMEOUT)
        hops = 0
        while answer.status_code in (301, 302, 303, 307, 308) and hops < 3:
            location = answer.headers.get("Location") or ""
            target = urlparse(location)
            if target.scheme not in ("http", "https") or not target.netloc:
                raise MalformedAnswer(f"the download redirects to {location[:80]!r}")
            if target.netloc != api.netloc:  # blob storage: a pre-signed URL, never the token
                headers = {}
            answer.close()
            answer = client.session.get(location, headers=headers, allow_redirects=False, stream=True, timeout=TIMEOUT)
            hops += 1
        if answer.status_code != 200:
            body = answer.content[:4096]
            raise GithubException(answer.status_code, json_or_text(body), dict(answer.headers))
        return _spooled(answer, what)

    return read(client, what, fetch)


def _spooled(answer, what: str) -> IO[bytes]:
    declared = finite_number(answer.headers.get("Content-Length"))
    if declared is not None and declared > DOWNLOAD_LIMIT:
        raise MalformedAnswer(f"{what}: the archive has {declared:.0f} bytes, more than infx takes ({DOWNLOAD_LIMIT})")
    spool = tempfile.SpooledTemporaryFile(max_size=32 << 20)
    size = 0
    for chunk in answer.iter_content(chunk_size=1 << 16):
        size += len(chunk)
        if size > DOWNLOAD_LIMIT:
            raise MalformedAnswer(f"{what}: the archive is larger than infx takes ({DOWNLOAD_LIMIT} bytes)")
        spool.write(chunk)
    spool.seek(0)
    return spool


def _artifact_run(artifact):
    if isinstance(artifact, StoredArtifact):
        return artifact.run_id or "?"
    run = getattr(artifact, "workflow_run", None)
    return run.id if run is not None else "?"


def download_plan(client: Client, run, artifacts: list):
    """plan.json out of the run's sweep-plan artifact."""
    plan = next((a for a in artifacts if a.name == PLAN_ARTIFACT and not a.expired), None)
    if plan is None:
        raise github_error(
            f"run {run.id} has no unexpired `{PLAN_ARTIFACT}` artifact — was it started by run-sweep.yml, "
            "and is it younger than the artifact retention period?"
        )
    try:
        return json_in_archive(download_artifact(client, plan), PLAN_FILE)
    except ValueError as exc:
        raise github_error(f"artifact {PLAN_ARTIFACT} of run {run.id} holds no readable {PLAN_FILE} ({exc})") from None


@dataclass(frozen=True, kw_only=True)
class StoredArtifact:
    """One entry of the repository's artifact list, as GitHub lists it (fields checked)."""

    id: int
    name: str
    size: int
    expired: bool
    created_at: dt.datetime | None
    archive_download_url: str
    run_id: int | None
    run_repository_id: int | None
    run_head_repository_id: int | None
    run_head_branch: str | None
    run_head_sha: str | None

    @classmethod
    def from_api(cls, data, what: str) -> StoredArtifact:
        run = answer_field(data, "workflow_run", dict, what, optional=True) or {}
        created = answer_field(data, "created_at", str, what, optional=True)
        try:
            when = dt.datetime.fromisoformat(created.replace("Z", "+00:00")) if created else None
        except ValueError:
            raise MalformedAnswer(f"{what}: created_at {created[:40]!r} is not a time") from None
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return cls(
            id=answer_field(data, "id", int, what),
            name=answer_field(data, "name", str, what),
            size=answer_field(data, "size_in_bytes", int, what),
            expired=answer_field(data, "expired", bool, what),
            created_at=when,
            archive_download_url=answer_field(data, "archive_download_url", str, what),
            run_id=answer_field(run, "id", int, what, optional=True),
            run_repository_id=answer_field(run, "repository_id", int, what, optional=True),
            run_head_repository_id=answer_field(run, "head_repository_id", int, what, optional=True),
            run_head_branch=answer_field(run, "head_branch", str, what, optional=True),
            run_head_sha=answer_field(run, "head_sha", str, what, optional=True),
        )


@dataclass(frozen=True)
class ListingCost:
    """How the artifacts were listed: `whole` (the repository's list, pages = ⌈total / 100⌉) or
    `by-name` (one listing per name), and the requests it took."""

    method: str
    total: int
    requests: int


def list_artifacts(client: Client, slug: str, names: set[str]) -> tuple[dict[str, list[StoredArtifact]], ListingCost]:
    """Every artifact of ``slug`` whose name is in ``names``, newest first per name.

    The cheaper of two listings, decided by the first page of the repository's list (which
    gives `total_count` T): the rest of the whole list costs ⌈T/100⌉ − 1 requests, one listing
    per name at least len(names); the whole list is read when ⌈T/100⌉ − 1 ≤ len(names)."""
    path = f"/repos/{slug}/actions/artifacts"
    what = f"listing the artifacts of {slug}"
    found: dict[str, dict[int, StoredArtifact]] = {}
    requests_made = 0

    def keep(items: list, listing: str) -> None:
        for item in items:
            artifact = StoredArtifact.from_api(item, listing)
            if artifact.name in names:
                found.setdefault(artifact.name, {})[artifact.id] = artifact

    pages = client.pages(what, path, "artifacts")
    _, first, total = next(pages)
    requests_made += 1
    with calling(what):
        keep(first, what)
    whole = -(-total // PER_PAGE) - 1 <= len(names)
    if whole:
        for _, items, _ in pages:
            requests_made += 1
            with calling(what):
                keep(items, what)
    else:
        for name in sorted(names):
            for _, items, _ in client.pages(f"listing the artifacts named {name}", path, "artifacts", {"name": name}):
                requests_made += 1
                with calling(f"listing the artifacts named {name}"):
                    keep(items, f"listing the artifacts named {name}")
    newest_first = {
        name: sorted(
            by_id.values(), key=lambda a: (a.created_at or dt.datetime.min.replace(tzinfo=dt.UTC), a.id), reverse=True
        )
        for name, by_id in found.items()
    }
    return newest_first, ListingCost("whole" if whole else "by-name", total, requests_made)


def fetch_artifact(client: Client, artifact: StoredArtifact, dest: Path) -> Path:
    """Download and extract one stored artifact into ``dest`` (whole or absent)."""
    archive = download_artifact(client, artifact)
    try:
        return extract_artifact(archive, dest, f"artifact {artifact.name} of run {artifact.run_id}")
    finally:
        archive.close()
