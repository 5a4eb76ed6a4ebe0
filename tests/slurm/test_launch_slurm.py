"""Real launches: the launcher, the stand-in srtctl and the real sbatch/scontrol/scancel."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
import yaml

from testing.cli import cli_command, cli_environment
from testing.launchkit import (
    FIXED_RESULT,
    HARNESS,
    REPO,
    Workspace,
    add_harness,
    agentic_aggregate,
    git_repo,
    lane_profile,
    point,
    v1_recipe,
)
from testing.waiting import wait_for

pytestmark = pytest.mark.slurm


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    """The srt-slurm stand-in as a pinned git repo, shipping one recipe of its own."""
    base = tmp_path_factory.mktemp("upstream")
    good = v1_recipe(command=FIXED_RESULT)
    bad = v1_recipe(command=FIXED_RESULT)
    bad["backend"]["sglang_config"]["decode"]["tensor-parallel-size"] = 8
    sha = git_repo(
        base / "srt-slurm",
        files={"recipes/upstream/good.yaml": yaml.safe_dump(good), "recipes/upstream/bad.yaml": yaml.safe_dump(bad)},
        copy_from=REPO / "tests/slurm/standin",
    )
    extra = git_repo(base / "patched-engine", files={"engine/__init__.py": "VERSION = 'patched'\n"})
    return {
        "url": f"file://{base / 'srt-slurm'}",
        "sha": sha,
        "source_url": f"file://{base / 'patched-engine'}",
        "source_sha": extra,
    }


@pytest.fixture
def ws(tmp_path, upstream, slurm_cluster):
    sources = {
        "engine": {"url": upstream["source_url"], "commit": upstream["source_sha"], "dest": "configs/engine"},
        "gone": {"url": f"file://{tmp_path / 'no-such-repo'}", "commit": "b" * 40, "dest": "configs/gone"},
    }
    return Workspace(
        tmp_path, lane_profile(upstream["url"], upstream["sha"], partition=slurm_cluster["partition"], sources=sources)
    )


def launch(ws, data, runner="testlane_1", env=None, **kwargs):
    out = ws.root / "out"
    done = ws.infx(
        "launch",
        "--lane",
        "testlane",
        "--point",
        str(ws.point(data)),
        "--output-dir",
        str(out),
        env={"RUNNER_NAME": runner, **(env or {})},
        **kwargs,
    )
    records = sorted(out.glob("*_launch.json"))
    return done, (json.loads(records[-1].read_text()) if records else None), out


def jobs_named(name):
    return subprocess.run(["squeue", "-h", "-o", "%i", "--name", name], capture_output=True, text=True).stdout.split()


def test_success_stages_results_and_records_provenance(ws, upstream):
    ws.recipe("recipe.yaml", v1_recipe(command=FIXED_RESULT))
    done, record, out = launch(ws, point())
    assert done.returncode == 0, done.stderr
    assert record["terminal-state"] == "COMPLETED" and record["slurm-exit-code"] == "0:0" and record["exit-code"] == 0
    assert (
        record["srt-slurm"]["commit"] == upstream["sha"]
        and record["route"] == "fixed"
        and len(record["resolved-recipe-sha256"]) == 64
    )
    assert record["sources"] == []  # this recipe declares none: nothing else was fetched
    name = record["result-name"]
    assert (out / f"{name}_isl_8_osl_8_conc4_gpus_8.json").is_file()  # B11
    assert "benchmark done" in done.stdout  # the job log was streamed
    with tarfile.open(out / "multinode_server_logs.tar.gz") as tar:
        names = tar.getnames()
    assert any(n.endswith(f"sweep_{record['job-id']}.log") for n in names) and "./srtctl-apply.log" in names
    assert {"./resolved-recipe.yaml", "./srtslurm.yaml"} <= set(names)
    apply_log = (out / "LOGS" / "srtctl-apply.log").read_text()
    assert f"Job {record['job-id']} submitted" in apply_log
    resolved = yaml.safe_load(Path(record["resolved-recipe"]).read_text())
    assert resolved["name"] == "testlane_1"  # B1
    assert jobs_named("testlane_1") == []


def test_non_zero_exit_is_a_failed_launch(ws):
    ws.recipe("recipe.yaml", v1_recipe(command="echo about to fail; exit 3"))
    done, record, _ = launch(ws, point())
    assert done.returncode == 1
    assert record["terminal-state"] == "FAILED" and record["slurm-exit-code"] == "3:0"
    assert "step exited non-zero" in done.stderr and "about to fail" in done.stdout


def test_srtctl_failure_prints_its_output(ws):
    ws.recipe("recipe.yaml", v1_recipe())
    done, record, _ = launch(ws, point(), env={"STANDIN_APPLY_FAIL": "partition quota exceeded"})
    assert done.returncode == 1 and "partition quota exceeded" in done.stderr and record["job-id"] is None


def test_agentic_results_must_be_what_collect_accepts(ws):
    """The launcher calls a launch a success exactly when `infx results collect` accepts its output."""
    for successful in (2000, 0):
        (ws.root / f"aggregate-{successful}.json").write_text(agentic_aggregate(4, successful))
    write = 'cp "$AGGREGATE" "$INFMAX_WORKSPACE/${RESULT_FILENAME}_conc4.json"'
    ws.recipe("recipe.yaml", v1_recipe(command=f"AGGREGATE={ws.root}/aggregate-2000.json; {write}"))
    done, record, out = launch(ws, point(agentic=True))
    assert done.returncode == 0, done.stderr
    assert record["results"] == [f"{record['result-name']}_conc4.json"] and record["exit-code"] == 0
    collected = ws.infx("results", "collect", str(out))
    assert collected.returncode == 0, collected.stderr
    (out / f"{record['result-name']}_conc4.json").unlink()
    ws.recipe("recipe.yaml", v1_recipe(command=f"AGGREGATE={ws.root}/aggregate-0.json; {write}"))
    done, record, out = launch(ws, point(agentic=True))
    assert done.returncode == 1 and record["exit-code"] == 1
    assert "but its result is invalid: concurrency 4: no request completed" in record["message"], record["message"]
    collected = ws.infx("results", "collect", str(out))
    assert collected.returncode == 1 and "error[result-failed]" in collected.stderr


@pytest.mark.parametrize("fast", [True, False], ids=["agentx-fast", "canonical"])
def test_an_agentic_point_runs_the_checkout_s_harness_with_its_own_profile(ws, fast):
    """The recipe runs the benchmark repository's harness from /infmax-workspace, which is the
    checkout; the point's duration and warm-up reach it through benchmark.env, over what the recipe
    says (srt-slurm exports it last; the stand-in srtctl does the same); the aggregate it writes
    into the checkout is moved into the output, where collect accepts it."""
    add_harness(ws.root)
    aggregates = ws.root / "aggregates"
    aggregates.mkdir()
    (aggregates / "default.json").write_text(agentic_aggregate(4, 2000))
    recipe = v1_recipe(command=f"bash /infmax-workspace/{HARNESS}")
    recipe["benchmark"]["env"] = {
        "INFMAX_CONTAINER_WORKSPACE": "/infmax-workspace",
        "DURATION": "3600",
        "AGENTX_STANDIN_AGGREGATES": str(aggregates),
    }
    ws.recipe("recipe.yaml", recipe)
    profile = {"duration": 1200, "warmup-requests-per-lane": 1} if fast else {"duration": 3600}
    done, record, out = launch(ws, point(agentic=True, **profile))
    assert done.returncode == 0, done.stdout + done.stderr
    said = (
        "DURATION=1200 AIPERF_WARMUP_REQUESTS_PER_LANE=1"
        if fast
        else "DURATION=3600 AIPERF_WARMUP_REQUESTS_PER_LANE=10"
    )
    assert f"agentx profile: {said}" in done.stdout  # the job's log, streamed
    name = record["result-name"]
    assert record["environment"]["INFMAX_WORKSPACE"] == str(ws.root) and record["results"] == [f"{name}_conc4.json"]
    assert not (ws.root / f"{name}_conc4.json").exists() and (out / f"{name}_conc4.json").is_file()
    collected = ws.infx("results", "collect", str(out))
    assert collected.returncode == 0, collected.stderr


def test_leftover_job_with_the_job_name_is_cancelled_first(ws):
    leftover = subprocess.run(
        ["sbatch", "--parsable", "--job-name=testlane_7", "-o", "/dev/null", "-t", "1", "--wrap", "sleep 120"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ws.recipe("recipe.yaml", v1_recipe(command=FIXED_RESULT))
    done, record, _ = launch(ws, point(), runner="testlane_7")
    assert done.returncode == 0, done.stderr
    assert f"cancelled leftover job(s) named testlane_7: {leftover}" in done.stderr
    state = subprocess.run(["scontrol", "show", "job", "-o", leftover], capture_output=True, text=True).stdout
    assert "JobState=CANCELLED" in state and jobs_named("testlane_7") == []


def test_sigterm_cancels_the_job_and_collects_logs(ws):
    ws.recipe("recipe.yaml", v1_recipe(command="echo started; sleep 120"))
    out = ws.root / "out"
    env = cli_environment(
        {"GITHUB_WORKSPACE": str(ws.root), "INFX_CACHE_DIR": str(ws.root / ".cache"), "RUNNER_NAME": "testlane_3"}
    )
    errors = ws.root / "launch.stderr"
    with errors.open("w") as stream:
        process = subprocess.Popen(
            cli_command("launch", "--lane", "testlane", "--point", ws.point(point()), "--output-dir", out),
            cwd=ws.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stream,
            text=True,
        )
    [job] = wait_for(lambda: jobs_named("testlane_3"), 60, "the job")
    # infx has seen it run: its wait loop reports each state it observes
    wait_for(lambda: f"job {job}: RUNNING" in errors.read_text(), 60, "infx to wait on the running job")
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=90)
    stderr = errors.read_text()
    assert process.returncode == 128 + signal.SIGTERM, stderr
    record = json.loads(next(out.glob("*_launch.json")).read_text())
    assert record["job-id"] == job and record["terminal-state"] == "CANCELLED" and "SIGTERM" in record["message"]
    assert (out / "multinode_server_logs.tar.gz").is_file() and jobs_named("testlane_3") == []


def test_time_limit_hit_is_reported(ws):
    ws.recipe("recipe.yaml", v1_recipe(command="sleep 300", time_limit="1"))
    done, record, _ = launch(ws, point(), runner="testlane_5", timeout=240)
    assert done.returncode == 1 and record["terminal-state"] == "TIMEOUT"
    assert "time limit" in done.stderr


# --- sources: only the launches that need them fetch them -------------------------------------


def test_declared_source_is_fetched_verified_and_recorded(ws, upstream):
    ws.recipe(
        "recipe.yaml",
        v1_recipe(
            command="test -f configs/engine/engine/__init__.py && " + FIXED_RESULT, **{"infx-sources": ["engine"]}
        ),
    )
    done, record, _ = launch(ws, point())
    assert done.returncode == 0, done.stderr
    assert record["sources"] == [
        {
            "name": "engine",
            "url": upstream["source_url"],
            "commit": upstream["source_sha"],
            "dest": "configs/engine",
            "head": upstream["source_sha"],
        }
    ]
    assert "infx-sources" not in yaml.safe_load(Path(record["resolved-recipe"]).read_text())


def test_unreachable_source_fails_only_the_launch_that_needs_it(ws, tmp_path):
    ws.recipe("needs.yaml", v1_recipe(command=FIXED_RESULT, **{"infx-sources": ["gone"]}))
    ws.recipe("plain.yaml", v1_recipe(command=FIXED_RESULT))
    done, record, _ = launch(ws, point("recipes/test/needs.yaml"))
    assert done.returncode == 1 and record["job-id"] is None
    assert "source gone" in done.stderr and str(tmp_path / "no-such-repo") in done.stderr and "b" * 40 in done.stderr
    done, record, _ = launch(ws, point("recipes/test/plain.yaml"))
    assert done.returncode == 0, done.stderr


# --- srt-slurm itself ----------------------------------------------------------------------


def test_recipe_shipped_with_srt_slurm_is_checked_after_checkout(ws):
    ws.recipe("unrelated.yaml", v1_recipe())  # the route's overlay folder
    done, record, _ = launch(ws, point("recipes/upstream/good.yaml"))
    assert done.returncode == 0, done.stderr
    done, record, _ = launch(ws, point("recipes/upstream/bad.yaml"))
    assert done.returncode == 1 and record["job-id"] is None and "decode tp is 4 in the point but 8" in done.stderr


def test_wrong_pin_stops_before_submission(ws, upstream):
    profile = lane_profile(upstream["url"], "c" * 40, partition="testlane")
    ws.write_profile(profile)
    ws.recipe("recipe.yaml", v1_recipe())
    done, record, _ = launch(ws, point())
    assert (
        done.returncode == 1 and record["job-id"] is None and "c" * 40 in done.stderr and upstream["url"] in done.stderr
    )


def test_failed_install_stops_before_submission(ws, tmp_path):
    broken = git_repo(
        tmp_path / "broken", files={"pyproject.toml": "[build-system]\nrequires = []\nbuild-backend = 'nope'\n"}
    )
    ws.write_profile(lane_profile(f"file://{tmp_path / 'broken'}", broken, partition="testlane"))
    ws.recipe("recipe.yaml", v1_recipe())
    done, record, _ = launch(ws, point())
    assert done.returncode == 1 and record["job-id"] is None and "failed to install srtctl" in done.stderr


def test_lane_check_reports_usable_nodes(ws, tmp_path):
    done = ws.infx("lane", "check", "testlane")
    assert done.returncode == 0 and "1 of 1 node(s) usable" in done.stdout
    ws.write_profile(lane_profile("file:///x", "a" * 40, partition="nosuchpartition"))
    assert ws.infx("lane", "check", "testlane").returncode == 1


def test_a_job_gone_before_its_log_exists_fails_the_launch(slurm_cluster, tmp_path):
    from infx.launch.launcher import LaunchFailed
    from infx.launch.srtctl_kind import wait_for_job

    with pytest.raises(LaunchFailed, match="failed before creating its log file"):
        wait_for_job("987654321", tmp_path / "sweep.log", 0.1)


def test_bad_point_touches_nothing(ws, tmp_path):
    ws.recipe("recipe.yaml", v1_recipe())
    done, record, out = launch(ws, point(image="Not An Image"))
    assert done.returncode == 1 and "point-image" in done.stderr
    assert record is None and not (tmp_path / ".cache").exists() and not out.exists()


# --- prepare: squash imports on the partition, make setup, all before srtctl apply ----------------

STANDIN_BIN = REPO / "tests" / "slurm" / "standin-bin"  # enroot and unsquashfs cannot be installed here
GB300_PREPARE = yaml.safe_load((REPO / "runners" / "gb300-nv.yaml").read_text())["prepare"]


@pytest.fixture
def prep(ws, upstream, tmp_path):
    """The lane with gb300-nv's own prepare: templates, a squash dir, and stand-ins on PATH for the job steps."""
    squash = tmp_path / "squash"
    squash.mkdir()
    profile = lane_profile(upstream["url"], upstream["sha"], partition="testlane")
    ws.write_profile({**profile, "squash-dir": str(squash), "prepare": GB300_PREPARE})
    ws.recipe("recipe.yaml", v1_recipe(command=FIXED_RESULT))
    env = {"PATH": f"{STANDIN_BIN}{os.pathsep}{os.environ['PATH']}", "STANDIN_ENROOT_LOG": str(tmp_path / "enroot.log")}
    return {
        "squash": squash,
        "env": env,
        "imports": lambda: (
            [json.loads(line) for line in (tmp_path / "enroot.log").read_text().splitlines()]
            if (tmp_path / "enroot.log").exists()
            else []
        ),
    }


