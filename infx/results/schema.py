"""The published result-row schema (infx/schemas/result-row.schema.json), checked on every
collected row through the one validation path (infx/schema.py), as the matrix rows are."""

from __future__ import annotations

from ..schema import first_problem

RESULT_ROW_SCHEMA = "result-row"  # the name infx.schema loads it by


def result_row_problem(row: dict) -> str | None:
    """The row's first problem against the schema, or None."""
    return first_problem(RESULT_ROW_SCHEMA, row, "row")
