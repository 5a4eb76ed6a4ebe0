"""`infx reuse select`: which planned points already have a valid result under their result key."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from ..diagnostics import UsageError
from ..fsio import atomic_write
from ..points import point_id
from ..reporoot import repository_root
from ..workflows.actions import SHARD_DIR, write_sharded_outputs
from ..workflows.github.client import Connection
from ..workflows.reuse import Decision, ReuseRequest, select_reuse
from .common import OUTPUT_FILE
from .options import format_option, plan_option, pr_number_option, repo_option


def _table(decision: Decision) -> str:
    lines = [
        f"reused {len(decision.reused)}, dispatch {len(decision.dispatch)}, "
        f"{decision.gpu_hours_saved:,.1f} GPU-hours saved"
    ]
    lines += [f"reuse     {item.point_id}  from run {item.source_run}  ({item.artifact})" for item in decision.reused]
    lines += [f"dispatch  {point_id(row)}  {decision.reasons.get(point_id(row), '')}" for row in decision.dispatch]
    return "\n".join(lines)


@click.group("reuse")
def reuse() -> None:
    """Reuse valid results of unchanged points instead of running them again."""


@reuse.command("select")
@plan_option()
@click.option(
    "--artifacts",
    "artifacts_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="A folder of downloaded point artifacts (point-<result key>/…).",
)
@click.option("--github", "use_github", is_flag=True, help="Look the results up among the repository's artifacts.")
@pr_number_option("--github: the pull request being swept (its commits are trusted).")
@click.option("--main-ref", default="main", show_default=True, help="--github: the branch whose history is trusted.")
@click.option(
    "--max-age", "max_age", type=click.FloatRange(min=0), help="Reuse only results at most this many days old."
)
@click.option(
    "--download",
    "download_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="--github: where the reused artifacts go (default $RUNNER_TEMP/infx-reused).",
)
@click.option(
    "--output",
    "plan_output",
    type=OUTPUT_FILE,
    help="Write the reduced plan (only the points to dispatch, buckets kept) here.",
)
@repo_option()
@format_option(("json", "table", "github"), default="json")
def select(
    plan_path: Path,
    artifacts_dir: Path | None,
    use_github: bool,
    pr_number: int | None,
    main_ref: str,
    max_age: float | None,
    download_dir: Path | None,
    plan_output: Path | None,
    repo_slug: str | None,
    fmt: str,
) -> None:
    """For every planned point: reuse a valid stored result under its key, or dispatch it."""
    if bool(artifacts_dir) == use_github:
        raise UsageError("give exactly one of --artifacts DIR and --github", "Say where stored results are looked up.")
    if artifacts_dir is not None and not artifacts_dir.is_dir():
        raise UsageError(
            f"--artifacts {artifacts_dir} is not a folder", "Pass the folder the artifacts were downloaded to."
        )
    root = repository_root()
    decision, reduced = select_reuse(
        ReuseRequest(
            plan=plan_path,
            root=root,
            artifacts=artifacts_dir,
            repo_slug=repo_slug,
            pr_number=pr_number,
            main_ref=main_ref,
            max_age_days=max_age,
            download_dir=download_dir,
            github=Connection(),
        )
    )
    if plan_output is not None:
        atomic_write(plan_output, reduced.text(indent=1, ensure_ascii=True) + "\n")
    if fmt == "table":
        click.echo(_table(decision))
    elif fmt == "json":
        click.echo(json.dumps(decision.to_json(), indent=1, allow_nan=False))
    else:
        outputs_path, temp = os.environ.get("GITHUB_OUTPUT"), os.environ.get("RUNNER_TEMP")
        if not outputs_path or not temp:
            raise UsageError("--format github needs $GITHUB_OUTPUT and $RUNNER_TEMP", "Run it inside GitHub Actions.")
        write_sharded_outputs(
            reduced.buckets,
            outputs_path,
            Path(temp) / SHARD_DIR,
            other_outputs={"reused-count": str(len(decision.reused)), "gpu-hours-saved": str(decision.gpu_hours_saved)},
        )
    click.echo(
        f"infx reuse select: {len(decision.reused)} reused, {len(decision.dispatch)} to dispatch, "
        f"{decision.gpu_hours_saved:,.1f} GPU-hours saved",
        err=True,
    )
