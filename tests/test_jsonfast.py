"""The one strict JSON reader (infx.jsonfast.parse/read/check) and the strict writer (text).

A second implementation agrees on what is plain JSON: every document Python's json reads
without NaN, infinities, duplicate keys or lone surrogates reads the same here; everything
else is refused with the key path where it is.
"""

from __future__ import annotations

import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infx import jsonfast
from infx.fsio import TooLarge, UnusablePath
from infx.jsonfast import JSONProblem, parse


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"a": NaN}', "NaN is not a JSON number at $.a"),
        (
            '{"a": {"b": [1, Infinity]}}',
            "Infinity (or a number beyond the float range, such as 1e400) is not a JSON number at $.a.b[1]",
        ),
        ("[-Infinity]", "-Infinity (or a number beyond the float range, such as 1e400) is not a JSON number at $[0]"),
        ('{"x": 1e400}', "Infinity (or a number beyond the float range, such as 1e400) is not a JSON number at $.x"),
        ('{"x": -1e400}', "-Infinity"),
        ('{"n": 18446744073709551616}', "a number is outside the 64-bit integer range at $.n"),
        ('{"n": ' + "9" * 5000 + "}", "a number is too long to read"),
        ('{"a": 1, "a": 2}', 'the key "a" appears twice in one object (which one counts is undefined) at $'),
        (
            '{"rows": [{"k": 1}, {"k": 1, "k": 1}]}',
            'the key "k" appears twice in one object (which one counts is undefined) at $.rows[1]',
        ),
        ('{"odd key": {"\\ud800": 1}}', 'a key is not Unicode text (a lone surrogate) at $["odd key"]'),
        ('["ok", "\\udcff"]', "a string is not Unicode text (a lone surrogate) at $[1]"),
        ("[" * 202 + "]" * 202, "nested deeper than 200 levels at $[0][0]"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper than 200 levels"),
        ('{"a": 1}{', "not valid JSON: Extra data"),
        (b'{"a": "\xff"}', "not valid UTF-8"),
    ],
)
def test_refused_with_the_key_path(text, message):
    with pytest.raises(JSONProblem) as refused:
        parse(text)
    assert message in refused.value.message


def test_plain_json_reads_as_pythons_json_reads_it():
    text = json.dumps(
        {"a": [1, 2.5, -3, 2**63, -(2**63), "é", None, True, {"b": []}], "c": 1e308, "d": [[0.1] * 5] * 3}
    )
    assert parse(text) == json.loads(text)
    assert parse("[" * 201 + "]" * 201) == json.loads(
        "[" * 201 + "]" * 201
    )  # the limit itself passes (the root and 200 below)


JSON_DOCS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(JSON_DOCS)
def test_every_plain_document_round_trips(document):
    assert parse(jsonfast.text(document)) == document


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(), st.integers(-(2**70), 2**70)), max_size=30))
def test_numbers_in_long_lists_are_checked_one_by_one_when_needed(numbers):
    text = json.dumps(numbers)  # NaN and Infinity as Python writes them
    bad = [
        n
        for n in numbers
        if (isinstance(n, float) and not math.isfinite(n)) or (isinstance(n, int) and not -(2**63) <= n < 2**64)
    ]
    if bad:
        with pytest.raises(JSONProblem, match=r"at \$\[\d+\]"):
            parse(text)
    else:
        assert parse(text) == numbers


def test_check_holds_decoded_data_to_the_same_limits():
    jsonfast.check({"a": [1.0, "x"]})
    with pytest.raises(JSONProblem, match=r"NaN is not a JSON number at \$.a\[0\]"):
        jsonfast.check({"a": [float("nan")]})


def test_the_writer_never_writes_nan():
    assert jsonfast.text({"a": 1.5, "é": "ü"}) == '{"a": 1.5, "é": "ü"}'
    assert jsonfast.text({"é": 1}, ascii_only=True) == '{"\\u00e9": 1}'
    with pytest.raises(ValueError):
        jsonfast.text({"a": float("nan")})


def test_read_takes_regular_files_only_and_names_the_file(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"a": 1}')
    assert jsonfast.read(good, 100) == {"a": 1}
    (tmp_path / "bad.json").write_text('{"a": NaN}')
    with pytest.raises(JSONProblem) as refused:
        jsonfast.read(tmp_path / "bad.json", 100)
    assert str(refused.value) == f"{tmp_path / 'bad.json'}: NaN is not a JSON number at $.a"
    (tmp_path / "link.json").symlink_to(good)
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "zeros.json").symlink_to("/dev/zero")
    for name in ("link.json", "fifo.json", "zeros.json"):
        with pytest.raises(UnusablePath):
            jsonfast.read(tmp_path / name, 100)
    with pytest.raises(TooLarge):
        jsonfast.read(good, 3)
