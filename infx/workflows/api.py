"""The one GitHub client: every call infx makes to the GitHub API goes through this module.

It is the only importer of PyGithub (slow to import, so only the commands that talk to GitHub
load it). `connect` configures PyGithub with infx's retry rule (`BoundedRetry`, mounted on every
connection PyGithub opens, and on the session artifact downloads use), so reads, paginated
lists, downloads and the redirect to blob storage all wait and repeat by one rule
(`wait_before_retry`) and under one bound (`WaitBudget`, INFX_GITHUB_MAX_WAIT seconds in all):

- a server error (5xx, an HTML error page among them) is asked again with a doubling backoff
  (0.5, 1, 2, 4 s: READ_RETRIES repeats), or after its `Retry-After`;
- a rate limit (403 or 429) waits for `Retry-After` (seconds or an HTTP date), else for
  `x-ratelimit-reset` when `x-ratelimit-remaining` is 0, else (a secondary limit that names no
  time) for SECONDARY_WAIT seconds, as GitHub's documentation asks;
- a 403 that names no limit is a permission: never asked again;
- a wait that would pass the bound ends the command at once, saying when to retry.

PyGithub's own GithubRetry is not used: it hands `Retry-After` to urllib3, whose wait is capped
only by urllib3's six hours (not by `max_rate_limit_wait`); it retries a 429 only with
`Retry-After`; it has no bound across retries and requests; and it reads a 403's body once, so
the body cannot be inspected again. `BoundedRetry` is a thin urllib3 `Retry` with PyGithub's own
rate-limit message classification and exception.

A write (POST, PATCH) is never blindly repeated: on a transient failure the current state is
read back first (`_write`), so a write that went through but timed out is not done twice (one
sticky comment, one sweep per launch id). An answer that is cut off or is not JSON is asked
again (`read`); an answer of the wrong shape (a missing field, a list where an object belongs,
an HTML page) is a located error (`calling`, rule `github-malformed`), never a traceback.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import io
import itertools
import json
import logging
import math
import os
import re
import shutil
import stat
import struct
import tempfile
import time
import uuid
import zipfile
import zlib
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlparse

from ..diagnostics import InfxError, error
from ..jsonfast import parse
from .markers import MARKER, PLAN_ARTIFACT, PLAN_FILE, launch_marker
from .repocheck import Facts, Runner, RunnerGroup, Unreadable
from .trust import TRUSTED_BRANCH, PullFacts, RunFacts, result_refusal, untrusted_reason

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_MAX_WAIT = 300.0  # seconds infx waits for GitHub in all (INFX_GITHUB_MAX_WAIT)
READ_RETRIES = 4  # a read is asked at most 1 + READ_RETRIES times
BACKOFF = 0.5  # seconds before the first repeat of a failed request, doubled each time
SECONDARY_WAIT = 60.0  # GitHub: after a secondary rate limit that names no time, wait at least a minute
WRITE_ATTEMPTS = 3
WRITE_SPACING = 1.0  # GitHub: at least one second between writes (secondary limits)
TIMEOUT = 30  # seconds for a connection or an answer to start
PER_PAGE = 100  # GitHub's largest page
RECENT_RUNS = 100  # dispatched runs searched for a launch id
DOWNLOAD_LIMIT = 2 << 30  # bytes of one artifact's archive
LIMIT_STATUSES = (403, 429)
STATUS_CHECKS = {  # what to check, by HTTP status
    401: "the token is invalid or expired: check GITHUB_TOKEN",
    403: "the token lacks a permission for this call, or a rate limit is exhausted: check the job's `permissions:`",
    404: "check that it exists and that the token can read the repository",
    409: "GitHub reports a conflict: retry later",
    410: "it is gone (an artifact past its retention period expires): it cannot be had any more",
    422: "GitHub refused the request body: check the workflow's inputs and the ref",
}
MALFORMED_FIX = "retry later; if it persists, check that GITHUB_API_URL is the GitHub API and githubstatus.com"


def _fail(message: str, rule: str = "github-api") -> InfxError:
    return InfxError(error("<github>", None, rule, message))


# --- settings --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    token: str
    base_url: str = DEFAULT_API_URL
    max_wait: float = DEFAULT_MAX_WAIT
    pace: bool = True  # GitHub's advice: a second between writes (reads are made one at a time anyway)


WORKFLOW_TOKEN = "in a workflow: `env: GITHUB_TOKEN: ${{ github.token }}`"


def settings_from_env(token: str | None = None, base_url: str | None = None, needs: str = WORKFLOW_TOKEN) -> Settings:
    """The API settings from the environment; ``needs`` says which token the command needs when none is set."""
    token = token or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    if not token:
        raise _fail(f"no GitHub token: set GITHUB_TOKEN ({needs})")
    max_wait = os.environ.get("INFX_GITHUB_MAX_WAIT") or str(DEFAULT_MAX_WAIT)
    try:
        seconds = float(max_wait)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < math.inf:
        raise _fail(f"INFX_GITHUB_MAX_WAIT={max_wait!r} is not a number of seconds: set it to e.g. 300, or unset it")
    return Settings(
        token=token, base_url=base_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL, max_wait=seconds
    )


# --- the retry rule ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wait:
    seconds: float
    why: str  # e.g. "HTTP 403 rate limit until x-ratelimit-reset"


class WaitTooLong(Exception):
    """GitHub asked for a wait longer than what is left of the bound."""

    def __init__(self, wait: Wait, left: float, limit: float):
        super().__init__(wait.why)
        self.wait, self.left, self.limit = wait, left, limit


class WaitBudget:
    """The one bound on waiting for GitHub in one command: every retry of every request takes
    its wait from here, and a wait past what is left ends the command (WaitTooLong)."""

    def __init__(self, limit: float):
        self.limit, self.spent = limit, 0.0

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.spent)

    def take(self, wait: Wait) -> None:
        if wait.seconds > self.left:
            raise WaitTooLong(wait, self.left, self.limit)
        self.spent += wait.seconds


def backoff(attempt: int) -> float:
    return BACKOFF * 2**attempt


def parse_retry_after(value: str | None, now: float) -> float | None:
    """`Retry-After` in seconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); None when
    absent or unreadable (then the other signals decide)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, when.timestamp() - now)


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def wait_before_retry(status: int, headers, message: str, attempt: int, now: float) -> Wait | None:
    """How long to wait before asking again after an answer of ``status``, or None when asking
    again cannot help. ``message``: GitHub's `message` (rate-limit answers name their kind);
    ``attempt``: how many times this request was repeated already. The one retry rule."""
    from github.Requester import Requester

    fields = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    retry_after = parse_retry_after(fields.get("retry-after"), now)
    if status in LIMIT_STATUSES:
        if retry_after is not None:
            return Wait(retry_after, f"HTTP {status} with Retry-After {fields['retry-after']!r} ({retry_after:.0f} s)")
        if fields.get("x-ratelimit-remaining") == "0":
            reset = _number(fields.get("x-ratelimit-reset"))
            if reset is not None:  # plus a second: the reset second itself may still be limited
                return Wait(
                    max(0.0, reset - now) + 1, f"HTTP {status} rate limit; it resets in {max(0.0, reset - now):.0f} s"
                )
            return Wait(SECONDARY_WAIT, f"HTTP {status} rate limit without a reset time")
        if status == 429 or Requester.isRateLimitError(message or ""):
            return Wait(
                max(SECONDARY_WAIT, backoff(attempt)), f"HTTP {status} secondary rate limit ({message or 'no message'})"
            )
        return None  # a 403 that names no limit: a permission
    if 500 <= status <= 599:
        if retry_after is not None:
            return Wait(retry_after, f"HTTP {status} with Retry-After {fields['retry-after']!r}")
        return Wait(backoff(attempt), f"HTTP {status} from GitHub")
    return None


