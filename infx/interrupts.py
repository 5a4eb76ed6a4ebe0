"""Signals that end a command as an exception, so every ``finally`` (temporary files, a Slurm
job's cancel, the launch record) runs before infx exits with 128 + the signal's number."""

from __future__ import annotations

import signal


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM received; a KeyboardInterrupt so that ``except Exception`` never swallows it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def raise_interrupted(signum: int, _frame) -> None:
    raise Interrupted(signum)


def raise_on_sigterm() -> None:
    """SIGTERM (what CI runners and `timeout` send) unwinds like Ctrl-C instead of killing the
    process where it stands; a handler someone else installed is kept."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, raise_interrupted)
