"""Perform a planned launch: check, prepare, submit, wait, stage — with a record of all of it.

Order matters and is the point of this module: nothing is fetched before the plan passed its
checks; a recipe that ships with srt-slurm is checked after checkout but before submission;
logs are tarred and the launch record written on every exit path, including SIGTERM/SIGINT.
``Launch`` runs the phases of the lane kind's launcher (infx/launch/launcher.py; ``LAUNCHERS``
by kind) and owns the record, the signals and the judge's verdict on the output folder. Effects:
the kind's (srtctl on Slurm: infx/launch/srtctl_kind.py), the output folder and the launch's work
folder, the SIGTERM/SIGINT handlers while it runs.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..interrupts import Interrupted  # a KeyboardInterrupt: if one ever escapes, the CLI exits 128 + N, not 70
from . import evalenv, staging
from .lane import SRTCTL
from .launcher import Judge, Launcher, LaunchFailed, LaunchState, say
from .plan import LaunchPlan
from .record import LaunchRecord
from .srtctl_kind import SrtctlLauncher

EXIT_FAILED = 1
LAUNCHERS: dict[str, Callable[[LaunchState], Launcher]] = {SRTCTL: SrtctlLauncher}  # lane kind -> its launcher


def launch_point(plan: LaunchPlan, out: Path, workspace: Path, *, judge: Judge, env: dict | None = None) -> int:
    """Launch the planned point with its lane kind's launcher (``LAUNCHERS``; today's one kind: srtctl); its
    output folder is then judged by ``judge``. The exit code: 0, 1 (failed) or 128 + a signal."""
    return Launch(
        plan, out, workspace, judge, dict(os.environ if env is None else env), LAUNCHERS[plan.lane.kind]
    ).run()


class Launch:
    """One launch: the kind's phases in order, the record written as it goes, signals handled."""

    def __init__(
        self,
        plan: LaunchPlan,
        out: Path,
        workspace: Path,
        judge: Judge,
        env: dict[str, str],
        launcher: Callable[[LaunchState], Launcher],
    ):
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
        (work / "logs").mkdir(parents=True, exist_ok=True)
        record = LaunchRecord(
            lane=plan.lane.name,
            point_id=plan.point_id,
            point=plan.point.data,
            route=plan.route.name,
            srt_slurm=plan.pin.to_json(),
            recipe_source=plan.recipe_source.ref.value,
            result_key=plan.result_key(),
            job_name=plan.job_name,
            cleanup={"confirmed": True, "cancelled": [], "errors": []},
            result_name=name,
            timings={"started": started.isoformat()},
            # An eval point (run-eval / eval-only): its kind, concurrencies and protocol; null for a throughput point.
            eval=plan.evaluation.to_json() if plan.evaluation else None,
            environment=plan.environment(str(out), str(work / evalenv.WORKSPACE_DIR), name, repository=str(workspace)),
            # Provenance for `infx results collect`: the Actions run and attempt this launch belongs to.
            run_id=int(env["GITHUB_RUN_ID"]) if env.get("GITHUB_RUN_ID", "").isdigit() else None,
            run_attempt=int(env["GITHUB_RUN_ATTEMPT"]) if env.get("GITHUB_RUN_ATTEMPT", "").isdigit() else None,
        )
        self.state = LaunchState(plan=plan, out=out, workspace=workspace, env=env, work=work, record=record)
        self.launcher = launcher(self.state)
        self.judge = judge
        self.record_path = out / f"{name}_launch.json"
        self.noted_while = ""  # what the launch was doing when a signal it did not raise for came
        self.code = EXIT_FAILED

    @property
    def record(self) -> LaunchRecord:
        return self.state.record

    def save(self, final: bool = False) -> None:
        """The record as known so far (exit-code null), so even a SIGKILL after submission leaves the job id behind."""
        # Written in the schema's order; `srtctl` only once one was installed.
        record = self.record
        names = tuple(name for name in LaunchRecord.json_names() if name != "srtctl" or record.srtctl is not None)
        try:
            staging.write_record(self.record_path, replace(record, present=names).to_json())
        except OSError as exc:
            if final:
                raise
            say(f"WARNING: could not write the launch record so far ({exc}); it is written again at the end")

    def on_signal(self, signum, _frame) -> None:
        state = self.state
        self.record.signals.append(signal.Signals(signum).name)
        if state.deferred or len(self.record.signals) > 1:  # the first signal already ends the launch
            self.noted_while = self.noted_while or state.activity
            say(f"{signal.Signals(signum).name} received while {state.activity}; finishing that first")
            return
        raise Interrupted(signum)

    def run(self) -> int:
        previous = {s: signal.signal(s, self.on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            try:
                self.code = self.phases()
            except Interrupted as exc:
                self.interrupted(exc)
            except LaunchFailed as exc:
                self.state.deferred = True
                self.state.note(message=str(exc))
                say(f"FAILED: {self.record.message}")
        except Interrupted as exc:  # the first signal landed inside a handler above
            self.code = 128 + exc.signum
            message = self.record.message
            self.state.note(
                message=(message + "; " if message else "") + f"interrupted by {exc} while {self.state.activity}"
            )
        finally:
            try:
                self.state.deferred, self.state.activity = True, "cleaning up"
                self.launcher.clean_up()
            finally:
                self.finish()
                for signum, handler in previous.items():
                    signal.signal(signum, handler)
        return self.code

    def phases(self) -> int:
        """check, prepare, submit, wait, stage: the exit code of a launch that got through them (0)."""
        state, launcher, plan = self.state, self.launcher, self.state.plan
        launcher.check()
        launcher.prepare()
        job_id = launcher.submit()
        state.note(job_id=job_id)
        self.save()
        say(f"submitted job {job_id} ({plan.job_name})")
        state.phase("submit-seconds")
        end = launcher.wait(job_id)
        state.phase("run-seconds")
        state.note(terminal_state=end.state, slurm_exit_code=end.exit_code)
        if not end.succeeded:
            raise LaunchFailed(f"job {job_id}: {end.message()}")
        state.activity, state.deferred = f"collecting the results of job {job_id}", True  # local and short
        say(state.activity)
        staged = launcher.stage(job_id)
        state.note(
            results=[p.name for p in staged],
            message=f"job {job_id} completed; {len(staged)} result file(s)"
            + ("; its eval results are staged under eval/" if plan.evaluation else ""),
        )
        say(self.record.message)
        return 0

    def interrupted(self, exc: Interrupted) -> None:
        """A signal ended the launch: the record says so at once, then the job is cancelled."""
        state = self.state
        state.deferred = True
        self.code = 128 + exc.signum
        state.note(message=f"interrupted by {exc} while {state.activity}")
        if self.record.job_id is None and state.activity.startswith("submitting"):
            state.note(job_id=self.launcher.find_submitted())
        self.save()  # a runner sends SIGKILL seconds after SIGTERM; the cancel below waits for Slurm
        job_id = self.record.job_id
        say(self.record.message + (f"; cancelling job {job_id}" if job_id else ""))
        if job_id:
            self.launcher.cancel()

    def finish(self) -> None:
        """The exit code and end time recorded and written; a success judged (a signal always ends it interrupted)."""
        signals = self.record.signals
        if signals and self.code == 0:  # a signal always ends the launch as interrupted, even after the job
            self.code = 128 + signal.Signals[signals[0]].value
            self.state.note(message=self.record.message + f"; {signals[0]} received while {self.noted_while}")
        self.record.timings["finished"] = dt.datetime.now(dt.UTC).isoformat()
        self.state.note(exit_code=self.code)
        self.save(final=True)
        if self.code == 0:  # a success is what `infx results collect` accepts, read back as it would be
            self.code = self.judged()

    def judged(self) -> int:
        """The launch's output folder, with its final record, judged by the judge the command handed
        the launch (the one validity rule): 0 when ok, else the launch failed and its record says why."""
        verdict = self.judge(self.state.out)
        if verdict.ok:
            return 0
        message = self.record.message
        self.state.note(
            exit_code=EXIT_FAILED,
            message=f"{message.splitlines()[0] if message else 'the job ended'}, but its result is "
            f"{verdict.status}: {verdict.reason}",
        )
        say(f"FAILED: {self.record.message}")
        self.save(final=True)
        return EXIT_FAILED
