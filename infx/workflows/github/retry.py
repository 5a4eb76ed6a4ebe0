"""The one retry rule for GitHub's answers, and the one bound on waiting for them.

`wait_before_retry` decides, from an answer's status, headers and message, how long to wait
before asking again, or that asking again cannot help:

- a server error (5xx, an HTML error page among them) is asked again with a doubling backoff
  (0.5, 1, 2, 4 s: READ_RETRIES repeats), or after its `Retry-After`;
- a rate limit (403 or 429) waits for `Retry-After` (seconds or an HTTP date), else for
  `x-ratelimit-reset` when `x-ratelimit-remaining` is 0, else (a secondary limit that names no
  time) for SECONDARY_WAIT seconds, as GitHub's documentation asks;
- a 403 that names no limit is a permission: never asked again;
- a wait that would pass the bound (`WaitBudget`, INFX_GITHUB_MAX_WAIT seconds in all) ends the
  command at once (`WaitTooLong`), saying when to retry.

`retry_type` builds `BoundedRetry`, a thin urllib3 `Retry` on this rule, which client.py mounts on
every connection PyGithub opens and on the session artifact downloads use. PyGithub's own
GithubRetry is not used: it hands `Retry-After` to urllib3, whose wait is capped only by urllib3's
six hours (not by `max_rate_limit_wait`); it retries a 429 only with `Retry-After`; it has no
bound across retries and requests; and it reads a 403's body once, so the body cannot be
inspected again. `BoundedRetry` keeps PyGithub's own rate-limit message classification and exception.

Effects: network, as part of the client's requests (PyGithub and urllib3 are imported inside its
functions); `BoundedRetry` sleeps between the tries of a request.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import math
import time
from dataclasses import dataclass

READ_RETRIES = 4  # a read is asked at most 1 + READ_RETRIES times
BACKOFF = 0.5  # seconds before the first repeat of a failed request, doubled each time
SECONDARY_WAIT = 60.0  # GitHub: after a secondary rate limit that names no time, wait at least a minute
LIMIT_STATUSES = (403, 429)


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


def finite_number(value) -> float | None:
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
            reset = finite_number(fields.get("x-ratelimit-reset"))
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


def retry_type():
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
                    raise Requester.createException(response.status, dict(response.headers), json_or_text(body))
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


def json_or_text(body: bytes | None):
    try:
        return json.loads(body or b"")
    except (ValueError, UnicodeDecodeError):
        return {"data": (body or b"").decode("utf-8", "replace")[:2000]}
