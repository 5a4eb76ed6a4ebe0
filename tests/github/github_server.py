"""A small GitHub REST server on 127.0.0.1 for testing infx's PyGithub adapter over real HTTP.

It implements exactly the endpoints infx calls, answering with JSON in the shape GitHub
returns (ids, `url`s that point back at this server, list envelopes), records every
request it receives, and can be told to fail the next matching request (a rate limit, a
server error, or a dispatch that is applied but answered with an error).
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

OWNER, NAME = "acme", "bench"
SLUG = f"{OWNER}/{NAME}"
DELETED_REPOSITORY = "deleted/repository"  # add_pull(head_repo=...): a pull request whose head repository is gone


@dataclass
class Request:
    method: str
    path: str
    query: dict
    body: object
    headers: dict


@dataclass
class Fault:
    method: str
    pattern: str
    status: int
    body: dict
    headers: dict = field(default_factory=dict)
    apply: bool = False  # still carry out the request, then answer with the fault


def rate_limit_fault(method: str, pattern: str, reset_in: float) -> Fault:
    return Fault(method, pattern, 403,
                 {"message": "API rate limit exceeded for installation ID 1. (But here's the good news: ...)",
                  "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"},
                 {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0",
                  "X-RateLimit-Reset": str(int(time.time() + reset_in))})


class GitHubState:
    def __init__(self):
        self.lock = threading.Lock()
        self.base = ""
        self.requests: list[Request] = []
        self.faults: list[Fault] = []
        self.pulls: set[int] = set()
        self.pull_heads: dict[int, tuple[str, str]] = {}  # number -> (head branch, head repository)
        self.comments: dict[int, list[dict]] = {}
        self.runs: dict[int, dict] = {}
        self.artifacts: dict[int, list[dict]] = {}
        self.blobs: dict[int, bytes] = {}
        self.dispatches: list[dict] = []
        self.on_main: set[str] = set()  # commits reachable from main (compare answers "ahead" for them)
        self.pull_commits: dict[int, list[str]] = {}
        self.commit_pulls: dict[str, list[int]] = {}
        self.title_for_dispatch = lambda inputs: "Manual sweep"
        self._ids = iter(range(1000, 10**9))

    def next_id(self) -> int:
        return next(self._ids)

    # --- fixtures the tests build ---------------------------------------------------------

    def add_pull(self, number: int, head_ref: str = "feature", head_repo: str | None = None) -> None:
        """``head_repo`` DELETED_REPOSITORY: the head repository is gone (GitHub's ``head.repo: null``)."""
        self.pulls.add(number)
        self.pull_heads[number] = (head_ref, head_repo or SLUG)  # SLUG read now: tests may set it
        self.comments.setdefault(number, [])

    def add_comment(self, number: int, body: str, login: str = "someone") -> dict:
        comment = self._comment(number, body, login)
        self.comments[number].append(comment)
        return comment

    def _comment(self, number: int, body: str, login: str) -> dict:
        cid = self.next_id()
        return {"id": cid, "node_id": f"IC_{cid}", "url": f"{self.base}/repos/{SLUG}/issues/comments/{cid}",
                "html_url": f"https://github.com/{SLUG}/pull/{number}#issuecomment-{cid}",
                "issue_url": f"{self.base}/repos/{SLUG}/issues/{number}", "body": body,
                "user": {"login": login, "id": 1, "type": "Bot"}, "author_association": "NONE",
                "created_at": "2026-11-30T00:00:00Z", "updated_at": "2026-11-30T00:00:00Z"}

    def add_run(self, run_id: int, head_branch: str = "main", title: str = "Sweep", event: str = "push",
                head_sha: str = "c" * 40, path: str = ".github/workflows/run-sweep.yml", repository: str | None = None,
                head_repository: str | None = None) -> dict:
        repository, head_repository = repository or SLUG, head_repository or SLUG
        run = {"id": run_id, "name": "Run sweep", "node_id": f"WFR_{run_id}", "head_branch": head_branch,
               "path": path, "repository": self.repository(repository), "head_repository": self.repository(head_repository),
               "head_sha": head_sha, "display_title": title, "event": event, "status": "completed",
               "conclusion": "failure", "workflow_id": 77, "run_number": run_id % 1000, "run_attempt": 1,
               "url": f"{self.base}/repos/{SLUG}/actions/runs/{run_id}",
               "html_url": f"https://github.com/{SLUG}/actions/runs/{run_id}",
               "artifacts_url": f"{self.base}/repos/{SLUG}/actions/runs/{run_id}/artifacts",
               "jobs_url": f"{self.base}/repos/{SLUG}/actions/runs/{run_id}/jobs",
               "created_at": "2026-11-30T00:00:00Z", "updated_at": "2026-11-30T00:00:00Z"}
        self.runs[run_id] = run
        self.artifacts.setdefault(run_id, [])
        return run

    def add_artifact(self, run_id: int, name: str, size: int = 1234, expired: bool = False, files: dict | None = None,
                     created_at: str = "2026-11-30T00:00:00Z") -> dict:
        aid = self.next_id()
        run = self.runs.get(run_id, {})
        artifact = {"id": aid, "node_id": f"MDg6QXJ0aWZhY3Q{aid}", "name": name, "size_in_bytes": size,
                    "url": f"{self.base}/repos/{SLUG}/actions/artifacts/{aid}",
                    "archive_download_url": f"{self.base}/repos/{SLUG}/actions/artifacts/{aid}/zip",
                    "expired": expired, "digest": "sha256:" + "0" * 64,
                    "created_at": created_at, "expires_at": "2027-02-28T00:00:00Z",
                    "updated_at": created_at,
                    "workflow_run": {"id": run_id, "head_branch": run.get("head_branch", "main"),
                                     "head_sha": run.get("head_sha", "c" * 40)}}
        self.artifacts[run_id].append(artifact)
        if files is not None:
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as archive:
                for file_name, content in files.items():
                    archive.writestr(file_name, content)
            self.blobs[aid] = buffer.getvalue()
        return artifact

    def _commit(self, sha: str) -> dict:
        return {"sha": sha, "node_id": f"C_{sha}", "url": f"{self.base}/repos/{SLUG}/commits/{sha}",
                "html_url": f"https://github.com/{SLUG}/commit/{sha}", "commit": {"message": "a commit"}, "parents": []}

    def requests_to(self, method: str, pattern: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    # --- the API --------------------------------------------------------------------------

    def repository(self, slug: str) -> dict:
        owner, name = slug.split("/")
        return {"id": 1 if slug == SLUG else 2, "node_id": f"R_{slug}", "name": name, "full_name": slug,
                "owner": {"login": owner, "id": 2, "type": "Organization"}, "private": False,
                "url": f"{self.base}/repos/{slug}", "html_url": f"https://github.com/{slug}", "default_branch": "main"}

    def workflow(self, ident: str) -> dict:
        return {"id": 77, "node_id": "W_77", "name": "Run sweep", "path": ".github/workflows/run-sweep.yml",
                "state": "active", "url": f"{self.base}/repos/{SLUG}/actions/workflows/{ident}",
                "html_url": f"https://github.com/{SLUG}/blob/main/.github/workflows/run-sweep.yml",
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}

    def handle(self, method: str, path: str, query: dict, body) -> tuple[int, dict, object]:
        repo = f"/repos/{SLUG}"
        if method == "GET" and path == repo:
            return 200, {}, {"id": 1, "node_id": "R_1", "name": NAME, "full_name": SLUG,
                             "owner": {"login": OWNER, "id": 2, "type": "Organization"}, "private": False,
                             "url": f"{self.base}{repo}", "html_url": f"https://github.com/{SLUG}",
                             "default_branch": "main"}
        if match := re.fullmatch(rf"{repo}/pulls/(\d+)", path):
            number = int(match.group(1))
            if number not in self.pulls:
                return 404, {}, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest/pulls/pulls#get-a-pull-request", "status": "404"}
            commits = self.pull_commits.get(number, ["d" * 40])
            head_ref, head_slug = self.pull_heads[number]
            return 200, {}, {"id": 5000 + number, "number": number, "state": "open", "title": "A change",
                             "url": f"{self.base}{repo}/pulls/{number}", "issue_url": f"{self.base}{repo}/issues/{number}",
                             "html_url": f"https://github.com/{SLUG}/pull/{number}",
                             "head": {"ref": head_ref, "sha": commits[-1],
                                      "repo": None if head_slug == DELETED_REPOSITORY else self.repository(head_slug)},
                             "base": {"ref": "main", "sha": "b" * 40, "repo": self.repository(SLUG)}}
        if match := re.fullmatch(rf"{repo}/pulls/(\d+)/commits", path):
            return 200, {}, [self._commit(sha) for sha in self.pull_commits.get(int(match.group(1)), [])]
        if match := re.fullmatch(rf"{repo}/commits/([0-9a-f]{{40}})/pulls", path):
            return 200, {}, [self.handle("GET", f"{repo}/pulls/{n}", {}, None)[2] for n in self.commit_pulls.get(match.group(1), [])]
        if match := re.fullmatch(rf"{repo}/commits/([0-9a-f]{{40}})", path):
            return 200, {}, self._commit(match.group(1))
        if match := re.fullmatch(rf"{repo}/compare/([0-9a-f]{{40}})\.\.\.(.+)", path):
            status = "ahead" if match.group(2) == "main" and match.group(1) in self.on_main else "diverged"
            return 200, {}, {"status": status, "ahead_by": 1, "behind_by": 0, "total_commits": 1, "commits": [], "files": [],
                             "url": f"{self.base}{path}", "html_url": f"https://github.com/{SLUG}/compare/{match.group(1)}...{match.group(2)}"}
        if path == f"{repo}/actions/artifacts" and method == "GET":
            wanted = (query.get("name") or [None])[0]
            found = [a for artifacts in self.artifacts.values() for a in artifacts if wanted in (None, a["name"])]
            found.sort(key=lambda a: a["created_at"], reverse=True)  # newest first, as GitHub lists them
            return 200, {}, {"total_count": len(found), "artifacts": found}
        if match := re.fullmatch(rf"{repo}/issues/(\d+)/comments", path):
            number = int(match.group(1))
            if number not in self.pulls:
                return 404, {}, {"message": "Not Found"}
            if method == "GET":
                return 200, {}, list(self.comments[number])
            comment = self._comment(number, body["body"], "github-actions[bot]")
            self.comments[number].append(comment)
            return 201, {}, comment
        if (match := re.fullmatch(rf"{repo}/issues/comments/(\d+)", path)) and method == "PATCH":
            cid = int(match.group(1))
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == cid:
                        comment["body"] = body["body"]
                        comment["updated_at"] = "2026-11-30T01:00:00Z"
                        return 200, {}, comment
            return 404, {}, {"message": "Not Found"}
        if match := re.fullmatch(rf"{repo}/actions/runs/(\d+)", path):
            run = self.runs.get(int(match.group(1)))
            return (200, {}, run) if run else (404, {}, {"message": "Not Found"})
        if match := re.fullmatch(rf"{repo}/actions/runs/(\d+)/artifacts", path):
            artifacts = self.artifacts.get(int(match.group(1)), [])
            return 200, {}, {"total_count": len(artifacts), "artifacts": artifacts}
        if match := re.fullmatch(rf"{repo}/actions/artifacts/(\d+)/zip", path):
            # GitHub answers with a redirect to short-lived blob storage.
            return 302, {"Location": f"{self.base}/blob-storage/{match.group(1)}.zip"}, None
        if match := re.fullmatch(r"/blob-storage/(\d+)\.zip", path):
            blob = self.blobs.get(int(match.group(1)))
            return (200, {"Content-Type": "application/zip"}, blob) if blob else (404, {}, {"message": "Not Found"})
        if match := re.fullmatch(rf"{repo}/actions/workflows/([^/]+)", path):
            return 200, {}, self.workflow(match.group(1))
        if match := re.fullmatch(rf"{repo}/actions/workflows/([^/]+)/dispatches", path):
            inputs = body.get("inputs", {})
            run = self.add_run(self.next_id(), head_branch=body["ref"], title=self.title_for_dispatch(inputs),
                               event="workflow_dispatch")
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
            return 200, {}, {"total_count": len(runs), "workflow_runs": runs}
        if (answer := self.handle_repository_settings(method, path, query)) is not None:
            return answer
        return 404, {}, {"message": f"Not Found (the test server does not implement {method} {path})"}


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
    runner_groups: list[dict] = field(default_factory=list)  # the organization's, each with "runners" and "repositories"
    repo_admins: set[str] = field(default_factory=lambda: {"ghs_admin"})
    org_runner_readers: set[str] = field(default_factory=lambda: {"ghs_admin"})


def runner(runner_id: int, name: str, labels: list[str], ephemeral: bool) -> dict:
    return {"id": runner_id, "name": name, "os": "linux", "status": "online", "busy": False, "ephemeral": ephemeral,
            "labels": [{"id": 100 + i, "name": label, "type": "custom"} for i, label in enumerate(["self-hosted", *labels])]}


def runner_group(state: "GitHubState", group_id: int, name: str, visibility: str, runners: list[dict],
                 repositories: list[str] | None = None) -> dict:
    group = {"id": group_id, "name": name, "visibility": visibility, "default": group_id == 1,
             "runners_url": f"{state.base}/orgs/{OWNER}/actions/runner-groups/{group_id}/runners",
             "inherited": False, "allows_public_repositories": True, "restricted_to_workflows": False,
             "selected_workflows": [], "workflow_restrictions_read_only": False, "runners": runners,
             "repositories": repositories or []}
    if visibility == "selected":
        group["selected_repositories_url"] = f"{state.base}/orgs/{OWNER}/actions/runner-groups/{group_id}/repositories"
    return group


def _page(query: dict, items: list, key: str) -> dict:
    per_page, page = int((query.get("per_page") or ["30"])[0]), int((query.get("page") or ["1"])[0])
    return {"total_count": len(items), key: items[(page - 1) * per_page:page * per_page]}


def repository_settings(state: "GitHubState") -> RepositorySettings:
    """The settings the server answers with (tests change them before the first request)."""
    return state.__dict__.setdefault("settings", RepositorySettings())


def _settings_handler(self: "GitHubState", method: str, path: str, query: dict):
    """The repository-settings routes, or None for any other path."""
    settings = repository_settings(self)
    repo, org = f"/repos/{SLUG}", f"/orgs/{OWNER}/actions/runner-groups"
    if method != "GET" or not (path.startswith(f"{repo}/actions/permissions/") or path == f"{repo}/actions/runners"
                               or path.startswith(org)):
        return None
    token = (self.requests[-1].headers.get("Authorization") or "").split(" ")[-1]  # the request being answered
    allowed = settings.org_runner_readers if path.startswith(org) else settings.repo_admins
    if token not in allowed:
        message = "Resource not accessible by personal access token" if path.startswith(org) else "Must have admin rights to Repository."
        return 403, {}, {"message": message, "documentation_url": "https://docs.github.com/rest/actions", "status": "403"}
    if path == f"{repo}/actions/permissions/fork-pr-contributor-approval":
        return 200, {}, {"approval_policy": settings.approval_policy}
    if path == f"{repo}/actions/permissions/workflow":
        return 200, {}, {"default_workflow_permissions": settings.default_workflow_permissions,
                         "can_approve_pull_request_reviews": settings.can_approve_pull_request_reviews}
    if path == f"{repo}/actions/runners":
        return 200, {}, _page(query, settings.runners, "runners")
    if path == org:
        visible = (query.get("visible_to_repository") or [None])[0]
        groups = [g for g in settings.runner_groups
                  if visible is None or g["visibility"] in ("all", "private") or f"{OWNER}/{visible}" in g["repositories"]]
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

    def log_message(self, *args) -> None:  # keep the test output quiet
        pass

    def _serve(self) -> None:
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        state = self.state
        with state.lock:
            state.requests.append(Request(self.command, url.path, parse_qs(url.query), body, dict(self.headers)))
            fault = next((f for f in state.faults if f.method == self.command and re.fullmatch(f.pattern, url.path)), None)
            if fault is not None:
                state.faults.remove(fault)
                if fault.apply:
                    state.handle(self.command, url.path, parse_qs(url.query), body)
                status, headers, payload = fault.status, fault.headers, fault.body
            else:
                status, headers, payload = state.handle(self.command, url.path, parse_qs(url.query), body)
        data = payload if isinstance(payload, bytes) else (b"" if payload is None else json.dumps(payload).encode())
        self.send_response(status)
        if not isinstance(payload, bytes):
            self.send_header("Content-Type", "application/json; charset=utf-8")
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = _serve


class LocalGitHub:
    """`with LocalGitHub() as gh:` — a running server; `gh.url` is the API base URL."""

    def __init__(self):
        self.state = GitHubState()
        handler = type("BoundHandler", (Handler,), {"state": self.state})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.state.base = self.url
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "LocalGitHub":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
