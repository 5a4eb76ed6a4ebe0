"""Eval points under the one validity rule (infx/results/artifact.py), and their eval rows in
results.json (`infx results collect`).

The points are the bundled configs' eval rows (the seed change's agentic eval-only points, the
dynamo-vllm rows the default matrix marks `run-eval`); their eval/ folders hold what srt-slurm's
eval stage leaves, made from the real lm-eval result of tests/data/results/evals/
(tests/testing/evalstage.py). Collect, reuse and the launcher all take the verdict, so each case is
checked through collect and reuse's judge alike.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from infx.results.artifact import PointArtifact
from infx.results.collect import collect
from infx.results.evals.folder import read_eval_set
from infx.results.evals.rows import EvalCollection
from infx.results.render import read_results, results_json
from infx.workflows.reuse import judge
from testing.artifacts import bundled_row, point_folder, sa_bench
from testing.cli import run_cli
from testing.evalsets import BATCHED, FLAT, FLAT_NEWER, copy_set, edit_meta, results_files
from testing.evalstage import eval_stage_output

LADDER = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"  # the seed change: its eval points are agentic eval-only
VLLM_DISAGG = "dsv4-fp4-gb300-dynamo-vllm"  # every default row runs its benchmark, then an eval (`run-eval`)
KEY = "e" * 64
MULTINODE_192 = "results_concurrency_4_gpus_24_ctx_8_gen_16.json"


@pytest.fixture(scope="module")
def seed_eval_rows() -> list[dict]:
    """The seed change's eval points as `infx plan --evals-only` lists them (eval-only, one eval concurrency each)."""
    done = run_cli("plan", "--label", "sweep-enabled", "--label", "evals-only", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = [row for rows in json.loads(done.stdout)["buckets"].values() for row in rows]
    assert len(rows) == 5 and all(row["eval-only"] and row["scenario-type"] == "agentic-coding" for row in rows)
    return rows


def eval_only_point(root: Path, row: dict, **changes) -> Path:
    return point_folder(root, {**row, "result-key": KEY, **changes}, {})


def verdict_of(folder: Path):
    """collect's verdict of one folder, checked to be what reuse's judge says too."""
    [verdict] = collect([folder]).points
    judged = judge(folder, KEY, {})
    assert (judged is None) == (verdict.status == "ok"), judged
    if judged is not None:
        assert judged == f"{verdict.status}: {verdict.reason}"
    return verdict


def test_an_eval_only_point_needs_no_throughput_file_and_gives_its_eval_rows(tmp_path, seed_eval_rows):
    for index, row in enumerate(seed_eval_rows):
        folder = eval_only_point(tmp_path / str(index), row)
        assert sorted(p.name for p in folder.iterdir() if p.is_file())[0].endswith("_launch.json")  # no throughput file
        verdict = verdict_of(folder)
        assert verdict.status == "ok" and verdict.rows == 0, verdict.reason
        artifact = PointArtifact.read(folder)
        [eval_row] = artifact.verdict().evals.rows  # the artifact carries its typed eval rows
        assert (eval_row.task, eval_row.conc, eval_row.config_key, eval_row.result_key) == (
            "gsm8k",
            row["eval-conc"],
            LADDER,
            KEY,
        )
        assert (eval_row.em_strict, eval_row.em_flexible) == FLAT_NEWER and eval_row.model_prefix == "dsv4"


def test_an_eval_point_without_eval_results_is_eval_missing_for_collect_and_reuse(tmp_path, seed_eval_rows):
    row = seed_eval_rows[0]
    bare = point_folder(tmp_path / "bare", {**row, "result-key": KEY}, {}, eval_results=False)
    verdict = verdict_of(bare)
    assert verdict.status == "invalid" and verdict.reasons[0].startswith("eval-missing: an eval point (only)"), (
        verdict.reasons
    )
    # meta_env.json but no lm-eval result: the stage ran, lm-eval wrote nothing
    half = eval_only_point(tmp_path / "half", row)
    for path in (half / "eval").glob("results_*.json"):
        path.unlink()
    verdict = verdict_of(half)
    assert verdict.status == "invalid" and verdict.reasons == [
        f"eval-missing: {half / 'eval'} holds meta_env.json but no lm-eval result (a JSON file with lm_eval_version)"
    ]
    # a link where meta_env.json belongs is never followed
    linked = eval_only_point(tmp_path / "linked", row)
    (linked / "eval" / "meta_env.json").unlink()
    (linked / "eval" / "meta_env.json").symlink_to(tmp_path / "half" / "eval" / "meta_env.json")
    assert verdict_of(linked).reason.startswith("eval-missing: an eval point (only)")


def test_reuse_refuses_an_eval_point_without_eval_results_and_accepts_one_with_them(tmp_path, seed_eval_rows):
    """reuse select over a folder of downloaded artifacts, the seed's eval points keyed by the launch planner."""
    from infx.launch.plan import keys_for_rows
    from infx.workflows.reuse import lane_resolver, result_artifact_name
    from testing.artifacts import REPO
    from testing.github_helpers import result_artifact_files

    keys = keys_for_rows(seed_eval_rows, REPO, lane_resolver(REPO))
    artifacts = tmp_path / "artifacts"
    for index, row in enumerate(seed_eval_rows[:2]):
        key = keys[index][0]
        files = result_artifact_files(
            row, key, eval_results=index == 0
        )  # the second: its eval results were never staged
        for name, text in files.items():
            (artifacts / result_artifact_name(key) / name).parent.mkdir(parents=True, exist_ok=True)
            (artifacts / result_artifact_name(key) / name).write_text(text)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"buckets": {"multinode_agentic_evals": seed_eval_rows}, "point-count": 5}))
    done = run_cli(
        "reuse",
        "select",
        "--plan",
        str(plan),
        "--artifacts",
        str(artifacts),
        "--output",
        str(tmp_path / "out.json"),
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    decision = json.loads(done.stdout)
    assert [item["result-key"] for item in decision["reused"]] == [keys[0][0]]
    from infx.points import point_id

    why = decision["dispatch-reasons"][point_id(seed_eval_rows[1])]
    assert "invalid: eval-missing: an eval point (only)" in why, why


def test_a_benchmark_then_eval_point_needs_both_results(tmp_path):
    row = bundled_row(VLLM_DISAGG, conc=[4], **{"eval-conc": 4, "result-key": KEY})
    throughput = {"{name}_sa-bench_isl_8192_osl_1024_conc4_gpus_24_ctx_8_gen_16.json": sa_bench(MULTINODE_192)}
    both = point_folder(tmp_path / "both", row, throughput)
    verdict = verdict_of(both)
    assert verdict.status == "ok" and verdict.rows == 1, verdict.reason
    no_eval = point_folder(tmp_path / "no-eval", row, throughput, eval_results=False)
    assert verdict_of(no_eval).reasons[0].startswith("eval-missing: an eval point (after-benchmark)")
    no_benchmark = point_folder(tmp_path / "no-benchmark", row, {})
    assert verdict_of(no_benchmark).reasons == ["planned concurrency 4 produced no result file"]


def test_the_eval_sets_own_problems_are_reasons(tmp_path, seed_eval_rows):
    # asked for concurrency 64 and 128; lm-eval died at 128
    row = {**seed_eval_rows[0], "conc": [64, 128], "eval-all-concs": True, "result-key": KEY}
    row.pop("eval-conc")
    folder = point_folder(tmp_path / "p", row, {}, eval_results=False)
    eval_stage_output(row, folder / "eval", failed=(128,))
    verdict = verdict_of(folder)
    assert verdict.status == "invalid"
    assert [reason.split(":")[0] for reason in verdict.reasons] == [
        "eval-batch-failed-conc",
        "eval-batch-conc-missing",
        "eval-batch-result-missing",
    ], verdict.reasons
    # what it ran is not what its point asked for
    other = eval_only_point(tmp_path / "q", seed_eval_rows[1])
    edit_meta(other / "eval", conc=7)
    assert verdict_of(other).reasons == [
        f"eval-conc-mismatch: the point asked for eval concurrency {seed_eval_rows[1]['eval-conc']}, the eval ran 7"
    ]


def test_collect_writes_eval_rows_of_valid_points_and_the_problems_of_the_others(tmp_path, seed_eval_rows):
    downloaded = tmp_path / "points"
    for index, row in enumerate(seed_eval_rows[:3]):  # each point its own result key
        eval_only_point(downloaded, row, **{"result-key": f"{index}" * 64})
    broken = eval_only_point(downloaded, seed_eval_rows[3], **{"result-key": "3" * 64})
    (broken / "eval" / next(p.name for p in (broken / "eval").glob("results_*"))).write_text('{"lm_eval_version": NaN}')
    point_folder(downloaded, {**seed_eval_rows[4], "result-key": "4" * 64}, {}, exit_code=1, message="job 9: FAILED")
    loose = copy_set(BATCHED, tmp_path / "loose")  # an eval folder on its own (the reference collector's layout)
    output = tmp_path / "results.json"
    done = run_cli("results", "collect", str(downloaded), str(loose), "--output", str(output))
    assert done.returncode == 1 and "error[result-invalid]" in done.stderr and "error[result-failed]" in done.stderr
    written = json.loads(output.read_text())
    assert len(written["points"]) == 5  # the loose eval folder is no point
    evals = written["evals"]
    from infx.points import point_id

    rows_by_point = {}
    for row in evals["rows"]:
        rows_by_point.setdefault(row["point-id"], []).append(row)
    assert sorted(rows_by_point, key=str) == sorted([point_id(r) for r in seed_eval_rows[:3]] + [None], key=str)
    assert [r["conc"] for r in rows_by_point[None]] == [16, 32]  # the loose batched folder
    sets = {s["point-id"]: s for s in evals["sets"]}
    assert sets[point_id(seed_eval_rows[3])]["rows"] == 0
    assert [p["rule"] for p in sets[point_id(seed_eval_rows[3])]["problems"]] == ["eval-result-unreadable"]
    assert sets[point_id(seed_eval_rows[4])]["problems"][0]["rule"] == "eval-missing"  # a failed launch staged nothing
    # results.json reads back whole: the eval section through its schema
    collected, notices = read_results(output)
    assert notices == [] and len(collected.evals.rows) == 5
    assert collected.evals.to_json() == evals


def test_a_re_run_of_a_point_never_duplicates_its_rows(tmp_path, seed_eval_rows):
    """Attempt 1 of a point's job failed its eval and uploaded `point-<key>-failed`; attempt 2 (a
    re-run) succeeded: both are downloaded, the newest attempt's set alone is written."""
    row = {**seed_eval_rows[0], "result-key": KEY}
    first = point_folder(tmp_path / "a1", row, {}, run_attempt=1, eval_results=False)
    eval_stage_output(row, first / "eval", strict=0.5)
    edit_meta(first / "eval", conc=1)  # and at the wrong concurrency: a problem of attempt 1
    first.rename(tmp_path / "points-1")
    second = point_folder(tmp_path / "a2", row, {}, run_attempt=2)
    downloaded = tmp_path / "downloaded"
    downloaded.mkdir()
    (tmp_path / "points-1").rename(downloaded / "point-x-failed")
    second.rename(downloaded / "point-x")
    collected = collect([downloaded])
    assert [v.status for v in collected.points] == ["ok", "invalid"]
    [only] = collected.evals.sets
    [eval_row] = collected.evals.rows
    assert eval_row.run_attempt == 2 and eval_row.em_strict == FLAT_NEWER[0] and only.problems == ()
    # two copies of one standalone folder (the same eval downloaded twice): one row per task and concurrency
    twice = tmp_path / "twice"
    copy_set(FLAT, twice / "a")
    copy_set(FLAT, twice / "b")
    newer = twice / "b" / results_files(twice / "b")[-1].name
    data = json.loads(newer.read_text())
    data["date"] += 60
    newer.write_text(json.dumps(data))
    found = collect([twice]).evals
    [eval_row] = found.rows
    assert eval_row.source == str(newer) and len(found.sets) == 2


def test_an_eval_collection_without_duplicates_is_unchanged():
    found = EvalCollection(
        (read_eval_set(Path(__file__).resolve().parents[1] / "data" / "results" / "evals" / BATCHED),)
    )
    assert found.without_duplicate_rows() is found


def test_the_launch_stages_the_eval_stage_outputs_under_eval(tmp_path, seed_eval_rows):
    """infx/launch/staging.py stage_eval: srt-slurm's <job logs>/eval_results/ -> <out>/eval/,
    regular files only (a link or FIFO the job left is listed, never followed or opened)."""
    import os

    from infx.launch.staging import stage_eval

    job_logs = tmp_path / "outputs" / "77" / "logs"
    eval_stage_output(seed_eval_rows[0], job_logs / "eval_results")
    (job_logs / "eval_results" / "leak.json").symlink_to("/etc/hostname")
    os.mkfifo(job_logs / "eval_results" / "pipe")
    out = tmp_path / "out"
    out.mkdir()
    staged, skipped = stage_eval(job_logs, out)
    assert [name.split("_")[0] for name in staged] == ["eval/meta", "eval/results", "eval/samples"]
    assert sorted(skipped) == ["leak.json: a symbolic link, not copied", "pipe: a FIFO, not copied"]
    assert sorted(p.name for p in (out / "eval").iterdir()) == sorted(name.removeprefix("eval/") for name in staged)
    assert stage_eval(tmp_path / "nowhere", out) == ([], [])
    shutil.rmtree(job_logs / "eval_results")
    (job_logs / "eval_results").symlink_to(tmp_path)  # a link in its place: nothing staged through it
    assert stage_eval(job_logs, tmp_path / "out2") == ([], [])


def test_results_json_from_collect_renders_its_evals_section_through_the_writer(tmp_path, seed_eval_rows):
    eval_only_point(tmp_path / "points", seed_eval_rows[0])
    collected = collect([tmp_path / "points"])
    text = results_json(collected)
    assert json.loads(text)["evals"] == collected.evals.to_json()
