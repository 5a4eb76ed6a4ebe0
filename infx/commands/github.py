"""`infx github …`: the sticky PR report, reruns of failed points, and the two small
helpers the sweep workflows call (select the rows of a rerun, name a point).

Each subcommand that talks to GitHub resolves the repository root, its slug and one GitHub
connection (made on first use) here, once, and hands them down.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from ..changelog.policy import resolve_slug
from ..diagnostics import UsageError
from ..fsio import append, atomic_write
from ..jsonfast import dumps
from ..points import point_id, read_point
from ..reporoot import repository_root
from ..workflows import sweepruns
from ..workflows.actions import SHARD_DIR, write_outputs, write_sharded_outputs, write_step_summary
from ..workflows.github.client import Connection
from ..workflows.github.repository import read_gate
from ..workflows.lanegate import RUNNERS_TOKEN, render_lines
from ..workflows.rerun import artifact_name
from ..workflows.sweepruns import ReportRequest, RerunRequest
from ..workflows.trust import SWEEP_WORKFLOW
from .common import OUTPUT_FILE, json_string_list
from .options import format_option, plan_option, pr_number_option, repo_option


def _say(text: str, err: bool) -> None:
    click.echo(text, err=err)


@click.group()
def github() -> None:
    """Report to pull requests and rerun failed points through the GitHub API."""


@github.command("report")
@pr_number_option("Pull request number.", required=True)
@plan_option()
@click.option(
    "--results",
    "results_dir",
    type=click.Path(path_type=Path),
    help="Folder of downloaded point artifacts (point-<id>[-failed]); adds each point's outcome.",
)
@click.option("--run-id", type=click.IntRange(min=1), help="Read each point's outcome from this run's artifacts.")
@click.option(
    "--comparison",
    "comparison_path",
    type=click.Path(path_type=Path),
    help="JSON from `infx results compare --format json`: adds the table against the baseline.",
)
@click.option("--charts", "charts_path", type=click.Path(path_type=Path), help="charts.md from `infx results plot`.")
@click.option(
    "--lane-gate",
    "lane_gate_path",
    type=click.Path(path_type=Path),
    help="The lane gate's JSON (`infx github lane-gate --output`): says which lanes' points were stopped.",
)
@repo_option()
def report(
    pr_number: int,
    plan_path: Path,
    results_dir: Path | None,
    run_id: int | None,
    comparison_path: Path | None,
    charts_path: Path | None,
    lane_gate_path: Path | None,
    repo_slug: str | None,
) -> None:
    """Create or update the one sticky sweep comment on a pull request."""
    posted = sweepruns.post_report(
        ReportRequest(
            slug=resolve_slug(repo_slug, repository_root())[0],
            pr_number=pr_number,
            plan=plan_path,
            results=results_dir,
            run_id=run_id,
            comparison=comparison_path,
            charts=charts_path,
            lane_gate=lane_gate_path,
        ),
        Connection(),
        _say,
    )
    click.echo(
        f"infx github report: {posted.action} the sweep comment on {posted.slug}#{pr_number} ({posted.points} points)",
        err=True,
    )


@github.command("rerun-failed")
@click.option("--run-id", type=click.IntRange(min=1), required=True, help="The sweep run whose failed points to rerun.")
@click.option("--workflow", "workflow_file", default=SWEEP_WORKFLOW, show_default=True, help="Workflow to dispatch.")
@click.option("--ref", help="Branch or tag to dispatch on (default: the run's branch).")
@pr_number_option("The pull request being rerun (its branch's runs are accepted).")
@click.option("--dry-run", is_flag=True, help="Print the failed points and the dispatch; change nothing.")
@repo_option()
def rerun_failed(
    run_id: int, workflow_file: str, ref: str | None, pr_number: int | None, dry_run: bool, repo_slug: str | None
) -> None:
    """Dispatch a sweep of exactly the points of RUN whose result artifact is missing or invalid.

    RUN must be a run of this repository's sweep workflow on main or on the branch of --pr-number."""
    request = RerunRequest(
        slug=resolve_slug(repo_slug, repository_root())[0],
        run_id=run_id,
        workflow=workflow_file,
        ref=ref,
        pr_number=pr_number,
        dry_run=dry_run,
    )
    rerun = sweepruns.rerun_failed(request, Connection(), _say)
    if not rerun.failed:
        click.echo(
            f"infx github rerun-failed: all {len(rerun.ids)} points of run {run_id} have a valid result; nothing to "
            "rerun",
            err=True,
        )
        return
    if dry_run:
        click.echo(
            f"infx github rerun-failed: would dispatch {workflow_file} on {rerun.ref} with {json.dumps(rerun.inputs)}",
            err=True,
        )
        return
    verb = "dispatched" if rerun.created else "already dispatched earlier:"
    click.echo(
        f"infx github rerun-failed: {len(rerun.failed)} of {len(rerun.ids)} points; {verb} launch {rerun.launch} "
        f"{rerun.run_url or '(run not listed yet)'}",
        err=True,
    )


