"""Workflow runs and pull requests: a run read and checked, the facts trust.py judges (of a run,
of a pull request, `GitHubFacts` for reuse), the refusal of an untrusted run, and the one
dispatch per launch id.

Effects: network (the GitHub API, through client.py).
"""

from __future__ import annotations

import itertools

from ...diagnostics import InfxError, error
from ..markers import launch_marker
from ..trust import TRUSTED_BRANCH, PullFacts, RunFacts, result_refusal, untrusted_reason
from .client import Client, read, write
from .failures import MalformedAnswer, answer_field, calling, github_error

RECENT_RUNS = 100  # dispatched runs searched for a launch id


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
        run_id=run.id,
        workflow_path=run.path,
        repository=repository.full_name if repository else None,
        head_repository=head.full_name if head else None,
        head_branch=run.head_branch,
        head_sha=run.head_sha,
        event=run.event,
    )
    if not isinstance(facts.run_id, int):
        raise MalformedAnswer(f"the run's id is {facts.run_id!r}")
    return facts


def run_facts_from_api(data, what: str) -> RunFacts:
    """The same facts from the run's JSON (`GET …/actions/runs/{id}`), every field checked."""
    repository = answer_field(data, "repository", dict, what, optional=True) or {}
    head = answer_field(data, "head_repository", dict, what, optional=True) or {}
    return RunFacts(
        run_id=answer_field(data, "id", int, what),
        workflow_path=answer_field(data, "path", str, what, optional=True),
        repository=answer_field(repository, "full_name", str, what, optional=True),
        head_repository=answer_field(head, "full_name", str, what, optional=True),
        head_branch=answer_field(data, "head_branch", str, what, optional=True),
        head_sha=answer_field(data, "head_sha", str, what, optional=True),
        event=answer_field(data, "event", str, what, optional=True),
    )


def pull_facts_from_api(data, what: str) -> PullFacts:
    head = answer_field(data, "head", dict, what)
    base = answer_field(data, "base", dict, what)
    head_repo = answer_field(head, "repo", dict, what, optional=True)
    return PullFacts(
        number=answer_field(data, "number", int, what),
        head_ref=answer_field(head, "ref", str, what, optional=True),
        head_sha=answer_field(head, "sha", str, what, optional=True),
        head_repository=answer_field(head_repo, "full_name", str, what, optional=True) if head_repo else None,
        base_ref=answer_field(base, "ref", str, what, optional=True),
        merged=answer_field(data, "merged_at", str, what, optional=True) is not None,
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
        raise github_error(
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
        created = write(
            client,
            lambda: workflow.create_dispatch(ref, inputs, throw=True, return_run_details=True),
            lambda: find_launch(client, workflow, workflow_file, launch),
        )
    if created is True:  # a server that answers 204 without the run's details (older GHES)
        return find_launch(client, workflow, workflow_file, launch), True
    return created, True


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
                self._on_main[sha] = answer_field(data, "status", str, what) in (
                    "ahead",
                    "identical",
                )  # main at or past sha
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
                        shas.update(answer_field(item, "sha", str, listing) for item in items)
            self._pull_commits = frozenset(shas)
        return self._pull_commits
