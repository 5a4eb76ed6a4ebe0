"""The row contract: the published row schema (infx/schemas/row.schema.json) and the cross-field
rules a schema cannot say, checked on every row infx builds and on every row it is given
(`infx plan --rows`, `infx github select-points`, a plan read back), through one function.

The rules are the reference's row rules and carry the ids of the master-config rules that
keep them on the configs side (docs/config.md): tp-divisible-by-dcp, hardware-both-or-neither,
kv-p2p-transfer-required, kv-offload-backend-coupling.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..schema import Finding, dotted, load_schema, schema_findings
from ..workers import ROLES, dcp_splits_tp, hardware_unpaired

ROW_SCHEMA = "row"


def row_schema() -> dict:
    return load_schema(ROW_SCHEMA)


def _rule_findings(row: dict) -> Iterator[Finding]:
    """The cross-field rules of one row that passed the schema (types are right)."""
    blocks = [((), row)] + [((role,), row[role]) for role in ROLES if isinstance(row.get(role), dict)]
    for path, block in blocks:
        if not dcp_splits_tp(block):
            yield (
                path + ("dcp-size",),
                "tp-divisible-by-dcp",
                f"{dotted(path) or 'the row'}: tp ({block['tp']}) must be divisible by dcp-size "
                f"({block.get('dcp-size', 1)})",
                "Decode context parallelism splits the tensor-parallel GPUs; pick a dcp-size that divides tp.",
            )
    if isinstance(row.get("prefill"), dict) and isinstance(row.get("decode"), dict):
        if unpaired := hardware_unpaired(row["prefill"], row["decode"]):
            has, lacks = unpaired
            yield (
                (has, "hardware"),
                "hardware-both-or-neither",
                f"'hardware' must be set for both 'prefill' and 'decode', or neither; {lacks} has none",
                f"Add `hardware` to {lacks}, or remove it from {has}.",
            )
        if row.get("disagg") is True and "kv-p2p-transfer" not in row:
            yield (
                ("disagg",),
                "kv-p2p-transfer-required",
                "disagg: true requires kv-p2p-transfer",
                "Add `kv-p2p-transfer` (nixl, mooncake, ...) to the row, or set disagg: false.",
            )
    if "scenario-type" in row:
        mode, backend = row.get("kv-offloading"), "kv-offload-backend" in row
        if backend and mode == "none":
            yield (
                ("kv-offload-backend",),
                "kv-offload-backend-coupling",
                "kv-offload-backend can only be set when kv-offloading is not 'none'",
                "Remove kv-offload-backend, or set the offload mode.",
            )
        elif not backend and mode != "none":
            yield (
                ("kv-offloading",),
                "kv-offload-backend-coupling",
                f"kv-offload-backend is required when kv-offloading is {mode!r}",
                "Add `kv-offload-backend: {name: ...}`.",
            )


def row_findings(row) -> list[Finding]:
    """Every problem of one row: schema errors, or (when the schema passes) the cross-field rules."""
    if isinstance(row, dict) and ("prefill" in row) != ("decode" in row):
        # The schema tells the kinds apart by `prefill`; a half-multinode row is named as such.
        has, lacks = ("prefill", "decode") if "prefill" in row else ("decode", "prefill")
        return [
            (
                (has,),
                "missing-field",
                f"a multinode row needs both 'prefill' and 'decode'; this row has only {has!r}",
                f"Add the {lacks} worker block, or remove {has} for a single-node row.",
            )
        ]
    found = schema_findings(ROW_SCHEMA, row, root_label="the row")
    found = [
        (path, rule, message, hint.replace("see configs/CONFIGS.md", "the row contract is in docs/matrix.md"))
        for path, rule, message, hint in found
    ]
    return found or list(_rule_findings(row))


def row_problems(rows: list[dict]) -> list[tuple[int, str]]:
    """(index, first problem) of every row that breaks the contract, as ``<path>: <message>``."""
    problems = []
    for index, row in enumerate(rows):
        found = row_findings(row)
        if found:
            path, _, message, _ = found[0]
            problems.append(
                (index, f"row{''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in path)}: {message}")
            )
    return problems
