"""What `infx repo check` and the lane gate read of a repository: its JSON, its settings that keep
fork pull requests off the self-hosted runners, and the self-hosted runners it can use (its own,
and its organization's runner groups); a setting the token may not read is repocheck.Unreadable.
`read_gate` judges the runners it read by the lane gate's rule (infx/workflows/lanegate.py).

Effects: network (the GitHub API, through client.py).
"""

from __future__ import annotations

from ..lanegate import RUNNERS_TOKEN, Gate, judge, unchecked
from ..repocheck import Facts, Runner, RunnerGroup, Unreadable
from .client import PER_PAGE, Client, Connection, read
from .failures import STATUS_CHECKS, answer_field, calling, github_error


def repository_id(client: Client, slug: str) -> int:
    repo = client.repo(slug)
    with calling(f"reading repository {slug}"):
        return answer_field({"id": repo.id}, "id", int, f"reading repository {slug}")


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
        raise github_error(
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
    return Facts(
        slug=slug,
        private=private,
        organization=organization,
        approval_policy=approval,
        private_fork_settings=private_forks,
        workflow_permissions=permissions,
        repository_runners=own,
        runner_groups=groups,
    )


def read_gate(lanes: list[str], slug_of, github: Connection) -> Gate:
    """The gate for ``lanes`` through the API, with ``github``'s token (the command's: the one in
    RUNNERS_TOKEN; ``slug_of()``: the repository). No token, or one that may not read the runners,
    checks nothing (says why); any other failure (GitHub down) is the usual one-line error."""
    if not github.token:
        return unchecked(lanes, f"no {RUNNERS_TOKEN} secret")
    slug = slug_of()
    client = github.client()
    repository = read_repository(client, slug)
    own, groups = registered_runners(client, slug, (repository.get("owner") or {}).get("type") == "Organization")
    if isinstance(own, Unreadable) and not isinstance(groups, tuple):
        return unchecked(
            lanes, f"{RUNNERS_TOKEN} may not list the runners: GitHub answered {own.status} ({own.message})"
        )
    runners = (() if isinstance(own, Unreadable) else own) + tuple(
        runner for group in (groups if isinstance(groups, tuple) else ()) for runner in group.runners
    )
    return judge(lanes, runners, complete=not isinstance(own, Unreadable) and not isinstance(groups, Unreadable))
