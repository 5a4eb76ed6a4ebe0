"""`infx results collect` on artifact folders built from the bundled configs' rows.

The fixed-sequence fixtures (tests/data/results/sa-bench/) were produced by running
srt-slurm's own sa-bench client (benchmark_serving.py at v1.0.50, the flags bench.sh passes)
against a stand-in OpenAI-compatible server on 127.0.0.1 with a tokenizer built from a local
file: see tests/testing/sa_bench_standin.py, which regenerates them. The test environment
does not carry the client's dependencies (aiohttp, pandas, datasets, transformers), so the
tests read the files it wrote rather than running it. The AgentX fixtures
(tests/data/results/agentic/) cannot be produced here (aiperf replays a trace against a GPU
server): they are written by hand with exactly the keys and units process_agentic_result.py
and aiperf's profile_export_aiperf.json carry.
"""

from __future__ import annotations

import json

import pytest

from infx.results.collect import collect
from infx.results.schema import result_row_problem
from testing.artifacts import agentic, bundled_row, bundled_rows, point_folder, sa_bench
from testing.cli import run_cli

VLLM_DISAGG = "dsv4-fp4-gb300-dynamo-vllm"
LADDER = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
MULTINODE_4 = "results_concurrency_4_gpus_24_ctx_8_gen_16.json"
MULTINODE_8 = "results_concurrency_8_gpus_24_ctx_8_gen_16.json"
ALL_FAILED = "results_concurrency_16_gpus_24_ctx_8_gen_16.json"


def staged(conc: int, suffix: str = "gpus_24_ctx_8_gen_16") -> str:
    """The name infx launch stages a sa-bench file under (infx/launch/staging.py)."""
    return f"{{name}}_sa-bench_isl_8192_osl_1024_conc{conc}_{suffix}.json"


def test_multinode_fixed_seq_point_follows_the_reference_formulas(tmp_path):
    raw = sa_bench(MULTINODE_4)
    folder = point_folder(tmp_path, bundled_row(VLLM_DISAGG, conc=[4]), {staged(4): raw})
    collected = collect([folder])
    assert [p.status for p in collected.points] == ["ok"]
    [row] = collected.rows
    total, output = raw["total_token_throughput"], raw["output_throughput"]
    assert row["tput_per_gpu"] == pytest.approx(total / (8 + 16))
    assert row["output_tput_per_gpu"] == pytest.approx(output / 16)
    assert row["input_tput_per_gpu"] == pytest.approx((total - output) / 8)
    assert (row["num_prefill_gpu"], row["num_decode_gpu"]) == (8, 16)
    for stat in ("mean", "median", "std", "p99"):
        for metric in ("ttft", "tpot", "itl", "e2el"):
            assert row[f"{stat}_{metric}"] == pytest.approx(raw[f"{stat}_{metric}_ms"] / 1000)
            assert f"{stat}_{metric}_ms" not in row
        assert row[f"{stat}_intvty"] == pytest.approx(1000 / raw[f"{stat}_tpot_ms"])
    # Nothing but the converted keys is copied from the raw file, as in the reference.
    assert not {"completed", "duration", "ttfts", "itls", "total_token_throughput"} & row.keys()
    assert row["conc"] == 4 and row["is_multinode"] is True and row["prefill_dp_attention"] == "true"
    assert row["decode_dp_attention"] == "false" and row["prefill_num_workers"] == 1 and row["decode_num_workers"] == 6
    assert row["model"] == raw["model_id"] and row["hw"] == "gb300-nv" and row["isl"] == 8192
    # infx's identity and provenance
    assert row["config-key"] == VLLM_DISAGG and row["point-id"].endswith("-c4")
    assert row["srt-slurm-commit"].startswith("e4019633") and row["run-id"] == 4242 and row["job-id"] == "1234"
    assert (
        row["terminal-state"] == "COMPLETED" and row["lane"] == "gb300-nv" and row["scenario-type"] == "fixed-seq-len"
    )
    assert result_row_problem(row) is None


def test_the_reference_test_figures(tmp_path):
    """process_result's own case: total 28000 and output 16000 on 20P+8D give 1000 / 2000 / 600."""
    raw = sa_bench(MULTINODE_4, total_token_throughput=28000.0, output_throughput=16000.0)
    folder = point_folder(tmp_path, bundled_row(VLLM_DISAGG, conc=[4]), {staged(4, "gpus_28_ctx_20_gen_8"): raw})
    [row] = collect([folder]).rows
    assert (row["tput_per_gpu"], row["output_tput_per_gpu"], row["input_tput_per_gpu"]) == (1000, 2000, 600)