def _message_of(body: bytes | None) -> str:
    try:
        data = json.loads(body or b"")
    except (ValueError, UnicodeDecodeError):
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else ""


def _retry_type():
    """urllib3's Retry with infx's rule and the shared budget (built lazily: urllib3 is imported
    only with PyGithub)."""
    from github.Requester import Requester
    from urllib3.util.retry import Retry

    class BoundedRetry(Retry):
        budget: WaitBudget | None = None
        planned: float | None = None

        def new(self, **kw):
            retry = super().new(**kw)
            retry.budget = self.budget
            return retry

        def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
            wait = None
            if response is not None:
                body = response.data if response.status in LIMIT_STATUSES else None
                wait = wait_before_retry(
                    response.status, response.headers, _message_of(body), len(self.history), time.time()
                )
                if wait is None:  # not worth asking again: GitHub's answer, as PyGithub raises it
                    raise Requester.createException(response.status, dict(response.headers), _json_or_text(body))
            retry = super().increment(
                method, url, response, error, _pool, _stacktrace
            )  # MaxRetryError when tries run out
            if wait is None:
                wait = Wait(backoff(len(self.history)), f"no answer ({type(error).__name__})")
            if self.budget is not None:
                self.budget.take(wait)
            retry.planned = wait.seconds
            return retry

        def sleep(self, response=None) -> None:
            if self.planned is None:
                return super().sleep(response)
            if self.planned > 0:
                time.sleep(self.planned)

    return BoundedRetry


def _json_or_text(body: bytes | None):
    try:
        return json.loads(body or b"")
    except (ValueError, UnicodeDecodeError):
        return {"data": (body or b"").decode("utf-8", "replace")[:2000]}


# --- the client ---------------------------------------------------------------------------------------


