""".ci/run installs only what is pinned: Python packages by hash from requirements-dev.lock, npm packages by
integrity hash from package-lock.json, Debian packages by upstream release from .ci/debian-packages; and the
development lock is current with pyproject.toml and agrees with requirements.lock."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from testing.locks import check_hashed, locked

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / ".ci" / "run"
DEV_LOCK = REPO / "requirements-dev.lock"
EXTRAS = ("test", "lint", "evals")  # what .ci/lock compiles into the development lock


def commands() -> list[list[str]]:
    """The commands of .ci/run, one per logical line (continuations joined), comments left out."""
    text = re.sub(r"\\\n", " ", RUN.read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            found.append(shlex.split(line, comments=True))
    return found


def installs(tool: str) -> list[list[str]]:
    """Every command line of .ci/run that runs ``tool`` (e.g. "pip" in `python3 -m pip install`)."""
    return [words for words in commands() if tool in words]


def test_every_pip_install_is_hash_checked_or_the_checkout_built_with_locked_tools():
    pip = [words[words.index("pip") + 1 :] for words in installs("pip")]
    pip_installs = [args for args in pip if args[0] == "install"]
    assert len(pip_installs) == 2, pip
    for args in pip_installs:
        assert "--no-deps" in args, args  # nothing resolved beyond what the lock lists
        if "--require-hashes" in args:
            assert args[args.index("-r") + 1] == DEV_LOCK.name, args
        else:  # the checkout itself: its build backend comes from the lock, not from an unhashed download
            assert args[-2:] == ["-e", "."] and "--no-build-isolation" in args, args
    assert ["check"] in pip, "pip check proves the --no-deps install consistent"


def test_npm_installs_only_what_package_lock_pins_with_integrity_hashes():
    npm = [words for words in commands() if words and words[0] == "npm"]
    assert npm and all(words[1] == "ci" for words in npm), npm
    packages = json.loads((REPO / "package-lock.json").read_text())["packages"]
    dependencies = {name: entry for name, entry in packages.items() if name}
    assert dependencies
    for name, entry in dependencies.items():
        assert re.fullmatch(r"sha512-[A-Za-z0-9+/]+={0,2}", entry["integrity"]), name


def debian_packages() -> list[tuple[str, str, str]]:
    rows = []
    for line in (REPO / ".ci" / "debian-packages").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            package, version, command = line.split()
            rows.append((package, version, command))
    return rows


def test_debian_packages_are_installed_only_from_the_pinned_list():
    rows = debian_packages()
    assert {package for package, _, _ in rows} >= {"slurm-wlm", "munge", "git", "nodejs", "npm", "chromium"}
    for package, version, command in rows:
        assert re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", package), package
        assert re.fullmatch(r"([0-9]+:)?[0-9][0-9A-Za-z.+~-]*", version), (package, version)
        assert command == "-" or re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", command), (package, command)
    apt = [words for words in commands() if words[:2] == ["apt-get", "install"]]
    # The one install takes the list read from .ci/debian-packages, each as NAME=VERSION*.
    assert apt == [["apt-get", "install", "-y", "-qq", "--no-install-recommends", "${missing[@]}", ">/dev/null"]], apt
    assert 'missing+=("$package=$version*")' in RUN.read_text()
    assert "done < .ci/debian-packages" in RUN.read_text()


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_the_development_lock_pins_every_package_with_hashes():
    check_hashed(DEV_LOCK, at_least=100)


def test_the_development_lock_is_current_with_pyproject_and_agrees_with_the_runtime_lock():
    """Every requirement of the three extras, of the runtime and of the build backend is pinned to a version its
    specifier accepts; each runtime package is at requirements.lock's version (the tests run what workflows run)."""
    project = pyproject()
    declared = [
        *project["project"]["dependencies"],
        *(text for extra in EXTRAS for text in project["project"]["optional-dependencies"][extra]),
        *project["build-system"]["requires"],
    ]
    entries = locked(DEV_LOCK)
    for text in declared:
        requirement = Requirement(text)
        pins = entries.get(canonicalize_name(requirement.name))
        assert pins, f"run .ci/lock: {requirement.name} is not in {DEV_LOCK.name}"
        for pin in pins:
            assert requirement.specifier.contains(pin["version"], prereleases=True), (text, str(pin["version"]))
    runtime = locked(REPO / "requirements.lock")
    for name, pins in runtime.items():
        assert {str(p["version"]) for p in entries[name]} == {str(p["version"]) for p in pins}, name


def test_the_lint_extra_brings_the_type_stubs_mypy_needs():
    """mypy reports a missing stub as an error: an import of an untyped package needs its stub in `lint`."""
    lint = {
        canonicalize_name(Requirement(text).name) for text in pyproject()["project"]["optional-dependencies"]["lint"]
    }
    assert {"mypy", "ruff", "types-pyyaml"} <= lint


def test_the_lint_extra_alone_runs_the_linters_clean(tmp_path):
    """A fresh virtual environment holding only `pip install '.[lint]'` runs .ci/run's gate clean: ruff (format
    and check) on infx, tests and bench, and mypy on infx. The versions are today's locked ones (the lock as
    constraints, without its hashes, which pip does not take in a constraints file); the checkout is copied
    without its git metadata, as a source archive builds."""
    tree = tmp_path / "tree"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():  # a file deleted from the work tree is still listed as cached
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)
    constraints = tmp_path / "constraints.txt"
    constraints.write_text(
        "".join(
            f"{name}=={pin['version']}\n"
            for name, pins in locked(DEV_LOCK).items()
            for pin in pins
            if pin["marker"] is None or pin["marker"].evaluate()
        )
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    install = [python, "-m", "pip", "install", "--quiet", "--constraint", str(constraints), f"{tree}[lint]"]
    subprocess.run(install, check=True, capture_output=True)
    for linter in (
        ["ruff", "format", "--check", "infx", "tests", "bench"],
        ["ruff", "check", "infx", "tests", "bench"],
        ["mypy", "--cache-dir", str(tmp_path / "mypy-cache"), "infx"],
    ):
        done = subprocess.run([python, "-m", *linter], cwd=tree, capture_output=True, text=True, check=False)
        assert done.returncode == 0, (linter, done.stdout[-3000:], done.stderr[-3000:])
