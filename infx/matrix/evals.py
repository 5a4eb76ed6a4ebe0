"""Which points also run an accuracy eval (the reference's policy), and the eval-only modes.

Only 8k1k fixed-seq-len points and (when asked) agentic points are ever evaluated.
Default: single-node — the highest and the median eligible concurrency (≥ 16) of each
(model, runner, framework, precision, sequence, spec-decoding, dp-attn) group; multinode —
the row holding the highest eligible concurrency of each topology, with ``eval-conc``.
"""

from __future__ import annotations

import copy
from pathlib import Path

from ..diagnostics import InfxError
from ..evalsuite import PROTOCOL_FIELD, SUITE_FILE, EvalMode, load_suite
from ..scenarios import is_agentic
from .derive import multi_agentic_exp_name, topology

MIN_EVAL_CONC = 16
EVAL_SEQ = (8192, 1024)
SINGLE_GROUP = ("model", "runner", "framework", "precision", "isl", "osl", "spec-decoding", "dp-attn")
SINGLE_AGENTIC_GROUP = ("model", "runner", "framework", "precision")


def is_multinode(row: dict) -> bool:
    return "prefill" in row


def _eval_seq(row: dict) -> bool:
    return not is_agentic(row) and (row.get("isl"), row.get("osl")) == EVAL_SEQ


def _groups(rows, key) -> dict:
    groups: dict = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def _mark_single(rows: list[dict]) -> None:
    eligible = [r for r in rows if r["conc"] >= MIN_EVAL_CONC]
    for group in _groups(eligible, lambda r: tuple(r[k] for k in SINGLE_GROUP)).values():
        concs = sorted({r["conc"] for r in group})
        chosen = {concs[-1], concs[len(concs) // 2]}
        for row in group:
            row["run-eval"] = row["conc"] in chosen


def _mark_highest_per_topology(rows: list[dict]) -> None:
    for group in _groups(rows, topology).values():
        best, best_conc = None, 0
        for row in group:
            top = max((c for c in row["conc"] if c >= MIN_EVAL_CONC), default=0)
            if top > best_conc:
                best, best_conc = row, top
        if best is not None:
            best["run-eval"] = True
            best["eval-conc"] = best_conc


def _mark_single_agentic(rows: list[dict]) -> None:
    for group in _groups(rows, lambda r: tuple(r[k] for k in SINGLE_AGENTIC_GROUP)).values():
        best = max(group, key=lambda r: r["conc"])  # the first row of the highest concurrency
        for row in group:
            row["run-eval"] = row is best


def _merge_per_topology(rows: list[dict], all_concs: bool) -> dict[int, dict | None]:
    """One row per topology with the sorted union of its concurrencies; keyed by id of the first row (None: the
    others)."""
    merged: dict[int, dict | None] = {}
    for group in _groups(rows, topology).values():
        first = dict(group[0])
        first["conc"] = sorted({c for row in group for c in row["conc"]})
        first["run-eval"] = True
        if all_concs:
            first["eval-all-concs"] = True
            first.pop("eval-conc", None)
        else:
            first["eval-conc"] = first["conc"][-1]
            first["exp-name"] = multi_agentic_exp_name(
                prefix=first["model-prefix"],
                prefill=first["prefill"],
                decode=first["decode"],
                concs=first["conc"],
                mode=first["kv-offloading"],
                backend=first.get("kv-offload-backend"),
            )
        merged[id(group[0])] = first
        for row in group[1:]:
            merged[id(row)] = None
    return merged


def apply_evals(rows: list[dict], mode: EvalMode) -> list[dict]:
    """Mark (and for the eval-only modes, select) eval rows. Rows are changed in place."""
    if EvalMode.NONE in mode:
        return rows
    single_fixed = [r for r in rows if not is_multinode(r) and _eval_seq(r)]
    multi_fixed = [r for r in rows if is_multinode(r) and _eval_seq(r)]
    _mark_single(single_fixed)
    _mark_highest_per_topology(multi_fixed)
    if not mode.evals_only:
        return rows
    single_agentic = [r for r in rows if not is_multinode(r) and is_agentic(r)]
    multi_agentic = [r for r in rows if is_multinode(r) and is_agentic(r)]
    _mark_single_agentic(single_agentic)
    _mark_highest_per_topology(multi_agentic)
    if EvalMode.ALL in mode:
        for row in single_fixed + single_agentic:
            row["run-eval"] = True
        merged = {
            **_merge_per_topology(multi_fixed, all_concs=True),
            **_merge_per_topology(multi_agentic, all_concs=False),
        }
        kept = [merged[id(row)] if id(row) in merged else row for row in rows]
        rows = [row for row in kept if row is not None]
    selected = [row for row in rows if row["run-eval"]]
    for row in selected:
        row["eval-only"] = True
    return selected


def record_protocol(rows: list[dict], root: Path, notices: list[str]) -> None:
    """Every eval row records the protocol of the repository's eval suite (``eval-protocol``).

    A repository without ``benchmarks/evals/suite.yaml`` gets eval rows without a protocol and a
    notice (their launch fails with ``eval-workspace-missing``); a suite that is there but broken is an error.
    """
    marked = [row for row in rows if row.get("run-eval") or row.get("eval-only")]
    if not marked:
        return
    if not (root / SUITE_FILE).exists():
        notices.append(
            f"no {SUITE_FILE}: {len(marked)} eval row(s) carry no eval-protocol, and a launch of one fails "
            "(eval-workspace-missing)"
        )
        return
    suite, problems = load_suite(root)
    if suite is None:
        raise InfxError(problems)
    protocol = suite.protocol()
    for row in marked:
        row[PROTOCOL_FIELD] = copy.deepcopy(protocol)  # rows are changed in place later; never share one
