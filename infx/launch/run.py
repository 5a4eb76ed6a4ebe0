"""Perform a planned launch: fetch, install, submit, wait, collect — with a record of all of it.

Order matters and is the point of this module: nothing is fetched before the plan passed its
checks; a recipe that ships with srt-slurm is checked after checkout but before submission;
logs are tarred and the launch record written on every exit path, including SIGTERM/SIGINT.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from ..diagnostics import InfxError, render_text
from ..diskcache import cache_home
from ..evalsuite import EvalKind
from ..fsio import copy_tree
from ..interrupts import Interrupted  # a KeyboardInterrupt: if one ever escapes, the CLI exits 128 + N, not 70
from ..points import concurrencies
from ..results.artifact import PointArtifact
from ..scenarios import is_agentic
from . import agentic, evalenv, prepare, slurm, staging
from .cache import CHECKOUTS, cached_srtctl
from .checkout import resolve_in_checkout
from .plan import LaunchPlan
from .sources import FetchError, cached_checkout, fetch_pinned
from .srtctl import SrtctlError, install_srtctl, stage_checkout, submit

EXIT_FAILED = 1


class LaunchFailed(Exception):
    pass


def _say(message: str) -> None:
    print(f"[infx launch] {message}", file=sys.stderr, flush=True)


class StatusLine:
    """A live line on a terminal; one line per change of state in a CI log."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.live = stream.isatty()
        self.last = None

    def update(self, job_id: str, state: str, elapsed: float) -> None:
        text = f"job {job_id}: {state}, {int(elapsed) // 60:02d}:{int(elapsed) % 60:02d} elapsed"
        if self.live:
            self.stream.write("\r" + text + " " * 8)
            self.stream.flush()
        elif state != self.last:
            print(f"[infx launch] {text}", file=self.stream, flush=True)
        self.last = state

    def close(self) -> None:
        if self.live and self.last is not None:
            self.stream.write("\n")


def _follow(log: Path, offset: int) -> int:
    if not log.is_file():
        return offset
    with log.open("rb") as handle:
        handle.seek(offset)
        chunk = handle.read()
    if chunk:
        sys.stdout.write(chunk.decode(errors="replace"))
        sys.stdout.flush()
    return offset + len(chunk)


class DeadlinePassed(Exception):
    """infx's own deadline passed while Slurm still called the job active (held, requeued, stuck)."""

    def __init__(self, state: slurm.JobState | None):
        super().__init__(state.state if state else "no answer from Slurm")
        self.state = state


MAX_POLL_BACKOFF = 60.0
CONFIRM_SECONDS = 1.0  # a terminal state is asked for twice, this far apart, before the wait ends
SUBMIT_GRACE = 3.0  # after a signal during srtctl apply, how long an sbatch in flight gets to show its job


def wait_deadline(plan: LaunchPlan) -> dict:
    """infx's limit on a wait, counted from submission: the job's time limit (the recipe's slurm.time_limit,
    else the route's or lane's) plus the lane's ``deadline-margin-seconds``. A limit Slurm cannot end
    (UNLIMITED, unreadable) falls back to the lane's default-time-limit, so every wait ends."""
    limit = ((plan.recipe or {}).get("slurm") or {}).get("time_limit") or plan.time_limit
    try:
        seconds = slurm.time_limit_seconds(limit)
    except ValueError:
        seconds = None
    if seconds is None:
        limit = plan.lane.slurm.default_time_limit
        seconds = slurm.time_limit_seconds(limit)
    assert seconds is not None  # the lane schema's time-limit pattern is always a finite time
    margin = plan.lane.slurm.deadline_margin_seconds
    return {"time-limit": str(limit), "margin-seconds": margin, "seconds": seconds + margin, "passed": False}


def _sleep(seconds: float, deadline: float | None) -> None:
    if deadline is not None:
        seconds = min(seconds, max(0.0, deadline - time.monotonic()))
    time.sleep(seconds)


