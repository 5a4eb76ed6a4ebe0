"""`infx github …`: the sticky PR report, reruns of failed points, and the two small
helpers the sweep workflows call (select the rows of a rerun, name a point)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from ..diagnostics import UsageError
from ..workflows.rerun import SWEEP_WORKFLOW
from .common import OUTPUT_FILE

REPOSITORY_CONFIG = Path("configs") / "infx.yaml"


def repository_slug(option: str | None) -> str:
    """--repo, else $GITHUB_REPOSITORY, else `repository:` in configs/infx.yaml."""
    if option:
        slug = option
    elif os.environ.get("GITHUB_REPOSITORY"):
        slug = os.environ["GITHUB_REPOSITORY"]
    else:
        slug = ""
        if REPOSITORY_CONFIG.is_file():
            from ..yamlio import load_yaml

            document, _ = load_yaml(REPOSITORY_CONFIG)
            if document is not None and isinstance(document.data, dict):
                slug = str(document.data.get("repository") or "")
    if slug.count("/") != 1 or not all(slug.split("/")):
        raise UsageError(f"no usable repository slug ({slug or 'none given'})",
                         "Pass --repo OWNER/NAME, or set GITHUB_REPOSITORY, or `repository:` in configs/infx.yaml.")
    return slug


repo_option = click.option("--repo", help="OWNER/NAME (default: $GITHUB_REPOSITORY, then configs/infx.yaml).")


@click.group()
def github() -> None:
    """Report to pull requests and rerun failed points through the GitHub API."""


@github.command("report")
@click.option("--pr", "pr_number", type=click.IntRange(min=1), required=True, help="Pull request number.")
@click.option("--plan", "plan_path", type=click.Path(path_type=Path), required=True,
              help="The plan: JSON from `infx plan --format json` or `infx matrix --format json`.")
@click.option("--results", "results_dir", type=click.Path(path_type=Path),
              help="Folder of downloaded point artifacts (point-<id>[-failed]); adds each point's outcome.")
@click.option("--run-id", type=click.IntRange(min=1), help="Read each point's outcome from this run's artifacts.")
@repo_option
def report(pr_number: int, plan_path: Path, results_dir: Path | None, run_id: int | None, repo: str | None) -> None:
    """Create or update the one sticky sweep comment on a pull request."""
    from ..workflows import api
    from ..workflows.report import build_comment, read_plan
    from ..workflows.rerun import outcomes, outcomes_from_names
    from ..points import point_id

    slug = repository_slug(repo)
    buckets = read_plan(plan_path)
    ids = [point_id(row) for rows in buckets.values() for row in rows]
    settings = api.settings_from_env()
    gh = api.connect(settings)
    status, run_url = None, None
    if results_dir is not None:
        if not results_dir.is_dir():
            raise UsageError(f"--results {results_dir} is not a folder", "Pass the folder the artifacts were downloaded to.")
        status = outcomes_from_names(ids, [p.name for p in results_dir.iterdir()])
    if run_id is not None:
        _, run = api.get_run(gh, slug, run_id)
        status = outcomes(ids, api.artifact_infos(api.run_artifacts(run)))
        run_url = run.html_url
    body = build_comment(buckets, status, run_url)
    action = api.upsert_comment(gh, slug, pr_number, body, settings.max_wait)
    click.echo(f"infx github report: {action} the sweep comment on {slug}#{pr_number} ({len(ids)} points)", err=True)


@github.command("rerun-failed")
@click.option("--run-id", type=click.IntRange(min=1), required=True, help="The sweep run whose failed points to rerun.")
@click.option("--workflow", "workflow_file", default=SWEEP_WORKFLOW, show_default=True, help="Workflow to dispatch.")
@click.option("--ref", help="Branch or tag to dispatch on (default: the run's branch).")
@click.option("--dry-run", is_flag=True, help="Print the failed points and the dispatch; change nothing.")
@repo_option
def rerun_failed(run_id: int, workflow_file: str, ref: str | None, dry_run: bool, repo: str | None) -> None:
    """Dispatch a sweep of exactly the points of RUN whose result artifact is missing or invalid."""
    from ..workflows import api
    from ..workflows.report import OUTCOME_OK, plan_buckets
    from ..workflows.rerun import dispatch_inputs, launch_id, outcomes
    from ..points import point_id

    slug = repository_slug(repo)
    settings = api.settings_from_env()
    gh = api.connect(settings)
    repository, run = api.get_run(gh, slug, run_id)
    artifacts = api.run_artifacts(run)
    buckets = plan_buckets(api.download_plan(run, artifacts))
    ids = list(dict.fromkeys(point_id(row) for rows in buckets.values() for row in rows))
    status = outcomes(ids, api.artifact_infos(artifacts))
    failed = [pid for pid in ids if status[pid] != OUTCOME_OK]
    for pid in failed:
        click.echo(f"{status[pid]}\t{pid}")
    if not failed:
        click.echo(f"infx github rerun-failed: all {len(ids)} points of run {run_id} have a valid result; nothing to rerun", err=True)
        return
    launch = launch_id(run_id, failed)
    inputs = dispatch_inputs(run_id, failed, launch)
    target_ref = ref or run.head_branch
    if dry_run:
        click.echo(f"infx github rerun-failed: would dispatch {workflow_file} on {target_ref} with {json.dumps(inputs)}", err=True)
        return
    new_run, created = api.dispatch_once(repository, workflow_file, target_ref, inputs, launch, settings.max_wait)
    where = getattr(new_run, "html_url", None) or "(run not listed yet)"
    verb = "dispatched" if created else "already dispatched earlier:"
    click.echo(f"infx github rerun-failed: {len(failed)} of {len(ids)} points; {verb} launch {launch} {where}", err=True)


@github.command("select-points")
@click.option("--plan", "plan_path", type=click.Path(path_type=Path), required=True, help="The earlier run's plan.json.")
@click.option("--points", "points_text", required=True, help="Point ids separated by spaces (or commas).")
@click.option("--output", "plan_output", type=OUTPUT_FILE, help="Write the selected plan (JSON rows) here.")
@click.option("--format", "fmt", type=click.Choice(["json", "github"]), default="json", show_default=True)
@click.option("--shard-dir", type=click.Path(path_type=Path), help="github: folder for shard-<k>.json (default $RUNNER_TEMP/infx-shards).")
def select_points(plan_path: Path, points_text: str, plan_output: Path | None, fmt: str, shard_dir: Path | None) -> None:
    """The rows of a plan whose point ids are listed: what a rerun sweeps."""
    from ..diagnostics import InfxError, error
    from ..fsio import atomic_write
    from ..workflows.actions import write_sharded_outputs, write_step_summary
    from ..jsonfast import dumps
    from ..workflows.report import read_plan
    from ..workflows.rerun import select_rows
    from ..points import point_id

    wanted = {part for part in points_text.replace(",", " ").split() if part}
    if not wanted:
        raise UsageError("--points lists no point id", "Pass the ids printed by `infx github rerun-failed`.")
    buckets = read_plan(plan_path)
    known = {point_id(row) for rows in buckets.values() for row in rows}
    unknown = sorted(wanted - known)
    if unknown:
        raise InfxError(error(str(plan_path), None, "unknown-point",
                              f"{len(unknown)} point id(s) are not in this plan: {' '.join(unknown[:10])}",
                              "Rerun against the plan of the run the ids came from."))
    selected = select_rows(buckets, wanted)
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
        raise UsageError("--format github needs $GITHUB_OUTPUT and --shard-dir or $RUNNER_TEMP", "Run it inside GitHub Actions.")
    shards = write_sharded_outputs(selected, outputs_path, shard_dir or Path(runner_temp) / "infx-shards")
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        write_step_summary(os.environ["GITHUB_STEP_SUMMARY"], selected, title="infx rerun", shards=shards)
    click.echo(f"infx github select-points: {len(rows)} points in {len(shards)} shards", err=True)


@github.command("point-id")
@click.option("--point", "point_path", type=click.Path(path_type=Path), help="Point JSON file (default: $POINT_JSON).")
@click.option("--format", "fmt", type=click.Choice(["text", "github"]), default="text", show_default=True)
def point_id_command(point_path: Path | None, fmt: str) -> None:
    """Print a point's id; with --format github also write it as the output `id`."""
    from ..workflows.actions import write_outputs
    from ..points import point_id, read_point

    row, _, _ = read_point(str(point_path) if point_path else None)
    pid = point_id(row)
    click.echo(pid)
    if fmt == "github":
        if not os.environ.get("GITHUB_OUTPUT"):
            raise UsageError("--format github needs $GITHUB_OUTPUT", "Run it inside GitHub Actions.")
        write_outputs(os.environ["GITHUB_OUTPUT"], {"id": pid})
    sys.stdout.flush()
