"""Most-specific-first matching, independent of the order entries are written in.

An entry matches when every key it names equals the point's fact. Among matching entries
the winner is the one whose keys are a superset of every other match's keys; when no such
entry exists the table is ambiguous for that point, which is an error, never a coin toss.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


class Ambiguous(ValueError):
    def __init__(self, candidates: list):
        super().__init__("ambiguous match")
        self.candidates = candidates


def matches(match: dict, facts: dict) -> bool:
    return all(facts.get(key) == value for key, value in match.items())


def most_specific(entries: Sequence[T], facts: dict, match_of: Callable[[T], dict]) -> T | None:
    """The single most specific entry matching ``facts``; None when nothing matches.

    Raises Ambiguous when several entries match and none is more specific than all others.
    """
    candidates = [entry for entry in entries if matches(match_of(entry), facts)]
    if not candidates:
        return None
    winners = [c for c in candidates if all(set(match_of(o)) <= set(match_of(c)) for o in candidates)]
    if len(winners) != 1:
        raise Ambiguous(candidates)
    return winners[0]
