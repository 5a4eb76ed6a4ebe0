"""Accuracy evals: the suite a repository runs, the protocol a row records, a run's and a point's eval choice.

``benchmarks/evals/suite.yaml`` (schema ``infx/schemas/eval-suite.schema.json``) names the harness (lm-eval, its
version, the model adapter, the chat template) and the task files; the harness files beside it are fixed
(:data:`ENTRY_POINT`, :data:`RUNNER`); each task file (lm-evaluation-harness's format) holds its own shots, output
budget and temperature. :func:`load_suite` reads both into an :class:`EvalSuite`, whose :meth:`EvalSuite.protocol` is
the one ``eval-protocol`` a matrix row and a launch record carry (with every file's SHA-256, so an edited task file
changes the point's result key).

:class:`EvalMode` is the one type of a run's eval choice: which evals the matrix, a changelog entry,
a PR's labels and the sweep plan ask for (their flags, fields and labels are read into it).

:class:`PointEval` is the one reading of a row's eval fields (``run-eval``, ``eval-only``,
``eval-conc``, ``eval-all-concs`` and an ``EVAL_ONLY=true`` setting): whether the point runs an
eval, with or without its benchmark, and at which concurrencies.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import Enum, Flag
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from . import shapes
from .diagnostics import Diagnostic, UsageError, error
from .diskcache import read_cached, write_cached
from .fsio import is_file, read_bytes
from .points import concurrencies
from .schema import schema_diagnostics
from .workers import ROLES, workers_settings
from .yamlcache import load_yaml_cached
from .yamldoc import Document

# PyYAML is imported only to parse a task file not seen before (infx/yamlcache.py: a warm matrix
# run never imports it).

EVALS_DIR = "benchmarks/evals"  # the repository's eval home, as RECIPES_DIR is for recipes
SUITE_FILE = f"{EVALS_DIR}/suite.yaml"
# The harness beside the suite: the entry point srt-slurm's lm-eval stage sources, and what it runs.
ENTRY_POINT, RUNNER = "benchmark_lib.sh", "run_lm_eval.py"
MAX_FILE_BYTES = 1024 * 1024  # every suite file is a few KB; anything larger is refused, never read whole
PROTOCOL_FIELD = "eval-protocol"  # the row and launch-record field


class EvalMode(Flag):
    """Which evals a run asks for. ONLY and ALL combine (``--evals-only --all-evals``).

    The matrix builds rows of one mode (docs/matrix.md); a plan builds its throughput rows with NONE
    and its eval rows with ONLY (ONLY | ALL when an entry or a label asks for every eval point).
    """

    DEFAULT = 0  # throughput rows; the default eval policy marks some of them run-eval
    NONE = 1  # --no-evals, an entry's no-evals: throughput rows, none marked
    ONLY = 2  # --evals-only, the evals-only field and label: only the default-selected eval rows (agentic included)
    ALL = 4  # --all-evals, the all-evals field and label: every 8k1k / agentic point as an eval row

    @classmethod
    def of(cls, *, no_evals: bool = False, evals_only: bool = False, all_evals: bool = False) -> EvalMode:
        """The mode the three spellings (matrix flags, changelog entry fields, PR labels) ask for."""
        mode = cls.DEFAULT
        for flag, asked in ((cls.NONE, no_evals), (cls.ONLY, evals_only), (cls.ALL, all_evals)):
            if asked:
                mode |= flag
        return mode

    def check(self) -> None:
        if EvalMode.NONE in self and (EvalMode.ALL in self or EvalMode.ONLY in self):
            other = "--all-evals" if EvalMode.ALL in self else "--evals-only"
            raise UsageError(f"{other} cannot be combined with --no-evals", "Choose one eval mode.")

    @property
    def evals_only(self) -> bool:
        """Only eval rows (ONLY or ALL): the matrix's reading, and what makes the accuracy gate require evals."""
        return bool(self & (EvalMode.ONLY | EvalMode.ALL))


class EvalKind(str, Enum):
    """What a point runs: its benchmark only, its benchmark then an eval, or only the eval."""

    NONE = "none"
    AFTER_BENCHMARK = "after-benchmark"  # run-eval without eval-only: srt-slurm's RUN_EVAL
    ONLY = "only"  # eval-only (or EVAL_ONLY=true): srt-slurm's EVAL_ONLY, no benchmark stage


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def eval_only(row_eval_only: Any, settings: dict[str, list[str]]) -> bool:
    """The row's ``eval-only``, or its last ``EVAL_ONLY=`` setting being true (as the reference's launcher reads it)."""
    return _true(row_eval_only) or _true((settings.get("EVAL_ONLY") or [""])[-1])


