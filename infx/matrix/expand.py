"""Expansion of normalised master entries into rows, one function per point kind.

Order (the contract of ``--format json``): master order, then scenario kind
(fixed-seq-len, then agentic-coding), then sequence / agentic item, then search-space
order, then concurrency. Single-node points are concurrency-major, runner-minor; a
multinode fixed-seq-len point carries its whole concurrency list; multinode agentic
points are runner-major with one concurrency each (as the reference orders them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, error
from ..scenarios import AGENTIC, FIXED, seq_name
from ..workers import HardwareUnknown, gpus_per_node, replica_gpus, worker_block
from .derive import (
    AGENTIC_DURATION_S,
    DeriveError,
    concurrencies,
    kv_mode,
    max_model_len,
    multi_agentic_exp_name,
    single_agentic_exp_name,
    total_cpu_dram_gb,
)
from .nodes import RecipeNodeCounts, node_count
from .selection import Selection

if TYPE_CHECKING:  # annotations only: the config package is not imported for them
    from ..config.load import ConfigSet

HEADER = ("image", "model", "model-prefix", "precision", "framework")


@dataclass(frozen=True, kw_only=True)
class Expansion:
    """State of one expansion: inputs, and the problems and notes it collects."""

    config_set: ConfigSet
    selection: Selection
    recipes: RecipeNodeCounts
    problems: list[Diagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    per_node: dict[str, int] = field(default_factory=dict)

    def gpus_per_node(self, label: str) -> int:
        if label not in self.per_node:
            try:
                self.per_node[label] = gpus_per_node(self.runners, label)
            except HardwareUnknown as exc:
                raise DeriveError(str(exc), exc.hint) from None
        return self.per_node[label]

    @property
    def runners(self) -> dict:
        return self.config_set.runners or {}

    def runner_nodes(self, label: str) -> list[str]:
        """Where rows of a config go: its label, or each matching runner node when filtered."""
        node_filter = self.selection.runner_node_filter
        if node_filter is None:
            return [label]
        nodes = (self.runners.get("labels") or {}).get(label) or []
        return [node for node in nodes if node_filter in str(node)]

    def fail(self, key: str, path: tuple, exc: DeriveError) -> None:
        file, where = self.config_set.where(key, "scenarios", *path, *exc.path)
        self.problems.append(error(file, where, "matrix-derive", str(exc), exc.hint))


def _within_parallelism_caps(selection: Selection, workers: list[dict]) -> bool:
    """--max-tp / --max-ep: every worker of the point must stay within the caps."""
    if selection.max_tp is not None and any(w.get("tp", 1) > selection.max_tp for w in workers):
        return False
    if selection.max_ep is not None and any((w.get("ep") or 1) > selection.max_ep for w in workers):
        return False
    return True


def _copy_worker(worker: dict) -> dict:
    return {key: list(value) if isinstance(value, list) else value for key, value in worker.items()}


def _workers_of(search: dict) -> tuple[dict, dict]:
    """The normalised point's two roles (infx/workers.py: the one worker form)."""
    return worker_block(search["prefill"]), worker_block(search["decode"])


def _single_parallelism(search: dict) -> dict:
    return {
        "tp": search["tp"],
        "pp": search.get("pp", 1),
        "dcp-size": search.get("dcp-size", 1),
        "pcp-size": search.get("pcp-size", 1),
    }


def expand_entry(run: Expansion, key: str, entry: dict) -> list[dict]:
    selection = run.selection
    multinode = bool(entry.get("multinode"))
    if selection.node_types and ("multi-node" if multinode else "single-node") not in selection.node_types:
        return []
    runners = run.runner_nodes(entry["runner"])
    if not runners:
        return []
    header = {name: entry[name] for name in HEADER}
    scenarios = entry.get("scenarios") or {}
    rows: list[dict] = []
    for kind, (single, multi) in EXPANDERS.items():
        if selection.scenario_types and kind not in selection.scenario_types:
            continue
        expand = multi if multinode else single
        for index, scenario in enumerate(scenarios.get(kind) or []):
            if kind == FIXED and selection.seq_lens and (scenario["isl"], scenario["osl"]) not in selection.seq_pairs:
                continue
            for position, search in enumerate(scenario["search-space"]):
                try:
                    rows.extend(
                        expand(
                            run=run,
                            key=key,
                            entry=entry,
                            header=header,
                            runners=runners,
                            scenario=scenario,
                            search=search,
                        )
                    )
                except DeriveError as exc:
                    run.fail(key, (kind, index, "search-space", position), exc)
    return rows


def _router(entry: dict, search: dict) -> dict:
    router = search.get("router") or entry.get("router")
    return {"router": dict(router)} if router else {}


def _transfer(entry: dict, search: dict) -> dict:
    transfer = search.get("kv-p2p-transfer") or entry.get("kv-p2p-transfer")
    return {"kv-p2p-transfer": transfer} if transfer else {}


def _concs(run: Expansion, search: dict) -> list[int]:
    return [c for c in concurrencies(search, run.selection.step_size) if run.selection.conc_allowed(c)]


