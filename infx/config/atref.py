"""The configs of a commit: master configs, runners.yaml and recipes, loaded once per commit from a
temporary copy (the working tree itself when it matches), and a working tree's findings judged
against a base commit's (infx.diagnostics.demote_on_base: the one rule)."""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path

from .. import git
from ..diagnostics import Diagnostic, Report, demote_on_base
from ..recipes import RECIPES_DIR
from .load import SHIPPED_COMPONENTS, ConfigPaths, ConfigSet, load_config_set

CONFIG_PATHS = ["configs", RECIPES_DIR]  # what validating a commit's configs reads
MASTER_PREFIX, MASTER_SUFFIX = "configs/", "-master.yaml"


class ConfigsAtRef:
    """Master configs (and recipes) of a commit, loaded once; the working tree when it matches."""

    def __init__(self, repo: Path, stack: ExitStack, paths: list[str] = CONFIG_PATHS):
        self.repo, self.stack, self.paths = repo, stack, paths  # paths: the folders a commit's copy holds
        self.cache: dict[tuple[str, bool, bool], tuple[ConfigSet | None, Report]] = {}
        self.roots: dict[str, Path] = {}

    def master_blobs(self, commit: str) -> dict[str, str]:
        return {
            p: b
            for p, b in git.blob_ids(self.repo, commit, ["configs"]).items()
            if p.startswith(MASTER_PREFIX) and p.endswith(MASTER_SUFFIX) and "/" not in p[len(MASTER_PREFIX) :]
        }

    def same_masters(self, a: str, b: str) -> bool:
        trees = git.object_ids(self.repo, [f"{a}:configs", f"{b}:configs"])
        if a == b or (trees and trees[0] == trees[1]):
            return True  # one cheap call covers the usual case: configs/ untouched
        return self.master_blobs(a) == self.master_blobs(b)

    def root(self, commit: str) -> Path:
        """A folder holding the commit's configs and recipes: the repository when its working tree matches."""
        if commit not in self.roots:
            if git.worktree_matches(self.repo, commit, self.paths):
                self.roots[commit] = self.repo
            else:
                root = Path(self.stack.enter_context(tempfile.TemporaryDirectory(prefix="infx-configs-")))
                git.materialize(self.repo, commit, self.paths, root)
                self.roots[commit] = root
        return self.roots[commit]

    def load(self, commit: str, validate: bool = True, keep_invalid: bool = False) -> tuple[ConfigSet | None, Report]:
        if (commit, validate, keep_invalid) not in self.cache:
            root = self.root(commit)
            masters = sorted(root.glob("configs/*-master.yaml"))
            if not masters:
                self.cache[(commit, validate, keep_invalid)] = (ConfigSet(root=root), Report())
            else:
                self.cache[(commit, validate, keep_invalid)] = load_config_set(
                    masters, root=root, validate=validate, keep_invalid=keep_invalid, notices=False
                )
        return self.cache[(commit, validate, keep_invalid)]


def relabel(diagnostics: list[Diagnostic], root: Path, repo: Path, commit: str) -> list[Diagnostic]:
    """Name files as `path@commit` rather than a temporary directory."""
    if root == repo:
        return diagnostics
    out = []
    for d in diagnostics:
        name = d.file
        if name.startswith(str(root)):
            name = f"{Path(name).relative_to(root).as_posix()}@{commit[:12]}"
        out.append(
            Diagnostic(
                file=name,
                line=d.line,
                column=d.column,
                rule=d.rule,
                message=d.message,
                hint=d.hint,
                severity=d.severity,
            )
        )
    return out


def _at(path: Path, repo: Path, root: Path) -> Path | None:
    """Where a working-tree file of the repository lies in the commit's copy; a file outside the
    repository (the policy infx ships) is the same file on both sides; None: not in the commit."""
    try:
        inside = path.resolve().relative_to(repo)
    except ValueError:
        return path
    found = root / inside
    return found if found.is_file() else None


def judged_against_base(report: Report, paths: ConfigPaths, base_ref: str) -> Report:
    """The working tree's report with every finding the base already had marked so (an error of the
    base a warning: infx.diagnostics.demote_on_base). The base is the merge-base of ``base_ref`` and
    HEAD, as a pull request's is; its copy of the same files (masters, runners.yaml, components.yaml)
    is validated the same way."""
    repo = git.toplevel(paths.root)
    base = git.resolve(repo, base_ref)
    head = git.head_commit(repo)
    if head is not None:
        base = git.merge_base(repo, base, head)
    with ExitStack() as stack:
        root = ConfigsAtRef(repo, stack).root(base)
        masters = [found for path in paths.masters if (found := _at(path, repo, root)) is not None]
        runners = _at(paths.runners, repo, root)
        components = _at(paths.components, repo, root) or SHIPPED_COMPONENTS  # added by the change: the default before
        if not masters or runners is None:
            base_findings: list[Diagnostic] = []  # the base lacks a file the head reads: all of it is new
        else:
            base_findings = load_config_set(masters, runners, components, root=root, keep_invalid=True, notices=False)[
                1
            ].diagnostics
        return Report(demote_on_base(report.diagnostics, paths.root.resolve(), base_findings, root.resolve()))
