"""Which workflow runs infx may take artifacts from: one rule for reruns (the plan artifact) and
one for reuse (result artifacts). Pure: facts in (gathered by
infx/workflows/github/runs.py), a verdict out.

Both let a stored artifact decide what runs, or stand in for what ran, on the self-hosted GPU
runners, so a run counts only when it is this repository's own sweep workflow on code of this
repository (`origin_problems`). On top:

- a rerun's plan must come from a run on main or on the pull request's own branch
  (`untrusted_reason`);
- a reused result (`result_refusal`) must come from one of **main's own runs** (event push or
  workflow_dispatch, on main, whose head commit is still on main), from the **final head commit
  of a merged pull request** (for a sweep of main: the PR API's `merged_at` and `head.sha`, so
  never an intermediate or reverted commit of it), or, for a pull request's sweep, from **its
  own commits** (only when its head repository is this repository).

Effects: none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

SWEEP_WORKFLOW = "run-sweep.yml"
SWEEP_WORKFLOW_PATH = f".github/workflows/{SWEEP_WORKFLOW}"
TRUSTED_BRANCH = "main"
MAIN_EVENTS = ("push", "workflow_dispatch")  # how main's own sweeps start


@dataclass(frozen=True, kw_only=True)
class RunFacts:
    """What GitHub says about a workflow run (None where it says nothing)."""

    run_id: int
    workflow_path: str | None  # e.g. .github/workflows/run-sweep.yml (GitHub may append @<ref>)
    repository: str | None  # OWNER/NAME the run belongs to
    head_repository: str | None  # OWNER/NAME the run's code came from (a fork's, for fork PRs)
    head_branch: str | None
    head_sha: str | None = None
    event: str | None = None


@dataclass(frozen=True, kw_only=True)
class PullFacts:
    """What the pull request API says about one pull request."""

    number: int
    head_ref: str | None
    head_sha: str | None  # after a merge: the final head commit, the one that was merged
    head_repository: str | None  # None when it was deleted
    base_ref: str | None
    merged: bool


class ResultFacts(Protocol):
    """The facts `result_refusal` may ask for; github/runs.py's GitHubFacts fetches each at most once."""

    def on_main(self, sha: str) -> bool: ...

    def merged_pulls(self, branch: str) -> list[PullFacts]: ...

    def pull_commits(self) -> frozenset[str]: ...


def origin_problems(run: RunFacts, slug: str) -> list[str]:
    """Why ``run`` is not this repository's sweep workflow on this repository's code ([] when it is)."""
    path = (run.workflow_path or "").partition("@")[0]
    checks = (
        (
            path == SWEEP_WORKFLOW_PATH,
            f"it is a run of {run.workflow_path or 'an unknown workflow'}, not {SWEEP_WORKFLOW_PATH}",
        ),
        (run.repository == slug, f"it belongs to {run.repository or 'an unknown repository'}, not {slug}"),
        (
            run.head_repository == slug,
            f"its code came from {run.head_repository or 'an unknown repository'}, not {slug}",
        ),
    )
    return [reason for ok, reason in checks if not ok]


def untrusted_reason(run: RunFacts, slug: str, branches: set[str]) -> str | None:
    """Why the plan artifact of ``run`` must not drive a rerun, or None when it may: only a run
    on ``main`` or on the branch of the PR being rerun (``branches``). Any other run (another
    workflow, a fork's pull request, an unrelated branch) could carry a plan written by anyone."""
    reasons = origin_problems(run, slug)
    if run.head_branch not in branches:
        reasons.append(f"it ran on branch {run.head_branch!r}, not on {' or '.join(sorted(branches))}")
    return f"run {run.run_id} cannot be rerun from its plan: {'; '.join(reasons)}" if reasons else None


def final_head_of_merged(pulls: list[PullFacts], sha: str, slug: str, main_ref: str) -> PullFacts | None:
    """The merged pull request (into ``main_ref``, from this repository) whose final head is ``sha``."""
    return next(
        (p for p in pulls if p.merged and p.head_sha == sha and p.head_repository == slug and p.base_ref == main_ref),
        None,
    )


def result_refusal(run: RunFacts, slug: str, main_ref: str, pull_number: int | None, facts: ResultFacts) -> str:
    """ "" when the result artifacts of ``run`` may stand in for a launch in a sweep of
    ``main_ref`` (``pull_number`` None) or of pull request ``pull_number``; else why not."""
    problems = origin_problems(run, slug)
    if problems:
        return "; ".join(problems)
    sha, branch = run.head_sha or "", run.head_branch or ""
    where = f"{branch or '?'}@{sha[:12] or '?'}"
    if run.event in MAIN_EVENTS and branch == main_ref:
        return "" if sha and facts.on_main(sha) else f"its commit {sha[:12] or '?'} is no longer on {main_ref}"
    if pull_number is not None:
        if sha and sha in facts.pull_commits():
            return ""
        return f"it ran on {where}, which is neither a run of {main_ref} nor a commit of pull request #{pull_number}"
    pulls = facts.merged_pulls(branch) if branch else []
    if sha and final_head_of_merged(pulls, sha, slug, main_ref) is not None:
        return ""
    merged = [p for p in pulls if p.merged and p.base_ref == main_ref]
    if merged:
        heads = ", ".join(f"#{p.number} at {(p.head_sha or '?')[:12]}" for p in merged)
        return f"it ran on {where}, not the final head commit of the merged pull request ({heads})"
    return f"it ran on {where}, which is neither a run of {main_ref} nor the final head commit of a merged pull request"