class Client:
    """PyGithub configured with infx's retry rule, a session for artifact downloads on the same
    rule, and the one WaitBudget both take their waits from."""

    def __init__(self, settings: Settings):
        import requests
        from github import Auth, Github

        # PyGithub narrates its retries on stderr; infx reports the outcome in one line instead.
        logging.getLogger("github").setLevel(logging.ERROR)
        self.settings = settings
        self.budget = WaitBudget(settings.max_wait)
        retry = _retry_type()(
            total=READ_RETRIES,
            allowed_methods={"GET", "HEAD"},
            status_forcelist=[*LIMIT_STATUSES, *range(500, 600)],
            raise_on_status=True,
            respect_retry_after_header=True,
        )
        retry.budget = self.budget
        self.github = Github(
            base_url=settings.base_url,
            auth=Auth.Token(settings.token),
            retry=retry,
            timeout=TIMEOUT,
            per_page=PER_PAGE,
            seconds_between_requests=None,
            seconds_between_writes=WRITE_SPACING if settings.pace else None,
        )
        self.session = requests.Session()
        adapter = requests.adapters.HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.hooks["response"].append(self._observe)
        self.observed: tuple[int, int] | None = None  # (remaining, limit): the hourly budget a download's answer said
        self._repos: dict[str, object] = {}
        self._login: str | None = None

    def _observe(self, response, *args, **kwargs):
        remaining, limit = (
            _number(response.headers.get(name)) for name in ("x-ratelimit-remaining", "x-ratelimit-limit")
        )
        if remaining is not None and limit is not None and limit > 0:
            self.observed = (int(remaining), int(limit))
        return response

    def budget_left(self) -> tuple[int, int] | None:
        """(requests left this hour, the hourly limit) as GitHub's answers last said (`x-ratelimit-*`,
        on PyGithub's answers and on downloads alike); None before any answer said it."""
        said = [pair for pair in (self.requester.rate_limiting, self.observed) if pair and pair[1] > 0]
        return min(said) if said else None

    @property
    def requester(self):
        return self.github.requester

    def repo(self, slug: str):
        """The repository (read once)."""
        if slug not in self._repos:
            self._repos[slug] = read(self, f"reading repository {slug}", lambda: self.github.get_repo(slug))
        return self._repos[slug]

    def get_json(self, what: str, path: str, params: dict | None = None):
        """A GET of the REST API (``path`` below the API root), its JSON answer."""
        return read(
            self, what, lambda: self.requester.requestJsonAndCheck("GET", path, parameters=dict(params or {}))[1]
        )

    def pages(self, what: str, path: str, envelope: str | None = None, params: dict | None = None):
        """Every item of a paginated list, PER_PAGE a request: (page number, items, total_count or None)."""
        for number in itertools.count(1):
            asked = f"{what} (page {number})"
            data = self.get_json(asked, path, {**(params or {}), "per_page": PER_PAGE, "page": number})
            total = None
            with calling(asked):
                if envelope is not None:
                    total = _field(data, "total_count", int, asked)
                    data = _field(data, envelope, list, asked)
                if not isinstance(data, list):
                    raise MalformedAnswer(f"{asked}: a list was expected, {type(data).__name__} came back")
            yield number, data, total
            last = -(-total // PER_PAGE) if total is not None else None
            if len(data) < PER_PAGE or (last is not None and number >= last):
                return


def connect(settings: Settings) -> Client:
    return Client(settings)


# --- mapping every failure to one located line ----------------------------------------------------------


class MalformedAnswer(Exception):
    """An answer that is not what the API documents: a missing field, a wrong type."""


def _field(data, name: str, kind: type | tuple, what: str, optional: bool = False):
    if not isinstance(data, dict):
        raise MalformedAnswer(f"{what}: an object was expected, {type(data).__name__} came back")
    value = data.get(name)
    if value is None and optional:
        return None
    if isinstance(value, bool) and kind in (int, float):  # JSON true is no count
        value = None
    if not isinstance(value, kind):
        got = "nothing" if name not in data else f"{type(value).__name__} {str(value)[:60]!r}"
        raise MalformedAnswer(f"{what}: field {name!r} should be {getattr(kind, '__name__', kind)}, {got} came back")
    return value


def _cut_off_errors() -> tuple:
    import http.client

    from requests.exceptions import ChunkedEncodingError, ContentDecodingError
    from urllib3.exceptions import ProtocolError

    return ChunkedEncodingError, ContentDecodingError, ProtocolError, http.client.IncompleteRead, json.JSONDecodeError


def _shown(text: str) -> str:
    text = " ".join(str(text).split())
    if text.lstrip().startswith("<"):
        title = re.search(r"<title>(.*?)</title>", text, re.I | re.S)
        return f"an HTML page{f' ({title.group(1).strip()[:80]})' if title else ''}"
    return repr(text[:80]) + ("…" if len(text) > 80 else "")


def _describe(exc: BaseException) -> str:
    """What came back, in words, for an answer PyGithub or infx could not use."""
    if isinstance(exc, json.JSONDecodeError):
        return f"the answer is not JSON ({exc.msg}): it starts with {_shown(exc.doc)}"
    if isinstance(exc, MalformedAnswer):
        return str(exc)
    if isinstance(exc, KeyError):
        return f"the answer lacks the field {exc.args[0]!r}" if exc.args else "the answer lacks a field"
    name = type(exc).__name__
    if name == "BadAttributeException":
        return (
            f"a field has the wrong type ({getattr(exc, 'actual_value', '?')!r}, expected "
            f"{getattr(exc, 'expected_type', '?')})"
        )
    return f"the answer is not what the API documents ({name}: {str(exc)[:120]})"


@contextmanager
def calling(what: str):
    """Turn any failure of a GitHub call into one located line: what was asked, what came back
    (the HTTP status and GitHub's message, or what was wrong with the answer), and the fix."""
    from github import GithubException
    from github.GithubException import BadAttributeException
    from requests import RequestException
    from requests.exceptions import RetryError
    from urllib3.exceptions import HTTPError as Urllib3Error

    try:
        yield
    except InfxError:
        raise
    except WaitTooLong as exc:
        raise _fail(
            f"{what}: {exc.wait.why} — waiting {exc.wait.seconds:.0f} s would pass infx's bound "
            f"(INFX_GITHUB_MAX_WAIT={exc.limit:g} s, {exc.left:.0f} s left): retry later, or use a token with "
            "a higher limit",
            "github-wait",
        ) from None
    except GithubException as exc:
        needed = accepted_permissions(exc.headers)
        if exc.status == 403 and needed:  # GitHub names what the token lacks: the job's `permissions:` must grant it
            raise _fail(
                f"{what}: HTTP 403 {_github_message(exc)} — the token lacks the permission this needs: {needed}; "
                'grant it in the job\'s `permissions:` (docs/workflows.md, "Token permissions")',
                "github-permission",
            ) from None
        raise _fail(
            f"{what}: HTTP {exc.status} {_github_message(exc)}".rstrip()
            + f" — {STATUS_CHECKS.get(exc.status, 'GitHub answered with an error: retry, and check githubstatus.com')}"
        ) from None
    except _cut_off_errors() as exc:
        cause = (
            _describe(exc)
            if isinstance(exc, json.JSONDecodeError)
            else f"the answer was cut off ({type(exc).__name__})"
        )
        raise _fail(
            f"{what}: {cause} on every one of {READ_RETRIES + 1} tries — {MALFORMED_FIX}",
            "github-malformed",
        ) from None
    except (RequestException, Urllib3Error) as exc:
        repeated = re.search(r"too many (\d{3}) error responses", str(exc))
        if repeated:  # the read retries ran out on server errors
            raise _fail(
                f"{what}: HTTP {repeated.group(1)} on every one of {READ_RETRIES + 1} tries — "
                "GitHub is failing: retry later, and check githubstatus.com"
            ) from None
        if isinstance(exc, RetryError):
            raise _fail(
                f"{what}: GitHub kept failing ({str(exc)[:160]}) — retry later, and check githubstatus.com"
            ) from None
        raise _fail(
            f"{what}: no usable answer from GitHub ({type(exc).__name__}) — check the network and GITHUB_API_URL"
        ) from None
    except (
        MalformedAnswer,
        BadAttributeException,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        IndexError,
        AssertionError,
        RuntimeError,
    ) as exc:
        # PyGithub builds its objects from whatever came back: a wrong shape surfaces as any of these.
        raise _fail(f"{what}: {_describe(exc)} — {MALFORMED_FIX}", "github-malformed") from None


def accepted_permissions(headers) -> str:
    """GitHub's `X-Accepted-GitHub-Permissions` (sets separated by `;`, any one of which would do;
    `pull_requests=read,contents=read` within a set) in the spelling of a workflow's `permissions:`
    ("`pull-requests: read` or `contents: read`"); "" when the answer does not carry it."""
    value = next((str(v) for k, v in (headers or {}).items() if str(k).lower() == "x-accepted-github-permissions"), "")
    sets = []
    for one in value.split(";"):
        pairs = [pair.strip().split("=", 1) for pair in one.split(",") if "=" in pair]
        if pairs:
            sets.append(" and ".join(f"`{scope.strip().replace('_', '-')}: {level.strip()}`" for scope, level in pairs))
    return " or ".join(sets)


def _github_message(exc) -> str:
    data = exc.data
    if isinstance(data, dict):
        message = data.get("message")
        if isinstance(message, str):
            return message[:300]
        if isinstance(data.get("data"), str):
            return _shown(data["data"])
    return exc.message or (_shown(data) if isinstance(data, str) else "")


def read(client: Client, what: str, fetch: Callable):
    """A read: ``fetch()``'s result; an answer cut off or not JSON is asked again (bounded, its
    backoff taken from the budget); every other failure is one located line (`calling`)."""
    for attempt in range(READ_RETRIES + 1):
        with calling(what):
            try:
                return fetch()
            except _cut_off_errors():
                if attempt == READ_RETRIES:
                    raise
                wait = Wait(backoff(attempt), "the answer was cut off")
                client.budget.take(wait)
        time.sleep(wait.seconds)
    raise AssertionError("unreachable")  # pragma: no cover


def _transient(exc) -> Wait | None:
    """How long to wait before repeating a failed write, or None when repeating cannot help."""
    from github import GithubException
    from requests import RequestException

    if isinstance(exc, RequestException):
        return Wait(0.0, f"no answer ({type(exc).__name__})")
    if not isinstance(exc, GithubException):
        return None
    message = exc.data.get("message") if isinstance(exc.data, dict) else ""
    return wait_before_retry(exc.status, exc.headers or {}, message if isinstance(message, str) else "", 0, time.time())


def _write(client: Client, do, already_done):
    """Run a write; on a transient failure, read back whether it happened, then repeat."""
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
            wait = Wait(max(wait.seconds, backoff(attempt + 2)), wait.why)  # 2, 4 s at least
            client.budget.take(wait)
            time.sleep(wait.seconds)


# --- who the token is, and the sticky comment ----------------------------------------------------------


def _installation_login(client: Client) -> str:
    what = "reading the token's identity (GraphQL viewer)"

    def ask():
        _, data = client.requester.graphql_query("query { viewer { login } }", {})
        return _field(_field(_field(data, "data", dict, what), "viewer", dict, what), "login", str, what)

    with calling(what):  # a query, so repeating it is safe
        return _write(client, ask, lambda: None)


def token_login(client: Client) -> str:
    """The login the token writes as (asked once): `GET /user` answers it for a personal access
    token; an installation token (the Actions GITHUB_TOKEN is one) is refused there (403) and is
    asked through GraphQL's `viewer` instead, which answers its bot login (`github-actions[bot]`)."""
    from github import GithubException

    if client._login is None:
        what = "reading the token's own user (GET /user)"

        def user_login():
            try:
                return client.github.get_user().login
            except GithubException as exc:
                if exc.status not in (403, 404):  # 403: "Resource not accessible by integration"
                    raise
                return None

        login = read(client, what, user_login)
        if login is not None and (not isinstance(login, str) or not login):
            raise _fail(f"{what}: the answer's login is {login!r} — {MALFORMED_FIX}", "github-malformed")
        client._login = login or _installation_login(client)
    return client._login


def upsert_comment(client: Client, slug: str, pr_number: int, body: str) -> str:
    """Create or update the one comment carrying MARKER **and** written by this token's own
    identity (a marked comment by anyone else is never edited); returns created | updated | unchanged."""
    repo = client.repo(slug)
    pull = read(client, f"reading pull request #{pr_number} of {slug}", lambda: repo.get_pull(pr_number))
    login = token_login(client)

    def ours():
        def find():
            return next(
                (
                    c
                    for c in pull.get_issue_comments()
                    if MARKER in (c.body or "") and c.user is not None and c.user.login == login
                ),
                None,
            )

        return read(client, f"listing the comments of #{pr_number}", find)

    comment = ours()
    if comment is not None and comment.body == body:
        return "unchanged"
    with calling(f"writing the sweep comment on #{pr_number}"):
        if comment is not None:
            _write(client, lambda: comment.edit(body), lambda: None)  # an edit is idempotent
            return "updated"
        _write(client, lambda: pull.create_issue_comment(body), ours)
    return "created"


# --- runs, artifacts, dispatch ----------------------------------------------------------------------------


def get_run(client: Client, slug: str, run_id: int):
    repo = client.repo(slug)

    def fetch():
        run = repo.get_workflow_run(run_id)
        run_facts(run)  # every field now, so a wrong shape is reported here
        if not isinstance(run.html_url, str):
            raise MalformedAnswer(f"the run's html_url is {run.html_url!r}")
        return run

    return repo, read(client, f"reading workflow run {run_id} of {slug}", fetch)


def run_facts(run) -> RunFacts:
    """The run's workflow, repository, head repository, branch and commit, from the API object."""
    repository, head = run.repository, run.head_repository
    facts = RunFacts(
        run.id,
        run.path,
        repository.full_name if repository else None,
        head.full_name if head else None,
        run.head_branch,
        run.head_sha,
        run.event,
    )
    if not isinstance(facts.run_id, int):
        raise MalformedAnswer(f"the run's id is {facts.run_id!r}")
    return facts


def run_facts_from_api(data, what: str) -> RunFacts:
    """The same facts from the run's JSON (`GET …/actions/runs/{id}`), every field checked."""
    repository = _field(data, "repository", dict, what, optional=True) or {}
    head = _field(data, "head_repository", dict, what, optional=True) or {}
    return RunFacts(
        _field(data, "id", int, what),
        _field(data, "path", str, what, optional=True),
        _field(repository, "full_name", str, what, optional=True),
        _field(head, "full_name", str, what, optional=True),
        _field(data, "head_branch", str, what, optional=True),
        _field(data, "head_sha", str, what, optional=True),
        _field(data, "event", str, what, optional=True),
    )


def pull_facts_from_api(data, what: str) -> PullFacts:
    head = _field(data, "head", dict, what)
    base = _field(data, "base", dict, what)
    head_repo = _field(head, "repo", dict, what, optional=True)
    return PullFacts(
        _field(data, "number", int, what),
        _field(head, "ref", str, what, optional=True),
        _field(head, "sha", str, what, optional=True),
        _field(head_repo, "full_name", str, what, optional=True) if head_repo else None,
        _field(base, "ref", str, what, optional=True),
        _field(data, "merged_at", str, what, optional=True) is not None,
    )


def head_repository(pull) -> str | None:
    """OWNER/NAME the pull request's commits come from; None when that repository was deleted."""
    return pull.head.repo.full_name if pull.head.repo is not None else None


def pull_branch(client: Client, repo, pr_number: int) -> str:
    """The head branch of pull request ``pr_number``; a fork's pull request has none we trust."""

    def fetch():
        pull = repo.get_pull(pr_number)
        return head_repository(pull), pull.head.ref

    head_repo, branch = read(client, f"reading pull request #{pr_number} of {repo.full_name}", fetch)
    if head_repo != repo.full_name:
        raise _fail(
            f"pull request #{pr_number} comes from {head_repo or 'a deleted repository'}, not {repo.full_name}: "
            "its sweeps never run on the self-hosted runners, so there is nothing to rerun"
        )
    return branch


def require_trusted(run, slug: str, branches: set[str]) -> None:
    """Refuse (exit 1) a run whose plan must not drive a sweep (rules: trust.untrusted_reason)."""
    with calling(f"reading workflow run {run.id}"):
        facts = run_facts(run)
    reason = untrusted_reason(facts, slug, {TRUSTED_BRANCH, *branches})
    if reason:
        raise InfxError(
            error(
                "<github>",
                None,
                "github-untrusted-run",
                reason,
                f"Rerun a run of the sweep workflow of {slug} on {TRUSTED_BRANCH} or on the pull request's own branch.",
            )
        )


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
            raise GithubException(answer.status_code, _json_or_text(body), dict(answer.headers))
        return _spooled(answer, what)

    return read(client, what, fetch)


def _spooled(answer, what: str) -> IO[bytes]:
    declared = _number(answer.headers.get("Content-Length"))
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
        raise _fail(
            f"run {run.id} has no unexpired `{PLAN_ARTIFACT}` artifact — was it started by run-sweep.yml, "
            "and is it younger than the artifact retention period?"
        )
    try:
        return json_in_archive(download_artifact(client, plan), PLAN_FILE)
    except ValueError as exc:
        raise _fail(f"artifact {PLAN_ARTIFACT} of run {run.id} holds no readable {PLAN_FILE} ({exc})") from None


def find_launch(client: Client, workflow, workflow_file: str, launch: str):
    """The dispatched run whose title carries this launch id, if any."""
    marker = launch_marker(launch)

    def fetch():
        runs = workflow.get_runs(event="workflow_dispatch")
        return next((r for r in itertools.islice(runs, RECENT_RUNS) if marker in (r.display_title or "")), None)

    return read(client, f"listing the runs of {workflow_file}", fetch)


def dispatch_once(
    client: Client, repo, workflow_file: str, ref: str, inputs: dict, launch: str
) -> tuple[object | None, bool]:
    """Dispatch unless a run with this launch id exists; returns (run or None, created)."""
    workflow = read(client, f"reading workflow {workflow_file}", lambda: repo.get_workflow(workflow_file))
    existing = find_launch(client, workflow, workflow_file, launch)
    if existing is not None:
        return existing, False
    with calling(f"dispatching {workflow_file} on {ref}"):
        created = _write(
            client,
            lambda: workflow.create_dispatch(ref, inputs, throw=True, return_run_details=True),
            lambda: find_launch(client, workflow, workflow_file, launch),
        )
    if created is True:  # a server that answers 204 without the run's details (older GHES)
        return find_launch(client, workflow, workflow_file, launch), True
    return created, True


# --- archives: capped, contained, complete or absent -------------------------------------------------------

MAX_MEMBERS = 10_000
MAX_MEMBER_BYTES = 512 << 20
MAX_TOTAL_BYTES = 2 << 30
MAX_RATIO = 100  # uncompressed : compressed, for members past RATIO_FLOOR
RATIO_FLOOR = 1 << 20  # small members may compress better than any real file does (runs of one byte)
MAX_JSON_BYTES = 64 << 20  # one JSON file read out of an archive (plan.json, results.json)
PARTIAL = ".partial-"  # <folder>.partial-<random>: an extraction under way, renamed into place when complete


class ArchiveProblem(ValueError):
    """An archive infx does not take: not a zip, a member outside its folder, a link, past a cap."""


def _zip(archive: bytes | IO[bytes]) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(archive) if isinstance(archive, (bytes, bytearray)) else archive)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveProblem(f"not a zip archive ({exc})") from None


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    parts = name.replace("\\", "/").split("/")
    kind = stat.S_IFMT(info.external_attr >> 16)
    checks = (
        (not name or "\x00" in name, "has an empty name or one with a NUL"),
        (name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) is not None, "has an absolute path"),
        (".." in parts, "reaches outside its folder (`..`)"),
        (kind == stat.S_IFLNK, "is a symbolic link"),
        (kind not in (0, stat.S_IFREG, stat.S_IFDIR), "is a special file (a device, a FIFO, a socket)"),
        (info.file_size > MAX_MEMBER_BYTES, f"unpacks to {info.file_size} bytes, more than {MAX_MEMBER_BYTES}"),
        (
            info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(1, info.compress_size),
            f"unpacks {info.compress_size} bytes to {info.file_size} (more than {MAX_RATIO}:1, a zip bomb)",
        ),
    )
    return next((why for bad, why in checks if bad), None)


