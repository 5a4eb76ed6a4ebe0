"""Atomic writes: all or nothing, permissions kept, no temporary files left behind."""

from __future__ import annotations

import pytest

from infx.fsio import atomic_write, replacing


def test_writes_text_and_bytes_exactly_and_keeps_permissions(tmp_path):
    path = tmp_path / "sub" / "a.yaml"
    atomic_write(path, "x: 1\r\nü\n")
    assert path.read_bytes() == "x: 1\r\nü\n".encode() and path.stat().st_mode & 0o777 == 0o644
    path.chmod(0o600)
    atomic_write(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01" and path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["a.yaml"]


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with replacing(path) as temporary:
            temporary.write_text("half")
            raise RuntimeError("interrupted")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.json"]
