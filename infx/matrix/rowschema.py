"""The published row schema (infx/schemas/row.schema.json), checked on every matrix row
by the compiled check of :mod:`infx.schemacheck` (jsonschema would cost a third of the
matrix's time budget); a row's first problem is reported as it is."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..schemacheck import Check, compile_check, first_problem

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "row.schema.json"


@lru_cache(maxsize=1)
def row_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=1)
def row_validator() -> Check:
    return compile_check(row_schema(), cache_name="row-validator")


def row_problems(rows: list[dict]) -> list[tuple[int, str]]:
    """(index, first problem) of every row that does not match the schema."""
    check = row_validator()
    return [(index, problem) for index, row in enumerate(rows) if (problem := first_problem(check, row, "row"))]
