"""From a point and a lane profile to a LaunchPlan, with every check run before any side effect.

``plan_point`` runs the registered rules of ``infx/launch/planrules.py`` in order; they read files
only (the point, the profile, the in-repo recipe). A recipe that ships with srt-slurm itself (the
route's ``srt-slurm-recipes``) cannot be read yet: the plan marks it deferred and
``infx.launch.checkout.resolve_in_checkout`` runs the same checks on it after checkout, before submit.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, InfxError, warning
from ..jsonfast import canonical
from ..points import point_id
from ..recipes import recipe_node_count
from . import checks, prepare, staging
from .agentic import DRY_RUN_REPOSITORY, AgenticBenchmark
from .evalenv import DRY_RUN_OUTPUT, DRY_RUN_WORKSPACE, EvalLaunch, secret_problems, stage_workspace
from .lane import SRTCTL, Lane, ModelEntry, Pin, Route, Source, find_lane, load_lane_file
from .planrules import PlanContext, RecipeSource, run_rules
from .pointfile import PointFile, load_point
from .resultkey import result_key

RESOLVED_DIR = "recipes/infx-resolved"  # inside the srt-slurm checkout
DRY_RUN_GUARD = "<launch dir>/squash_guard.py"  # the launch copies the guard there


@dataclass(kw_only=True)
class LaunchPlan:
    lane: Lane
    point: PointFile
    route: Route
    pin: Pin
    model: ModelEntry
    recipe_source: RecipeSource
    recipe: dict | None  # the flat resolved recipe; None while deferred to the checkout
    sources: list[Source]
    job_name: str
    partition: str
    time_limit: str
    tags: str
    power: bool
    result_name: str = ""  # $RESULT_FILENAME, else <exp-name>_<point id> (launch/staging.py)
    evaluation: EvalLaunch | None = None  # the eval this point runs, if any
    warnings: list[Diagnostic] = field(default_factory=list)
    # An AgentX benchmark stage: the benchmark.env values from the point (agentic.BENCHMARK_ENV), known at
    # planning; ``agentic`` once the recipe took them (for a recipe shipped with srt-slurm, after checkout).
    agentic_profile: tuple[tuple[str, str, bool], ...] | None = None
    agentic: AgenticBenchmark | None = None
    root: Path = Path(".")  # the repository checkout: an agentic point's workspace

    @property
    def point_id(self) -> str:
        return point_id(self.point.data)

    @property
    def resolved_path(self) -> str:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", self.job_name)
        return f"{RESOLVED_DIR}/{safe}.yaml"

    @property
    def node_count(self) -> int | None:
        if self.recipe is not None:
            return recipe_node_count(self.recipe)
        value = self.point.data.get("node-count")
        return int(value) if isinstance(value, int) else None

    def environment(
        self, out: str, workspace: str, result_name: str | None = None, repository: str = DRY_RUN_REPOSITORY
    ) -> dict[str, str]:
        """Every variable infx adds to srtctl's environment: RESULT_FILENAME, INFMAX_WORKSPACE (the eval
        workspace for an eval point, the repository checkout for an AgentX benchmark, whose harness is
        there, else the output dir) and an eval point's variables."""
        mounted = workspace if self.evaluation else repository if self.agentic_profile is not None else out
        env = {"RESULT_FILENAME": result_name or self.result_name, "INFMAX_WORKSPACE": mounted}
        if self.evaluation:
            env.update(self.evaluation.variables)
        return env

    def stage_eval_workspace(self, root: Path, dest: Path) -> Path:
        """The eval workspace (evalenv.stage_workspace) with this point's identity for meta_env.json."""
        identity = {
            "point-id": self.point_id,
            "config-key": self.point.data.get("config-key"),
            "lane": self.lane.name,
            "result-key": self.result_key(),
        }
        assert self.evaluation is not None  # asked of an eval point only
        return stage_workspace(self.evaluation, root, dest, self.point.data, identity)

    def argv(self) -> list[str]:
        return ["srtctl", "apply", "-f", self.resolved_path, "--tags", self.tags, *self.route.srtctl_flags]

    def resolved_recipe_digest(self) -> str | None:
        """SHA-256 of the resolved recipe (canonical JSON): what srtctl was given. Not the row's
        recipe-fingerprint, which fingerprints the point's topology."""
        if self.recipe is None:
            return None
        return hashlib.sha256(canonical(self.recipe, default=str)).hexdigest()

    def result_key(self) -> str | None:
        return result_key(self)

    def cluster_config(self, checkout: str, squash_file: str) -> dict:
        """srtslurm.yaml for the checkout: one model alias, every container alias -> the image's squash."""
        containers = {alias: squash_file for alias in self.lane.container_aliases}
        for spelling in sorted(checks.image_spellings(str(self.point.data.get("image")))):  # a recipe may use either
            containers[spelling] = squash_file
        for extra in self.lane.prepare.images:  # e.g. nginx-sqsh -> nginx_1.27.4.sqsh
            if extra.alias:
                containers[extra.alias] = prepare.squash_file(self.lane.squash_dir, extra.image)
        return {
            "default_account": self.lane.slurm.account,
            "default_partition": self.partition,
            "default_time_limit": self.time_limit,
            "gpus_per_node": self.lane.gpus_per_node,
            "network_interface": "",
            "srtctl_root": checkout,
            "default_mounts": dict(self.lane.container_mounts),
            "model_paths": {self.model.alias: self.model.path},
            "containers": containers,
            "use_segment_sbatch_directive": False,
        }

    def squash_file(self) -> str:
        return prepare.squash_file(self.lane.squash_dir, str(self.point.data.get("image", "")))

    def prepare_steps(self, guard: str) -> list[prepare.Step]:
        """The lane's preparation steps for this point; ``guard`` is where squash_guard.py will be."""
        return prepare.plan_steps(
            self.lane.prepare, self.lane.squash_dir, self.partition, str(self.point.data.get("image", "")), guard
        )

    def to_json(self) -> dict:
        return {
            "ok": True,
            "lane": self.lane.name,
            "point-id": self.point_id,
            "route": self.route.name,
            "srt-slurm": self.pin.to_json(),
            "overlays": [{"from": f, "to": t} for f, t in self.route.overlays],
            "sources": [s.to_json() for s in self.sources],
            "recipe-source": {
                "origin": self.recipe_source.origin,
                "config-file": self.recipe_source.ref.value,
                "path": self.recipe_source.path,
                "checked": "now" if self.recipe is not None else "after srt-slurm checkout, before submit",
            },
            "recipe": self.recipe,
            "resolved-recipe-sha256": self.resolved_recipe_digest(),
            "result-key": self.result_key(),
            "resolved-recipe": self.resolved_path,
            "job-name": self.job_name,
            "partition": self.partition,
            "time-limit": self.time_limit,
            "model": {"alias": self.model.alias, "path": self.model.path},
            "power": self.power,
            "eval": self.evaluation.to_json() if self.evaluation else None,
            "agentic": self._agentic_json(),
            "environment": self.environment(DRY_RUN_OUTPUT, DRY_RUN_WORKSPACE),
            "prepare": [step.to_json() for step in self.prepare_steps(DRY_RUN_GUARD)],
            "argv": self.argv(),
            "node-count": self.node_count,
            "warnings": [d.to_json() for d in self.warnings],
        }

    def _agentic_json(self) -> dict | None:
        if self.agentic is not None:
            return self.agentic.to_json()
        if self.agentic_profile is not None:  # a recipe shipped with srt-slurm takes them after checkout
            return {**AgenticBenchmark(self.agentic_profile).to_json(), "harness": None}
        return None


