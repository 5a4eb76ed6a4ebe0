"""Shared fixtures: paths to the bundled repository data and the reference corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus import CORPUS

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"the reference corpus is missing at {CORPUS}")
    return CORPUS
