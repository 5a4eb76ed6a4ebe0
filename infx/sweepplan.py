"""The sweep plan, `plan.json`: one typed record, read and written through the field names of its
schema (infx/schemas/sweep-plan.schema.json), the one source of those names.

`infx plan` builds it (infx/changelog/plan.py ``plan_sweep``, then the run mode, reuse and the
queue check) and writes it through this type; `infx github report`, `select-points`,
`rerun-failed`, `infx reuse select` and `infx results check-evals --plan` read it once, at the
boundary, through ``SweepPlan.read`` (or ``from_json``) and use its attributes after that.

Two words are kept apart: the plan's ``mode`` is the run mode (infx/runmode.py: whether
points launch, and how the sweep is cut); the kind of changelog change the plan comes from (a pull
request's or a push to main, written as `changelog_metadata.mode`) is ``ChangelogMetadata.change_kind``.

Besides a plan, the reader takes what a plan may be made from: the rows `infx matrix --format json`
prints (a list, bucketed here) and a mapping of bucket names to rows (nested names joined by `/`).
"""

from __future__ import annotations

import json  # the standard writer: its separators are the plan files' bytes
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from .diagnostics import InfxError, UsageError, error
from .fsio import read_bytes
from .jsonfast import JSONProblem, parse
from .matrix import bucketize
from .matrix.rowschema import row_findings
from .points import Point
from .records import Record, each, order_kept, read_as, strings
from .runmode import Mode
from .schema import schema_findings
from .yamlio import parse_yaml

SCHEMA = "sweep-plan"  # infx/schemas/sweep-plan.schema.json, as infx.schema loads it
PLAN_HINT = "Pass the JSON written by `infx plan --format json` or `infx matrix --format json`."
ROW_HINT = 'Rows are checked as `infx matrix` checks the rows it builds (docs/matrix.md, "The row contract").'
ROW_KEYS = ("recipe-fingerprint", "runner", "config-key")  # an object with one of these is a row
GENERIC_CONTAINERS = ("rows", "points", "matrix")  # a mapping's rows under these keys are bucketed here
MAX_ROW_DIAGNOSTICS = 20  # every problem is one line; past this the rest are counted


class _PlanRecord(Record):
    """A part of the plan: its fields are the sweep-plan schema's at POINTER."""

    SCHEMA: ClassVar[str] = SCHEMA


@dataclass(frozen=True, kw_only=True)
class PlannedEntry(_PlanRecord):
    """One planned changelog entry: its fields (defaults written out), its 1-based position in the
    changelog and the config keys it resolved to."""

    POINTER: ClassVar[str] = "$defs/entry"

    config_keys: list[str]
    position: int
    resolved_keys: list[str]
    description: list[str] = field(default_factory=list)
    pr_link: str | None = None
    evals_only: bool = False
    all_evals: bool = False
    no_evals: bool = False
    append_only: bool = False
    eval_min_prefill_ep: int | None = None
    scenario_type: list[str] = field(default_factory=list)
    present: tuple[str, ...] = order_kept()


@dataclass(frozen=True, kw_only=True)
class ChangelogMetadata(_PlanRecord):
    """The changelog change a plan comes from (`changelog_metadata`)."""

    POINTER: ClassVar[str] = "$defs/changelog-metadata"
    RENAMED: ClassVar[dict[str, str]] = {"mode": "change_kind"}  # `mode` is the plan's run mode

    base_ref: str | None = None
    head_ref: str | None = None
    base: str | None = None
    head: str | None = None
    pr_number: int | None = None
    change_kind: str | None = None  # "pr" (a pull request's change) or "push" (main's), as the gate judged it
    pr_link: str | list[str] | None = None
    removed: list[dict] = field(default_factory=list)
    deleted_keys: list[str] = field(default_factory=list)
    entries: tuple[PlannedEntry, ...] = read_as(each(PlannedEntry), default=())
    resolved_keys: list[str] = field(default_factory=list)
    present: tuple[str, ...] = order_kept()


@dataclass(frozen=True, kw_only=True)
class ReusedPoint(_PlanRecord):
    """One point a stored result stands in for (infx/workflows/reuse.py): where the result comes
    from (``source_run`` is None when it was read from a folder) and the GPU-hours not spent."""

    POINTER: ClassVar[str] = "$defs/reused-point"

    point_id: str
    result_key: str
    source_run: int | None
    artifact: str
    folder: str
    gpu_hours: float
    present: tuple[str, ...] = order_kept()


@dataclass(frozen=True, kw_only=True)
class ReuseSummary(_PlanRecord):
    """The plan's `reuse`: the points reused instead of run, and why each other point runs
    (``notice``: why no stored result could be looked up, for some points or all)."""

    POINTER: ClassVar[str] = "$defs/reuse"

    reused: tuple[ReusedPoint, ...] = read_as(each(ReusedPoint))
    dispatch_reasons: dict[str, str]
    gpu_hours_saved: float
    notice: str = ""
    present: tuple[str, ...] = order_kept()


