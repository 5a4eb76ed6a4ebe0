"""`infx plan`: the sweep a changelog change asks for (or, with no refs, its newest entry)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..diagnostics import render
from ..workflows.labels import EVENTS
from .common import OUTPUT_FILE, finish
from .options import changelog_option, format_option, pr_number_option, repo_option, run_modifier_options


@click.command()
@click.option("--base-ref", help="The base branch or commit (PR runs use its merge-base with the head).")
@click.option("--head-ref", help="The head commit.")
@pr_number_option("The PR's number: a PR run.")
@repo_option(" whose PR links are canonical")
@changelog_option
@click.option("--allow-removal", is_flag=True, help="Accept removed historical entries (a revert).")
@run_modifier_options
@click.option("--label", "labels", multiple=True, metavar="NAME",
              help="A PR label (repeatable); the label table (docs/workflows.md) turns labels into the run mode.")
@click.option("--labels-json", metavar="JSON",
              help="PR labels as a JSON list of names (what toJSON(github.event.pull_request.labels.*.name) gives).")
@click.option("--event", type=click.Choice(EVENTS), help="The triggering event (default: pull_request with --pr-number or no refs, else push).")
@click.option("--rows", "rows_path", type=click.Path(path_type=Path),
              help="Plan these rows (JSON from `infx matrix` or an earlier plan) instead of a changelog change.")
@click.option("--reuse-github", is_flag=True,
              help="Leave out points whose result key has a valid result among the repository's artifacts (trusted runs only).")
@click.option("--reuse-artifacts", "reuse_dir", type=click.Path(path_type=Path, file_okay=False),
              help="The same, over a folder of downloaded point artifacts.")
@click.option("--no-reuse", is_flag=True, help="Run every planned point (the no-reuse label, or a dispatch input).")
@click.option("--dry-run", "hosted", is_flag=True,
              help="Every launch is planned on a GitHub-hosted runner (run-sweep's dry run): no self-hosted queue to check.")
@format_option(("table", "json", "github"), default=None, help="Output format (default: json with refs, table without).")
@click.option("--output", type=OUTPUT_FILE, help="Write the JSON plan to this file as well.")
@click.option("--shard-dir", type=click.Path(path_type=Path), help="--format github: folder for shard files.")
def plan(base_ref, head_ref, pr_number, repo_slug, changelog_file, allow_removal, evals_only, all_evals, trim_conc,
         labels, labels_json, event, rows_path, reuse_github, reuse_dir, no_reuse, hosted, fmt, output, shard_dir) -> None:
    """Plan the sweep of the entries appended between --base-ref and --head-ref.

    With no refs: plan the newest entry of the working tree's changelog against the
    working tree's configs and print it as a table.
    """
    from ..changelog.gate import changelog_path
    from ..changelog.plan import PlanOptions, apply_mode
    from ..diagnostics import Report, UsageError
    from ..evalsuite import EvalMode
    from ..git import toplevel

    if (base_ref is None) != (head_ref is None):
        raise UsageError("give both --base-ref and --head-ref, or neither (to plan the newest entry of the working tree)")
    if rows_path is not None and base_ref is not None:
        raise UsageError("--rows plans given rows; it takes no --base-ref/--head-ref")
    event = event or ("push" if base_ref is not None and pr_number is None else
                      "workflow_dispatch" if rows_path is not None else "pull_request")
    if reuse_github and reuse_dir is not None:
        raise UsageError("give at most one of --reuse-github and --reuse-artifacts")
    mode, problems = _mode(event, labels, labels_json, head_ref)
    if problems:
        finish(Report(problems), "text" if fmt in (None, "table") else fmt)  # exits
    if no_reuse:
        from dataclasses import replace

        mode = replace(mode, reuse=False, why=mode.why + ("option --no-reuse",))
    options = PlanOptions(evals=EvalMode.of(evals_only=evals_only, all_evals=all_evals) | mode.evals,
                          trim_conc=trim_conc or mode.trim_conc)
    result_plan: dict | None
    if rows_path is not None:
        from ..workflows.report import read_plan

        buckets = read_plan(rows_path)
        result_plan, report = {"buckets": buckets, "point-count": sum(map(len, buckets.values()))}, Report()
        fmt = fmt or "json"
    elif base_ref is None:
        from ..changelog.worktree import plan_newest_entry

        root = _root(Path.cwd())
        name = changelog_path(root, changelog_file)
        result_plan, report = plan_newest_entry(root, name, options)
        fmt = fmt or "table"
    else:
        from ..changelog.gate import run_gate
        from ..changelog.policy import resolve_slug

        repo = toplevel(Path.cwd())
        slug, _ = resolve_slug(repo_slug, repo)
        result = run_gate(repo, base_ref, head_ref, slug=slug, pr_number=pr_number, changelog=changelog_path(repo, changelog_file),
                          allow_removal=allow_removal, plan_options=options)
        result_plan, report = result.plan, result.report
        fmt = fmt or "json"
    if report.diagnostics:
        text = render(report.sorted(), "github" if fmt == "github" else "text", report.ok)
        click.echo(text, err=fmt != "github")
    if not report.ok or result_plan is None:
        sys.exit(report.exit_code or 1)
    if mode.agentx_fast:  # before reuse: a fast point has its own result key
        from ..changelog.plan import agentx_fast

        result_plan = agentx_fast(result_plan)
    if mode.dispatch and mode.reuse and (reuse_github or reuse_dir is not None):
        result_plan = _reuse(result_plan, reuse_dir, repo_slug, pr_number if event == "pull_request" else None, fmt)
    result_plan = apply_mode(result_plan, mode)  # the canary is chosen among the points still to run
    if mode.dispatch and not hosted:
        result_plan = _queue(result_plan, fmt)
    if output:
        from ..fsio import atomic_write

        if not output.parent.is_dir():
            raise UsageError(f"--output {output}: the folder {output.parent} does not exist")
        atomic_write(output, json.dumps(result_plan, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    if fmt == "json":
        click.echo(json.dumps(result_plan, ensure_ascii=False, allow_nan=False))
    elif fmt == "table":
        from ..changelog.worktree import plan_table

        click.echo(plan_table(result_plan))
    else:
        _github(result_plan, shard_dir)
    sys.exit(0)


def _mode(event: str, labels: tuple[str, ...], labels_json: str | None, head_ref: str | None):
    """The run mode from the label table; the head commit's message is read for `[skip-sweep]`."""
    from ..git import commit_message, resolve, toplevel
    from ..workflows.labels import resolve_mode

    names = list(labels)
    if labels_json:
        from .common import json_string_list

        names += json_string_list(labels_json, "--labels-json", '["sweep-enabled", "evals-only"]')
    message = ""
    if event == "pull_request" and head_ref is not None:
        repo = toplevel(Path.cwd())
        message = commit_message(repo, resolve(repo, head_ref))
    return resolve_mode(event, names, message)


