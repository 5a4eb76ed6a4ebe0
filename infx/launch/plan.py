"""From a point and a lane profile to a LaunchPlan, with every check run before any side effect.

``plan_point`` reads files only (the point, the profile, the in-repo recipe). A recipe that
ships with srt-slurm itself (the route's ``srt-slurm-recipes``) cannot be read yet: the plan
marks it deferred and ``resolve_in_checkout`` runs the same checks on it after checkout, before submit.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import shapes
from ..diagnostics import Diagnostic, InfxError, error, warning
from ..evalsuite import EvalKind, PointEval
from ..fsio import is_file
from ..jsonfast import canonical
from ..points import point_id, read_point
from ..recipes import RECIPES_DIR, RecipeError, RecipeRef, recipe_node_count, recipe_setting, select_variant
from ..scenarios import scenario_type
from ..workers import ROLES
from ..yamlio import Document, load_yaml, parse_yaml
from . import checks, prepare, staging
from .agentic import DRY_RUN_REPOSITORY, AgenticBenchmark, apply_to_recipe, plan_profile
from .evalenv import (
    DRY_RUN_OUTPUT,
    DRY_RUN_WORKSPACE,
    EvalLaunch,
    export_directive,
    plan_eval,
    secret_problems,
    stage_workspace,
)
from .lane import Lane, ModelEntry, Pin, Route, Source, find_lane, load_lane_file
from .resultkey import result_key
from .route import Ambiguous, most_specific

RESOLVED_DIR = "recipes/infx-resolved"  # inside the srt-slurm checkout
DRY_RUN_GUARD = "<launch dir>/squash_guard.py"  # the launch copies the guard there
SOURCES_KEY = "infx-sources"  # recipe key naming external sources; stripped before srtctl sees it


@dataclass
class Point:
    data: dict
    file: str
    doc: Document | None = None

    def where(self, path: tuple) -> tuple[int, int] | None:
        return self.doc.where(path) if self.doc else None


def load_point(path: str | None, env: dict | None = None) -> Point:
    """The point from a JSON file, else from $POINT_JSON, with the position of every key."""
    data, name, text = read_point(path, env)
    doc, problems = parse_yaml(text, name)  # JSON is YAML: reuse the loader for line/column of every key
    return Point(data, name, doc if not problems else None)


@dataclass
class RecipeSource:
    """Where the recipe file comes from: the workspace now, or the srt-slurm checkout later."""

    ref: RecipeRef
    origin: str  # "workspace" | "srt-slurm"
    path: str  # absolute for workspace, relative to the checkout for srt-slurm
    where: tuple  # location of CONFIG_FILE in the point


@dataclass
class LaunchPlan:
    lane: Lane
    point: Point
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


def _settings(point: dict) -> tuple[dict[str, list[str]], dict[str, tuple]]:
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


def _recipe_ref(point: Point, settings: dict, where: dict, diagnostics: list) -> tuple[RecipeRef | None, tuple]:
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


def _route_for(lane: Lane, facts: dict, point: Point, diagnostics: list) -> Route | None:
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


def _model_for(lane: Lane, facts: dict, point: Point, diagnostics: list) -> ModelEntry | None:
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


def _sources_for(lane: Lane, route: Route, variant: dict | None, doc: Document, diagnostics: list) -> list[Source]:
    """The route's sources plus the ones the recipe declares, each pinned to a full SHA."""
    named: list[Source] = [lane.sources[name] for name in route.sources]
    declared = (variant or {}).get(SOURCES_KEY) or []
    for index, item in enumerate(declared if isinstance(declared, list) else [declared]):
        if isinstance(item, str) and item in lane.sources:
            named.append(lane.sources[item])
        elif (
            isinstance(item, dict)
            and {"name", "url", "commit", "dest"} <= set(item)
            and re.fullmatch(r"[0-9a-f]{40}", str(item["commit"]))
        ):
            found = source_problems(item, lane, f"{SOURCES_KEY}[{index}]")
            for field_name, problem in found:
                diagnostics.append(
                    error(
                        doc.file,
                        _recipe_where(doc, (SOURCES_KEY, index, field_name)),
                        "recipe-source-shape",
                        problem,
                        f"Accepted: {shapes.accepted(SOURCE_SHAPES[field_name])}.",
                    )
                )
            if not found:
                named.append(Source(str(item["name"]), str(item["url"]), str(item["commit"]), str(item["dest"])))
        else:
            diagnostics.append(
                error(
                    doc.file,
                    _recipe_where(doc, (SOURCES_KEY, index)),
                    "recipe-source",
                    f"{SOURCES_KEY}[{index}] is {item!r}: neither a source of lane {lane.name} nor "
                    "{name, url, commit (full 40-hex SHA), dest}",
                    f"Name one of: {', '.join(sorted(lane.sources)) or '(none defined)'}, or pin the source to a full "
                    "commit SHA.",
                )
            )
    return list({s.name: s for s in named}.values())


