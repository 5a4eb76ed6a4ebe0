"""The GitHub API through PyGithub: the sticky PR comment and dispatches of reruns.

The only module that talks to GitHub (and the only importer of PyGithub, which is slow
to import, so only `infx github …` loads it). Reads retry on server errors and wait out
rate limits up to a bound; writes are never blindly repeated — before repeating one,
the current state is read back, so a write that went through but timed out is not done
twice (one sticky comment, one sweep per launch id).
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import time
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass

from ..diagnostics import InfxError, error
from .report import MARKER
from .rerun import PLAN_ARTIFACT, PLAN_FILE, ArtifactInfo, launch_marker
from .trust import TRUSTED_BRANCH, RunFacts, origin_problems, untrusted_reason

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_MAX_WAIT = 300.0  # seconds infx waits for a rate limit to reset before giving up
READ_RETRIES = 4
WRITE_ATTEMPTS = 3
WRITE_BACKOFF = 2.0  # seconds before the first repeat of a failed write, doubled each time
RECENT_RUNS = 100  # dispatched runs searched for a launch id
STATUS_CHECKS = {  # what to check, by HTTP status
    401: "the token is invalid or expired: check GITHUB_TOKEN",
    403: "the token lacks a permission for this call, or a rate limit is exhausted: check the job's `permissions:`",
    404: "check that it exists and that the token can read the repository",
    409: "GitHub reports a conflict: retry later",
    422: "GitHub refused the request body: check the workflow's inputs and the ref",
}


def _fail(message: str) -> InfxError:
    return InfxError(error("<github>", None, "github-api", message))


@dataclass(frozen=True)
class Settings:
    token: str
    base_url: str = DEFAULT_API_URL
    max_wait: float = DEFAULT_MAX_WAIT
    pace: bool = True  # PyGithub's spacing between requests (GitHub's secondary-limit advice)


def settings_from_env(token: str | None = None, base_url: str | None = None) -> Settings:
    token = token or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    if not token:
        raise _fail("no GitHub token: set GITHUB_TOKEN (in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`)")
    max_wait = os.environ.get("INFX_GITHUB_MAX_WAIT") or str(DEFAULT_MAX_WAIT)
    try:
        seconds = float(max_wait)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise _fail(f"INFX_GITHUB_MAX_WAIT={max_wait!r} is not a number of seconds: set it to e.g. 300, or unset it")
    return Settings(token=token, base_url=base_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL, max_wait=seconds)


def connect(settings: Settings):
    import logging

    from github import Auth, Github, GithubRetry

    # PyGithub narrates its retries on stderr; infx reports the outcome in one line instead.
    logging.getLogger("github").setLevel(logging.ERROR)

    # Only reads are retried by the HTTP layer; writes go through _write below.
    retry = GithubRetry(total=READ_RETRIES, backoff_factor=0.5, max_rate_limit_wait=settings.max_wait,
                        secondary_rate_wait=min(60.0, settings.max_wait), allowed_methods={"GET", "HEAD"})
    pacing = {} if settings.pace else {"seconds_between_requests": None, "seconds_between_writes": None}
    return Github(base_url=settings.base_url, auth=Auth.Token(settings.token), retry=retry, timeout=30, **pacing)


@contextmanager
def calling(what: str):
    """Turn any failure of a GitHub call into one line: what, HTTP status, what to check."""
    from github import GithubException, RateLimitExceededExceedsMaxWait
    from requests import RequestException
    from urllib3.exceptions import MaxRetryError

    try:
        yield
    except RateLimitExceededExceedsMaxWait as exc:
        raise _fail(f"{what}: HTTP {exc.status} rate limit; it resets in {exc.wait or 0:.0f} s, longer than infx waits "
                    "(INFX_GITHUB_MAX_WAIT): retry later or use a token with a higher limit") from None
    except GithubException as exc:
        message = exc.data.get("message") if isinstance(exc.data, dict) else (exc.message or str(exc.data or ""))
        check = STATUS_CHECKS.get(exc.status, "GitHub answered with an error: retry, and check githubstatus.com")
        raise _fail(f"{what}: HTTP {exc.status} {message or ''}".rstrip() + f" — {check}") from None
    except (RequestException, MaxRetryError) as exc:
        repeated = re.search(r"too many (\d{3}) error responses", str(exc))
        if repeated:  # the read retries ran out on server errors
            raise _fail(f"{what}: HTTP {repeated.group(1)} on every one of {READ_RETRIES + 1} tries — "
                        "GitHub is failing: retry later, and check githubstatus.com") from None
        raise _fail(f"{what}: no answer from GitHub ({type(exc).__name__}) — check the network and GITHUB_API_URL") from None


def _transient(exc) -> float | None:
    """Seconds to wait before repeating a failed write, or None when repeating cannot help."""
    from github import GithubException
    from requests import RequestException

    if isinstance(exc, RequestException):
        return 0.0
    if not isinstance(exc, GithubException):
        return None
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    if exc.status in (403, 429) and ("retry-after" in headers or headers.get("x-ratelimit-remaining") == "0"):
        if "retry-after" in headers:
            return float(headers["retry-after"])
        return max(0.0, float(headers.get("x-ratelimit-reset", time.time())) - time.time()) + 1
    return 0.0 if exc.status >= 500 else None


def _write(do, already_done, max_wait: float):
    """Run a write; on a transient failure, read back whether it happened, then repeat."""
    backoff = WRITE_BACKOFF
    for attempt in range(WRITE_ATTEMPTS):
        if attempt:
            done = already_done()
            if done:
                return done
        try:
            return do()
        except Exception as exc:  # classified below; anything else propagates
            wait = _transient(exc)
            if wait is None or attempt == WRITE_ATTEMPTS - 1:
                raise
            wait = max(wait, backoff)
            if wait > max_wait:
                raise
            time.sleep(wait)
            backoff *= 2


# --- the sticky comment ----------------------------------------------------------------------


def upsert_comment(gh, slug: str, pr_number: int, body: str, max_wait: float = DEFAULT_MAX_WAIT) -> str:
    """Create or update the one comment carrying MARKER; returns created | updated | unchanged."""
    with calling(f"reading repository {slug}"):
        repo = gh.get_repo(slug)
    with calling(f"reading pull request #{pr_number} of {slug}"):
        pull = repo.get_pull(pr_number)

    def ours():
        with calling(f"listing the comments of #{pr_number}"):
            return next((c for c in pull.get_issue_comments() if MARKER in (c.body or "")), None)

    comment = ours()
    if comment is not None and comment.body == body:
        return "unchanged"
    with calling(f"writing the sweep comment on #{pr_number}"):
        if comment is not None:
            _write(lambda: comment.edit(body), lambda: None, max_wait)  # an edit is idempotent
            return "updated"
        _write(lambda: pull.create_issue_comment(body), ours, max_wait)
    return "created"


# --- runs, artifacts, dispatch -----------------------------------------------------------------


def get_run(gh, slug: str, run_id: int):
    with calling(f"reading repository {slug}"):
        repo = gh.get_repo(slug)
    with calling(f"reading workflow run {run_id} of {slug}"):
        run = repo.get_workflow_run(run_id)
        run.head_branch  # noqa: B018 - fetch now so a 404 is reported here
    return repo, run


def run_facts(run) -> RunFacts:
    """The run's workflow, repository, head repository and branch, from the API objects."""
    with calling(f"reading workflow run {run.id}"):
        repository, head = run.repository, run.head_repository
        return RunFacts(run.id, run.path, repository.full_name if repository else None,
                        head.full_name if head else None, run.head_branch, run.head_sha)


