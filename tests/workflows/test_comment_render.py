"""The sticky PR comment judged as a reviewer sees it: rendered (GitHub-flavoured Markdown by `marked`, the
charts by `mermaid`, both from node_modules) in headless Chromium with the network closed, a screenshot kept
(comment.png beside comment.md and comment.html in the test's folder). A sweep against a baseline whose
frontier ends at a lower interactivity than the head's, one point failed that the baseline has: the charts
have numeric axes and a legend, no missing value shows as 0.0, each point is in one row, with its state.
tests/slurm/test_workflow_sweep_faults.py renders its workflow run's comment the same way.
"""

from __future__ import annotations

import pytest

from infx.points import point_id
from infx.results.collect import collect
from infx.results.compare import compare_to_baseline
from infx.results.plot import plot, read_chart_blocks
from infx.sweepplan import SweepPlan
from infx.workflows.markers import RESULTS_ARTIFACT
from infx.workflows.report import build_comment
from testing.artifacts import bundled_row, point_folder, sa_bench
from testing.comment_render import assert_readable, render_comment

VLLM_DISAGG = "dsv4-fp4-gb300-dynamo-vllm"
RAW = "{name}_sa-bench_isl_8192_osl_1024_conc{conc}_gpus_24_ctx_8_gen_16.json"
RUN_URL = "https://github.com/acme/bench/actions/runs/77"
LADDER = ((4, 4.0), (8, 5.0), (16, 7.0), (32, 11.0))  # concurrency, median TPOT (ms) of the baseline


def ladder(root, scale: float, failed: int | None = None) -> list[dict]:
    """One config key's ladder; ``scale`` < 1 makes TPOT faster (interactivity higher) and throughput higher.
    The point at concurrency ``failed`` left no result (its launch failed)."""
    rows = []
    for conc, tpot in LADDER:
        row = {**bundled_row(VLLM_DISAGG, 0), "conc": [conc]}
        rows.append(row)
        if conc == failed:
            point_folder(root, row, {}, exit_code=1, message="job 9: FAILED (exit code 1:0)")
            continue
        raw = sa_bench(
            "results_concurrency_4_gpus_24_ctx_8_gen_16.json",
            max_concurrency=conc,
            median_tpot_ms=tpot * scale,
            total_token_throughput=100.0 * conc / scale,
            output_throughput=20.0 * conc / scale,
        )
        point_folder(root, row, {RAW.replace("{conc}", str(conc)): raw})
    return rows


@pytest.fixture(scope="module")
def comment(tmp_path_factory) -> tuple[str, list[str]]:
    root = tmp_path_factory.mktemp("comment")
    planned = ladder(root / "head", 0.5, failed=16)
    ladder(root / "base", 1.0)
    head, base = collect([root / "head"]), collect([root / "base"])
    comparison = compare_to_baseline(base.rows, head, 0.05, {"kind": "files", "paths": ["base.json"]})
    plot(base.rows, head.rows, root / "charts")
    status = {p.point_id: "ok" if p.status == "ok" else "failed" for p in head.points if p.point_id}
    links = {RESULTS_ARTIFACT: f"{RUN_URL}/artifacts/5"}
    links.update((p.artifact, f"{RUN_URL}/artifacts/{n}") for n, p in enumerate(head.points, start=6))
    body = build_comment(
        SweepPlan.from_json(planned).buckets,
        status,
        RUN_URL,
        comparison=comparison.to_json(),
        charts=read_chart_blocks(root / "charts" / "charts.md"),
        logs_links=links,
    )
    return body, [point_id(row) for row in planned]


def test_the_rendered_comment_has_honest_charts_and_each_point_once(comment, tmp_path):
    body, point_ids = comment
    rendered = render_comment(body, tmp_path)
    assert_readable(rendered, point_ids)
    # the failed point: one row, failed, with why and its artifact; not also "gone" from the baseline
    [failed] = [row for row in rendered.rows if point_ids[2] in row]
    assert "❌ failed" in failed and "FAILED (exit code 1:0)" in failed and "-failed" in failed, failed
    assert "gone: 0" in rendered.text, rendered.text
    # the head's frontier reaches further than the baseline's: said in words, not drawn as 0
    assert "head's frontier continues beyond" in rendered.text
    [chart] = rendered.charts
    assert chart["legend"] == ["baseline", "head"]
    # the PNG charts are one click away: the run's results artifact
    assert f"[{RESULTS_ARTIFACT}]({RUN_URL}/artifacts/5)" in body


def test_the_check_fails_on_the_charts_infx_drew_before(tmp_path):
    """The old chart (categories on the x axis, no legend, a missing value written 0.0) does not pass."""
    old = (
        "| point | tput |\n|---|---|\n| a-c4 | 0.0 |\n\n```mermaid\nxychart-beta\n"
        '    title "k · 8k/1k"\n    x-axis "interactivity (tok/s/user)" ["90.9", "143", "250"]\n'
        '    y-axis "throughput per GPU (tok/s)" 0 --> 1100\n    line [900.0, 700.0, 0.0]\n'
        "    line [1000.0, 800.0, 350.0]\n```\n"
    )
    rendered = render_comment(old, tmp_path)
    [chart] = rendered.charts
    assert chart["legend"] == [] and chart["lines"] == 2
    with pytest.raises(AssertionError):
        assert_readable(rendered, ["a-c4"])
