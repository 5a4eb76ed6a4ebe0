"""How a result row's topology is named in a comparison, the Accuracy section and the charts (`tp8 ep8`,
`1P1D · P tp8 ep8 dpa · D tp16 ep16 dpa`): the notation of infx.workers.topology_label, which the plan
and the matrix use too; its scenario's name is infx.scenarios.scenario_label."""

from __future__ import annotations

from ..workers import Parallelism, topology_label


def _parallel(prefix: str, row: dict) -> Parallelism:
    return Parallelism(
        row.get(prefix + "tp"),
        row.get(prefix + "ep"),
        row.get(prefix + "pp") or 1,
        str(row.get(prefix + "dp_attention")).lower() == "true",
    )


def topology(row: dict) -> str:
    """`1P1D · P tp8 ep8 dpa · D tp16 ep16 dpa` (multinode) or `tp8 ep8` (single node)."""
    if "prefill_tp" in row or row.get("is_multinode"):
        return topology_label(
            prefill=_parallel("prefill_", row),
            decode=_parallel("decode_", row),
            workers=(row.get("prefill_num_workers"), row.get("decode_num_workers")),
        )
    return topology_label(_parallel("", row))