@dataclass(frozen=True)
class PointEval:
    """A point's eval choice, read once from its row."""

    kind: EvalKind
    concs: tuple[int, ...] = ()  # what EVAL_CONC names: one value, or every concurrency (eval-all-concs)

    @classmethod
    def of(cls, row: dict, settings: dict[str, list[str]]) -> PointEval:
        only = eval_only(row.get("eval-only"), settings)
        if not (only or _true(row.get("run-eval"))):
            return cls(EvalKind.NONE)
        concs = [c for c in concurrencies(row) if isinstance(c, int) and not isinstance(c, bool)]
        if _true(row.get("eval-all-concs")):
            chosen = tuple(dict.fromkeys(concs))
        elif isinstance(row.get("eval-conc"), int) and not isinstance(row.get("eval-conc"), bool):
            chosen = (row["eval-conc"],)
        else:  # a single-node row's one concurrency; srt-slurm's own fallback for a list is its largest
            chosen = (max(concs),) if concs else ()
        return cls(EvalKind.ONLY if only else EvalKind.AFTER_BENCHMARK, chosen)

    @classmethod
    def of_point(cls, row: dict) -> PointEval:
        """The choice of a whole point, its settings read from every worker block (as the launch reads them)."""
        return cls.of(row, workers_settings(*(row.get(role) for role in ROLES)))

    @property
    def runs(self) -> bool:
        return self.kind is not EvalKind.NONE

    @property
    def conc_text(self) -> str:
        """EVAL_CONC as srt-slurm's lm-eval stage reads it: concurrencies separated by spaces."""
        return " ".join(str(c) for c in self.concs)

    def to_json(self) -> dict:
        return {"kind": self.kind.value, "concs": list(self.concs)}


@dataclass(frozen=True)
class SuiteFile:
    """A file of the suite: its path in the repository and its SHA-256."""

    path: str  # relative to the repository root
    sha256: str

    def to_json(self) -> dict:
        return {"path": self.path, "sha256": self.sha256}


@dataclass(frozen=True)
class TaskProtocol:
    """One task as the task file defines it, and what the suite says of it: whether eval points
    run it (``enabled``) and the runner's variables it needs while they do (``requires_env``)."""

    task: str
    file: SuiteFile
    helpers: tuple[SuiteFile, ...]
    num_fewshot: int
    max_gen_tokens: int
    temperature: int | float
    enabled: bool = True
    requires_env: tuple[str, ...] = ()
    where: tuple[int, int] | None = None  # its entry in the suite file

    def to_json(self) -> dict:
        return {
            "task": self.task,
            "file": self.file.path,
            "num-fewshot": self.num_fewshot,
            "max-gen-tokens": self.max_gen_tokens,
            "temperature": self.temperature,
        }


@dataclass(frozen=True)
class EvalSuite:
    """The repository's eval suite: the harness and the tasks every eval point runs."""

    file: str
    package: str
    version: str
    model: str
    chat_template: bool
    entry_point: SuiteFile
    runner: SuiteFile
    tasks: tuple[TaskProtocol, ...]  # the enabled tasks: what every eval point runs
    digest: str  # SHA-256 over the suite file's and every file an eval point runs' path and digest
    opt_in: tuple[TaskProtocol, ...] = ()  # tasks checked but not run (`enabled: false`)

    @property
    def required_env(self) -> tuple[tuple[str, TaskProtocol], ...]:
        """(variable, task) for each variable an enabled task needs from the launching runner."""
        return tuple((name, task) for task in self.tasks for name in task.requires_env)

    def protocol(self) -> dict:
        """The ``eval-protocol`` of every eval row (row schema ``$defs/eval-protocol``); ``sha256`` covers
        the suite file and every file it names, so any edit to them moves the point's result key."""
        return {
            "lm-eval": self.version,
            "model": self.model,
            "chat-template": self.chat_template,
            "tasks": [task.to_json() for task in self.tasks],
            "sha256": self.digest,
        }

    def files(self) -> list[SuiteFile]:
        """Every file an eval run needs from the repository."""
        return [self.entry_point, self.runner, *(f for task in self.tasks for f in (task.file, *task.helpers))]


