"""Which workflow runs infx may take artifacts from: one rule for reruns (the plan artifact) and
for reuse (result artifacts).

Both let a stored artifact decide what runs, or stand in for what ran, on the self-hosted GPU
runners, so a run counts only when it is this repository's own sweep workflow on code of this
repository (`origin_problems`). On top: a rerun's plan must come from a run on main or on the
pull request's own branch; a reused result from a run whose head commit is on main or is one of
the trusted pull request's commits (api.RunTrust).
"""

from __future__ import annotations

from dataclasses import dataclass

SWEEP_WORKFLOW = "run-sweep.yml"
SWEEP_WORKFLOW_PATH = f".github/workflows/{SWEEP_WORKFLOW}"
TRUSTED_BRANCH = "main"


@dataclass(frozen=True)
class RunFacts:
    """What GitHub says about a workflow run (None where it says nothing)."""

    run_id: int
    workflow_path: str | None  # e.g. .github/workflows/run-sweep.yml (GitHub may append @<ref>)
    repository: str | None  # OWNER/NAME the run belongs to
    head_repository: str | None  # OWNER/NAME the run's code came from (a fork's, for fork PRs)
    head_branch: str | None
    head_sha: str | None = None


def origin_problems(run: RunFacts, slug: str) -> list[str]:
    """Why ``run`` is not this repository's sweep workflow on this repository's code ([] when it is)."""
    path = (run.workflow_path or "").partition("@")[0]
    checks = (
        (path == SWEEP_WORKFLOW_PATH, f"it is a run of {run.workflow_path or 'an unknown workflow'}, not {SWEEP_WORKFLOW_PATH}"),
        (run.repository == slug, f"it belongs to {run.repository or 'an unknown repository'}, not {slug}"),
        (run.head_repository == slug, f"its code came from {run.head_repository or 'an unknown repository'}, not {slug}"),
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
