#!/usr/bin/env python3
"""Fault injection at the process boundary: installed (as a symlink) under the name of a real Slurm
command, it fails or delays some calls and runs the real command for all others.

Per command NAME (upper-cased, e.g. SQUEUE), from the environment:
  FAULT_<NAME>_FAIL=N    fail the next N calls (exit 1, the controller's "Unable to contact" message)
  FAULT_<NAME>_WHEN=F    only once the file F exists (e.g. a job creates it when it runs)
  FAULT_<NAME>_SLEEP=S   instead of failing, sleep S seconds (after writing FAULT_<NAME>_MARK if set)
FAULT_DIR holds the counters and a log of every call (calls.log: "<name> pass|fail|sleep <argv>").
"""

import os
import shutil
import sys
import time
from pathlib import Path

name = Path(sys.argv[0]).name
key = f"FAULT_{name.upper()}_"
state = Path(os.environ["FAULT_DIR"])
here = str(Path(sys.argv[0]).parent)
real = shutil.which(name, path=os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != here))


def log(outcome: str) -> None:
    with (state / "calls.log").open("a") as handle:
        handle.write(f"{name} {outcome} {' '.join(sys.argv[1:])}\n")


armed = not os.environ.get(key + "WHEN") or Path(os.environ[key + "WHEN"]).exists()
counter = state / f"{name}.failed"
failed = int(counter.read_text()) if counter.exists() else 0
if armed and failed < int(os.environ.get(key + "FAIL", "0")):
    counter.write_text(str(failed + 1))
    if os.environ.get(key + "SLEEP"):
        log("sleep")
        if os.environ.get(key + "MARK"):
            Path(os.environ[key + "MARK"]).write_text("sleeping")
        time.sleep(float(os.environ[key + "SLEEP"]))
    else:
        log("fail")
        print(f"{name}: error: Unable to contact slurm controller (connect failure)", file=sys.stderr)
    sys.exit(1)
log("pass")
os.execv(real, [real, *sys.argv[1:]])
