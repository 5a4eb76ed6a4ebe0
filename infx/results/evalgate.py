"""The eval gate: every strict and flexible exact-match score of an eval row against its floor.

The floors are `configs/eval-thresholds.yaml` (without one, the policy infx ships,
infx/config/eval-thresholds.yaml, with a notice), checked against
infx/schemas/eval-thresholds.schema.json. A row's floor is `models.<model_prefix>.<task>`, else
`default.<task>`; a score equal to its floor passes. Each failure is one diagnostic located at
the floor it broke, naming the point, concurrency, task, metric, value and the floor's source;
the problems `collect` found in the eval folders (batch manifests, unreadable files) are
reported under their own rule ids.

Given the sweep's plan (``--plan``, what the results job passes), its run mode says whether the
run was to measure accuracy: `evals-only` and `all-evals` runs require a score of every planned
eval point (one without an eval row is `eval-missing`) and at least one eval row (`eval-none`);
any other run is gated on the eval rows it has (none is no failure). Without a plan the gate
requires eval rows, as for an eval run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config.shipped import SHIPPED_POLICIES, copy_hint
from ..diagnostics import Diagnostic, InfxError, Report, Severity, error, render, render_json
from ..evalsuite import PointEval
from ..points import point_id
from ..reporoot import repository_root, shown_path
from ..schema import schema_diagnostics
from ..sweepplan import SweepPlan
from ..yamldoc import Document
from ..yamlio import load_yaml
from .evals.collection import read_results_evals
from .evals.rows import EvalCollection, EvalRow, EvalSet
from .evals.rules import HINTS

DEFAULT_THRESHOLDS = "configs/eval-thresholds.yaml"
SHIPPED_THRESHOLDS = SHIPPED_POLICIES["eval-thresholds.yaml"]
THRESHOLDS_SCHEMA = "eval-thresholds"
METRICS = ("em_strict", "em_flexible")  # the exact-match scores of a row the gate checks

# The gate's own rules (the folder rules are infx.results.evals.rules.RULES), with the line docs/results.md gives each.
GATE_RULES = {
    "eval-below-threshold": "a strict or flexible exact-match score is below its floor (equal passes).",
    "eval-no-metric": "an eval row has no strict and no flexible exact-match score to check.",
    "eval-no-threshold": "no floor for the row's task: neither `models.<prefix>.<task>` nor `default.<task>`.",
    "eval-none": "the results hold no eval row and no eval folder, in a run that was to measure accuracy (an "
    "evals-only or all-evals plan, or no --plan).",
    "eval-thresholds-default": "(notice) the repository has no configs/eval-thresholds.yaml: the floors infx ships "
    "apply.",
    "results-json": "RESULTS_JSON is not strict JSON, not an object, or its `evals` section is not what collect "
    "writes.",
}


@dataclass(frozen=True)
class Floor:
    value: float
    source: str  # `models.dsv4.gsm8k` or `default.gsm8k`
    file: str
    where: tuple[int, int]  # line, column of the floor in the file


@dataclass(frozen=True)
class Thresholds:
    file: str
    floors: dict  # (model prefix, or None for the default, task) -> Floor
    where: tuple[int, int]  # of `default`, where a missing floor belongs

    def floor(self, prefix: str, task: str) -> Floor | None:
        return self.floors.get((prefix, task)) or self.floors.get((None, task))

    @classmethod
    def from_document(cls, doc: Document) -> Thresholds:
        """From a document the thresholds schema accepted."""
        floors = {
            (None, task): Floor(float(value), f"default.{task}", doc.file, doc.where(("default", task)))
            for task, value in doc.data["default"].items()
        }
        for prefix, tasks in (doc.data.get("models") or {}).items():
            for task, value in tasks.items():
                floors[(prefix, task)] = Floor(
                    float(value), f"models.{prefix}.{task}", doc.file, doc.where(("models", prefix, task))
                )
        return cls(doc.file, floors, doc.where(("default",)))


SHIPPED_LABEL = "the floors infx ships (infx/config/eval-thresholds.yaml)"


def floors_source(file: str, root: Path | None = None) -> str:
    """Where floors come from, as a reader of the comment knows the place: a path relative to the
    repository (``configs/eval-thresholds.yaml``), or the floors infx ships (never where pip put them)."""
    path = Path(file).resolve()
    if path == SHIPPED_THRESHOLDS:
        return SHIPPED_LABEL
    try:
        return path.relative_to((root or repository_root()).resolve()).as_posix()
    except ValueError:
        return file


def thresholds_path(given: Path | None, root: Path | None = None) -> tuple[Path, list[Diagnostic]]:
    """The floors to apply: ``given``, else the repository's (``root``, default: the repository root,
    infx/reporoot.py), else the shipped ones (with a notice)."""
    if given is not None:
        return given, []
    own = (shown_path(repository_root()) if root is None else root) / DEFAULT_THRESHOLDS
    if own.is_file():
        return own, []
    return SHIPPED_THRESHOLDS, [
        Diagnostic(
            str(own),
            None,
            None,
            "eval-thresholds-default",
            f"no {DEFAULT_THRESHOLDS}: using {SHIPPED_LABEL}",
            copy_hint("eval-thresholds.yaml", "a floor"),
            Severity.NOTICE,
        )
    ]


def load_thresholds(path: Path) -> tuple[Thresholds | None, list[Diagnostic]]:
    """The thresholds file, schema-checked: (Thresholds, []) or (None, located problems). A file
    that cannot be read at all raises InfxError with exit 2."""
    doc, problems = load_yaml(path)
    if any(d.rule in ("file-missing", "file-unreadable") for d in problems):
        raise InfxError(problems, exit_code=2)
    if doc is None:
        return None, problems
    found = schema_diagnostics(
        THRESHOLDS_SCHEMA,
        doc,
        doc.data,
        root_label="the thresholds file",
        hint=lambda path: (
            f"Floors are fractions from 0 to 1 under `default.<task>` or `models.<prefix>.<task>`; "
            f"see {SHIPPED_THRESHOLDS}."
        ),
    )
    return (None, found) if found else (Thresholds.from_document(doc), [])


@dataclass(frozen=True)
class Verdict:
    """One score checked against its floor."""

    row: EvalRow
    metric: str
    value: float
    floor: Floor

    @property
    def passed(self) -> bool:
        return self.value >= self.floor.value

    def to_json(self) -> dict:
        return {
            "point-id": self.row.point_id,
            "config-key": self.row.config_key,
            "source": self.row.source,
            "conc": self.row.conc,
            "task": self.row.task,
            "metric": self.metric,
            "value": self.value,
            "floor": self.floor.value,
            "floor-source": self.floor.source,
            "passed": self.passed,
        }


@dataclass
class GateReport(Report):
    """The diagnostics (ok and the exit code as any report's) and every score compared."""

    verdicts: list[Verdict] = field(default_factory=list)
    rows: int = 0

    def summary(self) -> str:
        below = sum(not v.passed for v in self.verdicts)
        other = sum(d.is_error for d in self.diagnostics) - below
        return (
            f"infx results check-evals: {len(self.verdicts)} scores of {self.rows} eval rows checked: "
            f"{len(self.verdicts) - below} at or above their floor, {below} below"
            + (f"; {other} other problem(s)" if other else "")
        )

    def render(self, fmt: str) -> tuple[str, str]:
        """(stdout, stderr) for ``fmt`` (text, json, github): JSON carries every verdict."""
        if fmt == "json":
            return render_json(self.diagnostics, self.ok, checked=[v.to_json() for v in self.verdicts]), ""
        text = render(self.diagnostics, fmt, self.ok)
        if fmt == "text":
            return "", "\n".join(filter(None, [text, self.summary()]))
        return text, self.summary()


BELOW, OK, NO_FLOOR, NO_METRIC = (
    "below",
    "ok",
    "no-floor",
    "no-metric",
)  # a row's status (the Accuracy section shows it)


def judge_row(row: EvalRow, thresholds: Thresholds | None) -> tuple[str, Floor | None, list[Verdict]]:
    """One eval row against its floor: its status, the floor and a verdict per exact-match score
    (``thresholds`` None: the floors could not be read, so no floor)."""
    scores = [(metric, getattr(row, metric)) for metric in METRICS if getattr(row, metric) is not None]
    if not scores:
        return NO_METRIC, None, []
    floor = thresholds.floor(row.model_prefix, row.task) if thresholds is not None else None
    if floor is None:
        return NO_FLOOR, None, []
    judged = [Verdict(row, metric, value, floor) for metric, value in scores]
    return (OK if all(v.passed for v in judged) else BELOW), floor, judged


def repository_floors(given: Path | None = None, root: Path | None = None) -> tuple[Thresholds | None, list[str]]:
    """The floors the gate applies (``given``, the repository's, else the shipped ones), and why
    none when they cannot be read: for a comparison, which shows them and never fails on them."""
    path, _ = thresholds_path(given, root)
    try:
        floors, problems = load_thresholds(path)
    except InfxError as exc:
        problems = exc.diagnostics
        floors = None
    return floors, (
        []
        if floors is not None
        else [
            f"the score floors in {path} cannot be used ({problems[0].message if problems else 'unreadable'}): "
            "no floor is shown"
        ]
    )


def _shown(value: float, floor: float) -> str:
    """Four decimals, as the reference prints scores, unless that would hide that the value is below."""
    text = f"{value:.4f}"
    return repr(value) if float(text) >= floor > value else text


@dataclass(frozen=True)
class PlannedPoint:
    point_id: str
    result_key: str | None
    config_key: str | None


@dataclass(frozen=True)
class PlannedEvals:
    """What a sweep's plan asks of evals: whether its mode requires them (`evals-only`,
    `all-evals`) and its eval points (the rows that run an eval, infx.evalsuite.PointEval), but those
    the plan held for want of a lane (infx/launch/lanecheck.py: reported there, never dispatched)."""

    file: str
    required: bool
    points: tuple[PlannedPoint, ...] = ()

    @classmethod
    def read(cls, path: Path) -> PlannedEvals:
        """From `infx plan --format json` (what the sweep uploads as sweep-plan/plan.json); a file that
        cannot be read is a usage error (exit 2), one that is no plan a located error (exit 1)."""
        plan = SweepPlan.read(path)
        points = tuple(
            PlannedPoint(point_id(row), row.get("result-key"), row.get("config-key"))
            for row in plan.rows
            if PointEval.of_point(row).runs and point_id(row) not in plan.lane_held  # held: never dispatched
        )
        return cls(str(path), bool(plan.mode and plan.mode.evals.evals_only), points)


def _missing(evals: EvalCollection, planned: PlannedEvals, results_file: str) -> list[Diagnostic]:
    """eval-missing for each planned eval point without an eval row whose eval folder says nothing
    (its folder's own problems, reported under their rules, already say why it has none)."""
    scored = {key for row in evals.rows for key in (row.point_id, row.result_key) if key}
    explained = {found.point_id for found in evals.sets if found.point_id and found.problems}
    found = []
    for point in planned.points:
        if point.point_id in scored or (point.result_key and point.result_key in scored) or point.point_id in explained:
            continue
        found.append(
            error(
                results_file,
                None,
                "eval-missing",
                f"point {point.point_id} ({point.config_key or 'unknown config key'}) was planned to measure accuracy "
                "and has no eval row: no artifact of it was collected (its job did not run, or uploaded nothing)",
                "An evals-only or all-evals run needs a score of every eval point: read the point's logs "
                "(LOGS/job/eval.out) and rerun it (infx github rerun-failed).",
            )
        )
    return found


def _set_who(found: EvalSet) -> str:
    return (
        f"point {found.point_id} ({found.config_key or 'unknown config key'})"
        if found.point_id
        else f"eval folder {found.folder}"
    )


def check_evals(
    evals: EvalCollection, thresholds: Thresholds, results_file: str, planned: PlannedEvals | None = None
) -> GateReport:
    """Every check of the gate over collected evals (see the module docstring)."""
    diagnostics: list[Diagnostic] = []
    verdicts: list[Verdict] = []
    if planned is not None and planned.required:
        diagnostics += _missing(evals, planned, results_file)
    if not evals.sets and (planned is None or planned.required):
        diagnostics.append(
            error(
                results_file,
                None,
                "eval-none",
                "the results hold no eval row and no eval folder: no score was measured",
                "Collect the eval points' artifacts (their eval/ folders); an eval point without a result is "
                "eval-missing.",
            )
        )
    for found in evals.sets:
        diagnostics += [
            error(p.file, None, p.rule, f"{_set_who(found)}: {p.message}", HINTS.get(p.rule, ""))
            for p in found.problems
        ]
    for row in evals.rows:
        where = f"{row.who}, concurrency {row.conc}, task {row.task}"
        status, floor, judged = judge_row(row, thresholds)
        if status == NO_METRIC:
            diagnostics.append(
                error(
                    row.source,
                    None,
                    "eval-no-metric",
                    f"{where}: no strict or flexible exact-match score to check (its score is "
                    f"{row.score_name or 'none'})",
                    "The gate checks exact-match scores (tasks with strict-match / flexible-extract filters, as "
                    "gsm8k); run the task the lane's eval recipe names.",
                )
            )
            continue
        if status == NO_FLOOR:
            diagnostics.append(
                error(
                    thresholds.file,
                    thresholds.where,
                    "eval-no-threshold",
                    f"{where}: no floor for task {row.task!r} (neither models.{row.model_prefix}.{row.task} "
                    f"nor default.{row.task})",
                    f"Add `{row.task}: <floor>` under `default:` (or under `models: {row.model_prefix}:`), "
                    "calibrated from many runs of the task.",
                )
            )
            continue
        for verdict in judged:
            metric, value, floor = verdict.metric, verdict.value, verdict.floor
            verdicts.append(verdict)
            if not verdict.passed:
                diagnostics.append(
                    error(
                        floor.file,
                        floor.where,
                        "eval-below-threshold",
                        f"{where}: {metric} {_shown(value, floor.value)} is below the floor {floor.value:g} "
                        f"({floor.source})",
                        f"Scores from {row.source} (its samples file shows each answer). A real regression blocks the "
                        "merge; a floor is changed only from many runs of the same protocol.",
                    )
                )
    return GateReport(diagnostics, verdicts, len(evals.rows))


@dataclass(frozen=True)
class CheckEvalsRequest:
    """`infx results check-evals`: a results.json, the floors (None: configs/eval-thresholds.yaml, else the
    floors infx ships) and the sweep's plan (None: no planned eval point is required)."""

    results: Path
    thresholds: Path | None = None
    plan: Path | None = None


def gate(request: CheckEvalsRequest, root: Path | None = None) -> GateReport:
    """Read the results' evals, the floors and (``plan``) what the sweep asked for; check every score."""
    path, notices = thresholds_path(request.thresholds, root)
    floors, problems = load_thresholds(path)
    evals = read_results_evals(request.results)
    planned = PlannedEvals.read(request.plan) if request.plan is not None else None
    if floors is None:
        return GateReport(notices + problems, [], len(evals.rows))
    report = check_evals(evals, floors, str(request.results), planned)
    report.diagnostics[:0] = notices
    return report
