"""Eval folders -> eval rows: lm-eval's scores per point, concurrency and task.

An eval folder holds `meta_env.json` (what ran: model, hardware, topology, concurrency; for a
batched eval also the manifest `eval_concs`, `completed_eval_concs`, `failed_eval_concs`) and
lm-eval's result files: any JSON object there with a top-level `lm_eval_version`. It is what
srt-slurm's eval stage leaves (and what the reference's collector reads), found as the folder
given, a folder one level down, or the `eval/` folder of either (a point artifact's).

Which files count (the reference's rules; docs/results.md says where infx differs):

- not batched (no `eval_concs`): the newest result file, one row per task;
- batched: per `_conc<N>` suffix the newest file, and only the concurrencies in
  `completed_eval_concs`; so a re-run that left two files for one concurrency gives one row.
  "Newest" is the start time lm-eval records in the file (`date`), else the file's modification
  time (which a download or a checkout resets).

Per task: the base metric is the first of the task config's `metric_list` (default
`exact_match`); a filter whose name holds `strict` or `resolved` gives `em_strict`, one with
`flex` or `extract` gives `em_flexible`; a task without filters gives `acc` as `accuracy`, else
the base metric as `em_strict`. `score` is `em_strict`, else `accuracy`.

The manifest of a batched eval is checked here, each inconsistency under its own rule id
(:data:`RULES`), and recorded with the folder, so `infx results check-evals` reports it from
results.json. Every row is checked against infx/schemas/eval-row.schema.json.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from .. import jsonfast
from ..diagnostics import Diagnostic, InfxError, error
from ..fsio import TooLarge, UnusablePath, printable, scan_tree
from ..points import concurrencies
from ..records import Record, each, read_as, write_as
from ..schema import first_problem, is_valid, schema_errors

EVAL_ROW_SCHEMA = "eval-row"  # infx/schemas/eval-row.schema.json
EVALS_POINTER = "#/$defs/evals"  # results.json's `evals` section in that schema
META_ENV = "meta_env.json"
EVAL_FOLDER = "eval"  # a point artifact's eval folder
LAUNCH_RECORD_SUFFIX = "_launch.json"
CONC_SUFFIX = re.compile(r"_conc(\d+)(?:_\d+)?\.json$")  # results_<date>_conc16.json (a copy: _conc16_1.json)
MAX_JSON_BYTES = 64 * 1024 * 1024  # an lm-eval result is kilobytes; a bigger file is not one
MAX_RESULTS_BYTES = 256 * 1024 * 1024  # results.json of a sweep: megabytes
RESULTS_HINT = "Pass the results.json `infx results collect --output` wrote."
UNKNOWN = "unknown"  # the reference's value for a meta_env.json field that is missing

# Every rule a collected eval folder can break, with the line docs/results.md gives it.
RULES = {
    "eval-meta-unreadable": "meta_env.json is not a readable, strict JSON object.",
    "eval-meta-field": 'a meta_env.json field has a type the row cannot hold (e.g. tp "eight").',
    "eval-result-unreadable": "a results*.json is not a readable, strict JSON object (NaN, Infinity and duplicate "
    "keys are refused).",
    "eval-result-malformed": "an lm-eval result file whose `results`, task config or metric values are not what "
    "lm-eval writes.",
    "eval-row-schema": "a row the eval-row schema refuses (e.g. a score above 1).",
    "eval-missing": "no lm-eval result: meta_env.json without a result file, an eval point's artifact without "
    "eval/meta_env.json, or (check-evals --plan of an evals-only or all-evals run) a planned eval point without an "
    "eval row.",
    "eval-conc-mismatch": "the folder ran other concurrencies than its point asked for (`eval-conc`, or every `conc` "
    "of an `eval-all-concs` point).",
    "eval-batch-manifest-invalid": "`eval_concs` is present but the three manifest fields are not all lists of "
    "positive whole numbers.",
    "eval-batch-conc-duplicate": "a concurrency is listed twice in `eval_concs` or `completed_eval_concs`.",
    "eval-batch-failed-conc": "`failed_eval_concs` is not empty: lm-eval failed at these concurrencies.",
    "eval-batch-conc-missing": "a concurrency of `eval_concs` is not in `completed_eval_concs`.",
    "eval-batch-conc-unexpected": "`completed_eval_concs` holds a concurrency `eval_concs` does not.",
    "eval-batch-file-unsuffixed": "a result file of a batched eval has no `_conc<N>` suffix.",
    "eval-batch-result-missing": "a concurrency of `eval_concs` has no result file.",
    "eval-batch-result-unexpected": "a result file's concurrency is not in `eval_concs`.",
}


# --- reading files ------------------------------------------------------------------------


def _read_json_object(path: Path, limit: int = MAX_JSON_BYTES) -> dict | str:
    """The JSON object in the regular file ``path``, read with infx's one strict reader
    (jsonfast: no NaN, Infinity or key twice, never through a symbolic link or from a FIFO), or
    why there is none."""
    try:
        data = jsonfast.read(path, limit)
    except jsonfast.JSONProblem as exc:
        where = f", line {exc.line}, column {exc.column}" if exc.line else ""
        return f"{printable(path.name)} is not strict JSON ({exc.message[:200]}{where})"
    except TooLarge:
        return f"{printable(path.name)} is larger than {limit:,} bytes"
    except OSError as exc:  # UnusablePath: what it is instead of a regular file ("is a symbolic link, …")
        return (
            f"{printable(path.name)} cannot be read "
            f"({'it ' if isinstance(exc, UnusablePath) else ''}{exc.strerror or exc})"
        )
    return data if isinstance(data, dict) else f"{printable(path.name)} is not a JSON object"


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


HINTS = {
    "eval-meta-unreadable": "meta_env.json is written by the eval stage; rerun the eval point.",
    "eval-meta-field": "Write the field as the eval stage does: a whole number, true/false or text.",
    "eval-result-unreadable": "A truncated or hand-edited lm-eval result; rerun the eval point.",
    "eval-result-malformed": "Only lm-eval's own result files (results_<date>.json) are read; rerun the eval point.",
    "eval-row-schema": "An lm-eval score is a fraction from 0 to 1; check the task's metric.",
    "eval-missing": "lm-eval wrote no result: read the point's logs (eval stage) and rerun it.",
    "eval-conc-mismatch": "The eval ran at other concurrencies than planned; rerun the point with its EVAL_CONC.",
}
HINTS.update(
    {
        rule: "A batched eval must complete every concurrency it lists, each with one result file; "
        "rerun the point (infx github rerun-failed)."
        for rule in RULES
        if rule.startswith("eval-batch-")
    }
)


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


# --- one lm-eval result file ---------------------------------------------------------------


def _mapping(value, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _FieldError("eval-result-malformed", f"{what} is not a JSON object")
    return value


def _metric(results: dict, task: str, key: str) -> float | None:
    """A score: missing is None; present, it must be a finite number (a standard error may be "N/A")."""
    value = results.get(key)
    if value is None or (isinstance(value, str) and "_stderr" in key):
        return None
    number = _number(value)
    if number is None:
        raise _FieldError("eval-result-malformed", f"task {task}: {key} is {json.dumps(value)[:80]}, not a number")
    return number


def _scores(task: str, results: dict, config: dict) -> dict:
    """em_strict, em_flexible and accuracy (each with its standard error) of one task."""
    metric_list = config.get("metric_list")
    first = metric_list[0] if isinstance(metric_list, list) and metric_list else None
    metric = first.get("metric") if isinstance(first, dict) else None
    base = metric if isinstance(metric, str) else "exact_match"
    filters = config.get("filter_list")
    if filters is not None and not (isinstance(filters, list) and all(isinstance(f, dict) for f in filters)):
        raise _FieldError("eval-result-malformed", f"task {task}: configs.{task}.filter_list is not a list of filters")
    found: dict[str, tuple[float | None, float | None]] = {
        "strict": (None, None),
        "flexible": (None, None),
        "accuracy": (None, None),
    }

    def pair(name: str, stderr: str) -> tuple[float | None, float | None]:
        return _metric(results, task, name), _metric(results, task, stderr)

    if filters:
        for item in filters:
            name = item.get("name")
            if not isinstance(name, str):
                continue
            kind = (
                "strict"
                if "strict" in name or "resolved" in name
                else "flexible"
                if "flex" in name or "extract" in name
                else None
            )
            if kind:
                found[kind] = pair(f"{base},{name}", f"{base}_stderr,{name}")
    elif "acc" in results or "acc,none" in results:  # lm-eval 0.4 writes `<metric>,none` for a task without filters
        found["accuracy"] = pair("acc", "acc_stderr") if "acc" in results else pair("acc,none", "acc_stderr,none")
    else:
        found["strict"] = (
            pair(base, f"{base}_stderr") if base in results else pair(f"{base},none", f"{base}_stderr,none")
        )
    return found


def _protocol(data: dict, task: str, config: dict) -> EvalProtocol:
    generation = got if isinstance(got := config.get("generation_kwargs"), dict) else {}
    shots = got if isinstance(got := data.get("n-shot"), dict) else {}
    run = got if isinstance(got := data.get("config"), dict) else {}
    tokens = generation.get("max_gen_toks", generation.get("max_tokens"))
    temperature, limit = _number(generation.get("temperature")), _number(run.get("limit"))
    return EvalProtocol(
        _text(data.get("lm_eval_version")),
        shots.get(task) if type(shots.get(task)) is int and shots[task] >= 0 else None,
        tokens if type(tokens) is int and tokens >= 0 else None,
        temperature if temperature is not None and temperature >= 0 else None,
        data.get("chat_template") is not None,
        data["fewshot_as_multiturn"] if isinstance(data.get("fewshot_as_multiturn"), bool) else None,
        limit if limit is not None and limit > 0 else None,
    )


def result_rows(data: dict, source: str, base: dict, meta_model: str, identity: EvalIdentity) -> list[EvalRow]:
    """One row per task of an lm-eval result; ``base`` holds the meta-derived fields."""
    results = _mapping(data.get("results"), "`results`")
    configs = _mapping(data.get("configs"), "`configs`")
    n_samples = _mapping(data.get("n-samples"), "`n-samples`")
    model_name = _text(data.get("model_name"))
    rows = []
    for task, task_results in results.items():
        task_results = _mapping(task_results, f"results.{task}")
        config = _mapping(configs.get(task), f"configs.{task}")
        scores = _scores(task, task_results, config)
        (strict, strict_se), (flexible, flexible_se), (accuracy, accuracy_se) = (
            scores["strict"],
            scores["flexible"],
            scores["accuracy"],
        )
        if strict is not None:
            score, score_name, score_se = strict, "em_strict", strict_se
        elif accuracy is not None:
            score, score_name, score_se = accuracy, "accuracy", accuracy_se
        else:
            score, score_name, score_se = None, None, None
        counts = got if isinstance(got := n_samples.get(task), dict) else {}
        effective = counts.get("effective")
        metadata = got if isinstance(got := config.get("metadata"), dict) else {}
        model = model_name or _text(metadata.get("model")) or meta_model
        rows.append(
            EvalRow(
                **base,
                model=model,
                task=task,
                em_strict=strict,
                em_strict_se=strict_se,
                em_flexible=flexible,
                em_flexible_se=flexible_se,
                n_eff=effective if type(effective) is int and effective >= 0 else None,
                source=source,
                score=score,
                score_name=score_name,
                score_se=score_se,
                protocol=_protocol(data, task, config),
                **identity.row_fields(),
            )
        )
    return rows


# --- the batch manifest --------------------------------------------------------------------


def _conc_list(value) -> tuple[int, ...] | None:
    if isinstance(value, list) and all(_is_whole(v) for v in value):
        return tuple(value)
    return None


def _listed(values: Iterable[int]) -> str:
    return ", ".join(str(v) for v in sorted(values))


def manifest_problems(meta: dict, suffixes: list[tuple[str, int | None]]) -> list[tuple[str, str]]:
    """(rule, message) for each inconsistency of a batched eval's manifest with itself and with
    its result files (``suffixes``: each file's name and `_conc<N>` suffix)."""
    expected, completed, failed = (
        _conc_list(meta.get(key)) for key in ("eval_concs", "completed_eval_concs", "failed_eval_concs")
    )
    if expected is None or completed is None or failed is None:
        shown = ", ".join(
            f"{key} = {json.dumps(meta.get(key))[:60]}"
            for key in ("eval_concs", "completed_eval_concs", "failed_eval_concs")
        )
        return [
            (
                "eval-batch-manifest-invalid",
                f"the batch manifest must give three lists of positive whole numbers; it has {shown}",
            )
        ]
    found = []
    for name, values in (("eval_concs", expected), ("completed_eval_concs", completed)):
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            found.append(("eval-batch-conc-duplicate", f"{name} lists concurrency {_listed(twice)} more than once"))
    if failed:
        found.append(("eval-batch-failed-conc", f"lm-eval failed at concurrency {_listed(set(failed))}"))
    if set(expected) - set(completed):
        found.append(
            (
                "eval-batch-conc-missing",
                f"concurrency {_listed(set(expected) - set(completed))} of eval_concs did not complete",
            )
        )
    if set(completed) - set(expected):
        found.append(
            (
                "eval-batch-conc-unexpected",
                f"completed_eval_concs holds concurrency {_listed(set(completed) - set(expected))}, which eval_concs "
                "does not list",
            )
        )
    for name, conc in suffixes:
        if conc is None:
            found.append(
                ("eval-batch-file-unsuffixed", f"{name} has no _conc<N> suffix, so no concurrency can be given to it")
            )
    have = {conc for _, conc in suffixes if conc is not None}
    if set(expected) - have:
        found.append(("eval-batch-result-missing", f"concurrency {_listed(set(expected) - have)} has no result file"))
    if have - set(expected):
        found.append(
            (
                "eval-batch-result-unexpected",
                f"there are result files for concurrency {_listed(have - set(expected))}, which eval_concs does not "
                "list",
            )
        )
    return found


def _conc_mismatch(identity: EvalIdentity, batched: bool, ran: tuple[int, ...] | None, conc: int) -> str | None:
    """Why the concurrencies the eval ran are not the ones its point asked for, or None."""
    wanted = identity.eval_concs
    if not wanted:
        return None
    actual = set(ran or ()) if batched else {conc}
    if actual == set(wanted):
        return None
    return f"the point asked for eval concurrency {_listed(set(wanted))}, the eval ran {_listed(actual) or 'none'}"


# --- one folder -----------------------------------------------------------------------------


class _Candidate(NamedTuple):
    """An lm-eval result file of a folder."""

    name: str
    data: dict
    date: float  # lm-eval's recorded start time, else the file's modification time
    conc: int | None  # its `_conc<N>` suffix

    @property
    def recency(self) -> tuple[float, str]:
        return self.date, self.name  # the same time: the later name, so the choice never depends on listing order


def _candidates(folder: Path, problems: list[EvalProblem]) -> list[_Candidate]:
    """Every lm-eval result in ``folder``: a JSON object with `lm_eval_version` (an unreadable
    results*.json is a problem; other JSON files that are not lm-eval's are passed over). The
    folder is listed without following a link; a results*.json that is not a regular file is
    never opened (a problem, as one that cannot be read)."""
    found: list[_Candidate] = []
    try:
        entries = scan_tree(folder, max_depth=0).entries
    except OSError as exc:
        shown = printable(str(folder))
        problems.append(
            EvalProblem("eval-result-unreadable", shown, f"{shown} cannot be listed ({exc.strerror or exc})")
        )
        return found
    for entry in entries:
        if not entry.name.endswith(".json") or entry.name == META_ENV or entry.is_folder:
            continue
        path = folder / entry.name
        data = (
            _read_json_object(path)
            if entry.is_file
            else f"{entry.name} is {entry.kind}, not a regular file (not opened)"
        )
        if isinstance(data, str):
            if entry.name.startswith("results"):
                problems.append(EvalProblem("eval-result-unreadable", printable(str(path)), data))
            continue
        if "lm_eval_version" not in data:
            continue
        date = _number(data.get("date"))
        if date is None:
            try:
                date = os.lstat(path).st_mtime
            except OSError:
                date = 0.0
        match = CONC_SUFFIX.search(entry.name)
        found.append(_Candidate(entry.name, data, date, int(match.group(1)) if match else None))
    return found


def _chosen(candidates: list[_Candidate], batched: bool, completed: tuple[int, ...] | None) -> list[_Candidate]:
    """The files whose rows count: the newest, or for a batched eval the newest per completed concurrency."""
    if not batched:
        return [max(candidates, key=lambda c: c.recency)] if candidates else []
    newest: dict[int, _Candidate] = {}
    for candidate in candidates:
        conc = candidate.conc
        if conc in (completed or ()) and (conc not in newest or candidate.recency > newest[conc].recency):
            newest[conc] = candidate
    return [newest[conc] for conc in sorted(newest)]


def read_eval_set(folder: Path, identity: EvalIdentity = STANDALONE) -> EvalSet:
    """The rows and problems of one eval folder. ``identity`` is its point, when known."""
    label, meta_file = printable(str(folder)), printable(str(folder / META_ENV))
    problems: list[EvalProblem] = []
    meta = _read_json_object(folder / META_ENV)
    if isinstance(meta, str):
        problems.append(EvalProblem("eval-meta-unreadable", meta_file, meta))
        meta = {}
    candidates = _candidates(folder, problems)
    if not candidates and not any(p.rule == "eval-result-unreadable" for p in problems):
        problems.append(
            EvalProblem(
                "eval-missing",
                label,
                f"{label} holds {META_ENV} but no lm-eval result (a JSON file with lm_eval_version)",
            )
        )
    batched = "eval_concs" in meta
    manifest = (
        _conc_list(meta.get("eval_concs")),
        _conc_list(meta.get("completed_eval_concs")),
        _conc_list(meta.get("failed_eval_concs")),
    )
    if batched:
        problems += [
            EvalProblem(rule, meta_file, message)
            for rule, message in manifest_problems(meta, [(printable(c.name), c.conc) for c in candidates])
        ]
    # A manifest that cannot be read names no concurrency as completed: no rows rather than a guess.
    completed = manifest[1] if None not in manifest else None
    rows: list[EvalRow] = []
    typed = _Meta(meta)
    try:
        base = meta_row_fields(typed)
        model_prefix, meta_model = typed.text("infmax_model_prefix"), typed.text("model")
    except _FieldError as exc:
        problems.append(EvalProblem(exc.rule, meta_file, str(exc)))
        return EvalSet(
            label,
            identity.config_key,
            identity.point_id,
            identity.model_prefix or UNKNOWN,
            batched,
            *manifest,
            tuple(ResultFile(printable(c.name), c.conc, c.date, False) for c in candidates),
            (),
            tuple(problems),
        )
    if model_prefix == UNKNOWN and identity.model_prefix:
        model_prefix = identity.model_prefix  # metadata the eval stage lost: the point knows its model
    mismatch = _conc_mismatch(identity, batched, manifest[0], base["conc"])
    if mismatch:
        problems.append(EvalProblem("eval-conc-mismatch", meta_file, mismatch))
    chosen = _chosen(candidates, batched, completed)
    for candidate in chosen:
        source = str(Path(label) / printable(candidate.name))
        row_base = dict(base, model_prefix=model_prefix, conc=candidate.conc if batched else base["conc"])
        try:
            found = result_rows(candidate.data, source, row_base, meta_model, identity)
        except _FieldError as exc:
            problems.append(EvalProblem(exc.rule, source, str(exc)))
            continue
        for row in found:
            problem = first_problem(EVAL_ROW_SCHEMA, row.to_json(), "row")
            if problem:
                problems.append(EvalProblem("eval-row-schema", source, f"task {row.task}: {problem}"))
            else:
                rows.append(row)
    used = {c.name for c in chosen}
    return EvalSet(
        label,
        identity.config_key,
        identity.point_id,
        model_prefix,
        batched,
        *manifest,
        tuple(ResultFile(printable(c.name), c.conc, c.date, c.name in used) for c in candidates),
        tuple(rows),
        tuple(problems),
    )


def point_eval_set(artifact: Path, record: dict, name: str, has_meta: bool) -> EvalSet:
    """The eval set of an eval point's artifact: its `eval/` folder read with the point's identity
    (``record``: its launch record as decoded JSON; ``name``: the artifact's). ``has_meta``: the
    artifact's listing holds `eval/meta_env.json` as a regular file; without it the set is
    `eval-missing`, the eval stage's outputs were not staged."""
    identity = EvalIdentity.from_launch_record(record, name)
    folder = artifact / EVAL_FOLDER
    if has_meta:
        return read_eval_set(folder, identity)
    kind = (record.get("eval") or {}).get("kind") if isinstance(record.get("eval"), dict) else None
    problem = EvalProblem(
        "eval-missing",
        printable(str(folder)),
        f"an eval point ({kind or 'eval'}) whose artifact holds no {EVAL_FOLDER}/{META_ENV}: "
        "srt-slurm's eval stage left no result in the job's logs/eval_results/",
    )
    return EvalSet(
        printable(str(folder)),
        identity.config_key,
        identity.point_id,
        identity.model_prefix or UNKNOWN,
        False,
        None,
        None,
        None,
        (),
        (),
        (problem,),
    )


# --- finding folders -------------------------------------------------------------------------


def _launch_identity(artifact: Path) -> EvalIdentity:
    """The point of a point artifact (its one launch record), or STANDALONE."""
    records = sorted(artifact.glob(f"*{LAUNCH_RECORD_SUFFIX}")) if artifact.is_dir() else []
    if len(records) != 1:
        return STANDALONE
    record = _read_json_object(records[0])
    return STANDALONE if isinstance(record, str) else EvalIdentity.from_launch_record(record, artifact.name)


def find_eval_sets(paths: Iterable[Path]) -> list[tuple[Path, EvalIdentity]]:
    """Each eval folder under ``paths`` with the point it belongs to: the path itself, a folder one
    level down, or the `eval/` folder of either (then the point is its artifact's launch record)."""
    found: dict[Path, EvalIdentity] = {}

    def consider(folder: Path) -> None:
        if folder in found or not (folder / META_ENV).is_file():
            return
        found[folder] = _launch_identity(folder.parent) if folder.name == EVAL_FOLDER else STANDALONE

    for path in paths:
        if not path.is_dir():
            continue
        consider(path)
        consider(path / EVAL_FOLDER)
        for child in sorted(p for p in path.iterdir() if p.is_dir()):
            consider(child)
            consider(child / EVAL_FOLDER)
    return list(found.items())


def collect_evals(paths: Iterable[Path]) -> EvalCollection:
    """Every eval folder under ``paths``, read: results.json's `evals`."""
    return EvalCollection(tuple(read_eval_set(folder, identity) for folder, identity in find_eval_sets(paths)))


def evals_problem(data: Any) -> str | None:
    """The first problem of a results.json `evals` section against the schema, or None."""
    if is_valid(EVAL_ROW_SCHEMA, data, EVALS_POINTER):
        return None
    err = schema_errors(EVAL_ROW_SCHEMA, data, EVALS_POINTER)[0]
    return f"evals{''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in err.path)}: {err.message}"


def read_results_evals(path: Path) -> EvalCollection:
    """The `evals` section of a results.json (none: no eval folder was collected). A file that
    cannot be read raises its OSError (the command line's problem, exit 2); one that is not
    results raises InfxError with rule `results-json` (exit 1)."""
    try:
        data = jsonfast.read(path, MAX_RESULTS_BYTES)
    except TooLarge:
        raise InfxError(
            error(str(path), None, "results-json", f"larger than {MAX_RESULTS_BYTES:,} bytes", RESULTS_HINT)
        ) from None
    except jsonfast.JSONProblem as exc:
        raise InfxError(
            error(
                str(path),
                (exc.line, exc.column) if exc.line else None,
                "results-json",
                f"not strict JSON ({exc.message[:200]})",
                RESULTS_HINT,
            )
        ) from None
    if not isinstance(data, dict):
        raise InfxError(error(str(path), None, "results-json", "is not a JSON object", RESULTS_HINT))
    section = data.get("evals", {"rows": [], "sets": []})
    problem = evals_problem(section)
    if problem:
        raise InfxError(
            error(
                str(path), None, "results-json", f"its eval section is not what collect writes: {problem}", RESULTS_HINT
            )
        )
    return EvalCollection.from_json(section)
