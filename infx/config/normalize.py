"""One normalised model for later stages.

Aggregated multinode entries may be written in the newest form (``worker`` +
``num-nodes``) or the legacy form (``prefill`` + ``decode`` with ``num-worker: 0``). Later
stages only ever see the newest form.
"""

from __future__ import annotations

import copy

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
    """A copy of a schema-valid entry with legacy aggregated points rewritten to ``worker:``.

    Only aggregated entries (multinode, not disagg) have legacy points; ``num-nodes`` is
    not invented for them (the matrix takes the node count from the recipe).
    """
    normalized = copy.deepcopy(entry)
    scenarios = normalized.get("scenarios")
    if not isinstance(scenarios, dict) or entry.get("multinode") is not True or entry.get("disagg") is True:
        return normalized
    for kind in SCENARIO_KINDS:
        for scenario in scenarios.get(kind) or []:
            if not isinstance(scenario, dict):
                continue
            space = scenario.get("search-space")
            if isinstance(space, list):
                scenario["search-space"] = [
                    legacy_to_worker(item) if isinstance(item, dict) and is_legacy_aggregate(item) else item
                    for item in space
                ]
    return normalized