def _reuse(plan: dict, folder: Path | None, repo_slug: str | None, pr_number: int | None, fmt: str) -> dict:
    """The plan without the points whose result key already has a valid stored result. A lookup
    that could not judge every point says why, as a warning (an annotation in GitHub), and in the plan."""
    from ..workflows import reuse

    root = _root(Path.cwd())
    source: reuse.FolderSource | reuse.GitHubSource
    if folder is not None:
        source = reuse.FolderSource(folder)
    else:
        from ..changelog.policy import resolve_slug

        slug, _ = resolve_slug(repo_slug, root)
        source = reuse.GitHubSource(slug, pr_number)
    rows = [row for bucket_rows in plan["buckets"].values() for row in bucket_rows]
    decision = reuse.decide(rows, root, source, lookup_may_fail=True)
    if decision.notice:
        from ..diagnostics import warning

        notice = warning("<github>", None, "plan-reuse-unavailable", decision.notice,
                         "The setup job's token needs `actions: read` (stored results) and `pull-requests: read` (whose commits "
                         "they are); a wait past INFX_GITHUB_MAX_WAIT needs a later run.")
        click.echo(render([notice], "github" if fmt == "github" else "text", True), err=fmt != "github")
    click.echo(f"infx plan: {len(decision.reused)} point(s) reused, {len(decision.dispatch)} to run, "
               f"{decision.gpu_hours_saved:,.1f} GPU-hours saved", err=True)
    return reuse.reduced_plan(plan, decision)