@dataclass(frozen=True, kw_only=True)
class QueueLane(_PlanRecord):
    """One lane's share of the sweep, as the queue check (infx/workflows/queue.py) found it."""

    POINTER: ClassVar[str] = "$defs/queue-lane"

    labels: tuple[str, ...] = read_as(strings)
    runners: int
    points: int
    runner_hours: float
    queued: int
    held: tuple[str, ...] = read_as(strings)
    runners_needed: int
    present: tuple[str, ...] = order_kept()


@dataclass(frozen=True, kw_only=True)
class QueueCheck(_PlanRecord):
    """The plan's `queue`: per lane, the points that start within GitHub's queue limit; ``held``
    (every lane's held points, in plan order) are not fanned out."""

    POINTER: ClassVar[str] = "$defs/queue"

    limit_hours: float
    lanes: tuple[QueueLane, ...] = read_as(each(QueueLane))
    held: tuple[str, ...] = read_as(strings)
    present: tuple[str, ...] = order_kept()


@dataclass(frozen=True, kw_only=True)
class LabelLane(_PlanRecord):
    """One runner label of the plan and the lane that serves it, as the lane check
    (infx/launch/lanecheck.py) found it: ``lane`` None when no profile does."""

    POINTER: ClassVar[str] = "$defs/label-lane"

    label: str
    lane: str | None
    status: str  # LANE_SERVED, or why its points are held: LANE_MISSING, LANE_EXCLUDED
    points: int
    gpu_hours: float
    present: tuple[str, ...] = order_kept()

    @property
    def held(self) -> bool:
        return self.status != LANE_SERVED


LANE_SERVED, LANE_MISSING, LANE_EXCLUDED = "served", "no-lane", "excluded"  # LabelLane.status


def _sweep_lanes(value: Any) -> str | tuple[str, ...] | None:
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True, kw_only=True)
class LaneCheck(_PlanRecord):
    """The plan's `lanes`: every runner label's lane, and the points held because they have none
    (or sweep.lanes leaves it out); ``held`` (in plan order) are not fanned out."""

    POINTER: ClassVar[str] = "$defs/lanes"

    sweep_lanes: str | tuple[str, ...] | None = read_as(_sweep_lanes)
    labels: tuple[LabelLane, ...] = read_as(each(LabelLane))
    held: tuple[str, ...] = read_as(strings)
    present: tuple[str, ...] = order_kept()

    def lane_of(self, label: str) -> LabelLane | None:
        return next((item for item in self.labels if item.label == label), None)


@dataclass(frozen=True)
class Canary(_PlanRecord):
    """The point that runs alone first, and the bucket it leaves."""

    POINTER: ClassVar[str] = "properties/canary"

    id: str
    bucket: str


