"""`infx plan` as one library call: a SweepRequest in, the sweep plan out.

The plan comes from a changelog change (base..head), the working tree's newest entry, or given
rows; then the run mode (the label table), agentx-fast, reuse of stored results, the canary and
the queue check apply, in that order. ``write_github_outputs`` writes the plan as the workflows
take it: the shards, the mode outputs, plan.json and the step summary; ``plan_table`` writes it as
`infx plan --format table` prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import git
from ..changelog import changelog_path
from ..changelog.gate import GateRequest, validate_changelog
from ..changelog.plan import PlanOptions, agentx_fast, apply_mode
from ..changelog.policy import resolve_slug
from ..changelog.worktree import plan_newest_entry
from ..diagnostics import Diagnostic, Report, warning
from ..fsio import append, atomic_write
from ..jsonfast import dumps
from ..launch import lanecheck
from ..points import gpu_hours, point_id
from ..reporoot import repository_root
from ..runmode import Mode
from ..sweepplan import LANE_EXCLUDED, LANE_MISSING, SweepPlan
from ..workers import row_topology
from . import actions, queue, reuse
from .github.client import Connection
from .labels import describe, resolve_mode
from .report import reuse_markdown


@dataclass(frozen=True, kw_only=True)
class SweepRequest:
    """What `infx plan` is asked. With ``rows``: plan those rows; with both refs: the entries the
    change base..head appends (``pr_number``: a PR run); with neither: the working tree's newest entry."""

    event: str
    base_ref: str | None = None
    head_ref: str | None = None
    pr_number: int | None = None
    repo_slug: str | None = None  # whose PR links are canonical, and whose artifacts reuse reads
    changelog: str | None = None
    allow_removal: bool = False
    options: PlanOptions = PlanOptions()  # the modifiers given as options; the labels' are added
    labels: tuple[str, ...] = ()
    rows: Path | None = None
    reuse_github: bool = False
    reuse_dir: Path | None = None
    no_reuse: bool = False
    hosted: bool = False  # every launch on a GitHub-hosted runner: no self-hosted queue to check
    lane: str | None = None  # with ``rows``: every point runs on this lane (run-sweep's `lane` input)
    root: Path = field(default_factory=repository_root)  # the repository (infx.reporoot), resolved once by the command
    github: Connection = field(default_factory=Connection)  # reuse's lookups: the command's one GitHub connection


@dataclass(frozen=True, kw_only=True)
class Said:
    """Something to tell the user while planning, in order: diagnostics (``ok``: the report's
    verdict; ``verdict``: the plan's own report, said first, with the verdict) or a line for stderr."""

    diagnostics: tuple[Diagnostic, ...] = ()
    ok: bool = True
    line: str = ""
    verdict: bool = False


@dataclass(frozen=True, kw_only=True)
class PlannedSweep:
    """The plan (None when it could not be built), the planning's report, and the label table's
    problems (when there are any, nothing was planned)."""

    plan: SweepPlan | None
    report: Report
    mode_problems: tuple[Diagnostic, ...] = ()


def plan_request(request: SweepRequest, say: Callable[[Said], None]) -> PlannedSweep:
    """The sweep plan the request asks for; ``say`` hears the plan's diagnostics and then what
    reuse and the queue check found, as they happen."""
    mode, problems = run_mode(request)
    if problems:
        return PlannedSweep(plan=None, report=Report(problems), mode_problems=tuple(problems))
    options = PlanOptions(
        evals=request.options.evals | mode.evals, trim_conc=request.options.trim_conc or mode.trim_conc
    )
    plan, report = _planned(request, options)
    say(Said(diagnostics=tuple(report.sorted()), ok=report.ok, verdict=True))
    if not report.ok or plan is None:
        return PlannedSweep(plan=None, report=report)
    if mode.agentx_fast:  # before reuse: a fast point has its own result key
        plan = agentx_fast(plan)
    if mode.dispatch and mode.reuse and (request.reuse_github or request.reuse_dir is not None):
        plan = _reused(plan, request, say)
    plan = apply_mode(plan, mode)  # the canary is chosen among the points still to run
    if mode.dispatch and not request.hosted:
        plan = _queued(plan, request.root, say)
    return PlannedSweep(plan=plan, report=report)


