"""``infx lane check LANE`` (does the lane's partition have usable nodes?), ``infx lane validate``
(the profiles themselves) and ``infx lane pins`` (are the srt-slurm pins still what their refs name?)."""

from __future__ import annotations

import json
import sys

import click

from ..diagnostics import UsageError, render_text
from ..launch.cache import SeedRequest, seed_lane  # measured: the cache and srtctl installer only this subcommand needs
from ..launch.lane import LaneCheckRequest, ValidateRequest, check_lane, validate_lanes
from ..launch.pins import (
    PinsRequest,
    pin_lane,
    summary_lines,
)  # measured: git and YAML editing only this subcommand needs
from ..reporoot import repository_root
from .common import finish
from .options import format_option


@click.group("lane")
def lane() -> None:
    """Check, validate and pin runner lanes (runners/<lane>.yaml)."""


@lane.command("check")
@click.argument("name", metavar="LANE")
@format_option(("text", "json"))
def check(name: str, fmt: str) -> None:
    """Report whether the Slurm partition of LANE (a lane name, any of its runner labels, or a profile path) has usable
    nodes (exit 1 when none)."""
    result = check_lane(LaneCheckRequest(lane=name, root=repository_root()))
    click.echo(json.dumps(result.to_json(), allow_nan=False) if fmt == "json" else result.text())
    sys.exit(0 if result.ok else 1)


@lane.command("validate")
@click.argument("lanes", nargs=-1, metavar="[LANE|PATH]...")
@format_option()
def validate(lanes: tuple[str, ...], fmt: str) -> None:
    """Validate lane profiles (default: every runners/*.yaml): schema, cross-checks, full pins, one lane per label."""
    finish(
        validate_lanes(ValidateRequest(selectors=lanes, root=repository_root())),
        fmt,
        success_message="lane profiles are valid",
    )


@lane.command("pins")
@click.argument("name", metavar="LANE")
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Report pins whose ref no longer names the recorded commit (exit 1 on a moved tag, "
    "a missing ref or an unreachable repository; a moved branch is a warning).",
)
@click.option(
    "--update",
    is_flag=True,
    help="Write the commits the refs name now (only the commit values change); nothing is "
    "written when any pin has an error.",
)
@format_option(("text", "json"))
def pins(name: str, check_only: bool, update: bool, fmt: str) -> None:
    """Check or refresh the srt-slurm pins of LANE (a lane name, a runner label or a profile path)
    with git ls-remote."""

    if check_only == update:
        raise UsageError(
            "pass exactly one of --check and --update", "infx lane pins LANE --check, or infx lane pins LANE --update."
        )
    result = pin_lane(PinsRequest(lane=name, root=repository_root(), update=update))
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2, allow_nan=False))
    else:
        click.echo("\n".join(summary_lines(result, update)))
        if result.report.diagnostics:
            click.echo(render_text(result.report.sorted()), err=True)
    sys.exit(result.report.exit_code)


@lane.command("cache-seed")
@click.argument("name")
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(exists=True),
    help="A local clone or a git bundle holding the lane's pinned srt-slurm commits.",
)
@click.option("--pin", "pins", multiple=True, help="Seed only this pin (repeatable); default: every pin of the lane.")
@click.option(
    "--srtctl",
    "with_srtctl",
    is_flag=True,
    help="Also install srtctl from each seeded commit into a per-commit venv (pip, with the lane's pip-args).",
)
@format_option(("text", "json"))
def cache_seed(name: str, source: str, pins: tuple[str, ...], with_srtctl: bool, fmt: str) -> None:
    """Put a verified srt-slurm checkout per pinned commit found in SOURCE into infx's cache (no network).

    The cache is $INFX_CACHE_DIR, else $XDG_CACHE_HOME/infx, else ~/.cache/infx: srt-slurm/<commit>, and with --srtctl
    srtctl/<commit>. Exit 1 when a pin named with --pin, or every pin, is missing from SOURCE.
    """

    seeded = seed_lane(
        SeedRequest(lane=name, root=repository_root(), source=source, pins=pins, with_srtctl=with_srtctl)
    )
    if fmt == "json":
        click.echo(json.dumps(seeded.to_json(), allow_nan=False))
    else:
        for r in seeded.results:
            where = (
                f" -> {r.path}"
                if r.path
                else f" (not in {source})"
                if r.outcome == "missing"
                else " (no commit in the profile)"
            )
            click.echo(
                f"{r.pin:32} {r.commit[:12] or '-':12} {r.outcome}{where}"
                + (f"; srtctl {r.srtctl}" if r.srtctl else "")
            )
    sys.exit(0 if seeded.ok else 1)
