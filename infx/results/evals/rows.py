"""The typed records of results.json's `evals` (the eval rows, sets and collection, bound to
infx/schemas/eval-row.schema.json) and the values a row takes from meta_env.json. No effects."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from ...diagnostics import Diagnostic, error
from ...points import concurrencies
from ...records import Record, each, read_as, write_as
from .rules import HINTS

EVAL_ROW_SCHEMA = "eval-row"  # infx/schemas/eval-row.schema.json
UNKNOWN = "unknown"  # the reference's value for a meta_env.json field that is missing


# --- typed records -------------------------------------------------------------------------


class _EvalRecord(Record):
    """A record of results.json's `evals`: its fields are the eval-row schema's at POINTER."""

    SCHEMA: ClassVar[str] = EVAL_ROW_SCHEMA


def _concs(values: Any) -> tuple[int, ...] | None:
    return None if values is None else tuple(values)


# The fields that say what an eval row is a score of (EvalRow.identity): its match with the baseline.
IDENTITY_FIELDS = (
    "config_key",
    "model_prefix",
    "hw",
    "framework",
    "precision",
    "spec_decoding",
    "isl",
    "osl",
    "is_multinode",
    "tp",
    "ep",
    "prefill_tp",
    "prefill_ep",
    "prefill_num_workers",
    "decode_tp",
    "decode_ep",
    "decode_num_workers",
    "dp_attention",
    "conc",
    "task",
)


@dataclass(frozen=True)
class EvalProtocol(_EvalRecord):
    """What lm-eval recorded it ran (the protocol a score belongs to)."""

    POINTER: ClassVar[str] = "$defs/protocol"

    lm_eval_version: str | None
    n_shot: int | None
    max_gen_toks: int | None
    temperature: float | None
    chat_template: bool
    fewshot_as_multiturn: bool | None
    limit: float | None


@dataclass(frozen=True, kw_only=True)
class EvalRow(_EvalRecord):
    """One point at one concurrency for one task: the reference's eval row plus infx's fields."""

    POINTER: ClassVar[str] = "$defs/row"

    is_multinode: bool
    model_prefix: str
    model: str
    hw: str
    framework: str
    precision: str
    spec_decoding: str
    isl: int
    osl: int
    tp: int
    ep: int
    prefill_tp: int
    prefill_ep: int
    prefill_num_workers: int
    decode_tp: int
    decode_ep: int
    decode_num_workers: int
    conc: int
    dp_attention: str
    prefill_dp_attention: str
    decode_dp_attention: str
    task: str
    em_strict: float | None
    em_strict_se: float | None
    em_flexible: float | None
    em_flexible_se: float | None
    n_eff: int | None
    source: str
    score: float | None
    score_name: str | None
    score_se: float | None
    config_key: str | None
    point_id: str | None
    result_key: str | None
    run_id: int | None
    run_attempt: int | None
    lane: str | None
    artifact: str | None
    protocol: EvalProtocol = read_as(EvalProtocol.from_data)

    def identity(self) -> tuple:
        """What a score is a score of, whichever run measured it: the config key, the model, the
        hardware, engine, precision, sequence lengths, topology, concurrency and task (not the
        result key: a change of recipe is what a comparison with the baseline measures)."""
        return tuple(getattr(self, name) for name in IDENTITY_FIELDS)

    @property
    def who(self) -> str:
        """The row's point in a message: `point <id> (<config-key>)`, or its eval folder."""
        if self.point_id:
            return f"point {self.point_id} ({self.config_key or 'unknown config key'})"
        return f"eval folder {Path(self.source).parent}"


@dataclass(frozen=True)
class EvalProblem(_EvalRecord):
    POINTER: ClassVar[str] = "$defs/problem"

    rule: str  # one of RULES
    file: str
    message: str


@dataclass(frozen=True)
class ResultFile(_EvalRecord):
    POINTER: ClassVar[str] = "$defs/result-file"

    file: str
    conc: int | None  # the `_conc<N>` suffix
    date: float  # lm-eval's recorded start time, else the file's modification time
    used: bool  # its rows were taken


