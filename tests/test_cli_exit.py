"""How infx's process ends: the command's heap is left out of Python's final collection only
when the process is infx's own (``python -m infx``, the console script), never for a caller."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infx.cli import main

REPO = Path(__file__).resolve().parent.parent
PROBE = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('atexit ran; frozen objects:', gc.get_freeze_count() > 0, file=sys.stderr))\n"
    "sys.argv = ['infx', *sys.argv[1:]]\n"
    "from infx.cli import main\n"
    "main({argv})\n"
)


def probe(argv_expression: str, args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv_expression), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=120,
    )


@pytest.mark.parametrize("args, code", [(["--version"], 0), (["config", "validate", "no-such-master.yaml"], 2)])
def test_the_process_entry_freezes_the_heap_and_still_runs_atexit(args, code):
    done = probe("", args)
    assert done.returncode == code, done.stderr
    assert done.stderr.splitlines()[-1] == "atexit ran; frozen objects: True"
    assert (
        probe(repr(args), args).stderr.splitlines()[-1] == "atexit ran; frozen objects: False"
    )  # argv given: a caller


def test_a_caller_of_main_keeps_a_collectable_heap():
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and gc.get_freeze_count() == 0
