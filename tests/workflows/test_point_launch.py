"""Every bundled row launches (dry run) through the command run-point.yml itself runs.

For each row of `infx matrix` on the bundled configs: the "Launch" step's own `run:` script,
with the job's and the step's `env:` rendered from the workflow's expressions exactly as the
caller would set them (`point` = the row, `lane` empty, `dry-run` true), run by bash as the
runner does. And the same rows through `infx launch --dry-run` with no `--lane` at all.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner

from test_workflows import REPO, load, run_step
from workflow_expressions import Context, render, to_string

SHA = re.compile(r"^[0-9a-f]{40}$")


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "infx", "matrix", "--format", "json"], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def launch_step() -> tuple[str, dict]:
    """The Launch step's script and the environment the runner gives it, as templates."""
    job = load("run-point.yml")["jobs"]["launch"]
    step = next(s for s in job["steps"] if s.get("id") == "launch")
    return step["run"], {**job.get("env", {}), **step.get("env", {})}


def workflow_env(templates: dict, row: dict) -> dict[str, str]:
    ctx = Context(values={"inputs": {"point": json.dumps(row), "lane": "", "dry-run": True}})
    return {name: to_string(render(value, ctx)) for name, value in templates.items()}


def test_the_launch_step_dry_runs_every_bundled_row(rows, tmp_path):
    script, templates = launch_step()
    assert "infx launch" in script and "--dry-run" in script
    assert len(rows) == 71 and {row["runner"] for row in rows} == {"gb300-nv", "gb300", "cluster:gb300-nv"}

    def run(indexed):
        index, row = indexed
        env = workflow_env(templates, row)
        assert env["LANE"] == row["runner"] and json.loads(env["POINT_JSON"]) == row and env["DRY_RUN"] == "true"
        temp = tmp_path / f"row-{index:03d}"
        temp.mkdir()
        # The GitHub-hosted runner a dry run gets: its name never picks the lane (nor names the job).
        hosted = {"RUNNER_NAME": "GitHub Actions 7", "RUNNER_ENVIRONMENT": "github-hosted"}
        done = run_step(script, temp, {**env, **hosted, "INFX_CACHE_DIR": str(tmp_path / "cache")})
        plan_file = temp / "point" / "launch-plan.json"
        plan = json.loads(plan_file.read_text()) if plan_file.is_file() and plan_file.stat().st_size else None
        return row, done, plan

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, enumerate(rows)))
    failures = {row["config-key"] + f" conc {row['conc']}": done.stderr[-800:] for row, done, _ in results if done.returncode != 0}
    assert failures == {}
    for row, _, plan in results:
        assert plan["ok"] is True and plan["lane"] == "gb300-nv", row["config-key"]
        assert SHA.match(plan["srt-slurm"]["commit"] or ""), (row["config-key"], plan["srt-slurm"])


def test_every_bundled_row_dry_runs_with_no_lane_given(rows, monkeypatch):
    from infx.cli import cli

    monkeypatch.chdir(REPO)
    runner = CliRunner()
    failures = {}
    for row in rows:
        result = runner.invoke(cli, ["launch", "--dry-run", "--format", "json"],
                               env={"POINT_JSON": json.dumps(row), "GITHUB_WORKSPACE": str(REPO), "RUNNER_NAME": "unrelated_0"})
        if result.exit_code != 0 or result.exception is not None:
            failures[f"{row['config-key']} conc {row['conc']}"] = (result.exit_code, result.output[-800:], repr(result.exception))
            continue
        plan = json.loads(result.output)
        assert plan["lane"] == "gb300-nv" and SHA.match(plan["srt-slurm"]["commit"] or "") and plan["job-name"] == "unrelated_0"
    assert failures == {}