SOURCE_SHAPES = {"name": "name", "url": "git-url", "dest": "relative-path"}


def source_problems(item: dict, lane: Lane, what: str) -> list[tuple[str, str]]:
    """(field, problem) for a recipe-declared source whose name, url or dest has the wrong shape."""
    found = [
        (key, problem)
        for key, shape in SOURCE_SHAPES.items()
        if (problem := shapes.problem(shape, item.get(key), f"{what}.{key}"))
    ]
    if not any(key == "url" for key, _ in found):
        problem = shapes.url_problem(item.get("url"), lane.git_protocols, f"{what}.url")
        if problem:
            found.append(("url", problem))
    return found


# Values of a point (and of the runner's environment) that reach a path, a command line or
# srt-slurm's config: (where, shape, what). The schemas say the same for matrix rows; a point
# handed to the launcher need not have come from the matrix.
POINT_SHAPES = (
    (("exp-name",), "name", "exp-name"),
    (("model-prefix",), "name", "model-prefix"),
    (("precision",), "name", "precision"),
)
ENV_SHAPES = (("RUNNER_NAME", "name", "the job name ($RUNNER_NAME)"), ("RESULT_FILENAME", "name", "$RESULT_FILENAME"))


def boundary_problems(point: Point, settings: dict, settings_where: dict, env: Mapping[str, str]) -> list[Diagnostic]:
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


def recipe_path_problem(root: Path, relative: str, what: str) -> str | None:
    """Why ``relative`` is not a file inside ``root`` (symlinks followed), or None."""
    try:
        shapes.inside(root, relative, what)
    except shapes.Escape as exc:
        return str(exc)
    return None


def _recipe_where(doc: Document, path: tuple) -> tuple[int, int]:
    """Locate a key of the selected variant in the file (under base: for files with variants)."""
    return doc.where(("base",) + path if isinstance(doc.data, dict) and "base" in doc.data else path)


def select(doc: Document, ref: RecipeRef, point: Point, ref_where: tuple, diagnostics: list) -> dict | None:
    """The variant CONFIG_FILE selects, or None with a located diagnostic."""
    try:
        return select_variant(doc.data, ref.selector)
    except RecipeError as exc:
        diagnostics.append(
            error(point.file, point.where(ref_where), "recipe-selector", f"{ref.value}: {exc}", exc.hint)
        )
        return None


