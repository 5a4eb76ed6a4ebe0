"""`infx plan`: the sweep a changelog change asks for (or, with no refs, its newest entry)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ..changelog.plan import PlanOptions
from ..diagnostics import UsageError
from ..fsio import atomic_write
from ..points import point_id
from ..reporoot import repository_root
from ..sweepplan import SweepPlan
from ..workflows.actions import SHARD_DIR, runner_temp
from ..workflows.github.client import Connection
from ..workflows.labels import EVENTS
from ..workflows.planning import Said, SweepRequest, plan_request, plan_table, write_github_outputs
from .common import OUTPUT_FILE, finish, json_string_list, show
from .options import (
    built_from,
    changelog_option,
    format_option,
    option_set,
    pr_number_option,
    repo_option,
    run_modifier_options,
)

# `infx plan`'s options, in --help order. Each destination is the SweepRequest field it fills (see
# built_from); the others are read by the command: the run modifiers, --labels-json, the output.
PLAN_OPTIONS = option_set(
    click.option("--base-ref", help="The base branch or commit (PR runs use its merge-base with the head)."),
    click.option("--head-ref", help="The head commit."),
    pr_number_option("The PR's number: a PR run."),
    repo_option(" whose PR links are canonical"),
    changelog_option,
    click.option("--allow-removal", is_flag=True, help="Accept removed historical entries (a revert)."),
    run_modifier_options,
    click.option(
        "--label",
        "labels",
        multiple=True,
        metavar="NAME",
        help="A PR label (repeatable); the label table (docs/workflows.md) turns labels into the run mode.",
    ),
    click.option(
        "--labels-json",
        metavar="JSON",
        help="PR labels as a JSON list of names (what toJSON(github.event.pull_request.labels.*.name) gives).",
    ),
    click.option(
        "--event",
        type=click.Choice(EVENTS),
        help="The triggering event (default: pull_request with --pr-number or no refs, else push).",
    ),
    click.option(
        "--rows",
        type=click.Path(path_type=Path),
        help="Plan these rows (JSON from `infx matrix` or an earlier plan) instead of a changelog change.",
    ),
    click.option(
        "--reuse-github",
        is_flag=True,
        help="Leave out points whose result key has a valid result among the repository's artifacts (trusted runs "
        "only).",
    ),
    click.option(
        "--reuse-artifacts",
        "reuse_dir",
        type=click.Path(path_type=Path, file_okay=False),
        help="The same, over a folder of downloaded point artifacts.",
    ),
    click.option(
        "--lane",
        metavar="LANE",
        help="With --rows: every point runs on this lane (a lane name or runner label; run-sweep's `lane` input), "
        "so none is held for want of one.",
    ),
    click.option("--no-reuse", is_flag=True, help="Run every planned point (the no-reuse label, or a dispatch input)."),
    click.option(
        "--dry-run",
        "hosted",
        is_flag=True,
        help="Every launch is planned on a GitHub-hosted runner (run-sweep's dry run): no self-hosted queue to check.",
    ),
    format_option(
        ("table", "json", "github"), default=None, help="Output format (default: json with refs, table without)."
    ),
    click.option("--output", type=OUTPUT_FILE, help="Write the JSON plan to this file as well."),
    click.option("--shard-dir", type=click.Path(path_type=Path), help="--format github: folder for shard files."),
)


@click.command()
@PLAN_OPTIONS
def plan(**given: Any) -> None:
    """Plan the sweep of the entries appended between --base-ref and --head-ref.

    With no refs: plan the newest entry of the working tree's changelog against the
    working tree's configs and print it as a table.
    """
    request = _request(given)
    fmt, output, shard_dir = given["fmt"], given["output"], given["shard_dir"]
    shown = fmt or ("table" if request.base_ref is None and request.rows is None else "json")

    def say(said: Said) -> None:
        show(list(said.diagnostics), "github" if shown == "github" else "text", said.ok, verdict=said.verdict)
        if said.line:
            click.echo(said.line, err=True)

    planned = plan_request(request, say)
    if planned.mode_problems:
        finish(planned.report, "text" if fmt in (None, "table") else fmt)  # exits
    if planned.plan is None:
        sys.exit(planned.report.exit_code or 1)
    result = planned.plan
    if output:
        if not output.parent.is_dir():
            raise UsageError(f"--output {output}: the folder {output.parent} does not exist")
        atomic_write(output, result.text(indent=2) + "\n")
    if shown == "json":
        click.echo(result.text())
    elif shown == "table":
        click.echo(plan_table(result))
    else:
        _github(result, shard_dir)
    sys.exit(0)


def _github(plan: SweepPlan, shard_dir: Path | None) -> None:
    """The plan as the workflows take it (infx/workflows/planning.py write_github_outputs)."""
    output = os.environ.get("GITHUB_OUTPUT")
    if not output:
        raise UsageError(
            "--format github needs $GITHUB_OUTPUT (it runs inside GitHub Actions)", "Use --format json outside Actions."
        )
    if shard_dir is None:
        shard_dir = runner_temp(SHARD_DIR)
    shards = write_github_outputs(plan, output, shard_dir, os.environ.get("GITHUB_STEP_SUMMARY"))
    held = len(plan.held & {point_id(row) for row in plan.rows})
    click.echo(
        f"{plan.point_count - held} point(s) in {shards} shard(s)"
        + (f", {held} held" if held else "")
        + f"; plan written to {Path(shard_dir) / 'plan.json'}",
        err=True,
    )


def _request(given: dict[str, Any]) -> SweepRequest:
    """The request the options make; the combinations no request may have are usage errors."""
    base_ref, rows = given["base_ref"], given["rows"]
    if (base_ref is None) != (given["head_ref"] is None):
        raise UsageError(
            "give both --base-ref and --head-ref, or neither (to plan the newest entry of the working tree)"
        )
    if rows is not None and base_ref is not None:
        raise UsageError("--rows plans given rows; it takes no --base-ref/--head-ref")
    if given["lane"] is not None and rows is None:
        raise UsageError(
            "--lane goes with --rows (a manual sweep on one lane)",
            "A changelog change's points run on the lanes their runner labels name.",
        )
    event = given["event"] or (
        "push"
        if base_ref is not None and given["pr_number"] is None
        else "workflow_dispatch"
        if rows is not None
        else "pull_request"
    )
    if given["reuse_github"] and given["reuse_dir"] is not None:
        raise UsageError("give at most one of --reuse-github and --reuse-artifacts")
    labels_json = given["labels_json"]
    labels = tuple(given["labels"]) + tuple(
        json_string_list(labels_json, "--labels-json", '["sweep-enabled", "evals-only"]') if labels_json else ()
    )
    return built_from(
        SweepRequest,
        given,
        event=event,
        labels=labels,
        options=built_from(PlanOptions.of, given),
        root=repository_root(),
        github=Connection(),
    )
