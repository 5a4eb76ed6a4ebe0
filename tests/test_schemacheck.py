"""The shared schema compiler agrees with jsonschema keyword by keyword, on the edge cases
JSON and Python disagree about (booleans, 1.0, non-string keys)."""

from __future__ import annotations

import jsonschema
import pytest

from infx.schemacheck import compile_check, first_problem, predicate

SCHEMA = {
    "$defs": {"size": {"type": "integer", "minimum": 1, "maximum": 8}},
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "pattern": "^[a-z]"},
        "tp": {"$ref": "#/$defs/size"},
        "ratio": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "mode": {"enum": ["a", "b"]},
        "flag": {"enum": [True, 2]},
        "fixed": {"const": 1},
        "tags": {"type": "array", "minItems": 1, "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/size"}]}},
        "env": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}},
    },
    "additionalProperties": False,
}
INSTANCES = [
    {"name": "x"}, {}, {"name": ""}, {"name": "X"}, {"name": "x", "tp": 1.0}, {"name": "x", "tp": True},
    {"name": "x", "tp": 9}, {"name": "x", "tp": 0}, {"name": "x", "ratio": None}, {"name": "x", "ratio": 0},
    {"name": "x", "ratio": 0.5}, {"name": "x", "mode": "c"}, {"name": "x", "flag": 1}, {"name": "x", "flag": 2.0},
    {"name": "x", "fixed": True}, {"name": "x", "fixed": 1.0}, {"name": "x", "tags": []}, {"name": "x", "tags": ["a", 3]},
    {"name": "x", "tags": ["a", 30]}, {"name": "x", "env": {}}, {"name": "x", "env": {"A": 1}}, {"name": "x", 1: "y"},
    {"name": "x", "other": 1}, [], "x",
]


@pytest.mark.parametrize("instance", INSTANCES)
def test_agrees_with_jsonschema(instance):
    reference = jsonschema.Draft202012Validator(SCHEMA)
    is_valid = predicate(SCHEMA)
    if isinstance(instance, dict) and any(type(k) is not str for k in instance):
        assert not is_valid(instance)  # jsonschema cannot look at non-string keys; YAML can make them
        return
    assert is_valid(instance) == reference.is_valid(instance)


def test_first_problem_says_where_and_what():
    check = compile_check(SCHEMA)
    assert first_problem(check, {"name": "x", "tags": ["a", 30]}, "doc") == "doc.tags[1]: 30 is not valid under any of the given schemas"
    assert first_problem(check, {"name": "x", "env": {"A": 1}}, "doc") == "doc.env.A: 1 is not of type string"
    assert first_problem(check, {"name": "x"}, "doc") is None
    assert compile_check(SCHEMA, "#/$defs/size")(0) == ": 0 is less than 1"


def test_cached_code_follows_the_schema(tmp_path, monkeypatch):
    """The marshal cache is keyed by the generated source: a changed schema never runs old code."""
    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path))
    old = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    new = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}}}
    assert compile_check(old, cache_name="t")({"n": 2}) is None
    assert compile_check(old, cache_name="t")({"n": 2}) is None and len(list(tmp_path.iterdir())) == 1
    assert compile_check(new, cache_name="t")({"n": 2}) == ".n: 2 is less than 5"
