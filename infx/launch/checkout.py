"""What a launch checks in the pinned srt-slurm checkout, once it exists and before submit.

``resolve_in_checkout`` reads a recipe that ships with srt-slurm (the plan deferred it) from the
checkout and runs on it the same variant checks planning runs on a recipe of this repository
(``infx/launch/variant.py``); it reads the checkout and changes only the plan it is given.
"""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import InfxError, error
from ..yamlio import load_yaml
from . import checks
from .plan import LaunchPlan
from .variant import VariantFacts, check_variant, recipe_path_problem, recipe_where, select


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
            VariantFacts.of(plan.job_name, plan.model, plan.evaluation, plan.agentic_profile, plan.root),
            plan.point,
            plan.lane,
            plan.route,
            diagnostics,
        )
        if checks.recipe_uses_power(recipe) != plan.power:  # the route was chosen without seeing this recipe
            diagnostics.append(
                error(
                    doc.file,
                    recipe_where(doc, ("telemetry",)),
                    "recipe-power-deferred",
                    "this recipe ships with srt-slurm and enables dcgm-power telemetry, but power routing "
                    "is decided before checkout",
                    "Keep power recipes in this repository so the power route is chosen before anything is fetched.",
                )
            )
    if diagnostics:
        raise InfxError(diagnostics)
    plan.recipe, plan.sources, plan.agentic = recipe, sources, agentic