@dataclass(frozen=True)
class EvalIdentity:
    """The point an eval folder belongs to, from its artifact's launch record (all None: standalone)."""

    config_key: str | None = None
    point_id: str | None = None
    result_key: str | None = None
    run_id: int | None = None
    run_attempt: int | None = None
    lane: str | None = None
    artifact: str | None = None
    model_prefix: str | None = None  # the point's, used when meta_env.json has none
    eval_concs: tuple[int, ...] | None = None  # what the point asked the eval to run

    @classmethod
    def from_launch_record(cls, record: dict, artifact: str) -> EvalIdentity:
        """The point of a launch record (decoded JSON). The concurrencies asked for are the ones
        the launch passed as EVAL_CONC (the record's `eval.concs`), else read from the point."""
        point = got if isinstance(got := record.get("point"), dict) else {}
        launched = got if isinstance(got := record.get("eval"), dict) else {}
        if (
            isinstance(launched.get("concs"), list)
            and launched["concs"]
            and all(_is_whole(c) for c in launched["concs"])
        ):
            wanted: tuple[int, ...] | None = tuple(launched["concs"])
        elif point.get("eval-all-concs") is True:
            wanted = tuple(c for c in concurrencies(point) if _is_whole(c))
        else:
            wanted = (point["eval-conc"],) if _is_whole(point.get("eval-conc")) else None
        return cls(
            _text(point.get("config-key")),
            _text(record.get("point-id")),
            _text(point.get("result-key")) or _text(record.get("result-key")),
            _positive(record.get("run-id")),
            _positive(record.get("run-attempt")),
            _text(record.get("lane")),
            artifact,
            _text(point.get("model-prefix")),
            wanted or None,
        )

    def row_fields(self) -> dict:
        return {
            "config_key": self.config_key,
            "point_id": self.point_id,
            "result_key": self.result_key,
            "run_id": self.run_id,
            "run_attempt": self.run_attempt,
            "lane": self.lane,
            "artifact": self.artifact,
        }


STANDALONE = EvalIdentity()


@dataclass(frozen=True)
class EvalSet(_EvalRecord):
    """One eval folder: its rows (written as their count; results.json holds them in `rows`), its
    result files and what is wrong with it."""

    POINTER: ClassVar[str] = "$defs/set"

    folder: str
    config_key: str | None
    point_id: str | None
    model_prefix: str
    batched: bool
    eval_concs: tuple[int, ...] | None = read_as(_concs)
    completed_eval_concs: tuple[int, ...] | None = read_as(_concs)
    failed_eval_concs: tuple[int, ...] | None = read_as(_concs)
    results: tuple[ResultFile, ...] = read_as(each(ResultFile))
    rows: tuple[EvalRow, ...] = write_as(len)
    problems: tuple[EvalProblem, ...] = read_as(each(EvalProblem))

    def verdict_reasons(self) -> list[str]:
        """Why the set makes its eval point invalid (empty: it does not): `eval-missing` when it gives
        no eval row, then each of its problems under its rule id."""
        reasons = [f"{p.rule}: {p.message}" for p in self.problems]
        if not self.rows and not any(p.rule == "eval-missing" for p in self.problems):
            reasons.insert(0, f"eval-missing: {self.folder} gives no eval row (no usable lm-eval task score)")
        return reasons

    def without_rows(self) -> EvalSet:
        """The set of a point whose verdict is not ok: its problems stay, its rows are not results."""
        return replace(self, rows=())


@dataclass(frozen=True)
class EvalCollection(_EvalRecord):
    """Every eval folder read: results.json's `evals` (`{"rows": [...], "sets": [...]}`)."""

    POINTER: ClassVar[str] = "$defs/evals"
    DERIVED: ClassVar[frozenset[str]] = frozenset({"rows"})  # every set's rows, in set order

    sets: tuple[EvalSet, ...] = ()

    @property
    def rows(self) -> list[EvalRow]:
        return [row for found in self.sets for row in found.rows]

    @property
    def problems(self) -> list[EvalProblem]:
        return [problem for found in self.sets for problem in found.problems]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Each problem as an error located at its file (a collect step can print them)."""
        return [error(p.file, None, p.rule, p.message, HINTS.get(p.rule, "")) for p in self.problems]

    def without_duplicate_rows(self) -> EvalCollection:
        """One row per point (its result key, else its point id; a folder on its own: the row's
        identity), concurrency and task: the newest (run id, run attempt, the time of its result
        file), so folders of a re-run collected together never count a score twice."""
        dates = {str(Path(found.folder) / item.file): item.date for found in self.sets for item in found.results}
        best: dict[tuple, tuple[tuple, EvalRow]] = {}
        for row in self.rows:
            key = (row.result_key or row.point_id or row.identity(), row.conc, row.task)
            order = (row.run_id or 0, row.run_attempt or 0, dates.get(row.source, 0.0), row.source)
            if key not in best or order > best[key][0]:
                best[key] = (order, row)
        kept = {id(row) for _, row in best.values()}
        if len(kept) == len(self.rows):
            return self
        return EvalCollection(
            tuple(replace(found, rows=tuple(r for r in found.rows if id(r) in kept)) for found in self.sets)
        )

    @classmethod
    def from_json(cls, data: dict) -> EvalCollection:
        """results.json's `evals`, already checked against `eval-row.schema.json#/$defs/evals`. Rows
        go back to their folder by `source` (a row whose folder is not listed gets one of its own)."""
        rows: dict[str, list[EvalRow]] = {}
        for item in data["rows"]:
            row = EvalRow.from_data(item)
            rows.setdefault(str(Path(row.source).parent), []).append(row)
        sets = [EvalSet.from_data(item, rows=tuple(rows.pop(item["folder"], ()))) for item in data["sets"]]
        sets += [
            EvalSet(folder, None, None, left[0].model_prefix, False, None, None, None, (), tuple(left), ())
            for folder, left in rows.items()
        ]
        return cls(tuple(sets))


# --- values --------------------------------------------------------------------------------


class _FieldError(Exception):
    """A value the row cannot hold; becomes one problem of the folder."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule


