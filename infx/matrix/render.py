"""Human and machine renderings of a matrix."""

from __future__ import annotations

from .. import jsonfast
from ..scenarios import is_agentic
from ..workers import row_topology

TABLE_COLUMNS = ("config-key", "runner", "workload", "topology", "conc", "exp-name", "eval", "nodes")


def render_json(rows: list[dict]) -> str:
    return jsonfast.dumps(rows) + "\n"


def _cells(row: dict) -> tuple[str, ...]:
    layout = row_topology(row)
    workload = f"agentic kv:{row['kv-offloading']}" if is_agentic(row) else f"{row['isl']}/{row['osl']}"
    conc = row["conc"]
    evaluation = ("only" if row.get("eval-only") else "yes") if row.get("run-eval") else "-"
    return (
        row["config-key"],
        row["runner"],
        workload,
        layout,
        ",".join(map(str, conc)) if isinstance(conc, list) else str(conc),
        row["exp-name"],
        evaluation,
        str(row.get("node-count", 1)),
    )


def render_table(buckets: dict[str, list[dict]]) -> str:
    """One aligned table per bucket, each headed by its point count, then the total."""
    lines = []
    total = 0
    for bucket, rows in buckets.items():
        cells = [TABLE_COLUMNS] + [_cells(row) for row in rows]
        widths = [max(len(line[i]) for line in cells) for i in range(len(TABLE_COLUMNS))]
        lines.append(f"{bucket}: {len(rows)} point{'s' if len(rows) != 1 else ''}")
        for line in cells:
            lines.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
        lines.append("")
        total += len(rows)
    lines.append(
        f"total: {total} point{'s' if total != 1 else ''} in {len(buckets)} bucket{'s' if len(buckets) != 1 else ''}"
    )
    return "\n".join(lines) + "\n"
