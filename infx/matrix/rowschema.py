"""The published row schema (infx/schemas/row.schema.json), checked on every matrix row
through the one validation path (infx/schema.py); a row's first problem is reported as it is."""

from __future__ import annotations

from ..schema import first_problem, load_schema

ROW_SCHEMA = "row"


def row_schema() -> dict:
    return load_schema(ROW_SCHEMA)


def row_problems(rows: list[dict]) -> list[tuple[int, str]]:
    """(index, first problem) of every row that does not match the schema."""
    return [(index, problem) for index, row in enumerate(rows) if (problem := first_problem(ROW_SCHEMA, row, "row"))]
