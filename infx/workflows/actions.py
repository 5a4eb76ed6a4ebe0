"""Writing to GitHub Actions: step outputs, sharded matrices and the step summary.

GitHub's limits shape everything here: a matrix runs at most 256 jobs, a job's outputs
total at most 1 MB counted in UTF-16 (two bytes per UTF-16 code unit: an ASCII character
counts 2, an emoji 4), a step summary at most 1 MiB. A bucket of rows is therefore cut into
shards of ≤ 256 rows; a shard is an inline output while all the outputs infx writes for the
job stay within OUTPUT_BUDGET (as GitHub counts them), else it travels only as a file: every
shard is also written as ``<shard-dir>/shard-<k>.json`` so a workflow can upload the folder
as an artifact.

Effects: filesystem ($GITHUB_OUTPUT, the step summary, the shard files); no network.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..fsio import append, atomic_write
from ..jsonfast import dumps
from ..points import DEFAULT_POINT_SECONDS, gpu_hours

if TYPE_CHECKING:  # annotations only: `infx matrix` writes its outputs here without loading the plan's reader
    from ..sweepplan import ReusedPoint

MAX_SHARD_ROWS = 256  # GitHub: jobs per matrix
JOB_OUTPUTS_LIMIT = 1_000_000  # GitHub: a job's outputs, at most 1 MB, "approximated based on UTF-16 encoding"
RUN_OUTPUTS_LIMIT = 50_000_000  # GitHub: all job outputs of one workflow run
OUTPUT_BUDGET = 900_000  # what infx's outputs may take of JOB_OUTPUTS_LIMIT: room for the workflow's own
SUMMARY_LIMIT_BYTES = 1024 * 1024  # GitHub: step summary upload limit
SUMMARY_BUDGET_BYTES = SUMMARY_LIMIT_BYTES - 64 * 1024  # what infx lets itself use of it
SUMMARY_TABLE_ROWS = 25
REPUBLISH_BUDGET_BYTES = 300_000  # of the setup job's outputs, for the points a sweep of main republishes (≈ 3,000)
SHARD_DIR = "infx-shards"  # under $RUNNER_TEMP: run-sweep.yml uploads it with the plan (sweep-plan)
REUSED_DIR = "infx-reused"  # under $RUNNER_TEMP: the reused points' artifacts, uploaded as sweep-reused


def runner_temp(name: str) -> Path:
    """``$RUNNER_TEMP/<name>``, or ``<name>`` in the working folder outside Actions."""
    return Path(os.environ.get("RUNNER_TEMP") or ".") / name


def heredoc_delimiter(*payloads: str, token=secrets.token_hex) -> str:
    """A random delimiter that occurs in no payload (so a payload can never end the value early)."""
    while True:
        delimiter = f"infx_EOF_{token(16)}"
        if not any(delimiter in payload for payload in payloads):
            return delimiter


def format_outputs(outputs: dict[str, str]) -> str:
    """``name<<DELIM`` … ``DELIM`` blocks, the multiline-safe form of $GITHUB_OUTPUT."""
    blocks = []
    for name, value in outputs.items():
        delimiter = heredoc_delimiter(value, name)
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(blocks)


def github_size(text: str) -> int:
    """The size GitHub counts for an output: its UTF-16 encoding, in bytes."""
    return len(text.encode("utf-16-le", "surrogatepass"))


def outputs_size(outputs: dict[str, str]) -> int:
    """What a set of outputs (names and values) costs of a job's JOB_OUTPUTS_LIMIT."""
    return sum(github_size(name) + github_size(value) for name, value in outputs.items())


def write_outputs(github_output_path: Path | str, outputs: dict[str, str]) -> None:
    """Append all outputs in one write, so a failure never leaves half a value behind."""
    append(github_output_path, format_outputs(outputs))


