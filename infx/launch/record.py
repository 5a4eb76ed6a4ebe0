"""The launch record, `<name>_launch.json`: one typed record, read and written through the field
names of its schema (infx/schemas/launch-record.schema.json), the one source of those names.

`infx launch` writes it (run.py builds it as the launch goes, then writes it through this type);
`infx results collect`, reuse and reruns read it once, at the boundary, through
``LaunchRecord.read`` and use its attributes after that.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .. import jsonfast
from ..points import concurrencies
from ..records import Record, order_kept
from ..scenarios import is_agentic
from ..schema import first_problem

SCHEMA = "launch-record"  # infx/schemas/launch-record.schema.json, as infx.schema loads it
SUFFIX = "_launch.json"
MAX_BYTES = 64 << 20  # a record carries the point and the tail of srtctl's output: far below this


class RecordError(ValueError):
    """A launch record the schema refuses; the message names the field."""


@dataclass(frozen=True, kw_only=True)
class LaunchRecord(Record):
    """One launch, as recorded (infx/records.py: attribute names are the schema's field names
    with `_` for `-`; a record without the names it was read with is written in the schema's
    order, the order run.py writes them)."""

    SCHEMA: ClassVar[str] = SCHEMA

    point: dict
    lane: str | None = None
    point_id: str | None = None
    route: str | None = None
    srt_slurm: dict | None = None
    sources: list = field(default_factory=list)
    prepare: list = field(default_factory=list)
    recipe_source: str | None = None
    resolved_recipe_sha256: str | None = None
    resolved_recipe: str | None = None
    result_key: str | None = None
    job_name: str | None = None
    job_id: str | int | None = None
    terminal_state: str | None = None
    slurm_exit_code: str | None = None
    exit_code: int | None = None
    deadline: dict | None = None
    signals: list = field(default_factory=list)
    cleanup: dict = field(default_factory=dict)
    result_name: str | None = None
    results: list = field(default_factory=list)
    message: str = ""
    timings: dict = field(default_factory=dict)
    eval: dict | None = None
    environment: dict = field(default_factory=dict)
    run_id: int | None = None
    run_attempt: int | None = None
    skipped: list = field(default_factory=list)
    srtctl: str | None = None
    # The JSON names the record was read with (or is to be written with), in their order: a
    # record round-trips byte for byte, and a field a record never had is not invented.
    present: tuple[str, ...] = order_kept()

    @classmethod
    def from_json(cls, data: Any) -> LaunchRecord:
        """The record in ``data`` (decoded JSON); RecordError naming the first field the schema refuses."""
        problem = first_problem(SCHEMA, data, "launch record")
        if problem is not None:
            raise RecordError(problem)
        return cls.from_data(data)

    @classmethod
    def read(cls, path: Path | str) -> LaunchRecord:
        """The record in a regular file (no symbolic link, FIFO or device; at most MAX_BYTES),
        read with the strict JSON reader. Raises OSError (fsio.UnusablePath) for the file,
        jsonfast.JSONProblem for its text, RecordError for its fields."""
        return cls.from_json(jsonfast.read(path, MAX_BYTES))

    def text(self) -> str:
        """The file's text: strict JSON (a NaN is a bug, never written), two-space indented, ASCII."""
        return jsonfast.text(self.to_json(), indent=2, ascii_only=True) + "\n"

    # --- what readers ask of a record -----------------------------------------------------

    @property
    def config_key(self) -> str | None:
        key = self.point.get("config-key")
        return key if isinstance(key, str) else None

    @property
    def concurrencies(self) -> list[int]:
        """The concurrencies the point planned that are integers (a record is read as written)."""
        return [c for c in concurrencies(self.point) if type(c) is int]

    @property
    def agentic(self) -> bool:
        return is_agentic(self.point)

    @property
    def srt_slurm_commit(self) -> str | None:
        commit = (self.srt_slurm or {}).get("commit")
        return commit if isinstance(commit, str) else None

    @property
    def finished_at(self) -> dt.datetime | None:
        """When the launch ended (timings.finished), as an aware time; None when absent or unreadable."""
        text = self.timings.get("finished")
        try:
            when = dt.datetime.fromisoformat(text) if isinstance(text, str) else None
        except ValueError:
            return None
        return when.replace(tzinfo=dt.UTC) if when is not None and when.tzinfo is None else when

    @property
    def ending(self) -> str:
        """Why the launch did not succeed, in one line: the first line of its message."""
        lines = self.message.strip().splitlines()
        return lines[0] if lines else "the launch did not finish"