def check_variant(
    variant: dict, doc: Document, plan_facts: dict, point: Point, lane: Lane, route: Route, diagnostics: list
) -> tuple[dict, list[Source], AgenticBenchmark | None]:
    """Resolve a selected variant (name = job, infx-sources removed, an eval point's job environment
    added as ``sbatch_directives.export``, an AgentX point's profile added to ``benchmark.env``) and
    run every content check on it."""
    recipe = {key: value for key, value in variant.items() if key != SOURCES_KEY}
    recipe["name"] = plan_facts["job-name"]
    if plan_facts.get("job-export"):
        directives = recipe.get("sbatch_directives")
        if isinstance(directives, dict) and "export" in directives:
            diagnostics.append(
                error(
                    doc.file,
                    _recipe_where(doc, ("sbatch_directives", "export")),
                    "recipe-sbatch-export",
                    "the recipe sets the job's --export itself; for an eval point infx sets it to the eval "
                    "environment srt-slurm's lm-eval stage reads",
                    "Remove sbatch_directives.export from the recipe (or give the eval point its own "
                    "EVAL_CONFIG_FILE).",
                )
            )
        recipe["sbatch_directives"] = {
            **(directives if isinstance(directives, dict) else {}),
            "export": plan_facts["job-export"],
        }
    agentic = None
    if plan_facts.get("agentic-profile") is not None:
        agentic, problems = apply_to_recipe(
            recipe, plan_facts["agentic-profile"], plan_facts["root"], doc.file, lambda path: _recipe_where(doc, path)
        )
        diagnostics.extend(problems)
    ctx = checks.CheckContext(
        point=point.data,
        recipe=recipe,
        lane=lane,
        model=plan_facts["model"],
        power=checks.recipe_uses_power(recipe),
        recipe_file=doc.file,
        recipe_where=lambda path: _recipe_where(doc, path),
        point_file=point.file,
        point_where=point.where,
    )
    diagnostics.extend(checks.run_checks(ctx))
    return recipe, _sources_for(lane, route, variant, doc, diagnostics), agentic


