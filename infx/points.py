"""One sweep point: the matrix row as a typed record (``Point``), its identity, concurrencies and
GPU-hours, shared by the launcher, the workflows and the GitHub API.

A row's ``recipe-fingerprint`` fingerprints its topology (infx.matrix.derive.NOT_TOPOLOGY); the
point id adds the concurrency so every GitHub job, artifact and launch record of a sweep
has one stable, short name.

``Point`` is read once from a row that passed its schema (infx/schemas/row.schema.json, four
kinds of row): its attributes are the row's field names with `_` for `-`, and it writes the row
back as it came (key order kept). Reads a point file or $POINT_JSON (``read_point``); no other
effects.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, ClassVar

from . import scenarios
from .diagnostics import InfxError, UsageError, error
from .fsio import read_bytes
from .jsonfast import JSON_TYPES, JSONProblem, parse
from .records import Record, order_kept
from .schema import load_schema
from .workers import point_gpus

MAX_POINT_BYTES = 1024 * 1024  # a matrix row is about 1 KB
DEFAULT_POINT_SECONDS = 1800  # a fixed-seq-len benchmark run (agentic rows carry their duration)
POINT_HINT = "A point is one matrix row as a JSON object (`infx matrix --format json` prints them)."


def concurrencies(row: dict) -> list:
    """The concurrencies a row runs, as a new list: a multinode row lists them, a single-node row has one."""
    conc = row.get("conc")
    return list(conc) if isinstance(conc, list) else [conc]


def benchmark_hours(row: dict) -> float:
    """A point's benchmark time in hours: its duration (DEFAULT_POINT_SECONDS for fixed-seq-len) per concurrency run."""
    return (row.get("duration") or DEFAULT_POINT_SECONDS) * len(concurrencies(row)) / 3600


def gpu_hours(row: dict) -> float:
    """The one GPU-hours estimate of a point (the plan's summary and comment, reuse's savings, the canary):
    the GPUs it occupies times its benchmark time."""
    return point_gpus(row) * benchmark_hours(row)


def point_id(row: dict) -> str:
    concs = concurrencies(row)
    fingerprint = str(row.get("recipe-fingerprint", "nofingerprint"))[:16]
    return f"{fingerprint}-c{'x'.join(str(c) for c in concs)}"


ROW_KINDS = ("single-node-fixed-seq-len", "multinode-fixed-seq-len", "single-node-agentic", "multinode-agentic")


@cache
def row_field_names() -> tuple[str, ...]:
    """Every field a row of any of the four kinds may hold, in the order the schema first names it."""
    defs = load_schema("row")["$defs"]
    return tuple(dict.fromkeys(name for kind in ROW_KINDS for name in defs[kind]["properties"]))


@cache
def required_row_fields() -> tuple[str, ...]:
    """The fields every kind of row requires, in the schema's order."""
    defs = load_schema("row")["$defs"]
    required = [set(defs[kind]["required"]) for kind in ROW_KINDS]
    return tuple(name for name in row_field_names() if all(name in names for names in required))


@dataclass(frozen=True, kw_only=True)
class Point(Record):
    """One point, read once from its row (``from_row``, ``from_rows``, ``read``). The fields every
    kind of row requires have no default; the others are None when the row's kind has none."""

    SCHEMA: ClassVar[str] = "row"

    image: str
    model: str
    model_prefix: str
    precision: str
    framework: str
    runner: str
    spec_decoding: str
    conc: int | list[int]  # a multinode row lists its concurrencies (``concurrencies`` reads both)
    exp_name: str
    run_eval: bool
    config_key: str
    recipe_fingerprint: str
    isl: int | None = None
    osl: int | None = None
    tp: int | None = None
    pp: int | None = None
    dcp_size: int | None = None
    pcp_size: int | None = None
    max_model_len: int | None = None
    ep: int | None = None
    dp_attn: bool | None = None
    disagg: bool | None = None
    eval_only: bool | None = None
    eval_protocol: dict | None = None
    router: dict | None = None
    result_key: str | None = None
    prefill: dict | None = None
    decode: dict | None = None
    eval_conc: int | None = None
    eval_all_concs: bool | None = None
    kv_p2p_transfer: str | None = None
    node_count: int | None = None
    kv_offloading: str | None = None
    kv_offload_backend: dict | None = None
    total_cpu_dram_gb: int | None = None
    duration: int | None = None
    warmup_requests_per_lane: int | None = None
    scenario_type: str | None = None
    present: tuple[str, ...] = order_kept()

    @classmethod
    def json_names(cls) -> tuple[str, ...]:
        return row_field_names()

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Point:
        """The point of a row that passed the row schema (infx.matrix.rowschema's checks)."""
        return cls.from_data(row)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> tuple[Point, ...]:
        """The points of rows that passed the row schema (a plan's, a bucket's), in their order."""
        return tuple(cls.from_data(row) for row in rows)

    @classmethod
    def read(cls, path: str | None, env: Mapping[str, str] | None = None) -> Point:
        """The point in a JSON file, else in $POINT_JSON, as ``read_point`` reads it (exit 2 for no
        point or an unusable file, a located error for its text); a point without the fields every
        row has is a `point-json` error naming them."""
        row, name, _ = read_point(path, env)
        missing = [field_name for field_name in required_row_fields() if field_name not in row]
        if missing:
            raise InfxError(error(name, (1, 1), "point-json", f"the point has no {', '.join(missing)}", POINT_HINT))
        return cls.from_row(row)

    def row(self) -> dict:
        """The row, as it was read (key order kept): what a point file and $POINT_JSON hold."""
        return self.to_json()

    def with_result_key(self, key: str) -> Point:
        """The point with its result key set (written where the row had one, else last)."""
        return self.completed(result_key=key)

    # --- what readers ask of a point --------------------------------------------------------

    @property
    def id(self) -> str:
        return point_id(self.row())

    @property
    def concurrencies(self) -> tuple[int, ...]:
        return tuple(concurrencies(self.row()))

    @property
    def agentic(self) -> bool:
        return scenarios.is_agentic(self.row())

    @property
    def scenario(self) -> str:
        """The scenario kind (infx/scenarios.py): agentic-coding or fixed-seq-len."""
        return scenarios.scenario_type(self.row())

    @property
    def asks_eval(self) -> bool:
        """Whether the row asks for an eval (`run-eval`, or `eval-only`: the eval alone). Which
        concurrencies it runs, and a worker's EVAL_ONLY setting, are infx.evalsuite.PointEval's."""
        return self.run_eval or self.eval_only is True

    @property
    def gpu_hours(self) -> float:
        return gpu_hours(self.row())


