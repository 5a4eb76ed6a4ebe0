"""The published row schema (infx/schemas/row.schema.json), compiled once into Python code.

``jsonschema`` costs ~0.1 s to import and ~20 µs a row, together more than a third of the
matrix's time budget, so the schema is translated here into straight-line Python for
the small keyword set it uses. A keyword outside that set is refused when compiling, and
tests check that jsonschema itself agrees with this validator on good and bad rows.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable

from .cache import read_cached, write_cached

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "row.schema.json"
ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$defs"})
SUPPORTED = frozenset({"type", "enum", "const", "minimum", "minLength", "minItems", "pattern", "required",
                       "properties", "additionalProperties", "items", "$ref", "if", "then", "else"})
TYPE_TESTS = {
    "string": "type({x}) is str",
    "integer": "type({x}) is int",  # type(True) is bool, so booleans are not integers here either
    "boolean": "type({x}) is bool",
    "object": "type({x}) is dict",
    "array": "type({x}) is list",
}


class _Generator:
    """Emits one function per schema node that needs one; each returns the first problem or None."""

    def __init__(self, root: dict):
        self.root = root
        self.lines: list[str] = []
        self.constants: dict[str, object] = {}
        self.names: dict[int, str] = {}

    def constant(self, value) -> str:
        name = f"K{len(self.constants)}"
        self.constants[name] = value
        return name

    def resolve(self, pointer: str) -> dict:
        node = self.root
        for part in pointer.removeprefix("#/").split("/"):
            node = node[part]
        return node

    def function(self, schema: dict) -> str:
        """Name of the function validating ``schema`` (generated once per schema object)."""
        if id(schema) in self.names:
            return self.names[id(schema)]
        name = f"check_{len(self.names)}"
        self.names[id(schema)] = name
        body: list[str] = []
        self.emit(schema, "v", "p", body, 1)
        self.lines.append(f"def {name}(v, p):")
        self.lines.extend(body)
        self.lines.append("    return None")
        return name

    def emit(self, schema: dict, x: str, p: str, out: list[str], depth: int) -> None:
        pad = "    " * depth
        unknown = set(schema) - ANNOTATIONS - SUPPORTED
        if unknown:
            raise ValueError(f"row schema keyword(s) the compiled validator does not support: {sorted(unknown)}")
        if "$ref" in schema:
            target = self.resolve(schema["$ref"])
            if "properties" in target or "if" in target or "items" in target:
                out.append(f"{pad}r = {self.function(target)}({x}, {p})")
                out.append(f"{pad}if r: return r")
            else:
                self.emit(target, x, p, out, depth)
        if "type" in schema:
            out.append(f"{pad}if not ({TYPE_TESTS[schema['type']].format(x=x)}): "
                       f"return f'{{{p}}}: {{{x}!r}} is not of type {schema['type']}'")
        if "enum" in schema:
            allowed = self.constant(tuple((type(a), a) for a in schema["enum"]))
            out.append(f"{pad}if (type({x}), {x}) not in {allowed}: "
                       f"return f'{{{p}}}: {{{x}!r}} is not one of {json.dumps(schema['enum'])}'")
        if "const" in schema:
            const = self.constant((type(schema["const"]), schema["const"]))
            out.append(f"{pad}if (type({x}), {x}) != {const}: return f'{{{p}}}: {{{x}!r}} must be {json.dumps(schema['const'])}'")
        if "minimum" in schema:
            out.append(f"{pad}if type({x}) is int and {x} < {schema['minimum']!r}: "
                       f"return f'{{{p}}}: {{{x}!r}} is less than {schema['minimum']}'")
        if "minLength" in schema:
            out.append(f"{pad}if type({x}) is str and len({x}) < {schema['minLength']}: "
                       f"return f'{{{p}}}: {{{x}!r}} is shorter than {schema['minLength']}'")
        if "pattern" in schema:
            regex = self.constant(re.compile(schema["pattern"]))
            out.append(f"{pad}if type({x}) is str and not {regex}.search({x}): "
                       f"return f'{{{p}}}: {{{x}!r}} does not match the pattern'")
        if "minItems" in schema:
            out.append(f"{pad}if type({x}) is list and len({x}) < {schema['minItems']}: "
                       f"return f'{{{p}}}: has fewer than {schema['minItems']} items'")
        if "items" in schema:
            item = self.function(schema["items"])
            out.append(f"{pad}if type({x}) is list:")
            out.append(f"{pad}    for i, e in enumerate({x}):")
            out.append(f"{pad}        r = {item}(e, f'{{{p}}}[{{i}}]')")
            out.append(f"{pad}        if r: return r")
        if "required" in schema:
            required = self.constant(tuple(schema["required"]))
            out.append(f"{pad}if type({x}) is dict:")
            out.append(f"{pad}    for k in {required}:")
            out.append(f"{pad}        if k not in {x}: return f'{{{p}}}: missing required field {{k!r}}'")
        if "properties" in schema or schema.get("additionalProperties") is False:
            properties = schema.get("properties", {})
            out.append(f"{pad}if type({x}) is dict:")
            if schema.get("additionalProperties") is False:
                allowed = self.constant(frozenset(properties))
                out.append(f"{pad}    for k in {x}:")
                out.append(f"{pad}        if k not in {allowed}: return f'{{{p}}}: unexpected field {{k!r}}'")
            for key, sub in properties.items():
                var = f"x{depth}"
                out.append(f"{pad}    {var} = {x}.get({key!r}, MISSING)")
                out.append(f"{pad}    if {var} is not MISSING:")
                checks: list[str] = []
                self.emit(sub, var, f"{p} + {json.dumps('.' + key)}", checks, depth + 2)
                out.extend(checks or [f"{pad}        pass"])
        if "if" in schema:
            condition = self.function(schema["if"])
            then = self.function(schema.get("then", {}))
            otherwise = self.function(schema.get("else", {}))
            out.append(f"{pad}r = {then}({x}, {p}) if {condition}({x}, {p}) is None else {otherwise}({x}, {p})")
            out.append(f"{pad}if r: return r")


def compile_schema(schema: dict, cache_name: str | None = None) -> Callable[[object, str], "str | None"]:
    """The validator function; its code object is cached under ``cache_name`` when given."""
    generator = _Generator(schema)
    entry = generator.function(schema)
    source = "\n".join(generator.lines)
    code = None
    if cache_name:
        cache_name = f"{cache_name}-{hashlib.sha256(source.encode()).hexdigest()[:16]}-{sys.implementation.cache_tag}.bin"
        cached = read_cached(cache_name)
        if cached:
            try:
                code = marshal.loads(cached)
            except (ValueError, EOFError, TypeError):
                code = None
    if code is None:
        code = compile(source, "<row.schema.json>", "exec")
        if cache_name:
            write_cached(cache_name, marshal.dumps(code))
    namespace = {"MISSING": object(), **generator.constants}
    exec(code, namespace)  # noqa: S102 - code generated from our own schema file
    return namespace[entry]


@lru_cache(maxsize=1)
def row_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=1)
def row_validator() -> Callable[[object, str], "str | None"]:
    return compile_schema(row_schema(), cache_name="row-validator")


def row_problems(rows: list[dict]) -> list[tuple[int, str]]:
    """(index, first problem) of every row that does not match the schema."""
    check = row_validator()
    return [(index, problem) for index, row in enumerate(rows) if (problem := check(row, "row"))]
