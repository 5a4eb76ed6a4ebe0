"""`infx results check-evals`: every exact-match score of the collected eval rows against its floor.

The eval rows are collected from the lm-eval fixtures (tests/data/results/evals/, real lm-eval
output against the stand-in server) inside point artifacts built from the bundled configs' rows;
the command runs as a process from a repository folder, as the results job runs it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infx.diagnostics import shown_file
from infx.results.evalgate import GATE_RULES, SHIPPED_THRESHOLDS, _shown
from infx.results.evals.collection import collect_evals
from infx.results.evals.rules import RULES
from infx.schema import schema_diagnostics
from infx.yamlio import load_yaml
from testing.artifacts import REPO, bundled_row
from testing.cli import run_cli, run_infx
from testing.evalsets import BATCHED, FAILED, FLAT, eval_point, read, results_json, write
from testing.hostile import json_text, yaml_text

VLLM_DISAGG = "dsv4-fp4-gb300-dynamo-vllm"


def shipped_line(*path: str) -> tuple[int, int]:
    doc, _ = load_yaml(SHIPPED_THRESHOLDS)
    return doc.where(path)


def collected(tmp_path: Path, *sets: str, **row_changes) -> Path:
    """results.json holding the evals of point artifacts, one per fixture folder named."""
    artifacts = tmp_path / "artifacts"
    for name in sets:
        row = (
            bundled_row(VLLM_DISAGG, **row_changes)
            if name == FLAT
            else bundled_row(
                VLLM_DISAGG,
                conc=[16, 32] if name == BATCHED else [16, 32, 64],
                **{"eval-all-concs": True, **row_changes},
            )
        )
        eval_point(artifacts, name, row)
    return results_json(tmp_path / "results.json", collect_evals([artifacts]).to_json())


def check(results: Path, *argv: str, cwd: Path = REPO):
    return run_cli("results", "check-evals", str(results), *argv, cwd=cwd)


def errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if ": error[" in line]


def test_the_reference_example_fails_on_strict_only_located_at_its_floor(tmp_path):
    results = collected(tmp_path, FLAT)
    done = check(results)
    assert done.returncode == 1, done.stderr
    line, column = shipped_line("models", "dsv4", "gsm8k")
    [failure] = errors(done.stderr)
    point = json.loads(results.read_text())["evals"]["rows"][0]["point-id"]
    assert failure == (
        f"{shown_file(str(SHIPPED_THRESHOLDS))}:{line}:{column}: error[eval-below-threshold]: "
        f"point {point} ({VLLM_DISAGG}), "
        "concurrency 192, task gsm8k: em_strict 0.9052 is below the floor 0.91 (models.dsv4.gsm8k)"
    )
    # no configs/eval-thresholds.yaml in this repository: the shipped floors, said once
    assert "notice[eval-thresholds-default]" in done.stderr and not (REPO / "configs" / "eval-thresholds.yaml").exists()
    assert "2 scores of 1 eval rows checked: 1 at or above their floor, 1 below" in done.stderr


def test_a_score_equal_to_its_floor_passes(tmp_path):
    results = collected(tmp_path, BATCHED)  # concurrency 16 reads strict 0.91, the dsv4 floor
    done = check(results, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    at_floor = [v for v in report["checked"] if v["conc"] == 16 and v["metric"] == "em_strict"]
    assert at_floor == [
        {**at_floor[0], "value": 0.91, "floor": 0.91, "floor-source": "models.dsv4.gsm8k", "passed": True}
    ]
    assert report["ok"] is True and len(report["checked"]) == 4


def test_the_floor_is_the_models_else_the_default_and_both_metrics_must_clear_it(tmp_path):
    results = collected(tmp_path, BATCHED)
    floors = tmp_path / "floors.yaml"
    floors.write_text("default:\n  gsm8k: 0.95\nmodels:\n  other:\n    gsm8k: 0.5\n")
    done = check(results, "--thresholds", str(floors), "--format", "json")
    report = json.loads(done.stdout)
    failed = sorted((v["conc"], v["metric"], v["value"]) for v in report["checked"] if not v["passed"])
    assert failed == [(16, "em_strict", 0.91), (32, "em_strict", 0.93)]  # flexible 0.95 equals the floor: passes
    assert {v["floor-source"] for v in report["checked"]} == {"default.gsm8k"} and done.returncode == 1
    [first, _] = [d for d in report["diagnostics"] if d["rule"] == "eval-below-threshold"]
    assert (first["file"], first["line"], first["column"]) == (str(floors), 2, 3)
    floors.write_text("default:\n  gsm8k: 0.95\nmodels:\n  dsv4:\n    gsm8k: 0.9\n")
    assert check(results, "--thresholds", str(floors)).returncode == 0


def test_the_repository_file_replaces_the_shipped_floors_without_a_notice(tmp_path):
    results = collected(tmp_path, FLAT)
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    (repo / "configs" / "eval-thresholds.yaml").write_text("default:\n  gsm8k: 0.90\n")
    done = check(results, cwd=repo)
    assert done.returncode == 0 and "notice" not in done.stderr, done.stderr


def test_batch_manifest_problems_fail_the_gate_under_their_own_rules(tmp_path):
    results = collected(tmp_path, FAILED)
    done = check(results, "--format", "github")
    assert done.returncode == 1
    titles = [line.split("title=")[1].split("::")[0] for line in done.stdout.splitlines() if line.startswith("::error")]
    assert titles == ["eval-batch-failed-conc", "eval-batch-conc-missing", "eval-batch-result-missing"]
    assert all(
        "eval/meta_env.json" in line and "point " in line
        for line in done.stdout.splitlines()
        if line.startswith("::error")
    )


def _rewrite(results: Path, change) -> None:
    data = read(results)
    change(data)
    write(results, data)


def test_a_row_without_an_exact_match_score_is_eval_no_metric(tmp_path):
    results = collected(tmp_path, FLAT)
    _rewrite(
        results,
        lambda d: d["evals"]["rows"][0].update(
            em_strict=None, em_strict_se=None, em_flexible=None, em_flexible_se=None, score=0.7, score_name="accuracy"
        ),
    )
    done = check(results)
    [line] = errors(done.stderr)
    assert done.returncode == 1 and "error[eval-no-metric]" in line and "concurrency 192, task gsm8k" in line


def test_a_task_without_a_floor_is_eval_no_threshold(tmp_path):
    results = collected(tmp_path, FLAT)
    _rewrite(results, lambda d: d["evals"]["rows"][0].update(task="mmlu_pro"))
    done = check(results)
    [line] = errors(done.stderr)
    assert done.returncode == 1 and "error[eval-no-threshold]" in line and "default.mmlu_pro" in line
    assert line.startswith(f"{shown_file(str(SHIPPED_THRESHOLDS))}:{shipped_line('default')[0]}:")


@pytest.mark.parametrize(
    "content, code, rule",
    [
        ('{"format": "infx-results/1", "rows": [], "points": []}', 1, "eval-none"),
        ('{"evals": {"rows": [], "sets": []}}', 1, "eval-none"),
        ("not json", 1, "results-json"),
        ('{"evals": {"rows": [], "sets": []}, "x": NaN}', 1, "results-json"),
        ('{"evals": {"rows": [{"task": "gsm8k"}], "sets": []}}', 1, "results-json"),
        ("[]", 1, "results-json"),
    ],
)
def test_results_that_hold_no_eval_or_are_not_results(tmp_path, content, code, rule):
    path = tmp_path / "results.json"
    path.write_text(content)
    done = check(path)
    assert done.returncode == code and f"error[{rule}]" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_unusable_files_are_exit_2(tmp_path):
    results = collected(tmp_path, BATCHED)
    assert check(tmp_path / "missing.json").returncode == 2
    assert check(tmp_path).returncode == 2  # a folder
    done = check(results, "--thresholds", str(tmp_path / "none.yaml"))
    assert done.returncode == 2 and "file-missing" in done.stderr


@pytest.mark.parametrize(
    "text, rule, line",
    [
        ("default:\n  gsm8k: 1.5\n", "out-of-range", 2),
        ("default:\n  gsm8k: true\n", "wrong-type", 2),
        ("default:\n  gsm8k: '0.9'\n", "wrong-type", 2),
        ("default:\n  gsm8k: 0.9\nmodel:\n  dsv4: {gsm8k: 0.9}\n", "unknown-key", 3),
        ("models:\n  dsv4: {gsm8k: 0.9}\n", "missing-field", 1),
        ("default:\n  gsm8k: 0.9\nmodels:\n  'ds v4': {gsm8k: 0.9}\n", "unknown-key", 4),
        ("default:\n  gsm8k: 0.9\n  gsm8k: 0.8\n", "yaml-duplicate-key", 3),
        ("", "wrong-type", 1),
    ],
)
def test_a_thresholds_file_the_schema_refuses_is_located(tmp_path, text, rule, line):
    results = collected(tmp_path, BATCHED)
    floors = tmp_path / "floors.yaml"
    floors.write_text(text)
    done = check(results, "--thresholds", str(floors))
    assert done.returncode == 1, done.stderr
    assert f"{floors}:{line}:" in done.stderr and f"error[{rule}]" in done.stderr, done.stderr


def test_the_shipped_floors_are_the_references_and_pass_their_schema():
    doc, problems = load_yaml(SHIPPED_THRESHOLDS)
    assert problems == [] and schema_diagnostics("eval-thresholds", doc, doc.data) == []
    # the reference's values; its GPQA Diamond task (gpqa_diamond_cot_n_shot) is gpqa_diamond in infx's suite
    assert doc.data["default"] == {"gsm8k": 0.90, "gpqa_diamond": 0.30, "swebench_lite": 0.50}
    assert doc.data["models"]["dsv4"] == {"gsm8k": 0.91} and len(doc.data["models"]) == 8
    first = SHIPPED_THRESHOLDS.read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../schemas/eval-thresholds.schema.json"
    assert (SHIPPED_THRESHOLDS.parent / first.split("$schema=")[1]).resolve().is_file()
    assert "config/eval-thresholds.yaml" in (REPO / "pyproject.toml").read_text()  # shipped as package data


def test_every_task_the_suite_can_run_has_a_floor_for_every_bundled_model():
    """The task names the suite's task files give (enabled and opt-in alike) against the floors that
    apply to this repository, for every model prefix of the bundled configs: no eval row the lane can
    produce meets `eval-no-threshold`."""
    from infx.evalsuite import load_suite
    from infx.results.evalgate import load_thresholds, thresholds_path
    from infx.yamlio import load_yaml as load

    suite, problems = load_suite(REPO)
    assert problems == [] and suite is not None
    tasks = [task.task for task in (*suite.tasks, *suite.opt_in)]
    assert tasks == ["gsm8k", "gpqa_diamond"]
    path, _ = thresholds_path(None, REPO)
    floors, problems = load_thresholds(path)
    assert problems == [] and floors is not None
    master, _ = load(REPO / "configs" / "nvidia-master.yaml")
    prefixes = sorted({entry["model-prefix"] for entry in master.data.values()})
    assert prefixes == ["dsv4"]
    missing = [(prefix, task) for prefix in prefixes for task in tasks if floors.floor(prefix, task) is None]
    assert missing == []
    assert (
        floors.floor("dsv4", "gsm8k").source == "models.dsv4.gsm8k"
        and floors.floor("dsv4", "gpqa_diamond").source == "default.gpqa_diamond"
    )


def test_the_default_suite_runs_gsm8k_and_gpqa_is_an_opt_in_that_needs_a_token():
    """The reference runs only gsm8k by default; GPQA's data set is gated on Hugging Face."""
    from infx.evalsuite import load_suite

    suite, _ = load_suite(REPO)
    assert [task.task for task in suite.tasks] == ["gsm8k"] and [
        task["task"] for task in suite.protocol()["tasks"]
    ] == ["gsm8k"]
    [gpqa] = suite.opt_in
    assert (gpqa.task, gpqa.enabled, gpqa.requires_env) == ("gpqa_diamond", False, ("HF_TOKEN",))
    assert suite.required_env == ()  # nothing the default eval point needs from the runner
    assert all("gpqa" not in f.path for f in suite.files())  # not staged, not in the result key


