"""The consumer kit: what `infx init` writes into a benchmark repository.

One source for the workflows: ``infx/kit/workflows`` is a symbolic link to this repository's own
``.github/workflows`` (and ``infx/kit/requirements.lock`` to its lock), shipped as package data, so
a benchmark repository gets exactly infx's workflows, transformed by the rules of
``consumer_workflow`` below: the blocks marked ``# infx-only: begin`` … ``# infx-only: end`` (infx's
own test suite) are left out, and each install of infx from the checkout becomes an install of
the released infx, pinned, with the lock kept at LOCK_PATH.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from .. import __version__
from ..changelog.policy import is_slug
from ..diagnostics import InfxError, UsageError, error
from ..fsio import atomic_write
from ..git import remote_url
from ..workflows.labels import LABELS
from ..workflows.lanegate import RUNNERS_TOKEN
from ..yamlio import load_yaml

# The workflows a benchmark repository gets; every workflow of infx is in exactly one of these.
KIT_WORKFLOWS = ("pr-checks.yml", "run-sweep.yml", "sweep-shard.yml", "republish.yml", "run-point.yml")
INFX_ONLY_WORKFLOWS = ("release.yml",)  # infx's own release; not a benchmark repository's
LOCK_NAME = "requirements.lock"  # infx's lock, at the root of infx's repository
LOCK_PATH = ".github/infx/requirements.lock"  # where a benchmark repository keeps it
ACTIONLINT_PATH = ".github/actionlint.yaml"
SETTINGS_PATH = "configs/infx.yaml"
RUNNERS_PATH = "configs/runners.yaml"
DEFAULT_LANE = "my-lane"
OMIT_BEGIN, OMIT_END = "# infx-only: begin", "# infx-only: end"
RELEASE_VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?$")  # PEP 440, no dev, no local part
# Any PEP 440 version in its normal form (what --pin accepts: also a development build on a private index).
VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$")
LANE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")  # lane.schema.json's `lane`
FILL_IN = "<FILL IN"


def template_text(*parts: str) -> str:
    return resources.files(__name__).joinpath(*parts).read_text(encoding="utf-8")


def _without_infx_only(text: str, name: str) -> str:
    lines, kept, omitting = text.splitlines(keepends=True), [], False
    for line in lines:
        if line.strip().startswith(OMIT_BEGIN):
            omitting = True
        elif line.strip().startswith(OMIT_END):
            if not omitting:
                raise ValueError(f"{name}: `{OMIT_END}` without `{OMIT_BEGIN}`")
            omitting = False
        elif not omitting:
            kept.append(line)
    if omitting:
        raise ValueError(f"{name}: `{OMIT_BEGIN}` without `{OMIT_END}`")
    return "".join(kept)


# (what infx's workflows say, what a benchmark repository's say, how many times at least): an
# original that no longer says it breaks the transform loudly instead of shipping a half-changed file.
REPLACEMENTS = (
    (re.compile(r"(?m)--require-hashes -r requirements\.lock$"), f"--require-hashes -r {LOCK_PATH}", 1),
    (re.compile(r"(?m)--no-deps \.$"), '--no-deps "infx=={version}"', 1),
)


def consumer_workflow(name: str, text: str, version: str) -> str:
    """infx's workflow ``name`` as a benchmark repository runs it, installing infx ``version``."""
    body = _without_infx_only(text, name)
    for pattern, replacement, at_least in REPLACEMENTS:
        body, count = pattern.subn(replacement.format(version=version), body)
        if count < at_least and "pip install" in text:
            raise ValueError(
                f"{name}: expected `{pattern.pattern}` in every infx install step; the kit's rules "
                "(infx/kit/__init__.py REPLACEMENTS) no longer match the workflow"
            )
    header = (
        f"# Written by `infx init` from infx {version}'s own {name}; after upgrading infx,\n"
        f"# `infx init --force` writes it and {LOCK_PATH} again.\n"
    )
    return header + body


def actionlint_config(labels: list[str]) -> str:
    """.github/actionlint.yaml declaring ``labels`` (configs/runners.yaml's) as self-hosted runner labels."""
    lines = [
        "# actionlint configuration. Self-hosted runner labels must be declared here so that",
        "# actionlint can check `runs-on:`; this list is every lane label of configs/runners.yaml",
        "# (`infx init --force` writes it again from that file).",
        "self-hosted-runner:",
        "  labels:",
    ]
    lines += [f"    - {label}" for label in sorted(labels)]
    if not labels:
        lines[-1] = "  labels: []"
    return "\n".join(lines) + "\n"


