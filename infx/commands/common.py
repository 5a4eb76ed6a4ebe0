"""Pieces every command shares: the --output file type and how a report ends a command (the shared
options are in options.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from ..diagnostics import (
    SHOWN_FILE,
    Diagnostic,
    Report,
    UsageError,
    render,
    render_github_annotations,
    render_json,
    render_report,
)
from ..fsio import write_target

WRITE_THROUGH_SYMLINKS = "write_through_symlinks"  # the root option `infx --write-through-symlinks`


class OutputFile(click.ParamType):
    """A file a command writes: a new path or a regular file, refused on the command line
    (exit 2, before any work) when it is a folder, FIFO, device node or socket, which a write
    would destroy. A symbolic link is refused unless `infx --write-through-symlinks` was given;
    then the value becomes the link's target, so the write replaces the file, not the link."""

    name = "file"

    def convert(self, value, param, ctx):
        through = bool(ctx and ctx.find_root().params.get(WRITE_THROUGH_SYMLINKS))
        try:
            return write_target(Path(value), through_symlink=through)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            if not through and os.path.islink(value):
                reason = "is a symbolic link; to replace the file it points to, run `infx --write-through-symlinks …`"
            self.fail(f"{str(value)[:SHOWN_FILE]!r} {reason}", param, ctx)


OUTPUT_FILE = OutputFile()


def command_name() -> str:
    """The running command as the user typed it, e.g. `infx config validate` (the verdict's subject)."""
    context = click.get_current_context(silent=True)
    return context.command_path if context else "infx"


def show(diagnostics: list[Diagnostic], fmt: str, ok: bool, detail: str = "", verdict: bool = True, **extra) -> None:
    """The one way a command shows its findings. text: the verdict first (``verdict``), then the
    findings, on stderr; github: the annotations, then the same text for the log, on stdout;
    json: one object on stdout (``extra``: the command's own fields)."""
    if fmt == "json":
        click.echo(render_json(diagnostics, ok, **extra))
        return
    if fmt == "github" and diagnostics:
        click.echo(render_github_annotations(diagnostics))
    if verdict:
        click.echo(render_report(command_name(), diagnostics, ok, detail if ok else ""), err=fmt == "text")
    elif diagnostics:
        click.echo(render(diagnostics, "text", ok), err=fmt == "text")


def finish(report: Report, fmt: str, success_message: str = "", **extra) -> None:
    """Show the report (verdict first; ``success_message`` is the verdict's detail when it is ok) and
    exit with the report's code."""
    show(report.sorted(), fmt, report.ok, success_message, **extra)
    sys.exit(report.exit_code)


def fail_json(diagnostics: list[Diagnostic]) -> str:
    """The JSON body a failed command prints when --format json was asked for."""
    return render(diagnostics, "json", False)


def json_string_list(text: str, option: str, example: str) -> list[str]:
    """An option's value that must be a JSON list of strings (what toJSON(...) gives a workflow)."""
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{option} is not JSON: {exc}", f"Pass a JSON list of strings, e.g. {example}.") from exc
    if not isinstance(parsed, list) or not all(isinstance(item, str) for item in parsed):
        raise UsageError(f"{option} must be a JSON list of strings", f"For example {example}.")
    return parsed
