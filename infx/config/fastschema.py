"""A yes/no JSON Schema check compiled to closures, for the common case: valid input.

jsonschema reports every error with its path, which is what a user needs, but it costs
about 0.05 s to import and tens of microseconds per node. Most runs validate configs that
are fine, so infx first asks this compiled predicate; only a document it rejects goes to
jsonschema's Draft202012Validator for the full, located error list.

The predicate understands exactly the keywords infx's schemas use and refuses to compile
any other, so a schema change cannot silently weaken it. A test checks that it agrees
with jsonschema on random mutations of real configs.
"""

from __future__ import annotations

import re
from typing import Any, Callable

Check = Callable[[Any], bool]

# Keywords that only document or structure the schema; they never reject anything.
_ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "default", "examples", "x-accepted"}


def _is_integer(value: Any) -> bool:
    return (type(value) is int) or (type(value) is float and value.is_integer())


TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "integer": _is_integer,
    "number": lambda v: type(v) in (int, float),
}


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, and 1 equals 1.0."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return a == b


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


class SchemaCompiler:
    """Compiles one schema document; ``$ref`` targets are compiled once and shared."""

    def __init__(self, root: dict):
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, pointer: str) -> Check:
        if pointer not in self.refs:
            if not pointer.startswith("#/"):
                raise ValueError(f"only local $ref are supported, got {pointer!r}")
            slot: list[Check] = []
            self.refs[pointer] = lambda v: slot[0](v)  # allows recursive references
            node: Any = self.root
            for part in pointer[2:].split("/"):
                node = node[part]
            slot.append(self.compile(node))
        return self.refs[pointer]

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return lambda v: True
        if schema is False:
            return lambda v: False
        unknown = set(schema) - _ANNOTATIONS - set(_KEYWORDS)
        if unknown:
            raise ValueError(f"fastschema does not implement {sorted(unknown)}")
        checks = [_KEYWORDS[name](self, schema[name], schema) for name in _KEYWORDS if name in schema]
        return _all_of([c for c in checks if c is not None])


def _all_of(checks: list[Check]) -> Check:
    # Unrolled for the usual two or three keywords: this runs once per node of every config.
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    if len(checks) == 3:
        first, second, third = checks
        return lambda v: first(v) and second(v) and third(v)
    return lambda v: all(check(v) for check in checks)


def _type(c: SchemaCompiler, value, schema) -> Check:
    names = [value] if isinstance(value, str) else list(value)
    tests = [TYPES[name] for name in names]
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(test(v) for test in tests)


def _properties(c: SchemaCompiler, value, schema) -> Check:
    props = {name: c.compile(sub) for name, sub in value.items()}
    extra = schema.get("additionalProperties", True)
    extra_check = None if extra is True else c.compile(extra)

    def check(v):
        if type(v) is not dict:
            return True
        for key, item in v.items():
            sub = props.get(key) if type(key) is str else None
            if sub is not None:
                if not sub(item):
                    return False
            elif extra_check is not None and not extra_check(item):
                return False
        return True

    return check


def _additional(c: SchemaCompiler, value, schema) -> Check | None:
    if "properties" in schema:
        return None  # handled together with properties
    return _properties(c, {}, schema)


def _required(c: SchemaCompiler, value, schema) -> Check:
    names = list(value)
    return lambda v: type(v) is not dict or all(name in v for name in names)


def _items(c: SchemaCompiler, value, schema) -> Check:
    item = c.compile(value)
    return lambda v: type(v) is not list or all(item(x) for x in v)


def _enum(c: SchemaCompiler, value, schema) -> Check:
    options = list(value)
    return lambda v: any(json_equal(v, option) for option in options)


def _const(c: SchemaCompiler, value, schema) -> Check:
    return lambda v: json_equal(v, value)


def _minimum(c, value, schema) -> Check:
    return lambda v: not _is_number(v) or v >= value


def _maximum(c, value, schema) -> Check:
    return lambda v: not _is_number(v) or v <= value


def _exclusive_minimum(c, value, schema) -> Check:
    return lambda v: not _is_number(v) or v > value


def _min_items(c, value, schema) -> Check:
    return lambda v: type(v) is not list or len(v) >= value


def _min_length(c, value, schema) -> Check:
    return lambda v: type(v) is not str or len(v) >= value


def _min_properties(c, value, schema) -> Check:
    return lambda v: type(v) is not dict or len(v) >= value


def _pattern(c, value, schema) -> Check:
    search = re.compile(value).search
    return lambda v: type(v) is not str or search(v) is not None


def _any_of(c: SchemaCompiler, value, schema) -> Check:
    options = [c.compile(sub) for sub in value]
    return lambda v: any(option(v) for option in options)


def _ref(c: SchemaCompiler, value, schema) -> Check:
    return c.ref(value)


_KEYWORDS: dict[str, Callable[[SchemaCompiler, Any, dict], Check | None]] = {
    "$ref": _ref,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "items": _items,
    "minimum": _minimum,
    "maximum": _maximum,
    "exclusiveMinimum": _exclusive_minimum,
    "minItems": _min_items,
    "minLength": _min_length,
    "minProperties": _min_properties,
    "pattern": _pattern,
    "anyOf": _any_of,
}


def compile_schema(schema: dict, pointer: str | None = None) -> Check:
    """A predicate for ``schema`` (or for the sub-schema at ``pointer``, e.g. ``#/$defs/entry``)."""
    compiler = SchemaCompiler(schema)
    return compiler.ref(pointer) if pointer else compiler.compile(schema)
