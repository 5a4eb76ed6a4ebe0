"""Slurm alone decides a job's end, on the real local Slurm: a comment that looks like a state, failed
and hanging commands, a requeue, REQUEUE_HOLD past infx's deadline, a signal in every phase, and a
cleanup Slurm does not confirm. Faults that cannot be caused for real come from tests/slurm/faults/
slurm_fault.py, installed on PATH under the name of the real command it wraps."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from testing.cli import cli_command, cli_environment
from testing.launchkit import FIXED_RESULT, REPO, Workspace, git_repo, lane_profile, point, v1_recipe
from testing.waiting import wait_for

pytestmark = pytest.mark.slurm

FAULT = REPO / "tests" / "slurm" / "faults" / "slurm_fault.py"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    base = tmp_path_factory.mktemp("upstream")
    sha = git_repo(base / "srt-slurm", copy_from=REPO / "tests/slurm/standin")
    return {"url": f"file://{base / 'srt-slurm'}", "sha": sha}


@pytest.fixture
def ws(tmp_path, upstream, slurm_cluster):
    return Workspace(
        tmp_path / "ws", lane_profile(upstream["url"], upstream["sha"], partition=slurm_cluster["partition"])
    )


@pytest.fixture
def faults(tmp_path):
    """A PATH whose squeue/scancel/sinfo/scontrol are the fault wrapper; calls() reads its log."""
    bin_dir, state = tmp_path / "fault-bin", tmp_path / "fault-state"
    bin_dir.mkdir()
    state.mkdir()
    for name in ("squeue", "scancel", "sinfo", "scontrol", "sacct"):
        (bin_dir / name).symlink_to(FAULT)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAULT_DIR": str(state)}
    log = state / "calls.log"
    return {"env": env, "calls": lambda: log.read_text().splitlines() if log.exists() else []}


def infx_env(ws: Workspace, runner: str, extra: dict | None = None) -> dict:
    return cli_environment(
        {
            "GITHUB_WORKSPACE": str(ws.root),
            "INFX_CACHE_DIR": str(ws.root / ".cache"),
            "RUNNER_NAME": runner,
            **(extra or {}),
        }
    )


@pytest.fixture
def start(ws):
    """Starts ``infx launch`` in the background; at teardown (a failed test) a launch still running is
    killed and its job cancelled, so no test leaves a process or a job behind."""
    started = []

    def launch(
        data: dict, runner: str, env: dict | None = None, out: str = "out", stderr: Path | None = None
    ) -> subprocess.Popen:
        """``stderr``: a file the launch's stderr goes to (read while it runs), instead of a pipe."""
        with open(stderr, "w") if stderr else contextlib.nullcontext(subprocess.PIPE) as errors:
            process = subprocess.Popen(
                cli_command("launch", "--lane", "testlane", "--point", ws.point(data), "--output-dir", ws.root / out),
                cwd=ws.root,
                env=infx_env(ws, runner, env),
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
        started.append((process, runner))
        return process

    yield launch
    for process, runner in started:
        if process.poll() is None:
            process.kill()
            process.communicate()
        subprocess.run(["scancel", "--name", runner], capture_output=True)


def finish(process: subprocess.Popen, timeout: float = 120) -> str:
    _, stderr = process.communicate(timeout=timeout)
    assert "Traceback" not in (stderr or ""), stderr
    return stderr


def the_record(ws: Workspace, out: str = "out") -> dict:
    [path] = (ws.root / out).glob("*_launch.json")
    return json.loads(path.read_text())


def squeue(*argv: str) -> list[str]:
    return subprocess.run(["squeue", "-h", *argv], capture_output=True, text=True).stdout.split()


def jobs_named(name: str) -> list[str]:
    return squeue("-o", "%i", "--name", name)


def state_of(job: str) -> str:
    return "".join(squeue("-t", "all", "-j", job, "-o", "%T"))


def running_job(name: str) -> str:
    """The id of the job a launch submitted under ``name``, once Slurm runs it."""
    [job] = wait_for(lambda: jobs_named(name), 60, "the job")
    wait_for(lambda: state_of(job) == "RUNNING", 30, "the job to run")
    return job


def interrupt(ws: Workspace, process: subprocess.Popen, signum: int = signal.SIGTERM) -> tuple[str, dict]:
    """Signal a running launch; its stderr and its launch record once it has ended."""
    process.send_signal(signum)
    return finish(process), the_record(ws)


def sbatch(*argv: str) -> str:
    return subprocess.run(
        ["sbatch", "--parsable", "-o", "/dev/null", *argv], capture_output=True, text=True, check=True
    ).stdout.strip()


# --- the state comes from Slurm's structured output -------------------------------------------


def test_a_comment_and_workdir_that_look_like_a_state_do_not_decide_it(slurm_cluster, tmp_path):
    from infx.launch.slurm import Slurm
    from infx.launch.srtctl_kind import wait_for_job

    fooling = "JobState=COMPLETED ExitCode=0:0 Reason=None"
    workdir = tmp_path / fooling
    workdir.mkdir()
    script = tmp_path / "fooling.sbatch"
    script.write_text(f'#!/bin/bash\n#SBATCH --comment="{fooling}"\n#SBATCH --time=1\nsleep 4; exit 3\n')
    job = sbatch("--chdir", str(workdir), str(script))
    wait_for(lambda: state_of(job) == "RUNNING", 30, "the job to run")
    text = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True).stdout
    assert text.index("JobState=RUNNING") < text.rindex(
        "JobState=COMPLETED"
    )  # the trap is real: free text says COMPLETED last
    state = Slurm().job_state(job)
    assert state.state == "RUNNING" and state.active and not state.succeeded
    began = time.monotonic()
    final = wait_for_job(job, workdir / "no.log", 0.3)
    assert time.monotonic() - began > 1.5  # waited for the job instead of believing the comment
    assert (final.state, final.exit_code) == ("FAILED", "3:0")


