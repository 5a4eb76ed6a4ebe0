"""infx/git.py on a repository whose config asks git to run programs: none of them runs."""

import pytest

from infx import git
from testing.launchkit import git as run_git
from testing.launchkit import git_repo


def test_config_driven_helpers_never_run(tmp_path):
    repo, marker = tmp_path / "repo", tmp_path / "ran"
    commit = git_repo(repo, files={"configs/a.yaml": "a: 1\n"})
    hook = tmp_path / "helper.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nprintf '\\0'\n")
    hook.chmod(0o755)
    for key in ("core.fsmonitor", "core.pager", "diff.external"):
        run_git("config", key, str(hook), cwd=repo)
    run_git("status", "--porcelain", cwd=repo)
    assert marker.exists()  # plain git runs the fsmonitor hook
    marker.unlink()
    assert git.resolve(repo, "HEAD") == commit
    assert git.worktree_matches(repo, commit, ["configs"])
    assert git.read_file(repo, commit, "configs/a.yaml") == b"a: 1\n"
    assert git.blob_ids(repo, commit, ["configs"]).keys() == {"configs/a.yaml"}
    git.materialize(repo, commit, ["configs"], tmp_path)
    assert not marker.exists()


@pytest.mark.parametrize("ref", ["--output=/tmp/x", "-h"])
def test_refs_that_read_as_options_are_refused(tmp_path, ref):
    repo = tmp_path / "repo"
    commit = git_repo(repo, files={"a": "1\n"})
    for call in (
        lambda: git.resolve(repo, ref),
        lambda: git.merge_base(repo, ref, commit),
        lambda: git.read_file(repo, ref, "a"),
        lambda: git.blob_ids(repo, ref, ["a"]),
        lambda: git.object_ids(repo, [ref]),
    ):
        with pytest.raises(git.GitError, match="not a usable git ref"):
            call()