def test_aggregated_multinode_name_counts_all_gpus_as_prefill(tmp_path):
    raw = sa_bench(MULTINODE_4)
    folder = point_folder(tmp_path, bundled_row(VLLM_DISAGG, conc=[4]), {staged(4, "gpus_24"): raw})
    [row] = collect([folder]).rows
    assert (row["num_prefill_gpu"], row["num_decode_gpu"], row["decode_tp"], row["decode_ep"]) == (24, 0, 0, 0)
    assert row["output_tput_per_gpu"] == pytest.approx(raw["output_throughput"] / 24)
    assert row["input_tput_per_gpu"] == pytest.approx((raw["total_token_throughput"] - raw["output_throughput"]) / 24)


def test_single_node_point_divides_by_tp_pp_pcp(tmp_path):
    base = bundled_row(VLLM_DISAGG)
    point = {k: v for k, v in base.items() if k not in ("prefill", "decode", "node-count")}
    point.update(
        {"tp": 4, "pp": 2, "pcp-size": 2, "dcp-size": 2, "ep": 4, "dp-attn": False, "conc": 4, "disagg": False}
    )
    raw = sa_bench("results_concurrency_4_gpus_4.json")
    folder = point_folder(tmp_path, point, {"{name}_sa-bench_isl_8192_osl_1024_conc4_gpus_4.json": raw})
    [row] = collect([folder]).rows
    assert row["tput_per_gpu"] == pytest.approx(raw["total_token_throughput"] / 16)  # DCP adds no GPUs
    assert row["output_tput_per_gpu"] == pytest.approx(raw["output_throughput"] / 16)
    assert (row["is_multinode"], row["tp"], row["pp"], row["pcp_size"], row["dp_attention"]) == (
        False,
        4,
        2,
        2,
        "false",
    )
    assert result_row_problem(row) is None


def test_an_all_failed_file_is_refused_naming_the_point(tmp_path):
    row = bundled_row(VLLM_DISAGG, conc=[4, 16])
    folder = point_folder(tmp_path, row, {staged(4): sa_bench(MULTINODE_4), staged(16): sa_bench(ALL_FAILED)})
    done = run_cli("results", "collect", str(folder), "--output", str(tmp_path / "results.json"))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    pid = json.loads((tmp_path / "results.json").read_text())["points"][0]["point-id"]
    assert (
        f"point {pid} ({VLLM_DISAGG}): concurrency 16: no request completed (completed=0 of num_prompts=32)"
        in done.stderr
    )
    assert "error[result-invalid]" in done.stderr
    written = json.loads((tmp_path / "results.json").read_text())
    assert written["rows"] == [] and written["points"][0]["status"] == "invalid"


def test_a_planned_concurrency_without_a_result_is_invalid(tmp_path):
    folder = point_folder(
        tmp_path,
        bundled_row(VLLM_DISAGG, conc=[4, 8, 32]),
        {staged(4): sa_bench(MULTINODE_4), staged(8): sa_bench(MULTINODE_8)},
    )
    [verdict] = collect([folder]).points
    assert verdict.status == "invalid"
    assert verdict.reasons == ["planned concurrency 32 produced no result file"]


def test_a_zero_tpot_with_completed_requests_is_a_clear_message(tmp_path):
    raw = sa_bench(MULTINODE_4, median_tpot_ms=0.0, mean_tpot_ms=0.0)
    folder = point_folder(tmp_path, bundled_row(VLLM_DISAGG, conc=[4]), {staged(4): raw})
    [verdict] = collect([folder]).points
    assert verdict.status == "invalid"
    assert "mean_tpot_ms is 0 with 40 requests completed" in verdict.reason and "is the OSL 1?" in verdict.reason


def test_a_failed_launch_says_why_in_one_line(tmp_path):
    folder = point_folder(
        tmp_path, bundled_row(VLLM_DISAGG), {}, exit_code=1, message="job 77: FAILED (exit code 1:0)\nits output: ..."
    )
    [verdict] = collect([folder]).points
    assert (verdict.status, verdict.reasons) == ("failed", ["job 77: FAILED (exit code 1:0)"])
    assert folder.name.endswith("-failed")


