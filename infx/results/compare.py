"""A sweep against its baseline: rows matched on config key, scenario, topology and
concurrency; per metric the head value, the signed relative change and a judgement.

Unlike the reference's report-only comparison, a change beyond the threshold in the worse
direction is a regression (`--fail-on-regression` turns it into exit 1); a zero or missing
baseline value has no change (shown as n/a). AgentX rows are compared too, on their own
metric paths (the seed's headline figures are AgentX throughput and mean TTFT).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .. import jsonfast
from ..diagnostics import InfxError
from ..fsio import atomic_write
from ..scenarios import scenario_label
from ..workflows.baseline import find_baseline
from ..workflows.github.client import Connection
from ..workflows.report import SUMMARY_BUDGET, comparison_markdown
from .accuracy import accuracy_section
from .collect import Collected, PointVerdict, collect
from .evalgate import repository_floors
from .evals.rows import EvalCollection
from .metrics import HIGHER, IMPROVED, METRICS, REGRESSED, WITHIN, Metric, metric_value
from .render import read_results, results_document
from .rowlabels import topology


def match_key(row: dict) -> tuple:
    return (row.get("config-key"), scenario_label(row), topology(row), row.get("conc"))


def key_json(key: tuple) -> dict:
    return dict(zip(("config-key", "scenario", "topology", "conc"), key))


@dataclass
class MetricChange:
    baseline: float | None
    head: float | None
    change: float | None
    judgement: str


def judge(metric: Metric, baseline: float | None, head: float | None, threshold: float) -> MetricChange:
    """Only finite numbers reach here (metric_value); a missing or zero baseline, or a change too
    large to be a number (a baseline of 1e-320), has no change: n/a, within."""
    if baseline is None or head is None or baseline == 0:
        return MetricChange(baseline, head, None, WITHIN)
    change = (head - baseline) / abs(baseline)
    if not math.isfinite(change):
        return MetricChange(baseline, head, None, WITHIN)
    gain = change if metric.better == HIGHER else -change
    verdict = IMPROVED if gain > threshold else REGRESSED if gain < -threshold else WITHIN
    return MetricChange(baseline, head, change, verdict)


@dataclass
class Match:
    key: tuple
    changes: dict[str, MetricChange]

    @property
    def verdict(self) -> str:
        judgements = {c.judgement for c in self.changes.values()}
        return REGRESSED if REGRESSED in judgements else IMPROVED if IMPROVED in judgements else WITHIN

    @property
    def magnitude(self) -> float:
        return max((abs(c.change) for c in self.changes.values() if c.change is not None), default=0.0)


@dataclass
class Comparison:
    threshold: float
    matches: list[Match] = field(default_factory=list)
    new: list[tuple] = field(default_factory=list)
    gone: list[tuple] = field(default_factory=list)
    points: list[PointVerdict] = field(default_factory=list)
    baseline: dict = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    accuracy: dict | None = None  # the sweep's eval rows against their floors and the baseline (accuracy.py)

    def counts(self) -> dict[str, int]:
        counts = {kind: sum(1 for m in self.matches if m.verdict == kind) for kind in (IMPROVED, REGRESSED, WITHIN)}
        return {
            **counts,
            "new": len(self.new),
            "gone": len(self.gone),
            "without a valid result": sum(1 for p in self.points if p.status != "ok"),
        }

    def to_json(self) -> dict:
        return {
            "threshold": self.threshold,
            "baseline": self.baseline,
            "notices": self.notices,
            "counts": self.counts(),
            "metrics": [
                {"id": m.id, "label": m.label, "unit": m.unit, "better": m.better, "scale": m.scale} for m in METRICS
            ],
            "matches": [
                {
                    **key_json(m.key),
                    "verdict": m.verdict,
                    "magnitude": m.magnitude,
                    "metrics": {mid: c.__dict__ for mid, c in m.changes.items()},
                }
                for m in self.ranked()
            ],
            "new": [key_json(k) for k in self.new],
            "gone": [key_json(k) for k in self.gone],
            "points": [p.to_json() for p in self.points],
            **({"accuracy": self.accuracy} if self.accuracy is not None else {}),
        }

    def to_json_text(self) -> str:
        return jsonfast.text(self.to_json(), indent=1) + "\n"

    def to_markdown(self) -> str:
        return comparison_markdown(self.to_json(), budget=SUMMARY_BUDGET)

    def ranked(self) -> list[Match]:
        """Regressions, then improvements, then the matches within the threshold; each most changed first."""
        order = {REGRESSED: 0, IMPROVED: 1, WITHIN: 2}
        return sorted(self.matches, key=lambda m: (order[m.verdict], -m.magnitude, str(m.key)))


def compare_to_baseline(
    baseline_rows: list[dict],
    head: Collected,
    threshold: float = 0.05,
    baseline: dict | None = None,
    notices: list[str] | None = None,
) -> Comparison:
    result = Comparison(threshold, points=list(head.points), baseline=baseline or {}, notices=list(notices or []))
    base: dict[tuple, dict] = {}
    for row in baseline_rows:
        base.setdefault(match_key(row), row)
    seen = set()
    for row in head.rows:
        key = match_key(row)
        if key in seen:
            continue
        seen.add(key)
        old = base.get(key)
        if old is None:
            result.new.append(key)
            continue
        result.matches.append(
            Match(key, {m.id: judge(m, metric_value(old, m.id), metric_value(row, m.id), threshold) for m in METRICS})
        )
    swept = {row.get("config-key") for row in head.rows} | {p.config_key for p in head.points}
    # A point without a valid result is listed once, as such: its baseline rows are not "gone" too.
    unresolved = {p.point_id for p in head.points if p.status != "ok" and p.point_id}
    result.gone = [
        key
        for key, row in base.items()
        if key not in seen and key[0] in swept and row.get("point-id") not in unresolved
    ]
    if not baseline_rows:
        result.notices.append("no baseline rows: every head row is listed as new")
    return result


@dataclass(frozen=True)
class Loaded:
    """Rows and verdicts from results files and artifact folders, and a notice per row left out."""

    results: Collected
    notices: tuple[str, ...] = ()


def load_results(paths: list[Path]) -> Loaded:
    """`collect` outputs (results.json, read strictly: render.read_results) and artifact folders
    (collected), merged. Rows that cannot be compared or charted are left out with a notice."""
    merged, notices, folders = Collected(), [], []
    sets: list = []  # EvalSet
    for path in paths:
        if path.is_dir():
            folders.append(path)
            continue
        collected, dropped = read_results(path)
        merged.rows.extend(collected.rows)
        merged.points.extend(collected.points)
        sets.extend(collected.evals.sets)
        notices += dropped
    if folders:
        collected = collect(folders)
        merged.rows.extend(collected.rows)
        merged.points.extend(collected.points)
        sets.extend(collected.evals.sets)
    merged.evals = EvalCollection(tuple(sets)).without_duplicate_rows()
    return Loaded(merged, tuple(notices))


@dataclass(frozen=True)
class BaselineRequest:
    """Where a comparison's baseline comes from: files, one sweep run, or found on GitHub."""

    paths: tuple[Path, ...] = ()
    run_id: int | None = None
    slug: str | None = None  # OWNER/NAME, for the GitHub lookups
    github: Connection = field(default_factory=Connection)  # the command's one connection, for the lookups
    thresholds: Path | None = None  # the score floors the Accuracy section shows (default: as check-evals)


