"""Run infx for this repository's pre-commit hooks (written by `infx init`, which writes it again).

infx runs from a virtual environment made from .github/infx/requirements.lock alone, every file
hash-checked (pip install --no-deps --require-hashes): the very infx and dependencies the
workflows install. With infx pinned by the wheel in .github/infx/, infx itself needs no package
index; its dependencies come from pip's index or its --find-links. The environment is kept in this
clone's git folder, one per lock (named by the lock's SHA-256), and made once. Standard library
only: it runs before infx exists.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

LOCK = Path(".github/infx/requirements.lock")  # hooks run from the repository's root


def environment() -> Path:
    digest = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    git_dir = subprocess.run(
        ["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    home = Path(git_dir).resolve() / "infx-hooks"
    ready = home / digest
    if (ready / "bin" / "python").exists():
        return ready
    home.mkdir(parents=True, exist_ok=True)
    # Made aside and renamed into place: an interrupted install never passes for a ready one.
    building = Path(tempfile.mkdtemp(prefix=f"{digest}.", dir=home))
    try:
        venv.create(building, with_pip=True, clear=True)
        install = [str(building / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*install, "--no-deps", "--require-hashes", "-r", str(LOCK)], check=True)
        os.rename(building, ready)
    except FileExistsError:  # another hook made it meanwhile
        pass
    except OSError as exc:
        if not (ready / "bin" / "python").exists():
            raise SystemExit(f"{LOCK}: infx's environment could not be made: {exc}") from None
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"{LOCK}: installing it failed (exit {exc.returncode}); pip's messages are above") from None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return ready


def main() -> None:
    if not LOCK.is_file():
        raise SystemExit(f"{LOCK}: no such file; run the hooks from the repository's root (`infx init` writes it)")
    python = str(environment() / "bin" / "python")
    # `python -m infx`, not bin/infx: the environment was made under another name, which a script's
    # shebang line would still carry.
    os.execv(python, [python, "-m", "infx", *sys.argv[1:]])


if __name__ == "__main__":
    main()
