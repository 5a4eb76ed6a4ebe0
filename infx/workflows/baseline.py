"""The baseline of a sweep: the newest successful run of the sweep workflow on main that has
results for the same config keys, through the GitHub API (PyGithub, the run's token).

Each run-sweep.yml run uploads one `sweep-results` artifact holding `results.json` (and the
charts). Runs are read newest first; each config key of the head takes its rows from the
first run whose results have it, so a main sweep that touched only some keys still serves
those, and, on their own, its eval rows from the first run whose results have eval rows of it
(an evals-only sweep of main measured no throughput). A run given with `--baseline-run` is used
as it is. Nothing found is a notice: the comparison then lists every head row as new.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..results.render import rows_of
from .github.archives import json_in_archive
from .github.artifacts import download_artifact, run_artifacts
from .github.client import Connection, read
from .github.runs import get_run
from .markers import RESULTS_ARTIFACT  # noqa: F401  (re-exported: its readers import it from here)
from .trust import SWEEP_WORKFLOW

RESULTS_FILE = "results.json"
BASELINE_BRANCH = "main"
CANDIDATE_RUNS = 30  # successful main runs read before giving up on a config key


@dataclass
class Baseline:
    rows: list[dict] = field(default_factory=list)
    source: dict = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    evals: list = field(default_factory=list)  # EvalRow of the found runs' results


def results_artifact(artifacts: list):
    """The newest unexpired `sweep-results` upload (a re-run uploads again under the same name)."""
    usable = [a for a in artifacts if a.name == RESULTS_ARTIFACT and not a.expired]
    return max(usable, key=lambda a: a.id) if usable else None


def results_in_archive(data):
    """The rows and eval rows of the archive's results.json, read as `compare` reads a results
    file (strict numbers; a row that cannot be compared left out); None when it holds no results file."""
    try:
        collected, _ = rows_of(json_in_archive(data, RESULTS_FILE), RESULTS_FILE)
    except ValueError:
        return None
    return collected


def run_results(client, run):
    artifact = results_artifact(run_artifacts(client, run))
    return results_in_archive(download_artifact(client, artifact)) if artifact is not None else None


def _run_source(run) -> dict:
    return {"run-id": run.id, "url": run.html_url, "branch": run.head_branch, "sha": run.head_sha}


def find_baseline(
    slug: str, config_keys: list[str], github: Connection, run_id: int | None = None, eval_keys: Iterable[str] = ()
) -> Baseline:
    """The baseline rows (for ``config_keys``) and eval rows (for ``eval_keys``); every GitHub call
    through the command's one client (``github``), so a failure is one located line (InfxError),
    which `infx results compare` turns into a notice."""
    client = github.client()
    if run_id is not None:
        _, run = get_run(client, slug, run_id)
        found = run_results(client, run)
        if found is None:
            return Baseline(
                source={"kind": "none"},
                notices=[
                    f"run {run_id} has no readable `{RESULTS_ARTIFACT}` artifact (expired, or not a sweep run): no "
                    "baseline"
                ],
            )
        return Baseline(
            found.rows, {"kind": "run", "workflow": SWEEP_WORKFLOW, **_run_source(run)}, evals=found.evals.rows
        )
    this_run = os.environ.get("GITHUB_RUN_ID", "")
    exclude_run = int(this_run) if this_run.isdigit() else None  # never the sweep being compared
    repo = client.repo(slug)
    workflow = read(client, f"reading workflow {SWEEP_WORKFLOW} of {slug}", lambda: repo.get_workflow(SWEEP_WORKFLOW))

    def newest_runs():
        runs = list(itertools.islice(workflow.get_runs(branch=BASELINE_BRANCH, status="success"), CANDIDATE_RUNS))
        return [(run, run.id, run.head_branch, run.conclusion, _run_source(run)) for run in runs]

    runs = read(client, f"listing the successful runs of {SWEEP_WORKFLOW} on {BASELINE_BRANCH}", newest_runs)
    wanted, wanted_evals, used = set(config_keys), set(eval_keys), []
    rows: list[dict] = []
    evals: list = []
    for run, number, branch, conclusion, where in runs:
        if not (wanted or wanted_evals):
            break
        if number == exclude_run or branch != BASELINE_BRANCH or conclusion != "success":
            continue
        found = run_results(client, run)
        if found is None:
            continue
        keys = wanted & {r.get("config-key") for r in found.rows}
        eval_found = wanted_evals & {r.config_key for r in found.evals.rows}
        if keys:
            rows.extend(r for r in found.rows if r.get("config-key") in keys)
            wanted -= keys
        if eval_found:
            evals.extend(r for r in found.evals.rows if r.config_key in eval_found)
            wanted_evals -= eval_found
        if keys or eval_found:
            used.append({**where, "config-keys": sorted(keys | eval_found)})
    notices = []
    if wanted:
        notices.append(
            f"no successful {SWEEP_WORKFLOW} run on {BASELINE_BRANCH} among the newest {len(runs)} has results for "
            f"{', '.join(sorted(wanted))}: those points are compared with nothing (listed as new)"
        )
    if wanted_evals:
        notices.append(
            f"no successful {SWEEP_WORKFLOW} run on {BASELINE_BRANCH} among the newest {len(runs)} has eval rows for "
            f"{', '.join(sorted(wanted_evals))}: their scores have no change to show"
        )
    source = (
        {"kind": "runs", "workflow": SWEEP_WORKFLOW, "branch": BASELINE_BRANCH, "runs": used}
        if used
        else {"kind": "none"}
    )
    return Baseline(rows, source, notices, evals)
