"""Waiting on an observable condition with a deadline: the one way a test synchronises with a process,
a Slurm job or a server (never a fixed sleep, which is too short on a loaded machine)."""

from __future__ import annotations

import time


def wait_for(predicate, timeout: float, what: str, every: float = 0.2):
    """``predicate()``'s first true value, polled every ``every`` seconds; after ``timeout`` seconds an
    AssertionError naming ``what`` was awaited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")
