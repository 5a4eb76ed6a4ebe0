"""The Slurm commands the launcher needs, as argv lists: state, cancel, cleanup, partition health."""

from __future__ import annotations

import getpass
import subprocess
import time
from dataclasses import dataclass

ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "SUSPENDED", "RESIZING", "SIGNALING", "STAGE_OUT",
          "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "STOPPED"}
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


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True)
    except FileNotFoundError:  # Slurm is not installed on this machine
        return subprocess.CompletedProcess(argv, 127, "", f"{argv[0]}: command not found")


@dataclass(frozen=True)
class JobState:
    state: str  # UNKNOWN when Slurm no longer knows the job
    exit_code: str = ""
    reason: str = ""

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def succeeded(self) -> bool:
        return self.state == "COMPLETED" and self.exit_code == "0:0"

    def message(self) -> str:
        base = OUTCOMES.get(self.state, f"the job ended in state {self.state}")
        return f"{base} (state {self.state}, exit code {self.exit_code or '?'})" + (f", reason {self.reason}" if self.reason and self.reason != "None" else "")


def _from_sacct(job_id: str) -> JobState | None:
    done = _run(["sacct", "-j", job_id, "-X", "-n", "-P", "-o", "State,ExitCode"])
    line = done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""
    if not line:
        return None  # accounting disabled or not yet recorded
    state, _, exit_code = line.partition("|")
    return JobState(state.split()[0], exit_code.strip())


def job_state(job_id: str) -> JobState:
    """scontrol first (the controller's live view); sacct when the controller forgot the job."""
    done = _run(["scontrol", "show", "job", "-o", job_id])
    if done.returncode == 0 and done.stdout.strip():
        fields = dict(item.partition("=")[::2] for item in done.stdout.split() if "=" in item)
        return JobState(fields.get("JobState", "UNKNOWN"), fields.get("ExitCode", ""), fields.get("Reason", ""))
    return _from_sacct(job_id) or JobState("UNKNOWN")


def cancel_and_wait(job_id: str, timeout: float = 60.0, interval: float = 0.5) -> JobState:
    """Cancel one job and return its state once it is no longer active (or the timeout passed)."""
    _run(["scancel", job_id])
    deadline = time.monotonic() + timeout
    state = job_state(job_id)
    while state.active and time.monotonic() < deadline:
        time.sleep(interval)
        state = job_state(job_id)
    return state


def jobs_named(name: str, user: str | None = None) -> list[str]:
    done = _run(["squeue", "-h", "-o", "%i", "--name", name, "--user", user or getpass.getuser()])
    return done.stdout.split() if done.returncode == 0 else []


def cancel_by_name(name: str, timeout: float = 120.0, interval: float = 0.5) -> list[str]:
    """Cancel every job of this user with this name and wait until none is queued; returns their ids."""
    user = getpass.getuser()
    found = jobs_named(name, user)
    if found:
        _run(["scancel", "--name", name, "--user", user])
    deadline = time.monotonic() + timeout
    while jobs_named(name, user) and time.monotonic() < deadline:
        time.sleep(interval)
    return found


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
        return {"partition": self.partition, "usable": self.usable, "total": self.total, "states": self.states, "error": self.error}


UNUSABLE = ("down", "drain", "drng", "fail", "maint", "unk", "no_respond", "not_responding", "inval", "power")


def partition_health(partition: str) -> PartitionHealth:
    done = _run(["sinfo", "-h", "-N", "-p", partition, "-o", "%N %t"])
    if done.returncode != 0:
        return PartitionHealth(partition, 0, 0, {}, (done.stderr or done.stdout).strip())
    states: dict[str, int] = {}
    usable = total = 0
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        state = parts[1].rstrip("*~#!%$@^-")
        states[state] = states.get(state, 0) + 1
        total += 1
        if not parts[1].endswith("*") and not any(bad in state for bad in UNUSABLE):
            usable += 1
    return PartitionHealth(partition, usable, total, states)
