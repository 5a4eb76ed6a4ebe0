"""infx's srt-slurm cache seeded from the real bundle (no network), and dry runs that read from it.

Recipes that ship with srt-slurm are resolved and checked in a dry run once the pinned commit
is in the cache; `infx lane cache-seed` puts it there from a git bundle or a local clone.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from infx.launch.cache import verified_checkout
from testing.cli import run_cli
from testing.corpus import SRT_SLURM_BUNDLE
from testing.launchkit import git

REPO = Path(__file__).resolve().parents[2]
NVIDIA_PINS = {
    "nvidia-v1.0.25",
    "nvidia-v1.0.36",
    "nvidia-v1.0.50",
    "nvidia-sa-submission-q2-2026",
    "nvidia-gb200-dsv4-recipes",
}


def infx(*argv, cache: Path, cwd: Path = REPO, **kwargs) -> subprocess.CompletedProcess:
    return run_cli(*argv, cwd=cwd, env={"INFX_CACHE_DIR": str(cache), "GITHUB_WORKSPACE": str(cwd)}, **kwargs)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A cache holding the five NVIDIA pins of runners/gb300-nv.yaml, seeded from the bundle."""
    cache = tmp_path_factory.mktemp("infx-cache")
    done = infx("lane", "cache-seed", "gb300-nv", "--from", str(SRT_SLURM_BUNDLE), "--format", "json", cache=cache)
    assert done.returncode == 0, done.stdout + done.stderr
    return cache, json.loads(done.stdout)


def test_seed_from_the_bundle_puts_a_verified_checkout_per_pinned_commit(seeded, lane):
    cache, body = seeded
    outcomes = {p["pin"]: p["outcome"] for p in body["pins"]}
    assert outcomes == {
        **{name: "seeded" for name in NVIDIA_PINS},
        "sa-schema2": "missing",
        "power-producer": "missing",
    }
    for name in NVIDIA_PINS:
        commit = lane.pins[name].commit
        entry = verified_checkout(cache, commit)
        assert entry == cache / "srt-slurm" / commit and (entry / "pyproject.toml").is_file()
        assert git("for-each-ref", cwd=entry) == ""  # only HEAD, like a fetched cache entry
    assert not [p for p in (cache / "srt-slurm").iterdir() if p.name.startswith(".")]  # no scratch left
    again = infx(
        "lane", "cache-seed", "gb300-nv", "--from", str(SRT_SLURM_BUNDLE), "--pin", "nvidia-v1.0.50", cache=cache
    )
    assert again.returncode == 0 and "cached" in again.stdout


def test_seed_from_a_local_clone_and_what_it_refuses(tmp_path, lane):
    clone = tmp_path / "clone"
    git("clone", "-q", "-b", "v1.0.36", str(SRT_SLURM_BUNDLE), str(clone), cwd=tmp_path)
    cache = tmp_path / "cache"
    done = infx("lane", "cache-seed", "gb300-nv", "--from", str(clone), "--pin", "nvidia-v1.0.36", cache=cache)
    assert done.returncode == 0, done.stderr
    assert verified_checkout(cache, lane.pins["nvidia-v1.0.36"].commit)
    # a pin the clone does not hold: exit 1, nothing written for it
    missing = infx("lane", "cache-seed", "gb300-nv", "--from", str(clone), "--pin", "power-producer", cache=cache)
    assert missing.returncode == 1 and "missing" in missing.stdout
    assert not (cache / "srt-slurm" / lane.pins["power-producer"].commit).exists()
    unknown = infx("lane", "cache-seed", "gb300-nv", "--from", str(clone), "--pin", "nvidia-v1.0.5", cache=cache)
    assert unknown.returncode == 2 and "did you mean 'nvidia-v1.0.50'" in unknown.stderr
    not_git = tmp_path / "not-a-repo"
    not_git.write_text("hello")
    bad = infx("lane", "cache-seed", "gb300-nv", "--from", str(not_git), "--pin", "nvidia-v1.0.25", cache=cache)
    assert bad.returncode == 1 and "error[cache-seed]" in bad.stderr and "Traceback" not in bad.stderr
    entries = sorted(
        p.name for p in (cache / "srt-slurm").iterdir() if not p.name.endswith(".lock")
    )  # locks are not entries
    assert entries == [lane.pins["nvidia-v1.0.36"].commit]


