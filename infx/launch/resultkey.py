"""The result key: one hash over everything that determines what a launched point measures.

Two launches with the same key run the same benchmark (same point, same recipe as submitted,
same srt-slurm commit, same cluster settings), so a valid result stored under the key can be
reused instead of paying for the point again. Anything that only names things is left out;
docs/launch.md lists the ingredients and why each is in or out.
"""

from __future__ import annotations

import hashlib

from ..jsonfast import canonical

# Bump when what a result artifact holds, or how it is judged, changes: old results stop matching.
RESULT_FORMAT = 1

# Point fields that name or summarise, never change what runs: exp-name is a label; the row's
# recipe-fingerprint and node-count are derived from fields and the recipe, which are keyed as content;
# result-key is this key itself, as the plan carries it to the launch.
COSMETIC_POINT_FIELDS = frozenset({"exp-name", "recipe-fingerprint", "node-count", "result-key"})
# The resolved recipe's `name` is the Slurm job name (the runner's name): where it ran, not what.
COSMETIC_RECIPE_FIELDS = frozenset({"name"})
# srtslurm.yaml's srtctl_root is the per-launch checkout folder.
COSMETIC_CLUSTER_FIELDS = frozenset({"srtctl_root"})


def _without(mapping: dict, keys: frozenset) -> dict:
    return {key: value for key, value in mapping.items() if key not in keys}


def ingredients(plan) -> dict | None:
    """What the key hashes, as plain data (None while the recipe is not resolved yet)."""
    if plan.recipe is None:
        return None
    return {
        "result-format": RESULT_FORMAT,
        "point": _without(plan.point.data, COSMETIC_POINT_FIELDS),
        "recipe": _without(plan.recipe, COSMETIC_RECIPE_FIELDS),
        "srt-slurm-commit": plan.pin.commit,
        "route": {"name": plan.route.name, "srtctl-flags": list(plan.route.srtctl_flags)},
        "lane": {"name": plan.lane.name, "partition": plan.partition, "time-limit": plan.time_limit,
                 "cluster": _without(plan.cluster_config("", plan.squash_file()), COSMETIC_CLUSTER_FIELDS)},
        "sources": sorted([source.name, source.commit, source.dest] for source in plan.sources),
        # An eval point: the protocol the lane's suite runs (its enabled tasks, every file's digest),
        # also for a point that records none. Absent for a throughput point, whose key it leaves as it was.
        **({"eval-protocol": plan.evaluation.protocol} if plan.evaluation else {}),
    }


def result_key(plan) -> str | None:
    body = ingredients(plan)
    return None if body is None else hashlib.sha256(canonical(body, default=str)).hexdigest()


def keys_for_rows(rows: list[dict], root, resolve_lane) -> dict[int, tuple[str | None, str]]:
    """Row index -> (result key, "") or (None, why no key): the plan a launch would build, no side effect.

    ``resolve_lane(row)`` returns the row's Lane; a row that does not plan (or whose recipe is not
    readable without fetching srt-slurm) has no key, and is dispatched: a launch decides for it.
    """
    from ..diagnostics import InfxError
    from .plan import Point, build_plan

    keys: dict[int, tuple[str | None, str]] = {}
    for index, row in enumerate(rows):
        try:
            plan = build_plan(resolve_lane(row), Point(row, "<plan>"), root, env={})
        except InfxError as exc:
            keys[index] = (None, exc.diagnostics[0].message if exc.diagnostics else "the point does not plan")
            continue
        key = plan.result_key()
        keys[index] = (key, "" if key else f"its recipe {plan.recipe_source.ref.value} ships with srt-slurm and is not in the checkout cache")
    return keys
