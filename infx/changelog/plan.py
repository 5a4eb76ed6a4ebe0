"""The sweep a changelog change asks for: entries -> resolved keys -> matrix rows -> buckets.

The matrix module is called in-process (``build_matrix`` with a Selection of the resolved
keys and the entry's scenarios), once per (key, scenario) for throughput and once for evals,
as the reference's generator calls were grouped.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from .. import matrix
from ..config import ConfigSet
from ..diagnostics import Diagnostic, error
from ..evalsuite import EvalMode
from ..launch.lanecheck import check_lanes
from ..matrix.derive import AGENTX_FAST_DURATION_S, AGENTX_FAST_WARMUP_REQUESTS
from ..points import gpu_hours, point_id
from ..runmode import Mode
from ..scenarios import AGENTIC
from ..sweepplan import Canary, ChangelogMetadata, PlannedEntry, SweepPlan
from . import appendonly
from .entry import Entry
from .keys import Resolution


@dataclass(frozen=True, kw_only=True)
class PlanOptions:
    """Run-wide modifiers (PR labels): the reference's --evals-only / --all-evals / --trim-conc."""

    evals: EvalMode = EvalMode.DEFAULT  # ONLY: no throughput rows; ALL: every eval point
    trim_conc: bool = False  # the `sweep-enabled` label: one (the lowest) concurrency per point

    @classmethod
    def of(cls, *, evals_only: bool = False, all_evals: bool = False, trim_conc: bool = False) -> PlanOptions:
        """The options of the three run-wide modifiers (`--evals-only`, `--all-evals`, `--trim-conc`)."""
        return cls(evals=EvalMode.of(evals_only=evals_only, all_evals=all_evals), trim_conc=trim_conc)


def trim_conc(rows: list[dict]) -> list[dict]:
    """Throughput rows cut to their lowest concurrency, as the reference trims them.

    A multinode row keeps the lowest of its list. Single-node rows of one topology keep the one
    with the lowest concurrency (the first of equals), where it stands; the others go. As in the
    reference, the topology here ignores which config a row came from: two configs with the same
    points run that point once in the trimmed sweep.
    """
    kept: dict[str, int] = {}
    out: list[dict] = []
    for row in rows:
        if isinstance(row.get("conc"), list):
            out.append({**row, "conc": [min(row["conc"])]} if len(row["conc"]) > 1 else row)
            continue
        key = matrix.topology_fingerprint({name: value for name, value in row.items() if name != "config-key"})
        if key not in kept or row["conc"] < out[kept[key]]["conc"]:
            kept[key] = len(out)
        out.append(row)
    survivors = set(kept.values())
    return [row for index, row in enumerate(out) if isinstance(row.get("conc"), list) or index in survivors]


def _rows(config_set: ConfigSet, keys: list[str], scenarios: tuple[str, ...], evals: EvalMode) -> list[dict]:
    """Matrix rows of ``keys`` restricted to ``scenarios``, in the eval mode ``evals``."""
    selection = matrix.Selection(config_keys=tuple(keys), scenario_types=tuple(scenarios))
    return matrix.build_matrix(config_set, selection=selection, evals=evals, notices=[])


def _group_by_scenarios(keys: list[str], scenarios: tuple[str, ...], seen: dict[str, set]) -> dict[tuple, list[str]]:
    """Keys grouped by the scenarios not yet planned for them (each key x scenario once)."""
    groups: dict[tuple, list[str]] = {}
    for key in keys:
        unseen = tuple(s for s in scenarios if s not in seen.setdefault(key, set()))
        if unseen:
            groups.setdefault(unseen, []).append(key)
            seen[key].update(unseen)
    return groups


def _min_prefill_ep(rows: list[dict], minimum: int | None) -> list[dict]:
    if minimum is None:
        return rows
    kept = []
    for row in rows:
        prefill = row.get("prefill")
        if isinstance(prefill, dict):
            ep = prefill.get("ep")
            if not isinstance(ep, int) or ep < minimum:
                continue
        kept.append(row)
    return kept