def outcomes(record):
    return [(step["name"].split()[0], step["outcome"]) for step in record["prepare"]]


def test_missing_squash_is_imported_on_the_partition_and_a_valid_one_is_skipped(ws, prep):
    (prep["squash"] / "nginx_1.27.4.sqsh").write_text("truncated by a killed import")
    done, record, out = launch(ws, point(), env=prep["env"])
    assert done.returncode == 0, done.stderr
    imports = prep["imports"]()
    assert [i["uri"] for i in imports] == ["docker://lmsysorg/sglang:v0.5.14-cu130", "docker://nginx:1.27.4"]
    assert all(i["partition"] == "testlane" and i["job"] for i in imports)  # each ran as a Slurm job step (srun)
    assert {Path(i["output"]).name for i in imports} == {"lmsysorg_sglang_v0.5.14-cu130.sqsh", "nginx_1.27.4.sqsh"}
    assert outcomes(record) == [
        ("squash-check", "missing or invalid"),
        ("squash-import", "passed"),
        ("squash-check", "missing or invalid"),
        ("squash-import", "passed"),
        ("setup", "passed"),
    ]
    assert all(step["seconds"] > 0 for step in record["prepare"]) and record["timings"]["prepare-seconds"] > 0
    checkout = Path(record["resolved-recipe"]).parents[2]
    assert (checkout / "setup-aarch64.done").is_file()  # make setup ARCH=aarch64 ran in the checkout
    cluster = yaml.safe_load((out / "LOGS" / "srtslurm.yaml").read_text())
    assert cluster["containers"]["nginx-sqsh"] == str(prep["squash"] / "nginx_1.27.4.sqsh")
    assert "enroot import" in (out / "LOGS" / "prepare.log").read_text()

    done, record, _ = launch(ws, point(), env=prep["env"])
    assert done.returncode == 0, done.stderr
    assert len(prep["imports"]()) == 2  # nothing imported again
    assert outcomes(record) == [
        ("squash-check", "passed"),
        ("squash-import", "skipped"),
        ("squash-check", "passed"),
        ("squash-import", "skipped"),
        ("setup", "passed"),
    ]