def test_a_folder_without_a_launch_record_is_failed_not_a_crash(tmp_path):
    (tmp_path / "point-x").mkdir()
    (tmp_path / "point-x" / "launch-plan.json").write_text("{}")
    done = run_cli("results", "collect", str(tmp_path / "point-x"), "--format", "table")
    assert done.returncode == 1
    assert "no launch record" in done.stderr and "Traceback" not in done.stderr
    missing = run_cli("results", "collect", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such folder" in missing.stderr


@pytest.mark.parametrize("failed, total, status", [(11, 100, "invalid"), (10, 100, "ok"), (0, 100, "ok")])
def test_agentx_gate_refuses_above_ten_percent_and_passes_at_exactly_ten(tmp_path, failed, total, status):
    """From aiperf's own aggregate when the logs carry it (the reference gate's source)."""
    row = bundled_row(LADDER)
    folder = point_folder(tmp_path, row, {"{name}_conc120.json": agentic()})
    aiperf = folder / "LOGS" / "agentic" / "conc120" / "profile_export_aiperf.json"
    aiperf.parent.mkdir(parents=True)
    aiperf.write_text(
        json.dumps(
            {
                "request_count": {"avg": total - failed},
                "error_request_count": {"avg": failed},
                "completed_request_count": {"avg": total},
            }
        )
    )
    done = run_cli("results", "collect", str(folder), "--output", str(tmp_path / "r.json"))
    verdict = json.loads((tmp_path / "r.json").read_text())["points"][0]
    assert verdict["status"] == status
    if status == "invalid":
        assert done.returncode == 1
        assert (
            f"point {verdict['point-id']} ({LADDER}): concurrency 120: failed-request rate 11/100 = 11.0% exceeds the "
            "AgentX gate of 10%" in done.stderr
        )
    else:
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("errors, status", [(11 * 2000 // 89, "invalid"), (222, "ok")])
def test_agentx_gate_from_the_aggregates_request_accounting(tmp_path, errors, status):
    """Without aiperf's file: failed = records_error_dropped of (successful + failed)."""
    aggregate = agentic(request_accounting__records_error_dropped=errors)
    folder = point_folder(tmp_path, bundled_row(LADDER), {"{name}_conc120.json": aggregate})
    [verdict] = collect([folder]).points
    assert verdict.status == status, verdict.reasons
    assert errors / (2000 + errors) > 0.10 if status == "invalid" else errors / (2000 + errors) <= 0.10


def test_agentx_row_is_the_aggregate_plus_infx_fields(tmp_path):
    aggregate = agentic()
    folder = point_folder(tmp_path, bundled_row(LADDER), {"{name}_conc120.json": aggregate})
    [row] = collect([folder]).rows
    assert {k: row[k] for k in aggregate} == aggregate
    assert row["scenario-type"] == "agentic-coding" and row["config-key"] == LADDER
    assert result_row_problem(row) is None


def test_an_agentx_point_with_no_successful_request_is_refused(tmp_path):
    aggregate = agentic(num_requests_successful=0, request_accounting__records_error_dropped=0)
    folder = point_folder(tmp_path, bundled_row(LADDER), {"{name}_conc120.json": aggregate})
    [verdict] = collect([folder]).points
    assert verdict.status == "invalid" and "no request completed" in verdict.reason


def test_every_bundled_row_collects_into_schema_valid_rows(tmp_path):
    """All rows the bundled configs produce, each with a result per planned concurrency."""
    from infx.points import point_id

    keys = {json.loads(text)["config-key"] for text in bundled_rows("*")}
    folders, expected = [], 0
    for key in sorted(keys):
        for index, text in enumerate(bundled_rows(key)):
            row = json.loads(text)
            concs = row["conc"] if isinstance(row["conc"], list) else [row["conc"]]
            if row.get("scenario-type") == "agentic-coding":
                files = {f"{{name}}_conc{c}.json": agentic(conc=c) for c in concs}
            else:
                files = {staged(c): sa_bench(MULTINODE_4, max_concurrency=c) for c in concs}
            folders.append(point_folder(tmp_path / key / str(index), row, files))
            expected += len(concs)
    done = run_cli("results", "collect", *map(str, folders), "--output", str(tmp_path / "results.json"))
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "results.json").read_text())
    assert len(written["rows"]) == expected and len(written["points"]) == len(folders) >= 68
    assert all(result_row_problem(row) is None for row in written["rows"])
    assert {row["point-id"] for row in written["rows"]} == {p["point-id"] for p in written["points"]}
    assert {p["point-id"] for p in written["points"]} == {point_id(json.loads(t)) for t in bundled_rows("*")}
    assert {p["status"] for p in written["points"]} == {"ok"}


def test_csv_and_a_folder_of_downloaded_artifacts(tmp_path):
    point_folder(tmp_path / "downloaded", bundled_row(VLLM_DISAGG, conc=[4]), {staged(4): sa_bench(MULTINODE_4)})
    point_folder(tmp_path / "downloaded", bundled_row(VLLM_DISAGG, 1, conc=[8]), {staged(8): sa_bench(MULTINODE_8)})
    done = run_cli("results", "collect", str(tmp_path / "downloaded"), "--format", "csv")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("config-key,point-id,")
    assert '"{""name"":""dynamo-router""' in lines[1]  # nested values as JSON


def test_a_malformed_launch_record_is_an_invalid_point_not_a_crash(tmp_path):
    """A prefill tp that is not a number: the sa-bench row carries it (the schema refuses it),
    the AgentX row counts GPUs with it (the conversion fails: reported as malformed)."""
    fixed = point_folder(tmp_path, bundled_row(VLLM_DISAGG, conc=[4]), {staged(4): sa_bench(MULTINODE_4)})
    agentx = point_folder(tmp_path / "a", bundled_row(LADDER), {"{name}_conc120.json": agentic()})
    good = point_folder(tmp_path / "more", bundled_row(VLLM_DISAGG, 1, conc=[8]), {staged(8): sa_bench(MULTINODE_8)})
    for folder in (fixed, agentx):
        record = next(folder.glob("*_launch.json"))
        data = json.loads(record.read_text())
        data["point"]["prefill"]["tp"] = "eight"
        record.write_text(json.dumps(data))
    done = run_cli("results", "collect", str(fixed), str(agentx), str(good), "--format", "table")
    assert done.returncode == 1 and "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert 'gives a row the schema refuses: row.prefill_tp: "eight" is not of type "integer"' in done.stderr
    assert "the launch record or a result file is malformed (ValueError:" in done.stderr
    assert "infx results collect: 1 rows from 1 of 3 points; 2 point(s) without a valid result" in done.stderr
    assert len(done.stdout.splitlines()) == 2  # the good point's row still comes out


def test_an_empty_download_folder_holds_no_point(tmp_path):
    (tmp_path / "points").mkdir()
    done = run_cli("results", "collect", str(tmp_path / "points"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["points"] == [] and "0 rows from 0 of 0 points" in done.stderr


def test_collected_rows_pass_the_published_schema_and_each_broken_field_is_named(tmp_path):
    """The rows `collect` writes pass the schema, and a row with one field broken is refused
    naming that field; jsonschema (a second implementation) agrees on every row."""
    import copy

    import jsonschema

    from infx.results.schema import RESULT_ROW_SCHEMA
    from infx.schema import load_schema

    validator = jsonschema.Draft202012Validator(load_schema(RESULT_ROW_SCHEMA))
    fixed = point_folder(tmp_path, bundled_row(VLLM_DISAGG, conc=[4]), {staged(4): sa_bench(MULTINODE_4)})
    agentx = point_folder(tmp_path / "a", bundled_row(LADDER), {"{name}_conc120.json": agentic()})
    rows = collect([fixed, agentx]).rows
    assert len(rows) == 2
    broken = []
    for row in rows:
        for key, value in (
            ("tput_per_gpu", -1.0),
            ("conc", 0),
            ("run-id", "x"),
            ("srt-slurm-commit", "main"),
            ("num_requests_successful", 0),
            ("prefill_dp_attention", True),
            ("scenario-type", "other"),
        ):
            if key in row:
                changed = copy.deepcopy(row)
                changed[key] = value
                broken.append((key, changed))
    assert len(broken) == 12
    for row in rows + [changed for _, changed in broken]:
        assert (result_row_problem(row) is None) == (not list(validator.iter_errors(row))), row.get("point-id")
    assert all(result_row_problem(row) is None for row in rows)
    for key, changed in broken:
        assert (result_row_problem(changed) or "").startswith(f"row.{key}: "), (key, result_row_problem(changed))
