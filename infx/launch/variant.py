"""The recipe variant CONFIG_FILE selects, resolved for srtctl and checked.

The same steps run on a recipe in this repository (at planning, ``infx.launch.plan.plan_point``)
and on one shipped with srt-slurm (after checkout, ``infx.launch.checkout.resolve_in_checkout``):
the variant is selected, named after the job, stripped of ``infx-sources``, given an eval point's
job environment and an AgentX point's benchmark profile, and every content check
(``infx/launch/checks.py``) runs on it. Reads nothing but the document it is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .. import shapes
from ..diagnostics import error
from ..recipes import RecipeError, RecipeRef, select_variant
from ..yamlio import Document
from . import checks
from .agentic import AgenticBenchmark, apply_to_recipe
from .evalenv import EvalLaunch, export_directive
from .lane import Lane, ModelEntry, Route, Source
from .pointfile import PointFile

SOURCES_KEY = "infx-sources"  # recipe key naming external sources; stripped before srtctl sees it


@dataclass(frozen=True, kw_only=True)
class VariantFacts:
    """What check_variant puts into the resolved recipe besides the variant itself (and the repository
    whose harness an AgentX benchmark runs)."""

    job_name: str
    model: ModelEntry
    job_export: str | None  # an eval point's ``sbatch --export`` (its eval variables)
    agentic_profile: tuple | None  # an AgentX point's benchmark.env values
    root: Path

    @classmethod
    def of(
        cls, job_name: str, model: ModelEntry, evaluation: EvalLaunch | None, profile: tuple | None, root: Path
    ) -> VariantFacts:
        return cls(
            job_name=job_name,
            model=model,
            job_export=export_directive(dict(evaluation.variables)) if evaluation else None,
            agentic_profile=profile,
            root=root,
        )


def sources_for(lane: Lane, route: Route, variant: dict | None, doc: Document, diagnostics: list) -> list[Source]:
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
                        recipe_where(doc, (SOURCES_KEY, index, field_name)),
                        "recipe-source-shape",
                        problem,
                        f"Accepted: {shapes.accepted(SOURCE_SHAPES[field_name])}.",
                    )
                )
            if not found:
                named.append(
                    Source(
                        name=str(item["name"]), url=str(item["url"]), commit=str(item["commit"]), dest=str(item["dest"])
                    )
                )
        else:
            diagnostics.append(
                error(
                    doc.file,
                    recipe_where(doc, (SOURCES_KEY, index)),
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


def recipe_path_problem(root: Path, relative: str, what: str) -> str | None:
    """Why ``relative`` is not a file inside ``root`` (symlinks followed), or None."""
    try:
        shapes.inside(root, relative, what)
    except shapes.Escape as exc:
        return str(exc)
    return None


def recipe_where(doc: Document, path: tuple) -> tuple[int, int]:
    """Locate a key of the selected variant in the file (under base: for files with variants)."""
    return doc.where(("base",) + path if isinstance(doc.data, dict) and "base" in doc.data else path)


def select(doc: Document, ref: RecipeRef, point: PointFile, ref_where: tuple, diagnostics: list) -> dict | None:
    """The variant CONFIG_FILE selects, or None with a located diagnostic."""
    try:
        return select_variant(doc.data, ref.selector)
    except RecipeError as exc:
        diagnostics.append(
            error(point.file, point.where(ref_where), "recipe-selector", f"{ref.value}: {exc}", exc.hint)
        )
        return None


def check_variant(
    variant: dict, doc: Document, facts: VariantFacts, point: PointFile, lane: Lane, route: Route, diagnostics: list
) -> tuple[dict, list[Source], AgenticBenchmark | None]:
    """Resolve a selected variant (name = job, infx-sources removed, an eval point's job environment
    added as ``sbatch_directives.export``, an AgentX point's profile added to ``benchmark.env``) and
    run every content check on it."""
    recipe = {key: value for key, value in variant.items() if key != SOURCES_KEY}
    recipe["name"] = facts.job_name
    if facts.job_export:
        directives = recipe.get("sbatch_directives")
        if isinstance(directives, dict) and "export" in directives:
            diagnostics.append(
                error(
                    doc.file,
                    recipe_where(doc, ("sbatch_directives", "export")),
                    "recipe-sbatch-export",
                    "the recipe sets the job's --export itself; for an eval point infx sets it to the eval "
                    "environment srt-slurm's lm-eval stage reads",
                    "Remove sbatch_directives.export from the recipe (or give the eval point its own "
                    "EVAL_CONFIG_FILE).",
                )
            )
        recipe["sbatch_directives"] = {
            **(directives if isinstance(directives, dict) else {}),
            "export": facts.job_export,
        }
    agentic = None
    if facts.agentic_profile is not None:
        agentic, problems = apply_to_recipe(
            recipe, facts.agentic_profile, facts.root, doc.file, lambda path: recipe_where(doc, path)
        )
        diagnostics.extend(problems)
    ctx = checks.CheckContext(
        point=point.data,
        recipe=recipe,
        lane=lane,
        model=facts.model,
        power=checks.recipe_uses_power(recipe),
        recipe_file=doc.file,
        recipe_where=lambda path: recipe_where(doc, path),
        point_file=point.file,
        point_where=point.where,
    )
    diagnostics.extend(checks.run_checks(ctx))
    return recipe, sources_for(lane, route, variant, doc, diagnostics), agentic
