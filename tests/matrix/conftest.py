"""Fixtures of the matrix tests (helpers live in testing/matrix_helpers.py)."""

from __future__ import annotations

import pytest

from testing.matrix_helpers import Repo


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Each test session gets its own infx cache, so no test sees another's recipe counts."""
    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "infx-cache"))


@pytest.fixture
def make_repo(tmp_path):
    counter = iter(range(1000))

    def make(masters: dict, runners: dict | None = None) -> Repo:
        return Repo(tmp_path / f"repo{next(counter)}", masters, runners)

    return make