def shard(buckets: dict[str, list[dict]], max_rows: int = MAX_SHARD_ROWS) -> list[tuple[str, int, list[dict]]]:
    """(bucket, index within the bucket, rows) for every non-empty shard, buckets in order."""
    return [
        (bucket, index // max_rows, rows[index : index + max_rows])
        for bucket, rows in buckets.items()
        for index in range(0, len(rows), max_rows)
    ]


def write_sharded_outputs(
    buckets: dict[str, list[dict]],
    github_output_path: Path | str,
    shard_dir: Path | str,
    max_rows: int = MAX_SHARD_ROWS,
    output_budget: int = OUTPUT_BUDGET,
    other_outputs: dict[str, str] | None = None,
) -> list[dict]:
    """Write every shard file and, in one append, the outputs ``shards``, ``shard-<k>``,
    ``point-count`` and ``other_outputs`` (the rest of what the job outputs); returns the shard list.

    All of them together stay within ``output_budget`` as GitHub counts them (outputs_size): the
    fixed outputs are counted first, the shard list as if every shard were inline (the longer
    form), then shards are inlined in order while they fit; the others travel only as files."""
    shard_dir = Path(shard_dir)
    other_outputs = dict(other_outputs or {})
    shards = shard(buckets, max_rows)
    point_count = str(sum(len(rows) for _, _, rows in shards))

    def descriptors(inline: set[int]) -> list[dict]:
        return [
            {
                "id": f"{bucket}#{index}",
                "bucket": bucket,
                "index": index,
                "rows": len(rows),
                "output": f"shard-{k}" if k in inline else None,
                "file": f"shard-{k}.json",
            }
            for k, (bucket, index, rows) in enumerate(shards)
        ]

    used = outputs_size(
        {"shards": dumps(descriptors(set(range(len(shards))))), "point-count": point_count, **other_outputs}
    )
    outputs, inline = {}, set()
    for k, (_, _, rows) in enumerate(shards):
        payload = dumps(rows)
        atomic_write(shard_dir / f"shard-{k}.json", payload)
        size = outputs_size({f"shard-{k}": payload})
        if used + size <= output_budget:
            outputs[f"shard-{k}"] = payload
            inline.add(k)
            used += size
    listed = descriptors(inline)
    write_outputs(github_output_path, {"shards": dumps(listed), **outputs, "point-count": point_count, **other_outputs})
    return listed


def republish_shards(
    reused: Sequence[ReusedPoint], max_rows: int = MAX_SHARD_ROWS, budget: int = REPUBLISH_BUDGET_BYTES
) -> tuple[list[list[dict]], int]:
    """The reused points a sweep of main uploads again under their own names (run-sweep.yml's
    `republish` job), as shards of at most ``max_rows`` `{name, run}` (GitHub's matrix limit at
    both levels); points past ``budget`` bytes of job output are left out, and counted."""
    entries, used, left_out = [], 2, 0
    for item in reused:
        if not item.source_run:
            continue  # reused from a folder, not from a run: nothing to download again
        entry = {"name": item.artifact, "run": item.source_run}
        size = len(dumps(entry)) + 1
        if used + size > budget:
            left_out += 1
            continue
        entries.append(entry)
        used += size
    return [entries[i : i + max_rows] for i in range(0, len(entries), max_rows)], left_out


# --- step summary -------------------------------------------------------------------------


CELL_LIMIT = 200  # characters of one table cell, before escaping


def markdown_cell(text: str) -> str:
    """``text`` as one cell of a Markdown table: cut to CELL_LIMIT, then ``\\`` and ``|`` escaped,
    line breaks made spaces (the one escaping rule of every table infx writes)."""
    text = text[:CELL_LIMIT]
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def _cell(value) -> str:
    return markdown_cell(dumps(value) if isinstance(value, (list, dict)) else str(value))


SUMMARY_COLUMNS = ("config-key", "runner", "conc", "exp-name", "run-eval")


def render_step_summary(
    buckets: dict[str, list[dict]],
    title: str = "infx matrix",
    shards: list[dict] | None = None,
    table_rows: int = SUMMARY_TABLE_ROWS,
    budget: int = SUMMARY_BUDGET_BYTES,
) -> str:
    """Markdown: points and GPU-hours per bucket, then the first rows, always within ``budget`` bytes."""
    total_points = sum(len(rows) for rows in buckets.values())
    total_hours = sum(gpu_hours(row) for rows in buckets.values() for row in rows)
    shard_counts: dict[str, int] = {}
    for descriptor in shards or []:
        shard_counts[descriptor["bucket"]] = shard_counts.get(descriptor["bucket"], 0) + 1
    lines = [
        f"## {_cell(title)}",
        "",
        f"**{total_points} points**, about **{total_hours:,.0f} GPU-hours** "
        f"(GPUs × duration; {DEFAULT_POINT_SECONDS} s per fixed-seq-len run).",
        "",
        "| bucket | points | shards | GPU-hours |",
        "|---|---:|---:|---:|",
    ]
    for bucket, rows in buckets.items():
        hours = sum(gpu_hours(row) for row in rows)
        shard_text = str(shard_counts.get(bucket, -(-len(rows) // MAX_SHARD_ROWS)))
        lines.append(f"| {_cell(bucket)} | {len(rows)} | {shard_text} | {hours:,.1f} |")
    text = "\n".join(lines) + "\n"
    first = [(bucket, row) for bucket, rows in buckets.items() for row in rows][:table_rows]
    if first:
        table = [
            "",
            f"First {len(first)} of {total_points} points:",
            "",
            "| bucket | " + " | ".join(SUMMARY_COLUMNS) + " |",
            "|---" * (len(SUMMARY_COLUMNS) + 1) + "|",
        ]
        size = len(text.encode()) + sum(len(line.encode()) + 1 for line in table)
        for bucket, row in first:
            line = "| " + " | ".join(_cell(v) for v in (bucket, *(row.get(c, "") for c in SUMMARY_COLUMNS))) + " |"
            size += len(line.encode()) + 1
            if size > budget - 200:
                table.append(f"\n_(table cut to stay under the {budget} byte summary budget)_")
                break
            table.append(line)
        text += "\n".join(table) + "\n"
    encoded = text.encode()
    if len(encoded) > budget:  # only a pathological bucket list gets here
        text = encoded[: budget - 100].decode("utf-8", "ignore") + "\n\n_(summary cut at the size limit)_\n"
    return text


def write_step_summary(
    summary_path: Path | str,
    buckets: dict[str, list[dict]],
    title: str = "infx matrix",
    shards: list[dict] | None = None,
    budget: int = SUMMARY_BUDGET_BYTES,
) -> str:
    """Append the summary to ``$GITHUB_STEP_SUMMARY``; returns what was written."""
    text = render_step_summary(buckets, title, shards, budget=budget)
    append(summary_path, text)
    return text
