"""The change this project carries, end to end: config → changelog gate → plan → launch plan.

Base is the repository before the change (the two GB300 DSV4 SGLang agentic entries and
their hicache recipes as the reference corpus has them, the changelog without its newest
entry); head is the repository as it is. Every step runs the real CLI in a real git
repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from testing.cli import run_cli
from testing.sweeps import AGG, DATA, DISAGG, RECIPE, copy_data, git, write_base

PR = 3187
SLUG = "SemiAnalysisAI/InferenceX"
LADDER = [(120, 7), (480, 7), (960, 9), (1440, 11), (2400, 13)]  # (conc, nodes incl. the etcd/nats node)


@pytest.fixture
def change(tmp_path: Path, repo_root: Path, corpus: Path) -> Path:
    """A git repository with commits `base` (before the change) and `head` (after)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.invalid")
    git(repo, "config", "user.name", "ci")
    copy_data(repo_root, repo)
    write_base(repo, repo_root, corpus)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "tag", "base")
    git(repo, "checkout", "-q", "-b", "pr")
    for name in DATA:  # head: the repository as it is
        shutil.rmtree(repo / name, ignore_errors=True) if (repo / name).is_dir() else None
    copy_data(repo_root, repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    git(repo, "tag", "head")
    return repo


def commit_last_edit(repo: Path, path: str, old: str, new: str) -> None:
    """Replace the last occurrence of ``old`` (the appended entry sits at the end) and commit."""
    target = repo / path
    before, found, after = target.read_text().rpartition(old)
    assert found
    target.write_text(before + new + after)
    git(repo, "commit", "-qam", f"edit {path}")


def test_pr_gate_accepts_the_change(change: Path, repo_root: Path):
    done = run_cli(
        "changelog", "validate", "--base-ref", "base", "--head-ref", "HEAD", "--pr-number", str(PR), cwd=change
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"config key '{AGG}' is deleted in this change" in done.stdout + done.stderr  # a warning, not swept


def test_placeholder_link_is_rejected_with_the_line_to_write(change: Path, repo_root: Path):
    commit_last_edit(change, "perf-changelog.yaml", "/pull/XXX\n", "/pull/PLACEHOLDER\n")
    done = run_cli(
        "changelog", "validate", "--base-ref", "base", "--head-ref", "HEAD", "--pr-number", str(PR), cwd=change
    )
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert "PLACEHOLDER" in out
    assert f"https://github.com/{SLUG}/pull/XXX" in out and "XXX" in out  # the accepted forms are listed
    assert f"pr-link: https://github.com/{SLUG}/pull/{PR}" in out  # and the exact line to write


def test_push_run_warns_about_xxx_until_fixed(change: Path, repo_root: Path):
    """On main the merge has happened: a placeholder link is a warning (the sweep runs) until fixed."""
    push = ("changelog", "validate", "--base-ref", "base", "--head-ref", "HEAD")
    done = run_cli(*push, cwd=change)
    assert (
        done.returncode == 0 and "warning[pr-link]" in done.stdout + done.stderr and "XXX" in done.stdout + done.stderr
    )
    fixed = run_cli("changelog", "fix", "--pr-number", str(PR), "--base-ref", "base", cwd=change)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (change / "perf-changelog.yaml").read_text().endswith(f"  pr-link: https://github.com/{SLUG}/pull/{PR}\n")
    git(change, "commit", "-qam", "fix pr-link")
    done = run_cli(*push, cwd=change)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pr-link" not in done.stdout + done.stderr


def test_unversioned_mooncake_backend_fails_config_validation(change: Path, repo_root: Path):
    target = change / "configs" / "nvidia-master.yaml"
    target.write_text(target.read_text().replace('{ name: mooncake, version: "0.3.13" }', "{ name: mooncake }", 1))
    done = run_cli("config", "validate", "--format", "json", cwd=change)
    assert done.returncode == 1
    diagnostics = json.loads(done.stdout)["diagnostics"]
    errors = [d for d in diagnostics if d["severity"] == "error"]
    assert len(errors) == 1 and "mooncake" in errors[0]["message"] and "version" in errors[0]["message"]


def plan_rows(change: Path, repo_root: Path) -> list[dict]:
    done = run_cli(
        "plan", "--base-ref", "base", "--head-ref", "HEAD", "--pr-number", str(PR), "--format", "json", cwd=change
    )
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(done.stdout)
    return [row for name, rows in plan["buckets"].items() for row in rows]


def test_plan_is_exactly_the_five_ladder_points(change: Path, repo_root: Path):
    rows = [r for r in plan_rows(change, repo_root) if not r.get("eval-only")]
    assert [r["config-key"] for r in rows] == [DISAGG] * 5  # the agg entry is gone: nothing more
    assert [(r["conc"], r["node-count"]) for r in rows] == [([c], n) for c, n in LADDER]
    for row in rows:
        assert row["scenario-type"] == "agentic-coding"
        assert row["kv-offload-backend"] == {"name": "mooncake", "version": "0.3.13"}
        assert row["kv-offloading"] == "dram" and row["spec-decoding"] == "draft_model"
        assert row["image"] == "lmsysorg/sglang:nightly-dev-cu13-20260916-c9a8fba9"


def dry_run(change: Path, repo_root: Path, row: dict, tmp: Path) -> subprocess.CompletedProcess:
    point = tmp / f"point-{row['conc'][0]}.json"
    point.write_text(json.dumps(row))
    return run_cli("launch", "--lane", "gb300-nv", "--point", str(point), "--dry-run", "--format", "json", cwd=change)


def test_launch_dry_run_of_each_point(change: Path, repo_root: Path, tmp_path: Path):
    rows = [r for r in plan_rows(change, repo_root) if not r.get("eval-only")]
    for row in rows:
        done = dry_run(change, repo_root, row, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        plan = json.loads(done.stdout)
        assert plan["route"] and plan["sources"] == []
        assert plan["node-count"] == row["node-count"]
        recipe = plan["recipe"]
        stores = [s for s in recipe["services"] if s["type"] == "mooncake-store"]
        assert len(stores) == 4 and all(s["placement"]["node"] == "decode" for s in stores)
        assert sorted(s["readiness"]["port"] for s in stores) == [8800, 8801, 8802, 8803]
        assert all(s["env"]["MOONCAKE_DEVICE"] == "mlx5_0,mlx5_1,mlx5_2,mlx5_3" for s in stores)
        assert recipe["roles"]["prefill"]["env"]["MOONCAKE_DEVICE"] == "mlx5_0,mlx5_1,mlx5_2,mlx5_3"


def test_store_without_rdma_devices_fails_before_any_side_effect(change: Path, repo_root: Path, tmp_path: Path):
    rows = [r for r in plan_rows(change, repo_root) if not r.get("eval-only")]
    recipe = change / RECIPE
    text = recipe.read_text()
    marker = "    - name: mooncake-store-2\n"
    head, tail = text.split(marker)
    tail = tail.replace('        MOONCAKE_DEVICE: "mlx5_0,mlx5_1,mlx5_2,mlx5_3"\n', "", 1)
    recipe.write_text(head + marker + tail)
    done = dry_run(change, repo_root, rows[0], tmp_path)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["ok"] is False
    assert any("mooncake-store-2" in d["message"] and "MOONCAKE_DEVICE" in d["message"] for d in result["diagnostics"])
