"""The one validation path for every JSON Schema infx ships (infx/schemas/*.json).

jsonschema-rs (a maintained Rust implementation of draft 2020-12) checks the instance:
it builds a validator in well under a millisecond and confirms a valid document in
microseconds, so there is no second, faster check to keep in step with it. Each error
carries its instance path and the keyword's location in the schema; here it becomes a
located Diagnostic whose message says what is accepted (the rule id comes from the
keyword: ``wrong-type``, ``missing-field``, ``unknown-key``, ...), placed at the YAML
position of that path through ``Document.where``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema_rs

from .diagnostics import Diagnostic, error
from .jsonfast import JSON_TYPES
from .suggest import did_you_mean
from .yamldoc import Document

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"


@cache
def load_schema(name: str) -> dict:
    """``name`` is the file's stem without ``.schema.json``: master, runners, row, lane, ..."""
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())


@cache
def _root(name: str, pointer: str | None) -> dict:
    schema = load_schema(name)
    if pointer:  # one definition of the schema, e.g. #/$defs/entry for one master entry
        return {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": pointer}
    return schema


@cache
def validator(name: str, pointer: str | None = None):
    return jsonschema_rs.Draft202012Validator(_root(name, pointer))


def field_names(node: Any) -> set[str]:
    """Every property name a schema (or part of one) defines, at any depth."""
    if isinstance(node, dict):
        return set(node.get("properties", {})).union(*map(field_names, node.values()))
    if isinstance(node, list):
        return set().union(*map(field_names, node))
    return set()


class SchemaError(NamedTuple):
    """One error: the keyword that failed, its value and schema object, the instance and its path."""

    keyword: str
    value: Any  # the keyword's value in the schema
    schema: dict  # the schema object holding the keyword
    instance: Any
    path: tuple  # inside the validated instance (keys that were not strings, as strings)
    message: str  # jsonschema-rs's own wording
    details: dict  # the error kind's fields (e.g. the missing property)


def _json_ready(data: Any) -> Any:
    """``data`` with keys that are not strings (YAML allows ``1:``, ``null:``) made strings."""
    if isinstance(data, dict):
        return {key if type(key) is str else str(key): _json_ready(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_json_ready(item) for item in data]
    return data


def _original_path(data: Any, path: Iterable) -> tuple:
    """Map a path through string-made keys back to the keys the document holds."""
    original = []
    for part in path:
        if isinstance(data, dict) and part not in data:
            part = next((key for key in data if str(key) == part), part)
        original.append(part)
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            data = None
    return tuple(original)


def _schema_at(root: dict, location: list) -> dict:
    node: Any = root
    for part in location:
        node = node[part]
    return node if isinstance(node, dict) else {}


def is_valid(name: str, instance: Any, pointer: str | None = None) -> bool:
    try:
        return validator(name, pointer).is_valid(instance)
    except ValueError:  # a key or value JSON cannot hold
        return False


def schema_errors(name: str, instance: Any, pointer: str | None = None) -> list[SchemaError]:
    """Every error of ``instance`` against the schema ``name`` (or its part at ``pointer``)."""
    ready = _json_ready(instance)
    root = _root(name, pointer)
    found = []
    try:
        errors = list(validator(name, pointer).iter_errors(ready))
    except ValueError as exc:  # a value JSON cannot hold (YAML gives none today): say so, never raise
        return [SchemaError("", None, {}, instance, (), f"cannot be checked: {exc}", {})]
    for err in errors:
        location = list(err.schema_path)
        keyword = str(location[-1]) if location else ""
        schema = _schema_at(root, location[:-1])
        path = tuple(err.instance_path)
        found.append(
            SchemaError(keyword, schema.get(keyword), schema, err.instance, path, err.message, err.kind.as_dict())
        )
    return found


def first_problem(name: str, instance: Any, label: str) -> str | None:
    """None for a valid instance, else its first problem as ``<label><path>: <message>``."""
    if is_valid(name, instance):
        return None
    err = schema_errors(name, instance)[0]
    return f"{label}{''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in err.path)}: {err.message}"


# --- messages ---------------------------------------------------------------------------

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}


def dotted(path: Iterable) -> str:
    """A readable path: ``fixed-seq-len[0].search-space[1].prefill.tp``."""
    text = ""
    parts = list(path)
    if len(parts) > 1 and parts[0] == "scenarios":
        parts = parts[1:]  # every scenario path starts there; fixed-seq-len[0] is clear enough
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {value!r}"
    return repr(value)


def _accepted(values: Iterable) -> str:
    return ", ".join(json.dumps(v) if not isinstance(v, str) else v for v in values)


Message = tuple[tuple, str, str]  # (extra path, message, hint)


def _reads_as(text: str, names: list[str]) -> bool:
    """Whether ``text`` without quotes would be a YAML value of one of the JSON types ``names``."""
    from .yamlio import (
        parse_yaml,
    )  # the one YAML reader: no error escapes it (a 5,000-digit number is a problem, not a crash)

    document, _ = parse_yaml(text, "")
    return document is not None and any(JSON_TYPES[name](document.data) for name in names)


def _type_message(err: SchemaError, subject: str) -> list[Message]:
    names = [err.value] if isinstance(err.value, str) else err.value
    wanted = " or ".join(_TYPE_WORDS[n] for n in names)
    quoted = isinstance(err.instance, str) and "string" not in names and _reads_as(err.instance, names)
    hint = "Remove the quotes: YAML reads a quoted value as a string." if quoted else f"Write {wanted} here."
    return [((), f"{subject} must be {wanted}, not {_value(err.instance)}", hint)]


def _required_message(err: SchemaError, subject: str) -> list[Message]:
    missing = [name for name in err.value if name not in err.instance]
    return [
        ((), f"{subject} is missing the required field {name!r}", f"Add `{name}:`; see configs/CONFIGS.md.")
        for name in missing
    ]


def _choice_message(err: SchemaError, subject: str) -> list[Message]:
    enum = err.value if err.keyword == "enum" else []
    options = err.schema.get("x-accepted") or ("one of " + _accepted(enum) if enum else _accepted([err.value]))
    close = did_you_mean(err.instance, [v for v in enum if isinstance(v, str)])
    return [((), f"{subject} must be {options}, not {_value(err.instance)}{close}", "Use one of the accepted values.")]


def _bound_message(err: SchemaError, subject: str) -> list[Message]:
    bound = {"minimum": "at least", "exclusiveMinimum": "greater than", "maximum": "at most"}[err.keyword]
    return [
        ((), f"{subject} must be {bound} {err.value}, not {_value(err.instance)}", f"Use a value {bound} {err.value}.")
    ]


def _empty_message(err: SchemaError, subject: str) -> list[Message]:
    return [((), f"{subject} must not be empty", "Give it a value or remove the field.")]


def _pattern_message(err: SchemaError, subject: str) -> list[Message]:
    form = err.schema.get("x-accepted") or err.value
    return [((), f"{subject} {err.instance!r} is not in the accepted form: {form}", f"Write it as {form}.")]


def _dependency_message(err: SchemaError, subject: str) -> list[Message]:
    missing = err.details.get("property")
    triggers = [name for name, needs in (err.value or {}).items() if missing in needs and name in (err.instance or {})]
    trigger = triggers[0] if triggers else "another field"
    return [
        (
            (),
            f"{subject}: {missing!r} is missing; it is a dependency of {trigger!r} (give both or neither)",
            f"Add `{missing}:`, or remove `{trigger}:`.",
        )
    ]


def _other_message(err: SchemaError, subject: str) -> list[Message]:
    return [((), f"{subject}: {err.message}", "")]


# keyword -> (the rule id users see, how to say it). additionalProperties is handled by
# _unknown_keys (one diagnostic per unknown key, at the key); a keyword not listed here
# (not, uniqueItems in the lane profile and changelog entry) keeps jsonschema-rs's wording.
KEYWORDS = {
    "type": ("wrong-type", _type_message),
    "required": ("missing-field", _required_message),
    "enum": ("not-allowed-value", _choice_message),
    "const": ("not-allowed-value", _choice_message),
    "anyOf": ("not-allowed-value", _choice_message),
    "minimum": ("out-of-range", _bound_message),
    "exclusiveMinimum": ("out-of-range", _bound_message),
    "maximum": ("out-of-range", _bound_message),
    "minItems": ("empty-value", _empty_message),
    "minLength": ("empty-value", _empty_message),
    "minProperties": ("empty-value", _empty_message),
    "pattern": ("bad-format", _pattern_message),
    "dependentRequired": ("missing-field", _dependency_message),
}
OTHER_KEYWORD = ("schema", _other_message)
SCHEMA_RULES = sorted({rule for rule, _ in KEYWORDS.values()} | {"unknown-key", "field-not-master"})


def _unknown_keys(err: SchemaError, subject: str, special: dict[str, str]) -> list[tuple[tuple, str, str, str]]:
    allowed = sorted(err.schema.get("properties", {}))
    found = []
    for key in err.instance:
        if key in allowed:
            continue
        reason = special.get(key) if isinstance(key, str) else None
        if reason:
            found.append(
                ((key,), "field-not-master", f"{key!r} is not a master config field: {reason}", f"Remove `{key}:`.")
            )
            continue
        message = f"unknown field {key!r} in {subject}{did_you_mean(key, allowed)}"
        hint = f"Accepted here: {', '.join(allowed)}." if allowed else ""
        found.append(((key,), "unknown-key", message, hint))
    return found


Finding = tuple[tuple, str, str, str]  # (path inside the instance, rule, message, hint)


def _explained(name: str, instance: Any, pointer: str | None, root_label: str, special_keys: dict[str, str] | None):
    """(error path, path inside the instance, rule, message, hint) of every schema error."""
    if is_valid(name, instance, pointer):
        return
    for err in schema_errors(name, instance, pointer):
        label = dotted(err.path) or root_label
        if err.keyword == "additionalProperties" and isinstance(err.instance, dict):
            found = _unknown_keys(err, label, special_keys or {})
        else:
            keyword_rule, explain = KEYWORDS.get(err.keyword, OTHER_KEYWORD)
            found = [(extra, keyword_rule, message, text) for extra, message, text in explain(err, label)]
        for extra, rule, message, text in found:
            yield tuple(err.path), _original_path(instance, err.path + extra), rule, message, text


def schema_findings(
    name: str,
    instance: Any,
    pointer: str | None = None,
    root_label: str = "the file",
    special_keys: dict[str, str] | None = None,
) -> list[Finding]:
    """All schema errors of ``instance`` as (path, rule, message, hint), unlocated, in the validator's order."""
    return list(dict.fromkeys(item[1:] for item in _explained(name, instance, pointer, root_label, special_keys)))


def schema_diagnostics(
    name: str,
    doc: Document,
    instance: Any,
    base: tuple = (),
    pointer: str | None = None,
    prefix: str = "",
    root_label: str = "the file",
    special_keys: dict[str, str] | None = None,
    rule: str | None = None,
    hint: str | Callable[[tuple], str] | None = None,
) -> list[Diagnostic]:
    """All schema errors of ``instance`` (found at ``base`` inside ``doc``), located.

    ``prefix`` starts every message (e.g. the master key); ``root_label`` names the
    instance itself; ``special_keys`` maps unknown keys to a reason (rule field-not-master).
    ``rule`` / ``hint``, when given, replace the keyword's rule id / hint (one rule per file kind);
    a callable ``hint`` chooses it from the error's instance path.
    """
    diagnostics = []
    for error_path, path, found_rule, message, text in _explained(name, instance, pointer, root_label, special_keys):
        chosen = hint(error_path) if callable(hint) else hint
        diagnostics.append(
            error(
                doc.file,
                doc.where(base + path),
                rule or found_rule,
                prefix + message,
                chosen if chosen is not None else text,
            )
        )
    return list(dict.fromkeys(diagnostics))  # one diagnostic per problem, in the validator's order