@dataclass(frozen=True)
class SweepPlan(_PlanRecord):
    """One sweep plan. ``mode`` is the run mode; ``reuse`` what the reuse decision
    (infx/workflows/reuse.py) left out of the buckets, ``queue`` what the queue check
    (infx/workflows/queue.py) held back, ``lanes`` each point's lane and the points held for want
    of one (infx/launch/lanecheck.py)."""

    buckets: dict[str, list[dict]]
    changelog_metadata: ChangelogMetadata | None = None
    reuse: ReuseSummary | None = None
    mode: Mode | None = None
    canary: Canary | None = None  # written (null when None) whenever ``mode`` is
    queue: QueueCheck | None = None
    lanes: LaneCheck | None = None

    DERIVED: ClassVar[frozenset[str]] = frozenset({"point-count"})  # counted from the buckets

    @property
    def point_count(self) -> int:
        return sum(map(len, self.buckets.values()))

    @property
    def rows(self) -> list[dict]:
        """Every row, bucket after bucket."""
        return [row for rows in self.buckets.values() for row in rows]

    @cached_property
    def point_buckets(self) -> dict[str, tuple[Point, ...]]:
        """The buckets' points, each read once from its row (the rows passed the row schema)."""
        return {name: Point.from_rows(rows) for name, rows in self.buckets.items()}

    @property
    def points(self) -> tuple[Point, ...]:
        """Every point, bucket after bucket."""
        return tuple(point for points in self.point_buckets.values() for point in points)

    @property
    def reused(self) -> tuple[ReusedPoint, ...]:
        """The reused points; none without reuse."""
        return self.reuse.reused if self.reuse else ()

    @property
    def held(self) -> set[str]:
        """The ids of the points held back: by the queue check, or by the lane check (no lane)."""
        return set(self.queue.held if self.queue else ()) | self.lane_held

    @property
    def lane_held(self) -> set[str]:
        """The ids of the points the lane check held (no lane serves their runner label)."""
        return set(self.lanes.held) if self.lanes else set()

    def lane_of(self, row: dict) -> LabelLane | None:
        """The lane check's finding for the point's runner label; None when the plan has no lane check."""
        return self.lanes.lane_of(str(row.get("runner", ""))) if self.lanes else None

    def fan_out(self) -> tuple[dict[str, list[dict]], list[dict]]:
        """(buckets for the fan-out, the canary rows): the canary runs alone first, so it leaves its
        bucket; the points the queue check or the lane check held back are not fanned out."""
        canary, held = self.canary, self.held
        if not canary and not held:
            return self.buckets, []
        buckets: dict[str, list[dict]] = {}
        picked: list[dict] = []
        for bucket, rows in self.buckets.items():
            kept = []
            for row, point in zip(rows, self.point_buckets[bucket], strict=True):
                if canary and not picked and bucket == canary.bucket and point.id == canary.id:
                    picked.append(row)
                elif point.id not in held:
                    kept.append(row)
            if kept:
                buckets[bucket] = kept
        return buckets, picked

    def to_json(self) -> dict:
        values = {
            "buckets": self.buckets,
            "point-count": self.point_count,
            "changelog_metadata": self.changelog_metadata.to_json() if self.changelog_metadata else None,
            "reuse": self.reuse.to_json() if self.reuse else None,
            "mode": self.mode.to_json() if self.mode else None,
            "canary": self.canary.to_json() if self.canary else None,
            "queue": self.queue.to_json() if self.queue else None,
            "lanes": self.lanes.to_json() if self.lanes else None,
        }
        written = {name for name, value in values.items() if value is not None} | ({"canary"} if self.mode else set())
        return {name: values[name] for name in self.json_names() if name in written}

    def text(self, indent: int | None = None, ensure_ascii: bool = False) -> str:
        """The plan's JSON text: strict (a NaN is a bug, never written), as the writers have always written it."""
        return json.dumps(self.to_json(), indent=indent, ensure_ascii=ensure_ascii, allow_nan=False)

    @classmethod
    def read(cls, path: Path | str) -> SweepPlan:
        """The plan in a file. A missing or unusable file (a folder, a FIFO) is a usage error (exit 2);
        text that is not JSON, or that is no plan, or whose rows break the row contract, a located
        `plan-json` error (exit 1)."""
        raw = read_raw(Path(path))
        return cls.from_json(parse_located(raw, str(path)), str(path), lambda: raw)

    @classmethod
    def from_json(cls, data: Any, file: str = "<plan>", raw: Callable[[], bytes | None] | None = None) -> SweepPlan:
        """The plan in ``data`` (decoded JSON), every problem an InfxError located in ``file``
        (``raw`` gives the file's bytes, read for positions only when there is a problem)."""
        if isinstance(data, dict) and "buckets" in data:
            found = schema_findings(SCHEMA, data, root_label="the plan")
            if found:  # every problem, each at its field; the one rule of a plan that is no plan
                locate = _locator(raw)
                raise InfxError(
                    [
                        error(
                            file,
                            locate(path),
                            "plan-json",
                            f"{message} (at {_shown(path)})",
                            f"{hint} {PLAN_HINT}".strip(),
                        )
                        for path, _, message, hint in found[:MAX_ROW_DIAGNOSTICS]
                    ]
                )
            _check_rows(
                file,
                raw,
                [
                    (("buckets", name, index), row)
                    for name, rows in data["buckets"].items()
                    for index, row in enumerate(rows)
                ],
            )
            metadata, reuse, canary, queue, lanes = (
                data.get(name) for name in ("changelog_metadata", "reuse", "canary", "queue", "lanes")
            )
            return cls(
                data["buckets"],
                ChangelogMetadata.from_data(metadata) if metadata is not None else None,
                ReuseSummary.from_data(reuse) if reuse is not None else None,
                Mode.from_json(data["mode"]) if "mode" in data else None,
                Canary.from_data(canary) if canary else None,
                QueueCheck.from_data(queue) if queue is not None else None,
                LaneCheck.from_data(lanes) if lanes is not None else None,
            )
        return cls(_rows_plan(data, file, raw))


# --- reading: the file, its JSON, the shapes a plan is made from ---------------------------------


def read_raw(path: Path, what: str = "plan file", hint: str = PLAN_HINT) -> bytes:
    """A file infx wrote earlier; missing or unusable (a folder, a FIFO) is a usage error (exit 2)."""
    try:
        return read_bytes(path)
    except FileNotFoundError:
        raise UsageError(f"the {what} does not exist", hint, str(path)) from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the {what}: {getattr(exc, 'strerror', None) or exc}", hint, str(path)) from None


