"""A point's artifact, read once, and the one rule that says whether it holds a valid result.

`PointArtifact.read(folder)` lists the folder without following a symbolic link and reads only
regular files, each within a size limit, with the strict JSON reader: the launch record
(`<name>_launch.json`), the result files, aiperf's aggregates under `LOGS/`, an eval point's
`eval/` folder (meta_env.json and lm-eval's results, infx/results/evals/), and lists the log
files. Nothing it meets raises: what cannot be read is kept as a problem and becomes a reason of
the verdict.

`PointArtifact.verdict()` is the validity rule every consumer applies: `infx results collect`,
reuse (which adds only that the record carries the planned result key), the launcher (a launch
succeeds only when its output folder gets the verdict ok: `infx launch` hands it ``judge``) and
reruns (through the verdicts in a sweep's results.json). docs/results.md states it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import jsonfast
from ..evalsuite import EvalKind
from ..fsio import Entry, Tree, UnusablePath, printable, scan_tree
from ..launch.layout import EVAL_FOLDER, LOGS_COPY, LOGS_TARBALL
from ..launch.record import SUFFIX as RECORD_SUFFIX
from ..launch.record import LaunchRecord, RecordError
from . import rows as rowmaking
from . import validate
from .evals.folder import META_ENV, point_eval_set
from .evals.rows import EvalSet
from .metrics import metric_problem
from .schema import result_row_problem

OK, INVALID, FAILED = "ok", "invalid", "failed"
RESULT_MAX_BYTES = 1 << 30  # a sa-bench file keeps every request's latencies: hundreds of MB at conc 4096
AIPERF_MAX_BYTES = 64 << 20
AIPERF_AGGREGATE = "profile_export_aiperf.json"
AIPERF_READ = 64  # aiperf aggregates read per artifact (one per concurrency)
MAX_DEPTH, MAX_ENTRIES = 32, 100_000  # how far a folder is listed


@dataclass(frozen=True)
class ResultFile:
    """A file named as a result of the point: its concurrency from the name, and its object, or
    why it could not be read (the reason names the file and, for JSON, the key path)."""

    name: str
    conc: int
    match: re.Match
    data: dict | None = None
    problem: str | None = None


@dataclass(frozen=True)
class Verdict:
    """What became of a point: ok (with its rows), invalid (a result that is not one) or failed
    (no result), with the reasons; the rows are in the published result-row shape."""

    status: str
    reasons: tuple[str, ...] = ()
    rows: tuple[dict, ...] = ()
    evals: EvalSet | None = None  # an eval point's eval set (its rows are results only when ok)

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons).replace("\n", " ")


@dataclass(frozen=True)
class PointArtifact:
    """One point's artifact folder, read once. ``record`` is None when the folder has no usable
    launch record (``missing`` or ``unusable`` says why)."""

    folder: Path
    record: LaunchRecord | None = None
    missing: str | None = None  # no single launch record: the launch never ran (failed)
    unusable: str | None = None  # a folder or record that cannot be read (invalid)
    results: tuple[ResultFile, ...] = ()
    aiperf: tuple[tuple[str, Any], ...] = ()  # (name under LOGS/, its object or why not)
    evals: tuple[Entry, ...] = ()  # regular files under eval/
    eval_set: EvalSet | None = None  # an eval point's eval/ folder, read (None: not an eval point)
    logs: tuple[Entry, ...] = ()  # regular files under LOGS/ and the logs tarball, not read here
    skipped: tuple[str, ...] = ()  # what was not followed or opened (links, FIFOs, devices), or not listed

    @property
    def name(self) -> str:
        """The artifact's name: its folder's (what actions/download-artifact writes), as text."""
        return printable(self.folder.name)

    @classmethod
    def read(cls, folder: Path) -> PointArtifact:
        try:
            tree = scan_tree(folder, MAX_DEPTH, MAX_ENTRIES)
        except OSError as exc:
            return cls(folder, unusable=f"the folder cannot be read ({_os_reason(exc)})")
        top = [entry for entry in tree.entries if "/" not in entry.name]
        skipped = tuple(
            printable(f"{entry.name}: {entry.kind}, not followed or opened") for entry in tree.others()
        ) + tuple(map(printable, tree.problems))
        listed: dict[str, Any] = dict(  # the PointArtifact fields a folder without a usable record keeps too
            evals=tuple(sorted(tree.files(EVAL_FOLDER), key=lambda e: e.name)),
            logs=tuple(
                sorted(
                    (
                        e
                        for e in tree.entries
                        if e.is_file and (e.name.startswith(LOGS_COPY + "/") or e.name == LOGS_TARBALL)
                    ),
                    key=lambda e: e.name,
                )
            ),
            skipped=skipped,
        )
        records = [entry for entry in top if entry.name.endswith(RECORD_SUFFIX)]
        if not records:
            return cls(
                folder,
                missing=f"no launch record (*{RECORD_SUFFIX}): the launch never ran, or the artifact is incomplete",
                **listed,
            )
        if len(records) > 1:
            return cls(
                folder,
                missing=printable(
                    f"{len(records)} launch records ({', '.join(r.name for r in records)}); "
                    "one artifact holds one point"
                ),
                **listed,
            )
        [entry] = records
        try:
            record = LaunchRecord.read(folder / entry.name)
        except (OSError, jsonfast.JSONProblem, RecordError) as exc:
            return cls(folder, unusable=_file_reason(printable(entry.name), exc), **listed)
        stem = record.result_name or entry.name[: -len(RECORD_SUFFIX)]
        kind = eval_kind(record)
        eval_set = (
            None
            if kind is None
            else point_eval_set(
                folder,
                record.to_json(),
                printable(folder.name),
                any(e.name == f"{EVAL_FOLDER}/{META_ENV}" for e in listed["evals"]),
            )
        )
        results = () if kind == EVAL_ONLY else tuple(_result_files(folder, top, entry.name, stem, record.agentic))
        return cls(
            folder,
            record,
            results=results,
            eval_set=eval_set,
            aiperf=tuple(_aiperf_files(folder, tree)) if record.agentic and kind != EVAL_ONLY else (),
            **listed,
        )

    # --- the validity rule ----------------------------------------------------------------

    def verdict(self, result_key: str | None = None) -> Verdict:
        """ok only when the launch ended with exit code 0, every concurrency the point planned
        has a result file that reads as a valid row (not asked of an eval-only point, which runs
        no benchmark) and, for an eval point, its eval/ gives eval rows and has no problem;
        ``result_key``: also that the record is of that key (reuse). Never raises: whatever the
        folder holds is a reason."""
        if self.missing:
            return Verdict(FAILED, (self.missing,))
        if self.unusable or self.record is None:
            return Verdict(INVALID, (self.unusable or "no launch record",))
        record = self.record
        if result_key is not None and record.result_key != result_key:
            return Verdict(INVALID, (f"its launch record is for result key {record.result_key!r}, not {result_key}",))
        if record.exit_code != 0:
            return Verdict(FAILED, (record.ending,), evals=self.eval_set)
        rows: list[dict] = []
        found, reasons = [], []
        for result in self.results:
            found.append(result.conc)
            try:
                row, problem = self._row(result)
            except rowmaking.RowRefused as exc:
                row, problem = None, f"{result.name}: {exc}"
            except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError, RecursionError) as exc:
                row, problem = None, f"the launch record or a result file is malformed ({type(exc).__name__}: {exc})"
            if problem:
                reasons.append(f"concurrency {result.conc}: {problem}")
            else:
                assert row is not None  # _row gives a row or a problem
                rows.append(row)
        missing = (
            None if eval_kind(record) == EVAL_ONLY else validate.missing_concurrencies(record.concurrencies, found)
        )
        if missing:
            reasons.insert(0, missing)
        if self.eval_set is not None:
            reasons += self.eval_set.verdict_reasons()
        if reasons:
            return Verdict(INVALID, tuple(reasons), evals=self.eval_set)
        return Verdict(OK, rows=tuple(rows), evals=self.eval_set)

    def _row(self, result: ResultFile) -> tuple[dict | None, str | None]:
        """One result file's row, or why it has none."""
        if result.problem:
            return None, result.problem
        raw, record = result.data, self.record
        assert (
            raw is not None and record is not None
        )  # a file read without a problem; verdict() answered a recordless folder
        point = record.point
        if record.agentic:
            aiperf = self._aiperf_for(result.conc)
            problem = aiperf if isinstance(aiperf, str) else validate.agentic_problem(raw, aiperf)
            row = None if problem else rowmaking.agentic_row(point, raw)
        else:
            problem = (
                validate.fixed_seq_problem(raw, result.conc)
                or rowmaking.unit_problem(raw)
                or validate.gpu_count_problem(result.match, isinstance(point.get("prefill"), dict))
            )
            row = None if problem else rowmaking.fixed_seq_row(point, raw, result.match)
        if problem:
            return None, problem
        assert row is not None  # made whenever there is no problem
        own = rowmaking.identity(record, self.name, result.name, result.conc)
        problem = rowmaking.identity_clash(raw, own)
        if problem:
            return None, f"{result.name}: {problem}"
        # infx's fields first (conc where the reference puts it), and infx's values whatever the file says
        row = {**{k: v for k, v in own.items() if k != "conc"}, **row, **own}
        problem = row_problem(row)
        return (None, f"{result.name} {problem}") if problem else (row, None)

    def _aiperf_for(self, conc: int) -> dict | str | None:
        """aiperf's own aggregate for this concurrency when the logs hold it unambiguously (the
        failed-request gate's source), why it cannot be read, or None (none: the aggregate's own
        accounting counts)."""
        planned = self.record.concurrencies if self.record else []
        tagged = [
            (name, data) for name, data in self.aiperf if re.search(rf"(?:^|[^0-9])(?:conc|c){conc}(?:[^0-9]|$)", name)
        ]
        pick = (
            tagged[0] if len(tagged) == 1 else self.aiperf[0] if len(self.aiperf) == 1 and len(planned) == 1 else None
        )
        return pick[1] if pick is not None else None


