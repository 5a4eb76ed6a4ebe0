"""The srtctl lane kind: one point launched with ``srtctl apply`` on a Slurm cluster.

Its phases (``SrtctlLauncher``, the first implementation of infx/launch/launcher.py): check the
pin; cancel leftover jobs of the same name; fetch the pinned srt-slurm checkout (and check a
recipe that ships with it, before submission), the sources, install srtctl and run the lane's
prepare steps; submit; stream the job's log while Slurm says the job is active, up to infx's own
deadline; stage the results; and on every exit path copy the job's logs, tar them and cancel
whatever job of this launch is left. Effects: git and pip (subprocesses, network), Slurm
commands, files under the launch's work folder and the output folder.
"""

from __future__ import annotations

import shutil
import sys
import tarfile
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

from ..diagnostics import InfxError, render_text
from ..diskcache import cache_home
from ..evalsuite import EvalKind
from ..fsio import copy_tree
from ..points import concurrencies
from ..scenarios import is_agentic
from . import agentic, evalenv, prepare, slurm, staging
from .cache import CHECKOUTS, cached_srtctl
from .checkout import resolve_in_checkout
from .launcher import LaunchFailed, LaunchState, say
from .plan import LaunchPlan
from .sources import FetchError, cached_checkout, fetch_pinned
from .srtctl import SrtctlError, install_srtctl, stage_checkout, submit


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
    client = client or slurm.Slurm(say=say)
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
                say(
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


Params = ParamSpec("Params")
Result = TypeVar("Result")


def _asks_slurm(phase: Callable[Params, Result]) -> Callable[Params, Result]:
    """A phase during which Slurm not answering ends the launch as failed, saying so."""

    @wraps(phase)
    def run(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            return phase(*args, **kwargs)
        except slurm.SlurmUnavailable as exc:
            raise LaunchFailed(f"cannot ask Slurm: {exc}") from exc

    return run


class SrtctlLauncher:
    """The srtctl kind's phases for one launch (infx/launch/launcher.py's Launcher)."""

    def __init__(self, state: LaunchState):
        self.state = state
        self.plan: LaunchPlan = state.plan
        self.client = slurm.Slurm.for_lane(self.plan.lane.slurm, say=say)
        self.checkout = state.work / "srt-slurm"
        self.cache = cache_home(state.env) / CHECKOUTS
        self.srtctl: Path | None = None  # installed by prepare()
        self.submitted = 0.0  # time.monotonic() when srtctl apply returned: infx's deadline counts from here

    def job_logs(self, job_id: object) -> Path:
        return self.checkout / "outputs" / str(job_id) / "logs"

    def check(self) -> None:
        plan = self.plan
        if plan.pin.commit is None:
            raise LaunchFailed(
                f"srt-slurm pin {plan.pin.name} ({plan.pin.repository} {plan.pin.ref}) has no commit SHA in "
                f"{plan.lane.file}; refusing to launch an unpinned checkout"
            )

    @_asks_slurm
    def prepare(self) -> None:
        state, plan = self.state, self.plan
        state.activity = "cancelling leftover jobs"
        leftovers = self.client.cancel_by_name(plan.job_name)
        if leftovers:
            say(f"cancelled leftover job(s) named {plan.job_name}: {', '.join(leftovers)}")
        state.activity = "checking out srt-slurm"
        resolved = self.prepare_checkout()
        state.phase("checkout-seconds")
        state.activity = "preparing"
        self.run_prepare()
        state.phase("prepare-seconds")
        state.note(
            resolved_recipe_sha256=plan.resolved_recipe_digest(),
            resolved_recipe=str(resolved),
            result_key=plan.result_key(),  # a recipe shipped with srt-slurm is keyed once it is read
            deadline=wait_deadline(plan),
        )
        if plan.agentic_profile is not None:  # the harness writes its aggregates into the repository checkout
            name = state.record.result_name or ""
            for line in agentic.clear_stale(state.workspace, state.out, name, concurrencies(plan.point.data)):
                say(f"workspace: {line}")

    def prepare_checkout(self) -> Path:
        """Pinned srt-slurm checkout, deferred recipe checks, sources, overlays, config, private srtctl.

        Returns the resolved recipe's path. Any failure raises LaunchFailed before submission.
        """
        state, plan, checkout, logs = self.state, self.plan, self.checkout, self.state.logs
        commit = plan.pin.commit
        assert commit is not None  # check() refuses an unresolved pin before anything is staged
        try:
            cached_checkout(
                "srt-slurm", plan.pin.repository, commit, self.cache, checkout, protocols=plan.lane.git_protocols
            )
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
                state.record.sources.append({**source.to_json(), "head": head})
        except InfxError as exc:
            raise LaunchFailed(
                "the recipe shipped with srt-slurm failed its checks:\n" + render_text(exc.diagnostics)
            ) from exc
        except FetchError as exc:
            raise LaunchFailed(str(exc)) from exc
        if plan.evaluation:  # the workspace srt-slurm's lm-eval stage mounts; checked at plan time, staged now
            try:
                plan.stage_eval_workspace(state.workspace, state.work / evalenv.WORKSPACE_DIR)
            except (evalenv.WorkspaceChanged, OSError) as exc:
                raise LaunchFailed(f"could not stage the eval workspace: {exc}") from exc
        try:
            resolved = stage_checkout(plan, state.workspace, checkout)
            # srtctl from the cache's per-commit venv when one is complete (``cache`` is <base>/srt-slurm, cache.py);
            # else a private venv per launch, installed from this checkout.
            srtctl = cached_srtctl(self.cache.parent, commit) or install_srtctl(
                checkout, state.work / "venv", list(plan.lane.srt_slurm.pip_args)
            )
            self.srtctl = srtctl
            state.note(srtctl=str(srtctl))
        except SrtctlError as exc:
            (logs / "srtctl-install.log").write_text(exc.output)
            raise LaunchFailed(f"{exc}\n{exc.output.strip()[-4000:]}") from exc
        for name, path in (("resolved-recipe.yaml", resolved), ("srtslurm.yaml", checkout / "srtslurm.yaml")):
            shutil.copyfile(path, logs / name)
        return resolved

    def run_prepare(self) -> None:
        """The lane's prepare: steps (squash imports, setup) in the checkout; a failing step stops the launch."""
        state = self.state
        guard = state.work / prepare.GUARD.name
        steps = self.plan.prepare_steps(str(guard))
        if steps:
            shutil.copyfile(prepare.GUARD, guard)  # compute nodes see the launch dir, not necessarily infx itself
        try:
            prepare.run_steps(
                steps, self.checkout, state.env, state.logs / "prepare.log", state.record.prepare, say=say
            )
        except prepare.StepFailed as exc:
            raise LaunchFailed(f"{exc}; its output:\n{exc.output.rstrip()[-prepare.OUTPUT_TAIL :]}") from exc

    @_asks_slurm
    def submit(self) -> str:
        state = self.state
        state.activity = "submitting (srtctl apply)"
        assert self.srtctl is not None  # prepare() installed it
        try:
            submission = submit(self.srtctl, self.plan.argv(), self.checkout, {**state.env, **state.record.environment})
        except SrtctlError as exc:
            (state.logs / "srtctl-apply.log").write_text(exc.output)
            raise LaunchFailed(f"{exc}; its output:\n{exc.output.rstrip()}") from exc
        self.submitted = time.monotonic()
        (state.logs / "srtctl-apply.log").write_text(submission.output)
        return submission.job_id

    @_asks_slurm
    def wait(self, job_id: str) -> slurm.JobState:
        state = self.state
        deadline = state.record.deadline
        assert deadline is not None  # prepare() set it
        state.activity = f"waiting for job {job_id}"
        try:
            return wait_for_job(
                job_id,
                self.job_logs(job_id) / f"sweep_{job_id}.log",
                self.plan.lane.slurm.poll_seconds,
                self.submitted + deadline["seconds"],
                self.client,
            )
        except DeadlinePassed as exc:
            deadline["passed"] = True
            seen = (
                f"{exc.state.state} (reason {exc.state.reason or 'none'})" if exc.state else "never answered by Slurm"
            )
            say(
                f"job {job_id} is still {seen} {deadline['seconds']:g} s after submission; infx's "
                f"deadline (time limit {deadline['time-limit']} + "
                f"{deadline['margin-seconds']:g} s) passed: cancelling it"
            )
            self.cancel()
            raise LaunchFailed(
                f"job {job_id}: still {seen} when infx's deadline passed ({deadline['seconds']:g} s "
                f"after submission: time limit {deadline['time-limit']} + margin "
                f"{deadline['margin-seconds']:g} s); infx cancelled it "
                f"(now {state.record.terminal_state or 'unconfirmed'})"
            ) from exc

    def stage(self, job_id: str) -> list[Path]:
        state, plan = self.state, self.plan
        name = state.record.result_name or ""
        if plan.evaluation and plan.evaluation.choice.kind is EvalKind.ONLY:
            return []  # no benchmark stage ran: the eval's files are staged under eval/ with the logs (clean_up)
        if is_agentic(plan.point.data):
            state.skipped(
                agentic.stage_aggregates(state.workspace, state.out, name, concurrencies(plan.point.data)),
                "workspace: ",
            )
            return staging.check_agentic(state.out, name, concurrencies(plan.point.data))
        staged, left_out = staging.stage_fixed_seq(self.job_logs(job_id), state.out, name)
        state.skipped(left_out, "job logs: ")
        return staged

    def find_submitted(self) -> str | None:
        return _submitted_job(self.client, self.plan.job_name)

    def cancel(self) -> None:
        """Cancel the recorded job if it is still active and record its final state; an unconfirmed cancel is
        said, never hidden."""
        state = self.state
        try:
            end = self.client.cancel_and_wait(str(state.record.job_id))
            state.note(terminal_state=end.state, slurm_exit_code=end.exit_code)
        except slurm.SlurmUnavailable as exc:
            state.cleanup_problem(
                f"could not confirm that job {state.record.job_id} was cancelled: {exc}", unconfirmed=True
            )

    def clean_up(self) -> None:
        """Collect logs, make sure no job of this launch is left; each step's failure is recorded.
        Nothing is followed or opened that is not a regular file or a folder (staging.py)."""
        state, plan = self.state, self.plan
        for step, action in (
            ("copy the job logs", self.copy_job_logs),
            ("stage the eval results", self.stage_eval),
            ("tar the logs", lambda: state.skipped(staging.tar_logs(state.logs, state.out)[1], "logs: ")),
            (
                "clear links and special files from the output",
                lambda: state.skipped(staging.clear_output(state.out), "output: "),
            ),
        ):
            try:
                action()
            except (OSError, tarfile.TarError) as exc:
                state.cleanup_problem(f"could not {step}: {exc}")
        if plan.pin.commit is None:  # refused before anything reached Slurm
            return
        if state.record.job_id and state.record.terminal_state is None:
            self.cancel()
        try:
            found = self.client.cancel_by_name(plan.job_name)
        except slurm.SlurmUnavailable as exc:
            state.cleanup_problem(
                f"could not confirm that no job named {plan.job_name} is left: {exc}", unconfirmed=True
            )
            return
        cancelled = state.record.cleanup["cancelled"]
        cancelled += [job for job in found if job not in cancelled]
        if found and state.record.job_id is None:  # submitted, but srtctl never said so
            state.note(job_id=found[0])
            self.cancel()

    def copy_job_logs(self) -> None:
        state, job_logs = self.state, self.job_logs(self.state.record.job_id)
        if state.record.job_id and job_logs.is_dir() and not job_logs.is_symlink():
            state.skipped(copy_tree(job_logs, state.logs / "job"), "job logs: ")

    def stage_eval(self) -> None:
        """An eval point's outputs under eval/, whenever its job ran (a failed batch says why there too)."""
        state = self.state
        if self.plan.evaluation and state.record.job_id:
            staged, left_out = staging.stage_eval(self.job_logs(state.record.job_id), state.out)
            state.record.results.extend([name for name in staged if name not in state.record.results])
            state.skipped(left_out, "eval results: ")
