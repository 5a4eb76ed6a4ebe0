"""`infx init`: the consumer kit written into a benchmark repository (infx/kit)."""

from __future__ import annotations

from pathlib import Path

import click

from ..kit import DEFAULT_LANE
from ..kit import init as write_kit


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)
@click.option(
    "--force", is_flag=True, help="Replace infx's files (workflows, lock, actionlint.yaml) that exist and differ."
)
@click.option(
    "--lane", default=DEFAULT_LANE, show_default=True, help="Name of the lane profile skeleton (runners/<lane>.yaml)."
)
@click.option("--pin", help="The released infx version the workflows install (default: this infx's own version).")
def init(directory: Path, force: bool, lane: str, pin: str | None) -> None:
    """Write infx's workflows, the dependency lock, .github/actionlint.yaml, configs/infx.yaml, a
    lane profile skeleton and .pre-commit-config.yaml into a benchmark repository; print what was
    written and what is left to do."""
    report = write_kit(directory, force=force, pin=pin, lane=lane)
    for path in report.written:
        click.echo(f"wrote      {path}")
    for path in report.unchanged:
        click.echo(f"unchanged  {path}")
    for path, why in report.kept:
        click.echo(f"kept       {path} ({why})")
    click.echo("\nLeft to do:")
    for number, item in enumerate(report.todo, 1):
        click.echo(f"  {number}. {item}")
