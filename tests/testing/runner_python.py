"""The stand-in runner's Python, for tests/testing/executor.py: infx really installed.

Once per test session (under a file lock, so pytest-xdist's workers share it) the project is
built into a wheel and installed, with the dependencies of requirements.lock (pip
--require-hashes, as the workflows do), into a virtual environment: the **session runtime**.

Each job of an executed workflow starts with a Python of its own (an *environment*: a folder
with `bin/python`, `bin/python3`), on which nothing is installed. A step's
``python -m pip install`` is checked against what the runtime was built from and then takes
effect in that environment only:

- ``--require-hashes -r FILE``: FILE must be the lock the runtime was installed from;
- ``--no-deps .``: the checkout must hold the infx source the wheel was built from;
- ``--no-deps infx==VERSION``: VERSION must be the wheel's (a released infx, pinned);
- ``--no-deps --require-hashes -r FILE`` (a benchmark repository's kit, `infx init`): FILE must be
  that lock followed by infx itself, hash-checked: the session's wheel shipped in the checkout
  (``./PATH --hash=sha256:…``) or ``infx==VERSION --hash=sha256:…`` of the wheel's version and hash;

any other install is refused, as a runner with only PyPI's real packages would refuse an
unknown one. ``infx`` exists in an environment (``bin/infx``, ``python -m infx``) only once
both the lock and infx were installed into it; ``python -m venv DIR`` makes a new, empty
environment. Installing is a check plus a marker, not a pip run per job: the wheel and its
dependencies are the same bytes in every job, and 70 jobs of real pip would cost minutes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
LOCK_NAME = "requirements.lock"
# What the wheel is built from (pyproject.toml's package data reaches .github/workflows).
SOURCE = (
    "pyproject.toml",
    "MANIFEST.in",
    "README.md",
    LOCK_NAME,
    ".pre-commit-hooks.yaml",
    "infx",
    ".github/workflows",
    "benchmarks/evals",  # infx/kit/evals links to it
)
ROOT_VARIABLE = "INFX_TEST_RUNNER_ROOT"  # set by tests/conftest.py: a folder all workers of the session share
LOCK_MARKER, INFX_MARKER = "installed-lock", "installed-infx"


@dataclass(frozen=True)
class Runtime:
    venv: str  # the virtual environment with the locked dependencies and the wheel
    wheel: str
    version: str
    source_digest: str
    lock_digest: str
    build_seconds: float

    @classmethod
    def read(cls, path: Path) -> Runtime:
        return cls(**json.loads(path.read_text()))


def source_files(root: Path) -> list[Path]:
    """The files of SOURCE under ``root`` (symbolic links as links), in a stable order."""
    found = []
    for name in SOURCE:
        path = root / name
        if path.is_symlink() or path.is_file():
            found.append(path)
        elif path.is_dir():
            for item in sorted(path.rglob("*")):
                if "__pycache__" in item.parts or item.name == "_version.py" or item.suffix == ".pyc":
                    continue
                if item.is_symlink() or item.is_file():
                    found.append(item)
    return found


DESCRIPTION_ONLY = ("README.md",)  # becomes the package's long description, nothing infx runs


def source_digest(root: Path) -> str:
    """What the wheel is made of, as one digest: two checkouts that differ only in the README
    install the same infx."""
    digest = hashlib.sha256()
    for path in source_files(root):
        if path.relative_to(root).as_posix() in DESCRIPTION_ONLY:
            continue
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(b"link:" + os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def copy_source(destination: Path) -> None:
    """The infx source (SOURCE) of this project into ``destination``, e.g. a test's repository,
    which then is what this repository's workflows check out and install (`pip install .`)."""
    for path in source_files(PROJECT):
        target = destination / path.relative_to(PROJECT)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.exists():
            target.unlink()
        if path.is_symlink():
            os.symlink(os.readlink(path), target)
        else:
            shutil.copy2(path, target)


