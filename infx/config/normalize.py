"""One normalised model for later stages: every multinode point as prefill + decode.

An aggregated multinode entry (``disagg: false``) is written as the reference's main writes it,
``prefill`` + ``decode`` (an aggregated point's decode has ``num-worker: 0``), or as one of its
unmerged branches writes it, ``worker`` + ``num-nodes`` (docs/config.md, "Aggregated
multinode points"). Later stages see one form, the rows' (infx/workers.py): ``worker:``
becomes the prefill + decode(num-worker 0) pair, ``num-nodes`` stays beside it; a pair is
kept exactly as written (its decode block included, as the reference emits it).
"""

from __future__ import annotations

from ..scenarios import SCENARIO_TYPES
from ..workers import aggregated_pair


def worker_to_pair(search_entry: dict) -> dict:
    """A ``worker:`` search entry in the one worker form (prefill + decode num-worker 0)."""
    converted = {k: v for k, v in search_entry.items() if k != "worker"}
    converted["prefill"], converted["decode"] = aggregated_pair(search_entry["worker"])
    return converted


def normalize_entry(entry: dict) -> dict:
    """A schema-valid entry with its ``worker:`` points rewritten to prefill + decode.

    Only aggregated entries (multinode, not disagg) have ``worker:`` points. An entry with
    nothing to rewrite is returned as is; otherwise only the containers on the way to a
    rewritten point are copied. Both raw and normalised entries are read-only data.
    """
    scenarios = entry.get("scenarios")
    if not isinstance(scenarios, dict) or entry.get("multinode") is not True or entry.get("disagg") is True:
        return entry
    rewritten = dict(scenarios)
    for kind in SCENARIO_TYPES:
        if isinstance(scenarios.get(kind), list):
            rewritten[kind] = [_normalize_scenario(scenario) for scenario in scenarios[kind]]
    changed = any(
        new is not old
        for kind in SCENARIO_TYPES
        for new, old in zip(rewritten.get(kind, []), scenarios.get(kind) or [])
    )
    return {**entry, "scenarios": rewritten} if changed else entry


def _has_worker(item) -> bool:
    return isinstance(item, dict) and isinstance(item.get("worker"), dict)


def _normalize_scenario(scenario):
    space = scenario.get("search-space") if isinstance(scenario, dict) else None
    if not isinstance(space, list) or not any(_has_worker(item) for item in space):
        return scenario
    return {**scenario, "search-space": [worker_to_pair(item) if _has_worker(item) else item for item in space]}
