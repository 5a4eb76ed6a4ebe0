"""One normalised model for later stages: every multinode point as prefill + decode.

Aggregated multinode entries may be written in the newest form (``worker`` +
``num-nodes``) or the legacy form (``prefill`` + ``decode`` with ``num-worker: 0``). Later
stages see one form, the rows' (infx/workers.py): ``worker:`` becomes the
prefill + decode(num-worker 0) pair, ``num-nodes`` stays beside it; a legacy pair is kept
exactly as written (its decode block included, as the reference emits it).
"""

from __future__ import annotations

from ..workers import aggregated_pair, is_aggregated

SCENARIO_KINDS = ("fixed-seq-len", "agentic-coding")


def is_legacy_aggregate(search_entry: dict) -> bool:
    """The legacy aggregated spelling: a prefill + decode(num-worker 0) pair, no ``worker:``."""
    return is_aggregated(search_entry) and "worker" not in search_entry


def legacy_to_worker(search_entry: dict) -> dict:
    """The newest spelling of a legacy aggregated search-space entry (what the warning suggests)."""
    converted = {k: v for k, v in search_entry.items() if k not in ("prefill", "decode")}
    converted["worker"] = dict(search_entry["prefill"])
    return converted


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
    for kind in SCENARIO_KINDS:
        if isinstance(scenarios.get(kind), list):
            rewritten[kind] = [_normalize_scenario(scenario) for scenario in scenarios[kind]]
    changed = any(new is not old for kind in SCENARIO_KINDS for new, old in zip(rewritten.get(kind, []), scenarios.get(kind) or []))
    return {**entry, "scenarios": rewritten} if changed else entry


def _has_worker(item) -> bool:
    return isinstance(item, dict) and isinstance(item.get("worker"), dict)


def _normalize_scenario(scenario):
    space = scenario.get("search-space") if isinstance(scenario, dict) else None
    if not isinstance(space, list) or not any(_has_worker(item) for item in space):
        return scenario
    return {**scenario, "search-space": [worker_to_pair(item) if _has_worker(item) else item for item in space]}
