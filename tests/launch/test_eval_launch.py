"""Eval points: the eval choice, the environment srt-slurm's lm-eval stage reads, the workspace it sources.

Everything here is planning (no checkout, no Slurm): the checks run before any side effect and
every problem is a located diagnostic. The real srtctl of every pin rendering the eval path is in
tests/slurm/test_real_srtctl.py.
"""

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from infx.diagnostics import InfxError
from infx.evalsuite import EvalKind, PointEval, load_suite
from infx.launch import evalenv
from infx.launch.lane import load_lane
from infx.launch.plan import plan_point
from infx.launch.pointfile import load_point
from testing.launchkit import REPO, Workspace, lane_profile, point, v1_recipe

SUITE = "benchmarks/evals/suite.yaml"


@pytest.fixture
def ws(tmp_path):
    workspace = Workspace(tmp_path, lane_profile("file:///nonexistent", "a" * 40))
    workspace.recipe("recipe.yaml", v1_recipe())
    return workspace


def plan_of(ws, data, env=None):
    path = ws.point(data)
    return plan_point(load_lane("testlane", ws.root), load_point(str(path), {}), ws.root, env=env or {})


def problems(ws, data, env=None):
    with pytest.raises(InfxError) as caught:
        plan_of(ws, data, env)
    return caught.value.diagnostics


def eval_point(**overrides):
    return point(conc=(8, 16, 32), **{"run-eval": True, "eval-only": True, "eval-conc": 32, **overrides})


# --- the eval choice -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "row, settings, kind, concs",
    [
        ({"conc": [4, 8]}, {}, EvalKind.NONE, ()),
        ({"conc": [4, 8], "run-eval": False, "eval-conc": 8}, {}, EvalKind.NONE, ()),
        ({"conc": 64, "run-eval": True}, {}, EvalKind.AFTER_BENCHMARK, (64,)),  # a single-node row: its one concurrency
        ({"conc": [16, 64], "run-eval": True, "eval-conc": 16}, {}, EvalKind.AFTER_BENCHMARK, (16,)),
        (
            {"conc": [16, 64], "run-eval": True},
            {},
            EvalKind.AFTER_BENCHMARK,
            (64,),
        ),  # srt-slurm's own fallback: the largest
        ({"conc": [16, 64], "run-eval": True, "eval-only": True, "eval-conc": 64}, {}, EvalKind.ONLY, (64,)),
        (
            {"conc": [16, 32, 64], "run-eval": True, "eval-only": True, "eval-all-concs": True},
            {},
            EvalKind.ONLY,
            (16, 32, 64),
        ),
        (
            {"conc": [16]},
            {"EVAL_ONLY": ["true"]},
            EvalKind.ONLY,
            (16,),
        ),  # the reference's setting, as the recipe choice reads it
        ({"conc": [16], "eval-only": True}, {"EVAL_ONLY": ["false"]}, EvalKind.ONLY, (16,)),
    ],
)
def test_a_rows_eval_fields_have_one_reading(row, settings, kind, concs):
    choice = PointEval.of(row, settings)
    assert (choice.kind, choice.concs) == (kind, concs)
    assert choice.conc_text == " ".join(map(str, concs))


# --- the environment and the job's --export --------------------------------------------------


