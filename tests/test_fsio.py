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


# --- reading and copying what others filled, without following anything ----------------------


def test_read_bytes_without_following_refuses_links_fifos_devices_and_oversize(tmp_path):
    import os

    from infx.fsio import TooLarge, UnusablePath, read_bytes

    (tmp_path / "file").write_bytes(b"12345")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "zeros").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo")
    assert read_bytes(tmp_path / "link") == b"12345"  # the default still follows (a user's own --point link)
    for name, kind in (("link", "a symbolic link"), ("zeros", "a symbolic link"), ("fifo", "a FIFO")):
        with pytest.raises(UnusablePath, match=kind):
            read_bytes(tmp_path / name, 10, follow_symlinks=False)
    with pytest.raises(UnusablePath, match="a character device"):
        read_bytes("/dev/zero", 10, follow_symlinks=False)
    os.truncate(tmp_path / "file", 1 << 40)  # sparse: refused from its size, before a byte is read
    with pytest.raises(TooLarge, match="1,099,511,627,776 bytes or more"):
        read_bytes(tmp_path / "file", 10, follow_symlinks=False, refuse_larger=True)
    assert len(read_bytes(tmp_path / "file", 10)) == 11  # without refuse_larger: limit + 1, as before


def test_scan_tree_lists_without_entering_links_and_stops_at_its_limits(tmp_path):
    import os

    from infx.fsio import scan_tree

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("x")
    (tmp_path / "a" / "into-root").symlink_to("/")
    (tmp_path / "loop").symlink_to(tmp_path)
    os.mkfifo(tmp_path / "a" / "pipe")
    tree = scan_tree(tmp_path)
    assert [(e.name, e.kind) for e in tree.entries] == [
        ("a", "a folder"),
        ("loop", "a symbolic link"),
        ("a/b", "a folder"),
        ("a/into-root", "a symbolic link"),
        ("a/pipe", "a FIFO"),
        ("a/b/f.txt", "a regular file"),
    ]
    assert [e.name for e in tree.others()] == ["loop", "a/into-root", "a/pipe"] and tree.problems == ()
    deep = tmp_path / "deep"
    os.makedirs(str(deep) + "/d" * 50)
    assert scan_tree(deep, max_depth=5).problems == ("d/d/d/d/d/d/: nested deeper than 5 levels; not listed",)
    assert "more than 3 entries" in scan_tree(tmp_path, max_entries=3).problems[0]


def test_copy_tree_copies_folders_and_regular_files_only(tmp_path):
    import os

    from infx.fsio import copy_tree

    source, target = tmp_path / "logs", tmp_path / "out" / "LOGS"
    (source / "job").mkdir(parents=True)
    (source / "job" / "sweep.log").write_text("ran")
    (source / "job" / "host-file").symlink_to("/etc/hostname")
    (source / "zeros").symlink_to("/dev/zero")
    os.mkfifo(source / "job" / "pipe")
    skipped = copy_tree(source, target)
    assert sorted(skipped) == [
        "job/host-file: a symbolic link, not copied",
        "job/pipe: a FIFO, not copied",
        "zeros: a symbolic link, not copied",
    ]
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    assert copied == ["job", "job/sweep.log"] and (target / "job" / "sweep.log").read_text() == "ran"
