"""`infx matrix`: expand validated configs into sweep points (json, GitHub shards, or a table)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
from .options import base_ref_option, config_inputs, format_option


def _values(option_values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeated flags and comma-separated lists both work: --seq-lens 1k1k,8k1k."""
    return tuple(part.strip() for value in option_values for part in value.split(",") if part.strip())


def _many(flag: str, help_text: str):
    return click.option(flag, multiple=True, help=help_text + " Repeat the flag or separate values with commas.")


@click.command("matrix")
@click.option(
    "--config",
    "configs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Master config file (repeatable; default: configs/*-master.yaml).",
)
@config_inputs
@base_ref_option
@_many("--config-key", "Config key or glob (`*` only, whole key).")
@_many("--model-prefix", "Keep entries with this model-prefix.")
@_many("--framework", "Keep entries with this framework.")
@_many("--precision", "Keep entries with this precision.")
@_many("--runner-type", "Keep entries with this runner label (must exist in runners.yaml).")
@click.option(
    "--runner-node-filter", help="Send each point to every runner node of its label whose name contains this text."
)
@_many("--seq-lens", f"Fixed-seq-len sequences: {', '.join(SEQ_NAMES.values())} or <isl>_<osl>.")
@_many("--scenario-type", f"{' or '.join(SCENARIO_TYPES)}.")
@click.option("--single-node", is_flag=True, help="Only single-node points (with --multi-node: both).")
@click.option("--multi-node", is_flag=True, help="Only multinode points (with --single-node: both).")
@click.option("--min-conc", type=int, help="Drop concurrencies below this.")
@click.option("--max-conc", type=int, help="Drop concurrencies above this.")
@click.option("--max-tp", type=int, help="Drop points with any worker's tp above this.")
@click.option("--max-ep", type=int, help="Drop points with any worker's ep above this.")
@click.option(
    "--step-size", type=int, default=2, show_default=True, help="Factor between rungs of a conc-start..conc-end ladder."
)
@click.option("--no-evals", is_flag=True, help="No point is marked run-eval.")
@click.option("--evals-only", is_flag=True, help="Only eval rows (default eval policy, agentic included).")
@click.option("--all-evals", is_flag=True, help="Every 8k1k and agentic point as an eval row.")
@format_option(("json", "github", "table"), default="json")
@click.option(
    "--output",
    type=OUTPUT_FILE,
    help="json/table: write here instead of stdout. github: the outputs file (default $GITHUB_OUTPUT).",
)
@click.option(
    "--shard-dir",
    type=click.Path(path_type=Path),
    help="github: folder for shard-<k>.json (default $RUNNER_TEMP/infx-shards).",
)
def matrix(
    configs,
    runners_path,
    components_path,
    base_ref,
    config_key,
    model_prefix,
    framework,
    precision,
    runner_type,
    runner_node_filter,
    seq_lens,
    scenario_type,
    single_node,
    multi_node,
    min_conc,
    max_conc,
    max_tp,
    max_ep,
    step_size,
    no_evals,
    evals_only,
    all_evals,
    fmt,
    output,
    shard_dir,
) -> None:
    """Expand the master configs into sweep points, one GitHub job each."""
    selection = Selection(
        config_keys=_values(config_key),
        model_prefixes=_values(model_prefix),
        frameworks=_values(framework),
        precisions=_values(precision),
        runner_types=_values(runner_type),
        runner_node_filter=runner_node_filter,
        seq_lens=_values(seq_lens),
        scenario_types=_values(scenario_type),
        node_types=tuple(name for flag, name in ((single_node, "single-node"), (multi_node, "multi-node")) if flag),
        min_conc=min_conc,
        max_conc=max_conc,
        max_tp=max_tp,
        max_ep=max_ep,
        step_size=step_size,
    )
    request = MatrixRequest(
        masters=configs,
        runners=runners_path,
        components=components_path,
        selection=selection,
        evals=EvalMode.of(no_evals=no_evals, evals_only=evals_only, all_evals=all_evals),
        base_ref=base_ref,
    )
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
