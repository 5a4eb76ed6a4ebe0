""" "Did you mean" suggestions: the one place that decides which names are close to a typo."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def close_matches(word: Any, candidates: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` of ``candidates`` resembling ``word``, closest first (difflib's ratio ≥ ``cutoff``)."""
    return difflib.get_close_matches(str(word), list(candidates), n=n, cutoff=cutoff)


def did_you_mean(word: Any, candidates: Iterable[str], n: int = 1, cutoff: float = 0.6) -> str:
    """``"; did you mean 'x'?"`` (to end a message) or ``""`` when nothing is close."""
    return did_you_mean_text(close_matches(word, candidates, n, cutoff))


def did_you_mean_text(close: list[str]) -> str:
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
