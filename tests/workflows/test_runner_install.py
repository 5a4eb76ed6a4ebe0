"""The executor's runner installs infx for real (runner_python.py): a job has infx only after it
installed the lock and infx, and then it runs the session's wheel, not the project's source."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from testing.executor import PROJECT, Executor
from testing.runner_python import Runtime, copy_source, runtime_file

INSTALL = """python -m pip install --require-hashes -r requirements.lock
python -m pip install --no-deps ."""


def workspace(tmp_path: Path, steps: list[str], *, source: bool = True, lock: bool = False) -> Path:
    """A git repository with infx's source (or none, or only its lock) and a one-job workflow
    running ``steps``."""
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    if source:
        copy_source(repo)
    if lock:
        shutil.copy(PROJECT / "requirements.lock", repo / "requirements.lock")
    body = "".join(
        f"      - id: s{i}\n        run: |\n" + "".join(f"          {line}\n" for line in step.splitlines())
        for i, step in enumerate(steps)
    )
    (repo / "job.yml").write_text(  # not in .github/workflows: those are part of infx's wheel
        "name: job\non:\n  workflow_dispatch:\n    inputs: {}\npermissions: {}\njobs:\n  job:\n    runs-on: "
        "ubuntu-latest\n    permissions: {}\n    steps:\n" + body
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "commit", "-qm", "x"],
        check=True,
    )
    return repo


def run_job(tmp_path: Path, steps: list[str], *, source: bool = True, lock: bool = False):
    repo = workspace(tmp_path, steps, source=source, lock=lock)
    sha = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    run = Executor(repo, tmp_path / "run", "workflow_dispatch", {}, sha=sha)
    results = run.run("job.yml")
    return results["job"], run.jobs[0]


@pytest.fixture(scope="module")
def runtime() -> Runtime:
    return Runtime.read(runtime_file())


def test_infx_is_there_only_after_the_job_installed_it(tmp_path: Path, runtime: Runtime):
    result, job = run_job(tmp_path, ["infx --version"])
    assert result == "failure" and "infx: command not found" in job.log
    result, job = run_job(
        tmp_path / "installed",
        [INSTALL, "infx --version", 'python -c "import infx, yaml; print(infx.__file__, yaml.__file__)"'],
    )
    assert result == "success", job.log
    assert f"infx, version {runtime.version}" in job.log
    # The installed wheel and the locked packages, never the checkout's source or the test process's.
    assert f"{runtime.venv}/lib/" in job.log and str(PROJECT / "infx") not in job.log


def test_a_venv_starts_empty_and_gets_its_own_install(tmp_path: Path, runtime: Runtime):
    steps = [
        'python3 -m venv "$RUNNER_TEMP/v"',
        '"$RUNNER_TEMP/v/bin/python" -m pip install --quiet --require-hashes -r requirements.lock',
        'if "$RUNNER_TEMP/v/bin/python" -m infx --version; then exit 1; fi',  # the lock alone is not infx
        '"$RUNNER_TEMP/v/bin/python" -m pip install --quiet --no-deps .',
        '"$RUNNER_TEMP/v/bin/infx" --version',
    ]
    result, job = run_job(tmp_path, steps)
    assert result == "success", job.log
    assert "No module named infx" in job.log and f"infx, version {runtime.version}" in job.log


@pytest.mark.parametrize(
    "install, refusal",
    [
        ("python -m pip install .", "installs only"),  # unlocked dependencies
        ("python -m pip install -r requirements.lock", "installs only"),  # no hash checking
        (
            "printf 'click==8.1.7\\n' > other.txt && python -m pip install --require-hashes -r other.txt",
            "is not the lock",
        ),
        ("python -m pip install --no-deps 'infx==0.1.0'", "No matching distribution found for infx==0.1.0"),
    ],
)
def test_an_install_the_workflows_must_not_do_is_refused(tmp_path: Path, install: str, refusal: str):
    result, job = run_job(tmp_path, [install])
    assert result == "failure" and refusal in job.log, job.log


def test_installing_the_checkout_needs_the_source_the_wheel_was_built_from(tmp_path: Path, runtime: Runtime):
    result, job = run_job(tmp_path, [INSTALL], source=False, lock=True)
    assert result == "failure" and "is not installable" in job.log
    edited = ["printf '\\n# edited\\n' >> infx/points.py", INSTALL]
    result, job = run_job(tmp_path / "edited", edited)
    assert result == "failure" and "differs from the one this test session built" in job.log
    # A consumer repository has no infx source: it installs the released infx, pinned, with the lock.
    pinned = [
        "python -m pip install --require-hashes -r requirements.lock",
        f'python -m pip install --no-deps "infx=={runtime.version}"',
        "infx --version",
    ]
    result, job = run_job(tmp_path / "pinned", pinned, source=False, lock=True)
    assert result == "success" and f"infx, version {runtime.version}" in job.log, job.log


@pytest.mark.parametrize("tampered", [False, True])
def test_a_kit_lock_installs_infx_from_the_wheel_it_pins_by_hash(tmp_path: Path, runtime: Runtime, tampered: bool):
    """A benchmark repository's one install (`infx init --wheel`): the lock, then the shipped wheel
    with its SHA-256; a wheel whose bytes are not the pinned ones is refused, as pip refuses it."""
    import hashlib

    name = Path(runtime.wheel).name
    digest = hashlib.sha256(Path(runtime.wheel).read_bytes()).hexdigest()
    steps = [
        f"cp '{runtime.wheel}' './{name}'" + (f" && printf x >> './{name}'" if tampered else ""),
        f"{{ cat requirements.lock; printf '\\n./{name} \\\\\\n    --hash=sha256:{digest}\\n'; }} > kit.lock",
        "python -m pip install --no-deps --require-hashes -r kit.lock",
        "infx --version",
    ]
    result, job = run_job(tmp_path, steps, source=False, lock=True)
    if tampered:
        assert result == "failure" and "DO NOT MATCH THE HASHES" in job.log, job.log
    else:
        assert result == "success" and f"infx, version {runtime.version}" in job.log, job.log


def test_the_runtime_is_one_build_shared_by_the_session(runtime: Runtime):
    """Every worker reads the same description; the wheel holds the kit's package data."""
    import zipfile

    assert json.loads(runtime_file().read_text())["wheel"] == runtime.wheel
    with zipfile.ZipFile(runtime.wheel) as wheel:
        names = set(wheel.namelist())
    assert {"infx/kit/requirements.lock", "infx/kit/workflows/run-sweep.yml"} <= names
    assert {"infx/kit/run-infx.py", "infx/kit/evals/suite.yaml", "infx/kit/evals/gsm8k.yaml"} <= names
