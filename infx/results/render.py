"""`collect` output formats: results.json (rows + point verdicts), CSV and a text table of the
rows; and the one reader of results.json (``read_results``), strict as its writer."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from .. import jsonfast
from ..diagnostics import InfxError, UsageError, error
from ..schema import first_problem
from .artifact import row_problem
from .collect import Collected, PointVerdict
from .evals.collection import evals_problem
from .evals.rows import EvalCollection
from .metrics import metric_value

RESULTS_SCHEMA = "results"  # infx/schemas/results.schema.json
MAX_RESULTS_BYTES = 1 << 30
RESULTS_HINT = "Pass the file `infx results collect --output` wrote."

FORMAT = "infx-results/1"
TABLE_COLUMNS = (
    "config-key",
    "point-id",
    "conc",
    "tput_per_gpu",
    "output_tput_per_gpu",
    "median_ttft",
    "median_tpot",
    "intvty",
)


def results_json(collected: Collected) -> str:
    """`{"format", "rows", "points", "evals"}`: `rows` is the reference's aggregate-row array plus
    infx's fields, `evals` the eval rows and folders (infx/results/evals/)."""
    return jsonfast.text({"format": FORMAT, **collected.to_json()}, indent=1) + "\n"


def results_document(
    rows: list[dict], points: list[PointVerdict], baseline: dict | None = None, evals: EvalCollection | None = None
) -> str:
    """A results file of these rows and eval rows (compare --save-baseline writes one with its source)."""
    return (
        jsonfast.text(
            {
                "format": FORMAT,
                "rows": rows,
                "points": [p.to_json() for p in points],
                "evals": (evals or EvalCollection()).to_json(),
                **({"baseline": baseline} if baseline is not None else {}),
            },
            indent=1,
        )
        + "\n"
    )


def rows_of(document, where: str) -> tuple[Collected, list[str]]:
    """The rows and verdicts of a decoded results document (a bare list of rows is taken too),
    and a notice for each row that is dropped because it cannot be compared or charted (a
    hand-edited file, an older writer). ValueError when the document is no results file."""
    document = {"rows": document} if isinstance(document, list) else document

    jsonfast.check(document)  # decoded elsewhere (a zip member): the strict reader's limits still hold
    problem = first_problem(RESULTS_SCHEMA, document, "results")
    if problem:
        raise ValueError(problem)
    evals = document.get("evals")
    if evals is not None:
        problem = evals_problem(evals)
        if problem:
            raise ValueError(problem)
    collected = Collected(
        points=[PointVerdict.from_json(p) for p in document.get("points") or []],
        evals=EvalCollection.from_json(evals) if evals is not None else EvalCollection(),
    )
    notices = []
    for index, row in enumerate(document["rows"]):
        problem = row_problem(row)
        if problem:
            notices.append(f"{where}: row {index} ({_label(row)}) is left out: it {problem}")
        else:
            collected.rows.append(row)
    return collected, notices


def _label(row: dict) -> str:
    pid, conc = row.get("point-id"), row.get("conc")
    return f"point {pid if isinstance(pid, str) else '?'}, concurrency {conc if isinstance(conc, int) else '?'}"


def read_results(path: Path) -> tuple[Collected, list[str]]:
    """A results file read with the strict JSON reader: its rows (those that cannot be compared
    or charted left out, each with a notice) and verdicts. A file that cannot be read is exit 2,
    one that is no results file exit 1."""
    try:
        document = jsonfast.read(path, MAX_RESULTS_BYTES)
    except OSError as exc:
        reason = "it does not exist" if isinstance(exc, FileNotFoundError) else exc.strerror or str(exc)
        raise UsageError(f"cannot read the results file: {reason}", RESULTS_HINT, str(path)) from None
    except jsonfast.JSONProblem as exc:
        raise InfxError(
            error(
                str(path),
                (exc.line, exc.column) if exc.line else None,
                "results-json",
                f"not a strict JSON results file: {exc.message}",
                RESULTS_HINT,
            )
        ) from None
    try:
        return rows_of(document, str(path))
    except ValueError as exc:
        raise InfxError(error(str(path), None, "results-json", f"not a results file: {exc}", RESULTS_HINT)) from None


def _flat(row: dict) -> dict:
    """Scalars as they are; nested values (AgentX metrics, router) as compact JSON."""
    return {
        k: (json.dumps(v, separators=(",", ":"), allow_nan=False) if isinstance(v, (dict, list)) else v)
        for k, v in row.items()
    }


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
    lines = [[*TABLE_COLUMNS]]
    for row in rows:
        lines.append(
            [
                _cell(row.get(c) if c in ("config-key", "point-id", "conc") else metric_value(row, c))
                for c in TABLE_COLUMNS
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(TABLE_COLUMNS))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines) + "\n"