def test_failing_import_stops_the_launch_before_srtctl_apply(ws, prep):
    done, record, out = launch(
        ws, point(), env={**prep["env"], "STANDIN_ENROOT_FAIL": "manifest for nginx:1.27.4 unknown"}
    )
    assert done.returncode == 1 and record["job-id"] is None
    assert (
        "squash-import lmsysorg/sglang:v0.5.14-cu130" in done.stderr
        and "manifest for nginx:1.27.4 unknown" in done.stderr
    )
    assert "manifest for nginx:1.27.4 unknown" in record["message"] and record["prepare"][-1]["outcome"] == "failed"
    assert "manifest for nginx:1.27.4 unknown" in record["prepare"][-1]["output"]
    assert not (out / "LOGS" / "srtctl-apply.log").exists() and jobs_named("testlane_1") == []
    assert "setup" not in [step["name"] for step in record["prepare"]]


def test_failing_make_setup_stops_the_launch(ws, prep):
    done, record, out = launch(ws, point(), env={**prep["env"], "STANDIN_SETUP_FAIL": "nats download refused"})
    assert done.returncode == 1 and record["job-id"] is None
    assert "prepare step 'setup' exited" in done.stderr and "nats download refused" in done.stderr
    assert outcomes(record)[-1] == ("setup", "failed") and not (out / "LOGS" / "srtctl-apply.log").exists()


