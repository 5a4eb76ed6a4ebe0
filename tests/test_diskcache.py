"""infx's cache is disposable: written without fsync, renamed into place whole, and any entry
that is not whole (a crash left it empty, cut short or holding other bytes) is a miss that
gives the cold answer and is written again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from infx import diskcache, fsio
from testing.cli import run_cli
from testing.corpus import CORPUS, patched_corpus

REPO = Path(__file__).resolve().parent.parent
MATRIX = ["matrix", "--format", "json", "--config", "configs/nvidia-master.yaml", "--config", "configs/amd-master.yaml"]


def _empty(stored: bytes) -> bytes:
    return b""


def _cut_short(stored: bytes) -> bytes:
    return stored[: len(stored) // 2]


def _other_bytes(stored: bytes) -> bytes:
    return bytes((byte * 7 + 13) % 256 for byte in stored)


def _one_byte_changed(stored: bytes) -> bytes:
    middle = len(stored) - 1 - (len(stored) - len(diskcache.ENTRY_HEADER) - diskcache.DIGEST_BYTES) // 2
    return stored[:middle] + bytes([stored[middle] ^ 0x01]) + stored[middle + 1 :]


def _without_header(stored: bytes) -> bytes:  # what an older infx wrote: the content alone
    return diskcache.entry_content(stored)


DAMAGE = [_empty, _cut_short, _other_bytes, _one_byte_changed, _without_header]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("INFX_CACHE_DIR", str(folder))
    monkeypatch.delenv("INFX_NO_CACHE", raising=False)
    return folder


def test_cache_entries_are_written_whole_without_fsync(cache, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda descriptor: (synced.append(descriptor), real(descriptor)))
    diskcache.write_cached("entry", b"content")
    assert synced == [] and diskcache.read_cached("entry") == b"content"
    assert [p.name for p in cache.iterdir()] == ["entry"]  # renamed into place: no temporary left
    fsio.atomic_write(cache / "kept.json", "{}")  # every other write is still synced
    assert len(synced) == 2


@pytest.mark.parametrize("damage", DAMAGE, ids=lambda damage: damage.__name__.strip("_"))
def test_an_entry_that_is_not_whole_is_a_miss(cache, damage):
    content = b"\xe3" + bytes(range(256)) * 8
    diskcache.write_cached("entry", content)
    path = cache / "entry"
    path.write_bytes(damage(path.read_bytes()))
    assert diskcache.read_cached("entry") is None
    diskcache.write_cached("entry", content)
    assert diskcache.read_cached("entry") == content


def test_a_damaged_cache_gives_the_cold_answer_and_is_rewritten(tmp_path):
    """Every entry a cold matrix of the corpus writes (parsed masters, runners, policy, their
    positions, recipe node counts), damaged each way: the same rows, and whole entries again."""
    repo = patched_corpus(CORPUS, tmp_path / "corpus")
    cold_cache = tmp_path / "cold"
    cold = run_cli(*MATRIX, cwd=repo, env={"INFX_CACHE_DIR": str(cold_cache), "INFX_NO_CACHE": None})
    assert cold.returncode == 0, cold.stderr
    entries = sorted(p.name for p in cold_cache.iterdir())
    assert any(name.endswith(".data") for name in entries) and any(name.endswith(".marks") for name in entries)
    assert any(name.startswith("recipe-node-counts") for name in entries)
    for damage in DAMAGE:
        damaged = tmp_path / damage.__name__
        shutil.copytree(cold_cache, damaged)
        for name in entries:
            (damaged / name).write_bytes(damage((damaged / name).read_bytes()))
        again = run_cli(*MATRIX, cwd=repo, env={"INFX_CACHE_DIR": str(damaged), "INFX_NO_CACHE": None})
        assert (again.returncode, again.stdout, again.stderr) == (cold.returncode, cold.stdout, cold.stderr), (
            damage.__name__
        )
        for name in entries:
            assert diskcache.entry_content((damaged / name).read_bytes()) is not None, (damage.__name__, name)
