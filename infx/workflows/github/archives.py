"""Archives: a downloaded artifact (a zip) read or unpacked only when it is capped, contained and
complete: every member checked first (count, names, kinds, sizes, ratio), a JSON file read
strictly, a folder written whole or not at all.

Effects: filesystem (`extract_artifact` writes a folder); no network: the archive is handed in.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
import struct
import uuid
import zipfile
import zlib
from pathlib import Path
from typing import IO

from ...diagnostics import InfxError, error
from ...jsonfast import parse

MAX_MEMBERS = 10_000
MAX_MEMBER_BYTES = 512 << 20
MAX_TOTAL_BYTES = 2 << 30
MAX_RATIO = 100  # uncompressed : compressed, for members past RATIO_FLOOR
RATIO_FLOOR = 1 << 20  # small members may compress better than any real file does (runs of one byte)
MAX_JSON_BYTES = 64 << 20  # one JSON file read out of an archive (plan.json, results.json)
PARTIAL = ".partial-"  # <folder>.partial-<random>: an extraction under way, renamed into place when complete


class ArchiveProblem(ValueError):
    """An archive infx does not take: not a zip, a member outside its folder, a link, past a cap."""


def _refused(message: str) -> InfxError:
    """An archive refused as infx reports it: one line (rule github-artifact)."""
    return InfxError(error("<github>", None, "github-artifact", message))


def _zip(archive: bytes | IO[bytes]) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(archive) if isinstance(archive, (bytes, bytearray)) else archive)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveProblem(f"not a zip archive ({exc})") from None


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    parts = name.replace("\\", "/").split("/")
    kind = stat.S_IFMT(info.external_attr >> 16)
    checks = (
        (not name or "\x00" in name, "has an empty name or one with a NUL"),
        (name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) is not None, "has an absolute path"),
        (".." in parts, "reaches outside its folder (`..`)"),
        (kind == stat.S_IFLNK, "is a symbolic link"),
        (kind not in (0, stat.S_IFREG, stat.S_IFDIR), "is a special file (a device, a FIFO, a socket)"),
        (info.file_size > MAX_MEMBER_BYTES, f"unpacks to {info.file_size} bytes, more than {MAX_MEMBER_BYTES}"),
        (
            info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(1, info.compress_size),
            f"unpacks {info.compress_size} bytes to {info.file_size} (more than {MAX_RATIO}:1, a zip bomb)",
        ),
    )
    return next((why for bad, why in checks if bad), None)


def checked_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's members when every one is acceptable (count, names, kinds, sizes, ratio); else ArchiveProblem."""
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ArchiveProblem(f"it holds {len(infos)} members, more than {MAX_MEMBERS}")
    total, seen = 0, set()
    for info in infos:
        problem = _member_problem(info)
        if problem:
            raise ArchiveProblem(f"its member {info.filename[:200]!r} {problem}")
        key = info.filename.rstrip("/")
        if key in seen:
            raise ArchiveProblem(f"its member {info.filename[:200]!r} appears twice")
        seen.add(key)
        total += info.file_size
        if total > MAX_TOTAL_BYTES:
            raise ArchiveProblem(f"its members unpack to more than {MAX_TOTAL_BYTES} bytes")
    return infos


# what reading a hostile archive raises: a corrupt header or stream, an unknown method, encryption
ARCHIVE_ERRORS = (
    zipfile.BadZipFile,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OverflowError,
    zlib.error,
    struct.error,
)


def json_in_archive(archive: bytes | IO[bytes], name: str):
    """The JSON file ``name`` in a downloaded artifact (a zip archive), read strictly
    (infx.jsonfast.parse); ValueError when the archive, the member (capped, no link) or its
    JSON (or its UTF-8) is not acceptable."""
    try:
        with _zip(archive) as opened:
            info = opened.getinfo(name)
            problem = _member_problem(info)
            if problem:
                raise ArchiveProblem(f"{name} {problem}")
            if info.file_size > MAX_JSON_BYTES:
                raise ArchiveProblem(f"{name} has {info.file_size} bytes, more than {MAX_JSON_BYTES}")
            with opened.open(info) as member:
                text = member.read(MAX_JSON_BYTES + 1)
    except KeyError:
        raise ArchiveProblem(f"there is no {name} in it") from None
    except ArchiveProblem:
        raise
    except ARCHIVE_ERRORS as exc:
        raise ArchiveProblem(f"its {name} cannot be read ({type(exc).__name__}: {str(exc)[:120]})") from None
    if len(text) > MAX_JSON_BYTES:
        raise ArchiveProblem(f"{name} is larger than {MAX_JSON_BYTES} bytes")
    return parse(text)


def extract_artifact(archive: bytes | IO[bytes], dest, what: str) -> Path:
    """Unzip one downloaded artifact into ``dest``: every member checked first (checked_members),
    written without following any link into a fresh folder beside ``dest``, which replaces
    ``dest`` only once complete; so ``dest`` is whole or absent, and a partial folder a crashed
    run left behind is discarded. A problem is one line (rule github-artifact)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for leftover in dest.parent.glob(f".{dest.name}{PARTIAL}*"):
        shutil.rmtree(leftover, ignore_errors=True)
    partial = dest.parent / f".{dest.name}{PARTIAL}{uuid.uuid4().hex[:12]}"
    partial.mkdir()
    try:
        with _zip(archive) as opened:
            for info in checked_members(opened):
                _extract_member(opened, info, partial)
        if dest.is_symlink() or dest.is_file():
            dest.unlink()
        elif dest.exists():
            shutil.rmtree(dest)
        partial.rename(dest)
        return dest
    except ArchiveProblem as exc:
        raise _refused(f"{what}: refused, {exc}") from None
    except ARCHIVE_ERRORS as exc:
        raise _refused(f"{what}: refused, it cannot be unpacked ({type(exc).__name__}: {str(exc)[:120]})") from None
    except OSError as exc:
        raise _refused(f"{what}: cannot be written to {dest.parent} ({exc.strerror or exc})") from None
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)


def _extract_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, root: Path) -> None:
    parts = [p for p in info.filename.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return
    target = root.joinpath(*parts)
    if info.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)  # folders made here, under a fresh root: no link among them
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    written = 0
    with os.fdopen(fd, "wb") as out, archive.open(info) as member:
        while chunk := member.read(1 << 16):
            written += len(chunk)
            if written > info.file_size:
                raise ArchiveProblem(f"its member {info.filename[:200]!r} unpacks to more than it declares")
            out.write(chunk)
