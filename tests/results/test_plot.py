"""`infx results plot`: a PNG per (config key, scenario) and Mermaid xychart blocks, baseline
and head on one chart; the Pareto frontier itself."""

from __future__ import annotations

import json
import re
import struct

from infx.results.plot import pareto_frontier, read_chart_blocks, staircase
from testing.artifacts import bundled_row, point_folder, sa_bench
from testing.cli import run_cli

VLLM_DISAGG = "dsv4-fp4-gb300-dynamo-vllm"
RAW = "results_concurrency_4_gpus_24_ctx_8_gen_16.json"


def test_pareto_frontier_keeps_only_undominated_points():
    points = [(10, 500), (20, 400), (15, 300), (30, 100), (20, 350), (5, 450)]
    assert pareto_frontier(points) == [(10, 500), (20, 400), (30, 100)]
    assert staircase(pareto_frontier(points), [5, 10, 12, 20, 25, 30, 40]) == [
        500,
        500,
        400,
        400,
        100,
        100,
        None,
    ]  # none reaches 40: no value, never 0


def sweep(tmp_path, name: str, scale: float) -> str:
    """One config key, two sequence-length scenarios, a concurrency ladder each."""
    root = tmp_path / name
    for index in (0, 1):
        row = bundled_row(VLLM_DISAGG, index)
        for conc, tpot in ((4, 4.0), (8, 5.0), (16, 7.0), (32, 11.0)):
            raw = sa_bench(
                RAW,
                max_concurrency=conc,
                median_tpot_ms=tpot * scale,
                total_token_throughput=100.0 * conc * scale,
                output_throughput=20.0 * conc * scale,
            )
            point_folder(
                root,
                {**row, "conc": [conc]},
                {f"{{name}}_sa-bench_isl_8192_osl_1024_conc{conc}_gpus_24_ctx_8_gen_16.json": raw},
            )
    out = tmp_path / f"{name}.json"
    done = run_cli("results", "collect", str(root), "--output", str(out))
    assert done.returncode == 0 and "8 rows from 8 of 8 points" in done.stderr, done.stderr
    return str(out)


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_plot_writes_a_png_per_chart_and_mermaid_xycharts(tmp_path):
    baseline, head = sweep(tmp_path, "baseline", 1.0), sweep(tmp_path, "head", 0.9)
    scenarios = {(r["isl"], r["osl"]) for r in json.loads((tmp_path / "head.json").read_text())["rows"]}
    done = run_cli("results", "plot", head, "--baseline", baseline, "--output", str(tmp_path / "charts"))
    assert done.returncode == 0, done.stderr
    pngs = sorted((tmp_path / "charts").glob("*.png"))
    assert len(pngs) == len(scenarios) >= 1
    for png in pngs:
        width, height = png_size(png)
        assert (width, height) == (700, 450)
    blocks = read_chart_blocks(tmp_path / "charts" / "charts.md")
    assert len(blocks) == len(pngs)
    block = blocks[0]
    assert "```mermaid\n%%{init:" in block and "\nxychart-beta\n" in block
    assert "Legend: **baseline** (grey line) · **head** (blue line)." in block
    assert '"plotColorPalette": "#7f7f7f, #1f77b4"' in block  # the legend's colours, in the series' order
    lines = dict(re.findall(r'^    line "(\w+)" \[(.*)\]$', block, re.M))
    assert sorted(lines) == ["baseline", "head"]
    assert all(len(values.split(", ")) == 12 for values in lines.values())
    low, high = map(
        float, re.search(r'x-axis "interactivity \(tok/s/user\)" ([0-9.]+) --> ([0-9.]+)$', block, re.M).groups()
    )
    # Interactivity = 1000 / TPOT: the head's faster TPOT reaches further right than the baseline, whose
    # reach ends the drawn axis; the head's points beyond it are named in words, not drawn as 0.
    assert low < high <= 1000 / 4.0 + 1e-6
    assert "head's frontier continues beyond" in block and " 0.0" not in block


def test_plot_of_head_alone_and_of_nothing(tmp_path):
    head = sweep(tmp_path, "head", 1.0)
    done = run_cli("results", "plot", head, "--output", str(tmp_path / "alone"))
    assert done.returncode == 0, done.stderr
    assert "Legend: **head** (blue line)." in (tmp_path / "alone" / "charts.md").read_text()
    (tmp_path / "empty.json").write_text('{"rows": [], "points": []}')
    empty = run_cli("results", "plot", str(tmp_path / "empty.json"), "--output", str(tmp_path / "none"))
    assert empty.returncode == 0 and "0 chart(s)" in empty.stderr
    assert read_chart_blocks(tmp_path / "none" / "charts.md") == []
