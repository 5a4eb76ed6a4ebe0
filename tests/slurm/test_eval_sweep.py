"""A pull request labelled `evals-only` on the seed change (the Mooncake ladder, the newest
changelog entry), end to end: run-sweep.yml run by the workflow executor (tests/workflows/
executor.py: GitHub's own parser and evaluator, every `run:` step in bash, PyGithub against the
local GitHub server), with the eval points launched for real.

What stands in, at the process boundary only: the repository's lane profile is runners/gb300-nv.yaml
pointed at this machine (the tests' Slurm partition, local paths, every srt-slurm pin at the
srt-slurm stand-in of tests/slurm/standin, whose job takes srt-slurm's eval path and runs its
lm-eval stage on the host: infx's own workspace, benchmark_lib.sh and run_lm_eval.py); lm-eval
itself is tests/slurm/standin-lm-eval (no model server and no data set here; on the eval stage's
PYTHONPATH only), which writes the real lm-eval's result files of tests/data/results/evals/ with
the scores the test asks for, or dies at a chosen concurrency. Everything
else is real: `infx plan` of the PR's labels, the lane check on the real Slurm, the fan-out,
`infx launch` (checkout from infx's cache, srtctl apply, sbatch, the wait, staging under eval/, the
verdict), `infx results collect`, the results job's compare and accuracy gate, and the sticky
comment.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from infx.points import point_id
from infx.workflows.rerun import artifact_name
from testing.cli import run_cli
from testing.executor import Executor
from testing.launchkit import REPO, standin_repo
from testing.sweeps import (
    PR,
    SLUG,
    _logs,
    git,
    launched_points,
    point_jobs,
    pr_payload,
    replace_with_head,
    repository_at_base,
    server,  # noqa: F401 (a fixture: the local GitHub server as the executor tests use it)
)

pytestmark = pytest.mark.slurm

LM_EVAL = REPO / "tests" / "slurm" / "standin-lm-eval"
LADDER = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"


def local_lane(repo: Path, host: Path, partition: str, pin_url: str, pin_commit: str) -> None:
    """runners/gb300-nv.yaml on this machine: the tests' partition, local paths, every pin at the stand-in."""
    path = repo / "runners" / "gb300-nv.yaml"
    profile = yaml.safe_load(path.read_text())
    profile["slurm"].update(
        {"partition": partition, "partition-setting": "LOCAL_TEST_PARTITION", "account": "", "poll-seconds": 0.3}
    )
    profile["container-mounts"] = {
        str(host / "mounts" / Path(h).name): inside for h, inside in profile["container-mounts"].items()
    }
    profile["squash-dir"] = str(host / "squash")
    for model in profile["models"]:
        model["path"] = str(host / "models" / Path(model["path"]).name)
    profile.pop("prepare", None)  # no image import or `make setup` on this machine
    profile["srt-slurm"]["pip-args"] = ["--no-build-isolation", "--no-index", "--no-deps"]
    for pin in profile["srt-slurm"]["pins"].values():
        pin.update({"repository": pin_url, "ref": "main", "commit": pin_commit})
    profile["git-protocols"] = ["https", "file"]
    path.write_text(yaml.safe_dump(profile, sort_keys=False))


@pytest.fixture
def lane_change(tmp_path: Path, corpus: Path, slurm_cluster) -> dict:
    """The seed change as a PR (commits `base` and `head`) of a repository whose lane is this
    machine, and infx's cache seeded with the stand-in srt-slurm (a checkout and its srtctl)."""
    pin = tmp_path / "srt-slurm"
    commit = standin_repo(pin)
    repo = repository_at_base(tmp_path / "repo", corpus)
    git(repo, "checkout", "-q", "-b", "pr")
    replace_with_head(repo)
    local_lane(repo, tmp_path / "host", slurm_cluster["partition"], pin.as_uri(), commit)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Mooncake ladder")
    cache = tmp_path / "cache"
    bundle = tmp_path / "srt-slurm.bundle"
    subprocess.run(["git", "bundle", "create", "-q", str(bundle), "--all"], cwd=pin, check=True)
    seeded = run_cli(
        "lane",
        "cache-seed",
        "gb300-nv",
        "--from",
        bundle,
        "--srtctl",
        cwd=repo,
        timeout=600,
        env={"INFX_CACHE_DIR": str(cache), "GITHUB_WORKSPACE": str(repo)},
    )
    assert seeded.returncode == 0, seeded.stdout + seeded.stderr
    return {"repo": repo, "cache": cache}