# --- failed and hanging Slurm commands ---------------------------------------------------------


def test_failed_polls_are_retried_and_never_taken_as_the_end(ws, faults, tmp_path, start):
    running = tmp_path / "running"
    ws.recipe("recipe.yaml", v1_recipe(command=f"touch {running}; sleep 3; {FIXED_RESULT}"))
    env = {**faults["env"], "FAULT_SQUEUE_FAIL": "3", "FAULT_SQUEUE_WHEN": str(running)}
    process = start(point(), "testlane_21", env)
    stderr = finish(process)
    record = the_record(ws)
    assert process.returncode == 0, stderr
    assert record["terminal-state"] == "COMPLETED" and record["cleanup"] == {
        "confirmed": True,
        "cancelled": [],
        "errors": [],
    }
    assert [line.split()[:2] for line in faults["calls"]()].count(["squeue", "fail"]) == 3
    assert stderr.count("a failed query is not the job's end") == 3 and "Unable to contact slurm controller" in stderr


def test_cleanup_that_slurm_does_not_confirm_is_recorded_not_hidden(ws, faults, start):
    ws.recipe("recipe.yaml", v1_recipe(command="sleep 120"))
    process = start(point(), "testlane_22", {**faults["env"], "FAULT_SCANCEL_FAIL": "1000"})
    job = running_job("testlane_22")
    stderr, record = interrupt(ws, process)
    try:
        assert process.returncode == 128 + signal.SIGTERM, stderr
        assert record["job-id"] == job and record["cleanup"]["confirmed"] is False
        assert any(f"could not confirm that job {job} was cancelled" in e for e in record["cleanup"]["errors"])
        assert any("could not confirm that no job named testlane_22 is left" in e for e in record["cleanup"]["errors"])
        assert "WARNING: could not confirm" in stderr
        assert state_of(job) == "RUNNING"  # what the record says is true: the job was not cancelled
    finally:
        subprocess.run(["scancel", job], check=True)
        wait_for(lambda: not jobs_named("testlane_22"), 30, "the job to go")


def test_missing_slurm_conf_is_a_quick_clear_error(ws):
    began = time.monotonic()
    done = ws.infx("lane", "check", "testlane", env={"SLURM_CONF": "/nonexistent"})
    assert done.returncode == 1 and "SLURM_CONF=/nonexistent is not a readable file" in done.stdout
    assert "Traceback" not in done.stderr and time.monotonic() - began < 10  # sinfo alone retries for 59 s
    ws.recipe("recipe.yaml", v1_recipe())
    done = ws.infx(
        "launch",
        "--lane",
        "testlane",
        "--point",
        str(ws.point(point())),
        "--output-dir",
        str(ws.root / "out"),
        env={"SLURM_CONF": "/nonexistent", "RUNNER_NAME": "testlane_23"},
    )
    assert done.returncode == 1 and "cannot ask Slurm: SLURM_CONF=/nonexistent" in done.stderr, done.stderr
    record = the_record(ws)
    assert (
        record["job-id"] is None
        and record["message"].startswith("cannot ask Slurm")
        and record["cleanup"]["confirmed"] is False
    )


