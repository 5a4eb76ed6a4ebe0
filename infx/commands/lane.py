"""``infx lane check LANE``: does the lane's partition have nodes that are up and not drained?"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .common import format_option


@click.group("lane")
def lane() -> None:
    """Check a runner lane before a sweep."""


@lane.command("check")
@click.argument("name", metavar="LANE")
@format_option(("text", "json"))
def check(name: str, fmt: str) -> None:
    """Report whether the Slurm partition of LANE (a lane name, any of its runner labels, or a profile path) has usable nodes (exit 1 when none)."""
    import json

    from ..launch.lane import load_lane
    from ..launch.slurm import partition_health

    root = Path(os.environ.get("GITHUB_WORKSPACE") or ".").resolve()
    profile = load_lane(name, root)
    health = partition_health(profile.slurm["partition"])
    if fmt == "json":
        click.echo(json.dumps({"ok": health.ok, "lane": profile.name, **health.to_json()}))
    else:
        click.echo(f"lane {profile.name}: partition {health.partition}: {health.summary()}")
    sys.exit(0 if health.ok else 1)
