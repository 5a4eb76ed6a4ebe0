"""The consumer kit: what `infx init` writes into a benchmark repository.

One source for the workflows: ``infx/kit/workflows`` is a symbolic link to this repository's own
``.github/workflows`` (``infx/kit/requirements.lock`` to its lock, ``infx/kit/evals`` to its eval
suite), shipped as package data, so a benchmark repository gets exactly infx's workflows,
transformed by the rules of ``consumer_workflow`` below: the blocks marked ``# infx-only: begin`` …
``# infx-only: end`` (infx's own test suite) are left out, and each install of infx from the
checkout becomes one hash-checked install of the repository's lock (LOCK_PATH), which pins infx
itself as well (:class:`InfxPin`): by the wheel init copies into ``.github/infx/`` (built from
the development install, or from one commit of its repository, or given), or by the hash of a
release's wheel on the package index.

The kit's workflows keep infx's own file names: infx's reuse and reruns trust only runs of
``.github/workflows/run-sweep.yml`` (infx/workflows/trust.py) and the workflows call each other by
name. A repository's own workflow under one of those names is therefore never taken for infx's:
init keeps it and lists, as a to-do, what to rename and which of infx's workflows depend on it.

Effects: filesystem, subprocess: the kit written into the repository; git, and `pip wheel` when
init builds the wheel. No network of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

import yaml

from .. import __version__
from ..changelog.policy import is_slug
from ..diagnostics import InfxError, UsageError, error
from ..evalsuite import EVALS_DIR, SUITE_FILE
from ..fsio import atomic_write
from ..git import remote_url
from ..launch.lane import PLACEHOLDER
from ..workflows.labels import LABELS
from ..workflows.lanegate import RUNNERS_TOKEN
from ..yamlio import load_yaml

# The workflows a benchmark repository gets; every workflow of infx is in exactly one of these.
KIT_WORKFLOWS = ("pr-checks.yml", "run-sweep.yml", "sweep-shard.yml", "republish.yml", "run-point.yml")
INFX_ONLY_WORKFLOWS = ("release.yml",)  # infx's own release; not a benchmark repository's
LOCK_NAME = "requirements.lock"  # infx's lock, at the root of infx's repository
KIT_DIR = ".github/infx"  # infx's own files in a benchmark repository: the lock, the wheel, the hook runner
LOCK_PATH = f"{KIT_DIR}/requirements.lock"
HOOK_RUNNER = "run-infx.py"  # infx/kit/run-infx.py, written to KIT_DIR
HOOK_RUNNER_PATH = f"{KIT_DIR}/{HOOK_RUNNER}"
INSTALL = f"--no-deps --require-hashes -r {LOCK_PATH}"  # every install of infx the kit writes
ACTIONLINT_PATH = ".github/actionlint.yaml"
SETTINGS_PATH = "configs/infx.yaml"
RUNNERS_PATH = "configs/runners.yaml"
PRE_COMMIT_PATH = ".pre-commit-config.yaml"
DEFAULT_LANE = "my-lane"
WRITTEN_BY = "# Written by `infx init`"  # the first line of every workflow init writes: how init knows its own
OMIT_BEGIN, OMIT_END = "# infx-only: begin", "# infx-only: end"
RELEASE_VERSION = re.compile(r"[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?")  # PEP 440, no dev, no local part
# Any PEP 440 version in its normal form (a wheel's: also a development build).
VERSION = re.compile(r"[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?")
WHEEL_NAME = re.compile(rf"infx-(?P<version>{VERSION.pattern})-py3-none-any\.whl")  # infx is pure Python
COMMIT = re.compile(r"[0-9a-f]{40}")  # a full commit: git's content address
LANE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")  # lane.schema.json's `lane`
FILL_IN = PLACEHOLDER
BUILD_SECONDS = 600


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


# (what infx's workflows say, what a benchmark repository's say): each install step of infx's
# workflows installs the lock, then infx from the checkout; a benchmark repository's installs its
# lock only, which pins infx too. An original that no longer says it breaks the transform loudly
# instead of shipping a half-changed file.
REPLACEMENTS = (
    (
        re.compile(r"(?m)^(?P<head>[ \t]*\S+ -m pip install(?: --quiet)?) --require-hashes -r requirements\.lock\n"),
        rf"\g<head> {INSTALL}\n",
    ),
    (re.compile(r"(?m)^[ \t]*\S+ -m pip install(?: --quiet)? --no-deps \.\n"), ""),
)


def consumer_workflow(name: str, text: str) -> str:
    """infx's workflow ``name`` as a benchmark repository runs it, installing infx from its lock."""
    body = _without_infx_only(text, name)
    for pattern, replacement in REPLACEMENTS:
        body, count = pattern.subn(replacement, body)
        if count < 1 and "pip install" in text:
            raise ValueError(
                f"{name}: expected `{pattern.pattern}` in every infx install step; the kit's rules "
                "(infx/kit/__init__.py REPLACEMENTS) no longer match the workflow"
            )
    header = (
        f"{WRITTEN_BY} from infx {__version__}'s own {name}: it installs the infx {LOCK_PATH}\n"
        f"# pins. After upgrading infx, `infx init --force` writes it again.\n"
    )
    return header + body


