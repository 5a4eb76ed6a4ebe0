"""`infx results …`: collect per-point artifacts into rows, compare with a baseline, plot."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..changelog.policy import resolve_slug
from ..diagnostics import render_text
from ..fsio import atomic_write
from ..reporoot import repository_root
from ..results.collect import CollectRequest, collect_artifacts
from ..results.compare import BaselineRequest, CompareRequest, compare_sweep
from ..results.evalgate import CheckEvalsRequest, gate
from ..results.plot import PlotRequest, plot_results
from ..results.render import results_json, rows_csv, rows_table
from ..workflows.github.client import Connection
from ..workflows.report import comparison_markdown
from ..workflows.sweepruns import results_inputs
from .common import OUTPUT_FILE
from .options import format_option, plan_option, repo_option


@click.group()
def results() -> None:
    """Typed result rows, their validation, a baseline comparison and Pareto charts."""


def _write(output: Path | None, text: str) -> None:
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        atomic_write(output, text)


@results.command("collect")
# readable=False: a folder that cannot be read is that point's verdict, not a usage error
@click.argument("artifacts", nargs=-1, required=True, type=click.Path(path_type=Path, readable=False))
@click.option("--output", type=OUTPUT_FILE, help="Write here (default: stdout).")
@format_option(("json", "csv", "table"), default="json")
@click.option(
    "--exit-zero", is_flag=True, help="Exit 0 even when a point is invalid (the report job, which shows them)."
)
def collect_command(artifacts: tuple[Path, ...], output: Path | None, fmt: str, exit_zero: bool) -> None:
    """Read each point's artifact folder (or a folder of them) into result rows; exit 1 naming
    every invalid or failed point and why."""
    collected = collect_artifacts(CollectRequest(artifacts))
    render = {
        "json": lambda: results_json(collected),
        "csv": lambda: rows_csv(collected.rows),
        "table": lambda: rows_table(collected.rows),
    }[fmt]
    _write(output, render())
    problems = collected.diagnostics
    ok = len(collected.points) - len(problems)  # one diagnostic per point that is not ok
    click.echo(  # the verdict first, as every command prints it
        f"infx results collect: {len(collected.rows)} rows from {ok} of {len(collected.points)} points"
        + (f"; {len(problems)} point(s) without a valid result" if problems else ""),
        err=True,
    )
    if problems:
        click.echo(render_text(problems), err=True)
    sys.exit(1 if problems and not exit_zero else 0)


def _threshold(_ctx, _param, value: str) -> float:
    text = value.strip().removesuffix("%").strip()
    try:
        number = float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a percentage; write e.g. 5% or 2.5") from None
    if not 0 <= number < 1000:
        raise click.BadParameter(f"{value!r} must be between 0% and 1000%")
    return number / 100


@results.command("compare")
@click.option(
    "--head",
    "head",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="The sweep's results: a `collect` output or artifact folders (repeatable).",
)
@click.option(
    "--baseline",
    "baseline",
    multiple=True,
    type=click.Path(path_type=Path),
    help="The baseline's results, the same kinds of input. Without it: --baseline-run, else found on GitHub.",
)
@click.option(
    "--baseline-run", type=click.IntRange(min=1), help="Use this run's sweep results artifact as the baseline."
)
@click.option(
    "--threshold",
    default="5%",
    show_default=True,
    callback=_threshold,
    help="A change beyond this, in the worse direction, is a regression.",
)
@format_option(("markdown", "json"), default="markdown")
@click.option("--output", type=OUTPUT_FILE, help="Write here (default: stdout).")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when any metric regressed beyond the threshold.")
@repo_option(" for finding the baseline")
@click.option(
    "--save-baseline",
    type=click.Path(path_type=Path),
    help="Also write the baseline rows used, as a results file (for `plot --baseline`).",
)
@click.option(
    "--thresholds",
    type=click.Path(path_type=Path),
    help="The score floors the Accuracy section shows (default: configs/eval-thresholds.yaml, else the floors infx "
    "ships).",
)
def compare_command(
    head, baseline, baseline_run, threshold, fmt, output, fail_on_regression, repo_slug, save_baseline, thresholds
) -> None:
    """Match head rows with baseline rows (config key, scenario, topology, concurrency) and judge each;
    the eval rows against their floors and the baseline's (the Accuracy section).
    A baseline that cannot be looked up is a notice in the comparison, not a failure."""
    slug = None if baseline else resolve_slug(repo_slug, repository_root())[0]  # the baseline is looked up on GitHub
    request = CompareRequest(
        head,
        BaselineRequest(paths=baseline, run_id=baseline_run, slug=slug, github=Connection(), thresholds=thresholds),
        threshold,
        save_baseline,
    )
    comparison = compare_sweep(request).comparison
    for notice in comparison.notices:
        click.echo(f"notice: {notice}", err=True)
    _write(output, comparison.to_json_text() if fmt == "json" else comparison.to_markdown())
    counts = comparison.counts()
    click.echo("infx results compare: " + ", ".join(f"{v} {k}" for k, v in counts.items()), err=True)
    sys.exit(1 if fail_on_regression and counts.get("regressed") else 0)


@results.command("plot")
@click.argument("results_paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--baseline", multiple=True, type=click.Path(path_type=Path), help="Baseline results drawn on the same charts."
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder for the PNGs and charts.md.",
)
def plot_command(results_paths: tuple[Path, ...], baseline: tuple[Path, ...], output: Path) -> None:
    """Per config key and scenario, the Pareto frontier of throughput per GPU against
    interactivity: one PNG each and charts.md with Mermaid xychart blocks."""
    plotted = plot_results(PlotRequest(results_paths, output, baseline))
    for notice in plotted.notices:
        click.echo(f"notice: {notice}", err=True)
    click.echo(f"infx results plot: {len(plotted.charts)} chart(s) in {output}", err=True)


@results.command("summary")
@click.option(
    "--comparison",
    "comparison_path",
    required=True,
    type=click.Path(path_type=Path),
    help="JSON from `infx results compare --format json`.",
)
@click.option("--charts", "charts_path", type=click.Path(path_type=Path), help="charts.md from `infx results plot`.")
@click.option("--output", type=OUTPUT_FILE, help="Write here (default: stdout, e.g. >> $GITHUB_STEP_SUMMARY).")
def summary_command(comparison_path: Path, charts_path: Path | None, output: Path | None) -> None:
    """The step summary: the comparison table and the charts, within GitHub's summary limit."""
    comparison, charts = results_inputs(comparison_path, charts_path)
    assert comparison is not None  # --comparison is required
    _write(output, comparison_markdown(comparison, charts, run_url=_run_url()))