def wait_for_job(
    job_id: str, log: Path, poll: float, deadline: float | None = None, client: slurm.Slurm | None = None
) -> slurm.JobState:
    """Stream the job log and show its state until Slurm reports a terminal state (seen twice).

    A query that fails is retried with backoff and never taken as the job's end; ``deadline``
    (a time.monotonic() value) ends the wait with DeadlinePassed when Slurm never ends the job.
    """
    client = client or slurm.Slurm(say=_say)
    status, offset, start = StatusLine(), 0, time.monotonic()
    failures, last, candidate = 0, None, None
    try:
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlinePassed(last)
            try:
                state = client.job_state(job_id, attempts=1)
            except slurm.SlurmUnavailable as exc:
                failures += 1
                delay = min(poll * 2**failures, MAX_POLL_BACKOFF)
                _say(
                    f"could not ask Slurm about job {job_id} ({exc}); asking again in {delay:g} s (a failed query is "
                    "not the job's end)"
                )
                candidate = None
                _sleep(delay, deadline)
                continue
            failures, last = 0, state
            offset = _follow(log, offset)
            status.update(job_id, state.state, time.monotonic() - start)
            if state.active:
                candidate = None
                _sleep(poll, deadline)
                continue
            if candidate != state:  # a requeue passes through states that look final for a moment
                candidate = state
                _sleep(min(poll, CONFIRM_SECONDS), deadline)
                continue
            if state.state == "UNKNOWN" and not log.exists():
                raise LaunchFailed(f"job {job_id} failed before creating its log file {log}")
            _follow(log, offset)
            return state
    finally:
        status.close()


def _submitted_job(client: slurm.Slurm, name: str) -> str | None:
    """The job a killed ``srtctl apply`` may have submitted: found by its name, which is known before submission."""
    give_up = time.monotonic() + SUBMIT_GRACE
    while True:
        try:
            found = client.jobs_named(name)
        except slurm.SlurmUnavailable:
            found = []
        if found or time.monotonic() >= give_up:
            return found[0] if found else None
        time.sleep(0.3)


def prepare_checkout(plan: LaunchPlan, workspace: Path, cache: Path, work: Path, record: dict) -> tuple[Path, Path]:
    """Pinned srt-slurm checkout, deferred recipe checks, sources, overlays, config, private srtctl.

    Returns (srtctl, resolved recipe path). Any failure raises LaunchFailed before submission.
    """
    checkout, logs = work / "srt-slurm", work / "logs"
    commit = plan.pin.commit
    assert commit is not None  # launch_point refuses an unresolved pin before anything is staged
    try:
        cached_checkout("srt-slurm", plan.pin.repository, commit, cache, checkout, protocols=plan.lane.git_protocols)
        resolve_in_checkout(plan, checkout)
        for source in plan.sources:
            head = fetch_pinned(
                source.name,
                source.url,
                source.commit,
                Path(source.dest),
                root=checkout,
                protocols=plan.lane.git_protocols,
            )
            record["sources"].append({**source.to_json(), "head": head})
    except InfxError as exc:
        raise LaunchFailed(
            "the recipe shipped with srt-slurm failed its checks:\n" + render_text(exc.diagnostics)
        ) from exc
    except FetchError as exc:
        raise LaunchFailed(str(exc)) from exc
    if plan.evaluation:  # the workspace srt-slurm's lm-eval stage mounts; checked at plan time, staged now
        try:
            plan.stage_eval_workspace(workspace, work / evalenv.WORKSPACE_DIR)
        except (evalenv.WorkspaceChanged, OSError) as exc:
            raise LaunchFailed(f"could not stage the eval workspace: {exc}") from exc
    try:
        resolved = stage_checkout(plan, workspace, checkout)
        # srtctl from the cache's per-commit venv when one is complete (``cache`` is <base>/srt-slurm, cache.py);
        # else a private venv per launch, installed from this checkout.
        srtctl = cached_srtctl(cache.parent, commit) or install_srtctl(
            checkout, work / "venv", list(plan.lane.srt_slurm.pip_args)
        )
        record["srtctl"] = str(srtctl)
    except SrtctlError as exc:
        (logs / "srtctl-install.log").write_text(exc.output)
        raise LaunchFailed(f"{exc}\n{exc.output.strip()[-4000:]}") from exc
    for name, path in (("resolved-recipe.yaml", resolved), ("srtslurm.yaml", checkout / "srtslurm.yaml")):
        shutil.copyfile(path, logs / name)
    return srtctl, resolved


def run_prepare(plan: LaunchPlan, work: Path, checkout: Path, env: dict, record: dict) -> None:
    """The lane's prepare: steps (squash imports, setup) in the checkout; a failing step stops the launch."""
    guard = work / prepare.GUARD.name
    steps = plan.prepare_steps(str(guard))
    if steps:
        shutil.copyfile(prepare.GUARD, guard)  # compute nodes see the launch dir, not necessarily infx itself
    try:
        prepare.run_steps(steps, checkout, env, work / "logs" / "prepare.log", record["prepare"], say=_say)
    except prepare.StepFailed as exc:
        raise LaunchFailed(f"{exc}; its output:\n{exc.output.rstrip()[-prepare.OUTPUT_TAIL :]}") from exc


