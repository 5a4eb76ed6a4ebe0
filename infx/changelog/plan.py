"""The sweep a changelog change asks for: entries -> resolved keys -> matrix rows -> buckets.

The matrix module is called in-process (``build_matrix`` with a Selection of the resolved
keys and the entry's scenarios), once per (key, scenario) for throughput and once for evals,
as the reference's generator calls were grouped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..config import ConfigSet
from ..diagnostics import Diagnostic, error, warning
from ..points import concurrencies
from .entry import Entry
from .keys import Resolution

@dataclass(frozen=True)
class PlanOptions:
    """Run-wide modifiers (PR labels): the reference's --evals-only / --all-evals."""

    evals_only: bool = False
    all_evals: bool = False
    trim_conc: bool = False  # the `sweep-enabled` label: one (the lowest) concurrency per point


def trim_conc(rows: list[dict]) -> list[dict]:
    """Throughput rows cut to their lowest concurrency: one row per topology, in first-seen order."""
    lowest: dict = {}
    for row in rows:
        if isinstance(row.get("conc"), list):  # multinode: the row keeps its lowest concurrency
            lowest[id(row)] = {**row, "conc": [min(row["conc"])]} if row["conc"] else row
        elif _point_key(row) not in lowest or row["conc"] < lowest[_point_key(row)]["conc"]:
            lowest[_point_key(row)] = row
    return list(lowest.values())


def _matrix():
    from .. import matrix  # imported late: `infx changelog fix` never needs it

    return matrix


def _rows(config_set: ConfigSet, keys: list[str], scenarios: tuple[str, ...], evals: str) -> list[dict]:
    """Matrix rows of ``keys`` restricted to ``scenarios``; evals: none | only | all."""
    matrix = _matrix()
    mode = {"none": matrix.EvalMode.NONE, "only": matrix.EvalMode.ONLY, "all": matrix.EvalMode.ONLY | matrix.EvalMode.ALL}[evals]
    selection = matrix.Selection(config_keys=tuple(keys), scenario_types=tuple(scenarios))
    return matrix.build_matrix(config_set, selection=selection, evals=mode, notices=[])


def _group_by_scenarios(keys: list[str], scenarios: tuple[str, ...], seen: dict[str, set]) -> dict[tuple, list[str]]:
    """Keys grouped by the scenarios not yet planned for them (each key x scenario once)."""
    groups: dict[tuple, list[str]] = {}
    for key in keys:
        unseen = tuple(s for s in scenarios if s not in seen.setdefault(key, set()))
        if unseen:
            groups.setdefault(unseen, []).append(key)
            seen[key].update(unseen)
    return groups


def _point_key(row: dict) -> str:
    """A row's topology (infx.matrix.derive.topology: everything but its concurrency, names and eval marks)."""
    return row.get("recipe-fingerprint") or _matrix().topology_fingerprint(row)


# What makes a published curve: a new point must extend one that exists at the base.
SERIES_FIELDS = ("model", "model-prefix", "precision", "framework", "runner", "disagg", "scenario-type", "isl", "osl", "spec-decoding")


def _series(row: dict) -> tuple:
    hardware = tuple((role, (row.get(role) or {}).get("tp"), (row.get(role) or {}).get("ep")) for role in ("prefill", "decode")
                     if isinstance(row.get(role), dict))
    return tuple(repr(row.get(name)) for name in SERIES_FIELDS) + ("kv", row.get("kv-offloading") not in (None, "none")) + hardware


def append_only_delta(base_rows: list[dict], head_rows: list[dict], entry: Entry, file: str) -> tuple[list[dict], list[Diagnostic]]:
    """Head points that are new relative to the base; a base point missing at the head is an error."""
    def points(rows):
        table: dict[str, list] = {}
        for row in rows:
            table.setdefault(_point_key(row), []).extend(concurrencies(row))
        return table

    base_points, head_points = points(base_rows), points(head_rows)
    problems = []
    removed = []
    for key, concs in base_points.items():
        missing = [c for c in dict.fromkeys(concs) if c not in head_points.get(key, [])]
        if missing:
            example = next(r for r in base_rows if _point_key(r) == key)
            removed.append(f"{example.get('config-key', '?')} {example.get('exp-name', '')}: "
                           + ("the whole point was removed or modified" if key not in head_points else f"concurrency points {missing}"))
    if removed:
        problems.append(error(file, (entry.line, 1), "plan-append-only-removes",
                              f"entry {entry.index} is append-only but the configs may not remove existing concurrency points or "
                              f"modify existing points: " + "; ".join(removed[:5]) + (" …" if len(removed) > 5 else ""),
                              "An append-only change may only add points; drop `append-only` to re-sweep the changed points."))
    images: dict[tuple, set] = {}
    for row in base_rows:
        images.setdefault(_series(row), set()).add(row.get("image"))
    delta, emitted = [], set()
    for row in head_rows:
        key = _point_key(row)
        new = [c for c in dict.fromkeys(concurrencies(row)) if c not in base_points.get(key, []) and (key, c) not in emitted]
        if not new:
            continue
        if images.get(_series(row)) != {row.get("image")} or row.get("image") is None:
            problems.append(error(file, (entry.line, 1), "plan-append-only-series",
                                  f"entry {entry.index} is append-only but the new point {row.get('exp-name')} ({row.get('config-key')}) "
                                  "must belong to an existing visual curve with one unchanged non-null image",
                                  "Append-only adds points to a published curve; a new topology or image needs a regular entry."))
            continue
        emitted.update((key, c) for c in new)
        delta.append({**row, "conc": new} if isinstance(row.get("conc"), list) else row)
    if not delta and not removed and not problems:
        problems.append(warning(file, (entry.line, 1), "plan-append-only-empty",
                                f"entry {entry.index} is append-only but the configs add no new point; it sweeps nothing",
                                "Add the new concurrencies or search-space points to the master config in this change."))
    return delta, problems


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


