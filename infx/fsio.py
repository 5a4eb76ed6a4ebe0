"""Files read and written so that nothing is lost: a reader (or a crash) sees the old file or
the new one, never half of one, and nothing but a regular file is read or replaced.

- Reads and appends take regular files only: a FIFO would block forever, /dev/zero never
  ends.
- Writes go to a temporary file in the same folder (``.NAME.<pid>.<random>.tmp``), which is
  fsynced, renamed over the target, and the folder fsynced, so the rename survives a crash.
  A disposable file (infx's cache, which checks what it reads) may skip both fsyncs
  (``durable=False``): it is still renamed into place whole, so a running reader never sees
  half of it, but after a power loss it may be empty or damaged.
  The temporary file is removed on every exit that runs code; one left by a killed process
  (its pid no longer running) is removed by the next write of the same file.
- A target that exists must be a regular file: replacing a device node, FIFO or folder with a
  regular file destroys it (as root, ``--output /dev/full`` did). A symbolic link is refused
  too unless the caller asks to write through it; then its target is replaced, not the link.
- Folders that others filled (a point's artifact, a job's logs) are listed and copied without
  following a single symbolic link and without opening a FIFO or device (``scan_tree``,
  ``copy_tree``, ``read_bytes(..., follow_symlinks=False)``): what is not a regular file or a
  folder is reported, never read.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

TEMP_SUFFIX = ".tmp"
_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


class UnusablePath(OSError):
    """A path that exists but is not something infx may read or replace (errno EINVAL)."""

    def __init__(self, path: Path | str, problem: str):
        super().__init__(errno.EINVAL, problem, str(path))


def _require_regular(path: Path | str, mode: int, why: str = "") -> None:
    """UnusablePath unless ``mode`` is a regular file's, naming what the path is instead."""
    if not stat.S_ISREG(mode):
        raise UnusablePath(path, f"is {_KINDS.get(stat.S_IFMT(mode), 'not a regular file')}, not a regular file{why}")


def printable(text: str) -> str:
    """A file name (or a path) as text a verdict, a row and results.json can carry: bytes that are
    not UTF-8 (which Python keeps as lone surrogates) become "?"."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def is_file(path: Path | str) -> bool:
    """Path.is_file that never raises (a 300-character name, a symlink loop: False)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


class TooLarge(UnusablePath):
    """A regular file larger than what its reader takes."""

    def __init__(self, path: Path | str, size: int, limit: int):
        super().__init__(path, f"is {size:,} bytes or more, larger than the {limit:,} bytes infx reads of it")
        self.errno = errno.EFBIG


