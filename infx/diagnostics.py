"""Diagnostics: the one shape every infx check reports in, and its renderers.

A check never raises on bad user input; it returns Diagnostics. The CLI renders them
as text, JSON or GitHub workflow commands and maps them to an exit code.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import Enum

EXIT_OK = 0
EXIT_INVALID = 1  # the input was read and is wrong
EXIT_USAGE = 2  # the command line (or a file it names) is unusable

# GitHub shows at most this many annotations of one kind per step; the rest are dropped.
GITHUB_ANNOTATIONS_PER_KIND = 10


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"


@dataclass(frozen=True)
class Diagnostic:
    """One located problem: where, which rule, what is wrong, and how to fix it."""

    file: str
    line: int | None
    column: int | None
    rule: str
    message: str
    hint: str = ""
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def to_json(self) -> dict:
        data = asdict(self)
        data["severity"] = self.severity.value
        return data


def error(
    file: str, where: tuple[int | None, int | None] | None, rule: str, message: str, hint: str = ""
) -> Diagnostic:
    line, column = where if where else (None, None)
    return Diagnostic(file, line, column, rule, message, hint, Severity.ERROR)


def warning(
    file: str, where: tuple[int | None, int | None] | None, rule: str, message: str, hint: str = ""
) -> Diagnostic:
    line, column = where if where else (None, None)
    return Diagnostic(file, line, column, rule, message, hint, Severity.WARNING)


@dataclass
class Report:
    """An ordered collection of diagnostics from one command."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics.extend(diagnostics)

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_INVALID

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.diagnostics, key=lambda d: (d.file, d.line or 0, d.column or 0, d.rule))


class InfxError(Exception):
    """Raised for a problem the user must fix; carries diagnostics and an exit code."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic, exit_code: int = EXIT_INVALID):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = diagnostics
        self.exit_code = exit_code
        super().__init__("; ".join(d.message for d in diagnostics))


class UsageError(InfxError):
    """A command line, or a file it names, that cannot be used at all (exit 2)."""

    def __init__(self, message: str, hint: str = "", file: str = "<command line>"):
        super().__init__(Diagnostic(file, None, None, "usage", message, hint), exit_code=EXIT_USAGE)


# --- rendering -------------------------------------------------------------------------


SHOWN_FILE = 200  # characters of a file name shown; a 5,000-character argument is cut, not echoed


def _location(d: Diagnostic) -> str:
    file = d.file if len(d.file) <= SHOWN_FILE else f"{d.file[:SHOWN_FILE]}…({len(d.file):,} characters)"
    parts = [file]
    if d.line is not None:
        parts.append(str(d.line))
        if d.column is not None:
            parts.append(str(d.column))
    return ":".join(parts)


def render_text(diagnostics: Iterable[Diagnostic]) -> str:
    lines = []
    for d in diagnostics:
        lines.append(f"{_location(d)}: {d.severity.value}[{d.rule}]: {d.message}")
        if d.hint:
            lines.extend(f"    hint: {hint_line}" for hint_line in d.hint.splitlines())
    return "\n".join(lines)


def render_json(diagnostics: Iterable[Diagnostic], ok: bool, **extra) -> str:
    return json.dumps(
        {"ok": ok, "diagnostics": [d.to_json() for d in diagnostics], **extra},
        indent=2,
        ensure_ascii=False,
        allow_nan=False,
    )


def _escape_data(text: str) -> str:
    # Workflow-command escaping: '%', CR and LF would otherwise end or corrupt the command.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: Iterable[Diagnostic]) -> str:
    """GitHub workflow commands: the first 10 of each kind, then a notice with the totals."""
    diagnostics = list(diagnostics)
    shown: dict[Severity, int] = {}
    lines = []
    for d in diagnostics:
        count = shown.get(d.severity, 0)
        shown[d.severity] = count + 1
        if count >= GITHUB_ANNOTATIONS_PER_KIND:
            continue
        props = [f"file={_escape_property(d.file)}"]
        if d.line is not None:
            props.append(f"line={d.line}")
            if d.column is not None:
                props.append(f"col={d.column}")
        props.append(f"title={_escape_property(d.rule)}")
        body = d.message + (f"\n{d.hint}" if d.hint else "")
        lines.append(f"::{d.severity.value} {','.join(props)}::{_escape_data(body)}")
    hidden = {sev: n - GITHUB_ANNOTATIONS_PER_KIND for sev, n in shown.items() if n > GITHUB_ANNOTATIONS_PER_KIND}
    if hidden:
        totals = ", ".join(f"{shown[sev]} {sev.value}s" for sev in hidden)
        notice = (
            f"{totals} in all; GitHub shows only {GITHUB_ANNOTATIONS_PER_KIND} of each kind per step. The full list is "
            "in the step log above."
        )
        lines.append(f"::notice title=infx::{_escape_data(notice)}")
    # The full list also goes to the log in text form so nothing is lost.
    text = render_text(diagnostics)
    return "\n".join(lines + ([text] if text else []))


RENDERERS = {
    "text": lambda ds, ok: render_text(ds),
    "json": lambda ds, ok: render_json(ds, ok),
    "github": lambda ds, ok: render_github(ds),
}


def render(diagnostics: Iterable[Diagnostic], fmt: str, ok: bool) -> str:
    return RENDERERS[fmt](list(diagnostics), ok)
