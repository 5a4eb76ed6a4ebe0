"""`infx config validate`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..config import ValidateRequest, validate_configs
from ..config.shipped import shipped_files
from .common import finish
from .options import base_ref_option, built_from, config_inputs, format_option


@click.group()
def config() -> None:
    """Master configs, runners.yaml and components.yaml."""


@config.command("validate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@config_inputs
@base_ref_option
@format_option()
def validate(files: tuple[Path, ...], fmt: str, **given: Any) -> None:
    """Validate FILES (default: configs/*-master.yaml): every problem at once, located."""
    finish(validate_configs(built_from(ValidateRequest, given, masters=files)), fmt)


@config.command("shipped")
@click.argument("name", type=click.Choice(list(shipped_files())), metavar="NAME")
def shipped(name: str) -> None:
    """Print a file infx ships: its default policy (components.yaml, eval-thresholds.yaml; redirect it to
    configs/NAME to make it the repository's own) or a JSON Schema (e.g. lane.schema.json)."""
    click.echo(shipped_files()[name].read_text(encoding="utf-8"), nl=False)
