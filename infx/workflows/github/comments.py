"""Who the token writes as, and the one sticky sweep comment on a pull request.

Effects: network (the GitHub API, through client.py).
"""

from __future__ import annotations

from ..markers import MARKER
from .client import Client, read, write
from .failures import MALFORMED_FIX, answer_field, calling, github_error


def _installation_login(client: Client) -> str:
    what = "reading the token's identity (GraphQL viewer)"

    def ask():
        _, data = client.requester.graphql_query("query { viewer { login } }", {})
        return answer_field(
            answer_field(answer_field(data, "data", dict, what), "viewer", dict, what), "login", str, what
        )

    with calling(what):  # a query, so repeating it is safe
        return write(client, ask, lambda: None)


def token_login(client: Client) -> str:
    """The login the token writes as (asked once): `GET /user` answers it for a personal access
    token; an installation token (the Actions GITHUB_TOKEN is one) is refused there (403) and is
    asked through GraphQL's `viewer` instead, which answers its bot login (`github-actions[bot]`)."""
    from github import GithubException

    if client.known_login is None:
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
            raise github_error(f"{what}: the answer's login is {login!r} — {MALFORMED_FIX}", "github-malformed")
        client.known_login = login or _installation_login(client)
    return client.known_login


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
            write(client, lambda: comment.edit(body), lambda: None)  # an edit is idempotent
            return "updated"
        write(client, lambda: pull.create_issue_comment(body), ours)
    return "created"