def plan_rows(config_set: ConfigSet, entries: list[Entry], resolution: Resolution, options: PlanOptions,
              base_loader: Callable[[], ConfigSet | None] | None = None, file: str = "perf-changelog.yaml"):
    """(rows, diagnostics) for the given entries, each (key, scenario) planned once per kind."""
    rows: list[dict] = []
    problems: list[Diagnostic] = []
    seen_bench: dict[str, set] = {}
    seen_eval: dict[str, set] = {}
    # all-evals entries first: their broader eval selection wins when keys overlap.
    for entry in sorted(entries, key=lambda e: not e.all_evals):
        keys = resolution.per_entry.get(entry.index, [])
        if not keys:
            continue
        expand_all = options.all_evals or entry.all_evals
        if entry.append_only:
            base_set = base_loader() if base_loader else None
            for scenarios, group in _group_by_scenarios(keys, entry.scenario_types, seen_bench).items():
                head_rows = _rows(config_set, group, scenarios, "none")
                present = [k for k in group if base_set is not None and k in base_set.entries]
                base_rows = _rows(base_set, present, scenarios, "none") if present else []
                delta, delta_problems = append_only_delta(base_rows, head_rows, entry, file)
                rows += delta
                problems += delta_problems
            continue
        if not (options.evals_only or entry.evals_only or entry.all_evals):
            for scenarios, group in _group_by_scenarios(keys, entry.scenario_types, seen_bench).items():
                bench = _rows(config_set, group, scenarios, "none")
                rows += trim_conc(bench) if options.trim_conc else bench
        if not entry.no_evals:
            for scenarios, group in _group_by_scenarios(keys, entry.scenario_types, seen_eval).items():
                evals = _rows(config_set, group, scenarios, "all" if expand_all else "only")
                rows += _min_prefill_ep(evals, entry.eval_min_prefill_ep)
    return rows, problems


def build_plan(config_set: ConfigSet, entries: list[Entry], resolution: Resolution, options: PlanOptions,
               base_loader=None, metadata: dict | None = None, file: str = "perf-changelog.yaml") -> tuple[dict, list[Diagnostic]]:
    """The plan object: buckets of rows plus changelog_metadata."""
    try:
        rows, problems = plan_rows(config_set, entries, resolution, options, base_loader, file)
    except Exception as exc:  # the matrix refusing a config is reported, not raised
        diagnostics = getattr(exc, "diagnostics", None)
        if diagnostics:
            return {}, list(diagnostics)
        return {}, [error(file, None, "plan-build", f"the sweep plan could not be built: {exc}",
                          "Run `infx matrix` on the named config keys to see the problem.")]
    buckets = _matrix().bucketize(rows)
    links = list(dict.fromkeys(entry.pr_link for entry in entries))
    plan = {
        "buckets": {name: bucket for name, bucket in buckets.items() if bucket},
        "point-count": sum(len(bucket) for bucket in buckets.values()),
        "changelog_metadata": {
            **(metadata or {}),
            "entries": [{**entry.metadata(), "position": entry.index, "resolved-keys": resolution.per_entry.get(entry.index, [])}
                        for entry in entries],
            "resolved-keys": resolution.keys,
            "pr-link": (metadata or {}).get("pr-link") or (links[0] if len(links) == 1 else links),
        },
    }
    return plan, problems


def pick_canary(buckets: dict[str, list[dict]]) -> tuple[str, dict] | None:
    """(bucket, row) of the throughput point with the fewest GPU-hours (first in plan order on a tie).

    Eval points are never the canary: it is a smoke test of the launch path, as the reference's is.
    """
    from ..workflows.actions import row_gpu_hours

    candidates = [(bucket, row) for bucket, rows in buckets.items() for row in rows if not row.get("run-eval")]
    return min(candidates, key=lambda item: row_gpu_hours(item[1])) if candidates else None


def apply_mode(plan: dict, mode) -> dict:
    """The plan with its run mode and, when the mode asks for one, its canary point's id."""
    from ..points import point_id

    canary = pick_canary(plan["buckets"]) if mode.dispatch and mode.canary else None
    return {**plan, "mode": mode.to_json(),
            "canary": {"id": point_id(canary[1]), "bucket": canary[0]} if canary else None}


def fan_out_buckets(plan: dict) -> tuple[dict[str, list[dict]], list[dict]]:
    """(buckets for the fan-out, the canary rows): the canary runs alone first, so it leaves its bucket."""
    from ..points import point_id

    canary = plan.get("canary")
    if not canary:
        return plan["buckets"], []
    buckets, picked = {}, []
    for bucket, rows in plan["buckets"].items():
        kept = []
        for row in rows:
            if not picked and bucket == canary["bucket"] and point_id(row) == canary["id"]:
                picked.append(row)
            else:
                kept.append(row)
        if kept:
            buckets[bucket] = kept
    return buckets, picked
