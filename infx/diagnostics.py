"""Diagnostics: the one shape every infx check reports in, and its renderers.

A check never raises on bad user input; it returns Diagnostics. The CLI renders them
as text, JSON or GitHub workflow commands and maps them to an exit code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from pathlib import Path

from .reporoot import repository_root

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


# --- findings already on the base branch -------------------------------------------------------
# A change is judged on what it changes: a finding its base already had is reported as a warning
# that says so, never held against the change. The one rule, used by `config validate`, `matrix`,
# `plan` and the changelog gate alike.

ON_BASE = "already on the base branch"
ON_BASE_DEMOTED = f" ({ON_BASE}: not introduced by this change)"  # an error of the base, now a warning
ON_BASE_KEPT = f" ({ON_BASE})"  # a warning or notice the base already had


def _repository_file(file: str, root: Path) -> str:
    """``file`` relative to ``root`` when it lies inside it (absolute, or relative to the working folder)."""
    path = Path(file)
    try:
        return (path if path.is_absolute() else Path.cwd() / path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return file


def finding_identity(d: Diagnostic, root: Path) -> tuple[str, str, str]:
    """What makes two findings the same finding on two commits: the rule, the file (relative to the
    commit's root) and the message, which names the offending key and value. Not the line: it moves."""
    return d.rule, _repository_file(d.file, root), d.message


def on_base(d: Diagnostic) -> bool:
    return d.message.endswith((ON_BASE_DEMOTED, ON_BASE_KEPT))


def demote_on_base(head: Iterable[Diagnostic], head_root: Path, base: Iterable[Diagnostic], base_root: Path) -> list:
    """The head's diagnostics, each one the base already had marked so; an error of the base
    becomes a warning. What the change introduced keeps its severity."""
    known = {finding_identity(d, base_root) for d in base}
    marked = []
    for d in head:
        if d.severity is Severity.NOTICE or finding_identity(d, head_root) not in known:
            marked.append(d)
        elif d.is_error:
            marked.append(replace(d, message=d.message + ON_BASE_DEMOTED, severity=Severity.WARNING))
        else:
            marked.append(replace(d, message=d.message + ON_BASE_KEPT))
    return marked


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
SHOWN_PLACES = 3  # a group of repeated findings lists this many of its places in text (all of them in JSON)


def shown_file(file: str, root: Path | None = None) -> str:
    """The one rule for how a diagnostic names a file: an absolute path inside the repository root
    (infx/reporoot.py) relative to it; anything else (a relative path, `<command line>`, `path@commit`)
    as the check named it."""
    if not os.path.isabs(file):
        return file
    try:
        return Path(file).relative_to(root or repository_root()).as_posix()
    except ValueError:
        return file


def _location(d: Diagnostic, root: Path | None = None) -> str:
    name = shown_file(d.file, root)
    file = name if len(name) <= SHOWN_FILE else f"{name[:SHOWN_FILE]}…({len(name):,} characters)"
    parts = [file]
    if d.line is not None:
        parts.append(str(d.line))
        if d.column is not None:
            parts.append(str(d.column))
    return ":".join(parts)


def _subject_and_rest(message: str) -> tuple[str, str]:
    """A config finding's message starts with its subject, the entry key (`key: …`): repeated at
    many keys, the rest is the same finding."""
    subject, sep, rest = message.partition(": ")
    return (subject, rest) if sep and subject and " " not in subject else ("", message)


def grouped(diagnostics: Iterable[Diagnostic]) -> list[list[Diagnostic]]:
    """Repeated findings together, in first-seen order: the same severity, rule, message apart from its
    subject, and hint. A finding said twice at the same place (a notice two loads found) is said once."""
    groups: dict[tuple, list[Diagnostic]] = {}
    for d in dict.fromkeys(diagnostics):
        groups.setdefault((d.severity, d.rule, _subject_and_rest(d.message)[1], d.hint), []).append(d)
    return list(groups.values())


def _counted(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(diagnostics: Iterable[Diagnostic]) -> dict[str, int]:
    """The counts the verdict line gives."""
    diagnostics = list(diagnostics)
    return {
        "errors": sum(d.severity is Severity.ERROR for d in diagnostics),
        "warnings": sum(d.severity is Severity.WARNING for d in diagnostics),
        "notices": sum(d.severity is Severity.NOTICE for d in diagnostics),
        "on-base": sum(on_base(d) for d in diagnostics),
    }


def verdict(command: str, diagnostics: Iterable[Diagnostic], ok: bool, detail: str = "") -> str:
    """The first line of a command's text output: `infx config validate: invalid — 2 errors, 8 warnings
    (8 already on the base branch)`, or `…: ok` with what was found and the command's own detail."""
    counts = summary(diagnostics)
    found = [_counted(counts[key], word) for key, word in (("errors", "error"), ("warnings", "warning")) if counts[key]]
    text = f"{command}: {'ok' if ok else 'invalid'}"
    if found:
        text += " — " + ", ".join(found) + (f" ({counts['on-base']} {ON_BASE})" if counts["on-base"] else "")
    return text + (f"; {detail}" if detail else "")


def _first_line(d: Diagnostic) -> str:
    """An on-base finding in one line: not this change's to fix (`--format json` has all of it)."""
    note = ON_BASE_DEMOTED if d.message.endswith(ON_BASE_DEMOTED) else ON_BASE_KEPT
    body = d.message.removesuffix(note)
    first = body.splitlines()[0] if body else body
    return first + (" …" if first != body else "") + note


def render_text(diagnostics: Iterable[Diagnostic], root: Path | None = None) -> str:
    """Every finding with its hint; repeated findings once, with their count and first places; a
    finding already on the base branch in one line, without its hint."""
    root = root or repository_root()
    lines = []
    for group in grouped(diagnostics):
        d = group[0]
        message = _first_line(d) if on_base(d) else d.message
        lines.append(f"{_location(d, root)}: {d.severity.value}[{d.rule}]: {message}")
        if d.hint and not on_base(d):
            lines.extend(f"    hint: {hint_line}" for hint_line in d.hint.splitlines())
        if len(group) > 1:
            places = [
                _location(other, root) + (f" ({subject})" if (subject := _subject_and_rest(other.message)[0]) else "")
                for other in group[1 : 1 + SHOWN_PLACES]
            ]
            more = len(group) - 1 - len(places)
            lines.append(
                f"    the same at {len(group) - 1} more place{'s' if len(group) > 2 else ''}: {', '.join(places)}"
                + (f" and {more} more (all of them: --format json)" if more else "")
            )
    return "\n".join(lines)


def render_report(command: str, diagnostics: Iterable[Diagnostic], ok: bool, detail: str = "") -> str:
    """A command's text output: the verdict first, then the findings."""
    diagnostics = list(diagnostics)
    text = render_text(diagnostics)
    return verdict(command, diagnostics, ok, detail) + (f"\n{text}" if text else "")


def render_json(diagnostics: Iterable[Diagnostic], ok: bool, **extra) -> str:
    diagnostics = list(diagnostics)
    root = repository_root()
    return json.dumps(
        {
            "ok": ok,
            "diagnostics": [{**d.to_json(), "file": shown_file(d.file, root)} for d in diagnostics],
            **extra,
        },
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
    """GitHub workflow commands (:func:`render_github_annotations`), then the full list in text form
    for the log, so nothing is lost."""
    diagnostics = list(diagnostics)
    text = render_text(diagnostics)
    return "\n".join([render_github_annotations(diagnostics)] + ([text] if text else []))


def render_github_annotations(diagnostics: Iterable[Diagnostic]) -> str:
    """GitHub workflow commands: the first 10 of each kind, then a notice with the totals."""
    diagnostics = list(diagnostics)
    root = repository_root()
    shown: dict[Severity, int] = {}
    lines = []
    for d in diagnostics:
        count = shown.get(d.severity, 0)
        shown[d.severity] = count + 1
        if count >= GITHUB_ANNOTATIONS_PER_KIND:
            continue
        props = [f"file={_escape_property(shown_file(d.file, root))}"]
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
    return "\n".join(lines)


RENDERERS = {
    "text": lambda ds, ok: render_text(ds),
    "json": lambda ds, ok: render_json(ds, ok),
    "github": lambda ds, ok: render_github(ds),
}


def render(diagnostics: Iterable[Diagnostic], fmt: str, ok: bool) -> str:
    return RENDERERS[fmt](list(diagnostics), ok)
