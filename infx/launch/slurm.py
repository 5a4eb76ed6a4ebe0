"""The Slurm commands the launcher needs, as argv lists: state, cancel, cleanup, partition health.

Slurm alone decides a job's end, so its state is read only from structured output: `squeue --json`
(Slurm 22.05 prints every job the controller knows and ignores filters, so the job is picked by its
numeric id here) and, once the controller has forgotten the job, `sacct --parsable2` with an explicit
field list whose values cannot contain the separator. Never from free text: a job's comment or
working directory may well contain `JobState=COMPLETED`.

Every command runs with a timeout. A command that fails or times out is retried with backoff and then
raises SlurmUnavailable: a failed query is never an answer about the job.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Protocol


class CommandTimeout(Protocol):
    """What a client takes from the profile's ``slurm:`` section, as lane.py reads it
    (``infx.launch.lane.SlurmSettings``; lane.py imports this module, so it is named here by shape)."""

    @property
    def command_timeout_seconds(self) -> float: ...


ACTIVE = {
    "PENDING",
    "RUNNING",
    "CONFIGURING",
    "COMPLETING",
    "REQUEUED",
    "SUSPENDED",
    "RESIZING",
    "SIGNALING",
    "STAGE_OUT",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESV_DEL_HOLD",
    "STOPPED",
    "SPECIAL_EXIT",
    "UPDATE_DB",
    "POWER_UP_NODE",
}
# Newer Slurm prints job_state as a list (base state, then flags); a flag listed here outranks the base state.
FLAG_PRECEDENCE = (
    "REQUEUED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESV_DEL_HOLD",
    "SPECIAL_EXIT",
    "COMPLETING",
    "CONFIGURING",
    "RESIZING",
    "SIGNALING",
    "STAGE_OUT",
    "STOPPED",
    "UPDATE_DB",
    "POWER_UP_NODE",
)
# terminal state -> what it means for the point (success only for COMPLETED with exit 0:0)
OUTCOMES = {
    "COMPLETED": "the job completed",
    "FAILED": "the job failed: a step exited non-zero",
    "TIMEOUT": "the job hit its Slurm time limit",
    "NODE_FAIL": "a node of the job failed",
    "OUT_OF_MEMORY": "the job ran out of memory",
    "CANCELLED": "the job was cancelled",
    "PREEMPTED": "the job was preempted",
    "BOOT_FAIL": "a node of the job failed to boot",
    "DEADLINE": "the job missed its deadline",
}
DEFAULT_TIMEOUT = 30.0  # seconds per command; a controller that takes longer is treated as unreachable
DEFAULT_ATTEMPTS = 4
DEFAULT_BACKOFF = 1.0  # seconds before the first retry, doubled each time
MAX_BACKOFF = 30.0


class SlurmUnavailable(RuntimeError):
    """A Slurm command failed or timed out on every attempt; nothing is known about the job from it."""


@dataclass(frozen=True)
class JobState:
    state: str  # UNKNOWN when Slurm no longer knows the job
    exit_code: str = ""
    reason: str = ""
    restarts: int = 0

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def succeeded(self) -> bool:
        return self.state == "COMPLETED" and self.exit_code == "0:0"

    def message(self) -> str:
        base = OUTCOMES.get(self.state, f"the job ended in state {self.state}")
        return f"{base} (state {self.state}, exit code {self.exit_code or '?'})" + (
            f", reason {self.reason}" if self.reason and self.reason != "None" else ""
        )


def _exit_code(value) -> str:
    """Slurm's ``code:signal`` from squeue's JSON: 22.05 prints the raw wait status as an integer."""
    if isinstance(value, bool) or not isinstance(value, (int, dict)):
        return ""
    if isinstance(value, dict):  # newer Slurm: {"return_code": N, "signal": {"id": S}}, numbers possibly wrapped

        def number(v):
            return v.get("number", 0) if isinstance(v, dict) else (v or 0)

        signal = value.get("signal")
        return f"{number(value.get('return_code'))}:{number(signal.get('id') if isinstance(signal, dict) else signal)}"
    return f"{(value >> 8) & 0xFF}:{value & 0x7F}"


def _state_name(value) -> str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
        return next((flag for flag in FLAG_PRECEDENCE if flag in value), value[0])
    raise SlurmUnavailable(f"squeue --json printed a job_state infx cannot read: {value!r}")  # no answer, not an end


def job_state_from_json(job: dict) -> JobState:
    restarts = job.get("restart_cnt")
    return JobState(
        _state_name(job.get("job_state")),
        _exit_code(job.get("exit_code")),
        str(job.get("state_reason") or ""),
        restarts if isinstance(restarts, int) else 0,
    )


def time_limit_seconds(text: str) -> int | None:
    """Slurm's time format (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S) in seconds; None for no limit."""
    text = str(text).strip()
    if text.upper() in ("", "UNLIMITED", "INFINITE"):
        return None
    match = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", text)
    if not match:
        raise ValueError(f"not a Slurm time: {text!r}")
    days, first, second, third = match.groups()
    if days is not None:  # D-H[:M[:S]]
        parts = [int(first), int(second or 0), int(third or 0)]
        return int(days) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]
    if third is not None:  # H:M:S
        return int(first) * 3600 + int(second) * 60 + int(third)
    return int(first) * 60 + int(second or 0)  # M or M:S