def sweep(
    change: dict, tmp: Path, gh, labels: list[str], strict: float, run_id: int, dies_at: int | None = None
) -> Executor:
    """One run of run-sweep.yml for the `labeled` event of the PR's last label; the lane's lm-eval
    answers with this strict exact-match score (flexible: 0.03 more), and dies at concurrency
    `dies_at` (writing nothing). The stand-in lm-eval is on the PYTHONPATH of the Slurm job's eval
    stage only (STANDIN_LM_EVAL: the srtctl stand-in puts it there), not of the workflow's jobs."""
    repo = change["repo"]
    event = pr_payload(repo, "labeled", labels, labels[-1])
    gh.state.add_run(run_id, head_branch="pr", event="pull_request")
    env = {
        "INFX_CACHE_DIR": str(change["cache"]),
        "STANDIN_LM_EVAL": str(LM_EVAL),
        "INFX_EVAL_NO_INSTALL": "1",
        "STANDIN_EVAL_STRICT": str(strict),
        "STANDIN_EVAL_FLEXIBLE": str(round(strict + 0.03, 4)),
    }
    if dies_at is not None:
        env["STANDIN_EVAL_FAIL_CONC"] = str(dies_at)
    run = Executor(
        repo,
        tmp,
        "pull_request",
        event,
        sha=event["pull_request"]["head"]["sha"],
        ref=f"refs/pull/{PR}/merge",
        repository=SLUG,
        run_id=run_id,
        github=gh,
        env=env,
        secrets={},
    )
    run.results = run.run()
    return run


