"""Two launches (or seeds) sharing INFX_CACHE_DIR take turns on a cache entry.

Without the per-commit lock, two concurrent launches fetched into and replaced the same
srt-slurm entry ("git fetch failed: fatal: unpack-objects failed"). Here two real processes
start at the same instant against a local bare repository made from the srt-slurm bundle.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infx.launch.cache import SeedError, seed_checkout, verified_checkout
from infx.launch.sources import FetchError, cached_checkout, entry_problem
from testing.corpus import SRT_SLURM_BUNDLE
from testing.launchkit import git

REPO = Path(__file__).resolve().parents[2]

# Each child waits for GO to appear, then fills the shared cache; it reports how many real
# fetches it made (the wrapper only counts, the fetch is git's).
CHILD = """
import json, sys, time
from pathlib import Path
import infx.launch.sources as sources

url, commit, cache_root, dest, go = sys.argv[1:]
fetches = []
real_fetch = sources.fetch_pinned
def counting_fetch(*args, **kwargs):
    fetches.append(1)
    return real_fetch(*args, **kwargs)
sources.fetch_pinned = counting_fetch
print("ready", flush=True)
while not Path(go).exists():
    time.sleep(0.005)
head = sources.cached_checkout("srt-slurm", url, commit, Path(cache_root), Path(dest), protocols=("file",))
print(json.dumps({"head": head, "fetches": len(fetches)}))
"""


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A bare srt-slurm repository (file:// url) and one of its tagged commits."""
    path = tmp_path_factory.mktemp("upstream") / "srt-slurm.git"
    git("clone", "-q", "--bare", str(SRT_SLURM_BUNDLE), str(path), cwd=path.parent)
    return f"file://{path}", git("rev-parse", "v1.0.50^{commit}", cwd=path)


def start_together(argvs: list[list[str]], go: Path, env: dict) -> list[subprocess.CompletedProcess]:
    children = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for argv in argvs
    ]
    for child in children:
        assert child.stdout.readline().strip() == "ready"
    go.touch()
    results = []
    for child, argv in zip(children, argvs):
        out, err = child.communicate(timeout=300)
        results.append(subprocess.CompletedProcess(argv, child.returncode, out, err))
    return results


def test_two_concurrent_launches_share_one_verified_checkout(bare, tmp_path):
    url, commit = bare
    cache_root = tmp_path / "cache" / "srt-slurm"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argvs = [
        [sys.executable, "-c", CHILD, url, commit, str(cache_root), str(tmp_path / f"launch-{i}"), str(tmp_path / "go")]
        for i in range(2)
    ]
    done = start_together(argvs, tmp_path / "go", env)
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    reports = [json.loads(d.stdout.splitlines()[-1]) for d in done]
    assert [r["head"] for r in reports] == [commit, commit]
    assert sorted(r["fetches"] for r in reports) == [0, 1]  # the second waited and copied the first's entry
    assert entry_problem(cache_root / commit, commit) is None
    for i in range(2):
        assert entry_problem(tmp_path / f"launch-{i}", commit) is None
    assert sorted(p.name for p in cache_root.iterdir()) == sorted([commit, f"{commit}.lock"])  # no .partial left


def test_two_concurrent_cache_seeds_both_succeed_and_each_pin_is_seeded_once(tmp_path):
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "RUNNER_NAME"}
    env.update(PYTHONPATH=str(REPO), INFX_CACHE_DIR=str(cache), GITHUB_WORKSPACE=str(REPO))
    wait = (
        "import sys, time, pathlib, runpy; go = pathlib.Path(sys.argv.pop(1)); print('ready', flush=True)\n"
        "while not go.exists(): time.sleep(0.005)\n"
        "sys.argv[0] = 'infx'; runpy.run_module('infx', run_name='__main__')"
    )
    argv = [
        sys.executable,
        "-c",
        wait,
        str(tmp_path / "go"),
        "lane",
        "cache-seed",
        "gb300-nv",
        "--from",
        str(SRT_SLURM_BUNDLE),
        "--format",
        "json",
    ]
    done = start_together([argv, argv], tmp_path / "go", env)
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    outcomes: dict[str, list[str]] = {}
    for d in done:
        for pin in json.loads(d.stdout)["pins"]:
            outcomes.setdefault(pin["commit"], []).append(pin["outcome"])
    seeded = {commit: sorted(o) for commit, o in outcomes.items() if "missing" not in o}
    assert len(seeded) == 5 and all(o == ["cached", "seeded"] for o in seeded.values()), outcomes
    for commit in seeded:
        assert verified_checkout(cache, commit) == cache / "srt-slurm" / commit
        assert entry_problem(cache / "srt-slurm" / commit, commit) is None  # a launch uses it as it is


def test_a_held_lock_times_out_with_a_clear_message(bare, tmp_path):
    url, commit = bare
    cache_root = tmp_path / "srt-slurm"
    cache_root.mkdir()
    with open(cache_root / f"{commit}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(
            FetchError, match=r"waited 0.3 s for the cache lock .*another infx process is still filling"
        ):
            cached_checkout(
                "srt-slurm", url, commit, cache_root, tmp_path / "dest", protocols=("file",), lock_seconds=0.3
            )
        assert 0.3 <= time.monotonic() - started < 5
        with pytest.raises(SeedError, match="waited 0.3 s for the cache lock"):
            seed_checkout(tmp_path, SRT_SLURM_BUNDLE, commit, lock_seconds=0.3)
    assert not (cache_root / commit).exists() and not (tmp_path / "dest").exists()
    # released: the same call goes through
    assert (
        cached_checkout("srt-slurm", url, commit, cache_root, tmp_path / "dest", protocols=("file",), lock_seconds=0.3)
        == commit
    )


def test_a_symlinked_lock_file_is_refused(bare, tmp_path):
    url, commit = bare
    cache_root = tmp_path / "srt-slurm"
    cache_root.mkdir()
    (tmp_path / "elsewhere").write_text("")
    (cache_root / f"{commit}.lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FetchError, match="cannot open the cache lock .*: it is a symlink"):
        cached_checkout("srt-slurm", url, commit, cache_root, tmp_path / "dest", protocols=("file",))
