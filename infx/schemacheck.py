"""infx's JSON Schemas (infx/schemas/*.json) compiled once into straight-line Python.

jsonschema costs ~0.1 s to import and tens of microseconds a node: more than a third of
the matrix's time budget, and most of config validation's. Most input is valid, so infx
asks a compiled check first. It returns None for a valid instance, else the first problem
("<path>: <what is wrong>"):
- matrix rows report that first problem as it is (:func:`first_problem`);
- config validation only asks yes/no (:func:`predicate`) and hands a rejected document to
  jsonschema for the full, located error list.

The compiler knows exactly the keywords infx's schemas use and refuses any other, so a
schema change cannot silently weaken a check. Tests check that jsonschema agrees with it
on real documents and on random mutations of them. The generated code is cached (marshal)
under a name holding the hash of the generated source, so a changed schema or compiler
gets a new entry.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import re
import sys
from typing import Any, Callable

from .diskcache import read_cached, write_cached

Check = Callable[[Any], "str | None"]

# Keywords that only document or structure a schema; they never reject anything.
ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description", "default", "examples", "x-accepted"})
SUPPORTED = frozenset({"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "minLength", "minItems",
                       "minProperties", "pattern", "required", "properties", "additionalProperties", "items", "$ref",
                       "anyOf", "if", "then", "else"})
# JSON Schema types as Python tests; booleans are neither integers nor numbers, 1.0 is an integer.
TYPE_TESTS = {
    "string": "type({x}) is str",
    "integer": "(type({x}) is int or (type({x}) is float and {x}.is_integer()))",
    "number": "(type({x}) is int or type({x}) is float)",
    "boolean": "type({x}) is bool",
    "object": "type({x}) is dict",
    "array": "type({x}) is list",
    "null": "{x} is None",
}
_NUMBER = "(type({x}) is int or type({x}) is float)"


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, and 1 equals 1.0."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return a == b


# The same tests as callables, for code that explains a type error.
TYPES: dict[str, Callable[[Any], bool]] = {
    name: eval(f"lambda v: {test.format(x='v')}") for name, test in TYPE_TESTS.items()  # noqa: S307 - our table
}


class _Generator:
    """Emits one function per schema node that needs one. A function takes the instance and
    returns None or its first problem, whose path is relative to the instance: the caller
    prefixes its own part only on failure, so a valid instance builds no path strings."""

    def __init__(self, root: dict):
        self.root = root
        self.lines: list[str] = []
        self.constants: dict[str, object] = {}
        self.names: dict[int, str] = {}

    def constant(self, value) -> str:
        name = f"K{len(self.constants)}"
        self.constants[name] = value
        return name

    def resolve(self, pointer: str) -> Any:
        if not pointer.startswith("#"):
            raise ValueError(f"only local $ref are supported, got {pointer!r}")
        node = self.root
        for part in filter(None, pointer.removeprefix("#").split("/")):
            node = node[part]
        return node

    def function(self, schema: Any) -> str:
        """Name of the function checking ``schema`` (generated once per schema object)."""
        if id(schema) in self.names:
            return self.names[id(schema)]
        name = f"check_{len(self.names)}"
        self.names[id(schema)] = name
        body: list[str] = []
        self.emit(schema, "v", "", body, 1)
        self.lines.append(f"def {name}(v):")
        self.lines.extend(body)
        self.lines.append("    return None")
        return name

    def emit(self, schema: Any, x: str, path: str, out: list[str], depth: int) -> None:
        """Statements checking variable ``x`` (at ``path`` inside the function's instance)."""
        pad = "    " * depth

        def fail(condition: str, message: str) -> None:
            # message is an f-string body that may use {x!r}; the path is a literal prefix
            out.append(f"{pad}if {condition}: return {path!r} + f{': ' + message!r}")

        def call(function: str, argument: str, where: str) -> None:
            out.append(f"{pad}r = {function}({argument})")
            out.append(f"{pad}if r: return {where} + r")

        if schema is True or schema == {}:
            return
        if schema is False:
            out.append(f"{pad}return {path!r} + ': no value is allowed here'")
            return
        unknown = set(schema) - ANNOTATIONS - SUPPORTED
        if unknown:
            raise ValueError(f"schema keyword(s) the compiled validator does not support: {sorted(unknown)}")
        if "$ref" in schema:
            target = self.resolve(schema["$ref"])
            if isinstance(target, dict) and any(k in target for k in ("properties", "if", "items", "anyOf", "$ref")):
                call(self.function(target), x, repr(path))  # shared (and possibly recursive) targets
            else:
                self.emit(target, x, path, out, depth)
        if "type" in schema:
            names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
            test = " or ".join(TYPE_TESTS[name].format(x=x) for name in names)
            fail(f"not ({test})", f"{{{x}!r}} is not of type {' or '.join(names)}")
        if "enum" in schema:
            values = schema["enum"]
            if all(type(value) is str for value in values):
                fail(f"not (type({x}) is str and {x} in {self.constant(frozenset(values))})",
                     f"{{{x}!r}} is not one of {json.dumps(values)}")
            else:
                options = self.constant(tuple(values))
                fail(f"not any(json_equal({x}, o) for o in {options})", f"{{{x}!r}} is not one of {json.dumps(values)}")
        if "const" in schema:
            fail(f"not json_equal({x}, {self.constant(schema['const'])})",
                 f"{{{x}!r}} must be {json.dumps(schema['const'])}")
        for keyword, operator, words in (("minimum", "<", "is less than"), ("maximum", ">", "is greater than"),
                                         ("exclusiveMinimum", "<=", "is less than or equal to")):
            if keyword in schema:
                fail(f"{_NUMBER.format(x=x)} and {x} {operator} {schema[keyword]!r}", f"{{{x}!r}} {words} {schema[keyword]}")
        if "minLength" in schema:
            fail(f"type({x}) is str and len({x}) < {schema['minLength']}", f"{{{x}!r}} is shorter than {schema['minLength']}")
        if "pattern" in schema:
            fail(f"type({x}) is str and not {self.constant(re.compile(schema['pattern']))}.search({x})",
                 f"{{{x}!r}} does not match the pattern")
        if "minItems" in schema:
            fail(f"type({x}) is list and len({x}) < {schema['minItems']}", f"has fewer than {schema['minItems']} items")
        if "minProperties" in schema:
            fail(f"type({x}) is dict and len({x}) < {schema['minProperties']}",
                 f"has fewer than {schema['minProperties']} fields")
        if "items" in schema:
            item = self.function(schema["items"])
            out.append(f"{pad}if type({x}) is list:")
            out.append(f"{pad}    for i, e in enumerate({x}):")
            out.append(f"{pad}        r = {item}(e)")
            out.append(f"{pad}        if r: return {path!r} + f'[{{i}}]' + r")
        if "required" in schema:
            required, order = self.constant(frozenset(schema["required"])), self.constant(tuple(schema["required"]))
            out.append(f"{pad}if type({x}) is dict and not {required} <= {x}.keys():")
            out.append(f"{pad}    k = next(k for k in {order} if k not in {x})")
            out.append(f"{pad}    return {path!r} + f': missing required field {{k!r}}'")
        self.emit_properties(schema, x, path, out, depth)
        if "anyOf" in schema:
            options = [self.function(sub) for sub in schema["anyOf"]]
            fail(" and ".join(f"{option}({x})" for option in options), f"{{{x}!r}} is not valid under any of the given schemas")
        if "if" in schema:
            condition = self.function(schema["if"])
            then, otherwise = self.function(schema.get("then", {})), self.function(schema.get("else", {}))
            out.append(f"{pad}r = {then}({x}) if {condition}({x}) is None else {otherwise}({x})")
            out.append(f"{pad}if r: return {path!r} + r")

    def emit_properties(self, schema: dict, x: str, path: str, out: list[str], depth: int) -> None:
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        if not properties and extra is True:
            return
        pad = "    " * depth
        out.append(f"{pad}if type({x}) is dict:")
        if extra is False:
            allowed = self.constant(frozenset(properties))
            out.append(f"{pad}    if not {x}.keys() <= {allowed}:")
            out.append(f"{pad}        k = next(k for k in {x} if k not in {allowed})")
            out.append(f"{pad}        return {path!r} + f': unexpected field {{k!r}}'")
        elif extra is not True:
            known = self.constant(frozenset(properties))
            check = self.function(extra)
            out.append(f"{pad}    for k, e in {x}.items():")
            out.append(f"{pad}        if k not in {known}:")
            out.append(f"{pad}            r = {check}(e)")
            out.append(f"{pad}            if r: return {path!r} + f'.{{k}}' + r")
        for key, sub in properties.items():
            var = f"x{depth}"
            out.append(f"{pad}    {var} = {x}.get({key!r}, MISSING)")
            out.append(f"{pad}    if {var} is not MISSING:")
            checks: list[str] = []
            self.emit(sub, var, f"{path}.{key}", checks, depth + 2)
            out.extend(checks or [f"{pad}        pass"])


def compile_check(schema: dict, pointer: str | None = None, cache_name: str | None = None) -> Check:
    """The check of ``schema`` (or of its part at ``pointer``, e.g. ``#/$defs/entry``): None for a
    valid instance, else its first problem. Its code object is cached under ``cache_name``."""
    generator = _Generator(schema)
    entry = generator.function(generator.resolve(pointer) if pointer else schema)
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
        code = compile(source, f"<schema {schema.get('$id', '')}{pointer or ''}>", "exec")
        if cache_name:
            write_cached(cache_name, marshal.dumps(code))
    namespace = {"MISSING": object(), "json_equal": json_equal, **generator.constants}
    exec(code, namespace)  # noqa: S102 - code generated from our own schema files
    return namespace[entry]


def first_problem(check: Check, instance: Any, name: str) -> str | None:
    """``check``'s problem with ``instance`` written from ``name`` (e.g. ``row.prefill.tp: 0 is less than 1``)."""
    problem = check(instance)
    return name + problem if problem else None


def predicate(schema: dict, pointer: str | None = None, cache_name: str | None = None) -> Callable[[Any], bool]:
    """Yes/no: whether an instance is valid."""
    check = compile_check(schema, pointer, cache_name)
    return lambda instance: check(instance) is None
