"""Which points of a sweep need running again, decided per point from its artifact.

A point's job uploads one artifact named from its point id (infx.points.point_id):
`point-<id>` when the launch succeeded, `point-<id>-failed` otherwise. A point counts as
done only when `point-<id>` exists, has not expired and is not empty; the run's overall
conclusion is never consulted (a cancelled run can hold good points, a green one can
lack a result).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..diagnostics import InfxError, error
from ..points import point_id
from .report import OUTCOME_FAILED, OUTCOME_MISSING, OUTCOME_OK
from .trust import SWEEP_WORKFLOW, SWEEP_WORKFLOW_PATH, TRUSTED_BRANCH, RunFacts, untrusted_reason  # noqa: F401  (re-exported)

ARTIFACT_PREFIX = "point-"
FAILED_SUFFIX = "-failed"
PLAN_ARTIFACT = "sweep-plan"  # uploaded by run-sweep.yml's setup job: plan.json + infx-shards/
PLAN_FILE = "plan.json"
DISPATCH_INPUTS_LIMIT = 65_535  # GitHub: characters of a dispatch's inputs payload


@dataclass(frozen=True)
class ArtifactInfo:
    name: str
    size_in_bytes: int
    expired: bool


def artifact_name(row: dict, succeeded: bool = True) -> str:
    return f"{ARTIFACT_PREFIX}{point_id(row)}{'' if succeeded else FAILED_SUFFIX}"


def outcomes(planned_ids: list[str], artifacts: list[ArtifactInfo]) -> dict[str, str]:
    """point id -> ok | failed | missing (no valid result: never ran, expired or empty)."""
    by_name: dict[str, ArtifactInfo] = {}
    for artifact in artifacts:
        known = by_name.get(artifact.name)
        if known is None or (known.expired and not artifact.expired):  # a re-upload wins
            by_name[artifact.name] = artifact
    result = {}
    for pid in planned_ids:
        good = by_name.get(f"{ARTIFACT_PREFIX}{pid}")
        if good is not None and not good.expired and good.size_in_bytes > 0:
            result[pid] = OUTCOME_OK
        elif f"{ARTIFACT_PREFIX}{pid}{FAILED_SUFFIX}" in by_name:
            result[pid] = OUTCOME_FAILED
        else:
            result[pid] = OUTCOME_MISSING
    return result


def outcomes_from_names(planned_ids: list[str], names: list[str]) -> dict[str, str]:
    """The same decision over downloaded artifact folders (`--results DIR`)."""
    return outcomes(planned_ids, [ArtifactInfo(name, 1, False) for name in names])


def launch_id(run_id: int, failed_ids: list[str]) -> str:
    """Deterministic from the run and the exact failed set: the same request, retried,
    carries the same id, so an existing dispatch is recognised instead of repeated."""
    text = f"{run_id}:" + " ".join(sorted(failed_ids))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def launch_marker(launch: str) -> str:
    """How a dispatched run shows its launch id in its title (run-sweep.yml's run-name)."""
    return f"[launch {launch}]"


def dispatch_inputs(run_id: int, failed_ids: list[str], launch: str) -> dict[str, str]:
    inputs = {"rerun-of": str(run_id), "points": " ".join(sorted(failed_ids)), "launch-id": launch}
    size = sum(len(k) + len(v) for k, v in inputs.items())
    if size > DISPATCH_INPUTS_LIMIT:
        raise InfxError(error("<github>", None, "github-dispatch-too-large",
                              f"{len(failed_ids)} failed points do not fit in one dispatch ({size} > {DISPATCH_INPUTS_LIMIT} characters)",
                              "Rerun the whole sweep instead (Re-run all jobs), or rerun part of it by config key."))
    return inputs


def select_rows(buckets: dict[str, list[dict]], ids: set[str]) -> dict[str, list[dict]]:
    """The plan reduced to the rows whose point id is in `ids`, buckets kept."""
    selected = {name: [row for row in rows if point_id(row) in ids] for name, rows in buckets.items()}
    return {name: rows for name, rows in selected.items() if rows}