def head_repository(pull) -> str | None:
    """OWNER/NAME the pull request's commits come from; None when that repository was deleted."""
    return pull.head.repo.full_name if pull.head.repo is not None else None


def pull_branch(repo, pr_number: int) -> str:
    """The head branch of pull request ``pr_number``; a fork's pull request has none we trust."""
    with calling(f"reading pull request #{pr_number} of {repo.full_name}"):
        pull = repo.get_pull(pr_number)
        head_repo = head_repository(pull)
        branch = pull.head.ref
    if head_repo != repo.full_name:
        raise _fail(f"pull request #{pr_number} comes from {head_repo or 'a deleted repository'}, not {repo.full_name}: "
                    "its sweeps never run on the self-hosted runners, so there is nothing to rerun")
    return branch


def require_trusted(run, slug: str, branches: set[str]) -> None:
    """Refuse (exit 1) a run whose plan must not drive a sweep (rules: trust.untrusted_reason)."""
    reason = untrusted_reason(run_facts(run), slug, {TRUSTED_BRANCH, *branches})
    if reason:
        raise InfxError(error("<github>", None, "github-untrusted-run", reason,
                              f"Rerun a run of the sweep workflow of {slug} on {TRUSTED_BRANCH} or on the pull request's own branch."))


def run_artifacts(run) -> list:
    with calling(f"listing the artifacts of run {run.id}"):
        return list(run.get_artifacts())


