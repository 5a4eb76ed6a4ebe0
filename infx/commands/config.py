"""`infx config validate`."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import ValidateRequest, validate_configs
from .common import finish
from .options import config_inputs, format_option


@click.group()
def config() -> None:
    """Master configs, runners.yaml and components.yaml."""


@config.command("validate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@config_inputs
@format_option()
def validate(files: tuple[Path, ...], runners_path: Path | None, components_path: Path | None, fmt: str) -> None:
    """Validate FILES (default: configs/*-master.yaml): every problem at once, located."""
    report = validate_configs(ValidateRequest(files, runners_path, components_path))
    finish(report, fmt, success_message="configs are valid")
