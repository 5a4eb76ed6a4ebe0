"""The published row schema (infx/schemas/row.schema.json), compiled once into closures.

``jsonschema`` costs ~0.1 s to import, a third of the matrix's whole time budget, so the
schema is interpreted here for the small keyword set it uses; a keyword outside that set
is refused at compile time, and tests check that jsonschema agrees on every corpus row.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "row.schema.json"
ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$defs"})
Check = Callable[[object, str], "str | None"]  # (value, path) -> first error or None

_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


class _Compiler:
    def __init__(self, root: dict):
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, pointer: str) -> Check:
        if pointer not in self.refs:
            self.refs[pointer] = lambda v, p: None  # placeholder breaks reference cycles
            node = self.root
            for part in pointer.removeprefix("#/").split("/"):
                node = node[part]
            compiled = self.compile(node)
            self.refs[pointer] = compiled
        return lambda v, p: self.refs[pointer](v, p)

    def compile(self, schema: dict) -> Check:
        checks: list[Check] = []
        unknown = set(schema) - ANNOTATIONS - {
            "type", "enum", "const", "minimum", "minLength", "minItems", "pattern", "required", "properties",
            "additionalProperties", "items", "$ref", "if", "then", "else"}
        if unknown:
            raise ValueError(f"row schema keyword(s) not supported by the compiled validator: {sorted(unknown)}")
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"]))
        if "type" in schema:
            name, test = schema["type"], _TYPES[schema["type"]]
            checks.append(lambda v, p: None if test(v) else f"{p}: {v!r} is not of type {name}")
        if "enum" in schema:
            allowed = schema["enum"]
            checks.append(lambda v, p: None if any(v == a and type(v) is type(a) for a in allowed)
                          else f"{p}: {v!r} is not one of {allowed}")
        if "const" in schema:
            const = schema["const"]
            checks.append(lambda v, p: None if v == const and type(v) is type(const) else f"{p}: {v!r} must be {const!r}")
        if "minimum" in schema:
            low = schema["minimum"]
            checks.append(lambda v, p: f"{p}: {v!r} is less than {low}" if _TYPES["integer"](v) and v < low else None)
        if "minLength" in schema:
            low = schema["minLength"]
            checks.append(lambda v, p: f"{p}: {v!r} is shorter than {low}" if isinstance(v, str) and len(v) < low else None)
        if "pattern" in schema:
            regex = re.compile(schema["pattern"])
            checks.append(lambda v, p: f"{p}: {v!r} does not match {regex.pattern}"
                          if isinstance(v, str) and not regex.search(v) else None)
        if "minItems" in schema:
            low = schema["minItems"]
            checks.append(lambda v, p: f"{p}: has fewer than {low} items" if isinstance(v, list) and len(v) < low else None)
        if "items" in schema:
            item = self.compile(schema["items"])

            def items(v, p):
                if isinstance(v, list):
                    for index, element in enumerate(v):
                        problem = item(element, f"{p}[{index}]")
                        if problem:
                            return problem
                return None
            checks.append(items)
        if "required" in schema:
            required = tuple(schema["required"])
            checks.append(lambda v, p: next((f"{p}: missing required field {k!r}" for k in required if k not in v), None)
                          if isinstance(v, dict) else None)
        if "properties" in schema or "additionalProperties" in schema:
            properties = {k: self.compile(s) for k, s in schema.get("properties", {}).items()}
            closed = schema.get("additionalProperties", True) is False

            def props(v, p):
                if not isinstance(v, dict):
                    return None
                for key, value in v.items():
                    check = properties.get(key)
                    if check is None:
                        if closed:
                            return f"{p}: unexpected field {key!r}"
                        continue
                    problem = check(value, f"{p}.{key}")
                    if problem:
                        return problem
                return None
            checks.append(props)
        if "if" in schema:
            condition = self.compile(schema["if"])
            then = self.compile(schema.get("then", {}))
            otherwise = self.compile(schema.get("else", {}))
            checks.append(lambda v, p: then(v, p) if condition(v, p) is None else otherwise(v, p))
        if len(checks) == 1:
            return checks[0]

        def all_of(v, p):
            for check in checks:
                problem = check(v, p)
                if problem:
                    return problem
            return None
        return all_of


@lru_cache(maxsize=1)
def row_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=1)
def row_validator() -> Check:
    return _Compiler(row_schema()).compile(row_schema())


def row_problems(rows: list[dict]) -> list[tuple[int, str]]:
    """(index, first problem) of every row that does not match the schema."""
    check = row_validator()
    problems = []
    for index, row in enumerate(rows):
        problem = check(row, "row")
        if problem:
            problems.append((index, problem))
    return problems
