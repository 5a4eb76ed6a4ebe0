"""``infx lane check LANE`` (does the lane's partition have usable nodes?), ``infx lane validate``
(the profiles themselves) and ``infx lane pins`` (are the srt-slurm pins still what their refs name?)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .common import finish, format_option


@click.group("lane")
def lane() -> None:
    """Check, validate and pin runner lanes (runners/<lane>.yaml)."""


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


@lane.command("validate")
@click.argument("lanes", nargs=-1, metavar="[LANE|PATH]...")
@format_option()
def validate(lanes: tuple[str, ...], fmt: str) -> None:
    """Validate lane profiles (default: every runners/*.yaml): schema, cross-checks, full pins, one lane per label."""
    from ..launch.lane import validate_lanes

    root = Path(os.environ.get("GITHUB_WORKSPACE") or ".").resolve()
    finish(validate_lanes(list(lanes), root), fmt, success_message="lane profiles are valid")