def parse_located(raw: bytes, file: str, what: str = "plan file", hint: str = PLAN_HINT) -> Any:
    """JSON within infx's limits, else a located error (exit 1) whose rule names the file's kind."""
    try:
        return parse(raw)
    except JSONProblem as exc:
        rule = what.removesuffix(" file").replace(" ", "-") + "-json"  # plan-json, lane-gate-json
        raise InfxError(
            error(file, (exc.line or 1, exc.column), rule, f"cannot read the {what}: {exc.message}", hint)
        ) from None


def read_json(path: Path, what: str = "plan file", hint: str = PLAN_HINT) -> Any:
    """A JSON document infx wrote earlier (a lane gate): exit 2 for the file, a located error for its text."""
    return parse_located(read_raw(path, what, hint), str(path), what, hint)


def _rows_plan(data: Any, file: str, raw: Callable[[], bytes | None] | None) -> dict[str, list[dict]]:
    """The buckets of a list of rows, or of a mapping of bucket names to rows."""
    if isinstance(data, list) and not all(isinstance(row, dict) for row in data):
        raise InfxError(
            error(file, (1, 1), "plan-json", "the plan is a list, but not of rows (JSON objects)", PLAN_HINT)
        )
    if not isinstance(data, (list, dict)):
        raise InfxError(
            error(file, (1, 1), "plan-json", "the plan must be a list of rows or an object of buckets", PLAN_HINT)
        )
    if isinstance(data, list) and not _is_rows(data) and data:
        raise InfxError(
            error(
                file,
                (1, 1),
                "plan-json",
                f"the plan's items are not all rows (objects with one of {', '.join(ROW_KEYS)})",
                PLAN_HINT,
            )
        )
    _check_rows(file, raw, list(_rows_in(data)))  # before bucketing: bucket names are made from row values
    if isinstance(data, list):
        return bucketize(data) if data else {}
    return _named_buckets(data)


def _is_rows(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, dict) and any(key in item for key in ROW_KEYS) for item in value)
    )


def _named_buckets(data: dict) -> dict[str, list[dict]]:
    """Bucket name -> rows of a mapping: nested names joined by `/`; rows under a generic
    container (`rows`, `points`, `matrix`) bucketed; keys holding no rows (metadata) ignored."""
    buckets: dict[str, list[dict]] = {}

    def walk(value: Any, path: tuple[str, ...]) -> None:
        if _is_rows(value):
            if path and path[-1] in GENERIC_CONTAINERS:
                for name, rows in bucketize(value).items():
                    buckets.setdefault(name, []).extend(rows)
            else:
                buckets.setdefault("/".join(path) or "all", []).extend(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, path + (str(key),))

    walk(data, ())
    return buckets


def _rows_in(data: Any, where: tuple = ()) -> Iterator[tuple[tuple, dict]]:
    """(JSON path, row) of every object in a list that has a row's keys, however deep."""
    if isinstance(data, list):
        for index, item in enumerate(data):
            if isinstance(item, dict) and any(key in item for key in ROW_KEYS):
                yield where + (index,), item
            else:
                yield from _rows_in(item, where + (index,))
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _rows_in(value, where + (key,))


def _check_rows(file: str, raw: Callable[[], bytes | None] | None, rows: list[tuple[tuple, dict]]) -> None:
    """Every row against the row contract; each problem located at its field (the first MAX_ROW_DIAGNOSTICS)."""
    problems = [(where, index, *found) for index, (where, row) in enumerate(rows) for found in row_findings(row)]
    if not problems:
        return
    locate = _locator(raw)
    diagnostics = []
    for where, index, path, rule, message, hint in problems[:MAX_ROW_DIAGNOSTICS]:
        diagnostics.append(
            error(
                file,
                locate(where + tuple(path)),
                rule,
                f"row {index} (at {_shown(where)}): {message}",
                hint + (" " if hint else "") + ROW_HINT,
            )
        )
    if len(problems) > MAX_ROW_DIAGNOSTICS:
        diagnostics.append(
            error(
                file,
                None,
                "plan-row-count",
                f"{len(problems) - MAX_ROW_DIAGNOSTICS} more row problem(s) not shown",
                "Fix the ones above and run again.",
            )
        )
    raise InfxError(diagnostics)


def _shown(where: tuple) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in where)


def _locator(raw: Callable[[], bytes | None] | None) -> Callable[[tuple], tuple[int, int] | None]:
    """Path -> (line, column) in the plan's text (JSON is YAML: its loader gives positions)."""
    text = raw() if raw is not None else None
    try:
        doc = parse_yaml(text, "<plan>")[0] if text is not None else None
    except (OSError, ValueError):
        doc = None
    return (lambda path: doc.where(path)) if doc is not None else (lambda path: None)
