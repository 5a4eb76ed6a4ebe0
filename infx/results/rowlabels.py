"""How a result row is named in a comparison, the Accuracy section and the charts: its scenario
(`8k/1k`, `agentic-coding`) and its topology (`tp8 ep8`, `1P1D · P tp8 ep8 dpa · D tp16 ep16 dpa`)."""

from __future__ import annotations

from .metrics import AGENTIC


def scenario(row: dict) -> str:
    """`8k/1k` for a fixed sequence-length pair, `agentic-coding` for AgentX."""
    if row.get("scenario-type") == AGENTIC:
        return AGENTIC

    def short(n):
        return f"{n // 1024}k" if isinstance(n, int) and n and n % 1024 == 0 else str(n)

    return f"{short(row.get('isl'))}/{short(row.get('osl'))}"


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
        return (f"{row.get('prefill_num_workers')}P{row.get('decode_num_workers')}D · P {_parallel('prefill_', row)}"
                f" · D {_parallel('decode_', row)}")
    return _parallel("", row)
