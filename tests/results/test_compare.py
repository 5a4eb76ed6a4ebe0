"""`infx results compare`: matching, signed relative changes, judgements, exit codes.

The seed change (the Mooncake ladder of dsv4-fp4-gb300-dynamo-sglang-agentic-disagg) was
announced with hand-computed figures: 1P1D, 2P1D, 4P1D +13.2 %, +18.4 %, +17.5 % total
throughput per GPU and mean TTFT −21.6 %, −30.7 %, −37.3 % against the current
configuration. Baseline and head results carrying those values must yield exactly them.
"""

from __future__ import annotations

import json
import re

import pytest

from testing.artifacts import bundled_row, point_folder, sa_bench
from testing.cli import run_cli
from testing.ladder import LADDER, SEED, SEED_FIGURES, VLLM_DISAGG, ladder_results


def test_the_seeds_own_figures_come_out_of_compare(tmp_path):
    baseline, head = ladder_results(tmp_path, "baseline"), ladder_results(tmp_path, "head")
    done = run_cli("results", "compare", "--baseline", baseline, "--head", head, "--format", "markdown")
    assert done.returncode == 0, done.stderr
    lines = {topo: next(line for line in done.stdout.splitlines() if f"| {topo} ·" in line) for topo in SEED_FIGURES}
    for topo, (tput, ttft) in SEED_FIGURES.items():
        assert f"({tput} 🔺)" in lines[topo] and f"({ttft} 🔺)" in lines[topo], lines[topo]
        assert lines[topo].startswith("| 🔺 improved | " + LADDER)
    # most changed first: 4P1D (-37.3 %), 2P1D, then 1P1D
    order = [line for line in done.stdout.splitlines() if line.startswith("| 🔺 improved")]
    assert [next(t for t in SEED_FIGURES if f"| {t} ·" in line) for line in order] == ["4P1D", "2P1D", "1P1D"]

    as_json = json.loads(
        run_cli("results", "compare", "--baseline", baseline, "--head", head, "--format", "json").stdout
    )
    changes = {m["topology"].split(" ")[0]: m["metrics"] for m in as_json["matches"]}
    assert changes["1P1D"]["tput_per_gpu"]["change"] == pytest.approx(0.132)
    assert changes["2P1D"]["tput_per_gpu"]["change"] == pytest.approx(0.184)
    assert changes["4P1D"]["mean_ttft"]["change"] == pytest.approx(-0.373)
    assert changes["4P1D"]["mean_ttft"]["judgement"] == "improved"
    assert as_json["counts"] == {
        "improved": 3,
        "regressed": 0,
        "within": 0,
        "new": 0,
        "gone": 0,
        "without a valid result": 0,
    }


def test_a_regression_fails_only_with_fail_on_regression(tmp_path):
    baseline = ladder_results(tmp_path, "baseline")
    head = ladder_results(tmp_path, "head", request_metrics__latency__tpot__p50=0.03)  # 0.022 -> 0.030 s: +36 %, worse
    plain = run_cli("results", "compare", "--baseline", baseline, "--head", head)
    assert plain.returncode == 0, plain.stderr
    assert "| 🔻 regressed |" in plain.stdout and "+36.4 % 🔻" in plain.stdout
    gated = run_cli("results", "compare", "--baseline", baseline, "--head", head, "--fail-on-regression")
    assert gated.returncode == 1 and "3 regressed" in gated.stderr
    wide = run_cli(
        "results",
        "compare",
        "--baseline",
        baseline,
        "--head",
        head,
        "--fail-on-regression",
        "--threshold",
        "40%",
        "--format",
        "json",
    )
    assert wide.returncode == 0, wide.stderr
    assert json.loads(wide.stdout)["counts"]["regressed"] == 0


