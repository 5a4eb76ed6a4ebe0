"""Cross-field rules of master configs: what the JSON Schema cannot say.

``RULES`` maps each rule id to one small check. A check receives an :class:`EntryContext`
for one master entry that already passed the schema (so types are right) and yields
``(path, message, hint)`` findings; the path is relative to the entry and locates the
diagnostic. Each rule lives here once; docs/config.md and configs/CONFIGS.md cite the ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from typing import NamedTuple

from ..diagnostics import Severity
from ..scenarios import AGENTIC, FIXED, SCENARIO_TYPES
from ..schema import dotted
from ..suggest import close_matches, did_you_mean
from ..workers import dcp_splits_tp, hardware_unpaired, is_aggregated
from .components import UNKNOWN_BACKENDS_DEFAULT, is_image_reference, needs_version

Finding = tuple[tuple, str, str]  # (path inside the entry, message, hint)

WORKER_ROLES = ("prefill", "decode", "worker")
ENTRY_PARALLELISM = ("tp", "ep", "dp-attn", "pp", "dcp-size", "pcp-size")
DRAM_MODES = ("dram", ["dram", "nvme"])
NVME_MODES = ("nvme", ["dram", "nvme"])


class SearchEntry(NamedTuple):
    kind: str  # fixed-seq-len or agentic-coding
    scenario: dict
    entry: dict
    path: tuple  # ("scenarios", kind, i, "search-space", j)

    @property
    def name(self) -> str:
        return dotted(self.path)


class EntryContext:
    """One master entry and the side-file facts its rules need."""

    def __init__(
        self,
        key,
        entry: dict,
        labels: dict,
        hardware: dict,
        backends: dict | None,
        unknown_backends: str = UNKNOWN_BACKENDS_DEFAULT,
    ):
        self.key = key
        self.entry = entry
        self.labels = labels  # runners.yaml labels (empty when runners.yaml is unusable)
        self.hardware = hardware
        self.backends = backends  # components.yaml kv-offload-backends (None when unusable)
        self.unknown_backends = unknown_backends  # components.yaml unknown-backends: warning | error

    @property
    def multinode(self) -> bool:
        return self.entry.get("multinode") is True

    @property
    def disagg(self) -> bool:
        return self.entry.get("disagg") is True

    def scenarios(self, kind: str) -> Iterator[tuple[tuple, dict]]:
        for index, scenario in enumerate(self.entry["scenarios"].get(kind) or []):
            yield ("scenarios", kind, index), scenario

    @cached_property
    def search_entries(self) -> list[SearchEntry]:  # every rule walks them; collected once
        return [
            SearchEntry(kind, scenario, item, path + ("search-space", index))
            for kind in SCENARIO_TYPES
            for path, scenario in self.scenarios(kind)
            for index, item in enumerate(scenario["search-space"])
        ]


class Rule(NamedTuple):
    id: str
    check: Callable[[EntryContext], Iterable[Finding]]
    severity: Severity = Severity.ERROR
    summary: str = ""
    needs_schema: bool = True  # runs only on entries that passed the schema (types are then known)
    severity_from: Callable[[EntryContext], Severity] | None = None  # a severity the repository's policy sets

    def severity_for(self, ctx: EntryContext) -> Severity:
        return self.severity_from(ctx) if self.severity_from else self.severity


RULES: dict[str, Rule] = {}


def rule(
    rule_id: str, summary: str, severity: Severity = Severity.ERROR, needs_schema: bool = True, severity_from=None
):
    def register(check):
        RULES[rule_id] = Rule(
            id=rule_id,
            check=check,
            severity=severity,
            summary=summary,
            needs_schema=needs_schema,
            severity_from=severity_from,
        )
        return check

    return register


# --- keys and runners ------------------------------------------------------------------


@rule("key-not-string", "Master keys are strings.", needs_schema=False)
def key_not_string(ctx: EntryContext):
    if not isinstance(ctx.key, str):
        yield (), f"config key {ctx.key!r} is not a string", f"Quote it: '{ctx.key}':"


@rule("key-wildcard", "Master keys may not contain '*' (reserved for changelog key patterns).", needs_schema=False)
def key_wildcard(ctx: EntryContext):
    if isinstance(ctx.key, str) and "*" in ctx.key:
        yield (
            (),
            f"config key {ctx.key!r} contains '*'; '*' is reserved for key patterns in perf-changelog.yaml",
            "Rename the key without '*'.",
        )


@rule("runner-unknown", "`runner` must be a label of configs/runners.yaml.")
def runner_unknown(ctx: EntryContext):
    runner = ctx.entry["runner"]
    if ctx.labels and runner not in ctx.labels:
        close = close_matches(runner, ctx.labels, n=3, cutoff=0.5)
        suggestion = f"; closest labels: {', '.join(close)}" if close else ""
        yield (
            ("runner",),
            f"runner {runner!r} is not a label in runners.yaml{suggestion}",
            f"Use one of the labels, or add `{runner}: [<runner name>, ...]` under labels: in configs/runners.yaml.",
        )


@rule("agentic-cluster-runner", "Agentic configs need a `cluster:<name>` runner, so every point runs on one fleet.")
def agentic_cluster_runner(ctx: EntryContext):
    runner = ctx.entry["runner"]
    if ctx.entry["scenarios"].get(AGENTIC) and not runner.startswith("cluster:"):
        labelled = f"cluster:{runner}"
        hint = (
            f"Use runner: {labelled}."
            if labelled in ctx.labels
            else "Use a `cluster:<name>` label of configs/runners.yaml."
        )
        yield (
            ("runner",),
            f"runner {runner!r}: agentic-coding configs must use a 'cluster:<name>' runner so every point runs on one "
            "exact hardware fleet",
            hint,
        )


# --- single-node / multinode / disagg shape -------------------------------------------


@rule("disagg-needs-multinode", "`disagg: true` only with `multinode: true`.")
def disagg_needs_multinode(ctx: EntryContext):
    if ctx.disagg and not ctx.multinode:
        yield (
            ("disagg",),
            "disagg: true needs multinode: true (prefill and decode run as separate multinode workers)",
            "Set multinode: true with prefill/decode blocks, or remove disagg.",
        )


@rule("topology-single-node", "Single-node search entries set `tp`, never worker blocks or num-nodes.")
def topology_single_node(ctx: EntryContext):
    if ctx.multinode:
        return
    for se in ctx.search_entries:
        for name in (*WORKER_ROLES, "num-nodes"):
            if name in se.entry:
                yield (
                    se.path + (name,),
                    f"{se.name}: {name!r} is a multinode field, but this entry has multinode: false",
                    "Set multinode: true (and describe the workers), or use tp/ep/dp-attn for a single-node point.",
                )
        if "tp" not in se.entry:
            yield se.path, f"{se.name}: a single-node search entry needs 'tp'", "Add `tp: <GPUs>`."


@rule(
    "topology-multinode", "Multinode search entries use `worker` or `prefill`+`decode`, with parallelism inside them."
)
def topology_multinode(ctx: EntryContext):
    if not ctx.multinode:
        return
    for se in ctx.search_entries:
        item = se.entry
        for name in ENTRY_PARALLELISM:
            if name in item:
                yield (
                    se.path + (name,),
                    f"{se.name}: {name!r} belongs inside the worker blocks of a multinode entry",
                    f"Move `{name}` into prefill/decode (or worker).",
                )
        has_pair = "prefill" in item or "decode" in item
        if "worker" in item and has_pair:
            yield (
                se.path + ("worker",),
                f"{se.name}: give either 'worker' or 'prefill' and 'decode', not both",
                "worker: is the aggregated form; prefill/decode the disaggregated one.",
            )
        elif has_pair and not ("prefill" in item and "decode" in item):
            missing = "decode" if "prefill" in item else "prefill"
            yield (
                se.path,
                f"{se.name}: {missing!r} is missing; 'prefill' and 'decode' come together",
                f"Add a `{missing}:` block.",
            )
        elif "worker" not in item and not has_pair:
            yield (
                se.path,
                f"{se.name}: a multinode search entry needs 'worker' (aggregated) or 'prefill' and 'decode'",
                "Describe the workers of this point.",
            )


@rule("topology-disagg", "`disagg: true` entries use `prefill`+`decode`, never `worker`/`num-nodes`.")
def topology_disagg(ctx: EntryContext):
    if not (ctx.multinode and ctx.disagg):
        return
    for se in ctx.search_entries:
        for name in ("worker", "num-nodes"):
            if name in se.entry:
                yield (
                    se.path + (name,),
                    f"{se.name}: {name!r} is for aggregated entries; disagg: true needs prefill and decode",
                    "Describe prefill and decode workers, or set disagg: false.",
                )


@rule(
    "topology-aggregated",
    "Aggregated multinode entries (`disagg: false`) use `prefill` + `decode`, or `worker` + `num-nodes`.",
)
def topology_aggregated(ctx: EntryContext):
    if not ctx.multinode or ctx.disagg:
        return
    for se in ctx.search_entries:
        if "worker" in se.entry and "num-nodes" not in se.entry:
            yield (
                se.path + ("worker",),
                f"{se.name}: an aggregated worker needs 'num-nodes' (the nodes one point allocates)",
                "Add `num-nodes: <count>` next to worker:, or write the point as prefill: + decode: (decode "
                "num-worker: 0).",
            )


def _yaml_block(data: dict) -> str:
    """``data`` as the YAML a config author would write (block mappings, flow leaf lists)."""
    import yaml  # already loaded by the YAML reader

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        data, Dumper=dumper, sort_keys=False, default_flow_style=None, width=1000, allow_unicode=True
    ).rstrip("\n")


def _aggregated_point(item: dict) -> bool:
    """A prefill with workers beside a decode with none (decode num-worker 0)."""
    return is_aggregated(item) and item["prefill"].get("num-worker") != 0


def aggregated_entry_spelling(ctx: EntryContext, se: SearchEntry) -> str:
    """The aggregated entry an aggregated point of a disagg entry belongs in, as YAML (the
    prefill + decode spelling both infx and the reference's main read)."""
    point = {k: v for k, v in se.entry.items() if k != "kv-p2p-transfer"}
    header = {k: v for k, v in ctx.entry.items() if k not in ("scenarios", "kv-p2p-transfer")}
    scenario = {k: v for k, v in se.scenario.items() if k != "search-space"}
    entry = {**header, "disagg": False, "scenarios": {se.kind: [{**scenario, "search-space": [point]}]}}
    return _yaml_block({f"{ctx.key}-agg": entry})


@rule(
    "aggregated-point-in-disagg",
    "An aggregated point (decode num-worker 0) belongs in an aggregated entry, not a `disagg: true` one.",
    Severity.WARNING,
)
def aggregated_point_in_disagg(ctx: EntryContext):
    for se in ctx.search_entries:
        if ctx.multinode and ctx.disagg and _aggregated_point(se.entry):
            yield (
                se.path + ("decode", "num-worker"),
                f"{se.name}: an aggregated point (decode num-worker: 0) inside a disagg: true entry; it runs as the "
                "reference runs it, but its row says disagg: true (and the entry's kv-p2p-transfer), so an aggregated "
                "result is filed as disaggregated. Move it to an aggregated entry placed just before this one:\n"
                + "\n".join("  " + line for line in aggregated_entry_spelling(ctx, se).splitlines()),
                "Delete the point here and add the entry above (disagg: false, the same prefill: + decode:).",
            )


@rule("num-worker-zero", "`num-worker: 0` only in the decode block of an aggregated point (prefill + decode).")
def num_worker_zero(ctx: EntryContext):
    for se in ctx.search_entries:
        for role in ("prefill", "decode"):
            block = se.entry.get(role)
            if not isinstance(block, dict) or block.get("num-worker") != 0:
                continue
            if role == "decode" and ctx.multinode and _aggregated_point(se.entry):
                continue  # an aggregated point (in a disagg entry, aggregated-point-in-disagg warns)
            yield (
                se.path + (role, "num-worker"),
                f"{se.name}.{role}: num-worker must be at least 1 (0 only marks the decode block of an aggregated "
                "point)",
                "Give the number of workers of this role.",
            )


@rule("hardware-both-or-neither", "`hardware` is set on both prefill and decode, or on neither.")
def hardware_both_or_neither(ctx: EntryContext):
    for se in ctx.search_entries:
        prefill, decode = se.entry.get("prefill"), se.entry.get("decode")
        if not (isinstance(prefill, dict) and isinstance(decode, dict)):
            continue
        if unpaired := hardware_unpaired(prefill, decode):
            has, lacks = unpaired
            yield (
                se.path + (has, "hardware"),
                f"{se.name}: 'hardware' must be set for both 'prefill' and 'decode', or neither; {lacks} has none",
                f"Add `hardware:` to {lacks}, or remove it from {has}.",
            )


@rule("tp-divisible-by-dcp", "`tp` must be a multiple of `dcp-size`.")
def tp_divisible_by_dcp(ctx: EntryContext):
    for se in ctx.search_entries:
        blocks = [((), se.entry)] + [
            ((role,), se.entry[role]) for role in WORKER_ROLES if isinstance(se.entry.get(role), dict)
        ]
        for sub, block in blocks:
            if not dcp_splits_tp(block):
                tp, dcp = block["tp"], block.get("dcp-size", 1)
                yield (
                    se.path + sub + ("dcp-size",),
                    f"{dotted(se.path + sub)}: tp ({tp}) must be divisible by dcp-size ({dcp})",
                    "Decode context parallelism splits the tensor-parallel GPUs; pick a dcp-size that divides tp.",
                )


# --- concurrency ------------------------------------------------------------------------


@rule("conc-exactly-one", "Each search entry gives `conc-list` or `conc-start`+`conc-end`, exactly one.")
def conc_exactly_one(ctx: EntryContext):
    for se in ctx.search_entries:
        item = se.entry
        has_start, has_end, has_list = "conc-start" in item, "conc-end" in item, "conc-list" in item
        if has_list and (has_start or has_end):
            yield (
                se.path + ("conc-list",),
                f"{se.name}: give either conc-list or conc-start/conc-end, not both",
                "Keep the exact list, or the doubling ladder.",
            )
        elif has_start != has_end:
            present, absent = ("conc-start", "conc-end") if has_start else ("conc-end", "conc-start")
            yield (
                se.path + (present,),
                f"{se.name}: {present} without {absent}",
                f"Add `{absent}:` (the ladder runs from conc-start to conc-end).",
            )
        elif not (has_list or has_start):
            yield (
                se.path,
                f"{se.name}: no concurrency; give conc-list or both conc-start and conc-end",
                "Add `conc-list: [...]`.",
            )


@rule("conc-range-order", "`conc-start` must be <= `conc-end`.")
def conc_range_order(ctx: EntryContext):
    for se in ctx.search_entries:
        start, end = se.entry.get("conc-start"), se.entry.get("conc-end")
        if start is not None and end is not None and start > end:
            yield (
                se.path + ("conc-start",),
                f"{se.name}: conc-start ({start}) must be <= conc-end ({end})",
                "Swap the two values.",
            )


@rule("require-power-8k1k", "`require-power` only on the isl 8192 / osl 1024 sequence.")
def require_power_8k1k(ctx: EntryContext):
    for path, scenario in ctx.scenarios(FIXED):
        if scenario.get("require-power") and (scenario["isl"], scenario["osl"]) != (8192, 1024):
            yield (
                path + ("require-power",),
                f"require-power is only valid on the fixed sequence 8192/1024, not {scenario['isl']}/{scenario['osl']}",
                "Remove require-power from this sequence.",
            )


# --- router and kv-p2p-transfer ---------------------------------------------------------


@rule("component-scope", "`router` and `kv-p2p-transfer` are declared at the top level or in search entries, not both.")
def component_scope(ctx: EntryContext):
    for name in ("router", "kv-p2p-transfer"):
        if name not in ctx.entry:
            continue
        for se in ctx.search_entries:
            if name in se.entry:
                yield (
                    se.path + (name,),
                    f"{se.name}: {name} must be declared either at the top level or in search-space entries, not both",
                    f"Remove it here, or remove the top-level `{name}:` and set it on every entry.",
                )


@rule("kv-p2p-transfer-multinode-only", "`kv-p2p-transfer` only in multinode entries.")
def kv_p2p_transfer_multinode_only(ctx: EntryContext):
    if ctx.multinode:
        return
    if "kv-p2p-transfer" in ctx.entry:
        yield (
            ("kv-p2p-transfer",),
            "kv-p2p-transfer is only valid when multinode: true",
            "Remove it; single-node points transfer no KV.",
        )
    for se in ctx.search_entries:
        if "kv-p2p-transfer" in se.entry:
            yield (
                se.path + ("kv-p2p-transfer",),
                f"{se.name}: kv-p2p-transfer is only valid when multinode: true",
                "Remove it.",
            )


@rule("kv-p2p-transfer-required", "`disagg: true` needs `kv-p2p-transfer` at the top level or in every search entry.")
def kv_p2p_transfer_required(ctx: EntryContext):
    if not (ctx.disagg and ctx.multinode) or "kv-p2p-transfer" in ctx.entry:
        return
    for se in ctx.search_entries:
        if "kv-p2p-transfer" not in se.entry:
            yield (
                se.path,
                f"{se.name}: disagg: true requires kv-p2p-transfer at the top level or in every search-space entry; "
                "this entry has none",
                "Add `kv-p2p-transfer: <nixl|mooncake|...>` at the top level of the config (or to this entry).",
            )


# --- KV offloading (agentic) -------------------------------------------------------------


@rule("kv-offloading-required", "Single-node agentic entries state `kv-offloading`.")
def kv_offloading_required(ctx: EntryContext):
    for se in ctx.search_entries:
        if se.kind == AGENTIC and "tp" in se.entry and not ctx.multinode and "kv-offloading" not in se.entry:
            yield (
                se.path,
                f"{se.name}: single-node agentic search entries must specify kv-offloading",
                "Add `kv-offloading: none` (or dram / nvme).",
            )


@rule("kv-offload-backend-coupling", "`kv-offload-backend` is given exactly when `kv-offloading` is not none.")
def kv_offload_backend_coupling(ctx: EntryContext):
    for se in ctx.search_entries:
        mode, backend = se.entry.get("kv-offloading", "none"), "kv-offload-backend" in se.entry
        if backend and mode == "none":
            yield (
                se.path + ("kv-offload-backend",),
                f"{se.name}: kv-offload-backend can only be set when kv-offloading is not 'none'",
                "Remove kv-offload-backend, or set kv-offloading: dram.",
            )
        elif not backend and mode != "none":
            yield (
                se.path + ("kv-offloading",),
                f"{se.name}: kv-offload-backend is required when kv-offloading is {mode!r}",
                "Add `kv-offload-backend: { name: <backend> }` (backends: configs/components.yaml).",
            )


@rule("kv-offloading-nvme-single-node", "NVMe offloading only in single-node entries.")
def kv_offloading_nvme_single_node(ctx: EntryContext):
    if not ctx.multinode:
        return
    for se in ctx.search_entries:
        if se.entry.get("kv-offloading") in NVME_MODES:
            yield (
                se.path + ("kv-offloading",),
                f"{se.name}: NVMe offloading currently requires a single-node entry",
                "Use kv-offloading: dram or none here.",
            )


@rule("dram-utilization-required", "Offloading to dram needs `dram-utilization` on the agentic scenario.")
def dram_utilization_required(ctx: EntryContext):
    for path, scenario in ctx.scenarios(AGENTIC):
        if "dram-utilization" in scenario:
            continue
        for index, item in enumerate(scenario["search-space"]):
            if item.get("kv-offloading") in DRAM_MODES:
                yield (
                    path + ("search-space", index, "kv-offloading"),
                    f"{dotted(path + ('search-space', index))}: kv-offloading {item['kv-offloading']!r} "
                    "requires dram-utilization on its agentic-coding scenario",
                    "Add `dram-utilization: <share in (0, 1]>` next to search-space:.",
                )


@rule("dram-needs-runner-hardware", "Offloading to dram needs the runner's `hardware` facts in configs/runners.yaml.")
def dram_needs_runner_hardware(ctx: EntryContext):
    runner = ctx.entry["runner"]
    if not ctx.labels or runner in ctx.hardware:
        return
    for se in ctx.search_entries:
        if se.entry.get("kv-offloading") in DRAM_MODES:
            yield (
                ("runner",),
                f"runner {runner!r} has no hardware entry in runners.yaml, but {se.name} offloads KV to dram; "
                "its DRAM budget comes from that entry",
                f"Add `{runner}: {{ available-cpu-dram-mib: <MiB>, gpus-per-node: <GPUs> }}` under hardware: in "
                "configs/runners.yaml.",
            )
            return


# --- component versions (policy: configs/components.yaml) -------------------------------


def _components(ctx: EntryContext) -> Iterator[tuple[tuple, str, dict]]:
    """(path, kind, value) of every router and kv-offload-backend of the entry."""
    if isinstance(ctx.entry.get("router"), dict):
        yield ("router",), "router", ctx.entry["router"]
    for se in ctx.search_entries:
        for kind in ("router", "kv-offload-backend"):
            if isinstance(se.entry.get(kind), dict):
                yield se.path + (kind,), kind, se.entry[kind]


@rule(
    "component-version-image",
    "A component version is its own release, package version or commit, not an image reference.",
)
def component_version_image(ctx: EntryContext):
    for path, kind, value in _components(ctx):
        version = value.get("version")
        if isinstance(version, str) and is_image_reference(version):
            yield (
                path + ("version",),
                f"{kind} {value.get('name')!r}: version {version!r} is an image reference; "
                "a component version must be a release, package version, or source commit",
                f"Write the {value.get('name')} release or commit (the image is already in `image:`).",
            )


@rule(
    "kv-offload-backend-unknown",
    "A kv-offload-backend not listed in configs/components.yaml is a warning (an error with `unknown-backends: "
    "error`).",
    Severity.WARNING,
    severity_from=lambda ctx: Severity(ctx.unknown_backends),
)
def kv_offload_backend_unknown(ctx: EntryContext):
    if ctx.backends is None:
        return
    for path, kind, value in _components(ctx):
        if kind == "kv-offload-backend" and value["name"] not in ctx.backends:
            guess = did_you_mean(value["name"], ctx.backends, n=1, cutoff=0.5)
            yield (
                path + ("name",),
                f"kv-offload-backend {value['name']!r} is not in the component policy (known: "
                f"{', '.join(ctx.backends)}){guess}; whether it needs a version is unknown",
                "If it is a typo, use a known name. Otherwise list it under kv-offload-backends: in "
                "configs/components.yaml with `versioning: framework-native` (built into the image) or `versioning: "
                "independent` (then `version` is required) and a description.",
            )


@rule(
    "kv-offload-backend-version-required", "Independently versioned backends (configs/components.yaml) carry `version`."
)
def kv_offload_backend_version_required(ctx: EntryContext):
    if ctx.backends is None:
        return
    for path, kind, value in _components(ctx):
        known = ctx.backends.get(value["name"]) if kind == "kv-offload-backend" else None
        if known and needs_version(known) and "version" not in value:
            name = value["name"]
            yield (
                path,
                f"kv-offload-backend {name!r} has no version; {name} is versioned independently of the serving image "
                "(configs/components.yaml), so the config must say which release it ran",
                f"Write `kv-offload-backend: {{ name: {name}, version: <{name} release, package version or commit> "
                "}`.",
            )