def kind_of(mode: int) -> str:
    """What a file mode is, in words: "a regular file", "a folder", "a FIFO", "a symbolic link"..."""
    return "a regular file" if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def open_regular(path: Path | str, follow_symlinks: bool = True):
    """A regular file opened for reading (binary, blocking), and its status. Anything else raises
    before a byte is read: UnusablePath (a FIFO opens without blocking, then is refused; with
    ``follow_symlinks=False`` a symbolic link is refused, O_NOFOLLOW), or the OSError of the open."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks and os.path.islink(path):
            raise UnusablePath(path, "is a symbolic link; infx does not follow links here") from None
        raise
    try:
        status = os.fstat(descriptor)
        _require_regular(path, status.st_mode)
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb"), status
    except BaseException:
        os.close(descriptor)
        raise


def read_bytes(
    path: Path | str, limit: int | None = None, *, follow_symlinks: bool = True, refuse_larger: bool = False
) -> bytes:
    """Every byte of a regular file (at most ``limit + 1``, so a caller can tell it is too long).
    Anything else raises before a byte is read (``open_regular``).

    ``follow_symlinks=False``: a symbolic link (the last part of ``path``) is refused, not
    followed. ``refuse_larger``: a file longer than ``limit`` raises TooLarge, before a byte is
    read when its size says so (a sparse 1 TB file costs nothing)."""
    handle, status = open_regular(path, follow_symlinks)
    wanted = -1 if limit is None else limit + 1
    with handle:
        if refuse_larger and limit is not None and status.st_size > limit:
            raise TooLarge(path, status.st_size, limit)
        # As much as the file holds (a buffer of ``limit`` bytes would be allocated up front), then
        # whatever it grew by since, up to the limit.
        data = handle.read(status.st_size + 1 if wanted < 0 else min(wanted, status.st_size + 1))
        if len(data) > status.st_size and len(data) != wanted:
            data += handle.read(-1 if wanted < 0 else wanted - len(data))
    if refuse_larger and limit is not None and len(data) > limit:  # it grew while being read
        raise TooLarge(path, len(data), limit)
    return data


@dataclass(frozen=True)
class Entry:
    """One thing found under a folder: its path relative to the folder ("/"-separated), what it
    is (``kind_of``: "a regular file", "a folder", "a symbolic link", ...) and its size."""

    name: str
    kind: str
    size: int = 0

    @property
    def is_file(self) -> bool:
        return self.kind == REGULAR

    @property
    def is_folder(self) -> bool:
        return self.kind == FOLDER


REGULAR, FOLDER = "a regular file", "a folder"


@dataclass(frozen=True)
class Tree:
    """What ``scan_tree`` found: every entry (folders first, then by name, level by level) and
    what it could not list (a folder it may not read, one past the depth or entry limit)."""

    entries: tuple[Entry, ...]
    problems: tuple[str, ...] = ()

    def files(self, under: str = "") -> list[Entry]:
        prefix = f"{under.rstrip('/')}/" if under else ""
        return [e for e in self.entries if e.is_file and e.name.startswith(prefix)]

    def others(self) -> list[Entry]:
        """Entries that are neither regular files nor folders: never opened, never copied."""
        return [e for e in self.entries if not (e.is_file or e.is_folder)]

    def get(self, name: str) -> Entry | None:
        return next((e for e in self.entries if e.name == name), None)


def scan_tree(root: Path | str, max_depth: int = 32, max_entries: int = 100_000) -> Tree:
    """Every entry under ``root`` without following a symbolic link (a link is listed as one,
    never entered) and without opening anything but folders. Breadth first, no recursion: a
    folder nested 10,000 deep is listed to ``max_depth`` and the rest named as a problem.
    ``root`` itself must be a folder that can be listed, else its OSError is raised."""
    entries: list[Entry] = []
    problems: list[str] = []
    level = [""]
    for depth in range(max_depth + 1):
        below = []
        for relative in level:
            where = os.path.join(root, relative) if relative else os.fspath(root)
            try:
                with os.scandir(where) as listing:
                    found = sorted(listing, key=lambda item: item.name)
            except OSError as exc:
                if not relative:
                    raise
                problems.append(f"{relative}/: cannot be listed ({exc.strerror or exc})")
                continue
            for item in found:
                name = f"{relative}/{item.name}" if relative else item.name
                try:
                    status = item.stat(follow_symlinks=False)
                except OSError as exc:  # gone since the listing
                    problems.append(f"{name}: {exc.strerror or exc}")
                    continue
                if len(entries) >= max_entries:
                    problems.append(f"more than {max_entries:,} entries; the rest were not listed")
                    return Tree(tuple(entries), tuple(problems))
                entry = Entry(name, kind_of(status.st_mode), status.st_size if stat.S_ISREG(status.st_mode) else 0)
                entries.append(entry)
                if entry.is_folder:
                    below.append(name)
        if not below:
            return Tree(tuple(entries), tuple(problems))
        if depth == max_depth:
            problems += [f"{name}/: nested deeper than {max_depth} levels; not listed" for name in below[:3]]
            return Tree(tuple(entries), tuple(problems))
        level = below
    return Tree(tuple(entries), tuple(problems))


COPY_CHUNK = 1 << 20


def copy_regular(source: Path | str, target: Path | str) -> int:
    """Copy one regular file, never through a symbolic link and never from a FIFO or device
    (``open_regular``); returns the bytes copied. The target is replaced whole (``replacing``,
    not synced: logs are disposable until uploaded)."""
    copied = 0
    handle, _ = open_regular(source, follow_symlinks=False)
    with handle, replacing(target, durable=False) as temporary, open(temporary, "wb") as out:
        while chunk := handle.read(COPY_CHUNK):
            out.write(chunk)
            copied += len(chunk)
    return copied


def copy_tree(source: Path | str, target: Path | str, max_depth: int = 32, max_entries: int = 100_000) -> list[str]:
    """Copy the folders and regular files under ``source`` into ``target`` (merged with what is
    there); a symbolic link, FIFO, device or socket is skipped, not followed or opened. Returns
    one line per thing not copied (what it is, or why), relative to ``source``."""
    tree = scan_tree(source, max_depth, max_entries)
    skipped = list(tree.problems)
    Path(target).mkdir(parents=True, exist_ok=True)
    for entry in tree.entries:
        destination = os.path.join(target, entry.name)
        try:
            if entry.is_folder:
                os.makedirs(destination, exist_ok=True)
            elif entry.is_file:
                copy_regular(os.path.join(source, entry.name), destination)
            else:
                skipped.append(f"{entry.name}: {entry.kind}, not copied")
        except OSError as exc:
            skipped.append(f"{entry.name}: not copied ({exc.strerror or exc})")
    return skipped


def append(path: Path | str, text: str) -> None:
    """Append ``text`` (UTF-8) to a regular file (created if missing) in one write: what
    $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY take. A FIFO (which would block until a reader
    came), a device or a folder raises UnusablePath before a byte is written."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = stat.S_IFREG
    _require_regular(path, mode)  # said before opening: a FIFO without a reader would only answer ENXIO
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        _require_regular(path, os.fstat(descriptor).st_mode)
        os.set_blocking(descriptor, True)
        data = text.encode("utf-8")
        while data:
            data = data[os.write(descriptor, data) :]
    finally:
        os.close(descriptor)