def checked_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's members when every one is acceptable (count, names, kinds, sizes, ratio); else ArchiveProblem."""
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ArchiveProblem(f"it holds {len(infos)} members, more than {MAX_MEMBERS}")
    total, seen = 0, set()
    for info in infos:
        problem = _member_problem(info)
        if problem:
            raise ArchiveProblem(f"its member {info.filename[:200]!r} {problem}")
        key = info.filename.rstrip("/")
        if key in seen:
            raise ArchiveProblem(f"its member {info.filename[:200]!r} appears twice")
        seen.add(key)
        total += info.file_size
        if total > MAX_TOTAL_BYTES:
            raise ArchiveProblem(f"its members unpack to more than {MAX_TOTAL_BYTES} bytes")
    return infos


# what reading a hostile archive raises: a corrupt header or stream, an unknown method, encryption
ARCHIVE_ERRORS = (
    zipfile.BadZipFile,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OverflowError,
    zlib.error,
    struct.error,
)


def json_in_archive(archive: bytes | IO[bytes], name: str):
    """The JSON file ``name`` in a downloaded artifact (a zip archive), read strictly
    (infx.jsonfast.parse); ValueError when the archive, the member (capped, no link) or its
    JSON (or its UTF-8) is not acceptable."""
    try:
        with _zip(archive) as opened:
            info = opened.getinfo(name)
            problem = _member_problem(info)
            if problem:
                raise ArchiveProblem(f"{name} {problem}")
            if info.file_size > MAX_JSON_BYTES:
                raise ArchiveProblem(f"{name} has {info.file_size} bytes, more than {MAX_JSON_BYTES}")
            with opened.open(info) as member:
                text = member.read(MAX_JSON_BYTES + 1)
    except KeyError:
        raise ArchiveProblem(f"there is no {name} in it") from None
    except ArchiveProblem:
        raise
    except ARCHIVE_ERRORS as exc:
        raise ArchiveProblem(f"its {name} cannot be read ({type(exc).__name__}: {str(exc)[:120]})") from None
    if len(text) > MAX_JSON_BYTES:
        raise ArchiveProblem(f"{name} is larger than {MAX_JSON_BYTES} bytes")
    return parse(text)


