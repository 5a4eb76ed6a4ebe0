"""A small GitHub REST server on 127.0.0.1 for testing infx's GitHub client over real HTTP.

It implements exactly the endpoints infx calls, answering with JSON in the shape GitHub
returns (ids, `url`s that point back at this server, list envelopes, `Link` pagination with
`per_page` up to 100), records every request it receives, and models GitHub's weather as
GitHub documents it:

- who is asking: a token starting `ghs_` is an installation token (the Actions `GITHUB_TOKEN`):
  `GET /user` answers 403 "Resource not accessible by integration", GraphQL `viewer` answers
  `github-actions[bot]`, and comments it creates are authored by `github-actions[bot]`; any
  other token is a personal access token of the user `token_logins` names (default `octocat`);
- artifact downloads answer 302 to short-lived blob storage on *another host* (a second
  listener, another port), which refuses a request carrying an `Authorization` header; an
  expired artifact's download answers 410;
- the Actions GITHUB_TOKEN (`grant_token`, what the workflow executor gives each job): every
  endpoint infx calls requires the permissions GitHub documents for it (`ENDPOINT_PERMISSIONS`);
  a token without them gets GitHub's 403 "Resource not accessible by integration" with the
  `X-Accepted-GitHub-Permissions` header naming what would do, except a read of a public
  repository (`private` False), which GitHub serves without them;
- the hourly budget: every API request counts against its token's primary rate limit (all
  GITHUB_TOKENs of the repository share 1,000 requests an hour, any other token has 5,000 of its
  own), each answer carries `x-ratelimit-*`, and past the limit GitHub's 403 with remaining 0;
- faults (`Fault`, matched by method and path, each used once): rate limits with
  `x-ratelimit-*` headers, `Retry-After` in seconds or as an HTTP date, 502/503 bursts, HTML
  error pages, a 200 cut off before its declared `Content-Length`, any status and body; or,
  by request number (`script`), a raw answer for the n-th request (the property tests).

When `git` names a real repository, `compare` and the commits of a pull request are answered
from it (`main` and each pull request's head ref), as GitHub answers them from the repository.
"""

from __future__ import annotations

import email.utils
import io
import json
import re
import subprocess
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

OWNER, NAME = "acme", "bench"
SLUG = f"{OWNER}/{NAME}"
DELETED_REPOSITORY = "deleted/repository"  # add_pull(head_repo=...): a pull request whose head repository is gone
ACTIONS_BOT = "github-actions[bot]"  # the author of what the Actions GITHUB_TOKEN writes
INSTALLATION_PREFIX = "ghs_"  # GitHub's prefix of installation access tokens (GITHUB_TOKEN is one)
DEFAULT_PER_PAGE, MAX_PER_PAGE = 30, 100  # GitHub's list defaults
BLOB_PREFIX = "/blob-storage/"


@dataclass
class Request:
    method: str
    path: str
    query: dict
    body: object
    headers: dict
    host: str = "api"  # "api" or "blob"

    @property
    def token(self) -> str:
        return token_of(self.headers)


@dataclass
class Fault:
    """One answer in place of the next request matching ``method`` and ``pattern`` (a regular
    expression over the path). ``body``: JSON data, or bytes/str sent as they are; ``declared``:
    a `Content-Length` to declare instead of the body's (larger: the answer is cut off)."""

    method: str
    pattern: str
    status: int
    body: object = None
    headers: dict = field(default_factory=dict)
    apply: bool = False  # still carry out the request, then answer with the fault
    declared: int | None = None


def rate_limit_fault(method: str, pattern: str, reset_in: float, status: int = 403) -> Fault:
    """A primary rate limit as GitHub answers it: remaining 0 and the reset time (epoch seconds)."""
    return Fault(
        method,
        pattern,
        status,
        {
            "message": "API rate limit exceeded for installation ID 1. (But here's the good news: ...)",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        },
        {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Used": "5000",
            "X-RateLimit-Reset": str(int(time.time() + reset_in)),
            "X-RateLimit-Resource": "core",
        },
    )


def retry_after_fault(method: str, pattern: str, seconds: float, as_date: bool = False, status: int = 429) -> Fault:
    """A secondary rate limit with `Retry-After`, in seconds or as an HTTP date (RFC 9110 allows both)."""
    value = email.utils.formatdate(time.time() + seconds, usegmt=True) if as_date else str(int(seconds))
    return Fault(
        method,
        pattern,
        status,
        {
            "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
        },
        {"Retry-After": value},
    )


HTML_ERROR_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>Unicorn! &middot; GitHub</title></head><body>"
    "<p>We had issues producing the response to your request. Sorry about that.</p></body></html>\n"
)


def server_error_burst(method: str, pattern: str, count: int, status: int = 502, html: bool = False) -> list[Fault]:
    """``count`` server errors in a row: JSON (`{"message": ...}`) or GitHub's HTML error page."""
    body = HTML_ERROR_PAGE if html else {"message": "Server Error"}
    headers = {"Content-Type": "text/html; charset=utf-8"} if html else {}
    return [Fault(method, pattern, status, body, dict(headers)) for _ in range(count)]


