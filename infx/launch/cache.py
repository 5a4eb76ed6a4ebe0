"""infx's srt-slurm cache: one verified checkout per pinned commit, and optionally its srtctl.

Layout under infx's cache folder (:func:`infx.diskcache.cache_home`: ``$INFX_CACHE_DIR``, else
``$XDG_CACHE_HOME/infx``, else ``~/.cache/infx``)::

    srt-slurm/<commit>/      a checkout whose HEAD is <commit> and whose tree is clean
    srtctl/<commit>/         a venv with srtctl installed from that commit (bin/srtctl)

A launch copies the checkout (fetching it on a miss) and uses the venv when present; a dry
run reads recipes that ship with srt-slurm from the checkout and runs ``srtctl dry-run`` from
the venv. ``seed`` fills the cache from a local clone or a git bundle, without network.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..diskcache import cache_home
from .sources import _git, head_of

CHECKOUTS = "srt-slurm"
VENVS = "srtctl"
VENV_MARK = "infx-srtctl.json"  # written last: a venv without it is incomplete
SEED_REFS = "refs/infx-seed"


def verified_checkout(base: Path, commit: str | None) -> Path | None:
    """The cached checkout of ``commit`` when its HEAD is that commit and its tree is clean."""
    if not commit:
        return None
    entry = base / CHECKOUTS / commit
    if entry.is_dir() and head_of(entry) == commit and _git("status", "--porcelain", cwd=entry).stdout == "":
        return entry
    return None


def cached_srtctl(base: Path, commit: str | None) -> Path | None:
    """bin/srtctl of the per-commit venv, when it was completely installed from ``commit``."""
    if not commit:
        return None
    venv = base / VENVS / commit
    try:
        mark = json.loads((venv / VENV_MARK).read_text())
    except (OSError, ValueError):
        return None
    srtctl = venv / "bin" / "srtctl"
    return srtctl if mark.get("commit") == commit and srtctl.is_file() else None


class SeedError(RuntimeError):
    pass


@dataclass
class Seeded:
    pin: str
    commit: str
    outcome: str  # "seeded" | "cached" | "missing"
    path: str | None
    srtctl: str | None = None

    def to_json(self) -> dict:
        return {"pin": self.pin, "commit": self.commit, "outcome": self.outcome, "path": self.path, "srtctl": self.srtctl}


def seed_checkout(base: Path, source: Path, commit: str) -> str:
    """Put a verified checkout of ``commit`` from ``source`` (a clone or a bundle) into the cache.

    Returns "cached" (already there), "seeded", or "missing" (``source`` does not contain the
    commit). Fetches every ref of ``source`` into a scratch repository, checks the commit out
    detached, drops the scratch refs and moves the result into place only once verified.
    """
    if verified_checkout(base, commit):
        return "cached"
    root = base / CHECKOUTS
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{commit}.seed"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        # SOURCE is a local clone or bundle: git reads it over the file transport only.
        for step in (("init", "-q", "."), ("fetch", "-q", "--no-tags", "--", str(source), f"+refs/*:{SEED_REFS}/*")):
            done = _git(*step, cwd=tmp, protocols=("file",))
            if done.returncode != 0:
                raise SeedError(f"cannot read {source}: git {step[0]} failed: {(done.stderr or done.stdout).strip()[-500:]}")
        if _git("cat-file", "-e", f"{commit}^{{commit}}", cwd=tmp).returncode != 0:
            return "missing"
        done = _git("checkout", "-q", "--detach", commit, cwd=tmp)
        if done.returncode != 0:
            raise SeedError(f"cannot check out {commit} from {source}: {done.stderr.strip()[-500:]}")
        for ref in _git("for-each-ref", "--format=%(refname)", SEED_REFS, cwd=tmp).stdout.split():
            _git("update-ref", "-d", ref, cwd=tmp)  # the cache entry holds HEAD only, like a fetched one
        if head_of(tmp) != commit:
            raise SeedError(f"the checkout seeded from {source} is at {head_of(tmp)}, not {commit}")
        entry = root / commit
        if entry.exists():  # present but unverified (dirty or wrong HEAD): replace it
            shutil.rmtree(entry)
        tmp.rename(entry)
        return "seeded"
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def install_cached_srtctl(base: Path, commit: str, pip_args: list[str]) -> Path:
    """The per-commit srtctl venv (installed from the cached checkout unless already complete)."""
    from .srtctl import install_srtctl

    present = cached_srtctl(base, commit)
    if present:
        return present
    checkout = verified_checkout(base, commit)
    if checkout is None:
        raise SeedError(f"no verified checkout of {commit} in {base / CHECKOUTS}; seed it first")
    venv = base / VENVS / commit
    if venv.exists():
        shutil.rmtree(venv)
    srtctl = install_srtctl(checkout, venv, pip_args)
    (venv / VENV_MARK).write_text(json.dumps({"commit": commit, "installed-from": str(checkout)}) + "\n")
    return srtctl