@lru_cache(maxsize=1)
def _row_types() -> dict:
    """The JSON type of every field the row schema declares (all four kinds of row merged):
    {"types": set | None, "properties": {...}, "items": {...} | None}."""
    defs = load_schema("row")["$defs"]

    def resolve(node: dict) -> dict:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def merge(shape: dict, node: dict) -> None:
        node = resolve(node)
        declared = node.get("type")
        if "enum" in node:
            declared = sorted(
                {next(t for t, test in JSON_TYPES.items() if t != "integer" and test(v)) for v in node["enum"]}
            )
        if declared is not None:
            shape["types"] = (shape["types"] or set()) | set([declared] if isinstance(declared, str) else declared)
        for variant in node.get("anyOf", []):
            merge(shape, variant)
        for key, child in node.get("properties", {}).items():
            merge(shape["properties"].setdefault(key, _empty()), child)
        if "items" in node:
            shape["items"] = shape["items"] or _empty()
            merge(shape["items"], node["items"])

    root = _empty()
    for name in ROW_KINDS:
        merge(root, defs[name])
    return root


def _empty() -> dict:
    return {"types": None, "properties": {}, "items": None}


def type_problem(data, shape: dict | None = None, path: tuple = ()) -> tuple[tuple, str] | None:
    """(path, message) of the first value whose JSON type the row schema does not declare there.
    Only types: the launcher and the workflows iterate and index these values, so a wrong type
    must stop at the reader; which keys are required is the row schema's business."""
    shape = shape or _row_types()
    types = shape["types"]
    if types and not any(JSON_TYPES[t](data) for t in types):
        where = ".".join(str(p) for p in path) or "the point"
        return path, f"{where} is {_json_type(data)} {_shown(data)}; a matrix row has {' or '.join(sorted(types))} here"
    if isinstance(data, dict):
        for key, value in data.items():
            child = shape["properties"].get(key)
            if child is not None and (found := type_problem(value, child, path + (key,))):
                return found
    elif isinstance(data, list) and shape["items"] is not None:
        for index, value in enumerate(data):
            if found := type_problem(value, shape["items"], path + (index,)):
                return found
    return None


def _json_type(value) -> str:
    return next(
        (
            name
            for name in ("null", "boolean", "integer", "number", "string", "array", "object")
            if JSON_TYPES[name](value)
        ),
        "value",
    )


def _shown(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:60] + "…"


def read_point(path: str | None, env: Mapping[str, str] | None = None) -> tuple[dict, str, str]:
    """(row, name, text) of the point in a JSON file, else in $POINT_JSON (what workflows set).

    No point at all, or a missing or unreadable file (a folder, a FIFO), is a usage error
    (exit 2); text that is not one JSON object whose values have the row schema's types is a
    located error (exit 1).
    """
    env = os.environ if env is None else env
    if path:
        try:
            raw = read_bytes(path, limit=MAX_POINT_BYTES)
        except (OSError, ValueError) as exc:
            reason = (
                "it does not exist"
                if isinstance(exc, FileNotFoundError)
                else getattr(exc, "strerror", None) or str(exc)
            )
            raise UsageError(
                f"cannot read the point file: {reason}",
                "Pass --point with a matrix row saved as JSON, or set POINT_JSON.",
                file=path[:200],
            ) from None
        if len(raw) > MAX_POINT_BYTES:
            raise InfxError(
                error(path, None, "point-json", f"the point file is larger than {MAX_POINT_BYTES:,} bytes", POINT_HINT)
            )
        text, name = raw.decode("utf-8", errors="replace"), path
    elif env.get("POINT_JSON"):
        text, name = env["POINT_JSON"], "$POINT_JSON"
    else:
        raise UsageError("no point given", "Pass --point FILE or set POINT_JSON to one matrix row (JSON).")
    try:
        data = parse(text)
    except JSONProblem as exc:
        raise InfxError(
            error(name, (exc.line or 1, exc.column), "point-json", f"cannot read the point: {exc.message}", POINT_HINT)
        ) from None
    if not isinstance(data, dict):
        raise InfxError(error(name, (1, 1), "point-json", "the point must be a JSON object", POINT_HINT))
    found = type_problem(data)
    if found is not None:
        where, message = found
        raise InfxError(error(name, _position(text, name, where), "point-type", message, POINT_HINT))
    return data, name, text


def _position(text: str, name: str, path: tuple) -> tuple[int, int]:
    from .yamlio import parse_yaml  # JSON is YAML: its loader knows the line and column of every key

    doc, _ = parse_yaml(text, name)
    return doc.where(path) if doc is not None else (1, 1)
