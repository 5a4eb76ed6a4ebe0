"""The published result-row schema (infx/schemas/result-row.schema.json), loaded and checked the
same way as the matrix row schema (infx/matrix/rowschema.py), so a change of checker there
applies here too."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..schemacheck import Check, compile_check, first_problem

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "result-row.schema.json"


@lru_cache(maxsize=1)
def result_row_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=1)
def result_row_validator() -> Check:
    return compile_check(result_row_schema(), cache_name="result-row-validator")


def result_row_problem(row: dict) -> str | None:
    """The row's first problem against the schema, or None."""
    return first_problem(result_row_validator(), row, "row")