def test_sigterm_during_an_import_ends_its_job_step(ws, prep):
    out = ws.root / "out"
    env = cli_environment(
        {
            **prep["env"],
            "GITHUB_WORKSPACE": str(ws.root),
            "INFX_CACHE_DIR": str(ws.root / ".cache"),
            "RUNNER_NAME": "testlane_4",
            "STANDIN_ENROOT_SLEEP": "120",
        }
    )
    process = subprocess.Popen(
        cli_command("launch", "--lane", "testlane", "--point", ws.point(point()), "--output-dir", out),
        cwd=ws.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def queued():
        return subprocess.run(["squeue", "-h", "-o", "%i %j"], capture_output=True, text=True).stdout.split("\n")

    def import_steps():  # the import's srun job step, running (enroot sleeping in it)
        steps = subprocess.run(["squeue", "-h", "-s", "-o", "%i %j"], capture_output=True, text=True).stdout.split("\n")
        return [step for step in steps if step.endswith(" flock")]

    wait_for(import_steps, 60, "the import's job step")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=90)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    record = json.loads(next(out.glob("*_launch.json")).read_text())
    assert (
        record["prepare"][-1]["name"].startswith("squash-import") and record["prepare"][-1]["outcome"] == "interrupted"
    )
    deadline = time.monotonic() + 30
    while queued() != [""] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert queued() == [""]  # no import job step is left behind