@dataclass(frozen=True)
class CompareRequest:
    """`infx results compare`: the sweep's results, its baseline, the regression threshold and where
    to save the baseline rows used (None: not saved)."""

    head: tuple[Path, ...]
    baseline: BaselineRequest = field(default_factory=BaselineRequest)
    threshold: float = 0.05
    save_baseline: Path | None = None


class Compared(NamedTuple):
    comparison: Comparison
    baseline_rows: list[dict]
    baseline_evals: list  # EvalRow


def compare_sweep(compare: CompareRequest) -> Compared:
    """`infx results compare`: the head's results against the baseline, and the baseline rows and
    eval rows used. The sweep's eval rows become the comparison's Accuracy section (accuracy.py).

    A baseline that cannot be looked up (GitHub unreachable, a 5xx, a refused token) is a notice
    in the comparison ("no baseline: …"), never a failure: the sweep's results are still compared
    (every row new), written and uploaded, so the sweep can become a later baseline. Floors that
    cannot be read are a notice too (the gate, check-evals, fails on them). With ``save_baseline``
    the baseline rows and eval rows used are written there as a results file (for `plot --baseline`)."""
    request = compare.baseline
    loaded = load_results(list(compare.head))
    notices = list(loaded.notices)
    head_evals = loaded.results.evals
    if request.paths:
        base = load_results(list(request.paths))
        base_rows, base_evals = base.results.rows, base.results.evals.rows
        source = {"kind": "files", "paths": [str(p) for p in request.paths]}
        notices += base.notices
    else:
        keys = sorted({str(r["config-key"]) for r in loaded.results.rows if r.get("config-key")})
        eval_keys = sorted({row.config_key for row in head_evals.rows if row.config_key})
        try:
            found = find_baseline(request.slug or "", keys, request.github, request.run_id, eval_keys)
            base_rows, base_evals, source = found.rows, found.evals, found.source
            notices += found.notices
        except InfxError as exc:
            first = exc.diagnostics[0].message if exc.diagnostics else str(exc)
            base_rows, base_evals, source = [], [], {"kind": "none"}
            notices.append(f"no baseline: {first}")
    comparison = compare_to_baseline(base_rows, loaded.results, compare.threshold, source, notices)
    if head_evals.sets:
        floors, problems = repository_floors(request.thresholds)
        comparison.notices += problems
        comparison.accuracy = accuracy_section(head_evals, base_evals, floors)
    if compare.save_baseline is not None:
        evals = EvalCollection.from_json({"rows": [row.to_json() for row in base_evals], "sets": []})
        atomic_write(compare.save_baseline, results_document(base_rows, [], comparison.baseline, evals))
    return Compared(comparison, base_rows, list(base_evals))