@lru_cache(maxsize=1)
def _code_digest() -> bytes:
    return hashlib.sha256(Path(__file__).read_bytes()).digest()


def _task_fields(content: bytes) -> dict:
    """A task file's protocol fields as written (``task``, ``num_fewshot``, ``max_gen_toks``,
    ``temperature``), kept in infx's cache by the file's bytes. lm-eval task files name Python hooks
    with ``!function module.name``: read as a plain string (infx never imports them; the harness does,
    inside the serving container); any other tag is refused (a safe loader)."""
    entry = f"eval-task-{hashlib.sha256(_code_digest() + content).hexdigest()[:32]}.json"
    cached = read_cached(entry)
    if cached is not None:
        try:
            return json.loads(cached)
        except ValueError:
            pass  # a damaged entry: parse afresh
    import yaml

    # libyaml when present: 10x faster
    loader = cast("type[yaml.SafeLoader]", type("TaskLoader", (getattr(yaml, "CSafeLoader", yaml.SafeLoader),), {}))

    def function_tag(self: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        return self.construct_scalar(node)

    loader.add_constructor("!function", function_tag)
    try:
        data = yaml.load(content.decode("utf-8"), Loader=loader)  # noqa: S506 (a safe loader with one string tag)
    except yaml.YAMLError as exc:
        raise ValueError(f"not YAML infx can read: {exc}") from None
    generation = data.get("generation_kwargs") or {}
    fields = {
        "task": data["task"],
        "num_fewshot": data.get("num_fewshot", 0),
        "max_gen_toks": generation["max_gen_toks"],
        "temperature": generation.get("temperature", 0.0),
    }
    write_cached(entry, json.dumps(fields).encode())
    return fields


def _read(path: Path) -> bytes:
    """A suite file's bytes; ValueError when it is larger than :data:`MAX_FILE_BYTES` (OSError when unreadable)."""
    content = read_bytes(path, limit=MAX_FILE_BYTES)
    if len(content) > MAX_FILE_BYTES:
        raise ValueError(f"it is larger than {MAX_FILE_BYTES:,} bytes")
    return content


def _digest(path: Path) -> str:
    return hashlib.sha256(_read(path)).hexdigest()


def _suite_file(root: Path, relative: str, doc: Document, where: tuple, problems: list[Diagnostic]) -> SuiteFile | None:
    """A file named by the suite: relative to the suite's folder, inside it."""
    folder = str(Path(doc.file).parent)
    path = f"{folder}/{relative}"
    problem = shapes.problem("relative-path", relative, "the file")
    if problem is None:
        try:
            shapes.inside(root / folder, relative, relative)
        except shapes.Escape as exc:
            problem = str(exc)
    if problem is None and not is_file(root / path):
        problem = f"{path} does not exist or is not a file"
    digest = None
    if problem is None:
        try:
            digest = _digest(root / path)
        except (OSError, ValueError) as exc:
            problem = f"{path} cannot be read: {exc}"
    if problem:
        problems.append(
            error(
                doc.file,
                doc.where(where),
                "eval-workspace-missing",
                problem,
                f"Every file {doc.file} names, and its harness ({ENTRY_POINT}, {RUNNER}), is a file inside {folder}/: "
                "add it, or fix the name.",
            )
        )
        return None
    assert digest is not None  # read whenever there is no problem
    return SuiteFile(path, digest)


def _task_protocol(
    root: Path, entry: dict, index: int, doc: Document, problems: list[Diagnostic]
) -> TaskProtocol | None:
    where = ("tasks", index, "file")
    task_file = _suite_file(root, entry["file"], doc, where, problems)
    helpers = [
        _suite_file(root, name, doc, ("tasks", index, "helpers", i), problems)
        for i, name in enumerate(entry.get("helpers", []))
    ]
    if task_file is None or None in helpers:
        return None
    try:
        fields = _task_fields(_read(root / task_file.path))
        name, shots, budget, temperature = (
            fields["task"],
            fields["num_fewshot"],
            fields["max_gen_toks"],
            fields["temperature"],
        )
        if (
            not isinstance(name, str)
            or not name
            or not isinstance(shots, int)
            or not isinstance(budget, int)
            or not isinstance(temperature, (int, float))
            or isinstance(temperature, bool)
        ):
            raise ValueError(
                "task must be a name, num_fewshot and generation_kwargs.max_gen_toks whole numbers, "
                "generation_kwargs.temperature a number"
            )
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        problems.append(
            error(
                task_file.path,
                None,
                "eval-task-file",
                f"cannot read the task's protocol: {exc!r}"
                if isinstance(exc, KeyError)
                else f"cannot read the task's protocol: {exc}",
                "A task file states task, num_fewshot, generation_kwargs.max_gen_toks and .temperature "
                "(lm-evaluation-harness's task format).",
            )
        )
        return None

    if (problem := shapes.problem("name", name, "the task name")) is not None:
        problems.append(error(task_file.path, None, "eval-task-file", problem, f"Accepted: {shapes.accepted('name')}."))
        return None
    # 0 rather than 0.0: a workflow's toJSON writes a whole float as an integer, and the point must
    # come back byte for byte (its result key is a hash of its canonical JSON)
    temperature = int(temperature) if float(temperature).is_integer() else float(temperature)
    return TaskProtocol(
        name,
        task_file,
        tuple(h for h in helpers if h),
        shots,
        budget,
        temperature,
        entry.get("enabled", True),
        tuple(entry.get("requires-env", ())),
        doc.where(("tasks", index)),
    )


def load_suite(root: Path, relative: str = SUITE_FILE) -> tuple[EvalSuite | None, list[Diagnostic]]:
    """The suite at ``root/relative`` (a file in :data:`EVALS_DIR`) with the harness and every task
    file checked and hashed; (None, located problems) otherwise."""
    try:
        shapes.inside(root, relative, "the eval suite")
    except shapes.Escape as exc:
        return None, [error(relative, None, "eval-workspace-missing", str(exc), "Name a file inside the repository.")]
    doc, problems = load_yaml_cached(root / relative, display=relative)
    if doc is None:  # a document, or the problems that kept it from loading
        return None, [
            error(
                relative,
                None,
                "eval-workspace-missing",
                f"the eval suite cannot be read: {problems[0].message}",
                f'Add {relative} (see docs/launch.md, "Evals"), or take the eval rows out of the run.',
            )
        ] if problems[0].rule == "file-missing" else problems
    problems = schema_diagnostics(
        "eval-suite",
        doc,
        doc.data,
        root_label="(top level)",
        rule="eval-suite-schema",
        hint='`infx config shipped eval-suite.schema.json` prints the accepted keys (docs/launch.md, "Evals").',
    )
    if problems:
        return None, problems
    data = doc.data
    harness = data["harness"]
    entry = _suite_file(root, ENTRY_POINT, doc, ("harness",), problems)
    runner = _suite_file(root, RUNNER, doc, ("harness",), problems)
    tasks = [_task_protocol(root, item, index, doc, problems) for index, item in enumerate(data["tasks"])]
    names = [task.task for task in tasks if task]
    for index, task in enumerate(tasks):
        if task and names.count(task.task) > 1:
            problems.append(
                error(
                    doc.file,
                    doc.where(("tasks", index)),
                    "eval-suite-schema",
                    f"task {task.task!r} is named by two task files",
                    "Give every task file its own task: name.",
                )
            )
            break
    if problems or entry is None or runner is None:
        return None, problems
    kept = tuple(t for t in tasks if t and t.enabled)
    if not kept:
        return None, [
            error(
                doc.file,
                doc.where(("tasks",)),
                "eval-suite-schema",
                "every task is `enabled: false`: an eval point would run nothing",
                "Enable at least one task (gsm8k runs without a token).",
            )
        ]
    try:
        suite_digest = _digest(root / relative)
    except (OSError, ValueError) as exc:
        return None, [error(relative, None, "eval-workspace-missing", f"the eval suite cannot be read: {exc}", "")]
    named = [SuiteFile(relative, suite_digest), entry, runner, *(f for t in kept for f in (t.file, *t.helpers))]
    digest = hashlib.sha256("\n".join(f"{f.path} {f.sha256}" for f in named).encode()).hexdigest()
    return EvalSuite(
        relative,
        harness["package"],
        str(harness["version"]),
        harness["model"],
        bool(harness["chat-template"]),
        entry,
        runner,
        kept,
        digest,
        tuple(t for t in tasks if t and not t.enabled),
    ), []
