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
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

TEMP_SUFFIX = ".tmp"
_KINDS = {stat.S_IFDIR: "a folder", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFLNK: "a symbolic link"}


class UnusablePath(OSError):
    """A path that exists but is not something infx may read or replace (errno EINVAL)."""

    def __init__(self, path: Path | str, problem: str):
        super().__init__(errno.EINVAL, problem, str(path))


def _require_regular(path: Path | str, mode: int, why: str = "") -> None:
    """UnusablePath unless ``mode`` is a regular file's, naming what the path is instead."""
    if not stat.S_ISREG(mode):
        raise UnusablePath(path, f"is {_KINDS.get(stat.S_IFMT(mode), 'not a regular file')}, not a regular file{why}")


def is_file(path: Path | str) -> bool:
    """Path.is_file that never raises (a 300-character name, a symlink loop: False)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_bytes(path: Path | str, limit: int | None = None) -> bytes:
    """Every byte of a regular file (at most ``limit + 1``, so a caller can tell it is too long).
    Anything else raises before a byte is read: UnusablePath, or the OSError of the open."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO opens without a writer
    try:
        _require_regular(path, os.fstat(descriptor).st_mode)
        os.set_blocking(descriptor, True)
        handle = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    with handle:
        return handle.read(-1 if limit is None else limit + 1)


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
            data = data[os.write(descriptor, data):]
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
            raise UnusablePath(path, "is a symbolic link; infx replaces only regular files unless asked to write through a link")
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
    removed = []
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