def actionlint_config(labels: list[str]) -> str:
    """.github/actionlint.yaml declaring ``labels`` (configs/runners.yaml's) as self-hosted runner labels."""
    lines = [
        "# actionlint configuration. Self-hosted runner labels must be declared here so that",
        "# actionlint can check `runs-on:`; this list is every lane label of configs/runners.yaml",
        "# (`infx init --only actionlint --force` writes it again from that file).",
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
    r"(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"(?P<slug>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?"
)


def slug_from_remote(url: str | None) -> str | None:
    match = GITHUB_REMOTE.fullmatch(url or "")
    return match.group("slug") if match and is_slug(match.group("slug")) else None


def settings_file(slug: str | None) -> str:
    lines = [
        "# Repository-wide infx settings (written by `infx init`).",
        "# repository: the GitHub OWNER/NAME the pr-link policy checks against",
        "# (overridden by --repo, then by $GITHUB_REPOSITORY).",
    ]
    lines.append(f"repository: {slug}" if slug else f"# repository: OWNER/NAME   {FILL_IN}: this repository on GitHub>")
    return "\n".join(lines) + "\n"


HOOK_KEYS = ("name", "files", "pass_filenames", "stages")  # of infx's .pre-commit-hooks.yaml, as they are


def pre_commit_config() -> str:
    """.pre-commit-config.yaml running infx's hooks (infx's own .pre-commit-hooks.yaml) through the
    hook runner, which installs the infx the lock pins (offline when the lock pins a shipped wheel)."""
    lines = [
        "# CI's verdict before a commit and before a push: run `pre-commit install` once (written by `infx init`).",
        f"# The hooks run the infx {LOCK_PATH} pins, installed by {HOOK_RUNNER_PATH}.",
        "default_install_hook_types: [pre-commit, pre-push]",
        "repos:",
        "  - repo: local",
        "    hooks:",
    ]
    for hook in yaml.safe_load(template_text("pre-commit-hooks.yaml")):
        program, _, arguments = hook["entry"].partition(" ")
        if program != "infx":
            raise ValueError(f"pre-commit-hooks.yaml: hook {hook['id']} does not run infx")
        lines.append(f"      - id: {hook['id']}")
        lines.append(f"        name: {json.dumps(hook['name'])}")
        lines.append(f"        entry: {json.dumps(f'python3 {HOOK_RUNNER_PATH} {arguments}')}")
        lines.append('        language: "system"')
        lines += [f"        {key}: {json.dumps(hook[key])}" for key in HOOK_KEYS[1:] if key in hook]
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
        .replace("{suite}", SUITE_FILE)
        .replace("\0", "{")
        .replace("\1", "}")
    )


# --- how the repository pins infx --------------------------------------------------------------


