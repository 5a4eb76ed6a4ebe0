"""The launcher interface: what a lane kind provides to run one planned point.

A launch (``infx.launch.run.Launch``) owns what every kind shares: the launch record, built as a
``LaunchRecord`` and written as it goes, the signals, the timings and the judge's verdict. A
lane kind (``Launcher``) provides the phases between: check before any side effect, prepare,
submit, wait, stage, and clean up on every exit path. The lane's kind (``Lane.kind``) chooses
from two tables: how the point is planned (``infx.launch.plan.PLANNERS``, every check before any
side effect) and its launcher (``infx.launch.run.LAUNCHERS``). Today's one kind is srtctl on
Slurm (``infx.launch.plan.plan_point``, ``infx.launch.srtctl_kind.SrtctlLauncher``). Nothing
here has an effect but the log line of ``say`` (stderr).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .plan import LaunchPlan
from .record import LaunchRecord

SHOWN_SKIPS = 20  # lines of what staging left out said in the log (all of them are in the record)


class LaunchFailed(Exception):
    """A phase could not go on: the launch ends failed, and its record says why."""


def say(message: str) -> None:
    print(f"[infx launch] {message}", file=sys.stderr, flush=True)


class Judgement(Protocol):
    """The verdict on a launch's output folder (``infx.results.artifact.Verdict``)."""

    @property
    def ok(self) -> bool: ...

    @property
    def status(self) -> str: ...

    @property
    def reason(self) -> str: ...


Judge = Callable[[Path], Judgement]  # the output folder -> its verdict; the command hands it to the launch


class JobEnd(Protocol):
    """How a submitted job ended, as the kind's scheduler says (``infx.launch.slurm.JobState``)."""

    @property
    def state(self) -> str: ...

    @property
    def exit_code(self) -> str: ...

    @property
    def succeeded(self) -> bool: ...

    def message(self) -> str: ...


@dataclass(kw_only=True)
class LaunchState:
    """One launch under way: its plan and folders, the record so far, and what it is doing
    (``activity`` names the phase a signal interrupted; once ``deferred``, a signal is noted,
    not raised, so what is under way finishes)."""

    plan: LaunchPlan
    out: Path  # the output folder: results, logs, the launch record
    workspace: Path  # the repository checkout
    env: dict[str, str]
    work: Path  # the launch's own folder: checkouts, venvs, logs before they are tarred
    record: LaunchRecord
    activity: str = "starting"
    deferred: bool = False
    phase_start: float = field(default_factory=time.monotonic)

    def phase(self, label: str) -> None:
        """The seconds since the last phase ended, recorded as ``timings[label]``."""
        now = time.monotonic()
        self.record.timings[label] = round(now - self.phase_start, 3)
        self.phase_start = now

    @property
    def logs(self) -> Path:
        return self.work / "logs"

    def note(self, **changes: Any) -> None:
        """Fields of the record that changed (the record is frozen: a new one replaces it)."""
        self.record = replace(self.record, **changes)

    def skipped(self, lines: list[str], where: str) -> None:
        """What staging left out (links, FIFOs, devices, unreadable files): recorded, and said."""
        for line in lines:
            self.record.skipped.append(f"{where}{line}")
            if len(self.record.skipped) <= SHOWN_SKIPS:
                say(f"left out of the artifact: {where}{line}")

    def cleanup_problem(self, problem: str, unconfirmed: bool = False) -> None:
        """A cleanup step that failed: recorded and said, never hidden; ``unconfirmed`` when a job may be left."""
        if unconfirmed:
            self.record.cleanup["confirmed"] = False
        self.record.cleanup["errors"].append(problem)
        say(f"WARNING: {problem}")


class Launcher(Protocol):
    """A lane kind's phases, called in this order by ``Launch``; each ends the launch by raising
    LaunchFailed. ``clean_up`` runs on every exit path and records (never raises) what it could not do."""

    def check(self) -> None:
        """Refuse, before any side effect, what the kind cannot launch."""

    def prepare(self) -> None:
        """Fetch, install and set up what the job needs; records what was used."""

    def submit(self) -> str:
        """Submit the job; its id."""

    def wait(self, job_id: str) -> JobEnd:
        """Wait until the job ended (or a deadline passed: LaunchFailed)."""

    def stage(self, job_id: str) -> list[Path]:
        """The job's results staged in the output folder under their workflow names."""

    def find_submitted(self) -> str | None:
        """The job a submission interrupted by a signal may have left, or None."""

    def cancel(self) -> None:
        """Cancel the recorded job and record how it ended."""

    def clean_up(self) -> None:
        """Collect logs and leave no job of this launch behind."""
