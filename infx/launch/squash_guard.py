"""Keep a squash file only when it is the one imported for this image, else import it again.

    squash_guard.py verify SQUASH IMAGE            exit 0 when SQUASH is the verified import of IMAGE
    squash_guard.py SQUASH IMAGE -- IMPORT ARGV…   keep a verified SQUASH, else replace it with IMPORT's

The import mode runs on a compute node under ``flock <SQUASH>.lock`` (the lane's squash-import
template), so the check and the import are one locked step: a launch that waited for the lock
finds the file another launch just imported and keeps it instead of deleting it.

Squash files live in a directory shared by every job of the runners, and their names come
from the image reference (``/ : @ #`` become ``_``, so two references can share one). A file
that merely unpacks (``unsquashfs -l``) proves nothing about what it holds, so after an
import that unpacks, the guard records ``<SQUASH>.infx-digest``: the image reference (its
``@sha256:`` digest included when it has one), the file's size and SHA-256. A squash counts
as present only when that record names this exact image and the file still hashes to it;
a truncated, substituted or foreign file is removed and imported again.

Standalone (stdlib only): the launcher copies this file into its launch directory, which
compute nodes see.
"""

import hashlib
import json
import os
import subprocess
import sys

RECORD_SUFFIX = ".infx-digest"
CHUNK = 8 * 1024 * 1024


def record_path(squash: str) -> str:
    return squash + RECORD_SUFFIX


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def problem(squash: str, image: str) -> "str | None":
    """Why ``squash`` is not the verified import of ``image`` (None when it is)."""
    if not os.path.isfile(squash):
        return "it does not exist"
    try:
        with open(record_path(squash)) as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return f"it has no readable {RECORD_SUFFIX} record (imported without infx, or the import was cut short)"
    if not isinstance(record, dict) or record.get("image") != image:
        return f"it was imported for {record.get('image') if isinstance(record, dict) else None!r}, not {image!r}"
    if os.path.getsize(squash) != record.get("size"):
        return f"its size is {os.path.getsize(squash)}, not the {record.get('size')} recorded at import"
    if sha256_of(squash) != record.get("sha256"):
        return "its SHA-256 differs from the one recorded at import"
    return None


def write_record(squash: str, image: str) -> None:
    record = {"image": image, "size": os.path.getsize(squash), "sha256": sha256_of(squash)}
    temporary = f"{record_path(squash)}.{os.getpid()}.tmp"
    with open(temporary, "w") as handle:
        json.dump(record, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, record_path(squash))


def remove(squash: str) -> None:
    for path in (record_path(squash), squash):
        if os.path.lexists(path):
            os.remove(path)


def verify(squash: str, image: str) -> int:
    found = problem(squash, image)
    if found:
        print(f"{squash}: not a verified import of {image}: {found}")
        return 1
    print(f"{squash}: the verified import of {image}")
    return 0


def guarded_import(squash: str, image: str, command: list) -> int:
    found = problem(squash, image)
    if found is None:
        print(f"{squash} is the verified import of {image} (SHA-256 recorded at import); keeping it")
        return 0
    if os.path.lexists(squash) or os.path.lexists(record_path(squash)):
        print(f"{squash} cannot be used ({found}); removing it and importing again")
    remove(squash)
    sys.stdout.flush()
    code = subprocess.run(command).returncode
    if code != 0:
        return code
    check = subprocess.run(["unsquashfs", "-l", squash], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if check.returncode != 0:
        print(f"{squash}: the import does not unpack ({check.stderr.strip()[-300:]}); removing it", file=sys.stderr)
        remove(squash)
        return 1
    write_record(squash, image)
    print(f"{squash}: imported {image}; SHA-256 recorded in {record_path(squash)}")
    return 0


USAGE = "usage: squash_guard.py verify SQUASH IMAGE | squash_guard.py SQUASH IMAGE -- IMPORT ARGV…"


def main(argv: list) -> int:
    if len(argv) == 3 and argv[0] == "verify":
        return verify(argv[1], argv[2])
    if len(argv) >= 4 and argv[2] == "--":
        return guarded_import(argv[0], argv[1], argv[3:])
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
