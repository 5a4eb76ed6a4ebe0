"""The launch record (infx/launch/record.py): one type, read and written through the field names
of its schema (infx/schemas/launch-record.schema.json)."""

from __future__ import annotations

import json

import pytest

from infx.launch.record import LaunchRecord, RecordError
from infx.launch.staging import write_record
from infx.records import check_records
from testing.launchkit import point

KEY = "e" * 64


def launcher_record() -> dict:
    """A record as run.py builds it by the end of a launch (every field, in its order)."""
    return {
        "lane": "gb300-nv",
        "point-id": "ab-c4",
        "point": point(),
        "route": "fixed",
        "srt-slurm": {"pin": "v1", "repository": "https://x", "ref": "v1", "commit": "a" * 40},
        "sources": [],
        "prepare": [],
        "recipe-source": "recipes/x.yaml",
        "resolved-recipe-sha256": None,
        "resolved-recipe": None,
        "result-key": KEY,
        "job-name": "runner_1",
        "job-id": "77",
        "terminal-state": "COMPLETED",
        "slurm-exit-code": "0:0",
        "exit-code": 0,
        "deadline": {"time-limit": "1:00", "margin-seconds": 2.0, "seconds": 62.0, "passed": False},
        "signals": [],
        "cleanup": {"confirmed": True, "cancelled": [], "errors": []},
        "result-name": "dsv4_ab-c4",
        "results": ["x.json"],
        "message": "job 77 completed; 1 result file(s) \u2014 \u00fcn\u00efcode",
        "timings": {"started": "2026-12-01T00:00:00+00:00", "checkout-seconds": 1.5, "finished": "2026-12-01T00:05:00"},
        "eval": None,
        "environment": {"RESULT_FILENAME": "dsv4_ab-c4", "INFMAX_WORKSPACE": "/x/out"},
        "run-id": 9,
        "run-attempt": 1,
        "skipped": ["job logs: pipe: a FIFO, not copied"],
        "srtctl": "/x/srtctl",
    }


def test_the_record_type_and_its_schema_name_the_same_fields():
    check_records([LaunchRecord])
    assert LaunchRecord.json_names() == tuple(launcher_record())  # the schema's order is the order run.py writes


def test_the_launcher_writes_its_record_through_the_type_byte_for_byte(tmp_path):
    """What run.py builds, written through LaunchRecord: the bytes json.dumps(indent=2) gave
    before, key order and ASCII escapes included; read back, the same record."""
    record, path = launcher_record(), tmp_path / "x_launch.json"
    write_record(path, record)
    assert path.read_text() == json.dumps(record, indent=2) + "\n"
    assert LaunchRecord.read(path).to_json() == record
    minimal = {"point": {"conc": [4]}, "exit-code": 0}
    assert list(LaunchRecord.from_json(minimal).to_json()) == ["point", "exit-code"]  # nothing invented
    with pytest.raises(RecordError, match="launch record.run-id"):
        write_record(path, {**record, "run-id": "nine"})
    with pytest.raises(RecordError, match="'evil' was unexpected"):
        write_record(path, {**record, "evil": 1})
    with pytest.raises(ValueError):  # never the non-JSON NaN
        write_record(path, {**record, "timings": {"run-seconds": float("nan")}})
    assert json.loads(path.read_text()) == record  # a refused write left the file as it was


def test_a_record_read_once_gives_typed_attributes(tmp_path):
    path = tmp_path / "x_launch.json"
    write_record(path, launcher_record())
    record = LaunchRecord.read(path)
    assert record.config_key == "test-key" and record.concurrencies == [4] and record.result_key == KEY
    assert record.srt_slurm_commit == "a" * 40 and record.exit_code == 0 and not record.agentic
    assert str(record.finished_at) == "2026-12-01 00:05:00+00:00"  # a time without a zone is UTC
    failed = LaunchRecord.from_json(
        {"point": point(agentic=True, conc=(4, "x")), "message": "\njob 7: FAILED\nits output"}
    )
    assert (
        failed.agentic
        and failed.concurrencies == [4]
        and failed.ending == "job 7: FAILED"
        and failed.finished_at is None
    )