def job_name_for(point: Point, env: Mapping[str, str]) -> str:
    return env.get("RUNNER_NAME") or f"infx-{point_id(point.data)}"


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
    lane: Lane, point: Point, root: Path, env: Mapping[str, str] | None = None, today: dt.date | None = None
) -> LaunchPlan:
    """Every check that needs no checkout, collected; raises InfxError with all of them."""
    env = os.environ if env is None else env
    data = point.data
    diagnostics: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    problem = checks.image_problem(data.get("image"))
    if problem:
        diagnostics.append(
            error(
                point.file,
                point.where(("image",)),
                "point-image",
                problem,
                "Use <registry>/<repo>:<tag>[@sha256:<digest>] (enroot's <registry>#<repo> is accepted).",
            )
        )
    settings, settings_where = _settings(data)
    boundary = boundary_problems(point, settings, settings_where, env)
    if boundary:  # nothing below may read a path or name built from these values
        raise InfxError(diagnostics + boundary)
    ref, ref_where = _recipe_ref(point, settings, settings_where, diagnostics)
    facts = {
        "scenario": scenario_type(data),
        "framework": data.get("framework"),
        "model-prefix": data.get("model-prefix"),
        "precision": data.get("precision"),
    }
    model = _model_for(lane, facts, point, diagnostics)
    choice = PointEval.of(data, settings)
    evaluation = None
    if choice.runs:
        evaluation, problems = plan_eval(point, lane, root, choice, settings_where)
        diagnostics.extend(problems)
    profile, problems = plan_profile(point, runs_benchmark=choice.kind is not EvalKind.ONLY)
    diagnostics.extend(problems)
    if profile is not None and choice.kind is EvalKind.AFTER_BENCHMARK:
        diagnostics.append(
            error(
                point.file,
                point.where(("run-eval",)),
                "agentic-eval-after-benchmark",
                "an agentic point cannot run its eval after the benchmark: srt-slurm mounts one workspace, "
                "and the AgentX harness needs the repository checkout while the eval needs infx's eval workspace",
                "Run the eval as its own eval-only point (the matrix plans agentic evals that way).",
            )
        )

    doc = variant = None
    recipe_path = ref.repo_path(root) if ref else None
    if (
        ref is not None
        and recipe_path is not None
        and (problem := recipe_path_problem(root / RECIPES_DIR, ref.tree_path(), "CONFIG_FILE"))
    ):
        diagnostics.append(
            error(
                point.file,
                point.where(ref_where),
                "point-setting-shape",
                problem,
                f"CONFIG_FILE names a file inside {RECIPES_DIR}/.",
            )
        )
        raise InfxError(diagnostics)
    if (
        ref is not None and recipe_path is not None and is_file(recipe_path)
    ):  # never raises: a 300-character CONFIG_FILE is just not a file
        display = str(recipe_path.relative_to(root)) if recipe_path.is_relative_to(root) else str(recipe_path)
        doc, problems = load_yaml(recipe_path, display=display)
        diagnostics.extend(problems)
        variant = select(doc, ref, point, ref_where, diagnostics) if doc is not None else None
    power = checks.recipe_uses_power(variant) if variant else False
    route = _route_for(lane, {**facts, "power": power}, point, diagnostics)
    if route is None or ref is None:
        raise InfxError(diagnostics)

    recipe_source = None
    if doc is not None:
        recipe_source = RecipeSource(ref, "workspace", str(recipe_path), ref_where)
    elif any(fnmatch.fnmatchcase(ref.path, pattern) for pattern in route.srt_slurm_recipes):
        recipe_source = RecipeSource(ref, "srt-slurm", ref.path, ref_where)
        warnings.append(
            warning(
                point.file,
                point.where(ref_where),
                "recipe-deferred",
                f"{ref.path} ships with srt-slurm ({route.srt_slurm}); its content checks run after checkout, before "
                "submit",
            )
        )
    else:  # missing, or a folder: either way there is no recipe to read
        diagnostics.append(
            error(
                point.file,
                point.where(ref_where),
                "recipe-missing",
                f"recipe {ref.path} is not a file (looked at {recipe_path})",
                f"Fix CONFIG_FILE, add the recipe, or list it under srt-slurm-recipes of route {route.name!r} "
                "if it ships with srt-slurm.",
            )
        )
    for index, (source, _) in enumerate(route.overlays):
        if not (root / RECIPES_DIR / source).is_dir():
            diagnostics.append(
                error(
                    lane.file,
                    lane.where("routes", route.index, "overlays", index),
                    "lane-overlay-missing",
                    f"route {route.name!r} overlays {source}, which does not exist under {RECIPES_DIR}/",
                    "Fix the overlay's from: path, or add the recipe folder.",
                )
            )
    job_name = job_name_for(point, env)
    recipe, sources, agentic = None, [lane.sources[name] for name in route.sources], None
    if variant is not None and doc is not None and model is not None:
        recipe, sources, agentic = check_variant(
            variant, doc, plan_facts(job_name, model, evaluation, profile, root), point, lane, route, diagnostics
        )
    pin = lane.pins[route.srt_slurm]
    if pin.commit is None:
        warnings.append(
            warning(
                lane.file,
                lane.where("srt-slurm", "pins", pin.name, "commit"),
                "lane-pin-unresolved",
                f"srt-slurm pin {pin.name} ({pin.repository} {pin.ref}) has no commit SHA; a launch will refuse it",
                f"Resolve it: git ls-remote {pin.repository} {pin.ref}, and write the SHA in {lane.file}.",
            )
        )
    if diagnostics:
        raise InfxError(diagnostics)
    assert model is not None and recipe_source is not None  # without either, a diagnostic was raised above
    partition = settings.get(lane.slurm.partition_setting, [lane.slurm.partition])[-1]
    date = (today or dt.datetime.now(dt.UTC).date()).strftime("%Y%m%d")
    isl, osl = data.get("isl", 0), data.get("osl", 0)
    tags = ",".join(str(t) for t in (lane.name, data.get("model-prefix"), data.get("precision"), f"{isl}x{osl}", date))
    return LaunchPlan(
        lane=lane,
        point=point,
        route=route,
        pin=pin,
        model=model,
        recipe_source=recipe_source,
        recipe=recipe,
        sources=sources,
        job_name=job_name,
        partition=partition,
        time_limit=route.time_limit or lane.slurm.default_time_limit,
        tags=tags,
        power=power,
        result_name=staging.result_name(data, point_id(data), env),
        evaluation=evaluation,
        warnings=warnings,
        agentic_profile=profile,
        agentic=agentic,
        root=root,
    )


