"""`infx matrix`: expand validated configs into sweep points (json, GitHub shards, or a table)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ..diagnostics import InfxError, UsageError
from ..evalsuite import EvalMode
from ..fsio import atomic_write
from ..matrix import bucketize
from ..matrix.render import render_json, render_table
from ..matrix.request import MatrixRequest, expand_matrix
from ..matrix.selection import Selection
from ..scenarios import SCENARIO_TYPES, SEQ_NAMES
from ..workflows.actions import SHARD_DIR, write_sharded_outputs, write_step_summary
from .common import OUTPUT_FILE, show
from .options import base_ref_option, built_from, config_inputs, format_option, option_set


def _values(ctx: click.Context, param: click.Parameter, option_values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeated flags and comma-separated lists both work: --seq-lens 1k1k,8k1k."""
    return tuple(part.strip() for value in option_values for part in value.split(",") if part.strip())


def _many(flag: str, field: str, help_text: str):
    """A filter of many values into the Selection ``field``."""
    return click.option(
        flag,
        field,
        multiple=True,
        callback=_values,
        help=help_text + " Repeat the flag or separate values with commas.",
    )


# `infx matrix`'s options, in --help order. Each destination is the MatrixRequest or Selection field it
# fills (see built_from); the node-type and eval flags and the output options are read by the command.
MATRIX_OPTIONS = option_set(
    click.option(
        "--config",
        "masters",
        multiple=True,
        type=click.Path(path_type=Path),
        help="Master config file (repeatable; default: configs/*-master.yaml).",
    ),
    config_inputs,
    base_ref_option,
    _many("--config-key", "config_keys", "Config key or glob (`*` only, whole key)."),
    _many("--model-prefix", "model_prefixes", "Keep entries with this model-prefix."),
    _many("--framework", "frameworks", "Keep entries with this framework."),
    _many("--precision", "precisions", "Keep entries with this precision."),
    _many("--runner-type", "runner_types", "Keep entries with this runner label (must exist in runners.yaml)."),
    click.option(
        "--runner-node-filter", help="Send each point to every runner node of its label whose name contains this text."
    ),
    _many("--seq-lens", "seq_lens", f"Fixed-seq-len sequences: {', '.join(SEQ_NAMES.values())} or <isl>_<osl>."),
    _many("--scenario-type", "scenario_types", f"{' or '.join(SCENARIO_TYPES)}."),
    click.option("--single-node", is_flag=True, help="Only single-node points (with --multi-node: both)."),
    click.option("--multi-node", is_flag=True, help="Only multinode points (with --single-node: both)."),
    click.option("--min-conc", type=int, help="Drop concurrencies below this."),
    click.option("--max-conc", type=int, help="Drop concurrencies above this."),
    click.option("--max-tp", type=int, help="Drop points with any worker's tp above this."),
    click.option("--max-ep", type=int, help="Drop points with any worker's ep above this."),
    click.option(
        "--step-size",
        type=int,
        default=2,
        show_default=True,
        help="Factor between rungs of a conc-start..conc-end ladder.",
    ),
    click.option("--no-evals", is_flag=True, help="No point is marked run-eval."),
    click.option("--evals-only", is_flag=True, help="Only eval rows (default eval policy, agentic included)."),
    click.option("--all-evals", is_flag=True, help="Every 8k1k and agentic point as an eval row."),
    format_option(("json", "github", "table"), default="json"),
    click.option(
        "--output",
        type=OUTPUT_FILE,
        help="json/table: write here instead of stdout. github: the outputs file (default $GITHUB_OUTPUT).",
    ),
    click.option(
        "--shard-dir",
        type=click.Path(path_type=Path),
        help="github: folder for shard-<k>.json (default $RUNNER_TEMP/infx-shards).",
    ),
)


@click.command("matrix")
@MATRIX_OPTIONS
def matrix(fmt: str, output: Path | None, shard_dir: Path | None, **given: Any) -> None:
    """Expand the master configs into sweep points, one GitHub job each."""
    flags = (given["single_node"], "single-node"), (given["multi_node"], "multi-node")
    selection = built_from(Selection, given, node_types=tuple(name for flag, name in flags if flag))
    evals = built_from(EvalMode.of, given)
    request = built_from(MatrixRequest, given, selection=selection, evals=evals)
    # Flags are checked before any file is read: a usage error must not wait on YAML.
    request.check()
    github_paths = _github_paths(output, shard_dir) if fmt == "github" else None
    try:
        matrix = expand_matrix(request)
    except UsageError:
        raise
    except InfxError as exc:  # the configs are invalid: the verdict and every finding (annotations too)
        show(exc.diagnostics, "github" if fmt == "github" else "text", False)
        sys.exit(exc.exit_code)
    shown = "github" if fmt == "github" else "text"  # the rows own stdout in the other formats
    if shown == "text":
        show(matrix.notices, shown, True, f"{len(matrix.rows)} points")

    buckets = bucketize(matrix.rows)
    try:
        if fmt == "github":
            assert github_paths is not None  # found above for the github format
            _write_github(buckets, *github_paths)
            show(matrix.notices, shown, True, f"{len(matrix.rows)} points")
            return
        text = render_json(matrix.rows) if fmt == "json" else render_table(buckets)
        if output:
            atomic_write(output, text)
        else:
            click.echo(text, nl=False)
    except OSError as exc:
        raise UsageError(f"cannot write the matrix: {exc}", "Check the output paths and their permissions.") from None


def _write_github(buckets: dict, outputs_path: Path, shard_dir: Path) -> None:
    shards = write_sharded_outputs(buckets, outputs_path, shard_dir)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        write_step_summary(summary, buckets, shards=shards)


def _github_paths(output: Path | None, shard_dir: Path | None) -> tuple[Path, Path]:
    outputs_path = output or (Path(os.environ["GITHUB_OUTPUT"]) if os.environ.get("GITHUB_OUTPUT") else None)
    if outputs_path is None:
        raise UsageError(
            "--format github needs $GITHUB_OUTPUT or --output PATH", "Run it inside GitHub Actions, or pass --output."
        )
    if shard_dir is None:
        if not os.environ.get("RUNNER_TEMP"):
            raise UsageError("--format github needs --shard-dir or $RUNNER_TEMP", "Pass --shard-dir DIR.")
        shard_dir = Path(os.environ["RUNNER_TEMP"]) / SHARD_DIR
    return outputs_path, shard_dir
