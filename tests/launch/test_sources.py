"""Pinned checkouts against real git repositories (file:// URLs), no network."""

import re
from pathlib import Path

import pytest

from infx.launch.sources import FetchError, cached_checkout, fetch_pinned, head_of
from testing.launchkit import git, git_repo

LOCAL = ("https", "file")  # what a test lane's git-protocols allows


@pytest.fixture
def repo(tmp_path):
    first = git_repo(tmp_path / "origin", files={"a.txt": "one\n"})
    (tmp_path / "origin" / "a.txt").write_text("two\n")
    git("commit", "-qam", "second", cwd=tmp_path / "origin")
    return {
        "url": f"file://{tmp_path / 'origin'}",
        "first": first,
        "second": git("rev-parse", "HEAD", cwd=tmp_path / "origin"),
    }


def test_fetch_pinned_checks_out_exactly_the_pin(repo, tmp_path):
    head = fetch_pinned("engine", repo["url"], repo["first"], tmp_path / "dest", protocols=LOCAL)
    assert head == repo["first"] and (tmp_path / "dest" / "a.txt").read_text() == "one\n"


def test_unreachable_source_names_source_url_and_pin(tmp_path):
    url = f"file://{tmp_path / 'missing'}"
    with pytest.raises(FetchError) as caught:
        fetch_pinned("engine", url, "c" * 40, tmp_path / "dest", protocols=LOCAL)
    message = str(caught.value)
    assert "source engine" in message and url in message and "c" * 40 in message


def test_cache_is_keyed_by_commit_reused_and_verified(repo, tmp_path):
    cache = tmp_path / "cache"
    cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch1", protocols=LOCAL)
    assert head_of(cache / repo["first"]) == repo["first"]
    # reused without the network: the origin may vanish once the cache holds the commit
    (tmp_path / "origin").rename(tmp_path / "gone")
    assert (
        cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch2", protocols=LOCAL)
        == repo["first"]
    )
    # a tampered cache entry is not trusted: it is fetched again (and here that fails loudly)
    (cache / repo["first"] / "a.txt").write_text("tampered\n")
    with pytest.raises(FetchError, match=re.escape(repo["first"])):
        cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch3", protocols=LOCAL)


def test_each_launch_gets_a_fresh_directory(repo, tmp_path):
    dest = tmp_path / "launch"
    cached_checkout("srt-slurm", repo["url"], repo["second"], tmp_path / "cache", dest, protocols=LOCAL)
    (dest / "leftover.txt").write_text("from an earlier launch")
    cached_checkout("srt-slurm", repo["url"], repo["second"], tmp_path / "cache", dest, protocols=LOCAL)
    assert not (dest / "leftover.txt").exists() and (dest / "a.txt").read_text() == "two\n"


def test_a_cache_entry_hiding_a_change_behind_skip_worktree_and_fsmonitor_is_rebuilt_and_the_hook_never_runs(
    repo, tmp_path
):
    cache = tmp_path / "cache"
    cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch1", protocols=LOCAL)
    entry, marker = cache / repo["first"], tmp_path / "hook-ran"
    hook = tmp_path / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nprintf '\\0'\n")
    hook.chmod(0o755)
    # What another job on a shared runner can do: change a file, hide it from `git status`
    # with skip-worktree, and make git run a program of its choosing on the next status.
    (entry / "a.txt").write_text("tampered\n")
    git("update-index", "--skip-worktree", "a.txt", cwd=entry)
    git("config", "core.fsmonitor", str(hook), cwd=entry)
    assert git("status", "--porcelain", cwd=entry) == ""  # plain git is fooled
    assert marker.exists()  # ... and ran the hook
    marker.unlink()
    head = cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch2", protocols=LOCAL)
    assert head == repo["first"]
    assert (tmp_path / "launch2" / "a.txt").read_text() == "one\n" and (entry / "a.txt").read_text() == "one\n"
    assert "fsmonitor" not in (entry / ".git" / "config").read_text()
    assert not marker.exists()


@pytest.mark.parametrize(
    "tamper",
    [
        lambda entry: (entry / "extra.txt").write_text("dropped in\n"),
        lambda entry: (entry / ".git" / "config").write_text(
            (entry / ".git" / "config").read_text() + "[core]\n\tpager = evil\n"
        ),
        lambda entry: (entry / ".git" / "hooks").mkdir(),
        lambda entry: (entry / "a.txt").unlink(),
    ],
    ids=["untracked-file", "config", "hooks", "deleted-file"],
)
def test_any_other_change_to_a_cache_entry_is_rebuilt(repo, tmp_path, tamper):
    cache = tmp_path / "cache"
    cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch1", protocols=LOCAL)
    tamper(cache / repo["first"])
    cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch2", protocols=LOCAL)
    assert sorted(p.name for p in (tmp_path / "launch2").iterdir()) == [".git", "a.txt"]
    assert (tmp_path / "launch2" / "a.txt").read_text() == "one\n"


def test_git_is_never_handed_an_option_as_a_url_and_protocols_are_restricted(repo, tmp_path):
    marker = tmp_path / "ran"
    for url in (f"--upload-pack=touch {marker};", "-u", f"ext::sh -c touch% {marker}"):
        with pytest.raises(FetchError, match="is not https://"):
            fetch_pinned("engine", url, repo["first"], tmp_path / "dest", protocols=LOCAL)
    with pytest.raises(FetchError, match="does not allow"):  # file:// needs the lane's permission
        fetch_pinned("engine", repo["url"], repo["first"], tmp_path / "dest")
    assert not marker.exists() and not (tmp_path / "dest").exists()


@pytest.mark.parametrize("dest", ["../../../../victim", "/victim", "link/inside", ""])
def test_a_source_dest_outside_the_checkout_is_refused_and_nothing_deleted(repo, tmp_path, dest):
    checkout, victim = tmp_path / "checkout", tmp_path / "victim"
    (victim / "keep").mkdir(parents=True)
    checkout.mkdir()
    (checkout / "link").symlink_to(victim)  # a symlink inside the checkout that leads out of it
    dest = dest.replace("/victim", str(victim)) if dest.startswith("/") else dest
    with pytest.raises(FetchError, match="dest"):
        fetch_pinned("engine", repo["url"], repo["first"], Path(dest), root=checkout, protocols=LOCAL)
    assert (victim / "keep").is_dir() and (checkout / "link").is_symlink()
