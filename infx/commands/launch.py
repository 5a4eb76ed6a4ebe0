"""``infx launch``: one point on one lane (``--dry-run`` prints the plan and touches nothing)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
import yaml

from ..diagnostics import InfxError, render_text
from ..launch.plan import LaunchRequest, plan_launch
from ..reporoot import repository_root
from .common import fail_json
from .options import format_option

ORIGINS = {"workspace": "from this repository", "srt-slurm": "ships with the pinned srt-slurm checkout"}


def _time_limit(plan: dict) -> str:
    """The limit the job gets: the recipe's own slurm.time_limit wins over the lane's default."""
    recipe_limit = ((plan["recipe"] or {}).get("slurm") or {}).get("time_limit")
    return f"{recipe_limit} (recipe)" if recipe_limit else f"{plan['time-limit']} (lane default)"


def _plan_text(plan: dict) -> str:
    src = plan["recipe-source"]
    lines = [
        f"lane        {plan['lane']}   point {plan['point-id']}",
        f"route       {plan['route']}",
        f"srt-slurm   {plan['srt-slurm']['repository']} @ {plan['srt-slurm']['commit'] or 'UNRESOLVED'} "
        f"({plan['srt-slurm']['ref']})",
        "overlays    " + (", ".join(f"{o['from']} -> {o['to']}" for o in plan["overlays"]) or "none"),
        "sources     " + (", ".join(f"{s['name']} {s['url']} @ {s['commit']}" for s in plan["sources"]) or "none"),
        f"recipe      {src['config-file']} ({ORIGINS[src['origin']]}; checked {src['checked']})",
        f"model       {plan['model']['alias']} -> {plan['model']['path']}",
        f"job         {plan['job-name']}  partition {plan['partition']}  time {_time_limit(plan)}  nodes "
        f"{plan['node-count']}",
        f"power       {'yes' if plan['power'] else 'no'}",
        f"eval        {_eval_text(plan['eval'])}",
        f"agentic     {_agentic_text(plan['agentic'])}",
        "environment " + " ".join(f"{name}={value}" for name, value in plan["environment"].items()),
    ]
    for step in plan["prepare"]:
        lines.append(
            f"prepare     {' '.join(step['argv'])}"
            + ("   (only when the check above fails)" if step["skip-if-ok"] else "")
        )
    lines.append("argv        " + " ".join(plan["argv"]))
    lines.append("srtctl      " + _srtctl_text(plan.get("srtctl-dry-run")))
    for item in plan["warnings"]:
        lines.append(f"warning     {item['message']}")
    if plan["recipe"] is not None:
        lines.append(f"resolved recipe ({plan['resolved-recipe']}):")
        lines.append(yaml.safe_dump(plan["recipe"], sort_keys=False).rstrip())
    return "\n".join(lines)


def _eval_text(evaluation: dict | None) -> str:
    if not evaluation:
        return "no"
    protocol = evaluation["protocol"]
    tasks = ", ".join(
        f"{task['task']} ({task['num-fewshot']}-shot, max {task['max-gen-tokens']} tokens)"
        for task in protocol["tasks"]
    )
    mode = "only (no benchmark stage)" if evaluation["kind"] == "only" else "after the benchmark"
    return (
        f"{mode} at concurrency {' '.join(map(str, evaluation['concs']))}: {tasks}; lm-eval {protocol['lm-eval']}, "
        f"chat template {'applied' if protocol['chat-template'] else 'not applied'} ({evaluation['suite']})"
    )


def _agentic_text(agentic: dict | None) -> str:
    if not agentic:
        return "no"
    given = " ".join(f"{name}={value}" for name, value in agentic["benchmark-env"].items())
    harness = ", ".join(agentic["harness"]) if agentic["harness"] is not None else "read after srt-slurm checkout"
    return f"benchmark.env {given}; harness {harness or 'none named'} in the repository checkout"


def _srtctl_text(check: dict | None) -> str:
    if not check or not check["checked"]:
        return f"dry-run not run: {check['reason'] if check else 'no srt-slurm cache'}"
    script = check["script-path"] or "(not found in its output; see the log)"
    return f"dry-run accepted the resolved recipe ({check['srtctl']}); sbatch script: {script}; output: {check['log']}"


@click.command("launch")
@click.option(
    "--lane",
    "lane_name",
    help="Override the lane: a lane name (runners/<lane>.yaml), a runner label a profile "
    "declares, or a profile path; default: the lane whose runner-labels declare the point's `runner`.",
)
@click.option(
    "--point", "point_file", type=click.Path(dir_okay=False), help="One matrix row as JSON; default: $POINT_JSON."
)
@click.option("--dry-run", is_flag=True, help="Print the launch plan; clone, install and submit nothing.")
@format_option(("text", "json"))
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False),
    help="Where results, logs and the launch record go (default: $GITHUB_WORKSPACE or .); a dry run that runs "
    "srtctl keeps its sbatch script in .infx-launch/<point id>-dry-run/ under $RUNNER_TEMP, else this dir, "
    "else $INFX_CACHE_DIR/dry-runs.",
)
def launch(lane_name: str | None, point_file: str | None, dry_run: bool, fmt: str, output_dir: str | None) -> None:
    """Launch one sweep point on a runner lane."""
    request = LaunchRequest(
        point_file=point_file, lane=lane_name, root=repository_root(), env=dict(os.environ), dry_run=dry_run
    )
    try:
        plan = plan_launch(request)
        if dry_run:
            from ..launch.dryrun import enrich  # measured: a launch does not pay for the dry run's srtctl check

            body = enrich(plan, request.root, dict(request.env), Path(output_dir).resolve() if output_dir else None)
    except InfxError as exc:  # planning and the dry run's cache checks report alike
        if fmt == "json":
            click.echo(fail_json(exc.diagnostics))
            sys.exit(exc.exit_code)
        raise
    if dry_run:
        click.echo(json.dumps(body, indent=2, default=str, allow_nan=False) if fmt == "json" else _plan_text(body))
        return
    from ..launch.run import launch_point  # measured: a dry run does not pay for the launcher
    from ..results.artifact import judge  # measured: nor for the validity rule that judges the output

    out = Path(output_dir).resolve() if output_dir else repository_root()
    for item in plan.warnings:
        click.echo(render_text([item]), err=True)
    sys.exit(launch_point(plan, out, request.root, judge=judge))
