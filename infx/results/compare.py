"""A sweep against its baseline: rows matched on config key, scenario, topology and
concurrency; per metric the head value, the signed relative change and a judgement.

Unlike the reference's report-only comparison, a change beyond the threshold in the worse
direction is a regression (`--fail-on-regression` turns it into exit 1); a zero or missing
baseline value has no change (shown as n/a). AgentX rows are compared too, on their own
metric paths (the seed's headline figures are AgentX throughput and mean TTFT).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import InfxError, UsageError, error
from .collect import AGENTIC, Collected, PointVerdict, collect

HIGHER, LOWER = "higher", "lower"
IMPROVED, REGRESSED, WITHIN = "improved", "regressed", "within"


@dataclass(frozen=True)
class Metric:
    id: str
    label: str
    unit: str
    better: str
    fixed: tuple[str, ...]  # path in a fixed-sequence row
    agentic: tuple[str, ...]  # path in an AgentX row
    scale: float = 1.0  # for display (seconds shown as ms)


_LATENCY = ("request_metrics", "latency")
_PER_GPU = ("request_metrics", "throughput", "per_gpu")
METRICS = (
    Metric("tput_per_gpu", "Total tput/GPU", "tok/s", HIGHER, ("tput_per_gpu",), _PER_GPU + ("total_tput_tps",)),
    Metric("output_tput_per_gpu", "Output tput/GPU", "tok/s", HIGHER, ("output_tput_per_gpu",), _PER_GPU + ("output_tput_tps",)),
    Metric("mean_ttft", "Mean TTFT", "ms", LOWER, ("mean_ttft",), _LATENCY + ("ttft", "mean"), 1000),
    Metric("median_ttft", "Median TTFT", "ms", LOWER, ("median_ttft",), _LATENCY + ("ttft", "p50"), 1000),
    Metric("median_tpot", "Median TPOT", "ms", LOWER, ("median_tpot",), _LATENCY + ("tpot", "p50"), 1000),
    Metric("median_itl", "Median ITL", "ms", LOWER, ("median_itl",), _LATENCY + ("itl", "p50"), 1000),
    Metric("median_e2el", "Median E2E", "s", LOWER, ("median_e2el",), _LATENCY + ("e2el", "p50")),
    # AgentX's interactivity is the dashboard's default axis: P90 of E2E-normalised interactivity.
    Metric("intvty", "Interactivity", "tok/s/user", HIGHER, ("median_intvty",), _LATENCY + ("e2e_norm_intvty", "p90")),
)
METRICS_BY_ID = {m.id: m for m in METRICS}


def metric_value(row: dict, metric_id: str) -> float | None:
    metric = METRICS_BY_ID[metric_id]
    value = row
    for part in metric.agentic if row.get("scenario-type") == AGENTIC else metric.fixed:
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if type(value) in (int, float) else None


def scenario(row: dict) -> str:
    """`8k/1k` for a fixed sequence-length pair, `agentic-coding` for AgentX."""
    if row.get("scenario-type") == AGENTIC:
        return AGENTIC

    def short(n):
        return f"{n // 1024}k" if isinstance(n, int) and n and n % 1024 == 0 else str(n)

    return f"{short(row.get('isl'))}/{short(row.get('osl'))}"


def _parallel(prefix: str, row: dict) -> str:
    parts = [f"tp{row.get(prefix + 'tp')}", f"ep{row.get(prefix + 'ep')}"]
    if (row.get(prefix + "pp") or 1) != 1:
        parts.append(f"pp{row.get(prefix + 'pp')}")
    if str(row.get(prefix + "dp_attention")).lower() == "true":
        parts.append("dpa")
    return " ".join(parts)


def topology(row: dict) -> str:
    """`1P1D · P tp8 ep8 dpa · D tp16 ep16 dpa` (multinode) or `tp8 ep8` (single node)."""
    if "prefill_tp" in row or row.get("is_multinode"):
        return (f"{row.get('prefill_num_workers')}P{row.get('decode_num_workers')}D · P {_parallel('prefill_', row)}"
                f" · D {_parallel('decode_', row)}")
    return _parallel("", row)


def match_key(row: dict) -> tuple:
    return (row.get("config-key"), scenario(row), topology(row), row.get("conc"))


def key_json(key: tuple) -> dict:
    return dict(zip(("config-key", "scenario", "topology", "conc"), key))


@dataclass
class Change:
    baseline: float | None
    head: float | None
    change: float | None
    judgement: str


def judge(metric: Metric, baseline: float | None, head: float | None, threshold: float) -> Change:
    if baseline is None or head is None or baseline == 0:
        return Change(baseline, head, None, WITHIN)
    change = (head - baseline) / abs(baseline)
    gain = change if metric.better == HIGHER else -change
    verdict = IMPROVED if gain > threshold else REGRESSED if gain < -threshold else WITHIN
    return Change(baseline, head, change, verdict)


@dataclass
class Match:
    key: tuple
    changes: dict[str, Change]

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

    def counts(self) -> dict[str, int]:
        counts = {kind: sum(1 for m in self.matches if m.verdict == kind) for kind in (IMPROVED, REGRESSED, WITHIN)}
        return {**counts, "new": len(self.new), "gone": len(self.gone),
                "without a valid result": sum(1 for p in self.points if p.status != "ok")}

    def to_json(self) -> dict:
        return {
            "threshold": self.threshold, "baseline": self.baseline, "notices": self.notices, "counts": self.counts(),
            "metrics": [{"id": m.id, "label": m.label, "unit": m.unit, "better": m.better, "scale": m.scale} for m in METRICS],
            "matches": [{**key_json(m.key), "verdict": m.verdict, "magnitude": m.magnitude,
                         "metrics": {mid: c.__dict__ for mid, c in m.changes.items()}} for m in self.ranked()],
            "new": [key_json(k) for k in self.new], "gone": [key_json(k) for k in self.gone],
            "points": [p.to_json() for p in self.points],
        }

    def to_json_text(self) -> str:
        return json.dumps(self.to_json(), indent=1) + "\n"

    def to_markdown(self) -> str:
        from ..workflows.report import SUMMARY_BUDGET, comparison_markdown

        return comparison_markdown(self.to_json(), budget=SUMMARY_BUDGET)

    def ranked(self) -> list[Match]:
        """Regressions, then improvements, then the matches within the threshold; each most changed first."""
        order = {REGRESSED: 0, IMPROVED: 1, WITHIN: 2}
        return sorted(self.matches, key=lambda m: (order[m.verdict], -m.magnitude, str(m.key)))


def compare(baseline_rows: list[dict], head: Collected, threshold: float = 0.05, baseline: dict | None = None,
            notices: list[str] | None = None) -> Comparison:
    result = Comparison(threshold, points=list(head.points), baseline=baseline or {}, notices=list(notices or []))
    base = {}
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
        result.matches.append(Match(key, {m.id: judge(m, metric_value(old, m.id), metric_value(row, m.id), threshold)
                                          for m in METRICS}))
    swept = {row.get("config-key") for row in head.rows} | {p.config_key for p in head.points}
    result.gone = [key for key in base if key not in seen and key[0] in swept]
    if not baseline_rows:
        result.notices.append("no baseline rows: every head row is listed as new")
    return result


def load_results(paths: list[Path]) -> Collected:
    """`collect` outputs (results.json) and artifact folders, merged."""
    merged = Collected()
    folders = []
    for path in paths:
        if path.is_dir():
            folders.append(path)
            continue
        if not path.is_file():
            raise UsageError(f"no results at {path}", "Pass results.json from `infx results collect`, or artifact folders.", str(path))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InfxError(error(str(path), None, "results-json", f"not readable JSON: {exc}",
                                  "Pass the file `infx results collect --output` wrote."))
        rows = data.get("rows") if isinstance(data, dict) else data if isinstance(data, list) else None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise InfxError(error(str(path), None, "results-json", "holds no `rows` array of objects",
                                  "Pass the file `infx results collect --output` wrote."))
        merged.rows.extend(rows)
        if isinstance(data, dict):
            merged.points.extend(PointVerdict.from_json(p) for p in data.get("points") or [] if isinstance(p, dict))
    if folders:
        collected = collect(folders)
        merged.rows.extend(collected.rows)
        merged.points.extend(collected.points)
    return merged

