"""The one way a test runs the infx CLI: ``run_infx`` in this process through its real entry point (the one
error handler in infx/cli.py, as click's CliRunner does for a command), and ``run_cli`` as its own process
where a test needs one (exit codes of signals, a killed or unprivileged run, an installed environment, a
command a workflow step runs). Both start from the same environment: this checkout's infx, without the
variables of a CI that runs the suite. Also a small repository every command can work in."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from infx.cli import main
from testing.launchkit import REPO, git

ALLOWED_EXITS = {0, 1, 2}
# Variables of the CI that runs this suite which would change what a command does.
CLEARED = (
    "GITHUB_REPOSITORY",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_WORKSPACE",
    "RUNNER_NAME",
    "RUNNER_TEMP",
    "POINT_JSON",
)
CLEARED_PREFIXES = ("GITHUB_", "GH_", "RUNNER_")


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    def problem(self) -> str | None:
        """Why this outcome breaks the documented contract, or None."""
        if self.code == -1:
            return "a hang"
        if self.code not in ALLOWED_EXITS:
            return f"exit {self.code}"
        if "Traceback (most recent call last)" in self.stderr + self.stdout or "internal error" in self.stderr:
            return "a traceback or an internal error"
        return None


class Hang(BaseException):
    """A command still running after its time (BaseException: no handler of infx catches it)."""


def _hang(signum, frame):
    raise Hang()


def run_infx(
    argv: list[str], cwd: Path, env: dict | None = None, input: str | None = None, timeout: float = 30
) -> Outcome:
    """``infx ARGV`` in ``cwd``, in this process: exit code and output; a command still running
    after ``timeout`` seconds is stopped and reported as a hang (exit -1)."""
    environment = {name: None for name in CLEARED} | {"INFX_DEBUG": None} | (env or {})
    previous_dir, previous_handlers = (
        os.getcwd(),
        {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)},
    )
    with CliRunner().isolation(input=input, env=environment) as (out, err, _):
        os.chdir(cwd)
        signal.signal(signal.SIGALRM, _hang)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except Hang:
            code = -1
            sys.stderr.write(f"\n[test harness] still running after {timeout} s: a hang\n")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            os.chdir(previous_dir)
            for signum, handler in previous_handlers.items():
                signal.signal(signum, handler)
        sys.stdout.flush()
        sys.stderr.flush()
        return Outcome(code, out.getvalue().decode(errors="replace"), err.getvalue().decode(errors="replace"))


def cli_command(*argv) -> list[str]:
    """The command line of ``infx ARGV`` as its own process (for a test that starts it with Popen and signals it)."""
    return [sys.executable, "-m", "infx", *map(str, argv)]


def cli_environment(env: dict | None = None, inherit: bool = True) -> dict:
    """The environment of an infx process: this one's (``inherit``), without the CI's variables that would change what a
    command does (CLEARED, GITHUB_*, GH_*, RUNNER_*), with this checkout's infx; then ``env`` (None removes a name)."""
    base = (
        {k: v for k, v in os.environ.items() if k not in CLEARED and not k.startswith(CLEARED_PREFIXES)}
        if inherit
        else {}
    )
    merged = base | {"PYTHONPATH": str(REPO)} | (env or {})
    return {k: v for k, v in merged.items() if v is not None}


def run_cli(
    *argv,
    cwd: Path | None = None,
    env: dict | None = None,
    inherit: bool = True,
    timeout: float = 300,
    prefix: tuple | list = (),
    **kwargs,
) -> subprocess.CompletedProcess:
    """``infx ARGV`` as its own process in ``cwd`` (this repository by default), its output captured as text;
    ``prefix`` runs it under another command (dropped privileges)."""
    return subprocess.run(
        [*prefix, *cli_command(*argv)],
        cwd=cwd or REPO,
        env=cli_environment(env, inherit),
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def bundled_repository(path: Path) -> Path:
    """A git repository of this project's own configs, recipes, lane profiles and changelog,
    committed on main and cloned so that `origin/main` is the base a PR is fixed against."""
    origin = path / "origin"
    origin.mkdir(parents=True)
    for name in ("configs", "benchmarks", "runners"):
        shutil.copytree(REPO / name, origin / name)
    shutil.copy(REPO / "perf-changelog.yaml", origin / "perf-changelog.yaml")
    git("init", "-q", "-b", "main", cwd=origin)
    git("add", "-A", cwd=origin)
    git("commit", "-q", "-m", "base", cwd=origin)
    work = path / "work"
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True, capture_output=True)
    return work


def appended_entry(key: str = "dsv4-fp4-gb300-dynamo-vllm", link: str = "XXX") -> bytes:
    return f'\n- config-keys:\n    - {key}\n  description:\n    - "exit codes"\n  pr-link: {link}\n'.encode()
