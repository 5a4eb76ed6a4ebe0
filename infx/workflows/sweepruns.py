"""What `infx github` does with a sweep and its runs, one function per subcommand, each taking a
typed request: the sticky PR report, the rerun of failed points, the check a rerun makes of the
run it reruns, and the selection of a rerun's points from a plan.

Each function is handed the repository slug and the command's one GitHub connection
(infx/workflows/github/client.py `Connection`, which loads PyGithub when it first connects).

Effects: network, filesystem: the GitHub API (runs, artifacts, the comment, the dispatch); the
plan, the comparison, the charts, the lane gate and a folder of artifacts read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import InfxError, UsageError, error
from ..jsonfast import JSONProblem, read
from ..points import point_id
from ..results.plot import read_chart_blocks
from ..sweepplan import SweepPlan, read_json
from .github.artifacts import artifact_infos, download_plan, run_artifacts
from .github.client import Connection
from .github.comments import upsert_comment
from .github.runs import dispatch_once, get_run, pull_branch, require_trusted
from .markers import PLAN_FILE
from .report import OUTCOME_OK, build_comment
from .rerun import dispatch_inputs, launch_id, outcomes, outcomes_from_names, select_rows, sweep_verdicts

COMPARISON_HINT = "Pass the file `infx results compare --format json --output` wrote."
Say = Callable[[str, bool], None]  # a line for the user as it happens (True: to stderr)


# --- the sticky report ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ReportRequest:
    """The sweep comment of pull request ``pr_number`` of ``slug``: the plan in ``plan``, each point's outcome
    from a folder of downloaded artifacts (``results``) or a run's artifacts (``run_id``), the
    comparison with the baseline, the charts and the lane gate when given."""

    slug: str
    pr_number: int
    plan: Path
    results: Path | None = None
    run_id: int | None = None
    comparison: Path | None = None
    charts: Path | None = None
    lane_gate: Path | None = None


@dataclass(frozen=True, kw_only=True)
class Posted:
    """What the report did: ``action`` (created or updated) on ``slug``#PR, of ``points`` points."""

    action: str
    slug: str
    points: int


def post_report(request: ReportRequest, github: Connection, say: Say) -> Posted:
    """Create or update the one sticky sweep comment on the pull request; ``say`` hears what it could not use."""
    slug = request.slug
    plan = SweepPlan.read(request.plan)
    plan_rows = plan.rows
    client = github.client()
    comparison, charts = results_inputs(request.comparison, request.charts)
    status, run_url, logs_links = None, None, {}
    if request.results is not None:
        if not request.results.is_dir():
            raise UsageError(
                f"--results {request.results} is not a folder", "Pass the folder the artifacts were downloaded to."
            )
        status = outcomes_from_names(plan_rows, [p.name for p in request.results.iterdir()])
    if request.run_id is not None:
        _, run = get_run(client, slug, request.run_id)
        artifacts = run_artifacts(client, run)
        verdicts, why_not = sweep_verdicts(client, artifacts)  # collect's verdicts first; else the artifact names
        if why_not:
            say(f"notice: run {request.run_id}'s results.json is not used ({why_not}); its artifact names decide", True)
        status = outcomes(plan_rows, artifact_infos(artifacts), verdicts)
        run_url = run.html_url
        logs_links = {a.name: f"{run_url}/artifacts/{a.id}" for a in artifacts}
    lane_gate = None
    if request.lane_gate is not None:
        gate = read_json(
            request.lane_gate, "lane gate file", "Pass the JSON written by `infx github lane-gate --output`."
        )
        lane_gate = gate.get("lanes") if isinstance(gate, dict) else None
    body = build_comment(
        plan.buckets,
        status,
        run_url,
        comparison=comparison,
        charts=charts,
        logs_links=logs_links,
        mode=plan.mode,
        lane_gate=lane_gate,
        reuse=plan.reuse,
        queue=plan.queue,
        lanes=plan.lanes,
    )
    action = upsert_comment(client, slug, request.pr_number, body)
    return Posted(action=action, slug=slug, points=len(plan_rows))


