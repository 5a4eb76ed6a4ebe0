"""The one worker form, and the GPU arithmetic over it.

From normalisation to the matrix rows (and the launcher reading them), a multinode point
is a ``prefill`` block and a ``decode`` block. An aggregated point is the pair whose decode
has ``num-worker: 0`` (the reference's row contract): the ``worker:`` spelling is turned
into that pair once, by :func:`aggregated_pair`, and a written pair is kept as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

WORKER_DEFAULTS = (("pp", 1), ("dcp-size", 1), ("pcp-size", 1))
ROLES = ("prefill", "decode")


def worker_block(worker: dict) -> dict:
    """A worker as rows carry it: as written, with pp/dcp-size/pcp-size made explicit."""
    block = {key: value for key, value in worker.items() if value is not None}
    for key, default in WORKER_DEFAULTS:
        block.setdefault(key, default)
    return block


def aggregated_pair(worker: dict) -> tuple[dict, dict]:
    """An aggregated ``worker:`` as the prefill + decode(num-worker 0) pair.

    Prefill is the worker (one replica unless it says otherwise); decode is the same
    parallelism without ``additional-settings``.
    """
    prefill = {"num-worker": 1, **worker}
    decode = {key: value for key, value in prefill.items() if key not in ("num-worker", "additional-settings")}
    return prefill, {"num-worker": 0, **decode}


def is_aggregated(point: dict) -> bool:
    """A point (search entry or row) whose decode role has no workers: prefill serves alone."""
    decode = point.get("decode")
    return isinstance(point.get("prefill"), dict) and isinstance(decode, dict) and decode.get("num-worker") == 0


def dcp_splits_tp(block: dict) -> bool:
    """Decode context parallelism reuses the tensor-parallel GPUs, so dcp-size must divide tp."""
    tp, dcp = block.get("tp"), block.get("dcp-size", 1)
    return tp is None or not tp % dcp


def hardware_unpaired(prefill: dict, decode: dict) -> tuple[str, str] | None:
    """(role with hardware, role without) when only one of prefill and decode names its hardware."""
    if ("hardware" in prefill) == ("hardware" in decode):
        return None
    return ("prefill", "decode") if "hardware" in prefill else ("decode", "prefill")


def replica_gpus(block: dict) -> int:
    """GPUs one replica uses: DCP reuses the TP GPUs, PP and PCP multiply them (each 1 when unset)."""
    return block.get("tp", 1) * block.get("pp", 1) * block.get("pcp-size", 1)


def role_gpus(block: dict, default_workers: int = 1) -> int:
    """GPUs of every replica of one role."""
    return block.get("num-worker", default_workers) * replica_gpus(block)


def point_gpus(point: dict) -> int:
    """GPUs a point occupies: one replica on one node, or every replica of a multinode point."""
    if "prefill" in point:
        return sum(role_gpus(point[role], default_workers=0) for role in ROLES)
    return replica_gpus({"tp": point.get("tp", 1), **point})


def gpu_nodes(num_worker: int, gpus_per_worker: int, gpus_per_node: int) -> int:
    """Nodes a role needs by GPU arithmetic alone (no recipe)."""
    return math.ceil(num_worker * gpus_per_worker / gpus_per_node)


class HardwareUnknown(ValueError):
    """runners.yaml does not say how many GPUs a node of a label has; ``hint`` says how to fix it."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.hint = hint


def hardware_of(runners: dict, label: str) -> dict | None:
    hardware = runners.get("hardware") or {}
    entry = hardware.get(label)
    return entry if isinstance(entry, dict) else None


def gpus_per_node(runners: dict, label: str) -> int:
    """gpus-per-node of a label, or of its hardware family (``cluster:gb300-nv`` → ``gb300``)."""
    exact = hardware_of(runners, label)
    if exact and exact.get("gpus-per-node"):
        return int(exact["gpus-per-node"])
    family = label.removeprefix("cluster:").split("-", 1)[0]
    values = sorted(
        {
            int(entry["gpus-per-node"])
            for key, entry in (runners.get("hardware") or {}).items()
            if isinstance(entry, dict)
            and entry.get("gpus-per-node")
            and str(key).removeprefix("cluster:").split("-", 1)[0] == family
        }
    )
    if len(values) == 1:
        return values[0]
    if not values:
        raise HardwareUnknown(
            f"cannot resolve gpus-per-node for {label!r}: runners.yaml has no hardware entry for it or its family "
            f"{family!r}",
            f"Add `hardware: {{{label}: {{gpus-per-node: N, available-cpu-dram-mib: M}}}}` to runners.yaml, or set "
            "PREFILL_NODES=/DECODE_NODES=.",
        )
    raise HardwareUnknown(
        f"ambiguous gpus-per-node for {label!r}: its family {family!r} has {values}",
        f"Add an exact `hardware: {{{label}: …}}` entry to runners.yaml.",
    )


def settings_dict(settings: list[str] | None) -> dict[str, list[str]]:
    """``KEY=VALUE`` strings to {KEY: [values...]} (a key may repeat)."""
    result: dict[str, list[str]] = {}
    for item in settings or []:
        key, _, value = str(item).partition("=")
        result.setdefault(key, []).append(value)
    return result


def workers_settings(*worker_blocks: dict | None) -> dict[str, list[str]]:
    """The ``additional-settings`` of every worker block, merged (values in order); a block that is not a mapping has
    none."""
    settings: dict[str, list[str]] = {}
    for block in worker_blocks:
        if isinstance(block, dict):
            for key, values in settings_dict(block.get("additional-settings")).items():
                settings.setdefault(key, []).extend(values)
    return settings


# --- how a topology is written: the one notation of the plan, the matrix, the results and the comment -------


@dataclass(frozen=True)
class Parallelism:
    """One role's parallelism (or a single-node point's), whichever record it was read from."""

    tp: object
    ep: object = 1
    pp: object = 1
    dp_attention: bool = False

    def label(self) -> str:
        """`tp8 ep8`, then `pp2` when pipelined and `dpa` with data-parallel attention."""
        parts = [f"tp{self.tp}", f"ep{self.ep}"]
        if (self.pp or 1) != 1:
            parts.append(f"pp{self.pp}")
        return " ".join(parts + (["dpa"] if self.dp_attention else []))


def topology_label(
    single: Parallelism | None = None,
    prefill: Parallelism | None = None,
    decode: Parallelism | None = None,
    workers: tuple[object, object] = ("?", "?"),
) -> str:
    """`tp8 ep8 dpa` (one node), or `3P1D · P tp8 ep8 dpa · D tp16 ep16 dpa` (prefill and decode replicas,
    then each role's parallelism)."""
    if prefill is None or decode is None:
        return (single or Parallelism("?")).label()
    return f"{workers[0]}P{workers[1]}D · P {prefill.label()} · D {decode.label()}"


def row_topology(row: dict) -> str:
    """The topology of a matrix row or a planned point (hyphenated keys, worker blocks)."""

    def role(block: dict) -> Parallelism:
        return Parallelism(block.get("tp"), block.get("ep", 1), block.get("pp", 1), bool(block.get("dp-attn")))

    prefill, decode = row.get("prefill"), row.get("decode")
    if isinstance(prefill, dict) and isinstance(decode, dict):
        return topology_label(
            prefill=role(prefill),
            decode=role(decode),
            workers=(prefill.get("num-worker", "?"), decode.get("num-worker", "?")),
        )
    return topology_label(role(row))