def run_mode(request: SweepRequest) -> tuple[Mode, list[Diagnostic]]:
    """The run mode from the label table; the head commit's message is read for `[skip-sweep]`."""
    message = ""
    if request.event == "pull_request" and request.head_ref is not None:
        repo = git.toplevel(request.root)
        message = git.commit_message(repo, git.resolve(repo, request.head_ref))
    mode, problems = resolve_mode(request.event, list(request.labels), message)
    if request.no_reuse and not problems:
        mode = replace(mode, reuse=False, why=mode.why + ("option --no-reuse",))
    return mode, problems


def _planned(request: SweepRequest, options: PlanOptions) -> tuple[SweepPlan | None, Report]:
    if request.rows is not None:  # a changelog plan has its lane check from plan_sweep
        plan, found = lanecheck.check_lanes(SweepPlan(SweepPlan.read(request.rows).buckets), request.root, request.lane)
        return plan, Report(found)
    if request.base_ref is None:
        root = request.root
        return plan_newest_entry(root, changelog_path(root, request.changelog), options)
    assert request.head_ref is not None  # the request has both refs or neither
    gate = GateRequest(
        base_ref=request.base_ref,
        head_ref=request.head_ref,
        pr_number=request.pr_number,
        repo_slug=request.repo_slug,
        changelog=request.changelog,
        allow_removal=request.allow_removal,
        plan_options=options,
    )
    result = validate_changelog(gate, request.root)
    return result.plan, result.report


def _reused(plan: SweepPlan, request: SweepRequest, say: Callable[[Said], None]) -> SweepPlan:
    """The plan without the points whose result key already has a valid stored result. A lookup
    that could not judge every point says why, as a warning (an annotation in GitHub), and in the plan."""
    root = request.root
    source: reuse.FolderSource | reuse.GitHubSource
    if request.reuse_dir is not None:
        source = reuse.FolderSource(request.reuse_dir)
    else:
        slug, _ = resolve_slug(request.repo_slug, root)
        source = reuse.GitHubSource(
            slug, request.pr_number if request.event == "pull_request" else None, github=request.github
        )
    held = plan.lane_held  # no lane to launch them on: not worth a lookup
    decision = reuse.decide([row for row in plan.rows if point_id(row) not in held], root, source, lookup_may_fail=True)
    if decision.notice:
        say(
            Said(
                diagnostics=(
                    warning(
                        "<github>",
                        None,
                        "plan-reuse-unavailable",
                        decision.notice,
                        "The setup job's token needs `actions: read` (stored results) and `pull-requests: read` "
                        "(whose commits they are); a wait past INFX_GITHUB_MAX_WAIT needs a later run.",
                    ),
                )
            )
        )
    say(
        Said(
            line=f"infx plan: {len(decision.reused)} point(s) reused, {len(decision.dispatch)} to run, "
            f"{decision.gpu_hours_saved:,.1f} GPU-hours saved"
        )
    )
    return reuse.reduced_plan(plan, decision)


def _queued(plan: SweepPlan, root: Path, say: Callable[[Said], None]) -> SweepPlan:
    """The plan with its queue check (infx/workflows/queue.py): per lane, the points that start within
    GitHub's 24-hour queue limit, the rest held back, each such lane a located warning."""
    buckets, canary = plan.fan_out()
    queues = queue.repository_queues(canary + [row for rows in buckets.values() for row in rows], root)
    found = queue.warnings(queues, root)
    if found:
        say(Said(diagnostics=tuple(found)))
    return replace(plan, queue=queue.queue_check(queues))


