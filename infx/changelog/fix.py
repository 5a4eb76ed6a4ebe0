"""`infx changelog fix`: repair what a PR appended, never a byte of history.

The appended region (everything after the merge-base's bytes) is rewritten: line endings
to LF, TABs to one space, trailing spaces removed, exactly one empty line before each
entry, one final newline, and every pr-link the policy rejects for PR N set to PR N's
canonical link. If the history itself differs from the merge-base, or the repaired file would
still fail the PR gate, nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import git
from ..diagnostics import Diagnostic, UsageError
from ..fsio import atomic_write, read_bytes
from ..reporoot import repository_root
from . import changelog_path, contract, policy
from .diff import diff_changelog

PR_LINK_LINE = re.compile(r"^(?P<indent>\s*)pr-link:\s*(?P<value>.*?)\s*$")


@dataclass(kw_only=True)
class FixResult:
    text: str | None  # the repaired file, or None when nothing may be written
    changes: list[str] = field(default_factory=list)  # what was repaired, for the user
    diagnostics: list[Diagnostic] = field(default_factory=list)
    written: bool = False  # whether the file was rewritten (only a result that passes the gate is)
    file: str = ""  # the changelog's path in the repository (fix_changelog sets it)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def repair(base: str, current: str, pr_number: int, slug: str, file: str) -> FixResult:
    """The repaired text of ``current`` whose history is ``base`` (the merge-base bytes)."""
    if not current.startswith(base):
        problem = contract.history_changed(
            base,
            current,
            file,
            "fix-history",
            "the history differs from the merge-base, and `fix` never rewrites history",
        )
        return FixResult(text=None, diagnostics=[problem])
    result = FixResult(text=None)
    suffix = current[len(base) :]
    cleaned = suffix.replace("\r\n", "\n").replace("\r", "\n")
    if cleaned != suffix:
        result.changes.append("converted CR/CRLF line endings to LF")
    lines = cleaned.split("\n")
    if "\t" in cleaned:
        result.changes.append(f"replaced {cleaned.count(chr(9))} TAB(s) with spaces")
        lines = [_untab(line) for line in lines]
    stripped = [line.rstrip(" ") for line in lines]
    if stripped != lines:
        result.changes.append("removed trailing spaces")
    blocks: list[list[str]] = []
    for line in stripped:
        if contract.ENTRY_START.match(line) or not blocks:
            blocks.append([])
        blocks[-1].append(line)
    for block in blocks:
        for n, line in enumerate(block):
            match = PR_LINK_LINE.match(line)
            if not match:
                continue
            # Placeholders and every link the policy rejects for PR N become PR N's link.
            value, canonical = _unquote(match["value"]), policy.canonical_link(slug, pr_number)
            if value != canonical:
                block[n] = f"{match['indent']}pr-link: {canonical}"
                result.changes.append(f"pr-link {value!r} -> {canonical}")
    entries = ["\n".join(_trim_blank(block)) for block in blocks if any(line.strip() for line in block)]
    lead = "" if base == "" or base.endswith("\n\n") else "\n"
    text = base + (lead + "\n\n".join(entries) + "\n" if entries else "")
    if text != base + "\n".join(line for block in blocks for line in block):
        result.changes.append("one empty line before each appended entry and one final newline")
    result.text = text
    return result


def _untab(line: str) -> str:
    """A TAB in the indentation becomes the canonical indent (4 before `- `, else 2); elsewhere one space."""
    rest = line.lstrip(" \t")
    indent = line[: len(line) - len(rest)]
    if "\t" in indent:
        indent = "    " if rest.startswith("- ") else "  "
    return indent + rest.replace("\t", " ")


def _trim_blank(block: list[str]) -> list[str]:
    while block and not block[0].strip():
        block = block[1:]
    while block and not block[-1].strip():
        block = block[:-1]
    return block


def fix_file(path: Path, base_raw: bytes, name: str, pr_number: int, slug: str, base_label: str = "") -> FixResult:
    """Repair ``path`` (the working-tree changelog) against the merge-base bytes.

    The repaired text is written (atomically) only when it passes the PR gate it is fixed
    for; otherwise the file keeps every byte and the result's diagnostics say what the
    repairs could not fix. ``changes`` lists the repairs made, or that would have been made.
    """
    current, current_problems = contract.decode(read_bytes(path), name)
    base, base_problems = contract.decode(base_raw, base_label or f"{name} (merge-base)")
    if current is None or base is None:
        return FixResult(text=None, diagnostics=current_problems + base_problems)
    result = repair(base, current, pr_number, slug, name)
    if result.text is None:
        return result
    remaining = diff_changelog(base_raw, result.text.encode(), file=name, slug=slug, pr_number=pr_number)
    result.diagnostics += [d for d in remaining.diagnostics if d.rule != "changelog-unchanged"]
    if result.text != current and not any(d.is_error for d in result.diagnostics):
        atomic_write(path, result.text)
        result.written = True
    return result


@dataclass(frozen=True, kw_only=True)
class FixRequest:
    """`infx changelog fix`: repair the working tree's changelog for PR ``pr_number`` against its merge-base."""

    pr_number: int
    base_ref: str | None = None  # the base branch (None: origin/main, else main)
    repo_slug: str | None = None  # whose PR links are canonical (None: changelog.policy.resolve_slug's default)
    changelog: str | None = None  # as given (None: perf-changelog.yaml); must be inside the repository


def fix_changelog(request: FixRequest, cwd: Path | None = None) -> FixResult:
    """fix_file on the changelog of the repository around ``cwd`` (default: the working folder; infx.reporoot's rule),
    against the merge-base of HEAD and the base branch."""
    repo = git.toplevel(repository_root(start=cwd))
    slug, _ = policy.resolve_slug(request.repo_slug, repo)
    name = changelog_path(repo, request.changelog)
    base_ref = request.base_ref
    if base_ref is None:
        base_ref = next((r for r in ("origin/main", "main") if _exists(repo, r)), "origin/main")
    base = git.merge_base(repo, git.resolve(repo, base_ref), git.resolve(repo, "HEAD"))
    path = repo / name
    if not path.is_file():
        raise UsageError(f"{name} does not exist in the working tree")
    result = fix_file(
        path, git.read_file(repo, base, name) or b"", name, request.pr_number, slug, base_label=f"{name}@{base[:12]}"
    )
    result.file = name
    return result


def _exists(repo: Path, ref: str) -> bool:
    try:
        git.resolve(repo, ref)
        return True
    except git.GitError:
        return False
