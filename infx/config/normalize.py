"""One normalised model for later stages.

Aggregated multinode entries may be written in the newest form (``worker`` +
``num-nodes``) or the legacy form (``prefill`` + ``decode`` with ``num-worker: 0``). Later
stages only ever see the newest form.
"""

from __future__ import annotations

SCENARIO_KINDS = ("fixed-seq-len", "agentic-coding")


def is_legacy_aggregate(search_entry: dict) -> bool:
    decode = search_entry.get("decode")
    return (
        isinstance(search_entry.get("prefill"), dict)
        and isinstance(decode, dict)
        and decode.get("num-worker") == 0
        and "worker" not in search_entry
    )


def legacy_to_worker(search_entry: dict) -> dict:
    """The newest spelling of a legacy aggregated search-space entry."""
    converted = {k: v for k, v in search_entry.items() if k not in ("prefill", "decode")}
    converted["worker"] = dict(search_entry["prefill"])
    return converted


def normalize_entry(entry: dict) -> dict:
    """A schema-valid entry with its legacy aggregated points rewritten to ``worker:``.

    Only aggregated entries (multinode, not disagg) have legacy points; ``num-nodes`` is
    not invented for them (the matrix takes the node count from the recipe). An entry with
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


def _normalize_scenario(scenario):
    space = scenario.get("search-space") if isinstance(scenario, dict) else None
    if not isinstance(space, list) or not any(isinstance(item, dict) and is_legacy_aggregate(item) for item in space):
        return scenario
    converted = [legacy_to_worker(item) if isinstance(item, dict) and is_legacy_aggregate(item) else item for item in space]
    return {**scenario, "search-space": converted}