def test_task_names_and_model_prefixes_have_the_name_shape():
    from infx import shapes
    from infx.schema import load_schema

    schema = load_schema("eval-thresholds")
    keys = [*schema["properties"]["models"]["patternProperties"], *schema["$defs"]["floors"]["patternProperties"]]
    assert keys == [shapes.SHAPES["name"].pattern] * 2


def test_a_value_just_below_the_floor_is_never_shown_as_equal():
    assert _shown(0.90999, 0.91) == "0.90999" and _shown(0.9052312, 0.91) == "0.9052"


def test_every_rule_has_a_line_in_the_docs():
    docs = (REPO / "docs" / "results.md").read_text()
    for rule in [*RULES, *GATE_RULES]:
        assert f"`{rule}`" in docs, rule


# --- hostile input ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_inputs(tmp_path_factory) -> tuple[dict, dict]:
    tmp = tmp_path_factory.mktemp("real")
    results = collected(tmp, FLAT, BATCHED)
    return read(results), {"default": {"gsm8k": 0.9}, "models": {"dsv4": {"gsm8k": 0.91}}}


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_hostile_results_and_thresholds_end_in_0_1_or_2(tmp_path, real_inputs, data):
    results_doc, floors_doc = real_inputs
    results, floors = tmp_path / "results.json", tmp_path / "floors.yaml"
    hostile = {"encoding": "utf-8", "errors": "surrogatepass"}  # a lone surrogate the generators draw: invalid UTF-8
    results.write_text(data.draw(st.one_of(json_text(results_doc), st.just(json.dumps(results_doc)))), **hostile)
    floors.write_text(data.draw(st.one_of(yaml_text(floors_doc), st.just(json.dumps(floors_doc)))), **hostile)
    fmt = data.draw(st.sampled_from(["text", "json", "github"]))
    done = run_infx(["results", "check-evals", str(results), "--thresholds", str(floors), "--format", fmt], tmp_path)
    assert done.code in (0, 1, 2), done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-2000:]


