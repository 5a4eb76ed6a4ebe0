"""`infx plan` with no refs: the newest entry of the working tree, as a readable table."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import load_config_set
from ..diagnostics import Diagnostic, Report, Severity, UsageError, error
from ..fsio import read_bytes
from ..points import gpu_hours, point_id
from ..sweepplan import LANE_EXCLUDED, LANE_MISSING, ChangelogMetadata, SweepPlan
from ..workers import row_topology
from ..workflows.labels import describe
from ..yamlio import parse_yaml
from .entry import parse_entry
from .keys import resolve
from .plan import PlanOptions, plan_sweep


def plan_newest_entry(root: Path, name: str, options: PlanOptions) -> tuple[SweepPlan | None, Report]:
    report = Report()
    path = root / name
    if not path.is_file():
        raise UsageError(
            f"{name} does not exist in {root}", "Run infx plan from the repository root or pass --changelog."
        )
    doc, problems = parse_yaml(read_bytes(path), name)  # a regular file only; anything else raises OSError (exit 2)
    report.extend(problems)
    if doc is None:
        return None, report
    items = doc.data or []
    if not isinstance(items, list) or not items:
        report.add(error(name, (1, 1), "changelog-empty", "the changelog has no entry to plan", "Append an entry."))
        return None, report
    index = len(items) - 1
    entry, problems = parse_entry(items[index], index + 1, name, lambda p: doc.where((index, *p)))
    report.extend(problems)
    config_set, config_report = load_config_set(root=root, notices=False)  # `config validate` says them
    report.extend(config_report.diagnostics)
    if entry is None or config_set is None:
        return None, report
    keys = list(config_set.entries)
    resolution = resolve([entry], keys, keys, name, lambda e, n: e.key_positions[n])
    report.extend(_as_preview(d) for d in resolution.diagnostics)
    if not report.ok:
        return None, report
    plan, problems = plan_sweep(
        config_set,
        [entry],
        resolution,
        options,
        change=ChangelogMetadata.build(base_ref=None, head_ref="working tree"),
        file=name,
    )
    report.extend(problems)
    return plan, report


def _as_preview(diagnostic: Diagnostic) -> Diagnostic:
    """Without a base there is no telling a key this change deleted from a misspelt one, so
    the preview warns and plans the rest; `infx changelog validate` decides against the base."""
    if diagnostic.rule != "config-key-unknown":
        return diagnostic
    return replace(
        diagnostic,
        severity=Severity.WARNING,
        message=diagnostic.message + " Not planned; expected if this change deleted it.",
        hint=diagnostic.hint
        + " `infx changelog validate --base-ref … --head-ref …` checks the key against the change's base.",
    )


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
