"""The one validation path: jsonschema-rs errors with their paths, for data JSON cannot hold too."""

from __future__ import annotations

import datetime

from infx.schema import first_problem, schema_diagnostics, schema_errors
from infx.yamlio import parse_yaml


def test_non_string_keys_are_checked_and_located_at_the_key_as_written():
    doc, _ = parse_yaml("repository: a/b\n1: x\n", "infx.yaml")
    (d,) = schema_diagnostics("infx-settings", doc, doc.data)
    assert (d.rule, d.line, d.column) == ("unknown-key", 2, 1) and "'1'" in d.message


def test_a_value_json_cannot_hold_is_an_error_not_an_exception():
    (err,) = schema_errors("infx-settings", {"repository": datetime.date(2020, 1, 1)})
    assert "cannot be checked" in err.message


def test_first_problem_names_the_path():
    assert first_problem("infx-settings", {"repository": "a/b"}, "settings") is None
    assert first_problem("infx-settings", {"repository": 3}, "settings").startswith("settings.repository: ")
