"""`infx plan` with no refs: the newest entry of the working tree, as a readable table."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import load_config_set
from ..diagnostics import Diagnostic, Report, Severity, UsageError, error
from ..fsio import read_bytes
from ..sweepplan import ChangelogMetadata, SweepPlan
from ..workers import row_topology
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
    config_set, config_report = load_config_set(root=root)
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


COLUMNS = ("config-key", "runner", "seq", "topology", "node-count", "conc", "run-eval", "exp-name")


def plan_table(plan: SweepPlan) -> str:
    lines = []
    for entry in plan.changelog_metadata.entries if plan.changelog_metadata else ():
        lines.append(f"entry {entry.position}: {', '.join(entry.config_keys)}  ({entry.pr_link})")
        lines.append(f"  resolved keys: {', '.join(entry.resolved_keys) or '(none)'}")
    lines.append(f"{plan.point_count} point(s) in {len(plan.buckets)} bucket(s)")
    for bucket, rows in plan.buckets.items():
        lines.append("")
        lines.append(f"{bucket}: {len(rows)} point(s)")
        table = [COLUMNS] + [tuple(_cell(row, c) for c in COLUMNS) for row in rows]
        widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
        lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in table]
    return "\n".join(lines)