def _is_whole(value) -> bool:
    return type(value) is int and value >= 1


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None


def _positive(value) -> int | None:
    return value if _is_whole(value) else None


def _number(value) -> float | None:
    """A finite JSON number as a float; None for anything else (lm-eval writes "N/A" for a
    standard error it cannot compute)."""
    if type(value) is int and abs(value) > 2**53:
        return None  # an integer no float holds exactly (or at all) is no score, date or setting
    if type(value) in (int, float) and math.isfinite(value):
        return float(value)
    return None


class _Meta:
    """meta_env.json's fields, typed: missing or null takes the reference's default; a value of
    the wrong type is an `eval-meta-field` problem, never a guess."""

    def __init__(self, data: dict):
        self.data = data

    def _given(self, *keys: str):
        for key in keys:
            if self.data.get(key) is not None:
                return key, self.data[key]
        return None, None

    def whole(self, *keys: str, default: int) -> int:
        key, value = self._given(*keys)
        if key is None:
            return default
        if type(value) is int and value >= 0:
            return value
        if (
            isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18
        ):  # an exported variable, as written
            return int(value)
        raise _FieldError(
            "eval-meta-field", f"meta_env.json: {key} is {json.dumps(value)[:80]}; a whole number is accepted"
        )

    def flag(self, key: str) -> bool:
        value = self.data.get(key)
        if value is None or isinstance(value, bool):
            return bool(value)
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise _FieldError(
            "eval-meta-field", f"meta_env.json: {key} is {json.dumps(value)[:80]}; true or false is accepted"
        )

    def text(self, key: str) -> str:
        value = self.data.get(key)
        if value is None:
            return UNKNOWN
        if isinstance(value, str):
            return value
        raise _FieldError("eval-meta-field", f"meta_env.json: {key} is {json.dumps(value)[:80]}; text is accepted")

    def setting(self, key: str, default):
        """A dp-attention setting as the reference writes it: the value's text, lower-cased."""
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, (str, bool, int)) and not isinstance(value, float):
            return str(value).lower()
        raise _FieldError(
            "eval-meta-field", f"meta_env.json: {key} is {json.dumps(value)[:80]}; true, false or text is accepted"
        )


def meta_row_fields(meta: _Meta) -> dict:
    """The reference's meta-derived fields of a row (everything but the task's scores)."""
    multinode = meta.flag("is_multinode")
    prefill_tp, prefill_ep = meta.whole("prefill_tp", "tp", default=1), meta.whole("prefill_ep", "ep", default=1)
    dp_attention = meta.setting("dp_attention", "none")
    prefill_dp, decode_dp = (
        meta.setting("prefill_dp_attention", dp_attention),
        meta.setting("decode_dp_attention", dp_attention),
    )
    if multinode:
        dp_attention = prefill_dp if prefill_dp == decode_dp else f"prefill={prefill_dp},decode={decode_dp}"
    return {
        "is_multinode": multinode,
        "hw": meta.text("hw").upper(),
        "framework": meta.text("framework").lower(),
        "precision": meta.text("precision").lower(),
        "spec_decoding": meta.text("spec_decoding"),
        "isl": meta.whole("isl", default=0),
        "osl": meta.whole("osl", default=0),
        "tp": meta.whole("tp", default=prefill_tp),
        "ep": meta.whole("ep", default=prefill_ep),
        "prefill_tp": prefill_tp,
        "prefill_ep": prefill_ep,
        "prefill_num_workers": meta.whole("prefill_num_workers", default=1),
        "decode_tp": meta.whole("decode_tp", "tp", default=1),
        "decode_ep": meta.whole("decode_ep", "ep", default=1),
        "decode_num_workers": meta.whole("decode_num_workers", default=1),
        "conc": meta.whole("conc", default=0),
        "dp_attention": dp_attention,
        "prefill_dp_attention": prefill_dp,
        "decode_dp_attention": decode_dp,
    }
