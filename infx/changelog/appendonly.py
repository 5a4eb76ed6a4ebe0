"""Append-only entries: only the points new relative to the base configs, and nothing else changed.

Two checks, as the reference makes them. The scope: a change with an append-only entry may
change a config only where an entry of the change sweeps it (an append-only entry's scenarios,
or a regular entry's). The delta: the head's points minus the base's, where no base point may
disappear and every new point must extend a published curve (same model, framework, runner,
sequence, offload on/off and workers' hardware) whose base points all use the new point's image.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, error, warning
from ..matrix import topology_fingerprint
from ..points import concurrencies
from ..scenarios import SCENARIO_TYPES, is_agentic
from .entry import Entry

SCOPE_HINT = (
    "An append-only change may only add points inside the scenarios its entries name; "
    "drop `append-only` (or add a regular entry for the rest) to sweep the other changes."
)


def point_key(row: dict) -> str:
    """A row's topology (infx.matrix.derive.topology: everything but its concurrency, names and eval marks)."""
    return row.get("recipe-fingerprint") or topology_fingerprint(row)


def curve(row: dict) -> tuple:
    """The published curve a point belongs to (the reference's visual series).

    A curve is keyed by the workers' hardware, not their parallelism: a new tensor-parallel size or
    prefill/decode split at new concurrencies extends the same curve. Agentic points have no
    sequence and their curve ignores spec-decoding.
    """
    agentic = is_agentic(row)
    prefill, decode = row.get("prefill") or {}, row.get("decode") or {}
    return (
        row.get("model"),
        row.get("model-prefix"),
        row.get("precision"),
        row.get("framework"),
        row.get("runner"),
        bool(row.get("disagg", False)),
        agentic,
        None if agentic else row.get("isl"),
        None if agentic else row.get("osl"),
        row.get("kv-offloading") not in (None, "", "none"),
        "" if agentic else row.get("spec-decoding", "none"),
        prefill.get("hardware"),
        decode.get("hardware"),
    )


def delta(base_rows: list[dict], head_rows: list[dict], entry: Entry, file: str) -> tuple[list[dict], list[Diagnostic]]:
    """Head points that are new relative to the base; a base point missing at the head is an error."""

    def points(rows):
        table: dict[str, list] = {}
        for row in rows:
            table.setdefault(point_key(row), []).extend(concurrencies(row))
        return table

    base_points, head_points = points(base_rows), points(head_rows)
    problems = []
    removed = []
    for key, concs in base_points.items():
        missing = [c for c in dict.fromkeys(concs) if c not in head_points.get(key, [])]
        if missing:
            example = next(r for r in base_rows if point_key(r) == key)
            removed.append(
                f"{example.get('config-key', '?')} {example.get('exp-name', '')}: "
                + (
                    "the whole point was removed or modified"
                    if key not in head_points
                    else f"concurrency points {missing}"
                )
            )
    if removed:
        problems.append(
            error(
                file,
                (entry.line, 1),
                "plan-append-only-removes",
                f"entry {entry.index} is append-only but the configs may not remove existing concurrency points or "
                f"modify existing points: " + "; ".join(removed[:5]) + (" …" if len(removed) > 5 else ""),
                "An append-only change may only add points; drop `append-only` to re-sweep the changed points.",
            )
        )
    images: dict[tuple, set] = {}
    for row in base_rows:
        images.setdefault(curve(row), set()).add(row.get("image"))
    added: list[dict] = []
    emitted: set[tuple] = set()
    for row in head_rows:
        key = point_key(row)
        new = [
            c
            for c in dict.fromkeys(concurrencies(row))
            if c not in base_points.get(key, []) and (key, c) not in emitted
        ]
        if not new:
            continue
        if images.get(curve(row)) != {row.get("image")} or row.get("image") is None:
            problems.append(
                error(
                    file,
                    (entry.line, 1),
                    "plan-append-only-series",
                    f"entry {entry.index} is append-only but the new point {row.get('exp-name')} "
                    f"({row.get('config-key')}) must belong to an existing curve (same model, framework, runner, "
                    "sequence, offload and workers' hardware) whose base points all use its image",
                    "Append-only adds points to a published curve; a new curve or a new image needs a regular entry.",
                )
            )
            continue
        emitted.update((key, c) for c in new)
        added.append({**row, "conc": new} if isinstance(row.get("conc"), list) else row)
    if not added and not removed and not problems:
        problems.append(
            warning(
                file,
                (entry.line, 1),
                "plan-append-only-empty",
                f"entry {entry.index} is append-only but the configs add no new point; it sweeps nothing",
                "Add the new concurrencies or search-space points to the master config in this change.",
            )
        )
    return added, problems