def judge(folder: Path) -> Verdict:
    """A launch's output folder, read once and judged by the one validity rule: the judge
    `infx launch` hands the launcher (infx.launch.run.launch_point), which never imports this package."""
    return PointArtifact.read(folder).verdict()


EVAL_ONLY, EVAL_AFTER_BENCHMARK = EvalKind.ONLY.value, EvalKind.AFTER_BENCHMARK.value  # the launch record's eval.kind


def eval_kind(record: LaunchRecord) -> str | None:
    """What eval the launch ran: its record's `eval.kind` (`only`, `after-benchmark`), or None for
    a throughput point (the record says null, or predates eval launches)."""
    kind = (record.eval or {}).get("kind")
    return kind if kind in (EVAL_ONLY, EVAL_AFTER_BENCHMARK) else None


def row_problem(row: dict) -> str | None:
    """Why a row cannot be compared or charted: the published schema refuses it, or a metric is
    not a finite number. The same check for a row just made and for one read from a results file."""
    problem = result_row_problem(row)
    if problem:
        return f"gives a row the schema refuses: {problem}"
    problem = metric_problem(row)
    return f"gives a row that cannot be compared: {problem}" if problem else None


def _os_reason(exc: OSError) -> str:
    """What the file system said (for UnusablePath: what the path is instead of a regular file)."""
    return exc.strerror or str(exc)


