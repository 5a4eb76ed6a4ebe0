"""The one rule for the root of the benchmark repository a command works on: the folder that holds
configs/, runners/, benchmarks/ and perf-changelog.yaml, and where git commands run.

1. Master configs named on the command line decide: the folder their ``configs/`` folder is in
   (a master that is not inside a ``configs/`` folder: its own folder), wherever the command runs.
2. Else ``$GITHUB_WORKSPACE`` when it is set: a workflow job's checkout of the repository.
3. Else the top of the git work tree holding the working directory, so a command run from a
   subfolder reads the same files as one run from the top: the nearest folder at or above the
   working directory that holds ``.git`` (a folder, or the file of a linked worktree), as
   ``git rev-parse --show-toplevel`` finds it, without starting git.
4. Else (outside any git repository) the working directory itself.

The root is absolute. Files found under it are shown relative to the working directory when they
are inside it (`shown_path`), so diagnostics name ``configs/x-master.yaml`` at the top.

Effects: filesystem (it looks for ``.git`` upwards; reads $GITHUB_WORKSPACE).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

WORKSPACE_VARIABLE = "GITHUB_WORKSPACE"


def repository_root(masters: Sequence[Path] = (), start: Path | None = None) -> Path:
    """The repository root by the rule above; ``start`` is the working directory (default: this process's)."""
    if masters:
        parent = Path(masters[0]).resolve().parent
        return parent.parent if parent.name == "configs" else parent
    workspace = os.environ.get(WORKSPACE_VARIABLE)
    if workspace:
        return Path(workspace).resolve()
    here = (start or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if (folder / ".git").exists()), here)


def shown_path(path: Path, start: Path | None = None) -> Path:
    """How diagnostics name a file: relative to the working directory (``start``) when it lies inside
    it (GitHub annotations need repository-relative paths), else as given."""
    try:
        return path.resolve().relative_to((start or Path.cwd()).resolve())
    except ValueError:
        return path