def lock_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def runtime_file() -> Path:
    """The session runtime's description (a JSON file), built by the first worker that asks and
    reused by the others."""
    root = Path(os.environ.get(ROOT_VARIABLE) or tempfile.gettempdir()) / "infx-runtime"
    root.mkdir(parents=True, exist_ok=True)
    digest = source_digest(PROJECT)
    ready = root / f"runtime-{digest[:16]}.json"
    with open(root / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.is_file():
            build = _build(root / digest[:16], digest)
            ready.write_text(json.dumps(asdict(build)))
    return ready


def _build(folder: Path, digest: str) -> Runtime:
    import time

    started = time.monotonic()
    if folder.exists():
        shutil.rmtree(folder)
    source, wheels, venv = folder / "src", folder / "wheels", folder / "venv"
    copy_source(source)
    # The source copy has no git metadata: setuptools-scm is told the version (a development
    # version naming the source digest, so every build of other source has another version).
    version = f"0.0.0.dev0+tests.{digest[:12]}"
    env = {**os.environ, "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_INFX": version}
    env.pop("PYTHONPATH", None)
    # uv (the test extra) builds and installs: the same wheel and hash-checked packages pip would
    # give, in about 3 s instead of about 25 s of pip on two busy cores.
    uv = [sys.executable, "-m", "uv"]
    _run([*uv, "build", "--quiet", "--wheel", "--out-dir", str(wheels), str(source)], env)
    wheel = next(wheels.glob("infx-*.whl"))
    _run([*uv, "venv", "--quiet", "--python", sys.executable, str(venv)], env)
    python = str(venv / "bin" / "python")
    _run([*uv, "pip", "install", "--quiet", "--python", python, "--require-hashes", "-r", str(source / LOCK_NAME)], env)
    _run([*uv, "pip", "install", "--quiet", "--python", python, "--no-deps", str(wheel)], env)
    return Runtime(
        str(venv), str(wheel), version, digest, lock_digest(source / LOCK_NAME), round(time.monotonic() - started, 1)
    )


def _run(argv: list[str], env: dict) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"building the session runtime: {' '.join(argv)} failed:\n{done.stdout}{done.stderr}")


# --- one environment (a job's Python, or a venv a step made) -----------------------------------


def make_environment(env_dir: Path, runtime_file: Path) -> Path:
    """A new environment at ``env_dir`` with nothing installed; returns its bin folder."""
    bin_dir = env_dir / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    runtime = Runtime.read(runtime_file)
    wrapper = (
        "#!/bin/bash\n"
        "# A Python of the stand-in runner (tests/testing/runner_python.py).\n"
        f"env_dir='{env_dir}'\n"
        'case "$1 $2" in\n'
        f"  '-m pip'|'-m venv') exec '{sys.executable}' '{Path(__file__).resolve()}' \"$env_dir\" '{runtime_file}' "
        f'"$@" ;;\n  \'-m infx\') [ -x "$env_dir/bin/infx" ] || {{ echo "$0: No module named infx" >&2; exit 1; }} ;;\n'
        "esac\n"
        f"exec '{runtime.venv}/bin/python' \"$@\"\n"
    )
    for name in ("python", "python3"):
        (bin_dir / name).write_text(wrapper)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _install(env_dir: Path, runtime: Runtime, args: list[str]) -> int:
    flags = {"--quiet", "-q", "--disable-pip-version-check", "--no-input"}
    quiet = any(a in ("--quiet", "-q") for a in args)
    rest = [a for a in args if a not in flags]
    requirement_files, targets, options = [], [], set()
    index = 0
    while index < len(rest):
        arg = rest[index]
        if arg in ("-r", "--requirement"):
            requirement_files.append(rest[index + 1] if index + 1 < len(rest) else "")
            index += 2
            continue
        if arg.startswith("-"):
            options.add(arg)
        else:
            targets.append(arg)
        index += 1
    if requirement_files and not targets and options == {"--require-hashes"} and len(requirement_files) == 1:
        path = Path(requirement_files[0])
        if not path.is_file():
            return _refuse(f"Could not open requirements file: [Errno 2] No such file or directory: '{path}'")
        if lock_digest(path) != runtime.lock_digest:
            return _refuse(
                f"{path} is not the lock this test session installed ({LOCK_NAME} of the project): "
                "the stand-in runner only has the locked packages"
            )
        (env_dir / LOCK_MARKER).touch()
        message = "the locked dependencies"
    elif requirement_files and not targets and options == {"--no-deps", "--require-hashes"}:
        if len(requirement_files) != 1 or not Path(requirement_files[0]).is_file():
            return _refuse(f"Could not open requirements file: {requirement_files}")
        refusal = _kit_lock_refusal(Path(requirement_files[0]), runtime)
        if refusal:
            return _refuse(refusal)
        (env_dir / LOCK_MARKER).touch()
        (env_dir / INFX_MARKER).touch()
        message = f"the locked dependencies and infx-{runtime.version}"
    elif not requirement_files and options == {"--no-deps"} and len(targets) == 1:
        target = targets[0]
        if target == ".":
            if not (Path.cwd() / "pyproject.toml").is_file():
                return _refuse(
                    f"Directory '{Path.cwd()}' is not installable. Neither 'setup.py' nor 'pyproject.toml' found."
                )
            if source_digest(Path.cwd()) != runtime.source_digest:
                return _refuse("the checkout's infx source differs from the one this test session built its wheel from")
        elif target.replace('"', "") != f"infx=={runtime.version}":
            return _refuse(
                f"No matching distribution found for {target} (the stand-in index has infx=={runtime.version})"
            )
        (env_dir / INFX_MARKER).touch()
        message = f"infx-{runtime.version}"
    else:
        return _refuse(
            "the stand-in runner installs only `--require-hashes -r <lock>` and `--no-deps .` or "
            f"`--no-deps infx==<version>` (the forms the workflows use), not: pip install {' '.join(args)}"
        )
    if (env_dir / LOCK_MARKER).exists() and (env_dir / INFX_MARKER).exists():
        script = env_dir / "bin" / "infx"
        script.write_text(f"#!/bin/sh\nexec '{runtime.venv}/bin/infx' \"$@\"\n")
        script.chmod(0o755)
    if not quiet:
        print(f"Successfully installed {message}")
    return 0


