"""Reference behaviours B1–B12 (reference/launch.md §6) as this design adapts them."""

import io
import json
from pathlib import Path

import pytest

from infx.launch import staging
from infx.launch.plan import plan_point
from infx.launch.pointfile import PointFile
from infx.launch.srtctl import JOB_ID, SrtctlError, job_id_of
from infx.launch.srtctl_kind import StatusLine
from infx.recipes import RecipeRef, load_recipe, recipe_node_count

REPO = Path(__file__).resolve().parents[2]
SA_SCHEMA2_PIN = "32ef19f7d08297925b0978b4f1ef68bf30ce494d"  # SemiAnalysisAI/srt-slurm with schema-2 services


def plan_for(root, lane, points, recipe_fragment, runner="gb300-nv_1"):
    """The bundled row of ``recipe_fragment`` planned in ``root``: for an agentic row, a copy of the
    repository with an AgentX harness (``harness_repo``), as a benchmark repository has one."""
    [row] = [p for p in points if any(recipe_fragment in s for s in p["prefill"].get("additional-settings", []))][:1]
    return plan_point(lane, PointFile(data=row, file="point.json"), root, env={"RUNNER_NAME": runner})


LADDER = "disagg-gb300-dep8-dep16-mtp-mooncake-ladder.yaml:zip_override_ladder[2]"


def test_the_job_name_is_the_runner_name(harness_repo, lane, points):
    plan = plan_for(harness_repo, lane, points, LADDER)
    assert plan.job_name == "gb300-nv_1" and plan.recipe["name"] == "gb300-nv_1"


def test_sglang_agentic_needs_only_srt_slurm(harness_repo, lane, points):
    plan = plan_for(harness_repo, lane, points, LADDER)
    assert plan.route.name == "sglang-dsv4-agentic" and plan.pin.commit == SA_SCHEMA2_PIN
    assert plan.route.overlays == (("sglang/deepseek-v4/agentic", "recipes/sglang/deepseek-v4/agentic"),)
    assert plan.sources == []  # no engine fork, no setup script
    assert plan.argv()[-2:] == [plan.tags, "--no-preflight"] and plan.tags.split(",")[:4] == [
        "gb300-nv",
        "dsv4",
        "fp4",
        "0x0",
    ]


def test_a_power_recipe_routes_to_the_pinned_producer(harness_repo, lane, points):
    plan = plan_for(harness_repo, lane, points, "disagg-gb300-1p1d-dep4-dep16-5-c1024")
    assert plan.power and plan.route.name == "sglang-dsv4-fixed-power"
    assert plan.pin.commit == "6fc1bed01a0b82dae0088a105c03ce0cfb353443" and "--no-preflight" in plan.argv()
    assert plan.tags.split(",")[3] == "8192x1024"
    plain = plan_for(harness_repo, lane, points, "disagg-gb300-8p1d-dep4-dep40-18-c2048")
    assert not plain.power and plain.route.name == "sglang-dsv4-fixed" and plain.pin.ref == "v1.0.25"
    assert "--no-preflight" not in plain.argv()


def test_trt_agentic_takes_its_route_and_model_alias(harness_repo, lane, points):
    plan = plan_for(harness_repo, lane, points, "dynamo-disagg-gb300-1p4d-dep4-tep8-c4-b1-mtp")
    assert plan.route.name == "trt-dsv4-agentic" and plan.time_limit == "8:00:00" and plan.pin.ref == "v1.0.50"
    assert plan.cluster_config("/c", "/s")["model_paths"] == {
        "deepseek-ai/DeepSeek-V4-Pro": "/scratch/models/DeepSeek-V4-Pro"
    }
    vllm = plan_for(harness_repo, lane, points, "agg-gb300-tp8-mtp-agentic")
    assert vllm.route.name == "vllm-agentic" and vllm.time_limit == "4:00:00" and vllm.pin.ref == "v1.0.36"


# What srt-slurm's srtctl apply prints after sbatch accepted the job (the same lines in every
# bundled version; the job id is the last word of sbatch's "Submitted batch job <id>").
REAL_APPLY_OUTPUT = """🚀 Submitting: gb300-nv_1
✅ Job 4242 submitted!
📁 Logs: /w/srt-slurm/outputs/4242/logs
📋 Monitor: tail -f /w/srt-slurm/outputs/4242/logs/sweep_4242.log
📊 Queue: squeue --job 4242
"""


def test_the_job_id_is_read_from_srtctl_s_submission_line():
    assert JOB_ID.search("rendering…\n✅ Job 4242 submitted!\n").group(1) == "4242"
    assert JOB_ID.search("no id here") is None
    assert job_id_of(REAL_APPLY_OUTPUT) == "4242"
    # "Job 12 of 3" in a recipe echo or a log path is no submission line
    assert job_id_of("Job 12 of 3 rendered\n" + REAL_APPLY_OUTPUT) == "4242"
    for output in ("sbatch: error: Batch job submission failed", REAL_APPLY_OUTPUT + "✅ Job 4243 submitted!\n"):
        with pytest.raises(SrtctlError):
            job_id_of(output)