def dry_run_env(env: dict) -> tuple[dict, list[Diagnostic]]:
    """The environment a dry run plans with. run-point.yml dry-runs on a GitHub-hosted runner
    ($RUNNER_ENVIRONMENT=github-hosted), which launches nothing and is named like "GitHub
    Actions 7": its name is no lane runner's job name, so the plan names the job infx-<point
    id> and says so. Anywhere else $RUNNER_NAME is checked (`env-shape`) as for a launch."""
    name = env.get("RUNNER_NAME")
    if env.get("RUNNER_ENVIRONMENT") != "github-hosted" or not name:
        return env, []
    kept = {key: value for key, value in env.items() if key != "RUNNER_NAME"}
    return kept, [
        warning(
            "$RUNNER_NAME",
            None,
            "env-runner-name-unused",
            f"$RUNNER_NAME {name!r} names a GitHub-hosted runner, not a lane runner; the dry run names the job "
            "infx-<point id>",
            "A real launch runs on the lane's self-hosted runner and names its job after that runner.",
        )
    ]


def plan_point(
    lane: Lane, point: PointFile, root: Path, env: Mapping[str, str] | None = None, today: dt.date | None = None
) -> LaunchPlan:
    """Every check that needs no checkout (the rules of infx/launch/planrules.py, in order),
    collected; raises InfxError with all of them."""
    env = os.environ if env is None else env
    data = point.data
    ctx = PlanContext.of(lane, point, root, env)
    if run_rules(ctx) or ctx.diagnostics:
        raise InfxError(ctx.diagnostics)
    model, recipe_source, route = ctx.model, ctx.recipe_source, ctx.route
    assert model is not None and recipe_source is not None and route is not None  # else a rule raised
    partition = ctx.settings.get(lane.slurm.partition_setting, [lane.slurm.partition])[-1]
    date = (today or dt.datetime.now(dt.UTC).date()).strftime("%Y%m%d")
    isl, osl = data.get("isl", 0), data.get("osl", 0)
    tags = ",".join(str(t) for t in (lane.name, data.get("model-prefix"), data.get("precision"), f"{isl}x{osl}", date))
    return LaunchPlan(
        lane=lane,
        point=point,
        route=route,
        pin=lane.pins[route.srt_slurm],
        model=model,
        recipe_source=recipe_source,
        recipe=ctx.recipe,
        sources=ctx.sources,
        job_name=ctx.job_name,
        partition=partition,
        time_limit=route.time_limit or lane.slurm.default_time_limit,
        tags=tags,
        power=ctx.power,
        result_name=staging.result_name(data, point_id(data), env),
        evaluation=ctx.evaluation,
        warnings=ctx.warnings,
        agentic_profile=ctx.profile,
        agentic=ctx.agentic,
        root=root,
    )


