"""perf-changelog.yaml: the entry model, the pr-link policy, the byte contract, the diff
of two revisions, key resolution and coverage, the fixer and the sweep plan.

Effects: filesystem, subprocess (git, for the two revisions); no network.
"""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import UsageError

CHANGELOG = "perf-changelog.yaml"


def changelog_path(repo: Path, value: str | None) -> str:
    """The changelog's path relative to the repository; outside it -> exit 2."""
    if not value:
        return CHANGELOG
    path = Path(value)
    absolute = (path if path.is_absolute() else Path.cwd() / path).resolve()
    try:
        return absolute.relative_to(repo.resolve()).as_posix()
    except ValueError:
        raise UsageError(
            f"--changelog {value!r} is outside the repository {repo}",
            "Name a file inside the repository, e.g. perf-changelog.yaml.",
        ) from None
