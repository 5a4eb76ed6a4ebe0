"""The byte contract of perf-changelog.yaml: file-level bytes and the appended region.

Each rule is one row of a table so the validator, the fixer and the docs agree; every
violation is located (line, column) and names its fix.
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, error

ENTRY_START = re.compile(r"^-(?: |$)", re.MULTILINE)  # a top-level list item
ENTRY_HEADER = "- config-keys:"

# character -> (rule, what it is, fix)
FORBIDDEN_CHARACTERS = {
    "\r": ("changelog-cr", "a carriage return (CR, Windows line ending)", "Save the file with LF line endings."),
    "\t": (
        "changelog-tab",
        "a TAB character",
        "Replace the TAB with spaces (`infx changelog fix` does this in appended entries).",
    ),
    "\0": ("changelog-nul", "a NUL byte", "Remove the NUL byte."),
}


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def decode(raw: bytes, file: str) -> tuple[str | None, list[Diagnostic]]:
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, [
            error(
                file,
                (line, column),
                "changelog-utf8",
                f"the file is not valid UTF-8 ({exc.reason} at byte {exc.start})",
                "Save the file as UTF-8.",
            )
        ]


def file_checks(text: str, file: str, start: int = 0) -> list[Diagnostic]:
    """Forbidden characters at or after ``start``, and the final newline."""
    problems = []
    for character, (rule, what, fix) in FORBIDDEN_CHARACTERS.items():
        offset = text.find(character, start)
        if offset >= 0:
            count = text.count(character, start)
            more = f" ({count} in all)" if count > 1 else ""
            problems.append(
                error(
                    file,
                    position(text, offset),
                    rule,
                    f"the file contains {what}{more}; the changelog allows none",
                    fix,
                )
            )
    if text and not text.endswith("\n"):
        problems.append(
            error(
                file,
                position(text, len(text)),
                "changelog-final-newline",
                "the file does not end with a newline",
                "End the last line with a single newline (`infx changelog fix`).",
            )
        )
    return problems


def first_difference(base: str, head: str) -> int:
    """Offset of the first character where two texts differ."""
    limit = min(len(base), len(head))
    low, high = 0, limit
    while low < high:  # binary search on equal prefixes: the texts are large and mostly equal
        middle = (low + high + 1) // 2
        if base[:middle] == head[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _visible(text: str, at_end: bool) -> str:
    return repr(text)[1:-1] or ("(end of file)" if at_end else "(an empty line)")


def history_changed(base: str, head: str, file: str, rule: str, message: str) -> Diagnostic:
    offset = first_difference(base, head)
    line, column = position(head, offset)
    base_line = base[base.rfind("\n", 0, offset) + 1 :].split("\n", 1)[0]
    head_line = head[head.rfind("\n", 0, offset) + 1 :].split("\n", 1)[0]
    return error(
        file,
        (line, column),
        rule,
        f"{message}: line {line}, column {column} was `{_visible(base_line, offset >= len(base))}` "
        f"and is now `{_visible(head_line, offset >= len(head))}`",
        "Restore the base file byte-for-byte (e.g. `git checkout <merge-base> -- perf-changelog.yaml`) "
        "and add your entry after the last one.",
    )


def _blank(line: str) -> bool:
    return line.strip(" ") == ""


def appended_region_checks(base: str, head: str, file: str) -> list[Diagnostic]:
    """Separators and ending of the text appended after ``base`` (head starts with base)."""
    problems: list[Diagnostic] = []
    base_lines = base.count("\n")
    lines = head[len(base) :].split("\n")
    # The final "" after the last newline is not a line.
    if lines and lines[-1] == "":
        lines.pop()
    starts = [i for i, line in enumerate(lines) if ENTRY_START.match(line)]
    if not starts:
        return problems
    # One empty line before each appended entry; an empty line the base already ends with counts.
    first_wanted = [] if base == "" or base.endswith("\n\n") else [""]
    gaps = [lines[: starts[0]]] + [_trailing_blank(lines[a:b]) for a, b in zip(starts, starts[1:])]
    for order, (start, gap) in enumerate(zip(starts, gaps)):
        if gap == ([""] if order else first_wanted):
            continue
        where = "from the history above it" if order == 0 else "from the entry above it"
        found = f"{len(gap)} separator line(s)" + (
            f", {sum(1 for g in gap if g)} of them holding spaces" if any(gap) else ""
        )
        at = base_lines + start - len(gap) + 1 if gap else base_lines + start + 1
        problems.append(
            error(
                file,
                (at, 1),
                "changelog-separator",
                f"appended entry at line {base_lines + start + 1} must be separated {where} by exactly one "
                f"empty line; found {found}",
                "Leave exactly one empty line (no spaces) before each appended `- config-keys:` (`infx changelog "
                "fix`).",
            )
        )
    tail = _trailing_blank(lines)
    if tail:
        problems.append(
            error(
                file,
                (base_lines + len(lines) - len(tail) + 1, 1),
                "changelog-trailing-blank",
                f"the final appended entry must end with one newline; found {len(tail)} blank line(s) after it",
                "Delete the blank lines at the end of the file (`infx changelog fix`).",
            )
        )
    return problems


def _trailing_blank(lines: list[str]) -> list[str]:
    count = 0
    for line in reversed(lines):
        if not _blank(line):
            break
        count += 1
    return lines[len(lines) - count :] if count else []


def header_check(text: str, line: int, index: int, file: str) -> Diagnostic | None:
    """An added entry must be block style with config-keys first."""
    start = _line_offset(text, line)
    content = text[start : text.find("\n", start) if text.find("\n", start) >= 0 else len(text)]
    if content.startswith(ENTRY_HEADER):
        return None
    return error(
        file,
        (line, 1),
        "changelog-entry-style",
        f"entry {index} starts with `{content[:60]}`; every entry must start with the line `{ENTRY_HEADER}` "
        "(block style, config-keys first)",
        f'Write:\n{ENTRY_HEADER}\n    - <config-key>\n  description:\n    - "..."\n  pr-link: ...',
    )


def _line_offset(text: str, line: int) -> int:
    offset = 0
    for _ in range(line - 1):
        offset = text.index("\n", offset) + 1
    return offset
