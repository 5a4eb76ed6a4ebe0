"""Pieces every command shares: the --format option and how a report ends a command."""

from __future__ import annotations

import sys
from typing import Iterable

import click

from ..diagnostics import Diagnostic, Report, render

FORMATS = ("text", "json", "github")


def format_option(choices: Iterable[str] = FORMATS, default: str = "text"):
    return click.option(
        "--format", "fmt", type=click.Choice(list(choices)), default=default, show_default=True,
        help="Output format.",
    )


def finish(report: Report, fmt: str, success_message: str = "") -> None:
    """Render diagnostics (stdout for json, stderr otherwise) and exit with the report's code."""
    diagnostics = report.sorted()
    if fmt == "json":
        click.echo(render(diagnostics, "json", report.ok))
    else:
        text = render(diagnostics, fmt, report.ok)
        if text:
            click.echo(text, err=fmt == "text")
        if report.ok and success_message and fmt == "text":
            click.echo(success_message, err=True)
    sys.exit(report.exit_code)


def fail_json(diagnostics: list[Diagnostic]) -> str:
    """The JSON body a failed command prints when --format json was asked for."""
    return render(diagnostics, "json", False)
