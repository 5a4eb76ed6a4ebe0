"""The one GitHub client: PyGithub configured with infx's retry rule (retry.py), and the
command's one connection to it.

`Connection` is what a command resolves once and hands down: the client is made on its first use
(the settings read from the environment, PyGithub imported: slow to import, so a command that
ends before it needs GitHub never loads it). `Client` mounts `BoundedRetry` on every connection
PyGithub opens and on the session artifact downloads use, so reads, paginated lists, downloads and
the redirect to blob storage all wait and repeat by one rule and under one bound.

A write (POST, PATCH) is never blindly repeated: on a transient failure the current state is
read back first (`write`), so a write that went through but timed out is not done twice (one
sticky comment, one sweep per launch id). An answer that is cut off or is not JSON is asked
again (`read`); any other failure is one located line (failures.calling).

Effects: network (the GitHub API named by GITHUB_API_URL); it reads GITHUB_TOKEN, GH_TOKEN and
INFX_GITHUB_MAX_WAIT from the environment.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from .failures import MalformedAnswer, answer_field, calling, cut_off_errors, github_error
from .retry import LIMIT_STATUSES, READ_RETRIES, Wait, WaitBudget, backoff, finite_number, retry_type, wait_before_retry

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_MAX_WAIT = 300.0  # seconds infx waits for GitHub in all (INFX_GITHUB_MAX_WAIT)
WRITE_ATTEMPTS = 3
WRITE_SPACING = 1.0  # GitHub: at least one second between writes (secondary limits)
TIMEOUT = 30  # seconds for a connection or an answer to start
PER_PAGE = 100  # GitHub's largest page


@dataclass(frozen=True, kw_only=True)
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
        raise github_error(f"no GitHub token: set GITHUB_TOKEN ({needs})")
    max_wait = os.environ.get("INFX_GITHUB_MAX_WAIT") or str(DEFAULT_MAX_WAIT)
    try:
        seconds = float(max_wait)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < math.inf:
        raise github_error(
            f"INFX_GITHUB_MAX_WAIT={max_wait!r} is not a number of seconds: set it to e.g. 300, or unset it"
        )
    return Settings(
        token=token, base_url=base_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL, max_wait=seconds
    )


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
        retry = retry_type()(
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
        self.known_login: str | None = None  # the token's login, once comments.token_login asked it

    def _observe(self, response, *args, **kwargs):
        remaining, limit = (
            finite_number(response.headers.get(name)) for name in ("x-ratelimit-remaining", "x-ratelimit-limit")
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
                    total = answer_field(data, "total_count", int, asked)
                    data = answer_field(data, envelope, list, asked)
                if not isinstance(data, list):
                    raise MalformedAnswer(f"{asked}: a list was expected, {type(data).__name__} came back")
            yield number, data, total
            last = -(-total // PER_PAGE) if total is not None else None
            if len(data) < PER_PAGE or (last is not None and number >= last):
                return


def connect(settings: Settings) -> Client:
    return Client(settings)


class Connection:
    """The one GitHub client of a command, made on first use. A command makes its Connection once
    and hands it down; nothing is read from the environment, nothing connects and PyGithub is not
    imported until a function asks for the client. ``token``: the token to use instead of
    GITHUB_TOKEN; ``needs``: which token the command needs, said when none is set; ``settings``:
    given instead of the environment's (tests)."""

    def __init__(self, token: str | None = None, needs: str = WORKFLOW_TOKEN, settings: Settings | None = None):
        self.token, self.needs, self.settings = token, needs, settings
        self._client: Client | None = None

    def client(self) -> Client:
        if self._client is None:
            self._client = connect(self.settings or settings_from_env(token=self.token, needs=self.needs))
        return self._client


def read(client: Client, what: str, fetch: Callable):
    """A read: ``fetch()``'s result; an answer cut off or not JSON is asked again (bounded, its
    backoff taken from the budget); every other failure is one located line (`calling`)."""
    for attempt in range(READ_RETRIES + 1):
        with calling(what):
            try:
                return fetch()
            except cut_off_errors():
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


def write(client: Client, do, already_done):
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