def extract_artifact(archive: bytes | IO[bytes], dest, what: str) -> Path:
    """Unzip one downloaded artifact into ``dest``: every member checked first (checked_members),
    written without following any link into a fresh folder beside ``dest``, which replaces
    ``dest`` only once complete; so ``dest`` is whole or absent, and a partial folder a crashed
    run left behind is discarded. A problem is one line (rule github-artifact)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for leftover in dest.parent.glob(f".{dest.name}{PARTIAL}*"):
        shutil.rmtree(leftover, ignore_errors=True)
    partial = dest.parent / f".{dest.name}{PARTIAL}{uuid.uuid4().hex[:12]}"
    partial.mkdir()
    try:
        with _zip(archive) as opened:
            for info in checked_members(opened):
                _extract_member(opened, info, partial)
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        elif dest.exists():
            shutil.rmtree(dest)
        partial.rename(dest)
        return dest
    except ArchiveProblem as exc:
        raise _fail(f"{what}: refused, {exc}", "github-artifact") from None
    except ARCHIVE_ERRORS as exc:
        raise _fail(
            f"{what}: refused, it cannot be unpacked ({type(exc).__name__}: {str(exc)[:120]})", "github-artifact"
        ) from None
    except OSError as exc:
        raise _fail(f"{what}: cannot be written to {dest.parent} ({exc.strerror or exc})", "github-artifact") from None
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)


def _extract_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, root: Path) -> None:
    parts = [p for p in info.filename.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return
    target = root.joinpath(*parts)
    if info.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)  # folders made here, under a fresh root: no link among them
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    written = 0
    with os.fdopen(fd, "wb") as out, archive.open(info) as member:
        while chunk := member.read(1 << 16):
            written += len(chunk)
            if written > info.file_size:
                raise ArchiveProblem(f"its member {info.filename[:200]!r} unpacks to more than it declares")
            out.write(chunk)


# --- reuse: stored results by result key, from trusted runs only --------------------------------------------


@dataclass(frozen=True)
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
        run = _field(data, "workflow_run", dict, what, optional=True) or {}
        created = _field(data, "created_at", str, what, optional=True)
        try:
            when = dt.datetime.fromisoformat(created.replace("Z", "+00:00")) if created else None
        except ValueError:
            raise MalformedAnswer(f"{what}: created_at {created[:40]!r} is not a time") from None
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return cls(
            _field(data, "id", int, what),
            _field(data, "name", str, what),
            _field(data, "size_in_bytes", int, what),
            _field(data, "expired", bool, what),
            when,
            _field(data, "archive_download_url", str, what),
            _field(run, "id", int, what, optional=True),
            _field(run, "repository_id", int, what, optional=True),
            _field(run, "head_repository_id", int, what, optional=True),
            _field(run, "head_branch", str, what, optional=True),
            _field(run, "head_sha", str, what, optional=True),
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


class GitHubFacts:
    """The facts trust.result_refusal asks for, each fetched at most once: a run's facts per
    run, main's reach per commit, merged pull requests per branch, the swept PR's commits once."""

    def __init__(self, client: Client, slug: str, main_ref: str, pull_number: int | None):
        self.client, self.slug, self.main_ref, self.pull_number = client, slug, main_ref, pull_number
        self._runs: dict[int, str] = {}
        self._on_main: dict[str, bool] = {}
        self._merged: dict[str, list[PullFacts]] = {}
        self._pull_commits: frozenset[str] | None = None

    def refusal(self, run_id: int) -> str:
        """ "" when the run's results may be reused, else why not (trust.result_refusal)."""
        if run_id not in self._runs:
            what = f"reading workflow run {run_id} of {self.slug}"
            data = self.client.get_json(what, f"/repos/{self.slug}/actions/runs/{run_id}")
            with calling(what):
                facts = run_facts_from_api(data, what)
            self._runs[run_id] = result_refusal(facts, self.slug, self.main_ref, self.pull_number, self)
        return self._runs[run_id]

    def on_main(self, sha: str) -> bool:
        if sha not in self._on_main:
            what = f"comparing {sha[:12]} with {self.main_ref}"
            data = self.client.get_json(what, f"/repos/{self.slug}/compare/{sha}...{self.main_ref}")
            with calling(what):
                self._on_main[sha] = _field(data, "status", str, what) in ("ahead", "identical")  # main at or past sha
        return self._on_main[sha]

    def merged_pulls(self, branch: str) -> list[PullFacts]:
        if branch not in self._merged:
            owner = self.slug.split("/")[0]
            what = f"listing the closed pull requests from {branch}"
            pulls = []
            for _, items, _ in self.client.pages(
                what,
                f"/repos/{self.slug}/pulls",
                params={"state": "closed", "head": f"{owner}:{branch}", "base": self.main_ref},
            ):
                with calling(what):
                    pulls += [pull_facts_from_api(item, what) for item in items]
            self._merged[branch] = pulls
        return self._merged[branch]

    def pull_commits(self) -> frozenset[str]:
        """The swept pull request's commits; none when its head repository is not this one (a fork)."""
        if self._pull_commits is None:
            what = f"reading pull request #{self.pull_number}"
            with calling(what):
                pull = pull_facts_from_api(
                    self.client.get_json(what, f"/repos/{self.slug}/pulls/{self.pull_number}"), what
                )
            shas: set[str] = set()
            if pull.head_repository == self.slug:
                listing = f"listing the commits of #{self.pull_number}"
                for _, items, _ in self.client.pages(listing, f"/repos/{self.slug}/pulls/{self.pull_number}/commits"):
                    with calling(listing):
                        shas.update(_field(item, "sha", str, listing) for item in items)
            self._pull_commits = frozenset(shas)
        return self._pull_commits