def write_target(path: Path | str, through_symlink: bool = False) -> Path:
    """The file a write of ``path`` replaces: ``path`` itself when it is new or a regular file,
    a symlink's target when ``through_symlink``; anything else raises UnusablePath."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    if stat.S_ISLNK(mode):
        if not through_symlink:
            raise UnusablePath(
                path, "is a symbolic link; infx replaces only regular files unless asked to write through a link"
            )
        target = Path(os.path.realpath(path))  # on a loop, realpath stops at a link
        if os.path.islink(target):
            raise UnusablePath(path, "is a symbolic link that does not end at a file (a loop)")
        return write_target(target)
    _require_regular(path, mode, "; infx replaces only regular files")
    return path


def _left_by_a_gone_writer(name: str, prefix: str) -> bool:
    """``name`` is one of our temporaries (tempfile.mkstemp's random part: 8 of [a-z0-9_];
    nothing else in the folder is taken for one) whose writer no longer runs; a name without a
    pid is from a version that did not record it."""
    match = re.fullmatch(re.escape(prefix) + r"(?:(\d+)\.)?[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX), name)
    if match is None:
        return False
    return match[1] is None or (int(match[1]) != os.getpid() and not _running(int(match[1])))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporary files a killed write of ``path`` left."""
    prefix = f".{path.name}."
    removed: list[Path] = []
    try:
        candidates = [entry for entry in os.scandir(path.parent) if entry.name.startswith(prefix)]
    except OSError:
        return removed
    for entry in candidates:
        if not _left_by_a_gone_writer(entry.name, prefix):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


def _fsync_path(path: Path | str, directory: bool = False) -> None:
    descriptor = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0) | os.O_CLOEXEC)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@contextmanager
def replacing(path: Path | str, through_symlink: bool = False, durable: bool = True) -> Iterator[Path]:
    """A temporary path in ``path``'s folder (created if missing) to write; on success it is
    fsynced and replaces ``path`` (keeping an existing file's permissions, else 0644), and the
    folder is fsynced (neither fsync when not ``durable``); on any error, or an interrupt, it
    is removed."""
    path = write_target(path, through_symlink)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    mode = os.stat(path).st_mode & 0o777 if is_file(path) else 0o644
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX)
    except OSError as exc:  # a read-only folder: name the file that could not be written
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    os.close(handle)
    try:
        yield Path(temporary)
        os.chmod(temporary, mode)
        if durable:
            _fsync_path(temporary)
        os.replace(temporary, path)
    except OSError as exc:  # name the file being written, not its temporary (a full disk names neither)
        Path(temporary).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    if not durable:
        return
    try:
        _fsync_path(path.parent, directory=True)
    except OSError as exc:  # a file system that cannot sync folders; the file itself is synced
        if exc.errno != errno.EINVAL:
            raise


def atomic_write(path: Path | str, content: str | bytes, through_symlink: bool = False, durable: bool = True) -> None:
    """Write all of ``content`` (text as UTF-8, newlines untouched) to ``path`` or nothing."""
    with replacing(path, through_symlink, durable) as temporary:
        temporary.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
