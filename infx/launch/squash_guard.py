"""Keep a squash file that validates, else replace it: ``squash_guard.py SQUASH -- IMPORT ARGV…``.

Runs on a compute node under ``flock <SQUASH>.lock`` (the lane's squash-import template), so
the check and the import are one locked step: a launch that waited for the lock finds the
file another launch just imported and keeps it instead of deleting it. Standalone (stdlib
only): the launcher copies this file into its launch directory, which compute nodes see.
"""

import os
import subprocess
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: squash_guard.py SQUASH -- IMPORT ARGV…", file=sys.stderr)
        return 2
    squash, command = argv[0], argv[2:]
    if os.path.exists(squash):
        check = subprocess.run(["unsquashfs", "-l", squash], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if check.returncode == 0:
            print(f"{squash} validates (unsquashfs -l); keeping it")
            return 0
        print(f"{squash} does not validate ({check.stderr.strip()[-300:]}); removing it and importing again")
        os.remove(squash)
    sys.stdout.flush()
    return subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
