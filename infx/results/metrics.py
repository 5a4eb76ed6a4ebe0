"""The metrics a comparison judges and a chart draws, and where each is in a row: one table.

A metric's value is read only as a finite number (int or float, not a boolean): anything else
is no value. A row whose metric is present but not a finite number is refused when the row is
made (``metric_problem``, by the validity rule in artifact.py), so it never reaches a judgement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..scenarios import is_agentic

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
    Metric(
        "output_tput_per_gpu",
        "Output tput/GPU",
        "tok/s",
        HIGHER,
        ("output_tput_per_gpu",),
        _PER_GPU + ("output_tput_tps",),
    ),
    Metric("mean_ttft", "Mean TTFT", "ms", LOWER, ("mean_ttft",), _LATENCY + ("ttft", "mean"), 1000),
    Metric("median_ttft", "Median TTFT", "ms", LOWER, ("median_ttft",), _LATENCY + ("ttft", "p50"), 1000),
    Metric("median_tpot", "Median TPOT", "ms", LOWER, ("median_tpot",), _LATENCY + ("tpot", "p50"), 1000),
    Metric("median_itl", "Median ITL", "ms", LOWER, ("median_itl",), _LATENCY + ("itl", "p50"), 1000),
    Metric("median_e2el", "Median E2E", "s", LOWER, ("median_e2el",), _LATENCY + ("e2el", "p50")),
    # AgentX's interactivity is the dashboard's default axis: P90 of E2E-normalised interactivity.
    Metric("intvty", "Interactivity", "tok/s/user", HIGHER, ("median_intvty",), _LATENCY + ("e2e_norm_intvty", "p90")),
)
METRICS_BY_ID = {m.id: m for m in METRICS}


def metric_path(row: dict, metric: Metric) -> tuple[str, ...]:
    return metric.agentic if is_agentic(row) else metric.fixed


def metric_value(row: dict, metric_id: str) -> float | None:
    """The metric as a finite float, else None (missing, or not a number)."""
    value: Any = row
    for part in metric_path(row, METRICS_BY_ID[metric_id]):
        value = value.get(part) if isinstance(value, dict) else None
    return float(value) if type(value) in (int, float) and math.isfinite(value) else None


def metric_problem(row: dict) -> str | None:
    """A metric that is present but not a finite number (a string where a throughput belongs):
    why the row cannot be compared. A missing metric is no problem (shown as n/a)."""
    for metric in METRICS:
        value: Any = row
        where: list[str] = []
        for part in metric_path(row, metric):
            if not isinstance(value, dict):
                return f"{'.'.join(where)} is {_shown(value)}, not an object"
            if part not in value:
                value = None
                break
            value = value[part]
            where.append(part)
        if value is not None and (type(value) not in (int, float) or not math.isfinite(value)):
            return f"{'.'.join(where)} is {_shown(value)}, not a number"
    return None


def _shown(value: object) -> str:
    kinds: dict[type, str] = {dict: "an object", list: "a list"}
    text = kinds.get(type(value)) or repr(value)
    return text if len(text) <= 60 else text[:60] + "…"