def _file_reason(name: str, exc: Exception) -> str:
    """Why a file of the artifact cannot be used, naming it (and the key path, for its JSON)."""
    if isinstance(exc, jsonfast.JSONProblem):
        where = f" (line {exc.line}, column {exc.column})" if exc.line else ""
        return f"{name} is not strict JSON: {exc.message}{where}"
    if isinstance(exc, OSError):
        return (
            f"{name} cannot be read: it {_os_reason(exc)}"
            if isinstance(exc, UnusablePath)
            else f"{name} cannot be read ({_os_reason(exc)})"
        )
    return f"{name}: {exc}"


def _read_object(folder: Path, name: str, limit: int) -> tuple[dict | None, str | None]:
    try:
        data = jsonfast.read(folder / name, limit)
    except (OSError, jsonfast.JSONProblem) as exc:
        return None, _file_reason(printable(name), exc)
    if not isinstance(data, dict):
        return None, f"{printable(name)} is not a JSON object"
    return data, None


def _result_files(folder: Path, top: list[Entry], record_name: str, stem: str, agentic: bool) -> list[ResultFile]:
    """The files named as results of this point (AgentX: `<stem>_conc<N>.json`; sa-bench: any
    `…conc<N>_gpus_<G>[_ctx_<P>_gen_<D>].json`), each read; one that is not a regular file is a problem."""
    agentic_name = re.compile(rf"{re.escape(stem)}_conc(\d+)\.json")
    found = []
    for entry in top:
        if entry.name == record_name or not entry.name.endswith(".json"):
            continue
        match = agentic_name.fullmatch(entry.name) if agentic else rowmaking.FIXED_FILE.search(entry.name)
        if not match:
            continue
        conc, shown = int(match.group(1) if agentic else match["conc"]), printable(entry.name)
        if not entry.is_file:
            found.append(
                ResultFile(
                    shown, conc, match, problem=f"{shown} is {entry.kind}, not a regular file (not followed or opened)"
                )
            )
            continue
        data, problem = _read_object(folder, entry.name, RESULT_MAX_BYTES)
        found.append(ResultFile(shown, conc, match, data, problem))
    return found


def _aiperf_files(folder: Path, tree: Tree) -> list[tuple[str, Any]]:
    wanted = [e for e in tree.files(LOGS_COPY) if e.name.rsplit("/", 1)[-1] == AIPERF_AGGREGATE][:AIPERF_READ]
    found = []
    for entry in wanted:
        data, problem = _read_object(folder, entry.name, AIPERF_MAX_BYTES)
        found.append((printable(entry.name), data if problem is None else problem))
    return found
