"""Fields a row derives from its config: ladders, names, the DRAM budget, fingerprints.

Pure functions over plain data; every number and name format here is the reference's
(docs/matrix.md lists the few deliberate differences).
"""

from __future__ import annotations

import hashlib
from decimal import ROUND_FLOOR, Decimal

from ..jsonfast import canonical
from ..workers import hardware_of

AGENTIC_DURATION_S = 3600
# The agentx-fast label (docs/workflows.md): a 1,200 s profile and one warm-up request per lane
# for agentic throughput points, as the reference's fast AgentX preflight runs them.
AGENTX_FAST_DURATION_S = 1200
AGENTX_FAST_WARMUP_REQUESTS = 1
MAX_MODEL_LEN_MARGIN = 256
# The DRAM budget never assumes more than ~3 TB per node, whatever the inventory says.
DRAM_CAP_MIB = 2_861_022
MIB = 1_048_576
GB = Decimal(10) ** 9
# "Topology", the one definition: a point's topology is its row without what varies between
# the concurrencies of one configuration: the concurrency, the name derived from it, the eval
# marks (run-eval, eval-conc) the default policy puts on some concurrencies and the eval
# protocol those marks carry. The row's fingerprint (the field the reference calls
# recipe-fingerprint), the eval policy's groups and the planner's points all use it. A point's
# TP/EP/DP-attention per role is its *parallelism*, its prefill/decode split its *roles*.
NOT_TOPOLOGY = frozenset({"conc", "exp-name", "run-eval", "eval-conc", "eval-protocol", "recipe-fingerprint"})


class DeriveError(ValueError):
    """A config whose derived fields cannot be computed; ``hint`` says how to fix it."""

    def __init__(self, message: str, hint: str = "", path: tuple = ()):
        super().__init__(message)
        self.hint = hint
        self.path = path  # inside the search-space entry, for the diagnostic's location


def ladder(start: int, end: int, step: int) -> list[int]:
    """start, start·step, … clamped to end; end is always the last value."""
    if start > end:
        return []
    values = [start]
    while values[-1] < end:
        values.append(min(values[-1] * step, end))
    return values


def concurrencies(search: dict, step: int) -> list[int]:
    if search.get("conc-list"):
        return list(search["conc-list"])
    return ladder(search["conc-start"], search["conc-end"], step)


def max_model_len(isl: int, osl: int) -> int:
    return isl + osl + MAX_MODEL_LEN_MARGIN


def kv_mode(value) -> str:
    """``kv-offloading`` as a row carries it: the tier list [dram, nvme] becomes ``dram+nvme``."""
    if value is None:
        return "none"
    if isinstance(value, list):
        return "+".join(value)
    return str(value)


def _kv_suffix(mode: str, backend: dict | None) -> str:
    return f"kv{mode}-{(backend or {}).get('name', '')}"


def single_agentic_exp_name(prefix: str, tp: int, conc: int, mode: str, backend: dict | None, spec: str) -> str:
    kv = "kvnone" if mode == "none" else _kv_suffix(mode, backend)
    name = f"{prefix}_tp{tp}_conc{conc}_{kv}"
    return name if spec == "none" else f"{name}_spec-{spec}"


def _worker_tag(worker: dict) -> str:
    tag = f"{worker['num-worker']}x{worker['tp']}"
    if worker.get("ep", 1) != 1:
        tag += f"ep{worker['ep']}"
    return tag + ("dpa" if worker.get("dp-attn") else "")


def multi_agentic_exp_name(
    prefix: str, prefill: dict, decode: dict, concs: list[int], mode: str, backend: dict | None
) -> str:
    name = f"{prefix}_p{_worker_tag(prefill)}_d{_worker_tag(decode)}_conc{'x'.join(str(c) for c in concs)}"
    return name if mode == "none" else f"{name}_{_kv_suffix(mode, backend)}"


def dram_gpu_share(gpu_count: int, per_node: int, runner: str, multinode: bool) -> int:
    """GPUs of one node the KV cache of one (prefill) replica shares the node's DRAM with."""
    if not multinode:
        if gpu_count > per_node:
            raise DeriveError(
                f"the entry requires {gpu_count} GPUs and exceeds gpus-per-node={per_node} for runner {runner!r}",
                "A single-node entry must fit on one node: lower tp × pp × pcp-size.",
            )
        return gpu_count
    if gpu_count > per_node:
        if gpu_count % per_node:
            raise DeriveError(
                f"the prefill replica uses {gpu_count} GPUs: it spans multiple nodes but is not a multiple of "
                f"gpus-per-node={per_node} for runner {runner!r}",
                "Give the prefill worker a GPU count that fills whole nodes.",
            )
        return per_node
    if per_node % gpu_count:
        raise DeriveError(
            f"the prefill replica uses {gpu_count} GPUs, which does not divide gpus-per-node={per_node} evenly for "
            f"runner {runner!r}",
            "Give the prefill worker a GPU count that divides the node (e.g. 1, 2, 4, 8).",
        )
    return gpu_count


def total_cpu_dram_gb(mode: str, utilization, runners: dict, runner: str, gpu_count: int, multinode: bool) -> int:
    """The CPU DRAM (GB) a point may use for KV offload: its GPUs' share of the node, × utilization.

    Decimal arithmetic so the floor matches the reference to the last GB.
    """
    if "dram" not in mode.split("+"):
        return 0
    hardware = hardware_of(runners, runner)
    if not hardware or not hardware.get("available-cpu-dram-mib") or not hardware.get("gpus-per-node"):
        known = ", ".join(sorted(map(str, runners.get("hardware") or {}))) or "none"
        raise DeriveError(
            f"runner {runner!r} requires 'available-cpu-dram-mib' and 'gpus-per-node' in runner hardware metadata "
            f"(available hardware keys: {known})",
            f"Add `hardware: {{{runner}: {{available-cpu-dram-mib: M, gpus-per-node: N}}}}` to runners.yaml.",
        )
    if utilization is None:
        raise DeriveError(
            f"kv-offloading={mode!r} requires dram-utilization",
            "Set `dram-utilization: 0.8` (0 < x ≤ 1) on the agentic-coding item.",
        )
    per_node = int(hardware["gpus-per-node"])
    share = dram_gpu_share(gpu_count, per_node, runner, multinode)
    mib = min(Decimal(int(hardware["available-cpu-dram-mib"])), Decimal(DRAM_CAP_MIB))
    budget = mib * MIB * Decimal(str(utilization)) * share / per_node / GB
    return int(budget.to_integral_value(rounding=ROUND_FLOOR))


def topology(row: dict) -> bytes:
    """The canonical JSON of a row's topology (the row without NOT_TOPOLOGY)."""
    return canonical({key: value for key, value in row.items() if key not in NOT_TOPOLOGY})


def topology_fingerprint(row: dict) -> str:
    """The row's ``recipe-fingerprint`` (the reference's field name): SHA-256 of its topology;
    every concurrency of one topology shares it (``infx.points.point_id`` adds the concurrency)."""
    return hashlib.sha256(topology(row)).hexdigest()
