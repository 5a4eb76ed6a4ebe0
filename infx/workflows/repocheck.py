"""`infx repo check`: the repository settings that make "fork pull requests never reach a
self-hosted runner" true, read through the API and judged here (docs/workflows.md, "Safe on a
public repository").

The workflows keep fork PRs off the GPU runners with `if:` lines, but on `pull_request` a PR
supplies its own workflow files, so those lines are only as strong as the settings around them:

- fork PR workflows of outside collaborators wait for a maintainer's approval, all of them (not
  only first-time contributors');
- the default GITHUB_TOKEN is read-only (a workflow that forgets `permissions:` gets no write);
- each lane's runners sit in a runner group that only this repository may use (or are this
  repository's own runners), so no other repository's fork can reach them;
- each lane's runners are ephemeral: one job each, so no job leaves anything for the next.

This module holds the facts (frozen records the API layer fills in) and the rules; the calls
are infx/workflows/github/repository.py's.

Effects: none.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

OK, AT_RISK, CANNOT_CHECK = "ok", "at-risk", "cannot-check"
SAFE_APPROVAL_POLICY = "all_external_contributors"
ADMIN_READ = (
    "a token of a repository admin (fine-grained: the repository's Administration: read permission; classic: repo)"
)
ORG_RUNNERS_READ = (
    "a token that may read the organization's self-hosted runners (fine-grained: the organization's "
    "Self-hosted runners: read permission; classic: admin:org)"
)

# What `infx repo check` needs in GITHUB_TOKEN: the settings it reads are an admin's to see. A
# workflow's own token and INFX_RUNNERS_TOKEN (runners: read) cannot read them.
TOKEN_NEEDED = (
    f"to {ADMIN_READ}, and for the runner groups {ORG_RUNNERS_READ.removeprefix('a token that may ')}; "
    "not a workflow's github.token nor INFX_RUNNERS_TOKEN, which cannot read these settings"
)


@dataclass(frozen=True)
class Unreadable:
    """A setting the token may not read: GitHub's status and message."""

    status: int
    message: str


@dataclass(frozen=True)
class Runner:
    name: str
    labels: tuple[str, ...]
    ephemeral: bool
    group: str  # "repository" for a repository's own runner, else the runner group's name
    online: bool = True  # GitHub's `status` is "online" (the lane gate: infx/workflows/lanegate.py)


@dataclass(frozen=True)
class RunnerGroup:
    id: int
    name: str
    visibility: str  # all | selected | private
    repositories: tuple[str, ...] | None  # OWNER/NAME of the selected repositories (visibility selected)
    runners: tuple[Runner, ...]


@dataclass(frozen=True, kw_only=True)
class Facts:
    """What the API said (or that it would not say) about one repository."""

    slug: str
    private: bool
    organization: bool
    approval_policy: str | Unreadable | None  # public repositories
    private_fork_settings: dict | Unreadable | None  # private repositories
    workflow_permissions: dict | Unreadable
    repository_runners: tuple[Runner, ...] | Unreadable
    runner_groups: tuple[RunnerGroup, ...] | Unreadable | None  # None: the owner is a user, not an organization


@dataclass(frozen=True)
class Finding:
    check: str
    status: str  # ok | at-risk | cannot-check
    detail: str
    fix: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def _cannot(check: str, unreadable: Unreadable, needs: str) -> Finding:
    return Finding(
        check,
        CANNOT_CHECK,
        f"cannot check: GitHub answered {unreadable.status} ({unreadable.message})",
        f"Run it again with {needs}.",
    )


def fork_approval(facts: Facts) -> Finding:
    check = "fork-pr-approval"
    settings_page = f"https://github.com/{facts.slug}/settings/actions"
    if facts.private:
        settings = facts.private_fork_settings
        if isinstance(settings, Unreadable):
            return _cannot(check, settings, ADMIN_READ)
        settings = settings or {}
        risky = [
            name for name in ("send_write_tokens_to_workflows", "send_secrets_and_variables") if settings.get(name)
        ]
        if settings.get("run_workflows_from_fork_pull_requests") and (
            not settings.get("require_approval_for_fork_pr_workflows") or risky
        ):
            return Finding(
                check,
                AT_RISK,
                "fork pull requests of this private repository run workflows"
                + (" without approval" if not settings.get("require_approval_for_fork_pr_workflows") else "")
                + (f" with {', '.join(risky)}" if risky else ""),
                f"{settings_page}: under 'Fork pull request workflows in private repositories' require approval "
                "and send no write tokens or secrets (or do not run fork workflows at all).",
            )
        return Finding(check, OK, "fork pull requests do not run workflows without approval")
    policy = facts.approval_policy
    if isinstance(policy, Unreadable):
        return _cannot(check, policy, ADMIN_READ)
    if policy == SAFE_APPROVAL_POLICY:
        return Finding(
            check, OK, "every outside collaborator's fork pull request waits for approval before its workflows run"
        )
    return Finding(
        check,
        AT_RISK,
        f"approval policy is {policy}: a fork pull request from an outside collaborator who is "
        "not new runs its own workflow files without anyone approving them",
        f"{settings_page}: 'Approval for running fork pull request workflows from contributors' -> "
        f"'Require approval for all external contributors' (API: PUT /repos/{facts.slug}/actions/permissions/"
        f"fork-pr-contributor-approval with approval_policy={SAFE_APPROVAL_POLICY}).",
    )


