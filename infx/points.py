"""Identity of one sweep point, shared by the launcher, the workflows and the GitHub API.

A row's ``recipe-fingerprint`` fingerprints its topology (infx.matrix.derive.NOT_TOPOLOGY); the
point id adds the concurrency so every GitHub job, artifact and launch record of a sweep
has one stable, short name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import lru_cache

from .diagnostics import InfxError, UsageError, error
from .fsio import read_bytes
from .jsonfast import JSON_TYPES, JSONProblem, parse
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
    for name in ("single-node-fixed-seq-len", "multinode-fixed-seq-len", "single-node-agentic", "multinode-agentic"):
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