def repository_id(client: Client, slug: str) -> int:
    repo = client.repo(slug)
    with calling(f"reading repository {slug}"):
        return _field({"id": repo.id}, "id", int, f"reading repository {slug}")


def fetch_artifact(client: Client, artifact: StoredArtifact, dest: Path) -> Path:
    """Download and extract one stored artifact into ``dest`` (whole or absent)."""
    archive = download_artifact(client, artifact)
    try:
        return extract_artifact(archive, dest, f"artifact {artifact.name} of run {artifact.run_id}")
    finally:
        archive.close()


# --- infx repo check: the settings that keep fork pull requests off self-hosted runners ---------


def _read_setting(client: Client, path: str, what: str, parameters: dict | None = None):
    """GET ``path``'s JSON, or repocheck.Unreadable when the token may not read it (403, or 404 as
    GitHub answers for what a token cannot see); any other failure is the usual one-line error."""
    from github import GithubException

    def fetch():
        try:
            return client.requester.requestJsonAndCheck("GET", path, parameters=parameters)[1]
        except GithubException as exc:
            if exc.status in (403, 404):
                message = exc.data.get("message") if isinstance(exc.data, dict) else str(exc.data or "")
                return Unreadable(exc.status, message or "")
            raise

    return read(client, what, fetch)