def default_token(facts: Facts) -> Finding:
    check = "default-token"
    settings = facts.workflow_permissions
    if isinstance(settings, Unreadable):
        return _cannot(check, settings, ADMIN_READ)
    fix = (
        f"https://github.com/{facts.slug}/settings/actions: 'Workflow permissions' -> 'Read repository contents and "
        "packages permissions', and leave 'Allow GitHub Actions to create and approve pull requests' off."
    )
    if settings.get("default_workflow_permissions") != "read":
        return Finding(
            check,
            AT_RISK,
            f"the default GITHUB_TOKEN may {settings.get('default_workflow_permissions')}: a job "
            "without `permissions:` gets write access",
            fix,
        )
    if settings.get("can_approve_pull_request_reviews"):
        return Finding(check, AT_RISK, "workflows may approve pull requests", fix)
    return Finding(check, OK, "the default GITHUB_TOKEN is read-only; workflows cannot approve pull requests")


def _lane_runners(labels: tuple[str, ...], facts: Facts) -> tuple[list[Runner], list[RunnerGroup]]:
    runners = (
        [r for r in facts.repository_runners if set(r.labels) & set(labels)]
        if not isinstance(facts.repository_runners, Unreadable)
        else []
    )
    groups = []
    if isinstance(facts.runner_groups, tuple):
        for group in facts.runner_groups:
            found = [r for r in group.runners if set(r.labels) & set(labels)]
            if found:
                groups.append(group)
                runners.extend(found)
    return runners, groups


def lane_findings(lane: str, labels: tuple[str, ...], facts: Facts) -> list[Finding]:
    """Where the lane's runners are registered, and whether they are ephemeral."""
    group_check, ephemeral_check = f"runner-group:{lane}", f"ephemeral:{lane}"
    for unreadable, needs in ((facts.repository_runners, ADMIN_READ), (facts.runner_groups, ORG_RUNNERS_READ)):
        if isinstance(unreadable, Unreadable):
            cannot = _cannot(group_check, unreadable, needs)
            return [cannot, Finding(ephemeral_check, CANNOT_CHECK, cannot.detail, cannot.fix)]
    runners, groups = _lane_runners(labels, facts)
    if not runners:
        detail = f"no self-hosted runner this repository can use carries a label of the lane ({', '.join(labels)})"
        fix = "Register the lane's runners (in a runner group limited to this repository), then check again."
        return [Finding(group_check, CANNOT_CHECK, detail, fix), Finding(ephemeral_check, CANNOT_CHECK, detail, fix)]
    shared = []
    for group in groups:
        if group.visibility == "selected" and group.repositories == (facts.slug,):
            continue
        if group.visibility == "selected":
            others = [r for r in group.repositories or () if r != facts.slug]
            shared.append(f"group {group.name!r} is also open to {', '.join(others)}")
        else:
            shared.append(
                f"group {group.name!r} is open to {'every' if group.visibility == 'all' else 'every private'} "
                "repository of the organization"
            )
    if shared:
        group_finding = Finding(
            group_check,
            AT_RISK,
            "; ".join(shared) + ": their workflows (and their forks' pull requests) "
            "can send jobs to this lane's GPU runners",
            f"https://github.com/organizations/{facts.slug.split('/')[0]}/settings/actions/runner-groups: "
            f"limit the group to the selected repository {facts.slug} only (or move the runners to a group "
            "of their own).",
        )
    else:
        where = ", ".join(sorted({r.group for r in runners}))
        group_finding = Finding(
            group_check, OK, f"{len(runners)} runner(s), only this repository may use them ({where})"
        )
    persistent = sorted(r.name for r in runners if not r.ephemeral)
    if persistent:
        ephemeral_finding = Finding(
            ephemeral_check,
            AT_RISK,
            f"not ephemeral: {', '.join(persistent)}: a job can leave files, "
            "processes or credentials for the next job on the same runner",
            "Register each runner with `./config.sh --ephemeral` (one job, then it is removed), e.g. "
            "through an autoscaler that registers a fresh runner per job.",
        )
    else:
        ephemeral_finding = Finding(ephemeral_check, OK, f"all {len(runners)} runner(s) are ephemeral")
    return [group_finding, ephemeral_finding]


def judge(facts: Facts, lanes: dict[str, tuple[str, ...]]) -> list[Finding]:
    """Every finding, repository settings first, then lane by lane."""
    findings = [fork_approval(facts), default_token(facts)]
    for lane, labels in lanes.items():
        findings.extend(lane_findings(lane, labels, facts))
    return findings


def render_text(findings: list[Finding]) -> str:
    marks = {OK: "ok", AT_RISK: "AT RISK", CANNOT_CHECK: "CANNOT CHECK"}
    lines = []
    for finding in findings:
        lines.append(f"{marks[finding.status]:<13} {finding.check}: {finding.detail}")
        if finding.fix and finding.status != OK:
            lines.append(f"{'':<13}   fix: {finding.fix}")
    return "\n".join(lines)