def artifact_infos(artifacts: list) -> list[ArtifactInfo]:
    return [ArtifactInfo(a.name, a.size_in_bytes, a.expired) for a in artifacts]


def download_artifact(artifact) -> bytes:
    """The artifact's zip archive, with the token it was listed with (GitHub redirects to blob storage)."""
    run = artifact.workflow_run.id if artifact.workflow_run is not None else "?"
    with calling(f"downloading artifact {artifact.name} of run {run}"):
        _, _, chunks = artifact.requester.getStream(artifact.archive_download_url, chunk_size=65536)
        return b"".join(chunks)


def download_plan(run, artifacts: list):
    """plan.json out of the run's sweep-plan artifact."""
    plan = next((a for a in artifacts if a.name == PLAN_ARTIFACT and not a.expired), None)
    if plan is None:
        raise _fail(f"run {run.id} has no unexpired `{PLAN_ARTIFACT}` artifact — was it started by run-sweep.yml, "
                    "and is it younger than the artifact retention period?")
    try:
        return json_in_archive(download_artifact(plan), PLAN_FILE)
    except ValueError as exc:
        raise _fail(f"artifact {PLAN_ARTIFACT} of run {run.id} holds no readable {PLAN_FILE} ({exc})") from None


def json_in_archive(data: bytes, name: str):
    """The JSON file ``name`` in a downloaded artifact (a zip archive); ValueError when the
    archive, the file or its JSON (or its UTF-8) is not readable."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return json.loads(archive.read(name))
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ValueError(str(exc)) from None


def find_launch(workflow, workflow_file: str, launch: str):
    """The dispatched run whose title carries this launch id, if any."""
    marker = launch_marker(launch)
    with calling(f"listing the runs of {workflow_file}"):
        runs = workflow.get_runs(event="workflow_dispatch")
        return next((r for r in itertools.islice(runs, RECENT_RUNS) if marker in (r.display_title or "")), None)


def dispatch_once(repo, workflow_file: str, ref: str, inputs: dict, launch: str,
                  max_wait: float = DEFAULT_MAX_WAIT) -> tuple[object | None, bool]:
    """Dispatch unless a run with this launch id exists; returns (run or None, created)."""
    with calling(f"reading workflow {workflow_file}"):
        workflow = repo.get_workflow(workflow_file)
    existing = find_launch(workflow, workflow_file, launch)
    if existing is not None:
        return existing, False
    with calling(f"dispatching {workflow_file} on {ref}"):
        created = _write(lambda: workflow.create_dispatch(ref, inputs, throw=True, return_run_details=True),
                         lambda: find_launch(workflow, workflow_file, launch), max_wait)
    if created is True:  # a server that answers 204 without the run's details (older GHES)
        return find_launch(workflow, workflow_file, launch), True
    return created, True


# --- reuse: stored results by result key, from trusted runs only ----------------------------------


class RunTrust:
    """Whether a run's result artifacts may stand in for a launch (rules: trust.py): this
    repository's sweep workflow on its own code, on a commit that is on main or one of the
    trusted pull request's commits (the PR being swept, or the PR a push to main merged —
    squash merges leave the PR's commits off main). Cached per run and per commit."""

    def __init__(self, repo, slug: str, main_ref: str, trusted_shas: set[str]):
        self.repo, self.slug, self.main_ref, self.trusted_shas = repo, slug, main_ref, trusted_shas
        self._runs: dict[int, str] = {}
        self._on_main: dict[str, bool] = {}

    def _reachable_from_main(self, sha: str) -> bool:
        if sha not in self._on_main:
            with calling(f"comparing {sha[:12]} with {self.main_ref}"):
                status = self.repo.compare(sha, self.main_ref).status
            self._on_main[sha] = status in ("ahead", "identical")  # main is at or ahead of sha
        return self._on_main[sha]

    def refusal(self, run_id: int) -> str:
        """"" when trusted, else why not."""
        if run_id not in self._runs:
            with calling(f"reading workflow run {run_id} of {self.slug}"):
                facts = run_facts(self.repo.get_workflow_run(run_id))
            reasons = origin_problems(facts, self.slug)
            sha = facts.head_sha or ""
            if not reasons and sha not in self.trusted_shas and not self._reachable_from_main(sha):
                reasons.append(f"its commit {sha[:12]} is neither on {self.main_ref} nor a commit of the trusted pull request")
            self._runs[run_id] = "; ".join(reasons)
        return self._runs[run_id]


