"""The JSON Schemas under infx/schemas/, applied to loaded YAML documents.

Every schema error becomes a located Diagnostic whose message says what is accepted.
Valid input is confirmed by the compiled check of :mod:`infx.schemacheck`; jsonschema (and
its import) is only paid for when there is something to report.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from ..diagnostics import Diagnostic, error
from ..yamlio import Document
from ..schemacheck import TYPES, predicate
from ..suggest import did_you_mean

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"

# Fields people put in master configs that belong elsewhere: the rule names them and says where.
NON_MASTER_FIELDS = {
    "duration": "points always run for 3600 s; the matrix sets duration, a master config cannot",
    "gpus-per-node": "it is a runner fact: set it under hardware: in configs/runners.yaml",
    "available-cpu-dram-mib": "it is a runner fact: set it under hardware: in configs/runners.yaml",
    "total-cpu-dram-gb": "the matrix derives it from dram-utilization and the runner's hardware",
    "node-count": "the matrix derives it from num-nodes or the recipe",
    "max-model-len": "the matrix derives it as isl + osl + 256",
    "exp-name": "the matrix derives it from the topology",
    "trace-source": "the agentic trace is fixed by the benchmark, not chosen per config",
}

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "empty",
}


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """``name`` is master, runners or components."""
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())


@lru_cache(maxsize=None)
def _predicate(name: str, pointer: str | None):
    return predicate(load_schema(name), pointer, cache_name=f"{name}-schema")


@lru_cache(maxsize=None)
def _validator(name: str, pointer: str | None):
    from jsonschema import Draft202012Validator  # only when there is an error to explain

    schema = load_schema(name)
    if pointer:
        schema = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": pointer}
    return Draft202012Validator(schema)


def field_names(node: Any) -> set[str]:
    """Every property name a schema (or part of one) defines, at any depth."""
    if isinstance(node, dict):
        return set(node.get("properties", {})).union(*map(field_names, node.values()))
    if isinstance(node, list):
        return set().union(*map(field_names, node))
    return set()


def is_valid(name: str, instance: Any, pointer: str | None = None) -> bool:
    return _predicate(name, pointer)(instance)


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
    from ..yamlio import parse_yaml  # the one YAML reader: no error escapes it (a 5,000-digit number is a problem, not a crash)

    document, _ = parse_yaml(text, "")
    return document is not None and any(TYPES[name](document.data) for name in names)


def _type_message(err, subject: str) -> list[Message]:
    names = [err.validator_value] if isinstance(err.validator_value, str) else err.validator_value
    wanted = " or ".join(_TYPE_WORDS[n] for n in names)
    quoted = isinstance(err.instance, str) and "string" not in names and _reads_as(err.instance, names)
    hint = "Remove the quotes: YAML reads a quoted value as a string." if quoted else f"Write {wanted} here."
    return [((), f"{subject} must be {wanted}, not {_value(err.instance)}", hint)]


def _required_message(err, subject: str) -> list[Message]:
    missing = [name for name in err.validator_value if name not in err.instance]
    return [((), f"{subject} is missing the required field {name!r}", f"Add `{name}:`; see configs/CONFIGS.md.") for name in missing]


def _choice_message(err, subject: str) -> list[Message]:
    enum = err.validator_value if err.validator == "enum" else []
    options = err.schema.get("x-accepted") or ("one of " + _accepted(enum) if enum else _accepted([err.validator_value]))
    close = did_you_mean(err.instance, [v for v in enum if isinstance(v, str)])
    return [((), f"{subject} must be {options}, not {_value(err.instance)}{close}", "Use one of the accepted values.")]


def _bound_message(err, subject: str) -> list[Message]:
    bound = {"minimum": "at least", "exclusiveMinimum": "greater than", "maximum": "at most"}[err.validator]
    return [((), f"{subject} must be {bound} {err.validator_value}, not {_value(err.instance)}", f"Use a value {bound} {err.validator_value}.")]


def _empty_message(err, subject: str) -> list[Message]:
    return [((), f"{subject} must not be empty", "Give it a value or remove the field.")]


def _pattern_message(err, subject: str) -> list[Message]:
    form = err.schema.get("x-accepted") or err.validator_value
    return [((), f"{subject} {err.instance!r} is not in the accepted form: {form}", f"Write it as {form}.")]


# jsonschema keyword -> (the rule id users see, how to say it). additionalProperties is
# handled by _unknown_keys (one diagnostic per unknown key, at the key).
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
}
SCHEMA_RULES = sorted({rule for rule, _ in KEYWORDS.values()} | {"unknown-key", "field-not-master"})


def _unknown_keys(err, subject: str, special: dict[str, str]) -> list[tuple[tuple, str, str, str]]:
    allowed = sorted(err.schema.get("properties", {}))
    found = []
    for key in err.instance:
        if key in allowed:
            continue
        reason = special.get(key) if isinstance(key, str) else None
        if reason:
            found.append(((key,), "field-not-master", f"{key!r} is not a master config field: {reason}", f"Remove `{key}:`."))
            continue
        message = f"unknown field {key!r} in {subject}{did_you_mean(key, allowed)}"
        hint = f"Accepted here: {', '.join(allowed)}." if allowed else ""
        found.append(((key,), "unknown-key", message, hint))
    return found


def schema_diagnostics(
    name: str,
    doc: Document,
    instance: Any,
    base: tuple = (),
    pointer: str | None = None,
    prefix: str = "",
    root_label: str = "the file",
    special_keys: dict[str, str] | None = None,
) -> list[Diagnostic]:
    """All schema errors of ``instance`` (found at ``base`` inside ``doc``), located.

    ``prefix`` starts every message (e.g. the master key); ``root_label`` names the
    instance itself; ``special_keys`` maps unknown keys to a reason (rule field-not-master).
    """
    if is_valid(name, instance, pointer):
        return []
    diagnostics = []
    for err in _validator(name, pointer).iter_errors(instance):
        path = tuple(err.absolute_path)
        label = dotted(path) or root_label
        if err.validator == "additionalProperties":
            found = _unknown_keys(err, label, special_keys or {})
        else:
            rule, explain = KEYWORDS[err.validator]  # schemacheck admits no other keyword
            found = [(extra, rule, message, hint) for extra, message, hint in explain(err, label)]
        for extra, rule, message, hint in found:
            diagnostics.append(error(doc.file, doc.where(base + path + extra), rule, prefix + message, hint))
    return list(dict.fromkeys(diagnostics))  # jsonschema repeats some errors (one per missing field)
