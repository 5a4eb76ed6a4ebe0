"""``infx lane check LANE`` (does the lane's partition have usable nodes?), ``infx lane validate``
(the profiles themselves) and ``infx lane pins`` (are the srt-slurm pins still what their refs name?)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .common import finish
from .options import format_option


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
    health = Slurm.for_lane(profile.slurm).partition_health(profile.slurm.partition)
    if fmt == "json":
        click.echo(json.dumps({"ok": health.ok, "lane": profile.name, **health.to_json()}, allow_nan=False))
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
        click.echo(json.dumps(result.to_json(), indent=2, allow_nan=False))
    else:
        click.echo("\n".join(summary_lines(result, update)))
        if result.report.diagnostics:
            click.echo(render_text(result.report.sorted()), err=True)
    sys.exit(result.report.exit_code)


@lane.command("cache-seed")
@click.argument("name")
@click.option("--from", "source", required=True, type=click.Path(exists=True),
              help="A local clone or a git bundle holding the lane's pinned srt-slurm commits.")
@click.option("--pin", "pins", multiple=True, help="Seed only this pin (repeatable); default: every pin of the lane.")
@click.option("--srtctl", "with_srtctl", is_flag=True,
              help="Also install srtctl from each seeded commit into a per-commit venv (pip, with the lane's pip-args).")
@format_option(("text", "json"))
def cache_seed(name: str, source: str, pins: tuple[str, ...], with_srtctl: bool, fmt: str) -> None:
    """Put a verified srt-slurm checkout per pinned commit found in SOURCE into infx's cache (no network).

    The cache is $INFX_CACHE_DIR, else $XDG_CACHE_HOME/infx, else ~/.cache/infx: srt-slurm/<commit>, and with --srtctl
    srtctl/<commit>. Exit 1 when a pin named with --pin, or every pin, is missing from SOURCE.
    """
    import json

    from ..diagnostics import InfxError, UsageError, error
    from ..diskcache import cache_home
    from ..launch.cache import CHECKOUTS, Seeded, SeedError, install_cached_srtctl, seed_checkout
    from ..launch.lane import load_lane
    from ..launch.srtctl import SrtctlError
    from ..suggest import did_you_mean

    root = Path(os.environ.get("GITHUB_WORKSPACE") or ".").resolve()
    profile = load_lane(name, root)
    unknown = [p for p in pins if p not in profile.pins]
    if unknown:
        raise UsageError(f"lane {profile.name} has no pin {unknown[0]!r}{did_you_mean(unknown[0], profile.pins)}",
                         f"Pins of {profile.file}: {', '.join(profile.pins)}.")
    base = cache_home()
    results = []
    for pin in (profile.pins[p] for p in (pins or profile.pins)):
        if pin.commit is None:
            results.append(Seeded(pin.name, "", "unpinned", None))
            continue
        try:
            outcome = seed_checkout(base, Path(source).resolve(), pin.commit)
            entry = Seeded(pin.name, pin.commit, outcome, str(base / CHECKOUTS / pin.commit) if outcome != "missing" else None)
            if with_srtctl and outcome != "missing":
                entry.srtctl = str(install_cached_srtctl(base, pin.commit, list(profile.srt_slurm.pip_args)))
        except (SeedError, SrtctlError) as exc:
            detail = getattr(exc, "output", "").strip()[-2000:]
            raise InfxError([error(source, None, "cache-seed", f"pin {pin.name}: {exc}" + (f"\n{detail}" if detail else ""),
                                   "SOURCE must be a git clone or bundle readable here; --srtctl needs its pip-args to work offline.")]) from exc
        results.append(entry)
    found = [r for r in results if r.outcome in ("seeded", "cached")]
    ok = bool(found) and not (pins and len(found) != len(pins))
    if fmt == "json":
        click.echo(json.dumps({"ok": ok, "lane": profile.name, "cache": str(base), "pins": [r.to_json() for r in results]}, allow_nan=False))
    else:
        for r in results:
            where = f" -> {r.path}" if r.path else f" (not in {source})" if r.outcome == "missing" else " (no commit in the profile)"
            click.echo(f"{r.pin:32} {r.commit[:12] or '-':12} {r.outcome}{where}" + (f"; srtctl {r.srtctl}" if r.srtctl else ""))
    sys.exit(0 if ok else 1)
