"""The record machinery (infx/records.py): every record class infx defines names exactly the
fields of its schema part, one check over all of them; a field the schema adds or a class that
points at the wrong part is caught, naming the class and the part."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from infx import records

PACKAGE = Path(__file__).resolve().parent.parent / "infx"


def every_record() -> list[type[records.Record]]:
    """Every record class, after importing every infx module (a record is found wherever it lives)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return records.records()


def test_every_record_and_its_schema_part_name_the_same_fields():
    found = every_record()
    records.check_records(found)
    named = {cls.__module__ + "." + cls.__qualname__ for cls in found}
    assert {
        "infx.sweepplan.SweepPlan",
        "infx.sweepplan.LaneCheck",
        "infx.launch.lane.Lane",
        "infx.launch.lane.Route",
        "infx.launch.record.LaunchRecord",
        "infx.results.evals.rows.EvalRow",
        "infx.results.evals.rows.EvalSet",
    } <= named


def test_a_field_the_schema_names_and_the_class_does_not_is_caught(monkeypatch):
    from infx import sweepplan

    names = records.json_names
    monkeypatch.setattr(records, "json_names", lambda schema, pointer="": names(schema, pointer) + ("extra-field",))
    with pytest.raises(AssertionError, match="extra_field"):
        records.check_records([sweepplan.QueueLane])


def test_a_section_the_schema_names_and_the_class_does_not_is_caught(monkeypatch):
    from infx.launch import lane

    monkeypatch.setattr(lane.QueueSettings, "POINTER", "properties/slurm")
    with pytest.raises(AssertionError, match="QueueSettings and lane.schema.json properties/slurm disagree"):
        records.check_records([lane.QueueSettings])


def test_a_record_read_is_written_back_in_the_order_it_came():
    from infx.sweepplan import QueueLane

    data = {"queued": 1, "labels": ["a"], "runners": 2, "points": 3, "runner-hours": 1.5, "held": []}
    data["runners-needed"] = 0
    lane = QueueLane.from_data(data)
    assert lane.labels == ("a",) and list(lane.to_json()) == list(data) and lane.to_json() == data
    built = QueueLane.build(runners=1, labels=("b",), points=0, runner_hours=0.0, queued=0, held=(), runners_needed=0)
    assert list(built.to_json())[:2] == ["runners", "labels"]
