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
    from ..launch.slurm import Slurm

    root = Path(os.environ.get("GITHUB_WORKSPACE") or ".").resolve()
    profile = load_lane(name, root)
    health = Slurm.for_lane(profile.slurm).partition_health(profile.slurm["partition"])
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


@lane.command("pins")
@click.argument("name", metavar="LANE")
@click.option("--check", "check_only", is_flag=True, help="Report pins whose ref no longer names the recorded commit (exit 1 on a moved tag, "
              "a missing ref or an unreachable repository; a moved branch is a warning).")
@click.option("--update", is_flag=True, help="Write the commits the refs name now (only the commit values change); nothing is "
              "written when any pin has an error.")
@format_option(("text", "json"))
def pins(name: str, check_only: bool, update: bool, fmt: str) -> None:
    """Check or refresh the srt-slurm pins of LANE (a lane name, a runner label or a profile path) with git ls-remote."""
    import json

    from ..diagnostics import UsageError, render_text
    from ..launch.lane import find_lane
    from ..launch.pins import run_pins, summary_lines

    if check_only == update:
        raise UsageError("pass exactly one of --check and --update", "infx lane pins LANE --check, or infx lane pins LANE --update.")
    root = Path(os.environ.get("GITHUB_WORKSPACE") or ".").resolve()
    result = run_pins(find_lane(root, selector=name), update=update)
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        click.echo("\n".join(summary_lines(result, update)))
        if result.report.diagnostics:
            click.echo(render_text(result.report.sorted()), err=True)
    sys.exit(result.report.exit_code)