def test_a_slurm_command_that_hangs_times_out(ws, faults):
    ws.write_profile(lane_profile("file:///x", "a" * 40, partition="testlane", **{"command-timeout-seconds": 1}))
    began = time.monotonic()
    done = ws.infx(
        "lane", "check", "testlane", env={**faults["env"], "FAULT_SINFO_FAIL": "5", "FAULT_SINFO_SLEEP": "60"}
    )
    assert done.returncode == 1 and "sinfo -h failed 2 time(s): sinfo did not answer within 1 s" in done.stdout, (
        done.stdout
    )
    assert time.monotonic() - began < 15 and [c.split()[1] for c in faults["calls"]()] == ["sleep", "sleep"]


# --- jobs Slurm does not end on its own --------------------------------------------------------


def test_a_requeued_job_ends_as_slurm_says(ws, tmp_path, start):
    ran = tmp_path / "ran-once"
    ws.recipe(
        "recipe.yaml", v1_recipe(command=f"if [ -e {ran} ]; then {FIXED_RESULT}; else touch {ran}; sleep 120; fi")
    )
    process = start(point(), "testlane_24")
    [job] = wait_for(lambda: jobs_named("testlane_24"), 60, "the job")
    wait_for(ran.exists, 30, "the first run")
    subprocess.run(["scontrol", "requeue", job], check=True)
    wait_for(lambda: state_of(job) == "PENDING", 30, "the requeued job to pend")
    # a requeued job waits ~2 minutes (BeginTime) before it may run again; let it run now
    wait_for(
        lambda: (
            subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"], capture_output=True).returncode == 0
        ),
        30,
        "the requeued job to accept a new start time",
    )
    stderr = finish(process)
    record = the_record(ws)
    assert process.returncode == 0, stderr
    assert record["job-id"] == job and record["terminal-state"] == "COMPLETED" and record["results"]
    assert f"job {job}: PENDING" in stderr  # it was seen waiting again after the requeue, not taken as ended


def test_jobs_slurm_never_ends_are_cancelled_at_infx_deadline(ws, upstream, start):
    """REQUEUE_HOLD, and a requeue after the node went down, wait forever in Slurm: infx's deadline
    (time limit 1 min + margin 2 s, from submission) cancels them and records why. Both run at once."""
    ws.write_profile(
        lane_profile(upstream["url"], upstream["sha"], partition="testlane", **{"deadline-margin-seconds": 2})
    )
    ws.recipe("recipe.yaml", v1_recipe(command="sleep 300", time_limit="1"))
    held = start(point(), "testlane_25", out="held")
    [held_job] = wait_for(
        lambda: jobs_named("testlane_25"), 60, "the first job"
    )  # one at a time: they share the checkout cache
    downed = start(point(), "testlane_31", out="downed")
    [downed_job] = wait_for(lambda: jobs_named("testlane_31"), 60, "the second job")
    wait_for(lambda: state_of(held_job) == state_of(downed_job) == "RUNNING", 30, "both jobs to run")
    [node] = squeue("-j", downed_job, "-o", "%N")
    subprocess.run(["scontrol", "requeuehold", held_job], check=True)
    try:
        subprocess.run(["scontrol", "update", f"NodeName={node}", "State=DOWN", "Reason=infx-test"], check=True)
        wait_for(lambda: state_of(downed_job) == "PENDING", 30, "the job on the downed node to be requeued")
        stderr = {"held": finish(held, timeout=150), "downed": finish(downed, timeout=150)}
    finally:
        # ReturnToService=2 may already have brought it back, and then RESUME is refused: the state below decides
        subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], capture_output=True)

        def node_state():
            return subprocess.run(
                ["sinfo", "-h", "-n", node, "-o", "%t"], capture_output=True, text=True
            ).stdout.strip()

        wait_for(lambda: node_state() == "idle", 60, "the node to return")
    for out, process, job in (("held", held, held_job), ("downed", downed, downed_job)):
        record = the_record(ws, out)
        assert process.returncode == 1, stderr[out]
        assert record["deadline"] == {"time-limit": "1", "margin-seconds": 2.0, "seconds": 62.0, "passed": True}
        assert record["job-id"] == job and record["terminal-state"] == "CANCELLED"
        assert "infx's deadline passed" in record["message"] and "infx cancelled it" in record["message"]
        assert state_of(job) == "CANCELLED"
    assert jobs_named("testlane_25") == jobs_named("testlane_31") == []


