"""Eval folders found under paths and collected (reading their files, never writing), and
results.json's `evals` section read back (``read_results_evals``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ... import jsonfast
from ...diagnostics import InfxError, error
from ...fsio import TooLarge
from ...launch.layout import EVAL_FOLDER
from ...schema import is_valid, schema_errors
from .folder import META_ENV, _read_json_object, read_eval_set
from .rows import EVAL_ROW_SCHEMA, STANDALONE, EvalCollection, EvalIdentity

EVALS_POINTER = "#/$defs/evals"  # results.json's `evals` section in that schema
LAUNCH_RECORD_SUFFIX = "_launch.json"
MAX_RESULTS_BYTES = 256 * 1024 * 1024  # results.json of a sweep: megabytes
RESULTS_HINT = "Pass the results.json `infx results collect --output` wrote."


# --- finding folders -------------------------------------------------------------------------


def _launch_identity(artifact: Path) -> EvalIdentity:
    """The point of a point artifact (its one launch record), or STANDALONE."""
    records = sorted(artifact.glob(f"*{LAUNCH_RECORD_SUFFIX}")) if artifact.is_dir() else []
    if len(records) != 1:
        return STANDALONE
    record = _read_json_object(records[0])
    return STANDALONE if isinstance(record, str) else EvalIdentity.from_launch_record(record, artifact.name)


def find_eval_sets(paths: Iterable[Path]) -> list[tuple[Path, EvalIdentity]]:
    """Each eval folder under ``paths`` with the point it belongs to: the path itself, a folder one
    level down, or the `eval/` folder of either (then the point is its artifact's launch record)."""
    found: dict[Path, EvalIdentity] = {}

    def consider(folder: Path) -> None:
        if folder in found or not (folder / META_ENV).is_file():
            return
        found[folder] = _launch_identity(folder.parent) if folder.name == EVAL_FOLDER else STANDALONE

    for path in paths:
        if not path.is_dir():
            continue
        consider(path)
        consider(path / EVAL_FOLDER)
        for child in sorted(p for p in path.iterdir() if p.is_dir()):
            consider(child)
            consider(child / EVAL_FOLDER)
    return list(found.items())


def collect_evals(paths: Iterable[Path]) -> EvalCollection:
    """Every eval folder under ``paths``, read: results.json's `evals`."""
    return EvalCollection(tuple(read_eval_set(folder, identity) for folder, identity in find_eval_sets(paths)))


def evals_problem(data: Any) -> str | None:
    """The first problem of a results.json `evals` section against the schema, or None."""
    if is_valid(EVAL_ROW_SCHEMA, data, EVALS_POINTER):
        return None
    err = schema_errors(EVAL_ROW_SCHEMA, data, EVALS_POINTER)[0]
    return f"evals{''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in err.path)}: {err.message}"


def read_results_evals(path: Path) -> EvalCollection:
    """The `evals` section of a results.json (none: no eval folder was collected). A file that
    cannot be read raises its OSError (the command line's problem, exit 2); one that is not
    results raises InfxError with rule `results-json` (exit 1)."""
    try:
        data = jsonfast.read(path, MAX_RESULTS_BYTES)
    except TooLarge:
        raise InfxError(
            error(str(path), None, "results-json", f"larger than {MAX_RESULTS_BYTES:,} bytes", RESULTS_HINT)
        ) from None
    except jsonfast.JSONProblem as exc:
        raise InfxError(
            error(
                str(path),
                (exc.line, exc.column) if exc.line else None,
                "results-json",
                f"not strict JSON ({exc.message[:200]})",
                RESULTS_HINT,
            )
        ) from None
    if not isinstance(data, dict):
        raise InfxError(error(str(path), None, "results-json", "is not a JSON object", RESULTS_HINT))
    section = data.get("evals", {"rows": [], "sets": []})
    problem = evals_problem(section)
    if problem:
        raise InfxError(
            error(
                str(path), None, "results-json", f"its eval section is not what collect writes: {problem}", RESULTS_HINT
            )
        )
    return EvalCollection.from_json(section)