def _cleanup_problem(record: dict, problem: str, unconfirmed: bool = False) -> None:
    """A cleanup step that failed: recorded and said, never hidden; ``unconfirmed`` when a job may be left."""
    if unconfirmed:
        record["cleanup"]["confirmed"] = False
    record["cleanup"]["errors"].append(problem)
    _say(f"WARNING: {problem}")


def _cancel_job(client: slurm.Slurm, record: dict) -> None:
    """Cancel the recorded job if it is still active and record its final state; an unconfirmed cancel is said, never
    hidden."""
    try:
        state = client.cancel_and_wait(record["job-id"])
        record["terminal-state"], record["slurm-exit-code"] = state.state, state.exit_code
    except slurm.SlurmUnavailable as exc:
        _cleanup_problem(
            record, f"could not confirm that job {record['job-id']} was cancelled: {exc}", unconfirmed=True
        )


SHOWN_SKIPS = 20  # lines of what staging left out said in the log (all of them are in the record)


def _skipped(record: dict, lines: list[str], where: str) -> None:
    """What staging left out (links, FIFOs, devices, unreadable files): recorded, and said."""
    for line in lines:
        record["skipped"].append(f"{where}{line}")
        if len(record["skipped"]) <= SHOWN_SKIPS:
            _say(f"left out of the artifact: {where}{line}")


def _cleanup(plan: LaunchPlan, client: slurm.Slurm, record: dict, checkout: Path, logs: Path, out: Path) -> None:
    """Collect logs, make sure no job of this launch is left, on every exit path; each step's failure is recorded.
    Nothing is followed or opened that is not a regular file or a folder (staging.py)."""
    job_logs = checkout / "outputs" / str(record["job-id"]) / "logs"

    def copy_job_logs() -> None:
        if record["job-id"] and job_logs.is_dir() and not job_logs.is_symlink():
            _skipped(record, copy_tree(job_logs, logs / "job"), "job logs: ")

    def stage_eval() -> None:
        """An eval point's outputs under eval/, whenever its job ran (a failed batch says why there too)."""
        if plan.evaluation and record["job-id"]:
            staged, left_out = staging.stage_eval(job_logs, out)
            record["results"] += [name for name in staged if name not in record["results"]]
            _skipped(record, left_out, "eval results: ")

    def tar_logs() -> None:
        _skipped(record, staging.tar_logs(logs, out)[1], "logs: ")

    for step, action in (
        ("copy the job logs", copy_job_logs),
        ("stage the eval results", stage_eval),
        ("tar the logs", tar_logs),
        (
            "clear links and special files from the output",
            lambda: _skipped(record, staging.clear_output(out), "output: "),
        ),
    ):
        try:
            action()
        except (OSError, tarfile.TarError) as exc:
            _cleanup_problem(record, f"could not {step}: {exc}")
    if plan.pin.commit is None:  # refused before anything reached Slurm
        return
    if record["job-id"] and record["terminal-state"] is None:
        _cancel_job(client, record)
    try:
        found = client.cancel_by_name(plan.job_name)
    except slurm.SlurmUnavailable as exc:
        _cleanup_problem(
            record, f"could not confirm that no job named {plan.job_name} is left: {exc}", unconfirmed=True
        )
        return
    record["cleanup"]["cancelled"] += [job for job in found if job not in record["cleanup"]["cancelled"]]
    if found and record["job-id"] is None:  # submitted, but srtctl never said so
        record["job-id"] = found[0]
        _cancel_job(client, record)


