"""Buckets: the groups of rows one workflow job template runs, named from the data."""

from __future__ import annotations

from ..scenarios import is_agentic, seq_name
from .evals import is_multinode

EVAL_BUCKETS = ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals")


def bucket_of(row: dict) -> str:
    """``single_node/<seq>``, ``single_node/agentic``, ``multi_node/…`` or one of the eval buckets."""
    multinode, agentic = is_multinode(row), is_agentic(row)
    if row.get("eval-only"):
        return ("multinode_" if multinode else "") + ("agentic_evals" if agentic else "evals")
    kind = "agentic" if agentic else seq_name(row["isl"], row["osl"])
    return f"{'multi_node' if multinode else 'single_node'}/{kind}"


def bucketize(rows: list[dict]) -> dict[str, list[dict]]:
    """Every row in exactly one bucket; buckets in order of first appearance, rows in matrix order."""
    buckets: dict[str, list[dict]] = {}
    for row in rows:
        buckets.setdefault(bucket_of(row), []).append(row)
    return buckets