def _run_url() -> str | None:
    """This Actions run's page (its artifact list is where a failed point's logs are), when in one."""
    server, slug, run = (os.environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    return (
        f"{server}/{slug}/actions/runs/{run}"
        if server.startswith("https://") and slug.count("/") == 1 and run.isdigit()
        else None
    )


@results.command("check-evals")
@click.argument("results_json", type=click.Path(path_type=Path))
@click.option(
    "--thresholds",
    type=click.Path(path_type=Path),
    help="The score floors (default: configs/eval-thresholds.yaml, else the floors infx ships).",
)
@plan_option(
    "The sweep's plan (infx plan --format json): its mode says whether every planned eval point needs a score.",
    required=False,
)
@format_option()
def check_evals_command(results_json: Path, thresholds: Path | None, plan_path: Path | None, fmt: str) -> None:
    """Gate accuracy: every strict and flexible exact-match score of RESULTS_JSON's eval rows must
    be at least its floor; exit 1 naming each score below it, each broken eval folder and, for an
    evals-only or all-evals plan, each planned eval point without a score."""
    report = gate(CheckEvalsRequest(results_json, thresholds, plan_path))
    out, err = report.render(fmt)
    if out:
        click.echo(out)
    if err:
        click.echo(err, err=True)
    sys.exit(report.exit_code)