Planner = Callable[..., LaunchPlan]  # (lane, point, root, env=...) -> the plan, every check run, no side effect
PLANNERS: dict[str, Planner] = {SRTCTL: plan_point}  # lane kind -> how it plans a point


@dataclass(frozen=True, kw_only=True)
class LaunchRequest:
    """``infx launch``: one point (a JSON file, else ``$POINT_JSON`` in ``env``) on a lane (a lane
    name, a runner label or a profile path; None = the lane of the point's runner label) of the
    repository at ``root``. A dry run plans with ``dry_run_env(env)``."""

    point_file: str | None
    lane: str | None
    root: Path
    env: Mapping[str, str]
    dry_run: bool = False


def plan_launch(request: LaunchRequest) -> LaunchPlan:
    """The point's launch plan, every check that needs no checkout run (InfxError with all of
    them), including the secrets an eval point needs from this runner: refused before any side
    effect for a launch, warnings for a dry run."""
    env, notes = dry_run_env(dict(request.env)) if request.dry_run else (dict(request.env), [])
    point = load_point(request.point_file, dict(request.env))
    lane = load_lane_file(
        find_lane(
            request.root,
            selector=request.lane,
            runner=point.data.get("runner"),
            runner_at=(point.file, point.where(("runner",))),
        )
    )
    plan = PLANNERS[lane.kind](lane, point, request.root, env=env)
    plan.warnings.extend(notes)
    if plan.evaluation:
        missing = secret_problems(plan.evaluation, env, request.dry_run)
        if missing and not request.dry_run:
            raise InfxError(missing)
        plan.warnings.extend(missing)
    return plan


def keys_for_rows(rows: list[dict], root, resolve_lane) -> dict[int, tuple[str | None, str]]:
    """Row index -> (result key, "") or (None, why no key): the plan a launch would build, no side effect.

    ``resolve_lane(row)`` returns the row's Lane; a row that does not plan (or whose recipe is not
    readable without fetching srt-slurm) has no key, and is dispatched: a launch decides for it.
    """
    keys: dict[int, tuple[str | None, str]] = {}
    for index, row in enumerate(rows):
        try:
            lane = resolve_lane(row)
            plan = PLANNERS[lane.kind](lane, PointFile(data=row, file="<plan>"), root, env={})
        except InfxError as exc:
            keys[index] = (None, exc.diagnostics[0].message if exc.diagnostics else "the point does not plan")
            continue
        key = plan.result_key()
        keys[index] = (
            key,
            ""
            if key
            else f"its recipe {plan.recipe_source.ref.value} ships with srt-slurm and is not in the checkout cache",
        )
    return keys
