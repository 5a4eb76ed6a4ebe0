"""Which points of a sweep need running again, decided per point.

A point's job uploads one artifact named after the point (`artifact_stem`: its result key
when the plan carries one, else its point id): `point-<stem>` when the launch succeeded,
`point-<stem>-failed` otherwise. The sweep's report job collects them all into results.json
(its `sweep-results` artifact), one verdict per artifact by the one validity rule
(infx/results/artifact.py). A point counts as done when that verdict is ok; a run without
readable results.json (or a point it does not list) falls back to the names: done only when
`point-<stem>` exists, has not expired and is not empty. The run's overall conclusion is never
consulted (a cancelled run can hold good points, a green one can lack a result).

Effects: network (`sweep_verdicts` downloads the run's results.json through the client it is
handed); the rest decides from data alone.
"""

from __future__ import annotations

import hashlib

from ..diagnostics import InfxError, error
from ..points import point_id
from ..results.render import rows_of
from .baseline import RESULTS_FILE, results_artifact
from .github.archives import json_in_archive
from .github.artifacts import ArtifactInfo, download_artifact
from .report import OUTCOME_FAILED, OUTCOME_MISSING, OUTCOME_OK

ARTIFACT_PREFIX = "point-"
FAILED_SUFFIX = "-failed"
DISPATCH_INPUTS_LIMIT = 65_535  # GitHub: characters of a dispatch's inputs payload


def artifact_stem(row: dict) -> str:
    """What a point's artifact is named after: its result key once the plan carries one (reuse
    finds stored results by it, docs/workflows.md), else its point id."""
    return row.get("result-key") or point_id(row)


def artifact_name(row: dict, succeeded: bool = True) -> str:
    return f"{ARTIFACT_PREFIX}{artifact_stem(row)}{'' if succeeded else FAILED_SUFFIX}"


def outcomes(rows: list[dict], artifacts: list[ArtifactInfo], verdicts: dict[str, str] | None = None) -> dict[str, str]:
    """point id -> ok | failed | missing (no valid result: never ran, expired or empty).
    ``verdicts`` (artifact name -> collect's status, from the run's results.json) decide first."""
    verdicts = verdicts or {}
    by_name: dict[str, ArtifactInfo] = {}
    for artifact in artifacts:
        known = by_name.get(artifact.name)
        if known is None or (known.expired and not artifact.expired):  # a re-upload wins
            by_name[artifact.name] = artifact
    result = {}
    for row in rows:
        collected = verdicts.get(artifact_name(row)) or verdicts.get(artifact_name(row, succeeded=False))
        if collected is not None:
            result[point_id(row)] = OUTCOME_OK if collected == "ok" else OUTCOME_FAILED
            continue
        good = by_name.get(artifact_name(row))
        if good is not None and not good.expired and good.size_in_bytes > 0:
            result[point_id(row)] = OUTCOME_OK
        elif artifact_name(row, succeeded=False) in by_name:
            result[point_id(row)] = OUTCOME_FAILED
        else:
            result[point_id(row)] = OUTCOME_MISSING
    return result


def verdicts_of(points: list) -> dict[str, str]:
    """Artifact name -> status, from the verdicts of a results.json (PointVerdict)."""
    return {point.artifact: point.status for point in points}


def sweep_verdicts(client, artifacts: list) -> tuple[dict[str, str], str]:
    """The verdicts of a run's `sweep-results` results.json (artifact name -> status), and why
    there are none when it was uploaded but cannot be read. None uploaded (the results job did
    not run, or it expired) is no verdicts and no reason: the artifact names decide."""
    found = results_artifact(artifacts)
    if found is None:
        return {}, ""
    try:
        collected, _ = rows_of(json_in_archive(download_artifact(client, found), RESULTS_FILE), RESULTS_FILE)
    except InfxError as exc:
        return {}, exc.diagnostics[0].message if exc.diagnostics else str(exc)
    except ValueError as exc:
        return {}, f"its {RESULTS_FILE} is not readable ({exc})"
    return verdicts_of(collected.points), ""


def outcomes_from_names(rows: list[dict], names: list[str]) -> dict[str, str]:
    """The same decision over downloaded artifact folders (`--results DIR`)."""
    return outcomes(rows, [ArtifactInfo(name, 1, False) for name in names])


def launch_id(run_id: int, failed_ids: list[str]) -> str:
    """Deterministic from the run and the exact failed set: the same request, retried,
    carries the same id, so an existing dispatch is recognised instead of repeated."""
    text = f"{run_id}:" + " ".join(sorted(failed_ids))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def dispatch_inputs(run_id: int, failed_ids: list[str], launch: str) -> dict[str, str]:
    inputs = {"rerun-of": str(run_id), "points": " ".join(sorted(failed_ids)), "launch-id": launch}
    size = sum(len(k) + len(v) for k, v in inputs.items())
    if size > DISPATCH_INPUTS_LIMIT:
        raise InfxError(
            error(
                "<github>",
                None,
                "github-dispatch-too-large",
                f"{len(failed_ids)} failed points do not fit in one dispatch ({size} > {DISPATCH_INPUTS_LIMIT} "
                "characters)",
                "Rerun the whole sweep instead (Re-run all jobs), or rerun part of it by config key.",
            )
        )
    return inputs


def select_rows(buckets: dict[str, list[dict]], ids: set[str]) -> dict[str, list[dict]]:
    """The plan reduced to the rows whose point id is in `ids`, buckets kept."""
    selected = {name: [row for row in rows if point_id(row) in ids] for name, rows in buckets.items()}
    return {name: rows for name, rows in selected.items() if rows}
