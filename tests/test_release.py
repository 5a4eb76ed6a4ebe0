"""A released, pinned infx: the version from git tags, the lock of its dependencies, the
release build and the release workflow (docs/workflows.md, "Releases")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from testing.cli import run_cli
from testing.locks import check_hashed
from testing.locks import locked as read_lock

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
WORKFLOWS = REPO / ".github" / "workflows"


# --- the lock ---------------------------------------------------------------------------------


def locked() -> dict[str, list[dict]]:
    return read_lock(LOCK)


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_every_locked_requirement_is_pinned_with_hashes():
    check_hashed(LOCK, at_least=20)


def test_the_lock_is_current_with_pyproject():
    """The direct requirements of the lock are exactly pyproject's dependencies, each pinned to a
    version its specifier accepts: a dependency added, dropped or tightened without running
    .ci/lock fails here (and the workflows would install something else than pyproject says)."""
    declared = {
        canonicalize_name(Requirement(text).name): Requirement(text) for text in pyproject()["project"]["dependencies"]
    }
    direct = {
        name: pins for name, pins in locked().items() if any("infx (pyproject.toml)" in pin["via"] for pin in pins)
    }
    assert set(direct) == set(declared), f"run .ci/lock: pyproject {sorted(declared)} vs lock {sorted(direct)}"
    for name, pins in direct.items():
        for pin in pins:
            assert declared[name].specifier.contains(pin["version"], prereleases=True), (name, str(pin["version"]))


def test_the_lock_covers_every_python_infx_supports():
    """uv resolved it for requires-python's floor upwards (universal markers, no platform pinned)."""
    floor = pyproject()["project"]["requires-python"]
    assert floor == ">=3.11"
    for name, pins in locked().items():
        for pin in pins:
            marker = str(pin["marker"] or "")
            assert "sys_platform" not in marker and "platform_machine" not in marker, (name, marker)


# --- the version --------------------------------------------------------------------------------