class Slurm:
    """Every Slurm command with a timeout and a retry policy; ``sleep`` is injectable for speed, not for faking
    Slurm."""

    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT,
        attempts: int = DEFAULT_ATTEMPTS,
        backoff: float = DEFAULT_BACKOFF,
        env: dict | None = None,
        say=None,
    ):
        self.timeout, self.attempts, self.backoff = timeout, max(1, attempts), backoff
        self.env = env
        self.say = say or (lambda message: None)

    @classmethod
    def for_lane(cls, settings: CommandTimeout, **kwargs) -> Slurm:
        """A client with the lane profile's ``slurm.command-timeout-seconds``."""
        return cls(timeout=settings.command_timeout_seconds, **kwargs)

    def _config_problem(self) -> str | None:
        conf = (self.env if self.env is not None else os.environ).get("SLURM_CONF")
        if conf and not os.path.isfile(conf):  # Slurm itself would retry reading it for 60 s
            return f"SLURM_CONF={conf} is not a readable file, so no Slurm command can find its configuration"
        return None

    def _once(self, argv: list[str]) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(
                argv, capture_output=True, text=True, timeout=self.timeout, stdin=subprocess.DEVNULL, env=self.env
            )
        except FileNotFoundError:  # Slurm is not installed on this machine
            return subprocess.CompletedProcess(argv, 127, "", f"{argv[0]}: command not found")
        except subprocess.TimeoutExpired:  # run() has killed it
            return subprocess.CompletedProcess(argv, 124, "", f"{argv[0]} did not answer within {self.timeout:g} s")

    def run(
        self, argv: list[str], attempts: int | None = None, ok=lambda done: done.returncode == 0
    ) -> subprocess.CompletedProcess:
        """Run until ``ok``; retries with backoff; raises SlurmUnavailable with the last error."""
        problem = self._config_problem()
        if problem:
            raise SlurmUnavailable(problem)
        attempts = attempts or self.attempts
        delay = self.backoff
        for attempt in range(1, attempts + 1):
            done = self._once(argv)
            if ok(done):
                return done
            error = (done.stderr or done.stdout).strip().splitlines()
            error = error[-1] if error else f"exit status {done.returncode}"
            if done.returncode == 127 or attempt == attempts:
                raise SlurmUnavailable(f"{' '.join(argv[:2])} failed {attempt} time(s): {error}")
            self.say(f"{argv[0]} failed ({error}); retry {attempt} of {attempts - 1} in {delay:g} s")
            time.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)
        raise AssertionError("unreachable")

    # --- jobs -------------------------------------------------------------------------------

    def queue(self, attempts: int | None = None) -> list[dict]:
        """Every job the controller knows, as squeue's JSON objects."""
        done = self.run(["squeue", "--json"], attempts)
        try:
            jobs = json.loads(done.stdout).get("jobs")
        except (ValueError, AttributeError):
            jobs = None
        if not isinstance(jobs, list):
            raise SlurmUnavailable("squeue --json printed no job list")
        return [job for job in jobs if isinstance(job, dict)]

    def _from_sacct(self, job_id: str) -> JobState | None:
        try:  # accounting may be disabled: then sacct fails for good, and that is no news about the job
            done = self.run(
                ["sacct", "-j", job_id, "-X", "-n", "--parsable2", "-o", "JobID,State,ExitCode"], attempts=1
            )
        except SlurmUnavailable:
            return None
        for line in done.stdout.splitlines():
            fields = line.split("|")
            if len(fields) == 3 and fields[0] == job_id:
                return JobState(fields[1].split()[0] if fields[1].strip() else "UNKNOWN", fields[2].strip())
        return None

    def job_state(self, job_id: str, attempts: int | None = None) -> JobState:
        """The controller's live view first; sacct when the controller has forgotten the job; else UNKNOWN."""
        for job in self.queue(attempts):
            if str(job.get("job_id")) == str(job_id):
                return job_state_from_json(job)
        return self._from_sacct(job_id) or JobState("UNKNOWN")

    def jobs_named(self, name: str, user: str | None = None) -> list[str]:
        """Active jobs of this user with exactly this name (compared here, not by a pattern)."""
        user = user or getpass.getuser()
        return [
            str(job.get("job_id"))
            for job in self.queue()
            if job.get("name") == name and job.get("user_name") == user and job_state_from_json(job).active
        ]

    def cancel(self, job_id: str) -> None:
        self.run(["scancel", job_id])

    def wait_inactive(self, job_id: str, timeout: float, interval: float = 0.5) -> JobState:
        deadline = time.monotonic() + timeout
        state = self.job_state(job_id)
        while state.active and time.monotonic() < deadline:
            time.sleep(interval)
            state = self.job_state(job_id)
        return state

    def cancel_and_wait(self, job_id: str, timeout: float = 60.0, interval: float = 0.5) -> JobState:
        """Cancel one job if it is still active; its state once it no longer is. Raises SlurmUnavailable
        when Slurm cannot be asked, and when the job is still active after ``timeout`` (cancel not confirmed)."""
        state = self.job_state(job_id)
        if state.active:
            self.cancel(job_id)
            state = self.wait_inactive(job_id, timeout, interval)
        if state.active:
            raise SlurmUnavailable(f"job {job_id} is still {state.state} {timeout:g} s after scancel")
        return state

    def cancel_by_name(self, name: str, timeout: float = 120.0, interval: float = 0.5) -> list[str]:
        """Cancel every job of this user with this name and wait until none is active; returns their ids.
        Raises SlurmUnavailable when that cannot be confirmed."""
        user = getpass.getuser()
        found = self.jobs_named(name, user)
        if found:
            self.run(["scancel", "--name", name, "--user", user])
        deadline = time.monotonic() + timeout
        left = found
        while left and time.monotonic() < deadline:
            time.sleep(interval)
            left = self.jobs_named(name, user)
        if left:
            raise SlurmUnavailable(f"job(s) {', '.join(left)} named {name} still active {timeout:g} s after scancel")
        return found

    # --- partitions ---------------------------------------------------------------------------

    def partition_health(self, partition: str) -> PartitionHealth:
        try:  # node names and compact states cannot contain '|'
            done = self.run(["sinfo", "-h", "-N", "-p", partition, "-o", "%N|%t"], attempts=2)
        except SlurmUnavailable as exc:
            return PartitionHealth(partition, 0, 0, {}, str(exc))
        states: dict[str, int] = {}
        usable = total = 0
        for line in done.stdout.splitlines():
            parts = line.split("|")
            if len(parts) != 2:
                continue
            state = parts[1].strip().rstrip("*~#!%$@^-")
            states[state] = states.get(state, 0) + 1
            total += 1
            if not parts[1].strip().endswith("*") and not any(bad in state for bad in UNUSABLE):
                usable += 1
        return PartitionHealth(partition, usable, total, states)


@dataclass
class PartitionHealth:
    partition: str
    usable: int
    total: int
    states: dict
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.usable > 0

    def summary(self) -> str:
        if self.error:
            return f"cannot ask Slurm: {self.error}"
        listing = ", ".join(f"{count} {state}" for state, count in sorted(self.states.items())) or "no nodes"
        return f"{self.usable} of {self.total} node(s) usable ({listing})"

    def to_json(self) -> dict:
        return {
            "partition": self.partition,
            "usable": self.usable,
            "total": self.total,
            "states": self.states,
            "error": self.error,
        }


UNUSABLE = ("down", "drain", "drng", "fail", "maint", "unk", "no_respond", "not_responding", "inval", "power")
