"""The sweep matrix: validated configs expanded into rows, one GitHub job each.

    from infx.matrix import build_matrix, Selection, EvalMode, bucketize
    rows = build_matrix(config_set, selection=Selection(config_keys=("dsv4-*",)), evals=EvalMode.NONE)

docs/matrix.md describes the rules and where they differ from the reference.

Effects: filesystem (the configs read, infx's cache); no network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..diagnostics import InfxError, error
from ..evalsuite import EvalMode
from .buckets import EVAL_BUCKETS, bucket_of, bucketize
from .derive import topology_fingerprint
from .evals import apply_evals, record_protocol
from .expand import Expansion, expand_entry
from .nodes import RecipeNodeCounts
from .rowschema import row_problems
from .selection import Selection, check_runner_types, select_keys

if TYPE_CHECKING:  # annotations only: the config package is not imported for them
    from ..config.load import ConfigSet

__all__ = ["build_matrix", "Selection", "EvalMode", "bucketize", "bucket_of", "EVAL_BUCKETS"]


def build_matrix(
    config_set: ConfigSet,
    selection: Selection = Selection(),
    evals: EvalMode = EvalMode.DEFAULT,
    notices: list[str] | None = None,
) -> list[dict]:
    """Every row the selection asks for, in stable order, each validated against the row schema.

    Raises UsageError (exit 2) for contradictory options and InfxError (exit 1) for a named
    config key or runner type that does not exist, or a config whose points cannot be derived.
    Notes for the user (a filter that matched nothing, a recipe estimate) go to ``notices``.
    """
    notices = notices if notices is not None else []
    evals.check()
    selection.check()
    keys = select_keys(selection.config_keys, list(config_set.entries), notices)
    check_runner_types(selection.runner_types, (config_set.runners or {}).get("labels") or {})
    run = Expansion(config_set=config_set, selection=selection, recipes=RecipeNodeCounts(config_set.root))
    rows: list[dict] = []
    for key in keys:
        entry = config_set.entries[key]
        if _entry_selected(selection, entry):
            rows.extend(expand_entry(run, key, entry))
    run.recipes.save()
    if run.problems:
        raise InfxError(run.problems)
    notices.extend(dict.fromkeys(run.warnings))
    rows = apply_evals(rows, evals)
    record_protocol(rows, config_set.root, notices)
    for row in rows:
        row["recipe-fingerprint"] = topology_fingerprint(row)
    refuse_invalid_rows(config_set, rows)
    if not rows:
        notices.append("the selection matched no points: the matrix is empty")
    return rows


def refuse_invalid_rows(config_set: ConfigSet, rows: list[dict]) -> None:
    """The guard on infx's own output: a row that breaks the row schema is a bug in infx (the
    config passed validation), reported at the config it came from rather than handed on."""
    problems = row_problems(rows)
    if problems:
        raise InfxError(
            [
                error(
                    *config_set.where(rows[index]["config-key"]),
                    "matrix-row-schema",
                    f"a generated row does not match infx/schemas/row.schema.json: {problem}",
                    "The config passed validation but produced an invalid point; please report this with the config.",
                )
                for index, problem in problems[:20]
            ]
        )


def _entry_selected(selection: Selection, entry: dict) -> bool:
    return all(
        (
            not selection.model_prefixes or entry.get("model-prefix") in selection.model_prefixes,
            not selection.frameworks or entry.get("framework") in selection.frameworks,
            not selection.precisions or entry.get("precision") in selection.precisions,
            not selection.runner_types or entry.get("runner") in selection.runner_types,
        )
    )