@dataclass(frozen=True)
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
    plan = plan_point(lane, point, request.root, env=env)
    plan.warnings.extend(notes)
    if plan.evaluation:
        missing = secret_problems(plan.evaluation, env, request.dry_run)
        if missing and not request.dry_run:
            raise InfxError(missing)
        plan.warnings.extend(missing)
    return plan


def plan_facts(
    job_name: str, model: ModelEntry, evaluation: EvalLaunch | None, profile: tuple | None, root: Path
) -> dict:
    """What check_variant puts into the resolved recipe besides the variant itself (and the repository
    whose harness an AgentX benchmark runs)."""
    return {
        "job-name": job_name,
        "model": model,
        "job-export": export_directive(dict(evaluation.variables)) if evaluation else None,
        "agentic-profile": profile,
        "root": root,
    }


def resolve_in_checkout(plan: LaunchPlan, checkout: Path) -> None:
    """Resolve and check a recipe that ships with srt-slurm, now that the checkout exists."""
    if plan.recipe is not None:
        return
    problem = recipe_path_problem(checkout, plan.recipe_source.path, "CONFIG_FILE")
    if problem:
        raise InfxError(
            error(
                plan.point.file,
                plan.point.where(plan.recipe_source.where),
                "point-setting-shape",
                problem,
                "A recipe that ships with srt-slurm is a file inside the checkout.",
            )
        )
    if not (checkout / plan.recipe_source.path).is_file():
        raise InfxError(
            [
                error(
                    plan.point.file,
                    plan.point.where(plan.recipe_source.where),
                    "recipe-missing",
                    f"recipe {plan.recipe_source.path} is neither in this repository nor in srt-slurm at "
                    f"{plan.pin.name} ({plan.pin.ref} {plan.pin.commit})",
                    f"Fix CONFIG_FILE, add the recipe to this repository, or remove it from srt-slurm-recipes "
                    f"of route {plan.route.name!r} in {plan.lane.file}.",
                )
            ]
        )
    doc, diagnostics = load_yaml(
        checkout / plan.recipe_source.path, display=f"{plan.pin.name}:{plan.recipe_source.path}"
    )
    variant = select(doc, plan.recipe_source.ref, plan.point, plan.recipe_source.where, diagnostics) if doc else None
    if variant is not None and doc is not None:
        recipe, sources, agentic = check_variant(
            variant,
            doc,
            plan_facts(plan.job_name, plan.model, plan.evaluation, plan.agentic_profile, plan.root),
            plan.point,
            plan.lane,
            plan.route,
            diagnostics,
        )
        if checks.recipe_uses_power(recipe) != plan.power:  # the route was chosen without seeing this recipe
            diagnostics.append(
                error(
                    doc.file,
                    _recipe_where(doc, ("telemetry",)),
                    "recipe-power-deferred",
                    "this recipe ships with srt-slurm and enables dcgm-power telemetry, but power routing "
                    "is decided before checkout",
                    "Keep power recipes in this repository so the power route is chosen before anything is fetched.",
                )
            )
    if diagnostics:
        raise InfxError(diagnostics)
    plan.recipe, plan.sources, plan.agentic = recipe, sources, agentic


def keys_for_rows(rows: list[dict], root, resolve_lane) -> dict[int, tuple[str | None, str]]:
    """Row index -> (result key, "") or (None, why no key): the plan a launch would build, no side effect.

    ``resolve_lane(row)`` returns the row's Lane; a row that does not plan (or whose recipe is not
    readable without fetching srt-slurm) has no key, and is dispatched: a launch decides for it.
    """
    keys: dict[int, tuple[str | None, str]] = {}
    for index, row in enumerate(rows):
        try:
            plan = plan_point(resolve_lane(row), Point(row, "<plan>"), root, env={})
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