def test_within_threshold_new_and_gone(tmp_path):
    def fixed(root, index, conc, tput):
        row = bundled_row(VLLM_DISAGG, index, conc=[conc])
        raw = sa_bench(
            "results_concurrency_4_gpus_24_ctx_8_gen_16.json", max_concurrency=conc, total_token_throughput=tput
        )
        point_folder(
            tmp_path / root, row, {f"{{name}}_sa-bench_isl_8192_osl_1024_conc{conc}_gpus_24_ctx_8_gen_16.json": raw}
        )

    fixed("base", 0, 4, 3000.0)
    fixed("base", 0, 8, 3000.0)  # gone: not in head
    fixed("head", 0, 4, 3090.0)  # +3 %: within 5 %
    fixed("head", 0, 16, 3000.0)  # new
    done = run_cli(
        "results", "compare", "--baseline", str(tmp_path / "base"), "--head", str(tmp_path / "head"), "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["counts"]["within"] == 1 and [m["conc"] for m in data["matches"]] == [4]
    assert data["matches"][0]["metrics"]["tput_per_gpu"]["change"] == pytest.approx(0.03)
    assert [k["conc"] for k in data["new"]] == [16] and [k["conc"] for k in data["gone"]] == [8]


def test_bad_inputs_are_located_messages(tmp_path):
    (tmp_path / "bad.json").write_text("{nope")
    done = run_cli("results", "compare", "--baseline", str(tmp_path / "bad.json"), "--head", str(tmp_path / "bad.json"))
    assert done.returncode == 1 and "error[results-json]" in done.stderr and "Traceback" not in done.stderr
    threshold = run_cli("results", "compare", "--baseline", "x", "--head", "y", "--threshold", "lots")
    assert threshold.returncode == 2 and "not a percentage" in threshold.stderr
    (tmp_path / "empty.json").write_text('{"rows": [], "points": []}')
    # A baseline that cannot be looked up is a notice in the comparison, not a failure of the step.
    no_token = run_cli(
        "results", "compare", "--head", str(tmp_path / "empty.json"), env={"GITHUB_REPOSITORY": "acme/bench"}
    )
    assert no_token.returncode == 0 and "notice: no baseline: no GitHub token" in no_token.stderr, no_token.stderr
    assert "> **Notice:** no baseline: no GitHub token" in no_token.stdout and "Traceback" not in no_token.stderr


def test_docs_name_every_results_command_option_and_compared_field():
    """docs/results.md is checked against the code: a section per `infx results` command naming
    each of its options, and the fixed-sequence field of each compared metric."""
    from infx.commands.results import results
    from infx.results.compare import METRICS
    from testing.artifacts import REPO

    docs = (REPO / "docs" / "results.md").read_text()
    missing = []
    for name, command in results.commands.items():
        section = re.search(rf"^## `infx results {name}\b.*?(?=^## |\Z)", docs, re.M | re.S)
        options = [opt for param in command.params for opt in param.opts if opt.startswith("--")]
        missing += [
            f"{name} {opt}" for opt in options if not section or not re.search(rf"{opt}(?![\w-])", section.group(0))
        ]
    assert missing == []
    assert len(results.commands) == 5
    assert [m.fixed[-1] for m in METRICS if f"`{m.fixed[-1]}`" not in docs] == []


def test_a_compare_request_compares_saves_its_baseline_and_plots_without_the_command_line(tmp_path):
    from pathlib import Path

    from infx.results.compare import BaselineRequest, CompareRequest, compare_sweep
    from infx.results.plot import PlotRequest, plot_results

    baseline, head = Path(ladder_results(tmp_path, "baseline")), Path(ladder_results(tmp_path, "head"))
    saved = tmp_path / "saved.json"
    compared = compare_sweep(CompareRequest((head,), BaselineRequest((baseline,)), 0.05, saved))
    assert compared.comparison.counts()["improved"] == len(SEED)
    printed = json.loads(
        run_cli("results", "compare", "--baseline", str(baseline), "--head", str(head), "--format", "json").stdout
    )
    assert json.loads(compared.comparison.to_json_text()) == printed
    assert sorted(r["conc"] for r in json.loads(saved.read_text())["rows"]) == sorted(
        conc for _, conc, *_ in SEED.values()
    )
    plotted = plot_results(PlotRequest((head,), tmp_path / "charts", (saved,)))
    assert len(plotted.charts) == 1 and not plotted.notices and (tmp_path / "charts" / "charts.md").is_file()
