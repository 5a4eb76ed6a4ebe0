"""Compare two revisions of perf-changelog.yaml and judge the change.

Entries are matched by content (everything but ``pr-link``), so an entry added mid-file
by a merge that was behind main, a revert that removed entries, and a pr-link correction
are each recognised for what they are. Two kinds of run judge the result:

* PR run (``pr_number`` given): the change is the PR's own diff against the merge-base;
  entries must be appended at the end, following the byte contract.
* push run (``pr_number`` None): a merge already on main; added entries may sit anywhere,
  removals and whitespace changes are warnings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cached_property

from ..diagnostics import Diagnostic, error, warning
from ..jsonfast import canonical
from ..yamlio import parse_yaml
from . import contract, policy
from .entry import Entry, parse_entry


@dataclass(frozen=True, kw_only=True)
class Revision:
    """One parsed revision: its text, its entries and the line each entry starts on."""

    file: str
    text: str
    items: list  # parsed entries (plain data)
    lines: list[int]  # 1-based start line of each item
    where: Callable[..., tuple[int, int]]  # (item index, path) -> (line, column)

    @cached_property
    def line_list(self) -> list[str]:
        return self.text.split("\n")


@dataclass(kw_only=True)
class ChangelogDiff:
    mode: str  # "pr" or "push"
    base_count: int = 0  # entries at the base; an added index at or below it landed mid-file
    added: list[Entry] = field(default_factory=list)  # valid added entries, in file order
    added_indexes: list[int] = field(default_factory=list)  # 1-based head positions of every added item
    removed: list[tuple[int, dict]] = field(default_factory=list)  # (1-based base position, data)
    corrections: list[tuple[int, str | None, str | None]] = field(default_factory=list)  # (head position, old, new)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def _identity(item) -> bytes:
    """What must not change in a historical entry: everything but its pr-link."""
    if isinstance(item, dict):
        item = {k: v for k, v in item.items() if k != "pr-link"}
    return canonical(item, default=str)


def _parse(text: str, file: str, line_offset: int = 0) -> tuple[Revision | None, list[Diagnostic]]:
    doc, problems = parse_yaml(text, file)
    if doc is None:
        if line_offset:
            problems = [
                Diagnostic(
                    file=d.file,
                    line=(d.line or 0) + line_offset,
                    column=d.column,
                    rule=d.rule,
                    message=d.message,
                    hint=d.hint,
                    severity=d.severity,
                )
                for d in problems
            ]
        return None, problems
    data = doc.data if doc.data is not None else []
    if not isinstance(data, list):
        return None, [
            error(
                file,
                doc.where(()),
                "changelog-not-list",
                f"the changelog must be a YAML list of entries; found a {type(data).__name__}",
                "Start every entry with `- config-keys:` at column 1.",
            )
        ]

    def where(index: int, path: tuple = ()) -> tuple[int, int]:
        line, column = doc.where((index, *path))
        return line + line_offset, column

    return Revision(file=file, text=text, items=data, lines=[where(i)[0] for i in range(len(data))], where=where), []


def _link(item) -> str | None:
    return item.get("pr-link") if isinstance(item, dict) and isinstance(item.get("pr-link"), str) else None


def _label(item) -> str:
    if not isinstance(item, dict):
        return repr(item)[:80]
    keys = item.get("config-keys")
    keys = ", ".join(map(str, keys[:3])) + (", …" if len(keys) > 3 else "") if isinstance(keys, list) else "?"
    return f"[{keys}] ({item.get('pr-link', 'no pr-link')})"


def _entry_text(rev: Revision, index: int) -> list[str]:
    """The lines of entry ``index`` without the blank lines that separate it from the next."""
    all_lines = rev.line_list
    end = rev.lines[index + 1] - 1 if index + 1 < len(rev.lines) else len(all_lines)
    lines = all_lines[rev.lines[index] - 1 : end]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def diff_changelog(
    base_raw: bytes | None,
    head_raw: bytes,
    *,
    file: str,
    slug: str,
    pr_number: int | None = None,
    allow_removal: bool = False,
) -> ChangelogDiff:
    """Judge ``head_raw`` against ``base_raw`` (the merge-base on a PR run, the parent on a push run)."""
    change = ChangelogDiff(mode="pr" if pr_number is not None else "push")
    problems = change.diagnostics
    head, decode_problems = contract.decode(head_raw, file)
    base, base_problems = contract.decode(base_raw or b"", f"{file} (base)")
    problems += decode_problems + base_problems
    if head is None or base is None:
        return change
    problems += contract.file_checks(head, file)
    if head == base:
        report = error if change.mode == "pr" else warning
        problems.append(
            report(
                file,
                None,
                "changelog-unchanged",
                "the changelog is unchanged: there is no entry to sweep",
                "Append an entry naming the config keys this change should benchmark.",
            )
        )
        return change

    suffix = head[len(base) :] if head.startswith(base) else None
    head_rev: Revision | None
    first_line = next((line for line in (suffix or "").split("\n") if line.strip(" ")), "")
    if suffix is not None and contract.ENTRY_START.match(first_line):
        # Fast path: pure append after intact history; the history cannot have changed.
        base_count = len(contract.ENTRY_START.findall(base))
        appended, parse_problems = _parse(suffix, file, line_offset=base.count("\n"))
        problems += parse_problems
        if appended is None:
            return change
        pairs, added, removed = [], list(range(len(appended.items))), []
        head_rev, offset = appended, base_count
        change.base_count = base_count
    else:
        base_rev, problems_base = _parse(base, f"{file} (base)")
        head_rev, problems_head = _parse(head, file)
        problems += problems_head
        if head_rev is None:
            return change
        if base_rev is None:
            problems += [
                warning(d.file, (d.line, d.column), d.rule, f"the base revision is not valid: {d.message}")
                for d in problems_base
            ]
            base_rev = Revision(file=f"{file} (base)", text="", items=[], lines=[], where=lambda i, p=(): (1, 1))
        change.base_count = len(base_rev.items)
        pairs, added, removed = _align(base_rev, head_rev, change, file)
        offset = 0
        _check_history(
            base_text=base,
            head_text=head,
            base=base_rev,
            head=head_rev,
            pairs=pairs,
            added=added,
            removed=removed,
            change=change,
            file=file,
            slug=slug,
            allow_removal=allow_removal,
        )

    for index in added:
        position = index + offset + 1
        change.added_indexes.append(position)
        item = head_rev.items[index]
        line = head_rev.lines[index]
        problem = contract.header_check(head, line, position, file)
        if problem:
            problems.append(problem)
        entry, entry_problems = parse_entry(item, position, file, lambda path, i=index: head_rev.where(i, path))
        problems += entry_problems
        link = _link(item)
        if link is not None:
            rejection = policy.check_new_entry(link, slug, pr_number)
            if rejection:
                # On main the merge has happened: its sweep runs, the link is corrected by a later PR.
                report = error if change.mode == "pr" else warning
                problems.append(
                    report(file, head_rev.where(index, ("pr-link",)), "pr-link", rejection.message, rejection.hint)
                )
        if entry is not None:
            change.added.append(entry)
    if suffix is not None and added and not removed and not change.corrections:
        region = contract.appended_region_checks(base, head, file)
        # On main the merge has happened: irregular separators are reported, not refused.
        problems += (
            region
            if change.mode == "pr"
            else [warning(d.file, (d.line, d.column), d.rule, d.message, d.hint) for d in region]
        )
    if change.added_indexes and change.corrections:
        message, hint = policy.MIX_RULE
        problems.append(error(file, (head_rev.lines[added[0]], 1), "changelog-mixed", message, hint))
    if not change.added_indexes and not change.corrections and not removed and not problems:
        problems.append(
            contract.history_changed(
                base,
                head,
                file,
                "changelog-no-entry",
                "no appended entry or pr-link correction; historical whitespace and formatting are immutable",
            )
        )
    return change


def _align(base: Revision, head: Revision, change: ChangelogDiff, file: str):
    """Match entries by identity: (equal pairs, added head indexes, removed base indexes)."""
    base_ids = [_identity(item) for item in base.items]
    head_ids = [_identity(item) for item in head.items]
    matcher = SequenceMatcher(None, base_ids, head_ids, autojunk=False)
    pairs, added, removed = [], [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += [(i1 + k, j1 + k) for k in range(i2 - i1)]
            continue
        base_block, head_block = list(range(i1, i2)), list(range(j1, j2))
        # An entry edited in place keeps its keys or its link: report it as changed.
        for i, j in zip(base_block[:], head_block[:]):
            b, h = base.items[i], head.items[j]
            if (
                isinstance(b, dict)
                and isinstance(h, dict)
                and (b.get("config-keys") == h.get("config-keys") or _link(b) == _link(h))
            ):
                base_block.remove(i)
                head_block.remove(j)
                _report_edit(base=base, head=head, i=i, j=j, change=change, file=file)
        removed += base_block
        added += head_block
    return pairs, sorted(added), sorted(removed)


def _report_edit(base: Revision, head: Revision, i: int, j: int, change: ChangelogDiff, file: str) -> None:
    old, new = _entry_text(base, i), _entry_text(head, j)
    line = head.lines[j]
    shown = ""
    for k, (a, b) in enumerate(zip(old + [""] * len(new), new + [""] * len(old))):
        if a != b:
            line, shown = head.lines[j] + k, f": line {head.lines[j] + k} was `{a.strip()}` and is now `{b.strip()}`"
            break
    change.diagnostics.append(
        error(
            file,
            (line, 1),
            "changelog-history-edit",
            f"historical entry {i + 1} {_label(base.items[i])} changed{shown}; existing entries are immutable except "
            "for pr-link corrections",
            "Restore the entry as it is on the base branch and describe the new change in a new entry at the end of "
            "the file.",
        )
    )


def _check_history(
    base_text,
    head_text,
    base: Revision,
    head: Revision,
    pairs,
    added,
    removed,
    change: ChangelogDiff,
    file: str,
    slug: str,
    allow_removal: bool,
) -> None:
    problems = change.diagnostics
    for i, j in pairs:
        old, new = _link(base.items[i]), _link(head.items[j])
        if old != new:
            change.corrections.append((j + 1, old, new))
            rejection = policy.check_correction(str(old), str(new), slug)
            if rejection:
                problems.append(
                    error(
                        file,
                        head.where(j, ("pr-link",)),
                        "pr-link-correction",
                        f"historical entry {j + 1}: {rejection.message}",
                        rejection.hint,
                    )
                )
    for i in removed:
        change.removed.append((i + 1, base.items[i]))
        text = f"historical entry {i + 1} {_label(base.items[i])} was removed"
        if change.mode == "push" or allow_removal:
            problems.append(warning(file, None, "changelog-removed", f"{text} (a revert); it is not swept"))
        else:
            problems.append(
                error(
                    file,
                    None,
                    "changelog-removed",
                    f"{text}; history is append-only",
                    "Restore the entry. If this PR is a revert, the workflow passes --allow-removal.",
                )
            )
    if change.mode == "pr":
        last_kept = max((j for _, j in pairs), default=-1)
        for j in added:
            if j < last_kept:
                following = min((jj, i) for i, jj in pairs if jj > j)[1]
                problems.append(
                    error(
                        file,
                        (head.lines[j], 1),
                        "changelog-not-appended",
                        f"new entry at line {head.lines[j]} is inserted before historical entry {following + 1}; "
                        "a PR may only append entries at the end of the file",
                        "Move the entry to the end of the file, after the last entry, separated by one empty line.",
                    )
                )
        if any(d.rule == "changelog-history-edit" for d in problems) or removed:
            return
        if (
            added
            and not change.corrections
            and all(j > last_kept for j in added)
            and not head_text.startswith(base_text)
        ):
            problems.append(
                contract.history_changed(
                    base_text,
                    head_text,
                    file,
                    "changelog-history-bytes",
                    "the appended entries changed historical bytes",
                )
            )
        elif change.corrections and not added:
            _check_correction_bytes(base_text, head_text, len(change.corrections), file, problems)
    else:
        _warn_reformatting(base, head, pairs, file, problems)


def _check_correction_bytes(base_text: str, head_text: str, expected: int, file: str, problems: list) -> None:
    base_lines, head_lines = base_text.split("\n"), head_text.split("\n")
    if len(base_lines) != len(head_lines):
        problems.append(
            contract.history_changed(
                base_text,
                head_text,
                file,
                "changelog-history-bytes",
                "a pr-link correction changed the number of lines",
            )
        )
        return
    changed = [n for n, (a, b) in enumerate(zip(base_lines, head_lines)) if a != b]
    for n in changed:
        if not (base_lines[n].startswith("  pr-link:") and head_lines[n].startswith("  pr-link:")):
            problems.append(
                error(
                    file,
                    (n + 1, 1),
                    "changelog-history-bytes",
                    f"historical bytes changed outside a pr-link line at line {n + 1}: "
                    f"`{base_lines[n].strip()}` became `{head_lines[n].strip()}`",
                    "A correction may change only `  pr-link:` lines; restore everything else byte-for-byte.",
                )
            )
            return
    if len(changed) != expected:
        problems.append(
            error(
                file,
                (changed[0] + 1 if changed else 1, 1),
                "changelog-history-bytes",
                f"expected {expected} changed pr-link line(s), found {len(changed)}",
                "Change each corrected pr-link on its own `  pr-link:` line only.",
            )
        )


def _warn_reformatting(base: Revision, head: Revision, pairs, file: str, problems: list) -> None:
    """Push runs: whitespace-only changes to history are reported, not refused."""
    for (i, j), (i2, j2) in zip(pairs, pairs[1:] + [(None, None)]):
        if i2 == i + 1 and j2 == j + 1:
            old_gap = base.line_list[base.lines[i] - 1 + len(_entry_text(base, i)) : base.lines[i2] - 1]
            new_gap = head.line_list[head.lines[j] - 1 + len(_entry_text(head, j)) : head.lines[j2] - 1]
            if old_gap != new_gap:
                problems.append(
                    warning(
                        file,
                        (head.lines[j2], 1),
                        "changelog-separator",
                        f"the separator before historical entry {j2 + 1} changed from {old_gap} to {new_gap}",
                        "Keep history byte-for-byte.",
                    )
                )
        if _entry_text(base, i) != _entry_text(head, j) and _link(base.items[i]) == _link(head.items[j]):
            problems.append(
                warning(
                    file,
                    (head.lines[j], 1),
                    "changelog-reformatted",
                    f"historical entry {j + 1} {_label(head.items[j])} was reformatted without a change of content",
                    "Keep history byte-for-byte; formatting changes make reviews and merges harder.",
                )
            )