KIT_REQUIREMENT = re.compile(r"(?P<target>\S+) --hash=sha256:(?P<digest>[0-9a-f]{64})")


def _kit_lock_refusal(path: Path, runtime: Runtime) -> str | None:
    """Why pip would not install the kit's lock ``path`` here (None: it would): it must be the
    project's lock, then one requirement for infx whose hash is the session wheel's."""
    base = (PROJECT / LOCK_NAME).read_bytes().rstrip(b"\n")
    text = path.read_bytes()
    if lock_digest(PROJECT / LOCK_NAME) != runtime.lock_digest or not text.startswith(base):
        return f"{path} does not start with the lock this test session installed ({LOCK_NAME} of the project)"
    lines = text[len(base) :].decode(errors="replace").splitlines()
    requirement = " ".join(line.strip().rstrip("\\").strip() for line in lines if line.strip()[:1] not in ("", "#"))
    match = KIT_REQUIREMENT.fullmatch(requirement)
    if match is None:
        return f"{path}: after the project's lock, expected one hashed requirement for infx, not {requirement!r}"
    wheel_digest = hashlib.sha256(Path(runtime.wheel).read_bytes()).hexdigest()
    target = match.group("target")
    if target.startswith("./"):
        shipped = Path.cwd() / target
        if not shipped.is_file():
            return f"Could not find a file {target} (the lock's infx wheel)"
        actual = hashlib.sha256(shipped.read_bytes()).hexdigest()
    elif target == f"infx=={runtime.version}":
        actual = wheel_digest
    else:
        return f"No matching distribution found for {target} (the stand-in index has infx=={runtime.version})"
    if actual != match.group("digest") or actual != wheel_digest:
        return f"THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE: {target} has sha256:{actual}"
    return None


def _refuse(message: str) -> int:
    print(f"ERROR: {message}", file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    env_dir, runtime_file, flag, module, *rest = argv
    runtime = Runtime.read(Path(runtime_file))
    if (flag, module) == ("-m", "venv"):
        targets = [a for a in rest if not a.startswith("-")]
        if len(targets) != 1:
            return _refuse(f"python -m venv: one folder expected, got {rest}")
        make_environment(Path(targets[0]).absolute(), Path(runtime_file))
        return 0
    if rest[:1] != ["install"]:
        return _refuse(f"the stand-in runner's pip only installs, not: pip {' '.join(rest)}")
    return _install(Path(env_dir), runtime, rest[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