def trusted_pr_shas(repo, pr_number: int | None, push_commit: str | None) -> set[str]:
    """The commits of the PR being swept, or of the PRs a pushed commit belongs to (same repository only)."""
    pulls = []
    if pr_number is not None:
        with calling(f"reading pull request #{pr_number}"):
            pulls.append(repo.get_pull(pr_number))
    if push_commit:
        with calling(f"listing the pull requests of commit {push_commit[:12]}"):
            pulls.extend(repo.get_commit(push_commit).get_pulls())
    shas: set[str] = set()
    for pull in pulls:
        with calling(f"listing the commits of #{pull.number}"):
            if head_repository(pull) != repo.full_name:
                continue  # a fork's commits are never trusted, nor those of a deleted head repository
            shas.update(commit.sha for commit in pull.get_commits())
    return shas


def stored_results(repo, names: dict[str, str], trust: RunTrust, max_age_days: float | None, now) -> dict[str, list]:
    """key -> [Stored] for the artifacts named `point-<key>` in the repository, each judged usable or not."""
    from .reuse import Stored, refusal_for_age

    found: dict[str, list] = {}
    for key, name in names.items():
        with calling(f"listing artifacts named {name}"):
            artifacts = list(repo.get_artifacts(name=name))
        for artifact in artifacts:
            if artifact.name != name:
                continue
            run_id = artifact.workflow_run.id if artifact.workflow_run is not None else None
            refusal = ("expired" if artifact.expired else refusal_for_age(artifact.created_at, max_age_days, now)
                       or ("no workflow run recorded" if run_id is None else trust.refusal(run_id)))
            found.setdefault(key, []).append(Stored(key, name, run_id, artifact.created_at, None, refusal, artifact))
    return found


def extract_artifact(data: bytes, dest, what: str) -> None:
    """Unzip one downloaded artifact into ``dest``; members that would land outside it are refused."""
    from pathlib import Path

    dest = Path(dest)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.infolist():
                if not (dest / member.filename).resolve().is_relative_to(dest.resolve()):
                    raise _fail(f"{what} holds {member.filename!r}, outside its folder: refused")
            dest.mkdir(parents=True, exist_ok=True)
            archive.extractall(dest)
    except zipfile.BadZipFile as exc:
        raise _fail(f"{what} is not a zip archive ({exc})") from None


# --- infx repo check: the settings that keep fork pull requests off self-hosted runners ---------


PAGE_SIZE = 100


