"""How a result row's topology is named in a comparison, the Accuracy section and the charts (`tp8 ep8`,
`1P1D · P tp8 ep8 dpa · D tp16 ep16 dpa`); its scenario's name is infx.scenarios.scenario_label."""

from __future__ import annotations


def _parallel(prefix: str, row: dict) -> str:
    parts = [f"tp{row.get(prefix + 'tp')}", f"ep{row.get(prefix + 'ep')}"]
    if (row.get(prefix + "pp") or 1) != 1:
        parts.append(f"pp{row.get(prefix + 'pp')}")
    if str(row.get(prefix + "dp_attention")).lower() == "true":
        parts.append("dpa")
    return " ".join(parts)


def topology(row: dict) -> str:
    """`1P1D · P tp8 ep8 dpa · D tp16 ep16 dpa` (multinode) or `tp8 ep8` (single node)."""
    if "prefill_tp" in row or row.get("is_multinode"):
        return (
            f"{row.get('prefill_num_workers')}P{row.get('decode_num_workers')}D · P {_parallel('prefill_', row)}"
            f" · D {_parallel('decode_', row)}"
        )
    return _parallel("", row)