def test_a_dirty_cache_entry_is_not_used(tmp_path, lane):
    cache = tmp_path / "cache"
    assert (
        infx(
            "lane", "cache-seed", "gb300-nv", "--from", str(SRT_SLURM_BUNDLE), "--pin", "nvidia-v1.0.25", cache=cache
        ).returncode
        == 0
    )
    commit = lane.pins["nvidia-v1.0.25"].commit
    (cache / "srt-slurm" / commit / "README.md").write_text("edited\n")
    assert verified_checkout(cache, commit) is None
    reseed = infx(
        "lane", "cache-seed", "gb300-nv", "--from", str(SRT_SLURM_BUNDLE), "--pin", "nvidia-v1.0.25", cache=cache
    )
    assert reseed.returncode == 0 and "seeded" in reseed.stdout and verified_checkout(cache, commit)


def dry_run(point: dict, cache: Path, tmp: Path, root: Path = REPO) -> tuple[int, dict, str]:
    path = tmp / "point.json"
    path.write_text(json.dumps(point))
    done = infx(
        "launch",
        "--lane",
        "gb300-nv",
        "--point",
        str(path),
        "--dry-run",
        "--format",
        "json",
        "--output-dir",
        str(tmp),
        cache=cache,
        cwd=root,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


def config_file(point: dict) -> str:
    return next(s for s in point["prefill"]["additional-settings"] if s.startswith("CONFIG_FILE=")).split("=", 1)[1]


def test_every_bundled_row_resolves_its_recipe_once_the_cache_is_seeded(seeded, points, lane, tmp_path, harness_repo):
    cache, _ = seeded
    from_checkout = 0
    for index, point in enumerate(points):  # in a checkout with an AgentX harness, which the agentic recipes run
        code, body, err = dry_run(point, cache, tmp_path, root=harness_repo)
        assert code == 0, (index, point["config-key"], body, err)
        assert body["recipe"] is not None and len(body["resolved-recipe-sha256"]) == 64, point["config-key"]
        assert "recipe-deferred" not in {w["rule"] for w in body["warnings"]}
        assert body["recipe"]["name"] == body["job-name"] and body["node-count"] == point["node-count"]
        if body["recipe-source"]["origin"] == "srt-slurm":
            from_checkout += 1
            assert body["recipe-source"]["checkout"] == str(cache / "srt-slurm" / body["srt-slurm"]["commit"])
            assert body["recipe-source"]["checked"] == "now"
        if body["srt-slurm"]["pin"] not in NVIDIA_PINS:  # not in the bundle: as before, no checkout, no srtctl
            assert body["recipe-source"]["checkout"] is None and body["srtctl-dry-run"]["checked"] is False
    assert from_checkout == 26  # 26 trt-dsv4-fixed rows: recipes/DeepSeek-V4-Pro/** of sa-submission-q2-2026


def test_a_srt_slurm_recipe_the_pinned_commit_lacks_is_refused_in_the_dry_run(seeded, points, tmp_path):
    """The reference once kept config entries whose srt-slurm recipes it had deleted (2026-08-14,
    "remove purged model support"); only a seeded cache can tell, and the dry run then says so
    instead of deferring to a launch that would fail after checkout."""
    cache, _ = seeded
    row = next(p for p in points if config_file(p).startswith("recipes/DeepSeek-V4-Pro/"))
    missing = "recipes/DeepSeek-V4-Pro/purged-recipe.yaml"  # matches the route's recipes/DeepSeek-V4-Pro/**
    settings = [
        f"CONFIG_FILE={missing}" if s.startswith("CONFIG_FILE=") else s for s in row["prefill"]["additional-settings"]
    ]
    code, body, _ = dry_run({**row, "prefill": {**row["prefill"], "additional-settings": settings}}, cache, tmp_path)
    assert code == 1 and [d["rule"] for d in body["diagnostics"]] == ["recipe-missing"], body
    assert (
        f"recipe {missing} is neither in this repository nor in srt-slurm at nvidia-sa-submission-q2-2026"
        in body["diagnostics"][0]["message"]
    )


def test_without_the_cache_the_srt_slurm_recipe_stays_deferred(points, tmp_path):
    point = next(p for p in points if p["framework"] == "dynamo-trt" and p.get("scenario-type") != "agentic-coding")
    code, body, _ = dry_run(point, tmp_path / "empty-cache", tmp_path)
    assert code == 0 and body["recipe"] is None and "recipe-deferred" in {w["rule"] for w in body["warnings"]}
    assert body["recipe-source"]["checkout"] is None and "is not in" in body["srtctl-dry-run"]["reason"]


def test_a_cached_recipe_failing_a_check_fails_the_dry_run_located_in_the_checkout(tmp_path, points, lane):
    """Same checks as a workspace recipe: a commit whose shipped recipe disagrees with the point fails, located."""
    from dataclasses import replace

    from infx.diagnostics import InfxError
    from infx.launch.dryrun import enrich
    from infx.launch.plan import plan_point
    from infx.launch.pointfile import PointFile

    point = next(p for p in points if p["framework"] == "dynamo-trt" and p.get("scenario-type") != "agentic-coding")
    plan = plan_point(lane, PointFile(data=point, file="point.json"), REPO)
    clone = tmp_path / "clone"
    git("clone", "-q", "-b", plan.pin.ref, str(SRT_SLURM_BUNDLE), str(clone), cwd=tmp_path)
    recipe_path = clone / plan.recipe_source.path
    recipe = yaml.safe_load(recipe_path.read_text())
    recipe["model"]["path"] = "some-other-model"
    recipe_path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "another model", cwd=clone)
    edited = git("rev-parse", "HEAD", cwd=clone)
    cache = tmp_path / "cache"
    from infx.launch.cache import seed_checkout

    assert seed_checkout(cache, clone, edited) == "seeded"
    plan.pin = replace(plan.pin, commit=edited)
    with pytest.raises(InfxError) as caught:
        enrich(plan, REPO, {"INFX_CACHE_DIR": str(cache)}, tmp_path)
    [diag] = [d for d in caught.value.diagnostics if d.rule == "recipe-model-alias"]
    assert diag.file == f"{plan.pin.name}:{plan.recipe_source.path}" and diag.line


