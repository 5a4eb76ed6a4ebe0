"""Every failure of a GitHub call as one located line: what was asked, what came back (the HTTP
status and GitHub's message, or what was wrong with the answer) and the fix (`calling`).

An answer of the wrong shape (a missing field, a list where an object belongs, an HTML page) is a
located error (rule `github-malformed`), never a traceback: `answer_field` reads a field of an
answer and checks its type. A 403 that names the permission the token lacks (GitHub's
`X-Accepted-GitHub-Permissions`) says which `permissions:` to grant (rule `github-permission`).

Effects: network, as part of the client's requests (it classifies the exceptions of PyGithub,
requests and urllib3, imported inside its functions); it makes no request of its own.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager

from ...diagnostics import InfxError, error
from .retry import READ_RETRIES, WaitTooLong

STATUS_CHECKS = {  # what to check, by HTTP status
    401: "the token is invalid or expired: check GITHUB_TOKEN",
    403: "the token lacks a permission for this call, or a rate limit is exhausted: check the job's `permissions:`",
    404: "check that it exists and that the token can read the repository",
    409: "GitHub reports a conflict: retry later",
    410: "it is gone (an artifact past its retention period expires): it cannot be had any more",
    422: "GitHub refused the request body: check the workflow's inputs and the ref",
}
MALFORMED_FIX = "retry later; if it persists, check that GITHUB_API_URL is the GitHub API and githubstatus.com"


def github_error(message: str, rule: str = "github-api") -> InfxError:
    """A GitHub failure as infx reports it: one line located at `<github>`."""
    return InfxError(error("<github>", None, rule, message))


class MalformedAnswer(Exception):
    """An answer that is not what the API documents: a missing field, a wrong type."""


def answer_field(data, name: str, kind: type | tuple, what: str, optional: bool = False):
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


def cut_off_errors() -> tuple:
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
        raise github_error(
            f"{what}: {exc.wait.why} — waiting {exc.wait.seconds:.0f} s would pass infx's bound "
            f"(INFX_GITHUB_MAX_WAIT={exc.limit:g} s, {exc.left:.0f} s left): retry later, or use a token with "
            "a higher limit",
            "github-wait",
        ) from None
    except GithubException as exc:
        needed = accepted_permissions(exc.headers)
        if exc.status == 403 and needed:  # GitHub names what the token lacks: the job's `permissions:` must grant it
            raise github_error(
                f"{what}: HTTP 403 {_github_message(exc)} — the token lacks the permission this needs: {needed}; "
                'grant it in the job\'s `permissions:` (docs/workflows.md, "Token permissions")',
                "github-permission",
            ) from None
        raise github_error(
            f"{what}: HTTP {exc.status} {_github_message(exc)}".rstrip()
            + f" — {STATUS_CHECKS.get(exc.status, 'GitHub answered with an error: retry, and check githubstatus.com')}"
        ) from None
    except cut_off_errors() as exc:
        cause = (
            _describe(exc)
            if isinstance(exc, json.JSONDecodeError)
            else f"the answer was cut off ({type(exc).__name__})"
        )
        raise github_error(
            f"{what}: {cause} on every one of {READ_RETRIES + 1} tries — {MALFORMED_FIX}",
            "github-malformed",
        ) from None
    except (RequestException, Urllib3Error) as exc:
        repeated = re.search(r"too many (\d{3}) error responses", str(exc))
        if repeated:  # the read retries ran out on server errors
            raise github_error(
                f"{what}: HTTP {repeated.group(1)} on every one of {READ_RETRIES + 1} tries — "
                "GitHub is failing: retry later, and check githubstatus.com"
            ) from None
        if isinstance(exc, RetryError):
            raise github_error(
                f"{what}: GitHub kept failing ({str(exc)[:160]}) — retry later, and check githubstatus.com"
            ) from None
        raise github_error(
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
        raise github_error(f"{what}: {_describe(exc)} — {MALFORMED_FIX}", "github-malformed") from None


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
