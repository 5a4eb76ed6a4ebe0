"""The reference corpus as a repository the workflow executor can run run-sweep.yml in: its configs
(runner labels declared), this repository's workflows and infx's source, committed on `main`."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

from testing.corpus import CORPUS, patched_corpus
from testing.executor import PROJECT
from testing.gitrepo import git
from testing.lanes import BUNDLED_PROFILE, write_lane_profile
from testing.runner_python import copy_source

NON_ASCII = "-模型推理-" + "😀" * 30  # CJK (1 UTF-16 unit, 3 UTF-8 bytes) and emoji (2 units, 4 bytes)


def commit(repo: Path) -> str:
    """The folder as a new repository with one commit on `main`; its SHA."""
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "repository")
    return git(repo, "rev-parse", "HEAD")


def corpus_repository(tmp_path: Path, non_ascii: bool, every_label_served: bool = True) -> tuple[Path, str]:
    """(repository, commit): non_ascii: every model name of the master configs made CJK- and
    emoji-heavy; every_label_served: one lane profile declares every label, so no point is held for
    want of a lane (infx/launch/lanecheck.py); else only this repository's gb300-nv profile."""
    repo = patched_corpus(CORPUS, tmp_path / "repo")
    if every_label_served:
        labels = yaml.safe_load((repo / "configs" / "runners.yaml").read_text())["labels"]
        write_lane_profile(repo, "everywhere", sorted(labels))
    else:
        (repo / "runners").mkdir()
        shutil.copy(BUNDLED_PROFILE, repo / "runners" / "gb300-nv.yaml")
    shutil.copytree(PROJECT / ".github", repo / ".github")
    copy_source(repo)
    if non_ascii:
        for master in (repo / "configs").glob("*-master.yaml"):
            text = master.read_text(encoding="utf-8")
            master.write_text(
                re.sub(r"(?m)^(  model: )(\S+)$", lambda m: f'{m.group(1)}"{m.group(2)}{NON_ASCII}"', text),
                encoding="utf-8",
            )
    return repo, commit(repo)
