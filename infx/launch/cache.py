"""infx's srt-slurm cache: one verified checkout per pinned commit, and optionally its srtctl.

Layout under infx's cache folder (:func:`infx.diskcache.cache_home`: ``$INFX_CACHE_DIR``, else
``$XDG_CACHE_HOME/infx``, else ``~/.cache/infx``)::

    srt-slurm/<commit>/      a checkout whose HEAD is <commit> and whose tree is clean
    srtctl/<commit>/         a venv with srtctl installed from that commit (bin/srtctl)
    */<commit>.lock          the entry's lock (flock): seeding, fetching and installing take turns

A launch copies the checkout (fetching it on a miss) and uses the venv when present; a dry
run reads recipes that ship with srt-slurm from the checkout and runs ``srtctl dry-run`` from
the venv. ``seed`` fills the cache from a local clone or a git bundle, without network.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from .sources import LOCK_SECONDS, _git, _seal, entry_lock, entry_problem

CHECKOUTS = "srt-slurm"
VENVS = "srtctl"
VENV_MARK = "infx-srtctl.json"  # written last: a venv without it is incomplete
SEED_REFS = "refs/infx-seed"


def verified_checkout(base: Path, commit: str | None) -> Path | None:
    """The cached checkout of ``commit`` when it verifies by content, as a launch checks it
    (:func:`infx.launch.sources.entry_problem`)."""
    if not commit:
        return None
    entry = base / CHECKOUTS / commit
    if entry.is_dir() and entry_problem(entry, commit) is None:
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
    outcome: str  # "seeded" | "cached" | "missing", or "unpinned" (the profile records no commit)
    path: str | None
    srtctl: str | None = None

    def to_json(self) -> dict:
        return {"pin": self.pin, "commit": self.commit, "outcome": self.outcome, "path": self.path, "srtctl": self.srtctl}


def seed_checkout(base: Path, source: Path, commit: str, lock_seconds: float = LOCK_SECONDS) -> str:
    """Put a verified checkout of ``commit`` from ``source`` (a clone or a bundle) into the cache.

    Returns "cached" (already there), "seeded", or "missing" (``source`` does not contain the
    commit). Fetches every ref of ``source`` into a scratch repository, checks the commit out
    detached, drops the scratch refs and moves the result into place only once verified, all
    under the entry's lock (the one :func:`infx.launch.sources.cached_checkout` takes).
    """
    root = base / CHECKOUTS
    root.mkdir(parents=True, exist_ok=True)
    with entry_lock(root / commit, lock_seconds, SeedError):
        return _seed_locked(base, root, source, commit)


def _seed_locked(base: Path, root: Path, source: Path, commit: str) -> str:
    if verified_checkout(base, commit):
        return "cached"
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
        _seal(tmp)  # the entry a fetch would have made: our config, no hooks or info/
        problem = entry_problem(tmp, commit)
        if problem:
            raise SeedError(f"the checkout seeded from {source} is not {commit}: {problem}")
        entry = root / commit
        if entry.exists():  # present but unverified (dirty or wrong HEAD): replace it
            shutil.rmtree(entry)
        tmp.rename(entry)
        return "seeded"
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def install_cached_srtctl(base: Path, commit: str, pip_args: list[str], lock_seconds: float = LOCK_SECONDS) -> Path:
    """The per-commit srtctl venv (installed from the cached checkout unless already complete)."""
    from .srtctl import install_srtctl

    present = cached_srtctl(base, commit)
    if present:
        return present
    venv = base / VENVS / commit
    venv.parent.mkdir(parents=True, exist_ok=True)
    with entry_lock(venv, lock_seconds, SeedError):
        present = cached_srtctl(base, commit)  # another process may have installed it while we waited
        if present:
            return present
        checkout = verified_checkout(base, commit)
        if checkout is None:
            raise SeedError(f"no verified checkout of {commit} in {base / CHECKOUTS}; seed it first")
        if venv.exists():
            shutil.rmtree(venv)
        srtctl = install_srtctl(checkout, venv, pip_args)
        (venv / VENV_MARK).write_text(json.dumps({"commit": commit, "installed-from": str(checkout)}) + "\n")
        return srtctl
