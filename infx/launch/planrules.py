"""The checks ``plan_point`` runs before any side effect, each a registered rule run in order.

``RULES`` maps each rule's name to one small function. A rule receives the ``PlanContext`` of
one point on one lane, adds its diagnostics and warnings to it, and records what it found (the
recipe reference, the model, the route, the resolved recipe...) for the rules after it. A rule
returns True when planning cannot go on without what it found missing: ``plan_point`` then
raises every diagnostic found so far. Rules read the point, the lane profile and the in-repo
recipe; nothing else, and nothing is written.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .. import shapes
from ..diagnostics import Diagnostic, error, warning
from ..evalsuite import EvalKind, PointEval
from ..fsio import is_file
from ..points import point_id
from ..recipes import RECIPES_DIR, RecipeRef, recipe_setting
from ..scenarios import scenario_type
from ..workers import ROLES
from ..yamlio import Document, load_yaml
from . import checks
from .agentic import AgenticBenchmark, plan_profile
from .evalenv import EvalLaunch, plan_eval
from .lane import Lane, ModelEntry, Route, Source
from .pointfile import PointFile
from .route import Ambiguous, most_specific
from .variant import VariantFacts, check_variant, recipe_path_problem, select


@dataclass(frozen=True, kw_only=True)
class RecipeSource:
    """Where the recipe file comes from: the workspace now, or the srt-slurm checkout later."""

    ref: RecipeRef
    origin: str  # "workspace" | "srt-slurm"
    path: str  # absolute for workspace, relative to the checkout for srt-slurm
    where: tuple  # location of CONFIG_FILE in the point


@dataclass(kw_only=True)
class PlanContext:
    """One point on one lane while its rules run: the inputs, what the rules found so far, and
    their diagnostics (errors) and warnings, in the order they were found."""

    lane: Lane
    point: PointFile
    root: Path
    env: Mapping[str, str]
    settings: dict[str, list[str]]  # KEY=VALUE settings of every worker block
    settings_where: dict[str, tuple]  # where each setting's key was first written
    facts: dict  # what routes and models: entries match on (scenario, framework, model-prefix, precision)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    ref: RecipeRef | None = None
    ref_where: tuple = ()
    model: ModelEntry | None = None
    choice: PointEval | None = None
    evaluation: EvalLaunch | None = None
    profile: tuple | None = None  # an AgentX point's benchmark.env values (agentic.BENCHMARK_ENV)
    recipe_path: Path | None = None
    doc: Document | None = None
    variant: dict | None = None
    power: bool = False
    route: Route | None = None
    recipe_source: RecipeSource | None = None
    job_name: str = ""
    recipe: dict | None = None
    sources: list[Source] = field(default_factory=list)
    agentic: AgenticBenchmark | None = None

    @classmethod
    def of(cls, lane: Lane, point: PointFile, root: Path, env: Mapping[str, str]) -> PlanContext:
        data = point.data
        settings, settings_where = worker_settings(data)
        facts = {
            "scenario": scenario_type(data),
            "framework": data.get("framework"),
            "model-prefix": data.get("model-prefix"),
            "precision": data.get("precision"),
        }
        return cls(
            lane=lane, point=point, root=root, env=env, settings=settings, settings_where=settings_where, facts=facts
        )


class Rule(NamedTuple):
    name: str
    check: Callable[[PlanContext], bool | None]
    summary: str


RULES: dict[str, Rule] = {}  # in the order plan_point runs them


def plan_rule(name: str, summary: str):
    def register(check):
        RULES[name] = Rule(name, check, summary)
        return check

    return register


def run_rules(ctx: PlanContext) -> bool:
    """Every rule in order; True when one stopped the plan (the diagnostics say why)."""
    return any(entry.check(ctx) for entry in RULES.values())


def worker_settings(point: dict) -> tuple[dict[str, list[str]], dict[str, tuple]]:
    """KEY=VALUE settings of every worker block, and where each key was first written."""
    values: dict[str, list[str]] = {}
    where: dict[str, tuple] = {}
    for role in ROLES:
        block = point.get(role)
        if not isinstance(block, dict):
            continue
        for index, item in enumerate(block.get("additional-settings") or []):
            key, _, value = str(item).partition("=")
            values.setdefault(key, []).append(value)
            where.setdefault(key, (role, "additional-settings", index))
    return values, where


def _recipe_ref(point: PointFile, settings: dict, where: dict, diagnostics: list) -> tuple[RecipeRef | None, tuple]:
    data = point.data
    key, values = recipe_setting(settings, data.get("eval-only"))
    if not values or not values[0]:
        diagnostics.append(
            error(
                point.file,
                point.where(("prefill",)),
                "point-config-file",
                f"CONFIG_FILE is not set for model-prefix={data.get('model-prefix')} precision={data.get('precision')} "
                f"framework={data.get('framework')}",
                "Add CONFIG_FILE=recipes/<engine>/<model>/<file>.yaml[:selector] to additional-settings.",
            )
        )
        return None, ()
    if len(values) > 1:
        diagnostics.append(
            error(
                point.file,
                point.where(where[key]),
                "point-config-file",
                f"conflicting {key} settings: {', '.join(values)}",
                "Name the recipe once.",
            )
        )
        return None, ()
    return RecipeRef.parse(values[0]), where[key]


def _route_for(lane: Lane, facts: dict, point: PointFile, diagnostics: list) -> Route | None:
    try:
        route = most_specific(lane.routes, facts, lambda r: r.match)
    except Ambiguous as exc:
        names = ", ".join(f"{r.name} {r.match}" for r in exc.candidates)
        diagnostics.append(
            error(
                lane.file,
                lane.route_where(exc.candidates[0]),
                "lane-route-ambiguous",
                f"several routes match {facts} and none is more specific than the others: {names}",
                "Add a key (precision, power, model-prefix) to the route that should win.",
            )
        )
        return None
    if route is None:
        diagnostics.append(
            error(
                point.file,
                point.where(("framework",)),
                "lane-no-route",
                f"no route of lane {lane.name} matches {facts}",
                f"Add a route to {lane.file} for this scenario/framework/model.",
            )
        )
    return route


def _model_for(lane: Lane, facts: dict, point: PointFile, diagnostics: list) -> ModelEntry | None:
    try:
        model = most_specific(lane.models, facts, lambda m: m.match)
    except Ambiguous as exc:  # two models: entries match alike, as two routes can
        first = lane.models.index(exc.candidates[0])
        diagnostics.append(
            error(
                lane.file,
                lane.where("models", first),
                "lane-model-ambiguous",
                f"several models: entries match {facts} and none is more specific: "
                f"{', '.join(str(m.match) for m in exc.candidates)}",
                "Keep one entry per model-prefix and precision, or add a key to the one that should win.",
            )
        )
        return None
    if model is None:
        supported = ", ".join(sorted({f"{m.match['model-prefix']}-{m.match['precision']}" for m in lane.models}))
        diagnostics.append(
            error(
                point.file,
                point.where(("model-prefix",)),
                "lane-unsupported-model",
                f"Unsupported model: {facts.get('model-prefix')}-{facts.get('precision')} on lane {lane.name}",
                f"Supported: {supported}. Add the weights to models: in {lane.file}.",
            )
        )
    return model


POINT_SHAPES = (
    (("exp-name",), "name", "exp-name"),
    (("model-prefix",), "name", "model-prefix"),
    (("precision",), "name", "precision"),
)
ENV_SHAPES = (("RUNNER_NAME", "name", "the job name ($RUNNER_NAME)"), ("RESULT_FILENAME", "name", "$RESULT_FILENAME"))


def boundary_problems(
    point: PointFile, settings: dict, settings_where: dict, env: Mapping[str, str]
) -> list[Diagnostic]:
    """Every point value, setting and environment value the launch uses, in its declared shape."""
    diagnostics = []
    for path, shape, what in POINT_SHAPES:
        value = point.data.get(path[0])
        if value is not None and (problem := shapes.problem(shape, value, what)):
            diagnostics.append(
                error(point.file, point.where(path), "point-shape", problem, f"Accepted: {shapes.accepted(shape)}.")
            )
    for key, shape in shapes.SETTING_SHAPES.items():
        for value in dict.fromkeys(settings.get(key, [])):
            if problem := shapes.problem(shape, value, key):
                diagnostics.append(
                    error(
                        point.file,
                        point.where(settings_where[key]),
                        "point-setting-shape",
                        problem,
                        f"Write {key}=<{shapes.accepted(shape)}>.",
                    )
                )
    # The point id names the work directory, the default job name and every result file; the
    # tags go to srtctl. Both are built from point fields that have no string shape of their own.
    derived = (
        (point_id(point.data), "the point id (from recipe-fingerprint and conc)", "recipe-fingerprint"),
        (f"{point.data.get('isl', 0)}x{point.data.get('osl', 0)}", "the isl x osl tag", "isl"),
    )
    for value, what, key in derived:
        if problem := shapes.problem("name", value, what):
            diagnostics.append(
                error(
                    point.file,
                    point.where((key,)),
                    "point-shape",
                    problem,
                    "recipe-fingerprint is 64 hex digits, conc and isl/osl are whole numbers, as the matrix writes "
                    "them.",
                )
            )
    for key, shape, what in ENV_SHAPES:
        if env.get(key) and (problem := shapes.problem(shape, env[key], what)):
            diagnostics.append(error(f"${key}", None, "env-shape", problem, f"Accepted: {shapes.accepted(shape)}."))
    return diagnostics


def job_name_for(point: PointFile, env: Mapping[str, str]) -> str:
    return env.get("RUNNER_NAME") or f"infx-{point_id(point.data)}"


# --- the rules, in the order plan_point runs them ----------------------------------------


@plan_rule("image", "The point's image is a container image reference.")
def image_rule(ctx: PlanContext) -> None:
    problem = checks.image_problem(ctx.point.data.get("image"))
    if problem:
        ctx.diagnostics.append(
            error(
                ctx.point.file,
                ctx.point.where(("image",)),
                "point-image",
                problem,
                "Use <registry>/<repo>:<tag>[@sha256:<digest>] (enroot's <registry>#<repo> is accepted).",
            )
        )


@plan_rule("boundary", "Every point value, setting and environment value the launch uses has its declared shape.")
def boundary_rule(ctx: PlanContext) -> bool:
    boundary = boundary_problems(ctx.point, ctx.settings, ctx.settings_where, ctx.env)
    ctx.diagnostics.extend(boundary)
    return bool(boundary)  # nothing below may read a path or name built from these values


@plan_rule("config-file", "The point names its recipe once (CONFIG_FILE).")
def recipe_ref_rule(ctx: PlanContext) -> None:
    ctx.ref, ctx.ref_where = _recipe_ref(ctx.point, ctx.settings, ctx.settings_where, ctx.diagnostics)


@plan_rule("model", "Exactly one models: entry of the lane matches the point.")
def model_rule(ctx: PlanContext) -> None:
    ctx.model = _model_for(ctx.lane, ctx.facts, ctx.point, ctx.diagnostics)


@plan_rule("eval", "An eval point's eval plans on this lane.")
def eval_rule(ctx: PlanContext) -> None:
    ctx.choice = PointEval.of(ctx.point.data, ctx.settings)
    if ctx.choice.runs:
        ctx.evaluation, problems = plan_eval(ctx.point, ctx.lane, ctx.root, ctx.choice, ctx.settings_where)
        ctx.diagnostics.extend(problems)


@plan_rule("benchmark-profile", "An AgentX point's benchmark profile is complete.")
def agentic_rule(ctx: PlanContext) -> None:
    assert ctx.choice is not None  # the eval rule runs before it
    ctx.profile, problems = plan_profile(ctx.point, runs_benchmark=ctx.choice.kind is not EvalKind.ONLY)
    ctx.diagnostics.extend(problems)


@plan_rule("eval-after-benchmark", "An agentic point does not run its eval after the benchmark.")
def agentic_eval_rule(ctx: PlanContext) -> None:
    assert ctx.choice is not None  # the eval rule runs before it
    if ctx.profile is not None and ctx.choice.kind is EvalKind.AFTER_BENCHMARK:
        ctx.diagnostics.append(
            error(
                ctx.point.file,
                ctx.point.where(("run-eval",)),
                "agentic-eval-after-benchmark",
                "an agentic point cannot run its eval after the benchmark: srt-slurm mounts one workspace, "
                "and the AgentX harness needs the repository checkout while the eval needs infx's eval workspace",
                "Run the eval as its own eval-only point (the matrix plans agentic evals that way).",
            )
        )


@plan_rule("config-path", "CONFIG_FILE names a file inside the recipe tree.")
def recipe_path_rule(ctx: PlanContext) -> bool:
    ref = ctx.ref
    ctx.recipe_path = ref.repo_path(ctx.root) if ref else None
    if ref is None or ctx.recipe_path is None:
        return False
    problem = recipe_path_problem(ctx.root / RECIPES_DIR, ref.tree_path(), "CONFIG_FILE")
    if problem:
        ctx.diagnostics.append(
            error(
                ctx.point.file,
                ctx.point.where(ctx.ref_where),
                "point-setting-shape",
                problem,
                f"CONFIG_FILE names a file inside {RECIPES_DIR}/.",
            )
        )
    return bool(problem)


@plan_rule("config-read", "A recipe in this repository reads, and its selector picks one variant.")
def recipe_read_rule(ctx: PlanContext) -> None:
    ref, recipe_path, root = ctx.ref, ctx.recipe_path, ctx.root
    if ref is not None and recipe_path is not None and is_file(recipe_path):
        # never raises: a 300-character CONFIG_FILE is just not a file
        display = str(recipe_path.relative_to(root)) if recipe_path.is_relative_to(root) else str(recipe_path)
        ctx.doc, problems = load_yaml(recipe_path, display=display)
        ctx.diagnostics.extend(problems)
        ctx.variant = select(ctx.doc, ref, ctx.point, ctx.ref_where, ctx.diagnostics) if ctx.doc is not None else None
    ctx.power = checks.recipe_uses_power(ctx.variant) if ctx.variant else False


@plan_rule("route", "Exactly one route of the lane matches the point (power included).")
def route_rule(ctx: PlanContext) -> bool:
    ctx.route = _route_for(ctx.lane, {**ctx.facts, "power": ctx.power}, ctx.point, ctx.diagnostics)
    return ctx.route is None or ctx.ref is None


@plan_rule("config-origin", "The recipe is in this repository, or ships with the route's srt-slurm.")
def recipe_source_rule(ctx: PlanContext) -> None:
    ref, route, point = ctx.ref, ctx.route, ctx.point
    assert ref is not None and route is not None  # the route rule stopped the plan without either
    if ctx.doc is not None:
        ctx.recipe_source = RecipeSource(ref=ref, origin="workspace", path=str(ctx.recipe_path), where=ctx.ref_where)
    elif any(fnmatch.fnmatchcase(ref.path, pattern) for pattern in route.srt_slurm_recipes):
        ctx.recipe_source = RecipeSource(ref=ref, origin="srt-slurm", path=ref.path, where=ctx.ref_where)
        ctx.warnings.append(
            warning(
                point.file,
                point.where(ctx.ref_where),
                "recipe-deferred",
                f"{ref.path} ships with srt-slurm ({route.srt_slurm}); its content checks run after checkout, before "
                "submit",
            )
        )
    else:  # missing, or a folder: either way there is no recipe to read
        ctx.diagnostics.append(
            error(
                point.file,
                point.where(ctx.ref_where),
                "recipe-missing",
                f"recipe {ref.path} is not a file (looked at {ctx.recipe_path})",
                f"Fix CONFIG_FILE, add the recipe, or list it under srt-slurm-recipes of route {route.name!r} "
                "if it ships with srt-slurm.",
            )
        )


@plan_rule("overlays", "Every overlay of the route is a recipe folder of this repository.")
def overlays_rule(ctx: PlanContext) -> None:
    lane, route = ctx.lane, ctx.route
    assert route is not None  # the route rule stopped the plan without one
    for index, (source, _) in enumerate(route.overlays):
        if not (ctx.root / RECIPES_DIR / source).is_dir():
            ctx.diagnostics.append(
                error(
                    lane.file,
                    lane.where("routes", route.index, "overlays", index),
                    "lane-overlay-missing",
                    f"route {route.name!r} overlays {source}, which does not exist under {RECIPES_DIR}/",
                    "Fix the overlay's from: path, or add the recipe folder.",
                )
            )


@plan_rule("content", "The selected variant, resolved, passes every content check (infx/launch/checks.py).")
def recipe_content_rule(ctx: PlanContext) -> None:
    route = ctx.route
    assert route is not None  # the route rule stopped the plan without one
    ctx.job_name = job_name_for(ctx.point, ctx.env)
    ctx.sources = [ctx.lane.sources[name] for name in route.sources]
    if ctx.variant is not None and ctx.doc is not None and ctx.model is not None:
        facts = VariantFacts.of(ctx.job_name, ctx.model, ctx.evaluation, ctx.profile, ctx.root)
        ctx.recipe, ctx.sources, ctx.agentic = check_variant(
            ctx.variant, ctx.doc, facts, ctx.point, ctx.lane, route, ctx.diagnostics
        )


@plan_rule("pin", "The route's srt-slurm pin has a commit (a warning: a launch refuses it).")
def pin_rule(ctx: PlanContext) -> None:
    assert ctx.route is not None  # the route rule stopped the plan without one
    lane, pin = ctx.lane, ctx.lane.pins[ctx.route.srt_slurm]
    if pin.commit is None:
        ctx.warnings.append(
            warning(
                lane.file,
                lane.where("srt-slurm", "pins", pin.name, "commit"),
                "lane-pin-unresolved",
                f"srt-slurm pin {pin.name} ({pin.repository} {pin.ref}) has no commit SHA; a launch will refuse it",
                f"Resolve it: git ls-remote {pin.repository} {pin.ref}, and write the SHA in {lane.file}.",
            )
        )