def test_an_evals_only_pr_runs_its_eval_points_gates_their_scores_and_comments_the_accuracy(
    lane_change, tmp_path, server
):
    # The lane's engine answers 0.9052 strict (the reference's example): below dsv4's floor, 0.91;
    # and at concurrency 480 lm-eval dies, so that point has no score: the run is red for both.
    low = sweep(lane_change, tmp_path / "low", server, ["sweep-enabled", "evals-only"], 0.9052, 9501, dies_at=480)
    plan = json.loads((low.artifacts / "sweep-plan" / "plan.json").read_text())
    planned = [row for rows in plan["buckets"].values() for row in rows]
    assert plan["mode"]["evals-only"] is True and len(planned) == 5
    assert all(row["eval-only"] and row["config-key"] == LADDER for row in planned)  # only the eval points
    [dead] = [row for row in planned if row["eval-conc"] == 480]
    scored = [row for row in planned if row is not dead]
    assert low.results == {
        "setup": "success",
        "republish": "skipped",
        "report-plan": "success",
        "lane-gate": "success",
        "canary": "skipped",
        "sweep": "failure",
        "results": "failure",
        "report-results": "success",
    }, _logs(low)
    assert sorted(map(point_id, launched_points(low))) == sorted(map(point_id, planned))
    assert all(job.runs_on == ["self-hosted", "cluster:gb300-nv"] for job in point_jobs(low))
    assert sorted(point_id(json.loads(job.inputs["point"])) for job in point_jobs(low, "failure")) == [
        point_id(dead)
    ], _logs(low)
    for row in scored:  # each point launched on the real Slurm as an eval, its eval results staged under eval/
        folder = low.artifacts / artifact_name(row)
        [record_path] = folder.glob("*_launch.json")
        record = json.loads(record_path.read_text())
        assert record["exit-code"] == 0 and record["terminal-state"] == "COMPLETED" and record["eval"]["kind"] == "only"
        assert record["environment"]["EVAL_ONLY"] == "true" and record["environment"]["EVAL_CONC"] == str(
            row["eval-conc"]
        )
        staged = sorted(name for name in record["results"] if name.startswith("eval/"))
        assert [name.split("_")[0] for name in staged] == ["eval/meta", "eval/results", "eval/samples"], record[
            "results"
        ]
        meta = json.loads((folder / "eval" / "meta_env.json").read_text())
        assert (meta["conc"], meta["infmax_model_prefix"], meta["infx"]["point-id"]) == (
            row["eval-conc"],
            "dsv4",
            point_id(row),
        )
        # an eval-only point stages no throughput file: beside the launch record only the point's own
        # collect (run-point.yml's check), valid with no throughput row and its one eval row
        assert sorted(p.name for p in folder.glob("*.json")) == sorted([record_path.name, "results.json"])
        checked = json.loads((folder / "results.json").read_text())
        assert checked["rows"] == [] and [p["status"] for p in checked["points"]] == ["ok"]
        assert [(r["point-id"], r["conc"], r["task"], r["em_strict"]) for r in checked["evals"]["rows"]] == [
            (point_id(row), row["eval-conc"], "gsm8k", 0.9052)
        ]
    # the dead point: its Slurm job failed with the eval stage (EVAL_ONLY: the job's outcome is the
    # eval's), its artifact is a failed one and holds lm-eval's error, no score
    failed = low.artifacts / (artifact_name(dead) + "-failed")
    [record_path] = failed.glob("*_launch.json")
    record = json.loads(record_path.read_text())
    assert record["exit-code"] != 0 and record["terminal-state"] == "FAILED", record
    assert "the engine died at concurrency 480" in (failed / "LOGS" / "job" / "eval.out").read_text()
    assert not list(failed.glob("eval/results*.json"))
    results_job = next(job for job in low.jobs if job.path == "results")
    collected = json.loads((low.artifacts / "sweep-results" / "results.json").read_text())
    assert collected["rows"] == [] and sorted(r["conc"] for r in collected["evals"]["rows"]) == sorted(
        row["eval-conc"] for row in scored
    )
    errors = [line for line in results_job.log.splitlines() if line.startswith("::error")]
    below = [line for line in errors if "eval-below-threshold" in line]
    assert len(below) == 4 and all(
        "em_strict 0.9052 is below the floor 0.91 (models.dsv4.gsm8k)" in line for line in below
    ), results_job.log[-3000:]
    [missing] = [line for line in errors if "eval-missing" in line]  # not green by omission
    assert f"point {point_id(dead)} ({LADDER})" in missing, results_job.log[-3000:]
    assert (
        "--- Upload results.json, the comparison and the charts (exit" not in results_job.log
    )  # an action, not a script
    assert (low.artifacts / "sweep-results" / "comparison.json").is_file()  # uploaded before the gate failed
    body = server.state.comments[PR][0]["body"]
    floors = ("**Accuracy** (floors: `configs/eval-thresholds.yaml`)", "**Accuracy** (the floors infx ships (")
    assert any(text in body for text in floors) and "❌ below floor: **4**" in body, body  # never a site-packages path
    accuracy = body[body.index("#### Accuracy\n") :]
    rows = [line for line in accuracy.splitlines() if line.startswith("| ❌ below floor | ")]
    assert len(rows) == 4 and all("| gsm8k | 90.52 ± " in line and "| 91.00 | n/a |" in line for line in rows), (
        accuracy[:2000]
    )

    # The engine fixed: the same points run again (no-reuse: the first run's results are stored under
    # their keys) and score 0.95, above the floor: the results job passes, the comment says so.
    high = sweep(lane_change, tmp_path / "high", server, ["sweep-enabled", "evals-only", "no-reuse"], 0.95, 9502)
    assert high.results["results"] == "success" and high.results["sweep"] == "success", _logs(high)
    assert sorted(map(point_id, launched_points(high))) == sorted(map(point_id, planned))
    gate = next(job for job in high.jobs if job.path == "results").log
    assert "10 scores of 5 eval rows checked: 10 at or above their floor, 0 below" in gate, gate[-3000:]
    [comment] = server.state.comments[PR]  # the sticky comment, updated
    assert "✅ at or above floor: **5**" in comment["body"] and "❌ below floor: **0**" in comment["body"]
    assert comment["body"].count("| ✅ at or above floor | ") == 5 and "| 95.00 ± " in comment["body"]