# --- a signal in every phase: the job ends as Slurm says or is cancelled, and is recorded -------


def test_sigterm_before_submission_leaves_nothing_and_is_recorded(ws, upstream, tmp_path, start):
    mark = tmp_path / "setup-mark"
    slow_setup = ["python3", "-c", f"import pathlib, time; pathlib.Path({str(mark)!r}).touch(); time.sleep(60)"]
    ws.write_profile(
        {**lane_profile(upstream["url"], upstream["sha"], partition="testlane"), "prepare": {"setup": slow_setup}}
    )
    ws.recipe("recipe.yaml", v1_recipe(command="sleep 120"))
    process = start(point(), "testlane_33")
    wait_for(mark.exists, 60, "the prepare step")
    stderr, record = interrupt(ws, process)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert record["job-id"] is None and record["message"] == "interrupted by SIGTERM while preparing"
    assert record["prepare"][-1]["outcome"] == "interrupted" and record["cleanup"]["confirmed"] is True
    assert not (ws.root / "out" / "LOGS" / "srtctl-apply.log").exists() and jobs_named("testlane_33") == []


def test_sigterm_during_apply_before_sbatch_leaves_nothing(ws, tmp_path, start):
    mark = tmp_path / "apply-mark"
    ws.recipe("recipe.yaml", v1_recipe(command="sleep 120"))
    process = start(point(), "testlane_26", {"STANDIN_APPLY_SLEEP_BEFORE": "60", "STANDIN_APPLY_MARK": str(mark)})
    wait_for(mark.exists, 60, "srtctl apply")
    stderr, record = interrupt(ws, process)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert record["job-id"] is None and record["message"] == "interrupted by SIGTERM while submitting (srtctl apply)"
    assert record["cleanup"]["confirmed"] is True and jobs_named("testlane_26") == []


def test_sigterm_during_apply_after_sbatch_finds_the_job_by_name(ws, tmp_path, start):
    mark = tmp_path / "apply-mark"
    ws.recipe("recipe.yaml", v1_recipe(command="sleep 120"))
    process = start(point(), "testlane_27", {"STANDIN_APPLY_SLEEP_AFTER": "60", "STANDIN_APPLY_MARK": str(mark)})
    wait_for(mark.exists, 60, "srtctl apply to have submitted")
    [job] = jobs_named("testlane_27")
    stderr, record = interrupt(ws, process)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert record["job-id"] == job and record["terminal-state"] == "CANCELLED"
    assert state_of(job) == "CANCELLED" and jobs_named("testlane_27") == []


def test_sigterm_while_pending_cancels_the_job(ws, start):
    blocker = sbatch("--exclusive", "-t", "5", "--job-name=blocker", "--wrap", "sleep 300")
    try:
        wait_for(lambda: state_of(blocker) == "RUNNING", 30, "the blocker to hold the node")
        ws.recipe("recipe.yaml", v1_recipe(command=FIXED_RESULT))
        errors = ws.root / "launch.stderr"
        process = start(point(), "testlane_28", stderr=errors)
        [job] = wait_for(lambda: jobs_named("testlane_28"), 60, "the job")
        wait_for(lambda: state_of(job) == "PENDING", 10, "the job to pend")
        # infx has seen it pend: its wait loop reports each state it observes
        wait_for(lambda: f"job {job}: PENDING" in errors.read_text(), 30, "infx to wait on the pending job")
        _, record = interrupt(ws, process)
        stderr = errors.read_text()
    finally:
        subprocess.run(["scancel", blocker], check=True)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert (
        record["job-id"] == job
        and record["terminal-state"] == "CANCELLED"
        and record["message"] == f"interrupted by SIGTERM while waiting for job {job}"
    )
    wait_for(lambda: not jobs_named("blocker"), 30, "the blocker to go")
    assert jobs_named("testlane_28") == []