def test_the_docs_example_is_what_the_gate_prints(tmp_path):
    results = collected(tmp_path, FLAT)
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    shutil.copy(SHIPPED_THRESHOLDS, repo / "configs" / "eval-thresholds.yaml")
    [printed] = errors(check(results, cwd=repo).stderr)
    assert f"\n{printed}\n" in (REPO / "docs" / "results.md").read_text()


# --- the run's plan: which runs must measure every eval point ---------------------------------


def seed_plan(tmp_path: Path, *labels: str) -> tuple[Path, list[dict]]:
    """`infx plan` of the seed change (the newest changelog entry) with these PR labels, as the
    setup job uploads it (sweep-plan/plan.json)."""
    done = run_cli("plan", *(arg for label in labels for arg in ("--label", label)), "--format", "json")
    assert done.returncode == 0, done.stderr
    path = tmp_path / f"plan-{'-'.join(labels)}.json"
    path.write_text(done.stdout)
    return path, [row for rows in json.loads(done.stdout)["buckets"].values() for row in rows]


def swept(tmp_path: Path, rows: list[dict], scores: dict[int, float | None]) -> Path:
    """results.json of `infx results collect` over the point artifacts of ``rows``: an eval point
    index in ``scores`` gets eval results with that strict score (None: staged nothing), the
    others none at all (their job uploaded nothing)."""
    from infx.evalsuite import PointEval
    from testing.artifacts import point_folder
    from testing.evalstage import eval_stage_output

    folder = tmp_path / "points"
    folder.mkdir(parents=True)  # as the download step leaves it, also when no point uploaded anything
    for index, row in enumerate(rows):
        if index not in scores:
            continue
        eval_row = PointEval.of_point(row).runs
        artifact = point_folder(folder, row, {}, eval_results=False)
        if eval_row and scores[index] is not None:
            eval_stage_output(row, artifact / "eval", strict=scores[index], flexible=min(1.0, scores[index] + 0.03))
    out = tmp_path / "results.json"
    done = run_cli("results", "collect", str(folder), "--exit-zero", "--output", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_an_evals_only_run_fails_when_a_planned_eval_is_missing_and_passes_when_every_one_clears_its_floor(tmp_path):
    plan, rows = seed_plan(tmp_path, "sweep-enabled", "evals-only")
    assert len(rows) == 5 and json.loads(plan.read_text())["mode"]["evals-only"] is True
    passing = swept(tmp_path / "all", rows, {index: 0.95 for index in range(5)})
    done = check(passing, "--plan", str(plan))
    assert done.returncode == 0, done.stderr
    assert "10 scores of 5 eval rows checked: 10 at or above their floor, 0 below" in done.stderr
    # one point's job uploaded nothing, another staged no eval result
    from infx.points import point_id

    partial = swept(tmp_path / "partial", rows, {0: 0.95, 1: 0.95, 2: 0.95, 3: None})
    done = check(partial, "--plan", str(plan))
    assert done.returncode == 1
    missing = [line for line in errors(done.stderr) if "error[eval-missing]" in line]
    assert len(missing) == 2, done.stderr  # each point once: point 3 by its artifact's eval set, point 4 by the plan
    assert any(f"point {point_id(rows[4])} " in line and "no artifact of it was collected" in line for line in missing)
    assert any(f"point {point_id(rows[3])} " in line and "holds no eval/meta_env.json" in line for line in missing)
    # below the floor: the dsv4 floor 0.91
    low = swept(tmp_path / "low", rows, {index: 0.95 if index else 0.9 for index in range(5)})
    done = check(low, "--plan", str(plan))
    assert done.returncode == 1 and [line.split("error[")[1].split("]")[0] for line in errors(done.stderr)] == [
        "eval-below-threshold"
    ]


def test_a_run_that_is_not_an_eval_run_is_gated_only_on_the_eval_rows_it_has(tmp_path):
    plan, rows = seed_plan(tmp_path, "sweep-enabled")
    assert json.loads(plan.read_text())["mode"]["evals-only"] is False
    eval_points = [index for index, row in enumerate(rows) if row.get("run-eval")]
    assert len(eval_points) == 5
    nothing = swept(tmp_path / "none", rows, {})
    done = check(nothing, "--plan", str(plan))
    assert done.returncode == 0, done.stderr  # no eval row, none required
    assert check(nothing).returncode == 1  # without the plan the gate requires eval rows (eval-none)
    below = swept(tmp_path / "below", rows, {eval_points[0]: 0.5})
    done = check(below, "--plan", str(plan))
    assert (
        done.returncode == 1
        and "error[eval-below-threshold]" in done.stderr
        and "error[eval-missing]" not in done.stderr
    )


def test_a_plan_that_is_not_one_is_a_located_error_or_a_usage_error(tmp_path):
    results = swept(tmp_path, [], {})
    (tmp_path / "bad.json").write_text("{not json")
    done = check(results, "--plan", str(tmp_path / "bad.json"))
    assert done.returncode == 1 and "error[plan-json]" in done.stderr and "Traceback" not in done.stderr
    assert check(results, "--plan", str(tmp_path / "absent.json")).returncode == 2


def test_a_check_evals_request_gives_the_report_the_command_prints(tmp_path, monkeypatch):
    from infx.results.evalgate import CheckEvalsRequest, gate

    results = collected(tmp_path, FLAT)
    monkeypatch.chdir(REPO)  # the floors are found from the working folder, as the command finds them
    report = gate(CheckEvalsRequest(results))
    done = check(results)
    out, err = report.render("text")
    assert report.exit_code == done.returncode == 1 and err.strip() and err.strip() in done.stderr
    assert [d.rule for d in report.diagnostics if d.is_error] == ["eval-below-threshold"]
