"""The Accuracy section of a comparison: each eval row of the sweep with its score and standard
error, its floor and status as the gate judges them (infx/results/evalgate.py `judge_row`), and
the change against the baseline's eval row of the same identity (`EvalRow.identity`: config key,
model, hardware, engine, precision, sequence lengths, topology, concurrency and task), the
baseline being the one the throughput comparison finds (the newest successful sweep on main with
eval rows of the config key). Failures come first: eval folders that gave no score (their
problems say why), then scores below their floor, then rows the gate cannot judge, then the
rest, most dropped first.

It is a plain JSON object in compare's output (`accuracy`), rendered by the sticky comment and the
step summary (infx/workflows/report.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from .evalgate import BELOW, NO_FLOOR, NO_METRIC, OK, Thresholds, floors_source, judge_row
from .evals.rows import EvalCollection, EvalRow
from .rowlabels import topology

MISSING = "missing"  # an eval folder that gave no score
ORDER = {BELOW: 0, NO_FLOOR: 1, NO_METRIC: 2, OK: 3}


def _newest(rows: Iterable[EvalRow]) -> dict[tuple, EvalRow]:
    """The newest row of each identity (its run, attempt and source), among the baseline's."""
    found: dict[tuple, EvalRow] = {}
    for row in rows:
        key = row.identity()
        order = (row.run_id or 0, row.run_attempt or 0, row.source)
        if key not in found or order > (found[key].run_id or 0, found[key].run_attempt or 0, found[key].source):
            found[key] = row
    return found


def _entry(row: EvalRow, thresholds: Thresholds | None, base: EvalRow | None) -> dict:
    status, floor, _ = judge_row(row, thresholds)
    change = row.score - base.score if base is not None and row.score is not None and base.score is not None else None
    return {
        "status": status,
        "config-key": row.config_key,
        "point-id": row.point_id,
        "model-prefix": row.model_prefix,
        "topology": topology(row.to_json()),
        "conc": row.conc,
        "task": row.task,
        "score": row.score,
        "score-name": row.score_name,
        "score-se": row.score_se,
        "em-strict": row.em_strict,
        "em-flexible": row.em_flexible,
        "floor": floor.value if floor else None,
        "floor-source": floor.source if floor else None,
        "baseline": base.score if base is not None else None,
        "change": change,
    }


def _margin(entry: dict) -> float:
    """How far below its floor a row's lower exact-match score is (for ordering the failures)."""
    scores = [v for v in (entry["em-strict"], entry["em-flexible"]) if v is not None]
    return min(scores) - entry["floor"] if scores and entry["floor"] is not None else 0.0


def accuracy_section(head: EvalCollection, baseline: Iterable[EvalRow], thresholds: Thresholds | None) -> dict | None:
    """The section, or None when the sweep has no eval folder at all."""
    if not head.sets:
        return None
    base = _newest(baseline)
    rows = [_entry(row, thresholds, base.get(row.identity())) for row in head.rows]
    rows.sort(
        key=lambda e: (
            ORDER[e["status"]],
            _margin(e) if e["status"] == BELOW else 0.0,
            e["change"] if e["change"] is not None else 0.0,
            str(e["config-key"]),
            e["conc"],
            e["task"],
        )
    )
    unscored = [
        {
            "status": MISSING,
            "config-key": found.config_key,
            "point-id": found.point_id,
            "folder": found.folder,
            "rules": sorted({p.rule for p in found.problems}),
            "why": "; ".join(f"{p.rule}: {p.message}" for p in found.problems),
        }
        for found in head.sets
        if found.problems
    ]
    counts = {MISSING: len(unscored), **{status: sum(1 for e in rows if e["status"] == status) for status in ORDER}}
    return {
        "counts": counts,
        "unscored": unscored,
        "rows": rows,
        "floors": floors_source(thresholds.file) if thresholds is not None else None,
    }
