"""Pinned checkouts against real git repositories (file:// URLs), no network."""

import re

import pytest

from infx.launch.sources import FetchError, cached_checkout, fetch_pinned, head_of
from launchkit import git, git_repo


@pytest.fixture
def repo(tmp_path):
    first = git_repo(tmp_path / "origin", files={"a.txt": "one\n"})
    (tmp_path / "origin" / "a.txt").write_text("two\n")
    git("commit", "-qam", "second", cwd=tmp_path / "origin")
    return {"url": f"file://{tmp_path / 'origin'}", "first": first, "second": git("rev-parse", "HEAD", cwd=tmp_path / "origin")}


def test_fetch_pinned_checks_out_exactly_the_pin(repo, tmp_path):
    head = fetch_pinned("engine", repo["url"], repo["first"], tmp_path / "dest")
    assert head == repo["first"] and (tmp_path / "dest" / "a.txt").read_text() == "one\n"


def test_unreachable_source_names_source_url_and_pin(tmp_path):
    url = f"file://{tmp_path / 'missing'}"
    with pytest.raises(FetchError) as caught:
        fetch_pinned("engine", url, "c" * 40, tmp_path / "dest")
    message = str(caught.value)
    assert "source engine" in message and url in message and "c" * 40 in message


def test_cache_is_keyed_by_commit_reused_and_verified(repo, tmp_path):
    cache = tmp_path / "cache"
    cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch1")
    assert head_of(cache / repo["first"]) == repo["first"]
    # reused without the network: the origin may vanish once the cache holds the commit
    (tmp_path / "origin").rename(tmp_path / "gone")
    assert cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch2") == repo["first"]
    # a tampered cache entry is not trusted: it is fetched again (and here that fails loudly)
    (cache / repo["first"] / "a.txt").write_text("tampered\n")
    with pytest.raises(FetchError, match=re.escape(repo["first"])):
        cached_checkout("srt-slurm", repo["url"], repo["first"], cache, tmp_path / "launch3")


def test_each_launch_gets_a_fresh_directory(repo, tmp_path):
    dest = tmp_path / "launch"
    cached_checkout("srt-slurm", repo["url"], repo["second"], tmp_path / "cache", dest)
    (dest / "leftover.txt").write_text("from an earlier launch")
    cached_checkout("srt-slurm", repo["url"], repo["second"], tmp_path / "cache", dest)
    assert not (dest / "leftover.txt").exists() and (dest / "a.txt").read_text() == "two\n"