def _queue(plan: dict, fmt: str) -> dict:
    """The plan with its queue check (infx/workflows/queue.py): per lane, the points that start within
    GitHub's 24-hour queue limit, the rest held back, each such lane a located warning."""
    from ..changelog.plan import fan_out_buckets
    from ..workflows import queue

    root = _root(Path.cwd())
    buckets, canary = fan_out_buckets(plan)
    queues = queue.repository_queues(canary + [row for rows in buckets.values() for row in rows], root)
    found = queue.warnings(queues, root)
    if found:
        click.echo(render(found, "github" if fmt == "github" else "text", True), err=fmt != "github")
    return {**plan, "queue": {"limit-hours": queue.QUEUE_LIMIT_HOURS, "lanes": [lane.to_json() for lane in queues],
                              "held": queue.held_points(queues)}}


def _root(cwd: Path) -> Path:
    from ..git import GitError, toplevel

    try:
        return toplevel(cwd)
    except GitError:
        return cwd


def _github(plan: dict, shard_dir: Path | None) -> None:
    """Shards exactly as `infx matrix --format github` writes them, plus the plan itself."""
    import os

    from ..diagnostics import UsageError
    from ..fsio import atomic_write
    from ..workflows import actions

    output = os.environ.get("GITHUB_OUTPUT")
    if not output:
        raise UsageError("--format github needs $GITHUB_OUTPUT (it runs inside GitHub Actions)",
                         "Use --format json outside Actions.")
    if shard_dir is None:
        shard_dir = actions.runner_temp(actions.SHARD_DIR)
    from ..changelog.plan import fan_out_buckets
    from ..jsonfast import dumps
    from ..workflows.labels import Mode, describe

    buckets, canary = fan_out_buckets(plan)
    republish, left_out = actions.republish_shards((plan.get("reuse") or {}).get("reused", []))
    republish_text = dumps(republish)
    mode = plan["mode"]
    lanes = sorted({row["runner"] for rows in plan["buckets"].values() for row in rows if row.get("runner")})
    # The mode outputs count against the job's output budget together with the shards.
    shards = actions.write_sharded_outputs(buckets, output, shard_dir, other_outputs={
        "dispatch": str(mode["dispatch"]).lower(), "fail-fast": str(mode["fail-fast"]).lower(),
        "primary-label": mode["primary-label"] or "", "canary": dumps(canary),
        "lanes": dumps(lanes if mode["dispatch"] else []),
        "reused": str(len((plan.get("reuse") or {}).get("reused", []))),
        "republish": republish_text,
    })
    atomic_write(Path(shard_dir) / "plan.json", json.dumps(plan, ensure_ascii=False, allow_nan=False))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        from ..fsio import append
        from ..workflows.report import reuse_markdown

        actions.write_step_summary(summary, plan["buckets"], title="infx plan", shards=shards)
        canary_line = f" Canary point: `{plan['canary']['id']}` ({plan['canary']['bucket']})." if plan.get("canary") else ""
        from ..workflows.queue import markdown as queue_markdown

        reuse_text = reuse_markdown(plan.get("reuse")) + "\n".join(queue_markdown(plan.get("queue")))
        if left_out:
            reuse_text += (f"\n{left_out} reused points are not republished under their keys (the job outputs' limit); "
                           "later sweeps still find them in the runs they came from.\n")
        append(summary, f"\n{describe(Mode.from_json(mode))}{canary_line}\n" + ("\n" + reuse_text if reuse_text else ""))
    click.echo(f"{plan['point-count']} point(s) in {len(shards)} shard(s); plan written to {Path(shard_dir) / 'plan.json'}", err=True)

