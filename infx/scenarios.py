"""The scenario names, in one table: the kinds a master config's ``scenarios:`` holds (a row's
``scenario-type``, a changelog entry's ``scenario-type``, a lane route's ``scenario``) and the
named sequence-length pairs of fixed-seq-len points.

Every module that spells a scenario reads it here; the JSON Schemas in ``infx/schemas/`` list the
same values (tests/test_scenarios.py keeps them in step, and checks that every scenario the bundled
configs and the reference corpus use is in the table).
"""

from __future__ import annotations

FIXED = "fixed-seq-len"  # throughput at a fixed input/output length
AGENTIC = "agentic-coding"  # AgentX: an agentic-coding trace replayed for a fixed duration
SCENARIO_TYPES = (FIXED, AGENTIC)  # in the matrix's emission order

# Sequence names: the row's exp-name and bucket use them; any other pair is `<isl>_<osl>`.
SEQ_NAMES = {(1024, 1024): "1k1k", (8192, 1024): "8k1k"}
SEQ_BY_NAME = {name: pair for pair, name in SEQ_NAMES.items()}


def is_agentic(row: dict) -> bool:
    """Whether a row (a matrix row, a point, a result row) is an AgentX point."""
    return row.get("scenario-type") == AGENTIC


def scenario_type(row: dict) -> str:
    """A row's scenario: agentic-coding when it says so, fixed-seq-len otherwise (the rows of
    fixed-seq-len points written before the field existed carry none)."""
    return AGENTIC if is_agentic(row) else FIXED


def seq_name(isl: int, osl: int) -> str:
    return SEQ_NAMES.get((isl, osl), f"{isl}_{osl}")


def parse_seq_name(name: str) -> tuple[int, int] | None:
    """``1k1k``, ``8k1k`` or ``<isl>_<osl>`` → (isl, osl); None when not a sequence name."""
    if name in SEQ_BY_NAME:
        return SEQ_BY_NAME[name]
    isl, sep, osl = name.partition("_")
    if sep and isl.isdigit() and osl.isdigit() and int(isl) > 0 and int(osl) > 0:
        return int(isl), int(osl)
    return None


def scenario_label(row: dict) -> str:
    """The scenario as a comparison shows it: `8k/1k` for a fixed sequence-length pair,
    `agentic-coding` for AgentX."""
    if is_agentic(row):
        return AGENTIC

    def short(n):
        return f"{n // 1024}k" if isinstance(n, int) and n and n % 1024 == 0 else str(n)

    return f"{short(row.get('isl'))}/{short(row.get('osl'))}"