def runner_labels(root: Path) -> list[str] | None:
    """The labels of ``configs/runners.yaml`` (its `labels:` keys), None when it is missing."""
    path = root / RUNNERS_PATH
    if not path.is_file():
        return None
    doc, problems = load_yaml(path, display=RUNNERS_PATH)
    if doc is None:
        raise InfxError(problems)
    labels = doc.data.get("labels") if isinstance(doc.data, dict) else None
    if not isinstance(labels, dict):
        raise InfxError(
            error(
                RUNNERS_PATH,
                None,
                "init-runners",
                "configs/runners.yaml has no `labels:` mapping",
                "Write `labels:` with one key per runner label (infx config validate checks the file).",
            )
        )
    return [str(label) for label in labels]


GITHUB_REMOTE = re.compile(
    r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"(?P<slug>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)


def slug_from_remote(url: str | None) -> str | None:
    match = GITHUB_REMOTE.match(url or "")
    return match.group("slug") if match and is_slug(match.group("slug")) else None


def settings_file(slug: str | None) -> str:
    lines = [
        "# Repository-wide infx settings (written by `infx init`).",
        "# repository: the GitHub OWNER/NAME the pr-link policy checks against",
        "# (overridden by --repo, then by $GITHUB_REPOSITORY).",
    ]
    lines.append(f"repository: {slug}" if slug else f"# repository: OWNER/NAME   {FILL_IN}: this repository on GitHub>")
    return "\n".join(lines) + "\n"


PRE_COMMIT_PATH = ".pre-commit-config.yaml"
HOOK_KEYS = ("name", "entry", "language", "files", "pass_filenames", "stages")  # of infx's .pre-commit-hooks.yaml


def pre_commit_config(version: str) -> str:
    """.pre-commit-config.yaml running infx's hooks (infx's own .pre-commit-hooks.yaml) from the
    released infx ``version`` on PyPI: a local hook with the pinned package as its dependency."""
    lines = [
        "# CI's verdict before a commit and before a push: run `pre-commit install` once (written by `infx init`).",
        "default_install_hook_types: [pre-commit, pre-push]",
        "repos:",
        "  - repo: local",
        "    hooks:",
    ]
    for hook in yaml.safe_load(template_text("pre-commit-hooks.yaml")):
        lines.append(f"      - id: {hook['id']}")
        lines += [f"        {key}: {json.dumps(hook[key])}" for key in HOOK_KEYS if key in hook]
        lines.append(f'        additional_dependencies: ["infx=={version}"]')
    return "\n".join(lines) + "\n"


def lane_skeleton(lane: str, declared: list[str] | None) -> str:
    """runners/<lane>.yaml to fill in; its runner label is the lane's name when configs/runners.yaml
    declares it, else one more thing to fill in."""
    labels = (
        lane if lane in (declared or []) else f'"{FILL_IN}: the configs/runners.yaml labels of this lane\'s runners>"'
    )
    return (
        template_text("lane.yaml")
        .replace("{{", "\0")
        .replace("}}", "\1")
        .replace("{lane}", lane)
        .replace("{runner_labels}", labels)
        .replace("\0", "{")
        .replace("\1", "}")
    )


@dataclass(frozen=True)
class KitFile:
    path: str  # relative to the repository root
    text: str
    replaceable: bool  # infx's (--force replaces it) or the repository's own starting point (never replaced)


@dataclass(frozen=True)
class InitReport:
    """What `infx init` did, file by file, and what is left to do by hand."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    kept: tuple[tuple[str, str], ...]  # (path, why)
    todo: tuple[str, ...] = field(default_factory=tuple)


def kit_files(root: Path, version: str, lane: str, slug: str | None) -> list[KitFile]:
    workflows = resources.files(__name__).joinpath("workflows")
    files = [
        KitFile(
            f".github/workflows/{name}",
            consumer_workflow(name, workflows.joinpath(name).read_text(encoding="utf-8"), version),
            True,
        )
        for name in KIT_WORKFLOWS
    ]
    files.append(KitFile(LOCK_PATH, template_text(LOCK_NAME), True))
    labels = runner_labels(root)
    files.append(KitFile(ACTIONLINT_PATH, actionlint_config(labels or []), True))
    files.append(KitFile(SETTINGS_PATH, settings_file(slug), False))
    files.append(KitFile(f"runners/{lane}.yaml", lane_skeleton(lane, labels), False))
    files.append(KitFile(PRE_COMMIT_PATH, pre_commit_config(version), False))
    return files


def init(root: Path, force: bool = False, pin: str | None = None, lane: str = DEFAULT_LANE) -> InitReport:
    """Write the kit into the repository at ``root``: every file is checked and rendered before
    the first is written; an existing file is replaced only with ``force`` and only when it is
    infx's (a workflow, the lock, the actionlint configuration), never the repository's own
    settings or lane profile."""
    if pin is not None and not VERSION.match(pin):
        raise UsageError(f"--pin {pin[:80]!r} is not a version", "Pass a released infx version, e.g. --pin 0.2.0.")
    version = pin or __version__
    if pin is None and not RELEASE_VERSION.match(version):
        raise UsageError(
            f"infx {version} is not a released version, and a benchmark repository installs a release",
            "Run the `infx init` of a released infx (pip install infx==X.Y.Z), or pass --pin X.Y.Z.",
        )
    if not LANE_NAME.match(lane):
        raise UsageError(
            f"--lane {lane!r} is not a lane name (lowercase letters, digits and -)", "For example --lane gb300-nv."
        )
    if not root.is_dir():
        raise UsageError(
            f"{root} is not a folder", "Pass the root of the benchmark repository (default: the current folder)."
        )
    slug = slug_from_remote(remote_url(root))
    files = kit_files(root, version, lane, slug)
    written, unchanged, kept = [], [], []
    for kit_file in files:
        target = root / kit_file.path
        if target.is_file() and target.read_text(encoding="utf-8", errors="replace") == kit_file.text:
            unchanged.append(kit_file.path)
            continue
        if target.exists() or target.is_symlink():
            if not kit_file.replaceable:
                kept.append((kit_file.path, "the repository's own: init never replaces it"))
                continue
            if not force:
                kept.append((kit_file.path, "exists and differs: --force replaces it"))
                continue
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, kit_file.text)
        written.append(kit_file.path)
    return InitReport(tuple(written), tuple(unchanged), tuple(kept), tuple(_todo(root, version, lane, slug, files)))


def _todo(root: Path, version: str, lane: str, slug: str | None, files: list[KitFile]) -> list[str]:
    todo = []
    lane_file = root / f"runners/{lane}.yaml"
    if lane_file.is_file() and FILL_IN in lane_file.read_text(encoding="utf-8", errors="replace"):
        todo.append(
            f"Fill in every `{FILL_IN}: …>` of runners/{lane}.yaml (rename the lane to yours: "
            f"`infx init --lane NAME`), then `infx lane pins {lane} --update` and `infx lane validate`."
        )
    settings = root / SETTINGS_PATH
    if settings.is_file() and FILL_IN in settings.read_text(encoding="utf-8", errors="replace"):
        todo.append(f"Set `repository: OWNER/NAME` in {SETTINGS_PATH} (no GitHub remote `origin` was found).")
    if runner_labels(root) is None:
        todo.append(
            f"Add {RUNNERS_PATH} (the runner labels), then `infx init --force` writes {ACTIONLINT_PATH} from it."
        )
    todo.append(
        f"Register the lane's self-hosted runners with its labels, in a runner group limited to this repository, "
        f"as ephemeral runners, and list each under its labels in {RUNNERS_PATH} (the plan's queue check counts "
        f"them); then `GITHUB_TOKEN=<an admin's token> infx repo check{' --repo ' + slug if slug else ''}` "
        "checks those settings and that fork pull requests need approval and the default token is read-only."
    )
    todo.append(
        f"Optional: add the repository secret {RUNNERS_TOKEN}, a token that may read the runners (Administration: "
        "read; for an organization's runner groups also its Self-hosted runners: read), so a sweep skips a lane "
        "whose runners are all offline instead of queuing its points for 24 hours (docs/workflows.md, "
        '"Lanes and queues").'
    )
    todo.append(
        "Create the pull-request labels of the label table: " + ", ".join(f"`{label}`" for label in LABELS) + "."
    )
    todo.append(
        f"Commit the files; the workflows install infx {version} from PyPI with the lock in {LOCK_PATH}. "
        f"`pre-commit install` runs infx's checks before each commit and push ({PRE_COMMIT_PATH})."
    )
    return todo