def launch_point(plan: LaunchPlan, out: Path, workspace: Path, env: dict | None = None) -> int:
    env = dict(os.environ if env is None else env)
    out.mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now(dt.UTC)
    name = staging.result_name(plan.point.data, plan.point_id, env)
    # Checkout and venv go to the runner's temp dir when there is one, so artifact uploads of the
    # output dir stay small; the resolved recipe and srtslurm.yaml are copied into the logs.
    work = (
        Path(env.get("RUNNER_TEMP") or out)
        / ".infx-launch"
        / f"{plan.point_id}-{started.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    )
    checkout, logs = work / "srt-slurm", work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    cache = cache_home(env) / CHECKOUTS
    poll = plan.lane.slurm.poll_seconds
    client = slurm.Slurm.for_lane(plan.lane.slurm, say=_say)
    record: dict[str, Any] = {
        "lane": plan.lane.name,
        "point-id": plan.point_id,
        "point": plan.point.data,
        "route": plan.route.name,
        "srt-slurm": plan.pin.to_json(),
        "sources": [],
        "prepare": [],
        "recipe-source": plan.recipe_source.ref.value,
        "resolved-recipe-sha256": None,
        "resolved-recipe": None,
        "result-key": plan.result_key(),
        "job-name": plan.job_name,
        "job-id": None,
        "terminal-state": None,
        "slurm-exit-code": None,
        "exit-code": None,
        "deadline": None,
        "signals": [],
        "cleanup": {"confirmed": True, "cancelled": [], "errors": []},
        "result-name": name,
        "results": [],
        "message": "",
        "timings": {"started": started.isoformat()},
        # An eval point (run-eval / eval-only): its kind, concurrencies and protocol; null for a throughput point.
        "eval": plan.evaluation.to_json() if plan.evaluation else None,
        "environment": plan.environment(str(out), str(work / evalenv.WORKSPACE_DIR), name, repository=str(workspace)),
        # Provenance for `infx results collect`: the Actions run and attempt this launch belongs to.
        "run-id": int(env["GITHUB_RUN_ID"]) if env.get("GITHUB_RUN_ID", "").isdigit() else None,
        "run-attempt": int(env["GITHUB_RUN_ATTEMPT"]) if env.get("GITHUB_RUN_ATTEMPT", "").isdigit() else None,
        "skipped": [],
    }
    record_path = out / f"{name}_launch.json"

    def save(final: bool = False) -> None:
        """The record as known so far (exit-code null), so even a SIGKILL after submission leaves the job id behind."""
        try:
            staging.write_record(record_path, record)
        except OSError as exc:
            if final:
                raise
            _say(f"WARNING: could not write the launch record so far ({exc}); it is written again at the end")

    phase_start = time.monotonic()
    activity = "starting"  # what the launch is doing; names the phase a signal interrupted
    deferred = False  # once the job has ended (collecting, cleaning up), a signal is noted, not raised
    noted_while = ""

    def phase(label: str) -> None:
        nonlocal phase_start
        now = time.monotonic()
        record["timings"][label] = round(now - phase_start, 3)
        phase_start = now

    def on_signal(signum, _frame):
        nonlocal noted_while
        record["signals"].append(signal.Signals(signum).name)
        if deferred or len(record["signals"]) > 1:  # the first signal already ends the launch: finish what is under way
            noted_while = noted_while or activity
            _say(f"{signal.Signals(signum).name} received while {activity}; finishing that first")
            return
        raise Interrupted(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    code = EXIT_FAILED
    try:
        try:
            if plan.pin.commit is None:
                raise LaunchFailed(
                    f"srt-slurm pin {plan.pin.name} ({plan.pin.repository} {plan.pin.ref}) has no commit SHA in "
                    f"{plan.lane.file}; refusing to launch an unpinned checkout"
                )
            activity = "cancelling leftover jobs"
            leftovers = client.cancel_by_name(plan.job_name)
            if leftovers:
                _say(f"cancelled leftover job(s) named {plan.job_name}: {', '.join(leftovers)}")
            activity = "checking out srt-slurm"
            srtctl, resolved = prepare_checkout(plan, workspace, cache, work, record)
            phase("checkout-seconds")
            activity = "preparing"
            run_prepare(plan, work, checkout, env, record)
            phase("prepare-seconds")
            record["resolved-recipe-sha256"], record["resolved-recipe"] = plan.resolved_recipe_digest(), str(resolved)
            record["result-key"] = plan.result_key()  # a recipe shipped with srt-slurm is keyed once it is read
            record["deadline"] = wait_deadline(plan)
            if plan.agentic_profile is not None:  # the harness writes its aggregates into the repository checkout
                for line in agentic.clear_stale(workspace, out, name, concurrencies(plan.point.data)):
                    _say(f"workspace: {line}")
            activity = "submitting (srtctl apply)"
            try:
                submission = submit(srtctl, plan.argv(), checkout, {**env, **record["environment"]})
            except SrtctlError as exc:
                (logs / "srtctl-apply.log").write_text(exc.output)
                raise LaunchFailed(f"{exc}; its output:\n{exc.output.rstrip()}") from exc
            submitted = time.monotonic()
            (logs / "srtctl-apply.log").write_text(submission.output)
            record["job-id"] = job_id = submission.job_id
            save()
            _say(f"submitted job {job_id} ({plan.job_name})")
            phase("submit-seconds")
            activity = f"waiting for job {job_id}"
            try:
                state = wait_for_job(
                    job_id,
                    checkout / "outputs" / job_id / "logs" / f"sweep_{job_id}.log",
                    poll,
                    submitted + record["deadline"]["seconds"],
                    client,
                )
            except DeadlinePassed as exc:
                record["deadline"]["passed"] = True
                seen = (
                    f"{exc.state.state} (reason {exc.state.reason or 'none'})"
                    if exc.state
                    else "never answered by Slurm"
                )
                _say(
                    f"job {job_id} is still {seen} {record['deadline']['seconds']:g} s after submission; infx's "
                    f"deadline (time limit {record['deadline']['time-limit']} + "
                    f"{record['deadline']['margin-seconds']:g} s) passed: cancelling it"
                )
                _cancel_job(client, record)
                raise LaunchFailed(
                    f"job {job_id}: still {seen} when infx's deadline passed ({record['deadline']['seconds']:g} s "
                    f"after submission: time limit {record['deadline']['time-limit']} + margin "
                    f"{record['deadline']['margin-seconds']:g} s); infx cancelled it "
                    f"(now {record['terminal-state'] or 'unconfirmed'})"
                ) from exc
            phase("run-seconds")
            record["terminal-state"], record["slurm-exit-code"] = state.state, state.exit_code
            if not state.succeeded:
                raise LaunchFailed(f"job {job_id}: {state.message()}")
            activity, deferred = f"collecting the results of job {job_id}", True  # local and short: never half-done
            _say(activity)
            job_logs = checkout / "outputs" / job_id / "logs"
            if plan.evaluation and plan.evaluation.choice.kind is EvalKind.ONLY:
                staged = []  # no benchmark stage ran: the eval's files are staged under eval/ with the logs (_cleanup)
            elif is_agentic(plan.point.data):
                _skipped(
                    record,
                    agentic.stage_aggregates(workspace, out, name, concurrencies(plan.point.data)),
                    "workspace: ",
                )
                staged = staging.check_agentic(out, name, concurrencies(plan.point.data))
            else:
                staged, left_out = staging.stage_fixed_seq(job_logs, out, name)
                _skipped(record, left_out, "job logs: ")
            record["results"] = [p.name for p in staged]
            record["message"] = f"job {job_id} completed; {len(staged)} result file(s)" + (
                "; its eval results are staged under eval/" if plan.evaluation else ""
            )
            _say(record["message"])
            code = 0
        except Interrupted as exc:
            deferred = True
            code = 128 + exc.signum
            record["message"] = f"interrupted by {exc} while {activity}"
            if record["job-id"] is None and activity.startswith("submitting"):
                record["job-id"] = _submitted_job(client, plan.job_name)
            save()  # a runner sends SIGKILL seconds after SIGTERM; the cancel below waits for Slurm
            _say(record["message"] + (f"; cancelling job {record['job-id']}" if record["job-id"] else ""))
            if record["job-id"]:
                _cancel_job(client, record)
        except (LaunchFailed, slurm.SlurmUnavailable) as exc:
            deferred = True
            record["message"] = str(exc) if not isinstance(exc, slurm.SlurmUnavailable) else f"cannot ask Slurm: {exc}"
            _say(f"FAILED: {record['message']}")
    except Interrupted as exc:  # the first signal landed inside a handler above
        code = 128 + exc.signum
        record["message"] = (
            record["message"] + "; " if record["message"] else ""
        ) + f"interrupted by {exc} while {activity}"
    finally:
        deferred = True
        activity = "cleaning up"
        try:
            _cleanup(plan, client, record, checkout, logs, out)
        finally:
            if record["signals"] and code == 0:  # a signal always ends the launch as interrupted, even after the job
                code = 128 + signal.Signals[record["signals"][0]].value
                record["message"] += f"; {record['signals'][0]} received while {noted_while}"
            record["exit-code"] = code
            record["timings"]["finished"] = dt.datetime.now(dt.UTC).isoformat()
            save(final=True)
            if code == 0:  # a success is what `infx results collect` accepts, read back as it would be
                code = _judge_output(out, record, save)
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    return code


def _judge_output(out: Path, record: dict, save) -> int:
    """The launch's output folder, with its final record, judged by the one validity rule
    (PointArtifact.verdict): 0 when ok, else the launch failed and its record says why."""
    verdict = PointArtifact.read(out).verdict()
    if verdict.ok:
        return 0
    record["exit-code"] = EXIT_FAILED
    record["message"] = (
        f"{record['message'].splitlines()[0] if record['message'] else 'the job ended'}, but its result is "
        f"{verdict.status}: {verdict.reason}"
    )
    _say(f"FAILED: {record['message']}")
    save(final=True)
    return EXIT_FAILED
