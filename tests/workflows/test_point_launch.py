"""Every bundled row launches (dry run) through the command run-point.yml itself runs.

For each row of `infx matrix` on the bundled configs: the "Launch" step's own `run:` script,
with the job's and the step's `env:` evaluated by GitHub's own evaluator (tests/workflows/
executor.py's Engine) from the inputs the caller passes (`point` = the row, `lane` empty,
`dry-run` true, the other inputs at their defaults), run by bash on a stand-in GitHub-hosted
runner as the runner does. And the same rows through `infx launch --dry-run` with no `--lane`.
"""

from __future__ import annotations

import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from testing.cli import run_cli, run_infx
from testing.executor import PROJECT as REPO
from testing.executor import Engine, Executor, _env_text, run_as_runner

SHA = re.compile(r"^[0-9a-f]{40}$")
RUN_POINT = REPO / ".github" / "workflows" / "run-point.yml"
# What a GitHub-hosted runner (where run-point.yml sends dry runs) sets: its name is no lane's.
HOSTED = {"RUNNER_NAME": "GitHub Actions 7", "RUNNER_ENVIRONMENT": "github-hosted", "RUNNER_OS": "Linux"}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    done = run_cli("matrix", "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def engine():
    engine = Engine()
    yield engine
    engine.close()


def launch_step(engine: Engine, row: dict) -> tuple[str, dict[str, str]]:
    """The Launch step's script and the environment GitHub gives it for this row's dry run."""
    tree = engine.parse(RUN_POINT)
    inputs = Executor._with_defaults(tree["on"]["workflow_call"]["inputs"], {"point": json.dumps(row), "dry-run": True})
    job = tree["jobs"]["launch"]
    step = next(s for s in job["steps"] if s.get("id") == "launch")
    context = {
        "inputs": inputs,
        "github": {"event_name": "workflow_dispatch"},
        "secrets": {},
    }  # a repository without HF_TOKEN
    env = {
        name: _env_text(value)
        for name, value in engine.value({**job.get("env", {}), **step.get("env", {})}, context).items()
    }
    return step["run"], env


def run_script(script: str, env: dict, temp, workspace=REPO) -> subprocess.CompletedProcess:
    """The step's script on the stand-in hosted runner, in the workspace."""
    return run_as_runner(
        script, temp, {**HOSTED, "GITHUB_WORKSPACE": str(workspace), "CI": "true", "GITHUB_ACTIONS": "true", **env}
    )


def run_launch_steps(
    engine, rows: list[dict], tmp_path, workspace
) -> list[tuple[dict, subprocess.CompletedProcess, dict | None]]:
    steps = [launch_step(engine, row) for row in rows]
    assert all("infx launch" in script and "--dry-run" in script for script, _ in steps)

    def run(index):
        script, env = steps[index]
        assert (
            env["LANE"] == rows[index]["runner"]
            and json.loads(env["POINT_JSON"]) == rows[index]
            and env["DRY_RUN"] == "true"
        )
        temp = tmp_path / f"row-{index:03d}"
        done = run_script(script, {**env, "INFX_CACHE_DIR": str(tmp_path / "cache")}, temp, workspace)
        plan_file = temp / "point" / "launch-plan.json"
        plan = json.loads(plan_file.read_text()) if plan_file.is_file() and plan_file.stat().st_size else None
        return rows[index], done, plan

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(run, range(len(rows))))


def test_the_launch_step_dry_runs_every_bundled_row(rows, engine, tmp_path, harness_repo):
    """In a checkout with an AgentX harness (a benchmark repository's, here a stand-in) every row plans."""
    assert len(rows) == 68 and {row["runner"] for row in rows} == {"gb300-nv", "gb300", "cluster:gb300-nv"}
    results = run_launch_steps(engine, rows, tmp_path, harness_repo)
    failures = {
        row["config-key"] + f" conc {row['conc']}": (done.stderr + json.dumps(plan))[-800:]
        for row, done, plan in results
        if done.returncode != 0
    }
    assert failures == {}
    for row, _, plan in results:
        assert plan["ok"] is True and plan["lane"] == "gb300-nv", row["config-key"]
        assert SHA.match(plan["srt-slurm"]["commit"] or ""), (row["config-key"], plan["srt-slurm"])
        assert plan["job-name"].startswith("infx-")  # the hosted runner's name labels nothing


def test_the_launch_step_refuses_this_repository_s_agentic_rows_at_the_recipe(rows, engine, tmp_path):
    """This repository ships no AgentX harness: each agentic row's dry run fails, its plan artifact
    naming the recipe line that runs it (docs/launch.md, Agentic points)."""
    agentic = [row for row in rows if row.get("scenario-type") == "agentic-coding"]
    assert len(agentic) == 21
    for row, done, plan in run_launch_steps(engine, agentic, tmp_path, REPO):
        assert done.returncode == 1 and plan["ok"] is False, row["config-key"]
        [diag] = plan["diagnostics"]
        assert diag["rule"] == "agentic-harness-missing" and "benchmarks/multi_node/agentic_srt.sh" in diag["message"]
        assert "agentic_srt.sh" in (REPO / diag["file"]).read_text().splitlines()[diag["line"] - 1]


def test_every_bundled_row_dry_runs_with_no_lane_given(rows, harness_repo):
    failures = {}
    for row in rows:
        result = run_infx(
            ["launch", "--dry-run", "--format", "json"],
            harness_repo,
            env={"POINT_JSON": json.dumps(row), "GITHUB_WORKSPACE": str(harness_repo), "RUNNER_NAME": "unrelated_0"},
        )
        if result.code != 0 or result.problem():
            failures[f"{row['config-key']} conc {row['conc']}"] = (
                result.code,
                result.stdout[-800:],
                result.stderr[-800:],
            )
            continue
        plan = json.loads(result.stdout)
        assert (
            plan["lane"] == "gb300-nv"
            and SHA.match(plan["srt-slurm"]["commit"] or "")
            and plan["job-name"] == "unrelated_0"
        )
    assert failures == {}