def test_an_eval_only_point_gets_the_eval_stage_environment_in_srtctls_env_and_the_jobs_export(ws):
    plan = plan_of(ws, eval_point())
    env = plan.environment("/out", "/work/infmax-workspace")
    assert env["EVAL_ONLY"] == "true" and env["RUN_EVAL"] == "true" and env["EVAL_CONC"] == "32"
    assert env["INFMAX_WORKSPACE"] == "/work/infmax-workspace"  # the eval workspace, not the output dir
    assert {
        key: env[key]
        for key in (
            "IS_MULTINODE",
            "FRAMEWORK",
            "PRECISION",
            "MODEL_PREFIX",
            "RUNNER_TYPE",
            "ISL",
            "OSL",
            "MODEL",
            "MAX_MODEL_LEN",
            "PREFILL_TP",
            "PREFILL_EP",
            "PREFILL_DP_ATTN",
            "PREFILL_NUM_WORKERS",
            "DECODE_TP",
            "DECODE_EP",
            "DECODE_DP_ATTN",
            "DECODE_NUM_WORKERS",
        )
    } == {
        "IS_MULTINODE": "true",
        "FRAMEWORK": "dynamo-sglang",
        "PRECISION": "fp4",
        "MODEL_PREFIX": "dsv4",
        "RUNNER_TYPE": "testlane",
        "ISL": "8",
        "OSL": "8",
        "MODEL": "deepseek-ai/DeepSeek-V4-Pro",
        "MAX_MODEL_LEN": "16",
        "PREFILL_TP": "4",
        "PREFILL_EP": "1",
        "PREFILL_DP_ATTN": "false",
        "PREFILL_NUM_WORKERS": "1",
        "DECODE_TP": "4",
        "DECODE_EP": "1",
        "DECODE_DP_ATTN": "false",
        "DECODE_NUM_WORKERS": "1",
    }
    # every variable infx sets is one srt-slurm's eval stage forwards (or EVAL_CONC, which it reads itself)
    assert set(env) - {"INFMAX_WORKSPACE", "EVAL_CONC"} <= set(evalenv.FORWARDED)
    assert set(evalenv.FORWARDED) - set(env) == set(evalenv.NOT_SET)
    # the same variables, minus the per-launch ones, are the job's #SBATCH --export
    export = plan.recipe["sbatch_directives"]["export"]
    assert export == "ALL," + ",".join(
        f"{k}={v}" for k, v in env.items() if k not in ("RESULT_FILENAME", "INFMAX_WORKSPACE")
    )
    body = plan.to_json()
    assert body["environment"]["INFMAX_WORKSPACE"] == evalenv.DRY_RUN_WORKSPACE
    assert body["eval"]["kind"] == "only" and body["eval"]["concs"] == [32]
    assert body["eval"]["protocol"] == load_suite(ws.root)[0].protocol()


def test_a_run_eval_point_runs_its_benchmark_then_the_eval(ws):
    plan = plan_of(ws, point(conc=(8, 16), **{"run-eval": True, "eval-conc": 16}))
    env = plan.environment("/out", "/ws")
    assert (env["RUN_EVAL"], env["EVAL_ONLY"], env["EVAL_CONC"]) == ("true", "false", "16")
    assert plan.evaluation.choice.kind is EvalKind.AFTER_BENCHMARK


def test_eval_all_concs_is_a_space_separated_list_quoted_in_the_export_line(ws):
    plan = plan_of(ws, point(conc=(16, 32, 64), **{"run-eval": True, "eval-only": True, "eval-all-concs": True}))
    assert plan.environment("/o", "/w")["EVAL_CONC"] == "16 32 64"
    assert ',EVAL_CONC="16 32 64",' in plan.recipe["sbatch_directives"]["export"]


def test_a_throughput_point_passes_only_the_result_name_and_the_output_dir(ws):
    plan = plan_of(ws, point(), env={"RESULT_FILENAME": "my_result"})
    assert plan.environment("/out", "/unused") == {"RESULT_FILENAME": "my_result", "INFMAX_WORKSPACE": "/out"}
    assert "sbatch_directives" not in plan.recipe and plan.evaluation is None
    body = plan.to_json()
    assert body["eval"] is None and body["environment"] == {
        "RESULT_FILENAME": "my_result",
        "INFMAX_WORKSPACE": evalenv.DRY_RUN_OUTPUT,
    }