def source_copy(destination: Path) -> Path:
    """The files of this working tree that git would see (tracked or new, not ignored), with
    symbolic links kept as links, in a new git repository with one commit."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source, target = REPO / name, destination / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet committed
        if name.startswith(("tests/", "bench/", "benchmarks/")) and not name.startswith("benchmarks/evals/"):
            continue  # not needed to build or version the package (the eval suite is: infx/kit/evals)
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target)
    git(destination, "init", "-q", "-b", "main")
    git(destination, "add", "-A")
    git(destination, "commit", "-qm", "release candidate")
    return destination


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "ci",
        "GIT_AUTHOR_EMAIL": "ci@example.invalid",
        "GIT_COMMITTER_NAME": "ci",
        "GIT_COMMITTER_EMAIL": "ci@example.invalid",
    }
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True, env=env).stdout.strip()


def scm_version(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "setuptools_scm", "--root", str(root), "--config", str(root / "pyproject.toml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    repo = source_copy(tmp_path_factory.mktemp("release") / "infx")
    git(repo, "tag", "-a", "v9.8.7", "-m", "infx 9.8.7")
    return repo


def test_the_version_is_the_tag_and_a_fallback_without_one(tagged: Path, tmp_path: Path):
    assert scm_version(tagged) == "9.8.7"
    # A shallow clone of main without tags (how CI checks out): a development version, no error.
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--no-tags", f"file://{tagged}", str(shallow)], check=True)
    untagged = Version(scm_version(shallow))
    assert untagged.is_devrelease and untagged < Version("9.8.7")
    # No git at all (an unpacked source tree): pyproject's fallback version.
    plain = tmp_path / "plain"
    shutil.copytree(tagged, plain, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    assert scm_version(plain) == pyproject()["tool"]["setuptools_scm"]["fallback_version"]


def test_an_unbuilt_source_tree_says_so(tmp_path: Path):
    """infx's version is the build's (infx/_version.py, which setuptools-scm writes); a source tree
    that was never built says SOURCE_VERSION instead of failing to import."""
    package = tmp_path / "infx"
    package.mkdir()
    shutil.copy(REPO / "infx" / "__init__.py", package / "__init__.py")

    def version() -> str:
        # -S: no site-packages, so an editable install of infx cannot lend its _version module
        done = subprocess.run(
            [sys.executable, "-S", "-c", "import infx; print(infx.__version__)"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    import infx

    assert version() == infx.SOURCE_VERSION
    (package / "_version.py").write_text("version = '9.8.7'\n")
    assert version() == "9.8.7"
    done = run_cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"infx, version {infx.__version__}"


# --- the release build and workflow ----------------------------------------------------------


def test_a_release_tag_builds_an_sdist_and_a_wheel_of_its_version(tagged: Path):
    done = subprocess.run(
        ["bash", ".ci/build-dists", "v9.8.7"], cwd=tagged, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    dist = tagged / "dist"
    assert sorted(p.name for p in dist.iterdir()) == ["infx-9.8.7-py3-none-any.whl", "infx-9.8.7.tar.gz"]
    with zipfile.ZipFile(dist / "infx-9.8.7-py3-none-any.whl") as wheel:
        names = set(wheel.namelist())
        assert "Version: 9.8.7" in wheel.read("infx-9.8.7.dist-info/METADATA").decode().splitlines()
        assert "version = '9.8.7'" in wheel.read("infx/_version.py").decode()
        # The consumer kit travels as package data: the very bytes of the workflows and the lock.
        for workflow in sorted(WORKFLOWS.glob("*.yml")):
            assert wheel.read(f"infx/kit/workflows/{workflow.name}") == workflow.read_bytes(), workflow.name
        assert wheel.read("infx/kit/requirements.lock") == LOCK.read_bytes()
        # ... the eval suite init writes (benchmarks/evals, through the sdist) and the hook runner.
        evals = sorted(p for p in (REPO / "benchmarks" / "evals").iterdir() if p.is_file())
        assert evals and all(wheel.read(f"infx/kit/evals/{p.name}") == p.read_bytes() for p in evals)
        assert wheel.read("infx/kit/run-infx.py") == (REPO / "infx" / "kit" / "run-infx.py").read_bytes()
        assert {"infx/schemas/lane.schema.json", "infx/config/components.yaml"} <= names
        assert not any(name.startswith("tests/") for name in names)
    # A build whose version is not the tag's (here: the tag asked for is another) fails.
    mismatch = subprocess.run(
        ["bash", ".ci/build-dists", "v1.0.0"], cwd=tagged, capture_output=True, text=True, timeout=300
    )
    assert mismatch.returncode == 1 and "expected dist/infx-1.0.0.tar.gz for tag v1.0.0" in mismatch.stderr
    bad_shape = subprocess.run(["bash", ".ci/build-dists", "release-1"], cwd=tagged, capture_output=True, text=True)
    assert bad_shape.returncode == 1 and "is not vX.Y.Z" in bad_shape.stderr


def load_workflow(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # PyYAML reads the key `on` as true
    return data


def test_the_release_workflow_publishes_a_tag_with_trusted_publishing_only():
    release = load_workflow("release.yml")
    assert release["on"] == {"push": {"tags": ["v*"]}}
    jobs = release["jobs"]
    build = jobs["build"]
    script = next(step["run"] for step in build["steps"] if ".ci/build-dists" in step.get("run", ""))
    assert script.strip() == 'bash .ci/build-dists "$TAG"'
    env = next(step["env"] for step in build["steps"] if ".ci/build-dists" in step.get("run", ""))
    assert env == {"TAG": "${{ github.ref_name }}"}
    checkout = build["steps"][0]
    assert checkout["with"]["fetch-depth"] == 0, "setuptools-scm needs the tag in the checkout"
    assert jobs["pypi"]["needs"] == "build" and jobs["github-release"]["needs"] == "build"
    publish = jobs["pypi"]["steps"][-1]
    assert publish["uses"].startswith("pypa/gh-action-pypi-publish@") and "with" not in publish, (
        "trusted publishing: no username, no password, no token"
    )
    assert jobs["pypi"]["environment"]["name"] == "pypi"
    assert jobs["github-release"]["permissions"] == {"contents": "write"}
    # id-token: write exists on exactly one job of all the workflows: the PyPI upload.
    holders = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        workflow = load_workflow(path.name)
        for job_name, job in workflow["jobs"].items():
            if (job.get("permissions") or {}).get("id-token") == "write":
                holders.append((path.name, job_name))
        assert (workflow.get("permissions") or {}).get("id-token") is None
    assert holders == [("release.yml", "pypi")]
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}
