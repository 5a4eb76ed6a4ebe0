"""The result key: one hash over everything that determines what a launched point measures.

Two launches with the same key run the same benchmark (same point, same recipe as submitted,
same srt-slurm commit, same cluster settings), so a valid result stored under the key can be
reused instead of paying for the point again. Anything that only names things is left out;
docs/launch.md lists the ingredients and why each is in or out. The
keys of a list of rows (each planned as a launch would) come from ``plan.keys_for_rows``.
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
        "lane": {
            "name": plan.lane.name,
            "partition": plan.partition,
            "time-limit": plan.time_limit,
            "cluster": _without(plan.cluster_config("", plan.squash_file()), COSMETIC_CLUSTER_FIELDS),
        },
        "sources": sorted([source.name, source.commit, source.dest] for source in plan.sources),
        # An eval point: the protocol the lane's suite runs (its enabled tasks, every file's digest),
        # also for a point that records none. Absent for a throughput point, whose key it leaves as it was.
        **({"eval-protocol": plan.evaluation.protocol} if plan.evaluation else {}),
    }


def result_key(plan) -> str | None:
    body = ingredients(plan)
    return None if body is None else hashlib.sha256(canonical(body, default=str)).hexdigest()
