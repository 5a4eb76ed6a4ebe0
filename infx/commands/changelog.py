"""`infx changelog validate` and `infx changelog fix`."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..changelog.fix import FixRequest, fix_changelog
from ..changelog.gate import GateRequest, validate_changelog
from ..changelog.plan import PlanOptions
from ..diagnostics import Report, UsageError
from .common import finish, show
from .options import built_from, changelog_option, format_option, pr_number_option, repo_option, run_modifier_options

PR_LINKS = " whose PR links are canonical"
PR_OPTION = pr_number_option("The PR's number: a PR run (placeholders allowed).")


@click.group()
def changelog() -> None:
    """Gate and fix perf-changelog.yaml."""


@changelog.command("validate")
@click.option("--base-ref", required=True, help="The base branch or commit (PR runs use its merge-base with the head).")
@click.option("--head-ref", required=True, help="The head commit.")
@PR_OPTION
@repo_option(PR_LINKS)
@changelog_option
@click.option(
    "--allow-removal", is_flag=True, help="Accept removed historical entries (a revert); they are listed, not swept."
)
@run_modifier_options
@format_option()
def validate(fmt: str, **given: Any) -> None:
    """Run the whole contract: schema, pr-link policy, bytes, diff, keys, coverage, and that the plan builds."""
    result = validate_changelog(built_from(GateRequest, given, plan_options=built_from(PlanOptions.of, given)))
    change = result.change
    summary: dict[str, Any] = {
        "mode": change.mode if change else None,
        "base": result.base_commit,
        "head": result.head_commit,
        "added-entries": change.added_indexes if change else [],
        "removed-entries": [i for i, _ in change.removed] if change else [],
        "pr-link-corrections": len(change.corrections) if change else 0,
        "resolved-keys": result.resolution.keys if result.resolution else [],
        "point-count": result.plan.point_count if result.plan else 0,
    }
    added = len(summary["added-entries"])
    finish(
        result.report,
        fmt,
        f"{added} new entr{'y' if added == 1 else 'ies'}, "
        f"{len(summary['resolved-keys'])} config key(s), {summary['point-count']} point(s) planned",
        **summary,
    )


@changelog.command("fix")
@PR_OPTION
@click.option("--base-ref", default=None, help="The base branch (default: origin/main, else main).")
@repo_option(PR_LINKS)
@changelog_option
@format_option()
def fix(fmt: str, **given: Any) -> None:
    """Repair the appended entries in the working tree: pr-link placeholders, separators, final newline, TABs."""
    if given["pr_number"] is None:
        raise UsageError("--pr-number is required: fix writes the canonical link of that PR", "Pass --pr-number N.")
    result = fix_changelog(built_from(FixRequest, given))
    name = result.file
    report = Report(result.diagnostics)
    show(  # the verdict first, then what was repaired
        report.sorted(),
        fmt,
        report.ok,
        f"{name}: {len(result.changes)} repair(s) written" if result.written else f"{name}: nothing to fix",
        changes=result.changes,
        written=result.written,
    )
    for line in result.changes:
        click.echo(f"{'fixed' if result.written else 'not written'}: {line}", err=True)
    if result.changes and not result.written and not report.ok:
        click.echo(f"{name}: left unchanged: the repaired file would still fail the gate (above)", err=True)
    sys.exit(report.exit_code)
