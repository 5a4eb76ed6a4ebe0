"""The infx command line: a thin click group over the library.

Subcommands live in ``infx/commands/<name>.py`` and are imported only when used, so
``infx config validate`` never pays for PyGithub or the launcher.
"""

from __future__ import annotations

import errno
import gc
import importlib
import os
import sys
import traceback

import click

from . import __version__, interrupts
from .diagnostics import EXIT_USAGE, Diagnostic, InfxError, render_text

EXIT_INTERNAL = 70  # a bug in infx, not a problem with the input
# Errors of the file system itself, even when the OSError names no file (a write() that fails).
FILE_SYSTEM_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.EFBIG}
)
SHOWN_TEXT = 200  # characters of an internal error's text shown

# name -> (module, attribute, one-line help shown by `infx --help` without importing it)
COMMANDS = {
    "config": ("infx.commands.config", "config", "Validate master configs, runners.yaml and components.yaml."),
    "matrix": ("infx.commands.matrix", "matrix", "Expand validated configs into sweep points."),
    "changelog": ("infx.commands.changelog", "changelog", "Gate and fix perf-changelog.yaml."),
    "plan": ("infx.commands.plan", "plan", "Plan the sweep a changelog change asks for."),
    "launch": ("infx.commands.launch", "launch", "Launch one sweep point on a runner lane."),
    "lane": ("infx.commands.lane", "lane", "Check, validate and pin runner lanes (runners/<lane>.yaml)."),
    "github": ("infx.commands.github", "github", "Report to a PR and rerun failed points via the GitHub API."),
    "results": ("infx.commands.results", "results", "Collect, validate, compare and plot sweep results."),
    "reuse": ("infx.commands.reuse", "reuse", "Reuse valid results of unchanged points instead of running them again."),
    "init": ("infx.commands.init", "init", "Write infx's workflows, lock and settings into a benchmark repository."),
    "repo": ("infx.commands.repo", "repo", "Check the repository settings that keep fork PRs off self-hosted runners."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        module = importlib.import_module(spec[0])
        return getattr(module, spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, spec[2]) for name, spec in COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="infx")
@click.option(
    "--write-through-symlinks",
    is_flag=True,
    help="An --output that is a symbolic link: replace the file it points to (default: refuse the link).",
)
def cli(write_through_symlinks: bool) -> None:
    """infx: configs, sweep matrices, the perf-changelog gate and lane launches."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: one error handler around every command. ``argv`` None means this process's
    own command line (the console script, ``python -m infx``): the process ends with the command."""
    try:
        _main(argv)
    finally:
        if argv is None:
            _skip_collecting_at_exit()


def _skip_collecting_at_exit() -> None:
    """Python's shutdown runs the cycle collector over every object still alive (the parsed
    configs, the rows): a tenth of a cold ``infx matrix`` spent on memory the exit returns
    anyway. Frozen, those objects are skipped; atexit handlers, flushing and closing files
    still run as usual. Only for a process that ends here: a caller's heap stays collectable."""
    gc.freeze()


def _main(argv: list[str] | None) -> None:
    interrupts.install()
    try:
        code = cli.main(args=argv, prog_name="infx", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.ClickException as exc:  # bad flags, missing arguments: usage errors
        exc.show()
        code = EXIT_USAGE
    except click.exceptions.Abort as exc:  # click's name for a KeyboardInterrupt (Ctrl-C or a signal)
        click.echo("Aborted.", err=True)
        code = interrupts.exit_code_of(exc)
    except InfxError as exc:
        click.echo(render_text(exc.diagnostics), err=True)
        code = exc.exit_code
    except KeyboardInterrupt as exc:  # Ctrl-C, or an Interrupted signal: 128 + its number
        code = interrupts.exit_code_of(exc)
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # a file the system refuses (exit 2), else a bug (exit 70)
        problem = unusable_file(exc)
        if problem is None:
            code = internal_error(exc)
        else:
            click.echo(render_text([problem]), err=True)
            code = EXIT_USAGE
    sys.exit(code or 0)


def unusable_file(exc: BaseException) -> Diagnostic | None:
    """A file a command named (or must write) that the system refuses: missing, a folder, a
    FIFO, a name too long, a symlink loop, no permission, a read-only or full disk. That is the
    command line's problem (exit 2), located at the file, whichever layer met it."""
    if isinstance(exc, RuntimeError):  # Python 3.11's pathlib reports a symlink loop this way
        message = str(exc)
        if not message.startswith("Symlink loop from "):
            return None
        file, reason = message.removeprefix("Symlink loop from ").strip("'\""), "Too many levels of symbolic links"
    elif isinstance(exc, OSError):
        if exc.filename is None and exc.errno not in FILE_SYSTEM_ERRNOS:
            return None  # a socket or a subprocess pipe, not a file
        file, reason = exc.filename, exc.strerror or str(exc)
        if exc.filename2:
            file = f"{exc.filename} -> {exc.filename2}"
    else:
        return None
    return Diagnostic(
        str(file) if file is not None else "<command line>",
        None,
        None,
        "file-unusable",
        f"cannot use this path: {reason}",
        "Name an existing regular file to read, or a new path or regular file in a writable folder with "
        "free space to write.",
    )


def internal_error(exc: Exception) -> int:
    """A bug: say so in one line (the traceback only on request); the exit code, 70."""
    text = str(exc)
    if len(text) > SHOWN_TEXT:
        text = text[:SHOWN_TEXT] + "…"
    click.echo(
        f"infx: internal error ({type(exc).__name__}: {text}). This is a bug in infx, not in your input.", err=True
    )
    if os.environ.get("INFX_DEBUG"):
        traceback.print_exc()
    else:
        click.echo("Set INFX_DEBUG=1 to see the traceback.", err=True)
    return EXIT_INTERNAL
