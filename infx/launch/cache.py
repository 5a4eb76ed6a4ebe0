"""infx's srt-slurm cache: one verified checkout per pinned commit, and optionally its srtctl.

Layout under infx's cache folder (:func:`infx.diskcache.cache_home`: ``$INFX_CACHE_DIR``, else
``$XDG_CACHE_HOME/infx``, else ``~/.cache/infx``)::

    srt-slurm/<commit>/      a checkout whose HEAD is <commit> and whose tree is clean
    srtctl/<commit>/         a venv with srtctl installed from that commit (bin/srtctl), its mark
                             (infx-srtctl.json) recording the SHA-256 of everything pip put there
    */<commit>.lock          the entry's lock (flock): seeding, fetching and installing take turns

A launch copies the checkout (fetching it on a miss) and uses the venv when it verifies; a dry
run reads recipes that ship with srt-slurm from the checkout and runs ``srtctl dry-run`` from
the venv. ``seed`` fills the cache from a local clone or a git bundle, without network.

The venv is verified before every use (``cached_srtctl``): its content hash (every file, link
and folder but the mark: path, kind, executable bit, bytes or link target) must equal the one
recorded when it was built, so a planted or changed ``srtctl`` (or a ``.pth`` file added to its
site-packages) is never run; ``install_cached_srtctl`` then rebuilds it under the entry's lock.
A process that rewrites both the venv and its mark is not stopped: it runs as the runner's user
and could as well replace infx itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import InfxError, UsageError, error
from ..diskcache import cache_home
from ..fsio import atomic_write
from ..suggest import did_you_mean
from .lane import load_lane
from .sources import LOCK_SECONDS, _git, _seal, entry_lock, entry_problem
from .srtctl import SrtctlError, install_srtctl

CHECKOUTS = "srt-slurm"
VENVS = "srtctl"
VENV_MARK = "infx-srtctl.json"  # written last: a venv without it is incomplete
MARK_LIMIT = 1 << 16  # bytes of a mark infx reads
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


def venv_digest(venv: Path) -> str:
    """SHA-256 over the venv's tree but its mark: each entry's relative path and kind, a file's
    executable bit and bytes, a link's target (never followed), in sorted order."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(venv, followlinks=False):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(folder) / name
            relative = path.relative_to(venv).as_posix()
            if relative == VENV_MARK:
                continue
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entry = f"L {relative} -> {os.readlink(path)}"
            elif stat.S_ISDIR(info.st_mode):
                entry = f"D {relative}"
            elif stat.S_ISREG(info.st_mode):
                entry = f"F {relative} {'x' if info.st_mode & 0o111 else '-'} {_file_digest(path)}"
            else:  # a FIFO, a device, a socket: never opened, but it changes the digest
                entry = f"S {relative} {stat.S_IFMT(info.st_mode)}"
            digest.update(entry.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _mark(venv: Path) -> dict | None:
    path = venv / VENV_MARK
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MARK_LIMIT:
            return None
        mark = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return mark if isinstance(mark, dict) else None


def srtctl_problem(base: Path, commit: str | None) -> str | None:
    """None when the per-commit venv is complete and verifies by its recorded content hash, else why not."""
    if not commit:
        return "the lane records no commit"
    venv = base / VENVS / commit
    mark = _mark(venv)
    if mark is None:
        return f"no complete srtctl venv for {commit} in {base / VENVS}"
    srtctl = srtctl_path(base, commit)
    if mark.get("commit") != commit or not srtctl.is_file():
        return f"the srtctl venv {venv} is not one of {commit}"
    recorded = mark.get("sha256")
    try:
        actual = venv_digest(venv)
    except OSError as exc:
        return f"the srtctl venv {venv} cannot be read ({exc.strerror or exc})"
    if recorded != actual:
        return (
            f"the srtctl venv {venv} does not match the content hash recorded when it was built "
            "(a file was added, changed or planted)"
        )
    return None


def cached_srtctl(base: Path, commit: str | None) -> Path | None:
    """bin/srtctl of the per-commit venv, when it was completely installed from ``commit`` and
    is still, byte for byte, what was installed (``srtctl_problem``); checked before every use."""
    return (
        None if commit is None or srtctl_problem(base, commit) is not None else srtctl_path(base, commit)
    )  # no commit: srtctl_problem refuses it


def srtctl_path(base: Path, commit: str) -> Path:
    return base / VENVS / commit / "bin" / "srtctl"


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
        return {
            "pin": self.pin,
            "commit": self.commit,
            "outcome": self.outcome,
            "path": self.path,
            "srtctl": self.srtctl,
        }


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
                raise SeedError(
                    f"cannot read {source}: git {step[0]} failed: {(done.stderr or done.stdout).strip()[-500:]}"
                )
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
    """The per-commit srtctl venv: used when it verifies, else (re)built from the cached checkout
    under the entry's lock, and its content hash recorded in its mark."""
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
        mark = {"commit": commit, "installed-from": str(checkout), "sha256": venv_digest(venv)}
        atomic_write(venv / VENV_MARK, json.dumps(mark) + "\n")
        return srtctl


@dataclass(frozen=True, kw_only=True)
class SeedRequest:
    """``infx lane cache-seed``: put the pinned srt-slurm commits of ``lane`` (a name, a runner
    label or a profile path; only ``pins`` when given) found in ``source`` (a clone or a bundle)
    into the cache, and with ``with_srtctl`` a per-commit srtctl venv."""

    lane: str
    root: Path
    source: str  # as given: diagnostics name it so
    pins: tuple[str, ...] = ()
    with_srtctl: bool = False


@dataclass(frozen=True)
class SeedReport:
    lane: str
    cache: Path
    results: list[Seeded]
    ok: bool  # a pin was found, and every pin asked for by name

    def to_json(self) -> dict:
        return {"ok": self.ok, "lane": self.lane, "cache": str(self.cache), "pins": [r.to_json() for r in self.results]}


def seed_lane(request: SeedRequest) -> SeedReport:
    """Seed the cache from ``request.source``, no network: an unknown pin name is a usage error,
    a source that cannot be read (or srtctl that does not install) an InfxError."""
    profile = load_lane(request.lane, request.root)
    unknown = [p for p in request.pins if p not in profile.pins]
    if unknown:
        raise UsageError(
            f"lane {profile.name} has no pin {unknown[0]!r}{did_you_mean(unknown[0], profile.pins)}",
            f"Pins of {profile.file}: {', '.join(profile.pins)}.",
        )
    base = cache_home()
    results = []
    for pin in (profile.pins[p] for p in (request.pins or profile.pins)):
        if pin.commit is None:
            results.append(Seeded(pin.name, "", "unpinned", None))
            continue
        try:
            outcome = seed_checkout(base, Path(request.source).resolve(), pin.commit)
            entry = Seeded(
                pin.name, pin.commit, outcome, str(base / CHECKOUTS / pin.commit) if outcome != "missing" else None
            )
            if request.with_srtctl and outcome != "missing":
                entry.srtctl = str(install_cached_srtctl(base, pin.commit, list(profile.srt_slurm.pip_args)))
        except (SeedError, SrtctlError) as exc:
            detail = getattr(exc, "output", "").strip()[-2000:]
            raise InfxError(
                [
                    error(
                        request.source,
                        None,
                        "cache-seed",
                        f"pin {pin.name}: {exc}" + (f"\n{detail}" if detail else ""),
                        "SOURCE must be a git clone or bundle readable here; --srtctl needs its pip-args to work "
                        "offline.",
                    )
                ]
            ) from exc
        results.append(entry)
    found = [r for r in results if r.outcome in ("seeded", "cached")]
    return SeedReport(
        profile.name, base, results, bool(found) and not (request.pins and len(found) != len(request.pins))
    )