def _read_setting(gh, path: str, what: str, parameters: dict | None = None):
    """GET ``path``'s JSON, or repocheck.Unreadable when the token may not read it (403, or 404 as
    GitHub answers for what a token cannot see); any other failure is the usual one-line error."""
    from github import GithubException

    from .repocheck import Unreadable

    with calling(what):
        try:
            return gh.requester.requestJsonAndCheck("GET", path, parameters=parameters)[1]
        except GithubException as exc:
            if exc.status in (403, 404):
                message = exc.data.get("message") if isinstance(exc.data, dict) else str(exc.data or "")
                return Unreadable(exc.status, message or "")
            raise


def _read_pages(gh, path: str, key: str, what: str, parameters: dict | None = None):
    """Every item of a paginated list (``key`` of each page), or Unreadable."""
    from .repocheck import Unreadable

    items, page = [], 1
    while True:
        data = _read_setting(gh, path, f"{what} (page {page})", {**(parameters or {}), "per_page": PAGE_SIZE, "page": page})
        if isinstance(data, Unreadable):
            return data
        batch = data.get(key) or []
        items.extend(batch)
        if len(batch) < PAGE_SIZE or len(items) >= int(data.get("total_count") or 0):
            return items
        page += 1


def _runners(raw: list[dict], group: str):
    from .repocheck import Runner

    return tuple(Runner(r.get("name", "?"), tuple(label.get("name", "") for label in r.get("labels") or []),
                        bool(r.get("ephemeral")), group) for r in raw)


def repository_settings(gh, slug: str):
    """repocheck.Facts of ``slug``: visibility, fork-PR approval, default token permissions, and the
    self-hosted runners the repository can use (its own, and its organization's runner groups)."""
    from .repocheck import Facts, RunnerGroup, Unreadable

    owner, name = slug.split("/")
    repo = _read_setting(gh, f"/repos/{slug}", f"reading repository {slug}")
    if isinstance(repo, Unreadable):
        raise _fail(f"reading repository {slug}: HTTP {repo.status} {repo.message} — "
                    f"{STATUS_CHECKS.get(repo.status, '')}")
    private = bool(repo.get("private"))
    base = f"/repos/{slug}/actions/permissions"
    approval = None if private else _read_setting(gh, f"{base}/fork-pr-contributor-approval", "reading the fork PR approval policy")
    if isinstance(approval, dict):
        approval = approval.get("approval_policy")
    private_forks = _read_setting(gh, f"{base}/fork-pr-workflows-private-repos",
                                  "reading the private fork PR settings") if private else None
    permissions = _read_setting(gh, f"{base}/workflow", "reading the default workflow permissions")
    own = _read_pages(gh, f"/repos/{slug}/actions/runners", "runners", f"listing the self-hosted runners of {slug}")
    own = own if isinstance(own, Unreadable) else _runners(own, "repository")
    groups = None
    organization = (repo.get("owner") or {}).get("type") == "Organization"
    if organization:
        listed = _read_pages(gh, f"/orgs/{owner}/actions/runner-groups", "runner_groups",
                             f"listing the runner groups of {owner} this repository may use", {"visible_to_repository": name})
        if isinstance(listed, Unreadable):
            groups = listed
        else:
            found = []
            for group in listed:
                gid = group["id"]
                members = _read_pages(gh, f"/orgs/{owner}/actions/runner-groups/{gid}/runners", "runners",
                                      f"listing the runners of group {group.get('name')}")
                repositories = None
                if group.get("visibility") == "selected":
                    selected = _read_pages(gh, f"/orgs/{owner}/actions/runner-groups/{gid}/repositories", "repositories",
                                           f"listing the repositories of group {group.get('name')}")
                    if isinstance(selected, Unreadable):
                        groups = selected
                        break
                    repositories = tuple(r.get("full_name", "") for r in selected)
                if isinstance(members, Unreadable):
                    groups = members
                    break
                found.append(RunnerGroup(gid, group.get("name", "?"), group.get("visibility", "all"), repositories,
                                         _runners(members, group.get("name", "?"))))
            else:
                groups = tuple(found)
    return Facts(slug, private, organization, approval, private_forks, permissions, own, groups)