def _read_pages(client: Client, path: str, key: str, what: str, parameters: dict | None = None):
    """Every item of a paginated list (``key`` of each page), or Unreadable."""
    items: list[dict] = []
    page = 1
    while True:
        data = _read_setting(
            client, path, f"{what} (page {page})", {**(parameters or {}), "per_page": PER_PAGE, "page": page}
        )
        if isinstance(data, Unreadable):
            return data
        batch = data.get(key) or []
        items.extend(batch)
        if len(batch) < PER_PAGE or len(items) >= int(data.get("total_count") or 0):
            return items
        page += 1


def _runners(raw: list[dict], group: str):
    return tuple(
        Runner(
            r.get("name", "?"),
            tuple(label.get("name", "") for label in r.get("labels") or []),
            bool(r.get("ephemeral")),
            group,
            r.get("status") == "online",
        )
        for r in raw
    )


def registered_runners(client: Client, slug: str, organization: bool):
    """The self-hosted runners ``slug`` can use: (its own, or Unreadable; its organization's runner
    groups visible to it, each with its runners, or Unreadable, or None for a user's repository)."""
    owner, name = slug.split("/")
    own = _read_pages(client, f"/repos/{slug}/actions/runners", "runners", f"listing the self-hosted runners of {slug}")
    own = own if isinstance(own, Unreadable) else _runners(own, "repository")
    if not organization:
        return own, None
    listed = _read_pages(
        client,
        f"/orgs/{owner}/actions/runner-groups",
        "runner_groups",
        f"listing the runner groups of {owner} this repository may use",
        {"visible_to_repository": name},
    )
    if isinstance(listed, Unreadable):
        return own, listed
    found = []
    for group in listed:
        gid = group["id"]
        members = _read_pages(
            client,
            f"/orgs/{owner}/actions/runner-groups/{gid}/runners",
            "runners",
            f"listing the runners of group {group.get('name')}",
        )
        repositories = None
        if group.get("visibility") == "selected":
            selected = _read_pages(
                client,
                f"/orgs/{owner}/actions/runner-groups/{gid}/repositories",
                "repositories",
                f"listing the repositories of group {group.get('name')}",
            )
            if isinstance(selected, Unreadable):
                return own, selected
            repositories = tuple(r.get("full_name", "") for r in selected)
        if isinstance(members, Unreadable):
            return own, members
        found.append(
            RunnerGroup(
                gid,
                group.get("name", "?"),
                group.get("visibility", "all"),
                repositories,
                _runners(members, group.get("name", "?")),
            )
        )
    return own, tuple(found)