@pytest.mark.parametrize(
    "first, second, runner",
    [(signal.SIGINT, signal.SIGTERM, "testlane_29"), (signal.SIGTERM, signal.SIGINT, "testlane_35")],
)
def test_a_second_signal_while_cancelling_is_noted_and_the_first_decides_the_exit(ws, start, first, second, runner):
    """Ctrl-C then the runner's SIGTERM (or the reverse) once escaped the cleanup as an internal error
    (exit 70) and cut the cancel short; the first signal decides the exit code, the job is cancelled once.

    The job ignores SIGTERM until the test releases it, so infx's cancel (scancel, then waiting for
    the job to end) lasts until the second signal has been noted: no timing decides the outcome."""
    release = ws.root / "release-the-job"
    ws.recipe(
        "recipe.yaml",
        v1_recipe(
            command=f"trap 'until [ -e {release} ]; do sleep 0.1; done; exit 0' TERM; echo started; sleep 120 & wait"
        ),
    )
    errors = ws.root / "launch.stderr"
    process = start(point(), runner, stderr=errors)
    job = running_job(runner)
    wait_for(
        lambda: (ws.root / "out").is_dir() and any(r.get("job-id") == job for r in records(ws)),
        30,
        "the recorded job id",
    )
    process.send_signal(first)
    wait_for(lambda: state_of(job) not in ("RUNNING", ""), 30, "infx to cancel the job")
    process.send_signal(second)
    try:
        wait_for(lambda: "received while" in errors.read_text(errors="replace"), 30, "the second signal to be noted")
    except AssertionError:
        raise AssertionError(
            f"the second signal was not noted; the launch said:\n{errors.read_text(errors='replace')}"
        ) from None
    release.touch()
    finish(process)
    stderr, record = errors.read_text(), the_record(ws)
    assert process.returncode == record["exit-code"] == 128 + first, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    assert record["signals"] == [first.name, second.name] and first.name in record["message"]
    assert record["job-id"] == job and record["terminal-state"] == "CANCELLED"
    assert (ws.root / "out" / "multinode_server_logs.tar.gz").is_file() and jobs_named(runner) == []


def records(ws: Workspace, out: str = "out") -> list[dict]:
    """The launch records written so far (none, or one being replaced atomically)."""
    found = []
    for path in (ws.root / out).glob("*_launch.json"):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            pass
    return found


def test_sigterm_during_collection_finishes_collecting_and_records_it(ws, start):
    # 40 MB of incompressible log make the collection (copy + gzip) last long enough to be hit
    big = 'head -c 40000000 /dev/urandom > "outputs/$SLURM_JOB_ID/logs/big.bin"; '
    ws.recipe("recipe.yaml", v1_recipe(command=big + FIXED_RESULT))
    process = start(point(), "testlane_30")
    lines = []
    for line in process.stderr:
        lines.append(line)
        if "collecting the results of job" in line:
            process.send_signal(signal.SIGTERM)
            break
    stderr = "".join(lines) + finish(process)
    record = the_record(ws)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert record["signals"] == ["SIGTERM"] and record["terminal-state"] == "COMPLETED" and record["job-id"]
    assert record["exit-code"] == 128 + signal.SIGTERM and record["results"]  # the collection was not cut short
    assert record["message"].startswith(
        f"job {record['job-id']} completed; 1 result file(s); SIGTERM received while "
    ), record["message"]
    with __import__("tarfile").open(ws.root / "out" / "multinode_server_logs.tar.gz") as tar:
        assert "./job/big.bin" in tar.getnames()  # the collection was finished, not abandoned
    assert jobs_named("testlane_30") == []