def test_fixed_seq_results_are_renamed(tmp_path):
    logs, out = tmp_path / "logs", tmp_path / "out"
    (logs / "sa-bench_isl_8192_osl_1024").mkdir(parents=True)
    (logs / "unrelated").mkdir()
    out.mkdir()
    for name in (
        "results_concurrency_1024_gpus_20_ctx_4_gen_16.json",
        "results_concurrency_4_gpus_4.json",
        "other.json",
    ):
        (logs / "sa-bench_isl_8192_osl_1024" / name).write_text("{}")
    (logs / "unrelated" / "results_concurrency_1_gpus_1.json").write_text("{}")
    staged, skipped = staging.stage_fixed_seq(logs, out, "RF")
    assert sorted(p.name for p in staged) == [
        "RF_sa-bench_isl_8192_osl_1024_conc1024_gpus_20_ctx_4_gen_16.json",
        "RF_sa-bench_isl_8192_osl_1024_conc4_gpus_4.json",
    ]
    assert skipped == []
    # Nothing staged is no error here: the artifact's verdict says which concurrency has no result.
    assert staging.stage_fixed_seq(tmp_path / "empty", out, "RF") == ([], [])


def test_agentic_results_are_the_aggregates_with_successful_requests(tmp_path):
    (tmp_path / "RF_conc80.json").write_text(json.dumps({"num_requests_successful": 12}))
    (tmp_path / "OTHER_conc80.json").write_text(json.dumps({"num_requests_successful": 0}))
    assert [p.name for p in staging.check_agentic(tmp_path, "RF", [80])] == ["RF_conc80.json"]
    assert staging.check_agentic(tmp_path, "RF", [16]) == []  # the verdict names the missing concurrency


@pytest.mark.parametrize(
    "recipe, nodes",
    [
        ("recipes/sglang/deepseek-v4/agentic/agg-gb300-tp4-mtp-kvoffload.yaml", 2),
        ("recipes/sglang/deepseek-v4/agentic/disagg-gb300-2p1d-dep8-tp4-c80-mtp-kvoffload.yaml", 4),
        ("recipes/sglang/deepseek-v4/agentic/disagg-gb300-2p4d-dep8-dep16-c256-mtp-kvoffload.yaml", 7),
        ("recipes/sglang/deepseek-v4/agentic/disagg-gb300-4p4d-dep8-dep16-c512-mtp-kvoffload.yaml", 9),
        ("recipes/sglang/deepseek-v4/agentic/disagg-gb300-6p4d-dep8-dep16-c768-mtp-kvoffload.yaml", 11),
        ("recipes/sglang/deepseek-v4/agentic/disagg-gb300-12p4d-dep8-dep16-c1536-mtp-kvoffload.yaml", 17),
        ("recipes/sglang/deepseek-v4/8k1k/disagg-gb300-1p1d-tp4-tp4-2-c1.yaml", 2),
        ("recipes/sglang/deepseek-v4/8k1k/disagg-gb300-1p1d-dep4-dep16-5-c1024.yaml", 5),
        ("recipes/sglang/deepseek-v4/8k1k/disagg-gb300-15p1d-dep4-dep12-18-c12000.yaml", 18),
    ],
)
def test_the_node_count_of_the_corpus_recipes(recipe, nodes, corpus):
    _, flat = load_recipe(RecipeRef.parse(recipe), corpus)
    assert recipe_node_count(flat) == nodes


def test_status_line_prints_once_per_state_change_in_ci():
    stream = io.StringIO()
    status = StatusLine(stream)
    for state, elapsed in (("PENDING", 0), ("PENDING", 5), ("RUNNING", 10), ("RUNNING", 75)):
        status.update("42", state, elapsed)
    assert stream.getvalue().splitlines() == [
        "[infx launch] job 42: PENDING, 00:00 elapsed",
        "[infx launch] job 42: RUNNING, 00:10 elapsed",
    ]


def test_status_line_is_live_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    status = StatusLine(stream)
    status.update("42", "RUNNING", 1)
    status.update("42", "RUNNING", 2)
    status.close()
    assert stream.getvalue().count("\r") == 2 and stream.getvalue().endswith("\n") and "00:02" in stream.getvalue()


def test_the_documented_lane_defaults_are_the_code_s():
    """docs/launch.md states the defaults of the lane's slurm timings and the cache lock; the code holds them."""
    import re
    from dataclasses import fields

    from infx.launch import sources
    from infx.launch.lane import SlurmSettings

    doc = (REPO / "docs" / "launch.md").read_text()
    documented = {key: float(value) for key, value in re.findall(r"`([a-z-]+-seconds)` \([^)]*?default (\d+)\)", doc)}
    assert documented == {
        spec.name.replace("_", "-"): spec.default for spec in fields(SlurmSettings) if spec.name.endswith("_seconds")
    }
    assert f"After {sources.LOCK_SECONDS:g} s of waiting (`LOCK_SECONDS`" in doc
