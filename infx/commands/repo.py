"""`infx repo check`: are the repository settings that keep fork pull requests off the
self-hosted runners in place (infx/workflows/repocheck.py)?"""

from __future__ import annotations

import json
import sys

import click

from ..changelog.policy import resolve_slug
from ..launch.lane import lane_entries
from ..reporoot import repository_root
from ..workflows import repocheck
from ..workflows.github.client import Connection
from ..workflows.github.repository import repository_settings
from .options import format_option, repo_option


@click.group()
def repo() -> None:
    """Check the GitHub repository's settings."""


@repo.command("check")
@repo_option()
@format_option(("text", "json"))
def check(repo_slug: str | None, fmt: str) -> None:
    """Read, with the token in GITHUB_TOKEN (a repository admin's), the fork pull request approval
    policy, the default workflow token, and where each lane's runners are registered and whether
    they are ephemeral; report each as ok, at risk (with the fix) or not checkable. Exit 1 unless
    every check is ok."""
    root = repository_root()
    slug = resolve_slug(repo_slug, root)[0]
    lanes = {entry.name: entry.labels for entry in lane_entries(root) if entry.labels}
    github = Connection(needs=repocheck.TOKEN_NEEDED)
    findings = repocheck.judge(repository_settings(github.client(), slug), lanes)
    ok = all(finding.status == repocheck.OK for finding in findings)
    if fmt == "json":
        click.echo(json.dumps({"ok": ok, "repository": slug, "checks": [f.to_json() for f in findings]}, indent=1))
    else:
        click.echo(repocheck.render_text(findings))
        click.echo(
            f"\n{slug}: "
            + (
                "every check is ok"
                if ok
                else f"{sum(f.status != repocheck.OK for f in findings)} of {len(findings)} checks are not ok"
            ),
            err=True,
        )
    sys.exit(0 if ok else 1)
