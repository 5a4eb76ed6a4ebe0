"""Config-key resolution of changelog entries and coverage of changed master keys.

``*`` is the only wildcard (any run of characters, whole-key match); every other
character is literal. Resolution order is master order, de-duplicated per entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, error, warning
from ..keyglob import matching_keys
from ..suggest import close_matches, did_you_mean_text
from .entry import Entry


def suggestions(pattern: str, keys: list[str], limit: int = 3) -> list[str]:
    """Close keys for a literal or a pattern (compared without its stars, then by its stem)."""
    close = close_matches(pattern.replace("*", ""), keys, n=limit, cutoff=0.6)
    if "*" in pattern and not close:
        stem = pattern.split("*", 1)[0]
        close = [k for k in keys if stem and k.startswith(stem[: max(3, len(stem) - 4)])][:limit]
    return close


@dataclass(kw_only=True)
class Resolution:
    keys: list[str] = field(default_factory=list)  # every key to sweep: entry order, master order within an entry
    per_entry: dict[int, list[str]] = field(default_factory=dict)  # entry index -> its keys
    deleted: list[str] = field(default_factory=list)  # named keys this change deletes (not swept)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def resolve(entries: list[Entry], head_keys: list[str], base_keys: list[str], file: str, where) -> Resolution:
    """Resolve every entry's config-keys against the head master keys.

    ``where(entry, item_index)`` locates a config-keys item. A key that exists at the base
    but not at the head is being deleted by the same change: a warning, and not swept.
    """
    result = Resolution()
    head_set = set(head_keys)
    seen: dict[str, None] = {}
    for entry in entries:
        mine: dict[str, None] = {}
        for n, pattern in enumerate(entry.config_keys):
            matched = matching_keys(pattern, head_keys)
            if matched:
                mine.update(dict.fromkeys(matched))
                continue
            at = where(entry, n)
            gone = [k for k in matching_keys(pattern, base_keys) if k not in head_set]
            if gone:
                result.deleted += [k for k in gone if k not in result.deleted]
                named = "" if gone == [pattern] else f" (matching {', '.join(gone)})"
                result.diagnostics.append(
                    warning(
                        file,
                        at,
                        "config-key-deleted",
                        f"entry {entry.index}: config key {pattern!r}{named} is deleted in this change; "
                        "there is nothing to sweep for it",
                        "Nothing to do if the deletion is intended: naming the key records it. "
                        "Otherwise restore the entry in the master config.",
                    )
                )
                continue
            close = suggestions(pattern, head_keys)
            did_you_mean = did_you_mean_text(close)
            if "*" in pattern:
                message = (
                    f"entry {entry.index}: the pattern {pattern!r} matches no key in the master configs{did_you_mean}"
                )
                hint = (
                    "`*` matches any run of characters and the pattern must match a whole key; run `infx matrix "
                    "--format table` to list keys."
                )
            else:
                message = f"entry {entry.index}: config key {pattern!r} is not in the master configs{did_you_mean}"
                hint = "Name an existing key of configs/*-master.yaml, or a `*` pattern that matches one."
            result.diagnostics.append(error(file, at, "config-key-unknown", message, hint))
        # Keep master order within an entry (the reference's order) and first-seen order across entries.
        ordered = [k for k in head_keys if k in mine]
        result.per_entry[entry.index] = ordered
        seen.update(dict.fromkeys(ordered))
    result.keys = list(seen)
    return result


def changed_keys(base_entries: dict[str, dict], head_entries: dict[str, dict]) -> list[str]:
    """Master keys added or changed between two revisions (deleted keys excluded), head order."""
    return [key for key, entry in head_entries.items() if base_entries.get(key) != entry]


def coverage(changed: list[str], entries: list[Entry], file: str) -> list[Diagnostic]:
    """On a PR run every added or changed master key must be named by an appended entry."""
    patterns = [p for entry in entries for p in entry.config_keys]
    uncovered = [key for key in changed if not any(matching_keys(p, [key]) for p in patterns)]
    if not uncovered:
        return []
    listed = "\n".join(f"    - {key}" for key in uncovered)
    return [
        error(
            file,
            None,
            "changelog-coverage",
            f"this change adds or modifies {len(uncovered)} master-config key(s) that no appended entry sweeps: "
            f"{', '.join(uncovered)}",
            "Name them in an appended entry's config-keys (literally or with a `*` pattern):\n- "
            f"config-keys:\n{listed}",
        )
    ]
