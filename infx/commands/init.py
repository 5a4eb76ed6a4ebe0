"""`infx init`: the consumer kit written into a benchmark repository (infx/kit)."""

from __future__ import annotations

from pathlib import Path

import click

from ..kit import DEFAULT_LANE, PARTS, InitRequest
from ..kit import init as write_kit


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)
@click.option(
    "--force",
    is_flag=True,
    help="Replace infx's files (workflows, lock, actionlint.yaml) that exist and differ; each is listed as replaced.",
)
@click.option(
    "--lane", default=DEFAULT_LANE, show_default=True, help="Name of the lane profile skeleton (runners/<lane>.yaml)."
)
@click.option(
    "--wheel",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Pin infx by this wheel, copied into .github/infx/ (no package index needed for infx).",
)
@click.option(
    "--build-wheel",
    is_flag=True,
    help="Pin infx by a wheel built from this development install's source (pip wheel), copied into .github/infx/.",
)
@click.option(
    "--commit",
    metavar="SHA",
    help="Pin infx by a wheel built from this full commit of the development install's git repository.",
)
@click.option(
    "--pin", help="Pin the release VERSION of the package index by its wheel's hash (default: this infx's version)."
)
@click.option(
    "--only",
    "only",
    multiple=True,
    type=click.Choice(list(PARTS)),
    help="Write only this part of the kit (repeatable); --only actionlint --force refreshes .github/actionlint.yaml.",
)
def init(
    directory: Path,
    force: bool,
    lane: str,
    wheel: Path | None,
    build_wheel: bool,
    commit: str | None,
    pin: str | None,
    only: tuple,
) -> None:
    """Write infx's workflows, the lock that pins infx (a shipped wheel or a release, hashed),
    .github/actionlint.yaml, configs/infx.yaml, a lane profile skeleton, the eval suite and
    .pre-commit-config.yaml into a benchmark repository; print what was written, replaced and kept,
    and what is left to do."""
    request = InitRequest(
        root=directory,
        force=force,
        lane=lane,
        pin=pin,
        wheel=wheel,
        build_wheel=build_wheel,
        commit=commit,
        only=frozenset(only or PARTS),
    )
    report = write_kit(request)
    for path in report.written:
        click.echo(f"wrote      {path}")
    for path, what in report.replaced:
        click.echo(f"replaced   {path} ({what}; git has the old one if it was committed)")
    for path in report.unchanged:
        click.echo(f"unchanged  {path}")
    for path, why in report.kept:
        click.echo(f"kept       {path} ({why})")
    if report.todo:
        click.echo("\nLeft to do:")
    for number, item in enumerate(report.todo, 1):
        click.echo(f"  {number}. {item}")
