"""One eval folder read into an eval set: its files (read, never written), lm-eval's result files
and the batch manifest, each problem under its rule (infx.results.evals.rules.RULES)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from ... import jsonfast
from ...fsio import TooLarge, UnusablePath, printable, scan_tree
from ...launch.layout import EVAL_FOLDER
from ...schema import first_problem
from .rows import (
    EVAL_ROW_SCHEMA,
    STANDALONE,
    UNKNOWN,
    EvalIdentity,
    EvalProblem,
    EvalProtocol,
    EvalRow,
    EvalSet,
    ResultFile,
    _FieldError,
    _is_whole,
    _Meta,
    _number,
    _text,
    meta_row_fields,
)

META_ENV = "meta_env.json"
CONC_SUFFIX = re.compile(r"_conc(\d+)(?:_\d+)?\.json$")  # results_<date>_conc16.json (a copy: _conc16_1.json)
MAX_JSON_BYTES = 64 * 1024 * 1024  # an lm-eval result is kilobytes; a bigger file is not one


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