def scope(
    base: dict[str, dict],
    head: dict[str, dict],
    entries: list[Entry],
    per_entry: dict[int, list[str]],
    file: str,
    unnamed_checked: bool = False,
) -> list[Diagnostic]:
    """The reference's append-only scope, over raw master entries (key -> entry) at base and head.

    Only when the change has an append-only entry. Each key an entry names is swept in the
    scenarios that entry names (all of them for a regular entry, which sweeps every point). A
    key named only in some scenarios may not change outside them: not another scenario, not
    a config-wide field (it reaches every scenario), no scenario kind added or removed. A key
    no entry names may not change at all (``unnamed_checked``: the PR gate's coverage rule
    already reports those).
    """
    appended = [entry for entry in entries if entry.append_only]
    if not appended:
        return []
    swept: dict[str, set[str]] = {}
    for entry in entries:
        for key in per_entry.get(entry.index, []):
            swept.setdefault(key, set()).update(entry.scenario_types)
    where = (appended[0].line, 1)
    problems = []
    if not unnamed_checked:
        unnamed = [key for key in dict.fromkeys([*head, *base]) if key not in swept and base.get(key) != head.get(key)]
        if unnamed:
            problems.append(
                error(
                    file,
                    where,
                    "plan-append-only-scope",
                    f"entry {appended[0].index} is append-only but the change also modifies config(s) no entry "
                    f"names: {', '.join(unnamed)}; those changes would never be swept",
                    SCOPE_HINT,
                )
            )
    for entry in appended:
        for key in per_entry.get(entry.index, []):
            if key not in base:
                problems.append(
                    error(
                        file,
                        (entry.line, 1),
                        "plan-append-only-scope",
                        f"entry {entry.index} is append-only but config {key!r} does not exist at the base; "
                        "append-only adds points to an existing config",
                        "Use a regular entry for a new config.",
                    )
                )
                continue
            problems += _key_scope(
                key=key, base=base[key], head=head.get(key) or {}, swept=swept[key], entry=entry, file=file
            )
    return problems


def _key_scope(key: str, base: dict, head: dict, swept: set[str], entry: Entry, file: str) -> list[Diagnostic]:
    def scenarios(config):
        value = config.get("scenarios") if isinstance(config, dict) else None
        return value if isinstance(value, dict) else {}

    def header(config):
        return (
            {name: value for name, value in config.items() if name != "scenarios"} if isinstance(config, dict) else {}
        )

    at = (entry.line, 1)
    base_scenarios, head_scenarios = scenarios(base), scenarios(head)
    if set(base_scenarios) != set(head_scenarios):
        changed = sorted(set(base_scenarios) ^ set(head_scenarios))
        return [
            error(
                file,
                at,
                "plan-append-only-scope",
                f"entry {entry.index} is append-only but config {key!r} adds or removes the scenario "
                f"{', '.join(changed)}",
                SCOPE_HINT,
            )
        ]
    outside = [kind for kind in SCENARIO_TYPES if kind in base_scenarios and kind not in swept]
    problems = []
    if outside and header(base) != header(head):
        fields = sorted(
            name for name in {*header(base), *header(head)} if header(base).get(name) != header(head).get(name)
        )
        problems.append(
            error(
                file,
                at,
                "plan-append-only-scope",
                f"entry {entry.index} is append-only for {', '.join(sorted(swept))} but config {key!r} changes "
                f"config-wide field(s) {', '.join(fields)}, which also reach its {', '.join(outside)} points",
                SCOPE_HINT,
            )
        )
    for kind in outside:
        if base_scenarios[kind] != head_scenarios[kind]:
            problems.append(
                error(
                    file,
                    at,
                    "plan-append-only-scope",
                    f"entry {entry.index} is append-only for {', '.join(sorted(swept))} but config {key!r} also "
                    f"changes its {kind} scenario, outside the entry's scope; that change would never be swept",
                    SCOPE_HINT,
                )
            )
    return problems