def plan_rows(
    config_set: ConfigSet,
    entries: list[Entry],
    resolution: Resolution,
    options: PlanOptions,
    base_loader: Callable[[], ConfigSet | None] | None = None,
    file: str = "perf-changelog.yaml",
    unnamed_checked: bool = False,
):
    """(rows, diagnostics) for the given entries, each (key, scenario) planned once per kind.

    Throughput rows first (append-only entries contribute their delta), then eval rows; the
    trimmed mode trims every throughput row, deltas included, as the reference does.
    ``unnamed_checked``: the PR gate's coverage rule already reports changed keys no entry names.
    """
    bench: list[dict] = []
    evals: list[dict] = []
    problems: list[Diagnostic] = []
    seen_bench: dict[str, set] = {}
    seen_eval: dict[str, set] = {}
    base_set = None
    if any(entry.append_only for entry in entries):
        base_set = base_loader() if base_loader else None
        if base_set is not None:
            problems += appendonly.scope(
                base=base_set.raw_entries,
                head=config_set.raw_entries,
                entries=entries,
                per_entry=resolution.per_entry,
                file=file,
                unnamed_checked=unnamed_checked,
            )
    # all-evals entries first: their broader eval selection wins when keys overlap.
    for entry in sorted(entries, key=lambda e: EvalMode.ALL not in e.evals):
        keys = resolution.per_entry.get(entry.index, [])
        if not keys:
            continue
        eval_rows = EvalMode.ONLY | EvalMode.ALL if EvalMode.ALL in options.evals | entry.evals else EvalMode.ONLY
        if entry.append_only:
            for scenarios, group in _group_by_scenarios(keys, entry.scenario_types, seen_bench).items():
                head_rows = _rows(config_set, group, scenarios, EvalMode.NONE)
                present = [k for k in group if base_set is not None and k in base_set.entries]
                base_rows = (
                    _rows(base_set, present, scenarios, EvalMode.NONE) if present and base_set is not None else []
                )
                delta, delta_problems = appendonly.delta(base_rows, head_rows, entry, file)
                bench += delta
                problems += delta_problems
            continue
        if EvalMode.ONLY not in options.evals and not entry.evals.evals_only:  # an all-evals entry runs evals only
            for scenarios, group in _group_by_scenarios(keys, entry.scenario_types, seen_bench).items():
                bench += _rows(config_set, group, scenarios, EvalMode.NONE)
        if EvalMode.NONE not in entry.evals:
            for scenarios, group in _group_by_scenarios(keys, entry.scenario_types, seen_eval).items():
                evals += _min_prefill_ep(_rows(config_set, group, scenarios, eval_rows), entry.eval_min_prefill_ep)
    return (trim_conc(bench) if options.trim_conc else bench) + evals, problems


def plan_sweep(
    config_set: ConfigSet,
    entries: list[Entry],
    resolution: Resolution,
    options: PlanOptions,
    base_loader=None,
    change: ChangelogMetadata | None = None,
    file: str = "perf-changelog.yaml",
    unnamed_checked: bool = False,
) -> tuple[SweepPlan | None, list[Diagnostic]]:
    """The sweep plan of the entries: buckets of rows plus the change they come from (``change``,
    completed here with the entries, the keys they resolved to and the PR link) and each point's lane
    (infx/launch/lanecheck.py, from the profiles under ``config_set.root``); None when it cannot be built."""
    try:
        rows, problems = plan_rows(
            config_set=config_set,
            entries=entries,
            resolution=resolution,
            options=options,
            base_loader=base_loader,
            file=file,
            unnamed_checked=unnamed_checked,
        )
    except Exception as exc:  # the matrix refusing a config is reported, not raised
        diagnostics = getattr(exc, "diagnostics", None)
        if diagnostics:
            return None, list(diagnostics)
        return None, [
            error(
                file,
                None,
                "plan-build",
                f"the sweep plan could not be built: {exc}",
                "Run `infx matrix` on the named config keys to see the problem.",
            )
        ]
    buckets = matrix.bucketize(rows)
    links = list(dict.fromkeys(entry.pr_link for entry in entries))
    planned = tuple(
        PlannedEntry.from_data(
            {**entry.metadata(), "position": entry.index, "resolved-keys": resolution.per_entry.get(entry.index, [])}
        )
        for entry in entries
    )
    change = change or ChangelogMetadata.build()
    metadata = change.completed(
        entries=planned,
        resolved_keys=resolution.keys,
        pr_link=change.pr_link or (links[0] if len(links) == 1 else links),
    )
    plan, lane_problems = check_lanes(
        SweepPlan({name: bucket for name, bucket in buckets.items() if bucket}, metadata), config_set.root
    )
    return plan, problems + lane_problems


def agentx_fast(plan: SweepPlan) -> SweepPlan:
    """The plan with its agentic throughput points run as the agentx-fast label asks.

    Only agentic throughput rows change (eval and fixed-seq-len rows stay canonical): duration
    1,200 s and ``warmup-requests-per-lane: 1``. Each changed row gets its own fingerprint, so a
    fast point never shares a point id or result key with the canonical one and is never reused as it.
    """

    def fast(row: dict) -> dict:
        if row.get("scenario-type") != AGENTIC or row.get("eval-only"):
            return row
        changed = {**row, "duration": AGENTX_FAST_DURATION_S, "warmup-requests-per-lane": AGENTX_FAST_WARMUP_REQUESTS}
        return {**changed, "recipe-fingerprint": matrix.topology_fingerprint(changed)}

    return replace(plan, buckets={name: [fast(row) for row in rows] for name, rows in plan.buckets.items()})


def pick_canary(buckets: dict[str, list[dict]], held: AbstractSet[str] = frozenset()) -> tuple[str, dict] | None:
    """(bucket, row) of the throughput point with the fewest GPU-hours (first in plan order on a tie),
    among the points not ``held`` (no lane to launch them on).

    Eval points are never the canary: it is a smoke test of the launch path, as the reference's is.
    """
    candidates = [
        (bucket, row)
        for bucket, rows in buckets.items()
        for row in rows
        if not row.get("run-eval") and point_id(row) not in held
    ]
    return min(candidates, key=lambda item: gpu_hours(item[1])) if candidates else None


def apply_mode(plan: SweepPlan, mode: Mode) -> SweepPlan:
    """The plan with its run mode and, when the mode asks for one, its canary point."""
    canary = pick_canary(plan.buckets, plan.lane_held) if mode.dispatch and mode.canary else None
    return replace(plan, mode=mode, canary=Canary(point_id(canary[1]), canary[0]) if canary else None)