def test_one_cache_folder_rule_for_the_matrix_caches_the_seed_and_the_launcher(tmp_path, points):
    """INFX_CACHE_DIR, else XDG_CACHE_HOME/infx, else ~/.cache/infx: the same folder for every user of it."""
    from infx.diskcache import cache_home

    assert cache_home({"INFX_CACHE_DIR": "/a", "XDG_CACHE_HOME": "/b", "HOME": "/c"}) == Path("/a")
    assert cache_home({"XDG_CACHE_HOME": "/b"}) == Path("/b/infx")
    assert cache_home({}) == Path(os.path.expanduser("~")) / ".cache" / "infx"
    xdg = tmp_path / "xdg"
    env = {"INFX_CACHE_DIR": None, "XDG_CACHE_HOME": str(xdg), "GITHUB_WORKSPACE": str(REPO)}

    def run(*argv):
        return run_cli(*argv, env=env)

    seeded = run(
        "lane", "cache-seed", "gb300-nv", "--from", str(SRT_SLURM_BUNDLE), "--pin", "nvidia-sa-submission-q2-2026"
    )
    assert seeded.returncode == 0, seeded.stderr
    point = next(p for p in points if config_file(p).startswith("recipes/DeepSeek-V4-Pro/"))
    (tmp_path / "point.json").write_text(json.dumps(point))
    done = run(
        "launch",
        "--lane",
        "gb300-nv",
        "--point",
        str(tmp_path / "point.json"),
        "--dry-run",
        "--format",
        "json",
        "--output-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["recipe-source"]["checkout"] == str(xdg / "infx" / "srt-slurm" / body["srt-slurm"]["commit"])