@github.command("check-rerun")
@click.option(
    "--run-id", type=click.IntRange(min=1), required=True, help="The run whose sweep-plan a rerun would download."
)
@click.option("--ref", "ref_name", required=True, help="The branch this rerun runs on ($GITHUB_REF_NAME).")
@repo_option()
def check_rerun(run_id: int, ref_name: str, repo_slug: str | None) -> None:
    """Exit 0 only when RUN's plan may drive this rerun: a run of this repository's sweep
    workflow, on this repository's code, on main or on REF (the rerun's own branch)."""
    slug = resolve_slug(repo_slug, repository_root())[0]
    branch = sweepruns.check_rerun(slug, run_id, ref_name, Connection())
    click.echo(
        f"infx github check-rerun: run {run_id} is a sweep of {slug} on {branch}; its plan may be reused", err=True
    )


@github.command("select-points")
@plan_option("The earlier run's plan.json.")
@click.option("--points", "points_text", required=True, help="Point ids separated by spaces (or commas).")
@click.option("--output", "plan_output", type=OUTPUT_FILE, help="Write the selected plan (JSON rows) here.")
@format_option(("json", "github"), default="json")
@click.option(
    "--shard-dir",
    type=click.Path(path_type=Path),
    help="github: folder for shard-<k>.json (default $RUNNER_TEMP/infx-shards).",
)
def select_points(
    plan_path: Path, points_text: str, plan_output: Path | None, fmt: str, shard_dir: Path | None
) -> None:
    """The rows of a plan whose point ids are listed: what a rerun sweeps."""
    wanted = {part for part in points_text.replace(",", " ").split() if part}
    if not wanted:
        raise UsageError("--points lists no point id", "Pass the ids printed by `infx github rerun-failed`.")
    selected = sweepruns.select_points(plan_path, wanted)
    rows = [row for bucket_rows in selected.values() for row in bucket_rows]
    if plan_output is not None:
        atomic_write(plan_output, dumps(rows))
    if fmt == "json":
        if plan_output is None:
            click.echo(dumps(rows))
        return
    outputs_path = os.environ.get("GITHUB_OUTPUT")
    runner_temp = os.environ.get("RUNNER_TEMP")
    if not outputs_path or not (shard_dir or runner_temp):
        raise UsageError(
            "--format github needs $GITHUB_OUTPUT and --shard-dir or $RUNNER_TEMP", "Run it inside GitHub Actions."
        )
    shards = write_sharded_outputs(
        selected, outputs_path, shard_dir or Path(str(runner_temp)) / SHARD_DIR
    )  # runner_temp: set without shard_dir
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        write_step_summary(os.environ["GITHUB_STEP_SUMMARY"], selected, title="infx rerun", shards=shards)
    click.echo(f"infx github select-points: {len(rows)} points in {len(shards)} shards", err=True)


@github.command("point-id")
@click.option("--point", "point_path", type=click.Path(path_type=Path), help="Point JSON file (default: $POINT_JSON).")
@format_option(("text", "github"))
def point_id_command(point_path: Path | None, fmt: str) -> None:
    """Print a point's id; with --format github also write the outputs `id` and `artifact`
    (the name its result artifact gets: `point-<result key>` once the plan carries one)."""
    row, _, _ = read_point(str(point_path) if point_path else None)
    pid = point_id(row)
    click.echo(pid)
    if fmt == "github":
        if not os.environ.get("GITHUB_OUTPUT"):
            raise UsageError("--format github needs $GITHUB_OUTPUT", "Run it inside GitHub Actions.")
        write_outputs(os.environ["GITHUB_OUTPUT"], {"id": pid, "artifact": artifact_name(row)})
    sys.stdout.flush()


@github.command("lane-gate")
@click.option(
    "--lanes", "lanes_json", required=True, help="The plan's lanes as a JSON list (the setup job's `lanes` output)."
)
@click.option("--output", type=OUTPUT_FILE, help="Write the gate (each lane: up, detail) as JSON here.")
@format_option(("text", "github"))
@repo_option()
def lane_gate(lanes_json: str, output: Path | None, fmt: str, repo_slug: str | None) -> None:
    """Name the lanes no online self-hosted runner serves (read with the token in INFX_RUNNERS_TOKEN;
    without one nothing is checked); with --format github write them as the output `down`."""
    lanes = json_string_list(lanes_json, "--lanes", '["gb300-nv"]')
    root = repository_root()
    gate = read_gate(
        lanes, lambda: resolve_slug(repo_slug, root)[0], Connection(token=os.environ.get(RUNNERS_TOKEN, ""))
    )
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(output, dumps(gate.to_json()) + "\n")
    lines = render_lines(gate.lanes) or [
        f"- every lane of the plan has a runner online: {', '.join(f'`{lane}`' for lane in lanes) or '(none)'}"
    ]
    if gate.notice:
        lines = [f"- {gate.notice}."]
    if fmt == "github":
        outputs_path, summary = os.environ.get("GITHUB_OUTPUT"), os.environ.get("GITHUB_STEP_SUMMARY")
        if not outputs_path:
            raise UsageError("--format github needs $GITHUB_OUTPUT", "Run it inside GitHub Actions.")
        write_outputs(outputs_path, {"down": dumps(gate.down)})
        if summary:
            append(summary, "## Lanes\n\n" + "\n".join(lines) + "\n")
        if gate.notice:
            click.echo(f"::notice title=lane-gate::{gate.notice}")
    click.echo("\n".join(lines))
