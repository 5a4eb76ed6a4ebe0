"""Signals that end a command as an exception, so every ``finally`` (temporary files, a Slurm
job's cancel, the launch record) runs before infx exits with 128 + the signal's number."""

from __future__ import annotations

import signal

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_DEFAULTS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM received; a KeyboardInterrupt so that ``except Exception`` never swallows it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def raise_interrupted(signum: int, _frame) -> None:
    """The first SIGINT or SIGTERM unwinds; later ones are ignored, so a second signal (Ctrl-C,
    then the runner's SIGTERM) cannot cut a cleanup short or land in the interpreter's shutdown."""
    for other in SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signum)


def install() -> None:
    """Route SIGINT and SIGTERM (what CI runners and `timeout` send) to raise_interrupted; a
    handler someone else installed is kept."""
    for signum in SIGNALS:
        if signal.getsignal(signum) is _DEFAULTS[signum]:
            signal.signal(signum, raise_interrupted)


def exit_code_of(exc: BaseException) -> int:
    """128 + the signal behind a KeyboardInterrupt (or click's Abort raised from one); 130 for Ctrl-C."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, Interrupted):
            return current.exit_code
        current = current.__cause__ or current.__context__
    return 128 + signal.SIGINT