@dataclass(frozen=True)
class InfxPin:
    """How a benchmark repository installs infx: the lock's requirement for infx (hash-checked) and
    the wheel init ships into the repository, if any."""

    version: str
    requirement: str  # the lock's entry for infx, with its --hash options
    how: str  # how the to-do describes it
    wheel_name: str | None = None
    wheel: bytes | None = None
    commit: str | None = None  # the commit of infx's repository the wheel was built from
    dependencies: str | None = None  # that commit's own lock (None: this infx's)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pin_wheel(path: Path) -> InfxPin:
    """Pin infx by the wheel at ``path`` (an infx wheel, as `pip wheel` or `python -m build` names it)."""
    match = WHEEL_NAME.fullmatch(path.name)
    if match is None:
        raise UsageError(
            f"--wheel {path.name[:120]!r} is not named as an infx wheel (infx-<version>-py3-none-any.whl)",
            "Pass the wheel infx's build wrote (pip wheel --no-deps <infx source>), or --build-wheel.",
        )
    if not path.is_file():
        raise UsageError(f"--wheel {path}: no such file", "Pass the path of an infx wheel, or --build-wheel.")
    data = path.read_bytes()
    version = match.group("version")
    metadata = f"infx-{version}.dist-info/METADATA"
    try:
        with zipfile.ZipFile(path) as archive:
            found = archive.read(metadata).decode("utf-8", errors="replace")
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise UsageError(
            f"--wheel {path}: not an infx wheel of version {version} ({metadata}: {exc})",
            "Pass the wheel infx's build wrote, unchanged, or --build-wheel.",
        ) from None
    if f"\nVersion: {version}\n" not in found or not found.startswith("Metadata-Version:"):
        raise UsageError(
            f"--wheel {path}: its metadata does not say Version: {version}", "Pass the wheel unrenamed, as built."
        )
    name = match.group(0)
    return InfxPin(
        version=version,
        requirement=f"./{KIT_DIR}/{name} \\\n    --hash=sha256:{_sha256(data)}",
        how=f"the wheel {KIT_DIR}/{name} (no package index needed for infx itself)",
        wheel_name=name,
        wheel=data,
    )


def source_root() -> Path | None:
    """This infx's source tree when it runs from one (a development install), else None."""
    root = Path(__file__).resolve().parents[2]
    project = root / "pyproject.toml"
    if project.is_file() and re.search(r'(?m)^name = "infx"\n', project.read_text(encoding="utf-8", errors="replace")):
        return root
    return None


def build_wheel(commit: str | None = None) -> InfxPin:
    """Build this development install's source (or, with ``commit``, a checkout of that commit of
    its git repository) into a wheel, with pip wheel without build isolation (the build backend
    already installed, no index), and pin that wheel."""
    root = source_root()
    if root is None:
        raise UsageError(
            f"{'--commit' if commit else '--build-wheel'} needs infx installed from its source tree "
            "(pip install -e <infx checkout>)",
            "Pass --wheel PATH (an infx wheel), or --pin X.Y.Z (a release on the package index).",
        )
    if commit is None:
        with tempfile.TemporaryDirectory(prefix="infx-source-") as folder:
            source = Path(folder) / "infx"
            version = _working_tree_copy(root, source)
            return _built_wheel(source, root, env={"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_INFX": version})
    if not COMMIT.fullmatch(commit):
        raise UsageError(
            f"--commit {commit[:80]!r} is not a full commit (40 lowercase hex digits)",
            "Pass the whole commit, e.g. --commit $(git -C <infx checkout> rev-parse HEAD).",
        )
    with tempfile.TemporaryDirectory(prefix="infx-commit-") as folder:
        checkout = Path(folder) / "infx"
        # A clone sharing the source's objects, at the commit: the build sees exactly that commit's
        # files (and its tags, for the version), never the working tree's edits.
        for argv in (
            ["git", "clone", "--quiet", "--shared", "--no-checkout", "--", str(root), str(checkout)],
            ["git", "-C", str(checkout), "-c", "advice.detachedHead=false", "checkout", "--quiet", commit],
        ):
            done = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_SECONDS)
            if done.returncode != 0:
                raise UsageError(
                    f"--commit {commit}: not a commit of infx's repository at {root} "
                    f"({(done.stderr.strip().splitlines() or ['git: no output'])[-1][:200]})",
                    f"Fetch it there first (git -C {root} fetch origin {commit}), or pass a commit it has.",
                )
        return _built_wheel(checkout, root, commit)


