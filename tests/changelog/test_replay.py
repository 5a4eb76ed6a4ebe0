"""Replay the push gate over the 200 real merges of the history bundle.

Each merge X is judged as a push to main sees it (X~1 -> X), in-process: the diff, the
pr-link policy and key resolution against X's master configs. Every merge is accepted —
reverts, whitespace-only separators and the two merges that put a non-canonical pr-link on
main (the corpus's two known historical irregularities) with warnings: a merge is swept. The
keys planned for each merge are exactly those its added entries name.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path

import pytest

from infx.changelog.diff import diff_changelog
from infx.changelog.keys import resolve
from testing.corpus import HISTORY_BUNDLE

from .conftest import SLUG

BUNDLE = HISTORY_BUNDLE
MASTERS = ("configs/amd-master.yaml", "configs/nvidia-master.yaml")
TOP_LEVEL_KEY = re.compile(r"^([^\s#][^:\n]*):", re.MULTILINE)  # master keys are the unindented mapping keys
KNOWN_NON_CANONICAL = {
    "https://github.com/SemiAnalysisAI/InferenceX/pull/2305/changes",
    "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX",
}


class Blobs:
    """All blobs through one `git cat-file --batch` process (400 subprocesses would be slow)."""

    def __init__(self, repo: Path):
        self.process = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def read(self, spec: str) -> bytes:
        self.process.stdin.write(spec.encode() + b"\n")
        self.process.stdin.flush()
        header = self.process.stdout.readline().split()
        assert header[-1] != b"missing", spec
        data = self.process.stdout.read(int(header[2]))
        self.process.stdout.read(1)
        return data

    def close(self):
        self.process.stdin.close()
        self.process.wait()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    if not BUNDLE.is_file():
        pytest.fail(f"the history bundle is missing at {BUNDLE}")
    clone = tmp_path_factory.mktemp("history") / "clone"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(clone)], check=True, capture_output=True)
    log = subprocess.run(
        ["git", "-C", str(clone), "log", "--format=%H %P%x00%s%x01"], check=True, capture_output=True
    ).stdout.decode()
    merges = []
    for record in filter(None, (r.strip() for r in log.split("\x01"))):
        ids, subject = record.split("\x00")
        if not subject.startswith("parent of "):
            merges.append(tuple(ids.split()[:2]))
    blobs = Blobs(clone)
    yield clone, merges, blobs
    blobs.close()


def _names(entry, keys: list[str]) -> set[str]:
    """An independent reading of `config-keys`: fnmatch with only `*` meaningful."""
    named = set()
    for pattern in entry.config_keys:
        literal = pattern.replace("[", "[[]").replace("?", "[?]")
        named |= {k for k in keys if fnmatch.fnmatchcase(k, literal)}
    return named


def test_push_gate_accepts_every_real_merge(history):
    clone, merges, blobs = history
    assert len(merges) == 200
    refused, reverts, mid_file, warned, links = {}, 0, 0, 0, set()
    for merge, parent in merges:
        head = blobs.read(f"{merge}:perf-changelog.yaml")
        base = blobs.read(f"{parent}:perf-changelog.yaml")
        keys = [k for name in MASTERS for k in TOP_LEVEL_KEY.findall(blobs.read(f"{merge}:{name}").decode())]
        change = diff_changelog(base, head, file="perf-changelog.yaml", slug=SLUG, pr_number=None)
        resolution = resolve(change.added, keys, keys, "perf-changelog.yaml", lambda e, n: e.key_positions[n])
        errors = [d for d in change.diagnostics + resolution.diagnostics if d.is_error]
        if errors:
            refused[merge] = errors
            continue
        warned += any(not d.is_error for d in change.diagnostics)
        links |= {d.message.split("'")[1] for d in change.diagnostics if d.rule == "pr-link"}
        reverts += bool(change.removed)
        mid_file += any(i <= change.base_count for i in change.added_indexes)
        assert change.added or change.removed, merge
        expected = set().union(*(_names(e, keys) for e in change.added)) if change.added else set()
        assert set(resolution.keys) == expected, merge
    assert reverts == 3 and mid_file >= 40 and warned > 0
    assert refused == {} and links == KNOWN_NON_CANONICAL


def test_regex_master_keys_agree_with_yaml(history):
    import yaml

    clone, merges, blobs = history
    text = blobs.read(f"{merges[0][0]}:configs/nvidia-master.yaml").decode()
    assert TOP_LEVEL_KEY.findall(text) == list(yaml.load(text, Loader=yaml.CSafeLoader))