def test_links_fifos_in_the_job_logs_and_output_never_reach_the_artifact(ws, start, tmp_path):
    """A FIFO and symbolic links (to a file of the runner host, to a device) under the job's logs,
    and a link the job put into the output folder: none is followed, opened, archived or left in
    the folder upload-artifact uploads; the launch record says what was left out."""
    secret = tmp_path / "runner-secret.txt"
    secret.write_text("runner host file")
    logs = 'L="outputs/$SLURM_JOB_ID/logs"; mkdir -p "$L/isl_8_osl_8"; '
    plant = (
        f'mkfifo "$L/pipe"; ln -s {secret} "$L/host-file"; ln -s /dev/zero "$L/zeros"; ln -s {secret} '
        f'"$L/isl_8_osl_8/results_concurrency_8_gpus_8.json"; ln -s {secret} "$INFMAX_WORKSPACE/leak.txt"; '
    )
    ws.recipe("recipe.yaml", v1_recipe(command=logs + plant + FIXED_RESULT))
    process = start(point(), "testlane_32")
    stderr = finish(process)
    record = the_record(ws)
    out = ws.root / "out"
    assert process.returncode == 0, stderr  # the result was staged and is valid: what was left out is said, not fatal
    assert record["cleanup"]["errors"] == [] and record["cleanup"]["confirmed"] is True
    skipped = "\n".join(record["skipped"])
    for name, kind in (
        ("pipe", "a FIFO"),
        ("host-file", "a symbolic link"),
        ("zeros", "a symbolic link"),
        ("isl_8_osl_8/results_concurrency_8_gpus_8.json", "a symbolic link"),
        ("leak.txt", "a symbolic link"),
    ):
        assert f"{name}: {kind}" in skipped, (name, skipped)
    assert "left out of the artifact: " in stderr
    with __import__("tarfile").open(out / "multinode_server_logs.tar.gz") as tar:
        members = tar.getmembers()
    assert all(m.isfile() or m.isdir() for m in members) and "./job/isl_8_osl_8/results_concurrency_4_gpus_8.json" in [
        m.name for m in members
    ]
    assert not any(name in m.name for m in members for name in ("pipe", "host-file", "zeros"))
    uploaded = [p for p in out.rglob("*") if ".infx-launch" not in p.parts]
    assert [p for p in uploaded if p.is_symlink() or not (p.is_file() or p.is_dir())] == []
    assert not any(
        "runner host file" in p.read_text(errors="replace") for p in uploaded if p.is_file() and p.suffix != ".gz"
    )
    assert [p.name for p in out.glob("*_conc8_*")] == [] and len(record["results"]) == 1


# --- the readers, on the shapes Slurm prints ------------------------------------------------------


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("1", 60),
        ("1:00", 60),
        ("0:30", 30),
        ("4:00:00", 14400),
        ("2-0", 172800),
        ("1-2:30", 95400),
        ("1-0:0:5", 86405),
        (90, 5400),
        ("UNLIMITED", None),
    ],
)
def test_slurm_time_limits_in_seconds(text, seconds):
    from infx.launch.slurm import time_limit_seconds

    assert time_limit_seconds(text) == seconds


def test_squeue_json_job_states_and_exit_codes():
    from infx.launch.slurm import SlurmUnavailable, job_state_from_json

    assert (
        job_state_from_json({"job_state": "FAILED", "exit_code": 768, "state_reason": "NonZeroExitCode"}).exit_code
        == "3:0"
    )
    assert job_state_from_json({"job_state": "FAILED", "exit_code": 9}).exit_code == "0:9"
    newer = {
        "job_state": ["PENDING", "REQUEUED"],
        "exit_code": {"return_code": {"number": 0}, "signal": {"id": {"number": 0}}},
    }
    assert job_state_from_json(newer).state == "REQUEUED" and job_state_from_json(newer).exit_code == "0:0"
    with pytest.raises(SlurmUnavailable, match="cannot read"):  # not a shape Slurm prints: no answer, never an end
        job_state_from_json({"job_state": 7, "exit_code": "0:0"})
    assert not job_state_from_json({"job_state": "COMPLETED", "exit_code": True}).succeeded


def test_sigkill_after_submission_still_leaves_the_job_id_recorded(ws, start):
    ws.recipe("recipe.yaml", v1_recipe(command="sleep 120"))
    process = start(point(), "testlane_34")
    [job] = wait_for(lambda: jobs_named("testlane_34"), 60, "the job")
    record = wait_for(lambda: list((ws.root / "out").glob("*_launch.json")) and the_record(ws), 30, "the record so far")
    process.kill()  # a runner's last resort: nothing of infx runs after this
    process.communicate()
    try:
        assert record["job-id"] == job and record["exit-code"] is None and record["job-name"] == "testlane_34"
        assert the_record(ws)["job-id"] == job  # what is left on disk names the job someone must cancel
    finally:
        subprocess.run(["scancel", job], check=True)
        wait_for(lambda: not jobs_named("testlane_34"), 30, "the job to go")