def _git_output(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{what}: {exc}", "Build the wheel yourself and pass --wheel PATH.") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        raise UsageError(f"{what} failed: {last}", "Build the wheel yourself and pass --wheel PATH.")
    return done.stdout


def _working_tree_copy(root: Path, destination: Path) -> str:
    """The files git sees in the source tree at ``root`` (tracked or new, not ignored; links kept as
    links) copied to ``destination``, where the build may write (its build folder, infx/_version.py)
    without touching the development install; and the version setuptools-scm gives ``root``."""
    listed = _git_output(
        ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        f"listing the source files of {root}",
    )
    for name in filter(None, listed.split("\0")):
        source, target = root / name, destination / name
        if not (source.is_symlink() or source.is_file()):
            continue  # deleted in the working tree, or a submodule
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    version = _git_output(
        [sys.executable, "-m", "setuptools_scm", "--root", str(root), "--config", str(root / "pyproject.toml")],
        f"reading the version of {root} (setuptools-scm, which the build needs too)",
    )
    lines = version.strip().splitlines()
    if not lines or not VERSION.fullmatch(lines[-1]):
        raise UsageError(
            f"setuptools-scm gave {root} no version ({lines[-1][:80] if lines else 'no output'!r})",
            "Build the wheel yourself and pass --wheel PATH.",
        )
    return lines[-1]


def _built_wheel(source: Path, root: Path, commit: str | None = None, env: dict[str, str] | None = None) -> InfxPin:
    with tempfile.TemporaryDirectory(prefix="infx-wheel-") as folder:
        argv = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
        try:
            done = subprocess.run(
                [*argv, "--wheel-dir", folder, str(source)],
                capture_output=True,
                text=True,
                timeout=BUILD_SECONDS,
                env={**os.environ, **(env or {})},
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UsageError(
                f"building infx's wheel from {root}: {exc}", "Build it yourself and pass --wheel PATH."
            ) from None
        wheels = sorted(Path(folder).glob("infx-*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            raise UsageError(
                f"building infx's wheel from {root} failed (pip wheel: exit {done.returncode}): "
                + (done.stderr.strip().splitlines() or ["no output"])[-1][:300],
                "pip wheel needs the build backend (setuptools, setuptools-scm: pip install -e '.[release]'); "
                "or build the wheel yourself and pass --wheel PATH.",
            )
        pin = pin_wheel(wheels[0])
    if commit is None:
        return pin
    how = f"the wheel {KIT_DIR}/{pin.wheel_name}, built from infx's commit {commit} (no package index needed for infx)"
    return replace(pin, commit=commit, how=how, dependencies=(source / LOCK_NAME).read_text(encoding="utf-8"))


def pin_release(version: str) -> InfxPin:
    """Pin infx by the release ``version`` on the package index: the hash of its wheel, which pip
    downloads (pip's index and --find-links settings apply)."""
    if not RELEASE_VERSION.fullmatch(version):
        raise UsageError(
            f"--pin {version[:80]!r} is not a released version (X.Y.Z)",
            "Pass a release on the package index, e.g. --pin 0.2.0; or pin a wheel: --wheel PATH or --build-wheel.",
        )
    with tempfile.TemporaryDirectory(prefix="infx-release-") as folder:
        argv = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:"]
        try:
            done = subprocess.run(
                [*argv, "--dest", folder, f"infx=={version}"], capture_output=True, text=True, timeout=BUILD_SECONDS
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            done = subprocess.CompletedProcess(argv, 1, "", str(exc))
        wheels = sorted(Path(folder).glob("infx-*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            raise UsageError(
                f"infx {version} could not be downloaded to record its hash (pip download: exit {done.returncode}): "
                + (done.stderr.strip().splitlines() or ["no output"])[-1][:300],
                "Is infx released to your package index as that version? Until one is, pin a wheel: "
                "--build-wheel (this development install), --commit SHA or --wheel PATH.",
            )
        digest = _sha256(wheels[0].read_bytes())
    return InfxPin(
        version=version,
        requirement=f"infx=={version} \\\n    --hash=sha256:{digest}",
        how=f"infx {version} from the package index",
    )


def lock_text(pin: InfxPin) -> str:
    """infx's own lock (its dependencies, hashed; with a commit pin that commit's), then infx itself:
    one install, hash-checked."""
    return (
        (pin.dependencies or template_text(LOCK_NAME)).rstrip("\n")
        + f"\n\n# infx {pin.version} itself (written by `infx init`"
        + (f"; built from infx's commit {pin.commit}" if pin.commit else "")
        + "). Install with:\n"
        f"#   python -m pip install {INSTALL}\n"
        "# (--no-deps: every package is here, pinned; pip checks every file's hash.)\n"
        f"{pin.requirement}\n"
    )


def resolve_pin(wheel: Path | None, build: bool, pin: str | None, commit: str | None = None) -> InfxPin:
    """The one pin the options ask for; without one, this infx's own version when it is a release."""
    if sum((wheel is not None, build, pin is not None, commit is not None)) > 1:
        raise UsageError(
            "--wheel, --build-wheel, --commit and --pin each pin infx: pass one", "For example --build-wheel."
        )
    if wheel is not None:
        return pin_wheel(wheel)
    if build or commit is not None:
        return build_wheel(commit)
    if pin is None and not RELEASE_VERSION.fullmatch(__version__):
        raise UsageError(
            f"infx {__version__} is not a released version, and no package index has it",
            "Pin this development install as a wheel shipped in the repository: --build-wheel (or --commit SHA, "
            "--wheel PATH); or pin a release: --pin X.Y.Z.",
        )
    return pin_release(pin or __version__)


# --- the files -----------------------------------------------------------------------------


@dataclass(frozen=True)
class KitFile:
    path: str  # relative to the repository root
    content: str | bytes
    part: str  # the PARTS key it belongs to (`--only PART`)
    replaceable: bool  # infx's (--force replaces it) or the repository's own starting point (never replaced)

    @property
    def data(self) -> bytes:
        return self.content.encode("utf-8") if isinstance(self.content, str) else self.content


# --only's parts: what each writes; the ones that need the pin (the lock and the wheel).
PARTS = {
    "workflows": "the workflows (.github/workflows/)",
    "lock": f"the lock and what it pins ({KIT_DIR}/)",
    "actionlint": ACTIONLINT_PATH,
    "settings": SETTINGS_PATH,
    "lane": "the lane profile skeleton (runners/<lane>.yaml)",
    "pre-commit": f"{PRE_COMMIT_PATH} and its hook runner",
    "evals": f"the eval suite ({EVALS_DIR}/)",
}
PINNED_PARTS = ("lock",)


def eval_suite_files() -> list[tuple[str, bytes]]:
    """infx's eval suite (infx/kit/evals: this repository's benchmarks/evals), file by file."""
    folder = resources.files(__name__).joinpath("evals")
    files = sorted(
        (f"{EVALS_DIR}/{item.name}", item.read_bytes())
        for item in folder.iterdir()
        if item.is_file() and not item.name.startswith(".")
    )
    return [(path, SCHEMA_MODELINE.sub(SUITE_HEADER, data) if path == SUITE_FILE else data) for path, data in files]


# infx's suite names its schema by a path of infx's source tree; a benchmark repository has none.
SCHEMA_MODELINE = re.compile(rb"\A# yaml-language-server: \$schema=[^\n]*\n")
SUITE_HEADER = (
    b"# Written by `infx init` from infx's own eval suite; this repository's from now on (init never\n"
    b"# replaces it). `infx lane validate` checks it for every lane whose `evals:` names it.\n"
)


def kit_files(root: Path, pin: InfxPin | None, lane: str, slug: str | None, parts: frozenset[str]) -> list[KitFile]:
    """Every file of the ``parts`` asked for, rendered (nothing is written yet)."""
    files = []
    if "workflows" in parts:
        workflows = resources.files(__name__).joinpath("workflows")
        files += [
            KitFile(
                path=f".github/workflows/{name}",
                content=consumer_workflow(name, workflows.joinpath(name).read_text(encoding="utf-8")),
                part="workflows",
                replaceable=True,
            )
            for name in KIT_WORKFLOWS
        ]
    if "lock" in parts and pin is not None:
        files.append(KitFile(path=LOCK_PATH, content=lock_text(pin), part="lock", replaceable=True))
        if pin.wheel_name and pin.wheel is not None:
            wheel_path = f"{KIT_DIR}/{pin.wheel_name}"
            files.append(KitFile(path=wheel_path, content=pin.wheel, part="lock", replaceable=True))
    labels = runner_labels(root)
    if "actionlint" in parts:
        actionlint = actionlint_config(labels or [])
        files.append(KitFile(path=ACTIONLINT_PATH, content=actionlint, part="actionlint", replaceable=True))
    if "settings" in parts:
        files.append(KitFile(path=SETTINGS_PATH, content=settings_file(slug), part="settings", replaceable=False))
    if "lane" in parts:
        skeleton = lane_skeleton(lane, labels)
        files.append(KitFile(path=f"runners/{lane}.yaml", content=skeleton, part="lane", replaceable=False))
    if "pre-commit" in parts:
        files.append(KitFile(path=PRE_COMMIT_PATH, content=pre_commit_config(), part="pre-commit", replaceable=False))
        runner = template_text(HOOK_RUNNER)
        files.append(KitFile(path=HOOK_RUNNER_PATH, content=runner, part="pre-commit", replaceable=True))
    if "evals" in parts:
        files += [
            KitFile(path=path, content=data, part="evals", replaceable=False) for path, data in eval_suite_files()
        ]
    return files


@dataclass(frozen=True)
class InitReport:
    """What `infx init` did, file by file, and what is left to do by hand."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    kept: tuple[tuple[str, str], ...]  # (path, why)
    replaced: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (path, what it was)
    todo: tuple[str, ...] = field(default_factory=tuple)


def callers(name: str, files: list[KitFile]) -> list[str]:
    """The kit workflows that call workflow ``name`` (`uses: ./.github/workflows/<name>`)."""
    called = re.compile(rf"(?m)^\s*uses: [.$]/\.github/workflows/{re.escape(name)}\s*$")
    return [
        Path(kit_file.path).name
        for kit_file in files
        if kit_file.part == "workflows" and isinstance(kit_file.content, str) and called.search(kit_file.content)
    ]


def _why_kept(kit_file: KitFile, target: Path, foreign: bool, force: bool) -> str | None:
    """Why the existing ``target`` stays as it is; None when ``force`` replaces it."""
    if not kit_file.replaceable:
        return "the repository's own: init never replaces it"
    if not force:
        return (
            "the repository's own workflow, not infx's: see the to-do"
            if foreign
            else "exists and differs: --force replaces it"
        )
    if target.is_symlink() or not target.is_file():
        return "not a regular file: init writes through no link; remove it first"
    return None


def _check_folders(root: Path, files: list[KitFile]) -> None:
    """Every folder a kit file goes into is a folder or can be made one, checked before the first
    write, so that a file in the way stops init before it has written anything."""
    for folder in sorted({parent for kit_file in files for parent in Path(kit_file.path).parents if parent.parts}):
        path = root / folder
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise UsageError(
                f"{folder} is {'a symbolic link' if path.is_symlink() else 'not a folder'}, and init writes "
                "files into it (through no link)",
                f"Move {folder} aside (git mv), or leave that part out with --only.",
                file=folder.as_posix(),
            )


def _is_infx_workflow(target: Path) -> bool:
    with target.open("rb") as handle:
        return handle.readline().startswith(WRITTEN_BY.encode())


@dataclass(frozen=True)
class InitRequest:
    """``infx init``: the repository at ``root``, and what it asks for."""

    root: Path
    force: bool = False
    lane: str = DEFAULT_LANE
    pin: str | None = None
    wheel: Path | None = None
    build_wheel: bool = False
    commit: str | None = None
    only: frozenset[str] = frozenset(PARTS)


def init(request: InitRequest) -> InitReport:
    """Write the kit into the repository at ``request.root``: every file is checked and rendered
    before the first is written; an existing file is replaced only with ``force``, only when it is
    infx's (a workflow, the lock, the actionlint configuration), and never silently: the report
    lists it. The repository's own settings, lane profile, pre-commit configuration and eval suite
    are never replaced."""
    root, lane = request.root, request.lane
    unknown = sorted(set(request.only) - set(PARTS))
    if unknown:
        raise UsageError(f"--only {unknown[0]!r} is not a part of the kit", f"Use one of: {', '.join(PARTS)}.")
    if not LANE_NAME.fullmatch(lane):
        raise UsageError(
            f"--lane {lane[:80]!r} is not a lane name (lowercase letters, digits and -)", "For example --lane gb300-nv."
        )
    if not root.is_dir():
        raise UsageError(
            f"{root} is not a folder", "Pass the root of the benchmark repository (default: the current folder)."
        )
    pinned = any(part in request.only for part in PINNED_PARTS)
    asked = {
        "--pin": request.pin,
        "--wheel": request.wheel,
        "--build-wheel": request.build_wheel,
        "--commit": request.commit,
    }
    unused = [option for option, value in asked.items() if value]
    if unused and not pinned:  # a pin that nothing writes would be ignored without a word
        raise UsageError(
            f"{unused[0]} pins infx in the lock, which --only leaves out",
            f"Add --only {PINNED_PARTS[0]}, or leave out {unused[0]}.",
        )
    pin = resolve_pin(request.wheel, request.build_wheel, request.pin, request.commit) if pinned else None
    slug = slug_from_remote(remote_url(root))
    files = kit_files(root, pin, lane, slug, request.only)
    _check_folders(root, files)
    suite = root / SUITE_FILE
    ours = next((kit_file.data for kit_file in files if kit_file.path == SUITE_FILE), None)
    own_suite = suite.exists() and not (suite.is_file() and suite.read_bytes() == ours)
    written, unchanged, kept, replaced, collisions = [], [], [], [], []
    for kit_file in files:
        target = root / kit_file.path
        if target.is_file() and not target.is_symlink() and target.read_bytes() == kit_file.data:
            unchanged.append(kit_file.path)
            continue
        if kit_file.part == "evals" and own_suite:
            kept.append((kit_file.path, "the repository's own eval suite is there: init adds none of infx's files"))
            continue
        if kit_file.part == "lock" and kit_file.path != LOCK_PATH and LOCK_PATH in dict(kept):
            kept.append((kit_file.path, f"not written: {LOCK_PATH}, which would pin it, is kept"))
            continue
        replacing = None
        if target.exists() or target.is_symlink():
            foreign = kit_file.part == "workflows" and not (target.is_file() and _is_infx_workflow(target))
            why = _why_kept(kit_file, target, foreign, request.force)
            if why is not None:
                kept.append((kit_file.path, why))
                if foreign and not request.force:
                    collisions.append(kit_file.path)
                continue
            replacing = "the repository's own workflow, not infx's" if foreign else "infx's, and it differed"
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, kit_file.content)
        if replacing is None:
            written.append(kit_file.path)
        else:
            replaced.append((kit_file.path, replacing))
    kept_paths = frozenset(path for path, _ in kept)
    todo = _todo(root, pin, lane, slug, files, collisions, request.only, kept_paths)
    return InitReport(
        written=tuple(written), unchanged=tuple(unchanged), kept=tuple(kept), replaced=tuple(replaced), todo=tuple(todo)
    )


def _todo(
    root: Path,
    pin: InfxPin | None,
    lane: str,
    slug: str | None,
    files: list[KitFile],
    collisions: list[str],
    parts: frozenset[str],
    kept: frozenset[str] = frozenset(),
) -> list[str]:
    todo = []
    if PRE_COMMIT_PATH in kept:
        hooks = ", ".join(
            f"`{line.split(': ', 1)[1]}`" for line in pre_commit_config().splitlines() if "- id: " in line
        )
        todo.append(
            f"{PRE_COMMIT_PATH} is the repository's own and kept: add infx's hooks ({hooks}) to it as `repo: local` "
            f"hooks running `python3 {HOOK_RUNNER_PATH} <infx command>` (`infx init --only pre-commit` in an empty "
            "folder writes them; infx's README shows them)."
        )
    for path in collisions:
        name = Path(path).name
        depending = callers(name, files)
        todo.append(
            f"{path} is the repository's own workflow, not infx's; infx's needs that name (infx's reuse and "
            "reruns trust only runs of .github/workflows/run-sweep.yml, and its workflows call each other by name)"
            + (f": {', '.join(depending)} would call yours" if depending else "")
            + f". Rename yours (`git mv {path} .github/workflows/<another name>.yml`) and run `infx init` again, "
            "or let `infx init --force` replace it."
        )
    lane_file = root / f"runners/{lane}.yaml"
    if "lane" in parts and lane_file.is_file() and FILL_IN in lane_file.read_text(encoding="utf-8", errors="replace"):
        todo.append(
            f"Fill in every `{FILL_IN}: …>` of runners/{lane}.yaml (rename the lane to yours: "
            f"`infx init --lane NAME`), then `infx lane pins {lane} --update` and `infx lane validate` "
            "(it reports each placeholder left: lane-placeholder)."
        )
    settings = root / SETTINGS_PATH
    if "settings" in parts and settings.is_file() and FILL_IN in settings.read_text(encoding="utf-8", errors="replace"):
        todo.append(f"Set `repository: OWNER/NAME` in {SETTINGS_PATH} (no GitHub remote `origin` was found).")
    if "actionlint" in parts and runner_labels(root) is None:
        todo.append(
            f"Add {RUNNERS_PATH} (the runner labels), then `infx init --only actionlint --force` writes "
            f"{ACTIONLINT_PATH} from it."
        )
    if "lock" in parts and pin is not None:
        lock = root / LOCK_PATH
        pinned_text = lock.read_text(encoding="utf-8", errors="replace") if lock.is_file() else ""
        stale = sorted(
            path.relative_to(root).as_posix()
            for path in (root / KIT_DIR).glob("infx-*.whl")
            if f"./{KIT_DIR}/{path.name} " not in pinned_text
        )
        if stale:
            todo.append(f"Remove what the lock no longer pins: `git rm {' '.join(stale)}`.")
    if parts != frozenset(PARTS):
        return todo
    todo.append(
        f"Register the lane's self-hosted runners with its labels, in a runner group limited to this repository, "
        f"as ephemeral runners, and list each under its labels in {RUNNERS_PATH} (the plan's queue check counts "
        f"them); then `GITHUB_TOKEN=<an admin's token> infx repo check{' --repo ' + slug if slug else ''}` "
        "checks those settings and that fork pull requests need approval and the default token is read-only."
    )
    todo.append(
        f"Optional: add the repository secret {RUNNERS_TOKEN}, a token that may read the runners (Administration: "
        "read; for an organization's runner groups also its Self-hosted runners: read), so a sweep skips a lane "
        "whose runners are all offline instead of queuing its points for 24 hours (infx's README, "
        '"Use in your repository").'
    )
    todo.append(
        "Create the pull-request labels of the label table: " + ", ".join(f"`{label}`" for label in LABELS) + "."
    )
    if pin is not None:
        todo.append(
            f"Commit the files; the workflows install {pin.how}, with the dependencies {LOCK_PATH} pins, every file "
            f"hash-checked. `pre-commit install` runs infx's checks before each commit and push ({PRE_COMMIT_PATH}, "
            f"through {HOOK_RUNNER_PATH})."
        )
    return todo