def write_github_outputs(plan: SweepPlan, output: str, shard_dir: Path, summary: str | None) -> int:
    """Shards exactly as `infx matrix --format github` writes them, the mode outputs, plan.json in
    ``shard_dir`` and (with ``summary``) the step summary; the number of shards."""
    assert plan.mode is not None  # a planned sweep has its run mode
    mode = plan.mode
    buckets, canary = plan.fan_out()
    republish, left_out = actions.republish_shards(plan.reused)
    # The labels the lane gate checks: those of the points that are dispatched (a held label has no lane).
    lanes = sorted(
        {row["runner"] for row in canary + [r for rows in buckets.values() for r in rows] if row.get("runner")}
    )
    # The mode outputs count against the job's output budget together with the shards.
    shards = actions.write_sharded_outputs(
        buckets,
        output,
        shard_dir,
        other_outputs={
            "dispatch": str(mode.dispatch).lower(),
            "fail-fast": str(mode.fail_fast).lower(),
            "primary-label": mode.primary_label or "",
            "canary": dumps(canary),
            "lanes": dumps(lanes if mode.dispatch else []),
            "reused": str(len(plan.reused)),
            "republish": dumps(republish),
        },
    )
    atomic_write(Path(shard_dir) / "plan.json", plan.text())
    if summary:
        actions.write_step_summary(summary, plan.buckets, title="infx plan", shards=shards)
        canary_line = f" Canary point: `{plan.canary.id}` ({plan.canary.bucket})." if plan.canary else ""
        reuse_text = reuse_markdown(plan.reuse) + "\n".join(queue.markdown(plan.queue) + lanecheck.markdown(plan.lanes))
        if left_out:
            reuse_text += (
                f"\n{left_out} reused points are not republished under their keys (the job outputs' limit); "
                "later sweeps still find them in the runs they came from.\n"
            )
        append(summary, f"\n{describe(mode)}{canary_line}\n" + ("\n" + reuse_text if reuse_text else ""))
    return len(shards)


def _cell(row: dict, name: str) -> str:
    value = row.get(name)
    if name == "topology":
        return row_topology(row)
    if name == "seq":
        return f"{row['isl']}/{row['osl']}" if "isl" in row else "agentic"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(map(str, value))
    return "" if value is None else str(value)


COLUMNS = ("config-key", "runner", "lane", "seq", "topology", "node-count", "conc", "gpu-hours", "run-eval", "exp-name")
# A held point's lane cell says why it is not dispatched: LabelLane.status (the lane check) -> words.
HELD_LANE = {LANE_MISSING: "none (held)", LANE_EXCLUDED: "{lane} (held: sweep.lanes)"}


def _lane_cell(plan: SweepPlan, row: dict) -> str:
    found = plan.lane_of(row)
    if found is None:
        return "?"  # a plan without a lane check (e.g. read from an older infx's plan.json)
    if found.held:
        return HELD_LANE[found.status].format(lane=found.lane)
    return f"{found.lane} (held: queue)" if point_id(row) in plan.held else str(found.lane)


def _plain(markdown: str) -> str:
    """describe()'s Markdown sentence as terminal text (no emphasis, no code marks)."""
    return markdown.replace("**", "").replace("`", "")


def plan_table(plan: SweepPlan) -> str:
    """The plan as text: its entries, the run mode, then per bucket a table of its points, each with
    its lane and GPU-hours (infx.points.gpu_hours, the estimate the PR comment adds up)."""
    lines = []
    for entry in plan.changelog_metadata.entries if plan.changelog_metadata else ():
        lines.append(f"entry {entry.position}: {', '.join(entry.config_keys)}  ({entry.pr_link})")
        lines.append(f"  resolved keys: {', '.join(entry.resolved_keys) or '(none)'}")
    total = sum(gpu_hours(row) for row in plan.rows)
    lines.append(
        f"{plan.point_count} point(s) in {len(plan.buckets)} bucket(s), about {total:,.1f} GPU-hours (estimate)"
    )
    if plan.mode is not None:
        lines.append(f"run mode: {_plain(describe(plan.mode))}")
    if plan.canary is not None:
        lines.append(f"canary: {plan.canary.id} ({plan.canary.bucket}), alone first")
    held = [item for item in plan.lanes.labels if item.held] if plan.lanes else []
    if held:
        counts = ", ".join(f"{item.label} {item.points}" for item in held)
        lines.append(f"held, no lane to launch on: {sum(item.points for item in held)} point(s) ({counts})")
    queued_out = len(plan.queue.held) if plan.queue else 0
    if queued_out:
        lines.append(f"held by the queue check: {queued_out} point(s) (run them with `infx github rerun-failed`)")
    for bucket, rows in plan.buckets.items():
        lines.append("")
        lines.append(f"{bucket}: {len(rows)} point(s), {sum(map(gpu_hours, rows)):,.1f} GPU-hours")
        cells = {"lane": lambda row: _lane_cell(plan, row), "gpu-hours": lambda row: f"{gpu_hours(row):,.1f}"}
        table = [COLUMNS] + [tuple(cells[c](row) if c in cells else _cell(row, c) for c in COLUMNS) for row in rows]
        widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
        lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in table]
    return "\n".join(lines)