def _single_fixed(run, key, entry, header, runners, scenario, search):
    ep = search.get("ep") if search.get("ep") is not None else 1
    if not _within_parallelism_caps(run.selection, [{"tp": search["tp"], "ep": ep}]):
        return []
    isl, osl = scenario["isl"], scenario["osl"]
    shared = {"isl": isl, "osl": osl, **_single_parallelism(search)}
    tail = {
        "max-model-len": max_model_len(isl, osl),
        "ep": ep,
        "dp-attn": bool(search.get("dp-attn") or False),
        "spec-decoding": search.get("spec-decoding") or "none",
        "exp-name": f"{entry['model-prefix']}_{seq_name(isl, osl)}",
        "disagg": False,
        "run-eval": False,
        **_router(entry, search),
        "config-key": key,
    }
    return [
        {**header, "runner": runner, **shared, "conc": conc, **tail}
        for conc in _concs(run, search)
        for runner in runners
    ]


def _multi_fixed(run, key, entry, header, runners, scenario, search):
    prefill, decode = _workers_of(search)
    # Derived before any filter, so a config problem is reported whatever the selection.
    nodes = node_count(
        search=search,
        prefill=prefill,
        decode=decode,
        runner=entry["runner"],
        gpus_per_node=run.gpus_per_node,
        recipes=run.recipes,
        warnings=run.warnings,
    )
    concs = _concs(run, search)
    if not concs or not _within_parallelism_caps(run.selection, [prefill, decode]):
        return []
    isl, osl = scenario["isl"], scenario["osl"]
    return [
        {
            **header,
            "runner": runner,
            "isl": isl,
            "osl": osl,
            "spec-decoding": search.get("spec-decoding") or "none",
            "prefill": _copy_worker(prefill),
            "decode": _copy_worker(decode),
            "conc": list(concs),
            "max-model-len": max_model_len(isl, osl),
            "exp-name": f"{entry['model-prefix']}_{seq_name(isl, osl)}",
            "disagg": bool(entry.get("disagg")),
            "run-eval": False,
            **_router(entry, search),
            **_transfer(entry, search),
            "node-count": nodes,
            "config-key": key,
        }
        for runner in runners
    ]


def _offload(search: dict) -> tuple[str, dict]:
    mode = kv_mode(search.get("kv-offloading"))
    backend = search.get("kv-offload-backend")
    return mode, ({"kv-offload-backend": dict(backend)} if backend else {})


def _single_agentic(run, key, entry, header, runners, scenario, search):
    parallelism = _single_parallelism(search)
    ep = search.get("ep") if search.get("ep") is not None else 1
    mode, backend = _offload(search)
    # Derived before any filter, so a config problem is reported whatever the selection.
    dram = total_cpu_dram_gb(
        mode,
        scenario.get("dram-utilization"),
        run.runners,
        entry["runner"],
        parallelism["tp"] * parallelism["pp"] * parallelism["pcp-size"],
        multinode=False,
    )
    if not _within_parallelism_caps(run.selection, [{"tp": parallelism["tp"], "ep": ep}]):
        return []
    spec = search.get("spec-decoding") or "none"
    rows = []
    for conc in _concs(run, search):
        tail = {
            "conc": conc,
            "kv-offloading": mode,
            **backend,
            "total-cpu-dram-gb": dram,
            "duration": AGENTIC_DURATION_S,
            "exp-name": single_agentic_exp_name(
                prefix=entry["model-prefix"],
                tp=parallelism["tp"],
                conc=conc,
                mode=mode,
                backend=backend.get("kv-offload-backend"),
                spec=spec,
            ),
            "scenario-type": AGENTIC,
            **_router(entry, search),
            "run-eval": False,
            "config-key": key,
        }
        for runner in runners:
            rows.append(
                {
                    **header,
                    "runner": runner,
                    **parallelism,
                    "ep": ep,
                    "dp-attn": bool(search.get("dp-attn") or False),
                    "spec-decoding": spec,
                    **tail,
                }
            )
    return rows


def _multi_agentic(run, key, entry, header, runners, scenario, search):
    prefill, decode = _workers_of(search)
    mode, backend = _offload(search)
    dram = total_cpu_dram_gb(
        mode, scenario.get("dram-utilization"), run.runners, entry["runner"], replica_gpus(prefill), multinode=True
    )
    nodes = node_count(
        search=search,
        prefill=prefill,
        decode=decode,
        runner=entry["runner"],
        gpus_per_node=run.gpus_per_node,
        recipes=run.recipes,
        warnings=run.warnings,
    )
    if not _within_parallelism_caps(run.selection, [prefill, decode]):
        return []
    concs = _concs(run, search)
    disagg = bool(entry.get("disagg"))
    rows = []
    for runner in runners:
        for conc in concs:
            rows.append(
                {
                    **header,
                    "runner": runner,
                    "spec-decoding": search.get("spec-decoding") or "none",
                    "prefill": _copy_worker(prefill),
                    "decode": _copy_worker(decode),
                    "conc": [conc],
                    "kv-offloading": mode,
                    **backend,
                    "total-cpu-dram-gb": dram,
                    "duration": AGENTIC_DURATION_S,
                    "exp-name": multi_agentic_exp_name(
                        prefix=entry["model-prefix"],
                        prefill=prefill,
                        decode=decode,
                        concs=[conc],
                        mode=mode,
                        backend=backend.get("kv-offload-backend"),
                    ),
                    "disagg": disagg,
                    "scenario-type": AGENTIC,
                    **_router(entry, search),
                    **_transfer(entry, search),
                    "run-eval": False,
                    "node-count": nodes,
                    "config-key": key,
                }
            )
    return rows


# scenario kind -> (single-node expander, multinode expander), in emission order
EXPANDERS = {FIXED: (_single_fixed, _multi_fixed), AGENTIC: (_single_agentic, _multi_agentic)}