def test_the_recipes_own_directives_stay_and_its_own_export_is_refused(ws):
    ws.recipe("recipe.yaml", v1_recipe(sbatch_directives={"mem": "0"}))
    plan = plan_of(ws, eval_point())
    assert plan.recipe["sbatch_directives"]["mem"] == "0" and plan.recipe["sbatch_directives"]["export"].startswith(
        "ALL,RUN_EVAL="
    )
    ws.recipe("recipe.yaml", v1_recipe(sbatch_directives={"export": "NONE"}))
    [d] = problems(ws, eval_point())
    assert d.rule == "recipe-sbatch-export" and d.file.endswith("recipe.yaml") and d.line
    assert plan_of(ws, point()).recipe["sbatch_directives"] == {"export": "NONE"}  # a throughput point keeps it


def test_eval_config_file_is_the_recipe_of_an_eval_only_point(ws):
    ws.recipe("eval.yaml", v1_recipe(time_limit="3:00"))
    data = eval_point()
    data["prefill"]["additional-settings"].append("EVAL_CONFIG_FILE=recipes/test/eval.yaml")
    plan = plan_of(ws, data)
    assert plan.recipe_source.ref.value == "recipes/test/eval.yaml" and "export" in plan.recipe["sbatch_directives"]


# --- hostile values reaching the environment or a path -----------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [
        (("model",), "org/model,EVAL_ONLY=false"),  # a comma would add a variable to the --export line
        (("model",), 'a"b'),
        (("runner",), "lane\nx"),
        (("framework",), "dynamo sglang"),
        (("precision",), "fp4$(id)"),
        (("model",), "a#b"),
        (("model",), ""),
    ],
)
def test_hostile_values_never_reach_the_environment(ws, field, value):
    data = eval_point()
    data[field[0]] = value
    found = problems(ws, data)
    assert found and all(d.rule in ("point-shape", "lane-unknown-label", "lane-no-route") for d in found), found
    shape = [d for d in found if d.rule == "point-shape"]
    assert shape and shape[0].file.endswith("point.json") and shape[0].line, found


def test_a_non_integer_worker_field_is_located(ws):
    data = eval_point()
    data["decode"]["tp"] = [4]
    found = problems(ws, data)
    assert any(d.rule in ("point-type", "point-shape") and d.line for d in found), found


# --- the workspace: checked before anything is written -----------------------------------------


def nothing_fetched(ws):
    """No checkout, venv or staged dry run: only parsed files may be remembered in infx's cache."""
    return not any((ws.root / ".cache" / name).exists() for name in ("srt-slurm", "srtctl", "dry-runs"))


def dry_run(ws, data):
    code, body = ws.dry_run(ws.point(data))
    return code, body


def test_a_lane_without_an_eval_suite_refuses_an_eval_point_at_its_eval_field(ws):
    profile = lane_profile("file:///nonexistent", "a" * 40)
    del profile["evals"]
    ws.write_profile(profile)
    code, body = dry_run(ws, eval_point())
    [d] = body["diagnostics"]
    assert code == 1 and d["rule"] == "eval-workspace-missing" and "names no eval suite" in d["message"]
    assert d["file"].endswith("point.json") and d["line"]
    assert nothing_fetched(ws)
    assert dry_run(ws, point())[0] == 0  # a throughput point needs no suite


@pytest.mark.parametrize(
    "missing, where",
    [
        ("gsm8k.yaml", "tasks"),
        ("gpqa_diamond_docs.py", "helpers"),
        ("benchmark_lib.sh", "harness"),
        ("run_lm_eval.py", "harness"),
    ],
)
def test_a_missing_workspace_piece_is_located_in_the_suite(ws, missing, where):
    (ws.root / "benchmarks" / "evals" / missing).unlink()
    code, body = dry_run(ws, eval_point())
    [d] = body["diagnostics"]
    assert code == 1 and d["rule"] == "eval-workspace-missing" and missing in d["message"]
    line = (ws.root / SUITE).read_text().splitlines()[d["line"] - 1]
    assert d["file"] == SUITE and (missing in line if where != "harness" else line.startswith("harness:")), (d, line)
    assert nothing_fetched(ws)


