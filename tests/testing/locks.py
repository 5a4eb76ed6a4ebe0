"""The hashed locks uv writes (requirements.lock, requirements-dev.lock), read as data."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version


def locked(lock: Path) -> dict[str, list[dict]]:
    """``lock`` as {name: [{version, marker, hashes, via}]} (a name may be pinned twice, under
    exclusive environment markers, e.g. numpy per Python version)."""
    entries: dict[str, list[dict]] = {}
    current: dict = {}
    in_via = False
    for line in lock.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if not line.startswith(" "):
            requirement = Requirement(line.rstrip(" \\"))
            specifier = str(requirement.specifier)
            assert specifier.startswith("==") and "," not in specifier, f"not an exact pin: {line}"
            current = {"version": Version(specifier[2:]), "marker": requirement.marker, "hashes": [], "via": set()}
            entries.setdefault(canonicalize_name(requirement.name), []).append(current)
            in_via = False
            continue
        text = line.strip()
        if text.startswith("--hash=sha256:"):
            current["hashes"].append(text.split(":", 1)[1].rstrip(" \\"))
        elif text.startswith("# via"):
            rest = text[len("# via") :].strip()
            in_via = not rest
            if rest:
                current["via"].add(rest)
        elif in_via and text.startswith("#   "):
            current["via"].add(text[4:].strip())
    return entries


def check_hashed(lock: Path, at_least: int) -> None:
    """Every entry of ``lock`` pinned exactly with SHA-256 hashes and a reason, and the lock written by .ci/lock."""
    entries = locked(lock)
    assert len(entries) >= at_least, sorted(entries)
    for name, pins in entries.items():
        for pin in pins:
            assert pin["hashes"] and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in pin["hashes"]), name
            assert pin["via"], f"{name}: the lock says nothing about why it is there"
    assert lock.read_text().splitlines()[1].strip() == "#    .ci/lock", f"regenerate {lock.name} with .ci/lock"
