"""`collect` output formats: results.json (rows + point verdicts), CSV and a text table of the rows."""

from __future__ import annotations

import csv
import io
import json

from .collect import Collected

FORMAT = "infx-results/1"
TABLE_COLUMNS = ("config-key", "point-id", "conc", "tput_per_gpu", "output_tput_per_gpu", "median_ttft", "median_tpot",
                 "intvty")


def results_json(collected: Collected) -> str:
    """`{"format", "rows", "points"}`: `rows` is the reference's aggregate-row array plus infx's fields."""
    return json.dumps({"format": FORMAT, **collected.to_json()}, indent=1, sort_keys=False) + "\n"


def _flat(row: dict) -> dict:
    """Scalars as they are; nested values (AgentX metrics, router) as compact JSON."""
    return {k: (json.dumps(v, separators=(",", ":")) if isinstance(v, (dict, list)) else v) for k, v in row.items()}


def rows_csv(rows: list[dict]) -> str:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(_flat(row) for row in rows)
    return buffer.getvalue()


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def rows_table(rows: list[dict]) -> str:
    from .compare import metric_value

    lines = [[*TABLE_COLUMNS]]
    for row in rows:
        lines.append([_cell(row.get(c) if c in ("config-key", "point-id", "conc") else metric_value(row, c)) for c in TABLE_COLUMNS])
    widths = [max(len(line[i]) for line in lines) for i in range(len(TABLE_COLUMNS))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines) + "\n"