def truncated_fault(
    method: str, pattern: str, body: bytes = b'{"total_count": 3, "artifacts": [{"id": 1, "na'
) -> Fault:
    """A 200 whose connection closes before the declared `Content-Length` arrived."""
    return Fault(
        method, pattern, 200, body, {"Content-Type": "application/json; charset=utf-8"}, declared=len(body) + 500
    )


def zip_of(files: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file_name, content in files.items():
            archive.writestr(file_name, content)
    return buffer.getvalue()


def token_of(headers: dict) -> str:
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    return value.split(" ", 1)[1] if " " in value else ""


class GitHubState:
    def __init__(self):
        self.lock = threading.Lock()
        self.base = ""
        self.blob_base = ""
        self.requests: list[Request] = []
        self.faults: list[Fault] = []
        self.script: dict[int, Fault] = {}  # request number (0-based, both hosts) -> the answer it gets
        # request number -> f(status, headers, payload) -> (status, headers, payload, declared): the
        # real answer, changed (the property tests' hostile answers)
        self.mutations: dict[int, object] = {}
        self.token_logins: dict[str, str] = {}  # personal access token -> its user's login
        self.pulls: dict[int, dict] = {}  # number -> head ref, head repository, merge state
        self.comments: dict[int, list[dict]] = {}
        self.runs: dict[int, dict] = {}
        self.artifacts: dict[int, list[dict]] = {}
        self.blobs: dict[int, bytes] = {}
        self.dispatches: list[dict] = []
        self.on_main: set[str] = set()  # commits reachable from main (compare answers "ahead" for them)
        self.pull_commits: dict[int, list[str]] = {}
        self.commit_pulls: dict[str, list[int]] = {}
        self.git: Path | None = None  # a real repository answering compare and a PR's commits
        self.title_for_dispatch = lambda inputs: "Manual sweep"
        self.private = False  # a private repository: a read needs its permission too (public ones are served without)
        self.tokens: dict[str, dict[str, str]] = {}  # GITHUB_TOKEN -> its permissions (grant_token)
        self.hourly_limits = {"GITHUB_TOKEN": ACTIONS_TOKEN_LIMIT, "other": PERSONAL_TOKEN_LIMIT}
        self.budgets: dict[str, list] = {}  # bucket -> [window start (epoch s), requests counted]
        self._ids = iter(range(1000, 10**9))
        self._clock = 0

    def next_id(self) -> int:
        return next(self._ids)

    def count_by_token(self, host: str = "api") -> dict[str, int]:
        """How many requests each token made (on ``host``)."""
        counted: dict[str, int] = {}
        for request in self.requests:
            if request.host == host:
                counted[request.token] = counted.get(request.token, 0) + 1
        return counted

    def count(self, method: str | None = None, pattern: str = ".*", host: str | None = None) -> int:
        """How many requests arrived (of ``method``, matching ``pattern``, on ``host``)."""
        return sum(
            1
            for r in self.requests
            if (method is None or r.method == method)
            and re.fullmatch(pattern, r.path)
            and (host is None or r.host == host)
        )

    # --- fixtures the tests build ---------------------------------------------------------

    def add_pull(
        self, number: int, head_ref: str = "feature", head_repo: str | None = None, base_ref: str = "main"
    ) -> None:
        """``head_repo`` DELETED_REPOSITORY: the head repository is gone (GitHub's ``head.repo: null``)."""
        self.pulls[number] = {
            "head_ref": head_ref,
            "head_repo": head_repo or SLUG,  # SLUG read now: tests may set it
            "base_ref": base_ref,
            "merged_at": None,
            "merge_commit_sha": None,
            "state": "open",
            "head_sha": None,
        }
        self.comments.setdefault(number, [])

    def merge_pull(self, number: int, merge_commit_sha: str, head_sha: str | None = None) -> None:
        """The pull request is merged (a squash or a merge commit ``merge_commit_sha`` on main); its
        head commit stays what it was when merged."""
        pull = self.pulls[number]
        pull.update(
            state="closed",
            merged_at="2026-12-01T00:00:00Z",
            merge_commit_sha=merge_commit_sha,
            head_sha=head_sha or pull["head_sha"] or self._commits_of(number)[-1],
        )

    def add_comment(self, number: int, body: str, login: str = "someone") -> dict:
        comment = self._comment(number, body, login)
        self.comments[number].append(comment)
        return comment

    def _comment(self, number: int, body: str, login: str) -> dict:
        cid = self.next_id()
        kind = "Bot" if login.endswith("[bot]") else "User"
        return {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{self.base}/repos/{SLUG}/issues/comments/{cid}",
            "html_url": f"https://github.com/{SLUG}/pull/{number}#issuecomment-{cid}",
            "issue_url": f"{self.base}/repos/{SLUG}/issues/{number}",
            "body": body,
            "user": {"login": login, "id": 41898282 if kind == "Bot" else 2, "type": kind},
            "author_association": "NONE",
            "created_at": "2026-11-30T00:00:00Z",
            "updated_at": "2026-11-30T00:00:00Z",
        }

    def add_run(
        self,
        run_id: int,
        head_branch: str = "main",
        title: str = "Sweep",
        event: str = "push",
        head_sha: str = "c" * 40,
        path: str = ".github/workflows/run-sweep.yml",
        repository: str | None = None,
        head_repository: str | None = None,
    ) -> dict:
        repository, head_repository = repository or SLUG, head_repository or SLUG
        run = {
            "id": run_id,
            "name": "Run sweep",
            "node_id": f"WFR_{run_id}",
            "head_branch": head_branch,
            "path": path,
            "repository": self.repository(repository),
            "head_repository": self.repository(head_repository),
            "head_sha": head_sha,
            "display_title": title,
            "event": event,
            "status": "completed",
            "conclusion": "failure",
            "workflow_id": 77,
            "run_number": run_id % 1000,
            "run_attempt": 1,
            "url": f"{self.base}/repos/{SLUG}/actions/runs/{run_id}",
            "html_url": f"https://github.com/{SLUG}/actions/runs/{run_id}",
            "artifacts_url": f"{self.base}/repos/{SLUG}/actions/runs/{run_id}/artifacts",
            "jobs_url": f"{self.base}/repos/{SLUG}/actions/runs/{run_id}/jobs",
            "created_at": "2026-11-30T00:00:00Z",
            "updated_at": "2026-11-30T00:00:00Z",
        }
        self.runs[run_id] = run
        self.artifacts.setdefault(run_id, [])
        return run

    def add_artifact(
        self,
        run_id: int,
        name: str,
        size: int = 1234,
        expired: bool = False,
        files: dict | None = None,
        created_at: str | None = None,
        blob: bytes | None = None,
    ) -> dict:
        """An artifact of run ``run_id``: ``files`` (name -> text) zipped as its archive, or ``blob``
        as the archive's bytes; neither gives an empty archive. ``created_at``: default, later
        than every artifact before it (GitHub lists the newest first)."""
        aid = self.next_id()
        run = self.runs.get(run_id, {})
        if created_at is None:
            self._clock += 1
            created_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_795_000_000 + self._clock))
        artifact = {
            "id": aid,
            "node_id": f"MDg6QXJ0aWZhY3Q{aid}",
            "name": name,
            "size_in_bytes": size,
            "url": f"{self.base}/repos/{SLUG}/actions/artifacts/{aid}",
            "archive_download_url": f"{self.base}/repos/{SLUG}/actions/artifacts/{aid}/zip",
            "expired": expired,
            "digest": "sha256:" + "0" * 64,
            "created_at": created_at,
            "expires_at": "2027-02-28T00:00:00Z",
            "updated_at": created_at,
            "workflow_run": {
                "id": run_id,
                "repository_id": run.get("repository", {}).get("id", 1),
                "head_repository_id": run.get("head_repository", {}).get("id", 1),
                "head_branch": run.get("head_branch", "main"),
                "head_sha": run.get("head_sha", "c" * 40),
            },
        }
        self.artifacts.setdefault(run_id, []).append(artifact)
        self.blobs[aid] = blob if blob is not None else zip_of(files or {})
        if files is not None or blob is not None:
            artifact["size_in_bytes"] = len(self.blobs[aid])
        return artifact

    def _commit(self, sha: str) -> dict:
        return {
            "sha": sha,
            "node_id": f"C_{sha}",
            "url": f"{self.base}/repos/{SLUG}/commits/{sha}",
            "html_url": f"https://github.com/{SLUG}/commit/{sha}",
            "commit": {"message": "a commit"},
            "parents": [],
        }

    def requests_to(self, method: str, pattern: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    # --- git-backed facts -------------------------------------------------------------------

    def _git(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(self.git), *args], capture_output=True, text=True)

    def _commits_of(self, number: int) -> list[str]:
        if number in self.pull_commits or self.git is None:
            return self.pull_commits.get(number, ["d" * 40])
        pull = self.pulls[number]
        listed = self._git("rev-list", "--reverse", f"{pull['base_ref']}..{pull['head_ref']}")
        return listed.stdout.split() if listed.returncode == 0 else []

    def _is_on(self, sha: str, ref: str) -> bool | None:
        """Whether ``sha`` is reachable from ``ref``; None when the commit is unknown."""
        if self.git is None:
            return sha in self.on_main if ref == "main" else False
        if self._git("cat-file", "-e", f"{sha}^{{commit}}").returncode != 0:
            return None
        return self._git("merge-base", "--is-ancestor", sha, ref).returncode == 0

    # --- the API --------------------------------------------------------------------------

    def repository(self, slug: str) -> dict:
        owner, name = slug.split("/")
        return {
            "id": 1 if slug == SLUG else 2,
            "node_id": f"R_{slug}",
            "name": name,
            "full_name": slug,
            "owner": {"login": owner, "id": 2, "type": "Organization"},
            "private": self.private and slug == SLUG,
            "url": f"{self.base}/repos/{slug}",
            "html_url": f"https://github.com/{slug}",
            "default_branch": "main",
        }

    def workflow(self, ident: str) -> dict:
        return {
            "id": 77,
            "node_id": "W_77",
            "name": "Run sweep",
            "path": ".github/workflows/run-sweep.yml",
            "state": "active",
            "url": f"{self.base}/repos/{SLUG}/actions/workflows/{ident}",
            "html_url": f"https://github.com/{SLUG}/blob/main/.github/workflows/run-sweep.yml",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }

    def pull(self, number: int) -> dict:
        pull = self.pulls[number]
        repo = f"/repos/{SLUG}"
        head_sha = pull["head_sha"] or (self._commits_of(number) or ["d" * 40])[-1]
        head_slug = pull["head_repo"]
        return {
            "id": 5000 + number,
            "number": number,
            "state": pull["state"],
            "title": "A change",
            "url": f"{self.base}{repo}/pulls/{number}",
            "issue_url": f"{self.base}{repo}/issues/{number}",
            "html_url": f"https://github.com/{SLUG}/pull/{number}",
            "merged": pull["merged_at"] is not None,
            "merged_at": pull["merged_at"],
            "merge_commit_sha": pull["merge_commit_sha"],
            "head": {
                "ref": pull["head_ref"],
                "sha": head_sha,
                "label": f"{head_slug.split('/')[0]}:{pull['head_ref']}",
                "repo": None if head_slug == DELETED_REPOSITORY else self.repository(head_slug),
            },
            "base": {"ref": pull["base_ref"], "sha": "b" * 40, "repo": self.repository(SLUG)},
        }

    def identity(self, headers: dict) -> str | None:
        """The login of a personal access token; None for an installation token."""
        token = token_of(headers)
        return None if token.startswith(INSTALLATION_PREFIX) else self.token_logins.get(token, "octocat")

    def page(self, items: list, query: dict, path: str, envelope: str | None = None) -> tuple[int, dict, object]:
        """One page of ``items`` as GitHub pages lists: `per_page` (≤ 100), `page`, a `Link` header."""
        try:
            per_page = min(MAX_PER_PAGE, max(1, int((query.get("per_page") or [DEFAULT_PER_PAGE])[0])))
            number = max(1, int((query.get("page") or [1])[0]))
        except ValueError:
            return 422, {}, {"message": "Invalid request."}
        last = max(1, -(-len(items) // per_page))
        shown = items[(number - 1) * per_page : number * per_page]
        links = []
        for rel, target in (("next", number + 1), ("last", last)):
            if target <= last and (rel == "last" or target > number):
                params = {k: v[0] for k, v in query.items()} | {"per_page": per_page, "page": target}
                links.append(f'<{self.base}{path}?{urlencode(params)}>; rel="{rel}"')
        headers = {"Link": ", ".join(links)} if number < last else {}
        return 200, headers, ({"total_count": len(items), envelope: shown} if envelope else shown)

    def handle(
        self, method: str, path: str, query: dict, body, headers: dict | None = None
    ) -> tuple[int, dict, object]:
        headers = headers or {}
        repo = f"/repos/{SLUG}"
        if path.startswith(BLOB_PREFIX):
            return 404, {}, {"message": "The blob store is another host"}
        if method == "GET" and path == "/user":
            login = self.identity(headers)
            if login is None:
                return (
                    403,
                    {},
                    {
                        "message": "Resource not accessible by integration",
                        "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
                        "status": "403",
                    },
                )
            return 200, {}, {"login": login, "id": 2, "type": "User", "url": f"{self.base}/users/{login}"}
        if method == "POST" and path == "/graphql":
            if "viewer" not in str((body or {}).get("query", "")):
                return 200, {}, {"errors": [{"message": "this server answers only viewer { login }"}]}
            return 200, {}, {"data": {"viewer": {"login": self.identity(headers) or ACTIONS_BOT}}}
        if method == "GET" and path == repo:
            return 200, {}, self.repository(SLUG)
        if method == "GET" and path == f"{repo}/pulls":
            state, head, base = ((query.get(k) or [None])[0] for k in ("state", "head", "base"))
            found = [self.pull(n) for n in sorted(self.pulls, reverse=True)]
            found = [
                p
                for p in found
                if state in (None, "all", p["state"])
                and base in (None, p["base"]["ref"])
                and head in (None, p["head"]["label"])
            ]
            return self.page(found, query, path)
        if match := re.fullmatch(rf"{repo}/pulls/(\d+)", path):
            number = int(match.group(1))
            if number not in self.pulls:
                return (
                    404,
                    {},
                    {
                        "message": "Not Found",
                        "documentation_url": "https://docs.github.com/rest/pulls/pulls#get-a-pull-request",
                        "status": "404",
                    },
                )
            return 200, {}, self.pull(number)
        if match := re.fullmatch(rf"{repo}/pulls/(\d+)/commits", path):
            number = int(match.group(1))
            return self.page(
                [self._commit(sha) for sha in self._commits_of(number)] if number in self.pulls else [], query, path
            )
        if match := re.fullmatch(rf"{repo}/commits/([0-9a-f]{{40}})/pulls", path):
            return self.page([self.pull(n) for n in self.commit_pulls.get(match.group(1), [])], query, path)
        if match := re.fullmatch(rf"{repo}/commits/([0-9a-f]{{40}})", path):
            return 200, {}, self._commit(match.group(1))
        if match := re.fullmatch(rf"{repo}/compare/([0-9a-f]{{40}})\.\.\.(.+)", path):
            reachable = self._is_on(match.group(1), match.group(2))
            if reachable is None:
                return 404, {}, {"message": "Not Found"}
            status = "ahead" if reachable else "diverged"
            return (
                200,
                {},
                {
                    "status": status,
                    "ahead_by": 1,
                    "behind_by": 0,
                    "total_commits": 1,
                    "commits": [],
                    "files": [],
                    "url": f"{self.base}{path}",
                    "html_url": f"https://github.com/{SLUG}/compare/{match.group(1)}...{match.group(2)}",
                },
            )
        if path == f"{repo}/actions/artifacts" and method == "GET":
            wanted = (query.get("name") or [None])[0]
            found = [a for artifacts in self.artifacts.values() for a in artifacts if wanted in (None, a["name"])]
            found.sort(key=lambda a: (a["created_at"], a["id"]), reverse=True)  # newest first, as GitHub lists them
            return self.page(found, query, path, "artifacts")
        if match := re.fullmatch(rf"{repo}/issues/(\d+)/comments", path):
            number = int(match.group(1))
            if number not in self.pulls:
                return 404, {}, {"message": "Not Found"}
            if method == "GET":
                return self.page(list(self.comments[number]), query, path)
            comment = self._comment(number, body["body"], self.identity(headers) or ACTIONS_BOT)
            self.comments[number].append(comment)
            return 201, {}, comment
        if (match := re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)) and method == "PATCH":
            cid = int(match.group(1))
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == cid:
                        if comment["user"]["login"] != (self.identity(headers) or ACTIONS_BOT):
                            return 403, {}, {"message": "Resource not accessible by integration"}  # another's comment
                        comment["body"] = body["body"]
                        comment["updated_at"] = "2026-11-30T01:00:00Z"
                        return 200, {}, comment
            return 404, {}, {"message": "Not Found"}
        if match := re.fullmatch(rf"{repo}/actions/runs/(\d+)", path):
            run = self.runs.get(int(match.group(1)))
            return (200, {}, run) if run else (404, {}, {"message": "Not Found"})
        if match := re.fullmatch(rf"{repo}/actions/runs/(\d+)/artifacts", path):
            return self.page(self.artifacts.get(int(match.group(1)), []), query, path, "artifacts")
        if match := re.fullmatch(rf"{repo}/actions/artifacts/(\d+)/zip", path):
            aid = int(match.group(1))
            artifact = next((a for artifacts in self.artifacts.values() for a in artifacts if a["id"] == aid), None)
            if artifact is None:
                return 404, {}, {"message": "Not Found"}
            if artifact["expired"]:
                return (
                    410,
                    {},
                    {
                        "message": "Artifact has expired",
                        "documentation_url": "https://docs.github.com/rest/actions/artifacts#download-an-artifact",
                    },
                )
            # GitHub answers with a redirect to short-lived blob storage, on another host.
            return 302, {"Location": f"{self.blob_base}{BLOB_PREFIX}{aid}.zip?sig=short-lived"}, None
        if match := re.fullmatch(rf"{repo}/actions/workflows/([^/]+)", path):
            return 200, {}, self.workflow(match.group(1))
        if match := re.fullmatch(rf"{repo}/actions/workflows/([^/]+)/dispatches", path):
            inputs = body.get("inputs", {})
            run = self.add_run(
                self.next_id(),
                head_branch=body["ref"],
                title=self.title_for_dispatch(inputs),
                event="workflow_dispatch",
            )
            run["status"], run["conclusion"] = "queued", None
            self.dispatches.append({"ref": body["ref"], "inputs": inputs, "run_id": run["id"]})
            if body.get("return_run_details"):
                return 200, {}, {"workflow_run_id": run["id"], "run_url": run["url"], "html_url": run["html_url"]}
            return 204, {}, None
        if match := re.fullmatch(rf"{repo}/actions/workflows/([^/]+)/runs", path):
            runs = [r for r in self.runs.values() if not query.get("event") or r["event"] == query["event"][0]]
            runs = [r for r in runs if not query.get("branch") or r["head_branch"] == query["branch"][0]]
            if query.get("status"):  # GitHub's `status` filter also takes a conclusion (success, failure, …)
                runs = [r for r in runs if query["status"][0] in (r["status"], r["conclusion"])]
            runs.sort(key=lambda r: -r["id"])  # newest first, as GitHub lists them
            return self.page(runs, query, path, "workflow_runs")
        if (answer := self.handle_repository_settings(method, path, query)) is not None:
            return answer
        return 404, {}, {"message": f"Not Found (the test server does not implement {method} {path})"}

    def blob(self, path: str, headers: dict) -> tuple[int, dict, object]:
        """Blob storage: a pre-signed URL, which refuses a second credential (the API token)."""
        if any(k.lower() == "authorization" for k in headers):
            return (
                400,
                {"Content-Type": "application/xml"},
                b"<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>",
            )
        match = re.fullmatch(rf"{BLOB_PREFIX}(\d+)\.zip", path)
        blob = self.blobs.get(int(match.group(1))) if match else None
        if blob is None:
            return 404, {"Content-Type": "application/xml"}, b"<Error><Code>BlobNotFound</Code></Error>"
        return 200, {"Content-Type": "application/zip"}, blob


# --- the GITHUB_TOKEN: its permissions and its hourly budget --------------------------------------
# What each endpoint infx calls asks of a GitHub App installation token (the Actions GITHUB_TOKEN is
# one), from GitHub's "Permissions required for GitHub Apps"
# (https://docs.github.com/en/rest/authentication/permissions-required-for-github-apps): each rule
# is (method, path below /repos/{owner}/{repo}, the permission sets of which any one suffices).
# An endpoint the page lists under two permissions (issue comments: Issues or Pull requests; a pull
# request: Pull requests or Contents) takes either. GitHub on that page: "These permissions are
# required to access private resources. Some endpoints can also be used to access public resources
# without these permissions": a read of a public repository passes without them, a write never.
# `metadata: read` every GITHUB_TOKEN has ("all unspecified permissions are set to no access, with
# the exception of the metadata scope, which always gets read access"); `administration` no
# GITHUB_TOKEN can have (it is not a workflow permission), so the settings and runner endpoints
# refuse it whatever the job asks for.
READ, WRITE = "read", "write"
LEVELS = {"none": 0, READ: 1, WRITE: 2}
ENDPOINT_PERMISSIONS: tuple[tuple[str, str, tuple[tuple[tuple[str, str], ...], ...]], ...] = (
    ("GET", r"", ((("metadata", READ),),)),
    ("GET", r"/pulls", ((("pull-requests", READ),),)),
    ("GET", r"/pulls/\d+", ((("pull-requests", READ),), (("contents", READ),))),
    ("GET", r"/pulls/\d+/commits", ((("pull-requests", READ),),)),
    ("GET", r"/commits/[0-9a-f]{40}/pulls", ((("pull-requests", READ),),)),
    ("GET", r"/commits/[^/]+", ((("contents", READ),),)),
    ("GET", r"/compare/.+", ((("contents", READ),),)),
    ("GET", r"/issues/\d+/comments", ((("issues", READ),), (("pull-requests", READ),))),
    ("POST", r"/issues/\d+/comments", ((("issues", WRITE),), (("pull-requests", WRITE),))),
    ("PATCH", r"/issues/comments/\d+", ((("issues", WRITE),), (("pull-requests", WRITE),))),
    ("GET", r"/actions/artifacts", ((("actions", READ),),)),
    ("GET", r"/actions/artifacts/\d+/zip", ((("actions", READ),),)),
    ("GET", r"/actions/runs/\d+", ((("actions", READ),),)),
    ("GET", r"/actions/runs/\d+/artifacts", ((("actions", READ),),)),
    ("GET", r"/actions/workflows/[^/]+", ((("actions", READ),),)),
    ("GET", r"/actions/workflows/[^/]+/runs", ((("actions", READ),),)),
    ("POST", r"/actions/workflows/[^/]+/dispatches", ((("actions", WRITE),),)),
    ("GET", r"/actions/runners", ((("administration", READ),),)),
    ("GET", r"/actions/permissions/.+", ((("administration", READ),),)),
)
# GitHub: "The rate limit for GITHUB_TOKEN is 1,000 requests per hour per repository"; a personal
# access token has 5,000 an hour (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api).
# Past it: "you will receive a 403 or 429 response, and the x-ratelimit-remaining header will be 0".
ACTIONS_TOKEN_LIMIT, PERSONAL_TOKEN_LIMIT = 1_000, 5_000
RATE_WINDOW = 3600.0
INTEGRATION_REFUSAL = "Resource not accessible by integration"


def permission_sets(method: str, path: str) -> tuple | None:
    """The permission sets an endpoint accepts (any one), or None for what needs none here."""
    match = re.fullmatch(r"/repos/[^/]+/[^/]+(.*)", path)
    if match is None:
        return None
    return next(
        (
            sets
            for verb, pattern, sets in ENDPOINT_PERMISSIONS
            if verb == method and re.fullmatch(pattern, match.group(1))
        ),
        None,
    )


def granted(permissions: dict[str, str], scope: str, level: str) -> bool:
    have = READ if scope == "metadata" else permissions.get(scope, "none")
    return LEVELS.get(have, 0) >= LEVELS[level]


def _grant_token(self: GitHubState, permissions: dict[str, str]) -> str:
    """A GITHUB_TOKEN carrying exactly ``permissions`` (scope -> read | write), as Actions mints one
    per job; registered so every request it makes is held to them."""
    import secrets

    token = f"{INSTALLATION_PREFIX}{secrets.token_hex(18)}"
    with self.lock:
        self.tokens[token] = {scope: level for scope, level in permissions.items() if level in (READ, WRITE)}
    return token


def _permission_refusal(self: GitHubState, method: str, path: str, token: str):
    """GitHub's 403 for a GITHUB_TOKEN without the permission the endpoint needs, else None."""
    permissions = self.tokens.get(token)
    if permissions is None:  # not a job's GITHUB_TOKEN: a personal token with full access (the tests' default)
        return None
    sets = permission_sets(method, path)
    if sets is None or any(all(granted(permissions, scope, level) for scope, level in one) for one in sets):
        return None
    administration = any(scope == "administration" for one in sets for scope, _ in one)
    if method == "GET" and not self.private and not administration:
        return None  # a public repository's resources are readable without the permission
    accepted = "; ".join(",".join(f"{scope.replace('-', '_')}={level}" for scope, level in one) for one in sets)
    return (
        403,
        {"X-Accepted-GitHub-Permissions": accepted},
        {
            "message": INTEGRATION_REFUSAL,
            "status": "403",
            "documentation_url": "https://docs.github.com/rest/authentication/permissions-required-for-github-apps",
        },
    )


def _rate_limit(self: GitHubState, token: str, now: float):
    """Count one API request against its token's hourly budget: (the x-ratelimit headers, GitHub's
    403 when the budget was already spent, else None)."""
    bucket, kind = (f"repository:{SLUG}", "GITHUB_TOKEN") if token in self.tokens else (f"token:{token}", "other")
    limit = self.hourly_limits[kind]
    window = self.budgets.get(bucket)
    if window is None or now >= window[0] + RATE_WINDOW:
        window = self.budgets[bucket] = [now, 0]
    window[1] += 1
    used = min(window[1], limit)
    headers = {
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(limit - used),
        "X-RateLimit-Used": str(used),
        "X-RateLimit-Reset": str(int(window[0] + RATE_WINDOW)),
        "X-RateLimit-Resource": "core",
    }
    if window[1] <= limit:
        return headers, None
    what = "installation ID 1" if kind == "GITHUB_TOKEN" else "user ID 2"
    return headers, (
        403,
        {},
        {
            "message": f"API rate limit exceeded for {what}.",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        },
    )


GitHubState.grant_token = _grant_token
GitHubState.permission_refusal = _permission_refusal
GitHubState.rate_limit = _rate_limit


# --- repository settings and self-hosted runners (infx repo check) ------------------------------
# GitHub's REST shapes: GET /repos/{o}/{r}/actions/permissions/fork-pr-contributor-approval and
# /workflow, GET /repos/{o}/{r}/actions/runners, GET /orgs/{org}/actions/runner-groups
# (?visible_to_repository=) and its /{id}/runners and /{id}/repositories, paginated by per_page/page.
# Only the tokens in `repo_admins` may read the repository's settings and runners, only those in
# `org_runner_readers` the organization's runner groups; any other token gets GitHub's 403.


@dataclass
class RepositorySettings:
    approval_policy: str = "first_time_contributors"  # GitHub's default for a public repository
    default_workflow_permissions: str = "read"
    can_approve_pull_request_reviews: bool = False
    runners: list[dict] = field(default_factory=list)  # the repository's own runners
    runner_groups: list[dict] = field(
        default_factory=list
    )  # the organization's, each with "runners" and "repositories"
    repo_admins: set[str] = field(default_factory=lambda: {"ghs_admin"})
    org_runner_readers: set[str] = field(default_factory=lambda: {"ghs_admin"})


def runner(runner_id: int, name: str, labels: list[str], ephemeral: bool, status: str = "online") -> dict:
    return {
        "id": runner_id,
        "name": name,
        "os": "linux",
        "status": status,
        "busy": False,
        "ephemeral": ephemeral,
        "labels": [
            {"id": 100 + i, "name": label, "type": "custom"} for i, label in enumerate(["self-hosted", *labels])
        ],
    }


def runner_group(
    state: GitHubState,
    group_id: int,
    name: str,
    visibility: str,
    runners: list[dict],
    repositories: list[str] | None = None,
) -> dict:
    group = {
        "id": group_id,
        "name": name,
        "visibility": visibility,
        "default": group_id == 1,
        "runners_url": f"{state.base}/orgs/{OWNER}/actions/runner-groups/{group_id}/runners",
        "inherited": False,
        "allows_public_repositories": True,
        "restricted_to_workflows": False,
        "selected_workflows": [],
        "workflow_restrictions_read_only": False,
        "runners": runners,
        "repositories": repositories or [],
    }
    if visibility == "selected":
        group["selected_repositories_url"] = f"{state.base}/orgs/{OWNER}/actions/runner-groups/{group_id}/repositories"
    return group


def _page(query: dict, items: list, key: str) -> dict:
    per_page, page = int((query.get("per_page") or ["30"])[0]), int((query.get("page") or ["1"])[0])
    return {"total_count": len(items), key: items[(page - 1) * per_page : page * per_page]}


def repository_settings(state: GitHubState) -> RepositorySettings:
    """The settings the server answers with (tests change them before the first request)."""
    return state.__dict__.setdefault("settings", RepositorySettings())


def _settings_handler(self: GitHubState, method: str, path: str, query: dict):
    """The repository-settings routes, or None for any other path."""
    settings = repository_settings(self)
    repo, org = f"/repos/{SLUG}", f"/orgs/{OWNER}/actions/runner-groups"
    if method != "GET" or not (
        path.startswith(f"{repo}/actions/permissions/") or path == f"{repo}/actions/runners" or path.startswith(org)
    ):
        return None
    token = (self.requests[-1].headers.get("Authorization") or "").split(" ")[-1]  # the request being answered
    allowed = settings.org_runner_readers if path.startswith(org) else settings.repo_admins
    if token not in allowed:
        message = (
            "Resource not accessible by personal access token"
            if path.startswith(org)
            else "Must have admin rights to Repository."
        )
        return (
            403,
            {},
            {"message": message, "documentation_url": "https://docs.github.com/rest/actions", "status": "403"},
        )
    if path == f"{repo}/actions/permissions/fork-pr-contributor-approval":
        return 200, {}, {"approval_policy": settings.approval_policy}
    if path == f"{repo}/actions/permissions/workflow":
        return (
            200,
            {},
            {
                "default_workflow_permissions": settings.default_workflow_permissions,
                "can_approve_pull_request_reviews": settings.can_approve_pull_request_reviews,
            },
        )
    if path == f"{repo}/actions/runners":
        return 200, {}, _page(query, settings.runners, "runners")
    if path == org:
        visible = (query.get("visible_to_repository") or [None])[0]
        groups = [
            g
            for g in settings.runner_groups
            if visible is None or g["visibility"] in ("all", "private") or f"{OWNER}/{visible}" in g["repositories"]
        ]
        listed = [{k: v for k, v in g.items() if k not in ("runners", "repositories")} for g in groups]
        return 200, {}, _page(query, listed, "runner_groups")
    if match := re.fullmatch(rf"{org}/(\d+)/(runners|repositories)", path):
        group = next((g for g in settings.runner_groups if g["id"] == int(match.group(1))), None)
        if group is None:
            return 404, {}, {"message": "Not Found"}
        if match.group(2) == "runners":
            return 200, {}, _page(query, group["runners"], "runners")
        return 200, {}, _page(query, [self.repository(slug) for slug in group["repositories"]], "repositories")
    return 404, {}, {"message": "Not Found"}


GitHubState.handle_repository_settings = _settings_handler


class Handler(BaseHTTPRequestHandler):
    state: GitHubState
    host_kind = "api"

    def log_message(self, *args) -> None:  # keep the test output quiet
        pass

    def _serve(self) -> None:
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        state = self.state
        headers_in = dict(self.headers)
        query = parse_qs(url.query)
        with state.lock:
            number = len(state.requests)
            state.requests.append(Request(self.command, url.path, query, body, headers_in, self.host_kind))
            fault = state.script.pop(number, None)
            if fault is None:
                fault = next(
                    (f for f in state.faults if f.method == self.command and re.fullmatch(f.pattern, url.path)), None
                )
                if fault is not None:
                    state.faults.remove(fault)
            limits, refusal = (
                ({}, None)
                if self.host_kind == "blob" or url.path == "/graphql"
                else state.rate_limit(token_of(headers_in), time.time())
            )
            if fault is not None:
                if fault.apply:
                    state.handle(self.command, url.path, query, body, headers_in)
                status, headers, payload, declared = fault.status, fault.headers, fault.body, fault.declared
            else:
                refusal = refusal or (
                    None
                    if self.host_kind == "blob"
                    else state.permission_refusal(self.command, url.path, token_of(headers_in))
                )
                if refusal is not None:
                    status, headers, payload = refusal
                elif self.host_kind == "blob":
                    status, headers, payload = state.blob(url.path, headers_in)
                else:
                    status, headers, payload = state.handle(self.command, url.path, query, body, headers_in)
                headers = {**limits, **headers}
                declared = None
                mutate = state.mutations.pop(number, None)
                if mutate is not None:
                    status, headers, payload, declared = mutate(status, dict(headers), payload)
        if isinstance(payload, str):
            payload = payload.encode()
        data = payload if isinstance(payload, bytes) else (b"" if payload is None else json.dumps(payload).encode())
        self.send_response(status)
        if not isinstance(payload, bytes) and not any(k.lower() == "content-type" for k in headers):
            self.send_header("Content-Type", "application/json; charset=utf-8")
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(declared if declared is not None else len(data)))
        if declared is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        if declared is not None and declared > len(data):  # cut off: the rest never comes
            self.wfile.flush()
            self.close_connection = True

    do_GET = do_POST = do_PATCH = do_HEAD = _serve


class LocalGitHub:
    """`with LocalGitHub() as gh:` — a running server; `gh.url` is the API base URL, `gh.blob_url`
    the blob storage artifact downloads are redirected to (another port: another host)."""

    def __init__(self):
        self.state = GitHubState()
        api = type("ApiHandler", (Handler,), {"state": self.state, "host_kind": "api"})
        blob = type("BlobHandler", (Handler,), {"state": self.state, "host_kind": "blob"})
        self.servers = [ThreadingHTTPServer(("127.0.0.1", 0), api), ThreadingHTTPServer(("127.0.0.1", 0), blob)]
        self.url = f"http://127.0.0.1:{self.servers[0].server_address[1]}"
        self.blob_url = f"http://127.0.0.1:{self.servers[1].server_address[1]}"
        self.state.base, self.state.blob_base = self.url, self.blob_url
        self.threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in self.servers]

    def __enter__(self) -> LocalGitHub:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()
