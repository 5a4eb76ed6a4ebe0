"""The one repository-root rule (infx/reporoot.py): named masters, then $GITHUB_WORKSPACE, then the
top of the git work tree, then the working directory; and `infx config validate` from a subfolder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from infx.reporoot import repository_root, shown_path

REPO = Path(__file__).resolve().parent.parent


def git_repository(path: Path) -> Path:
    (path / "configs").mkdir(parents=True)
    (path / "docs" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path.resolve()


@pytest.fixture(autouse=True)
def no_workspace(monkeypatch):
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)


def test_from_a_subfolder_the_root_is_the_top_of_the_git_work_tree(tmp_path: Path):
    top = git_repository(tmp_path / "bench")
    assert repository_root(start=top / "docs" / "deep") == top
    assert repository_root(start=top) == top


def test_a_linked_worktree_is_its_own_root(tmp_path: Path):
    top = git_repository(tmp_path / "bench")
    subprocess.run(
        [
            "git",
            "-C",
            str(top),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "c",
        ],
        check=True,
    )
    subprocess.run(["git", "-C", str(top), "worktree", "add", "-q", str(tmp_path / "linked")], check=True)
    (tmp_path / "linked" / "sub").mkdir()
    assert (tmp_path / "linked" / ".git").is_file()
    assert repository_root(start=tmp_path / "linked" / "sub") == (tmp_path / "linked").resolve()


def test_outside_any_git_repository_the_root_is_the_working_directory(tmp_path: Path):
    folder = tmp_path / "plain" / "sub"
    folder.mkdir(parents=True)
    if any((parent / ".git").exists() for parent in folder.resolve().parents):
        pytest.fail(f"{tmp_path} lies inside a git work tree: the case cannot be set up here")
    assert repository_root(start=folder) == folder.resolve()


def test_named_masters_decide_wherever_the_command_runs(tmp_path: Path, monkeypatch):
    top = git_repository(tmp_path / "bench")
    other = git_repository(tmp_path / "other")
    master = top / "configs" / "x-master.yaml"
    assert repository_root([master], start=other) == top
    loose = tmp_path / "loose" / "x-master.yaml"  # not inside a configs/ folder: its own folder
    assert repository_root([loose], start=other) == loose.parent.resolve()
    monkeypatch.setenv("GITHUB_WORKSPACE", str(other))
    assert repository_root([master], start=other) == top


def test_a_workflow_jobs_workspace_comes_before_the_git_work_tree(tmp_path: Path, monkeypatch):
    top = git_repository(tmp_path / "bench")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    assert repository_root(start=top / "docs") == workspace.resolve()


def test_files_under_the_working_directory_are_shown_relative_to_it(tmp_path: Path):
    assert shown_path(tmp_path.resolve() / "configs" / "a.yaml", start=tmp_path) == Path("configs/a.yaml")
    assert shown_path(tmp_path.resolve() / "a.yaml", start=tmp_path / "sub") == tmp_path.resolve() / "a.yaml"
    assert shown_path(Path("../x/a.yaml"), start=tmp_path) == Path("../x/a.yaml")  # outside: as given


def test_config_validate_from_a_subfolder_reads_the_repositorys_configs(tmp_path: Path):
    top = git_repository(tmp_path / "bench")
    for name in ("nvidia-master.yaml", "runners.yaml"):
        shutil.copy(REPO / "configs" / name, top / "configs" / name)
    shutil.copytree(REPO / "benchmarks", top / "benchmarks")
    env = {**os.environ, "PYTHONPATH": str(REPO), "INFX_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GITHUB_WORKSPACE", None)
    at_top = subprocess.run(
        [sys.executable, "-m", "infx", "config", "validate", "--format", "json"],
        cwd=top,
        env=env,
        capture_output=True,
        text=True,
    )
    below = subprocess.run(
        [sys.executable, "-m", "infx", "config", "validate", "--format", "json"],
        cwd=top / "docs" / "deep",
        env=env,
        capture_output=True,
        text=True,
    )
    assert at_top.returncode == 0, at_top.stderr[-600:]
    assert below.returncode == 0, below.stderr[-600:]
    assert below.stdout == at_top.stdout
    # the masters were found from the top (a plain folder outside git refuses: nothing to read there)
    plain = tmp_path / "plain"
    plain.mkdir()
    outside = subprocess.run(
        [sys.executable, "-m", "infx", "config", "validate"], cwd=plain, env=env, capture_output=True, text=True
    )
    assert (
        outside.returncode == 2 and f"nothing matches configs/*-master.yaml under {plain.resolve()}" in outside.stderr
    )
