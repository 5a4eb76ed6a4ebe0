"""A real git repository holding the patched reference corpus: the base of the §7 cases."""

from __future__ import annotations

import shutil

import pytest

from testing.corpus import patched_corpus
from testing.gitrepo import Repo
from tests.conftest import CORPUS, REPO

SLUG = "SemiAnalysisAI/InferenceX"
K = "dsr1-fp8-h200-sglang"
PH = f"https://github.com/{SLUG}/pull/XXX"


def C(n) -> str:
    return f"https://github.com/{SLUG}/pull/{n}"


def E(key: str, link: str) -> bytes:
    """The §7 notation: one synthetic entry in canonical block layout."""
    return f'- config-keys:\n    - {key}\n  description:\n    - "Synthetic"\n  pr-link: {link}\n'.encode()


@pytest.fixture(scope="session")
def corpus_repo(tmp_path_factory) -> Repo:
    if not CORPUS.is_dir():
        pytest.fail(f"the reference corpus is missing at {CORPUS}")
    root = tmp_path_factory.mktemp("corpus-repo")
    patched_corpus(CORPUS, root)
    shutil.copy(REPO / "configs" / "infx.yaml", root / "configs" / "infx.yaml")
    return Repo.init(root)


@pytest.fixture(scope="session")
def BASE(corpus_repo) -> bytes:
    return (corpus_repo.path / "perf-changelog.yaml").read_bytes()
