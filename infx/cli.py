"""The infx command line: a thin click group over the library.

Subcommands live in ``infx/commands/<name>.py`` and are imported only when used, so
``infx config validate`` never pays for PyGithub or the launcher.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import click

from . import __version__
from .diagnostics import EXIT_USAGE, InfxError, render_text

EXIT_INTERNAL = 70  # a bug in infx, not a problem with the input

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
def cli() -> None:
    """infx: configs, sweep matrices, the perf-changelog gate and lane launches."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: one error handler around every command."""
    try:
        code = cli.main(args=argv, prog_name="infx", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.ClickException as exc:  # bad flags, missing arguments: usage errors
        exc.show()
        code = EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        code = 130
    except InfxError as exc:
        click.echo(render_text(exc.diagnostics), err=True)
        code = exc.exit_code
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # a bug: say so in one line; the traceback only on request
        click.echo(f"infx: internal error ({type(exc).__name__}: {exc}). This is a bug in infx, not in your input.", err=True)
        if os.environ.get("INFX_DEBUG"):
            traceback.print_exc()
        else:
            click.echo("Set INFX_DEBUG=1 to see the traceback.", err=True)
        code = EXIT_INTERNAL
    sys.exit(code or 0)
