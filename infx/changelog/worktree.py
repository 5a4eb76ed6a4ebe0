"""`infx plan` with no refs: the plan of the newest entry of the working tree's changelog, against the
working tree's configs (files only: the working tree and infx's parse cache; no git, no network)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import load_config_set
from ..diagnostics import Diagnostic, Report, Severity, UsageError, error
from ..fsio import read_bytes
from ..sweepplan import ChangelogMetadata, SweepPlan
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