def results_inputs(comparison_path: Path | None, charts_path: Path | None) -> tuple[dict | None, list[str] | None]:
    """The comparison JSON and the chart blocks, when given; unreadable ones are usage errors."""
    comparison = None
    if comparison_path is not None:
        try:
            comparison = read(comparison_path, 1 << 30)  # the strict reader: regular files only, no NaN
        except (OSError, JSONProblem) as exc:
            raise UsageError(
                f"--comparison {comparison_path} is not readable JSON ({getattr(exc, 'strerror', None) or exc})",
                COMPARISON_HINT,
                str(comparison_path),
            ) from exc
        if not isinstance(comparison, dict) or "matches" not in comparison:
            raise UsageError(
                f"--comparison {comparison_path} is not a comparison", COMPARISON_HINT, str(comparison_path)
            )
    charts = None
    if charts_path is not None:
        if not charts_path.is_file():
            raise UsageError(
                f"--charts {charts_path} does not exist", "Pass charts.md from `infx results plot --output DIR`."
            )
        charts = read_chart_blocks(charts_path)
    return comparison, charts


# --- reruns ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RerunRequest:
    """Rerun the points of run ``run_id`` of ``slug`` without a valid result, through ``workflow`` on ``ref``
    (default: the run's branch); ``pr_number``: the pull request whose branch's runs are accepted."""

    slug: str
    run_id: int
    workflow: str
    ref: str | None = None
    pr_number: int | None = None
    dry_run: bool = False


@dataclass(frozen=True, kw_only=True)
class Rerun:
    """The run's points (``ids``) and their outcomes, the failed ones (in plan order), and the
    dispatch: its launch id, inputs and ref; ``run_url`` and ``created`` once dispatched."""

    ids: tuple[str, ...]
    status: dict[str, str]
    failed: tuple[str, ...]
    launch: str = ""
    inputs: dict[str, str] | None = None
    ref: str | None = None
    run_url: str | None = None
    created: bool = False


def rerun_failed(request: RerunRequest, github: Connection, say: Say) -> Rerun:
    """Dispatch a sweep of exactly the points of the run whose result artifact is missing or
    invalid (none: nothing is dispatched); with ``dry_run`` only decide the dispatch. ``say``
    hears each failed point (`outcome<TAB>point id`, before anything is dispatched)."""
    slug = request.slug
    client = github.client()
    repository, run = get_run(client, slug, request.run_id)
    require_trusted(run, slug, {pull_branch(client, repository, request.pr_number)} if request.pr_number else set())
    artifacts = run_artifacts(client, run)
    plan = SweepPlan.from_json(download_plan(client, run, artifacts), f"{PLAN_FILE} of run {request.run_id}")
    plan_rows = list({point_id(row): row for row in plan.rows}.values())
    ids = tuple(point_id(row) for row in plan_rows)
    verdicts, why_not = sweep_verdicts(client, artifacts)  # collect's verdicts first; else the artifact names
    if why_not:
        say(f"notice: run {request.run_id}'s results.json is not used ({why_not}); its artifact names decide", True)
    status = outcomes(plan_rows, artifact_infos(artifacts), verdicts)
    failed = tuple(pid for pid in ids if status[pid] != OUTCOME_OK)
    for pid in failed:
        say(f"{status[pid]}\t{pid}", False)
    if not failed:
        return Rerun(ids=ids, status=status, failed=failed)
    launch = launch_id(request.run_id, list(failed))
    inputs = dispatch_inputs(request.run_id, list(failed), launch)
    target_ref = request.ref or run.head_branch
    if request.dry_run:
        return Rerun(ids=ids, status=status, failed=failed, launch=launch, inputs=inputs, ref=target_ref)
    new_run, created = dispatch_once(client, repository, request.workflow, target_ref, inputs, launch)
    return Rerun(
        ids=ids,
        status=status,
        failed=failed,
        launch=launch,
        inputs=inputs,
        ref=target_ref,
        run_url=getattr(new_run, "html_url", None),
        created=created,
    )


def check_rerun(slug: str, run_id: int, ref_name: str, github: Connection) -> str:
    """The branch of run ``run_id`` of ``slug`` once it may drive a rerun on ``ref_name``: a run of
    this repository's sweep workflow, on this repository's code, on main or on ``ref_name``."""
    _, run = get_run(github.client(), slug, run_id)
    require_trusted(run, slug, {ref_name})
    return run.head_branch


def select_points(plan_path: Path, wanted: set[str]) -> dict[str, list[dict]]:
    """The buckets of the plan's rows whose point ids are ``wanted``; an id the plan does not
    have is a located error."""
    plan = SweepPlan.read(plan_path)
    unknown = sorted(wanted - {point_id(row) for row in plan.rows})
    if unknown:
        raise InfxError(
            error(
                str(plan_path),
                None,
                "unknown-point",
                f"{len(unknown)} point id(s) are not in this plan: {' '.join(unknown[:10])}",
                "Rerun against the plan of the run the ids came from.",
            )
        )
    return select_rows(plan.buckets, wanted)