def test_a_missing_suite_is_located(ws):
    (ws.root / SUITE).unlink()
    code, body = dry_run(ws, eval_point())
    [d] = body["diagnostics"]
    assert code == 1 and d["rule"] == "eval-workspace-missing" and d["file"] == SUITE


def test_suite_paths_never_leave_the_suite_folder(ws, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.yaml"
    outside.write_text("task: x\n")
    suite = yaml.safe_load((ws.root / SUITE).read_text())
    for name in ("../../runners/testlane.yaml", "/etc/passwd", "-x.yaml"):
        suite["tasks"][0]["file"] = name
        (ws.root / SUITE).write_text(yaml.safe_dump(suite))
        code, body = dry_run(ws, eval_point())
        assert code == 1 and body["diagnostics"][0]["rule"] == "eval-suite-schema", (name, body)
    os.symlink(outside, ws.root / "benchmarks" / "evals" / "link.yaml")
    suite["tasks"][0]["file"] = "link.yaml"
    (ws.root / SUITE).write_text(yaml.safe_dump(suite))
    code, body = dry_run(ws, eval_point())
    [d] = body["diagnostics"]
    assert code == 1 and d["rule"] == "eval-workspace-missing" and "outside" in d["message"]


@pytest.mark.parametrize(
    "edit, rule",
    [
        (lambda text: text.replace("task: gsm8k", "task: gsm8k; rm -rf /"), "eval-task-file"),
        (lambda text: text.replace("max_gen_toks: 5376", "max_gen_toks: lots"), "eval-task-file"),
        (lambda text: text.replace("task: gsm8k", "task: [a"), "eval-task-file"),
        (lambda text: text.replace("task: gsm8k", "task: !!python/object:os.system x"), "eval-task-file"),
    ],
)
def test_a_task_file_infx_cannot_read_safely_is_located(ws, edit, rule):
    path = ws.root / "benchmarks" / "evals" / "gsm8k.yaml"
    path.write_text(edit(path.read_text()))
    code, body = dry_run(ws, eval_point())
    assert (
        code == 1
        and body["diagnostics"][0]["rule"] == rule
        and body["diagnostics"][0]["file"] == "benchmarks/evals/gsm8k.yaml"
    )


def test_a_lane_suite_path_has_the_relative_path_shape(ws):
    profile = lane_profile("file:///nonexistent", "a" * 40)
    profile["evals"] = {"suite": "../outside/suite.yaml"}
    ws.write_profile(profile)
    code, body = dry_run(ws, eval_point())
    assert code == 1 and body["diagnostics"][0]["rule"] == "lane-schema"


def test_a_point_planned_with_another_protocol_is_refused(ws):
    data = eval_point(**{"eval-protocol": load_suite(ws.root)[0].protocol()})
    assert plan_of(ws, data).evaluation is not None
    path = ws.root / "benchmarks" / "evals" / "gsm8k.yaml"
    path.write_text(path.read_text().replace("num_fewshot: 5", "num_fewshot: 8"))
    [d] = problems(ws, data)
    assert d.rule == "eval-protocol-mismatch" and d.file.endswith("point.json") and d.line


# --- staging the workspace ---------------------------------------------------------------------


def test_the_staged_workspace_is_what_srt_slurms_lm_eval_stage_sources(ws, tmp_path):
    plan = plan_of(ws, point(conc=(16, 32), **{"run-eval": True, "eval-only": True, "eval-all-concs": True}))
    dest = plan.stage_eval_workspace(ws.root, tmp_path / "infmax-workspace")
    assert (dest / "benchmarks" / "benchmark_lib.sh").read_bytes() == (
        ws.root / "benchmarks/evals/benchmark_lib.sh"
    ).read_bytes()
    for name in ("run_lm_eval.py", "gsm8k.yaml"):
        assert (dest / "benchmarks" / "evals" / name).read_bytes() == (
            ws.root / "benchmarks" / "evals" / name
        ).read_bytes()
    assert sorted(p.name for p in (dest / "benchmarks" / "evals").iterdir()) == [
        "gsm8k.yaml",
        "run_lm_eval.py",
    ]  # not the opt-in GPQA
    plan_file = json.loads((dest / evalenv.PLAN_FILE).read_text())
    assert plan_file["concs"] == [16, 32] and plan_file["tasks-dir"] == "benchmarks/evals"
    assert plan_file["protocol"] == plan.evaluation.protocol
    assert (
        plan_file["meta"]["is_multinode"] is True
        and plan_file["meta"]["prefill_tp"] == 4
        and plan_file["meta"]["isl"] == "8"
    )
    assert plan_file["infx"]["point-id"] == plan.point_id and plan_file["infx"]["lane"] == "testlane"


def test_a_suite_file_edited_after_planning_is_not_staged(ws, tmp_path):
    plan = plan_of(ws, eval_point())
    (ws.root / "benchmarks" / "evals" / "gsm8k.yaml").write_text("task: gsm8k\n")
    with pytest.raises(evalenv.WorkspaceChanged, match="gsm8k.yaml changed"):
        plan.stage_eval_workspace(ws.root, tmp_path / "infmax-workspace")


# --- the protocol the matrix records -------------------------------------------------------------


def test_every_bundled_eval_row_records_the_suites_protocol(points):
    from bench.gb300_points import gb300_eval_points

    protocol = load_suite(REPO)[0].protocol()
    rows = gb300_eval_points(REPO)
    assert sum(1 for row in rows if not row.get("eval-only")) == 39  # the default matrix's run-eval rows
    assert all(row["eval-protocol"] == protocol for row in rows)
    assert not any("eval-protocol" in row for row in points)  # throughput rows carry none
    [gsm8k] = protocol["tasks"]  # GPQA Diamond is an opt-in (its data set is gated): not run by default
    assert (gsm8k["task"], gsm8k["num-fewshot"], gsm8k["max-gen-tokens"], gsm8k["temperature"]) == (
        "gsm8k",
        5,
        5376,
        0.0,
    )
    assert (protocol["lm-eval"], protocol["chat-template"], protocol["model"]) == (
        "0.4.13",
        True,
        "local-chat-completions",
    )


def test_the_protocol_comes_from_the_task_files(tmp_path):
    shutil.copytree(REPO / "benchmarks" / "evals", tmp_path / "benchmarks" / "evals")
    before = load_suite(tmp_path)[0].protocol()
    path = tmp_path / "benchmarks" / "evals" / "gsm8k.yaml"
    path.write_text(
        path.read_text().replace("num_fewshot: 5", "num_fewshot: 3").replace("max_gen_toks: 5376", "max_gen_toks: 2048")
    )
    after = load_suite(tmp_path)[0].protocol()
    assert (after["tasks"][0]["num-fewshot"], after["tasks"][0]["max-gen-tokens"]) == (3, 2048) and after[
        "sha256"
    ] != before["sha256"]
    (tmp_path / "benchmarks" / "evals" / "run_lm_eval.py").write_text("# changed\n")
    assert load_suite(tmp_path)[0].protocol()["sha256"] != after["sha256"]  # the harness is part of what runs


def opt_in_gpqa(root: Path) -> None:
    """What a repository commits to run GPQA Diamond: `enabled: true` on its task in the suite."""
    path = root / SUITE
    text = path.read_text()
    assert "    enabled: false\n" in text
    path.write_text(text.replace("    enabled: false\n", "    enabled: true\n"))


def test_opting_in_to_gpqa_runs_it_stages_it_and_moves_the_result_key(ws, tmp_path):
    before = plan_of(ws, eval_point())
    opt_in_gpqa(ws.root)
    after = plan_of(ws, eval_point())
    assert [t["task"] for t in after.evaluation.protocol["tasks"]] == ["gsm8k", "gpqa_diamond"]
    assert after.evaluation.protocol["tasks"][1]["num-fewshot"] == 0
    assert after.result_key() != before.result_key()
    dest = after.stage_eval_workspace(ws.root, tmp_path / "infmax-workspace")
    assert {"gpqa_diamond.yaml", "gpqa_diamond_docs.py"} <= {p.name for p in (dest / "benchmarks" / "evals").iterdir()}


def test_an_opted_in_gated_task_needs_its_token_before_anything_is_submitted(ws):
    """A real launch without HF_TOKEN stops at planning (exit 1, located at the task in the suite,
    nothing fetched); a dry run only warns; with the token the value is never written anywhere."""
    opt_in_gpqa(ws.root)
    point_path = ws.point(eval_point())
    out = ws.root / "out"
    done = ws.infx(
        "launch", "--lane", "testlane", "--point", str(point_path), "--output-dir", str(out), env={"HF_TOKEN": ""}
    )
    assert done.returncode == 1, done.stderr
    line = next(
        n for n, text in enumerate((ws.root / SUITE).read_text().splitlines(), 1) if "file: gpqa_diamond.yaml" in text
    )
    assert f"{SUITE}:{line}:" in done.stderr and "error[eval-secret-missing]" in done.stderr, done.stderr
    assert "task gpqa_diamond needs $HF_TOKEN" in done.stderr and "hf-token" in done.stderr
    assert not out.exists() and nothing_fetched(ws)
    code, body = ws.dry_run(point_path, env={"HF_TOKEN": ""})
    assert code == 0 and [w["rule"] for w in body["warnings"] if w["rule"].startswith("eval")] == [
        "eval-secret-missing"
    ]
    secret = "hf_" + "x" * 34
    code, body = ws.dry_run(point_path, env={"HF_TOKEN": secret})
    assert code == 0 and not [w for w in body["warnings"] if w["rule"] == "eval-secret-missing"]
    assert (
        secret not in json.dumps(body) and "HF_TOKEN" not in body["environment"]
    )  # passed on by the runner, never by infx


def test_the_default_suite_needs_no_token(ws):
    code, body = ws.dry_run(ws.point(eval_point()), env={"HF_TOKEN": ""})
    assert code == 0 and not [w for w in body["warnings"] if w["rule"] == "eval-secret-missing"]


def test_a_suite_that_enables_no_task_is_refused(ws):
    path = ws.root / SUITE
    path.write_text(path.read_text().replace("  - file: gsm8k.yaml ", "  - enabled: false\n    file: gsm8k.yaml "))
    code, body = dry_run(ws, eval_point())
    [d] = body["diagnostics"]
    assert code == 1 and d["rule"] == "eval-suite-schema" and "would run nothing" in d["message"] and d["file"] == SUITE


def test_the_eval_choice_and_protocol_move_the_result_key(ws):
    throughput = plan_of(ws, point(conc=(16, 32)))
    evaluation = plan_of(ws, point(conc=(16, 32), **{"run-eval": True, "eval-only": True, "eval-conc": 32}))
    assert throughput.result_key() != evaluation.result_key()


def test_an_oversized_or_unreadable_suite_file_is_a_diagnostic_not_a_traceback(ws):
    path = ws.root / "benchmarks" / "evals" / "gpqa_diamond_docs.py"
    path.write_bytes(b"#" * (2 * 1024 * 1024))
    code, body = dry_run(ws, eval_point())
    [d] = body["diagnostics"]
    assert code == 1 and d["rule"] == "eval-workspace-missing" and "larger than" in d["message"]
    path.unlink()
    os.mkfifo(path)  # a FIFO is never opened for reading
    code, body = dry_run(ws, eval_point())
    assert code == 1 and body["diagnostics"][0]["rule"] == "eval-workspace-missing"