def read_repository(client: Client, slug: str) -> dict:
    """The repository's JSON (`GET /repos/{o}/{r}`); a token that may not read it is the usual one-line error."""
    repo = _read_setting(client, f"/repos/{slug}", f"reading repository {slug}")
    if isinstance(repo, Unreadable):
        raise _fail(
            f"reading repository {slug}: HTTP {repo.status} {repo.message} — {STATUS_CHECKS.get(repo.status, '')}"
        )
    return repo


def repository_settings(client: Client, slug: str):
    """repocheck.Facts of ``slug``: visibility, fork-PR approval, default token permissions, and the
    self-hosted runners the repository can use (its own, and its organization's runner groups)."""
    repo = read_repository(client, slug)
    private = bool(repo.get("private"))
    base = f"/repos/{slug}/actions/permissions"
    approval = (
        None
        if private
        else _read_setting(client, f"{base}/fork-pr-contributor-approval", "reading the fork PR approval policy")
    )
    if isinstance(approval, dict):
        approval = approval.get("approval_policy")
    private_forks = (
        _read_setting(client, f"{base}/fork-pr-workflows-private-repos", "reading the private fork PR settings")
        if private
        else None
    )
    permissions = _read_setting(client, f"{base}/workflow", "reading the default workflow permissions")
    organization = (repo.get("owner") or {}).get("type") == "Organization"
    own, groups = registered_runners(client, slug, organization)
    return Facts(slug, private, organization, approval, private_forks, permissions, own, groups)
